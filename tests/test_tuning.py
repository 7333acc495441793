"""The tuning driver: a Tensile config read as Tensile reads it, forks to candidates with every rejection
listed, Tensile's step folders, winners, the logic file create-library builds, resume, shards and merge."""

import csv
from pathlib import Path

import numpy as np
import pytest
import yaml

from tensile_asm.errors import UserError
from tensile_asm.problem import ProblemType
from tensile_asm.tuning.config import read_config
from tensile_asm.tuning.sizes import read_problem_sizes

from conftest import SHARED, have_llvm

NN = {"OperationType": "GEMM", "DataType": "s", "TransposeA": False, "TransposeB": False, "UseBeta": True,
      "Batched": True}


def write_config(tmp: Path, forks, sizes, logic=True, extra_gp=None, common=None) -> Path:
    cfg = {"GlobalParameters": {"SleepPercent": 0, **(extra_gp or {})},
           "BenchmarkProblems": [[NN, {"InitialSolutionParameters": None,
                                       "BenchmarkCommonParameters": common or [{"EdgeType": ["ShiftPtr"]}],
                                       "ForkParameters": forks, "JoinParameters": None,
                                       "BenchmarkFinalParameters": [{"ProblemSizes": sizes}]}]]}
    if logic:
        cfg["LibraryLogic"] = {"ScheduleName": "aldebaran", "DeviceNames": ["Device 7408"], "ArchitectureName": "gfx90a"}
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


# ---- reading

def test_sizes_follow_tensiles_range_and_exact_forms():
    pt = ProblemType.from_dict(NN, "t")
    sizes, min_stride = read_problem_sizes(pt, [
        {"Range": [[5, 3, 11], 0, [2], [7, 1, 2, 12]]},          # M 5,8,11; N = M; batch 2; K 7,8,11 (the step grows by 2)
        {"Exact": [13, 17, 1, 19]},
        {"Exact": [13, 17, 1, 19, 40, 41, 42, 43]},             # explicit leading dimensions
        {"Exact": [13, 17, 1, 19]},                             # a duplicate: once
        {"MinStride": [0, 0, 0, 0]}], "t")
    assert [(s.m, s.n, s.batch, s.k) for s in sizes[:9]] == [
        (m, m, 2, k) for k in (7, 8, 11) for m in (5, 8, 11)]
    assert sizes[9].sizes == (13, 17, 1, 19, 13, 13, 13, 19) and sizes[10].ld == (40, 41, 42, 43)
    assert len(sizes) == 11 and min_stride == (0, 0, 0, 0)
    # [min, max] steps by min (Tensile's two-entry form)
    sizes, _ = read_problem_sizes(pt, [{"Range": [[64, 200], 0, [1], [8]]}], "t")
    assert [s.m for s in sizes] == [64, 128, 192]
    with pytest.raises(UserError, match="did you mean Exact"):
        read_problem_sizes(pt, [{"Exakt": [1, 2, 3, 4]}], "t")
    with pytest.raises(UserError, match="takes 4"):
        read_problem_sizes(pt, [{"Exact": [1, 2, 3]}], "t")


def test_unknown_keys_are_one_error_with_a_suggestion(tmp_path):
    p = write_config(tmp_path, [{"DepthU": [8]}], [{"Exact": [8, 8, 1, 8]}], extra_gp={"SleepPrecent": 1})
    with pytest.raises(UserError, match="did you mean SleepPercent"):
        read_config(p)
    p = write_config(tmp_path, [{"DepthUU": [8]}], [{"Exact": [8, 8, 1, 8]}])
    with pytest.raises(UserError, match="did you mean DepthU"):
        read_config(p)
    p = write_config(tmp_path, [{"PrefetchGlobalRead": [7]}], [{"Exact": [8, 8, 1, 8]}])
    with pytest.raises(UserError, match="PrefetchGlobalRead value 7 is not allowed"):
        read_config(p)


def test_fork_order_is_tensiles_and_obsolete_sections_are_noted(tmp_path):
    p = write_config(tmp_path, [{"ThreadTile": [[2, 2], [4, 4]]}, {"WorkGroup": [[8, 8, 1], [16, 8, 1], [4, 4, 1]]},
                                {"DepthU": [8]}], [{"Exact": [8, 8, 1, 8]}])
    g = read_config(p).problems[0].groups[0]
    perms = g.permutations()
    assert len(perms) == 6 and g.constants["DepthU"] == 8 and "DepthU" not in g.forks
    # the first fork parameter (in Tensile's parameter order) varies fastest
    first = next(iter(g.forks))
    assert [pp[first] for pp in perms[:2]] == g.forks[first][:2]
    raw = yaml.safe_load(p.read_text())
    raw["BenchmarkProblems"][0][1]["JoinParameters"] = ["MacroTile"]
    p.write_text(yaml.safe_dump(raw))
    assert any("JoinParameters" in n for n in read_config(p).problems[0].groups[0].notes)


@pytest.mark.parametrize("name", sorted(p.name for p in (SHARED / "data" / "configs").glob("*.yaml"))
                         if (SHARED / "data" / "configs").is_dir() else [])
def test_every_shipped_config_reads(name):
    cfg = read_config(SHARED / "data" / "configs" / name)
    for problem in cfg.problems:
        for g in problem.groups:
            assert problem.problem_type_error or g.sizes


# ---- running (model backend: no GPU, no emulation)

needs_llvm = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed")


def _tune(cfg, out, cache, **kw):
    from tensile_asm.tuning.driver import tune
    return tune(cfg, out, backend=kw.pop("backend", "model"), cache_dir=cache, jobs=1, progress=False,
                log=lambda *a: None, **kw)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("kernel-cache")


FORKS = [{"ThreadTile": [[4, 4], [2, 2]]}, {"WorkGroup": [[16, 16, 1]]}, {"DepthU": [8, 16]},
         {"GlobalSplitUWorkGroupMappingRoundRobin": [False, True]}, {"PrefetchGlobalRead": [0]}, {"VectorWidth": [4, 2]},
         {"GlobalReadVectorWidth": [-1]}]
SIZES = [{"Exact": [127, 61, 1, 33]}, {"Exact": [512, 512, 1, 512]}, {"Range": [[64], [64], [1], [96, 32, 128]]}]


@pytest.fixture(scope="module")
def whole(tmp_path_factory, cache):
    """One model run of the FORKS x SIZES config: (its folder, its report)."""
    tmp = tmp_path_factory.mktemp("whole")
    cfg = write_config(tmp, FORKS, SIZES)
    return tmp, _tune(cfg, tmp / "out", cache)


@needs_llvm
def test_model_run_writes_tensiles_step_folders_and_a_library(whole, cache):
    from tensile_asm.library.logic import read_logic_file

    tmp_path, rep = whole
    cfg = tmp_path / "config.yaml"
    [g] = rep.groups
    # 16 forks: GlobalSplitUWorkGroupMappingRoundRobin is not built by the writer, VectorWidth 4 with ThreadTile 2x2 is invalid by
    # Tensile's rules; each fork not built is listed with its reason, none dropped
    assert g.forks == 16 and g.built + g.rejected == 16 and g.built >= 2
    rejected = yaml.safe_load((tmp_path / "out/1_BenchmarkProblems/Cijk_Ailk_Bljk_SB_00/00_Final/rejected.yaml").read_text())
    assert sorted(r["fork"] for r in rejected) == sorted(c.fork for c in g.candidates if not c.ok)
    assert all(not c.params["GlobalSplitUWorkGroupMappingRoundRobin"] for c in g.candidates if c.ok)
    assert any("GlobalSplitUWorkGroupMappingRoundRobin" in r["reason"] for r in rejected)
    assert any(r["reason"].startswith("invalid solution") and "VectorWidth 4" in r["reason"] for r in rejected)
    rows = list(csv.reader((tmp_path / "out/2_BenchmarkData/Cijk_Ailk_Bljk_SB_00.csv").open()))
    assert rows[0][:10] == ["GFlops", "SizeI", "SizeJ", "SizeK", "SizeL", "LDD", "LDC", "LDA", "LDB", "TotalFlops"]
    assert rows[0][10:12] == ["Backend", "Provenance"] and len(rows[0]) == 12 + g.built and len(rows) == 1 + 4
    assert all(r[10:12] == ["model", "modelled"] and min(float(x) for x in r[12:]) > 0 for r in rows[1:])
    # the winners are the fastest per size, and the logic file maps each size to its winner
    [logic] = rep.logic_files
    lf = read_logic_file(logic)
    assert len(lf.exact_logic) == 4 and 1 <= len(lf.entries) <= g.built
    for row in rows[1:]:
        best = max(float(x) for x in row[12:])
        size = [int(x) for x in row[1:9]]
        [(idx, perf)] = [(i, p) for s, i, p in _rows(lf) if list(s) == size]
        assert perf == pytest.approx(best, rel=1e-5)
        column = rows[0][12 + [float(x) for x in row[12:]].index(best)]
        [cand] = [c for c in g.candidates if c.name == column]
        keys = ("ThreadTile", "WorkGroup", "DepthU", "VectorWidth", "GlobalSplitUWorkGroupMappingRoundRobin")
        assert [lf.entries[idx].solution.params[k] for k in keys] == [cand.solution.params[k] for k in keys]
    support = (tmp_path / "out/4_LibraryClient/support.json").read_text()
    assert '"built": true' in support and '"built": false' not in support
    # a rerun resumes: nothing is benchmarked again
    rep2 = _tune(cfg, tmp_path / "out", cache)
    assert rep2.groups[0].benchmarked == 0 and rep2.groups[0].reused == 4 * g.built
    # a size added to the config: only it is benchmarked, and the logic file and library are redone
    import shutil
    grown = tmp_path / "grown"
    shutil.copytree(tmp_path / "out", grown / "out")
    raw = yaml.safe_load(cfg.read_text())
    raw["BenchmarkProblems"][0][1]["BenchmarkFinalParameters"][0]["ProblemSizes"].append({"Exact": [7, 300, 3, 5]})
    (grown / "config.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    rep3 = _tune(grown / "config.yaml", grown / "out", cache)
    assert rep3.groups[0].benchmarked == g.built
    assert len(read_logic_file(rep3.logic_files[0]).exact_logic) == 5


def _rows(lf):
    for row in lf.exact_logic:
        yield row.sizes, row.solution_index, row.perf


@needs_llvm
def test_shards_merge_to_the_unsharded_winners(tmp_path, cache, whole):
    cfg = write_config(tmp_path, FORKS, SIZES)
    whole_dir, whole = whole
    for i in range(3):
        part = _tune(cfg, tmp_path / "sharded", cache, shard=(i, 3))
        assert part.logic_files == [] and part.groups[0].benchmarked == 4 * sum(
            1 for c in part.groups[0].candidates if c.ok and c.fork % 3 == i)
    merged = _tune(cfg, tmp_path / "sharded", cache)
    assert merged.groups[0].benchmarked == 0
    assert [(w.sizes, w.candidate.name) for w in merged.groups[0].winners] == \
        [(w.sizes, w.candidate.name) for w in whole.groups[0].winners]
    a = (whole_dir / "out/3_LibraryLogic").glob("*.yaml")
    assert [p.read_text() for p in a] == [p.read_text() for p in (tmp_path / "sharded/3_LibraryLogic").glob("*.yaml")]


@needs_llvm
def test_emulator_backend_validates_small_sizes(tmp_path, cache):
    cfg = write_config(tmp_path, [{"ThreadTile": [[2, 2]]}, {"WorkGroup": [[8, 8, 1]]}, {"DepthU": [8]}],
                       [{"Exact": [19, 23, 2, 13]}, {"Exact": [4096, 4096, 1, 4096]}], logic=False)
    rep = _tune(cfg, tmp_path / "out", cache, backend="emulator", arch="gfx90a")
    [g] = rep.groups
    rows = list(csv.reader((tmp_path / "out/2_BenchmarkData/Cijk_Ailk_Bljk_SB_00.csv").open()))
    assert rows[1][10:12] == ["emulator", "modelled"] and float(rows[1][12]) > 0
    assert rows[2][12] == "-1"          # too large to emulate: not run, never a made-up number
    assert len(g.winners) == 1 and g.no_winner and rep.logic_files == []


def test_maps_grid_places_each_winner():
    from types import SimpleNamespace as NS

    from tensile_asm.tuning.maps import grid
    from tensile_asm.tuning.sizes import TuningSize

    sizes = [TuningSize((m, n, 1, 32, m, m, m, n), m, n, 32, 1, (m, m, m, n)) for n in (8, 24) for m in (16, 48, 80)]
    wins = [NS(sizes=s.sizes, gflops=float(s.m + s.n), candidate=NS(name="big" if s.m > 40 else "small"))
            for s in sizes if (s.m, s.n) != (80, 24)]
    xa, ya, xs, ys, gf, win, names = grid(sizes, wins)
    assert (xa, ya, xs, ys) == ("m", "n", [16, 48, 80], [8, 24]) and names == ["small", "big"]
    assert gf[1, 0] == 16 + 24 and np.isnan(gf[1, 2]) and win[1, 2] == -1 and list(win[0]) == [0, 1, 1]
    assert grid(sizes[:3] + [TuningSize((5, 5, 1, 5, 5, 5, 5, 5), 5, 5, 5, 1, (5, 5, 5, 5))], []) is None


@needs_llvm
def test_selection_nearest_and_model_for_unseen_sizes(tmp_path, cache, whole):
    import shutil

    from tensile_asm.gemm import GemmKernelContract
    from tensile_asm.library.logic import read_logic_file
    from tensile_asm.runtime.base import GemmSize
    from tensile_asm.runtime.model import ModelRuntime

    whole_dir, rep = whole
    with pytest.raises(UserError, match="--selection-size"):
        _tune(whole_dir / "config.yaml", tmp_path / "x", cache, selection="model")
    shutil.copytree(whole_dir / "out", tmp_path / "out")
    cfg = whole_dir / "config.yaml"
    unseen = [(120, 70, 40), (500, 480, 600), (300, 200, 7)]
    # nearest: the logic file is the benchmarked one; each unseen size gets the row closest in (M, N, K)
    near = _tune(cfg, tmp_path / "out", cache, selection="nearest", selection_sizes=unseen + [(127, 61, 33)])
    [logic] = near.logic_files
    assert logic.read_text() == (whole_dir / "out/3_LibraryLogic" / logic.name).read_text()
    lf = read_logic_file(logic)
    rows = list(_rows(lf))
    for c, (m, n, k) in zip(near.selections[logic], unseen):
        sizes, idx, _ = min(rows, key=lambda r: (r[0][0] - m) ** 2 + (r[0][1] - n) ** 2 + (r[0][3] - k) ** 2)
        assert c.method == "nearest" and c.solution_index == idx
    assert near.selections[logic][3].method == "benchmarked"
    csv_rows = list(csv.reader(logic.with_suffix(".selection.csv").open()))
    assert csv_rows[0][:5] == ["M", "N", "K", "Batch", "Method"] and len(csv_rows) == 5
    # model: each unseen size becomes an exact row naming the solution the model finds fastest there; the
    # benchmarked size keeps its benchmarked row
    mod = _tune(cfg, tmp_path / "out", cache, selection="model", selection_sizes=unseen + [(127, 61, 33)])
    lf2 = read_logic_file(mod.logic_files[0])
    rows2 = {tuple(s[:4]): (i, p) for s, i, p in _rows(lf2)}
    assert len(rows2) == len(rows) + 3 and all(rows2[tuple(s[:4])] == (i, p) for s, i, p in rows)
    order = list(dict.fromkeys(w.candidate.name for w in rep.groups[0].winners))   # the logic file's order
    built = {c.name: c for c in rep.groups[0].candidates if c.ok}
    assert len(order) == len(lf2.entries) >= 2
    rt = ModelRuntime()
    for m, n, k in unseen:
        idx, perf = rows2[(m, n, 1, k)]
        speeds = []
        for e in lf2.entries:
            c = built[order[e.index]]
            contract = GemmKernelContract.from_solution(c.solution, c.name)
            speeds.append(rt.time_gemm(c.code_object, contract, GemmSize(m, n, k)).gflops)
        assert perf == pytest.approx(max(speeds), rel=1e-6) and speeds[idx] == pytest.approx(max(speeds), rel=1e-6)
    assert [c.method for c in mod.selections[mod.logic_files[0]]] == ["model"] * 3 + ["benchmarked"]


def test_forks_tensile_rejects_for_prefetch_local_read_are_listed():
    """Tensile 4.44 rejects PrefetchLocalRead against LoopIters while deriving (solution/derive.py has the rule),
    and its writer fails on 1LDSB.yaml's PLR5 winner with one LDS buffer (solution/one_lds_buffer.py); each such
    fork is listed with the reason, the others are candidates."""
    import tempfile

    from tensile_asm.isa.arch import load_arch
    from tensile_asm.tuning.candidates import make_candidates

    with tempfile.TemporaryDirectory() as tmp:
        cfg = read_config(write_config(Path(tmp), [
            {"MatrixInstruction": [[16, 16, 4, 1]]}, {"ThreadTile": [[1, 32]]}, {"WorkGroup": [[64, 4, 1]]},
            {"ScheduleIterAlg": [3]}, {"DepthU": [16, 32]}, {"PrefetchLocalRead": [1, 5, 9, 11, 17]},
            {"LocalReadVectorWidth": [1]}, {"1LDSBuffer": [0, 1]}],
            [{"Exact": [64, 32, 1, 64]}]))
    [problem] = cfg.problems
    cands = make_candidates(problem, problem.groups[0], load_arch("gfx908"), None)
    got = {(c.params["DepthU"], c.params["PrefetchLocalRead"], c.params["1LDSBuffer"]): c.reason or "ok"
           for c in cands}
    # DepthU 16 -> LoopIters 4, DepthU 32 -> 8 (MatrixInstruction K 4)
    assert "% LoopIters 8 > 1" in got[(32, 11, 0)] and "invalid solution (Tensile's rules)" in got[(32, 11, 0)]
    assert ">= 2x LoopIters 4" in got[(16, 9, 0)] and ">= 2x LoopIters 8" in got[(32, 17, 0)]
    assert "kernel writer refuses it" in got[(16, 5, 1)] and "kernel writer refuses it" in got[(16, 1, 1)]
    assert "PrefetchLocalRead" not in got[(16, 5, 0)] and "PrefetchLocalRead" not in got[(16, 1, 0)]
    assert "PrefetchLocalRead" not in got[(32, 9, 0)]


def test_candidates_are_derived_for_the_target_isa():
    """Tensile derives a fork with the target ISA set: gfx90a's assembler has the glc modifier, so the logic file
    says MemoryModifierFormat GLC (SC0 there made Tensile 4.44 write `buffer_atomic_cmpswap ... sc0`, which its
    assembler refuses for gfx90a); gfx942 says SC0."""
    import tempfile

    from tensile_asm.isa.arch import load_arch
    from tensile_asm.tuning.candidates import make_candidates

    with tempfile.TemporaryDirectory() as tmp:
        cfg = read_config(write_config(Path(tmp), [{"WorkGroup": [[16, 16, 1]]}, {"ThreadTile": [[2, 2]]},
                                                   {"DepthU": [8]}], [{"Exact": [64, 32, 1, 64]}]))
    [problem] = cfg.problems
    for arch, mmf in (("gfx90a", "GLC"), ("gfx942", "SC0")):
        [c] = make_candidates(problem, problem.groups[0], load_arch(arch), None)
        assert c.solution.params["MemoryModifierFormat"] == mmf and c.solution.params["ISA"][:2] == (
            [9, 0] if arch == "gfx90a" else [9, 4])
