"""REAL rocBLAS MFMA solutions that supports() accepts and that used to need more than 256 VGPRs when written
(create-library failed on them), and the register savings that fit them as Tensile fits them:

- 16-bit K-major operands with VectorWidth VW > 1 are read VW outputs at a time (one ds_read_b32/b64 per K value,
  packed by v_perm_b32: mfma_local_read.vector_reads), not one ds_read_u16 per value;
- the other K-major 16-bit operands are packed in place (mfma.pack_operand);
- loads share one LDS write address where a block pad (LdsBlockSizePerPad) never falls between them
  (global_read.lds_write_anchors);
- each pass of K-steps (main loop, tail loop) has register sets of its own (kernel._mac_steps), so the main
  loop's are not kept live over the whole loop for the tail loop's sake.

Each solution is cut from rocblas-asm_full (tools/cut_logic.py). The big gfx942 kernels are written only (code
generation: their registers); the small aldebaran ones with VW 2 run on the strict emulator against the float64
reference with D poisoned, at the smallest admitted size and at sizes past the tile with a prime K (tail loop),
batch 2, beta 0 and not (tools/verify_logic_sample.py builds and verifies the big ones: bench/register_overflow.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size
from tensile_asm.isa.arch import load_arch
from tensile_asm.solution import Solution
from tensile_asm.writer.build import build_kernel, supports

from kernel_build import cut_solution, verify_cut_solution
from conftest import have_llvm

DATA = Path(__file__).parent / "data"


def _solution(name: str) -> Solution:
    return cut_solution(DATA / name)


def _main_loop(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(".LLoopBeginL"))
    end = next(i for i in range(start + 1, len(lines)) if "LLoopBeginL" in lines[i] and "branch" in lines[i])
    return [line.split("//")[0].strip() for line in lines[start:end]]


# (file, whether A is read VW outputs at a time); before these needed 268 and 288 VGPRs (Tensile's: 256 each)
@pytest.mark.parametrize("name,vector", [
    # BBS_BH #162: VW 4, 28 B offsets (no SGPR offsets: Tensile's _UseSgprForGRO off)
    ("aquavanjaram942_Ailk_Bljk_BBS_BH_fit162.yaml", True),
    # HHS_BH #163: MT128x256x32 MIArchVgpr (128 accumulators in arch VGPRs), PrefetchGlobalRead 0, VW 2
    ("aquavanjaram942_Ailk_Bljk_HHS_BH_fit163.yaml", True),
])
def test_real_solutions_fit_256_vgprs(name, vector):
    sol = _solution(name)
    arch = load_arch("gfx942")
    assert sol.valid and supports(sol, arch) is None, (sol.rejection, supports(sol, arch))
    kernel = build_kernel(sol, arch, "fit")     # raised "needs more than 256 VGPRs" before
    assert kernel.resources.vgprs <= 256
    loop = _main_loop(kernel.text())
    assert any(line.startswith("v_perm_b32") for line in loop) == vector
    assert not any(line.startswith("ds_read_u16") for line in loop) == vector


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("name,sizes", [
    # HHS #231: MT128x16x64, 16x16x16 f16 MFMAs (2 registers an operand), VW 2, PGR 2, PLR 5
    ("aldebaran_Ailk_Bljk_HHS_BH_vw231.yaml", [Size(131, 19, 67, 2), Size(8, 1, 1, 1)]),
    # BBS #6: MT64x32x32, 16x16x8 bf16 MFMAs (one register an operand), VW 2, PGR 1, PLR 1; M a multiple of 4
    # (AssertFree0ElementMultiple)
    ("aldebaran_Ailk_Bljk_BBS_BH_vw6.yaml", [Size(76, 37, 67, 2), Size(4, 1, 1, 1)]),
])
def test_vector_reads_of_k_major_16bit_operands_verify(name, sizes):
    sol = _solution(name)
    arch = load_arch("gfx90a")
    assert sol.valid and supports(sol, arch) is None, (sol.rejection, supports(sol, arch))
    kernel, _, _ = verify_cut_solution(sol, arch, [(sizes[0], 0.5, -1.25), *((s, 0.0, 0.75) for s in sizes[1:])],
                                       seed=7, name="vector_reads")
    loop = _main_loop(kernel.text())
    assert any(line.startswith("v_perm_b32") for line in loop)
    assert any(line.startswith("ds_read_b32") for line in loop)
    assert not any(line.startswith("ds_read_u16") for line in loop)
