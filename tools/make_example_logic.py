#!/usr/bin/env python3
"""Write logic/aldebaran_Cijk_Ailk_Bljk_SB.yaml, the example logic file shipped with the project.

SGEMM NN batched for gfx90a: five VALU assembly solutions the writer supports (plain LDS staging; vector
widths with LDS double buffering and local-read prefetch; LocalSplitU 4) and one it does not support yet
(an MFMA solution), plus exact sizes mapping to them. The
"perf" numbers are illustrative placeholders (bigger tile -> bigger number), not measurements.

Run from the repository root:  python3 tools/make_example_logic.py
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tensile_asm.library.logic import write_logic_file  # noqa: E402
from tensile_asm.problem import ProblemType  # noqa: E402
from tensile_asm.solution import Solution  # noqa: E402

PROBLEM = {"OperationType": "GEMM", "DataType": "s", "TransposeA": False, "TransposeB": False,
           "UseBeta": True, "Batched": True}

# (WorkGroup, ThreadTile, DepthU, other parameters) over PLAIN; the rest take our defaults (catalogue.py).
# PLAIN pins the plain kernel family the example was written with (the catalogue's defaults are Tensile's
# now: automatic vector widths, prefetching, WorkGroupMapping 8, StaggerU 32).
PLAIN = {"VectorWidth": 1, "VectorWidthB": 1, "GlobalReadVectorWidth": 1, "PrefetchGlobalRead": 0,
         "PrefetchLocalRead": 0, "WorkGroupMapping": 1, "StaggerU": 0, "EdgeType": "ShiftPtr"}
PREFETCH = {"VectorWidth": 4, "GlobalReadVectorWidth": 4, "PrefetchGlobalRead": 1, "PrefetchLocalRead": 1}
TILES = [
    ([16, 16, 1], [4, 4], 16, {}),  # 0: MT 64x64x16
    ([8, 8, 1], [4, 4], 8, {}),  # 1: MT 32x32x8
    ([16, 16, 1], [8, 4], 8, PREFETCH),  # 2: MT 128x64x8, VW/GRVW 4, PGR, PLR
    ([8, 8, 1], [2, 2], 16, {}),  # 3: MT 16x16x16
    ([8, 8, 4], [4, 4], 16, {}),  # 4: MT 32x32x16 with LocalSplitU 4
    ([64, 4, 1], [1, 32], 16, {"MatrixInstruction": [32, 32, 2, 1]}),  # 5: MFMA, not supported by the writer yet
]

# [M, N, batch, K] -> (solution index, illustrative perf)
SIZES = [
    ([64, 64, 1, 64], 0, 100.0), ([256, 256, 1, 256], 0, 400.0), ([1024, 1024, 1, 1024], 2, 900.0),
    ([2048, 1024, 1, 512], 2, 950.0), ([32, 32, 1, 32], 1, 40.0), ([96, 32, 4, 128], 1, 60.0),
    ([16, 16, 1, 16], 3, 10.0), ([17, 33, 2, 65], 3, 12.0), ([128, 128, 1, 4096], 4, 300.0),
    ([512, 512, 8, 512], 0, 700.0), ([64, 64, 1, 8192], 5, 200.0),
]


def main() -> int:
    pt = ProblemType.from_dict(PROBLEM, "example ProblemType")
    solutions = []
    for i, (wg, tt, du, extra) in enumerate(TILES):
        sol = Solution.from_dict({"WorkGroup": wg, "ThreadTile": tt, "DepthU": du, "ISA": [9, 0, 10],
                                  **PLAIN, **extra}, where=f"example solution {i}", problem_type=pt).validate()
        solutions.append(sol)
    out = REPO / "logic" / f"aldebaran_{pt.name}.yaml"
    write_logic_file(out, schedule="aldebaran", architecture="gfx90a", device_names=["Device 7400", "Device 740c"],
                     problem_type=pt, solutions=solutions, exact_logic=SIZES)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
