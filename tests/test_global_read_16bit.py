"""Global reads of 16-bit inputs with GlobalReadVectorWidth > 1 (writer/global_read.py): exact at every edge,
no read outside A or B, for VALU and MFMA kernels, and the assertion parameters' fast paths with the library
predicates that keep them from sizes that break them.

The emulator runs with no guard bytes after A and B, so a load reaching past either end of a matrix is a
memory fault (before this writer's edge code, a 16-bit vector whose first dword held the matrix's last element
read two bytes past it: the 7x5x3 batch-2 case below with lda 7). D is poisoned and C all NaN when beta is 0.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.master import problem_predicate
from tensile_asm.library.predicates import problem_holds
from tensile_asm.library.problem_view import ContractionView
from tensile_asm.problem import Problem
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution

from conftest import have_llvm
from kernel_build import build_linked

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

_TMP = Path(tempfile.mkdtemp(prefix="global-read-16bit-"))
# 1; odd leading dimensions (lda = M) with batch 2; primes: a partial tile with a partial vector and a K tail
EDGES = [Size(1, 1, 1, 1), Size(7, 5, 3, 2), Size(37, 29, 19, 1)]


def problem(types: str, ta: bool, tb: bool) -> dict:
    a, c, comp = types.lower()
    return {"OperationType": "GEMM", "DataType": a, "DestDataType": c, "ComputeDataType": comp,
            "HighPrecisionAccumulate": comp == "s", "TransposeA": ta, "TransposeB": tb, "Batched": True,
            "UseBeta": True}


def build(arch_name: str, prob: dict, params: dict):
    sol = Solution.from_dict({"ProblemType": prob, **params}, where="test")
    kernel, co, contract = build_linked(sol, load_arch(arch_name), _TMP)
    return sol, kernel, co, contract


def verify(co, contract, sizes, beta=0.5):
    results = verify_sizes(co, contract, sizes, -1.5, beta, 7, EmulatedRuntime())
    assert all(r.passed for r in results), [(r.size, r.detail) for r in results if not r.passed]


def holds(sol: Solution, m: int, n: int, k: int) -> bool:
    view = ContractionView.from_problem(Problem.make(sol.problem_type, m, n, k, 1, beta=0.5))
    return problem_holds(problem_predicate(sol), view)


@pytest.mark.parametrize("arch,types,ta,tb,grvw", [
    ("gfx906", "HHS", False, False, 4),    # A's vectors along M (partial ones at the edge), B's along K (tail)
    ("gfx900", "BBS", True, True, 2),      # A's along K, B's along N
])
def test_valu_16bit_vectors_exact_at_edges(arch, types, ta, tb, grvw):
    params = {"WorkGroup": [8, 8, 1], "ThreadTile": [grvw, grvw], "DepthU": 16, "VectorWidth": grvw,
              "GlobalReadVectorWidth": grvw, "PrefetchGlobalRead": 1}
    _, kernel, co, contract = build(arch, problem(types, ta, tb), params)
    text = kernel.text()
    assert ("buffer_load_dwordx2" if grvw == 4 else "buffer_load_dword ") in text   # the vector loads
    assert "16-bit elements one by one" in text     # the partial vectors' and the tail's single elements
    verify(co, contract, EDGES, beta=0.0)


def test_mfma_16bit_vectors_exact_at_edges():
    params = {"MatrixInstruction": [32, 32, 8, 1, 1, 1, 1, 2, 2], "DepthU": 32, "GlobalReadVectorWidth": 8,
              "PrefetchGlobalRead": 2, "PrefetchLocalRead": 1}
    _, kernel, co, contract = build("gfx90a", problem("HHS", False, True), params)
    assert "buffer_load_dwordx4" in kernel.text()
    verify(co, contract, EDGES)


def test_assert_free0_multiple_skips_edge_code_and_its_predicate_guards_it():
    """AssertFree0ElementMultiple 4 = GlobalReadVectorWidth (Tensile's GuaranteeNoPartialA): no per-element
    edge loads for A, exact at multiples of 4, and the library predicate refuses M that is not one."""
    prob = problem("HHS", False, True)     # both operands' vectors along their free dimensions
    base = {"WorkGroup": [8, 8, 1], "ThreadTile": [4, 4], "DepthU": 16, "VectorWidth": 4,
            "GlobalReadVectorWidth": 4, "PrefetchGlobalRead": 0}
    sol, kernel, co, contract = build("gfx906", prob, {**base, "AssertFree0ElementMultiple": 4,
                                                       "AssertFree1ElementMultiple": 4})
    assert "partial vector" not in kernel.text()
    _, general, _, _ = build("gfx906", prob, base)
    assert "partial vector" in general.text()
    verify(co, contract, [Size(4, 4, 1, 1), Size(36, 28, 19, 1)])
    assert holds(sol, 36, 28, 19) and not holds(sol, 37, 28, 19) and not holds(sol, 36, 29, 19)


def test_assert_summation_multiple_loads_tail_groups_and_its_predicate_guards_it():
    """AssertSummationElementMultiple 2 with 16-bit vectors of 4 along K: the tail loads pairs (one dword,
    Tensile's elemAlignMin) instead of single elements; exact at even K; the predicate refuses odd K."""
    prob = problem("HSS", True, False)     # both operands' vectors along K
    base = {"WorkGroup": [8, 8, 1], "ThreadTile": [4, 4], "DepthU": 16, "VectorWidth": 4,
            "GlobalReadVectorWidth": 4, "PrefetchGlobalRead": 1}
    sol, kernel, co, contract = build("gfx906", prob, {**base, "AssertSummationElementMultiple": 2})
    tail = kernel.text().split("tail loop")[1]
    assert "buffer_load_dword " in tail and "one by one" not in tail
    verify(co, contract, [Size(9, 7, 2, 2), Size(37, 29, 18, 1)])
    assert holds(sol, 37, 29, 18) and not holds(sol, 37, 29, 19)
