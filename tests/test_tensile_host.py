"""Tensile's own C++ host library selects what our Library.select selects (tools/tensile_host/).

These run only where tools/tensile_host/build.sh has built tensile-host-select (it needs the apt packages
libmsgpack-cxx-dev, libamdhip64-dev and clang-15; CI does not build it). bench/tensile_host_selection.md has
the full comparison.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tensile_asm.library.select import Library

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tools" / "tensile_host"
TENSILE_WRITTEN = REPO / "tests" / "data" / "tensile_reference" / "logic_kinds_gfx90a" / "TensileLibrary.dat"
KINDS = REPO / "tests" / "data" / "logic_kinds"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"tensile_host_{name}", TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


compare = _load("compare")
BINARY = compare.find_binary(None)
pytestmark = pytest.mark.skipif(
    BINARY is None, reason="tensile-host-select is not built (tools/tensile_host/build.sh --install-deps: it needs "
                           "libmsgpack-cxx-dev, libamdhip64-dev and clang-15 from apt)")


@pytest.fixture
def count(request):
    return 200 if request.config.getoption("--slow") else 12


def _run(path, tmp_path, count, metric="DeviceEfficiency", seed=7):
    rows, bad = compare.compare(Path(path), BINARY, count, seed, None, tmp_path, show=-1, metric=metric)
    return rows, [b for b in bad if b]


def test_tensile_written_library_every_kind_selects_alike(tmp_path, count):
    # Tensile's own .dat of every library kind (Matching distances, GridBased, DecisionTree, CU-count/APU rows)
    for metric in ("DeviceEfficiency", "CUEfficiency", "ExperimentalDTree"):
        rows, bad = _run(TENSILE_WRITTEN, tmp_path, count, metric)
        assert not bad, "\n".join(bad[:5])
        assert sum(r.problems for r in rows) >= 5 * count
        assert sum(r.errors for r in rows) == 0
        picked = set().union(*(r.chosen for r in rows))
        assert len(picked) >= 5  # not a run of "none"


def test_our_library_of_every_kind_loads_in_tensile_and_selects_alike(tmp_path, count):
    selection_library = _load("selection_library")
    out = tmp_path / "kinds"
    assert selection_library.main([str(KINDS), str(out), "--architecture", "gfx90a"]) == 0
    dat = out / "library" / "TensileLibrary.dat"
    assert len(Library.load(dat).solutions) >= 20
    rows, bad = _run(dat, tmp_path, count)
    assert not bad, "\n".join(bad[:5])
    assert {r.apu for r in rows} == {0, 1}  # the APU row was selected for too
    assert len(set().union(*(r.chosen for r in rows))) >= 5


def test_a_wrong_selection_is_reported(tmp_path, monkeypatch):
    # ours accepting every solution (no predicate checked) must show up as disagreements
    monkeypatch.setattr(Library, "_solution_ok", lambda self, index, v, hw: index in self.solutions)
    rows, bad = _run(TENSILE_WRITTEN, tmp_path, 12)
    assert sum(r.differ for r in rows) > 0
    assert bad and all("DISAGREE" in b and "Tensile:" in b for b in bad)


def test_driver_answers_each_line_and_refuses_bad_input(tmp_path):
    good = ("op=Contraction_l_Ailk_Bljk_Cijk_Dijk types=Float,Float,Float,Float sizes=128,128,1,128 "
            "a=1,128,16384 b=1,128,16384 c=1,128,16384 d=1,128,16384 alpha=1 beta=0")
    proc = subprocess.run([str(BINARY), str(TENSILE_WRITTEN), "gfx90a", "104"], capture_output=True, text=True,
                          input=f"{good}\nop=Contraction_l_Ailk_Bljk_Cijk_Dijk sizes=1\n{good.replace('Float', 'Foo')}\n")
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == 3
    assert lines[0].split()[0].isdigit() and lines[0].split()[1].startswith("Cijk_Ailk_Bljk_SB_")
    assert lines[1] == "error missing key types"
    assert lines[2].startswith("error Invalid data type: Foo")
    junk = tmp_path / "junk.dat"
    junk.write_bytes(b"\xc1 not msgpack")
    proc = subprocess.run([str(BINARY), str(junk), "gfx90a"], capture_output=True, text=True, input="")
    assert proc.returncode == 1 and "could not load" in proc.stderr


def test_hybrid_8bit_and_workspace_solutions_load_in_tensile(tmp_path, shared_dir, count):
    # found by this harness: Tensile's DataType has no Float8BFloat8 (A and B are written apart) and its
    # WorkspaceCheck has no index or value; either made LoadLibraryFile refuse the whole file
    logic = tmp_path / "logic"
    logic.mkdir()
    src = shared_dir / "data" / "logic" / "rocblas-asm_full" / "aquavanjaram942"
    for name in ("aquavanjaram942_Cijk_Ailk_Bljk_F8B8B8S_BH_SR.yaml", "aquavanjaram942_Cijk_Ailk_Bljk_HHS_BH.yaml"):
        (logic / name).write_bytes((src / name).read_bytes())
    out = tmp_path / "out"
    assert _load("selection_library").main([str(logic), str(out), "--architecture", "gfx942"]) == 0
    dat = out / "library" / "TensileLibrary.dat"
    sols = Library.load(dat).solutions.values()
    assert {(s["problemType"]["aType"], s["problemType"]["bType"]) for s in sols} == {("Float8", "BFloat8"),
                                                                                        ("Half", "Half")}
    assert any(s["taskPredicate"] == {"type": "WorkspaceCheck"} for s in sols)
    rows, bad = _run(dat, tmp_path, count)
    assert not bad, "\n".join(bad[:5])
    assert sum(r.errors for r in rows) == 0 and len(set().union(*(r.chosen for r in rows))) >= 3


def test_unbuilt_solutions_and_inserted_fallback_select_alike(tmp_path, count):
    # --separate-architectures with fallback logic (inserted as Tensile's addFallback, numbered from 0) and an
    # unbuilt solution (a gap in the numbering, its table rows left out): Tensile's host loads it and agrees
    from test_library_tensile_order import RefusingBuilder, make_logic
    from tensile_asm.library.create import create_library

    logic = make_logic(tmp_path / "logic")
    create_library(logic, tmp_path / "out", "gfx90a", build=RefusingBuilder(), jobs=1, library_format="msgpack",
                   separate_architectures=True, cache_dir=tmp_path / "cache")
    dat = tmp_path / "out" / "library" / "TensileLibrary_gfx90a.dat"
    indices = sorted(Library.load(dat).solutions)
    assert indices == [0, 1, 0x90a << 18, (0x90a << 18) + 2]
    rows, bad = _run(dat, tmp_path, count)
    assert not bad, "\n".join(bad[:5])
    assert sum(r.errors for r in rows) == 0 and len(set().union(*(r.chosen for r in rows))) >= 2
