"""UseInitialStridesAB/CD (Tensile's I/Ic problem types): the first index's stride of A/B and of C/D is a kernel
argument, and the kernel scales the first index by it in its global reads, C loads and D stores."""

import pytest

from tensile_asm import toolchain
from tensile_asm.benchmark.reference import empty_instance, make_instance, reference
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.gemm.arguments import argument_layout, argument_values
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.predicates import PROBLEM
from tensile_asm.library.problem_view import ContractionView
from tensile_asm.problem import Problem, ProblemType
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution
from tensile_asm.writer.build import build_kernel, supports

from conftest import have_llvm

PLAIN = {"PrefetchGlobalRead": 1, "PrefetchLocalRead": 1, "WorkGroupMapping": 1, "StaggerU": 0}


def test_the_initial_strides_come_first_among_each_tensors_strides():
    names = [a.name for a in argument_layout(True, True, initial_strides_ab=True, initial_strides_cd=True)]
    strides = [n for n in names if "Stride" in n]
    assert strides == ["InitialStrideD", "StridesD0", "StridesD1", "InitialStrideC", "StridesC0", "StridesC1",
                       "InitialStrideA", "StridesA0", "StridesA1", "InitialStrideB", "StridesB0", "StridesB1"]
    only_cd = [a.name for a in argument_layout(False, True, initial_strides_cd=True)]
    assert "InitialStrideC" in only_cd and "InitialStrideA" not in only_cd
    assert "InitialStrideA" not in [a.name for a in argument_layout(True, True)]
    values = argument_values(m=3, n=4, k=5, batch=1, ld=dict.fromkeys("ABCD", 9), batch_stride=dict.fromkeys("ABCD", 99),
                             tensor2d_size={"A": 1, "B": 1}, alpha=1.0, beta=0.0, macro_tile=(16, 16),
                             addresses=dict.fromkeys("ABCD", 0), initial_stride={"C": 0})
    assert (values["InitialStrideC"], values["InitialStrideD"]) == (0, 1)


def test_the_reference_and_the_predicates_take_first_strides():
    inst = make_instance(5, 4, 3, 2, first_stride={"A": 3, "C": 0, "D": 2}, seed=3)
    assert inst.ld["D"] == 9 and inst.view("A").strides[1] == 3 * 4
    # C broadcast along I: every row of a column is the same element
    assert (inst.view("C")[:, 1:, :] == inst.view("C")[:, :1, :]).all()
    ref, _ = reference(inst, 1.0, 1.0)
    a = inst.arrays["A"]
    assert ref[1, 2, 3] == pytest.approx(sum(float(a[inst.batch_stride["A"] + 2 * 3 + l * inst.ld["A"]]) *
                                             float(inst.view("B")[1, l, 3]) for l in range(3)) + float(inst.view("C")[1, 0, 3]))
    with pytest.raises(ValueError, match="overlap"):
        empty_instance(5, 4, 3, first_stride={"D": 2}, ld={"D": 4})
    s = ProblemType.from_dict({"OperationType": "GEMM", "DataType": "s", "Batched": True, "UseInitialStridesCD": True})
    biased = Problem.make(s, 7, 5, 3, 1, first_strides={"C": 0}, ldc=1, stride_c=5)
    assert biased.strides("C") == (0, 1, 5) and biased.strides("D")[0] == 1
    check = PROBLEM["StrideCEqual"]
    pred = {"type": "StrideCEqual", "index": 0, "value": 0}
    assert check(pred, ContractionView.from_problem(biased))
    assert not check(pred, ContractionView.from_problem(Problem.make(s, 7, 5, 3, 1)))


def _solution(ab=True, cd=True, extra=None, ta=False, tb=False):
    pt = {"OperationType": "GEMM", "DataType": "s", "TransposeA": ta, "TransposeB": tb, "Batched": True,
          "UseBeta": True, "UseInitialStridesAB": ab, "UseInitialStridesCD": cd}
    params = {"WorkGroup": [8, 8, 1], "ThreadTile": [4, 2], "DepthU": 8, "VectorWidth": 2,
              "GlobalReadVectorWidth": 1, **PLAIN, **(extra or {})}
    return Solution.from_dict({"ProblemType": pt, **params}, where="test")


def test_what_is_refused_with_initial_strides():
    arch = load_arch("gfx906")
    assert supports(_solution(), arch) is None
    vectors = _solution(extra={"GlobalReadVectorWidth": 2})
    assert "needs AssertStrideAEqual {0: 1}" in supports(vectors, arch)
    asserted = _solution(extra={"GlobalReadVectorWidth": 2, "AssertStrideAEqual": {0: 1},
                                "AssertStrideBEqual": {0: 1}})
    assert supports(asserted, arch) is None
    assert "GlobalSplitU=2" in supports(_solution(extra={"GlobalSplitU": 2}), arch)


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("arch_name,ta,tb,mi", [("gfx906", False, False, None), ("gfx906", True, True, None),
                                                ("gfx90a", False, True, [16, 16, 4, 1])])
def test_kernels_scale_the_first_index_by_its_stride(arch_name, ta, tb, mi, tmp_path):
    """VALU and MFMA kernels with every first stride other than 1 (C's 0: a bias broadcast along I) at edge
    sizes; a kernel that took any of them as 1 reads or writes the wrong elements (D's gaps keep their poison)."""
    extra = {"MatrixInstruction": mi, "WorkGroup": [16, 4, 1], "ThreadTile": [1, 16], "DepthU": 16} if mi else {}
    sol = _solution(extra=extra, ta=ta, tb=tb)
    arch = load_arch(arch_name)
    assert sol.valid and supports(sol, arch) is None, (sol.rejection, supports(sol, arch))
    kernel = build_kernel(sol, arch, "uis")
    co = tmp_path / "uis.co"
    toolchain.assemble_and_link(kernel.text(), arch, co)
    contract = GemmKernelContract.from_solution(sol, "uis")
    assert contract.initial_strides_ab and contract.initial_strides_cd
    for first in ({"A": 3, "B": 2, "C": 0, "D": 2}, {"A": 2, "B": 5, "C": 3, "D": 3}):
        for beta in (0.5, 0.0):
            results = verify_sizes(co, contract, [Size(37, 19, 23, 2), Size(1, 1, 1, 1)], -1.25, beta, 7,
                                   EmulatedRuntime(), first_stride=first)
            assert all(r.passed for r in results), [(r.size, r.detail) for r in results]
    # the same data through a kernel that takes the first strides as 1 is refused, not run wrong
    plain = GemmKernelContract.from_solution(_solution(ab=False, cd=False), "plain")
    with pytest.raises(ValueError, match="first stride as 1"):
        plain.launches(m=5, n=5, k=5, batch=1, ld=dict.fromkeys("ABCD", 16), batch_stride=dict.fromkeys("ABCD", 99),
                       alpha=1.0, beta=0.0, addresses=dict.fromkeys("ABCD", 0), initial_stride={"A": 3})


def test_inspect_knows_the_initial_strides_layout():
    from tensile_asm.inspect.launch import _tensile_layout
    layout = argument_layout(True, True, stagger_u=False, workgroup_mapping=True, initial_strides_cd=True)
    args = [{".name": a.name, ".size": a.size, ".offset": a.offset} for a in layout]
    found, batched = _tensile_layout(args)
    assert batched and [a.name for a in found] == [a.name for a in layout]
