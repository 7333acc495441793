import json
import shutil
from pathlib import Path

import pytest
import yaml

from tensile_asm.cli.create_library import main
from tensile_asm.errors import UserError
from tensile_asm.library import Library
from tensile_asm.library.create import create_library
from tensile_asm.problem import Problem, ProblemType

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared reference data not found at {SHARED}")
EXAMPLE_DIR = REPO / "logic"
NN = ProblemType.from_dict({"DataType": "s", "TransposeA": False, "TransposeB": False, "Batched": True})


class FakeBuilder:
    """Supports what has LocalSplitU 1; writes a dummy file and remembers what it was asked to build.
    ``fail``: the whole build raises; ``unwritable``: kernels (by their position in a build) whose writing fails."""

    def __init__(self, fail=False, unwritable=()):
        self.calls = []
        self.fail = fail
        self.unwritable = set(unwritable)

    def supports(self, solution, arch):
        assert arch.name in ("gfx90a", "gfx942")
        return None if solution.derived.local_split_u == 1 else "LocalSplitU > 1 is not implemented (fake)"

    def build_code_object(self, kernels, arch, out_path):
        self.calls.append(([name for name, _ in kernels], arch.name, Path(out_path)))
        if self.fail:
            raise UserError("the assembler rejected the kernel (fake)")
        failed = {name: f"kernel {name}: needs more than 512 VGPRs (fake)" for i, (name, _) in enumerate(kernels)
                  if i in self.unwritable}
        written = [name for name, _ in kernels if name not in failed]
        if written:
            Path(out_path).write_bytes(b"\x7fELF" + "\n".join(written).encode())
        return failed


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_builds_the_example_logic(tmp_path):
    fake = FakeBuilder()
    report = create_library(EXAMPLE_DIR, tmp_path, "gfx90a", build=fake)
    assert files(tmp_path) == ["library/TensileLibrary.yaml", "library/TensileLibrary_gfx90a.co", "support.json"]
    (names, arch, _), = fake.calls
    assert arch == "gfx90a" and len(names) == 5 and all(n.startswith("Cijk_Ailk_Bljk_SB_MT") for n in names)
    assert all("_K1_" in n for n in names)
    co = (tmp_path / "library/TensileLibrary_gfx90a.co").read_bytes()
    assert co.startswith(b"\x7fELF") and all(n.encode() in co for n in names)
    lib = yaml.safe_load((tmp_path / "library/TensileLibrary.yaml").read_text())
    assert [s["name"] for s in lib["solutions"]] == names  # library names are the kernel symbols
    support = json.loads((tmp_path / "support.json").read_text())
    assert len(support) == 6 and all(set(e) == {"name", "architecture", "built", "reason"} for e in support)
    built = [e for e in support if e["built"]]
    assert [e["name"] for e in built] == names and all(e["reason"] is None for e in built)
    (no,) = [e for e in support if not e["built"]]
    assert no["reason"] == "LocalSplitU > 1 is not implemented (fake)" and "WG8_8_4" in no["name"]
    assert len(report.built) == 5 and len(report.not_built) == 1
    table = report.table()
    assert "5 built, 1 not built" in table and "LocalSplitU > 1 is not implemented (fake)" in table


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
        assert f"library/{names[0]}_gfx90a.co" in files(tmp_path)
    assert Library.load(tmp_path).select(Problem.make(NN, 64, 64, 64)) is not None


@needs_shared
def test_unparsed_and_invalid_solutions_are_reported(tmp_path):
    logic = tmp_path / "logic"
    logic.mkdir()
    shutil.copy(SHARED / "data/logic/rocblas/aldebaran_Cijk_Ailk_Bljk_SBIIc.yaml", logic)
    shutil.copy(EXAMPLE_DIR / "aldebaran_Cijk_Ailk_Bljk_SB.yaml", logic)
    report = create_library(logic, tmp_path / "out", "gfx90a", build=FakeBuilder())
    support = json.loads((tmp_path / "out/support.json").read_text())
    contraction = [e for e in support if "SBIIc" in e["name"]]
    assert len(contraction) == 5 and not any(e["built"] for e in contraction)
    assert all("TensorContraction" in e["reason"] for e in contraction)
    assert contraction[0]["name"] == "Cijk_Ailk_Bljk_SBIIc_MT64x64x16_SN_TT4_4_WG16_16_1"  # stored name
    assert len(report.built) == 5


def test_a_kernel_that_cannot_be_written_is_reported_not_built(tmp_path):
    fake = FakeBuilder(unwritable={1})
    report = create_library(EXAMPLE_DIR, tmp_path, "gfx90a", build=fake)
    (names, _, _), = fake.calls
    support = {e["name"]: e for e in json.loads((tmp_path / "support.json").read_text())}
    bad = support[names[1]]
    assert not bad["built"] and bad["reason"] == f"kernel {names[1]}: needs more than 512 VGPRs (fake)"
    assert all(support[n]["built"] for n in names if n != names[1])
    lib = yaml.safe_load((tmp_path / "library/TensileLibrary.yaml").read_text())
    assert [s["name"] for s in lib["solutions"]] == [n for n in names if n != names[1]]
    co = (tmp_path / "library/TensileLibrary_gfx90a.co").read_bytes()
    assert names[1].encode() not in co and names[0].encode() in co
    assert len(report.built) == 4 and "5 not built" not in report.table() and "4 built, 2 not built" in report.table()


def test_a_code_object_with_no_kernel_written_is_not_published(tmp_path):
    fake = FakeBuilder(unwritable={0})   # with one file per kernel every build fails
    report = create_library(EXAMPLE_DIR, tmp_path, "gfx90a", build=fake, merge_files=False)
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
    assert "--architecture" in out and "raw AMDGPU ELF" in out and "--library-format" in out


def test_cli_user_errors_are_one_line_exit_2(tmp_path, capsys):
    out = tmp_path / "out"
    cases = [
        (["--architecture", "gfx942", str(EXAMPLE_DIR), str(out)], "no logic files for gfx942 under"),
        (["--architecture", "gfx9999", str(EXAMPLE_DIR), str(out)], "unknown architecture 'gfx9999'"),
        (["--architecture", "gfx90a", str(tmp_path / "missing"), str(out)], "does not exist"),
        (["--architecture", "gfx90a", "--lazy-library-loading", str(EXAMPLE_DIR), str(out)],
         "option --lazy-library-loading is not implemented"),
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


@pytest.mark.skipif(not _have_toolchain(), reason="LLVM AMDGPU toolchain or the kernel writer is not available")
def test_real_builder_writes_each_kernel_once_into_one_elf_code_object(tmp_path, monkeypatch):
    from tensile_asm.writer import build

    written = []

    def counting_write_kernel(geometry, arch, name):
        written.append(name)
        return write_kernel(geometry, arch, name)

    write_kernel = build.write_kernel
    monkeypatch.setattr(build, "write_kernel", counting_write_kernel)
    report = create_library(EXAMPLE_DIR, tmp_path, "gfx90a")
    assert len(report.built) == 5 and sorted(written) == sorted(e.name for e in report.built)  # once each
    co = tmp_path / "library/TensileLibrary_gfx90a.co"
    assert co.read_bytes()[:4] == b"\x7fELF"
    lib = Library.load(tmp_path)
    assert {s["name"] for s in lib.solutions.values()} == {e.name for e in report.built}
    data = co.read_bytes()
    assert all(e.name.encode() in data for e in report.built)  # the kernel symbols are the library names


@pytest.mark.skipif(not _have_toolchain(), reason="LLVM AMDGPU toolchain or the kernel writer is not available")
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
