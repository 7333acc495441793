"""Which logic files create-library reads, in which order, and how it numbers their solutions, compared with
libraries AMD's Tensile 4.44 TensileCreateLibrary wrote from the same folder (tests/data/tensile_order, made
by ../shared/reference/tensile/tensile-tcl; its README has the commands): findLogicFiles' order (a folder's
files before its subfolders', ``*.yaml`` before ``*.yml``) and filter (a schedule alias or ``hip`` in the
name), every solution of a file numbered whether built or not, and addFallback's fallback library inside
each architecture's ``--separate-architectures`` library."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import yaml

from conftest import SHARED
from test_library_lazy import FakeBuilder, load
from tensile_asm.kernel_cache import CacheEntry, KernelPart
from tensile_asm.library.create import create_library
from tensile_asm.library.logic import find_logic_files, read_logic_file
from tensile_asm.library.select import Library
from tensile_asm.problem import Problem

REFERENCE = Path(__file__).resolve().parent / "data" / "tensile_order"
LOGIC = SHARED / "data" / "logic"
# as the README's commands lay them out: a folder's own file, then its subfolder's, then the one below
LAYOUT = {"aldebaran_Cijk_Ailk_Bljk_SB.yaml": (LOGIC / "lite_configs" / "aldebaran_Cijk_Ailk_Bljk_SB.yaml", [6, 2, 7]),
          "sub/hip_Cijk_Ailk_Bljk_SB.yaml": (LOGIC / "rocblas-asm_full" / "hip" / "hip_Cijk_Ailk_Bljk_SB.yaml", None),
          "sub/deeper/vega20_Cijk_Ailk_Bljk_SB.yaml": (LOGIC / "lite_configs" / "vega20_Cijk_Ailk_Bljk_SB.yaml", None)}


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


def make_logic(d: Path) -> Path:
    """The logic folder of tests/data/tensile_order/README.md, under ``d``."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from cut_logic import cut
    for rel, (src, keep) in LAYOUT.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        if keep is None:
            (d / rel).write_bytes(src.read_bytes())
        else:
            data = yaml.load(src.read_text(), Loader=yaml.CSafeLoader)
            (d / rel).write_text(yaml.dump(cut(data, keep), Dumper=yaml.CSafeDumper))
    return d


@pytest.fixture(scope="module")
def logic_dir(tmp_path_factory):
    return make_logic(tmp_path_factory.mktemp("logic"))


class RefusingBuilder(FakeBuilder):
    """Builds every solution but the 64x64 macro tiles (the cut aldebaran file's second solution)."""

    def version(self):
        return "fake-refusing"

    def supports(self, solution, arch):
        return "refused by the test" if (solution.derived.mt0, solution.derived.mt1) == (64, 64) else None

    def compile_kernel(self, solution, arch, name, timing=None):
        language = solution.params["KernelLanguage"]      # the fallback logic's kernels are Source kernels
        return CacheEntry([KernelPart(name, name.encode(), {".name": name}, language)], None)


def without_names(solutions):
    return [{k: v for k, v in s.items() if k != "name"} for s in solutions]


def test_found_in_tensiles_order(tmp_path, logic_dir):
    got = [p.relative_to(logic_dir).as_posix() for p in find_logic_files(logic_dir, ["gfx906", "gfx90a"])]
    assert got == list(LAYOUT)          # sorted would put sub/deeper/vega20 before sub/hip
    assert [p.name for p in find_logic_files(logic_dir, "gfx90a")] == ["aldebaran_Cijk_Ailk_Bljk_SB.yaml",
                                                                       "hip_Cijk_Ailk_Bljk_SB.yaml"]
    (tmp_path / "b").mkdir()
    (tmp_path / "experimental").mkdir()
    for name in ("a_aldebaran.yml", "b/aldebaran_b.yaml", "chip_x.yaml", "vega20_z.yaml", "experimental/aldebaran_e.yaml"):
        (tmp_path / name).write_text("[]")
    assert [p.name for p in find_logic_files(tmp_path, "gfx90a")] == ["chip_x.yaml", "aldebaran_b.yaml", "a_aldebaran.yml"]
    assert "aldebaran_e.yaml" in [p.name for p in find_logic_files(tmp_path, "gfx90a", lazy=True)]


def test_merged_library_is_tensiles(tmp_path, logic_dir):
    create_library(logic_dir, tmp_path, "gfx906;gfx90a", build=FakeBuilder(), jobs=1, library_format="msgpack")
    ours, tensile = load(tmp_path / "library" / "TensileLibrary.dat"), load(REFERENCE / "TensileLibrary.dat")
    assert ours["library"] == tensile["library"]
    assert ours["solutions"] == tensile["solutions"]


def test_separate_architectures_insert_the_fallback_as_tensile(tmp_path, logic_dir):
    create_library(logic_dir, tmp_path, "gfx906;gfx90a", build=FakeBuilder(), jobs=1, library_format="msgpack",
                   separate_architectures=True)
    for gfx in ("gfx906", "gfx90a"):
        ours, tensile = (load(d / f"TensileLibrary_{gfx}.dat") for d in (tmp_path / "library", REFERENCE))
        assert ours["library"] == tensile["library"], gfx
        assert without_names(ours["solutions"]) == without_names(tensile["solutions"]), gfx
        # the architecture's own solutions from its index, then the fallback's from 0
        indices = [s["index"] for s in ours["solutions"]]
        assert indices[-2:] == [0, 1] and indices[0] == 0x906 << 18 if gfx == "gfx906" else indices[0] == 0x90a << 18


def test_lazy_index_lists_every_solution_and_unbuilt_ones_cannot_be_selected(tmp_path, logic_dir):
    report = create_library(logic_dir, tmp_path, "gfx90a", build=RefusingBuilder(), jobs=1, library_format="msgpack",
                            separate_architectures=True, lazy_library_loading=True, master_solution_index=True)
    lib = tmp_path / "library"
    assert (lib / "TensileMasterSolutionIndex.csv").read_text() == \
        (REFERENCE / "TensileMasterSolutionIndex.csv").read_text()
    refused = [e for e in report.entries if not e.built]
    assert [(e.logic_file.name, e.logic_index) for e in refused] == [("aldebaran_Cijk_Ailk_Bljk_SB.yaml", 1)]
    name = "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx90a"
    ours, tensile = load(lib / f"{name}.dat"), load(REFERENCE / "lazy" / f"{name}.dat")
    gap = 0x90a << 18 | 1
    assert [s for s in tensile["solutions"] if s["index"] != gap] == ours["solutions"]   # indices as Tensile's
    table = tensile["library"]["rows"][0]["library"]["table"]
    assert any(e["index"] == gap for e in table)
    assert ours["library"]["rows"][0]["library"]["table"] == [e for e in table if e["index"] != gap]
    for other in ("TensileLibrary_lazy_gfx90a", "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_fallback"):
        assert load(lib / f"{other}.dat") == load(REFERENCE / "lazy" / f"{other}.dat"), other
    # the files of the manifest as Tensile's: the libraries (Tensile lists them in a set's order), then the code
    # objects in order (the fallback's Source kernels in <placeholder>_<gfx>.hsaco, where Tensile's host looks for
    # them; Tensile also always writes Kernels.so-000-<gfx>.hsaco, for its f8 helper)
    tensile_files = [Path(f).name for f in (REFERENCE / "TensileManifest_lazy.txt").read_text().split()
                     if not f.endswith("Kernels.so-000-gfx90a.hsaco")]
    ours = [Path(f).name for f in (lib / "TensileManifest.txt").read_text().split()]
    assert set(ours[:3]) == set(tensile_files[:3]) and ours[3:] == tensile_files[3:]
    create_library(logic_dir, tmp_path / "manifest", "gfx90a", build=RefusingBuilder(), library_format="msgpack",
                   separate_architectures=True, lazy_library_loading=True, manifest_only=True)
    assert [Path(f).name for f in (tmp_path / "manifest" / "library" / "TensileManifest.txt").read_text().split()] == ours
    assert (lib / "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_fallback_gfx90a.hsaco").read_bytes().startswith(b"\x7fELF")
    # Tensile's selection wherever it does not pick the unbuilt solution; elsewhere another one, never it
    ours, tensile = (Library.load(d / "TensileLibrary_lazy_gfx90a.dat") for d in (lib, REFERENCE / "lazy"))
    pt = read_logic_file(logic_dir / "aldebaran_Cijk_Ailk_Bljk_SB.yaml").problem_type
    rng = random.Random(5)
    sizes = [tuple(e["key"]) for e in table] + [tuple(rng.randint(1, 7000) for _ in range(3)) for _ in range(100)]
    at_gap = 0
    for m, n, k in sizes:
        problem = Problem.make(pt, m, n, k)
        a, b = ours.select(problem, "gfx90a"), tensile.select(problem, "gfx90a")
        assert a is not None and b is not None, (m, n, k)
        if b["index"] == gap:
            at_gap += 1
            assert a["index"] != gap, (m, n, k)
        else:
            assert a["index"] == b["index"], (m, n, k)
    assert at_gap >= 20
