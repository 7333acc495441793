"""DirectToVgprA with MFMA (writer/direct_to_vgpr.py) on REAL rocBLAS solutions: A's global reads are its MFMA
operands (no LDS tile, local write or local read of A). Each solution is cut from rocblas-asm_full by
tools/cut_logic.py, built, and run on the strict emulator against the float64 reference with D poisoned (C NaN
at beta 0): edge sizes (one element, one past a tile, prime K through the tail loop, batch 2), beta 0 and not;
fp32/fp64/complex, fp16/bf16 (halves packed from one load per K value) and A transposed (fp8, one load per
output and K-step).
Random DirectToVgprA draws: tests/test_mfma_kernels.py; a larger real sample: tools/verify_logic_sample.py
SCHEDULE --feature dtv (bench/direct_to_vgpr.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tensile_asm.benchmark.verify import Size
from tensile_asm.isa.arch import load_arch
from tensile_asm.solution import Solution
from tensile_asm.writer.build import supports

from kernel_build import cut_solution, verify_cut_solution
from conftest import have_llvm

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
DATA = Path(__file__).parent / "data"


def _solution(name: str) -> Solution:
    return cut_solution(DATA / name)


@pytest.mark.parametrize("name,arch,sizes", [
    # SB #176: MT16x16, LocalSplitU 4, PrefetchGlobalRead 2, StaggerU 32, SourceSwap, MIArchVgpr
    ("aldebaran_Ailk_Bljk_SB_dtv176.yaml", "gfx90a", [Size(17, 19, 67, 1), Size(1, 1, 1, 2), Size(13, 11, 131, 2)]),
    # ZB #151: complex fp64, MT64x96, PrefetchGlobalRead 2, 1LDSBuffer
    ("aldebaran_Ailk_Bljk_ZB_dtv151.yaml", "gfx90a", [Size(65, 7, 37, 1), Size(3, 5, 17, 2)]),
    # gfx942 SB #198: MT64x16, VectorWidth 4 (loads of 4 A values for 4 outputs), LocalSplitU 4
    ("aquavanjaram942_Ailk_Bljk_SB_dtv198.yaml", "gfx942", [Size(65, 19, 131, 1), Size(1, 1, 1, 2), Size(5, 3, 67, 2)]),
    # gfx942 HHS #97: fp16 16x16x16 (4 halves a lane, one load per K value, packed by v_perm), VectorWidth 4,
    # LocalSplitU 4, AssertSummationElementMultiple 128, AssertFree0ElementMultiple 8
    ("aquavanjaram942_Ailk_Bljk_HHS_dtv97.yaml", "gfx942", [Size(72, 24, 384, 1), Size(8, 8, 128, 2)]),
    # gfx942 BBS #96: the same with bf16
    ("aquavanjaram942_Ailk_Bljk_BBS_dtv96.yaml", "gfx942", [Size(8, 16, 256, 2)]),
    # gfx942 HHS #144: MT128x128, VectorWidth 2, no AssertFree0ElementMultiple: M odd gives vectors partly past
    # the free size, loaded element by element; prime K through the tail loop
    ("aquavanjaram942_Ailk_Bljk_HHS_dtv144.yaml", "gfx942", [Size(5, 3, 131, 1)]),
    # gfx942 F8SS #11: A transposed (Alik): each output's 8 K values of a K-step one 8-byte load, 32x32x16 fp8,
    # MT256x256, PrefetchLocalRead 5, StaggerU 32
    ("aquavanjaram942_Alik_Bljk_F8SS_dtv11.yaml", "gfx942", [Size(3, 5, 128, 1)]),
])
def test_real_direct_to_vgpr_solutions(name, arch, sizes):
    sol = _solution(name)
    a = load_arch(arch)
    assert sol.params["DirectToVgprA"] and sol.valid and supports(sol, a) is None, (sol.rejection, supports(sol, a))
    assert sol.derived.lds.tile_a == 0 < sol.derived.lds.tile_b      # A has no LDS tile
    verify_cut_solution(sol, a, [(size, 0.5, -1.25) for size in sizes] + [(sizes[-1], 0.0, 0.75)], seed=7,
                        name="real_dtv")


@pytest.mark.parametrize("name,arch,changes,why", [
    ("aquavanjaram942_Ailk_Bljk_HHS_dtv97.yaml", "gfx942", {"VectorWidth": 1, "GlobalReadVectorWidth": 1},
     "DirectToVgprA with H and VectorWidth 1 is not supported (Tensile needs VectorWidth * element bytes >= 4)"),
    ("aquavanjaram942_Alik_Bljk_F8SS_dtv11.yaml", "gfx942", {"LocalReadVectorWidth": 8},
     "DirectToVgprA with A transposed (TLUA false, Cijk_Alik_Bljk_F8SS_BH) with GlobalLoadVectorWidthA 16 != "
     "LocalReadVectorWidth 8 is not supported (Tensile rejects it too)"),
    ("aquavanjaram942_Alik_Bljk_F8SS_dtv11.yaml", "gfx942", {"PrefetchLocalRead": 0},
     "and PrefetchLocalRead 0 is not supported (Tensile rejects it too)"),
])
def test_direct_to_vgpr_16_bit_and_transposed_refusals(name, arch, changes, why):
    _refusal(name, arch, changes, why)


@pytest.mark.parametrize("changes,why", [
    ({"DirectToVgprB": True}, "DirectToVgprB=True is not implemented"),
    ({"InnerUnroll": 2}, "DirectToVgprA with InnerUnroll > 1 is not supported (Tensile rejects it too)"),
    ({"ExpandPointerSwap": False}, "DirectToVgprA with ExpandPointerSwap false is not supported"),
])
def test_direct_to_vgpr_refusals_name_one_reason(changes, why):
    _refusal("aldebaran_Ailk_Bljk_ZB_dtv151.yaml", "gfx90a", changes, why)


def _refusal(name: str, arch: str, changes: dict, why: str) -> None:
    raw = yaml.load((DATA / name).read_text(),
                    Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    params = dict(raw[5][0], ProblemType=raw[4], **changes)
    sol = Solution.from_dict(params, where="logic", defaults_from="tensile")
    for key in getattr(sol, "stored_differences", {}):   # the file's derived keys follow the original parameters
        params.pop(key, None)
    sol = Solution.from_dict(params, where="logic", defaults_from="tensile")
    reason = sol.rejection if not sol.valid else supports(sol, load_arch(arch))
    assert reason is not None and why in reason, reason
