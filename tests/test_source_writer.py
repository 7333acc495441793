"""The HIP source writer (KernelLanguage: Source): kernels rendered from templates/, compiled by clang for the
AMDGPU targets, taking the GEMM contract's arguments (names, offsets, sizes as the metadata says), and verified
on the strict emulator against the float64 reference at edge sizes (1, primes, not tile multiples; random
data; D poisoned; beta 0 with C NaN). Each kernel is compiled once per session."""

from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution.solution import Solution

from conftest import have_llvm


def have_hip() -> bool:
    from tensile_asm.errors import ToolchainError
    from tensile_asm.toolchain_paths import find_hip_compiler
    try:
        find_hip_compiler()
        return True
    except ToolchainError:
        return False


needs_hip = pytest.mark.skipif(not (have_llvm() and have_hip()),
                               reason="the LLVM toolchain or a HIP compiler is not installed (tools/setup)")


def problem(a, d=None, c=None, ta=False, tb=False, batched=True, beta=True, strided=True):
    pt = {"OperationType": "GEMM", "DataType": a, "TransposeA": ta, "TransposeB": tb, "Batched": batched,
          "UseBeta": beta, "StridedBatched": strided}
    if d:
        pt.update(DestDataType=d, ComputeDataType=c or d, HighPrecisionAccumulate=(c or d) != a)
    return pt


def source(pt, **params):
    return {"ProblemType": pt, "KernelLanguage": "Source", "WorkGroup": [8, 8, 1], "ThreadTile": [2, 2],
            "DepthU": 8, **params}


# (architecture, solution): every feature the writer reads, over the six targets
CASES = {
    "HSS_gsu_multiple_wgm_stagger_pgr_vw2_gfx906": ("gfx906", source(
        problem("h", "s", "s"), GlobalSplitU=3, GlobalSplitUAlgorithm="MultipleBuffer", WorkGroupMapping=8,
        StaggerU=32, PrefetchGlobalRead=1, VectorWidth=2, GlobalReadVectorWidth=2)),
    "SSS_TN_lsu2_pad_gsu_single_gfx90a": ("gfx90a", source(
        problem("s", ta=True, tb=True), WorkGroup=[8, 4, 2], LdsPadA=1, LdsPadB=2, GlobalSplitU=2,
        GlobalSplitUAlgorithm="SingleBuffer", PrefetchGlobalRead=0)),
    "DDD_NT_gfx908": ("gfx908", source(problem("d", tb=True), WorkGroupMapping=4, PrefetchGlobalRead=1)),
    "BBS_TN_unbatched_gfx942": ("gfx942", source(problem("b", "b", "s", ta=True, batched=False), ThreadTile=[4, 2],
                                                  VectorWidth=2, GlobalReadVectorWidth=2)),
    "HHH_nobeta_gfx900": ("gfx900", source(problem("h", beta=False), DepthU=4, StaggerU=0)),
    # pointer-array batches (StridedBatched false, _GB): per-batch pointers plus element offsets
    # (with GlobalSplitU: the workspace stays strided; the _GB helper kernels take D's and C's pointer arrays)
    "SSS_NT_pointer_array_gsu_multiple_gfx90a": ("gfx90a", source(
        problem("s", tb=True, strided=False), VectorWidth=2, GlobalReadVectorWidth=2, WorkGroupMapping=8,
        GlobalSplitU=3, GlobalSplitUAlgorithm="MultipleBuffer")),
    "I8II_TN_pointer_array_gsu_single_gfx906": ("gfx906", source(
        problem("i8", "i", "i", ta=True, strided=False), ThreadTile=[4, 2], VectorWidth=2, GlobalSplitU=2,
        GlobalSplitUAlgorithm="SingleBuffer")),
    "4xi8II_lsu2_gsu_single_gfx900": ("gfx900", source(problem("4xi8", "i", "i"), WorkGroup=[8, 4, 2],
                                                        GlobalSplitU=2, GlobalSplitUAlgorithm="SingleBuffer")),
    # complex (Tensile's TYPE_MAC and TYPE_MAC_WRITE order), A conjugated (AlikC), LocalSplitU
    "CCC_TN_conjugate_a_lsu2_gfx90a": ("gfx90a", source(dict(problem("c", ta=True), ComplexConjugateA=True),
                                                         WorkGroup=[4, 8, 2], ThreadTile=[2, 1])),
    # gfx950: Debian's clang 19 does not know it; a newer clang compiles it with the wavefront macro given
    "HHS_NT_gsu_multiple_gfx950": ("gfx950", source(problem("h", "h", "s", tb=True), VectorWidth=2,
                                                     GlobalReadVectorWidth=2, GlobalSplitU=2,
                                                     GlobalSplitUAlgorithm="MultipleBuffer")),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """{case: (solution, arch, code object, clang's metadata)}: each kernel compiled and linked once."""
    from concurrent.futures import ThreadPoolExecutor

    from tensile_asm.source.build import link_source_kernel
    folder = tmp_path_factory.mktemp("source")

    def build(case):        # clang runs in its own process: the compiles overlap
        gfx, params = CASES[case]
        sol = Solution.from_dict(params, where=case)
        assert sol.valid, (case, sol.rejection)
        arch = load_arch(gfx)
        co = folder / f"{case}.co"
        _, asm, metadata = link_source_kernel(sol, arch, "Cijk_source_" + case, co)
        return sol, arch, co, metadata, asm
    with ThreadPoolExecutor(4) as pool:
        return dict(zip(CASES, pool.map(build, CASES)))


@needs_hip
@pytest.mark.parametrize("case", sorted(CASES))
def test_source_kernel_takes_the_contract_arguments(built, case):
    sol, arch, co, metadata, asm = built[case]
    layout = GemmKernelContract.from_solution(sol, "x").layout()
    explicit = [a for a in metadata[".args"] if not a[".value_kind"].startswith("hidden_")]
    assert [(a[".name"], a[".offset"], a[".size"]) for a in explicit] == [(a.name, a.offset, a.size) for a in layout]
    assert f'.amdgcn_target "amdgcn-amd-amdhsa--{arch.name}' in asm


@needs_hip
@pytest.mark.parametrize("case", sorted(CASES))
def test_source_kernel_matches_the_reference_on_the_strict_emulator(built, case):
    sol, arch, co, metadata, _ = built[case]
    contract = GemmKernelContract.from_solution(sol, "Cijk_source_" + case)
    d = sol.derived
    batch = 2 if contract.batched else 1
    sizes = [Size(1, 1, 1), Size(7, 5, 3, batch), Size(d.mt0 + 3, d.mt1 + 5, 2 * d.depth_u * d.global_split_u + 3)]
    runtime = EmulatedRuntime(strict=True)
    alphas = (-3, 7) if contract.dest_type == "I" else (1.5, -0.75)       # int32 alpha/beta: whole numbers
    beta = (-2 if contract.dest_type == "I" else 0.5) if contract.use_beta else 0.0
    results = verify_sizes(co, contract, sizes, alphas[0], beta, 11, runtime)
    results += verify_sizes(co, contract, [Size(13, 11, 17, batch)], alphas[1], 0.0, 12, runtime)  # C holds NaN
    bad = [(str(r.size), r.beta, r.max_rel_error, r.detail) for r in results if not r.passed]
    assert not bad, bad


def test_unsupported_source_solutions_have_one_reason():
    from tensile_asm.source.writer import supports
    complex_gsu = Solution.from_dict(source(problem("c"), GlobalSplitU=2, GlobalSplitUAlgorithm="MultipleBuffer"))
    assert "GlobalSplitU=2 with complex C/D is not implemented" in supports(complex_gsu)
    int_multiple = Solution.from_dict(source(problem("i8", "i", "i"), GlobalSplitU=2,
                                             GlobalSplitUAlgorithm="MultipleBuffer"))
    assert "use GlobalSplitUAlgorithm SingleBuffer" in supports(int_multiple)
    gsu_half = Solution.from_dict(source(problem("h", "h", "s"), GlobalSplitU=2,
                                         GlobalSplitUAlgorithm="SingleBuffer"))
    assert "use GlobalSplitUAlgorithm MultipleBuffer" in supports(gsu_half)
    assert supports(Solution.from_dict(source(problem("h", "h", "s")))) is None


def test_the_assembly_writer_routes_source_solutions():
    from tensile_asm.writer import build
    sol = Solution.from_dict(source(problem("s")))
    assert build.supports(sol, load_arch("gfx90a")) is None
    assert not any(name == "KernelLanguage" for name, _, _ in build.FEATURE_LIMITS)


def test_source_kernels_go_to_the_hsaco_as_tensile_places_them(tmp_path):
    from tensile_asm.kernel_cache import KernelPart
    from tensile_asm.library import outputs
    linked = {}

    def link(parts, path):
        linked[path.name] = sorted(p.name for p in parts)
        path.write_bytes(b"")

    def stage(final):
        return final
    kernels = [("Cijk_asm", [KernelPart("Cijk_asm", b"", {}), KernelPart("Cijk_S", b"", {})]),
               ("Cijk_src", [KernelPart("Cijk_src", b"", {}, "Source")])]
    outputs.link_code_objects(kernels, "gfx90a", tmp_path, link, stage, merge_files=False)
    assert linked == {"Cijk_asm_gfx90a.co": ["Cijk_asm"], "Cijk_S.so-000-gfx90a.hsaco": ["Cijk_S"],
                      "Cijk_src.so-000-gfx90a.hsaco": ["Cijk_src"]}
    linked.clear()
    outputs.link_code_objects(kernels[1:], "gfx90a", tmp_path, link, lambda f: f.with_suffix(".tmp"),
                              merge_files=True)
    assert linked == {"Kernels.so-000-gfx90a.tmp": ["Cijk_src"]}   # no assembly .co without assembly kernels
    source, assembly = outputs.expected_code_objects({"gfx90a": [("Cijk_src", None)]}, tmp_path,
                                                     source_kernels=frozenset({"Cijk_src"}))
    assert ([p.name for p in source], assembly) == (["Kernels.so-000-gfx90a.hsaco"], [])


# One real rocBLAS Source solution per feature combination the writer reads (types, transposes, GlobalSplitU
# and its algorithm, LocalSplitU, LdsPad, WorkGroupMapping, PrefetchGlobalRead), picked from
# rocblas-asm_full ; the hip fallback ones built for gfx942 (Tensile builds them for every
# architecture). Compiled and verified with --slow.
ROCBLAS = [
    ("vega20/vega20_Cijk_Ailk_Bljk_HHS_BH.yaml", 43, "gfx906"),
    ("vega20/vega20_Cijk_Ailk_Bljk_HSS_BH.yaml", 48, "gfx906"),
    ("vega20/vega20_Cijk_Ailk_Bljk_HSS_BH.yaml", 49, "gfx906"),
    ("vega20/vega20_Cijk_Ailk_Bljk_HSS_BH.yaml", 62, "gfx906"),
    ("vega20/vega20_Cijk_Ailk_Bljk_HSS_BH.yaml", 65, "gfx906"),
    ("vega20/vega20_Cijk_Alik_Bljk_HHS_BH.yaml", 22, "gfx906"),
    ("vega20/vega20_Cijk_Alik_Bljk_HHS_BH.yaml", 24, "gfx906"),
    ("vega20/vega20_Cijk_Alik_Bljk_HSS_BH.yaml", 27, "gfx906"),
    ("vega20/vega20_Cijk_Alik_Bljk_HSS_BH.yaml", 29, "gfx906"),
    ("vega20/vega20_Cijk_Alik_Bljk_HSS_BH.yaml", 43, "gfx906"),
    ("vega20/vega20_Cijk_Alik_Bljk_HSS_BH.yaml", 46, "gfx906"),
    ("vega10/vega10_Cijk_Ailk_Bljk_DB.yaml", 0, "gfx900"),
    ("vega10/vega10_Cijk_Ailk_Bljk_HHS_BH.yaml", 73, "gfx900"),
    ("vega10/vega10_Cijk_Ailk_Bljk_SB.yaml", 12, "gfx900"),
    ("vega10/vega10_Cijk_Ailk_Bljk_SB.yaml", 16, "gfx900"),
    ("vega10/vega10_Cijk_Ailk_Bljk_SB.yaml", 84, "gfx900"),
    ("vega10/vega10_Cijk_Ailk_Bljk_SB.yaml", 88, "gfx900"),
    ("vega10/vega10_Cijk_Alik_Bljk_DB.yaml", 0, "gfx900"),
    ("vega10/vega10_Cijk_Alik_Bljk_SB.yaml", 5, "gfx900"),
    ("vega10/vega10_Cijk_Alik_Bljk_SB.yaml", 11, "gfx900"),
    ("hip/hip_Cijk_Ailk_Bljk_BBS_BH.yaml", 0, "gfx942"),
    ("hip/hip_Cijk_Ailk_Bljk_BSS_BH.yaml", 0, "gfx942"),
    ("hip/hip_Cijk_Ailk_Bljk_BSS_BH.yaml", 1, "gfx942"),
    ("hip/hip_Cijk_Ailk_Bljk_HB.yaml", 0, "gfx942"),
    ("hip/hip_Cijk_Ailk_Bljk_HB.yaml", 2, "gfx942"),
    ("hip/hip_Cijk_Alik_Bljk_BBS_BH.yaml", 0, "gfx942"),
    ("hip/hip_Cijk_Alik_Bljk_BSS_BH.yaml", 0, "gfx942"),
    ("hip/hip_Cijk_Alik_Bljk_BSS_BH.yaml", 1, "gfx942"),
    ("hip/hip_Cijk_Alik_Bljk_HB.yaml", 0, "gfx942"),
    ("hip/hip_Cijk_Alik_Bljk_HB.yaml", 2, "gfx942"),
    ("aldebaran/aldebaran_Cijk_Ailk_Bljk_BBS_BH.yaml", 199, "gfx90a"),
    ("aldebaran/aldebaran_Cijk_Ailk_Bljk_BBS_BH.yaml", 203, "gfx90a"),
    ("aldebaran/aldebaran_Cijk_Ailk_Bljk_BBS_BH.yaml", 294, "gfx90a"),
    ("aldebaran/aldebaran_Cijk_Ailk_Bljk_HHS_BH.yaml", 241, "gfx90a"),
    ("aldebaran/aldebaran_Cijk_Ailk_Bljk_HHS_BH.yaml", 271, "gfx90a"),
    ("aldebaran/aldebaran_Cijk_Ailk_Bljk_HHS_BH.yaml", 272, "gfx90a"),
    ("arcturus/arcturus_Cijk_Ailk_Bljk_SB.yaml", 606, "gfx908"),
    # pointer-array (_GB) and int8 (I8II, 4xi8II) fallback and Source solutions
    ("hip/hip_Cijk_Ailk_Bljk_SB_GB.yaml", 0, "gfx906"),
    ("hip/hip_Cijk_Alik_Bljk_HHS_BH_GB.yaml", 3, "gfx90a"),
    ("hip/hip_Cijk_Ailk_Bljk_I8II_BH.yaml", 0, "gfx906"),
    ("hip/hip_Cijk_Alik_Bljk_I8II_BH_GB.yaml", 5, "gfx900"),
    ("hip/hip_Cijk_Alik_Bljk_4xi8II_BH_GB.yaml", 3, "gfx900"),
    ("hip/hip_Cijk_Ailk_Bljk_4xi8II_BH.yaml", 1, "gfx942"),
    ("vega20/vega20_Cijk_Ailk_Bljk_4xi8II_BH.yaml", 84, "gfx906"),
    ("hip/hip_Cijk_Ailk_Bljk_CB.yaml", 0, "gfx906"),
    ("hip/hip_Cijk_Ailk_Bljk_BSS_BH_GB.yaml", 2, "gfx906"),
    ("hip/hip_Cijk_Alik_Bljk_HSS_BH_GB.yaml", 5, "gfx90a"),
    ("hip/hip_Cijk_AlikC_Bljk_CB_GB.yaml", 1, "gfx942"),
    ("hip/hip_Cijk_AlikC_Bljk_ZB_GB.yaml", 1, "gfx90a"),
    ("hip/hip_Cijk_Alik_Bljk_ZB.yaml", 0, "gfx900"),
    ("aldebaran/aldebaran_Cijk_Alik_Bljk_4xi8II_BH_GB.yaml", 57, "gfx90a"),
]


@needs_hip
@pytest.mark.parametrize("path,index,gfx", ROCBLAS, ids=[f"{p.split('/')[1][:-5]}-{i}" for p, i, _ in ROCBLAS])
def test_rocblas_source_solutions_on_the_strict_emulator(request, shared_dir, tmp_path, path, index, gfx):
    if not request.config.getoption("--slow"):
        pytest.skip("compiles a real rocBLAS source kernel: run with --slow")
    from tensile_asm.solution import load_solution_file
    from tensile_asm.source.build import link_source_kernel
    sol = load_solution_file(shared_dir / "data" / "logic" / "rocblas-asm_full" / path, index=index)
    arch = load_arch(gfx)
    co = tmp_path / "k.co"
    name = "Cijk_rocblas_source"
    link_source_kernel(sol, arch, name, co)
    contract = GemmKernelContract.from_solution(sol, name)
    d = sol.derived
    batch = 2 if contract.batched else 1
    sizes = [Size(1, 1, 1), Size(7, 5, 3, batch), Size(d.mt0 + 3, d.mt1 + 5, 2 * d.depth_u * d.global_split_u + 3)]
    runtime = EmulatedRuntime(strict=True)
    alphas = (-3, 7) if contract.dest_type == "I" else (1.5, -0.75)       # int32 alpha/beta: whole numbers
    beta = (-2 if contract.dest_type == "I" else 0.5) if contract.use_beta else 0.0
    results = verify_sizes(co, contract, sizes, alphas[0], beta, 5, runtime)
    results += verify_sizes(co, contract, [Size(13, 11, 17, batch)], alphas[1], 0.0, 6, runtime)
    bad = [(str(r.size), r.beta, r.max_rel_error, r.detail) for r in results if not r.passed]
    assert not bad, bad


@needs_hip
def test_emit_verify_inspect_take_a_source_solution(tmp_path, capsys):
    import yaml

    from tensile_asm.cli.main import main
    from tensile_asm.codeobject import read_code_object
    sol = tmp_path / "sol.yaml"
    sol.write_text(yaml.safe_dump(source(problem("s", tb=True)), default_flow_style=None))
    out = tmp_path / "out"
    assert main(["emit", "--arch", "gfx90a", "--solution", str(sol), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    names = sorted(p.name for p in out.iterdir())
    name = names[0].rsplit(".", 1)[0]
    assert names == [f"{name}.co", f"{name}.hip", f"{name}.s"] and "KernelLanguage: Source" in printed
    assert f"void __launch_bounds__(THREADS) {name}(" in (out / f"{name}.hip").read_text()
    assert name in read_code_object(out / f"{name}.co").kernels
    assert main(["verify", "--arch", "gfx90a", "--solution", str(sol), "--size", "17,9,5,2"]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out
    assert main(["inspect", "--arch", "gfx90a", "--solution", str(sol)]) == 0
    assert name in capsys.readouterr().out


def test_int8_reference_is_int32_arithmetic_modulo_2_32():
    from tensile_asm.benchmark.reference import integer_reference, make_instance
    inst = make_instance(3, 2, 5, 2, transpose_a=True, data_type="I8", dest_type="I", seed=3)
    a, b, c = (inst.view(t).astype(object) for t in "ABC")
    got = integer_reference(inst, 70000, -3)
    for q in range(2):
        for i in range(3):
            for j in range(2):
                exact = 70000 * sum(a[q, i, l] * b[q, l, j] for l in range(5)) - 3 * c[q, i, j]
                assert got[q, i, j] == (exact + 2**31) % 2**32 - 2**31


def test_a_target_no_installed_hip_compiler_knows_is_one_sentence(monkeypatch):
    from tensile_asm import toolchain_paths
    from tensile_asm.errors import ToolchainError
    if not toolchain_paths.shutil.which("clang++-19") or not Path("/usr/include/hip/hip_runtime.h").is_file():
        pytest.skip("Debian's clang++-19 and HIP headers are not installed")
    for var in ("TENSILE_ASM_HIP_CLANG", "ROCM_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(toolchain_paths, "DEBIAN_HIP_CLANGS", ("19",))
    monkeypatch.setattr(toolchain_paths.Path, "is_file",
                        lambda self, real=Path.is_file: not str(self).startswith("/opt/rocm") and real(self))
    toolchain_paths.find_hip_compiler.cache_clear()
    try:
        assert toolchain_paths.find_hip_compiler("gfx906").clang.endswith("clang++-19")
        with pytest.raises(ToolchainError, match=r"^no installed clang\+\+ compiles HIP for gfx950 \(clang\+\+-19 does not know it\)"):
            toolchain_paths.find_hip_compiler("gfx950")
    finally:
        toolchain_paths.find_hip_compiler.cache_clear()


# GlobalSplitU's helpers as source (source/helpers.py: what the cuda backend appends to a kernel's text), here
# compiled for AMD with the GEMM kernel into one code object, run in place of the assembly helpers
HELPER_CASES = {
    "SSS_NT_gsu_single_beta_only_gfx90a": ("gfx90a", source(problem("s", tb=True), GlobalSplitU=3,
                                                             GlobalSplitUAlgorithm="SingleBuffer")),
    "I8II_TN_pointer_array_gsu_single_beta_only_gfx906": ("gfx906", source(
        problem("i8", "i", "i", ta=True, strided=False), GlobalSplitU=2, GlobalSplitUAlgorithm="SingleBuffer")),
    "HHH_gsu_multiple_post_gsu_gfx942": ("gfx942", source(problem("h"), GlobalSplitU=2,
                                                           GlobalSplitUAlgorithm="MultipleBuffer")),
    "DDD_TN_pointer_array_gsu_multiple_post_gsu_gfx90a": ("gfx90a", source(
        problem("d", ta=True, strided=False), GlobalSplitU=3, GlobalSplitUAlgorithm="MultipleBuffer")),
    "BSS_gsu_multiple_post_gsu_gfx908": ("gfx908", source(problem("b", "s", "s"), GlobalSplitU=4,
                                                           GlobalSplitUAlgorithm="MultipleBuffer")),
}


@pytest.fixture(scope="module")
def built_with_source_helpers(tmp_path_factory):
    from concurrent.futures import ThreadPoolExecutor

    from tensile_asm import toolchain
    from tensile_asm.source.writer import write_source
    folder = tmp_path_factory.mktemp("helpers")

    def build(case):
        gfx, params = HELPER_CASES[case]
        sol = Solution.from_dict(params, where=case)
        assert sol.valid, (case, sol.rejection)
        arch, name = load_arch(gfx), "Cijk_source_" + case
        text = write_source(sol, name, helper=True)
        asm = toolchain.compile_hip(text, arch, f"{case}.hip")
        co = folder / f"{case}.co"
        toolchain.assemble_and_link(asm, arch, co, f"{case}.s")
        return sol, co, text
    with ThreadPoolExecutor(4) as pool:
        return dict(zip(HELPER_CASES, pool.map(build, HELPER_CASES)))


@needs_hip
@pytest.mark.parametrize("case", sorted(HELPER_CASES))
def test_source_gsu_helpers_match_the_reference_on_the_strict_emulator(built_with_source_helpers, case):
    sol, co, text = built_with_source_helpers[case]
    contract = GemmKernelContract.from_solution(sol, "Cijk_source_" + case)
    names = contract.helper_names()      # every variant: the one the launch picks comes from the text, not asm
    assert all(f" {name}(" in text for name in names) and text.count("__global__") == 1 + len(names)
    d = sol.derived
    batch = 2 if contract.batched else 1
    runtime = EmulatedRuntime(strict=True)
    integer = contract.dest_type == "I"
    sizes = [Size(1, 1, 1), Size(d.mt0 + 3, 67, 2 * d.depth_u * d.global_split_u + 5, batch)]
    results = verify_sizes(co, contract, sizes, -3 if integer else 1.5, -2 if integer else 0.5, 11, runtime)
    # an even M past 512 elements: on the emulator's 1-CU device the host picks the VW2 conversion where there is one
    results += verify_sizes(co, contract, [Size(13, 11, 17, batch), Size(2 * d.mt0 + 2, 37, 9, batch)],
                            7 if integer else -0.75, 0.0, 12, runtime)
    bad = [(str(r.size), r.beta, r.max_rel_error, r.detail) for r in results if not r.passed]
    assert not bad, bad
