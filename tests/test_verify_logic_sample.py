"""The one size rule (tensile_asm.benchmark.sample.edge_cases) and tools/verify_logic_sample.py: real logic cut,
built by create-library and verified on the emulator, from logic and from a library folder."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from conftest import SHARED, have_llvm
from tensile_asm.benchmark.sample import (Case, SampleResult, cut_logic, edge_cases, initial_strides, next_prime,
                                          size_constraints)
from tensile_asm.benchmark.verify import CaseResult, SolutionResult, admitted_size
from tensile_asm.problem import GemmSize

REPO = Path(__file__).resolve().parents[1]
LITE = SHARED / "data" / "logic" / "lite_configs"


def _entry(preds=(), mt=(128, 64), du=16, wgm=1, stagger=(0, 0), gsu=1, use_beta=True, a_type="Float",
           op="Contraction_l_Ailk_Bljk_Cijk_Dijk", **pt):
    return {"problemPredicate": {"type": "And", "value": list(preds)},
            "problemType": {"operationIdentifier": op, "useBeta": use_beta, "aType": a_type, **pt},
            "sizeMapping": {"macroTile": [*mt, 1], "depthU": du, "workGroupMapping": wgm, "staggerU": stagger[0],
                            "staggerStrideShift": stagger[1], "globalSplitU": gsu}}


def _sizes(cases):
    return [(c.size.m, c.size.n, c.size.k, c.size.batch, c.beta) for c in cases]


def test_edge_cases_from_size_mapping_and_predicates():
    assert next_prime(128) == 131 and next_prime(1) == 2 and next_prime(13) == 17
    # no predicates: 1x1x1 beta 0; primes past the tile (two tiles along M and N) and 2 DepthU, batch 2; a corner
    assert _sizes(edge_cases(_entry())) == [(1, 1, 1, 1, 0.0), (131, 67, 37, 2, 0.5), (13, 11, 17, 2, 0.0)]
    assert all(c.alpha == -1.25 for c in edge_cases(_entry()))
    # multiples, minimum K of GlobalSplitU, leading sizes: every size rounded up to what they admit
    preds = [{"type": "Free0SizeMultiple", "index": 0, "value": 4}, {"type": "BoundSizeMultiple", "index": -1, "value": 8},
             {"type": "GlobalSplitUCheckMinK", "value": 768}, {"type": "LeadingFree1SizesGreaterOrEqual", "value": 2}]
    assert _sizes(edge_cases(_entry(preds))) == [(4, 2, 768, 1, 0.0), (132, 67, 768, 2, 0.5), (16, 11, 768, 2, 0.0)]
    # size equal / below / greater than on the summation index (3 in Cijk); asserted alpha and beta
    preds = [{"type": "SizeLessThan", "index": 3, "value": 32}, {"type": "SizeGreaterThan", "index": 0, "value": 200},
             {"type": "BetaValue", "value": "1"}, {"type": "AlphaValue", "value": "1"}]
    cases = edge_cases(_entry(preds))
    assert _sizes(cases) == [(201, 1, 1, 1, 1.0), (201, 67, 31, 2, 1.0), (201, 11, 17, 2, 1.0)]
    assert {c.alpha for c in cases} == {1.0}
    # no beta, no batch (Cij), integer types
    assert _sizes(edge_cases(_entry(use_beta=False, op="Contraction_l_Ail_Blj_Cij_Dij")))[1] == (131, 67, 37, 1, 0.0)
    assert {(c.alpha, c.beta) for c in edge_cases(_entry(a_type="Int8x4"))} == {(-3.0, 0.0), (-3.0, 5.0)}
    # mapping: more tile rows than WorkGroupMapping, not a multiple of it; stagger: K past the StaggerU wrap
    assert edge_cases(_entry(wgm=-4), mapping=True)[1].size.n == next_prime(64 * 5)       # 6 rows: 4 + 2
    assert edge_cases(_entry(wgm=2), mapping=True)[1].size.n == next_prime(64 * 4)        # 5 rows (4 is 2 x 2)
    assert edge_cases(_entry(wgm=8))[1].size.n == 67
    assert edge_cases(_entry(stagger=(32, 2), gsu=2), stagger=True)[1].size.k == next_prime(2 * 16 * 4 * 2)


def test_admitted_size_is_the_same_rounding():
    params = {"AssertFree0ElementMultiple": 4, "AssertFree1ElementMultiple": 1, "AssertSummationElementMultiple": 2}
    assert admitted_size(params, GemmSize(1, 3, 5, 2)) == GemmSize(4, 3, 6, 2)
    c = size_constraints([{"type": "Free0SizeMultiple", "value": 4}, {"type": "BoundSizeMultiple", "value": 2}])
    assert c.multiple == {"m": 4, "n": 1, "k": 2, "batch": 1}


def test_initial_strides_from_stride_predicates():
    e = _entry([{"type": "StrideCEqual", "index": 0, "value": 0}, {"type": "StrideAEqual", "index": 1, "value": 1}],
               useInitialStridesAB=True, useInitialStridesCD=True)
    first, ld = initial_strides(e, GemmSize(17, 13, 9, 2))
    assert first == {"A": 9 * 1 + 1, "B": 3, "C": 0, "D": 2} and ld == {"A": 1}
    assert initial_strides(_entry(), GemmSize(1, 1, 1)) == ({}, {})


def test_cut_keeps_the_chosen_solutions_renumbered():
    data = [{}, "s", "gfx90a", [], {}, [{"SolutionIndex": i, "x": i} for i in range(4)], [0, 1, 2, 3],
            [[[1, 1, 1, 1], [3, 9.0]], [[2, 2, 1, 2], [1, 4.0]], [[3, 3, 1, 3], [0, 1.0]]], None]
    out = cut_logic(data, [3, 1])
    assert out[5] == [{"SolutionIndex": 0, "x": 3}, {"SolutionIndex": 1, "x": 1}]
    assert out[7] == [[[1, 1, 1, 1], [0, 9.0]], [[2, 2, 1, 2], [1, 4.0]]]
    from tensile_asm.errors import UserError
    with pytest.raises(UserError, match="no solution with SolutionIndex"):
        cut_logic(data, [7])


def test_sample_result_states():
    case = Case(GemmSize(1, 1, 1), -1.25, 0.0)
    ok = CaseResult(case.size, -1.25, 0.0, 0.0, 1e-5, True)
    bad = CaseResult(case.size, -1.25, 0.0, 1.0, 1e-5, False, "3 elements above tolerance")
    run = lambda *r, not_run=None, skipped=(): SolutionResult("k", "gfx90a", "x.co", list(r), list(skipped), not_run)
    assert SampleResult("k", [(case, run(ok)), (case, run(skipped=[case.size]))]).state == "PASS"
    assert SampleResult("k", [(case, run(ok)), (case, run(bad))]).state == "FAIL"
    assert "3 elements above tolerance" in SampleResult("k", [(case, run(bad))]).detail()
    assert SampleResult("k", [(case, run(skipped=[case.size]))]).state == "NOT RUN"
    assert SampleResult("k", [(case, run(ok)), (case, run(not_run="CRASH KeyError: x"))]).state == "CRASH"


@pytest.mark.skipif(not have_llvm(), reason="needs LLVM (llvm-mc, ld.lld)")
def test_tool_cuts_builds_and_verifies_real_logic(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    spec = importlib.util.spec_from_file_location("verify_logic_sample", REPO / "tools" / "verify_logic_sample.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    logic = LITE / "aldebaran_Cijk_Ailk_Bljk_SB.yaml"           # its 8x8 tiles: quick on the emulator
    out = tmp_path / "out"
    assert tool.main([str(logic), "--solutions", "6,7", "--jobs", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "built 2/2" in printed and "2 verified: 2 PASS" in printed
    assert "PASS aldebaran_Cijk_Ailk_Bljk_SB.yaml#7 Cijk_Ailk_Bljk_SB_MT8x8x8" in printed
    assert "[1x1x1 beta 0, 11x11x17x2 beta 0.5, 13x11x11x2 beta 0]" in printed
    # the same library, sampled per logic file; a kernel that computes wrongly is reported
    assert tool.main(["--library", str(out), "--per-file", "1", "--seed", "2"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"gfx90a aldebaran_Cijk_Ailk_Bljk_SB.yaml +2/ +2 built", printed) and "1 verified: 1 PASS" in printed
    from tensile_asm.benchmark import verify
    real = verify.compare

    def off_by_a_bit(inst, d, *args, **kw):
        return real(inst, d * 1.01, *args, **kw)
    monkeypatch.setattr(verify, "compare", off_by_a_bit)
    assert tool.main(["--library", str(out), "--per-file", "1"]) == 1
    assert "FAIL aldebaran_Cijk_Ailk_Bljk_SB.yaml#" in capsys.readouterr().out


@pytest.mark.skipif(not have_llvm(), reason="needs LLVM (llvm-mc, ld.lld)")
def test_tool_verifies_a_solution_no_size_maps_to(tmp_path, capsys, monkeypatch):
    # solution 0 of this file is in no row of its exact table (110 of its 420 are not), so no node of the built
    # library's tree names it; the kernel is built all the same, and the tool verifies it (it had a KeyError)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    spec = importlib.util.spec_from_file_location("verify_logic_sample", REPO / "tools" / "verify_logic_sample.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    logic = SHARED / "data" / "logic" / "rocblas-asm_full" / "aldebaran" / "aldebaran_Cijk_Ailk_Bljk_BBS_BH_GB.yaml"
    out = tmp_path / "out"
    assert tool.main([str(logic), "--solutions", "0", "--jobs", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "PASS aldebaran_Cijk_Ailk_Bljk_BBS_BH_GB.yaml#0 Cijk_Ailk_Bljk_BBS_BH_GB_MT64x128x8_" in printed
    assert "1 verified: 1 PASS" in printed
    # a support.json naming a solution the library lacks: one sentence, no traceback
    support = out / "support.json"
    support.write_text(support.read_text().replace('"Cijk_Ailk_Bljk_BBS_BH_GB_', '"Cijk_Ailk_Bljk_BBS_BH_GB_X'))
    assert tool.main(["--library", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "has no solution named Cijk_Ailk_Bljk_BBS_BH_GB_XMT64x128x8_" in err and "\n" not in err
    assert tool.main(["--library", str(tmp_path)]) == 2
    assert "no support.json there" in capsys.readouterr().err
    assert tool.main([str(LITE / "aldebaran_Cijk_Ailk_Bljk_SB.yaml"), "--solutions", "3,8"]) == 2   # 0 to 7
    assert "--solutions 8: aldebaran_Cijk_Ailk_Bljk_SB.yaml has no solution at that position" in capsys.readouterr().err


@pytest.mark.parametrize("hybrid", ["B8F8", "F8B8"])
def test_library_problem_keeps_hybrid_input_types(hybrid):
    # a library written from hybrid 8-bit logic names A's and B's types apart; the problem verify_library asks
    # must keep both (it had B = A's type, so the TypesEqual predicate refused every size: nothing ran)
    from tensile_asm.benchmark.verify import library_problem
    from tensile_asm.gemm import GemmKernelContract
    from tensile_asm.library.logic import read_logic_file
    from tensile_asm.library.master import solution_entry
    from tensile_asm.library.predicates import problem_holds
    from tensile_asm.library.problem_view import ContractionView

    path = SHARED / "data" / "logic" / "rocblas-asm_full" / "aquavanjaram942" / f"aquavanjaram942_Cijk_Ailk_Bljk_{hybrid}SS_BH.yaml"
    sol = next(e.solution for e in read_logic_file(path).entries if e.solution is not None)
    entry = solution_entry(sol, "k", 0, 0)
    assert entry["problemType"]["aType"] != entry["problemType"]["bType"]
    problem = library_problem(GemmKernelContract.from_library_entry(entry), entry, GemmSize(64, 64, 64, 2), 1.0, 0.0)
    assert problem.problem_type.data_type.char == hybrid
    assert problem_holds(entry["problemPredicate"], ContractionView.from_problem(problem))
