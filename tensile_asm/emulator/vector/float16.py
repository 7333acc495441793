"""16-bit (non-packed) fp16 VALU: ``v_add/sub/subrev/mul/max/min_f16`` (VOP2 or VOP3), the VOP1
``v_floor/ceil/trunc/rndne_f16`` and ``v_cvt_f16_u16/i16``, ``v_cvt_u16/i16_f16``, and the VOP3
``v_fma_f16``, ``v_mad_f16``, ``v_div_fixup_f16``, ``v_min3/max3/med3_f16`` with gfx9's ``op_sel``
(operands16.py), and their ``_legacy`` forms (``v_mad_legacy_f16``, ``v_fma_legacy_f16``,
``v_div_fixup_legacy_f16``), with abs/neg source modifiers and clamp.

High 16 bits of the destination on gfx9 (CDNA3/CDNA4 ISA, VOP3A notes of V_MAD_F16, V_FMA_F16,
V_DIV_FIXUP_F16, V_MAD_LEGACY_F16; LLVM ``GCNSubtarget::zeroesHigh16BitsOfDest``): the VOP1/VOP2-style
operations and the ``_legacy`` forms write 0 there; ``v_fma_f16``/``v_mad_f16``/``v_div_fixup_f16``
keep the other half, and with ``op_sel`` bit 3 every form writes the high half and keeps the low
one. ``v_min3/max3/med3_f16`` are taken to keep it too, like the other gfx9 ``op_sel`` operations
(the ISA text says nothing; LLVM does not list them as zeroing).

Rounding: results are computed in fp64 and rounded once to fp16. For ``v_fma_f16`` this is the
single rounding of a fused multiply-add: the product of two fp16 values is exact in fp64, and the fp64
sum is either exact (the terms lie within 53 bits of each other), or the smaller term lies below half
an fp16 ulp of the larger so neither rounding can cross an fp16 rounding boundary, or it overflows fp16
anyway. ``v_mad_f16`` rounds the product to fp16 first and flushes fp16 denormals (ISA: "denormals are
flushed"); the other operations keep denormals. ``v_med3_f16`` with a NaN source is ``v_min3_f16``.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.emulator.vector.operands16 import allow_modifiers, f16_bits, f16_source, half_bits, half_dest, op_sel

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

F16, F64, U32 = np.float16, np.float64, np.uint32
_TINY16 = 2.0 ** -14          # smallest normal fp16
_NEG_NAN = np.copysign(np.nan, -1.0)


def _flush16(x):
    x = np.asarray(x, F64)
    return np.where(np.abs(x) < _TINY16, np.copysign(0.0, x), x)


def _mad(a, b, c):
    a, b, c = _flush16(a), _flush16(b), _flush16(c)
    return _flush16(np.asarray((a * b).astype(F16), F64) + c)


def _med3(a, b, c):
    mx = np.fmax(np.fmax(a, b), c)
    med = np.where(mx == a, np.fmax(b, c), np.where(mx == b, np.fmax(a, c), np.fmax(a, b)))
    nan = np.isnan(a) | np.isnan(b) | np.isnan(c)
    return np.where(nan, np.fmin(np.fmin(a, b), c), med)


def div_fixup_f16(q, den, num):
    """V_DIV_FIXUP_F16 (ISA pseudo-code): the quotient ``q`` with division's special cases applied."""
    q, den, num = (np.asarray(x, F64) for x in (q, den, num))
    sign = np.signbit(den) ^ np.signbit(num)
    out = np.where(sign, -np.abs(q), np.abs(q))
    out = np.where(np.isinf(den) | (num == 0), np.where(sign, -0.0, 0.0), out)
    out = np.where((den == 0) | np.isinf(num), np.where(sign, -np.inf, np.inf), out)
    out = np.where(((den == 0) & (num == 0)) | (np.isinf(den) & np.isinf(num)), _NEG_NAN, out)   # 0xfe00
    out = np.where(np.isnan(den), den, out)
    return np.where(np.isnan(num), num, out)


_BINARY = {"v_add_f16": lambda a, b: a + b, "v_sub_f16": lambda a, b: a - b,
           "v_subrev_f16": lambda a, b: b - a, "v_mul_f16": lambda a, b: a * b,
           "v_max_f16": np.fmax, "v_min_f16": np.fmin}
_TERNARY = {"v_fma_f16": lambda a, b, c: a * b + c, "v_mad_f16": _mad, "v_div_fixup_f16": div_fixup_f16,
            "v_min3_f16": lambda a, b, c: np.fmin(np.fmin(a, b), c),
            "v_max3_f16": lambda a, b, c: np.fmax(np.fmax(a, b), c), "v_med3_f16": _med3}
_LEGACY = {"v_mad_legacy_f16": _mad, "v_fma_legacy_f16": _TERNARY["v_fma_f16"],
           "v_div_fixup_legacy_f16": div_fixup_f16}
_NAN_BITS = U32(0x0200)       # fp16 quiet bit: NaN results leave as quiet NaNs


@handles(*_BINARY, *_TERNARY, *_LEGACY)
def _f16(ins, cx):
    name = ins.opcode
    fn = _BINARY.get(name) or _TERNARY.get(name) or _LEGACY[name]
    n = 2 if name in _BINARY else 3
    allow_modifiers(ins, ("op_sel", "neg", "abs", "clamp"))
    sel = op_sel(ins)
    if name in _BINARY and sel:
        raise Unsupported(f"op_sel on {name} (gfx9 has none for VOP2-style 16-bit operations)")
    srcs = [f16_source(cx, ins, i + 1, bool(sel >> i & 1)) for i in range(n)]
    to_high = bool(sel >> n & 1)
    write, extra = half_dest(cx, ins, to_high, keep_other=to_high or name in _TERNARY)
    clamp = ins.has_modifier("clamp")

    def run(w):
        with np.errstate(invalid="ignore", over="ignore"):
            r = fn(*(s(w) for s in srcs))
        if clamp:
            r = np.clip(r, 0.0, 1.0)
        bits = f16_bits(r)
        write(w, np.where(np.isnan(r), bits | _NAN_BITS, bits))
    run.extra_srcs = extra
    return run


_ROUND = {"v_floor_f16": np.floor, "v_ceil_f16": np.ceil, "v_trunc_f16": np.trunc, "v_rndne_f16": np.rint}


@handles(*_ROUND, "v_cvt_f16_u16", "v_cvt_f16_i16", "v_cvt_u16_f16", "v_cvt_i16_f16")
def _unary16(ins, cx):
    """VOP1 16-bit rounding and conversions: exact in fp64 (integer -> fp16 rounds once to nearest even,
    fp16 -> integer truncates and saturates, NaN -> 0 as the 32-bit conversions). The high half is
    written as 0 (gfx9 keeps the legacy zeroing for VOP1/VOP2 16-bit operations, LLVM
    ``zeroesHigh16BitsOfDest``)."""
    name = ins.opcode
    int_source = name.startswith("v_cvt_f16_")
    allow_modifiers(ins, () if int_source else ("neg", "abs"))
    write, _ = half_dest(cx, ins, to_high=False, keep_other=False)
    if int_source:
        rd = half_bits(cx, ins, 1, False, float_constants=False)
        signed = name.endswith("i16")
        return lambda w: write(w, f16_bits(_as_int16(rd(w), signed)))
    a = f16_source(cx, ins, 1, False)
    if name in _ROUND:
        fn = _ROUND[name]
        return lambda w: write(w, f16_bits(fn(a(w))))
    lo, hi = (-0x8000, 0x7FFF) if name == "v_cvt_i16_f16" else (0, 0xFFFF)

    def to_int(w):
        x = np.asarray(a(w), F64)
        r = np.clip(np.trunc(np.where(np.isnan(x), 0.0, x)), lo, hi).astype(np.int64)
        write(w, (r & 0xFFFF).astype(U32))
    return to_int


def _as_int16(bits, signed):
    x = np.asarray(bits, np.int64) & 0xFFFF
    return ((x ^ 0x8000) - 0x8000) if signed else x


__all__ = ["div_fixup_f16"]
