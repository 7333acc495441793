"""Instructions the third-party fixtures need (DPP, ds_bpermute/ds_permute, 16-bit fp16 VALU with
op_sel, the IEEE division helpers, v_lshl_add_u64), on random data against numpy written here."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.emulator.vector.division import div_fixup, div_scale

from conftest import have_llvm
from emulator_asm import SIX_ROWS_IN_TWO_OUT, build

LOAD = SIX_ROWS_IN_TWO_OUT

L = np.arange(64)
ROW, POS = L & ~15, L & 15


def f32(x):
    return x.view(np.float32)


def f16(bits):
    return (bits & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)


def to16(x):
    return np.asarray(x).astype(np.float16).view(np.uint16).astype(np.uint32)


def pick(r, src, fallback):
    """r[src] where src >= 0, else fallback (lanes with no DPP source)."""
    return np.where(src >= 0, r[np.maximum(src, 0)], fallback)


DPP = {
    "v_mov_b32_dpp v8, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf":
        lambda r: r[2][(L & ~3) + np.array([1, 0, 3, 2])[L & 3]],
    "v_mov_b32 v8, v3\nv_mov_b32_dpp v8, v2 row_shr:3 row_mask:0xf bank_mask:0xf":
        lambda r: pick(r[2], np.where(POS >= 3, L - 3, -1), r[3]),
    "v_mov_b32_dpp v8, v2 row_shl:5 row_mask:0xf bank_mask:0xf bound_ctrl:0":
        lambda r: pick(r[2], np.where(POS + 5 < 16, L + 5, -1), 0),
    "v_mov_b32 v8, v3\nv_mov_b32_dpp v8, v2 row_ror:5 row_mask:0x5 bank_mask:0x3":
        lambda r: np.where((((0x5 >> (L >> 4)) & 1) == 1) & (((0x3 >> ((L >> 2) & 3)) & 1) == 1),
                           r[2][ROW + (POS - 5) % 16], r[3]),
    "v_mov_b32_dpp v8, v2 wave_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:0":
        lambda r: pick(r[2], L - 1, 0),
    "v_mov_b32_dpp v8, v2 wave_rol:1 row_mask:0xf bank_mask:0xf": lambda r: r[2][(L + 1) % 64],
    "v_mov_b32_dpp v8, v2 row_mirror row_mask:0xf bank_mask:0xf": lambda r: r[2][ROW + 15 - POS],
    "v_mov_b32_dpp v8, v2 row_half_mirror row_mask:0xf bank_mask:0xf": lambda r: r[2][(L & ~7) + 7 - (L & 7)],
    "v_mov_b32 v8, v3\nv_mov_b32_dpp v8, v2 row_bcast:15 row_mask:0xa bank_mask:0xf":
        lambda r: np.where((ROW == 16) | (ROW == 48), r[2][np.maximum(ROW - 1, 0)], r[3]),
    "v_mov_b32 v8, v3\nv_mov_b32_dpp v8, v2 row_bcast:31 row_mask:0xc bank_mask:0xf":
        lambda r: np.where(ROW >= 32, r[2][31], r[3]),
    "v_add_f32_dpp v8, v2, v3 row_shl:2 row_mask:0xf bank_mask:0xf bound_ctrl:0":
        lambda r: (f32(pick(r[2], np.where(POS + 2 < 16, L + 2, -1), 0).astype(np.uint32)) + f32(r[3])).view(np.uint32),
    "v_mul_f32_dpp v8, -v2, v3 row_mirror row_mask:0xf bank_mask:0xf":
        lambda r: (-f32(r[2][ROW + 15 - POS]) * f32(r[3])).view(np.uint32),
    "v_mov_b32 v8, v4\nv_and_b32 v10, 63, v2\nv_lshlrev_b32 v10, 2, v10\nds_bpermute_b32 v8, v10, v3\n"
    "s_waitcnt lgkmcnt(0)": lambda r: r[3][r[2] & 63],
    "v_mov_b32 v8, v4\nv_and_b32 v10, 63, v2\nv_lshlrev_b32 v10, 2, v10\ns_mov_b32 exec_hi, 0\n"
    "ds_bpermute_b32 v8, v10, v3 offset:4\ns_waitcnt lgkmcnt(0)\ns_mov_b32 exec_hi, -1":
        lambda r: np.where(L < 32, np.where(((r[2] & 63) + 1) % 64 < 32, r[3][((r[2] & 63) + 1) % 64], 0), r[4]),
    "v_and_b32 v10, 63, v2\nv_lshlrev_b32 v10, 2, v10\nds_permute_b32 v8, v10, v3\ns_waitcnt lgkmcnt(0)":
        lambda r: _scatter(r[2] & 63, r[3]),
}


def _scatter(target, data):
    out = np.zeros(64, np.uint32)
    for lane in range(64):                 # the higher lane wins
        out[target[lane]] = data[lane]
    return out


HALF = {
    "v_mov_b32 v8, v5\nv_fma_f16 v8, v2, v3, v4":               # keeps the high half (gfx9)
        lambda r: to16(f16(r[2]) * f16(r[3]) + f16(r[4])) | (r[5] & 0xFFFF0000),
    "v_mov_b32 v8, v5\nv_fma_f16 v8, v2, v3, v4 op_sel:[1,0,1,1]":
        lambda r: (to16(f16(r[2] >> 16) * f16(r[3]) + f16(r[4] >> 16)) << 16) | (r[5] & 0xFFFF),
    "v_mov_b32 v8, v5\nv_mad_f16 v8, v2, -v3, v4":
        lambda r: to16((f16(r[2]) * -f16(r[3])).astype(np.float16).astype(np.float64) + f16(r[4])) | (r[5] & 0xFFFF0000),
    "v_max_f16 v8, v2, v3": lambda r: to16(np.fmax(f16(r[2]), f16(r[3]))),
    "v_min_f16 v8, v2, v3": lambda r: to16(np.fmin(f16(r[2]), f16(r[3]))),
    "v_add_f16_e64 v8, -|v2|, v3": lambda r: to16(-np.abs(f16(r[2])) + f16(r[3])),
    "v_sub_f16 v8, v2, v3": lambda r: to16(f16(r[2]) - f16(r[3])),
    "v_mul_f16 v8, v2, v3": lambda r: to16(f16(r[2]) * f16(r[3])),
}

# LLVM's fp32 IEEE division a/b (v2 / v3), as clang and Triton emit it.
DIV = """v_div_scale_f32 v8, s[8:9], v3, v3, v2
v_div_scale_f32 v9, vcc, v2, v3, v2
v_rcp_f32 v10, v8
v_fma_f32 v11, -v8, v10, 1.0
v_fma_f32 v10, v11, v10, v10
v_mul_f32 v11, v9, v10
v_fma_f32 v6, -v8, v11, v9
v_fma_f32 v11, v6, v10, v11
v_fma_f32 v8, -v8, v11, v9
v_div_fmas_f32 v8, v8, v10, v11
v_div_fixup_f32 v8, v8, v3, v2"""


def _run(op, words, arch="gfx90a"):
    out = np.full((2, 64), 0xFFC00000, np.uint32)
    em = Emulator.load(build(LOAD.format(op=op), args=(("in", 8), ("out", 8)), vgprs=12, sgprs=16, arch=arch))
    em.launch("k", grid=1, block=64, args=[words, out])
    return out


def _words(seed, half=False):
    rng = np.random.default_rng(seed)
    if half:
        return (to16(rng.standard_normal((6, 64))) | (to16(rng.standard_normal((6, 64))) << 16)).astype(np.uint32)
    return rng.standard_normal((6, 64)).astype(np.float32).view(np.uint32).copy()


needs_llvm = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


@needs_llvm
@pytest.mark.parametrize("op", list(DPP), ids=[f"{o.split()[-1] if 'perm' not in o else 'perm'}{i}" for i, o in enumerate(DPP)])
def test_dpp_and_permute(op):
    words = _words(len(op))
    out = _run(op + "\nv_mov_b32 v9, 0", words)
    regs = [None, None] + [words[i] for i in range(6)]
    np.testing.assert_array_equal(out[0], np.asarray(DPP[op](regs)).astype(np.uint32))


@needs_llvm
@pytest.mark.parametrize("op", list(HALF), ids=[o.split("\n")[-1].split()[0] + str(i) for i, o in enumerate(HALF)])
def test_16bit_valu(op):
    words = _words(len(op), half=True)
    out = _run(op + "\nv_mov_b32 v9, 0", words)
    regs = [None, None] + [words[i] for i in range(6)]
    np.testing.assert_array_equal(out[0], np.asarray(HALF[op](regs)).astype(np.uint32))


@needs_llvm
def test_ieee_division_sequence_matches_numpy():
    rng = np.random.default_rng(7)
    num = rng.standard_normal(64).astype(np.float32)
    den = rng.standard_normal(64).astype(np.float32)
    num[:12] = [0, 1, np.inf, np.nan, 3e38, 1e-30, 2.0, -0.0, 5.0, np.inf, 1e-38, 7.0]
    den[:12] = [0, 0, np.inf, 1.0, 1e-3, 1e30, np.inf, 3.0, -0.0, 2.0, 1e10, 1e-39]
    words = np.zeros((6, 64), np.uint32)
    words[0], words[1] = num.view(np.uint32), den.view(np.uint32)
    out = _run(DIV + "\nv_mov_b32 v9, vcc_lo", words)
    with np.errstate(all="ignore"):
        expect = num / den
    np.testing.assert_allclose(out[0].view(np.float32), expect, rtol=1.2e-7, equal_nan=True)


def test_div_helpers_special_cases():
    q, vcc = div_scale(np.float32([2, 0, 1e-40]), np.float32([2, 0, 1e-40]), np.float32([3, 1, 5]), "f32")
    assert q[0] == 2 and not vcc[0] and np.isnan(q[1])
    assert q[2] == np.float32(1e-40) * np.float32(2.0 ** 64) and vcc[2]    # huge quotient: denominator scaled
    fix = div_fixup(np.float32([1.5, 1, 1, 1]), np.float32([-2, 0, np.inf, 0]), np.float32([3, 1, 1, 0]), "f32")
    assert fix[0] == -1.5 and fix[1] == np.inf and fix[2] == 0 and np.isnan(fix[3])


@needs_llvm
def test_lshl_add_u64_gfx942():
    words = _words(3)
    out = _run("v_lshl_add_u64 v[8:9], v[2:3], 3, v[4:5]", words, arch="gfx942")
    a = words[0].astype(np.uint64) | words[1].astype(np.uint64) << np.uint64(32)
    c = words[2].astype(np.uint64) | words[3].astype(np.uint64) << np.uint64(32)
    expect = (a << np.uint64(3)) + c
    got = out[0].astype(np.uint64) | out[1].astype(np.uint64) << np.uint64(32)
    np.testing.assert_array_equal(got, expect)
