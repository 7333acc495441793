"""Library logic kinds (Matching with every distance, DecisionTree), CU-count/APU/ArchitectureName variants
and contraction problems: read, written into the master library as Tensile's TensileCreateLibrary writes
them, and selected as Tensile's host library selects.

tests/data/logic_kinds/*.yaml are small logic files of each kind (each says where its format comes from);
tests/data/tensile_reference/logic_kinds_gfx90a/TensileLibrary.dat is what Tensile 4.44's own
TensileCreateLibrary wrote from exactly those files (the command is in that folder's README.md).
"""

import json
import math
import random
from functools import lru_cache
from pathlib import Path

import msgpack
import pytest

from tensile_asm.errors import UserError
from tensile_asm.library import Library, build_master_library, create_library, read_logic_file
from tensile_asm.library.master import LibraryPart, merge
from tensile_asm.library.matching import best_match, distance, sort_table
from tensile_asm.library.problem_view import ContractionView
from tensile_asm.problem import Problem, ProblemType
from tensile_asm.solution import min_names

DATA = Path(__file__).resolve().parent / "data"
KINDS = DATA / "logic_kinds"
REFERENCE = DATA / "tensile_reference" / "logic_kinds_gfx90a" / "TensileLibrary.dat"
IIC = KINDS / "aldebaran_Cijk_Ailk_Bljk_SBIIc.yaml"


def pt(ta=False, tb=False):
    return ProblemType.from_dict({"DataType": "s", "TransposeA": ta, "TransposeB": tb, "Batched": True})


@lru_cache(maxsize=None)
def ours() -> dict:
    """The master library of every readable solution of the kind files, as create-library builds it."""
    files = [read_logic_file(p) for p in sorted(KINDS.glob("*.yaml"))]
    sols = [(lf, e.index, e.solution) for lf in files for e in lf.entries if e.solution is not None]
    names = min_names([s for _, _, s in sols])
    parts = [LibraryPart(lf, [(i, s, n) for (f, i, s), n in zip(sols, names) if f is lf]) for lf in files]
    return build_master_library(parts)


@lru_cache(maxsize=None)
def reference() -> dict:
    return msgpack.unpackb(REFERENCE.read_bytes(), strict_map_key=False, raw=False)


# Solution fields rocBLAS and Tensile's host library read (the name differs: that is the naming's business)
SOLUTION_FIELDS = ("problemType", "hardwarePredicate", "problemPredicate", "taskPredicate", "sizeMapping",
                   "libraryLogicIndex", "debugKernel", "ideals", "linearModel")


def _contraction_readable() -> bool:
    return read_logic_file(IIC).problem_type is not None


def _solution_ref(lib: dict, index: int) -> dict:
    sol = next(s for s in lib["solutions"] if s["index"] == index)
    return {k: sol.get(k) for k in SOLUTION_FIELDS}


def compare(a, b, lib_a, lib_b, path="library"):
    """Walk our node ``a`` and Tensile's ``b``: same node types, predicates, properties, keys, speeds,
    features and trees; solution indices compared through the solution entries they name."""
    assert type(a) is type(b), path
    if isinstance(a, dict) and a.get("type") == "ProblemMap":
        assert a["property"] == b["property"], path
        assert sorted(a["map"]) == sorted(b["map"]), path
        for key in a["map"]:
            compare(a["map"][key], b["map"][key], lib_a, lib_b, f"{path}/{key}")
        return
    if isinstance(a, dict):
        assert list(a) == list(b) or a.get("type") == "Matching" and set(a) == set(b), (path, list(a), list(b))
        solution_ref = a.get("type") == "Single" or "key" in a  # a Single library or a table entry
        for key in a:
            if key == "index" and solution_ref or key == "table":
                continue
            compare(a[key], b[key], lib_a, lib_b, f"{path}/{key}")
        if solution_ref:
            if a["index"] == -1 or b["index"] == -1:
                assert a["index"] == b["index"], path
            else:
                assert _solution_ref(lib_a, a["index"]) == _solution_ref(lib_b, b["index"]), path
        if "table" in a:
            assert [e["key"] for e in a["table"]] == [e["key"] for e in b["table"]], path
            for i, (x, y) in enumerate(zip(a["table"], b["table"])):
                compare(x, y, lib_a, lib_b, f"{path}/table[{i}]")
        return
    if isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            compare(x, y, lib_a, lib_b, f"{path}[{i}]")
        return
    assert a == b, path


def _without_initial_strides(lib: dict) -> dict:
    """Tensile's library less the entries of the TensorContraction file (useInitialStrides solutions)."""
    lib = json.loads(json.dumps(lib))
    iic = {s["index"] for s in lib["solutions"] if s["problemType"]["useInitialStridesAB"]}
    assert len(iic) == 5

    def prune(node):
        if isinstance(node, dict):
            if node.get("type") == "Matching":
                node["table"] = [e for e in node["table"] if e["index"] not in iic]
            for v in node.values():
                prune(v)
        elif isinstance(node, list):
            for v in node:
                prune(v)
    prune(lib["library"])
    return lib


def test_master_library_structure_matches_tensiles():
    ref = reference()
    if not _contraction_readable():
        # the TensorContraction ProblemType is not read yet: its solutions are left out of ours, and only those
        assert read_logic_file(IIC).problem_type_error
        ref = _without_initial_strides(ref)
    compare(ours()["library"], ref["library"], ours(), ref)


def test_reference_has_every_kind():
    """The reference library really holds what the comparison claims to cover."""
    text = json.dumps(reference()["library"])
    for needle in ('"distance": "Equality"', '"distance": "GridBased"', '"distance": "Manhattan"',
                   '"distance": "Euclidean"', '"type": "DecisionTree"', '"type": "CUCount"', '"type": "IsAPU"',
                   '"type": "EqualityMatching"', '"type": "CUEfficiency"', '"type": "SizeInRange"'):
        assert needle in text, needle


def test_hardware_rows_in_tensiles_order():
    rows = ours()["library"]["rows"]
    preds = [json.dumps(r["predicate"]) for r in rows]
    assert '"IsAPU"' in preds[0] and '"CUCount", "value": 104' in preds[1] and '"And"' not in preds[2]


# ---- selection, written from Tensile 4.44's C++ (PropertyMatching.hpp, Distance.hpp, DecisionTree.hpp)
def _tiny(table, distance_name, predicates=None, properties=("FreeSizeA", "FreeSizeB", "BoundSize")):
    p = pt()
    sols = []
    for i in range(1 + max(e["index"] for e in table)):
        sols.append({"name": f"K{i}", "index": i, "hardwarePredicate": {"type": "TruePred"},
                     "problemPredicate": (predicates or {}).get(i, {"type": "TruePred"}),
                     "taskPredicate": {"type": "TruePred"}})
    node = {"type": "Matching", "properties": [{"type": t, "index": 0} for t in properties], "table": table,
            "distance": distance_name}
    tree = {"type": "ProblemMap", "property": {"type": "OperationIdentifier"}, "map": {p.operation_identifier: node}}
    return Library({"solutions": sols, "library": tree})


def _pick(lib, m, n, k, b=1, **kw):
    sel = lib.select(Problem.make(pt(), m, n, k, batch=b), **kw)
    return None if sel is None else sel["name"]


def test_equality_takes_only_the_first_equal_entry():
    table = [{"key": [64, 64, 64], "index": 0, "speed": 2.0}, {"key": [64, 64, 64], "index": 1, "speed": 1.0},
             {"key": [64, 64, 65], "index": 2, "speed": 9.0}]
    lib = _tiny(table, "Equality", {0: {"type": "Free0SizeMultiple", "index": 0, "value": 128}})
    # the faster entry sorts first; its predicate fails, and Tensile does not look at the second
    assert _pick(lib, 64, 64, 64) is None
    assert _pick(lib, 64, 64, 65) == "K2"
    assert _pick(lib, 64, 64, 66) is None and _pick(lib, 99, 99, 99) is None


def test_ties_go_to_the_faster_entry_only_where_the_search_looks():
    # (20, 10, 10) lies between; lower_bound starts at (30, ...): rightward it is the best (distance 100);
    # leftward, (10, ...) cannot be closer than 100 on M alone (10*10 < 100 is false): the search stops,
    # so the faster or slower entry on the left is never compared
    table = [{"key": [10, 10, 10], "index": 0, "speed": 9.0}, {"key": [30, 10, 10], "index": 1, "speed": 1.0}]
    assert _pick(_tiny(table, "Euclidean"), 20, 10, 10) == "K1"
    # same M: improvementPossible holds (0 < 100), and at equal distance the faster entry wins either way
    table = [{"key": [20, 0, 10], "index": 0, "speed": 9.0}, {"key": [20, 20, 10], "index": 1, "speed": 1.0}]
    assert _pick(_tiny(table, "Euclidean"), 20, 10, 10) == "K0"
    table[0]["speed"] = 0.5
    assert _pick(_tiny(table, "Euclidean"), 20, 10, 10) == "K1"


def test_manhattan_and_euclidean_disagree_where_they_should():
    table = [{"key": [100, 100, 100], "index": 0, "speed": 1.0}, {"key": [135, 130, 100], "index": 1, "speed": 1.0}]
    # from (100, 150, 100): Manhattan 50 vs 35+20=55 -> K0; Euclidean 2500 vs 1225+400=1625 -> K1
    assert _pick(_tiny(table, "Euclidean"), 100, 150, 100) == "K1"
    assert _pick(_tiny(table, "Manhattan"), 100, 150, 100) == "K0"


def test_random_distance_is_refused():
    lib = _tiny([{"key": [1, 1, 1], "index": 0, "speed": 1.0}, {"key": [5, 5, 5], "index": 0, "speed": 1.0}],
                "Random")
    with pytest.raises(UserError, match="Random distance"):
        _pick(lib, 3, 3, 3)


def _nearest(table, key, name, ok):
    """The smallest distance among applicable entries: the binary search with early stops must reach it
    for Euclidean and Manhattan (their early stop is a true lower bound; only ties may go either way)."""
    return min((distance(name, key, e["key"]) for e in table if ok(e)), default=None)


@pytest.mark.parametrize("name", ["Euclidean", "Manhattan"])
def test_binary_search_finds_the_global_best(name):
    rng = random.Random(7)
    for _ in range(200):
        table = [{"key": [rng.randrange(1, 300), rng.randrange(1, 300), rng.randrange(1, 300)],
                  "index": i, "speed": float(rng.randrange(1, 5))} for i in range(rng.randrange(1, 40))]
        dead = {e["index"] for e in table if rng.random() < 0.3}
        key = [rng.randrange(1, 320) for _ in range(3)]
        got = best_match(sort_table(table), key, name, lambda e: None if e["index"] in dead else e["index"])
        best = _nearest(table, key, name, lambda e: e["index"] not in dead)
        assert (got is None) == (best is None)
        if got is not None:
            assert got not in dead and distance(name, key, table[got]["key"]) == best


def test_gridbased_distance_and_search():
    # Distance.hpp GridBasedDistance by hand: key (100, 100, 64) against tile (64, 64, 64):
    # stepM = stepN = ceil(100/64) = 2; 100*2*2 / ((100*100)/(2*64*2*64))^2 = 400/0.6104^2 -> round 1074
    assert distance("GridBased", [100, 100, 64], [64, 64, 64]) == 1074 + 0.0
    assert distance("GridBased", [64, 64, 64], [64, 64, 128]) == 100 + 64 / (128 + 64 * 8)
    table = [{"key": [64, 64, 64], "index": 0}, {"key": [64, 64, 512], "index": 1},
             {"key": [64, 128, 64], "index": 2}, {"key": [128, 128, 64], "index": 3}]
    lib = _tiny(table, "GridBased")
    assert _pick(lib, 64, 64, 500) == "K1"  # the (64, 64) group; nearest K
    assert _pick(lib, 64, 100, 64) == "K2"  # N clamps to the group's largest N not above... (128 >= 100)
    assert _pick(lib, 5000, 5000, 64) == "K3"  # clamped to the last M group
    # nothing applies in the (64, 64) group: the next groups are searched
    lib = _tiny(table, "GridBased", {0: {"type": "FalsePred"}, 1: {"type": "FalsePred"}})
    assert _pick(lib, 64, 64, 64) == "K2"


def test_size_in_range_excludes_max():
    table = [{"key": [10, 10, 10], "index": 0, "speed": 1.0}]
    lib = _tiny(table, "Euclidean", {0: {"type": "SizeInRange", "index": 0, "value": {"min": 8, "max": 16}}})
    assert _pick(lib, 15, 10, 10) == "K0" and _pick(lib, 16, 10, 10) is None and _pick(lib, 7, 10, 10) is None


# ---- the kinds end to end: our library from the kind files
def test_decision_tree_regions_trees_and_fallback():
    lib = Library(ours())
    lf = read_logic_file(KINDS / "aldebaran_dtree_Cijk_Alik_Bljk_SB.yaml")
    p = pt(True, False)

    def logic_index(m, n, k):
        sel = lib.select(Problem.make(p, m, n, k), "gfx90a")
        return None if sel is None else sel["libraryLogicIndex"]
    # region 0 (M < 2048): tree 0 is true for M <= 1000 and K <= 512
    assert logic_index(512, 64, 256) == 0
    # tree 0 false (K > 512); tree 1: Tile0Granularity(1500/128 -> 11.72/12 = 0.977) > 0.75 -> node 1:
    # N <= 700.5 -> true
    assert logic_index(1500, 64, 600) == 1
    # N > 700.5 -> node 2: CUGranularity <= 0.5? tiles ceil(1500/128)*ceil(800/128)=12*7=84, /104 = 0.8077,
    # granularity 0.8077/1 -> > 0.5 -> false; tree 2: WavesPerSIMD ceil(24*13/104)=3 * 0.25 = 0.75 <= 1 -> true
    assert logic_index(1500, 800, 600) == 2
    # region 1 (M >= 2048, N < 100000): tree 0 (N <= 4096 -> true)
    assert logic_index(4096, 4000, 64) == 4
    # region 1, N > 4096: tree 1 is true for K > 64; else no tree and no fallback: nothing
    assert logic_index(4096, 5000, 65) == 0
    assert logic_index(4096, 5000, 64) is None
    assert lf.selection.regions[0].fallback == 3


def test_decision_tree_fallback_is_taken_when_no_tree_predicts_true():
    lib = Library(ours())
    sel = lib.select(Problem.make(pt(True, False), 1900, 64, 100000), "gfx90a")
    # tree 0: M > 1000 -> false; tree 1: 1900/128 = 14.84 -> 0.989 > 0.75 -> N 64 <= 700.5 -> true
    assert sel["libraryLogicIndex"] == 1
    sel = lib.select(Problem.make(pt(True, False), 1920, 2000, 100000), "gfx90a")
    # tree 1: granularity 15/15 = 1 > 0.75 -> N > 700.5 -> CU: 15*16/104 = 2.31 -> 0.77 > 0.5 -> false;
    # tree 2: ceil(30*32/104)=10 * 0.25 = 2.5 > 1 -> false: the fallback (solution 3)
    assert sel["libraryLogicIndex"] == 3


def test_cu_count_and_apu_rows():
    lib = Library(ours())
    prob = Problem.make(pt(False, True), 128, 5888, 256)
    plain = {s["libraryLogicIndex"] for s in ours()["solutions"]
             if s["problemType"]["operationIdentifier"] == pt(False, True).operation_identifier}
    generic = lib.select(prob, "gfx90a")
    cu104 = lib.select(prob, "gfx90a", cu_count=104)
    apu = lib.select(prob, "gfx90a:xnack-", cu_count=110, is_apu=1)
    names = {s["name"]: s for s in ours()["solutions"]}
    assert generic["libraryLogicIndex"] in (0, 1) and cu104["libraryLogicIndex"] in (0, 1, 2)
    assert len({generic["name"], cu104["name"], apu["name"]}) == 3 and plain
    # CU count 110 without the APU flag matches no special row: the generic one
    assert lib.select(prob, "gfx90a", cu_count=110)["name"] == generic["name"]
    assert all(n in names for n in (generic["name"], cu104["name"], apu["name"]))


def test_contraction_view_with_several_free_and_batch_indices():
    # C[i,j,k,l] = A[i,k,l,m] B[j,k,l,m]: free i (A), j (B); batch k, l; bound m
    v = ContractionView.from_indices([0, 2, 3, 4], [1, 2, 3, 4], 4, [5, 7, 2, 3, 11])
    assert v.free_sizes_a == (5,) and v.free_sizes_b == (7,) and v.batch_sizes == (2, 3)
    assert v.bound_sizes == (11,) and v.operation_identifier == "Contraction_m_Aiklm_Bjklm_Cijkl_Dijkl"
    assert v.strides["A"] == (1, 5, 10, 30) and v.size(4) == 11 and v.max_problem_size == 11
    # two free indices of A: FreeSizeA(1) is the second; a Matching table on it selects by it
    v2 = ContractionView.from_indices([0, 1, 3], [2, 3], 3, [4, 6, 8, 10])
    assert v2.free_sizes_a == (4, 6) and v2.free_sizes_b == (8,) and v2.batch_sizes == ()
    table = [{"key": [6, 10], "index": 0, "speed": 1.0}, {"key": [60, 10], "index": 1, "speed": 1.0}]
    node = {"type": "Matching", "properties": [{"type": "FreeSizeA", "index": 1}, {"type": "BoundSize", "index": 0}],
            "table": table, "distance": "Euclidean"}
    sols = [{"name": f"K{i}", "index": i, "problemPredicate": {"type": "TruePred"}} for i in range(2)]
    lib = Library({"solutions": sols, "library": {"type": "ProblemMap", "property": {"type": "OperationIdentifier"},
                                                  "map": {v2.operation_identifier: node}}})
    assert lib.select(v2)["name"] == "K0"
    assert lib.select(ContractionView.from_indices([0, 1, 3], [2, 3], 3, [4, 50, 8, 10]))["name"] == "K1"


def test_dat_and_yaml_select_alike(tmp_path):
    from tensile_asm.library import write_master_library
    lib = ours()
    y, d = Library.load(write_master_library(lib, tmp_path, "yaml")), Library.load(write_master_library(lib, tmp_path, "msgpack"))
    rng = random.Random(3)
    for _ in range(300):
        ta, tb = rng.random() < 0.5, rng.random() < 0.5
        m, n, k = (rng.choice([rng.randrange(1, 9000), 2 ** rng.randrange(2, 13)]) for _ in range(3))
        prob = Problem.make(pt(ta, tb), m, n, k, batch=rng.randrange(1, 3))
        kw = dict(arch="gfx90a", cu_count=rng.choice([None, 104, 110]), is_apu=rng.choice([None, 1]),
                  perf_metric=rng.choice(["DeviceEfficiency", "CUEfficiency"]))
        a, b = y.select(prob, **kw), d.select(prob, **kw)
        assert (a and a["name"]) == (b and b["name"])


class _FakeBuilder:
    """Supports every solution; "compiles" each kernel into a dummy part: create-library's library side only."""

    def version(self):
        return "kinds-fake-1"

    def supports(self, solution, arch):
        return None

    def compile_kernel(self, solution, arch, name, timing=None):
        from tensile_asm.library.create import CacheEntry, KernelPart
        return CacheEntry([KernelPart(name, name.encode(), {".name": name})], None)

    def link_parts(self, parts, arch, out_path):
        Path(out_path).write_bytes(b"\x7fELF placeholder")


def test_create_library_builds_every_kind(tmp_path):
    report = create_library(KINDS, tmp_path / "out", "gfx90a", build=_FakeBuilder(), library_format="msgpack",
                            jobs=1, cache_dir=tmp_path / "cache")
    reasons = {e.reason for e in report.entries if not e.built}
    assert not any("LibraryType" in (r or "") for r in reasons)
    if _contraction_readable():
        assert not reasons
    else:
        assert {e.logic_file.name for e in report.entries if not e.built} == {IIC.name}
    text = json.dumps(Library.load(tmp_path / "out").tree)
    assert '"DecisionTree"' in text and '"GridBased"' in text and '"CUCount"' in text


def test_decision_trees_do_not_merge():
    lf = read_logic_file(KINDS / "aldebaran_dtree_Cijk_Alik_Bljk_SB.yaml")
    sols = [(e.index, e.solution, f"K{e.index}") for e in lf.entries]
    with pytest.raises(UserError, match="DecisionTree libraries meet"):
        build_master_library([LibraryPart(lf, sols), LibraryPart(lf, sols)])


def test_bad_decision_tree_is_a_user_error(tmp_path):
    text = (KINDS / "aldebaran_dtree_Cijk_Alik_Bljk_SB.yaml").read_text()
    bad = tmp_path / "aldebaran_bad.yaml"
    bad.write_text(text.replace("nextIdxGT: -1, nextIdxLTE: 1", "nextIdxGT: -1, nextIdxLTE: 0", 1))
    with pytest.raises(UserError, match="next index 0 must be"):
        read_logic_file(bad)
    bad.write_text(text.replace("LibraryType: DecisionTree", "LibraryType: Forest"))
    with pytest.raises(UserError, match="LibraryType 'Forest' is not one Tensile 4.44 reads"):
        read_logic_file(bad)


def test_unknown_distance_is_a_user_error(tmp_path):
    text = (KINDS / "aldebaran_gridbased_Cijk_Alik_Bjlk_SB.yaml").read_text()
    bad = tmp_path / "aldebaran_bad.yaml"
    bad.write_text(text.replace("- GridBased", "- Chebyshev"))
    with pytest.raises(UserError, match="distance 'Chebyshev' is not one Tensile 4.44 knows"):
        read_logic_file(bad)


def test_merge_sorts_equality_row_first():
    a = {"type": "Problem", "rows": [{"predicate": {"type": "TruePred"}, "library": {"type": "Matching",
         "properties": [], "distance": "Euclidean", "table": []}}]}
    b = {"type": "Problem", "rows": [{"predicate": {"type": "EqualityMatching"}, "library": {"type": "Matching",
         "properties": [], "distance": "Equality", "table": []}}]}
    merged = merge(a, b)
    assert [r["predicate"]["type"] for r in merged["rows"]] == ["EqualityMatching", "TruePred"]
    assert math.isfinite(distance("Ratio", [4, 4, 4], [2, 2, 2]))


def test_decision_tree_library_kernels_verify_and_launch(tmp_path, capsys, monkeypatch):
    """A DecisionTree logic file built for real: every entry's launch contract reads, and the kernel the
    forest picks for a size runs on the emulator through ``tensile-asm verify --library``."""
    from conftest import have_llvm
    if not have_llvm():
        pytest.skip("LLVM tools (llvm-mc, ld.lld) not found")
    from tensile_asm.cli.main import main
    from tensile_asm.gemm import GemmKernelContract

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    logic = tmp_path / "logic"
    logic.mkdir()
    (logic / "aldebaran_dtree_Cijk_Alik_Bljk_SB.yaml").write_text(
        (KINDS / "aldebaran_dtree_Cijk_Alik_Bljk_SB.yaml").read_text())
    report = create_library(logic, tmp_path / "out", "gfx90a", library_format="msgpack", jobs=1)
    assert not report.not_built, report.table()
    lib = Library.load(tmp_path / "out")
    assert '"DecisionTree"' in json.dumps(lib.tree)
    for entry in lib.solutions.values():
        assert GemmKernelContract.from_library_entry(entry).name == entry["name"]
    chosen = lib.select(Problem.make(pt(True, False), 1500, 64, 600), "gfx90a")
    assert chosen["libraryLogicIndex"] == 1  # tree 1 (see test_decision_tree_regions_trees_and_fallback)
    assert main(["verify", "--library", str(tmp_path / "out"), "--kernel", chosen["name"],
                 "--size", "37,19,11,2"]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out


def test_workspace_check_uses_the_problems_workspace():
    from dataclasses import replace
    table = [{"key": [64, 64, 64], "index": 0, "speed": 1.0}]
    lib = _tiny(table, "Euclidean")
    lib.solutions[0]["taskPredicate"] = {"type": "WorkspaceCheck"}  # as Tensile writes it: no index, no value
    lib.solutions[0]["sizeMapping"] = {"workspaceSizePerElemC": 4, "streamK": 0}
    view = ContractionView.from_problem(Problem.make(pt(), 10, 20, 30, batch=2))
    assert lib.select(view)["name"] == "K0"  # no workspace size given: it fits
    assert lib.select(replace(view, workspace_size=10 * 20 * 2 * 4))["name"] == "K0"
    assert lib.select(replace(view, workspace_size=10 * 20 * 2 * 4 - 1)) is None


def test_contract_reads_initial_stride_entries():
    from tensile_asm.gemm import GemmKernelContract
    ref = reference()
    iic = [s for s in ref["solutions"] if s["problemType"]["useInitialStridesAB"]]
    plain = [s for s in ref["solutions"] if not s["problemType"]["useInitialStridesAB"]]
    assert iic and plain
    for s in iic:   # the first index's stride of each tensor is a kernel argument (Tensile's order: D, C, A, B)
        pt = s["problemType"]
        c = GemmKernelContract.from_library_entry(s)
        names = [a.name for a in c.layout() if a.name.startswith("InitialStride")]
        assert names == ["InitialStrideD", "InitialStrideC"] * pt["useInitialStridesCD"] + \
            ["InitialStrideA", "InitialStrideB"], (s["name"], names)
    for s in plain:  # every other entry of Tensile's own library, of every kind, reads
        c = GemmKernelContract.from_library_entry(s)
        assert c.name == s["name"] and not any(a.name.startswith("InitialStride") for a in c.layout())


def test_rows_sort_as_tensiles_python_sorts_them():
    """predicate_order_cases.json.gz: lists of row predicates and the order Tensile 4.44's own Python put
    them in (written by make_predicate_order_cases.py beside it, with Tensile's classes)."""
    import gzip
    from tensile_asm.library.master import _Ordered
    cases = json.loads(gzip.open(DATA / "tensile_reference" / "predicate_order_cases.json.gz", "rt").read())
    assert {c["kind"] for c in cases} == {"problem", "hardware"} and len(cases) >= 250
    for case in cases:
        rows = [{"predicate": p} for p in case["in"]]
        assert [r["predicate"] for r in sorted(rows, key=_Ordered)] == case["sorted"]


def test_garbled_library_is_a_user_error():
    lib = _tiny([{"key": [1, 2, 3], "index": 0, "speed": 1.0}], "Euclidean")
    del lib.tree["map"][pt().operation_identifier]["table"][0]["key"]
    with pytest.raises(UserError, match="rebuild the library"):
        _pick(lib, 4, 4, 4)


def test_jsd_looks_at_three_key_elements():
    # Distance.hpp JSDivergence normalizes and sums over three elements whatever the key length
    assert distance("JSD", [10, 20, 30, 1], [10, 20, 30, 99]) == 0.0
    assert distance("JSD", [10, 20, 30], [30, 20, 10]) > 0.0


def test_hardware_predicates():
    from tensile_asm.library.predicates import Hardware, hardware_holds
    target = lambda g: {"type": "TargetProcessor", "value": g}  # noqa: E731
    # AMDGPU::runsKernelTargeting: the same processor, or gfx900 code on a newer one
    assert hardware_holds(target("gfx900"), Hardware("gfx906"))
    assert hardware_holds(target("gfx906"), Hardware("gfx906"))
    assert not hardware_holds(target("gfx906"), Hardware("gfx90a"))
    assert not hardware_holds(target("gfx906"), Hardware("gfx900"))
    assert not hardware_holds(target("gfx803"), Hardware("gfx906"))
    cu = {"type": "AMDGPU", "value": {"type": "And", "value": [
        {"type": "Processor", "value": "gfx90a"}, {"type": "CUCount", "value": 104}, {"type": "IsAPU", "value": 0}]}}
    assert hardware_holds(cu, Hardware("gfx90a", 104, 0)) and not hardware_holds(cu, Hardware("gfx90a", 104, 1))
    assert not hardware_holds(cu, Hardware("gfx90a")) and not hardware_holds(cu, Hardware("gfx942", 104))


def test_fallback_file_for_two_architectures_is_one_part(tmp_path):
    import yaml
    data = yaml.safe_load((KINDS / "aldebaran_Cijk_Ailk_Bljk_SB.yaml").read_text())
    data[1], data[2] = "hip", "fallback"
    logic = tmp_path / "logic"
    logic.mkdir()
    (logic / "hip_Cijk_Ailk_Bljk_SB.yaml").write_text(yaml.safe_dump(data))
    create_library(logic, tmp_path / "out", "gfx90a;gfx942", build=_FakeBuilder(), jobs=1,
                   cache_dir=tmp_path / "cache")
    lib = Library.load(tmp_path / "out")
    assert len(lib.solutions) == len(data[5])  # listed once, not once per architecture
    row, = lib.tree["rows"]
    assert row["predicate"] == {"type": "TruePred"}
    assert '"distance": "Euclidean"' in json.dumps(row) and len(json.dumps(row).split('"key"')) == 1 + len(data[7])
    prob = Problem.make(pt(), 128, 128, 128)
    assert lib.select(prob, "gfx90a")["name"] == lib.select(prob, "gfx942")["name"]
