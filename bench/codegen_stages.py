"""CPU ms per kernel of each code-generation stage over the lite kernels (tools/kernel_text_hashes.py's set).

Each stage function is wrapped with a ``time.process_time`` timer: the allocation (``writer.kernel.allocate``),
the passes (``isa.kernel_passes.finish_code``: the waitcnt pass ``plan_waits``, the hazard pass
``plan_wait_states``, the one tree splice ``insert_before``, ``relax_branches``; on a checkout before
kernel_passes.py, ``insert_waitcnt``/``insert_wait_states``/``relax_branches``), the rendering
(``Kernel.body_text`` + ``metadata``); "writer" is the rest of ``build_kernel``. Run from a checkout:

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/codegen_stages.py [REPEATS]
"""

import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))
import tools.kernel_text_hashes as kth  # noqa: E402
from tensile_asm.errors import UserError  # noqa: E402
from tensile_asm.writer import kernel as wk  # noqa: E402
from tensile_asm.writer.build import build_kernel, supports  # noqa: E402

acc: dict = {}


def wrap(mod, name, label):
    f = getattr(mod, name)

    def timed(*a, **k):
        t0 = time.process_time()
        try:
            return f(*a, **k)
        finally:
            acc[label] = acc.get(label, 0.0) + time.process_time() - t0
    setattr(mod, name, timed)


wrap(wk, "allocate", "allocation")
if hasattr(wk, "finish_code"):
    from tensile_asm.isa import kernel_passes as kp
    wrap(kp, "plan_waits", "waitcnt")
    wrap(kp, "plan_wait_states", "hazard")
    wrap(kp, "insert_before", "splice")
    wrap(kp, "relax_branches", "relax")
    wrap(wk, "finish_code", "finish")
else:
    wrap(wk, "insert_waitcnt", "waitcnt")
    wrap(wk, "insert_wait_states", "hazard")
    wrap(wk, "relax_branches", "relax")

lite = list(kth.solutions([(p, 1) for p in sorted(kth.LITE.glob("*.yaml"))]))
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 1):
    acc.clear()
    gc.collect()
    n, build, render = 0, 0.0, 0.0
    for _, sol, arch in lite:
        if supports(sol, arch):
            continue
        t0 = time.process_time()
        try:
            k = build_kernel(sol, arch, "k")
        except UserError:
            continue
        t1 = time.process_time()
        k.body_text()
        k.metadata()
        render += time.process_time() - t1
        build += t1 - t0
        n += 1
    passes = acc["finish"] if "finish" in acc else acc.get("waitcnt", 0) + acc.get("hazard", 0) + acc.get("relax", 0)
    line = {"writer": build - acc.get("allocation", 0) - passes, **{k: v for k, v in acc.items() if k != "finish"},
            "passes (all)": passes, "rendering": render, "total": build + render}
    print(f"{n} kernels, CPU ms per kernel: " + ", ".join(f"{k} {1e3 * v / n:.2f}" for k, v in line.items()))
