"""Complex GEMM (C: complex fp32, Z: complex fp64; Tensile's CB/ZB): the conjugate signs of the four real
products, the complex alpha/beta kernel arguments, the complex reference, and VALU kernels built by the writer,
run on the emulator against the complex128 reference (D poisoned, C NaN when beta is 0, edge sizes, conjugated
A/B, pointer-array batches)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from tensile_asm.benchmark.reference import compare, make_instance, poison_value, reference
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.gemm.arguments import argument_layout, pack_arguments
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution, min_names
from tensile_asm.writer.build import build_kernel, link_kernels, supports
from tensile_asm.writer.mac import complex_products

from conftest import have_llvm

CONJUGATES = [(False, False), (True, False), (False, True), (True, True)]


@pytest.mark.parametrize("conj_a,conj_b", CONJUGATES)
def test_four_real_products_give_the_complex_product(conj_a, conj_b):
    rng = np.random.default_rng(5)
    for _ in range(20):
        a, b = complex(*rng.normal(size=2)), complex(*rng.normal(size=2))
        acc = [0.0, 0.0]
        for c, i, j, neg_a, neg_b in complex_products(conj_a, conj_b):
            x = (a.real, a.imag)[i] * (-1 if neg_a else 1)
            y = (b.real, b.imag)[j] * (-1 if neg_b else 1)
            acc[c] += x * y
        want = (a.conjugate() if conj_a else a) * (b.conjugate() if conj_b else b)
        assert complex(*acc) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("t,size,part", [("C", 8, "<ff"), ("Z", 16, "<dd")])
def test_complex_alpha_beta_arguments(t, size, part):
    import struct

    layout = {a.name: a for a in argument_layout(True, True, t)}
    alpha, beta = layout["Alpha"], layout["Beta"]
    assert (alpha.size, beta.size) == (size, size) and beta.offset == alpha.offset + size
    assert layout["StridesD0"].offset == beta.offset + size
    values = {a: 0 for a in layout}
    values.update(Alpha=1.5 - 2j, Beta=-0.25 + 4j)
    buf = pack_arguments(list(layout.values()), values)
    assert struct.unpack_from(part, buf, alpha.offset) == (1.5, -2.0)
    assert struct.unpack_from(part, buf, beta.offset) == (-0.25, 4.0)


def test_complex_reference_conjugates_and_poison():
    inst = make_instance(5, 4, 3, 2, transpose_a=True, pad=1, seed=1, data_type="Z", dest_type="Z",
                         conjugate=(True, False))
    a, b, c = inst.view("A"), inst.view("B"), inst.view("C")
    ref, _ = reference(inst, 1.5 + 0.5j, -0.5 + 2j)
    assert np.allclose(ref, (1.5 + 0.5j) * np.conj(a) @ b + (-0.5 + 2j) * c)
    good = inst.arrays["D"].copy()      # poisoned everywhere
    for bb in range(2):     # write the exact result into the region only
        for n in range(4):
            good[bb * inst.batch_stride["D"] + n * inst.ld["D"]:][:5] = ref[bb, :, n]
    assert compare(inst, good, 1.5 + 0.5j, -0.5 + 2j).passed
    stray = good.copy()
    assert inst.ld["D"] == 6
    stray[5] = complex(poison_value("Z").real, 0.0)   # row 5 is padding: only its imaginary part changed
    assert compare(inst, stray, 1.5 + 0.5j, -0.5 + 2j).outside_writes == 1


# (type, arch, transpose A, transpose B, conjugate A, conjugate B, pointer-array): every conjugate form on
# each type, both Vega architectures (gfx900: v_fma_f32, gfx906: v_fmac_f32 with VOP3 negation)
KERNELS = [
    ("C", "gfx906", False, False, False, False, False),
    ("C", "gfx900", True, False, True, False, True),
    ("Z", "gfx906", True, False, True, False, False),
    ("Z", "gfx900", True, True, True, True, True),
]
_TMP = Path(tempfile.mkdtemp(prefix="complex-kernels-"))


def _build(t, arch_name, ta, tb, ca, cb, pointer_array):
    problem = {"OperationType": "GEMM", "DataType": t, "DestDataType": t, "ComputeDataType": t,
               "TransposeA": ta, "TransposeB": tb, "ComplexConjugateA": ca, "ComplexConjugateB": cb,
               "Batched": True, "StridedBatched": not pointer_array, "UseBeta": True}
    params = {"WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8, "VectorWidth": 2 if t == "C" else 1,
              "GlobalReadVectorWidth": 2 if t == "C" else 1, "PrefetchGlobalRead": 1, "PrefetchLocalRead": 1,
              "WorkGroupMapping": 8 if pointer_array else 1, "StaggerU": 32}
    sol = Solution.from_dict({"ProblemType": problem, **params}, where="complex case")
    arch = load_arch(arch_name)
    assert sol.valid and supports(sol, arch) is None
    name = min_names([sol])[0]
    co = _TMP / f"{name}_{arch_name}.co"
    link_kernels([build_kernel(sol, arch, name)], arch, co)
    return co, GemmKernelContract.from_solution(sol, name)


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("case", KERNELS, ids=lambda c: f"{c[0]}-{c[1]}-{'T' if c[2] else 'N'}{'T' if c[3] else 'N'}"
                         f"{'-conjA' if c[4] else ''}{'-conjB' if c[5] else ''}{'-GB' if c[6] else ''}")
def test_complex_kernels_match_reference(case):
    co, contract = _build(*case)
    assert (contract.conjugate_a, contract.conjugate_b) == case[4:6]
    runtime = EmulatedRuntime()
    # 19 x 13: a full and a partial tile along M, a partial one along N; K 11: one unrolled step and a tail
    for sizes, beta in (([Size(1, 1, 1, 1), Size(19, 13, 11, 2)], 0.5), ([Size(7, 5, 3, 1)], 0.0)):
        for r in verify_sizes(co, contract, sizes, -0.75, beta, 11, runtime):   # beta 0: C is NaN, never read
            assert r.passed, f"{contract.name} {r.size} beta {r.beta}: {r.detail} (max rel err {r.max_rel_error})"
    # the comparison sees a sign error of the conjugate: the same D checked as if A were not conjugated fails
    inst = make_instance(7, 5, 3, 1, contract.transpose_a, contract.transpose_b, seed=3,
                         data_type=contract.data_type, dest_type=contract.dest_type,
                         conjugate=(contract.conjugate_a, contract.conjugate_b))
    d = runtime.run_gemm(co, contract, inst, 1 + 1j, 0.5j).d
    assert compare(inst, d, 1 + 1j, 0.5j).passed
    inst.conjugate_a = not inst.conjugate_a
    assert not compare(inst, d, 1 + 1j, 0.5j).passed


def test_complex_refusals_name_the_feature():
    problem = {"OperationType": "GEMM", "DataType": "z", "DestDataType": "z", "ComputeDataType": "z",
               "TransposeA": False, "TransposeB": False, "Batched": True}
    sol = Solution.from_dict({"ProblemType": problem, "WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8,
                              "GlobalSplitU": 2, "GlobalSplitUAlgorithm": "SingleBuffer"}, where="gsu case")
    # (Tensile rejects SingleBuffer complex without MFMA; MultipleBuffer is built, test_mfma_complex.py)
    assert "use GlobalSplitUAlgorithm MultipleBuffer" in supports(sol, load_arch("gfx906"))
