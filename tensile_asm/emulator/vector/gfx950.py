"""gfx950 (CDNA4) VALU additions: bf16/f16 conversions, bf16 dot products, IEEE minimum3/maximum3,
``v_bitop3``, ``v_ashr_pk_*``, ``v_prng_b32`` and the row-swapping ``v_permlane16/32_swap_b32``.

Semantics follow the pseudocode of AMD's CDNA4 ISA guide (chapter 12, VOP1/VOP2/VOP3/VOP3P):

* ``v_cvt_pk_bf16_f32``/``v_cvt_pk_f16_f32``: two f32 sources rounded to nearest even (ignoring the
  mode register), source 0 in the low half. A NaN stays a NaN with its quiet bit set and its top
  mantissa bits kept (the usual truncating quieting; the guide does not spell out payloads).
* ``v_cvt_f32_bf16``: ``{S0.b16, 16'0}``; neg/abs apply to that value, clamp/omod to the result.
* ``v_dot2_f32_bf16`` (``a0*b0 + a1*b1 + c``) and ``v_dot2c_f32_bf16`` (``d + a0*b0 + a1*b1``) in f32
  arithmetic in the guide's order, each step rounded (bf16 products are exact in f32).
* ``v_minimum3/maximum3_f32``, ``v_pk_minimum3/maximum3_f16``: IEEE 754-2019 minimum/maximum (a NaN
  operand gives a NaN, -0 < +0), nested as ``min(min(a, b), c)``; the NaN returned is the first NaN
  operand, quieted.
* 16-bit results (``v_bitop3_b16``, ``v_ashr_pk_*``) go to the half of D that op_sel bit 3 picks and
  keep the other half, as the guide states for the other VOP3-only 16-bit operations (``v_fma_f16``,
  ``v_mad_u16``); the kept half is a read of D in strict mode.
* ``v_permlane16_swap_b32 d, s``: odd 16-lane rows of d swap with the even rows of s;
  ``v_permlane32_swap_b32``: lanes 32-63 of d swap with lanes 0-31 of s. The guide's pseudocode
  ignores EXEC; a partial EXEC (where ``fi``/``bound_ctrl`` would matter) is refused when executed.

Not implemented (so they stay "does not implement" errors and coverage counts them as missing):
``v_cvt_sr_bf16_f32``/``v_cvt_sr_f16_f32``, whose pseudocode calls ``f32_to_bf16_sr``/``f32_to_f16_sr``
without defining which bits of the random operand are added before truncation (the guide defines
that only for the fp8/bf8 forms), and the LDS transpose loads ``ds_read_b64_tr_b4/b8/b16`` and
``ds_read_b96_tr_b6``, for which the guide (section 11.4) gives the K ranges each of a pair of
instructions returns but not which lane's address supplies which element.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

F16, F32, U16, U32, U64 = np.float16, np.float32, np.uint16, np.uint32, np.uint64
_MODIFIERS_F32 = ("neg", "abs")


def _refuse_modifiers(ins, allowed=()):
    for m, _ in ins.modifiers:
        if m not in allowed:
            raise Unsupported(f"modifier {m} on {ins.opcode}")


def _lanes(w, x, dtype):
    return np.broadcast_to(np.asarray(x, dtype), (w.lanes,))


def _vgpr(op):
    if not (isinstance(op, Reg) and op.kind == "v" and op.count == 1):
        raise Unsupported(f"{op} is not a single VGPR")
    return op


# -- rounding f32 to 16-bit formats ------------------------------------------------------------------

def bf16_bits(x) -> np.ndarray:
    """f32 values -> bf16 bit patterns (uint32), round to nearest even; NaNs quieted."""
    bits = np.asarray(x, F32).view(U32).astype(U64)
    rounded = (bits + U64(0x7FFF) + ((bits >> U64(16)) & U64(1))) >> U64(16)
    nan = (bits & U64(0x7FFFFFFF)) > U64(0x7F800000)
    return np.where(nan, (bits >> U64(16)) | U64(0x40), rounded).astype(U32) & U32(0xFFFF)


def f16_bits(x) -> np.ndarray:
    """f32 values -> f16 bit patterns (uint32), round to nearest even; NaNs quieted."""
    x = np.asarray(x, F32)
    bits = x.view(U32)
    with np.errstate(over="ignore"):
        rounded = x.astype(F16).view(U16).astype(U32)
    quiet = ((bits >> U32(16)) & U32(0x8000)) | U32(0x7E00) | ((bits >> U32(13)) & U32(0x3FF))
    return np.where(np.isnan(x), quiet, rounded)


@handles("v_cvt_pk_bf16_f32", "v_cvt_pk_f16_f32")
def _cvt_pk(ins, cx):
    _refuse_modifiers(ins, _MODIFIERS_F32)
    to16 = bf16_bits if ins.opcode == "v_cvt_pk_bf16_f32" else f16_bits
    a, b = cx.fsrc(ins, 1), cx.fsrc(ins, 2)
    wr = cx.vwrite(ins.operands[0])
    return lambda w: wr(w, to16(_lanes(w, a(w), F32)) | (to16(_lanes(w, b(w), F32)) << U32(16)))


@handles("v_cvt_f32_bf16")
def _cvt_f32_bf16(ins, cx):
    _refuse_modifiers(ins, _MODIFIERS_F32 + ("clamp", "mul", "div"))
    rd = cx.vread(ins.operands[1])
    neg, absm = cx.src_mod(ins, 1)
    wr = cx.vwrite_f(ins.operands[0], ins)

    def run(w):
        x = (_lanes(w, rd(w), U32) << U32(16)).view(F32)
        if absm:
            x = np.abs(x)
        wr(w, -x if neg else x)
    return run


# -- bf16 dot products --------------------------------------------------------------------------------

def _bf16_half(w, raw, high: bool):
    shift = U32(0 if high else 16)
    return ((_lanes(w, raw, U32) << shift) & U32(0xFFFF0000)).view(F32)


@handles("v_dot2_f32_bf16")
def _dot2_bf16(ins, cx):
    _refuse_modifiers(ins, ("neg_lo", "neg_hi", "clamp"))
    neg_lo, neg_hi = ins.modifier("neg_lo", 0) or 0, ins.modifier("neg_hi", 0) or 0
    a, b = cx.vread(ins.operands[1]), cx.vread(ins.operands[2])
    c = cx.vread_f(ins.operands[3])                  # neg/abs do not apply to S2 (ISA guide)
    wr = cx.vwrite_f(ins.operands[0], ins)
    sign = [[F32(-1.0) if (mask >> i) & 1 else F32(1.0) for i in range(2)] for mask in (neg_lo, neg_hi)]

    def run(w):
        ra, rb = a(w), b(w)
        with np.errstate(all="ignore"):
            lo = (_bf16_half(w, ra, False) * sign[0][0]) * (_bf16_half(w, rb, False) * sign[0][1])
            hi = (_bf16_half(w, ra, True) * sign[1][0]) * (_bf16_half(w, rb, True) * sign[1][1])
            wr(w, (lo + hi) + np.asarray(c(w), F32))
    return run


@handles("v_dot2c_f32_bf16")
def _dot2c_bf16(ins, cx):
    _refuse_modifiers(ins)
    d = _vgpr(ins.operands[0])
    a, b = cx.vread(ins.operands[1]), cx.vread(ins.operands[2])
    acc = cx.vread_f(d)
    wr = cx.vwrite_f(d, ins)

    def run(w):
        ra, rb = a(w), b(w)
        with np.errstate(all="ignore"):
            tmp = _lanes(w, acc(w), F32) + _bf16_half(w, ra, False) * _bf16_half(w, rb, False)
            wr(w, tmp + _bf16_half(w, ra, True) * _bf16_half(w, rb, True))
    run.extra_srcs = reg_keys(d)
    return run


# -- IEEE minimum / maximum ---------------------------------------------------------------------------

def _ieee_select(a, b, smaller: bool, quiet_bit: int):
    """IEEE 754-2019 minimum (``smaller``) or maximum of two float arrays of one dtype."""
    ubits = U32 if a.dtype == F32 else U16
    pick_a = (a < b) if smaller else (a > b)
    zeros = (a == b) & (np.signbit(a) != np.signbit(b))
    pick_a = pick_a | (zeros & (np.signbit(a) if smaller else ~np.signbit(a)))
    r = np.where(pick_a, a, b)
    quiet = lambda x: (x.view(ubits) | ubits(quiet_bit)).view(x.dtype)
    return np.where(np.isnan(a), quiet(a), np.where(np.isnan(b), quiet(b), r))


@handles("v_minimum3_f32", "v_maximum3_f32")
def _minmax3_f32(ins, cx):
    _refuse_modifiers(ins, _MODIFIERS_F32)
    smaller = ins.opcode == "v_minimum3_f32"
    srcs = [cx.fsrc(ins, i) for i in (1, 2, 3)]
    wr = cx.vwrite_f(ins.operands[0], ins)

    def run(w):
        a, b, c = (np.array(_lanes(w, s(w), F32)) for s in srcs)
        wr(w, _ieee_select(_ieee_select(a, b, smaller, 0x400000), c, smaller, 0x400000))
    return run


@handles("v_pk_minimum3_f16", "v_pk_maximum3_f16")
def _pk_minmax3_f16(ins, cx):
    _refuse_modifiers(ins, ("op_sel", "op_sel_hi", "neg_lo", "neg_hi"))
    smaller = ins.opcode == "v_pk_minimum3_f16"
    op_sel, op_sel_hi = ins.modifier("op_sel", 0) or 0, ins.modifier("op_sel_hi", 7)
    neg_lo, neg_hi = ins.modifier("neg_lo", 0) or 0, ins.modifier("neg_hi", 0) or 0
    raws = [cx.vread(o) for o in ins.operands[1:4]]
    wr = cx.vwrite(ins.operands[0])

    def half(w, i, sel, neg):
        x = ((_lanes(w, raws[i](w), U32) >> U32(16 * ((sel >> i) & 1))) & U32(0xFFFF)).astype(U16).view(F16)
        return -x if (neg >> i) & 1 else x

    def result(w, sel, neg):
        a, b, c = (half(w, i, sel, neg) for i in range(3))
        r = _ieee_select(_ieee_select(a, b, smaller, 0x200), c, smaller, 0x200)
        return r.view(U16).astype(U32)

    return lambda w: wr(w, result(w, op_sel, neg_lo) | (result(w, op_sel_hi, neg_hi) << U32(16)))


# -- bit operations -----------------------------------------------------------------------------------

def _half_writer(ins, cx, src_bits_allowed: bool):
    """Write a 16-bit result to the half of D op_sel bit 3 picks, keeping the other half."""
    d = _vgpr(ins.operands[0])
    op_sel = ins.modifier("op_sel", 0) or 0
    if op_sel & 7 and not src_bits_allowed:
        raise Unsupported(f"op_sel on the 32-bit sources of {ins.opcode}")
    high = bool(op_sel >> 3 & 1)
    shift, keep = U32(16 if high else 0), U32(0x0000FFFF if high else 0xFFFF0000)
    wr = cx.vwrite(d)

    def write(w, val16):
        wr(w, (w.v[d.index] & keep) | ((_lanes(w, val16, U32) & U32(0xFFFF)) << shift))
    return write, op_sel


def _bitop3(s0, s1, s2, table: int):
    out = np.zeros(np.broadcast(s0, s1, s2).shape, U32)
    for k in range(8):
        if table >> k & 1:
            pick = lambda x, bit: x if bit else ~x
            out |= pick(s0, k & 4) & pick(s1, k & 2) & pick(s2, k & 1)
    return out


@handles("v_bitop3_b32", "v_bitop3_b16")
def _bitop3_builder(ins, cx):
    _refuse_modifiers(ins, ("bitop3", "op_sel") if ins.opcode.endswith("b16") else ("bitop3",))
    table = ins.modifier("bitop3", 0) or 0
    srcs = [cx.vread(o) for o in ins.operands[1:4]]
    if ins.opcode == "v_bitop3_b32":
        wr = cx.vwrite(ins.operands[0])
        return lambda w: wr(w, _bitop3(*(_lanes(w, s(w), U32) for s in srcs), table))
    write, op_sel = _half_writer(ins, cx, src_bits_allowed=True)
    shifts = [U32(16 * ((op_sel >> i) & 1)) for i in range(3)]
    run = lambda w: write(w, _bitop3(*(_lanes(w, s(w), U32) >> sh for s, sh in zip(srcs, shifts)), table))
    run.extra_srcs = reg_keys(ins.operands[0])
    return run


@handles("v_ashr_pk_i8_i32", "v_ashr_pk_u8_i32")
def _ashr_pk(ins, cx):
    _refuse_modifiers(ins, ("op_sel",))
    lo, hi = (-128, 127) if ins.opcode == "v_ashr_pk_i8_i32" else (0, 255)
    a, b, s = (cx.vread_i(o) for o in ins.operands[1:4])
    write, _ = _half_writer(ins, cx, src_bits_allowed=False)

    def run(w):
        shift = _lanes(w, s(w), np.int64) & 31
        sat = lambda x: (np.clip(_lanes(w, x, np.int64) >> shift, lo, hi) & 0xFF).astype(U32)
        write(w, sat(a(w)) | (sat(b(w)) << U32(8)))
    run.extra_srcs = reg_keys(ins.operands[0])
    return run


@handles("v_prng_b32")
def _prng(ins, cx):
    _refuse_modifiers(ins)
    rd, wr = cx.vread(ins.operands[1]), cx.vwrite(ins.operands[0])

    def run(w):
        x = _lanes(w, rd(w), U32)
        wr(w, (x << U32(1)) ^ np.where(x >> U32(31), U32(197), U32(0)))
    return run


# -- row swaps across lanes ---------------------------------------------------------------------------

_SWAP_ROWS = {   # (lanes of D, lanes of S) exchanged
    "v_permlane16_swap_b32": (np.r_[16:32, 48:64], np.r_[0:16, 32:48]),
    "v_permlane32_swap_b32": (np.r_[32:64], np.r_[0:32]),
}


@handles(*_SWAP_ROWS)
def _permlane_swap(ins, cx):
    _refuse_modifiers(ins, ("fi", "bound_ctrl"))
    if cx.lanes != 64:
        raise Unsupported("row swaps on wave32")
    d, s = _vgpr(ins.operands[0]), _vgpr(ins.operands[1])
    d_lanes, s_lanes = _SWAP_ROWS[ins.opcode]

    def run(w):
        if not w.exec_full:
            raise Fault(f"{ins.opcode} with a partial EXEC (0x{w.exec:016x}) is not emulated (the ISA guide's "
                        f"pseudocode does not say how inactive lanes take part)")
        rd, rs = w.v[d.index], w.v[s.index]
        from_s = rs[s_lanes].copy()
        rs[s_lanes] = rd[d_lanes]
        rd[d_lanes] = from_s
    run.lane_bound = True
    run.extra_srcs = reg_keys(d)
    return run


__all__ = ["bf16_bits", "f16_bits"]
