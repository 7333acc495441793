"""Wall-clock time of the CPU emulator verifying generated SGEMM kernels (emulated, not a GPU timing).

    python3 bench/emulator_speed.py [--arch gfx90a] [--repeat 3] [--no-strict] [--profile]

Builds each kernel (assemble + link with LLVM), then times ``verify_sizes`` (emulator run + numpy
reference + comparison) at 256x256x256, strict mode unless --no-strict. Prints one line per kernel:
best wall-clock time of the repeats and the best process CPU time (less sensitive to other load).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tensile_asm.benchmark.verify import Size, verify_sizes  # noqa: E402
from tensile_asm.isa.arch import load_arch  # noqa: E402
from tensile_asm.runtime.emulated import EmulatedRuntime  # noqa: E402
from tensile_asm.toolchain import assemble_and_link  # noqa: E402
from tensile_asm.solution.solution import Solution  # noqa: E402
from tensile_asm.writer.build import geometry  # noqa: E402
from tensile_asm.writer.contract import kernel_contract  # noqa: E402
from tensile_asm.writer.kernel import write_kernel  # noqa: E402

NN = {"DataType": "s", "TransposeA": False, "TransposeB": False, "Batched": True}
PLAIN = {"StaggerU": 0, "WorkGroupMapping": 1, "VectorWidth": 1, "GlobalReadVectorWidth": 1}
PARAMS = {
    "MT64x64x16 TT4x4 (skeleton)": dict(WorkGroup=[16, 16, 1], ThreadTile=[4, 4], DepthU=16, PrefetchGlobalRead=0,
                                        PrefetchLocalRead=0),
    "MT128x128x8 TT8x8 VW4 GRVW4 PGR PLR": dict(WorkGroup=[16, 16, 1], ThreadTile=[8, 8], DepthU=8, VectorWidth=4,
                                                GlobalReadVectorWidth=4, PrefetchGlobalRead=1, PrefetchLocalRead=1),
}
KERNELS = {label: geometry(Solution.from_dict({"ProblemType": NN, **PLAIN, **p}, where=label).validate())
           for label, p in PARAMS.items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="gfx90a")
    ap.add_argument("--size", default="256,256,256")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-strict", action="store_true")
    ap.add_argument("--profile", action="store_true")
    opts = ap.parse_args()
    arch = load_arch(opts.arch)
    m, n, k = (int(x) for x in opts.size.split(","))
    size = Size(m, n, k)
    runtime = EmulatedRuntime(strict=not opts.no_strict)
    with tempfile.TemporaryDirectory() as tmp:
        for label, g in KERNELS.items():
            name = "bench_" + "".join(c for c in label if c.isalnum())[:40]
            kern = write_kernel(g, arch, name)
            co = Path(tmp) / f"{name}.co"
            assemble_and_link(kern.text(), arch, co)
            verify_sizes(co, kernel_contract(kern), [Size(64, 64, 16)], 1.5, 0.5, 0, runtime)   # warm: load + compile
            times, cpu = [], []
            for _ in range(opts.repeat):
                prof = cProfile.Profile() if opts.profile else None
                t0, c0 = time.perf_counter(), time.process_time()
                if prof:
                    prof.enable()
                res = verify_sizes(co, kernel_contract(kern), [size], 1.5, 0.5, 0, runtime)
                if prof:
                    prof.disable()
                times.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
                if not res[0].passed:
                    print(f"{label}: FAILED {res[0].detail}")
                    return 1
            print(f"{opts.arch} {label:40s} {size}  strict={not opts.no_strict}  best {min(times):.2f} s  "
                  f"(runs: {', '.join(f'{t:.2f}' for t in times)}; CPU best {min(cpu):.2f} s)  max rel err {res[0].max_rel_error:.2e}")
            if prof:
                pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
