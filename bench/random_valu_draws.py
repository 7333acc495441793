"""What the randomized VALU differential test (tests/test_random_kernels.py) draws: issue 10's features and types
counted over the cases its CI run generates (the same strategy, seeds and per-shard counts; no kernel is built, so
the few draws a register overflow drops later are still counted here).

    PYTHONPATH=$PWD:tests .venv/bin/python bench/random_valu_draws.py > bench/random_valu_draws.md
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

import test_random_kernels as t  # noqa: E402


def features(case: dict) -> list[str]:
    p, pr = case["params"], case["problem"]
    ty = {"4xi8": "4xi8II"}.get(pr["DataType"], (pr["DataType"] + pr["DestDataType"] + pr["ComputeDataType"]).upper())
    half = pr["DataType"] in "hb"
    out = [f"type {ty}"]
    if p["WorkGroup"][2] > 1:
        out.append(f"LocalSplitU {ty}")
    if p["GlobalSplitU"] > 1:
        out.append(f"GlobalSplitU {p['GlobalSplitUAlgorithm']} {ty}")
    if half and p["GlobalReadVectorWidth"] not in (1, -1) and p["GlobalReadVectorWidth"] > 1:
        out.append("16-bit GlobalReadVectorWidth > 1")
    if half and p["VectorWidth"] == 8:
        out.append("16-bit VectorWidth 8")
    if p["InnerUnroll"] > 1:
        out.append("InnerUnroll 2")
    out.append(f"PrefetchGlobalRead {p['PrefetchGlobalRead']}")
    if p["PrefetchLocalRead"] > 1:
        out.append("PrefetchLocalRead > 1")
    if p["DepthU"] & (p["DepthU"] - 1):
        out.append("DepthU not a power of two")
    if any(s in (3, 6) for s in p["ThreadTile"]):
        out.append("ThreadTile 3 or 6 (MacroTile side not a power of two)")
    if p["StaggerU"] and p["StaggerUMapping"]:
        out.append("StaggerU with StaggerUMapping > 0")
    if pr.get("StridedBatched") is False:
        out.append("pointer-array batches (_GB)")
    if p["PersistentKernel"]:
        out.append("PersistentKernel")
    if pr.get("ComplexConjugateA") or pr.get("ComplexConjugateB"):
        out.append("complex with a conjugate")
    if p.get("DirectToLdsA") or p.get("DirectToLdsB"):
        out.append("DirectToLds")
    if case.get("first_stride"):
        out.append("UseInitialStrides")
    return out


def main() -> int:
    counts, total = collections.Counter(), [0]
    for shard in range(t.SHARDS):
        @seed(t.SEED + shard)
        @settings(max_examples=t.CI_CASES // t.SHARDS, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=t.cases(80))
        def run(case):
            total[0] += 1
            counts.update(features(case))
        run()
    print("# Randomized VALU differential test: what its CI run draws (issue 10, deliverable 3)\n")
    print(__doc__.split("\n\n", 1)[1].strip("\n"))
    print(f"\n{total[0]} cases generated ({t.SHARDS} shards x {t.CI_CASES // t.SHARDS}); the --slow run draws "
          f"{t.SLOW_CASES} from the same strategy (FractionalLoad too, sizes up to 128).\n")
    print("| feature / type | cases |\n|---|---:|")
    for k, v in sorted(counts.items()):
        print(f"| {k} | {v} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
