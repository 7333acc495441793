"""Hand-written kernels run on the emulator and compared with numpy / Python references."""

import struct

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError, UserError

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

VADD = """
s_load_dwordx4 s[4:7], s[0:1], 0x0          // a, b
s_load_dwordx2 s[8:9], s[0:1], 0x10         // c
s_load_dword s10, s[0:1], 0x18              // n
s_lshl_b32 s11, s2, 8                       // workgroup x * 256
v_add_u32 v1, s11, v0                       // global id
s_waitcnt lgkmcnt(0)
v_cmp_gt_u32 vcc, s10, v1
s_and_saveexec_b64 s[12:13], vcc
s_cbranch_execz .Ldone
v_lshlrev_b32 v2, 2, v1
global_load_dword v3, v2, s[4:5]
global_load_dword v4, v2, s[6:7]
s_waitcnt vmcnt(0)
v_add_f32 v3, v3, v4
global_store_dword v2, v3, s[8:9]
.Ldone:
s_endpgm
"""
VADD_ARGS = (("a", 8), ("b", 8), ("c", 8), ("n", 4))


@pytest.mark.parametrize("n,arch", [(1000, "gfx90a"), (256, "gfx90a"), (37, "gfx90a"), (1000, "gfx942")])
def test_vector_add_matches_numpy(n, arch):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.full(n + 16, np.nan, np.float32)          # poisoned, with a tail that must stay untouched
    em = Emulator.load(build(VADD, args=VADD_ARGS, vgprs=8, sgprs=16, arch=arch))
    assert em.arch.name == arch
    res = em.launch("k", grid=((n + 255) // 256, 1, 1), block=(256, 1, 1), args=[a, b, c, n])
    np.testing.assert_array_equal(c[:n], a + b)
    assert np.isnan(c[n:]).all()
    assert res.workgroups == (n + 255) // 256 and res.waves == 4 * res.workgroups
    assert res.instructions > 0 and res.opcode_counts["v_add_f32"] == (n + 63) // 64


PARTIAL = """
s_load_dwordx2 s[4:5], s[0:1], 0x0
s_mul_i32 s6, s2, 100                       // workgroup x * block size
v_add_u32 v1, s6, v0                        // global id
s_mulk_i32 s2, 1000
v_add_u32 v2, s2, v0                        // value: 1000 * group + local id
v_lshlrev_b32 v1, 2, v1
s_waitcnt lgkmcnt(0)
global_store_dword v1, v2, s[4:5]
s_endpgm
"""


def test_partial_last_wave_runs_only_live_lanes():
    out = np.full(3 * 100 + 64, 0xDEADBEEF, np.uint32)
    em = Emulator.load(build(PARTIAL, args=(("out", 8),), vgprs=4, sgprs=8))
    res = em.launch("k", grid=(3, 1, 1), block=(100, 1, 1), args=[out])
    expect = np.concatenate([1000 * g + np.arange(100) for g in range(3)])
    np.testing.assert_array_equal(out[:300], expect)
    assert (out[300:] == 0xDEADBEEF).all()
    assert res.waves == 6


LDS_SHUFFLE = """
s_load_dwordx4 s[4:7], s[0:1], 0x0         // in, out
v_lshlrev_b32 v1, 2, v0                     // tid * 4
s_waitcnt lgkmcnt(0)
global_load_dword v2, v1, s[4:5]
s_waitcnt vmcnt(0)
ds_write_b32 v1, v2
s_waitcnt lgkmcnt(0)
s_barrier
v_add_u32 v3, 64, v0
v_and_b32 v3, 0xff, v3                      // (tid + 64) % 256
v_lshlrev_b32 v3, 2, v3
v_sub_u32 v4, 0xff, v0                      // 255 - tid
v_lshlrev_b32 v4, 2, v4
ds_read_b32 v5, v3
ds_read_b32 v6, v4
s_waitcnt lgkmcnt(0)
v_fma_f32 v5, v5, 2.0, v6
global_store_dword v1, v5, s[6:7]
s_endpgm
"""


def test_lds_exchange_between_four_waves_with_barrier():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(256).astype(np.float32)
    out = np.full(256, np.nan, np.float32)
    em = Emulator.load(build(LDS_SHUFFLE, args=(("in", 8), ("out", 8)), vgprs=8, sgprs=8, lds=1024))
    em.launch("k", grid=1, block=256, args=[x, out])
    t = np.arange(256)
    expect = (x[(t + 64) % 256].astype(np.float64) * 2 + x[255 - t]).astype(np.float32)
    np.testing.assert_array_equal(out, expect)


SCALAR_LOOP = """
s_load_dwordx2 s[4:5], s[0:1], 0x0
s_load_dword s6, s[0:1], 0x8
s_waitcnt lgkmcnt(0)
s_mov_b32 s7, 0                             // i
s_mov_b32 s8, 0                             // acc
s_mov_b32 s10, 0                            // odd count
.Lloop:
s_cmp_ge_u32 s7, s6
s_cbranch_scc1 .Ldone
s_and_b32 s11, s7, 1
s_cmp_eq_u32 s11, 0
s_cbranch_scc1 .Leven
s_mul_i32 s12, s7, s7
s_add_u32 s8, s8, s12
s_add_u32 s10, s10, 1
s_branch .Lnext
.Leven:
s_lshl_b32 s12, s7, 3
s_xor_b32 s8, s8, s12
.Lnext:
s_add_u32 s7, s7, 1
s_branch .Lloop
.Ldone:
v_mov_b32 v1, s8
v_mov_b32 v2, s10
v_mov_b32 v3, 0
global_store_dword v3, v1, s[4:5]
global_store_dword v3, v2, s[4:5] offset:4
s_endpgm
"""


@pytest.mark.parametrize("n", [0, 1, 17, 300])
def test_scalar_loop_with_branches(n):
    acc = odd = 0
    for i in range(n):
        if i & 1:
            acc = (acc + i * i) & 0xFFFFFFFF
            odd += 1
        else:
            acc ^= (i << 3) & 0xFFFFFFFF
    out = np.zeros(2, np.uint32)
    em = Emulator.load(build(SCALAR_LOOP, args=(("out", 8), ("n", 4)), vgprs=4, sgprs=16))
    res = em.launch("k", grid=1, block=64, args=[out, n])
    assert out.tolist() == [acc, odd]
    assert res.opcode_counts["s_cmp_ge_u32"] == n + 1


EXEC_MASKING = """
s_load_dwordx4 s[4:7], s[0:1], 0x0         // in, out
v_lshlrev_b32 v1, 2, v0
s_mov_b32 s14, 5
s_waitcnt lgkmcnt(0)
global_load_dword v2, v1, s[4:5]
s_waitcnt vmcnt(0)
s_mov_b64 s[10:11], exec
v_and_b32 v3, 1, v0
v_cmpx_eq_u32 vcc, 1, v3                    // odd lanes
v_mul_f32 v4, 2.0, v2
s_mov_b64 exec, s[10:11]
v_cmpx_eq_u32 s[16:17], 0, v3               // even lanes
v_add_f32 v4, 1.0, v2
s_mov_b64 exec, s[10:11]
v_cmp_gt_u32 vcc, 40, v0
s_and_saveexec_b64 s[12:13], vcc            // lanes below 40
v_add_f32 v4, 0x42c80000, v4                // += 100.0
s_or_b64 exec, exec, s[12:13]
v_cmpx_lt_u32 vcc, 1000, v0                 // no lane
s_cbranch_execz .Lskip
s_mov_b32 s14, 7
.Lskip:
s_mov_b64 exec, s[10:11]
global_store_dword v1, v4, s[6:7]
v_mov_b32 v5, s14
v_mov_b32 v6, s16                           // the v_cmpx_e64 destination (even lanes mask, low half)
global_store_dword v1, v5, s[6:7] offset:256
global_store_dword v1, v6, s[6:7] offset:512
s_endpgm
"""


def test_exec_masking_with_cmpx_saveexec_and_execz():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(64).astype(np.float32)
    out = np.full(192, np.nan, np.float32)
    em = Emulator.load(build(EXEC_MASKING, args=(("in", 8), ("out", 8)), vgprs=8, sgprs=24))
    em.launch("k", grid=1, block=64, args=[x, out])
    t = np.arange(64)
    expect = np.where(t & 1, x * np.float32(2), x + np.float32(1)).astype(np.float32)
    expect = np.where(t < 40, expect + np.float32(100), expect).astype(np.float32)
    np.testing.assert_array_equal(out[:64], expect)
    assert (out[64:128].view(np.uint32) == 5).all()        # s_cbranch_execz skipped the s_mov_b32
    assert (out[128:].view(np.uint32) == 0x55555555).all()  # even lanes 0..31


IDS = """
s_load_dwordx2 s[6:7], s[0:1], 0x0
s_mul_i32 s8, s4, 3
s_add_u32 s8, s8, s3
s_mul_i32 s8, s8, 2
s_add_u32 s8, s8, s2                        // flat workgroup id = (z * 3 + y) * 2 + x
v_mbcnt_lo_u32_b32 v1, -1, 0
v_mbcnt_hi_u32_b32 v1, -1, v1               // lane id
s_lshl_b32 s9, s8, 6
v_add_u32 v1, s9, v1                        // flat global lane
v_lshlrev_b32 v1, 4, v1
v_mov_b32 v2, s2
v_mov_b32 v3, s3
v_mov_b32 v4, s4
s_waitcnt lgkmcnt(0)
global_store_dword v1, v0, s[6:7]
global_store_dword v1, v2, s[6:7] offset:4
global_store_dword v1, v3, s[6:7] offset:8
global_store_dword v1, v4, s[6:7] offset:12
s_endpgm
"""


def test_workitem_ids_are_packed_and_workgroup_ids_follow_user_sgprs():
    out = np.full((12, 64, 4), 0xFFFFFFFF, np.uint32)
    em = Emulator.load(build(IDS, args=(("out", 8),), vgprs=8, sgprs=16, wg_ids="xyz", workitem_id=2))
    em.launch("k", grid=(2, 3, 2), block=(8, 4, 2), args=[out])
    t = np.arange(64)
    packed = (t % 8) | ((t // 8) % 4) << 10 | (t // 32) << 20
    for z in range(2):
        for y in range(3):
            for x in range(2):
                g = (z * 3 + y) * 2 + x
                np.testing.assert_array_equal(out[g, :, 0], packed)
                assert (out[g, :, 1] == x).all() and (out[g, :, 2] == y).all() and (out[g, :, 3] == z).all()


ARGS = """
s_load_dwordx8 s[4:11], s[0:1], 0x0
s_load_dwordx2 s[12:13], s[0:1], 0x20
s_waitcnt lgkmcnt(0)
v_mov_b32 v0, 0
v_mov_b32 v1, s4
v_mov_b32 v2, s6
v_mov_b32 v3, s7
v_mov_b32 v4, s8
v_mov_b32 v6, s10
v_mov_b32 v7, s11
global_store_dword v0, v1, s[12:13]
global_store_dwordx2 v0, v[2:3], s[12:13] offset:4
global_store_dword v0, v4, s[12:13] offset:12
global_store_dwordx2 v0, v[6:7], s[12:13] offset:16
s_endpgm
"""


def test_arguments_are_laid_out_by_metadata():
    out = np.zeros(6, np.uint32)
    em = Emulator.load(build(ARGS, args=(("f", 4), ("d", 8), ("i", 4), ("u", 8), ("out", 8)), vgprs=8, sgprs=16))
    em.launch("k", grid=1, block=1, args=[1.5, np.float64(2.25), -7, np.uint64(2 ** 40 + 3), out])
    expect = struct.unpack("<6I", struct.pack("<fdiQ", 1.5, 2.25, -7, 2 ** 40 + 3))
    assert out.tolist() == list(expect)
    with pytest.raises(UserError, match="takes 5 arguments"):
        em.launch("k", grid=1, block=1, args=[1.5, out])
    with pytest.raises(UserError, match="'d' is 8 bytes but got a float32"):
        em.launch("k", grid=1, block=1, args=[1.5, np.float32(2), -7, 0, out])


def test_memory_fault_names_address_and_instruction():
    body = """
    s_load_dwordx2 s[4:5], s[0:1], 0x0
    v_mov_b32 v1, 0x100000
    s_waitcnt lgkmcnt(0)
    global_load_dword v2, v1, s[4:5]
    s_endpgm
    """
    em = Emulator.load(build(body, args=(("buf", 8),), vgprs=4, sgprs=8))
    with pytest.raises(EmulationError, match=r"at 0x[0-9a-f]+ `global_load_dword v2, v1, s\[4:5\]`.*memory fault: .* at address 0x[0-9a-f]+ "):
        em.launch("k", grid=1, block=64, args=[np.zeros(16, np.float32)])


def test_endless_loop_is_stopped():
    em = Emulator.load(build(".Lspin:\ns_branch .Lspin\ns_endpgm", args=(("x", 4),), vgprs=1, sgprs=4))
    with pytest.raises(EmulationError, match="endless loop"):
        em.launch("k", grid=1, block=64, args=[0], max_instructions=1000)
