"""Conversions that pack two 16-bit results into one VGPR (gfx9/CDNA VOP3): ``v_cvt_pkrtz_f16_f32``,
``v_cvt_pknorm_i16/u16_f32``, ``v_cvt_pknorm_i16/u16_f16`` (fp16 sources with ``op_sel``),
``v_cvt_pk_u16_u32`` and ``v_cvt_pk_i16_i32``. Source 0 goes to the low half, source 1 to the high half.

Semantics (CDNA3/CDNA4 ISA, VOP3A): pkrtz rounds toward zero whatever the mode (a finite value beyond
fp16 range becomes +-65504, infinities and NaNs stay). pknorm is f32_to_snorm/unorm: clamp to
[-1, 1] / [0, 1], scale by 32767 / 65535, round to nearest even, NaN -> 0 (the scaled product is exact
in fp64, so one rounding). cvt_pk_u16_u32 / cvt_pk_i16_i32 saturate to the 16-bit range (Mesa's
``pack_uint_2x16``/``pack_sint_2x16``, which ACO emits as these, clamp). Clamp and output modifiers
on these are refused: the ISA does not say where they would apply.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.emulator.vector.operands16 import allow_modifiers, f16_source, op_sel

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

F16, F32, F64, I64, U32 = np.float16, np.float32, np.float64, np.int64, np.uint32


def _rtz_f16_bits(x):
    """fp32/fp64 values -> fp16 bits rounded toward zero."""
    x = np.asarray(x, F64)
    with np.errstate(over="ignore", invalid="ignore"):
        near = x.astype(F16)
        bits = near.view(np.uint16).astype(U32)
        away = np.abs(near.astype(F64)) > np.abs(x)          # nearest rounded up in magnitude: step back
    return np.where(away & ~np.isnan(x), bits - U32(1), bits)


def _norm(x, signed: bool):
    x = np.asarray(x, F64)
    scaled = np.rint(np.clip(x, -1.0, 1.0) * 32767.0) if signed else np.rint(np.clip(x, 0.0, 1.0) * 65535.0)
    return np.where(np.isnan(x), 0, scaled).astype(I64) & 0xFFFF


def _pack(lo, hi):
    return (np.asarray(lo, I64) & 0xFFFF).astype(U32) | ((np.asarray(hi, I64) & 0xFFFF).astype(U32) << U32(16))


_F32_SOURCES = {"v_cvt_pkrtz_f16_f32": _rtz_f16_bits,
                "v_cvt_pknorm_i16_f32": lambda x: _norm(x, True),
                "v_cvt_pknorm_u16_f32": lambda x: _norm(x, False)}


@handles(*_F32_SOURCES)
def _from_f32(ins, cx):
    allow_modifiers(ins, ("neg", "abs"))
    fn = _F32_SOURCES[ins.opcode]
    a, b = cx.fsrc(ins, 1), cx.fsrc(ins, 2)
    wr = cx.vwrite(ins.operands[0])
    return lambda w: wr(w, np.broadcast_to(_pack(fn(a(w)), fn(b(w))), (w.lanes,)))


@handles("v_cvt_pknorm_i16_f16", "v_cvt_pknorm_u16_f16")
def _from_f16(ins, cx):
    allow_modifiers(ins, ("op_sel", "neg", "abs"))
    sel = op_sel(ins)
    if sel & ~0b11:
        raise Unsupported(f"op_sel {sel:#b} on {ins.opcode} (a destination half select on a 32-bit result)")
    signed = ins.opcode == "v_cvt_pknorm_i16_f16"
    a, b = (f16_source(cx, ins, i + 1, bool(sel >> i & 1)) for i in range(2))
    wr = cx.vwrite(ins.operands[0])
    return lambda w: wr(w, np.broadcast_to(_pack(_norm(a(w), signed), _norm(b(w), signed)), (w.lanes,)))


@handles("v_cvt_pk_u16_u32", "v_cvt_pk_i16_i32")
def _from_int32(ins, cx):
    allow_modifiers(ins, ())
    signed = ins.opcode == "v_cvt_pk_i16_i32"
    rd = cx.vread_i if signed else cx.vread
    a, b = rd(ins.operands[1]), rd(ins.operands[2])
    lo, hi = (-0x8000, 0x7FFF) if signed else (0, 0xFFFF)
    wr = cx.vwrite(ins.operands[0])
    return lambda w: wr(w, np.broadcast_to(
        _pack(np.clip(np.asarray(a(w), I64), lo, hi), np.clip(np.asarray(b(w), I64), lo, hi)), (w.lanes,)))
