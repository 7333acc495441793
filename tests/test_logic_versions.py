"""Logic files of every Tensile version read: keys of older and newer versions, derived values another version
derives differently, ProblemTypes of other versions (docs/logic-versions.md).

The fast tests read one real solution per problem class (tests/data/logic_versions.yaml, copied from rocBLAS's
logic by tools/logic_versions_sample.py); ``--slow`` walks every logic file in ../shared/data/logic.
"""

import collections
import time
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from tensile_asm.isa.arch import load_arch
from tensile_asm.library.fileio import dump_yaml
from tensile_asm.library.logic import read_logic_file
from tensile_asm.problem import ProblemType
from tensile_asm.solution import Solution, min_names
from tensile_asm.solution.catalogue import ALIASES, DERIVED_KEYS, FILE_WINS, LEGACY_KEYS, PARAMS
from tensile_asm.solution.derive import isa_from_arch
from tensile_asm.solution.naming import nameable
from tensile_asm.writer.build import supports

SAMPLE = Path(__file__).resolve().parent / "data" / "logic_versions.yaml"
LOGIC = Path(__file__).resolve().parents[2] / "shared" / "data" / "logic"


@lru_cache(maxsize=None)
def cases() -> dict:
    return {(c["file"].rsplit("/", 1)[1], c["index"]): c for c in yaml.load(SAMPLE.read_text(),
                                                                             Loader=yaml.CSafeLoader)}


def read(name: str, index: int) -> Solution:
    c = cases()[(name, index)]
    pt = ProblemType.from_dict(c["ProblemType"], f"{name}: ProblemType")
    raw = dict(c["solution"])
    if raw.get("KernelLanguage") == "Assembly":
        raw["ISA"] = isa_from_arch(c["architecture"])
    return Solution.from_dict(raw, where=f"{name}: solution {index}", problem_type=pt, defaults_from="tensile",
                              version=c["version"])


def test_every_key_of_the_sample_is_known_to_the_catalogue():
    for c in cases().values():
        for key in c["solution"]:
            assert key == "ProblemType" or key in PARAMS or key in DERIVED_KEYS or key in LEGACY_KEYS \
                or key in ALIASES, (c["file"], key)


def test_parameters_of_other_versions_read_with_their_meaning():
    s = read("vega10_Cijk_Ailk_Bljk_DB.yaml", 1)  # Tensile 4.6 spelled it SuppresssNoLoadLoop
    assert cases()[("vega10_Cijk_Ailk_Bljk_DB.yaml", 1)]["solution"]["SuppresssNoLoadLoop"] is True
    assert "SuppresssNoLoadLoop" not in s.params and "SuppresssNoLoadLoop" not in s.legacy
    assert s.params["SuppressNoLoadLoop"] is True  # the derivation keeps it: buffer loads, PGR, GSU 1
    zb = read("aldebaran_Cijk_Ailk_Bljk_ZB.yaml", 162)  # 4.28: newer parameters, speed and selection only
    assert (zb.params["AssertAIGreaterThanEqual"], zb.params["AssertAILessThanEqual"], zb.params["DebugStreamK"],
            zb.params["StreamKXCCMapping"], zb.params["DelayRemainingArguments"]) == (-1, -1, 0, 0, False)
    lm = read("arcturus_Cijk_Alik_Bljk_SB.yaml", 0)  # 4.20's LinearModel annotation is kept, not a parameter
    assert isinstance(lm.legacy["LinearModel"], dict) and not nameable("LinearModel")
    assert not nameable("allowLRVWforTLUandMI") and not nameable("InstSplit")  # Tensile 4.44 names neither
    old = read("arcturus_Cijk_Alik_Bljk_BBS_BH.yaml", 13)  # 4.14's InstSplit parameter and MIWG derived keys
    assert {"InstSplit", "MIWG0", "MIWG1", "_NumElemPerMfmaInput"} <= old.legacy.keys()
    assert read("aldebaran_Cijk_Alik_Bljk_DB.yaml", 5).legacy["allowLRVWforTLUandMI"] is False
    assert read("aquavanjaram942_Cijk_Ailk_Bljk_BBS_BH.yaml", 34).params["ExtraLatencyForLR"] == -20  # 4.36


def test_problem_types_of_other_versions():
    # Tensile 4.7 wrote IndexAssignmentLDA/B/C into each solution's own ProblemType
    dbs = read("vega20_Cijk_Ailk_Bljk_DB.yaml", 36)
    assert "IndexAssignmentLDA" in cases()[("vega20_Cijk_Ailk_Bljk_DB.yaml", 36)]["solution"]["ProblemType"]
    assert dbs.problem_type.name == "Cijk_Ailk_Bljk_DB"
    # a TensorContraction: Tensile's default IndexAssignmentsLD [3, 4, 5, 6] with NumIndicesLD 0
    tc = read("aquavanjaram942_Cijk_Ailk_Bljk_SBIIc.yaml", 0)
    pt = tc.problem_type
    assert (pt.operation_type, pt.name, pt.index_assignments_ld) == ("TensorContraction", "Cijk_Ailk_Bljk_SBIIc",
                                                                     (3, 4, 5, 6))
    assert tc.valid and supports(tc, load_arch("gfx942")) is None


def diff(name: str, index: int) -> dict:
    return read(name, index).stored_differences


def test_stored_values_of_older_rules_are_recorded_and_recomputed():
    # FractionalLoad's width search (4.6-4.7): Tensile 4.44 derives another width, as we do
    assert diff("vega20_Cijk_Ailk_Bljk_DB.yaml", 66)["GlobalLoadVectorWidthA"] == (2, 1)
    # 4.6 computed GuaranteeNoPartial for the non-TLU operand too; 4.44 only for the TLU one
    assert diff("vega10_Cijk_Alik_Bljk_DB.yaml", 0)["GuaranteeNoPartialA"] == (False, True)
    # 4.31 counted LocalSplitU's reduction in A/B elements; 4.44 in compute-type bytes (HHS: twice)
    assert diff("aldebaran_Cijk_Ailk_Bljk_HHS_BH.yaml", 241)["LdsNumElements"] == (1280, 2048)
    # 4.23's MFMA global loads were 4 wide where 4.44 derives GlobalReadVectorWidth
    assert diff("arcturus_Cijk_Ailk_Bljk_BSS_BH.yaml", 2)["GlobalLoadVectorWidthA"] == (4, 8)


def test_values_our_derivation_now_takes_from_tensile_444():
    # LdsNumElements: the occupancy floor is 64 KiB / MaxOccupancy in C/D elements (HSS: 409, not 819) ...
    hss = read("vega20_Cijk_Ailk_Bljk_HSS_BH.yaml", 48)
    assert hss.stored_differences == {} and hss.derived_keys["LdsNumElements"] == 512
    # ... and the LocalSplitU reduction in compute-type bytes (BBS: 2 x 16 x 4 x 32)
    bbs = read("aldebaran_Cijk_Ailk_Bljk_BBS_BH.yaml", 203)
    assert "LdsNumElements" not in bbs.stored_differences and bbs.derived_keys["LdsNumElements"] == 4096
    # complex float MFMA: 4 outputs of one register each (only f64 outputs are 1 x 2 registers)
    cb = read("aldebaran_Cijk_Ailk_Bljk_CB.yaml", 0)
    assert (cb.derived_keys["MIOutputVectorWidth"], cb.derived_keys["MIRegPerOut"]) == (4, 1)
    assert not {"MIOutputVectorWidth", "MIRegPerOut"} & cb.stored_differences.keys()


def test_rules_of_older_writers_the_stored_values_show_are_the_kernel_s():
    # ScheduleIterAlg 2 with 1LDSBuffer 0 (a 4.21 solution; 4.25+ force and store 1LDSBuffer 1): two LDS
    # buffers, LdsNumElements = LdsOffsetB_Blk + B as stored, in a 4.21 file and copied into a 4.37 one
    for name in ("aldebaran_Cijk_Ailk_Bljk_CB.yaml", 0), ("aquavanjaram942_Cijk_AlikC_Bljk_CB.yaml", 7):
        cb = read(*name)
        raw = cases()[name]["solution"]
        assert raw["ScheduleIterAlg"] == 2 and raw["1LDSBuffer"] == 0 and cb.params["1LDSBuffer"] == 0
        assert cb.derived_keys["LdsNumElements"] == raw["LdsNumElements"] > raw["LdsOffsetB_Blk"]
        assert "LdsNumElements" not in cb.stored_differences and supports(cb, load_arch("gfx90a")) is None
    # the same solution as a tuning config states it (not a logic file): Tensile 4.44's forced single buffer
    raw = dict(cases()[("aldebaran_Cijk_Ailk_Bljk_CB.yaml", 0)]["solution"], ISA=[9, 0, 10])
    pt = ProblemType.from_dict(cases()[("aldebaran_Cijk_Ailk_Bljk_CB.yaml", 0)]["ProblemType"], "pt")
    tuned = Solution.from_dict({k: v for k, v in raw.items() if k in PARAMS}, problem_type=pt, defaults_from="ours")
    assert tuned.params["1LDSBuffer"] == 1 and tuned.derived_keys["LdsNumElements"] < raw["LdsNumElements"]
    # the single LdsBlockSizePerPad -1 of a writer before 4.19: LdsPadB after each of the 8 rows of 128
    bbs = read("aldebaran_Cijk_Ailk_Bljk_BBS_BH_GB.yaml", 10)
    raw = cases()[("aldebaran_Cijk_Ailk_Bljk_BBS_BH_GB.yaml", 10)]["solution"]
    assert "LdsBlockSizePerPadB" not in raw and raw["LdsBlockSizePerPad"] == -1
    assert bbs.params["LdsBlockSizePerPadB"] == 0 and bbs.derived_keys["LdsNumElements"] == raw["LdsNumElements"]
    assert {"SubGroup0", "ThreadTile1"} <= bbs.stored_differences.keys()  # 4.14's orientation: recorded
    assert supports(bbs, load_arch("gfx90a")) is None
    # TransposeLDS 1 stored beside UnrollMajorLDSB 0 and the name's TLDS0, which no version derives: the
    # parameters were edited after the derivation; every Tensile derives again (B unroll-major: 384, not 288)
    db = read("aldebaran_Cijk_Ailk_Bljk_DB.yaml", 271)
    from tensile_asm.solution import writer_rules
    from tensile_asm.writer import build

    assert writer_rules.TLDS_EDITED_AFTER_DERIVATION in db.older_rules
    assert db.stored_differences["LdsNumElements"] == (288, 384) and build._stored_reason(db) is None
    assert writer_rules.TLDS_EDITED_AFTER_DERIVATION not in bbs.older_rules | cb.older_rules


def test_the_file_s_global_accumulation_is_kept_as_tensile_keeps_it():
    assert FILE_WINS == {"_GlobalAccumulation", "_WorkspaceSizePerElemC"}
    hhs = read("vega20_Cijk_Alik_Bljk_HHS_BH.yaml", 80)  # 4.6 wrote False for "none"
    assert hhs.derived_keys["_GlobalAccumulation"] is None and hhs.derived.global_accumulation is None
    db = read("aldebaran_Cijk_Alik_Bljk_DB_GB.yaml", 0)  # 4.7: GSU > 1, MultipleBuffer, stored None
    raw = cases()[("aldebaran_Cijk_Alik_Bljk_DB_GB.yaml", 0)]["solution"]
    assert raw["GlobalSplitU"] > 1 and raw["GlobalSplitUAlgorithm"] == "MultipleBuffer"
    assert db.derived.global_accumulation is None and db.derived_keys["_WorkspaceSizePerElemC"] == 0
    assert db.stored_differences == {}


def test_an_mfma_derivation_the_file_contradicts_is_a_kernel_reason(monkeypatch):
    # 4.31, GlobalReadVectorWidth -1: Tensile 4.44 starts from the file's GlobalLoadVectorWidthA (a parameter
    # for it), so it derives what the file stores, and so do we
    s = read("aquavanjaram942_Cijk_Ailk_Bljk_SB.yaml", 61)
    assert s.valid and "GlobalLoadVectorWidthA" not in s.stored_differences
    from tensile_asm.writer import build

    assert build._stored_reason(s) is None
    # 4.23 stored the width its own rule gave (4); 4.44 and we derive 8 from GlobalReadVectorWidth 8: recorded,
    # built as 4.44 builds it (build.MFMA_KEYS_AS_444)
    s = read("arcturus_Cijk_Ailk_Bljk_BSS_BH.yaml", 2)
    assert s.valid and s.stored_differences["GlobalLoadVectorWidthA"] == (4, 8)
    assert build._stored_reason(s) is None
    # a stored LDS key our derivation contradicts stays a kernel reason
    c = cases()[("arcturus_Cijk_Ailk_Bljk_BSS_BH.yaml", 2)]
    raw = dict(c["solution"], ISA=isa_from_arch(c["architecture"]), LdsNumElements=12345)
    wrong = Solution.from_dict(raw, problem_type=ProblemType.from_dict(c["ProblemType"], "pt"),
                               defaults_from="tensile", version=c["version"])
    ours = wrong.derived_keys["LdsNumElements"]
    assert build._stored_reason(wrong) == (f"MFMA derived key LdsNumElements is 12345 in the file (written by Tensile "
                                           f"4.23.0) but {ours} by this derivation; MFMA kernels are built only where "
                                           f"the two agree")
    assert build._stored_reason(read("vega20_Cijk_Ailk_Bljk_DB.yaml", 66)) is None  # VALU: built as Tensile does


def test_4x4_mfma_tiles_are_derived_as_tensile_444():
    # a 4x4 MFMA shape (16 blocks): ThreadTile0 = MIWaveTile0 x MIOutputVectorWidth, SubGroup0 = MIWaveGroup0 x
    # 4 x MatrixInstBM / MIOutputVectorWidth; Tensile named it MT8x8x16 (its SolutionNameMin)
    bad = read("aldebaran_Cijk_AlikC_Bljk_ZB.yaml", 28)
    good = read("aldebaran_Cijk_Ailk_Bljk_ZB.yaml", 162)
    assert bad.valid and bad.stored_differences == {}
    assert (bad.derived_keys["MacroTile0"], bad.derived_keys["MacroTile1"]) == (8, 8)
    assert bad.stored_name.startswith("Cijk_AlikC_Bljk_ZB_MT8x8x16_MI4x4x4x4_SN_")
    # the complex MFMA writer builds Z; the 4x4x4f64 shape (16 blocks of fp64) is what it refuses here
    assert supports(bad, load_arch("gfx90a")).startswith("MatrixInstruction [4, 4, 4, 4]: f64 MFMAs of several blocks")
    names = min_names([good, bad], kernel=True)
    assert names[0].startswith("Cijk_Ailk_Bljk_ZB_MT128x32x16_MI16x16x4x1_SN_")
    assert names[1].startswith("Cijk_AlikC_Bljk_ZB_MT8x8x16_MI4x4x4x4_SN_")


def test_mfma_shapes_as_tensile_444_lists_them():
    def mfma(dt, mi, **types):
        return Solution.from_dict({"ProblemType": {"OperationType": "GEMM", "DataType": dt, "Batched": True, **types},
                                   "MatrixInstruction": mi, "WorkGroup": [64, 4, 1], "ThreadTile": [1, 32],
                                   "DepthU": 16, "KernelLanguage": "Assembly"}, defaults_from="tensile")
    hpa = {"DestDataType": "b", "ComputeDataType": "s", "HighPrecisionAccumulate": True}
    for mi in ([32, 32, 4, 1], [32, 32, 8, 1]):  # bf16: the original shape and the 1k one (MFMA_BF16_1K)
        assert mfma("b", mi, **hpa).valid, mi
    assert mfma("s", [32, 32, 4, 1], F32XdlMathOp="x").valid  # xf32 MFMA for an S problem with F32XdlMathOp
    assert "not an MFMA shape for data type S" in mfma("s", [32, 32, 4, 1]).rejection


def test_tile_sides_tensile_checks_only_in_tuning_configs():
    # Tensile checks MacroTile sides against its list when it reads a tuning config, not a logic file
    raw = {"ProblemType": {"OperationType": "GEMM", "DataType": "s", "Batched": True}, "WorkGroup": [8, 8, 1],
           "ThreadTile": [5, 3], "DepthU": 8, "KernelLanguage": "Assembly", "VectorWidth": 1,
           "GlobalReadVectorWidth": 1}
    assert "MacroTile 40x24 is not allowed" in Solution.from_dict(raw).rejection  # a config of ours
    s = Solution.from_dict(raw, defaults_from="tensile")  # the same in a logic file
    assert s.valid and (s.derived.mt0, s.derived.mt1) == (40, 24)
    assert supports(s, load_arch("gfx906")) is None   # the VALU writer builds any WorkGroup x ThreadTile side


def test_a_logic_file_of_sampled_solutions_reads_whole(tmp_path):
    # the list form through read_logic_file, one file per sampled ProblemType
    by_pt = collections.defaultdict(list)
    for c in cases().values():
        by_pt[(c["file"].rsplit("/", 1)[1], c["version"])].append(c)
    for (name, version), group in by_pt.items():
        c = group[0]
        doc = [{"MinimumRequiredVersion": version}, name.split("_")[0], c["architecture"], ["x"], c["ProblemType"],
               [g["solution"] for g in group], [0, 1, 2, 3], [[[64, 64, 1, 64], [0, 1.0]]], None, None,
               "DeviceEfficiency"]
        path = tmp_path / name
        path.write_text(dump_yaml(doc))
        lf = read_logic_file(path)
        assert lf.failures == [] and len(lf.solutions) == len(group) and lf.version == version
        assert all(s.version == version for s in lf.solutions)


def test_every_logic_file_reads_without_a_reading_refusal(request):
    if not request.config.getoption("--slow"):
        pytest.skip("walks every logic file (minutes); run with --slow")
    files = sorted(LOGIC.rglob("*.yaml"))
    if not files:
        pytest.skip(f"no logic files under {LOGIC}")
    start, solutions, refusals, valid, differences = time.perf_counter(), 0, [], 0, collections.Counter()
    for path in files:
        lf = read_logic_file(path)  # a crash fails the test
        assert lf.problem_type_error is None, lf.problem_type_error
        solutions += len(lf.entries)
        refusals += [e.error for e in lf.entries if e.error]
        valid += sum(s.valid for s in lf.solutions)
        differences.update(k for s in lf.solutions for k in s.stored_differences)
    print(f"\nlogic files {len(files)}, solutions {solutions}, crashes 0, reading refusals {len(refusals)}, "
          f"valid {valid}, with stored derived values of another rule "
          f"{sum(1 for _ in differences.elements())} ({len(differences)} keys), {time.perf_counter() - start:.0f} s")
    assert refusals == []
