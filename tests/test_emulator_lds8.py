"""8-bit LDS accesses on random data: ds_write_b8 stores each lane's low byte at a random distinct byte
address (over LDS pre-filled with random dwords, so untouched bytes must survive), ds_read_u8/ds_read_i8
read bytes back zero/sign-extended; numpy models the byte array."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator

from conftest import have_llvm
from emulator_asm import assemble, kernel_source

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

LDS_BYTES = 256
# one wave: LDS <- fill (a dword a lane); ds_write_b8 data[lane] (from an AGPR) at waddr[lane] + 3; then u8
# (into a VGPR) and i8 (into an AGPR) reads of raddr[lane] + 1; out = [u8 results, i8 results, the final LDS]
BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_load_dwordx4 s[8:11], s[0:1], 0x10
v_lshlrev_b32 v1, 2, v0
s_waitcnt lgkmcnt(0)
global_load_dword v2, v1, s[4:5]
global_load_dword v3, v1, s[6:7]
global_load_dword v4, v1, s[8:9]
global_load_dword v5, v1, s[4:5] offset:256
s_waitcnt vmcnt(0)
v_accvgpr_write_b32 a2, v2
v_not_b32 v2, v2
ds_write_b32 v1, v5
s_nop 1
ds_write_b8 v3, a2 offset:3
ds_read_u8 v6, v4 offset:1
ds_read_i8 a1, v4 offset:1
ds_read_b32 v8, v1
s_waitcnt lgkmcnt(0)
v_accvgpr_read_b32 v7, a1
s_nop 1
global_store_dword v1, v6, s[10:11]
global_store_dword v1, v7, s[10:11] offset:256
global_store_dword v1, v8, s[10:11] offset:512
s_endpgm
"""


def test_byte_writes_and_extending_reads():
    rng = np.random.default_rng(8)
    data = rng.integers(1, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    fill = rng.integers(1, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    waddr = rng.permutation(LDS_BYTES - 3)[:64].astype(np.uint32)          # distinct bytes
    raddr = rng.integers(0, LDS_BYTES - 1, 64).astype(np.uint32)
    src = kernel_source(BODY, arch="gfx950", args=(("data_fill", 8), ("waddr", 8), ("raddr", 8), ("out", 8)),
                        vgprs=12, sgprs=16, lds=LDS_BYTES)
    co = assemble(src.replace(".amdhsa_next_free_vgpr 12\n", ".amdhsa_next_free_vgpr 16\n"), "gfx950")  # + 4 AGPRs
    out = np.full(192, 0xDEADBEEF, np.uint32)
    Emulator.load(co, strict=True).launch("k", block=(64, 1, 1),
                                          args=[np.concatenate([data, fill]), waddr, raddr, out])
    lds = fill.view(np.uint8).copy()
    lds[waddr + 3] = (data & 0xFF).astype(np.uint8)
    byte = lds[raddr + 1]
    np.testing.assert_array_equal(out[:64], byte.astype(np.uint32))
    np.testing.assert_array_equal(out[64:128], byte.view(np.int8).astype(np.int32).view(np.uint32))
    np.testing.assert_array_equal(out[128:], lds.view(np.uint32))
