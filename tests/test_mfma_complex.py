"""Complex (C, Z) MFMA kernels: four real MFMAs per complex product (writer/mfma_complex.py), built, assembled,
run on the strict emulator against the complex128 reference, D poisoned and C all NaN when beta is 0.

Together the kernels cover the four transposes, the four conjugate variants (rocBLAS's AlikC logic conjugates
A), strided and pointer-array (_GB) batches, beta 0 and not, complex alpha and beta, SourceSwap, MIArchVgpr,
StoreRemapVectorWidth, TransposeLDS, PrefetchGlobalRead 2, LocalSplitU and GlobalSplitU MultipleBuffer (complex
partial sums reduced through LDS / by the post-GSU kernel), on gfx908, gfx90a and gfx942. The randomized
complex draws are in test_mfma_kernels.py."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from tensile_asm.benchmark.reference import compare, make_instance
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution, min_names
from tensile_asm.writer.build import build_kernel, link_kernels, supports
from tensile_asm.writer.mfma_complex import signs

from conftest import have_llvm

_TMP = Path(tempfile.mkdtemp(prefix="mfma-complex-"))


def _solution(t, ta, tb, ca, cb, pointer_array, params):
    problem = {"OperationType": "GEMM", "DataType": t, "DestDataType": t, "ComputeDataType": t,
               "TransposeA": ta, "TransposeB": tb, "ComplexConjugateA": ca, "ComplexConjugateB": cb,
               "Batched": True, "StridedBatched": not pointer_array, "UseBeta": True}
    sol = Solution.from_dict({"ProblemType": problem, "DepthU": 8, "PrefetchGlobalRead": 1, "PrefetchLocalRead": 1,
                              **params}, where="complex mfma case")
    assert sol.valid, sol.rejection
    return sol


@pytest.mark.parametrize("ca,cb", [(False, False), (True, False), (False, True), (True, True)])
def test_four_real_mfmas_give_the_complex_product(ca, cb):
    """The sign table, applied to parts of random complex numbers as the MFMAs apply it, is a*b with the
    conjugates."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(2) + 1j * rng.standard_normal(2)
    acc = [0.0, 0.0]
    for part_acc, part_a, part_b, neg in signs(ca, cb):
        x = (a.real, a.imag)[part_a]
        acc[part_acc] += (-x if neg else x) * (b.real, b.imag)[part_b]
    want = (np.conj(a) if ca else a) * (np.conj(b) if cb else b)
    assert np.isclose(acc[0] + 1j * acc[1], want)


KERNELS = [  # (type, arch, TransposeA, TransposeB, ConjugateA, ConjugateB, pointer array, parameters)
    ("c", "gfx908", False, False, False, False, False,
     {"MatrixInstruction": [32, 32, 2, 1, 1, 1, 1, 2, 2], "StoreRemapVectorWidth": 2}),
    ("c", "gfx90a", True, False, True, False, True,
     {"MatrixInstruction": [16, 16, 4, 1, 1, 2, 1, 2, 2], "SourceSwap": True, "MIArchVgpr": True, "TransposeLDS": 1}),
    # LocalSplitU 2: the complex partial tiles (real and imaginary parts side by side) summed through LDS
    ("c", "gfx90a", True, True, False, False, False,
     {"MatrixInstruction": [32, 32, 2, 1], "WorkGroup": [32, 4, 2], "ThreadTile": [1, 32], "DepthU": 16,
      "MIArchVgpr": True}),
    ("z", "gfx942", False, True, False, True, False, {"MatrixInstruction": [16, 16, 4, 1, 1, 1, 2, 2, 2],
                                                      "GlobalSplitU": 3, "GlobalSplitUAlgorithm": "MultipleBuffer"}),
    ("z", "gfx90a", True, True, True, True, True,
     {"MatrixInstruction": [16, 16, 4, 1, 1, 2, 1, 1, 4], "SourceSwap": True, "PrefetchGlobalRead": 2}),
    # StoreRemapVectorWidth with 16-byte elements: ds_write_b128 / ds_read_b128, LDS columns MT0 + 1 apart
    # (MIOutputVectorWidth 1 of the f64 MFMAs)
    ("z", "gfx90a", False, True, False, True, False,
     {"MatrixInstruction": [16, 16, 4, 1, 1, 2, 3, 2, 1], "StoreRemapVectorWidth": 1, "LdsPadA": 1, "LdsPadB": 4}),
]


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("case", KERNELS, ids=lambda c: f"{c[0]}-{c[1]}-{'T' if c[2] else 'N'}{'T' if c[3] else 'N'}"
                         f"{'-conjA' if c[4] else ''}{'-conjB' if c[5] else ''}{'-GB' if c[6] else ''}")
def test_complex_mfma_kernels_match_reference(case):
    t, arch_name, ta, tb, ca, cb, pointer_array, params = case
    sol = _solution(t, ta, tb, ca, cb, pointer_array, params)
    arch = load_arch(arch_name)
    assert supports(sol, arch) is None
    name = min_names([sol])[0]
    kernel = build_kernel(sol, arch, name)
    co = _TMP / f"{name}_{arch_name}.co"
    link_kernels([kernel], arch, co)
    contract = GemmKernelContract.from_solution(sol, name)
    runtime = EmulatedRuntime()
    # 1x1x1; 37 x 29: partial tiles along M and N, K 19: two unrolled steps and a tail, batch 2
    for sizes, beta in (([Size(1, 1, 1, 1), Size(37, 29, 19, 2)], 0.5 - 0.25j), ([Size(7, 5, 3, 2)], 0.0)):
        for r in verify_sizes(co, contract, sizes, 1.5 + 0.5j, beta, 11, runtime):   # beta 0: C is NaN
            assert r.passed, f"{name} {r.size} beta {r.beta}: {r.detail} (max rel err {r.max_rel_error})"
    # the comparison sees a conjugate's sign: the same D checked as if A's conjugation were the other fails
    inst = make_instance(7, 5, 3, 1, ta, tb, seed=3, data_type=contract.data_type, dest_type=contract.dest_type,
                         conjugate=(ca, cb))
    d = runtime.run_gemm(co, contract, inst, 1 + 1j, 0.5j).d
    assert compare(inst, d, 1 + 1j, 0.5j).passed
    inst.conjugate_a = not inst.conjugate_a
    assert not compare(inst, d, 1 + 1j, 0.5j).passed


@pytest.mark.parametrize("extra,why", [
    ({"MatrixInstruction": [4, 4, 4, 4, 1, 1, 1, 4, 1], "DepthU": 16}, "4x4x4f64"),
    # MT128x192 of 32x32 blocks: 4 x 3 outputs x 8 registers x 2 parts, past the 256 AGPRs
    ({"MatrixInstruction": [16, 16, 4, 1, 1, 4, 6, 1, 2]}, "the accumulators need 384 AGPRs"),
])
def test_complex_mfma_refusals_name_the_feature(extra, why):
    """Z with the 4x4x4f64 MFMA (several blocks) is refused, naming the shape, as for D; accumulators past the AGPR
    file are refused before writing (GlobalSplitU SingleBuffer with complex C/D is built:
    tests/test_gsu_complex_atomic.py)."""
    sol = _solution("z", False, False, False, False, False, extra)
    reason = supports(sol, load_arch("gfx90a"))
    assert reason is not None and why in reason, reason
