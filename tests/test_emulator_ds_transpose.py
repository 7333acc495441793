"""gfx950 LDS transpose loads (ds_read_b64_tr_b16/_b8) on random LDS data and random per-lane addresses,
against a numpy model written from the tile description: within each 16-lane group the lanes' 64-bit
chunks, n = 64/bits elements each, are laid end to end 16/n lanes per row into an n x 16 tile, and
lane j receives column j. (The decisive check is the Triton gfx950 GEMMs in test_emulator_fixtures.)"""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import assemble, kernel_source

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

LDS_BYTES = 2048
OFFSET = 24
# two waves: LDS <- lds_in (16 bytes a lane); v6 <- addrs[lane]; v[8:9] <- the full-EXEC load; a[0:1]
# <- a load under EXEC {exec_mask} (other lanes keep 0x5a5a5a5a), read back to v[10:11]; both pairs stored
BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_load_dwordx2 s[8:9], s[0:1], 0x10
v_lshlrev_b32 v1, 4, v0
v_lshlrev_b32 v7, 2, v0
v_lshlrev_b32 v12, 3, v0
v_mov_b32 v10, 0x5a5a5a5a
v_mov_b32 v11, 0x5a5a5a5a
v_accvgpr_write_b32 a0, v10
v_accvgpr_write_b32 a1, v11
s_waitcnt lgkmcnt(0)
global_load_dwordx4 v[2:5], v1, s[4:5]
global_load_dword v6, v7, s[6:7]
s_waitcnt vmcnt(0)
ds_write_b128 v1, v[2:5]
s_waitcnt lgkmcnt(0)
s_barrier
{op} v[8:9], v6 offset:{offset}
s_mov_b64 s[12:13], exec
s_mov_b32 s10, {mask_lo}
s_mov_b32 s11, {mask_hi}
s_mov_b64 exec, s[10:11]
{op} a[0:1], v6
s_mov_b64 exec, s[12:13]
s_waitcnt lgkmcnt(0)
v_accvgpr_read_b32 v10, a0
v_accvgpr_read_b32 v11, a1
s_nop 1
global_store_dwordx2 v12, v[8:9], s[8:9]
global_store_dwordx2 v12, v[10:11], s[8:9] offset:1024
s_endpgm
"""
ARGS = (("lds_in", 8), ("addrs", 8), ("out", 8))


def model(lds: np.ndarray, addrs: np.ndarray, bits: int) -> np.ndarray:
    """The 128 lanes' 64-bit results, as [128, 8] bytes."""
    n, dtype = 64 // bits, {16: np.uint16, 8: np.uint8}[bits]
    out = np.zeros((128, n), dtype)
    for g in range(8):                                   # 16-lane groups of both waves
        lanes = range(16 * g, 16 * g + 16)
        chunks = [lds[a:a + 8].view(dtype) for a in addrs[list(lanes)]]
        per_row = 16 // n
        tile = np.stack([np.concatenate(chunks[per_row * e:per_row * (e + 1)]) for e in range(n)])   # [n, 16]
        for j in range(16):
            out[16 * g + j] = tile[:, j]
    return out.view(np.uint8).reshape(128, 8)


def kernel(body: str):
    """gfx950 code object: 16 VGPRs, then 4 AGPRs."""
    src = kernel_source(body, arch="gfx950", args=ARGS, vgprs=16, sgprs=16, lds=LDS_BYTES)
    return assemble(src.replace(".amdhsa_next_free_vgpr 16\n", ".amdhsa_next_free_vgpr 20\n"), "gfx950")


def run(op: str, exec_mask: int, addrs: np.ndarray, lds_in: np.ndarray):
    co = kernel(BODY.format(op=op, offset=OFFSET, mask_lo=hex(exec_mask & 0xFFFFFFFF), mask_hi=hex(exec_mask >> 32)))
    out = np.full(2 * 128 * 2, 0xDEADBEEF, np.uint32)
    Emulator.load(co, strict=True).launch("k", block=(128, 1, 1), args=[lds_in, addrs, out])
    return out.view(np.uint8).reshape(2, 128, 8)


@pytest.mark.parametrize("bits", [16, 8])
def test_transpose_load_matches_the_tile_model(bits):
    rng = np.random.default_rng(bits)
    lds_in = rng.integers(1, 1 << 32, LDS_BYTES // 4, dtype=np.uint64).astype(np.uint32)
    addrs = (rng.integers(0, (LDS_BYTES - 8 - OFFSET) // 4, 128) * 4).astype(np.uint32)   # any dword address
    exec_mask = 0xFFFF_0000_FFFF_0000                       # 16-lane groups 1 and 3 of each wave
    got = run(f"ds_read_b64_tr_b{bits}", exec_mask, addrs, lds_in)
    lds = lds_in.view(np.uint8)
    np.testing.assert_array_equal(got[0], model(lds, addrs + OFFSET, bits))
    expect = model(lds, addrs, bits)
    active = np.array([(exec_mask >> (lane % 64)) & 1 for lane in range(128)], bool)
    np.testing.assert_array_equal(got[1][active], expect[active])
    assert (got[1][~active].view(np.uint32) == 0x5A5A5A5A).all()


def test_split_16_lane_group_is_an_error():
    lds_in = np.arange(1, LDS_BYTES // 4 + 1, dtype=np.uint32)
    addrs = (np.arange(128) * 8).astype(np.uint32)
    with pytest.raises(EmulationError, match=r"EXEC covers only part of lanes 16\.\.31"):
        run("ds_read_b64_tr_b16", 0xFFFF_FFFF_00FF_FFFF, addrs, lds_in)


def test_result_is_pending_until_lgkmcnt():
    body = BODY.replace("s_mov_b64 s[12:13], exec", "v_mov_b32 v13, v8\ns_mov_b64 s[12:13], exec")
    co = kernel(body.format(op="ds_read_b64_tr_b8", offset=0, mask_lo="-1", mask_hi="-1"))
    args = [np.ones(LDS_BYTES // 4, np.uint32), np.zeros(128, np.uint32), np.zeros(512, np.uint32)]
    with pytest.raises(EmulationError, match=r"reads v8 .*ds_read_b64_tr_b8.*lgkmcnt"):
        Emulator.load(co, strict=True).launch("k", block=(128, 1, 1), args=args)
