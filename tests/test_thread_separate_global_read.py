"""ThreadSeparateGlobalReadA/B with Tensile 4.44's meaning (graTileAssignment): a wave's lanes form 2 x TSGR
groups, group q loading vectors q x d .. (q+1) x d - 1 (d = LVC / (2 x TSGR)) of each of the wave's rows; the
LDS tile is as without it. Real rocBLAS solutions (cut with tools/cut_logic.py; original SolutionIndex below)
build and verify on the emulator at edge sizes; Tensile's rejections are ours."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size
from tensile_asm.library.logic import read_logic_file
from tensile_asm.solution import Solution

from conftest import have_llvm
from kernel_build import verify_cut_solution

DATA = Path(__file__).parent / "data" / "small_features"
REAL = [
    # 381: HHS, A along K with TSGRA 2 (4 lane groups per row), MT 128x?, DepthU 128, 16x16x16
    ("aldebaran_Alik_Bljk_HHS_BH_tsgr381.yaml", "gfx90a"),
    # 13: fp8, TSGRA 1 and TSGRB 1, 32x32x16, MT 64x64, DepthU 64
    ("aquavanjaram942_Ailk_Bljk_F8F8S_BH_tsgr13.yaml", "gfx942"),
]


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("fname,arch", REAL)
def test_real_solutions_verify(fname, arch):
    sol = read_logic_file(DATA / fname).entries[0].solution
    d = sol.derived
    assert d.thread_separate_a or d.thread_separate_b
    verify_cut_solution(sol, arch, [(Size(1, 1, 1, 1), 0.0), (Size(d.mt0 + 3, 7, d.depth_u + 9, 2), 0.5)],
                        seed=29, name="tsgr")


def _mfma(**params) -> Solution:
    prob = {"OperationType": "GEMM", "DataType": "s", "DestDataType": "s", "ComputeDataType": "s",
            "TransposeA": True, "TransposeB": False, "Batched": True, "UseBeta": True}
    base = {"MatrixInstruction": [16, 16, 4, 1, 1, 2, 2, 2, 2], "DepthU": 16, "VectorWidth": 1,
            "GlobalReadVectorWidth": 4, "PrefetchGlobalRead": 1, "WorkGroup": [16, 16, 1], **params}
    return Solution.from_dict({"ProblemType": prob, **base}, where="tsgr test")


@pytest.mark.parametrize("params,why", [
    # A along K: LVC = DepthU 16 / GLVW 4 = 4 vectors a row; 2 x 2 groups is not less than 4
    ({"ThreadSeparateGlobalReadA": 2}, "2 x it must be less than the 4 vectors"),
    ({"ThreadSeparateGlobalReadA": 1, "DepthU": 512, "GlobalReadVectorWidth": 4},
     "LVCA 128 is more than WavefrontSize 64"),
])
def test_rejections_are_tensiles(params, why):
    sol = _mfma(**params)
    assert not sol.valid and why in sol.rejection, sol.rejection


def test_direct_to_vgpr_turns_it_off():
    # Tensile: "set TSGR = 0 if DirectToVgpr is enabled"
    assert _mfma(ThreadSeparateGlobalReadA=1).derived.thread_separate_a == 1
    sol = _mfma(ThreadSeparateGlobalReadA=1, DirectToVgprA=True, ExpandPointerSwap=True)
    assert sol.valid, sol.rejection
    assert sol.derived.thread_separate_a == 0
