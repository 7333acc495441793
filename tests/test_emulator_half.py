"""fp64, packed fp16, mixed-precision and bf16 bit-shuffle VALU ops, and 16-bit LDS access, on random
data against numpy references written here."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator

from conftest import have_llvm
from emulator_asm import SIX_ROWS_IN_TWO_OUT, build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

LOAD = SIX_ROWS_IN_TWO_OUT


def f16(bits):
    return (bits & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)


def hi16(x):
    return f16(x >> 16)


def to16(x):
    return np.asarray(x).astype(np.float16).view(np.uint16).astype(np.uint32)


def f64(lo, hi):
    return (lo.astype(np.uint64) | (hi.astype(np.uint64) << 32)).view(np.float64)


CASES = {
    "v_fma_f64 v[8:9], v[2:3], v[4:5], v[6:7]":
        lambda r: f64(*r[2:4]) * f64(*r[4:6]) + f64(*r[6:8]),
    "v_add_f64 v[8:9], v[2:3], v[4:5]": lambda r: f64(*r[2:4]) + f64(*r[4:6]),
    "v_mov_b32 v8, v6\nv_mov_b32 v9, v7\nv_fmac_f64 v[8:9], v[2:3], v[4:5]":
        lambda r: f64(*r[2:4]) * f64(*r[4:6]) + f64(*r[6:8]),
    "v_pk_fma_f16 v8, v2, v3, v4\nv_mov_b32 v9, 0":
        lambda r: to16(f16(r[2]) * f16(r[3]) + f16(r[4])) | (to16(hi16(r[2]) * hi16(r[3]) + hi16(r[4])) << 16),
    "v_pk_add_f16 v8, v2, v3 op_sel:[1,0] op_sel_hi:[0,1]\nv_mov_b32 v9, 0":
        lambda r: to16(hi16(r[2]) + f16(r[3])) | (to16(f16(r[2]) + hi16(r[3])) << 16),
    "v_pk_mul_f16 v8, v2, v3 neg_lo:[1,0] neg_hi:[0,1]\nv_mov_b32 v9, 0":
        lambda r: to16(-f16(r[2]) * f16(r[3])) | (to16(hi16(r[2]) * -hi16(r[3])) << 16),
    "v_fma_mix_f32 v8, v2, v3, v5 op_sel:[1,0,0] op_sel_hi:[1,1,0]\nv_mov_b32 v9, 0":
        lambda r: (hi16(r[2]).astype(np.float64) * f16(r[3]) + r[5].view(np.float32)).astype(np.float32).view(np.uint32),
    "v_dot2_f32_f16 v8, v2, v3, v5\nv_mov_b32 v9, 0":
        lambda r: (f16(r[2]) * f16(r[3]) + hi16(r[2]) * hi16(r[3]) + r[5].view(np.float32)).astype(np.float32).view(np.uint32),
    "v_pack_b32_f16 v8, v2, v3 op_sel:[1,0]\nv_mov_b32 v9, 0": lambda r: (r[2] >> 16) | ((r[3] & 0xFFFF) << 16),
    "s_mov_b32 s8, 0x07060302\nv_perm_b32 v8, v2, v3, s8\nv_mov_b32 v9, 0":        # bf16 pack: high halves of v3 (low) and v2
        lambda r: (r[3] >> 16) | (r[2] & 0xFFFF0000),
    "s_mov_b32 s8, 0x0c0d0801\nv_perm_b32 v8, v2, v3, s8\nv_mov_b32 v9, 0":
        lambda r: ((r[3] >> 8) & 0xFF) | (np.where(r[3] & 0x8000, 0xFF, 0) << 8) | (0xFF << 16),
    "ds_write_b16 v1, v2\nds_write_b16_d16_hi v1, v3 offset:2\ns_waitcnt lgkmcnt(0)\nds_read_u16 v8, v1 offset:2\n"
    "v_mov_b32 v9, v4\nds_read_u16_d16_hi v9, v1\ns_waitcnt lgkmcnt(0)":
        lambda r: r[3] >> 16,
}


@pytest.mark.parametrize("op", list(CASES), ids=[o.split()[0] + str(i) for i, o in enumerate(CASES)])
def test_half_and_double_ops(op):
    rng = np.random.default_rng(len(op))
    words = rng.standard_normal((6, 64)).astype(np.float32).view(np.uint32).copy()
    if "f16" in op:                                   # pairs of random fp16 values
        words = to16(rng.standard_normal((6, 64))) | (to16(rng.standard_normal((6, 64))) << 16)
        words[3] = rng.standard_normal(64).astype(np.float32).view(np.uint32) if "fma_mix" in op else words[3]
        words[3] = rng.standard_normal(64).astype(np.float32).view(np.uint32) if "dot2" in op else words[3]
    if "f16" in op and ("mix" in op or "dot2" in op):
        words[3] = rng.standard_normal(64).astype(np.float32).view(np.uint32)   # v5: fp32 addend
    words = words.astype(np.uint32)
    out = np.full((2, 64), 0xFFC00000, np.uint32)
    em = Emulator.load(build(LOAD.format(op=op), args=(("in", 8), ("out", 8)), vgprs=12, sgprs=16, lds=512))
    em.launch("k", grid=1, block=64, args=[words, out])
    regs = [None, None] + [words[i] for i in range(6)]
    expect = CASES[op](regs)
    if expect.dtype == np.float64:
        got = f64(out[0], out[1])
        np.testing.assert_allclose(got, expect, rtol=1e-15)
    else:
        np.testing.assert_array_equal(out[0], expect.astype(np.uint32))
    if "ds_read_u16_d16_hi" in op:     # v2.lo -> v9.hi; gfx90a (SRAM ECC) zeroes v9.lo (isa/gfx90a.yaml)
        np.testing.assert_array_equal(out[1], (words[0] & 0xFFFF) << 16)
