"""Compare the kernel launches our runtime makes with those Tensile's own C++ host makes for the same library.

usage: python tools/tensile_host/launch_compare.py LIBRARY [LIBRARY ...] [--count N] [--seed S] [--binary PATH]
                                                   [--arch GFX ...] [--cus N ...] [--show N] [--large F]

For every problem (generated as tools/tensile_host/compare.py does, from the library's own problem types and
Matching tables, plus a share ``--large`` of large ones that make Tensile's host widen or split its
post-GSU kernel) Tensile's ``tensile-host-solve`` (tools/tensile_host/solve_main.cpp over Tensile's
Source/lib: findBestSolution, then the solution's ``solve(problem, inputs, hardware)`` with fake pointers)
prints every KernelInvocation: kernel name, work-group size, number of work-groups, argument bytes. Ours is
``GemmKernelContract.launches`` (gemm/contract.py: what every launcher of ours -- the emulator's verify, the
hip runtime, tuning -- launches) for the solution ``Library.select`` picks, with the same fake addresses. Every
difference is counted by what differs (the number of launches, a kernel's name, its block, its grid, its
argument bytes) and by the kernel's role (GEMM, or the helper's name pattern); ``--show`` prints that many in
full. Problems where the two sides select different solutions (compare.py's subject) are counted apart.
Exit status 1 when anything differs, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for p in (str(REPO), str(REPO / "tools" / "tensile_host")):
    if p not in sys.path:
        sys.path.insert(0, p)

import compare  # noqa: E402
from tensile_asm.errors import UserError  # noqa: E402
from tensile_asm.gemm.contract import GemmKernelContract  # noqa: E402
from tensile_asm.library.problem_view import ContractionView  # noqa: E402
from tensile_asm.library.select import Library  # noqa: E402
from tensile_asm.problem import data_type  # noqa: E402

DEFAULT_BINARY = Path.home() / ".cache" / "tensile-host" / "bin" / "tensile-host-solve"
# solve_main.cpp's fake addresses
FAKE = {"A": 0x100000000, "B": 0x200000000, "C": 0x300000000, "D": 0x400000000, "WS": 0x500000000}
FAKE_BATCH = {"A": 0x110000000, "B": 0x210000000, "C": 0x310000000, "D": 0x410000000}
# the other CU count each architecture ships with (rocBLAS passes the device's)
OTHER_CUS = {"gfx90a": 110, "gfx942": 228, "gfx908": 120, "gfx906": 64, "gfx900": 56}


def find_binary(given: str | None) -> Path | None:
    for cand in (given, os.environ.get("TENSILE_HOST_SOLVE"), str(DEFAULT_BINARY)):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return Path(cand)
    return None


def large_view(sp: compare.Spec, rng: random.Random) -> ContractionView:
    """A problem of a GEMM type with enough elements of D for Tensile's host to pick VW2 (even M) and
    sometimes to stay under its reduction threshold: M*N*batch from a few thousand to a few million."""
    sizes = {0: rng.choice((2, 4, 6, 8, 10, 16)) * rng.randint(1, 400), 1: rng.randint(1, 1500),
             2: rng.choice((1, 1, 2, 3, 5)) if sp.indices("batch") else 1, 3: rng.choice((1, 7, 64, 333, 1024))}
    sizes = {i: sizes[i] for i in range(sp.total)}
    strides = {t: compare._strides(rng, sizes, order, False)
               for t, order in (("A", sp.index_a), ("B", sp.index_b), ("C", tuple(range(sp.nc))))}
    strides["D"] = strides["C"]
    return ContractionView.from_indices(
        sp.index_a, sp.index_b, sp.nc, sizes, strides, sp.types, complex_conjugate=sp.conj,
        alpha=rng.choice((1.0, 0.5, 2.0)), beta=rng.choice((0.0, 1.0, 0.5)) if sp.use_beta else 0.0,
        c_equals_d=rng.random() < 0.5, strided_batched=sp.strided_batched, high_precision_accumulate=sp.hpa,
        f32_xdl_math_op=sp.xdl, workspace_size=1 << 40)


def ours(entry: dict, v: ContractionView, cus: int) -> list[tuple]:
    """Our launches for a GEMM problem: (name, block, grid, argument bytes as hex) each."""
    contract = GemmKernelContract.from_library_entry(entry)
    m, n, batch, k = v.problem_sizes
    sa, sb, sc, sd = (v.strides[t] for t in "ABCD")
    pa = not v.strided_batched
    addresses = dict(FAKE_BATCH if pa else FAKE)
    addresses["WS"] = FAKE["WS"]
    if v.c_equals_d:
        addresses["C"] = addresses["D"]
    launches = contract.launches(
        m=m, n=n, k=k, batch=batch, ld={"A": sa[1], "B": sb[1], "C": sc[1], "D": sd[1]},
        batch_stride={"A": sa[2], "B": sb[2], "C": sc[2], "D": sd[2]}, alpha=v.alpha, beta=v.beta,
        addresses=addresses, cu_count=cus)
    # Tensile's KernelArguments ends at its last argument (no padding to 8 bytes after it); after an assembly
    # GEMM kernel's it appends a 4-byte ``pad`` (0) that no kernel reads, which ours gets here to compare
    out = []
    for x in launches:
        data = x.kernarg()[:x.layout[-1].offset + x.layout[-1].size]
        if x.kernel == entry["name"] and not entry["sizeMapping"].get("sourceKernel"):
            data += bytes(4)
        out.append((x.kernel, x.block, x.grid, data.hex()))
    return out


def run_tensile(binary: Path, dat: Path, arch: str, cus: int, lines: list[str]) -> list[list[str]]:
    proc = subprocess.run([str(binary), str(dat), arch, str(cus)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise UserError(f"{binary} {dat} {arch}: exit {proc.returncode}: {proc.stderr.strip()}")
    answers, cur = [], []
    for line in proc.stdout.splitlines():
        if line == "end":
            answers.append(cur)
            cur = []
        else:
            cur.append(line)
    if len(answers) != len(lines):
        raise UserError(f"{binary}: {len(answers)} answers for {len(lines)} problems")
    return answers


def _parse(line: str) -> tuple:
    _, name, block, grid, args = (line.split(" ") + [""])[:5]
    return name, tuple(map(int, block.split(","))), tuple(map(int, grid.split(","))), args


def _differing(kernel: str, ours_hex: str, theirs_hex: str, entry: dict) -> str:
    """Which of our arguments differ (by our layout's offsets), or that the lengths differ."""
    if len(ours_hex) != len(theirs_hex):
        return f" (length: ours {len(ours_hex) // 2}, Tensile {len(theirs_hex) // 2} bytes)"
    if kernel != entry["name"]:
        return ""
    layout = GemmKernelContract.from_library_entry(entry).layout()
    names = [a.name for a in layout if ours_hex[2 * a.offset:2 * (a.offset + a.size)] !=
             theirs_hex[2 * a.offset:2 * (a.offset + a.size)]]
    return f" ({', '.join(names)})"


def role(name: str, gemm: str) -> str:
    """The kernel's role for the tally: GEMM, or its name with sizes and variant numbers generalised."""
    if name == gemm:
        return "GEMM"
    return re.sub(r"PostGSU\d+(_mod\d+)?", "PostGSU<n>", name)


def compare_library(path: Path, binary: Path, count: int, seed: int, archs: list[str] | None, cus_list: list[int] | None,
                    large: float, tmp: Path, show: int, tally: Counter, shown: list[str]) -> None:
    dat = compare.library_file(path, tmp)
    lib = Library.load(dat)
    for arch, own_cus, apu, named in compare.targets(lib, archs):
        if not named or apu:
            continue
        for cus in cus_list or sorted({own_cus, OTHER_CUS.get(arch, own_cus)}):
            for tname, sp in sorted(compare.specs(lib).items()):
                if sp.nc != 3 or sp.total != 4:
                    continue
                rng = random.Random(f"{seed}:{path.name}:{arch}:{cus}:{tname}")
                exact = compare.table_sizes(lib.tree).get(sp.op, [])
                views = [large_view(sp, rng) if rng.random() < large else compare.random_view(sp, exact, rng)
                         for _ in range(count)]
                compute = {}
                for v in views:
                    sol = lib.select(v, arch, cu_count=cus, is_apu=0)
                    compute[id(v)] = sol
                lines = []
                for v in views:
                    sol = compute[id(v)]
                    line = compare.cpp_line(v)
                    if sol is not None:
                        c = GemmKernelContract.from_library_entry(sol).compute_type
                        line += f" compute={data_type(c).enum}"
                    lines.append(line)
                for v, line, answer in zip(views, lines, run_tensile(binary, dat, arch, cus, lines)):
                    tally["problems"] += 1
                    sol = compute[id(v)]
                    head = answer[0] if answer else "none"
                    if sol is None or not head.startswith("solution"):
                        tally["no solution on both sides" if sol is None and head == "none" else
                              f"selection or Tensile error: {head[:60]}"] += 1
                        continue
                    if head.split()[1] != str(sol["index"]):
                        tally["different solution selected (compare.py's subject)"] += 1
                        continue
                    theirs = [_parse(x) for x in answer[1:]]
                    try:
                        mine = ours(sol, v, cus)
                    except UserError as e:
                        tally[f"ours refused: {str(e)[:80]}"] += 1
                        continue
                    tally["compared"] += 1
                    diffs = []
                    if [x[0] for x in mine] != [x[0] for x in theirs]:
                        diffs.append(f"kernels: ours {[x[0] for x in mine]} Tensile {[x[0] for x in theirs]}")
                        for a in {role(x[0], sol['name']) for x in theirs} - {role(x[0], sol['name']) for x in mine}:
                            tally[f"DIFF name/launch: Tensile launches {a}, we do not"] += 1
                        for a in {role(x[0], sol['name']) for x in mine} - {role(x[0], sol['name']) for x in theirs}:
                            tally[f"DIFF name/launch: we launch {a}, Tensile does not"] += 1
                    for o, t in zip(mine, theirs):
                        if o[0] != t[0]:
                            continue
                        r = role(o[0], sol["name"])
                        for what, i in (("block", 1), ("grid", 2), ("argument bytes", 3)):
                            if o[i] != t[i]:
                                where = _differing(o[0], o[3], t[3], sol) if i == 3 else ""
                                tally[f"DIFF {what}: {r}{where}"] += 1
                                diffs.append(f"{o[0]} {what}{where}: ours {o[i]} Tensile {t[i]}")
                    if diffs:
                        tally["problems with a difference"] += 1
                        if any(not d.startswith(sol["name"] + " ") for d in diffs):
                            tally["problems with a helper-kernel difference (beta-only, conversion)"] += 1
                        if len(shown) < show:
                            shown.append(f"{path} {arch} cu={cus}: {line}\n  " + "\n  ".join(diffs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("libraries", nargs="+", type=Path, help="create-library output folders or TensileLibrary.dat")
    ap.add_argument("--count", type=int, default=100, help="problems per (architecture, CU count, problem type)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--binary", help=f"tensile-host-solve (default $TENSILE_HOST_SOLVE or {DEFAULT_BINARY})")
    ap.add_argument("--arch", action="append", help="architecture (default: each the library names)")
    ap.add_argument("--cus", action="append", type=int,
                    help="CU counts (default: the architecture's two shipping counts)")
    ap.add_argument("--large", type=float, default=0.3, help="share of large problems (default 0.3)")
    ap.add_argument("--show", type=int, default=10, help="problems with differences to print in full")
    args = ap.parse_args(argv)
    binary = find_binary(args.binary)
    if binary is None:
        print(f"launch_compare.py: no tensile-host-solve binary (looked at --binary, $TENSILE_HOST_SOLVE, "
              f"{DEFAULT_BINARY}); build it with tools/tensile_host/build.sh", file=sys.stderr)
        return 2
    tally: Counter = Counter()
    shown: list[str] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for path in args.libraries:
                compare_library(path, binary, args.count, args.seed, args.arch, args.cus, args.large, Path(tmp),
                                args.show, tally, shown)
    except UserError as e:
        print(f"launch_compare.py: {e}", file=sys.stderr)
        return 2
    for text in shown:
        print(text)
    for key, n in sorted(tally.items()):
        print(f"{n:7d}  {key}")
    differ = tally["problems with a difference"]
    print(f"total: {tally['problems']} problems, {tally['compared']} compared launch by launch, {differ} with a "
          f"difference, {tally['problems with a helper-kernel difference (beta-only, conversion)']} of them in the "
          f"helper kernels")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
