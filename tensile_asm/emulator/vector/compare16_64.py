"""The VOPC compares compare_lanes.py leaves out: fp16, fp64 and 16-bit integer compares (``v_cmp[x]_<rel>_
f16/f64/i16/u16``) and the class tests ``v_cmp[x]_class_f16/f32/f64``.

Relations come from compare_lanes.py's tables; the float ones are IEEE compares, so every ordered relation
(eq, lt, le, gt, ge, lg, o) is false and every unordered one (neq, nlt, nle, ngt, nge, nlg, u) true
when a source is NaN. 16-bit sources are the low halves (gfx9's VOPC has no op_sel); an fp16 float
constant is its fp16 encoding (operands16.py).

``v_cmp_class`` (ISA, V_CMP_CLASS_F32): the result is set when the class of S0 has its bit set in the
mask S1: 0 signalling NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal,
8 +normal, 9 +inf. It is decided on S0's bits (after neg/abs, which flip/clear the sign bit), so a
signalling NaN stays one and fp32 denormals count as denormal whatever the denormal mode (taken
from the ISA text, which describes no flushing for this operation).
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.emulator.state import mask_of
from tensile_asm.emulator.vector.compare_lanes import _FLOAT_REL, _INT_REL
from tensile_asm.emulator.vector.float64_packed16 import f64_src
from tensile_asm.emulator.vector.operands16 import allow_modifiers, f16_source, half_bits

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

I64, U64 = np.int64, np.uint64
# kind: (exponent bits, mantissa bits) of the float formats the class tests read
_FORMATS = {"f16": (5, 10), "f32": (8, 23), "f64": (11, 52)}


def _compare_writer(cx, ins, exec_too: bool):
    """write(w, lanes): the lane mask to the destination, and to EXEC for the v_cmpx forms."""
    write, lanes = cx.mask_write(ins.operands[0]), cx.lanes
    if not exec_too:
        return lambda w, r: write(w, np.broadcast_to(r, (lanes,)))

    def write_exec(w, r):
        r = np.broadcast_to(r, (lanes,))
        write(w, r)
        w.set_exec(mask_of(r & w.exec_lanes))
    return write_exec


def _sources(cx, ins, kind):
    if kind == "f16":
        allow_modifiers(ins, ("neg", "abs"))
        return f16_source(cx, ins, 1, False), f16_source(cx, ins, 2, False)
    if kind == "f64":
        allow_modifiers(ins, ("neg", "abs"))
        return f64_src(cx, ins, 1), f64_src(cx, ins, 2)
    allow_modifiers(ins, ())
    rd = [half_bits(cx, ins, i, False, float_constants=False) for i in (1, 2)]
    if kind == "u16":
        return (lambda w: np.asarray(rd[0](w), I64)), (lambda w: np.asarray(rd[1](w), I64))
    return (lambda w: (np.asarray(rd[0](w), I64) ^ 0x8000) - 0x8000), \
           (lambda w: (np.asarray(rd[1](w), I64) ^ 0x8000) - 0x8000)


def _compare_builder(rel, kind, exec_too):
    def build(ins, cx):
        a, b = _sources(cx, ins, kind)
        write = _compare_writer(cx, ins, exec_too)
        return lambda w: write(w, rel(a(w), b(w)))
    return build


for _x in ("", "x"):
    for _t in ("f16", "f64"):
        for _rel, _fn in _FLOAT_REL.items():
            handles(f"v_cmp{_x}_{_rel}_{_t}")(_compare_builder(_fn, _t, _x == "x"))
    for _t in ("i16", "u16"):
        for _rel, _fn in _INT_REL.items():
            if _rel != "lg":
                handles(f"v_cmp{_x}_{_rel}_{_t}")(_compare_builder(_fn, _t, _x == "x"))


def float_class(bits, exp_bits: int, mant_bits: int):
    """The class bit number (0..9 as listed above) of each float bit pattern."""
    bits = np.asarray(bits, U64)
    sign = (bits >> U64(exp_bits + mant_bits)) & U64(1)
    exp = (bits >> U64(mant_bits)) & U64((1 << exp_bits) - 1)
    mant = bits & U64((1 << mant_bits) - 1)
    quiet = (mant >> U64(mant_bits - 1)) & U64(1)
    top = exp == U64((1 << exp_bits) - 1)
    neg = sign == 1
    cls = np.where(exp == 0, np.where(mant == 0, np.where(neg, 5, 6), np.where(neg, 4, 7)),
                   np.where(neg, 3, 8))
    return np.where(top, np.where(mant == 0, np.where(neg, 2, 9), np.where(quiet == 1, 1, 0)), cls)


def _class_source(cx, ins, kind):
    """S0's bit pattern (uint64 lanes or int) with neg/abs applied to its sign bit."""
    exp_bits, mant_bits = _FORMATS[kind]
    sign = U64(1 << (exp_bits + mant_bits))
    if kind == "f64":
        rd = cx.vread64(ins.operands[1])
    elif kind == "f16":
        rd = half_bits(cx, ins, 1, False)
    else:
        rd = cx.vread(ins.operands[1])
    neg, absm = cx.src_mod(ins, 1)

    def get(w):
        x = np.asarray(rd(w), U64)
        if absm:
            x = x & ~sign
        return x ^ sign if neg else x
    return get


def _class_builder(kind, exec_too):
    def build(ins, cx):
        allow_modifiers(ins, ("neg", "abs"))
        if ((ins.modifier("neg", 0) or 0) | (ins.modifier("abs", 0) or 0)) & 0b100:
            raise Unsupported(f"neg/abs on the class mask of {ins.opcode}")
        src = _class_source(cx, ins, kind)
        mask = cx.vread(ins.operands[2])
        write = _compare_writer(cx, ins, exec_too)
        fmt = _FORMATS[kind]
        return lambda w: write(w, (np.asarray(mask(w), U64) >> float_class(src(w), *fmt).astype(U64)) & U64(1) == 1)
    return build


for _x in ("", "x"):
    for _t in _FORMATS:
        handles(f"v_cmp{_x}_class_{_t}")(_class_builder(_t, _x == "x"))
