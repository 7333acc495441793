"""The whole chain: solution parameters -> KernelWriter -> llvm-mc/ld.lld -> strict CPU emulator ->
comparison with a float64 numpy reference, on random data with poisoned outputs."""

import random
from functools import lru_cache

import pytest

from tensile_asm import toolchain
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution, min_names
from tensile_asm.writer.build import build_kernel

from conftest import have_llvm

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

TILES = [  # WorkGroup, ThreadTile, DepthU (the last has 32 threads: half a wave)
    ([16, 16, 1], [4, 4], 16), ([8, 8, 1], [4, 4], 8), ([16, 16, 1], [8, 4], 8), ([8, 8, 1], [2, 2], 16),
    ([16, 8, 1], [3, 6], 8), ([4, 16, 1], [1, 2], 32), ([8, 4, 1], [3, 3], 32),
]
SIZES = [1, 2, 3, 5, 7, 13, 17, 31, 37, 61, 64, 67, 97, 127, 131]
# The plain kernel family these tests were written for (the catalogue's defaults are Tensile's now:
# automatic vector widths, prefetching, WorkGroupMapping 8, StaggerU 32); tests/test_random_kernels.py
# draws those.
PLAIN = {"VectorWidth": 1, "GlobalReadVectorWidth": 1, "PrefetchGlobalRead": 0, "PrefetchLocalRead": 0,
         "WorkGroupMapping": 1, "StaggerU": 0}


def solution(tile, ta, tb, use_beta=True, batched=True):
    wg, tt, du = tile
    return Solution.from_dict({
        "ProblemType": {"OperationType": "GEMM", "DataType": "s", "TransposeA": ta, "TransposeB": tb,
                        "Batched": batched, "UseBeta": use_beta},
        "WorkGroup": wg, "ThreadTile": tt, "DepthU": du, **PLAIN}, where="test")


@lru_cache(maxsize=None)
def built(arch_name, tile_index, ta, tb, use_beta=True, batched=True, tmp=None):
    arch = load_arch(arch_name)
    sol = solution(TILES[tile_index], ta, tb, use_beta, batched)
    name = min_names([sol])[0]
    kernel = build_kernel(sol, arch, name)
    import tempfile, pathlib
    co = pathlib.Path(tempfile.mkdtemp(prefix="e2e-")) / f"{name}.co"
    toolchain.assemble_and_link(kernel.text(), arch, co)
    return co, GemmKernelContract.from_solution(sol, name)


def random_cases(count, seed):
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        cases.append(dict(
            arch=rng.choice(["gfx90a", "gfx942"]), tile=rng.randrange(len(TILES)),
            ta=rng.random() < 0.5, tb=rng.random() < 0.5,
            size=Size(rng.choice(SIZES), rng.choice(SIZES), rng.choice(SIZES), rng.choice([1, 1, 2, 3])),
            alpha=rng.choice([1.0, -0.75, 2.5]), beta=rng.choice([0.0, 1.0, 0.5, -1.25]),
            seed=rng.randrange(1 << 30)))
    return cases


@pytest.mark.parametrize("case", random_cases(36, seed=20261121), ids=lambda c: (
    f"{c['arch']}-t{c['tile']}-{'T' if c['ta'] else 'N'}{'T' if c['tb'] else 'N'}-{c['size']}-a{c['alpha']}-b{c['beta']}"))
def test_random_gemm_matches_reference(case):
    co, contract = built(case["arch"], case["tile"], case["ta"], case["tb"])
    [result] = verify_sizes(co, contract, [case["size"]], case["alpha"], case["beta"], case["seed"], EmulatedRuntime())
    assert result.passed, f"{result.size}: {result.detail} (max rel err {result.max_rel_error})"


def test_padded_leading_dimensions():
    co, contract = built("gfx90a", 2, True, False)
    results = verify_sizes(co, contract, [Size(37, 29, 19, 2)], 1.25, 0.75, 7, EmulatedRuntime(), pad=5)
    assert all(r.passed for r in results), results


def test_beta_zero_never_reads_c():
    """C is all NaN; with beta = 0 none of it may reach D."""
    co, contract = built("gfx90a", 0, False, True)
    results = verify_sizes(co, contract, [Size(67, 45, 23, 2), Size(1, 1, 1)], 1.5, 0.0, 3, EmulatedRuntime())
    assert all(r.passed for r in results), results
    # -0.0 is zero too.
    results = verify_sizes(co, contract, [Size(17, 9, 40)], 1.5, -0.0, 4, EmulatedRuntime())
    assert all(r.passed for r in results), results


def test_without_beta_and_unbatched():
    for use_beta, batched in ((False, True), (True, False), (False, False)):
        co, contract = built("gfx90a", 1, False, False, use_beta, batched)
        beta = 0.0 if not use_beta else 0.5
        results = verify_sizes(co, contract, [Size(41, 23, 11)], 1.5, beta, 5, EmulatedRuntime())
        assert all(r.passed for r in results), (use_beta, batched, results)


def test_invalid_solutions_are_not_built():
    from tensile_asm.writer.build import supports
    bad = Solution.from_dict({"ProblemType": {"OperationType": "GEMM", "DataType": "s"},
                              "WorkGroup": [8, 8, 1], "ThreadTile": [5, 3], "DepthU": 8}, where="test")
    assert "MacroTile 40x24 is not allowed" in supports(bad, load_arch("gfx90a"))


def test_verification_detects_a_wrong_kernel(tmp_path):
    """A kernel that skips the tail loop must fail when K is not a multiple of DepthU."""
    arch = load_arch("gfx90a")
    sol = solution(TILES[1], False, False)
    kernel = build_kernel(sol, arch, "broken")
    text = kernel.text()
    assert "s_cbranch_scc1 .LTailLoopEndL" in text
    co = tmp_path / "broken.co"
    toolchain.assemble_and_link(text.replace("s_cbranch_scc1 .LTailLoopEndL", "s_branch .LTailLoopEndL"), arch, co)
    contract = GemmKernelContract.from_solution(sol, "broken")
    [bad] = verify_sizes(co, contract, [Size(19, 17, 13)], 1.5, 0.5, 1, EmulatedRuntime())
    assert not bad.passed and "above tolerance" in bad.detail
    [good] = verify_sizes(co, contract, [Size(19, 17, 16)], 1.5, 0.5, 1, EmulatedRuntime())
    assert good.passed


def _tile_wait(lines) -> int:
    """The line of the waitcnt pass's first wait for the global reads, before the local writes of the tile."""
    return next(i for i, l in enumerate(lines) if l.strip().startswith("s_waitcnt vmcnt(0)")
                and lines[i + 1].strip().startswith("ds_write"))


def test_removed_waitcnt_is_reported_by_the_strict_emulator(tmp_path):
    arch = load_arch("gfx90a")
    sol = solution(TILES[3], False, False)
    kernel = build_kernel(sol, arch, "nowait")
    lines = kernel.text().splitlines()
    victim = _tile_wait(lines)
    co = tmp_path / "nowait.co"
    toolchain.assemble_and_link("\n".join(lines[:victim] + lines[victim + 1:]) + "\n", arch, co)
    [r] = verify_sizes(co, GemmKernelContract.from_solution(sol, "nowait"), [Size(16, 16, 16)], 1.0, 0.0, 2, EmulatedRuntime())
    assert not r.passed
    assert "still in flight" in r.detail and "buffer_load_dword" in r.detail and "0x" in r.detail


TYPED = [("H", "H", "S"), ("H", "S", "S"), ("B", "B", "S"), ("B", "S", "S"), ("H", "H", "H"), ("D", "D", "D")]
TYPE_NAMES = {"S": "s", "D": "d", "H": "h", "B": "b"}


@pytest.mark.parametrize("types", TYPED, ids=lambda t: "".join(t))
@pytest.mark.parametrize("arch_name,ta,tb", [("gfx90a", False, False), ("gfx942", True, True), ("gfx908", False, True)])
def test_data_types(types, arch_name, ta, tb, tmp_path):
    """fp16/bf16 inputs (widened to fp32 in LDS, fp32 accumulation), fp16/bf16/fp32 outputs, and fp64."""
    a_type, d_type, c_type = types
    if a_type == "D":
        from tensile_asm.emulator.registry import registry
        if "v_fma_f64" not in registry().handlers:
            pytest.skip("the emulator does not execute v_fma_f64 yet, so fp64 kernels cannot be verified")
    pt = {"OperationType": "GEMM", "DataType": TYPE_NAMES[a_type], "DestDataType": TYPE_NAMES[d_type],
          "ComputeDataType": TYPE_NAMES[c_type], "TransposeA": ta, "TransposeB": tb, "Batched": True,
          "UseBeta": True, "HighPrecisionAccumulate": c_type == "S" and a_type != "S"}
    params = {"ProblemType": pt, "WorkGroup": [8, 8, 1], "ThreadTile": [4, 2], "DepthU": 8}
    if a_type == "D":
        params.update(VectorWidth=2, GlobalReadVectorWidth=2)
    else:  # the automatic widths (Tensile's default -1) give 16-bit inputs vector loads, not built yet
        params.update(VectorWidth=1, GlobalReadVectorWidth=1)
    sol = Solution.from_dict(params, where="test")
    arch = load_arch(arch_name)
    from tensile_asm.writer.build import supports
    assert supports(sol, arch) is None, supports(sol, arch)
    kernel = build_kernel(sol, arch, "typed")
    co = tmp_path / "typed.co"
    toolchain.assemble_and_link(kernel.text(), arch, co)
    contract = GemmKernelContract.from_solution(sol, "typed")
    assert (contract.data_type, contract.dest_type, contract.compute_type) == types
    for beta in (0.75, 0.0):
        results = verify_sizes(co, contract, [Size(37, 19, 29, 2), Size(1, 1, 1), Size(32, 16, 8)], 1.25, beta, 11,
                               EmulatedRuntime())
        assert all(r.passed for r in results), results


FEATURES = [  # extra solution parameters on top of WorkGroup [8, 8, 1], ThreadTile [4, 2], DepthU 16, PLAIN
    {"GlobalSplitU": 3},
    {"GlobalSplitU": 2, "GlobalSplitUAlgorithm": "MultipleBuffer"},
    {"GlobalSplitU": 4, "GlobalSplitUAlgorithm": "MultipleBuffer", "StaggerU": 4, "PrefetchGlobalRead": 1},
    {"NumLoadsCoalescedA": 2, "NumLoadsCoalescedB": -1},
    {"GlobalReadCoalesceGroupA": False, "GlobalReadCoalesceGroupB": False, "GlobalReadVectorWidth": 2},
    {"PrefetchGlobalRead": 1, "1LDSBuffer": 1, "PrefetchLocalRead": 1},
    {"LdsPadA": 3, "LdsPadB": 1, "VectorWidth": 2, "GlobalReadVectorWidth": 2},
    {"WorkGroupMapping": 4, "StaggerU": 8, "StaggerUStride": 128},
    {"BufferLoad": False, "BufferStore": False, "PrefetchGlobalRead": 1},
    {"PrefetchLocalRead": 17, "PrefetchGlobalRead": 1, "VectorWidth": 2},   # LoopIters + 1 (Tensile 4.44: PLR % LoopIters <= 1)
    {"BufferStore": False, "GlobalSplitU": 2, "GlobalSplitUAlgorithm": "MultipleBuffer"},
]


@pytest.mark.parametrize("extra", FEATURES, ids=lambda e: "_".join(f"{k}{v}" for k, v in e.items()))
@pytest.mark.parametrize("dtype", ["s", "h"])
def test_solution_features(extra, dtype, tmp_path):
    from tensile_asm.writer.build import link_kernels, supports
    if dtype == "h" and ("GlobalReadVectorWidth" in extra or "GlobalSplitU" in extra):
        pytest.skip("16-bit inputs: the writer takes GlobalReadVectorWidth 1, and Tensile rejects GlobalSplitU for H")
    pt = {"OperationType": "GEMM", "DataType": dtype, "TransposeA": True, "TransposeB": False, "Batched": True,
          "UseBeta": True, "HighPrecisionAccumulate": dtype == "h", "DestDataType": dtype}
    sol = Solution.from_dict({"ProblemType": pt, "WorkGroup": [8, 8, 1], "ThreadTile": [4, 2], "DepthU": 16,
                              **PLAIN, **extra}, where="test")
    arch = load_arch("gfx90a")
    assert sol.valid, sol.rejection
    assert supports(sol, arch) is None, supports(sol, arch)
    kernel = build_kernel(sol, arch, "feature")
    co = tmp_path / "feature.co"
    link_kernels([kernel], arch, co)
    for beta in (0.5, 0.0):
        results = verify_sizes(co, GemmKernelContract.from_solution(sol, "feature"), [Size(45, 23, 83, 2), Size(1, 1, 1), Size(32, 16, 16)],
                               -1.25, beta, 5, EmulatedRuntime())
        assert all(r.passed for r in results), results


def test_strict_errors_name_the_source_line(tmp_path):
    """With the .s text at hand, a strict error names the instruction's line in it."""
    arch = load_arch("gfx90a")
    sol = solution(TILES[3], False, False)
    lines = build_kernel(sol, arch, "lines").text().splitlines()
    victim = _tile_wait(lines)
    text = "\n".join(lines[:victim] + lines[victim + 1:]) + "\n"
    co = tmp_path / "lines.co"
    toolchain.assemble_and_link(text, arch, co)
    [r] = verify_sizes(co, GemmKernelContract.from_solution(sol, "lines"), [Size(16, 16, 16)], 1.0, 0.0, 2, EmulatedRuntime(source=text))
    import re
    found = re.search(r"\(\.s line (\d+)\) `(\S+)", r.detail)
    assert found, r.detail
    line_no, opcode = int(found.group(1)), found.group(2)
    assert text.splitlines()[line_no - 1].strip().startswith(opcode)


@pytest.mark.parametrize("arch_name,extra", [
    ("gfx906", {"GlobalSplitU": 3}),
    ("gfx900", {"GlobalSplitU": 2, "VectorWidth": 2, "GlobalReadVectorWidth": 2}),
    ("gfx906", {"GlobalSplitU": 4, "WorkGroup": [8, 8, 2], "StaggerU": 4, "PrefetchGlobalRead": 1}),
])
def test_global_split_u_without_atomic_add_f32(arch_name, extra, tmp_path):
    """GlobalSplitU SingleBuffer where the architecture has no buffer_atomic_add_f32: every slice adds
    alpha * its partial sum into D with a compare-and-swap loop (strict emulator: the slices' work-groups
    race on D only through atomics). Edge sizes, batch > 1, beta 0 and not, poisoned D."""
    from tensile_asm.writer.build import link_kernels, supports
    pt = {"OperationType": "GEMM", "DataType": "s", "TransposeA": False, "TransposeB": True, "Batched": True,
          "UseBeta": True}
    params = {"ProblemType": pt, "WorkGroup": [8, 8, 1], "ThreadTile": [4, 2], "DepthU": 8, **PLAIN, **extra}
    sol = Solution.from_dict(params, where="test")
    arch = load_arch(arch_name)
    assert sol.valid, sol.rejection
    assert not arch.instructions.get("atomic_add_f32")
    assert supports(sol, arch) is None, supports(sol, arch)
    kernel = build_kernel(sol, arch, "gsu_cas")
    assert "buffer_atomic_cmpswap" in kernel.text() and "buffer_atomic_add_f32" not in kernel.text()
    co = tmp_path / "gsu_cas.co"
    link_kernels([kernel], arch, co)
    contract = GemmKernelContract.from_solution(sol, "gsu_cas")
    for beta, sizes in ((0.5, [Size(37, 19, 29, 2), Size(1, 1, 1)]), (0.0, [Size(17, 33, 13, 3)])):
        results = verify_sizes(co, contract, sizes, -1.25, beta, 7, EmulatedRuntime())
        assert all(r.passed for r in results), results


@pytest.mark.parametrize("arch_name,dtype", [("gfx906", "h"), ("gfx900", "d")])
def test_global_split_u_single_buffer_fp16_fp64(arch_name, dtype, tmp_path):
    """GlobalSplitU SingleBuffer with HHH or DDD C/D: the beta-only helper (Cijk_H / Cijk_D) writes beta*C,
    then every slice adds into D by compare-and-swap, for fp16 on the dword holding the half with the other
    half kept bit for bit. ld = M + 1 (odd for even M) puts halves of two columns, and of the poisoned padding,
    in one dword: a lost neighbour shows as an element written outside D's M x N region."""
    from tensile_asm.writer.build import link_kernels, supports
    pt = {"OperationType": "GEMM", "DataType": dtype, "DestDataType": dtype, "TransposeA": False,
          "TransposeB": True, "Batched": True, "UseBeta": True}
    sol = Solution.from_dict({"ProblemType": pt, "WorkGroup": [8, 8, 1], "ThreadTile": [4, 2], "DepthU": 8,
                              **PLAIN, "VectorWidth": 2, "GlobalSplitU": 3, "AssertFree0ElementMultiple": 2},
                             where="test")
    arch = load_arch(arch_name)
    assert sol.valid, sol.rejection
    assert supports(sol, arch) is None, supports(sol, arch)
    kernel = build_kernel(sol, arch, "gsu_cas16")
    text = kernel.text()
    assert ("buffer_atomic_cmpswap_x2" if dtype == "d" else "v_bfi_b32") in text
    co = tmp_path / "gsu.co"
    link_kernels([kernel], arch, co)
    contract = GemmKernelContract.from_solution(sol, "gsu_cas16")
    assert contract.helper_name() == f"Cijk_{dtype.upper()}"
    for beta, sizes, pad in ((0.5, [Size(38, 19, 29, 2), Size(2, 1, 1)], 1), (0.0, [Size(18, 9, 13, 3)], 0)):
        results = verify_sizes(co, contract, sizes, -1.25, beta, 7, EmulatedRuntime(), pad=pad)
        assert all(r.passed for r in results), results


def test_global_split_u_single_buffer_fp16_needs_even_m():
    """Tensile's rule for half GlobalSplitU atomics: AssertFree0ElementMultiple >= 2 (library predicate: M even)."""
    from tensile_asm.writer.build import supports
    pt = {"OperationType": "GEMM", "DataType": "h", "DestDataType": "h", "TransposeA": False,
          "TransposeB": True, "Batched": True, "UseBeta": True}
    sol = Solution.from_dict({"ProblemType": pt, "WorkGroup": [8, 8, 1], "ThreadTile": [4, 2], "DepthU": 8,
                              **PLAIN, "VectorWidth": 2, "GlobalSplitU": 3}, where="test")
    assert "AssertFree0ElementMultiple >= 2" in supports(sol, load_arch("gfx906"))


@pytest.mark.parametrize("arch_name,types,wg,tt,ta", [("gfx900", "s", [8, 12, 2], [6, 3], False),
                                                       ("gfx906", "4xi8", [12, 16, 1], [3, 3], True)])
def test_macro_tile_sides_of_rocblas_vega_logic(arch_name, types, wg, tt, ta, tmp_path):
    """MacroTile 48x36 and 36x48 (WorkGroup 12: thread ids by division by 12), as rocBLAS's vega10 SB and vega20
    4xi8II logic hold them: edge sizes, batch 2, beta 0 and not."""
    from tensile_asm.writer.build import link_kernels, supports
    integer = types == "4xi8"
    pt = {"OperationType": "GEMM", "DataType": types, "TransposeA": ta, "TransposeB": False, "Batched": True,
          "UseBeta": True}
    if integer:
        pt.update(DestDataType="I", ComputeDataType="I", HighPrecisionAccumulate=True)
    sol = Solution.from_dict({"ProblemType": pt, "WorkGroup": wg, "ThreadTile": tt, "DepthU": 16, **PLAIN,
                              "PrefetchGlobalRead": 1, "KernelLanguage": "Assembly"}, where="rocBLAS vega logic",
                             defaults_from="tensile")
    arch = load_arch(arch_name)
    assert sol.valid, sol.rejection
    assert supports(sol, arch) is None, supports(sol, arch)
    kernel = build_kernel(sol, arch, "mt_sides")
    co = tmp_path / "mt.co"
    link_kernels([kernel], arch, co)
    contract = GemmKernelContract.from_solution(sol, "mt_sides")
    for beta, sizes in ((0, [Size(37, 53, 19, 2)]), (2 if integer else 0.5, [Size(1, 1, 1), Size(49, 37, 5)])):
        results = verify_sizes(co, contract, sizes, 3 if integer else -1.25, beta, 7, EmulatedRuntime())
        assert all(r.passed for r in results), results


FRACTIONAL = [  # (arch, WorkGroup, ThreadTile, DepthU, (TransposeA, TransposeB), extra): each has partial loads
    ("gfx906", [16, 8, 1], [3, 2], 8, (False, False), {}),                       # A: a partial row of threads
    ("gfx90a", [16, 4, 1], [6, 4], 8, (False, False), {}),                       # A: half of every 2nd load
    ("gfx906", [16, 16, 1], [2, 3], 8, (False, False), {}),                      # B: DepthU x 48, LSP 32
    ("gfx906", [16, 16, 1], [6, 4], 8, (False, False), {"GlobalReadVectorWidth": 2, "VectorWidth": 2}),
    ("gfx900", [8, 16, 1], [2, 6], 16, (True, True), {"GlobalReadVectorWidth": 2, "VectorWidth": 2}),
    ("gfx906", [16, 8, 1], [3, 2], 8, (False, False), {"PrefetchGlobalRead": 1, "GlobalSplitU": 2}),
]


@pytest.mark.parametrize("arch_name,wg,tt,du,trans,extra", FRACTIONAL,
                         ids=lambda v: "x".join(map(str, v)) if isinstance(v, list) else str(v))
def test_fractional_load(arch_name, wg, tt, du, trans, extra, tmp_path):
    """FractionalLoad: the threads' load tiles need not divide the operand tiles; the lanes of a load whose
    vector lies outside the tile (a partial row of threads, the last load along either dimension) do not
    write LDS. Strict emulator (an LDS write out of place corrupts the other operand or races), random
    data, poisoned D, edge sizes, batch > 1, beta 0 and not."""
    from tensile_asm.writer.build import link_kernels, supports
    from tensile_asm.writer.global_read import load_bounds
    from tensile_asm.writer.build import geometry
    pt = {"OperationType": "GEMM", "DataType": "s", "TransposeA": trans[0], "TransposeB": trans[1],
          "Batched": True, "UseBeta": True}
    sol = Solution.from_dict({"ProblemType": pt, **PLAIN, "WorkGroup": wg, "ThreadTile": tt, "DepthU": du,
                              "FractionalLoad": 1, **extra}, where="test")
    arch = load_arch(arch_name)
    assert sol.valid, sol.rejection
    assert supports(sol, arch) is None, supports(sol, arch)
    g = geometry(sol)
    assert any(load_bounds(g, op, i) != (None, None) for op in "AB" for i in range(g.num_loads(op)))
    kernel = build_kernel(sol, arch, "fractional")
    co = tmp_path / "fractional.co"
    link_kernels([kernel], arch, co)
    contract = GemmKernelContract.from_solution(sol, "fractional")
    for beta, sizes in ((0.5, [Size(53, 29, 37, 2), Size(1, 1, 1)]), (0.0, [Size(97, 50, 19, 1)])):
        results = verify_sizes(co, contract, sizes, 1.5, beta, 13, EmulatedRuntime())
        assert all(r.passed for r in results), results


def test_fractional_load_without_masks_is_caught(tmp_path, monkeypatch):
    """The masks matter: with every load's lanes writing LDS, the same kernel gives wrong results or
    strict errors (so test_fractional_load cannot pass by accident)."""
    from tensile_asm.writer import global_read
    monkeypatch.setattr(global_read, "load_bounds", lambda g, name, load: (None, None))
    pt = {"OperationType": "GEMM", "DataType": "s", "TransposeA": False, "TransposeB": False, "Batched": True,
          "UseBeta": True}
    sol = Solution.from_dict({"ProblemType": pt, **PLAIN, "WorkGroup": [16, 16, 1], "ThreadTile": [2, 3],
                              "DepthU": 8, "FractionalLoad": 1}, where="test")
    arch = load_arch("gfx906")
    kernel = build_kernel(sol, arch, "unmasked")
    co = tmp_path / "unmasked.co"
    toolchain.assemble_and_link(kernel.text(), arch, co)
    [result] = verify_sizes(co, GemmKernelContract.from_solution(sol, "unmasked"), [Size(53, 29, 37, 2)], 1.5, 0.5,
                            13, EmulatedRuntime())
    assert not result.passed
