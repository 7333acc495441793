"""Tensile's own pointer-array ("general", ``_GB``) batched kernels verify on our emulator under our contract.

tests/data/tensile_library_gb was written by AMD's Tensile 4.44 TensileCreateLibrary from rocBLAS _GB logic
(its README has the commands): the kernels take Tensile's arguments (addresses of per-batch pointer arrays,
then OffsetD/C/A/B in elements), which ``tensile_asm.gemm`` lays onto their metadata; the emulated runtime
puts every batch of every matrix in its own buffer at an element offset, placed in a shuffled order, and
gathers D back for the float64 reference. CI runs one VALU and two MFMA kernels; --slow runs all nine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tensile_asm.gemm.contract as contract_module
from tensile_asm.benchmark.verify import Size, verify_library
from tensile_asm.library.codeobjects import LibraryFolder

DATA = Path(__file__).parent / "data" / "tensile_library_gb"

# gfx906 VALU DGEMM (WorkGroupMapping 8), gfx90a MFMA SGEMM (WorkGroupMapping 5, StaggerU), gfx90a MFMA BBS
CI_KERNELS = {
    "Cijk_Alik_Bljk_DB_GB_MT32x32x8_SN_AF0EM1_AMAS3_ASEM1_EPS1_GLVWA2_GLVWB2_GRVW2_ISA906_K1_LBSPPB0_LPB0_LRVW2_FMA_"
    "NEPBS0_PGR1_PLR1_SIA1_SS0_SU32_SUS256_SVW2_TT4_4_TLDS0_UMLDSB0_VAW1_VW2_VWB2_WSGRA0_WSGRB0_WG8_8_1_WGM8",
    "Cijk_Ailk_Bljk_SB_GB_MT16x16x32_MI16x16x4x1_SN_AF0EM1_AMAS0_ASEM1_EPS0_GLVWA4_GLVWB4_GRVW4_ISA90a_K1_LBSPPB128_"
    "LPB4_LRVW2_MAC_NEPBS8_PGR2_PLR9_SIA3_SS1_SU32_SUS128_SVW1_TT1_16_TLDS1_UMLDSB1_VAW1_VW1_VWB1_WSGRA1_WSGRB1_"
    "WG16_4_1_WGM5",
    "Cijk_Ailk_Bljk_BBS_BH_GB_MT32x32x32_MI16x16x8x1_SE_AF0EM4_AMAS0_ASEM1_EPS1_GLVWA2_GLVWB2_GRVW2_ISA90a_K1_"
    "LBSPPB128_LPB2_LRVW2_FMA_NEPBS0_PGR1_PLR1_SIA3_SS0_SU0_SUS0_SVW4_TT1_16_TLDS1_UMLDSB1_VAW1_VW1_VWB1_WSGRA1_"
    "WSGRB1_WG32_8_1_WGM15",
}
# not tile multiples, a prime batch count (BBS: M a multiple of 4 by its predicates)
CI_SIZES = [Size(20, 13, 9, 3)]
SLOW_SIZES = [Size(17, 13, 9, 3), Size(40, 100, 38, 2), Size(64, 64, 64, 5), Size(1, 1, 1, 1)]


def _failures(results):
    return [(r.name[:40], r.not_run, [(str(c.size), c.max_rel_error, c.detail) for c in r.results if not c.passed])
            for r in results if not r.passed or not r.results]


def test_library_marks_pointer_array_solutions():
    with LibraryFolder(DATA) as folder:
        sols = folder.solutions()
        assert len(sols) == 9
        for _, entry, _ in sols:
            assert "_GB_" in entry["name"] and entry["problemType"]["stridedBatched"] is False
            assert {"type": "StridedBatched", "value": False} in entry["problemPredicate"]["value"]


def test_tensile_gb_kernels_pass(request):
    slow = request.config.getoption("--slow")
    with LibraryFolder(DATA) as folder:
        results = verify_library(folder, SLOW_SIZES if slow else CI_SIZES, 1.5, None, seed=5,
                                 names=None if slow else CI_KERNELS)
    assert len(results) == (9 if slow else len(CI_KERNELS))
    assert not _failures(results)


def test_tensile_gb_kernel_fails_without_offsets(monkeypatch):
    """The check can fail: launched with OffsetD/C/A/B 0 while each batch starts at an offset in its buffer,
    a Tensile kernel writes over D's leading poison (and reads the filler before A, B and C)."""
    launches = contract_module.GemmKernelContract.launches

    def without_offsets(self, **kw):
        return launches(self, **{**kw, "offsets": None})

    monkeypatch.setattr(contract_module.GemmKernelContract, "launches", without_offsets)
    name = next(n for n in CI_KERNELS if "_DB_" in n)
    with LibraryFolder(DATA) as folder:
        [r] = verify_library(folder, [Size(9, 5, 3, 2)], 1.5, None, seed=5, names={name})
    assert r.results and not r.passed
    assert "written outside" in r.results[0].detail
