"""Summation-loop shapes rocBLAS's VALU logic uses: DepthU that is not a power of two (12, 24, 48: K / DepthU
by a shift and the odd part's magic number, K % DepthU by a multiply-subtract) and InnerUnroll > 1 (Tensile's
LoopUnroll steps of InnerUnroll K values each, computed as consecutive steps). Kernels run on the strict
emulator against the float64 reference (D poisoned, C NaN when beta is 0) at K = 1, primes, DepthU and
DepthU +- 1."""

from __future__ import annotations

import random

import pytest

from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm.arguments import magic_number_alg2
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution
from tensile_asm.writer.build import supports

from conftest import have_llvm
from kernel_build import build_linked


def _chunks(k: int, du: int) -> int:
    """What the kernel's K / DepthU sequence computes (writer/kernel._k_chunks), in 32-bit arithmetic."""
    two = (du & -du).bit_length() - 1
    x, odd = k >> two, du >> two
    if odd == 1:
        return x
    magic, shift = magic_number_alg2(odd)
    high = (x * magic) >> 32
    if shift >> 31:
        return ((((x - high) & 0xFFFFFFFF) >> 1) + high) >> ((shift & 0x7FFFFFFF) - 1)
    return high >> shift


def test_k_over_depth_u_is_exact_for_every_32_bit_k():
    rng = random.Random(3)
    for du in (6, 7, 12, 14, 20, 24, 28, 40, 48, 56, 96, 112, 120):
        for k in [0, 1, du - 1, du, du + 1, 2**31, 2**32 - 1, 2**32 - du] + [rng.randrange(2**32) for _ in range(3000)]:
            assert _chunks(k, du) == k // du, (k, du)


def _problem(dt, ta, tb):
    p = {"OperationType": "GEMM", "DataType": dt, "TransposeA": ta, "TransposeB": tb, "Batched": True,
         "UseBeta": True}
    if dt == "h":
        p["HighPrecisionAccumulate"] = True
    return p


CASES = [  # (arch, type, TransposeA, TransposeB, params)
    ("gfx906", "s", True, False, {"DepthU": 24, "PrefetchGlobalRead": 1}),
    ("gfx900", "d", False, False, {"DepthU": 12, "PrefetchGlobalRead": 2, "StaggerU": 4}),
    ("gfx906", "s", False, True, {"DepthU": 24, "WorkGroup": [8, 8, 2], "ThreadTile": [4, 4], "GlobalSplitU": 2,
                                  "GlobalReadVectorWidth": 2, "VectorWidth": 2}),
    ("gfx906", "h", True, False, {"DepthU": 16, "InnerUnroll": 2, "PrefetchLocalRead": 1}),
    ("gfx90a", "s", False, True, {"DepthU": 48, "InnerUnroll": 2, "WorkGroup": [8, 8, 2], "PrefetchGlobalRead": 1,
                                  "PrefetchLocalRead": 13}),   # LoopIters 12 + 1 (Tensile 4.44: PLR % LoopIters <= 1)
]


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("arch,dt,ta,tb,extra", CASES)
def test_loop_shapes_match_reference(tmp_path, arch, dt, ta, tb, extra):
    params = {"WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "GlobalReadVectorWidth": 1, "VectorWidth": 1, **extra}
    sol = Solution.from_dict({"ProblemType": _problem(dt, ta, tb), **params}, where="test")
    _, co, contract = build_linked(sol, load_arch(arch), tmp_path, file="k")
    du = sol.derived.depth_u
    sizes = [(Size(29, 19, 2 * du + 5, 1), 0.0), (Size(1, 1, 1), 0.5), (Size(17, 5, du - 1), -1.25)]
    for size, beta in sizes:
        [r] = verify_sizes(co, contract, [size], 1.5, beta, 7, EmulatedRuntime())
        assert r.passed, (size, beta, r.detail, r.max_rel_error)


def test_inner_unroll_limits():
    a = load_arch("gfx906")
    base = {"ProblemType": _problem("s", True, False), "WorkGroup": [8, 8, 2], "ThreadTile": [4, 4],
            "GlobalReadVectorWidth": 1}
    # DepthU 24 / LocalSplitU 2 = 12 K values per group: InnerUnroll 8 would leave Tensile's LoopUnroll 1
    sol = Solution.from_dict({**base, "DepthU": 24, "InnerUnroll": 8}, where="test")
    assert not sol.valid or supports(sol, a) is not None
    # 20 / 2 = 10 K values, not a multiple of InnerUnroll 4 (Tensile's LoopUnroll 2 would cover 8)
    sol = Solution.from_dict({**base, "DepthU": 20, "InnerUnroll": 4}, where="test")
    assert sol.valid and "multiple of LocalSplitU 2 x InnerUnroll 4" in supports(sol, a)
    sol = Solution.from_dict({**base, "DepthU": 24, "InnerUnroll": 2}, where="test")
    assert supports(sol, a) is None and sol.derived.loop_unroll == 6
