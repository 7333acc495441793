"""16-bit integer VALU (gfx9/CDNA, non-packed): the VOP2 operations ``v_add/sub/subrev/mul_lo_u16``,
``v_lshlrev/lshrrev_b16``, ``v_ashrrev_i16``, ``v_max/min_u16/i16``; the VOP3 ``v_mad_u16/i16``,
``v_add_i16``/``v_sub_i16`` and ``v_min3/max3/med3_u16/i16`` with ``op_sel`` (operands16.py); the
``v_mad_legacy_u16/i16`` forms; and ``v_mad_u32_u16``/``v_mad_i32_i16`` (32-bit result).

Destination high half on gfx9: the VOP2 operations and the ``_legacy`` forms write 0 there (LLVM
``GCNSubtarget::zeroesHigh16BitsOfDest``, ISA notes of V_MAD_LEGACY_U16); the VOP3 ``op_sel``
operations keep it (ISA notes of V_MAD_U16/V_MAD_I16; taken to hold for ``v_add_i16``/``v_sub_i16``
and min3/max3/med3 too, which the ISA text leaves unsaid), and ``op_sel`` bit 3 writes the high half
keeping the low one (bit 2 on the two-source ones). ``clamp`` saturates to the 16-bit range where the ISA says the operation
"supports saturation" (adds, subtracts, mads); on min/max/med3 it cannot change a result.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.emulator.vector.operands16 import allow_modifiers, half_bits, half_dest, op_sel

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

I64, U32 = np.int64, np.uint32


def _signed16(x):
    x = np.asarray(x, I64) & 0xFFFF
    return (x ^ 0x8000) - 0x8000


def _unsigned16(x):
    return np.asarray(x, I64) & 0xFFFF


def _med3(a, b, c):
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


# name: (signed sources, saturating clamp allowed, fn over int64 values)
_VOP2 = {
    "v_add_u16": (False, True, lambda a, b: a + b),
    "v_sub_u16": (False, True, lambda a, b: a - b),
    "v_subrev_u16": (False, True, lambda a, b: b - a),
    "v_mul_lo_u16": (False, False, lambda a, b: a * b),
    "v_lshlrev_b16": (False, False, lambda a, b: b << (a & 15)),
    "v_lshrrev_b16": (False, False, lambda a, b: b >> (a & 15)),
    "v_ashrrev_i16": (True, False, lambda a, b: b >> (a & 15)),
    "v_max_u16": (False, False, np.maximum), "v_min_u16": (False, False, np.minimum),
    "v_max_i16": (True, False, np.maximum), "v_min_i16": (True, False, np.minimum),
}
_VOP3_BINARY = {"v_add_i16": (True, True, lambda a, b: a + b), "v_sub_i16": (True, True, lambda a, b: a - b)}
_VOP3_TERNARY = {
    "v_mad_u16": (False, True, lambda a, b, c: a * b + c),
    "v_mad_i16": (True, True, lambda a, b, c: a * b + c),
    "v_min3_u16": (False, True, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    "v_max3_u16": (False, True, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    "v_med3_u16": (False, True, _med3),
    "v_min3_i16": (True, True, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    "v_max3_i16": (True, True, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    "v_med3_i16": (True, True, _med3),
}
_LEGACY = {"v_mad_legacy_u16": _VOP3_TERNARY["v_mad_u16"], "v_mad_legacy_i16": _VOP3_TERNARY["v_mad_i16"]}
_TABLE = {**_VOP2, **_VOP3_BINARY, **_VOP3_TERNARY, **_LEGACY}


@handles(*_TABLE)
def _int16(ins, cx):
    name = ins.opcode
    signed, saturates, fn = _TABLE[name]
    n = 2 if name in _VOP2 or name in _VOP3_BINARY else 3
    allow_modifiers(ins, ("op_sel", "clamp"))
    sel = op_sel(ins)
    if name in _VOP2 and sel:
        raise Unsupported(f"op_sel on {name} (gfx9 has none for VOP2-style 16-bit operations)")
    clamp = ins.has_modifier("clamp")
    if clamp and not saturates:
        raise Unsupported(f"clamp on {name}")
    value = _signed16 if signed else _unsigned16
    lo, hi = (-0x8000, 0x7FFF) if signed else (0, 0xFFFF)
    srcs = [half_bits(cx, ins, i + 1, bool(sel >> i & 1), float_constants=False) for i in range(n)]
    to_high = bool(sel >> n & 1)
    write, extra = half_dest(cx, ins, to_high, keep_other=to_high or name in _VOP3_BINARY or name in _VOP3_TERNARY)

    def run(w):
        r = fn(*(value(s(w)) for s in srcs))
        if clamp:
            r = np.clip(r, lo, hi)
        write(w, (np.asarray(r, I64) & 0xFFFF).astype(U32))
    run.extra_srcs = extra
    return run


@handles("v_mad_u32_u16", "v_mad_i32_i16")
def _mad32(ins, cx):
    allow_modifiers(ins, ("op_sel",))
    sel = op_sel(ins)
    if sel & 0b1100:
        raise Unsupported(f"op_sel {sel:#b} on {ins.opcode} (only the two 16-bit sources select halves)")
    value = _signed16 if ins.opcode == "v_mad_i32_i16" else _unsigned16
    a, b = (half_bits(cx, ins, i + 1, bool(sel >> i & 1), float_constants=False) for i in range(2))
    c = cx.vread(ins.operands[3])
    wr = cx.vwrite(ins.operands[0])
    return lambda w: wr(w, np.broadcast_to(
        (value(a(w)) * value(b(w)) + np.asarray(c(w), I64)).astype(U32), (w.lanes,)))
