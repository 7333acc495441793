from pathlib import Path

import pytest
from _tensile_data import raw_logic

from tensile_asm.errors import UserError
from tensile_asm.problem import ProblemType
from tensile_asm.solution import PARAMS, Solution, load_solution_file
from tensile_asm.solution.catalogue import DERIVED_KEYS, LEGACY_KEYS, defaults

SHARED = Path(__file__).resolve().parents[2] / "shared"
LOGIC = SHARED / "data" / "logic"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared reference data not found at {SHARED}")

NN = ProblemType.from_dict({"DataType": "s", "TransposeA": False, "TransposeB": False, "Batched": True})

# The ~35 parameters of tensile-formats.md §1.6 (and their abbreviations).
SECTION_1_6 = {
    "KernelLanguage": "KL", "WorkGroup": "WG", "ThreadTile": "TT", "MacroTile": "MT", "MatrixInstruction": "MI",
    "DepthU": "DU", "DepthULdsDivisor": "DULD", "VectorWidth": "VW", "VectorWidthB": "VWB",
    "GlobalReadVectorWidth": "GRVW", "LocalReadVectorWidth": "LRVW", "StoreVectorWidth": "SVW",
    "StoreRemapVectorWidth": "SRVW", "PrefetchGlobalRead": "PGR", "PrefetchLocalRead": "PLR", "1LDSBuffer": "1LDSB",
    "GlobalSplitU": "GSU", "GlobalSplitUAlgorithm": "GSUA", "GlobalSplitUSummationAssignmentRoundRobin": "GSUSARR",
    "GlobalSplitUWorkGroupMappingRoundRobin": "GSUWGMRR", "MinKForGSU": "MKFGSU", "WorkGroupMapping": "WGM",
    "WorkGroupMappingType": "WGMT", "StaggerU": "SU", "StaggerUStride": "SUS", "StaggerUMapping": "SUM",
    "TransposeLDS": "TLDS", "LdsPadA": "LPA", "LdsPadB": "LPB", "LdsBlockSizePerPadA": "LBSPPA",
    "LdsBlockSizePerPadB": "LBSPPB", "EdgeType": "ET", "InnerUnroll": "IU", "ScheduleIterAlg": "SIA",
    "ScheduleGlobalRead": "SGR", "ScheduleLocalWrite": "SLW", "GlobalReadPerMfma": "GRPM", "LocalWritePerMfma": "LWPM",
    "ExpandPointerSwap": "EPS", "OptNoLoadLoop": "ONLL", "SuppressNoLoadLoop": "SNLL", "SourceSwap": "SS",
    "MIArchVgpr": "MIAV", "WaveSeparateGlobalReadA": "WSGRA", "WaveSeparateGlobalReadB": "WSGRB",
    "DirectToLdsA": "DTLA", "DirectToLdsB": "DTLB", "DirectToVgprA": "DTVA", "DirectToVgprB": "DTVB",
    "BufferLoad": "BL", "BufferStore": "BS", "UseSgprForGRO": "USFGRO", "NumLoadsCoalescedA": "NLCA",
    "NumLoadsCoalescedB": "NLCB", "FractionalLoad": "FL", "PersistentKernel": "PK", "StreamK": "SK",
    "PreloadKernelArguments": "PKA", "MACInstruction": "", "WavefrontSize": "WS", "MaxOccupancy": "MO",
    "MagicDivAlg": "MDA", "AssertSummationElementMultiple": "ASEM", "AssertFree0ElementMultiple": "AF0EM",
    "AssertFree1ElementMultiple": "AF1EM", "AssertSizeEqual": "ASE", "AssertStrideAEqual": "ASAE",
    "AssertAlphaValue": "AAV", "AssertBetaValue": "ABV", "AssertCEqualsD": "ACED", "LdcEqualsLdd": "LEL",
    "CustomKernelName": "CKN",
}


def logic(path):
    return raw_logic(Path(path))


def sol(**kw) -> Solution:
    return Solution.from_dict(kw, where="test.yaml", problem_type=NN)


def test_catalogue_covers_section_1_6_with_abbreviations():
    for name, abbrev in SECTION_1_6.items():
        assert name in PARAMS, name
        assert PARAMS[name].abbrev == abbrev, name
        assert PARAMS[name].meaning


def test_catalogue_defaults_are_allowed_values():
    for name, p in PARAMS.items():
        for value in (p.tensile_default, p.default):
            if value is not None:
                assert p.allowed(value), (name, value)


def test_our_defaults_are_tensiles_where_the_writer_builds_them():
    ours, tensile = defaults("ours"), defaults("tensile")
    same = {"PrefetchGlobalRead": 1, "PrefetchLocalRead": 1, "WorkGroupMapping": 8, "StaggerU": 32,
            "StaggerUStride": 256, "VectorWidth": -1, "GlobalReadVectorWidth": -1, "DepthU": -1,
            "EdgeType": "Branch", "GlobalSplitU": 1, "1LDSBuffer": 0, "WorkGroup": [16, 16, 1], "ThreadTile": [4, 4]}
    for name, value in same.items():
        assert ours[name] == tensile[name] == value, name
    # Only where the writer cannot build Tensile's default (or would not honour it) do ours differ.
    differ = {name: (ours[name], tensile[name]) for name in ours if ours[name] != tensile[name]}
    assert differ == {"KernelLanguage": ("Assembly", "Source"), "LdsPadA": (0, -1), "LdsPadB": (0, -1),
                      "LdsBlockSizePerPadA": (0, -1), "LdsBlockSizePerPadB": (0, -1),
                      "ExpandPointerSwap": (False, True), "OptNoLoadLoop": (0, 1), "UseSgprForGRO": (0, -1)}


def test_a_solution_of_defaults_builds_as_tensile_derives_it():
    s = Solution.from_dict({}, where="empty.yaml", problem_type=NN).validate()
    d = s.derived
    # Tensile's DepthU -1 search: the first even DepthU whose loads are width 1 (MT 64 x 4 = 256 threads).
    assert (d.mt0, d.mt1, d.depth_u, d.vector_width, d.glvw_a, d.glvw_b) == (64, 64, 4, 4, 1, 1)
    assert s.params["PrefetchGlobalRead"] == 1 and d.lds_offset_a_blk is not None


def test_automatic_depth_u_without_a_value_says_how_to_fix_it():
    s = sol(WorkGroup=[16, 16, 1], ThreadTile=[4, 12])
    with pytest.raises(UserError, match=r"no valid DepthU found for DepthU -1 .*; set DepthU, e.g. DepthU: 16"):
        s.validate()


@needs_shared
def test_every_key_in_the_lite_configs_is_known():
    for path in sorted((LOGIC / "lite_configs").glob("*.yaml")):
        for s in logic(str(path))[5]:
            unknown = [k for k in s if k != "ProblemType" and k not in PARAMS and k not in DERIVED_KEYS
                       and k not in LEGACY_KEYS]
            assert not unknown, (path.name, unknown)


def test_derived_values_for_a_simple_valu_solution():
    d = sol(WorkGroup=[16, 16, 1], ThreadTile=[4, 4], DepthU=16, VectorWidth=1, GlobalReadVectorWidth=1,
            PrefetchGlobalRead=0).validate().derived
    assert (d.wg0, d.wg1, d.local_split_u, d.tt0, d.tt1, d.mt0, d.mt1) == (16, 16, 1, 4, 4, 64, 64)
    assert (d.depth_u, d.num_threads, d.vector_width, d.glvw_a, d.glvw_b, d.loop_unroll) == (16, 256, 1, 1, 1, 16)
    assert (d.num_loads_a, d.num_loads_b) == (4, 4)
    assert (d.lds_offset_b, d.lds_num_elements, d.lds_bytes) == (1024, 2048, 8192)
    assert d.lds_offset_a_blk is None  # no prefetch buffer without PrefetchGlobalRead


def test_prefetch_doubles_the_lds_buffers():
    d = sol(WorkGroup=[16, 16, 1], ThreadTile=[8, 4], DepthU=8, PrefetchGlobalRead=1).derived
    # Tensile's layout: A at 0, B after A, second buffers from the next power of two
    assert (d.lds_offset_b, d.lds_offset_a_blk, d.lds_offset_b_blk, d.lds_num_elements) == (1024, 2048, 3072, 3584)


def test_local_split_u_and_auto_values():
    s = sol(WorkGroup=[8, 8, 4], ThreadTile=[4, 4], DepthU=16, VectorWidth=-1, GlobalReadVectorWidth=-1)
    assert s.derived.local_split_u == 4 and s.derived.loop_unroll == 4
    assert s.params["VectorWidth"] == 4 and s.params["GlobalReadVectorWidth"] == 4
    assert s.derived.lds_num_elements == 4 * 32 * 32  # the LocalSplitU reduction needs the most LDS
    assert sol(DepthU=-1).derived.depth_u == 4  # automatic DepthU: first valid even value with GLVW 1


@pytest.mark.parametrize("kw,reason", [
    (dict(WorkGroup=[32, 32, 2]), r"WorkGroup \[32, 32, 2\] has 2048 threads; a work-group needs 32..1024"),
    (dict(ThreadTile=[5, 4]), r"MacroTile 80x64 is not allowed"),
    (dict(WorkGroup=[4, 4, 2], ThreadTile=[8, 8], DepthU=3, PrefetchLocalRead=0, GlobalReadVectorWidth=1),
     r"DepthU 3 is not divisible by LocalSplitU 2"),
    (dict(WorkGroup=[16, 16, 1], ThreadTile=[2, 2], DepthU=2),
     r"NumLoadsA is not integral: MacroTileA 32 x DepthU 2 = 64 elements are not a multiple of NumThreads 256"),
    (dict(ThreadTile=[16, 16], DepthU=64, PrefetchGlobalRead=0), r"the kernel needs 131072 bytes of LDS, more than 65536"),
    (dict(ThreadTile=[4, 6], VectorWidth=4), r"ThreadTile0 4 or ThreadTile1 6 is not a multiple of VectorWidth 4"),
    (dict(MacroTileShapeMax=2, ThreadTile=[8, 2]), r"MacroTile 128x32 has shape ratio 4"),
])
def test_validate_gives_one_readable_reason(kw, reason):
    s = sol(**kw)
    assert not s.valid
    with pytest.raises(UserError, match=r"test.yaml: invalid solution: " + reason):
        s.validate()


def test_loop_unroll_1_is_valid_as_in_tensile_444_and_a_kernel_reason_of_the_valu_writer():
    # Tensile rejected LoopUnroll < 2 only before 4.17; rocBLAS ships LoopUnroll 1 Source kernels (HHS MT4x16x16,
    # LocalSplitU 16), built by the source writer. The assembly VALU writer refuses it with a kernel reason.
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.writer.build import supports

    s = sol(WorkGroup=[8, 8, 2], ThreadTile=[8, 8], DepthU=2)
    assert s.valid and s.derived.loop_unroll == 1
    assert supports(s, load_arch("gfx906")).startswith("LoopUnroll 1 (DepthU 2 / LocalSplitU 2 / InnerUnroll 1)")


def test_a_valid_solution_validates_to_itself():
    s = sol(WorkGroup=[16, 16, 1], ThreadTile=[4, 12], VectorWidth=4, DepthU=16)
    assert s.validate() is s and s.rejection is None


def test_unknown_parameter_names_file_key_and_nearest():
    with pytest.raises(UserError, match=r"cfg.yaml: unknown solution parameter 'WorkGroupp'; did you mean WorkGroup\?"):
        Solution.from_dict({"WorkGroupp": [16, 16, 1]}, where="cfg.yaml", problem_type=NN)


def test_invalid_value_names_key_value_and_allowed():
    with pytest.raises(UserError, match=r"cfg.yaml: PrefetchGlobalRead 3 is not allowed; use one of 0, 1, 2"):
        Solution.from_dict({"PrefetchGlobalRead": 3}, where="cfg.yaml", problem_type=NN)


def test_problem_type_comes_from_the_dict_or_the_caller():
    s = Solution.from_dict({"ProblemType": {"DataType": "s", "TransposeA": True, "TransposeB": False,
                                            "Batched": True}, "DepthU": 8})
    assert s.problem_type.name == "Cijk_Alik_Bljk_SB"
    with pytest.raises(UserError, match="no ProblemType"):
        Solution.from_dict({"DepthU": 8}, where="x.yaml")
    with pytest.raises(UserError, match="differs from the file's"):
        Solution.from_dict({"ProblemType": {"DataType": "d", "Batched": True}}, problem_type=NN)


@needs_shared
@pytest.mark.parametrize("path", sorted(str(p) for p in LOGIC.glob("*/*.yaml")) if LOGIC.is_dir() else [])
def test_logic_file_solutions_recompute_their_derived_keys(path):
    data = logic(path)
    pt = ProblemType.from_dict(data[4], path)
    checked = 0
    for i, raw in enumerate(data[5]):
        s = Solution.from_dict(raw, where=f"{path}: solution {i}", problem_type=pt, defaults_from="tensile")
        for key in ("MacroTile0", "MacroTile1", "LdsNumElements", "NumLoadsA", "LSPB", "GlobalLoadVectorWidthA"):
            if key in raw:  # (4.24's TensorContraction files leave some out)
                assert s.derived_keys[key] == raw[key], (i, key)
                checked += 1
        assert s.stored_differences == {}, i
        assert s.valid, (i, s.rejection)
        assert s.index == i and s.stored_name == raw["SolutionNameMin"]
    assert checked >= 4 * len(data[5])


@needs_shared
def test_a_stored_derived_key_that_differs_is_recorded_and_recomputed():
    # Tensile's TensileCreateLibrary re-derives every key on reading (an older version's rule is not an error)
    data = logic(str(LOGIC / "lite_configs/aldebaran_Cijk_Ailk_Bljk_SB.yaml"))
    pt = ProblemType.from_dict(data[4])
    clean = Solution.from_dict(data[5][0], where="sol0", problem_type=pt, defaults_from="tensile")
    raw = dict(data[5][0], LdsNumElements=data[5][0]["LdsNumElements"] + 1, NumLoadsA=7)
    s = Solution.from_dict(raw, where="sol0", problem_type=pt, defaults_from="tensile", version="4.6.0")
    assert s.stored_differences == {"LdsNumElements": (3585, 3584), "NumLoadsA": (7, clean.derived_keys["NumLoadsA"])}
    assert s.valid and s.derived == clean.derived and s.version == "4.6.0" and clean.stored_differences == {}


@needs_shared
def test_the_global_accumulation_a_file_stores_is_kept_as_tensile_keeps_it():
    # Tensile 4.44 derives _GlobalAccumulation/_WorkspaceSizePerElemC only when the file lacks them
    data = logic(str(LOGIC / "lite_configs/aldebaran_Cijk_Ailk_Bljk_SB.yaml"))
    pt = ProblemType.from_dict(data[4])
    raw = dict(data[5][0], GlobalSplitU=4, GlobalSplitUAlgorithm="MultipleBuffer")
    for k in ("_GlobalAccumulation", "_WorkspaceSizePerElemC", "ProblemType"):
        raw.pop(k, None)
    derived = Solution.from_dict(raw, problem_type=pt, defaults_from="tensile")
    assert derived.derived.global_accumulation == "MultipleBuffer" and derived.derived_keys["_WorkspaceSizePerElemC"] == 16
    for stored in (None, False):  # False: Tensile 4.6's spelling of none
        s = Solution.from_dict(dict(raw, _GlobalAccumulation=stored, _WorkspaceSizePerElemC=0), problem_type=pt,
                               defaults_from="tensile")
        assert s.derived.global_accumulation is None and s.derived_keys["_GlobalAccumulation"] is None
        assert s.derived_keys["_WorkspaceSizePerElemC"] == 0 and s.stored_differences == {}
    # HPA with a C/D type other than the compute type needs a SingleBuffer workspace; int8's I/I does not;
    # and Tensile rejects GSU SingleBuffer for HSS (no workspace, no atomics on its types in a VALU kernel)
    def gsu_single(**types):
        pt2 = ProblemType.from_dict({**data[4], **types, "HighPrecisionAccumulate": True})
        return Solution.from_dict(dict(raw, GlobalSplitUAlgorithm="SingleBuffer"), problem_type=pt2,
                                  defaults_from="tensile")
    assert gsu_single(DataType="h", DestDataType="h", ComputeDataType="s").derived_keys["_GlobalAccumulation"] == \
        "SingleBuffer"
    int8 = gsu_single(DataType="i8", DestDataType="i", ComputeDataType="i")
    assert int8.derived_keys["_GlobalAccumulation"] is None and int8.derived_keys["_WorkspaceSizePerElemC"] == 0
    assert "GlobalSplitU > 1 does not support data type H without a workspace" in gsu_single(
        DataType="h", DestDataType="s", ComputeDataType="s").rejection


@needs_shared
def test_mfma_solutions_derive_tensile_tiles():
    data = logic(str(LOGIC / "rocblas/aldebaran_equality_Cijk_Ailk_Bljk_SB.yaml"))
    s = Solution.from_dict(data[5][0], problem_type=ProblemType.from_dict(data[4]), defaults_from="tensile")
    d = s.derived
    assert d.matrix_instruction == (32, 32, 2, 1) and d.mi_wave_group == (2, 2)
    assert (d.tt0, d.tt1, d.sg0, d.sg1, d.mt0, d.mt1, d.loop_iters) == (16, 1, 4, 64, 64, 64, 8)
    assert d.lds_num_elements == 6208  # LdsBlockSizePerPad padding of the unroll-major B tile


def test_to_logic_dict_round_trips():
    s = sol(WorkGroup=[16, 16, 1], ThreadTile=[8, 4], DepthU=8, PrefetchGlobalRead=1)
    d = s.to_logic_dict(index=3, name="x")
    assert d["SolutionIndex"] == 3 and d["SolutionNameMin"] == "x" and d["Valid"] is True
    assert d["ProblemType"]["DataType"] == 0 and d["LdsOffsetB_Blk"] == 3072
    back = Solution.from_dict(d, problem_type=NN)
    assert back.derived == s.derived and back.params == s.params


def test_load_solution_file_single_and_logic(tmp_path):
    one = tmp_path / "sol.yaml"
    one.write_text("ProblemType: {DataType: s, TransposeA: false, TransposeB: false, Batched: true}\n"
                   "WorkGroup: [8, 8, 1]\nThreadTile: [4, 4]\nDepthU: 8\n")
    s = load_solution_file(one)
    assert (s.derived.mt0, s.derived.depth_u) == (32, 8)
    with pytest.raises(UserError, match="index 2 is out of range"):
        load_solution_file(one, index=2)
    bad = tmp_path / "bad.yaml"
    bad.write_text("WorkGroup: [8, 8, 1]\nThreadTile: [4, 4\nDepthU: 8\n")
    with pytest.raises(UserError, match=r"bad.yaml:\d+: not valid YAML"):
        load_solution_file(bad)


@needs_shared
def test_load_solution_file_from_a_logic_file():
    path = LOGIC / "lite_configs/vega20_Cijk_Alik_Bljk_SB.yaml"
    assert load_solution_file(path, index=1).derived.mt0 == 8
    with pytest.raises(UserError, match=r"solution index 2 is out of range; the file has 2 solutions"):
        load_solution_file(path, index=2)
    with pytest.raises(UserError, match="say which one"):
        load_solution_file(path)


def _mfma_plr(**kw) -> Solution:
    tn = ProblemType.from_dict({"DataType": "s", "TransposeA": True, "TransposeB": False, "Batched": True})
    base = dict(MatrixInstruction=[16, 16, 4, 1], ThreadTile=[1, 32], WorkGroup=[64, 4, 1], ScheduleIterAlg=3,
                PrefetchGlobalRead=1, GlobalReadVectorWidth=1, VectorWidth=1, TransposeLDS=0)
    base.update(kw)
    return Solution.from_dict(base, where="test.yaml", problem_type=tn)


@pytest.mark.parametrize("du,plr,lrvw,expect", [
    # DepthU 32 / MatrixInstK 4 = LoopIters 8; the DepthU check (DepthU % (PLR % LoopIters + 1)) comes first
    (32, 5, 1, "not a multiple of PrefetchLocalRead % LoopIters + 1 = 6"),
    (32, 11, 1, "PrefetchLocalRead 11 % LoopIters 8 > 1"),
    (16, 9, 1, "PrefetchLocalRead 9 >= 2x LoopIters 4"),
    (32, 17, 1, "PrefetchLocalRead 17 >= 2x LoopIters 8"),
    (16, 8, 1, "PrefetchLocalRead 8 >= 2x LoopIters 4"),
    (32, 8, 1, "PrefetchLocalRead 8 with LoopIters 8 (a multiple)"),
    (16, 1, 4, "not enough LoopIters to prefetch 1x4"),
    (16, 5, 1, None), (16, 1, 1, None), (32, 9, 1, None), (32, 0, 1, None)])
def test_prefetch_local_read_against_loop_iters_is_tensile_444s_rule(du, plr, lrvw, expect):
    """SolutionStructs.py (4.44) assignDerivedParameters, after LoopIters is set: one place (derive), so the
    tuner, the writer's validation and create-library agree."""
    s = _mfma_plr(DepthU=du, PrefetchLocalRead=plr, LocalReadVectorWidth=lrvw, TransposeLDS=int(lrvw > 1))
    if expect is None:
        assert s.valid, s.rejection
    else:
        assert not s.valid and expect in s.rejection


def test_prefetch_local_read_rules_are_not_applied_to_logic_files():
    """TensileCreateLibrary only warns about them for a logic file and builds the kernel (rocBLAS's arcturus logic
    has PrefetchLocalRead 2 with LoopIters 2), so such a solution read from a logic file is valid."""
    tn = {"DataType": "s", "TransposeA": True, "TransposeB": False, "Batched": True, "OperationType": "GEMM"}
    d = dict(MatrixInstruction=[16, 16, 4, 1], ThreadTile=[1, 32], WorkGroup=[64, 4, 1], ScheduleIterAlg=3,
             PrefetchGlobalRead=1, GlobalReadVectorWidth=1, VectorWidth=1, DepthU=32, PrefetchLocalRead=11,
             LocalReadVectorWidth=1, ProblemType=tn)
    assert not Solution.from_dict(d, where="t.yaml").valid
    assert Solution.from_dict({**d, "SolutionIndex": 0}, where="t.yaml", defaults_from="tensile").valid


def test_one_lds_buffer_estimate_refuses_the_kernels_tensiles_writer_failed_on():
    """1LDSB.yaml's gfx908 winners MT64x32x16_MI16x16x4x1 with PrefetchLocalRead 5 and 1 (LoopIters 4, 1LDSBuffer):
    Tensile 4.44's TensileCreateLibrary failed on both with overflowedResources 5. Without 1LDSBuffer, or without a
    prefetch (no barrier inside the loop), the tile is not refused."""
    from tensile_asm.solution.one_lds_buffer import one_lds_buffer_rejection

    for plr in (5, 1):
        bad = _mfma_plr(DepthU=16, PrefetchLocalRead=plr, LocalReadVectorWidth=1, **{"1LDSBuffer": 1})
        assert bad.valid and "1LDSBuffer with ScheduleIterAlg 3" in one_lds_buffer_rejection(bad, "gfx908")
    for kw in ({"1LDSBuffer": 0}, {"1LDSBuffer": 1, "PrefetchLocalRead": 0}):
        ok = _mfma_plr(**{"DepthU": 16, "PrefetchLocalRead": 5, "LocalReadVectorWidth": 1, **kw})
        assert ok.valid and one_lds_buffer_rejection(ok, "gfx908") is None
