"""LDS atomics on random data against a lane-by-lane numpy model; every lane of two waves hits one of
four dwords, so colliding lanes must be serialised."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

# in: 128 data words then 128 compare words then 4 initial LDS words; out: 128 returned + 4 final LDS words
BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32 v1, 2, v0
v_and_b32 v2, 3, v0
v_lshlrev_b32 v2, 2, v2
s_waitcnt lgkmcnt(0)
global_load_dword v3, v1, s[4:5]
global_load_dword v4, v1, s[4:5] offset:512
v_cmp_gt_u32 vcc, 4, v0
s_and_saveexec_b64 s[8:9], vcc
global_load_dword v5, v1, s[4:5] offset:1024
s_waitcnt vmcnt(0)
ds_write_b32 v1, v5
s_mov_b64 exec, s[8:9]
s_waitcnt vmcnt(0) lgkmcnt(0)
s_barrier
{op}
s_waitcnt lgkmcnt(0)
s_barrier
global_store_dword v1, v6, s[6:7]
s_and_saveexec_b64 s[8:9], vcc
ds_read_b32 v7, v1
s_waitcnt lgkmcnt(0)
global_store_dword v1, v7, s[6:7] offset:512
s_endpgm
"""

U = np.uint32


def model(kind, init, data, cmp):
    mem, ret = init.astype(np.int64).copy(), np.zeros(128, np.int64)
    for lane in range(128):   # wave 0 then wave 1, ascending lanes
        slot, old, d = lane & 3, int(mem[lane & 3]), int(data[lane])
        ret[lane] = old
        if kind == "add_u32":
            mem[slot] = (old + d) & 0xFFFFFFFF
        elif kind == "max_i32":
            mem[slot] = old if np.int32(U(old)) >= np.int32(U(d)) else d
        elif kind == "add_f32":
            mem[slot] = int((np.float32(U(old).view(np.float32)) + U(d).view(np.float32)).view(U))
        elif kind == "cmpst":
            if old == int(cmp[lane]):
                mem[slot] = d
    return ret.astype(U), mem.astype(U)


CASES = {
    "add_u32": "ds_add_rtn_u32 v6, v2, v3",
    "max_i32": "ds_max_rtn_i32 v6, v2, v3",
    "add_f32": "ds_add_rtn_f32 v6, v2, v3",
    "cmpst": "ds_cmpst_rtn_b32 v6, v2, v4, v3",
}


@pytest.mark.parametrize("kind", list(CASES))
def test_lds_atomics_match_the_serial_model(kind):
    rng = np.random.default_rng(len(kind))
    if kind == "add_f32":
        data = rng.uniform(0.25, 1.0, 128).astype(np.float32).view(U)
        init = rng.uniform(0.25, 1.0, 4).astype(np.float32).view(U)
    else:
        data = rng.integers(1, 1 << 32, 128, dtype=np.uint64).astype(U)
        init = rng.integers(1, 1 << 32, 4, dtype=np.uint64).astype(U)
    cmp = data.copy()
    if kind == "cmpst":   # lanes 0-3 compare against the initial value, so their stores happen
        data = rng.integers(1, 1 << 32, 128, dtype=np.uint64).astype(U)
        cmp = rng.integers(1, 1 << 32, 128, dtype=np.uint64).astype(U)
        cmp[:4] = init
        cmp[4:8] = data[:4]   # ... and lanes 4-7 against what lanes 0-3 stored
    words = np.concatenate([data, cmp, init, np.zeros(124, U)])
    out = np.full(256, 0xDEADBEEF, U)
    co = build(BODY.format(op=CASES[kind]), args=(("in", 8), ("out", 8)), vgprs=8, sgprs=16, lds=512, max_wg=128)
    Emulator.load(co).launch("k", grid=1, block=128, args=[words, out])
    ret, mem = model(kind, init, data, cmp)
    assert np.array_equal(out[:128], ret)
    assert np.array_equal(out[128:132], mem)
