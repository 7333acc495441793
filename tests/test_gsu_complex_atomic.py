"""GlobalSplitU SingleBuffer with complex C/D (Tensile 4.44: ZZZ/CCC have no _GlobalAccumulation, so the beta-only
kernel ``Cijk_Z`` sets D = beta*C with the complex product and every slice adds alpha * its partial sum into D,
each part by a compare-and-swap loop). A real rocBLAS solution (cut with tools/cut_logic.py; original
SolutionIndex below) builds and verifies on the emulator: K spread over several slices (some with nothing to
add), edges past the 16x16 tile, batch 2, complex beta and beta 0 with C all NaN."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size
from tensile_asm.library.logic import read_logic_file

from conftest import have_llvm
from kernel_build import verify_cut_solution

DATA = Path(__file__).parent / "data" / "small_features"


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
def test_real_complex_single_buffer_verifies():
    # aldebaran_Cijk_AlikC_Bljk_ZB.yaml #73: Z, A conjugated, GlobalSplitU 45 SingleBuffer, MT 16x16, DepthU 32
    sol = read_logic_file(DATA / "aldebaran_AlikC_Bljk_ZB_gsu73.yaml").entries[0].solution
    d = sol.derived
    assert d.global_split_u == 45 and d.global_accumulation is None
    _, _, contract = verify_cut_solution(sol, "gfx90a", [(Size(1, 1, 1, 1), 0.0), (Size(7, 5, 2 * d.depth_u + 7, 2), 0.5)],
                                         seed=31, name="gsuz")
    assert contract.helper_name() == "Cijk_Z"
