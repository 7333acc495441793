"""Packed 16-bit integer VOP3P operations (vector/integer_packed16.py) with op_sel/op_sel_hi and saturating clamp,
on random words against per-lane Python references written here."""

import numpy as np
import pytest

from conftest import have_llvm
from valu_kernel import run_block

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

RNG = np.random.default_rng(3)
W = RNG.integers(0, 1 << 32, (3, 64), dtype=np.uint64).astype(np.uint32)
W[:, :4] = [[0x7FFF8000, 0xFFFF0001, 0x80007FFF, 0x00010000]] * 3        # saturation edges
A, B, C = (list(map(int, row)) for row in W)


def half(v, high):
    return (v >> 16) & 0xFFFF if high else v & 0xFFFF


def s16(v):
    return v - 0x10000 if v & 0x8000 else v


def pk(n_src, signed, fn, sel=0, sel_hi=None, clamp=False):
    sel_hi = (1 << n_src) - 1 if sel_hi is None else sel_hi
    lo, hi = (-0x8000, 0x7FFF) if signed else (0, 0xFFFF)

    def ref(*words):
        out = 0
        for k, bits in enumerate((sel, sel_hi)):
            xs = [half(words[i], bits >> i & 1) for i in range(n_src)]
            r = fn(*(s16(x) if signed else x for x in xs))
            if clamp:
                r = min(max(r, lo), hi)
            out |= (r & 0xFFFF) << (16 * k)
        return out
    return ref


CASES = {
    "v_pk_add_u16 v30, v10, v11": pk(2, False, lambda a, b: a + b),
    "v_pk_add_u16 v30, v10, v11 clamp": pk(2, False, lambda a, b: a + b, clamp=True),
    "v_pk_add_i16 v30, v10, v11 op_sel:[1,0] op_sel_hi:[0,1] clamp":
        pk(2, True, lambda a, b: a + b, sel=1, sel_hi=2, clamp=True),
    "v_pk_sub_i16 v30, v10, v11 clamp": pk(2, True, lambda a, b: a - b, clamp=True),
    "v_pk_sub_u16 v30, v10, v11 op_sel:[0,1]": pk(2, False, lambda a, b: a - b, sel=2),
    "v_pk_sub_u16 v30, v10, v11 clamp": pk(2, False, lambda a, b: a - b, clamp=True),
    "v_pk_mul_lo_u16 v30, v10, v11 op_sel_hi:[0,0]": pk(2, False, lambda a, b: a * b, sel_hi=0),
    "v_pk_mad_i16 v30, v10, v11, v12": pk(3, True, lambda a, b, c: a * b + c),
    "v_pk_mad_i16 v30, v10, v11, v12 clamp": pk(3, True, lambda a, b, c: a * b + c, clamp=True),
    "v_pk_mad_u16 v30, v10, v11, v12 op_sel:[1,1,0] clamp": pk(3, False, lambda a, b, c: a * b + c, sel=3, clamp=True),
    "v_pk_max_i16 v30, v10, v11": pk(2, True, max), "v_pk_max_u16 v30, v10, v11": pk(2, False, max),
    "v_pk_min_i16 v30, v10, v11 op_sel:[1,1] op_sel_hi:[0,0]": pk(2, True, min, sel=3, sel_hi=0),
    "v_pk_min_u16 v30, v10, v11": pk(2, False, min),
    "v_pk_lshlrev_b16 v30, v10, v11": pk(2, False, lambda a, b: b << (a & 15)),
    "v_pk_lshrrev_b16 v30, v10, v11": pk(2, False, lambda a, b: b >> (a & 15)),
    "v_pk_ashrrev_i16 v30, v10, v11 op_sel_hi:[1,0]": pk(2, True, lambda a, b: b >> (a & 15), sel_hi=1),
    "v_pk_add_u16 v30, v10, 5 op_sel_hi:[1,0]": None,
}


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_packed_int16(arch):
    ops = list(CASES)
    body = "\n".join(op.replace("v30", f"v{30 + k}") for k, op in enumerate(ops))
    got = run_block(body, W, len(ops), arch=arch)
    for k, op in enumerate(ops):
        if CASES[op] is None:           # constant in the low half, read for both results
            want = [((a + 5) & 0xFFFF) | ((((a >> 16) + 5) & 0xFFFF) << 16) for a in A]
        else:
            want = [CASES[op](A[i], B[i], C[i]) for i in range(64)]
        np.testing.assert_array_equal(got[k], np.array(want, np.uint64).astype(np.uint32), err_msg=op)
