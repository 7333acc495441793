"""BufferLoad false with GlobalReadVectorWidth > 1 (global loads, which have no range check): real rocBLAS
solutions build and verify on the strict emulator with no guard bytes after A and B (a load past a matrix
faults: device memory has unmapped gaps between buffers), at sizes whose last tile reaches past M and N (the
element-by-element path of ``global_read.global_edge``), whose first tile is whole (the vector path), K past
DepthU (the masked tail), size 1, batch 2 and beta 0 with C all NaN.

Cut from ``../shared/data/logic/rocblas-asm_full`` with tools/cut_logic.py (original SolutionIndex below).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size
from tensile_asm.library.logic import read_logic_file
from tensile_asm.runtime.emulated import EmulatedRuntime

from conftest import have_llvm
from kernel_build import verify_cut_solution

DATA = Path(__file__).parent / "data" / "small_features"
REAL = [
    # 9: A along M (GLVW 4 fp32, vectors along the free dimension), B along K; MT 64x32, DepthU 32, PGR 2
    ("aquavanjaram942_Ailk_Bljk_SB_bl9.yaml", "gfx942"),
    # 14: A and B along K (the vectors along K: guarded element by element in the tail); MT 64x32
    ("aquavanjaram942_Alik_Bljk_SB_bl14.yaml", "gfx942"),
]


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("fname,arch", REAL)
def test_real_solutions_verify_without_guard_bytes(fname, arch):
    sol = read_logic_file(DATA / fname).entries[0].solution
    d = sol.derived
    assert not d.buffer_load and max(d.glvw_a, d.glvw_b) > 1
    runtime = EmulatedRuntime()     # strict, no guard bytes
    assert runtime.guard_bytes == 0
    verify_cut_solution(sol, arch, [(Size(1, 1, 1, 1), 0.0), (Size(d.mt0 + 3, d.mt1 + 1, 2 * d.depth_u + 5, 2), 0.5),
                                    (Size(13, 11, 7, 1), 0.0)], seed=23, runtime=runtime, name="gw")
