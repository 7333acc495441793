"""IEEE division helpers that compilers emit for ``a / b`` (``v_div_scale``, ``v_div_fmas``,
``v_div_fixup``, fp32 and fp64) and gfx940's ``v_lshl_add_u64``.

Semantics follow the pseudocode of the CDNA3 ISA guide. ``v_div_scale`` returns its first source
unchanged (and VCC clear) unless the quotient or the denominator's reciprocal would leave the normal
range, in which case it scales by 2**64 (fp32) / 2**128 (fp64) and sets VCC; ``v_div_fmas`` is an
FMA that undoes that scaling when VCC is set (by the sign of the third source's exponent);
``v_div_fixup`` produces the special results (0/0, inf/inf, x/0, x/inf, NaN) and otherwise returns
the quotient estimate with the right sign. The scaled paths are implemented from the guide but
are not exercised by the fixtures (their data stays in the normal range).
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable
from tensile_asm.emulator.state import VCC_HI, VCC_LO
from tensile_asm.emulator.vector.float32 import fma_f32
from tensile_asm.emulator.vector.float64_packed16 import f64_src

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

F32, F64, U32, U64 = np.float32, np.float64, np.uint32, np.uint64
_P = {"f32": (F32, 64, 126, 23, 255), "f64": (F64, 128, 1022, 52, 2047)}   # type, scale, emax, mant, exp_all1


def _exponent(x, kind):
    if kind == "f32":
        return ((np.asarray(x, F32).view(U32) >> U32(23)) & U32(0xFF)).astype(np.int64)
    return ((np.asarray(x, F64).view(U64) >> U64(52)) & U64(0x7FF)).astype(np.int64)


def _src(cx, ins, index, kind):
    if kind == "f32":
        return cx.fsrc(ins, index)
    return f64_src(cx, ins, index)


def _dest(cx, ins, kind):
    if kind == "f32":
        wr = cx.vwrite(ins.operands[0])
        return lambda w, x: wr(w, np.broadcast_to(np.asarray(x, F32), (w.lanes,)).view(U32))
    wr = cx.vwrite64(ins.operands[0])
    return lambda w, x: wr(w, np.broadcast_to(np.asarray(x, F64), (w.lanes,)).view(U64))


def div_scale(s0, s1, s2, kind):
    """(result, vcc) of v_div_scale: s1 is the denominator, s2 the numerator."""
    t, scale, _, mant, _ = _P[kind]
    s0, s1, s2 = (np.broadcast_to(np.asarray(x, t), np.broadcast(s0, s1, s2).shape) for x in (s0, s1, s2))
    tiny = np.finfo(t).tiny
    with np.errstate(all="ignore"):
        inv, quo = t(1) / s1, s2 / s1
    is_den = lambda x: (x != 0) & (np.abs(x) < tiny)
    e1, e2 = _exponent(s1, kind), _exponent(s2, kind)
    d = s0.copy()
    vcc = np.zeros(d.shape, bool)
    up, down = np.ldexp(s0, scale).astype(t), np.ldexp(s0, -scale).astype(t)
    zero = (s1 == 0) | (s2 == 0)
    c1 = ~zero & (e2 - e1 >= (96 if kind == "f32" else 768))
    c2 = ~zero & ~c1 & is_den(s1)
    c3 = ~zero & ~c1 & ~c2 & is_den(inv) & is_den(quo)
    c4 = ~zero & ~c1 & ~c2 & ~c3 & is_den(inv)
    c5 = ~zero & ~c1 & ~c2 & ~c3 & ~c4 & is_den(quo)
    c6 = ~zero & ~c1 & ~c2 & ~c3 & ~c4 & ~c5 & (e2 <= mant)
    d = np.where(zero, t(np.nan), d)
    d = np.where((c1 | c3) & (s0 == s1), up, d)
    d = np.where(c2 | c6, up, d)
    d = np.where(c4, down, d)
    d = np.where(c5 & (s0 == s2), up, d)
    vcc = c1 | c3 | c5
    return d, vcc


def div_fixup(q, den, num, kind):
    t = _P[kind][0]
    q, den, num = (np.asarray(x, t) for x in (q, den, num))
    sign = np.signbit(den) ^ np.signbit(num)
    inf, zero = np.where(sign, -np.inf, np.inf).astype(t), np.where(sign, t(-0.0), t(0.0)).astype(t)
    out = np.where(sign, -np.abs(q), np.abs(q)).astype(t)
    out = np.where((np.abs(den) == np.inf) | (num == 0), zero, out)
    out = np.where((den == 0) | (np.abs(num) == np.inf), inf, out)
    out = np.where(((den == 0) & (num == 0)) | ((np.abs(den) == np.inf) & (np.abs(num) == np.inf)), t(np.nan), out)
    out = np.where(np.isnan(den), den, out)
    out = np.where(np.isnan(num), num, out)
    return out


@handles("v_div_scale_f32", "v_div_scale_f64")
def _div_scale(ins, cx):
    kind = ins.opcode[-3:]
    s = [_src(cx, ins, i, kind) for i in (2, 3, 4)]
    wr, vcc = _dest(cx, ins, kind), cx.mask_write(ins.operands[1])

    def run(w):
        d, v = div_scale(*(np.broadcast_to(x(w), (w.lanes,)) for x in s), kind)
        wr(w, d)
        vcc(w, v)
    return run


@handles("v_div_fmas_f32", "v_div_fmas_f64")
def _div_fmas(ins, cx):
    kind = ins.opcode[-3:]
    t, scale, emax, _, _ = _P[kind]
    a, b, c = (_src(cx, ins, i, kind) for i in (1, 2, 3))
    wr = _dest(cx, ins, kind)
    lanes = cx.lanes

    def run(w):
        x, y, z = a(w), b(w), c(w)
        r = fma_f32(x, y, z) if kind == "f32" else np.asarray(x, F64) * y + z
        r = np.broadcast_to(np.asarray(r, t), (lanes,))
        vcc = (w.s[VCC_LO] | w.s[VCC_HI] << 32)
        if vcc:
            sel = np.asarray([(vcc >> i) & 1 for i in range(lanes)], bool)
            big = np.broadcast_to(_exponent(z, kind) > emax + 1, (lanes,))
            r = np.where(sel, np.where(big, np.ldexp(r, scale), np.ldexp(r, -scale)).astype(t), r)
        wr(w, r)
    run.extra_srcs = (VCC_LO, VCC_HI)
    run.lane_bound = True
    return run


@handles("v_div_fixup_f32", "v_div_fixup_f64")
def _div_fixup(ins, cx):
    kind = ins.opcode[-3:]
    q, den, num = (_src(cx, ins, i, kind) for i in (1, 2, 3))
    wr = _dest(cx, ins, kind)
    return lambda w: wr(w, div_fixup(q(w), den(w), num(w), kind))


@handles("v_lshl_add_u64")
def _lshl_add_u64(ins, cx):
    """D = (S0 << S1[2:0]) + S2 on 64-bit values (gfx940+)."""
    a, sh, c = cx.vread64(ins.operands[1]), cx.vread(ins.operands[2]), cx.vread64(ins.operands[3])
    wr = cx.vwrite64(ins.operands[0])

    def run(w):
        s = np.asarray(sh(w), U64) & U64(7)
        wr(w, np.broadcast_to((np.asarray(a(w), U64) << s) + np.asarray(c(w), U64), (w.lanes,)))
    return run


__all__ = ["div_fixup", "div_scale"]
