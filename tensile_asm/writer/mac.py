"""The VALU multiply-accumulate of one K-slice: ThreadTile0 x ThreadTile1 fused multiply-adds.

Accumulator element (i, j) of the thread tile lives in ValuC[i + j*ThreadTile0], Tensile's order.
"""

from __future__ import annotations

from tensile_asm.isa.instruction import inst
from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.local_memory import LocalReadState


def accumulators(ctx: KernelContext) -> VReg:
    g = ctx.geometry
    return VReg("v", g.tt0 * g.tt1, "ValuC", align=ctx.arch.vgpr["tuple_alignment"])


def zero_accumulators(ctx: KernelContext, acc: VReg) -> Module:
    m = Module("zero the accumulators")
    for r in range(acc.count):
        m.add(inst("v_mov_b32", acc[r], 0))
    return m


def mac_step(ctx: KernelContext, acc: VReg, state: LocalReadState) -> Module:
    g = ctx.geometry
    m = Module(f"MAC {g.tt0}x{g.tt1}")
    if not ctx.arch.instructions.get("fmac_f32"):
        raise NotImplementedError(f"{ctx.arch.name}: VALU MAC without v_fmac_f32")
    for j in range(g.tt1):
        for i in range(g.tt0):
            m.add(inst("v_fmac_f32", acc[i + j * g.tt0], state.values_a[i], state.values_b[j]))
    return m
