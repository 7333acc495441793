"""Build every UseInitialStrides solution (Tensile's I/Ic problem types: rocBLAS's SBIc/SBIIc logic) of the given
schedules with create-library and verify each on the emulator with first strides other than 1, as its predicates
allow; print a markdown table.

    PYTHONPATH=$PWD .venv/bin/python tools/initial_strides_verify.py vega10 vega20 [--out DIR] [--seed 1]

Per solution, for each tensor whose first stride it takes (A/B with UseInitialStridesAB, C/D with
UseInitialStridesCD): the values its StrideXEqual predicates assert (AssertStride<X>Equal: e.g. C's first stride 0,
a bias broadcast along I, or C's leading dimension 0, along J; A's leading dimension 1 with its first stride free),
and where nothing is asserted a first stride of 3 (A, B, C) or 2 (D; its leading dimension then just past the
column). Sizes: the small and the prime edge size of tools/logic_build_verify.py (batch 2), each with beta 0 and
beta 0.5, on random data with D poisoned (elements between D's strided elements must keep their poison).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from logic_build_verify import SCHEDULES, sizes_for  # noqa: E402

FREE = {"A": 3, "B": 3, "C": 3, "D": 2}   # first strides where a solution asserts none


def asserted(entry: dict, tensor: str) -> dict[int, int]:
    """{stride position: value} of the solution's Stride<tensor>Equal predicates."""
    out: dict[int, int] = {}

    def walk(p):
        if isinstance(p, dict):
            if p.get("type") == f"Stride{tensor}Equal":
                out[int(p["index"])] = int(p["value"])
            for v in p.values():
                walk(v)
        elif isinstance(p, list):
            for v in p:
                walk(v)
    walk(entry.get("problemPredicate", {}))
    return out


def strides_for(entry: dict, size) -> tuple[dict, dict]:
    """(first stride, leading dimension) per tensor whose first stride the solution takes."""
    pt = entry["problemType"]
    tensors = ("AB" if pt.get("useInitialStridesAB") else "") + ("CD" if pt.get("useInitialStridesCD") else "")
    first, ld = {}, {}
    for t in tensors:
        fixed = asserted(entry, t)
        if 1 in fixed:
            ld[t] = fixed[1]
        if 0 in fixed:
            first[t] = fixed[0]
        elif t in ld and ld[t] != 0:     # leading dimension fixed (1): the first index strides past a column
            cols = {"A": size.k, "B": size.n, "C": size.n, "D": size.n}[t]
            first[t] = cols * ld[t] + 1
        else:
            first[t] = FREE[t]
    return first, ld


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("schedules", nargs="+", choices=sorted(SCHEDULES))
    ap.add_argument("--logic-root", type=Path, default=ROOT.parent / "shared/data/logic/rocblas-asm_full")
    ap.add_argument("--out", type=Path, default=Path("/tmp/initial-strides"))
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    from tensile_asm.benchmark.verify import verify_library
    from tensile_asm.library.codeobjects import LibraryFolder

    rows, total, passed_runs, runs = [], 0, 0, 0
    for schedule in a.schedules:
        logic, out = a.out / f"{schedule}-logic", a.out / schedule
        shutil.rmtree(logic, ignore_errors=True)
        logic.mkdir(parents=True)
        files = sorted((a.logic_root / schedule).glob("*_SBI*c.yaml"))
        for f in files:
            shutil.copy(f, logic / f.name)
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "tensile_asm.cli.create_library", "--architecture", SCHEDULES[schedule],
               "--jobs", "1", "--quiet", str(logic), str(out)]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"create-library failed: {r.stderr[-2000:]}")
        support = json.loads((out / "support.json").read_text())
        built = [e for e in support if e["built"]]
        print(f"{schedule}: built {len(built)}/{len(support)} UseInitialStrides solutions "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
        for e in support:
            if not e["built"]:
                rows.append(f"| {schedule} | {e['file']} | {e['name'][:60]} | not built: {e['reason']} | |")
        folder = LibraryFolder(out)
        entries = {sol.get("name"): sol for _, sol, _ in folder.solutions()}
        for e in built:
            total += 1
            entry = entries[e["name"]]
            small, edge = sizes_for(entry)
            cells = []
            for size in (small, edge):
                first, ld = strides_for(entry, size)
                for beta in (0.0, 0.5):
                    [res] = verify_library(folder, [size], alpha=-1.25, beta=beta, seed=a.seed, names={e["name"]},
                                           first_stride=first, ld=ld)
                    ok = res.passed and res.results and not res.skipped
                    runs += 1
                    passed_runs += bool(ok)
                    state = "ok" if ok else ("skipped by predicates" if res.skipped else
                                             res.not_run or "; ".join(c.detail for c in res.results))
                    cells.append(f"{size.m}x{size.n}x{size.k}x{size.batch} b{beta:g}: {state}")
                    print(f"  {e['name'][:70]} {size} beta {beta:g} first {first} ld {ld}: {state}", flush=True)
            strides = ", ".join(f"{t}: s0 {first[t]}" + (f" ld {ld[t]}" if t in ld else "") for t in first)
            rows.append(f"| {schedule} | {e['file']} | {e['name'][:60]}... | {strides} | {'; '.join(cells)} |")
    print(f"\nverified {passed_runs}/{runs} runs over {total} built solutions\n")
    print("| schedule | file | solution | first strides (edge size) | runs |\n|---|---|---|---|---|")
    print("\n".join(rows))
    return 0 if passed_runs == runs else 1


if __name__ == "__main__":
    sys.exit(main())
