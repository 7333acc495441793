"""Float VALU operations beyond float32.py/float16.py/float64.py: ``v_cvt_flr_i32_f32``/``v_cvt_rpi_i32_f32``,
``v_frexp_exp``/``v_frexp_mant`` (f16, f32, f64), ``v_ldexp_f16``/``v_ldexp_f64``, ``v_fract_f16``/
``v_fract_f64``, the literal-constant multiply-adds ``v_madak/madmk_f32`` (unfused), ``v_fmaak/fmamk_f32``
(fused), ``v_mad_legacy_f32`` (DX9 zero rule), ``v_madak/madmk_f16`` and ``v_mac_f16`` (as ``v_mad_f16``),
``v_pk_fmac_f16`` and ``v_trig_preop_f64``.

Semantics (Vega/CDNA3 ISA opcode tables): ``v_cvt_flr_i32_f32`` is (int)floor(S0), ``v_cvt_rpi_i32_f32``
(int)floor(S0 + 0.5) taken exactly (the + 0.5 is not rounded to fp32 first: an assumption, the guide
writes it as real arithmetic); both saturate and map NaN to 0 like ``v_cvt_i32_f32``. frexp: mantissa
in [0.5, 1) with S0's sign and exponent such that S0 = mant * 2**exp; NaN/inf give mantissa S0 and
exponent 0. ``v_ldexp_f16`` takes a signed 16-bit exponent, ``v_ldexp_f64`` a 32-bit one; both are
one rounding of the exact S0 * 2**S1 (denormal results rounded to nearest even). ``v_fract`` is
S0 - floor(S0) rounded, then at most the largest value below 1 (0x3bff, 0x3fefffffffffffff: LLVM lowers
``fract`` to V_FRACT on the strength of this clamp); inf gives a positive quiet NaN (assumed: the
default NaN), NaN stays NaN (quieted). 16-bit results (gfx9): fract, frexp
and ldexp write 0 to the high half, ``v_mac/madak/madmk_f16`` keep it (LLVM
``GCNSubtarget::zeroesHigh16BitsOfDest``: zeroing there is VI only).
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.emulator.vector.float16 import _mad as mad_f16
from tensile_asm.emulator.vector.float32 import fma_f32
from tensile_asm.emulator.vector.float64_packed16 import f64_src
from tensile_asm.emulator.vector.operands16 import allow_modifiers, f16_bits, f16_of, f16_source, half_bits, half_dest

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

F16, F32, F64, I64, U32, U64 = np.float16, np.float32, np.float64, np.int64, np.uint32, np.uint64
_BELOW_ONE = {"f16": np.array(0x3BFF, np.uint16).view(F16).astype(F64),
              "f64": np.array(0x3FEFFFFFFFFFFFFF, U64).view(F64)}
_NAN16 = U32(0x0200)


def _int_result(cx, ins):
    wr = cx.vwrite(ins.operands[0])
    return lambda w, r: wr(w, np.broadcast_to((np.asarray(r, I64) & 0xFFFFFFFF).astype(U32), (w.lanes,)))


def _to_i32(x):
    x = np.asarray(x, F64)
    return np.clip(np.where(np.isnan(x), 0.0, x), -2.0 ** 31, 2.0 ** 31 - 1).astype(I64)


@handles("v_cvt_flr_i32_f32", "v_cvt_rpi_i32_f32")
def _cvt_round_i32(ins, cx):
    allow_modifiers(ins, ("neg", "abs"))
    half = 0.5 if ins.opcode == "v_cvt_rpi_i32_f32" else 0.0
    a, wr = cx.fsrc(ins, 1), _int_result(cx, ins)
    return lambda w: wr(w, _to_i32(np.floor(np.asarray(a(w), F64) + half)))


# -- frexp ---------------------------------------------------------------------------------------

def _frexp(x):
    """(mantissa, exponent) with the ISA's NaN/inf rule."""
    x = np.asarray(x, F64)
    special = ~np.isfinite(x)
    m, e = np.frexp(np.where(special, 0.0, x))
    return np.where(special, x, m), np.where(special, 0, e)


def _source(cx, ins, kind):
    if kind == "f16":
        return f16_source(cx, ins, 1, False)
    if kind == "f64":
        return f64_src(cx, ins, 1)
    return cx.fsrc(ins, 1)


def _f64_writer(cx, ins):
    wr = cx.vwrite64(ins.operands[0])
    return lambda w, x: wr(w, np.broadcast_to(np.asarray(x, F64), (w.lanes,)).view(U64))


def _f16_writer(cx, ins, clamp=False):
    write, _ = half_dest(cx, ins, False, keep_other=False)

    def wr(w, r):
        r = np.asarray(r, F64)
        if clamp:
            r = np.clip(r, 0.0, 1.0)
        bits = f16_bits(r)
        write(w, np.where(np.isnan(r), bits | _NAN16, bits))
    return wr


def _no_output_modifiers(ins):
    for m, _ in ins.modifiers:
        if m in ("clamp", "mul", "div"):
            raise Unsupported(f"{m} on {ins.opcode}")


@handles("v_frexp_mant_f16", "v_frexp_mant_f32", "v_frexp_mant_f64")
def _frexp_mant(ins, cx):
    kind = ins.opcode[-3:]
    allow_modifiers(ins, ("neg", "abs", "clamp", "mul", "div") if kind == "f32" else ("neg", "abs"))
    a = _source(cx, ins, kind)
    wr = {"f16": _f16_writer, "f64": _f64_writer}.get(kind, lambda cx, ins: cx.vwrite_f(ins.operands[0], ins))(cx, ins)
    return lambda w: wr(w, _frexp(a(w))[0].astype(F32) if kind == "f32" else _frexp(a(w))[0])


@handles("v_frexp_exp_i16_f16", "v_frexp_exp_i32_f32", "v_frexp_exp_i32_f64")
def _frexp_exp(ins, cx):
    kind = ins.opcode[-3:]
    allow_modifiers(ins, ("neg", "abs"))
    a = _source(cx, ins, kind)
    if kind == "f16":
        write, _ = half_dest(cx, ins, False, keep_other=False)
        return lambda w: write(w, (_frexp(a(w))[1].astype(I64) & 0xFFFF).astype(U32))
    wr = _int_result(cx, ins)
    return lambda w: wr(w, _frexp(a(w))[1])


# -- ldexp, fract --------------------------------------------------------------------------------

@handles("v_ldexp_f16")
def _ldexp_f16(ins, cx):
    allow_modifiers(ins, ("neg", "abs", "clamp"))
    if ((ins.modifier("neg", 0) or 0) | (ins.modifier("abs", 0) or 0)) & 0b100:
        raise Unsupported("neg/abs on the integer exponent of v_ldexp_f16")
    a = f16_source(cx, ins, 1, False)
    e = half_bits(cx, ins, 2, False, float_constants=False)
    wr = _f16_writer(cx, ins, clamp=ins.has_modifier("clamp"))

    def run(w):
        k = (np.asarray(e(w), I64) ^ 0x8000) - 0x8000
        with np.errstate(over="ignore"):
            wr(w, np.ldexp(a(w), np.clip(k, -64, 64)))        # beyond +-64 the result is 0/inf either way
    return run


@handles("v_ldexp_f64")
def _ldexp_f64(ins, cx):
    _no_output_modifiers(ins)
    a, e, wr = f64_src(cx, ins, 1), cx.vread_i(ins.operands[2]), _f64_writer(cx, ins)

    def run(w):
        with np.errstate(over="ignore"):
            wr(w, np.ldexp(a(w), np.clip(np.asarray(e(w), I64), -2200, 2200)))
    return run


def _fract(x, below_one):
    """inf gives a positive quiet NaN (the default NaN: an assumption), a NaN itself."""
    with np.errstate(invalid="ignore"):
        r = np.minimum(x - np.floor(x), below_one)
    return np.where(np.isinf(x), np.nan, r)


@handles("v_fract_f64")
def _fract_f64(ins, cx):
    _no_output_modifiers(ins)
    a, wr = f64_src(cx, ins, 1), _f64_writer(cx, ins)
    below = _BELOW_ONE["f64"]
    return lambda w: wr(w, _fract(a(w), below))


@handles("v_fract_f16")
def _fract_f16(ins, cx):
    allow_modifiers(ins, ("neg", "abs", "clamp"))
    a, wr = f16_source(cx, ins, 1, False), _f16_writer(cx, ins, clamp=ins.has_modifier("clamp"))
    below = _BELOW_ONE["f16"]

    def run(w):
        x = np.asarray(a(w), F64)
        with np.errstate(invalid="ignore"):
            r = f16_of(f16_bits(x - np.floor(x)))               # rounded to fp16, then clamped below 1
        wr(w, np.where(np.isinf(x), np.nan, np.minimum(r, below)))
    return run


# -- v_trig_preop_f64 -----------------------------------------------------------------------------

def _arctan_inverse(x: int, bits: int) -> int:
    """arctan(1/x) * 2**bits (to within a few units), by its alternating series in integers."""
    term = (1 << bits) // x
    total, k = term, 1
    while term:
        term //= x * x
        total += (-1) ** k * (term // (2 * k + 1))
        k += 1
    return total


def _two_over_pi_bits(n: int) -> int:
    """floor(2/pi * 2**n): pi by Machin's formula with 216 guard bits."""
    guard = n + 216
    pi = 4 * (4 * _arctan_inverse(5, guard) - _arctan_inverse(239, guard))
    return (1 << (guard + n + 1)) // pi


_TABLE_BITS, _SEGMENTS_END = 1184, 1120          # LLVM's table: 37 words; segments from bit 1120 read 0
_TWO_OVER_PI = _two_over_pi_bits(_TABLE_BITS)
_CHUNKS = np.array([(_TWO_OVER_PI >> (_TABLE_BITS - 53 - s)) & ((1 << 53) - 1) for s in range(_SEGMENTS_END)]
                   + [0], np.float64)            # 53 bits from bit s (MSB first), exact in fp64


@handles("v_trig_preop_f64")
def _trig_preop(ins, cx):
    """53 bits of 2/pi, from bit S1[4:0] * 53 (+ the exponent of S0 above 1077), scaled by 2**(-53 - shift)
    (+128 when S0's exponent is >= 1968); 0 past the table; a NaN S0 gives S0 quieted. As LLVM's
    constant folding of llvm.amdgcn.trig.preop (AMDGPUInstCombineIntrinsic.cpp), the ISA's pseudocode."""
    _no_output_modifiers(ins)
    a, seg, wr = f64_src(cx, ins, 1), cx.vread(ins.operands[2]), _f64_writer(cx, ins)

    def run(w):
        x = np.asarray(a(w), F64)
        exponent = (x.view(U64) >> U64(52)).astype(I64) & 0x7FF
        shift = (np.asarray(seg(w), I64) & 31) * 53 + np.maximum(exponent - 1077, 0)
        scale = -53 - shift + np.where(exponent >= 1968, 128, 0)
        r = np.ldexp(_CHUNKS[np.minimum(shift, _SEGMENTS_END)], np.maximum(scale, -1200))   # below: 0 anyway
        quieted = (x.view(U64) | U64(1 << 51)).view(F64)
        wr(w, np.where(np.isnan(x), quieted, r))
    return run


# -- multiply-adds with a literal, 16-bit accumulators -------------------------------------------

@handles("v_madak_f32", "v_madmk_f32", "v_fmaak_f32", "v_fmamk_f32")
def _literal_mad_f32(ins, cx):
    a, b, c = (cx.fsrc(ins, i) for i in (1, 2, 3))     # madmk: d, s0, K, s1; madak: d, s0, s1, K
    wr = cx.vwrite_f(ins.operands[0], ins)
    if ins.opcode.startswith("v_fma"):
        denormals = not cx.flush_f32
        return lambda w: wr(w, fma_f32(a(w), b(w), c(w), denormals))
    return lambda w: wr(w, np.asarray(np.asarray(a(w) * b(w), F32) + c(w), F32))     # product rounded first


@handles("v_mad_legacy_f32")
def _mad_legacy_f32(ins, cx):
    """D = S0 * S1 + S2 with DX9's multiply (0 times anything, inf and NaN included, is +0; ISA
    V_MAD_LEGACY_F32, as v_mul_legacy_f32), the product rounded to fp32 first (unfused, as v_mad_f32)."""
    a, b, c = (cx.fsrc(ins, i) for i in (1, 2, 3))
    wr = cx.vwrite_f(ins.operands[0], ins)

    def run(w):
        x, y = a(w), b(w)
        with np.errstate(invalid="ignore", over="ignore"):
            p = np.where((x == 0) | (y == 0), F32(0), np.asarray(x * y, F32))
            wr(w, np.asarray(p + c(w), F32))
    return run


@handles("v_madak_f16", "v_madmk_f16", "v_mac_f16")
def _mad_f16(ins, cx):
    allow_modifiers(ins, ("neg", "abs", "clamp"))
    if ins.opcode == "v_mac_f16":
        srcs = [f16_source(cx, ins, 1, False), f16_source(cx, ins, 2, False), f16_source(cx, ins, 0, False)]
    else:
        srcs = [f16_source(cx, ins, i, False) for i in (1, 2, 3)]
    write, extra = half_dest(cx, ins, False, keep_other=True)
    clamp = ins.has_modifier("clamp")

    def run(w):
        with np.errstate(invalid="ignore", over="ignore"):
            r = mad_f16(*(s(w) for s in srcs))
        if clamp:
            r = np.clip(r, 0.0, 1.0)
        bits = f16_bits(r)
        write(w, np.where(np.isnan(r), bits | _NAN16, bits))
    run.extra_srcs = extra + (reg_keys(ins.operands[0]) if ins.opcode == "v_mac_f16" else ())
    return run


@handles("v_pk_fmac_f16")
def _pk_fmac_f16(ins, cx):
    """D.lo = fma(S0.lo, S1.lo, D.lo), D.hi likewise: the fp16 product is exact in fp64 and one
    rounding of the fp64 sum is the fused result (float16.py's argument)."""
    allow_modifiers(ins, ())
    a, b, d = (cx.vread(ins.operands[i]) for i in (1, 2, 0))
    wr = cx.vwrite(ins.operands[0])

    def run(w):
        out = 0
        for shift in (0, 16):
            x, y, z = (f16_of((np.asarray(r(w), U32) >> U32(shift)) & U32(0xFFFF)) for r in (a, b, d))
            with np.errstate(invalid="ignore", over="ignore"):
                r = x * y + z
            bits = f16_bits(r)
            out = out | (np.where(np.isnan(r), bits | _NAN16, bits) << U32(shift))
        wr(w, np.broadcast_to(np.asarray(out, U32), (w.lanes,)))
    run.extra_srcs = reg_keys(ins.operands[0])
    return run
