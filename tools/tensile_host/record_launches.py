"""Record what Tensile's own host launches for a few GlobalSplitU problems, as a test fixture.

usage: python tools/tensile_host/record_launches.py LIBRARY OUT.json --arch GFX --cus N [--cus N ...]
                                                    [--binary PATH] [--per-solution N] [--seed S] [--every-solution]

For each GlobalSplitU > 1 solution of LIBRARY (a create-library output folder or a TensileLibrary.dat;
``--every-solution``: each solution, e.g. of a library of ``KernelLanguage: Source`` solutions, whose GEMM
arguments Tensile's host lays out its own way), a few
problems it is selected for (sizes 1, primes and large ones; batches; packed leading dimensions, so that the
GEMM's own arguments match ours too) are given to ``tensile-host-solve`` (tools/tensile_host/solve_main.cpp:
Tensile 4.44's findBestSolution and solve()); OUT.json keeps, per problem, the solution's library entry, the
problem, the CU count and every KernelInvocation Tensile's host made (name, block, grid, argument bytes), with
the command that made it. tests/test_gsu_helper_abi.py compares ``GemmKernelContract.launches`` with it, without
the C++ host.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for p in (str(REPO), str(REPO / "tools" / "tensile_host")):
    if p not in sys.path:
        sys.path.insert(0, p)

import compare  # noqa: E402
import launch_compare  # noqa: E402
from tensile_asm.gemm.contract import GemmKernelContract  # noqa: E402
from tensile_asm.library.problem_view import ContractionView  # noqa: E402
from tensile_asm.library.select import Library  # noqa: E402
from tensile_asm.problem import data_type  # noqa: E402

SIZES = [(1, 1, 1, 1), (13, 7, 5, 3), (127, 61, 64, 2), (2048, 1024, 256, 1), (1000, 700, 33, 2), (4096, 512, 64, 3)]


def view(sp: compare.Spec, m: int, n: int, batch: int, k: int, alpha: float, beta: float) -> ContractionView:
    sizes = {0: m, 1: n, 2: batch, 3: k}
    strides = {}
    for t, order in (("A", sp.index_a), ("B", sp.index_b), ("C", (0, 1, 2)), ("D", (0, 1, 2))):
        out = [1]       # packed
        for pos in range(1, len(order)):
            out.append(out[-1] * sizes[order[pos - 1]])
        strides[t] = tuple(out)
    return ContractionView.from_indices(sp.index_a, sp.index_b, sp.nc, sizes, strides, sp.types,
                                        complex_conjugate=sp.conj, alpha=alpha, beta=beta if sp.use_beta else 0.0,
                                        strided_batched=sp.strided_batched, high_precision_accumulate=sp.hpa,
                                        f32_xdl_math_op=sp.xdl, workspace_size=1 << 40)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("library", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--arch", required=True)
    ap.add_argument("--cus", type=int, action="append", required=True)
    ap.add_argument("--binary")
    ap.add_argument("--per-solution", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--every-solution", action="store_true", help="also solutions with GlobalSplitU 1")
    args = ap.parse_args(argv)
    binary = launch_compare.find_binary(args.binary)
    if binary is None:
        print("record_launches.py: no tensile-host-solve; build it with tools/tensile_host/build.sh", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    cases, seen = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        dat = compare.library_file(args.library, Path(tmp))
        lib = Library.load(dat)
        for cus in args.cus:
            exact = compare.table_sizes(lib.tree)
            for _, sp in sorted(compare.specs(lib).items()):
                table = [(r.get("FreeSizeA", 1), r.get("FreeSizeB", 1), r.get("BoundSize", 1), r.get("BatchSize", 1))
                         for r in exact.get(sp.op, [])]
                sizes = SIZES + [(m + d, n, k, b) for (m, n, k, b) in table for d in (0, 1)]
                for (m, n, k, batch) in sizes:
                    v = view(sp, m, n, batch, k, rng.choice((1.0, 0.5, -2.0)), rng.choice((0.0, 1.0, 0.25)))
                    sol = lib.select(v, args.arch, cu_count=cus, is_apu=0)
                    if sol is None or (int(sol["sizeMapping"]["globalSplitU"]) == 1 and not args.every_solution):
                        continue
                    if seen.get((sol["index"], cus), 0) >= args.per_solution:
                        continue
                    compute = GemmKernelContract.from_library_entry(sol).compute_type
                    line = compare.cpp_line(v) + f" compute={data_type(compute).enum}"
                    [answer] = launch_compare.run_tensile(binary, dat, args.arch, cus, [line])
                    if not answer or answer[0] != f"solution {sol['index']} {sol['name']}":
                        continue
                    seen[(sol["index"], cus)] = seen.get((sol["index"], cus), 0) + 1
                    launches = [launch_compare._parse(x) for x in answer[1:]]
                    cases.append({"entry": {k2: sol[k2] for k2 in ("name", "problemType", "sizeMapping")},
                                  "m": m, "n": n, "k": k, "batch": batch,
                                  "strides": {t: list(v.strides[t]) for t in "ABCD"},
                                  "alpha": v.alpha, "beta": v.beta, "c_equals_d": v.c_equals_d,
                                  "strided_batched": v.strided_batched, "cu_count": cus,
                                  "tensile": [{"kernel": x[0], "block": list(x[1]), "grid": list(x[2]), "args": x[3]}
                                              for x in launches]})
    command = "python tools/tensile_host/record_launches.py " + " ".join(
        [str(args.library), str(args.out), "--arch", args.arch] + [f"--cus {c}" for c in args.cus]
        + ([f"--per-solution {args.per_solution}"] if args.per_solution != 2 else [])
        + (["--every-solution"] if args.every_solution else []))
    args.out.write_text(json.dumps({"command": command, "arch": args.arch, "cases": cases}, indent=1) + "\n")
    print(f"{len(cases)} problems recorded in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
