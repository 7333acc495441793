"""MUBUF loads and stores through buffer resources: raw range checks per dword, soffset outside the
check, instruction offsets inside it, structured (idxen) records, byte loads."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

BUFFER = """
s_load_dwordx4 s[4:7], s[0:1], 0x0          // in, out
s_load_dwordx4 s[16:19], s[0:1], 0x10       // nin, nout, soff, pad
s_waitcnt lgkmcnt(0)
s_mov_b32 s8, s4                            // V# for in: base, stride 0, num_records = nin
s_and_b32 s9, s5, 0xffff
s_mov_b32 s10, s16
s_mov_b32 s11, 0x00020000
s_mov_b32 s12, s6                           // V# for out: num_records = nout
s_and_b32 s13, s7, 0xffff
s_mov_b32 s14, s17
s_mov_b32 s15, 0x00020000
v_lshlrev_b32 v1, 4, v0                     // tid * 16
v_lshlrev_b32 v2, 2, v0                     // tid * 4
buffer_load_dwordx4 v[4:7], v1, s[8:11], s18 offen
buffer_load_dword v8, v2, s[8:11], 0 offen offset:16
buffer_load_ubyte v10, v0, s[8:11], 0 offen offset:3
s_waitcnt vmcnt(0)
buffer_store_dwordx4 v[4:7], v1, s[12:15], 0 offen
s_or_b32 s9, s9, 0x100000                   // stride 16: records of 16 bytes
s_mov_b32 s10, 10                           // ten records
buffer_load_dword v9, v0, s[8:11], 0 idxen offset:4
s_waitcnt vmcnt(0)
v_add_u32 v3, 0x400, v2
global_store_dword v3, v8, s[6:7]
v_add_u32 v3, 0x500, v2
global_store_dword v3, v9, s[6:7]
v_add_u32 v3, 0x600, v2
global_store_dword v3, v10, s[6:7]
s_endpgm
"""


@pytest.mark.parametrize("nin,nout,soff", [(948, 1000, 32), (1024, 1024, 0), (0, 17, 4), (600, 8, 64)])
def test_raw_and_structured_range_checks(nin, nout, soff):
    rng = np.random.default_rng(nin + nout)
    words = rng.integers(1, 2 ** 32, 300, dtype=np.uint64).astype(np.uint32)   # never zero
    out = np.full(0x700 // 4, 0xDEADBEEF, np.uint32)
    em = Emulator.load(build(BUFFER, args=(("in", 8), ("out", 8), ("nin", 4), ("nout", 4), ("soff", 4), ("pad", 4)),
                             vgprs=12, sgprs=24))
    em.launch("k", grid=1, block=64, args=[words, out, nin, nout, soff, 0])

    expect = np.full_like(out, 0xDEADBEEF)
    t = np.arange(64)
    for lane in t:                                   # dwordx4: each component checked on its own
        for k in range(4):
            off = 16 * lane + 4 * k
            value = words[(soff + off) // 4] if off < nin else 0     # soffset is not range-checked
            if off < nout:
                expect[off // 4] = value
    v8 = np.where(4 * t + 16 < nin, words[np.minimum(t + 4, 299)], 0)   # offset:16 is range-checked
    expect[0x100:0x140] = v8
    expect[0x140:0x180] = np.where(t < 10, words[np.minimum(4 * t + 1, 299)], 0)
    byte3 = words.view(np.uint8)[np.minimum(t + 3, 1199)]
    expect[0x180:0x1C0] = np.where(t + 3 < nin, byte3, 0)
    np.testing.assert_array_equal(out, expect)
