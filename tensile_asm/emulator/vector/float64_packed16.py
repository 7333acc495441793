"""fp64 and fp16/bf16 VALU for DGEMM/HGEMM/BF16 kernels: ``v_fma_f64``/``v_fmac_f64``/``v_add_f64``/
``v_mul_f64``, packed fp16 (``v_pk_fma_f16``/``v_pk_add_f16``/``v_pk_mul_f16`` with op_sel/op_sel_hi/
neg_lo/neg_hi), mixed precision (``v_fma_mix_f32``/``v_fma_mixlo_f16``/``v_fma_mixhi_f16`` and gfx900's
``v_mad_mix*``, ``v_dot2_f32_f16``), and the bit shuffles used for bf16 (``v_pack_b32_f16``,
``v_perm_b32``).

Rounding: fp64 FMA rounds once (fma_f64.py: exact pieces and round-to-odd, exact integers for the
rare lanes outside its range). Packed fp16 results are computed in fp64 and rounded once (see float16.py for why that is the fused
result). ``v_fma_mix*`` use the single-rounding fp32 FMA of float32.py, ``v_mad_mix*`` round the
product to fp32 first; ``v_dot2_f32_f16`` sums in fp64 and rounds once. fp16/fp64 denormals are kept
(the fp16/fp64 denormal mode is not read).
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.emulator.vector.float32 import fma_f32
from tensile_asm.emulator.vector.fma_f64 import fma_f64
from tensile_asm.emulator.vector.operands16 import allow_modifiers, f16_bits, f16_of, half_bits, half_dest, op_sel
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

F16, F32, F64, U32, U64 = np.float16, np.float32, np.float64, np.uint32, np.uint64


def f64_src(cx, ins, index):
    """A 64-bit float source operand with its neg/abs modifiers, as a per-wave reader."""
    rd = cx.vread64(ins.operands[index])
    neg, absm = cx.src_mod(ins, index)

    def get(w):
        x = rd(w)
        x = x.view(F64) if isinstance(x, np.ndarray) else U64(x).view(F64)
        if absm:
            x = np.abs(x)
        return -x if neg else x
    return get


def _f64_dest(cx, ins):
    wr = cx.vwrite64(ins.operands[0])
    return lambda w, x: wr(w, np.broadcast_to(np.asarray(x, F64), (w.lanes,)).view(U64))


_F64 = {"v_add_f64": (2, lambda a, b: a + b), "v_mul_f64": (2, lambda a, b: a * b),
        "v_fma_f64": (3, fma_f64), "v_max_f64": (2, np.fmax), "v_min_f64": (2, np.fmin)}


@handles(*_F64)
def _f64_arith(ins, cx):
    n, fn = _F64[ins.opcode]
    srcs = [f64_src(cx, ins, i) for i in range(1, n + 1)]
    wr = _f64_dest(cx, ins)
    return lambda w: wr(w, fn(*(s(w) for s in srcs)))


@handles("v_fmac_f64")
def _fmac_f64(ins, cx):
    a, b = f64_src(cx, ins, 1), f64_src(cx, ins, 2)
    c = f64_src(cx, ins, 0)
    wr = _f64_dest(cx, ins)
    return lambda w: wr(w, fma_f64(a(w), b(w), c(w)))


# -- fp16 halves ---------------------------------------------------------------------------------

def _half(cx, op, high: bool, neg: bool, kind: str = "f16"):
    """One 16-bit half of a 32-bit source as float64 lanes (or scalar)."""
    rd = cx.vread(op)
    shift = 16 if high else 0

    def get(w):
        x = (np.asarray(rd(w), U32) >> U32(shift)) & U32(0xFFFF)
        v = (x.astype(np.uint16).view(F16).astype(F64) if kind == "f16"
             else (x << U32(16)).view(F32).astype(F64))
        return -v if neg else v
    return get


def _to_f16_bits(x):
    return np.asarray(x).astype(F16).view(np.uint16).astype(U32)


_PK16 = {"v_pk_fma_f16": 3, "v_pk_add_f16": 2, "v_pk_mul_f16": 2, "v_pk_max_f16": 2, "v_pk_min_f16": 2}


@handles(*_PK16)
def _pk_f16(ins, cx):
    n = _PK16[ins.opcode]
    if ins.has_modifier("clamp"):
        raise Unsupported("clamp on packed fp16")
    op_sel, op_sel_hi = ins.modifier("op_sel", 0) or 0, ins.modifier("op_sel_hi", (1 << n) - 1)
    neg_lo, neg_hi = ins.modifier("neg_lo", 0) or 0, ins.modifier("neg_hi", 0) or 0
    srcs = ins.operands[1:1 + n]
    lo = [_half(cx, s, bool(op_sel >> i & 1), bool(neg_lo >> i & 1)) for i, s in enumerate(srcs)]
    hi = [_half(cx, s, bool(op_sel_hi >> i & 1), bool(neg_hi >> i & 1)) for i, s in enumerate(srcs)]
    fn = {"v_pk_fma_f16": lambda a, b, c: a * b + c, "v_pk_add_f16": lambda a, b: a + b,
          "v_pk_mul_f16": lambda a, b: a * b, "v_pk_max_f16": np.fmax, "v_pk_min_f16": np.fmin}[ins.opcode]
    wr = cx.vwrite(ins.operands[0])

    def run(w):
        r_lo = _to_f16_bits(fn(*(s(w) for s in lo)))
        r_hi = _to_f16_bits(fn(*(s(w) for s in hi)))
        wr(w, np.broadcast_to(r_lo | (r_hi << U32(16)), (w.lanes,)))
    return run


_MIX = ("v_fma_mix_f32", "v_mad_mix_f32", "v_fma_mixlo_f16", "v_fma_mixhi_f16", "v_mad_mixlo_f16",
        "v_mad_mixhi_f16")


def _mix_sources(ins, cx):
    """Source i is fp16 when op_sel_hi bit i is set (its high half when op_sel bit i is), else fp32;
    abs/neg apply after the conversion (ISA V_MAD_MIX_F32: NEG_HI acts as abs for MIX opcodes)."""
    sel, sel_hi = op_sel(ins), ins.modifier("op_sel_hi", 0) or 0
    srcs = []
    for i in range(3):
        neg, absm = cx.src_mod(ins, i + 1)
        if sel_hi >> i & 1:
            h = half_bits(cx, ins, i + 1, bool(sel >> i & 1))
            f = (lambda h: lambda w: f16_of(h(w)).astype(F32))(h)
        else:
            if sel >> i & 1:
                raise Unsupported(f"op_sel bit {i} on an fp32 source of {ins.opcode}")
            f = cx.vread_f(ins.operands[i + 1])
        if absm:
            f = (lambda f: lambda w: np.abs(f(w)))(f)
        if neg:
            f = (lambda f: lambda w: -f(w))(f)
        srcs.append(f)
    return srcs


@handles(*_MIX)
def _mix(ins, cx):
    """``fma``: one fp32 rounding (float32.fma_f32). ``mad`` (gfx900): the product is rounded to fp32
    before the add, as v_mad_f32 (LLVM selects v_mad_mix* only for ``fmad``, the unfused multiply-add).
    The lo/hi forms convert that fp32 result to fp16 (ISA: f32_to_f16 of the fp32 expression; LLVM
    matches them to fpround of the fp32 fma), clamp after the conversion, and keep the other half."""
    allow_modifiers(ins, ("op_sel", "op_sel_hi", "neg", "abs", "clamp"))
    a, b, c = _mix_sources(ins, cx)
    denormals = not cx.flush_f32
    if ins.opcode.startswith("v_fma"):
        def value(w):
            return fma_f32(a(w), b(w), c(w), denormals)
    else:
        def value(w):
            return np.asarray(np.asarray(a(w) * b(w), F32) + c(w), F32)
    if ins.opcode.endswith("_f32"):
        wr = cx.vwrite_f(ins.operands[0], ins)
        return lambda w: wr(w, value(w))
    clamp = ins.has_modifier("clamp")
    write, extra = half_dest(cx, ins, to_high=ins.opcode.endswith("hi_f16"), keep_other=True)

    def run(w):
        with np.errstate(over="ignore"):
            r = np.asarray(value(w)).astype(F16).astype(F64)
        write(w, f16_bits(np.clip(r, 0.0, 1.0) if clamp else r))
    run.extra_srcs = extra
    return run


@handles("v_dot2_f32_f16", "v_dot2c_f32_f16")
def _dot2(ins, cx):
    d, s0, s1 = ins.operands[:3]
    neg_lo, neg_hi = ins.modifier("neg_lo", 0) or 0, ins.modifier("neg_hi", 0) or 0
    a0, a1 = _half(cx, s0, False, bool(neg_lo & 1)), _half(cx, s0, True, bool(neg_hi & 1))
    b0, b1 = _half(cx, s1, False, bool(neg_lo & 2)), _half(cx, s1, True, bool(neg_hi & 2))
    c = cx.vread_f(d) if ins.opcode == "v_dot2c_f32_f16" else cx.vread_f(ins.operands[3])
    wr = cx.vwrite_f(d, ins)
    return lambda w: wr(w, np.asarray(a0(w) * b0(w) + a1(w) * b1(w) + np.asarray(c(w), F64)).astype(F32))


@handles("v_pack_b32_f16")
def _pack(ins, cx):
    """D = {S1.f16, S0.f16}; op_sel bits 0/1 pick the sources' high halves; abs/neg act on the sign bits."""
    allow_modifiers(ins, ("op_sel", "neg", "abs"))
    sel = op_sel(ins)
    if sel & ~0b11:
        raise Unsupported(f"op_sel {sel:#b} on v_pack_b32_f16 (a destination half select on a 32-bit result)")
    halves = []
    for i in range(2):
        h = half_bits(cx, ins, i + 1, bool(sel >> i & 1))
        neg, absm = cx.src_mod(ins, i + 1)
        clear, flip = U32(0x7FFF if absm else 0xFFFF), U32(0x8000 if neg else 0)
        halves.append((lambda h, clear, flip: lambda w: (np.asarray(h(w), U32) & clear) ^ flip)(h, clear, flip))
    lo, hi = halves
    wr = cx.vwrite(ins.operands[0])
    return lambda w: wr(w, np.broadcast_to(lo(w) | (hi(w) << U32(16)), (w.lanes,)))


def _perm_bytes(s0, s1, sel):
    """v_perm_b32: byte i of the result from selector byte i of ``sel`` over {s0:s1} (s1 low)."""
    s0, s1, sel = (np.asarray(x, U64) for x in (s0, s1, sel))
    both = (s0 << U64(32)) | s1
    out = np.zeros(np.broadcast(s0, s1, sel).shape, U64)
    for i in range(4):
        b = (sel >> U64(8 * i)) & U64(0xFF)
        pick = (both >> (U64(8) * np.minimum(b, U64(7)))) & U64(0xFF)
        sign = lambda k: np.where((both >> U64(k)) & U64(1), U64(0xFF), U64(0))
        val = np.where(b < 8, pick,
              np.where(b == 8, sign(15), np.where(b == 9, sign(31), np.where(b == 10, sign(47),
              np.where(b == 11, sign(63), np.where(b == 12, U64(0), U64(0xFF)))))))
        out |= val << U64(8 * i)
    return out.astype(U32)


@handles("v_perm_b32")
def _perm(ins, cx):
    if ins.modifiers:
        raise Unsupported("modifiers on v_perm_b32")
    a, b, c = (cx.vread(o) for o in ins.operands[1:4])
    wr = cx.vwrite(ins.operands[0])
    return lambda w: wr(w, np.broadcast_to(_perm_bytes(a(w), b(w), c(w)), (w.lanes,)))


def _check_vgpr(op):
    if not (isinstance(op, Reg) and op.kind == "v"):
        raise Unsupported(f"{op} is not a VGPR")
