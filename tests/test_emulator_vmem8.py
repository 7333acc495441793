"""Byte d16 loads (zero/sign-extended into one half, the other kept, or zeroed on SRAM-ECC targets) and byte_d16_hi stores through
global (saddr and 64-bit vaddr), flat and buffer addressing, with out-of-range buffer lanes."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.emulator.memory.short_d16 import zeroes_other_half
from tensile_asm.errors import EmulationError
from tensile_asm.isa.arch import load_arch

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

U = np.uint32
NREC = 200          # num_records of the byte buffer's V#
BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_load_dwordx2 s[10:11], s[0:1], 0x10
s_waitcnt lgkmcnt(0)
v_lshlrev_b32 v1, 2, v0
global_load_dword v2, v1, s[4:5]
global_load_dword v3, v1, s[4:5] offset:256
global_load_dword v9, v1, s[4:5] offset:512
s_mov_b32 s12, s10
s_and_b32 s13, s11, 0xffff
s_movk_i32 s14, {nrec}
s_mov_b32 s15, 0x00020000
s_mov_b32 s16, s6
s_and_b32 s17, s7, 0xffff
s_movk_i32 s18, 0x728
s_mov_b32 s19, 0x00020000
s_waitcnt vmcnt(0)
v_mov_b32 v4, v3
v_mov_b32 v5, v3
v_mov_b32 v6, v3
v_mov_b32 v7, v3
v_mov_b32 v11, s11
v_add_co_u32 v10, vcc, s10, v2
v_addc_co_u32 v11, vcc, 0, v11, vcc
global_load_ubyte_d16 v3, v2, s[10:11]
global_load_sbyte_d16_hi v4, v[10:11], off offset:1
buffer_load_sbyte_d16 v5, v2, s[12:15], 0 offen offset:2
flat_load_ubyte_d16_hi v6, v[10:11] offset:3
buffer_load_ubyte_d16_hi v7, v2, s[12:15], 0 offen
s_waitcnt vmcnt(0) lgkmcnt(0)
global_store_dword v1, v3, s[6:7]
global_store_dword v1, v4, s[6:7] offset:256
global_store_dword v1, v5, s[6:7] offset:512
global_store_dword v1, v6, s[6:7] offset:768
global_store_dword v1, v7, s[6:7] offset:1024
v_add_u32 v12, 0x600, v0
global_store_byte_d16_hi v12, v9, s[6:7]
buffer_store_byte_d16_hi v9, v0, s[16:19], 0 offen offset:0x700
v_mov_b32 v11, s7
v_add_co_u32 v10, vcc, s6, v0
v_addc_co_u32 v11, vcc, 0, v11, vcc
flat_store_byte_d16_hi v[10:11], v9 offset:0x800
s_endpgm
"""


def _run(body, arch="gfx90a"):
    rng = np.random.default_rng(11)
    offs = rng.integers(0, 252, 64).astype(U)
    offs[:4] = [NREC - 1, NREC - 2, NREC - 3, NREC + 5]       # straddle the buffer's end
    init, data = rng.integers(1, 2**32, (2, 64), dtype=np.uint64).astype(U)
    raw = rng.integers(0, 256, 256).astype(np.uint8)
    out = np.full(0x840, 0xDE, np.uint8)
    co = build(body, args=(("in", 8), ("out", 8), ("bytes", 8)), vgprs=16, sgprs=24, arch=arch)
    Emulator.load(co).launch("k", grid=1, block=64, args=[np.concatenate([offs, init, data]), out, raw])
    return offs, init, data, raw, out


@pytest.mark.parametrize("arch", ["gfx900", "gfx90a"])
def test_byte_d16_loads_and_stores(arch):
    """gfx900 keeps the other half of the VGPR; gfx90a (SRAM ECC) zeroes it (isa/<gfx>.yaml)."""
    offs, init, data, raw, out = _run(BODY.format(nrec=NREC), arch)
    if zeroes_other_half(load_arch(arch)):
        init = np.zeros_like(init)
    u = lambda k: raw[offs + k].astype(U)
    s = lambda k: raw[offs + k].view(np.int8).astype(np.int16).view(np.uint16).astype(U)
    ok = lambda k: offs + k < NREC
    lo = lambda v: (init & U(0xFFFF0000)) | v
    hi = lambda v: (init & U(0xFFFF)) | (v << U(16))
    expect = np.concatenate([lo(u(0)), hi(s(1)), lo(np.where(ok(2), s(2), 0)), hi(u(3)),
                             hi(np.where(ok(0), u(0), 0))])
    assert np.array_equal(out[:0x500].view(U), expect)
    byte = ((data >> U(16)) & U(0xFF)).astype(np.uint8)
    assert np.array_equal(out[0x600:0x640], byte)
    assert np.array_equal(out[0x700:0x728], byte[:0x28]) and (out[0x728:0x740] == 0xDE).all()
    assert np.array_equal(out[0x800:0x840], byte)
    assert (out[0x500:0x600] == 0xDE).all() and (out[0x640:0x700] == 0xDE).all()


def test_d16_load_pending_until_vmcnt():
    body = BODY.format(nrec=NREC).replace("s_waitcnt vmcnt(0) lgkmcnt(0)\n", "v_add_u32 v13, v3, v3\n")
    with pytest.raises(EmulationError, match=r"reads v3.*global_load_ubyte_d16.*vmcnt"):
        _run(body)
