import json
from functools import lru_cache
from pathlib import Path

import msgpack
import pytest
import yaml
from _tensile_data import kernels_lite, logic_file

from tensile_asm.errors import UserError
from tensile_asm.library import Library, build_master_library, write_master_library
from tensile_asm.library.master import LibraryPart
from tensile_asm.problem import Problem, ProblemType
from tensile_asm.solution import min_names

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared"
LOGIC = SHARED / "data" / "logic"
LIBS = SHARED / "data" / "libraries"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared reference data not found at {SHARED}")
EXAMPLE = REPO / "logic" / "aldebaran_Cijk_Ailk_Bljk_SB.yaml"


def pt(ta=False, tb=False):
    return ProblemType.from_dict({"DataType": "s", "TransposeA": ta, "TransposeB": tb, "Batched": True})


def build(paths):
    """The master library of every solution of ``paths``, named like create-library names kernels."""
    files = [logic_file(p) for p in paths]
    sols = [(lf, e.index, e.solution) for lf in files for e in lf.entries if e.solution is not None]
    names = min_names([s for _, _, s in sols])
    parts = [LibraryPart(lf, [(i, s, n) for (f, i, s), n in zip(sols, names) if f is lf]) for lf in files]
    return build_master_library(parts)


@lru_cache(maxsize=None)
def ours_aldebaran():
    return build(sorted((LOGIC / "lite_configs").glob("aldebaran_*.yaml")))


def shape(node):
    t = node["type"]
    if t == "Hardware":
        return t, [(json.dumps(r["predicate"], sort_keys=True), shape(r["library"])) for r in node["rows"]]
    if t == "ProblemMap":
        return t, node["property"], {k: shape(v) for k, v in sorted(node["map"].items())}
    if t == "Problem":
        return t, [(json.dumps(r["predicate"], sort_keys=True), shape(r["library"])) for r in node["rows"]]
    return t, node["properties"], node["distance"], [e["key"] for e in node["table"]]


def leaves(node, op=None, out=None):
    out = {} if out is None else out
    if node["type"] == "ProblemMap":
        for key, child in node["map"].items():
            leaves(child, key, out)
    elif node["type"] in ("Problem", "Hardware"):
        for row in node["rows"]:
            leaves(row["library"], op, out)
    else:
        for e in node["table"]:
            out[(op, tuple(e["key"]))] = (e["index"], e["speed"])
    return out


OUR_ARCHS = {"vega10": "gfx900", "vega20": "gfx906", "arcturus": "gfx908", "aldebaran": "gfx90a",
             "aquavanjaram942": "gfx942"}


@lru_cache(maxsize=None)
def ours_lite():
    """All of lite_configs for our architectures in one master library (what create-library merges)."""
    return build(sorted(p for s in OUR_ARCHS for p in (LOGIC / "lite_configs").glob(f"{s}_*.yaml")))


@needs_shared
def test_lite_tree_matches_kernels_lite_for_our_architectures():
    ours, ref = ours_lite(), kernels_lite()
    ref_rows = [r for r in ref["library"]["rows"] if r["predicate"]["value"]["value"] in OUR_ARCHS.values()]
    # the hardware rows in Tensile's order (merged rows sort by processor name), each row's subtree alike
    assert [r["predicate"] for r in ours["library"]["rows"]] == [r["predicate"] for r in ref_rows]
    for row, ref_row in zip(ours["library"]["rows"], ref_rows):
        assert shape(row["library"]) == shape(ref_row["library"])  # 4 operations x 5 Problem levels, same tables


@needs_shared
@pytest.mark.parametrize("arch", sorted(OUR_ARCHS.values()))
def test_lite_solution_entries_match_kernels_lite(arch):
    ours, ref = ours_lite(), kernels_lite()
    row = next(r for r in ours["library"]["rows"] if r["predicate"]["value"]["value"] == arch)
    ref_row = next(r for r in ref["library"]["rows"] if r["predicate"]["value"]["value"] == arch)
    mine, theirs = leaves(row["library"]), leaves(ref_row["library"])
    assert set(mine) == set(theirs) and len(mine) == 4096
    by_index = {s["index"]: s for s in ours["solutions"]}
    ref_by_index = {s["index"]: s for s in ref["solutions"]}
    for key, (index, speed) in mine.items():
        ref_index, ref_speed = theirs[key]
        a, b = by_index[index], ref_by_index[ref_index]
        assert speed == ref_speed and a["libraryLogicIndex"] == b["libraryLogicIndex"]
        for field in ("problemPredicate", "sizeMapping", "problemType", "hardwarePredicate", "taskPredicate"):
            assert a[field] == b[field], (key, field)
        assert set(a) == set(b)


@needs_shared
def test_selection_agrees_with_kernels_lite():
    ours = Library(ours_lite())
    ref = Library(kernels_lite())
    count = 0
    for arch in OUR_ARCHS.values():
        for ta in (False, True):
            for tb in (False, True):
                for m, n, k in ((1, 1, 1), (64, 64, 64), (128, 4096, 77), (1000, 1000, 1000), (5000, 17, 300),
                                (4, 2368, 1792), (8192, 8192, 8192), (333, 444, 555)):
                    p = Problem.make(pt(ta, tb), m, n, k)
                    a, b = ours.select(p, arch), ref.select(p, arch)
                    assert a["libraryLogicIndex"] == b["libraryLogicIndex"]
                    assert a["sizeMapping"] == b["sizeMapping"]
                    assert a["problemType"]["operationIdentifier"] == p.problem_type.operation_identifier
                    count += 1
    assert count == 160


@needs_shared
def test_exact_size_wins_and_nearest_is_squared_euclidean():
    lib = Library(ours_aldebaran())
    lf = logic_file(LOGIC / "lite_configs/aldebaran_Cijk_Ailk_Bljk_SB.yaml")
    rows = [r for r in lf.exact_logic if r.sizes[:2] == (4, 2368)]
    exact = rows[0]
    p = Problem.make(pt(), exact.sizes[0], exact.sizes[1], exact.sizes[3])
    assert lib.select(p)["libraryLogicIndex"] == exact.solution_index
    p = Problem.make(pt(), 3001, 17, 911)
    best = min(lf.exact_logic, key=lambda r: ((r.sizes[0] - 3001) ** 2 + (r.sizes[1] - 17) ** 2
                                             + (r.sizes[3] - 911) ** 2, -r.perf))
    assert lib.select(p)["libraryLogicIndex"] == best.solution_index


@needs_shared
def test_reads_tensiles_own_libraries(request):
    sample = Library.load(LIBS / "SampleTensileKernels.yaml.gz")
    sample_dat = Library.load(LIBS / "SampleTensileKernels.dat.gz")
    for (ta, tb), index in (((False, False), 0), ((False, True), 1), ((True, False), 2), ((True, True), 3)):
        p = Problem.make(pt(ta, tb), 100, 100, 100)
        assert sample.select(p)["index"] == index == sample_dat.select(p)["index"]
    if not request.config.getoption("--slow"):
        return          # KernelsLite.yaml: ~15 s of YAML parsing
    lite_yaml, lite_dat = Library.load(LIBS / "KernelsLite.yaml.gz"), Library(kernels_lite())
    p = Problem.make(pt(True, False), 1000, 1000, 1000)
    for arch in ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030"):
        a, b = lite_yaml.select(p, arch), lite_dat.select(p, arch)
        assert a is not None and a["name"] == b["name"]
        assert ("ISA" + arch[3:] in a["name"]) or arch == "gfx1030"
    assert lite_yaml.select(p, "gfx1234") is None


def test_written_yaml_and_dat_hold_the_same_library(tmp_path):
    lib = build([EXAMPLE])
    y = write_master_library(lib, tmp_path, "yaml")
    d = write_master_library(lib, tmp_path, "msgpack")
    assert (y.name, d.name) == ("TensileLibrary.yaml", "TensileLibrary.dat")
    text = y.read_text()
    assert text.startswith("---\n") and text.rstrip().endswith("...")
    assert "macroTile: [64, 64, 1]" in text  # flow style for leaf lists
    assert yaml.safe_load(text) == lib == msgpack.unpackb(d.read_bytes(), strict_map_key=False)
    assert Library.load(tmp_path).data == lib
    assert sorted(p.name for p in tmp_path.iterdir()) == ["TensileLibrary.dat", "TensileLibrary.yaml"]


@needs_shared
def test_equality_table_sits_in_front_and_falls_through(tmp_path):
    equality = LOGIC / "rocblas/aldebaran_equality_Cijk_Ailk_Bljk_SB.yaml"
    lib = build([EXAMPLE, equality])
    node = lib["library"]["rows"][0]["library"]["map"]["Contraction_l_Ailk_Bljk_Cijk_Dijk"]
    for _ in range(4):
        node = node["rows"][0]["library"]
    assert [r["predicate"]["type"] for r in node["rows"]] == ["EqualityMatching", "TruePred"]
    eq = node["rows"][0]["library"]
    assert [p["type"] for p in eq["properties"]] == ["FreeSizeA", "FreeSizeB", "BatchSize", "BoundSize"]
    assert eq["distance"] == "Equality"
    library = Library(lib)
    hit = logic_file(equality).exact_logic[0]  # [1024, 384, 1, 1024] -> solution 3
    m, n, b, k = hit.sizes
    chosen = library.select(Problem.make(pt(), m, n, k, batch=b))
    assert "_MI" in chosen["name"] and chosen["libraryLogicIndex"] == hit.solution_index
    near = library.select(Problem.make(pt(), m + 1, n, k, batch=b))
    assert "_MI" not in near["name"]  # not an exact hit: the Euclidean table of the example answers


def _tiny_library(table, predicates=None):
    sols = []
    for i in range(3):
        sols.append({"index": i, "name": f"K{i}", "hardwarePredicate": {"type": "TruePred"},
                     "problemPredicate": (predicates or {}).get(i, {"type": "TruePred"})})
    matching = {"type": "Matching", "distance": "Euclidean", "table": table,
                "properties": [{"type": "FreeSizeA", "index": 0}, {"type": "FreeSizeB", "index": 0},
                               {"type": "BoundSize", "index": 0}]}
    tree = {"type": "Hardware", "rows": [{"predicate": {"type": "AMDGPU", "value": {"type": "Processor",
                                                                                      "value": "gfx90a"}},
                                          "library": {"type": "ProblemMap", "property": {"type": "OperationIdentifier"},
                                                      "map": {pt().operation_identifier: matching}}}]}
    return Library({"solutions": sols, "library": tree})


def test_ties_go_to_the_faster_entry_and_predicates_filter():
    table = [{"key": [10, 10, 10], "index": 0, "speed": 1.0}, {"key": [30, 10, 10], "index": 1, "speed": 5.0},
             {"key": [100, 100, 100], "index": 2, "speed": 9.0}]
    lib = _tiny_library(table, {1: {"type": "Free0SizeMultiple", "index": 0, "value": 4}})
    assert lib.select(Problem.make(pt(), 20, 10, 10))["name"] == "K1"  # equidistant: higher speed
    assert lib.select(Problem.make(pt(), 21, 10, 10))["name"] == "K0"  # K1 nearer but 21 is not a multiple of 4
    assert lib.select(Problem.make(pt(), 12, 10, 10))["name"] == "K0"
    assert lib.select(Problem.make(pt(), 90, 90, 90))["name"] == "K2"
    assert lib.select(Problem.make(pt(), 12, 10, 10), arch="gfx942") is None
    assert lib.select(Problem.make(pt(True, False), 12, 10, 10)) is None


def test_unknown_predicate_type_is_a_user_error():
    table = [{"key": [10, 10, 10], "index": 0, "speed": 1.0}]
    lib = _tiny_library(table, {0: {"type": "MoonPhaseEqual", "value": 3}})
    with pytest.raises(UserError, match="problem predicate type 'MoonPhaseEqual' is not one Tensile"):
        lib.select(Problem.make(pt(), 12, 10, 10))


def test_load_errors(tmp_path):
    with pytest.raises(UserError, match="no TensileLibrary.yaml or TensileLibrary.dat"):
        Library.load(tmp_path)
    (tmp_path / "TensileLibrary.yaml").write_text("a: [1\n")
    with pytest.raises(UserError, match=r"TensileLibrary.yaml:\d+: not valid YAML"):
        Library.load(tmp_path)
    (tmp_path / "TensileLibrary.yaml").write_text("a: 1\n")
    with pytest.raises(UserError, match="not a master solution library"):
        Library.load(tmp_path)
