"""Int8x4 GEMM (4xi8II: A/B hold four int8 values per 32-bit element, K counts those packs; C, D, alpha and
beta are int32), the VALU form rocBLAS ships for gfx906/gfx908/gfx90a: ``v_dot4_i32_i8`` MACs and int32
alpha/beta with wraparound. The reference is exact integer arithmetic (int32 wrapping as the hardware's),
compared element for element with D poisoned and C poisoned when beta is 0."""

from __future__ import annotations

import numpy as np
import pytest

from tensile_asm.benchmark.reference import compare, integer_reference, make_instance
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution
from tensile_asm.writer.build import supports

from conftest import have_llvm
from kernel_build import build_linked


def _problem(ta=False, tb=False):
    return {"OperationType": "GEMM", "DataType": "4xi8", "DestDataType": "I", "ComputeDataType": "I",
            "HighPrecisionAccumulate": True, "TransposeA": ta, "TransposeB": tb, "Batched": True, "UseBeta": True}


def _s8(word: int, q: int) -> int:
    byte = (int(word) >> (8 * q)) & 0xFF
    return byte - 256 if byte > 127 else byte


def test_integer_reference_is_exact_with_wraparound():
    inst = make_instance(3, 4, 6, 2, True, False, seed=9, data_type="4xi8", dest_type="I")
    alpha, beta = 2**30 + 7, -(2**29) - 3
    got = integer_reference(inst, alpha, beta)
    a, b, c = inst.view("A"), inst.view("B"), inst.view("C")
    for bi, i, j in ((0, 0, 0), (1, 2, 3), (0, 1, 2)):
        dot = sum(_s8(a[bi, i, k], q) * _s8(b[bi, k, j], q) for k in range(6) for q in range(4))
        want = (alpha * dot + beta * int(c[bi, i, j]) + 2**31) % 2**32 - 2**31
        assert got[bi, i, j] == want
    # the comparison is exact: one unit off is a failure, the right answer a pass
    d = inst.arrays["D"].copy()
    view = inst.view("D", d, writeable=True)
    view[...] = got.astype(np.int32)
    assert compare(inst, d, alpha, beta).passed
    view[1, 2, 3] += 1
    assert compare(inst, d, alpha, beta).bad_elements == 1


CASES = [  # (arch, TransposeA, TransposeB, params)
    ("gfx906", False, False, {}),
    ("gfx908", True, False, {"WorkGroup": [8, 8, 2], "PrefetchGlobalRead": 1}),
    ("gfx90a", False, True, {"GlobalReadVectorWidth": 2, "VectorWidth": 2, "PersistentKernel": 2}),
    ("gfx906", True, True, {"GlobalSplitU": 3}),   # SingleBuffer: int32 beta-only kernel, then atomic adds
]


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("arch,ta,tb,extra", CASES)
def test_int8x4_kernels_are_exact(tmp_path, arch, ta, tb, extra):
    params = {"WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8, "GlobalReadVectorWidth": 1,
              "VectorWidth": 1, **extra}
    sol = Solution.from_dict({"ProblemType": _problem(ta, tb), **params}, where="test")
    kernel, co, contract = build_linked(sol, load_arch(arch), tmp_path, file="k")
    assert "v_dot4_i32_i8" in kernel.text()
    for size, alpha, beta in ((Size(37, 23, 19, 2), 123457, 0), (Size(1, 1, 1), -3, 5),
                              (Size(17, 5, 9), -3, -70001)):
        [r] = verify_sizes(co, contract, [size], alpha, beta, 13, EmulatedRuntime())
        assert r.passed and r.max_rel_error == 0.0, (size, r.detail)


def test_int8x4_refusals():
    base = {"ProblemType": _problem(), "WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8}
    sol = Solution.from_dict(base, where="test")
    assert "gfx900 does not have" in supports(sol, load_arch("gfx900"))
    sol = Solution.from_dict({**base, "GlobalSplitU": 2, "GlobalSplitUAlgorithm": "MultipleBuffer"}, where="test")
    assert "GlobalSplitU MultipleBuffer with int32" in supports(sol, load_arch("gfx906"))
