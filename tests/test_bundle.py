"""Clang offload bundles (library/bundle.py): our writer and reader against LLVM's clang-offload-bundler,
both ways, compressed (zlib, zstd; format versions 1-3) and not."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tensile_asm.errors import UserError
from tensile_asm.library import bundle

BUNDLERS = [p for p in (Path(f"/usr/lib/llvm-{v}/bin/clang-offload-bundler") for v in (19, 22)) if p.is_file()]
if shutil.which("clang-offload-bundler"):
    BUNDLERS.append(Path(shutil.which("clang-offload-bundler")))
TENSILE = Path(__file__).parent / "data" / "tensile_library"


def payload(seed: int = 0, size: int = 5003) -> bytes:
    """Not a multiple of the alignment; random, so that compression has work and mistakes show."""
    return b"\x7fELF" + np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()


def bundler_version(b: Path) -> int:
    return int(b.parts[-3].split("-")[1]) if b.parts[-3].startswith("llvm-") else 0


def test_uncompressed_layout():
    data = payload()
    out = bundle.write_bundle([(bundle.HOST_ID, b""), (bundle.device_id("gfx90a"), data)])
    assert out.startswith(bundle.MAGIC)
    assert int.from_bytes(out[24:32], "little") == 2
    entries = bundle.read_bundle(out)
    assert [(e.id, e.data) for e in entries] == [(bundle.HOST_ID, b""), ("hipv4-amdgcn-amd-amdhsa--gfx90a", data)]
    assert entries[1].gfx == "gfx90a" and entries[0].gfx is None
    assert len(out) == 4096 + len(data)       # the device entry at the first 4096-byte boundary


@pytest.mark.parametrize("method", ["zlib", "zstd"])
@pytest.mark.parametrize("version", [1, 2, 3])
def test_compressed_round_trip(method, version):
    data = payload(version)
    packed = bundle.bundle_code_object(data, "gfx906", compress=method, version=version)
    assert packed[:4] == b"CCOB" and int.from_bytes(packed[4:6], "little") == version
    assert bundle.code_object_for(packed, "gfx906") == data


def test_broken_inputs_are_user_errors():
    packed = bundle.bundle_code_object(payload(), "gfx90a")
    with pytest.raises(UserError, match="hash|decompress"):
        bundle.read_bundle(packed[:24] + bytes(b ^ 0xFF for b in packed[24:]))
    with pytest.raises(UserError, match="truncated"):
        bundle.read_bundle(packed[:-10])
    with pytest.raises(UserError, match="for gfx942"):
        bundle.code_object_for(packed, "gfx942")
    with pytest.raises(UserError, match="neither"):
        bundle.code_object_for(b"junk" * 10)


@pytest.mark.skipif(not BUNDLERS, reason="no clang-offload-bundler (clang-tools-19/22)")
@pytest.mark.parametrize("compress", [None, "zlib", "zstd"])
def test_bundler_unbundles_ours(tmp_path, compress):
    data = payload(7)
    for b in BUNDLERS:
        for version in ([2] if compress is None else [1, 2] + ([3] if bundler_version(b) >= 22 else [])):
            path = tmp_path / f"ours_{version}.co"
            path.write_bytes(bundle.bundle_code_object(data, "gfx90a", compress=compress, version=version))
            out = tmp_path / "out.co"
            subprocess.run([str(b), "--type=o", "--targets=hipv4-amdgcn-amd-amdhsa--gfx90a", f"--input={path}",
                            f"--output={out}", "--unbundle"], check=True, capture_output=True)
            assert out.read_bytes() == data, (b, compress, version)


@pytest.mark.skipif(not BUNDLERS, reason="no clang-offload-bundler (clang-tools-19/22)")
@pytest.mark.parametrize("compress", [False, True])
def test_we_read_the_bundlers(tmp_path, compress):
    """The exact command Tensile 4.44 runs (SharedCommands.compressCodeObject), with and without --compress."""
    data = payload(11)
    src = tmp_path / "in.co"
    src.write_bytes(data)
    for b in BUNDLERS:
        out = tmp_path / "theirs.co"
        subprocess.run([str(b)] + (["--compress"] if compress else []) +
                       ["--type=o", "--bundle-align=4096",
                        "--targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a",
                        "--input=/dev/null", f"--input={src}", f"--output={out}"], check=True, capture_output=True)
        theirs = out.read_bytes()
        assert bundle.code_object_for(theirs, "gfx90a") == data
        if not compress:   # byte for byte what we write
            assert theirs == bundle.bundle_code_object(data, "gfx90a", compress=None)
        elif bundler_version(b) == 19:     # zstd level 3, format version 2: byte for byte ours too
            assert theirs == bundle.bundle_code_object(data, "gfx90a", compress="zstd", version=2)


def test_tensile_written_bundles(tmp_path):
    """TensileLibrary_<gfx>.co as Tensile 4.44 wrote them (CCOB v2, zstd) hold that gfx's ELF."""
    from tensile_asm.codeobject import read_code_object

    for gfx, kernels in (("gfx906", 5), ("gfx90a", 16)):
        raw = (TENSILE / f"TensileLibrary_{gfx}.co").read_bytes()
        assert raw[:6] == b"CCOB\x02\x00"
        elf = bundle.code_object_for(raw, gfx)
        assert elf[:4] == b"\x7fELF"
        path = tmp_path / f"{gfx}.co"
        path.write_bytes(elf)
        co = read_code_object(path)
        assert co.processor == gfx and len(co.kernels) == kernels
