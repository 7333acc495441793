"""make demo: build a code-object library from logic/ for gfx90a, verify two of its kernels on the
CPU emulator (running the library's own code object), and show what the library selects.

  python -m tensile_asm.cli.demo [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tensile_asm.cli.common import run_main

REPO = Path(__file__).resolve().parents[2]
PROG = "demo"


def _demo(out: Path) -> int:
    from tensile_asm.benchmark.verify import Size, verify_sizes
    from tensile_asm.gemm import GemmKernelContract
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.library import Library
    from tensile_asm.library.create import create_library
    from tensile_asm.library.logic import read_logic_file
    from tensile_asm.problem import Problem
    from tensile_asm.runtime.emulated import EmulatedRuntime
    from tensile_asm.writer.build import build_kernel

    arch = load_arch("gfx90a")
    print(f"== tensile-create-library --architecture gfx90a logic {out}")
    report = create_library(REPO / "logic", out, "gfx90a")
    print(report.table())
    co = report.code_objects[0]
    print(f"wrote {co.relative_to(out.parent) if out.parent in co.parents else co}, "
          f"{report.library_path.name}, {report.support_path.name}\n")

    chosen = [report.built[0], report.built[2]]
    print("== two of its kernels on the CPU emulator (emulated, not measured), library code object itself")
    header = f"{'kernel':<44} {'VGPR':>4} {'SGPR':>4} {'LDS':>6} {'waves/SIMD':>10}  {'sizes (MxNxK[xB])':<30} {'max rel err':>11}  result"
    print(header)
    failed = 0
    for entry in chosen:
        sol = read_logic_file(entry.logic_file).entries[entry.logic_index].solution
        kernel = build_kernel(sol, arch, entry.name)
        contract = GemmKernelContract.from_solution(sol, entry.name)
        (mt0, mt1), du = contract.macro_tile, sol.derived.depth_u
        sizes = [Size(mt0, mt1, du), Size(2 * mt0 + 5, mt1 + 3, 3 * du + 7, 2), Size(1, 1, 1)]
        t0 = time.time()
        results = verify_sizes(co, contract, sizes, 1.5, 0.5, seed=1, runtime=EmulatedRuntime())
        worst = max((r.max_rel_error or float("inf")) for r in results)
        ok = all(r.passed for r in results)
        failed += not ok
        r = kernel.resources
        name = entry.name if len(entry.name) <= 44 else entry.name[:41] + "..."
        print(f"{name:<44} {r.vgprs:>4} {r.sgprs:>4} {r.lds_bytes:>6} {kernel.occupancy()['waves_per_simd']:>10}  "
              f"{', '.join(str(s) for s in sizes):<30} {worst:>11.2e}  {'PASS' if ok else 'FAIL'} ({time.time() - t0:.1f} s)")

    print("\n== Library.load(out).select(problem) for gfx90a")
    lib = Library.load(out)
    pt = read_logic_file(chosen[0].logic_file).problem_type
    for m, n, k, b in ((64, 64, 64, 1), (1000, 1000, 900, 1), (20, 30, 70, 2)):
        sel = lib.select(Problem.make(pt, m, n, k, b), arch="gfx90a")
        print(f"  M={m} N={n} K={k} batch={b} -> {sel['name'] if sel else None}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=REPO / "out" / "demo", help="output directory (default out/demo)")
    args = p.parse_args(argv)
    return run_main(PROG, lambda: _demo(args.out))


if __name__ == "__main__":
    sys.exit(main())
