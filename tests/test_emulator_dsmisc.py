"""ds_swizzle_b32 (quad-permute and bit-mask modes, inactive source lanes read 0), ds_read/write_addtid_b32
(LDS byte offset + M0[15:0] + 4 * lane), 8-bit d16 LDS reads/writes and ds_nop, on two waves against numpy."""

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
EXEC = (0xF7DEBD7B, 0x7BDEF7BD)
OFFSETS = ["swizzle(QUAD_PERM,3,0,2,1)", "swizzle(QUAD_PERM,1,1,1,1)", 'swizzle(BITMASK_PERM,"01pi1")',
           "swizzle(SWAP,8)", "swizzle(REVERSE,16)", "swizzle(BROADCAST,32,21)", "0x3c2a"]

SWIZZLE = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_waitcnt lgkmcnt(0)
v_lshlrev_b32 v1, 2, v0
global_load_dword v2, v1, s[4:5]
global_load_dword v3, v1, s[4:5] offset:512
s_waitcnt vmcnt(0)
{moves}
s_mov_b32 exec_lo, {lo}
s_mov_b32 exec_hi, {hi}
{swizzles}
ds_nop
s_waitcnt lgkmcnt(0)
s_mov_b64 exec, -1
{stores}
s_endpgm
"""


def _quad(sel):
    return 0x8000 | sum(s << (2 * i) for i, s in enumerate(sel))


def reference_sources(offset):
    """The ISA's lane mapping written out lane by lane."""
    src = []
    for lane in range(64):
        if offset >= 0x8000:
            src.append(lane - lane % 4 + (offset >> (2 * (lane % 4)) & 3))
        else:
            and_m, or_m, xor_m = offset & 31, (offset >> 5) & 31, (offset >> 10) & 31
            src.append(32 * (lane // 32) + ((((lane % 32) & and_m) | or_m) ^ xor_m))
    return np.array(src)


ENCODED = [_quad([3, 0, 2, 1]), _quad([1, 1, 1, 1]), (0b01001 << 5) | 0b00110 | (0b00010 << 10),
           (8 << 10) | 31, (15 << 10) | 31, 21 << 5, 0x3C2A]


def _swizzle_kernel(strict_wait=True):
    n = len(OFFSETS)
    moves = "\n".join(f"v_mov_b32 v{4 + k}, v3" for k in range(n))
    swz = "\n".join(f"ds_swizzle_b32 v{4 + k}, v2 offset:{o}" for k, o in enumerate(OFFSETS))
    stores = "\n".join(f"global_store_dword v1, v{4 + k}, s[6:7] offset:{512 * k}" for k in range(n))
    body = SWIZZLE.format(moves=moves, lo=hex(EXEC[0]), hi=hex(EXEC[1]), swizzles=swz, stores=stores)
    if not strict_wait:
        body = body.replace("ds_nop\ns_waitcnt lgkmcnt(0)\n", "v_add_u32 v4, v4, v4\n")
    return build(body, args=(("in", 8), ("out", 8)), vgprs=16, sgprs=16, max_wg=128)


def test_swizzle_modes_match_the_isa_lane_mapping():
    rng = np.random.default_rng(3)
    src, old = rng.integers(1, 2**32, (2, 128), dtype=np.uint64).astype(U)
    out = np.full(512 // 4 * len(OFFSETS), 0xDEADBEEF, U)
    Emulator.load(_swizzle_kernel()).launch("k", grid=1, block=128, args=[np.concatenate([src, old]), out])
    active = np.array([(EXEC[lane // 32] >> (lane % 32)) & 1 for lane in range(64)], bool)
    for k, off in enumerate(ENCODED):
        j = reference_sources(off)
        for wave in range(2):
            s = src[64 * wave:64 * wave + 64]
            expect = np.where(active, np.where(active[j], s[j], 0), old[64 * wave:64 * wave + 64])
            assert np.array_equal(out[128 * k + 64 * wave:128 * k + 64 * wave + 64], expect), OFFSETS[k]


def test_swizzle_result_is_pending_until_lgkmcnt():
    em = Emulator.load(_swizzle_kernel(strict_wait=False))
    words = np.arange(1, 257, dtype=U)
    with pytest.raises(EmulationError, match=r"reads v4.*ds_swizzle_b32.*lgkmcnt"):
        em.launch("k", grid=1, block=128, args=[words, np.zeros(1024, U)])


def test_fft_and_rotate_swizzles_are_refused():
    body = "ds_swizzle_b32 v1, v0 offset:swizzle(ROTATE,1,3)\ns_endpgm"
    with pytest.raises(EmulationError, match=r"ds_swizzle_b32.*FFT/rotate"):
        Emulator.load(build(body, vgprs=4)).launch("k", grid=1, block=64, args=[np.zeros(4, U)])


LDS_BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_waitcnt lgkmcnt(0)
v_lshlrev_b32 v1, 2, v0
global_load_dword v2, v1, s[4:5]
global_load_dword v3, v1, s[4:5] offset:512
global_load_dword v4, v1, s[4:5] offset:1024
global_load_dword v9, v1, s[4:5] offset:1536
global_load_dword v12, v1, s[4:5] offset:2048
v_readfirstlane_b32 s8, v0
s_lshl_b32 s8, s8, 2
s_mov_b32 m0, s8
s_waitcnt vmcnt(0)
ds_write2_b32 v1, v2, v12 offset1:128
v_xor_b32 v2, 0x5a5a5a5a, v2
s_waitcnt lgkmcnt(0)
s_barrier
ds_write_addtid_b32 v2 offset:16
s_waitcnt lgkmcnt(0)
s_barrier
ds_read_addtid_b32 v5
v_mov_b32 v6, v3
v_mov_b32 v7, v3
v_mov_b32 v8, v9
ds_read_u8_d16 v3, v4
ds_read_i8_d16_hi v6, v4 offset:1
ds_read_u8_d16_hi v7, v4 offset:2
ds_read_i8_d16 v8, v4 offset:3
s_waitcnt lgkmcnt(0)
s_barrier
v_add_u32 v10, 0x200, v0
ds_write_b8_d16_hi v10, v9
s_waitcnt lgkmcnt(0)
s_barrier
ds_read2_b32 v[12:13], v1 offset1:128
s_waitcnt lgkmcnt(0)
global_store_dword v1, v5, s[6:7]
global_store_dword v1, v3, s[6:7] offset:512
global_store_dword v1, v6, s[6:7] offset:1024
global_store_dword v1, v7, s[6:7] offset:1536
global_store_dword v1, v8, s[6:7] offset:2048
global_store_dword v1, v12, s[6:7] offset:2560
global_store_dword v1, v13, s[6:7] offset:3072
s_endpgm
"""


@pytest.mark.parametrize("arch", ["gfx900", "gfx90a", "gfx950"])
def test_addtid_and_8bit_d16_lds_accesses(arch):
    """gfx900's d16 reads keep the other half of the VGPR; gfx90a's and gfx950's (SRAM ECC) zero it
    (isa/<gfx>.yaml)."""
    assert zeroes_other_half(load_arch(arch)) == (arch != "gfx900")
    rng = np.random.default_rng(5)
    data, init, _, hi, upper = rng.integers(1, 2**32, (5, 128), dtype=np.uint64).astype(U)
    addrs = rng.integers(0, 1020, 128).astype(U)
    out = np.full(128 * 7, 0xDEADBEEF, U)
    co = build(LDS_BODY, args=(("in", 8), ("out", 8)), vgprs=16, sgprs=16, lds=1024, max_wg=128, arch=arch)
    Emulator.load(co).launch("k", grid=1, block=128, args=[np.concatenate([data, init, addrs, hi, upper]), out])
    kept_init, kept_hi = (np.zeros_like(init), np.zeros_like(hi)) if zeroes_other_half(load_arch(arch)) else (init, hi)

    lds = np.concatenate([data, upper]).copy()
    b = lds.view(np.uint8)
    for t in range(128):                       # addtid: byte 16 + M0 + 4 * lane, M0 = 256 * wave
        b[16 + 256 * (t // 64) + 4 * (t % 64):][:4] = np.array([data[t] ^ 0x5A5A5A5A], U).view(np.uint8)
    addtid = np.array([lds[(256 * (t // 64) + 4 * (t % 64)) // 4] for t in range(128)], U)
    byte = lambda k: b[addrs + k].astype(U)
    sbyte = lambda k: b[addrs + k].view(np.int8).astype(np.int16).view(np.uint16).astype(U)
    u8_lo = (kept_init & U(0xFFFF0000)) | byte(0)
    i8_hi = (kept_init & U(0xFFFF)) | (sbyte(1) << U(16))
    u8_hi = (kept_init & U(0xFFFF)) | (byte(2) << U(16))
    i8_lo = (kept_hi & U(0xFFFF0000)) | sbyte(3)
    b[512:640] = (hi >> U(16)).astype(np.uint8)
    expect = np.concatenate([addtid, u8_lo, i8_hi, u8_hi, i8_lo, lds[:128], lds[128:]])
    assert np.array_equal(out, expect)


RACE = """
s_load_dwordx2 s[4:5], s[0:1], 0x0
s_waitcnt lgkmcnt(0)
v_and_b32 v1, 63, v0
v_lshlrev_b32 v2, 16, v0                // data bits [23:16]: the tid, unlike in the other wave
{op}
s_waitcnt lgkmcnt(0)
s_endpgm
"""


@pytest.mark.parametrize("op,message", [
    ("ds_write_b8_d16_hi v1, v2", "LDS race"),                     # both waves write bytes 0-63
    ("s_mov_b32 m0, 0x3f0\ns_nop 0\nds_write_addtid_b32 v2", "outside the workgroup's 1024 bytes"),
    ("ds_read_u8_d16 v2, v1 offset:1000", "outside the workgroup's 1024 bytes")])
def test_strict_lds_checks_see_the_new_accesses(op, message):
    co = build(RACE.format(op=op), args=(("out", 8),), vgprs=8, sgprs=8, lds=1024, max_wg=128)
    with pytest.raises(EmulationError, match=message):
        Emulator.load(co).launch("k", grid=1, block=128, args=[np.zeros(4, U)])
