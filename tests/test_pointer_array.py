"""Pointer-array ("general", ``_GB``) batched GEMM in our writers: Tensile 4.44's argument contract, each
batch's A/B/C/D found through arrays of pointers plus element offsets, verified on the strict emulator with
every batch in its own buffer (shuffled placement, offsets, poisoned D) at edge sizes, VALU and MFMA."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from tensile_asm.benchmark.reference import make_instance, poison_bits
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.emulator import Emulator, PointerArray
from tensile_asm.errors import UserError
from tensile_asm.gemm import GemmKernelContract, argument_layout
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime, kernel_arguments
from tensile_asm.solution import Solution, min_names
from tensile_asm.writer.build import build_kernel, link_kernels, supports

from conftest import have_llvm  # noqa: E402

pytestmark = pytest.mark.skipif(not have_llvm(), reason="needs LLVM 22 (llvm-mc, ld.lld)")

TENSILE_GB = Path(__file__).parent / "data" / "tensile_library_gb"
VALU = {"WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8, "PrefetchGlobalRead": 1, "GlobalReadVectorWidth": 1}
# (arch, types A/B-C/D-compute, TransposeA, TransposeB, params)
KERNELS = {
    "valu-S": ("gfx906", "SSS", True, False, {**VALU, "WorkGroupMapping": 2}),
    "valu-D": ("gfx906", "DDD", False, False, VALU),
    "valu-H": ("gfx906", "HHH", True, True, VALU),
    "valu-HHS": ("gfx900", "HHS", False, True, VALU),
    # BufferLoad false: global loads (no range check); with alpha or K 0 the kernel takes K as 0
    "valu-S-nobl": ("gfx906", "SSS", False, True, {**VALU, "BufferLoad": False, "PrefetchGlobalRead": 2}),
    "mfma-S-nobl": ("gfx90a", "SSS", True, False, {"MatrixInstruction": [16, 16, 4, 1, 1, 2, 1, 2, 2], "DepthU": 16,
                                                   "PrefetchGlobalRead": 1, "GlobalReadVectorWidth": 1,
                                                   "BufferLoad": False}),
    "mfma-S": ("gfx90a", "SSS", True, True, {"MatrixInstruction": [16, 16, 4, 1, 1, 2, 1, 2, 2], "DepthU": 16,
                                             "PrefetchGlobalRead": 2, "GlobalReadVectorWidth": 1, "StaggerU": 4}),
    "mfma-HHS": ("gfx90a", "HHS", False, True, {"MatrixInstruction": [16, 16, 16, 1, 1, 1, 2, 2, 2], "DepthU": 16,
                                                "PrefetchGlobalRead": 1, "GlobalReadVectorWidth": 1}),
    "mfma-BBS": ("gfx908", "BBS", True, False, {"MatrixInstruction": [32, 32, 4, 1, 1, 1, 1, 2, 2], "DepthU": 16,
                                                "PrefetchGlobalRead": 1, "GlobalReadVectorWidth": 1}),
    # GlobalSplitU: the _GB beta-only helper then atomics into each batch's D (CAS on gfx906; fp16 on dwords), or
    # the strided workspace and the _GB post-GSU helper
    "valu-S-gsu": ("gfx906", "SSS", False, True, {**VALU, "GlobalSplitU": 3}),
    "valu-H-gsu": ("gfx906", "HHH", True, False, {**VALU, "GlobalSplitU": 2, "AssertFree0ElementMultiple": 2,
                                                  "VectorWidth": 2}),
    "mfma-HHS-gsu-mb": ("gfx90a", "HHS", False, True, {"MatrixInstruction": [16, 16, 16, 1, 1, 1, 2, 2, 2],
                                                       "DepthU": 16, "PrefetchGlobalRead": 1, "GlobalReadVectorWidth": 1,
                                                       "GlobalSplitU": 2, "GlobalSplitUAlgorithm": "MultipleBuffer"}),
    "mfma-S-gsu": ("gfx90a", "SSS", True, True, {"MatrixInstruction": [16, 16, 4, 1, 1, 2, 1, 2, 2], "DepthU": 16,
                                                 "PrefetchGlobalRead": 1, "GlobalReadVectorWidth": 1, "GlobalSplitU": 3}),
}
_BUILT: dict = {}
_TMP = Path(tempfile.mkdtemp(prefix="pointer-array-"))


def problem(types: str, ta: bool, tb: bool, strided: bool = False, use_beta: bool = True) -> dict:
    a, c, comp = types.lower()
    return {"OperationType": "GEMM", "DataType": a, "DestDataType": c, "ComputeDataType": comp,
            "HighPrecisionAccumulate": a in "hb" and comp == "s", "TransposeA": ta, "TransposeB": tb,
            "Batched": True, "StridedBatched": strided, "UseBeta": use_beta}


def solution(key: str, strided: bool = False) -> tuple[Solution, str]:
    arch, types, ta, tb, params = KERNELS[key]
    return Solution.from_dict({"ProblemType": problem(types, ta, tb, strided), **params}, where=key), arch


def built(key: str):
    if key not in _BUILT:
        sol, arch_name = solution(key)
        arch = load_arch(arch_name)
        assert supports(sol, arch) is None, supports(sol, arch)
        name = min_names([sol])[0]
        assert "_GB" in name
        co = _TMP / f"{key}.co"
        link_kernels([build_kernel(sol, arch, name)], arch, co)
        _BUILT[key] = (co, GemmKernelContract.from_solution(sol, name))
    return _BUILT[key]


def test_layout_is_tensiles():
    """Tensile 4.44 appends batchD/C/A/B then offsetD/C/A/B (u64 elements) before alpha; a Tensile-built _GB
    kernel's metadata takes exactly our layout, and a layout without the offsets is refused by name."""
    layout = argument_layout(True, True, "S", stagger_u=True, workgroup_mapping=True, pointer_array=True)
    names = [a.name for a in layout]
    assert names[:11] == ["Tensor2dSizeA", "Tensor2dSizeB", "AddressD", "AddressC", "AddressA", "AddressB",
                          "OffsetD", "OffsetC", "OffsetA", "OffsetB", "Alpha"]
    assert [(a.offset, a.size) for a in layout[6:10]] == [(48, 8), (56, 8), (64, 8), (72, 8)]
    with pytest.raises(ValueError):
        argument_layout(False, True, pointer_array=True)
    from tensile_asm.codeobject import read_code_object
    from tensile_asm.library.codeobjects import LibraryFolder

    with LibraryFolder(TENSILE_GB) as folder:
        [(_, entry, gfx)] = [s for s in folder.solutions() if "SB_GB_MT16x16x32_MI16x16x4x1_SN" in s[1]["name"]]
        contract = GemmKernelContract.from_library_entry(entry)
        assert contract.pointer_array and contract.layout() == layout
        ko = read_code_object(folder.code_object(entry["name"], gfx)).kernels[entry["name"]]
        values = {a.name: 1 for a in layout}
        assert len(kernel_arguments(ko, layout, values)) == len(
            [a for a in ko.args if not a[".value_kind"].startswith("hidden")])
        strided = argument_layout(True, True, "S", stagger_u=True, workgroup_mapping=True)
        with pytest.raises(UserError, match="OffsetD"):
            kernel_arguments(ko, strided, {a.name: 1 for a in strided})


def test_library_entry_with_global_split_u_launches_gb_helper():
    """A pointer-array GlobalSplitU solution of a library launches the _GB helper with D's and C's pointer arrays
    and offsets (Tensile 4.44's beta-only/conversion arguments), and the GEMM with a strided workspace."""
    sol, _ = solution("valu-S")
    entry = {"name": "k", "problemType": {**_problem_type_entry(sol), "stridedBatched": False},
             "sizeMapping": {"workGroup": [8, 8, 1], "macroTile": [16, 16], "globalSplitU": 2, "globalAccumulation": 2}}
    contract = GemmKernelContract.from_library_entry(entry)
    assert contract.helper_name() == "Cijk_S_GB_PostGSU2"
    ld = {t: 9 for t in "ABCD"}
    gemm, post = contract.launches(m=9, n=5, k=4, batch=2, ld=ld, batch_stride={t: 45 for t in "ABCD"}, alpha=1.0,
                                   beta=0.5, addresses={"A": 1, "B": 2, "C": 3, "D": 4, "WS": 5},
                                   offsets={"A": 6, "B": 7, "C": 8, "D": 9}, cu_count=104)
    assert post.kernel == "Cijk_S_GB_PostGSU2" and post.values["OffsetD"] == 9 and post.values["OffsetC"] == 8
    assert [a.name for a in post.layout][:5] == ["AddressD", "AddressWS", "AddressC", "OffsetD", "OffsetC"]
    # the GEMM writes the strided workspace (its C is the workspace too) and ignores OffsetD, which Tensile's
    # host passes as d.offset() all the same
    assert gemm.values["AddressD"] == gemm.values["AddressC"] == 5 and gemm.values["OffsetD"] == 9
    assert gemm.values["StridesD1"] == 9 * 5


def _problem_type_entry(sol) -> dict:
    pt = sol.problem_type
    return {"operationIdentifier": pt.operation_identifier, "aType": "Float", "bType": "Float", "cType": "Float",
            "dType": "Float", "useBeta": True, "highPrecisionAccumulate": False}


def test_supports_reasons():
    arch = load_arch("gfx906")
    sol, _ = solution("valu-S")
    assert supports(sol, arch) is None
    gsu = Solution.from_dict({"ProblemType": problem("SSS", True, False), **VALU, "GlobalSplitU": 2}, where="t")
    assert supports(gsu, arch) is None
    no_buffer = Solution.from_dict({"ProblemType": problem("SSS", True, False), **VALU, "BufferLoad": False}, where="t")
    assert supports(no_buffer, arch) is None


CI_CASES = [("valu-S", Size(17, 13, 9, 3), 0.5), ("valu-D", Size(19, 1, 5, 2), 0.0), ("valu-H", Size(1, 23, 11, 5), 0.5),
            ("valu-HHS", Size(33, 17, 8, 2), -1.25), ("mfma-S", Size(37, 19, 21, 3), 0.5),
            ("mfma-HHS", Size(20, 33, 17, 2), 0.0), ("mfma-BBS", Size(65, 7, 13, 3), 1.0),
            ("valu-S-gsu", Size(9, 13, 17, 2), 0.5), ("valu-H-gsu", Size(18, 9, 21, 2), -1.25),
            ("mfma-HHS-gsu-mb", Size(20, 33, 37, 2), 0.5), ("mfma-S-gsu", Size(37, 19, 41, 2), 0.0),
            ("valu-S-nobl", Size(19, 13, 23, 3), 0.5), ("mfma-S-nobl", Size(37, 19, 21, 2), 0.0)]
SLOW_SIZES = [Size(1, 1, 1, 1), Size(31, 29, 23, 7), Size(64, 32, 32, 2), Size(3, 67, 40, 5)]


@pytest.mark.parametrize("key,size,beta", CI_CASES, ids=[c[0] for c in CI_CASES])
def test_gb_kernel_matches_reference(key, size, beta, request):
    co, contract = built(key)
    sizes = [size] + (SLOW_SIZES if request.config.getoption("--slow") else [])
    for b in ([beta] if not request.config.getoption("--slow") else [0.0, 0.5]):
        for r in verify_sizes(co, contract, sizes, -0.75, b, seed=11, runtime=EmulatedRuntime()):
            assert r.passed, (key, str(r.size), b, r.max_rel_error, r.detail)


def _run(co, contract, inst, alpha, beta, addresses, offsets):
    emulator = Emulator.load(co)
    [launch] = contract.launches(m=inst.m, n=inst.n, k=inst.k, batch=inst.batch, ld=inst.ld,
                                 batch_stride=inst.batch_stride, alpha=alpha, beta=beta, addresses=addresses,
                                 offsets=offsets)
    args = kernel_arguments(emulator.code.kernels[launch.kernel], launch.layout, launch.values)
    emulator.launch(launch.kernel, grid=launch.grid, block=launch.block, args=args)


@pytest.mark.parametrize("key", ["valu-S", "valu-S-nobl"])
@pytest.mark.parametrize("alpha,k", [(0.0, 9), (-0.0, 9), (1.5, 0)])
def test_no_a_b_pointers_read_when_alpha_or_k_is_zero(alpha, k, key):
    """As in Tensile, A's and B's pointer arrays may be garbage when alpha or K is 0 (rocBLAS's callers may
    pass null): the kernel reads neither them nor A/B, and D = beta*C (buffer loads or, BufferLoad false,
    global loads)."""
    co, contract = built(key)
    inst = make_instance(17, 13, max(k, 1), 3, contract.transpose_a, contract.transpose_b, seed=2)
    inst.k = k
    garbage = np.full(3, 0xDEAD_0000_0000, np.uint64)    # pointers into no buffer: a fault if dereferenced
    c = [inst.arrays["C"][b * inst.batch_stride["C"]:(b + 1) * inst.batch_stride["C"]].copy() for b in range(3)]
    d = [np.full(inst.batch_stride["D"], poison_bits("S")).view(np.float32) for _ in range(3)]
    _run(co, contract, inst, alpha, 0.5, {"A": garbage, "B": garbage.copy(), "C": PointerArray(c, [2, 0, 1]),
                                          "D": PointerArray(d, [1, 2, 0])}, None)
    for b in range(3):
        got = d[b][:inst.m + (inst.n - 1) * inst.ld["D"] + 1].reshape(-1)
        ref = 0.5 * c[b][:got.size]
        rows = (np.arange(got.size) % inst.ld["D"]) < inst.m
        np.testing.assert_allclose(got[rows], ref[rows], rtol=1e-7)


def test_no_c_pointer_read_when_beta_is_zero():
    co, contract = built("valu-S")
    inst = make_instance(9, 5, 4, 2, contract.transpose_a, contract.transpose_b, seed=4)
    split = {t: [inst.arrays[t][b * inst.batch_stride[t]:(b + 1) * inst.batch_stride[t]].copy() for b in range(2)]
             for t in "ABD"}
    _run(co, contract, inst, 1.0, 0.0, {"A": PointerArray(split["A"]), "B": PointerArray(split["B"]),
                                        "C": np.full(2, 0xDEAD_0000_0000, np.uint64), "D": PointerArray(split["D"])},
         None)
    assert all(np.isfinite(split["D"][b][:inst.m]).all() for b in range(2))


def test_strided_addressing_by_mistake_fails(monkeypatch):
    """The check can fail: a kernel that adds WorkGroup2 * batch stride to the pointer it loaded (stride-batched
    addressing) leaves its batch's buffer for batch > 0 (the buffers are separate, in shuffled order)."""
    import tensile_asm.writer.batch_address as batch_address
    import tensile_asm.writer.global_read as global_read
    import tensile_asm.writer.store as store

    def strided(ctx, regs, base, letter, bpe, batched=True, pointer_array=False):
        return batch_address.batch_base(ctx, regs, base, letter, bpe, batched, False)

    monkeypatch.setattr(global_read, "batch_base", strided)
    monkeypatch.setattr(store, "batch_base", strided)
    sol, arch_name = solution("valu-S")
    arch = load_arch(arch_name)
    name = min_names([sol])[0]
    co = _TMP / "mistake.co"
    link_kernels([build_kernel(sol, arch, name)], arch, co)
    [one, three] = verify_sizes(co, GemmKernelContract.from_solution(sol, name), [Size(9, 7, 5, 1), Size(9, 7, 5, 3)],
                                1.0, 0.5, seed=1, runtime=EmulatedRuntime())
    assert one.passed          # batch 0 is where both addressings agree
    assert not three.passed
