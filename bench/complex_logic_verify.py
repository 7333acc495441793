"""Verify a random sample of the complex (CCC/ZZZ) solutions of a create-library output on the emulator.

    PYTHONPATH=$PWD .venv/bin/python bench/complex_logic_verify.py LIBRARY_DIR [PER_FILE] [SEED]

LIBRARY_DIR is what ``tensile-create-library`` wrote for rocBLAS's complex logic files (one problem type per
file, so solutions are grouped by the problem-type part of their names). PER_FILE solutions of each group
(default 2, drawn with SEED) run from the library's code objects, predicates checked, at edge sizes of their
own macro tile: 1x1x1, (MT0 + 3) x (MT1 - 1) x (DepthU + 3) with batch 2 (beta 0.5 (1+0.5i)), and primes
smaller than the tile with beta 0 (C is NaN, never to be read), alpha 1.5 (1+0.5i), against the complex128
numpy reference. Prints one line per case and a per-group summary.
"""

from __future__ import annotations

import random
import re
import sys
from collections import defaultdict
from pathlib import Path

from tensile_asm.benchmark.verify import Size, verify_library
from tensile_asm.library.codeobjects import LibraryFolder


def group_of(name: str) -> str:
    return re.sub(r"_MT\d+x\d+x\d+.*", "", name)


def sizes_for(name: str) -> tuple[list[Size], list[Size]]:
    mt0, mt1, du = map(int, re.search(r"_MT(\d+)x(\d+)x(\d+)", name).groups())
    with_beta = [Size(1, 1, 1, 1), Size(mt0 + 3, max(1, mt1 - 1), du + 3, 2)]
    beta_zero = [Size(13 if mt0 > 13 else 7, 11 if mt1 > 11 else 5, 7, 1)]
    return with_beta, beta_zero


def main() -> int:
    lib = Path(sys.argv[1])
    per_file = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    with LibraryFolder(lib) as folder:
        names = sorted({entry["name"] for _, entry, _ in folder.solutions()
                        if re.search(r"_(C|Z)B(_GB)?_MT", entry["name"])})
        groups = defaultdict(list)
        for n in names:
            groups[group_of(n)].append(n)
        summary = {}
        for group in sorted(groups):
            chosen = rng.sample(groups[group], min(per_file, len(groups[group])))
            passed = cases = 0
            for name in chosen:
                with_beta, beta_zero = sizes_for(name)
                for sizes, beta in ((with_beta, 0.5), (beta_zero, 0.0)):
                    [res] = verify_library(folder, sizes, 1.5, beta, seed=7, names={name})
                    if res.not_run:
                        print(f"{name}: not run: {res.not_run}", flush=True)
                        cases += 1
                        continue
                    for r in res.results:
                        cases += 1
                        passed += r.passed
                        print(f"{'PASS' if r.passed else 'FAIL'} {name} {r.size} alpha {r.alpha} beta {r.beta} "
                              f"max rel err {r.max_rel_error:.2e} (tol {r.tolerance:.1e}) {r.detail}", flush=True)
                    for s in res.skipped:
                        print(f"skip {name} {s}: its predicates do not accept it", flush=True)
            summary[group] = (len(groups[group]), len(chosen), passed, cases)
    print(f"\n{'problem type':<28} {'built':>5} {'sampled':>7} {'cases passed':>12}")
    for group, (built, chosen, passed, cases) in summary.items():
        print(f"{group:<28} {built:>5} {chosen:>7} {passed:>6}/{cases:<5}")
    bad = sum(c - p for _, _, p, c in summary.values())
    print(f"{sum(v[1] for v in summary.values())} solutions sampled, "
          f"{sum(v[3] for v in summary.values())} cases, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
