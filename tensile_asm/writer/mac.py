"""The VALU multiply-accumulate of one K-slice: ThreadTile0 x ThreadTile1 fused multiply-adds.

Accumulator element (i, j) of the thread tile lives in ValuC[i + j*ThreadTile0], Tensile's order.
Architectures with ``v_fmac_f32`` (VOP2, two sources and an accumulator) use it; the others use the
three-source VOP3 ``v_fma_f32`` with the accumulator as both addend and destination: same rounding.
Complex types (C, Z) hold each element as a (real, imaginary) register pair (pairs of pairs for Z) and multiply
with four real multiply-adds per product, signs flipped for conjugated A/B as Tensile's MAC_F32C/MAC_F64C.
MACInstruction MAD (``MAC`` in older logic files) is Tensile's ``v_mac_f32``: the product is rounded to
fp32 before the add (unfused), in the fp32 MACs and the store's beta*C (Tensile's ``_v_mac_f32`` macro).
"""

from __future__ import annotations

from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.local_memory import LocalReadState, widen_reads


def accumulators(ctx: KernelContext) -> VReg:
    g = ctx.geometry
    return VReg("v", g.tt0 * g.tt1 * g.acc_regs, "ValuC", align=ctx.arch.vgpr["tuple_alignment"])


def element(ctx: KernelContext, values: VReg, index: int):
    """Element ``index`` of a register run of accumulator-typed elements (one or two registers each)."""
    r = ctx.geometry.acc_regs
    return values.slice(index * r, r)


def elements(ctx: KernelContext, values: VReg, n: int) -> list:
    """``element(ctx, values, i)`` for i < n, made once per kernel (``KernelContext.elements``)."""
    got = ctx.elements.get(values)
    if got is None or len(got) < n:
        got = ctx.elements[values] = [element(ctx, values, i) for i in range(n)]
    return got


def zero_accumulators(ctx: KernelContext, acc: VReg) -> Module:
    m = Module("zero the accumulators")
    for r in range(acc.count):
        m.add(ctx.inst("v_mov_b32", acc[r], 0))
    return m


def unfused(ctx: KernelContext) -> bool:
    """MACInstruction MAD: the kernel's fp32 multiply-adds are v_mac_f32 (product rounded, then the sum)."""
    return ctx.geometry is not None and not ctx.geometry.derived.fused_mac


def fma(ctx: KernelContext, acc, a, b, fused: bool = True, neg_a: bool = False, neg_b: bool = False):
    """acc += a * b with one rounding, in the form the architecture has (fp64 when acc is a pair); not
    ``fused``: fp32 ``v_mac_f32``, rounding the product first (MACInstruction MAD). ``neg_a``/``neg_b``:
    that source enters negated (a VOP3 source modifier; the complex products' signs)."""
    mods = [("neg", (2 if neg_a else 0) | (4 if neg_b else 0))] if neg_a or neg_b else ()
    form = fma_form(ctx, acc.count, fused)
    if form is None:            # int32: acc += a*b, wrapping (b is clobbered)
        return Module("int32 multiply-add").add(ctx.inst("v_mul_lo_u32", b, a, b), ctx.inst("v_add_u32", acc, acc, b))
    opcode, addend = form
    if addend:
        return ctx.inst(opcode, acc, a, b, acc, mods=mods)
    return ctx.inst(opcode, acc, a, b, mods=mods)


def fma_form(ctx: KernelContext, count: int, fused: bool = True) -> tuple | None:
    """(opcode, whether the accumulator is also its third source) of ``fma`` on an accumulator of ``count``
    registers; None for int32 (a multiply and an add)."""
    if count == 2:
        return "v_fma_f64", True
    if ctx.geometry is not None and ctx.geometry.integer:
        return None
    if not fused:
        return "v_mac_f32", False
    if ctx.arch.instructions.get("fmac_f32"):
        return "v_fmac_f32", False
    return "v_fma_f32", True


def parts(ctx: KernelContext, value) -> tuple:
    """(real, imaginary) registers of one complex element (fp32 parts for C, fp64 pairs for Z)."""
    r = ctx.geometry.part_regs
    take = value.slice if isinstance(value, VReg) else value.sub
    return take(0, r), take(r, r)


def complex_products(conjugate_a: bool, conjugate_b: bool) -> tuple:
    """acc += a*b for complex a, b (either conjugated) as four real multiply-adds, in Tensile's order
    (MAC_F32C / MAC_F64C): (acc part, a part, b part, negate a, negate b), parts 0 real and 1 imaginary.
    re += ar*br; re -= ai*bi (+ when exactly one is conjugated); im += ar*bi (- with B conjugated);
    im += ai*br (- with A conjugated)."""
    return ((0, 0, 0, False, False),
            (0, 1, 1, conjugate_a == conjugate_b, False),
            (1, 0, 1, False, conjugate_b),
            (1, 1, 0, conjugate_a, False))


def mac_step(ctx: KernelContext, acc: VReg, state: LocalReadState, regset: int = 0) -> Module:
    """The multiply-adds of one K-slice from register set ``regset``: the same for every slice (and every copy of
    the loop) of that set, written once per kernel and repeated (``InstructionSet.repeat``)."""
    a, b = state.values_a[regset], state.values_b[regset]
    key = ("mac_step", acc, a, b, state.raw_a[regset] if state.raw_a else None,
           state.raw_b[regset] if state.raw_b else None)
    done = ctx.written.get(key)
    if done is not None:
        return ctx.isa.repeat(done)
    m = ctx.written[key] = _mac_step(ctx, acc, state, regset)
    return m


def _mac_step(ctx: KernelContext, acc: VReg, state: LocalReadState, regset: int) -> Module:
    g = ctx.geometry
    a, b = state.values_a[regset], state.values_b[regset]
    m = Module(f"MAC {g.tt0}x{g.tt1}")
    if g.valu_narrow_lds:   # 16-bit A/B read as they are in LDS: widened here, once their reads have landed
        m.add(widen_reads(ctx, state, regset))
    if g.integer:   # Int8x4: four int8 products summed into the int32 accumulator, wrapping
        for j in range(g.tt1):
            for i in range(g.tt0):
                m.add(ctx.inst("v_dot4_i32_i8", element(ctx, acc, i + j * g.tt0), element(ctx, a, i),
                               element(ctx, b, j), element(ctx, acc, i + j * g.tt0)))
        return m
    fused = not unfused(ctx)
    if g.complex:   # Tensile's order: each of the four real products over the whole thread tile in turn
        pt = g.problem_type
        for c, p, q, neg_a, neg_b in complex_products(pt.complex_conjugate_a, pt.complex_conjugate_b):
            for j in range(g.tt1):
                for i in range(g.tt0):
                    m.add(fma(ctx, parts(ctx, element(ctx, acc, i + j * g.tt0))[c], parts(ctx, element(ctx, a, i))[p],
                              parts(ctx, element(ctx, b, j))[q], fused, neg_a, neg_b))
        return m
    ea, eb, ec = elements(ctx, a, g.tt0), elements(ctx, b, g.tt1), elements(ctx, acc, g.tt0 * g.tt1)
    form = fma_form(ctx, ec[0].count, fused)
    if form is None:
        for j in range(g.tt1):
            for i in range(g.tt0):
                m.add(fma(ctx, ec[i + j * g.tt0], ea[i], eb[j], fused))
        return m
    opcode, addend = form             # fma's instruction, made here without its per-call choice (the hot loop)
    new, out, tt0 = ctx.isa.inst, m.items, g.tt0
    for j in range(g.tt1):
        bj = eb[j]
        for i in range(tt0):
            c = ec[i + j * tt0]
            out.append(new(opcode, c, ea[i], bj, c) if addend else new(opcode, c, ea[i], bj))
    return m
