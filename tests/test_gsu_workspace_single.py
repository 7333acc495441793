"""GlobalSplitU SingleBuffer with C/D other than the compute type (Tensile 4.44's _GlobalAccumulation SingleBuffer,
rocBLAS's BBS): the beta-only kernel ``Cijk_B_GA`` sets a packed fp32 workspace to beta*C, the GEMM's slices add
alpha*A*B into it with fp32 atomics, and ``Cijk_B_PostGSU`` converts it to D (Tensile's kernel names and launch
order: ContractionSolution.cpp). Real aldebaran solutions verify on the strict emulator; the workspace starts
poisoned (NaN), so an element the beta-only kernel missed fails.

Cut from ``../shared/data/logic/rocblas-asm_full/aldebaran`` with tools/cut_logic.py (original SolutionIndex in the
file names): BBS_BH #237 (MT16x16x64, GlobalSplitU 11) and pointer-array BBS_BH_GB #100 (MT32x32x64, GlobalSplitU 15:
C and D through their pointers, the workspace packed); and #237 as an HHS solution (fp16 C widened into the
workspace, beta in fp32 as Tensile's BetaType).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.library.logic import read_logic_file
from tensile_asm.library.master import solution_entry
from tensile_asm.problem import ProblemType
from tensile_asm.solution import Solution

from conftest import have_llvm
from kernel_build import verify_cut_solution

DATA = Path(__file__).parent / "data" / "small_features"
FILES = {"aldebaran_Ailk_Bljk_BBS_BH_ga237.yaml": ("Cijk_B_GA", "Cijk_B_PostGSU", "Cijk_B_PostGSU_VW2"),
         "aldebaran_Alik_Bljk_BBS_BH_GB_ga100.yaml": ("Cijk_B_GB_GA", "Cijk_B_GB_PostGSU", "Cijk_B_GB_PostGSU_VW2"),
         "HHS": ("Cijk_H_GA", "Cijk_H_PostGSU", "Cijk_H_PostGSU_VW2")}


def _solution(fname):
    if fname != "HHS":
        return read_logic_file(DATA / fname).entries[0].solution
    import yaml
    raw = yaml.safe_load((DATA / "aldebaran_Ailk_Bljk_BBS_BH_ga237.yaml").read_text())
    pt = ProblemType.from_dict({**raw[4], "DataType": "h", "DestDataType": "h", "ComputeDataType": "s"})
    params = {k: v for k, v in raw[5][0].items() if k != "ProblemType"}
    return Solution.from_dict(params, problem_type=pt, defaults_from="tensile")


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("fname", sorted(FILES))
def test_bf16_single_buffer_through_an_fp32_workspace(fname):
    sol = _solution(fname)
    d = sol.derived
    assert d.global_split_u > 1 and d.global_accumulation == "SingleBuffer"
    # the emulator's device has 1 CU: Tensile's host takes the VW2 conversion from 513 elements of D (M even)
    _, _, contract = verify_cut_solution(sol, "gfx90a", [(Size(1, 1, 1, 1), 0.0), (Size(d.mt0 + 1, d.mt1 + 3, 131, 2), 0.5),
                                                         (Size(2 * d.mt0 + 2, d.mt1 + 3, 67, 2), 0.0)],
                                         seed=37, name="ga")
    assert contract.helper_names() == list(FILES[fname])
    # the library entry says the same (sizeMapping.globalAccumulation 1)
    entry = GemmKernelContract.from_library_entry(solution_entry(sol, "ga", 0, 0))
    assert entry.workspace_single and entry.helper_names() == list(FILES[fname])
    launches = contract.launches(m=5, n=3, k=7, batch=2, ld={t: 8 for t in "ABCD"},
                                 batch_stride={t: 64 for t in "ABCD"}, alpha=1.0, beta=1.0,
                                 addresses={t: 0 for t in ("A", "B", "C", "D", "WS")}, cu_count=104)
    assert [x.kernel for x in launches] == [FILES[fname][0], "ga", FILES[fname][1]]
