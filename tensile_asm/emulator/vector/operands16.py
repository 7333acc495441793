"""Operand plumbing shared by the non-packed 16-bit VALU handlers (float16.py, integer16.py, convert_pack16.py).

Sources: VOP3 ``op_sel`` bit i makes source i read its high 16 bits (the assembly lists one entry per
source, then one for the destination: ``op_sel:[0,0,1]`` on a two-source operation is the destination). A float inline constant of a
16-bit float operand is its fp16 encoding (``1.0`` is 0x3c00); the high half of a constant is refused
(what the hardware reads there is not documented). Destinations: the result goes to the low half, or
to the high half with the destination's ``op_sel`` bit; the other half is either kept (then it is a read of the
destination, which strict mode checks) or written as 0, per operation (see the handler modules).
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import Unsupported, reg_keys
from tensile_asm.isa.registers import Imm, Reg

F16, F64, U32 = np.float16, np.float64, np.uint32
LOW16 = U32(0xFFFF)


def op_sel(ins) -> int:
    """The parsed op_sel list as bits: bit i is source i, bit ``n_sources`` the destination."""
    return ins.modifier("op_sel", 0) or 0


def half_bits(cx, ins, index: int, high: bool, float_constants: bool = True):
    """Reader of the selected 16 bits of source ``index`` as uint32 lanes (or an int)."""
    op = ins.operands[index]
    if isinstance(op, Imm):
        if high:
            raise Unsupported(f"op_sel selecting the high half of the constant {op}")
        if isinstance(op.value, float):
            if not float_constants:
                raise Unsupported(f"a float constant {op} as a 16-bit integer operand")
            bits = int(np.float16(op.value).view(np.uint16))
        else:
            bits = op.value & 0xFFFF
        return lambda w: bits
    rd = cx.vread(op)
    shift = U32(16 if high else 0)
    return lambda w: (np.asarray(rd(w), U32) >> shift) & LOW16


def f16_of(bits):
    """fp16 bit patterns (uint32) -> float64 values."""
    return np.asarray(bits, U32).astype(np.uint16).view(F16).astype(F64)


def f16_bits(x):
    """float64 values -> fp16 bit patterns (uint32), rounded once to nearest even."""
    with np.errstate(over="ignore"):
        return np.asarray(x, F64).astype(F16).view(np.uint16).astype(U32)


def f16_source(cx, ins, index: int, high: bool):
    """Reader of fp16 source ``index`` as float64, with the VOP3 abs/neg modifiers applied."""
    rd = half_bits(cx, ins, index, high)
    neg, absm = cx.src_mod(ins, index)

    def get(w):
        v = f16_of(rd(w))
        if absm:
            v = np.abs(v)
        return -v if neg else v
    return get


def half_dest(cx, ins, to_high: bool, keep_other: bool):
    """(write(w, bits16), extra_srcs): writes 16-bit results to one half of the destination VGPR,
    keeping the other half (a read of the destination) or writing it as 0."""
    dst = ins.operands[0]
    if not (isinstance(dst, Reg) and dst.kind == "v" and dst.count == 1):
        raise Unsupported(f"16-bit destination {dst}")
    wr, d = cx.vwrite(dst), dst.index
    shift, keep = U32(16 if to_high else 0), U32(0x0000FFFF if to_high else 0xFFFF0000)

    def write(w, bits):
        out = (np.asarray(bits, U32) & LOW16) << shift
        if keep_other:
            out = out | (w.v[d] & keep)
        wr(w, np.broadcast_to(out, (w.lanes,)))
    return write, (reg_keys(dst) if keep_other else ())


def allow_modifiers(ins, allowed) -> None:
    for m, _ in ins.modifiers:
        if m not in allowed:
            raise Unsupported(f"modifier {m} on {ins.opcode}")
