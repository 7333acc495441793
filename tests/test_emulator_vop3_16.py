"""16-bit VOP3 forms (gfx9/CDNA): op_sel on fp16 and 16-bit integer operations, which half of the
destination is kept or zeroed, the mix operations (fma/mad, lo/hi), v_pack_b32_f16 modifiers and the
packing conversions, on random data against numpy references written here."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build, lane_op_kernel

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

LOAD = lane_op_kernel(stores=1)
F16, F32, F64 = np.float16, np.float32, np.float64
KEEP = "v_mov_b32 v8, v5\n"            # the destination's old value: v5


def lo(x):
    return (x & 0xFFFF).astype(np.uint16).view(F16).astype(F64)


def hi(x):
    return lo(x >> 16)


def bits16(x):
    with np.errstate(over="ignore"):
        return np.asarray(x, F64).astype(F16).view(np.uint16).astype(np.uint32)


def f32(x):
    return x.view(F32).astype(F64)


def s16(x):
    return ((x & 0xFFFF).astype(np.int64) ^ 0x8000) - 0x8000


def u16(x):
    return (x & 0xFFFF).astype(np.int64)


def low_kept(r, result):              # result in the low half, old high half kept
    return (r[5] & 0xFFFF0000) | (np.asarray(result).astype(np.int64) & 0xFFFF).astype(np.uint32)


def high_kept(r, result):             # result in the high half, old low half kept
    return (r[5] & 0xFFFF) | ((np.asarray(result).astype(np.int64) & 0xFFFF).astype(np.uint32) << 16)


def median3(a, b, c):
    return np.median(np.stack([a, b, c]), axis=0)


FLOAT = {   # op -> reference(r) with r[i] the 32-bit words of v_i (v2..v5: fp16 pairs, v6/v7: fp32)
    KEEP + "v_fma_f16 v8, v2, -v3, |v4| op_sel:[0,1,1,0]":
        lambda r: low_kept(r, bits16(lo(r[2]) * -hi(r[3]) + np.abs(hi(r[4])))),
    KEEP + "v_fma_f16 v8, v2, 1.0, v4 op_sel:[1,0,0,1]":
        lambda r: high_kept(r, bits16(hi(r[2]) + lo(r[4]))),
    KEEP + "v_mad_f16 v8, v2, v3, v4 op_sel:[0,0,1,1]":
        lambda r: high_kept(r, bits16(_mad16(lo(r[2]), lo(r[3]), hi(r[4])))),
    KEEP + "v_div_fixup_f16 v8, v2, v3, v4 op_sel:[1,0,1,0]":
        lambda r: low_kept(r, _fixup(hi(r[2]), lo(r[3]), hi(r[4]))),
    KEEP + "v_med3_f16 v8, v2, v3, v4 op_sel:[1,1,0,0]":
        lambda r: low_kept(r, bits16(median3(hi(r[2]), hi(r[3]), lo(r[4])))),
    KEEP + "v_max3_f16 v8, -v2, v3, v4 op_sel:[0,0,0,1]":
        lambda r: high_kept(r, bits16(np.max(np.stack([-lo(r[2]), lo(r[3]), lo(r[4])]), axis=0))),
    KEEP + "v_min3_f16 v8, v2, v3, v4 clamp":
        lambda r: low_kept(r, bits16(np.clip(np.min(np.stack([lo(r[2]), lo(r[3]), lo(r[4])]), axis=0), 0, 1))),
    KEEP + "v_mad_legacy_f16 v8, v2, v3, v4":            # high half written as 0
        lambda r: bits16(_mad16(lo(r[2]), lo(r[3]), lo(r[4]))),
    KEEP + "v_fma_legacy_f16 v8, v2, v3, v4": lambda r: bits16(lo(r[2]) * lo(r[3]) + lo(r[4])),
    KEEP + "v_add_f16 v8, v2, v3": lambda r: bits16(lo(r[2]) + lo(r[3])),
    KEEP + "v_fma_mixlo_f16 v8, v2, v3, v6 op_sel:[1,0,0] op_sel_hi:[1,1,0]":
        lambda r: low_kept(r, bits16((hi(r[2]) * lo(r[3]) + f32(r[6])).astype(F32))),
    KEEP + "v_fma_mixhi_f16 v8, |v2|, -v3, v4 op_sel:[0,1,1] op_sel_hi:[1,1,1] clamp":
        lambda r: high_kept(r, bits16(np.clip(bits16((np.abs(lo(r[2])) * -hi(r[3]) + hi(r[4])).astype(F32))
                                              .astype(np.uint16).view(F16).astype(F64), 0, 1))),
    "v_fma_mix_f32 v8, v6, v3, v7 op_sel:[0,1,0] op_sel_hi:[0,1,0]":
        lambda r: (f32(r[6]) * hi(r[3]) + f32(r[7])).astype(F32).view(np.uint32),
    "v_pack_b32_f16 v8, -v2, |v3| op_sel:[1,1]":
        lambda r: ((r[2] >> 16) ^ 0x8000) | (((r[3] >> 16) & 0x7FFF) << 16),
    "v_cvt_pkrtz_f16_f32 v8, v6, -v7": lambda r: _rtz(f32(r[6])) | (_rtz(-f32(r[7])) << 16),
    "v_cvt_pknorm_i16_f32 v8, v6, v7": lambda r: _snorm(f32(r[6])) | (_snorm(f32(r[7])) << 16),
    "v_cvt_pknorm_u16_f32 v8, |v6|, v7": lambda r: _unorm(np.abs(f32(r[6]))) | (_unorm(f32(r[7])) << 16),
    "v_cvt_pknorm_i16_f16 v8, v2, -v3 op_sel:[1,0]": lambda r: _snorm(hi(r[2])) | (_snorm(-lo(r[3])) << 16),
    "v_cvt_pknorm_u16_f16 v8, v2, v3 op_sel:[0,1]": lambda r: _unorm(lo(r[2])) | (_unorm(hi(r[3])) << 16),
}

INT = {     # op -> reference(r), all registers random 32-bit words
    KEEP + "v_mad_u16 v8, v2, v3, v4 op_sel:[1,0,1,0]": lambda r: low_kept(r, u16(r[2] >> 16) * u16(r[3]) + u16(r[4] >> 16)),
    KEEP + "v_mad_u16 v8, v2, v3, v4 clamp": lambda r: low_kept(r, np.minimum(u16(r[2]) * u16(r[3]) + u16(r[4]), 0xFFFF)),
    KEEP + "v_mad_i16 v8, v2, v3, v4 op_sel:[0,1,0,1] clamp":
        lambda r: high_kept(r, np.clip(s16(r[2]) * s16(r[3] >> 16) + s16(r[4]), -32768, 32767)),
    KEEP + "v_mad_legacy_i16 v8, v2, v3, v4": lambda r: (s16(r[2]) * s16(r[3]) + s16(r[4])) & 0xFFFF,
    KEEP + "v_add_i16 v8, v2, v3 op_sel:[1,1,0] clamp":
        lambda r: low_kept(r, np.clip(s16(r[2] >> 16) + s16(r[3] >> 16), -32768, 32767)),
    KEEP + "v_sub_i16 v8, v2, v3 op_sel:[0,0,1]": lambda r: high_kept(r, s16(r[2]) - s16(r[3])),
    KEEP + "v_med3_i16 v8, v2, v3, v4 op_sel:[0,1,1,0]":
        lambda r: low_kept(r, median3(s16(r[2]), s16(r[3] >> 16), s16(r[4] >> 16))),
    KEEP + "v_max3_u16 v8, v2, v3, v4 op_sel:[1,0,0,1]":
        lambda r: high_kept(r, np.max(np.stack([u16(r[2] >> 16), u16(r[3]), u16(r[4])]), axis=0)),
    KEEP + "v_min3_i16 v8, v2, v3, v4": lambda r: low_kept(r, np.min(np.stack([s16(r[2]), s16(r[3]), s16(r[4])]), axis=0)),
    KEEP + "v_add_u16 v8, v2, v3": lambda r: (u16(r[2]) + u16(r[3])) & 0xFFFF,
    KEEP + "v_sub_u16_e64 v8, v2, v3 clamp": lambda r: np.maximum(u16(r[2]) - u16(r[3]), 0),
    KEEP + "v_subrev_u16 v8, v2, v3": lambda r: (u16(r[3]) - u16(r[2])) & 0xFFFF,
    KEEP + "v_mul_lo_u16 v8, v2, v3": lambda r: (u16(r[2]) * u16(r[3])) & 0xFFFF,
    KEEP + "v_lshlrev_b16 v8, v2, v3": lambda r: (u16(r[3]) << (r[2] & 15).astype(np.int64)) & 0xFFFF,
    KEEP + "v_lshrrev_b16 v8, v2, v3": lambda r: u16(r[3]) >> (r[2] & 15).astype(np.int64),
    KEEP + "v_ashrrev_i16 v8, v2, v3": lambda r: (s16(r[3]) >> (r[2] & 15).astype(np.int64)) & 0xFFFF,
    KEEP + "v_max_i16 v8, v2, v3": lambda r: np.maximum(s16(r[2]), s16(r[3])) & 0xFFFF,
    KEEP + "v_min_u16 v8, v2, v3": lambda r: np.minimum(u16(r[2]), u16(r[3])),
    "v_mad_u32_u16 v8, v2, v3, v4 op_sel:[1,0,0,0]": lambda r: u16(r[2] >> 16) * u16(r[3]) + r[4].astype(np.int64),
    "v_mad_i32_i16 v8, v2, v3, v4 op_sel:[0,1,0,0]": lambda r: s16(r[2]) * s16(r[3] >> 16) + r[4].astype(np.int64),
    "v_cvt_pk_u16_u32 v8, v6, v7": lambda r: np.minimum(r[6], 0xFFFF) | (np.minimum(r[7], 0xFFFF) << 16),
    "v_cvt_pk_i16_i32 v8, v6, v7":
        lambda r: (np.clip(r[6].view(np.int32), -32768, 32767).astype(np.int64) & 0xFFFF)
        | ((np.clip(r[7].view(np.int32), -32768, 32767).astype(np.int64) & 0xFFFF) << 16),
}

GFX900 = {  # gfx900's unfused mix: the fp32 product is rounded before the add
    "v_mad_mix_f32 v8, v6, v7, v4 op_sel:[0,0,1] op_sel_hi:[0,0,1]":
        lambda r: (r[6].view(F32) * r[7].view(F32) + hi(r[4]).astype(F32)).view(np.uint32),
    KEEP + "v_mad_mixlo_f16 v8, v6, v7, v4 op_sel_hi:[0,0,1]":
        lambda r: low_kept(r, bits16(r[6].view(F32) * r[7].view(F32) + lo(r[4]).astype(F32))),
}


def _mad16(a, b, c):
    """Unfused fp16 multiply-add with fp16 denormals flushed (inputs and result)."""
    flush = lambda x: np.where(np.abs(x) < 2.0 ** -14, 0.0 * x, x)
    product = np.float16(1) * (flush(a) * flush(b)).astype(F16)
    return flush((product.astype(F64) + flush(c)).astype(F16).astype(F64))


def _fixup(q, den, num):
    sign = np.signbit(den) != np.signbit(num)
    out = np.where(sign, -np.abs(q), np.abs(q))
    out = np.where(num == 0, np.where(sign, -0.0, 0.0), out)
    out = np.where(den == 0, np.where(sign, -np.inf, np.inf), out)
    return np.where((den == 0) & (num == 0), 0xFE00, bits16(out))             # 0/0: the ISA's 0xfe00


def _rtz(x):
    """Round toward zero to fp16 by truncating an exact fp64 -> fp16 search (independent of the handler)."""
    out = np.zeros(x.shape, np.uint32)
    grid = np.arange(0x7C00, dtype=np.uint32).astype(np.uint16).view(F16).astype(F64)   # all finite >= 0
    for i, v in enumerate(x):
        k = np.searchsorted(grid, abs(v), side="right") - 1                             # largest <= |v|
        out[i] = k | (0x8000 if v < 0 else 0)
    return out


def _snorm(x):
    return (np.round(np.clip(x, -1, 1) * 32767).astype(np.int64) & 0xFFFF).astype(np.uint32)


def _unorm(x):
    return np.round(np.clip(x, 0, 1) * 65535).astype(np.uint32)


def _float_words(rng):
    halves = lambda: bits16(rng.standard_normal((6, 64)) * 2)
    words = halves() | (halves() << 16)
    words[4:6] = (rng.standard_normal((2, 64)) * 2).astype(F32).view(np.uint32)
    return words


def _run(op, words, arch="gfx90a"):
    out = np.full(64, 0xFFC00000, np.uint32)
    em = Emulator.load(build(LOAD.format(op=op), args=(("in", 8), ("out", 8)), vgprs=12, sgprs=16, arch=arch))
    em.launch("k", grid=1, block=64, args=[words, out])
    return out


def _check(op, words, expect, arch="gfx90a"):
    out = _run(op, words, arch)
    regs = [None, None] + list(words)
    np.testing.assert_array_equal(out, (np.asarray(expect(regs)).astype(np.int64) & 0xFFFFFFFF).astype(np.uint32))


def _ids(table):
    return [o.split("\n")[-1].split()[0] + str(i) for i, o in enumerate(table)]


@pytest.mark.parametrize("op", list(FLOAT), ids=_ids(FLOAT))
def test_fp16_vop3(op):
    rng = np.random.default_rng(len(op))
    words = _float_words(rng)
    if "pkrtz" in op:                       # some lanes beyond fp16 range: +-65504, not inf
        words[4, :8] = (np.array([1e5, -1e5, 7e4, 65519.0, 65521.0, 3e-6, -3e-6, 1e-9]) * 1).astype(F32).view(np.uint32)
    if "div_fixup" in op:                   # division special cases in a few lanes
        words[1, :4] = words[1, :4] & 0xFFFF0000                      # den = +0
        words[2, 2:6] = words[2, 2:6] & 0x8000FFFF                    # num = +-0 (lanes 2, 3: 0/0)
    _check(op, words, FLOAT[op])


@pytest.mark.parametrize("op", list(INT), ids=_ids(INT))
def test_int16_vop3(op):
    rng = np.random.default_rng(len(op))
    words = rng.integers(1, 2 ** 32, (6, 64), dtype=np.uint64).astype(np.uint32)
    if "cvt_pk" in op:                      # in range and out of range
        words[4:6, ::2] &= 0x7FFF
        words[4:6, 1::4] |= 0x80000000
    _check(op, words, INT[op])


@pytest.mark.parametrize("op", list(GFX900), ids=_ids(GFX900))
def test_gfx900_mad_mix_is_unfused(op):
    rng = np.random.default_rng(len(op))
    words = _float_words(rng)
    _check(op, words, GFX900[op], arch="gfx900")
    if "mix_f32" in op:                     # the data tells fused from unfused: some lanes differ
        fused = (f32(words[4]) * f32(words[5]) + hi(words[2])).astype(F32).view(np.uint32)
        assert (fused != _run(op, words, "gfx900")).any()


def test_kept_half_is_a_read_of_the_destination():
    words = _float_words(np.random.default_rng(3))
    with pytest.raises(EmulationError, match="reads v8,"):
        _run("v_fma_mixlo_f16 v8, v2, v3, v4 op_sel_hi:[1,1,1]", words)
    with pytest.raises(EmulationError, match="reads v8,"):
        _run("v_mad_u16 v8, v2, v3, v4", words)
    _run("v_add_u16 v8, v2, v3\nv_mad_legacy_u16 v8, v2, v3, v4", words)      # zeroing forms: no read


@pytest.mark.parametrize("op", ["v_pack_b32_f16 v8, v2, v3 op_sel:[0,0,1]", "v_add_f16 v8, v2, v3 clamp mul:2",
                                "v_cvt_pkrtz_f16_f32 v8, v6, v7 clamp"])
def test_undocumented_forms_are_refused(op):
    words = _float_words(np.random.default_rng(4))
    with pytest.raises(EmulationError, match="does not support this form"):
        _run(op, words)


VOP1 = {    # the high half is written as 0
    KEEP + "v_floor_f16 v8, v2": lambda r: bits16(np.floor(lo(r[2]) * 1)),
    KEEP + "v_rndne_f16_e64 v8, -v2": lambda r: bits16(np.round(-lo(r[2]))),
    KEEP + "v_trunc_f16 v8, v3": lambda r: bits16(np.fix(lo(r[3]))),
    KEEP + "v_ceil_f16 v8, v4": lambda r: bits16(-np.floor(-lo(r[4]))),
    KEEP + "v_cvt_f16_u16 v8, v6": lambda r: bits16(u16(r[6]).astype(F64)),
    KEEP + "v_cvt_f16_i16 v8, v7": lambda r: bits16(s16(r[7]).astype(F64)),
    KEEP + "v_cvt_u16_f16 v8, v2": lambda r: np.clip(np.fix(lo(r[2])), 0, 65535).astype(np.int64),
    KEEP + "v_cvt_i16_f16 v8, v3": lambda r: np.clip(np.fix(lo(r[3])), -32768, 32767).astype(np.int64) & 0xFFFF,
}


@pytest.mark.parametrize("op", list(VOP1), ids=_ids(VOP1))
def test_vop1_16(op):
    rng = np.random.default_rng(len(op))
    words = _float_words(rng)
    words[:4] = bits16(rng.standard_normal((4, 64)) * 3e4) | (words[:4] & 0xFFFF0000)   # large: saturation
    words[:4, ::3] = (words[:4, ::3] & 0xFFFF0000) | bits16(rng.standard_normal((4, 22)) * 4)
    words[4:6] = rng.integers(1, 2 ** 32, (2, 64), dtype=np.uint64).astype(np.uint32)
    _check(op, words, VOP1[op])
