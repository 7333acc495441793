from pathlib import Path

import pytest
import yaml
from _tensile_data import logic_file

from tensile_asm.errors import UserError
from tensile_asm.library.logic import find_logic_files, read_logic_file, write_logic_file
from tensile_asm.problem import ProblemType
from tensile_asm.solution import Solution

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared"
LOGIC = SHARED / "data" / "logic"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared reference data not found at {SHARED}")
NN = ProblemType.from_dict({"DataType": "s", "TransposeA": False, "TransposeB": False, "Batched": True})

# solutions parsed / kept with a reason, exact sizes, for every shared logic file
EXPECTED = {f"lite_configs/{arch}_{pt}.yaml": (n, 0, 1024)
            for arch in ("aldebaran", "aquavanjaram942", "arcturus")
            for pt, n in (("Cijk_Ailk_Bjlk_SB", 8), ("Cijk_Ailk_Bljk_SB", 8), ("Cijk_Alik_Bjlk_SB", 8),
                          ("Cijk_Alik_Bljk_SB", 9))}
EXPECTED.update({"lite_configs/vega10_Cijk_Ailk_Bjlk_SB.yaml": (7, 0, 1024),
                 "lite_configs/vega10_Cijk_Ailk_Bljk_SB.yaml": (7, 0, 1024),
                 "lite_configs/vega10_Cijk_Alik_Bjlk_SB.yaml": (6, 0, 1024),
                 "lite_configs/vega10_Cijk_Alik_Bljk_SB.yaml": (8, 0, 1024),
                 "rocblas/aldebaran_Cijk_Ailk_Bljk_SBIIc.yaml": (5, 0, 12),
                 "rocblas/aldebaran_equality_Cijk_Ailk_Bljk_SB.yaml": (14, 0, 24)})
EXPECTED.update({f"lite_configs/vega20_{pt}.yaml": (2, 0, 1024)
                 for pt in ("Cijk_Ailk_Bjlk_SB", "Cijk_Ailk_Bljk_SB", "Cijk_Alik_Bjlk_SB", "Cijk_Alik_Bljk_SB")})


def read(rel: str):
    return logic_file(LOGIC / rel)


@needs_shared
def test_the_expected_files_are_all_there():
    assert sorted(str(p.relative_to(LOGIC)) for p in LOGIC.glob("*/*.yaml")) == sorted(EXPECTED)


@needs_shared
@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_every_shared_logic_file_reads(rel):
    lf = read(rel)
    parsed, failed, sizes = EXPECTED[rel]
    assert (len(lf.solutions), len(lf.failures), len(lf.exact_logic)) == (parsed, failed, sizes)
    assert lf.index_order == [2, 3, 0, 1]
    assert lf.architecture.startswith("gfx")
    for row in lf.exact_logic:
        assert len(row.sizes) in (4, 8) and 0 <= row.solution_index < len(lf.entries)
    assert lf.failures == []


@needs_shared
def test_list_form_details():
    lf = read("rocblas/aldebaran_equality_Cijk_Ailk_Bljk_SB.yaml")
    assert (lf.version, lf.schedule, lf.architecture, lf.distance, lf.perf_metric) == (
        "4.34.0", "aldebaran", "gfx90a", "Equality", "DeviceEfficiency")
    assert lf.exact_logic[0].sizes == (1024, 384, 1, 1024) and lf.exact_logic[0].solution_index == 3
    assert lf.exact_logic[0].perf == pytest.approx(48.778)
    assert all(s.params["ISA"] == [9, 0, 10] for s in lf.solutions)
    old = read("lite_configs/aldebaran_Cijk_Ailk_Bljk_SB.yaml")
    assert old.entries[0].raw["ISA"] == [9, 0, 8]  # written for gfx908, re-targeted by the architecture entry
    assert old.solutions[0].params["ISA"] == [9, 0, 10]
    assert old.exact_logic[0].sizes == (4, 2368, 1, 1792, 4, 4, 4, 1792)


def _write(tmp_path, doc, name="aldebaran_Cijk_Ailk_Bljk_SB.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return path


def _example_doc():
    s = Solution.from_dict({"WorkGroup": [16, 16, 1], "ThreadTile": [4, 4], "DepthU": 16}, problem_type=NN)
    return [{"MinimumRequiredVersion": "4.33.0"}, "aquavanjaram942",
            {"Architecture": "gfx942", "CUCount": 80, "IsAPU": 0}, ["Device 0"], NN.to_logic_dict(),
            [s.to_logic_dict(index=0, name="n")], [2, 3, 0, 1], [[[64, 64, 1, 64], [0, 5.0]]], None]


def test_dict_architecture_and_nine_entries(tmp_path):
    lf = read_logic_file(_write(tmp_path, _example_doc()))
    assert (lf.architecture, lf.cu_count, lf.is_apu) == ("gfx942", 80, 0)
    assert lf.solutions[0].params["ISA"] == [9, 4, 2]
    assert lf.distance == "Euclidean" and lf.perf_metric == "DeviceEfficiency"


def test_short_lists_and_bad_rows_are_user_errors(tmp_path):
    with pytest.raises(UserError, match=r"a YAML list of 9 to 14 entries"):
        read_logic_file(_write(tmp_path, _example_doc()[:8]))
    doc = _example_doc()
    doc[7] = [[[64, 64, 1, 64], [3, 5.0]]]
    with pytest.raises(UserError, match=r"exact logic row 0 names solution 3, but the file has 1 solutions"):
        read_logic_file(_write(tmp_path, doc))
    doc[7] = [[[64, 64], 0]]
    with pytest.raises(UserError, match=r"exact logic row 0"):
        read_logic_file(_write(tmp_path, doc))


def test_broken_yaml_names_file_and_line(tmp_path):
    path = tmp_path / "aldebaran_x.yaml"
    path.write_text("- {MinimumRequiredVersion: 4.33.0}\n- aldebaran\n- [gfx90a\n- x\n")
    with pytest.raises(UserError, match=r"aldebaran_x.yaml:\d+: not valid YAML"):
        read_logic_file(path)


def test_a_bad_solution_is_kept_with_its_reason(tmp_path):
    doc = _example_doc()
    bad = dict(doc[5][0])
    bad["WorkGroupMaping"] = 4
    doc[5].append(bad)
    lf = read_logic_file(_write(tmp_path, doc))
    assert len(lf.solutions) == 1
    (index, reason), = lf.failures
    assert index == 1 and "unknown solution parameter 'WorkGroupMaping'; did you mean WorkGroupMapping?" in reason


def test_dict_form(tmp_path):
    doc = _example_doc()
    sol = dict(doc[5][0], ProblemType="derive")
    d = {"MinimumRequiredVersion": "4.33.0", "ScheduleName": "aldebaran", "ArchitectureName": "gfx90a",
         "DeviceNames": ["x"], "ProblemType": doc[4], "Solutions": [sol], "LibraryType": "Matching",
         "Library": {"indexOrder": [2, 3, 0, 1], "table": doc[7], "distance": "Euclidean"},
         "PerfMetric": "DeviceEfficiency"}
    path = tmp_path / "aldebaran_dict.yaml"
    path.write_text(yaml.safe_dump(d))
    lf = read_logic_file(path)
    assert lf.solutions[0].derived.mt0 == 64 and lf.exact_logic[0].sizes == (64, 64, 1, 64)


@needs_shared
def test_find_logic_files_by_schedule_alias(tmp_path):
    # lite_configs and rocblas/ exactly; rocblas-asm_full/ by the rule (its schedule folder and the hip_
    # fallback files, for every architecture), since that folder is rocBLAS's production set
    def names(arch, folders=("lite_configs", "rocblas")):
        return sorted(p.name for p in find_logic_files(LOGIC, arch) if p.relative_to(LOGIC).parts[0] in folders)
    assert names("gfx90a") == sorted(["aldebaran_Cijk_Ailk_Bjlk_SB.yaml", "aldebaran_Cijk_Ailk_Bljk_SB.yaml",
                                      "aldebaran_Cijk_Alik_Bjlk_SB.yaml", "aldebaran_Cijk_Alik_Bljk_SB.yaml",
                                      "aldebaran_Cijk_Ailk_Bljk_SBIIc.yaml",
                                      "aldebaran_equality_Cijk_Ailk_Bljk_SB.yaml"])
    assert len(names("gfx942")) == 4 and all(n.startswith("aquavanjaram942_") for n in names("gfx942"))
    assert all(n.startswith("vega10_") for n in names("gfx900")) and all(n.startswith("vega20") for n in names("gfx906"))
    assert len(names("gfx908")) == 4 and all(n.startswith("arcturus_") for n in names("gfx908"))
    full = LOGIC / "rocblas-asm_full"
    if full.is_dir():
        for arch, schedule in (("gfx90a", "aldebaran"), ("gfx942", "aquavanjaram942"), ("gfx906", "vega20")):
            got = [p.relative_to(full) for p in find_logic_files(full, arch)]
            want = sorted((full / schedule).glob("*.yaml")) + sorted((full / "hip").glob("hip_*.yaml"))
            assert sorted(got) == sorted(p.relative_to(full) for p in want) and len(got) > 50
    (tmp_path / "experimental").mkdir()
    (tmp_path / "experimental" / "aldebaran_x.yaml").write_text("[]")
    (tmp_path / "aldebaran_y.yml").write_text("[]")
    assert [p.name for p in find_logic_files(tmp_path, "gfx90a")] == ["aldebaran_y.yml"]


def test_find_logic_files_errors(tmp_path):
    with pytest.raises(UserError, match="unknown architecture 'gfx123'"):
        find_logic_files(tmp_path, "gfx123")
    with pytest.raises(UserError, match="does not exist"):
        find_logic_files(tmp_path / "nope", "gfx90a")


def test_write_then_read_round_trips(tmp_path):
    sols = [Solution.from_dict({"WorkGroup": wg, "ThreadTile": tt, "DepthU": du}, problem_type=NN)
            for wg, tt, du in (([16, 16, 1], [4, 4], 16), ([8, 8, 1], [4, 4], 8))]
    path = write_logic_file(tmp_path / "aldebaran_Cijk_Ailk_Bljk_SB.yaml", schedule="aldebaran",
                            architecture="gfx90a", device_names=["Device 7400"], problem_type=NN, solutions=sols,
                            exact_logic=[([64, 64, 1, 64], 0, 10.0), ([32, 32, 2, 32], 1, 5.0)])
    raw = yaml.safe_load(path.read_text())
    assert len(raw) == 11 and raw[6] == [2, 3, 0, 1] and raw[8] is None and raw[10] == "DeviceEfficiency"
    assert [s["SolutionNameMin"] for s in raw[5]] == ["Cijk_Ailk_Bljk_SB_MT64x64x16_SN_WG16_16_1",
                                                      "Cijk_Ailk_Bljk_SB_MT32x32x8_SN_WG8_8_1"]
    lf = read_logic_file(path)
    assert [s.derived for s in lf.solutions] == [s.derived for s in sols]
    assert [r.sizes for r in lf.exact_logic] == [(64, 64, 1, 64), (32, 32, 2, 32)]
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # nothing left behind
    with pytest.raises(UserError, match="names solution 2; there are 2"):
        write_logic_file(tmp_path / "x.yaml", schedule="aldebaran", architecture="gfx90a", device_names=[],
                         problem_type=NN, solutions=sols, exact_logic=[([1, 1, 1, 1], 2, 1.0)])


def test_the_shipped_example_logic_file():
    lf = read_logic_file(REPO / "logic" / "aldebaran_Cijk_Ailk_Bljk_SB.yaml")
    raw = yaml.safe_load((REPO / "logic" / "aldebaran_Cijk_Ailk_Bljk_SB.yaml").read_text())
    assert len(raw) == 11 and lf.architecture == "gfx90a" and lf.problem_type == NN
    assert len(lf.solutions) == 6 and not lf.failures and len(lf.exact_logic) >= 8
    assert all(s.valid and s.params["KernelLanguage"] == "Assembly" for s in lf.solutions)
    lsu = [s.derived.local_split_u for s in lf.solutions]
    assert lsu.count(1) == 5 and lsu.count(4) == 1
    features = [(s.params["VectorWidth"], s.params["PrefetchGlobalRead"], s.params["PrefetchLocalRead"],
                 s.params["GlobalSplitU"], s.params["GlobalSplitUAlgorithm"]) for s in lf.solutions]
    assert features[2] == (4, 1, 1, 1, "SingleBuffer")
    assert lf.solutions[5].params["MatrixInstruction"] == [32, 32, 2, 1]
    for s in lf.solutions:
        assert s.derived.depth_u & (s.derived.depth_u - 1) == 0
    assert {r.solution_index for r in lf.exact_logic} == set(range(6))
