"""SourceSwap with MFMAs of several blocks: the MFMA's first operand is B, so its output is transposed and its
blocks are the output's with A's blocks inner (block b is block (b % MatrixInstBM, b / MatrixInstBM)); the store
(mfma_store.py) and the LocalSplitU partial tiles (split_u.py) place every accumulator by that. Real rocBLAS
solutions and one variant with blocks along both dimensions verify on the strict emulator.

Cut from ``../shared/data/logic/rocblas-asm_full`` with tools/cut_logic.py (original SolutionIndex in the file
names): aldebaran HHS_BH #228 (MI 4x4x4x16, blocks 4 x 4 along the lanes, VectorWidth 2, the store path) and
aquavanjaram942 SB #194 (MI 16x16x1x4, blocks 4 x 1 in the registers, LocalSplitU 4, DirectToVgprA).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size
from tensile_asm.library.logic import read_logic_file
from tensile_asm.solution import Solution

from conftest import have_llvm
from kernel_build import verify_cut_solution

DATA = Path(__file__).parent / "data" / "small_features"


def _real(fname):
    return read_logic_file(DATA / fname).entries[0].solution


def _blocks_along_n():
    """An SGEMM of ours: MI [32, 32, 1, 2] (two 32x32 blocks, along N) with SourceSwap, wave tile 1 x 1."""
    prob = {"OperationType": "GEMM", "DataType": "s", "DestDataType": "s", "ComputeDataType": "s",
            "TransposeA": False, "TransposeB": True, "Batched": True, "UseBeta": True}
    return Solution.from_dict({"ProblemType": prob, "MatrixInstruction": [32, 32, 1, 2], "SourceSwap": True,
                               "WorkGroup": [32, 8, 1], "ThreadTile": [1, 32], "DepthU": 16}, where="swap test")


def _blocks_both_ways():
    """gfx942 SB #194 with LocalSplitU 1 (the store path), A through LDS and MI [16, 16, 1, 4] as 2 x 2 blocks."""
    s = _real("aquavanjaram942_Ailk_Bljk_SB_ss194.yaml")
    params = dict(s.params, WorkGroup=[64, 4, 1], DirectToVgprA=False, DepthU=16,
                  MatrixInstruction=[16, 16, 1, 4, 2, 1, 2, 1, 4])
    return Solution.from_dict(params, problem_type=s.problem_type, defaults_from="tensile")


CASES = [("aldebaran_Ailk_Bljk_HHS_BH_ss228.yaml", "gfx90a"), ("aquavanjaram942_Ailk_Bljk_SB_ss194.yaml", "gfx942"),
         ("blocks 2x2", "gfx942"), ("blocks 1x2", "gfx90a")]
BLOCKS = {"aldebaran_Ailk_Bljk_HHS_BH_ss228.yaml": (4, 4), "aquavanjaram942_Ailk_Bljk_SB_ss194.yaml": (4, 1),
          "blocks 2x2": (2, 2), "blocks 1x2": (1, 2)}


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("what,arch", CASES)
def test_source_swap_with_mfma_blocks_verifies(what, arch):
    sol = {"blocks 2x2": _blocks_both_ways, "blocks 1x2": _blocks_along_n}.get(what, lambda: _real(what))()
    d = sol.derived
    assert sol.params["SourceSwap"] and d.matrix_instruction[3] > 1 and d.mi_blocks == BLOCKS[what]
    verify_cut_solution(sol, arch, [(Size(1, 1, 1, 1), 0.0), (Size(d.mt0 + 3, d.mt1 + 1, 2 * d.depth_u + 5, 2), 0.5)],
                        seed=31, name="ssb")
