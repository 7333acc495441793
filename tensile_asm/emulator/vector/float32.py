"""Vector ALU, fp32 arithmetic and conversions.

numpy's float32 add/mul/div are IEEE round-to-nearest-even, as the hardware's. ``v_fma_f32`` and
``v_fmac_f32`` round once: the product of two fp32 values is exact in fp64, the fp64 sum rounds
once more, and a second rounding to fp32 can only go wrong when the fp64 sum lands exactly on an
fp32 midpoint (or is tiny). Those cases are redone with round-to-odd (TwoSum residual, then the
sticky bit), which makes the final fp32 rounding correct. ``v_mac_f32``/``v_mad_f32`` are the
unfused multiply-add of gfx9 (product rounded to fp32 first), which never keeps denormals whatever the
mode (LLVM selects them only without fp32 denormals; its FMAD_FTZ): denormal inputs, product and result
are flushed to zero of their sign.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

F32, F64, U32, U64 = np.float32, np.float64, np.uint32, np.uint64
_SHIFT, _MIDPOINT = U64(35), U64(1 << 63)     # low 29 bits of an fp64 == 0x10000000: an fp32 midpoint
_TINY = F64(2.0 ** -126)                       # below the fp32 normal range


def fma_f32(a, b, c, denormals: bool = True):
    """fp32 a*b+c with a single rounding (arrays or scalars)."""
    s = np.asarray(np.multiply(a, b, dtype=F64) + c)
    suspect = (s.view(U64) << _SHIFT) == _MIDPOINT
    if denormals:
        suspect |= np.abs(s) < _TINY
    if suspect.ndim == 0 and suspect or suspect.ndim and np.count_nonzero(suspect):
        s = _round_to_odd(np.multiply(a, b, dtype=F64), np.asarray(c, F64), s)
    return s.astype(F32)


def _round_to_odd(p, c, s):
    with np.errstate(all="ignore"):
        bb = s - p
        err = (p - (s - bb)) + (c - bb)           # s + err == p + c exactly
    bits = s.view(U64).copy()
    inexact = (err != 0) & np.isfinite(s) & np.isfinite(err)
    same_sign = np.signbit(err) == np.signbit(s)
    up = inexact & same_sign
    down = inexact & ~same_sign & ((bits & U64(1)) == 0)
    bits[up] |= U64(1)
    bits[down] -= U64(1)
    return bits.view(F64)


_BINARY = {
    "v_add_f32": lambda a, b: a + b,
    "v_sub_f32": lambda a, b: a - b,
    "v_subrev_f32": lambda a, b: b - a,
    "v_mul_f32": lambda a, b: a * b,
    "v_max_f32": np.fmax,
    "v_min_f32": np.fmin,
    "v_mul_legacy_f32": lambda a, b: np.where((a == 0) | (b == 0), F32(0), a * b),
    "v_ldexp_f32": None,       # second source is an integer: below
}

_UNARY = {
    "v_rcp_f32": lambda a: F32(1) / a,
    "v_rcp_iflag_f32": lambda a: F32(1) / a,
    "v_sqrt_f32": np.sqrt,
    "v_rsq_f32": lambda a: F32(1) / np.sqrt(a),
    "v_exp_f32": np.exp2,
    "v_log_f32": np.log2,
    "v_sin_f32": lambda a: np.sin(a * F32(2 * np.pi)),
    "v_cos_f32": lambda a: np.cos(a * F32(2 * np.pi)),
    "v_floor_f32": np.floor,
    "v_ceil_f32": np.ceil,
    "v_trunc_f32": np.trunc,
    "v_rndne_f32": np.rint,
    # capped below 1 (LLVM lowers fract to V_FRACT relying on it); inf gives NaN, as in float_parts_madak.py
    "v_fract_f32": lambda a: np.where(np.isinf(a), F32(np.nan), np.minimum(a - np.floor(a), F32(0.99999994))),
}


def _f32(x):
    return x.astype(F32) if isinstance(x, np.ndarray) else F32(x)


def _binary_builder(fn):
    def build(ins, cx):
        a, b, wr = cx.fsrc(ins, 1), cx.fsrc(ins, 2), cx.vwrite_f(ins.operands[0], ins)
        return lambda w: wr(w, _f32(fn(a(w), b(w))))
    return build


def _unary_builder(fn):
    def build(ins, cx):
        a, wr = cx.fsrc(ins, 1), cx.vwrite_f(ins.operands[0], ins)
        return lambda w: wr(w, _f32(fn(a(w))))
    return build


for _name, _fn in _BINARY.items():
    if _fn is not None:
        handles(_name)(_binary_builder(_fn))
for _name, _fn in _UNARY.items():
    handles(_name)(_unary_builder(_fn))


@handles("v_ldexp_f32")
def _ldexp(ins, cx):
    a, e, wr = cx.fsrc(ins, 1), cx.vread_i(ins.operands[2]), cx.vwrite_f(ins.operands[0], ins)
    return lambda w: wr(w, np.ldexp(a(w), np.clip(e(w), -400, 400)).astype(F32))


@handles("v_fma_f32", "v_mad_f32", "v_fmac_f32", "v_mac_f32")
def _fma(ins, cx):
    fused = ins.opcode in ("v_fma_f32", "v_fmac_f32")
    a, b = cx.fsrc(ins, 1), cx.fsrc(ins, 2)
    c = cx.fsrc(ins, 3) if ins.opcode in ("v_fma_f32", "v_mad_f32") else cx.vread_f(ins.operands[0])
    wr = cx.vwrite_f(ins.operands[0], ins)
    denormals = not cx.flush_f32
    if fused:
        return lambda w: wr(w, fma_f32(a(w), b(w), c(w), denormals))
    return lambda w: wr(w, _ftz(_f32(_ftz(_f32(_ftz(a(w)) * _ftz(b(w)))) + _ftz(c(w)))))


def _ftz(x):
    """fp32 denormals (nonzero, below the smallest normal) to zero of their sign."""
    x = np.asarray(x, dtype=F32)
    return np.where((np.abs(x) < _TINY) & (x != 0), np.copysign(F32(0), x), x).astype(F32)


_SELECT3 = {
    "v_max3_f32": lambda a, b, c: np.fmax(np.fmax(a, b), c),
    "v_min3_f32": lambda a, b, c: np.fmin(np.fmin(a, b), c),
    "v_med3_f32": lambda a, b, c: np.fmax(np.fmin(a, b), np.fmin(np.fmax(a, b), c)),
}


def _select3_builder(fn):
    def build(ins, cx):
        a, b, c = cx.fsrc(ins, 1), cx.fsrc(ins, 2), cx.fsrc(ins, 3)
        wr = cx.vwrite_f(ins.operands[0], ins)
        return lambda w: wr(w, _f32(fn(a(w), b(w), c(w))))
    return build


for _name, _fn in _SELECT3.items():
    handles(_name)(_select3_builder(_fn))


# -- conversions --------------------------------------------------------------------------------------

@handles("v_cvt_f32_u32", "v_cvt_f32_i32")
def _cvt_to_f32(ins, cx):
    signed = ins.opcode.endswith("i32")
    a = (cx.vread_i if signed else cx.vread)(ins.operands[1])
    wr = cx.vwrite_f(ins.operands[0], ins)
    return lambda w: wr(w, _f32(np.asarray(a(w)).astype(F64)))


@handles("v_cvt_u32_f32", "v_cvt_i32_f32")
def _cvt_from_f32(ins, cx):
    lo, hi = (-2.0 ** 31, 2.0 ** 31 - 1) if ins.opcode.endswith("i32_f32") else (0.0, 2.0 ** 32 - 1)
    a, wr = cx.fsrc(ins, 1), cx.vwrite(ins.operands[0])
    def run(w):
        x = np.asarray(a(w), F64)
        x = np.clip(np.trunc(np.where(np.isnan(x), 0.0, x)), lo, hi)     # NaN -> 0, saturate
        wr(w, x.astype(np.int64).astype(U32) if x.ndim else int(x) & 0xFFFFFFFF)
    return run


@handles("v_cvt_f16_f32")
def _cvt_f16_f32(ins, cx):
    a, wr = cx.fsrc(ins, 1), cx.vwrite(ins.operands[0])
    return lambda w: wr(w, np.asarray(a(w)).astype(np.float16).view(np.uint16).astype(U32))


@handles("v_cvt_f32_f16")
def _cvt_f32_f16(ins, cx):
    a, wr = cx.vread(ins.operands[1]), cx.vwrite_f(ins.operands[0], ins)
    neg, absm = cx.src_mod(ins, 1)

    def run(w):
        x = (np.asarray(a(w), U32) & U32(0xFFFF)).astype(np.uint16).view(np.float16).astype(F32)
        x = np.abs(x) if absm else x
        return wr(w, -x if neg else x)
    return run
