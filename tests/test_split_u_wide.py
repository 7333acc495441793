"""VALU LocalSplitU with accumulators wider than 32 bits (fp64 D, complex C and Z): every group's partial
tile goes to LDS as whole elements (8 or 16 bytes) and each thread sums the groups' values of its elements
before the store (writer/store.py, writer/split_u.py). Run on the emulator against the float64/complex128
reference at edge sizes (1, primes, partial tiles, batch 2, beta 0 with C NaN), D poisoned."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution, min_names
from tensile_asm.writer.build import build_kernel, link_kernels, supports

from conftest import have_llvm

# (type, arch, transposes, conjugates, WorkGroup, ThreadTile, DepthU, GRVW = VW, GlobalSplitU): vega20's real
# fp64 LocalSplitU 2 shape (DB NN MT32x64 TT2x4 WG16x16x2 VW2), arcturus's LocalSplitU 8 with GlobalSplitU
# SingleBuffer (DB NN MT16x4 TT4x2 WG4x2x8 VW2), and complex ones with a conjugate
CASES = [
    ("D", "gfx906", (False, False), (False, False), [16, 16, 2], [2, 4], 16, 2, 1),
    ("D", "gfx908", (False, False), (False, False), [4, 2, 8], [4, 2], 32, 2, 3),
    ("C", "gfx900", (True, False), (True, False), [8, 8, 2], [2, 2], 8, 2, 1),
    ("Z", "gfx906", (False, False), (False, True), [8, 8, 4], [2, 2], 16, 1, 1),
]


def _build(tmp: Path, t, arch_name, transposes, conjugates, wg, tt, du, grvw, gsu):
    problem = {"OperationType": "GEMM", "DataType": t, "DestDataType": t, "ComputeDataType": t,
               "TransposeA": transposes[0], "TransposeB": transposes[1], "ComplexConjugateA": conjugates[0],
               "ComplexConjugateB": conjugates[1], "Batched": True, "UseBeta": True}
    params = {"WorkGroup": wg, "ThreadTile": tt, "DepthU": du, "VectorWidth": grvw, "GlobalReadVectorWidth": grvw,
              "PrefetchGlobalRead": 1, "PrefetchLocalRead": 1, "StaggerU": 32, "WorkGroupMapping": 1}
    if gsu > 1:
        params.update(GlobalSplitU=gsu, GlobalSplitUAlgorithm="SingleBuffer")
    sol = Solution.from_dict({"ProblemType": problem, **params}, where="wide LocalSplitU case")
    arch = load_arch(arch_name)
    assert sol.valid and supports(sol, arch) is None, supports(sol, arch)
    assert sol.derived.local_split_u == wg[2] > 1
    name = min_names([sol])[0]
    co = tmp / f"{name}_{arch_name}.co"
    link_kernels([build_kernel(sol, arch, name)], arch, co)
    return co, GemmKernelContract.from_solution(sol, name)


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-LSU{c[4][2]}" + (f"-GSU{c[8]}" if c[8] > 1 else ""))
def test_wide_local_split_u_matches_reference(case):
    runtime = EmulatedRuntime()
    with tempfile.TemporaryDirectory() as tmp:
        co, contract = _build(Path(tmp), *case)
        # 1x1x1; primes: a full and a partial tile, K with an unrolled step and a tail; beta 0 (C NaN)
        for sizes, beta in (([Size(1, 1, 1, 1), Size(37, 67, 31, 2)], 0.5), ([Size(7, 5, 3, 1)], 0.0)):
            for r in verify_sizes(co, contract, sizes, -0.75, beta, 17, runtime):
                assert r.passed, f"{contract.name} {r.size} beta {r.beta}: {r.detail} (max rel err {r.max_rel_error})"
