"""Integer/bit VALU operations of vector/integer_media.py on random words, against per-lane Python references
written here from the ISA's descriptions."""

import numpy as np
import pytest

from conftest import have_llvm
from valu_kernel import run_block

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

RNG = np.random.default_rng(11)
W = RNG.integers(0, 1 << 32, (4, 64), dtype=np.uint64).astype(np.uint32)
W[0, :6] = [0, 0xFFFFFFFF, 1, 0x80000000, 0x7FFFFFFF, 0xBFFFFFFF]       # v_ffbh_i32 edge cases
W[1, :4] = [0x7FFF8000, 0x00FF0100, 0x01000080, 0xFFFF0000]             # v_sat_pk_u8_i16 edges
W[3] = RNG.integers(0, 4, 64)                                           # shift amounts for alignbyte
A, B, C, S = (list(map(int, row)) for row in W)


def sx(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def field(v, i, bits):
    return (v >> (i * bits)) & ((1 << bits) - 1)


def ffbh_i32(v):
    if v in (0, 0xFFFFFFFF):
        return 0xFFFFFFFF
    sign = v >> 31
    for pos in range(1, 32):
        if (v >> (31 - pos)) & 1 != sign:
            return pos
    raise AssertionError


def dot(a, b, c, bits, signed, clamp=False, wrap=True):
    n = 32 // bits
    get = (lambda v, i: sx(field(v, i, bits), bits)) if signed else (lambda v, i: field(v, i, bits))
    r = sum(get(a, i) * get(b, i) for i in range(n)) + (sx(c, 32) if signed else c)
    if clamp:
        r = min(max(r, -2 ** 31), 2 ** 31 - 1) if signed else min(max(r, 0), 2 ** 32 - 1)
    return r & 0xFFFFFFFF


def f32bits(x):
    return int(np.float32(x).view(np.uint32))


CASES = {   # body writing v30 -> reference(a, b, c, s) per lane (v10..v13 = a, b, c, s)
    "v_cvt_f32_ubyte0 v30, v10": lambda a, b, c, s: f32bits(a & 0xFF),
    "v_cvt_f32_ubyte3_e64 v30, v10 mul:2": lambda a, b, c, s: f32bits(2 * (a >> 24)),
    "v_cvt_f32_ubyte1 v30, v11": lambda a, b, c, s: f32bits((b >> 8) & 0xFF),
    "v_cvt_f32_ubyte2 v30, v11": lambda a, b, c, s: f32bits((b >> 16) & 0xFF),
    "v_cvt_off_f32_i4 v30, v10": lambda a, b, c, s: f32bits(sx(a, 4) / 16),
    "v_ffbh_i32 v30, v10": lambda a, b, c, s: ffbh_i32(a),
    "v_sat_pk_u8_i16 v30, v11": lambda a, b, c, s: (min(max(sx(b, 16), 0), 255)
                                                      | min(max(sx(b >> 16, 16), 0), 255) << 8),
    "v_alignbyte_b32 v30, v10, v11, v13": lambda a, b, c, s: ((a << 32 | b) >> (8 * s)) & 0xFFFFFFFF,
    "v_add_i32 v30, v10, v11": lambda a, b, c, s: (a + b) & 0xFFFFFFFF,
    "v_add_i32 v30, v10, v11 clamp": lambda a, b, c, s: min(max(sx(a, 32) + sx(b, 32), -2 ** 31), 2 ** 31 - 1) & 0xFFFFFFFF,
    "v_sub_i32 v30, v10, v11 clamp": lambda a, b, c, s: min(max(sx(a, 32) - sx(b, 32), -2 ** 31), 2 ** 31 - 1) & 0xFFFFFFFF,
    "v_sad_u8 v30, v10, v11, v12": lambda a, b, c, s: (c + sum(abs(field(a, i, 8) - field(b, i, 8)) for i in range(4))) & 0xFFFFFFFF,
    "v_sad_hi_u8 v30, v10, v11, v12": lambda a, b, c, s: (c + (sum(abs(field(a, i, 8) - field(b, i, 8)) for i in range(4)) << 16)) & 0xFFFFFFFF,
    "v_sad_u16 v30, v10, v11, v12": lambda a, b, c, s: (c + sum(abs(field(a, i, 16) - field(b, i, 16)) for i in range(2))) & 0xFFFFFFFF,
    "v_sad_u32 v30, v10, v11, v12": lambda a, b, c, s: (c + abs(a - b)) & 0xFFFFFFFF,
    "v_lerp_u8 v30, v10, v11, v12": lambda a, b, c, s: sum(((field(a, i, 8) + field(b, i, 8) + (field(c, i, 8) & 1)) >> 1) << (8 * i)
                                                          for i in range(4)),
    "v_mov_b32 v30, v12\nv_dot2c_i32_i16 v30, v10, v11": lambda a, b, c, s: dot(a, b, c, 16, True),
    "v_mov_b32 v30, v12\nv_dot4c_i32_i8 v30, v10, v11": lambda a, b, c, s: dot(a, b, c, 8, True),
    "v_mov_b32 v30, v12\nv_dot8c_i32_i4 v30, v10, v11": lambda a, b, c, s: dot(a, b, c, 4, True),
    "v_dot2_i32_i16 v30, v10, v11, v12": lambda a, b, c, s: dot(a, b, c, 16, True),
    "v_dot2_u32_u16 v30, v10, v11, v12 clamp": lambda a, b, c, s: dot(a, b, c, 16, False, clamp=True),
    "v_dot4_i32_i8 v30, v10, v11, v12 clamp": lambda a, b, c, s: dot(a, b, c, 8, True, clamp=True),
    "v_dot4_u32_u8 v30, v10, v11, v12": lambda a, b, c, s: dot(a, b, c, 8, False),
    "v_dot8_i32_i4 v30, v10, v11, v12": lambda a, b, c, s: dot(a, b, c, 4, True),
    "v_dot8_u32_u4 v30, v10, v11, v12 clamp": lambda a, b, c, s: dot(a, b, c, 4, False, clamp=True),
    "v_mov_b32 v30, v10\nv_mov_b32 v31, v11\nv_swap_b32 v30, v31\nv_nop": lambda a, b, c, s: b,
}


def test_integer_ops():
    ops = list(CASES)
    body = "\n".join(op.replace("v31", "v29").replace("v30", f"v{30 + k}") for k, op in enumerate(ops))
    got = run_block(body, W, len(ops), arch="gfx942", vgprs=64)
    for k, op in enumerate(ops):
        want = np.array([CASES[op](A[i], B[i], C[i], S[i]) for i in range(64)], np.uint64).astype(np.uint32)
        np.testing.assert_array_equal(got[k], want, err_msg=op)


def test_clamp_saturates():
    """Inputs chosen to overflow: clamped dot products and adds stick at the bounds."""
    big = np.array([[0x7FFF7FFF] * 64, [0x7FFF7FFF] * 64, [0x7FFFFFF0] * 64, [0] * 64], np.uint32)
    ops = ["v_dot2_i32_i16 v30, v10, v11, v12 clamp", "v_dot2_i32_i16 v31, v10, v11, v12",
           "v_add_i32 v32, v12, v12 clamp", "v_dot2_u32_u16 v33, v10, v11, v12 clamp"]
    got = run_block("\n".join(ops), big, 4, arch="gfx942")
    assert (got[0] == 0x7FFFFFFF).all()
    assert (got[1] == (0x7FFFFFF0 + 2 * 0x7FFF * 0x7FFF) & 0xFFFFFFFF).all()
    assert (got[2] == 0x7FFFFFFF).all()
    assert (got[3] == 0x7FFFFFF0 + 2 * 0x7FFF * 0x7FFF).all()
