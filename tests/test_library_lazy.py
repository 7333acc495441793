"""--separate-architectures and --lazy-library-loading as Tensile 4.44's TensileCreateLibrary writes them
(library/master.py build_library_files, library/outputs.py): the lazy master TensileLibrary_lazy_<gfx> with
Placeholder leaves, a library and a code object per problem type, compared node by node with a library
Tensile wrote (tests/data/tensile_lazy); selection through the placeholders is the merged library's; and the
real kernels of a lazy build pass `tensile-asm verify --library`."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import msgpack
import pytest
import yaml

from conftest import SHARED, have_llvm
from tensile_asm.cli.create_library import main as create_main
from tensile_asm.kernel_cache import CacheEntry, KernelPart
from tensile_asm.library import bundle
from tensile_asm.library.create import create_library
from tensile_asm.library.logic import read_logic_file
from tensile_asm.library.master import architecture_index, placeholder_name
from tensile_asm.library.select import Library
from tensile_asm.problem import Problem

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "tests" / "data" / "tensile_lazy"
LITE = SHARED / "data" / "logic" / "lite_configs"
FILES = ("aldebaran_Cijk_Ailk_Bjlk_SB.yaml", "aldebaran_Cijk_Alik_Bljk_SB.yaml")
TYPES = ("TensileLibrary_Type_SS_Contraction_l_Ailk_Bjlk_Cijk_Dijk_gfx90a",
         "TensileLibrary_Type_SS_Contraction_l_Alik_Bljk_Cijk_Dijk_gfx90a")
HELPER = "Cijk_S"


class FakeBuilder:
    """Builds every solution; a "code object" is b"\\x7fELF" and the linked part names, one per line. With
    ``helper`` every kernel also needs the helper kernel Cijk_S (as GlobalSplitU kernels do)."""

    def __init__(self, helper: bool = False):
        self.helper = helper

    def version(self):
        return f"fake-lazy-{self.helper}"

    def supports(self, solution, arch):
        return None

    def compile_kernel(self, solution, arch, name, timing=None):
        parts = [KernelPart(name, name.encode(), {".name": name})]
        parts += [KernelPart(HELPER, HELPER.encode(), {".name": HELPER})] if self.helper else []
        return CacheEntry(parts, None)

    def link_parts(self, parts, arch, out_path):
        Path(out_path).write_bytes(b"\x7fELF\n" + b"\n".join(p.object for p in parts))


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture(scope="module")
def logic_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("logic")
    for f in FILES:
        (d / f).write_bytes((LITE / f).read_bytes())
    return d


def load(path: Path) -> dict:
    return msgpack.unpackb(path.read_bytes(), raw=False, strict_map_key=False)


def linked(data: bytes) -> list[str]:
    assert data.startswith(b"\x7fELF\n")
    return data.decode().split("\n")[1:]


def test_placeholder_name_and_architecture_index():
    lf = read_logic_file(LITE / FILES[0])
    assert placeholder_name(lf) == TYPES[0]
    assert architecture_index("gfx90a") == 0x90a << 18 == 606601216
    assert architecture_index("gfx942") == 0x942 << 18 and architecture_index("fallback") == 0


def test_lazy_library_is_tensiles_node_by_node(tmp_path, logic_dir):
    report = create_library(logic_dir, tmp_path, "gfx90a", build=FakeBuilder(), jobs=1, library_format="msgpack",
                            separate_architectures=True, lazy_library_loading=True)
    lib = tmp_path / "library"
    names = ["TensileLibrary_lazy_gfx90a", *TYPES]
    assert sorted(p.name for p in lib.glob("*.dat")) == sorted(n + ".dat" for n in names)
    assert not (lib / "TensileLibrary.dat").exists() and not (lib / "TensileLibrary_gfx90a.co").exists()
    for n in names:
        ours, tensile = load(lib / f"{n}.dat"), load(REFERENCE / f"{n}.dat")
        assert ours["library"] == tensile["library"], n            # the tree, placeholders and tables
        assert len(ours["solutions"]) == len(tensile["solutions"]), n
        for a, b in zip(ours["solutions"], tensile["solutions"]):
            assert {k: v for k, v in a.items() if k != "name"} == {k: v for k, v in b.items() if k != "name"}, n
            assert a["name"] == b["name"]      # Tensile 4.44's kernel names (GLVWA/GLVWB included)
    assert load(lib / "TensileLibrary_lazy_gfx90a.dat")["solutions"] == []
    # each problem type's kernels, and only those, in the code object named by its placeholder
    for n in TYPES:
        co = (lib / f"{n}.co").read_bytes()
        assert co.startswith(b"CCOB")
        kernels = sorted(linked(bundle.read_bundle(co)[1].data))
        assert kernels == sorted(s["name"] for s in load(lib / f"{n}.dat")["solutions"])
    assert sorted(p.name for p in report.code_objects) == sorted(n + ".co" for n in TYPES)
    listed = (lib / "TensileManifest.txt").read_text().splitlines()
    assert listed == [str((lib / f).resolve()) for f in
                      ["TensileLibrary_lazy_gfx90a.dat", *(n + ".dat" for n in TYPES), *(n + ".co" for n in TYPES)]]


def test_separate_architectures_numbers_from_the_architecture(tmp_path, logic_dir):
    create_library(logic_dir, tmp_path, "gfx90a", build=FakeBuilder(), jobs=1, separate_architectures=True,
                   library_format="msgpack")
    lib = tmp_path / "library"
    assert not (lib / "TensileLibrary.dat").exists()
    sep = load(lib / "TensileLibrary_gfx90a.dat")
    merged_dir = tmp_path / "merged"
    create_library(logic_dir, merged_dir, "gfx90a", build=FakeBuilder(), jobs=1, library_format="msgpack")
    merged = load(merged_dir / "library" / "TensileLibrary.dat")
    tensile = load(REFERENCE / "TensileLibrary_gfx90a.dat")     # Tensile's --separate-architectures library
    assert sep["library"] == tensile["library"]
    assert [{k: v for k, v in s.items() if k != "name"} for s in sep["solutions"]] == \
        [{k: v for k, v in s.items() if k != "name"} for s in tensile["solutions"]]
    base = 0x90a << 18
    assert [s["index"] for s in sep["solutions"]] == [base + i for i in range(len(merged["solutions"]))]
    assert [{**s, "index": s["index"] - base} for s in sep["solutions"]] == merged["solutions"]
    assert (lib / "TensileLibrary_gfx90a.co").is_file()


def test_selection_through_placeholders_is_the_merged_librarys(tmp_path, logic_dir):
    create_library(logic_dir, tmp_path / "lazy", "gfx90a", build=FakeBuilder(helper=True), jobs=1,
                   separate_architectures=True, lazy_library_loading=True, library_format="msgpack")
    create_library(logic_dir, tmp_path / "merged", "gfx90a", build=FakeBuilder(helper=True), jobs=1,
                   library_format="msgpack")
    lazy_lib = tmp_path / "lazy" / "library"
    # helper kernels stay in Kernels.so-000-<gfx>.hsaco, once
    assert linked((lazy_lib / "Kernels.so-000-gfx90a.hsaco").read_bytes()) == [HELPER]
    lazy = Library.load(lazy_lib / "TensileLibrary_lazy_gfx90a.dat")
    merged = Library.load(tmp_path / "merged")
    types = [read_logic_file(LITE / f).problem_type for f in FILES]
    rng = random.Random(9)
    chosen = set()
    for _ in range(200):
        pt = rng.choice(types)
        m, n, k = (rng.choice([1, 2, 3, 7, 17, 61, 64, 127, 509, 1024, 4099, rng.randint(1, 6000)]) for _ in range(3))
        problem = Problem.make(pt, m, n, k, rng.choice([1, 1, 3]))
        a, b = lazy.select(problem, "gfx90a"), merged.select(problem, "gfx90a")
        assert (a is None) == (b is None), (pt.name, m, n, k)
        if a is not None:
            assert a["name"] == b["name"], (pt.name, m, n, k)
            assert a["index"] >= 0x90a << 18
            chosen.add(a["name"])
    assert len(chosen) >= 6              # the sizes reach many solutions, not one
    assert lazy.select(Problem.make(types[0], 64, 64, 64), "gfx906") is None


def test_lazy_manifest_only(tmp_path, logic_dir, capsys):
    out = tmp_path / "out"
    assert create_main(["--architecture", "gfx90a", "--separate-architectures", "--lazy-library-loading",
                        "--generate-manifest-and-exit", str(logic_dir), str(out)]) == 0
    lib = out / "library"
    listed = [Path(p).name for p in (lib / "TensileManifest.txt").read_text().splitlines()]
    assert listed[0] == "TensileLibrary_lazy_gfx90a.yaml"
    assert sorted(listed[1:3]) == sorted(n + ".yaml" for n in TYPES)
    assert sorted(listed[3:]) == sorted(n + ".co" for n in TYPES)


@pytest.mark.skipif(not have_llvm(), reason="needs LLVM (llvm-mc, ld.lld)")
def test_lazy_build_verifies_on_the_emulator(tmp_path, capsys):
    sys.path.insert(0, str(REPO / "tools"))
    from cut_logic import cut

    logic = tmp_path / "logic"
    logic.mkdir()
    for f, keep in zip(FILES, ([6, 7], [7, 8])):      # the 8x8x8 tiles: quick on the emulator
        data = yaml.load((LITE / f).read_text(), Loader=yaml.CSafeLoader)
        (logic / f).write_text(yaml.dump(cut(data, keep), Dumper=yaml.CSafeDumper))
    out = tmp_path / "out"
    assert create_main(["--architecture", "gfx90a", "--separate-architectures", "--lazy-library-loading",
                        "--quiet", "--jobs", "1", str(logic), str(out)]) == 0
    lib = out / "library"
    assert sorted(p.name for p in lib.glob("*.co")) == sorted(n + ".co" for n in TYPES)
    from tensile_asm.cli.main import main as asm_main
    capsys.readouterr()
    assert asm_main(["verify", "--library", str(out), "--size", "17,13,9"]) == 0
    printed = capsys.readouterr().out
    assert "4 solutions run, 0 failed or not run, 0 accepted no size" in printed
    assert printed.count("TensileLibrary_Type_SS_Contraction_l_Alik_Bljk_Cijk_Dijk_gfx90a.co)") == 2


def test_lazy_fallback_logic_is_inserted_under_each_architecture(tmp_path, logic_dir):
    """TensileCreateLibrary.addFallback with lazy loading: the fallback (hip_*) problem type becomes its own lazy
    library ``..._fallback`` (solutions numbered from 0, kernels in the code object of that name) under a TruePred
    row of the architecture's lazy master; --write-master-solution-index lists both libraries' solutions."""
    logic = tmp_path / "logic"
    logic.mkdir()
    hip = SHARED / "data" / "logic" / "rocblas-asm_full" / "hip" / "hip_Cijk_Ailk_Bljk_DB.yaml"
    (logic / hip.name).write_bytes(hip.read_bytes())
    (logic / FILES[0]).write_bytes((LITE / FILES[0]).read_bytes())
    out = tmp_path / "out"
    create_library(logic, out, "gfx90a", build=FakeBuilder(), jobs=1, library_format="msgpack",
                   separate_architectures=True, lazy_library_loading=True, master_solution_index=True)
    lib = out / "library"
    fb = "TensileLibrary_Type_DD_Contraction_l_Ailk_Bljk_Cijk_Dijk_fallback"
    assert (lib / f"{fb}.dat").is_file() and (lib / f"{fb}.co").is_file() and (lib / f"{TYPES[0]}.co").is_file()
    fallback = load(lib / f"{fb}.dat")
    assert [s["index"] for s in fallback["solutions"]] == list(range(len(fallback["solutions"]))) != []
    own = load(lib / f"{TYPES[0]}.dat")
    assert own["solutions"][0]["index"] == architecture_index("gfx90a")
    rows = load(lib / "TensileLibrary_lazy_gfx90a.dat")["library"]["rows"]
    leaves = set()

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "Placeholder":
                leaves.add(node["value"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(rows)
    assert leaves == {fb, TYPES[0]}
    assert {r["predicate"]["type"] for r in rows} == {"AMDGPU", "TruePred"}
    csv = (lib / "TensileMasterSolutionIndex.csv").read_text().splitlines()
    assert csv[0] == "architectureName,libraryName,libraryIndex,solutionIndex,solutionName"
    assert {line.split(",")[1] for line in csv[1:]} == {fb, TYPES[0]}
    assert len(csv) - 1 == len(fallback["solutions"]) + len(own["solutions"])
    for line in csv[1:]:
        gfx, _, index, index2, name = line.split(",")
        assert gfx == "gfx90a" and index == index2 and name.startswith("Cijk_Ail")


def test_lazy_fallback_logic_for_several_architectures_is_refused_before_building(tmp_path, logic_dir, capsys):
    logic = tmp_path / "logic"
    logic.mkdir()
    hip = SHARED / "data" / "logic" / "rocblas-asm_full" / "hip" / "hip_Cijk_Ailk_Bljk_HSS_BH.yaml"
    (logic / hip.name).write_bytes(hip.read_bytes())
    (logic / FILES[0]).write_bytes((LITE / FILES[0]).read_bytes())
    (logic / FILES[0].replace("aldebaran", "arcturus")).write_bytes((LITE / FILES[0]).read_bytes().replace(
        b"gfx90a", b"gfx908").replace(b"aldebaran", b"arcturus"))
    out = tmp_path / "out"
    assert create_main(["--architecture", "gfx90a;gfx908", "--separate-architectures", "--lazy-library-loading",
                        str(logic), str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "hip_Cijk_Ailk_Bljk_HSS_BH.yaml: fallback logic" in err and len(err.splitlines()) == 1
    assert not out.exists()
