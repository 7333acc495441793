"""Complex (C, Z) matrix-core kernels: a complex product as four real MFMAs, as Tensile 4.44's mfmaIter.

The fp32 (C) and fp64 (Z) MFMAs take one value per lane (v_mfma_f32_16x16x4f32, v_mfma_f64_16x16x4f64, ...:
MatrixInstK values of K over the lanes, ``MfmaShape.values_per_lane`` 1), so a lane's operand of one wave
output is one complex element read from LDS, its real part then its imaginary part (one register each for
C, a pair each for Z): the real MFMA takes either part as its A or B operand. The accumulators come in two
sets of the real layout (mfma.MfmaPlan.parts 2): the real parts of every output, then the imaginary parts
(Tensile's AccVgprImagNumOffset), so each MFMA accumulates one part of one output:

    Cr += Ar*Br;   Ci += (-)Ai*Br;   Cr += (-)Ai*Bi;   Ci += (-)Ar*Bi

in Tensile's order. The signs: (ar + i*ai)(br + i*bi) has Cr -= ai*bi; conjugating A (AlikC) flips ai,
conjugating B flips bi. So Ai*Br is negated with A conjugated, Ai*Bi when A and B are conjugated alike
(neither or both), Ar*Bi with B conjugated. The MFMAs have no negation of a source, so the negated A parts
are computed once per K-step into registers of their own (Tensile's ``v_add -x, 0``; here ``-x + 0`` too:
only a zero's sign differs from x's, which the sum never shows). SourceSwap swaps the two sources of each
MFMA as for real types (mfma.mfma_step): each output is computed transposed, the products are the same.
"""

from __future__ import annotations

from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer.context import Geometry, KernelContext


def complex_reason(g: Geometry, shape) -> str | None:
    """Why a complex MFMA solution cannot be built (None if it can)."""
    if shape.values_per_lane != 1:
        return (f"MatrixInstruction {list(g.matrix_instruction)} with data type {g.data_type}: the complex MFMA "
                f"writer needs one A/B value per lane (fp32/fp64 MFMAs), not {shape.values_per_lane}")
    return None


def signs(conjugate_a: bool, conjugate_b: bool) -> tuple[tuple[int, int, int, bool], ...]:
    """The four real MFMAs of acc += a*b in Tensile's order: (accumulator part, A part, B part, A negated),
    parts 0 real and 1 imaginary."""
    return ((0, 0, 0, False),
            (1, 1, 0, conjugate_a),
            (0, 1, 1, conjugate_a == conjugate_b),
            (1, 0, 1, conjugate_b))


def _negated(ctx: KernelContext, values: VReg, tiles: int, part: int, name: str) -> tuple[Module, VReg]:
    """-(part ``part`` of A's value of each wave output), one part (1 or 2 registers) per output."""
    r = ctx.geometry.part_regs
    neg = VReg("v", tiles * r, name, align=ctx.arch.vgpr["tuple_alignment"] if r > 1 else 1)
    m = Module(f"negate the {'imaginary' if part else 'real'} parts of A")
    op = "v_add_f64" if r == 2 else "v_add_f32"
    for t in range(tiles):
        m.add(ctx.inst(op, neg.slice(t * r, r), values.slice((2 * t + part) * r, r), 0, mods=[("neg", 2)],
                       comment="-A part + 0"))
    return m, neg


def complex_step(ctx: KernelContext, p, acc: VReg, values_a: VReg, values_b: VReg) -> Module:
    """One K-step of a complex kernel: four MFMAs per wave output (module docstring)."""
    from tensile_asm.writer.mfma import output_acc
    g, s = ctx.geometry, p.shape
    r = g.part_regs
    wt0, wt1 = p.wave_tile
    pt = g.problem_type
    terms = signs(pt.complex_conjugate_a, pt.complex_conjugate_b)
    m = Module(f"complex MFMA {s.opcode} x 4 x {wt0}x{wt1}")
    negated = {}
    for _, part_a, _, neg in terms:
        if neg and part_a not in negated:
            mod, negated[part_a] = _negated(ctx, values_a, wt0, part_a, f"MfmaNegA{'ir'[part_a == 0]}")
            m.add(mod)

    def part(values: VReg, t: int, which: int) -> VReg:
        return values.slice((2 * t + which) * r, r)

    for t1 in range(wt1):
        for t0 in range(wt0):
            for part_acc, part_a, part_b, neg in terms:
                out = output_acc(p, acc, t0, t1, part_acc)
                a = negated[part_a].slice(t0 * r, r) if neg else part(values_a, t0, part_a)
                b = part(values_b, t1, part_b)
                m.add(ctx.inst(s.opcode, out, *((b, a) if p.swap else (a, b)), out))
    return m
