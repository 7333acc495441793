"""The parser reads LLVM's symbolic ds_swizzle offsets and MTBUF formats back to the encoded value:
assemble numeric fields with llvm-mc, disassemble with llvm-objdump (which prints them symbolically)
and parse. A lossy spelling (BITMASK_PERM folds an and-bit under a set or-bit) must keep the lane
mapping; FFT/ROTATE spellings drop ignored bits (the emulator refuses those modes)."""

import subprocess

import numpy as np
import pytest

from tensile_asm.isa.parser import parse_instruction
from tensile_asm.toolchain_paths import find_llvm_tool

from conftest import have_llvm

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


def _round_trip(lines, tmp_path, arch="gfx90a"):
    src, obj = tmp_path / "t.s", tmp_path / "t.o"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([find_llvm_tool("llvm-mc"), "-triple", "amdgcn-amd-amdhsa", f"-mcpu={arch}", "-filetype=obj",
                    str(src), "-o", str(obj)], check=True)
    dis = subprocess.run([find_llvm_tool("llvm-objdump"), "-d", f"--mcpu={arch}", str(obj)], check=True,
                         capture_output=True, text=True).stdout
    return [parse_instruction(line.split("//")[0]) for line in dis.splitlines()
            if line.strip().startswith(("ds_", "tbuffer_"))]


def _bitmask_lanes(off):
    i = np.arange(32)
    return ((i & (off & 31)) | (off >> 5 & 31)) ^ (off >> 10 & 31)


def test_swizzle_offsets_round_trip(tmp_path):
    rng = np.random.default_rng(7)
    offsets = sorted(set([0, 0x1F, 0x41F, 0x7C1F, 0x3E0, 0x20, 0x801B, 0x80E4, 0x8100, 0x9000]
                         + [int(x) for x in rng.integers(0, 0x8000, 150)]
                         + [0x8000 | int(x) for x in rng.integers(0, 256, 40)]))
    parsed = _round_trip([f"ds_swizzle_b32 v1, v2 offset:{o}" for o in offsets], tmp_path)
    assert len(parsed) == len(offsets)
    for o, ins in zip(offsets, parsed):
        got = ins.modifier("offset", 0) or 0
        if o < 0x8000:
            assert np.array_equal(_bitmask_lanes(got), _bitmask_lanes(o)), (hex(o), ins.render())
        else:
            assert got == o, (hex(o), ins.render())


def test_rotate_and_fft_spellings_keep_their_mode(tmp_path):
    parsed = _round_trip(["ds_swizzle_b32 v1, v2 offset:0xc4a3", "ds_swizzle_b32 v1, v2 offset:0xe013"], tmp_path)
    assert [ins.modifier("offset") for ins in parsed] == [0xC4A0, 0xE013]


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_buffer_formats_round_trip(tmp_path, arch):
    lines = [f"tbuffer_load_format_x v1, v4, s[8:11], 0 format:{f} idxen" for f in range(128)]
    parsed = _round_trip(lines, tmp_path, arch)
    assert [ins.modifier("format", 1) for ins in parsed] == list(range(128))
