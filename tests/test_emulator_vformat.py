"""Typed buffer accesses that are plain dword moves (32-bit UINT/SINT/FLOAT formats, identity destination
selects): buffer_*_format (format from the V#) and tbuffer_* (format in the instruction), structured
records with out-of-range lanes; converting formats, swizzled selects and d16 forms are refused."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

U = np.uint32
IDENTITY = 4 | 5 << 3 | 6 << 6 | 7 << 9
GOOD = IDENTITY | 7 << 12 | 14 << 15          # FLOAT, 32_32_32_32
BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_load_dword s16, s[0:1], 0x10
s_waitcnt lgkmcnt(0)
s_mov_b32 s8, s4
s_and_b32 s9, s5, 0xffff
s_or_b32 s9, s9, 0x100000
s_mov_b32 s10, 40
s_mov_b32 s11, s16
s_mov_b32 s12, s6
s_and_b32 s13, s7, 0xffff
s_or_b32 s13, s13, 0x100000
s_movk_i32 s14, 0x80
s_mov_b32 s15, s16
{load}
tbuffer_load_format_xy v[8:9], v0, s[8:11], 0 format:[{tfmt}] idxen offset:4
s_waitcnt vmcnt(0)
buffer_store_format_xyzw v[4:7], v0, s[12:15], 0 idxen
v_add_u32 v1, 64, v0
tbuffer_store_format_xy v[8:9], v1, s[12:15], 0 format:[BUF_DATA_FORMAT_32_32,BUF_NUM_FORMAT_SINT] idxen
s_endpgm
"""
LOAD = "buffer_load_format_xyzw v[4:7], v0, s[8:11], 0 idxen"
FLOAT2 = "BUF_DATA_FORMAT_32_32,BUF_NUM_FORMAT_FLOAT"


def _run(word3, load=LOAD, tfmt=FLOAT2):
    rng = np.random.default_rng(2)
    words = rng.integers(1, 2**32, 256, dtype=np.uint64).astype(U)
    out = np.full(512, 0xDEADBEEF, U)
    co = build(BODY.format(load=load, tfmt=tfmt), args=(("in", 8), ("out", 8), ("word3", 4)), vgprs=12, sgprs=20)
    Emulator.load(co).launch("k", grid=1, block=64, args=[words, out, word3])
    return words.reshape(64, 4), out.reshape(128, 4)


def test_dword_formats_move_records():
    rec, out = _run(GOOD)
    live = np.arange(64) < 40
    assert np.array_equal(out[:64], np.where(live[:, None], rec, 0))
    assert np.array_equal(out[64:, :2], np.where(live[:, None], rec[:, 1:3], 0))
    assert (out[64:, 2:] == 0xDEADBEEF).all()


def test_fewer_components_than_the_format_holds():
    rec, out = _run(GOOD, load="buffer_load_format_xy v[4:5], v0, s[8:11], 0 idxen\nv_mov_b32 v6, 7\nv_mov_b32 v7, 9")
    live = np.arange(64) < 40
    assert np.array_equal(out[:64, :2], np.where(live[:, None], rec[:, :2], 0))
    assert (out[:64, 2] == 7).all() and (out[:64, 3] == 9).all()


@pytest.mark.parametrize("word3,why", [
    (GOOD & ~0xFFF, "destination selects"),
    (IDENTITY | 0 << 12 | 14 << 15, "converts data"),                       # UNORM
    (IDENTITY | 7 << 12 | 12 << 15, "converts data"),                       # 16_16_16_16
    (IDENTITY | 4 << 12 | 11 << 15, r"2 component\(s\) and the instruction moves 4")])
def test_other_descriptors_are_refused(word3, why):
    with pytest.raises(EmulationError, match=f"buffer_load_format_xyzw.*{why}"):
        _run(word3)


def test_converting_mtbuf_formats_and_d16_are_refused():
    with pytest.raises(EmulationError, match=r"tbuffer_load_format_xy.*UNORM.*converts data"):
        _run(GOOD, tfmt="BUF_DATA_FORMAT_32_32,BUF_NUM_FORMAT_UNORM")
    with pytest.raises(EmulationError, match=r"does not implement 'buffer_load_format_d16_xy'"):
        _run(GOOD, load="buffer_load_format_d16_xy v4, v0, s[8:11], 0 idxen")
