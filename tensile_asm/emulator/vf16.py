"""16-bit (non-packed) fp16 VALU: ``v_add/sub/subrev/mul/max/min_f16`` (VOP2 or VOP3) and
``v_fma_f16``/``v_mad_f16`` (VOP3), with the VOP3 ``op_sel`` of gfx9 (bit i < n: source i reads its
high half; bit 3: the result goes to the destination's high half) and abs/neg source modifiers.

High 16 bits of the destination (gfx9, as LLVM's ``GCNSubtarget::zeroesHigh16BitsOfDest``
describes it): the VOP1/VOP2-style operations write 0 there, while ``v_fma_f16``/``v_mad_f16``
keep the destination's other half; with ``op_sel`` bit 3 the result goes to the high half and the
low half is kept. Kept halves are reads of the destination (strict mode checks them).

Results are computed in fp64 (exact for a product of two fp16 plus an fp16, so ``v_fma_f16`` rounds
once) and rounded to fp16; ``v_mad_f16`` rounds the product to fp16 first. Denormals are kept.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import Unsupported, handles, reg_keys
from tensile_asm.isa.registers import Reg

F16, F64, U32 = np.float16, np.float64, np.uint32

_BINARY = {"v_add_f16": lambda a, b: a + b, "v_sub_f16": lambda a, b: a - b,
           "v_subrev_f16": lambda a, b: b - a, "v_mul_f16": lambda a, b: a * b,
           "v_max_f16": np.fmax, "v_min_f16": np.fmin}
_TERNARY = {"v_fma_f16": lambda a, b, c: a * b + c,
            "v_mad_f16": lambda a, b, c: (a * b).astype(F16).astype(F64) + c}
_PRESERVES_HIGH = frozenset(_TERNARY)


def _src(cx, ins, index, high):
    rd = cx.vread(ins.operands[index])
    neg, absm = cx.src_mod(ins, index)
    shift = U32(16 if high else 0)

    def get(w):
        x = (np.asarray(rd(w), U32) >> shift) & U32(0xFFFF)
        v = x.astype(np.uint16).view(F16).astype(F64)
        if absm:
            v = np.abs(v)
        return -v if neg else v
    return get


def _bits(x):
    return np.asarray(x).astype(F16).view(np.uint16).astype(U32)


@handles(*_BINARY, *_TERNARY)
def _f16(ins, cx):
    n = 3 if ins.opcode in _TERNARY else 2
    fn = _TERNARY.get(ins.opcode) or _BINARY[ins.opcode]
    for m, _ in ins.modifiers:
        if m not in ("op_sel", "neg", "abs", "clamp"):
            raise Unsupported(f"modifier {m} on {ins.opcode}")
    dst = ins.operands[0]
    if not (isinstance(dst, Reg) and dst.kind == "v"):
        raise Unsupported(f"destination {dst}")
    op_sel = ins.modifier("op_sel", 0) or 0
    srcs = [_src(cx, ins, i + 1, bool(op_sel >> i & 1)) for i in range(n)]
    clamp = ins.has_modifier("clamp")
    d = dst.index
    to_high = bool(op_sel >> 3 & 1)
    keep = to_high or ins.opcode in _PRESERVES_HIGH
    keep_mask = U32(0x0000FFFF if to_high else 0xFFFF0000)
    shift = U32(16 if to_high else 0)
    wr = cx.vwrite(dst)

    def run(w):
        r = fn(*(s(w) for s in srcs))
        if clamp:
            r = np.clip(r, 0.0, 1.0)
        bits = np.broadcast_to(_bits(r) << shift, (w.lanes,))
        if keep:
            bits = bits | (w.v[d] & keep_mask)
        wr(w, bits)
    if keep:
        run.extra_srcs = reg_keys(dst)
    return run


__all__: list = []
