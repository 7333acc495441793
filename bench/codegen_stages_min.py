"""CPU ms per kernel of each code-generation stage over the lite kernels, the MINIMUM over REPEATS runs per kernel.

Each lite kernel (tools/kernel_text_hashes.py's set) is written as create-library's workers write it
(``writer.build.written`` under ``library.create._few_collections``), REPEATS times; per kernel and per stage the
least CPU time (``time.process_time``) is kept, so a burst of load from other processes on a shared machine
disturbs the sum less than a mean does. Stages: the allocation (``writer.kernel.allocate``), the passes
(``isa.kernel_passes.finish_code``), the rendering (``Kernel.body_text`` + ``Kernel.metadata``); "writer" is the
rest of ``written``. Run from a checkout:

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/codegen_stages_min.py [REPEATS]
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))
import tools.kernel_text_hashes as kth  # noqa: E402
from tensile_asm.errors import UserError  # noqa: E402
from tensile_asm.library.create import _few_collections  # noqa: E402
from tensile_asm.writer import kernel as wk  # noqa: E402
from tensile_asm.writer.build import supports, written  # noqa: E402

acc: dict = {}


def wrap(owner, name, label):
    f = getattr(owner, name)

    def timed(*a, **k):
        t0 = time.process_time()
        try:
            return f(*a, **k)
        finally:
            acc[label] = acc.get(label, 0.0) + time.process_time() - t0
    setattr(owner, name, timed)


wrap(wk, "allocate", "allocation")
wrap(wk, "finish_code", "passes")
wrap(wk.Kernel, "body_text", "rendering")
wrap(wk.Kernel, "metadata", "rendering")

lite = [(sol, arch) for _, sol, arch in kth.solutions([(p, 1) for p in sorted(kth.LITE.glob("*.yaml"))])
        if not supports(sol, arch)]
repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
stages = ("writer", "allocation", "passes", "rendering", "total")
best = {s: [float("inf")] * len(lite) for s in stages}
with _few_collections():
    for _ in range(repeats):
        for i, (sol, arch) in enumerate(lite):
            acc.clear()
            t0 = time.process_time()
            try:
                written(sol, arch, "k")
            except UserError:
                pass
            took = {"total": time.process_time() - t0, **acc}
            took["writer"] = took["total"] - sum(acc.values())
            for s in stages:
                best[s][i] = min(best[s][i], took.get(s, 0.0))
n = len(lite)
print(f"{n} kernels, min of {repeats} per kernel, CPU ms per kernel: "
      + ", ".join(f"{s} {1e3 * sum(best[s]) / n:.2f}" for s in stages))
