"""fp16/fp64/16-bit integer compares and the class tests (vector/compare16_64.py) on random data with NaNs,
infinities, denormals and signed zeros, against references written here from IEEE semantics."""

import numpy as np
import pytest

from conftest import have_llvm
from valu_kernel import run_block

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

RNG = np.random.default_rng(7)
F16_SPECIAL = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7D00, 0xFE01, 0x0001, 0x83FF, 0x3C00, 0xBC00, 0x7BFF]
F64_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -2.5e-310, 1.0, -1.0]


def _pairs(special, random, equal_share=0.3):
    a = np.where(RNG.random(64) < 0.4, RNG.choice(special, 64), random())
    b = np.where(RNG.random(64) < 0.4, RNG.choice(special, 64), random())
    return a, np.where(RNG.random(64) < equal_share, a, b)


A16, B16 = _pairs(np.array(F16_SPECIAL, np.uint32),
                  lambda: RNG.standard_normal(64).astype(np.float16).view(np.uint16).astype(np.uint32))
A64, B64 = _pairs(np.array(F64_SPECIAL), lambda: RNG.standard_normal(64))
A64 = A64.astype(np.float64)
B64 = B64.astype(np.float64)
W64A, W64B = A64.view(np.uint64), B64.view(np.uint64)
HIGH = RNG.integers(0, 1 << 16, (2, 64), dtype=np.uint32) << 16        # junk the compares must ignore
MASK = RNG.integers(0, 1 << 10, 64, dtype=np.uint32)
F32_SPECIAL = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00000, 0xFFA00001, 1,
                        0x807FFFFF, 0x3F800000, 0xBF800000], np.uint32)
A32 = np.where(RNG.random(64) < 0.6, RNG.choice(F32_SPECIAL, 64),
               RNG.standard_normal(64).astype(np.float32).view(np.uint32))
INPUTS = np.stack([A16 | HIGH[0], B16 | HIGH[1], (W64A & 0xFFFFFFFF).astype(np.uint32), (W64A >> 32).astype(np.uint32),
                   (W64B & 0xFFFFFFFF).astype(np.uint32), (W64B >> 32).astype(np.uint32), MASK, A32]).astype(np.uint32)
# v10, v11: fp16/16-bit pairs; v[12:13], v[14:15]: fp64; v16: class mask; v17: fp32


def f32(bits):
    with np.errstate(invalid="ignore"):           # signalling NaNs
        return bits.view(np.float32).astype(np.float64)


def h(bits):
    return (bits & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)


ORDERED = {"eq": lambda a, b: a == b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
           "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "lg": lambda a, b: a != b}


def float_ref(rel, a, b):
    unordered = np.isnan(a) | np.isnan(b)
    if rel in ("f", "tru"):
        return np.full(64, rel == "tru")
    if rel in ("o", "u"):
        return unordered == (rel == "u")
    if rel in ORDERED:
        return ~unordered & ORDERED[rel](a, b)
    name = {"neq": "eq"}.get(rel, rel[1:])
    return unordered | ~ORDERED[name](a, b)


FLOAT_RELS = ["f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru"]
INT_RELS = ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"]


def int_ref(rel, a, b):
    return {"f": np.zeros(64, bool), "t": np.ones(64, bool), "lt": a < b, "eq": a == b, "le": a <= b,
            "gt": a > b, "ne": a != b, "ge": a >= b}[rel]


def s16(x):
    v = (x & 0xFFFF).astype(np.int64)
    return np.where(v >= 0x8000, v - 0x10000, v)


def class_ref(value, bits, quiet_bit, mask):
    """The class bit of each value (floats as float64, bits for the NaN kind) tested in mask."""
    nan, inf, neg = np.isnan(value), np.isinf(value), np.signbit(value)
    tiny = {10: 2.0 ** -14, 23: 2.0 ** -126, 52: 2.0 ** -1022}[quiet_bit + 1]
    zero, sub = value == 0, (np.abs(value) < tiny) & (value != 0)
    quiet = (bits >> np.uint64(quiet_bit)) & np.uint64(1) == 1
    cls = np.select([nan & ~quiet, nan & quiet, inf & neg, inf, zero & neg, zero, sub & neg, sub, neg],
                    [0, 1, 2, 9, 5, 6, 4, 7, 3], 8)
    return (mask >> cls.astype(np.uint32)) & 1 == 1


def run_compares(ops, arch="gfx90a"):
    body = "\n".join(f"{op}\nv_cndmask_b32 v{30 + k}, 0, 1, {'vcc' if '_e32' in op else 's[20:21]'}"
                     for k, op in enumerate(ops))
    return run_block(body, INPUTS, len(ops), arch=arch) == 1


def test_float_compares_f16_f64():
    ops = []
    for rel in FLOAT_RELS:
        ops.append(f"v_cmp_{rel}_f16_e32 vcc, v10, v11")
        ops.append(f"v_cmp_{rel}_f64_e64 s[20:21], v[12:13], v[14:15]")
    got = run_compares(ops)
    for k, rel in enumerate(FLOAT_RELS):
        np.testing.assert_array_equal(got[2 * k], float_ref(rel, h(A16), h(B16)), err_msg=f"{rel}_f16")
        np.testing.assert_array_equal(got[2 * k + 1], float_ref(rel, A64, B64), err_msg=f"{rel}_f64")


def test_float_compare_modifiers_and_constants():
    ops = ["v_cmp_lt_f16_e64 s[20:21], -v10, |v11|", "v_cmp_nge_f64_e64 s[20:21], |v[12:13]|, -v[14:15]",
           "v_cmp_le_f16_e64 s[20:21], v10, 1.0", "v_cmp_gt_f64_e64 s[20:21], v[12:13], -2.0"]
    got = run_compares(ops)
    np.testing.assert_array_equal(got[0], float_ref("lt", -h(A16), np.abs(h(B16))))
    np.testing.assert_array_equal(got[1], float_ref("nge", np.abs(A64), -B64))
    np.testing.assert_array_equal(got[2], float_ref("le", h(A16), 1.0))
    np.testing.assert_array_equal(got[3], float_ref("gt", A64, -2.0))


def test_int16_compares():
    ops = []
    for rel in INT_RELS:
        ops.append(f"v_cmp_{rel}_i16_e32 vcc, v10, v11")
        ops.append(f"v_cmp_{rel}_u16_e64 s[20:21], v10, v11")
    ops.append("v_cmp_lt_i16_e64 s[20:21], v10, -3")
    got = run_compares(ops)
    for k, rel in enumerate(INT_RELS):
        np.testing.assert_array_equal(got[2 * k], int_ref(rel, s16(A16), s16(B16)), err_msg=f"{rel}_i16")
        np.testing.assert_array_equal(got[2 * k + 1], int_ref(rel, A16 & 0xFFFF, B16 & 0xFFFF), err_msg=rel)
    np.testing.assert_array_equal(got[-1], s16(A16) < -3)


def test_class():
    ops = ["v_cmp_class_f16_e32 vcc, v10, v16", "v_cmp_class_f32_e64 s[20:21], v17, v16",
           "v_cmp_class_f64_e64 s[20:21], v[12:13], v16", "v_cmp_class_f32_e64 s[20:21], -v17, v16",
           "v_cmp_class_f64_e64 s[20:21], |v[14:15]|, v16"]
    got = run_compares(ops)
    a32 = f32(A32)
    np.testing.assert_array_equal(got[0], class_ref(h(A16), A16.astype(np.uint64), 9, MASK))
    np.testing.assert_array_equal(got[1], class_ref(a32, A32.astype(np.uint64), 22, MASK))
    np.testing.assert_array_equal(got[2], class_ref(A64, W64A, 51, MASK))
    np.testing.assert_array_equal(got[3], class_ref(-a32, A32.astype(np.uint64), 22, MASK))
    np.testing.assert_array_equal(got[4], class_ref(np.abs(B64), W64B, 51, MASK))
    assert got[1].any() and not got[1].all()


def test_cmpx_writes_exec_under_exec():
    start = 0x5A5A_F0F0_3333_CCCC
    ops = [("v_cmpx_nlt_f16_e32 vcc, v10, v11", float_ref("nlt", h(A16), h(B16)), "vcc"),
           ("v_cmpx_u_f64_e64 s[20:21], v[12:13], v[14:15]", float_ref("u", A64, B64), "s[20:21]"),
           ("v_cmpx_ge_u16_e64 s[20:21], v10, v11", (A16 & 0xFFFF) >= (B16 & 0xFFFF), "s[20:21]"),
           ("v_cmpx_class_f32_e64 s[20:21], v17, v16", class_ref(f32(A32),
                                                                 A32.astype(np.uint64), 22, MASK), "s[20:21]")]
    body = []
    for k, (op, _, dst) in enumerate(ops):
        body += [f"s_mov_b32 exec_lo, 0x{start & 0xFFFFFFFF:x}", f"s_mov_b32 exec_hi, 0x{start >> 32:x}", op, "s_mov_b64 s[22:23], exec", "s_mov_b64 exec, -1",
                 f"v_cndmask_b32 v{30 + 2 * k}, 0, 1, {dst}", f"v_cndmask_b32 v{31 + 2 * k}, 0, 1, s[22:23]"]
    got = run_block("\n".join(body), INPUTS, 2 * len(ops)) == 1
    active = (np.uint64(start) >> np.arange(64, dtype=np.uint64)) & np.uint64(1) == 1
    for k, (op, ref, _) in enumerate(ops):
        np.testing.assert_array_equal(got[2 * k], ref & active, err_msg=op)
        np.testing.assert_array_equal(got[2 * k + 1], ref & active, err_msg=op)


def test_sdwa_compares():
    ops = ["v_cmp_lt_f16_sdwa vcc, v10, v11 src0_sel:WORD_1 src1_sel:WORD_0",
           "v_cmp_gt_i16_sdwa s[20:21], v10, v11 src0_sel:WORD_0 src1_sel:WORD_1",
           "v_cmp_class_f32_sdwa vcc, v17, v16 src0_sel:DWORD src1_sel:BYTE_0"]
    body = "\n".join(f"{op}\nv_cndmask_b32 v{30 + k}, 0, 1, {'s[20:21]' if 's[20' in op else 'vcc'}"
                     for k, op in enumerate(ops))
    got = run_block(body, INPUTS, len(ops)) == 1
    np.testing.assert_array_equal(got[0], float_ref("lt", h(INPUTS[0] >> 16), h(B16)))
    np.testing.assert_array_equal(got[1], s16(A16) > s16(INPUTS[1] >> 16))
    np.testing.assert_array_equal(got[2], class_ref(f32(A32), A32.astype(np.uint64),
                                                    22, MASK & 0xFF))
