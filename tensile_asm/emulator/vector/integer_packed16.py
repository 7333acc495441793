"""Packed 16-bit integer VOP3P: ``v_pk_add/sub_i16/u16``, ``v_pk_mul_lo_u16``, ``v_pk_mad_i16/u16``,
``v_pk_max/min_i16/u16`` and ``v_pk_lshlrev_b16``/``v_pk_lshrrev_b16``/``v_pk_ashrrev_i16``.

Each 32-bit source holds two 16-bit values. As for the packed float operations (float_packed32.py), the low
result reads source i's high half when ``op_sel`` bit i is set, the high result when ``op_sel_hi`` bit i
is set (default: all set). Shifts: ``d = b << (a & 15)`` per half, as the VOP2 16-bit shifts.
``clamp`` saturates the exact result to the 16-bit range on the adds, subtracts and mads (the ISA:
these "support saturation"); it cannot change min/max; on the multiply and the shifts it is refused.
An inline constant sits in the low half (operands16.py): selecting its high half is refused; ``neg_lo``/
``neg_hi`` are float modifiers and are refused.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.emulator.vector.operands16 import half_bits

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

I64, U32 = np.int64, np.uint32

# name: (number of sources, signed, clamp saturates/allowed, fn over int64 halves)
_OPS = {
    "v_pk_add_i16": (2, True, True, lambda a, b: a + b),
    "v_pk_add_u16": (2, False, True, lambda a, b: a + b),
    "v_pk_sub_i16": (2, True, True, lambda a, b: a - b),
    "v_pk_sub_u16": (2, False, True, lambda a, b: a - b),
    "v_pk_mul_lo_u16": (2, False, False, lambda a, b: a * b),
    "v_pk_mad_i16": (3, True, True, lambda a, b, c: a * b + c),
    "v_pk_mad_u16": (3, False, True, lambda a, b, c: a * b + c),
    "v_pk_max_i16": (2, True, True, np.maximum), "v_pk_max_u16": (2, False, True, np.maximum),
    "v_pk_min_i16": (2, True, True, np.minimum), "v_pk_min_u16": (2, False, True, np.minimum),
    "v_pk_lshlrev_b16": (2, False, False, lambda a, b: b << (a & 15)),
    "v_pk_lshrrev_b16": (2, False, False, lambda a, b: b >> (a & 15)),
    "v_pk_ashrrev_i16": (2, True, False, lambda a, b: b >> (a & 15)),
}


@handles(*_OPS)
def _pk_int16(ins, cx):
    n, signed, clamp_ok, fn = _OPS[ins.opcode]
    for m, _ in ins.modifiers:
        if m not in ("op_sel", "op_sel_hi", "clamp"):
            raise Unsupported(f"modifier {m} on {ins.opcode}")
    clamp = ins.has_modifier("clamp")
    if clamp and not clamp_ok:
        raise Unsupported(f"clamp on {ins.opcode}")
    sel, sel_hi = ins.modifier("op_sel", 0) or 0, ins.modifier("op_sel_hi", (1 << n) - 1)
    lo = [half_bits(cx, ins, i + 1, bool(sel >> i & 1), float_constants=False) for i in range(n)]
    hi = [half_bits(cx, ins, i + 1, bool(sel_hi >> i & 1), float_constants=False) for i in range(n)]
    bounds = (-0x8000, 0x7FFF) if signed else (0, 0xFFFF)
    wr = cx.vwrite(ins.operands[0])

    def value(x):
        x = np.asarray(x, I64) & 0xFFFF
        return (x ^ 0x8000) - 0x8000 if signed else x

    def half(srcs, w):
        r = fn(*(value(s(w)) for s in srcs))
        if clamp:
            r = np.clip(r, *bounds)
        return (np.asarray(r, I64) & 0xFFFF).astype(U32)

    return lambda w: wr(w, np.broadcast_to(half(lo, w) | (half(hi, w) << U32(16)), (w.lanes,)))
