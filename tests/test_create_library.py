import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from tensile_asm.cli.create_library import main
from tensile_asm.errors import UserError
from tensile_asm.kernel_cache import CacheEntry, KernelPart
from tensile_asm.library import Library
from tensile_asm.library.bundle import code_object_for
from tensile_asm.library.outputs import kernel_file_base
from tensile_asm.library.create import create_library
from tensile_asm.problem import Problem, ProblemType

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared reference data not found at {SHARED}")
EXAMPLE_DIR = REPO / "logic"
NN = ProblemType.from_dict({"DataType": "s", "TransposeA": False, "TransposeB": False, "Batched": True})


class FakeBuilder:
    """Supports what has LocalSplitU 1; "compiles" a kernel into a dummy part and links parts into a dummy file,
    remembering what it was asked to do. ``fail``: compiling raises; ``unwritable``: kernels (by their position
    in the order compiled) whose writing fails."""

    def __init__(self, fail=False, unwritable=(), version="fake-1"):
        self.calls = []        # (kernel names, arch, path) per link
        self.compiled = []     # kernel names in the order written
        self.fail = fail
        self.unwritable = set(unwritable)
        self._version = version

    def version(self):
        return self._version

    def supports(self, solution, arch):
        assert arch.name in ("gfx90a", "gfx942")
        return None if solution.derived.local_split_u == 1 else "LocalSplitU > 1 is not implemented (fake)"

    def compile_kernel(self, solution, arch, name, timing=None):
        if self.fail:
            raise UserError("the assembler rejected the kernel (fake)")
        self.compiled.append(name)
        if timing is not None:      # fake seconds of writing: 1, 2, 3, 4, 10 ms, ... (mean 4, median 3 of five)
            n = len(self.compiled)
            timing["generate"] = timing.get("generate", 0.0) + (1e-2 if n == 5 else 1e-3 * n)
        if len(self.compiled) - 1 in self.unwritable:
            return CacheEntry([], f"kernel {name}: needs more than 512 VGPRs (fake)")
        return CacheEntry([KernelPart(name, f"obj:{name}:{self._version}".encode(), {".name": name})], None)

    def link_parts(self, parts, arch, out_path):
        self.calls.append(([p.name for p in parts], arch.name, Path(out_path)))
        Path(out_path).write_bytes(b"\x7fELF" + "\n".join(p.object.decode() for p in parts).encode())


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory, monkeypatch):
    """No test reads or fills the user's kernel cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def elf(path: Path) -> bytes:
    """The code object inside a merged TensileLibrary_<gfx>.co (a compressed offload bundle, as Tensile's)."""
    data = Path(path).read_bytes()
    assert data[:4] == b"CCOB", data[:8]
    return code_object_for(data, "gfx90a")


def test_builds_the_example_logic(tmp_path):
    fake = FakeBuilder()
    report = create_library(EXAMPLE_DIR, tmp_path, "gfx90a", build=fake)
    assert files(tmp_path) == ["library/TensileLibrary.yaml", "library/TensileLibrary_gfx90a.co",
                               "library/TensileManifest.txt", "support.json"]
    assert (tmp_path / "library/TensileManifest.txt").read_text().splitlines() == \
        [str((tmp_path / f).resolve()) for f in ("library/TensileLibrary.yaml", "library/TensileLibrary_gfx90a.co")]
    (names, arch, _), = fake.calls
    assert arch == "gfx90a" and len(names) == 5 and all(n.startswith("Cijk_Ailk_Bljk_SB_MT") for n in names)
    assert all("_K1_" in n for n in names)
    co = elf(tmp_path / "library/TensileLibrary_gfx90a.co")
    assert co.startswith(b"\x7fELF") and all(n.encode() in co for n in names)
    lib = yaml.safe_load((tmp_path / "library/TensileLibrary.yaml").read_text())
    assert [s["name"] for s in lib["solutions"]] == names  # library names are the kernel symbols
    support = json.loads((tmp_path / "support.json").read_text())
    assert len(support) == 6
    assert all(set(e) == {"name", "architecture", "file", "index", "built", "reason"} for e in support)
    assert [(e["file"], e["index"]) for e in support] == [("aldebaran_Cijk_Ailk_Bljk_SB.yaml", i) for i in range(6)]
    logic = yaml.safe_load((EXAMPLE_DIR / "aldebaran_Cijk_Ailk_Bljk_SB.yaml").read_text())
    for e in support:   # file and index lead back to the solution the entry names
        stored = logic[5][e["index"]]
        assert stored["SolutionIndex"] == e["index"] and stored["MacroTile0"] == int(e["name"].split("_MT")[1].split("x")[0])
    built = [e for e in support if e["built"]]
    assert [e["name"] for e in built] == names and all(e["reason"] is None for e in built)
    (no,) = [e for e in support if not e["built"]]
    assert no["reason"] == "LocalSplitU > 1 is not implemented (fake)" and "WG8_8_4" in no["name"]
    assert len(report.built) == 5 and len(report.not_built) == 1
    table = report.table()
    assert "5 built, 1 not built" in table and "LocalSplitU > 1 is not implemented (fake)" in table


def test_identical_kernels_are_written_once(tmp_path):
    logic = tmp_path / "logic"
    (logic / "again").mkdir(parents=True)
    shutil.copy(EXAMPLE_DIR / "aldebaran_Cijk_Ailk_Bljk_SB.yaml", logic)
    shutil.copy(EXAMPLE_DIR / "aldebaran_Cijk_Ailk_Bljk_SB.yaml", logic / "again")
    fake = FakeBuilder()
    report = create_library(logic, tmp_path / "out", "gfx90a", build=fake, jobs=1)
    assert len(report.built) == 10 and len(fake.compiled) == 5 == len(set(fake.compiled))
    assert (report.stats.kernels, report.stats.duplicates) == (5, 5)
    (names, _, _), = fake.calls
    assert sorted(names) == sorted(fake.compiled)   # linked once each too


def test_cached_kernels_are_not_written_again_and_the_builder_version_is_in_the_key(tmp_path):
    fake = FakeBuilder()
    create_library(EXAMPLE_DIR, tmp_path / "a", "gfx90a", build=fake, cache_dir=tmp_path / "cache", jobs=1)
    assert len(fake.compiled) == 5
    again = FakeBuilder()
    report = create_library(EXAMPLE_DIR, tmp_path / "b", "gfx90a", build=again, cache_dir=tmp_path / "cache", jobs=1)
    assert again.compiled == [] and report.stats.cached == 5 and len(report.built) == 5
    assert (tmp_path / "b/library/TensileLibrary_gfx90a.co").read_bytes() == \
        (tmp_path / "a/library/TensileLibrary_gfx90a.co").read_bytes()
    newer = FakeBuilder(version="fake-2")
    create_library(EXAMPLE_DIR, tmp_path / "c", "gfx90a", build=newer, cache_dir=tmp_path / "cache", jobs=1)
    assert len(newer.compiled) == 5 and b"fake-2" in elf(tmp_path / "c/library/TensileLibrary_gfx90a.co")


def test_a_damaged_cache_entry_is_rebuilt(tmp_path):
    create_library(EXAMPLE_DIR, tmp_path / "a", "gfx90a", build=FakeBuilder(), cache_dir=tmp_path / "cache", jobs=1)
    entries = sorted((tmp_path / "cache").rglob("*.kernel"))
    assert len(entries) == 5
    entries[0].write_bytes(entries[0].read_bytes()[:20])     # cut short
    entries[1].write_bytes(b"not msgpack at all")
    outputs = sorted((tmp_path / "cache/outputs").rglob("*"))
    outputs = [p for p in outputs if p.is_file()]
    assert len(outputs) == 2                                 # the linked code object, the library file
    for p in outputs:                                        # one byte flipped: the checksum catches it
        data = bytearray(p.read_bytes())
        data[-1] ^= 1
        p.write_bytes(bytes(data))
    fake = FakeBuilder()
    create_library(EXAMPLE_DIR, tmp_path / "b", "gfx90a", build=fake, cache_dir=tmp_path / "cache", jobs=1)
    assert len(fake.compiled) == 2
    assert _outputs(tmp_path / "a") == _outputs(tmp_path / "b")


def test_library_selects_built_solutions(tmp_path):
    create_library(EXAMPLE_DIR, tmp_path, "gfx90a", build=FakeBuilder())
    lib = Library.load(tmp_path)
    for (m, n, k), expect in (((1024, 1024, 1024), "MT128x64x8"), ((16, 16, 16), "MT16x16x16"),
                              ((128, 128, 4096), None)):
        chosen = lib.select(Problem.make(NN, m, n, k))
        assert "WG8_8_4" not in chosen["name"]  # the LocalSplitU 4 solution was not built
        if expect:
            assert expect in chosen["name"]
    assert lib.select(Problem.make(NN, 64, 64, 64), "gfx942") is None


def test_msgpack_format_and_no_merge_files(tmp_path):
    fake = FakeBuilder()
    create_library(EXAMPLE_DIR, tmp_path, "gfx90a", build=fake, library_format="msgpack", merge_files=False)
    assert "library/TensileLibrary.dat" in files(tmp_path)
    assert len(fake.calls) == 5 and all(len(names) == 1 for names, _, _ in fake.calls)
    for names, _, _ in fake.calls:
        assert f"library/{kernel_file_base(names[0])}_gfx90a.co" in files(tmp_path)   # Tensile's file names
    assert Library.load(tmp_path).select(Problem.make(NN, 64, 64, 64)) is not None


@needs_shared
def test_unparsed_and_invalid_solutions_are_reported(tmp_path):
    logic = tmp_path / "logic"
    logic.mkdir()
    text = (SHARED / "data/logic/rocblas/aldebaran_Cijk_Ailk_Bljk_SBIIc.yaml").read_text()
    assert "OperationType: TensorContraction" in text
    (logic / "aldebaran_Cijk_Ailk_Bljk_SBIIc.yaml").write_text(
        text.replace("OperationType: TensorContraction", "OperationType: ConvolutionForward"))
    shutil.copy(EXAMPLE_DIR / "aldebaran_Cijk_Ailk_Bljk_SB.yaml", logic)
    report = create_library(logic, tmp_path / "out", "gfx90a", build=FakeBuilder())
    support = json.loads((tmp_path / "out/support.json").read_text())
    convolution = [e for e in support if "SBIIc" in e["name"]]
    assert len(convolution) == 5 and not any(e["built"] for e in convolution)
    assert all("OperationType 'ConvolutionForward' is not supported yet" in e["reason"] for e in convolution)
    assert convolution[0]["name"] == "Cijk_Ailk_Bljk_SBIIc_MT64x64x16_SN_TT4_4_WG16_16_1"  # stored name
    assert len(report.built) == 5


@needs_shared
def test_a_tensor_contraction_reads_and_its_initial_strides_are_built():
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.library.logic import read_logic_file
    from tensile_asm.writer.build import supports

    lf = read_logic_file(SHARED / "data/logic/rocblas/aldebaran_Cijk_Ailk_Bljk_SBIIc.yaml")
    assert lf.failures == [] and len(lf.solutions) == 5 and lf.problem_type.operation_type == "TensorContraction"
    assert all(s.valid for s in lf.solutions)
    # UseInitialStridesAB/CD VALU kernels: built (tests/test_initial_strides.py)
    assert all(supports(s, load_arch("gfx90a")) is None for s in lf.solutions)


def test_a_kernel_that_cannot_be_written_is_reported_not_built(tmp_path):
    fake = FakeBuilder(unwritable={1})
    report = create_library(EXAMPLE_DIR, tmp_path, "gfx90a", build=fake, jobs=1)
    names = fake.compiled
    support = {e["name"]: e for e in json.loads((tmp_path / "support.json").read_text())}
    bad = support[names[1]]
    assert not bad["built"] and bad["reason"] == f"kernel {names[1]}: needs more than 512 VGPRs (fake)"
    assert all(support[n]["built"] for n in names if n != names[1])
    lib = yaml.safe_load((tmp_path / "library/TensileLibrary.yaml").read_text())
    assert [s["name"] for s in lib["solutions"]] == [n for n in names if n != names[1]]
    co = elf(tmp_path / "library/TensileLibrary_gfx90a.co")
    assert names[1].encode() not in co and names[0].encode() in co
    assert len(report.built) == 4 and "5 not built" not in report.table() and "4 built, 2 not built" in report.table()


def test_a_code_object_with_no_kernel_written_is_not_published(tmp_path):
    fake = FakeBuilder(unwritable=range(6))
    report = create_library(EXAMPLE_DIR, tmp_path, "gfx90a", build=fake, merge_files=False, jobs=1)
    assert report.built == [] and report.code_objects == []
    assert [f for f in files(tmp_path) if f.endswith(".co") or ".tmp" in f] == []


def test_builder_failure_leaves_no_outputs(tmp_path):
    with pytest.raises(UserError, match="assembler rejected"):
        create_library(EXAMPLE_DIR, tmp_path, "gfx90a", build=FakeBuilder(fail=True))
    assert files(tmp_path) == []


def test_cli_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--architecture" in out and "offload" in out and "--library-format" in out


def test_cli_user_errors_are_one_line_exit_2(tmp_path, capsys):
    out = tmp_path / "out"
    cases = [
        (["--architecture", "gfx942", str(EXAMPLE_DIR), str(out)], "no logic files for gfx942 under"),
        (["--architecture", "gfx9999", str(EXAMPLE_DIR), str(out)], "unknown architecture 'gfx9999'"),
        (["--architecture", "gfx90a", str(tmp_path / "missing"), str(out)], "does not exist"),
        (["--architecture", "gfx90a", "--lazy-library-loading", str(EXAMPLE_DIR), str(out)],
         "--lazy-library-loading requires --merge-files and --separate-architectures"),
        (["--architecture", "gfx90a", "--lazy-library-loading", "--separate-architectures", "--no-merge-files",
          str(EXAMPLE_DIR), str(out)], "--lazy-library-loading requires --merge-files"),
        (["--architecture", "gfx90a", "--code-object-version", "V4", str(EXAMPLE_DIR), str(out)],
         "V4 is not implemented"),
        (["--architecture", "gfx90a", str(EXAMPLE_DIR), str(out), "OCL"], "runtime language 'OCL'"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
        assert not out.exists() or files(out) == []


def test_cli_broken_yaml(tmp_path, capsys):
    logic = tmp_path / "logic"
    logic.mkdir()
    (logic / "aldebaran_Cijk_Ailk_Bljk_SB.yaml").write_text("- {MinimumRequiredVersion: 4.33.0}\n- [aldebaran\n")
    assert main(["--architecture", "gfx90a", str(logic), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "aldebaran_Cijk_Ailk_Bljk_SB.yaml:" in err and "not valid YAML" in err
    assert not (tmp_path / "out").exists()


def test_cli_strict_fails_on_an_unbuilt_solution(tmp_path, capsys, monkeypatch):
    import tensile_asm.library.create as create

    monkeypatch.setattr(create, "_default_builder", lambda: FakeBuilder())
    argv = ["--architecture", "gfx90a", "--quiet", str(EXAMPLE_DIR), str(tmp_path / "out")]
    assert main(argv) == 0 and capsys.readouterr().err == ""
    assert main(argv + ["--strict"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "--strict: 1 of 6 solutions were not built" in err and "WG8_8_4" in err and "_SB.yaml#4:" in err, err
    assert "LocalSplitU > 1 is not implemented (fake)" in err and "support.json" in err
    assert (tmp_path / "out/support.json").is_file()       # the report of what was built is still written

    class BuildsAll(FakeBuilder):
        def supports(self, solution, arch):
            return None

    monkeypatch.setattr(create, "_default_builder", lambda: BuildsAll())
    assert main(argv[:-1] + [str(tmp_path / "out2"), "--strict"]) == 0 and capsys.readouterr().err == ""


def test_cli_print_timing_and_jobs(tmp_path, capsys, monkeypatch):
    import tensile_asm.library.create as create

    monkeypatch.setattr(create, "_default_builder", lambda: FakeBuilder())
    assert main(["--architecture", "gfx90a", "--quiet", "--print-timing", "--jobs", "1", str(EXAMPLE_DIR),
                 str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    for stage in ("read", "assess", "build", "link", "library", "total"):
        assert f"\n{stage} " in "\n" + out
    assert "5 distinct" in out and "5 written and assembled, 0 from the cache; jobs 1" in out
    assert "(4.0 ms generation per kernel, median 3.0)" in out
    assert main(["--architecture", "gfx90a", "--jobs", "0", str(EXAMPLE_DIR), str(tmp_path / "o2")]) == 2
    assert "--jobs 0" in capsys.readouterr().err


def test_cli_with_injected_builder(tmp_path, capsys, monkeypatch):
    import tensile_asm.library.create as create

    monkeypatch.setattr(create, "_default_builder", lambda: FakeBuilder())
    assert main(["--architecture", "gfx90a", str(EXAMPLE_DIR), str(tmp_path), "HIP"]) == 0
    out = capsys.readouterr().out
    assert "5 built, 1 not built" in out and "TensileLibrary_gfx90a.co" in out


def _have_toolchain() -> bool:
    try:
        from tensile_asm.toolchain_paths import find_llvm_tool
        find_llvm_tool("llvm-mc")
        find_llvm_tool("ld.lld")
        import tensile_asm.writer.build  # noqa: F401
        return True
    except Exception:
        return False


needs_toolchain = pytest.mark.skipif(not _have_toolchain(),
                                     reason="LLVM AMDGPU toolchain or the kernel writer is not available")


def _count_writes(monkeypatch) -> list[str]:
    from tensile_asm.writer import build

    written, write_kernel = [], build.write_kernel

    def counting_write_kernel(geometry, arch, name):
        written.append(name)
        return write_kernel(geometry, arch, name)

    monkeypatch.setattr(build, "write_kernel", counting_write_kernel)
    return written


def _outputs(out: Path) -> dict[str, bytes]:
    """The outputs, the manifest's absolute paths made relative to ``out``."""
    got = {f: (out / f).read_bytes() for f in files(out) if f != "support.json"}
    got["library/TensileManifest.txt"] = got["library/TensileManifest.txt"].replace(str(out.resolve()).encode(), b"OUT")
    return got


@needs_toolchain
def test_real_builder_writes_each_kernel_once_and_the_cache_rebuilds_only_what_changed(tmp_path, monkeypatch):
    written = _count_writes(monkeypatch)
    cache = tmp_path / "cache"
    report = create_library(EXAMPLE_DIR, tmp_path / "a", "gfx90a", jobs=1, cache_dir=cache)
    assert len(report.built) == 6 and sorted(written) == sorted(e.name for e in report.built)  # once each
    assert (report.stats.compiled, report.stats.cached) == (6, 0)
    co = elf(tmp_path / "a/library/TensileLibrary_gfx90a.co")
    assert co[:4] == b"\x7fELF"
    lib = Library.load(tmp_path / "a")
    assert {s["name"] for s in lib.solutions.values()} == {e.name for e in report.built}
    assert all(e.name.encode() in co for e in report.built)  # the kernel symbols are the library names

    written.clear()   # unchanged rebuild: nothing written or assembled, the same bytes out
    again = create_library(EXAMPLE_DIR, tmp_path / "b", "gfx90a", jobs=1, cache_dir=cache)
    assert written == [] and (again.stats.compiled, again.stats.cached) == (0, 6)
    assert _outputs(tmp_path / "b") == _outputs(tmp_path / "a")

    # one solution changed (PrefetchLocalRead of solution 0, a parameter already in every name): one kernel
    logic = tmp_path / "logic"
    logic.mkdir()
    text = (EXAMPLE_DIR / "aldebaran_Cijk_Ailk_Bljk_SB.yaml").read_text()
    first = text.index("    PrefetchLocalRead: 0\n")
    (logic / "aldebaran_Cijk_Ailk_Bljk_SB.yaml").write_text(
        text[:first] + "    PrefetchLocalRead: 1\n" + text[first + len("    PrefetchLocalRead: 0\n"):])
    written.clear()
    changed = create_library(logic, tmp_path / "c", "gfx90a", jobs=1, cache_dir=cache)
    new_names = {e.name for e in changed.built} - {e.name for e in report.built}
    assert len(new_names) == 1 and written == list(new_names) and "PLR1" in written[0]
    assert (changed.stats.compiled, changed.stats.cached) == (1, 5)
    assert written[0].encode() in elf(tmp_path / "c/library/TensileLibrary_gfx90a.co")


@needs_toolchain
def test_parallel_build_writes_the_same_bytes_as_one_process(tmp_path):
    one = create_library(EXAMPLE_DIR, tmp_path / "one", "gfx90a", jobs=1, use_cache=False)
    two = create_library(EXAMPLE_DIR, tmp_path / "two", "gfx90a", jobs=2, use_cache=False)
    assert (one.stats.compiled, two.stats.compiled, two.stats.jobs) == (6, 6, 2)
    assert _outputs(tmp_path / "one") == _outputs(tmp_path / "two")
    assert json.loads((tmp_path / "one/support.json").read_text()) == json.loads((tmp_path / "two/support.json").read_text())
    assert not list(Path(os.environ["XDG_CACHE_HOME"]).rglob("*.kernel"))   # use_cache=False kept nothing


@needs_toolchain
def test_real_builder_leaves_out_a_kernel_whose_registers_do_not_fit(tmp_path):
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.solution.solution import Solution
    from tensile_asm.writer.build import build_code_object, supports

    def solution(data_type, tt):
        problem = {"DataType": data_type, "TransposeA": False, "TransposeB": True, "Batched": True}
        return Solution.from_dict({"ProblemType": problem, "WorkGroup": [16, 16, 1], "ThreadTile": tt, "DepthU": 8,
                                   "PrefetchGlobalRead": 0, "VectorWidth": 1, "GlobalReadVectorWidth": 1})

    arch = load_arch("gfx90a")
    small, big = solution("s", [2, 2]), solution("d", [16, 16])   # 16x16 fp64 accumulators: 512 VGPRs alone
    assert supports(small, arch) is None and supports(big, arch) is None   # registers are known once written
    co = tmp_path / "k.co"
    failed = build_code_object([("fits_in_registers", small), ("too_many_registers", big)], arch, co)
    assert list(failed) == ["too_many_registers"] and "needs more than" in failed["too_many_registers"]
    assert "VGPRs" in failed["too_many_registers"]
    data = co.read_bytes()
    assert data[:4] == b"\x7fELF" and b"fits_in_registers" in data and b"too_many_registers" not in data
    assert build_code_object([("too_many_registers", big)], arch, tmp_path / "none.co") == failed
    assert not (tmp_path / "none.co").exists()


def test_progress_bar_only_on_a_terminal(tmp_path, capsys, monkeypatch):
    create_library(EXAMPLE_DIR, tmp_path / "a", "gfx90a", build=FakeBuilder(), jobs=1)
    assert capsys.readouterr().err == ""                   # stderr is not a terminal here: no bar
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    create_library(EXAMPLE_DIR, tmp_path / "b", "gfx90a", build=FakeBuilder(), jobs=1, use_cache=False)
    err = capsys.readouterr().err
    assert "\r[" in err and "5/5 kernels written and assembled" in err and err.endswith("\r\033[K")


def test_parallel_build_writes_the_library_again_when_a_kernel_fails(tmp_path):
    """With worker processes the library is written meanwhile as if every kernel builds; a kernel that
    could not be written makes it written again, as one process writes it."""
    everything = create_library(EXAMPLE_DIR, tmp_path / "all", "gfx90a", build=FakeBuilder(), jobs=2, use_cache=False)
    assert "library" in everything.stats.overlapped and "library written while" in everything.timing_table()
    victim = everything.built[1].name

    class Picky(FakeBuilder):
        def compile_kernel(self, solution, arch, name, timing=None):
            if name == victim:
                return CacheEntry([], f"kernel {name}: needs more than 512 VGPRs (fake)")
            return super().compile_kernel(solution, arch, name, timing)

    two = create_library(EXAMPLE_DIR, tmp_path / "two", "gfx90a", build=Picky(), jobs=2, use_cache=False)
    one = create_library(EXAMPLE_DIR, tmp_path / "one", "gfx90a", build=Picky(), jobs=1, use_cache=False)
    assert two.stats.overlapped == {} and [e.name for e in two.not_built if e.name == victim] == [victim]
    text = (tmp_path / "two/library/TensileLibrary.yaml").read_text()
    assert text == (tmp_path / "one/library/TensileLibrary.yaml").read_text()
    assert victim not in [s["name"] for s in yaml.safe_load(text)["solutions"]]
    assert victim in (tmp_path / "all/library/TensileLibrary.yaml").read_text()
