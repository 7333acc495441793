"""Strict LDS race checking is byte-exact: two waves of a workgroup touching different bytes of one
dword, or writing the same value to the same bytes, in one barrier interval is no race; overlapping
bytes with different (or unknown: atomics) values, or a read of bytes another wave writes, is one.

Two waves (block 128); lane l of either wave works on LDS dword l unless a case says otherwise. Every
case runs wave by wave and in lockstep (the batch's columns are split between its waves)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from conftest import have_llvm
from emulator_asm import build
from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

PROLOGUE = """
s_load_dwordx4 s[4:7], s[0:1], 0x0      // in, out
v_lshlrev_b32 v1, 2, v0                 // tid * 4
v_and_b32 v3, 63, v0
v_lshlrev_b32 v3, 2, v3                 // lane * 4: dword l, the same in both waves
v_lshrrev_b32 v4, 6, v0                 // wave
v_mov_b32 v6, 0x5a5a5a5a
s_waitcnt lgkmcnt(0)
global_load_dword v2, v1, s[4:5]        // in[tid]: differs between the waves
global_load_dword v7, v3, s[4:5]        // in[lane]: the same in both waves
s_waitcnt vmcnt(0)
"""

EPILOGUE = """
s_waitcnt lgkmcnt(0)
s_barrier
ds_read_b32 v5, v3
s_waitcnt lgkmcnt(0)
global_store_dword v1, v5, s[6:7]               // out[tid]: dword l after the interval
global_store_dword v1, v6, s[6:7] offset:512    // out[128 + tid]: what the case read into v6
s_endpgm
"""

WAVE0 = """
v_cmp_eq_u32 vcc, 0, v4
s_and_saveexec_b64 s[8:9], vcc          // wave 0 only
"""
WAVE1 = "s_andn2_b64 exec, s[8:9], vcc           // wave 1 only\n"
BOTH = "s_mov_b64 exec, s[8:9]\n"

M16 = np.uint32(0xFFFF)


def _inputs():
    rng = np.random.default_rng(7)
    x = rng.integers(1, 2**32, 128, dtype=np.uint64).astype(np.uint32)
    x[64:] ^= np.uint32(0x01010101)          # every byte differs between lane l of wave 0 and of wave 1
    return x


def _run(middle, lockstep):
    em = Emulator.load(build(PROLOGUE + middle + EPILOGUE, args=(("in", 8), ("out", 8)), vgprs=8, sgprs=16,
                             lds=512))
    x = _inputs()
    out = np.full(256, 0xDEADBEEF, np.uint32)
    em.launch("k", grid=1, block=128, args=[x, out], lockstep=lockstep)
    return x, out[:128], out[128:]


def _race(middle, lockstep):
    with pytest.raises(EmulationError, match="strict: LDS race") as info:
        _run(middle, lockstep)
    return str(info.value)


LOCKSTEP = pytest.mark.parametrize("lockstep", [False, True])


@LOCKSTEP
def test_b16_writes_to_different_halves_are_no_race(lockstep):
    middle = "v_lshlrev_b32 v5, 1, v4\nv_add_u32 v5, v3, v5\nds_write_b16 v5, v2   // wave w: bytes 2w, 2w+1\n"
    x, dword, _ = _run(middle, lockstep)
    want = ((x[64:] & M16) << np.uint32(16)) | (x[:64] & M16)
    np.testing.assert_array_equal(dword, np.tile(want, 2))


@LOCKSTEP
def test_b16_writes_of_different_values_to_one_half_are_a_race(lockstep):
    msg = _race("ds_write_b16 v3, v2\n", lockstep)
    assert re.search(r"wave 1 writes LDS byte 0x0 at 0x[0-9a-f]+ `ds_write_b16 v3, v2` while wave 0 writes it at "
                     r"0x[0-9a-f]+ `ds_write_b16 v3, v2`; no s_barrier separates them", msg), msg


@LOCKSTEP
def test_b16_writes_of_the_same_value_are_no_race(lockstep):
    x, dword, _ = _run("ds_write_b16 v3, v7\nds_write_b16_d16_hi v3, v7 offset:2\n", lockstep)
    np.testing.assert_array_equal(dword, np.tile(x[:64], 2))


@LOCKSTEP
def test_b32_writes_of_the_same_value_are_no_race(lockstep):
    x, dword, _ = _run("ds_write_b32 v3, v7\n", lockstep)
    np.testing.assert_array_equal(dword, np.tile(x[:64], 2))


@LOCKSTEP
def test_the_final_value_of_each_wave_counts(lockstep):
    # each wave's own value first, then the common one: whatever the order, the common one is last
    x, dword, _ = _run("ds_write_b32 v3, v2\nds_write_b32 v3, v7\n", lockstep)
    np.testing.assert_array_equal(dword, np.tile(x[:64], 2))
    # the other way round the result depends on the order
    msg = _race("ds_write_b32 v3, v7\nds_write_b32 v3, v2\n", lockstep)
    assert "`ds_write_b32 v3, v2`" in msg and "LDS byte 0x0 " in msg, msg


def _read_low_half_while(write):
    """Interval 0: wave 0 writes dword l. Interval 1: wave 0 reads its bytes 0-1 (ds_read_u16) while
    wave 1 does ``write`` to dword l."""
    return (WAVE0 + "ds_write_b32 v3, v2\n" + BOTH + "s_waitcnt lgkmcnt(0)\ns_barrier\n"
            + WAVE0 + "ds_read_u16 v6, v3\n" + WAVE1 + write + "\n" + BOTH)


@LOCKSTEP
@pytest.mark.parametrize("write,byte", [("ds_write_b16 v3, v2 offset:2", 2), ("ds_write_b8 v3, v2 offset:2", 2),
                                        ("ds_write_b8 v3, v2 offset:3", 3)])
def test_read_of_other_bytes_is_no_race(write, byte, lockstep):
    x, dword, read = _run(_read_low_half_while(write), lockstep)
    width = 2 if "b16" in write else 1
    keep = np.uint32(((1 << 8 * width) - 1) << 8 * byte)
    want = (x[:64] & ~keep) | ((x[64:] << np.uint32(8 * byte)) & keep)
    np.testing.assert_array_equal(dword, np.tile(want, 2))
    np.testing.assert_array_equal(read[:64], x[:64] & M16)
    np.testing.assert_array_equal(read[64:], np.uint32(0x5a5a5a5a))       # wave 1 read nothing


@LOCKSTEP
@pytest.mark.parametrize("write,byte", [("ds_write_b16 v3, v2", 0), ("ds_write_b8 v3, v2 offset:1", 1),
                                        ("ds_write_b32 v3, v7", 0)])
def test_read_of_written_bytes_is_a_race(write, byte, lockstep):
    msg = _race(_read_low_half_while(write), lockstep)
    assert re.search(rf"wave 0 reads LDS byte 0x{byte:x} at 0x[0-9a-f]+ `ds_read_u16 v6, v3` while wave 1 writes "
                     rf"it at 0x[0-9a-f]+ `{write.split()[0]} ", msg), msg     # even of the same value (b32 v7)


@LOCKSTEP
def test_atomic_on_a_dword_another_wave_writes_is_a_race(lockstep):
    msg = _race(WAVE0 + "ds_write_b32 v3, v7\n" + WAVE1 + "ds_add_u32 v3, v2\n" + BOTH, lockstep)
    assert "`ds_add_u32 v3, v2`" in msg and "`ds_write_b32 v3, v7`" in msg and "LDS byte 0x0 " in msg, msg


@LOCKSTEP
def test_atomics_of_two_waves_are_no_race(lockstep):
    x, dword, _ = _run("ds_add_u32 v3, v2\n", lockstep)
    np.testing.assert_array_equal(dword, np.tile(x[:64] + x[64:], 2))
