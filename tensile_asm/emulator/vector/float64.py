"""64-bit VOP1 operations: ``v_mov_b64`` (gfx940+), fp64 rounding (``v_ceil/floor/trunc/rndne_f64``)
and the fp64 <-> fp32/int32 conversions. They are the "DP ALU" operations that also come with DPP
(``row_newbcast`` only, see dpp.py).

All are exact in numpy: rounding to an integral fp64 value is exact, ``v_rndne_f64`` is round half
to even (``np.rint``), fp64 -> fp32 is numpy's round-to-nearest-even cast, int32 -> fp64 is exact and
fp64 -> int32 truncates, saturates and maps NaN to 0 (as ``v_cvt_i32_f32``). Clamp and output
modifiers on fp64 results are refused rather than ignored.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.emulator.vector.float64_packed16 import f64_src

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

F32, F64, U32, U64 = np.float32, np.float64, np.uint32, np.uint64


def _f64_result(cx, ins):
    """Writer of fp64 lanes to the destination pair (no clamp/omod: the emulator does not model them)."""
    for m, _ in ins.modifiers:
        if m in ("clamp", "mul", "div"):
            raise Unsupported(f"{m} on an fp64 result")
    wr = cx.vwrite64(ins.operands[0])
    return lambda w, x: wr(w, np.broadcast_to(np.asarray(x, F64), (w.lanes,)).view(U64))


@handles("v_mov_b64")
def _mov_b64(ins, cx):
    if ins.modifiers:
        raise Unsupported("modifiers on v_mov_b64")
    rd, wr = cx.vread64(ins.operands[1]), cx.vwrite64(ins.operands[0])
    return lambda w: wr(w, np.broadcast_to(np.asarray(rd(w), U64), (w.lanes,)))


_ROUND = {"v_ceil_f64": np.ceil, "v_floor_f64": np.floor, "v_trunc_f64": np.trunc, "v_rndne_f64": np.rint}


@handles(*_ROUND)
def _round_f64(ins, cx):
    fn, a, wr = _ROUND[ins.opcode], f64_src(cx, ins, 1), _f64_result(cx, ins)
    return lambda w: wr(w, fn(a(w)))


@handles("v_cvt_f64_f32")
def _cvt_f64_f32(ins, cx):
    a, wr = cx.fsrc(ins, 1), _f64_result(cx, ins)
    return lambda w: wr(w, np.asarray(a(w), F64))


@handles("v_cvt_f64_i32", "v_cvt_f64_u32")
def _cvt_f64_int(ins, cx):
    signed = ins.opcode.endswith("i32")
    a, wr = (cx.vread_i if signed else cx.vread)(ins.operands[1]), _f64_result(cx, ins)
    return lambda w: wr(w, np.asarray(a(w)).astype(F64))


@handles("v_cvt_f32_f64")
def _cvt_f32_f64(ins, cx):
    a, wr = f64_src(cx, ins, 1), cx.vwrite_f(ins.operands[0], ins)

    def run(w):
        with np.errstate(over="ignore"):               # out of fp32 range: +-inf, as the hardware
            wr(w, np.asarray(a(w)).astype(F32))
    return run


@handles("v_cvt_i32_f64", "v_cvt_u32_f64")
def _cvt_int_f64(ins, cx):
    lo, hi = (-2.0 ** 31, 2.0 ** 31 - 1) if ins.opcode == "v_cvt_i32_f64" else (0.0, 2.0 ** 32 - 1)
    if ins.has_modifier("clamp") or ins.modifier("mul") or ins.modifier("div"):
        raise Unsupported("clamp/output modifiers on an integer result")
    a, wr = f64_src(cx, ins, 1), cx.vwrite(ins.operands[0])

    def run(w):
        x = np.asarray(a(w), F64)
        x = np.clip(np.trunc(np.where(np.isnan(x), 0.0, x)), lo, hi)     # NaN -> 0, saturate
        wr(w, np.broadcast_to(x.astype(np.int64).astype(U32), (w.lanes,)))
    return run
