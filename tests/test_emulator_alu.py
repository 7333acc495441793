"""Scalar and vector ALU semantics: one generated kernel applies each operation to random inputs and
stores every result; the expected values come from independent Python/numpy references."""

from fractions import Fraction

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.emulator.vector.float32 import fma_f32

from conftest import have_llvm
from emulator_asm import build

M = 0xFFFFFFFF


def s32(v):
    v = np.asarray(v, np.uint64) & M
    return np.where(v >> 31, v.astype(np.int64) - (1 << 32), v.astype(np.int64))


def f32_round(q: Fraction) -> np.float32:
    """Correctly rounded (nearest, ties to even) fp32 value of an exact rational."""
    if q == 0:
        return np.float32(0.0)
    sign, q = (-1 if q < 0 else 1), abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    scale = Fraction(2) ** (max(e, -126) - 23)
    return np.float32(sign * float(round(q / scale) * scale))


def fma_ref(a, b, c):
    with np.errstate(over="ignore"):
            return np.array([f32_round(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                         for x, y, z in zip(a, b, c)], np.float32)


def bits(f):
    return np.asarray(f, np.float32).view(np.uint32).astype(np.uint64)


# (asm leaving its result in v8, reference over the namespace) -----------------------------------------
VECTOR_OPS = [
    ("v_add_u32 v8, v2, v3", lambda n: n.x + n.y),
    ("v_sub_u32 v8, v2, v3", lambda n: n.x - n.y),
    ("v_subrev_u32 v8, v2, v3", lambda n: n.y - n.x),
    ("v_mul_lo_u32 v8, v2, v3", lambda n: n.x * n.y),
    ("v_mul_hi_u32 v8, v2, v3", lambda n: (n.x * n.y) >> 32),
    ("v_mul_hi_i32 v8, v2, v3", lambda n: np.array([(int(a) * int(b)) >> 32 for a, b in zip(s32(n.x), s32(n.y))])),
    ("v_mul_u32_u24 v8, v2, v3", lambda n: (n.x & 0xFFFFFF) * (n.y & 0xFFFFFF)),
    ("v_mad_u32_u24 v8, v2, v3, v4", lambda n: (n.x & 0xFFFFFF) * (n.y & 0xFFFFFF) + n.z),
    ("v_lshlrev_b32 v8, v3, v2", lambda n: n.x << (n.y & 31)),
    ("v_lshlrev_b32 v8, 5, v2", lambda n: n.x << 5),
    ("v_lshrrev_b32 v8, v3, v2", lambda n: n.x >> (n.y & 31)),
    ("v_ashrrev_i32 v8, v3, v2", lambda n: s32(n.x) >> (n.y & 31).astype(np.int64)),
    ("v_and_b32 v8, v2, v3", lambda n: n.x & n.y),
    ("v_or_b32 v8, v2, v3", lambda n: n.x | n.y),
    ("v_xor_b32 v8, v2, v3", lambda n: n.x ^ n.y),
    ("v_not_b32 v8, v2", lambda n: ~n.x),
    ("v_lshl_add_u32 v8, v2, 3, v4", lambda n: (n.x << 3) + n.z),
    ("v_lshl_add_u32 v8, v2, v3, v4", lambda n: ((n.x << (n.y & 31)) & M) + n.z),
    ("v_add_lshl_u32 v8, v2, v3, 2", lambda n: ((n.x + n.y) & M) << 2),
    ("v_lshl_or_b32 v8, v2, 4, v4", lambda n: (n.x << 4) | n.z),
    ("v_and_or_b32 v8, v2, v3, v4", lambda n: (n.x & n.y) | n.z),
    ("v_add3_u32 v8, v2, v3, v4", lambda n: n.x + n.y + n.z),
    ("v_bfe_u32 v8, v2, v3, v4", lambda n: (n.x >> (n.y & 31)) & ((np.uint64(1) << (n.z & 31)) - np.uint64(1))),
    ("v_bfe_u32 v8, v2, 8, 4", lambda n: (n.x >> 8) & 15),
    ("v_bfe_i32 v8, v2, 4, 7", lambda n: np.array([((int(v) >> 4) & 127) - (((int(v) >> 10) & 1) << 7) for v in n.x])),
    ("v_min_u32 v8, v2, v3", lambda n: np.minimum(n.x, n.y)),
    ("v_max_u32 v8, v2, v3", lambda n: np.maximum(n.x, n.y)),
    ("v_min_i32 v8, v2, v3", lambda n: np.minimum(s32(n.x), s32(n.y))),
    ("v_max_i32 v8, v2, v3", lambda n: np.maximum(s32(n.x), s32(n.y))),
    ("v_add_u32 v8, 0x12345, v2", lambda n: n.x + 0x12345),
    ("v_add_u32 v8, s16, v2", lambda n: n.x + n.sa),
    ("v_mov_b32 v8, -7", lambda n: np.full(64, -7)),
    ("v_cvt_f32_u32 v8, v2", lambda n: bits(n.x.astype(np.float32))),
    ("v_cvt_f32_i32 v8, v2", lambda n: bits(s32(n.x).astype(np.float32))),
    ("v_cvt_u32_f32 v8, v5", lambda n: np.clip(np.trunc(n.big.astype(np.float64)), 0, M)),
    ("v_cvt_i32_f32 v8, v5", lambda n: np.clip(np.trunc(n.big.astype(np.float64)), -2 ** 31, 2 ** 31 - 1)),
    ("v_add_co_u32 v12, vcc, v2, v3\nv_addc_co_u32 v8, vcc, v4, v2, vcc",
     lambda n: n.z + n.x + ((n.x + n.y) >> 32)),
    ("v_sub_co_u32 v12, vcc, v2, v3\nv_subb_co_u32 v8, vcc, v4, v2, vcc",
     lambda n: n.z - n.x - (n.x < n.y)),
    ("v_subrev_co_u32 v12, s[20:21], v2, v3\nv_cndmask_b32 v8, 0, 1, s[20:21]", lambda n: n.x > n.y),
    ("v_mad_u64_u32 v[10:11], s[20:21], v2, v3, v[4:5]\nv_mov_b32 v8, v11",
     lambda n: ((n.x * n.y + (n.z | (bits(n.fx) << 32))) >> 32)),
    ("v_lshlrev_b64 v[10:11], 3, v[2:3]\nv_mov_b32 v8, v11", lambda n: ((n.x | (n.y << 32)) << 3) >> 32),
    ("v_readfirstlane_b32 s24, v2\nv_mov_b32 v8, s24", lambda n: np.full(64, n.x[0])),
    ("v_mov_b32 v8, 0\ns_mov_b64 s[22:23], exec\nv_cmpx_gt_u32 vcc, v2, v3\nv_mov_b32 v8, 1\ns_mov_b64 exec, s[22:23]",
     lambda n: n.x > n.y),
    # fp32: bit-exact against numpy's IEEE float32 arithmetic or the exact-rational fma
    ("v_add_f32 v8, v5, v6", lambda n: bits(n.fx + n.fy)),
    ("v_sub_f32 v8, v5, v6", lambda n: bits(n.fx - n.fy)),
    ("v_subrev_f32 v8, v5, v6", lambda n: bits(n.fy - n.fx)),
    ("v_mul_f32 v8, v5, v6", lambda n: bits(n.fx * n.fy)),
    ("v_mul_f32 v8, v5, v6 mul:2", lambda n: bits(n.fx * n.fy * np.float32(2))),
    ("v_max_f32 v8, v5, v6", lambda n: bits(np.maximum(n.fx, n.fy))),
    ("v_min_f32 v8, v5, v6", lambda n: bits(np.minimum(n.fx, n.fy))),
    ("v_mul_f32 v8, 0.5, v5", lambda n: bits(n.fx * np.float32(0.5))),
    ("v_mul_f32 v8, 0x3e800000, v5", lambda n: bits(n.fx * np.float32(0.25))),
    ("v_add_f32 v8, 1, v5", lambda n: bits(n.fx + np.uint32(1).view(np.float32))),   # inline int: bits
    ("v_fma_f32 v8, v5, v6, v7", lambda n: bits(fma_ref(n.fx, n.fy, n.fz))),
    ("v_fma_f32 v8, -v5, |v6|, v7", lambda n: bits(fma_ref(-n.fx, np.abs(n.fy), n.fz))),
    ("v_mov_b32 v8, v7\nv_fmac_f32 v8, v5, v6", lambda n: bits(fma_ref(n.fx, n.fy, n.fz))),
    ("v_mov_b32 v8, v7\nv_mac_f32 v8, v5, v6", lambda n: bits((n.fx * n.fy) + n.fz)),
    ("v_rcp_f32 v8, v5", lambda n: bits(np.float32(1) / n.fx)),
]
for _rel, _fn in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                  ("gt", np.greater), ("ge", np.greater_equal)):
    VECTOR_OPS.append((f"v_cmp_{_rel}_u32 vcc, v2, v3\nv_cndmask_b32 v8, 0, 1, vcc",
                       lambda n, f=_fn: f(n.x, n.y)))
    VECTOR_OPS.append((f"v_cmp_{_rel}_i32 s[20:21], v2, v3\nv_cndmask_b32 v8, 0, 1, s[20:21]",
                       lambda n, f=_fn: f(s32(n.x), s32(n.y))))
    frel = "neq" if _rel == "ne" else _rel          # unordered "not equal": true for NaN
    VECTOR_OPS.append((f"v_cmp_{frel}_f32 vcc, v5, v13\nv_cndmask_b32 v8, 0, 1, vcc",
                       lambda n, f=_fn: f(n.fx, n.fnan) if f is not np.not_equal else ~np.equal(n.fx, n.fnan)))

SCALAR_OPS = [  # (asm leaving its result in s24, reference over (a, b))
    ("s_add_u32 s24, s16, s17", lambda a, b: a + b),
    ("s_add_u32 s24, s16, s17\ns_cselect_b32 s24, 1, 0", lambda a, b: (a + b) >> 32),
    ("s_add_u32 s25, s16, s17\ns_addc_u32 s24, s17, s16", lambda a, b: a + b + ((a + b) >> 32)),
    ("s_sub_u32 s24, s16, s17", lambda a, b: a - b),
    ("s_sub_u32 s24, s16, s17\ns_cselect_b32 s24, 1, 0", lambda a, b: int(b > a)),
    ("s_sub_u32 s25, s16, s17\ns_subb_u32 s24, s17, s16", lambda a, b: b - a - int(b > a)),
    ("s_add_i32 s24, s16, s17\ns_cselect_b32 s24, 1, 0", lambda a, b: int(not -2**31 <= i32(a) + i32(b) < 2**31)),
    ("s_sub_i32 s24, s16, s17\ns_cselect_b32 s24, 1, 0", lambda a, b: int(not -2**31 <= i32(a) - i32(b) < 2**31)),
    ("s_mul_i32 s24, s16, s17", lambda a, b: a * b),
    ("s_mul_hi_u32 s24, s16, s17", lambda a, b: (a * b) >> 32),
    ("s_lshl_b32 s24, s16, s17", lambda a, b: a << (b & 31)),
    ("s_lshr_b32 s24, s16, s17", lambda a, b: a >> (b & 31)),
    ("s_ashr_i32 s24, s16, s17", lambda a, b: i32(a) >> (b & 31)),
    ("s_and_b32 s24, s16, s17", lambda a, b: a & b),
    ("s_or_b32 s24, s16, s17", lambda a, b: a | b),
    ("s_xor_b32 s24, s16, s17", lambda a, b: a ^ b),
    ("s_andn2_b32 s24, s16, s17", lambda a, b: a & ~b),
    ("s_not_b32 s24, s16", lambda a, b: ~a),
    ("s_bfe_u32 s24, s16, 0x50003", lambda a, b: (a >> 3) & 31),
    ("s_bfe_i32 s24, s16, 0x50003", lambda a, b: ((a >> 3) & 31) - (((a >> 7) & 1) << 5)),
    ("s_min_u32 s24, s16, s17", lambda a, b: min(a, b)),
    ("s_max_i32 s24, s16, s17", lambda a, b: max(i32(a), i32(b))),
    ("s_min_i32 s24, s16, s17", lambda a, b: min(i32(a), i32(b))),
    ("s_max_u32 s24, s16, s17\ns_cselect_b32 s24, 1, 0", lambda a, b: int(a > b)),
    ("s_min_i32 s24, s16, s17\ns_cselect_b32 s24, 1, 0", lambda a, b: int(i32(a) < i32(b))),
    ("s_cmp_lt_u32 s16, s17\ns_cselect_b32 s24, 1, 0", lambda a, b: int(a < b)),
    ("s_cmp_lt_i32 s16, s17\ns_cselect_b32 s24, 1, 0", lambda a, b: int(i32(a) < i32(b))),
    ("s_cmp_ge_i32 s16, s17\ns_cselect_b32 s24, 1, 0", lambda a, b: int(i32(a) >= i32(b))),
    ("s_cmp_lg_u32 s16, s17\ns_cselect_b32 s24, 1, 0", lambda a, b: int(a != b)),
    ("s_cmp_eq_u64 s[16:17], s[18:19]\ns_cselect_b32 s24, 1, 0", lambda a, b: int(a == b and b == 0)),
    ("s_lshl_b64 s[24:25], s[16:17], 5\ns_mov_b32 s24, s25", lambda a, b: ((a | b << 32) << 5) >> 32),
    ("s_lshr_b64 s[24:25], s[16:17], 33", lambda a, b: b >> 1),
    ("s_movk_i32 s24, 0x8001", lambda a, b: -0x7FFF),
    ("s_mov_b32 s24, s16\ns_addk_i32 s24, 0x7fff", lambda a, b: a + 0x7FFF),
    ("s_mov_b32 s24, s16\ns_mulk_i32 s24, 0xfff0", lambda a, b: a * -16),
    ("s_lshl2_add_u32 s24, s16, s17", lambda a, b: (a << 2) + b),
    ("s_abs_i32 s24, s16", lambda a, b: abs(i32(a))),
    ("s_absdiff_i32 s24, s16, s17", lambda a, b: abs(i32(a) - i32(b))),
    ("s_bcnt1_i32_b32 s24, s16", lambda a, b: bin(a).count("1")),
    ("s_ff1_i32_b32 s24, s16", lambda a, b: (a & -a).bit_length() - 1 if a else -1),
    ("s_flbit_i32_b32 s24, s16", lambda a, b: 32 - a.bit_length() if a else -1),
    ("s_brev_b32 s24, s16", lambda a, b: int(f"{a:032b}"[::-1], 2)),
    ("s_sext_i32_i16 s24, s16", lambda a, b: (a & 0xFFFF) - ((a & 0x8000) << 1)),
]


def i32(v):
    return v - (1 << 32) if v & 0x80000000 else v


def alu_kernel():
    lines = ["s_load_dwordx4 s[4:7], s[0:1], 0x0", "s_load_dwordx2 s[8:9], s[0:1], 0x10",
             "s_load_dwordx2 s[16:17], s[0:1], 0x18", "s_mov_b32 s18, 0", "s_mov_b32 s19, 0",
             "v_lshlrev_b32 v1, 2, v0", "s_waitcnt lgkmcnt(0)"]
    for i, reg in enumerate(["v2", "v3", "v4"]):
        lines.append(f"global_load_dword {reg}, v1, s[4:5] offset:{256 * i}")
    for i, reg in enumerate(["v5", "v6", "v7", "v13"]):
        lines.append(f"global_load_dword {reg}, v1, s[6:7] offset:{256 * i}")
    lines.append("s_waitcnt vmcnt(0)")
    for asm, _ in VECTOR_OPS:
        lines += asm.split("\n") + ["global_store_dword v1, v8, s[8:9]", "s_add_u32 s8, s8, 0x100",
                                    "s_addc_u32 s9, s9, 0"]
    for asm, _ in SCALAR_OPS:
        lines += asm.split("\n") + ["v_mov_b32 v8, s24", "global_store_dword v1, v8, s[8:9]",
                                    "s_add_u32 s8, s8, 0x100", "s_addc_u32 s9, s9, 0"]
    lines.append("s_endpgm")
    return build("\n".join(lines), args=(("in", 8), ("fin", 8), ("out", 8), ("sa", 4), ("sb", 4)),
                 vgprs=16, sgprs=32)


class NS:
    pass


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("seed,sa,sb", [(1, 0x80000000, 0x7FFFFFFF), (2, 0xFFFFFFFF, 1), (3, 12345, 12345),
                                        (4, 0x1234, 0)])
def test_alu_operations_match_references(seed, sa, sb):
    rng = np.random.default_rng(seed)
    u = rng.integers(0, 2 ** 32, (3, 64), dtype=np.uint64)
    u[1, ::5] = u[0, ::5]                                    # equal lanes for the compares
    u[0, ::7] = rng.integers(0, 64, 10)                      # small values
    f = (rng.standard_normal((4, 64)) * 100).astype(np.float32)
    f[3, ::3] = f[0, ::3]
    f[3, 1::9] = np.nan
    big = f[0].copy()
    big[::4] *= 1e8                                          # conversions: saturation and negatives
    f_in = f.copy()
    f_in[0] = big
    n = NS()
    n.x, n.y, n.z = u
    n.fx, n.fy, n.fz, n.fnan = f_in[0], f[1], f[2], f[3]
    n.big, n.sa, n.sb = big, sa, sb
    out = np.full((len(VECTOR_OPS) + len(SCALAR_OPS), 64), 0xDEADBEEF, np.uint32)
    em = Emulator.load(alu_kernel())
    em.launch("k", grid=1, block=64, args=[u.astype(np.uint32), f_in, out, sa, sb])
    for i, (asm, ref) in enumerate(VECTOR_OPS):
        expect = (np.asarray(ref(n)).astype(np.int64).astype(np.uint64) & M).astype(np.uint32)
        np.testing.assert_array_equal(out[i], np.broadcast_to(expect, (64,)), err_msg=asm)
    for j, (asm, ref) in enumerate(SCALAR_OPS):
        row = out[len(VECTOR_OPS) + j]
        assert (row == row[0]).all()
        assert int(row[0]) == ref(sa, sb) & M, asm


def test_fma_rounds_once():
    # exact value just below the midpoint between 1+2^-23 and 1+2^-22: the double-then-float path
    # would land on the midpoint and round to even (up); a single rounding goes down
    a = np.array([1 + 2.0 ** -23], np.float32)
    b = np.array([(1 - 2.0 ** -23) * 2.0 ** -24], np.float32)
    c = np.array([1 + 2.0 ** -23], np.float32)
    assert float(np.float32(np.float64(a[0]) * b[0] + c[0])) == 1 + 2.0 ** -22      # the trap
    assert fma_f32(a, b, c)[0] == np.float32(1 + 2.0 ** -23)
    assert fma_f32(a, b, c)[0] == fma_ref(a, b, c)[0]
    rng = np.random.default_rng(5)
    for _ in range(20):
        x, y, z = (rng.standard_normal((3, 64)) * 10.0 ** rng.integers(-30, 30, (3, 1))).astype(np.float32)
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(fma_f32(x, y, z), fma_ref(x, y, z))
    tiny = np.array([2.0 ** -70, 1.5 * 2.0 ** -75], np.float32)
    np.testing.assert_array_equal(fma_f32(tiny, tiny, -tiny * tiny), fma_ref(tiny, tiny, -tiny * tiny))


PACKED = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32 v1, 2, v0
s_waitcnt lgkmcnt(0)
""" + "\n".join(f"global_load_dword v{2 + i}, v1, s[4:5] offset:{256 * i}" for i in range(6)) + """
s_waitcnt vmcnt(0)
v_pk_fma_f32 v[8:9], v[2:3], v[4:5], v[6:7]
v_pk_fma_f32 v[10:11], v[2:3], v[4:5], v[6:7] op_sel:[1,0,0] op_sel_hi:[0,0,1] neg_lo:[1,0,0] neg_hi:[0,1,0]
v_pk_mul_f32 v[12:13], v[2:3], v[4:5]
v_pk_add_f32 v[14:15], v[2:3], v[4:5] op_sel_hi:[1,0]
v_pk_mov_b32 v[16:17], v[2:3], v[4:5] op_sel:[1,0]
""" + "\n".join(f"global_store_dword v1, v{8 + j}, s[6:7] offset:{256 * j}" for j in range(10)) + """
s_endpgm
"""


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
def test_packed_fp32_operations_and_op_sel():
    rng = np.random.default_rng(11)
    p0, p1, q0, q1, r0, r1 = x = (rng.standard_normal((6, 64)) * 10).astype(np.float32)
    out = np.full((10, 64), np.nan, np.float32)
    em = Emulator.load(build(PACKED, args=(("in", 8), ("out", 8)), vgprs=18, sgprs=8))
    em.launch("k", grid=1, block=64, args=[x, out])
    expect = [fma_ref(p0, q0, r0), fma_ref(p1, q1, r1), fma_ref(-p1, q0, r0), fma_ref(p0, -q0, r1),
              p0 * q0, p1 * q1, p0 + q0, p1 + q0, p1, q0]
    for j, e in enumerate(expect):
        np.testing.assert_array_equal(out[j], e, err_msg=f"result {j}")


# clang's code for the HIP source kernels: both results take the low half of v[2:3] and v[4:5]
# (op_sel_hi 0 for them), so v3 and v5 are never read and may be unwritten
PACKED_LOW_ONLY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32 v1, 2, v0
s_waitcnt lgkmcnt(0)
global_load_dword v2, v1, s[4:5]
global_load_dword v4, v1, s[4:5] offset:256
global_load_dword v6, v1, s[4:5] offset:512
global_load_dword v7, v1, s[4:5] offset:768
s_waitcnt vmcnt(0)
v_pk_fma_f32 v[8:9], v[2:3], v[4:5], v[6:7] op_sel_hi:[0,0,1]
v_pk_mov_b32 v[10:11], v[2:3], v[6:7] op_sel:[0,1]
global_store_dword v1, v8, s[6:7]
global_store_dword v1, v9, s[6:7] offset:256
global_store_dword v1, v10, s[6:7] offset:512
global_store_dword v1, v11, s[6:7] offset:768
s_endpgm
"""


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
def test_packed_fp32_reads_only_the_halves_op_sel_selects():
    rng = np.random.default_rng(12)
    a, b, c0, c1 = x = (rng.standard_normal((4, 64)) * 10).astype(np.float32)
    out = np.full((4, 64), np.nan, np.float32)
    em = Emulator.load(build(PACKED_LOW_ONLY, args=(("in", 8), ("out", 8)), vgprs=12, sgprs=8), strict=True)
    em.launch("k", grid=1, block=64, args=[x, out])
    for j, e in enumerate([fma_ref(a, b, c0), fma_ref(a, b, c1), a, c1]):
        np.testing.assert_array_equal(out[j], e, err_msg=f"result {j}")
    # selecting the unwritten high half of v[2:3] is still an error
    bad = PACKED_LOW_ONLY.replace("op_sel_hi:[0,0,1]", "op_sel_hi:[1,0,1]")
    em = Emulator.load(build(bad, args=(("in", 8), ("out", 8)), vgprs=12, sgprs=8), strict=True)
    with pytest.raises(Exception, match="reads v3, which nothing has written"):
        em.launch("k", grid=1, block=64, args=[x, np.full((4, 64), np.nan, np.float32)])


# clang zeroes (or fills) a register pair with inline constants: each result takes its source's 32-bit constant
PACKED_CONSTANTS = """
s_load_dwordx2 s[6:7], s[0:1], 0x8
v_lshlrev_b32 v1, 2, v0
s_waitcnt lgkmcnt(0)
v_pk_mov_b32 v[2:3], 0, -1
v_pk_mov_b32 v[4:5], 1.0, 64
v_pk_mov_b32 v[6:7], v[4:5], 0.5 op_sel:[1,0]
v_pk_add_f32 v[8:9], v[4:5], 2.0 op_sel_hi:[1,0]
""" + "\n".join(f"global_store_dword v1, v{2 + j}, s[6:7] offset:{256 * j}" for j in range(8)) + """
s_endpgm
"""


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
def test_packed_fp32_inline_constant_sources():
    out = np.full((8, 64), 0x7FC0DEAD, np.uint32)
    em = Emulator.load(build(PACKED_CONSTANTS, args=(("in", 8), ("out", 8)), vgprs=10, sgprs=8), strict=True)
    em.launch("k", grid=1, block=64, args=[np.zeros(1, np.float32), out])
    f = lambda x: int(np.float32(x).view(np.uint32))
    expect = [0, 0xFFFFFFFF, f(1.0), 64, 64, f(0.5), f(3.0), 64 + 0]
    expect[7] = int((np.uint32(64).view(np.float32) + np.float32(2.0)).view(np.uint32))
    for j, e in enumerate(expect):
        assert (out[j] == e).all(), (j, hex(out[j][0]), hex(e))
