"""Verifying xf32 solutions (gfx942's `*_SB_MX` logic: F32XdlMathOp XFloat32, EnableF32XdlMathOp): the verifier asks
the library an xf32 problem (its predicate F32XdlMathOp XFloat32 holds, so the sizes are not skipped) and accepts
the xf32 MFMA's input rounding (reference.XF32_ROUNDOFF on each A and B value) and no more. The real solution is
gfx942 Ailk_Bljk_SB_MX #8 (MT256x128x32, v_mfma_f32_32x32x4_xf32), cut by tools/cut_logic.py; the emulated runs
of real SB_MX solutions are in bench/xf32_logic_verify.md."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tensile_asm.benchmark.reference import XF32_ROUNDOFF, compare, make_instance, reference, tolerance
from tensile_asm.benchmark.verify import Size, library_problem
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.library.master import solution_entry
from tensile_asm.library.predicates import problem_holds
from tensile_asm.library.problem_view import ContractionView
from tensile_asm.solution import Solution

from kernel_build import cut_solution

DATA = Path(__file__).parent / "data"


def _solution() -> Solution:
    return cut_solution(DATA / "aquavanjaram942_Ailk_Bljk_SB_MX_xf32.yaml")


def test_library_asks_real_xf32_solution_an_xf32_problem():
    sol = _solution()
    entry = solution_entry(sol, "mx", 0, 0)
    contract = GemmKernelContract.from_library_entry(entry)
    assert contract.xf32 and GemmKernelContract.from_solution(sol, "mx").xf32
    problem = library_problem(contract, entry, Size(257, 131, 67, 2), 1.0, 0.5)
    assert problem.problem_type.f32_xdl_math_op.char == "X"
    # the solution's predicate (F32XdlMathOp XFloat32 among them) holds for it
    assert problem_holds(entry["problemPredicate"], ContractionView.from_problem(problem))


def _rounded(x: np.ndarray, fraction_bits: int) -> np.ndarray:
    """fp32 values with their fraction cut to ``fraction_bits`` bits (toward zero)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return (bits & np.uint32((0xFFFFFFFF << (23 - fraction_bits)) & 0xFFFFFFFF)).view(np.float32)


@pytest.mark.parametrize("seed", [1, 2])
def test_xf32_tolerance_admits_xf32_inputs_and_no_coarser(seed):
    """D computed from A and B cut to xf32's 10 fraction bits passes with the xf32 allowance and fails the fp32
    tolerance; from inputs cut to bf16's 7 bits it fails both (a kernel multiplying at bf16 precision)."""
    m, n, k = 37, 29, 131
    inst = make_instance(m, n, k, 1, seed=seed)
    assert tolerance(k, input_roundoff=XF32_ROUNDOFF) == pytest.approx(
        tolerance(k) + 2 * XF32_ROUNDOFF + XF32_ROUNDOFF ** 2)
    exact, _ = reference(inst, 1.0, 0.0)
    results = {}
    for bits in (10, 7):
        a0, b0 = inst.view("A").copy(), inst.view("B").copy()
        inst.view("A", writeable=True)[...] = _rounded(a0, bits)
        inst.view("B", writeable=True)[...] = _rounded(b0, bits)
        d, _ = reference(inst, 1.0, 0.0)
        inst.view("A", writeable=True)[...] = a0
        inst.view("B", writeable=True)[...] = b0
        out = inst.arrays["D"].copy()      # poisoned outside the M x N region
        inst.view("D", out, writeable=True)[...] = d.astype(np.float32)
        results[bits] = (compare(inst, out, 1.0, 0.0, input_roundoff=XF32_ROUNDOFF).passed,
                         compare(inst, out, 1.0, 0.0).passed)
    assert not np.allclose(exact, d)
    assert results[10] == (True, False)
    assert results[7] == (False, False)
