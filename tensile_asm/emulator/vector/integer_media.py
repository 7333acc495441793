"""Integer and bit VALU operations beyond integer.py: byte/nibble conversions to fp32
(``v_cvt_f32_ubyte0..3``, ``v_cvt_off_f32_i4``), ``v_ffbh_i32``, ``v_sat_pk_u8_i16``, ``v_alignbyte_b32``,
``v_swap_b32``, ``v_nop``, gfx9's VOP3 ``v_add_i32``/``v_sub_i32`` (``clamp`` saturates to int32), the
integer dot products (VOP2 ``v_dot2c_i32_i16``/``v_dot4c_i32_i8``/``v_dot8c_i32_i4`` accumulating into
the destination, VOP3P ``v_dot2/4/8_{i32,u32}_*`` with ``clamp`` saturating the 32-bit result), the sums
of absolute differences ``v_sad_u8/hi_u8/u16/u32`` and ``v_lerp_u8``.

Semantics from the Vega/CDNA3 ISA guides (VOP1/VOP2/VOP3 opcode tables): ``v_cvt_off_f32_i4`` is the
signed 4-bit value S0[3:0] / 16; ``v_ffbh_i32`` counts from the MSB to the first bit that differs from
the sign bit, -1 for 0 and -1; ``v_sat_pk_u8_i16`` saturates both signed 16-bit halves to [0, 255] into
the two low bytes; ``v_lerp_u8`` averages each byte pair rounding with bit 0 of S2's byte; ``v_sad_hi_u8``
adds the byte SAD shifted left 16. Dot products are exact (int64) sums, wrapped to 32 bits, or
saturated under ``clamp`` (the ISA: "clamp: saturate the result"). ``v_msad_u8``, ``v_mqsad*``,
``v_qsad*`` and ``v_mad_i64_i32`` are left out: the masked operand of MSAD and the carry-out of the
signed 64-bit mad are not pinned down by the public guides.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

I64, U32, F32 = np.int64, np.uint32, np.float32
I32_MIN, I32_MAX, U32_MAX = -(1 << 31), (1 << 31) - 1, (1 << 32) - 1


def _no_modifiers(ins, allowed=()):
    for m, _ in ins.modifiers:
        if m not in allowed:
            raise Unsupported(f"modifier {m} on {ins.opcode}")


def _u(rd):
    return lambda w: np.asarray(rd(w), I64) & 0xFFFFFFFF


def fields(x, width: int, signed: bool):
    """The 32 // width fields of each 32-bit value, low field first, as int64 (last axis)."""
    x = np.asarray(x, I64)[..., None] & 0xFFFFFFFF
    f = (x >> np.arange(0, 32, width, dtype=I64)) & ((1 << width) - 1)
    if signed:
        top = 1 << (width - 1)
        f = (f ^ top) - top
    return f


def _write32(cx, ins):
    wr = cx.vwrite(ins.operands[0])
    return lambda w, r: wr(w, np.broadcast_to((np.asarray(r, I64) & 0xFFFFFFFF).astype(U32), (w.lanes,)))


# -- VOP1 ----------------------------------------------------------------------------------------

@handles("v_cvt_f32_ubyte0", "v_cvt_f32_ubyte1", "v_cvt_f32_ubyte2", "v_cvt_f32_ubyte3", "v_cvt_off_f32_i4")
def _byte_to_f32(ins, cx):
    _no_modifiers(ins, ("clamp", "mul", "div"))
    a, wr = _u(cx.vread(ins.operands[1])), cx.vwrite_f(ins.operands[0], ins)
    if ins.opcode == "v_cvt_off_f32_i4":
        return lambda w: wr(w, (((a(w) & 15) ^ 8) - 8).astype(F32) * F32(0.0625))
    shift = 8 * int(ins.opcode[-1])
    return lambda w: wr(w, ((a(w) >> shift) & 0xFF).astype(F32))


@handles("v_ffbh_i32")
def _ffbh_i32(ins, cx):
    _no_modifiers(ins)
    a, wr = _u(cx.vread(ins.operands[1])), _write32(cx, ins)

    def run(w):
        x = a(w)
        x = np.where(x >> 31 == 1, x ^ 0xFFFFFFFF, x)             # bits that differ from the sign
        none = x == 0
        n = np.zeros_like(x)
        for step in (16, 8, 4, 2, 1):                                # leading zeros, binary search
            short = (x >> (32 - step)) == 0
            n = np.where(short, n + step, n)
            x = np.where(short, (x << step) & 0xFFFFFFFF, x)
        return wr(w, np.where(none, -1, n))
    return run


@handles("v_sat_pk_u8_i16")
def _sat_pk_u8_i16(ins, cx):
    _no_modifiers(ins)
    a, wr = cx.vread(ins.operands[1]), _write32(cx, ins)

    def run(w):
        h = np.clip(fields(a(w), 16, True), 0, 255)
        return wr(w, h[..., 0] | (h[..., 1] << 8))
    return run


@handles("v_swap_b32")
def _swap(ins, cx):
    _no_modifiers(ins)
    x, y = ins.operands
    if not all(isinstance(o, Reg) and o.kind == "v" for o in (x, y)):
        raise Unsupported("v_swap_b32 of non-VGPRs")
    rx, ry, wx, wy = cx.vread(x), cx.vread(y), cx.vwrite(x), cx.vwrite(y)

    def run(w):
        a, b = rx(w).copy(), ry(w).copy()
        wx(w, b)
        wy(w, a)
    run.extra_srcs = reg_keys(x) + reg_keys(y)
    return run


@handles("v_nop")
def _nop(ins, cx):
    return lambda w: None


# -- VOP3 ----------------------------------------------------------------------------------------

@handles("v_add_i32", "v_sub_i32")
def _add_sub_i32(ins, cx):
    _no_modifiers(ins, ("clamp",))
    clamp = ins.has_modifier("clamp")
    a, b = (cx.vread_i(o) for o in ins.operands[1:3])
    sign = 1 if ins.opcode == "v_add_i32" else -1
    wr = _write32(cx, ins)

    def run(w):
        r = np.asarray(a(w), I64) + sign * np.asarray(b(w), I64)
        return wr(w, np.clip(r, I32_MIN, I32_MAX) if clamp else r)
    return run


@handles("v_alignbyte_b32")
def _alignbyte(ins, cx):
    _no_modifiers(ins)
    a, b, c = (_u(cx.vread(o)) for o in ins.operands[1:4])
    wr = cx.vwrite(ins.operands[0])

    def run(w):
        wide = (a(w).astype(np.uint64) << np.uint64(32)) | b(w).astype(np.uint64)
        shift = (8 * (c(w) & 3)).astype(np.uint64)
        wr(w, np.broadcast_to((wide >> shift).astype(U32), (w.lanes,)))
    return run


def _sad_bytes(a, b, width):
    return np.abs(fields(a, width, False) - fields(b, width, False)).sum(axis=-1)


_SAD = {
    "v_sad_u8": lambda a, b, c: _sad_bytes(a, b, 8) + c,
    "v_sad_hi_u8": lambda a, b, c: (_sad_bytes(a, b, 8) << 16) + c,
    "v_sad_u16": lambda a, b, c: _sad_bytes(a, b, 16) + c,
    "v_sad_u32": lambda a, b, c: np.abs(a - b) + c,
    "v_lerp_u8": lambda a, b, c: ((fields(a, 8, False) + fields(b, 8, False) + (fields(c, 8, False) & 1)) >> 1
                                  << np.arange(0, 32, 8, dtype=I64)).sum(axis=-1),
}


@handles(*_SAD)
def _sad(ins, cx):
    _no_modifiers(ins)
    fn = _SAD[ins.opcode]
    a, b, c = (_u(cx.vread(o)) for o in ins.operands[1:4])
    wr = _write32(cx, ins)
    return lambda w: wr(w, fn(a(w), b(w), c(w)))


# -- dot products --------------------------------------------------------------------------------

_DOT_WIDTH = {"2": 16, "4": 8, "8": 4}


def _dot_kind(name):
    """(field width, signed) of v_dot<N>[c]_<i32|u32>_<type>."""
    n = name.split("_")[1]
    return _DOT_WIDTH[n.rstrip("c")[3:]], name.split("_")[2] == "i32"


@handles("v_dot2c_i32_i16", "v_dot4c_i32_i8", "v_dot8c_i32_i4",
         "v_dot2_i32_i16", "v_dot2_u32_u16", "v_dot4_i32_i8", "v_dot4_u32_u8", "v_dot8_i32_i4", "v_dot8_u32_u4")
def _dot(ins, cx):
    width, signed = _dot_kind(ins.opcode)
    accumulate_dest = ins.opcode.split("_")[1].endswith("c")               # v_dotNc: D = dot + D (VOP2)
    n_src = 2 if accumulate_dest else 3
    _no_modifiers(ins, ("clamp", "op_sel", "op_sel_hi"))
    if (ins.modifier("op_sel", 0) or 0) != 0 or ins.modifier("op_sel_hi", (1 << n_src) - 1) != (1 << n_src) - 1:
        raise Unsupported(f"op_sel/op_sel_hi other than the default on {ins.opcode}")
    clamp = ins.has_modifier("clamp")
    a, b = (cx.vread(o) for o in ins.operands[1:3])
    c = cx.vread_i(ins.operands[0 if accumulate_dest else 3]) if signed else \
        _u(cx.vread(ins.operands[0 if accumulate_dest else 3]))
    lo, hi = (I32_MIN, I32_MAX) if signed else (0, U32_MAX)
    wr = _write32(cx, ins)

    def run(w):
        r = (fields(a(w), width, signed) * fields(b(w), width, signed)).sum(axis=-1) + np.asarray(c(w), I64)
        return wr(w, np.clip(r, lo, hi) if clamp else r)
    if accumulate_dest:
        run.extra_srcs = reg_keys(ins.operands[0])
    return run
