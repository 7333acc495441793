"""Machine instructions (callgrind Ir) per written kernel: a measure of code generation the VM's noise does not move.

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg0 python bench/codegen_callgrind.py 0
    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg17 python bench/codegen_callgrind.py 17
    (Ir of the second run - Ir of the first) / 17 = machine instructions per kernel

Both runs import, read the lite logic and write one kernel of each architecture first (one-time table loads);
the second then writes KERNELS of the 102 lite kernels of gfx900/906/908/90a (evenly spaced) with
``writer.build.written`` (the kernel and its helper kernels, the passes, the text and metadata) under
create-library's collector settings. Run it from a checkout (its tree first on PYTHONPATH).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))
import tools.kernel_text_hashes as kth  # noqa: E402
from tensile_asm.library.create import _few_collections  # noqa: E402
from tensile_asm.writer.build import supports, written  # noqa: E402

ARCHS = ("gfx900", "gfx906", "gfx908", "gfx90a")


def main() -> None:
    kernels = int(sys.argv[1])
    lite = [(sol, arch) for _, sol, arch in kth.solutions([(p, 1) for p in sorted(kth.LITE.glob("*.yaml"))])
            if arch.name in ARCHS and not supports(sol, arch)]
    chosen = lite[::max(1, len(lite) // kernels)][:kernels] if kernels else []
    with _few_collections():
        first: set = set()
        for sol, arch in lite:
            if arch.name not in first:
                first.add(arch.name)
                written(sol, arch, "warm")
        for sol, arch in chosen:
            written(sol, arch, "k")
    print(f"{len(first)} warm-up kernels, {len(chosen)} measured kernels written")


if __name__ == "__main__":
    main()
