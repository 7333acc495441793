"""create-library's outputs as Tensile 4.44 names and packs them (library/outputs.py): the merged code object as
a compressed offload bundle, helper kernels in Kernels.so-000-<gfx>.hsaco, --no-merge-files names,
TensileManifest.txt with --generate-manifest-and-exit and --verify-manifest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tensile_asm.cli.create_library import main
from tensile_asm.kernel_cache import CacheEntry, KernelPart
from tensile_asm.library import bundle
from tensile_asm.library.create import create_library
from tensile_asm.library.outputs import kernel_file_base

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_DIR = REPO / "logic"
HELPER = "Cijk_S"


class HelperBuilder:
    """A fake builder whose every kernel needs the helper kernel Cijk_S (as GlobalSplitU kernels do); a
    "code object" is b"\\x7fELF" and the linked part names, one per line."""

    def version(self):
        return "fake-outputs-1"

    def supports(self, solution, arch):
        return None if solution.derived.local_split_u == 1 else "LocalSplitU > 1 (fake)"

    def compile_kernel(self, solution, arch, name, timing=None):
        return CacheEntry([KernelPart(name, name.encode(), {".name": name}),
                           KernelPart(HELPER, HELPER.encode(), {".name": HELPER})], None)

    def link_parts(self, parts, arch, out_path):
        Path(out_path).write_bytes(b"\x7fELF\n" + b"\n".join(p.object for p in parts))


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


def linked(data: bytes) -> list[str]:
    assert data.startswith(b"\x7fELF\n")
    return data.decode().split("\n")[1:]


def manifest(out: Path) -> list[str]:
    return (out / "library" / "TensileManifest.txt").read_text().splitlines()


@pytest.mark.parametrize("compress", ["zstd", "zlib", "none"])
def test_merged_bundle_helpers_and_manifest(tmp_path, compress):
    report = create_library(EXAMPLE_DIR, tmp_path, "gfx90a", build=HelperBuilder(), jobs=1, compress=compress)
    names = sorted(e.name for e in report.built)
    lib = tmp_path / "library"
    co = (lib / "TensileLibrary_gfx90a.co").read_bytes()
    assert co.startswith(b"CCOB" if compress != "none" else bundle.MAGIC)
    if compress != "none":
        assert int.from_bytes(co[6:8], "little") == {"zlib": bundle.ZLIB, "zstd": bundle.ZSTD}[compress]
    entries = bundle.read_bundle(co)
    assert [e.id for e in entries] == ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a"]
    assert sorted(linked(entries[1].data)) == names               # the GEMM kernels only
    assert linked((lib / "Kernels.so-000-gfx90a.hsaco").read_bytes()) == [HELPER]   # the helper once, raw ELF
    assert manifest(tmp_path) == [str((lib / f).resolve()) for f in
                                  ("TensileLibrary.yaml", "Kernels.so-000-gfx90a.hsaco", "TensileLibrary_gfx90a.co")]
    assert sorted(p.name for p in report.code_objects) == ["Kernels.so-000-gfx90a.hsaco", "TensileLibrary_gfx90a.co"]


def test_no_merge_files_names(tmp_path):
    report = create_library(EXAMPLE_DIR, tmp_path, "gfx90a", build=HelperBuilder(), jobs=1, merge_files=False)
    lib = tmp_path / "library"
    names = sorted(e.name for e in report.built)
    assert sorted(p.name for p in lib.iterdir()) == sorted(
        [f"{kernel_file_base(n)}_gfx90a.co" for n in names]
        + [f"{HELPER}.so-000-gfx90a.hsaco", "TensileLibrary.yaml", "TensileManifest.txt"])
    for n in names:                                               # raw ELFs, as Tensile copies them
        assert linked((lib / f"{kernel_file_base(n)}_gfx90a.co").read_bytes()) == [n]
    assert manifest(tmp_path)[:2] == [str((lib / "TensileLibrary.yaml").resolve()),
                                      str((lib / f"{HELPER}.so-000-gfx90a.hsaco").resolve())]


def test_kernel_file_base_is_tensiles():
    """A name and the file Tensile 4.44's TensileCreateLibrary --no-merge-files wrote for it."""
    name = ("Cijk_Ailk_Bljk_HHS_BH_MT32x32x32_MI16x16x16x1_SE_AF0EM8_EPS1_GLVWA2_GLVWB2_GRVW2_K1_LPB16_LRVW8_NEPBS0_"
            "PGR1_PLR2_SS0_SU0_SUS0_SRVW4_SVW4_TT1_16_VAW2_WG32_8_1_WGM1")
    assert kernel_file_base(name) == \
        "Cijk_Ailk_Bljk_HHS_BH_MT32x32x32_MI16x16x16x1_SE88Ph-lBK08Zuqqoxx2TOo0paKIQaWet1uxaX5LGXSGw="
    assert kernel_file_base("Cijk_S") == "Cijk_S"


def test_generate_manifest_and_exit_then_verify(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["--architecture", "gfx90a", "--library-format", "msgpack", "--jobs", "1", str(EXAMPLE_DIR), str(out)]
    assert main(args + ["--generate-manifest-and-exit"]) == 0
    assert sorted(p.name for p in (out / "library").iterdir()) == ["TensileManifest.txt"]   # nothing built
    expected = manifest(out)
    assert [Path(f).name for f in expected] == ["TensileLibrary.dat", "TensileLibrary_gfx90a.co"]
    assert main(args + ["--verify-manifest"]) == 1
    assert "does not exist" in capsys.readouterr().err
    from conftest import have_llvm
    if not have_llvm():
        pytest.skip("LLVM tools (llvm-mc, ld.lld) not found")
    assert main(args + ["--quiet"]) == 0                          # the real build writes what it announced
    assert manifest(out) == expected
    assert main(args + ["--verify-manifest"]) == 0
    (out / "library" / "TensileLibrary_gfx90a.co").unlink()
    assert main(args + ["--verify-manifest"]) == 1


def test_bad_compress_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--architecture", "gfx90a", "--compress", "lz4", str(EXAMPLE_DIR), str(tmp_path)])
    assert "--compress" in capsys.readouterr().err
