"""MFMA 16-bit main loops on REAL rocBLAS solutions with LocalReadVectorWidth 8 (writer/mfma_local_read.py): an
unroll-major operand is read two K-steps at a time (ds_read_b128, Tensile's wide local reads), every lane's K values
permuted alike in A and B; a K-major operand's halves are packed (v_lshl_or_b32) away from the MFMA that reads
them (no s_nop for the VALU-write-to-MFMA-read wait states in the main loop). Each solution is cut from
rocblas-asm_full by tools/cut_logic.py, built, and run on the strict emulator against the float64 reference with D
poisoned: the smallest size the solutions admit (M a multiple of 8: AssertFree0ElementMultiple), sizes past the
tile with a prime K through the tail loop, batch 2, beta 0 and not. The
table against Tensile's kernels: bench/mfma_loop_vs_tensile.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size
from tensile_asm.isa.arch import load_arch
from tensile_asm.solution import Solution
from tensile_asm.writer.build import geometry, supports
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.mfma import plan
from tensile_asm.writer.mfma_local_read import k_steps_per_read

from kernel_build import cut_solution, verify_cut_solution
from conftest import have_llvm

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
DATA = Path(__file__).parent / "data"


def _solution(name: str) -> Solution:
    return cut_solution(DATA / name)


def _main_loop(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(".LLoopBeginL"))
    end = next(i for i in range(start + 1, len(lines)) if "s_branch .LLoopBeginL" in lines[i])
    return [line.split("//")[0].strip() for line in lines[start:end]]


@pytest.mark.parametrize("name,packed,nops,sizes", [
    # HHS #82: MT64x32x64, 16x16x16 MFMAs, A K-major (packed), B unroll-major, PrefetchGlobalRead 2, PLR 5
    ("aldebaran_Ailk_Bljk_HHS_BH_lrvw82.yaml", True, 0, [Size(72, 37, 131, 2), Size(8, 1, 1, 1)]),
    # BBS #77: bf16 MT64x64x64, 32x32x8 (bf16_1k) MFMAs, PLR 9, StaggerU; one MFMA per K-step: the last step's
    # packing has nothing left to put between it and its MFMA (one s_nop 0 in each of the two unrolled iterations)
    ("aldebaran_Ailk_Bljk_BBS_BH_lrvw77.yaml", True, 2, [Size(72, 67, 131, 2), Size(8, 1, 1, 1)]),
    # HHS Alik #77: MT16x16x128, both operands unroll-major: both read two K-steps at a time, nothing packed
    ("aldebaran_Alik_Bljk_HHS_BH_lrvw77.yaml", False, 0, [Size(24, 19, 263, 2), Size(8, 1, 1, 1)]),
])
def test_real_16bit_solutions_read_two_k_steps_at_once(name, packed, nops, sizes):
    sol = _solution(name)
    arch = load_arch("gfx90a")
    assert sol.valid and supports(sol, arch) is None, (sol.rejection, supports(sol, arch))
    kernel, _, _ = verify_cut_solution(sol, arch, [(sizes[0], 0.5, -1.25), *((s, 0.0, 0.75) for s in sizes[1:])],
                                       seed=7, name="wide_lr")
    g = geometry(sol)
    assert g.local_read_vector_width == 8 and k_steps_per_read(g, plan(KernelContext(arch, g, "wide_lr"))) == 2
    loop = _main_loop(kernel.text())
    assert any(line.startswith("ds_read_b128") for line in loop)
    assert not any(line.startswith("ds_read_b64") for line in loop)     # V = 4 halves: never one K-step alone
    assert any(line.startswith("v_lshl_or_b32") for line in loop) == packed
    assert sum(line.startswith("s_nop") for line in loop) == nops
