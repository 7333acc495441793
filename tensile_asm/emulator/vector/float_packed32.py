"""Packed fp32 (VOP3P, gfx90a+): ``v_pk_fma_f32``, ``v_pk_mul_f32``, ``v_pk_add_f32``, ``v_pk_mov_b32``.

Each source is a register pair (VGPRs or SGPRs). For the low result, source i reads its high half
when bit i of ``op_sel`` is set; for the high result, when bit i of ``op_sel_hi`` is set (default:
all set, as LLVM omits it). ``neg_lo``/``neg_hi`` negate source i for the low/high result.
``v_pk_mov_b32 d, a, b``: d.lo = a[op_sel bit 0], d.hi = b[op_sel bit 1].
Only the selected halves are read: strict mode checks those registers (LLVM leaves the other half of a
pair unwritten when op_sel_hi makes both results read one half).
An inline constant source is the 32-bit constant (LLVM's operand type for these sources: V2INT32/V2FP32, a
32-bit value), read where its low half is selected (clang zeroes a pair with ``v_pk_mov_b32 v[8:9], 0, 0``);
selecting the high half of a constant is refused, its rule is not modelled.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.emulator.vector.float32 import fma_f32
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

F32 = np.float32


def _half(cx, op, high: bool, neg: bool, as_float: bool):
    if not isinstance(op, Reg):
        if high:
            raise Unsupported(f"packed source {op}: the high half of an inline constant is not emulated")
        return cx.vread_f(op, neg=neg) if as_float else cx.vread(op)
    if op.count != 2 or op.kind not in "vs":
        raise Unsupported(f"packed source {op} (register pairs or inline constants only)")
    part = op.sub(1 if high else 0)
    if as_float:
        return cx.vread_f(part, neg=neg)
    return cx.vread(part)


def _dest(cx, ins):
    d = ins.operands[0]
    if not (isinstance(d, Reg) and d.kind == "v" and d.count == 2):
        raise Unsupported(f"packed destination {d}")
    return d.sub(0), d.sub(1)


_ARITH = {"v_pk_fma_f32": 3, "v_pk_mul_f32": 2, "v_pk_add_f32": 2}


@handles(*_ARITH)
def _pk_arith(ins, cx):
    n = _ARITH[ins.opcode]
    if ins.modifier("neg") or ins.modifier("abs"):
        raise Unsupported("abs/neg source syntax on a packed operation (use neg_lo/neg_hi)")
    op_sel, op_sel_hi = ins.modifier("op_sel", 0) or 0, ins.modifier("op_sel_hi", (1 << n) - 1)
    neg_lo, neg_hi = ins.modifier("neg_lo", 0) or 0, ins.modifier("neg_hi", 0) or 0
    srcs = ins.operands[1:1 + n]
    lo = [_half(cx, s, bool(op_sel >> i & 1), bool(neg_lo >> i & 1), True) for i, s in enumerate(srcs)]
    hi = [_half(cx, s, bool(op_sel_hi >> i & 1), bool(neg_hi >> i & 1), True) for i, s in enumerate(srcs)]
    d_lo, d_hi = _dest(cx, ins)
    w_lo, w_hi = cx.vwrite_f(d_lo, ins), cx.vwrite_f(d_hi, ins)
    denormals = not cx.flush_f32
    if ins.opcode == "v_pk_fma_f32":
        def compute(r, w):
            return fma_f32(r[0](w), r[1](w), r[2](w), denormals)
    elif ins.opcode == "v_pk_mul_f32":
        def compute(r, w):
            return r[0](w) * r[1](w)
    else:
        def compute(r, w):
            return r[0](w) + r[1](w)

    def run(w):
        a, b = compute(lo, w), compute(hi, w)      # both halves read before either is written
        w_lo(w, a)
        w_hi(w, b)
    # the halves op_sel/op_sel_hi select are the registers read (strict mode checks those, not the pairs)
    run.exact_srcs = [s.sub(bit) for i, s in enumerate(srcs) if isinstance(s, Reg)
                      for bit in {op_sel >> i & 1, op_sel_hi >> i & 1}]
    return run


@handles("v_pk_mov_b32")
def _pk_mov(ins, cx):
    op_sel = ins.modifier("op_sel", 0) or 0
    a = _half(cx, ins.operands[1], bool(op_sel & 1), False, False)
    b = _half(cx, ins.operands[2], bool(op_sel & 2), False, False)
    d_lo, d_hi = _dest(cx, ins)
    w_lo, w_hi = cx.vwrite(d_lo), cx.vwrite(d_hi)

    def run(w):
        x, y = a(w), b(w)
        x = x.copy() if isinstance(x, np.ndarray) else x
        y = y.copy() if isinstance(y, np.ndarray) else y
        w_lo(w, x)
        w_hi(w, y)
    run.exact_srcs = [s.sub(op_sel >> i & 1) for i, s in enumerate(ins.operands[1:3]) if isinstance(s, Reg)]
    return run
