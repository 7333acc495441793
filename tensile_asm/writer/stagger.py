"""StaggerU: each work-group starts its walk along K at a different DepthU step (by work-group id
along dim 0), wrapping around at the end of the unrolled iterations, so that work-groups running at
the same time hit different memory channels. The sum is the same; only the order of the K steps
changes. After the loop the offsets are back at the stagger start (``start_chunk``); the kernel moves
them to where the tail loop needs them.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.global_read import OperandTile, move
from tensile_asm.writer.prologue import EntryRegisters


@dataclass
class StaggerState:
    until_wrap: VReg                 # advances left before the offsets jump back to the start
    wrap_bytes: dict                 # operand -> SGPR: the advance that wraps (increment - all unrolled iterations)
    iterations: VReg                 # iterations the start is staggered by


def setup(ctx: KernelContext, regs: EntryRegisters, ops: list[OperandTile], loop_iters: VReg) -> tuple[Module, StaggerState]:
    g = ctx.geometry
    m = Module(f"StaggerU {g.stagger_u}")
    stagger, amount = ctx.sgpr("StaggerUIter"), ctx.sgpr("StaggerBytes")
    state = StaggerState(ctx.sgpr("StaggerUntilWrap"), {}, stagger)
    m.add(ctx.inst("s_and_b32", stagger, regs.workgroup[0], g.stagger_u - 1))
    if g.stagger_stride_shift:
        m.add(ctx.inst("s_lshl_b32", stagger, stagger, g.stagger_stride_shift))
    m.add(ctx.inst("s_cmp_ge_u32", stagger, loop_iters),
          ctx.inst("s_cselect_b32", stagger, 0, stagger, comment="no stagger past the unrolled iterations"),
          ctx.inst("s_sub_u32", state.until_wrap, loop_iters, stagger))
    for op in ops:
        wrap = ctx.sgpr(f"StaggerWrapBytes{op.name}")
        state.wrap_bytes[op.name] = wrap
        m.add(ctx.inst("s_mul_i32", wrap, loop_iters, op.increment),
              ctx.inst("s_sub_u32", wrap, op.increment, wrap, comment="the advance that wraps to the start"),
              ctx.inst("s_mul_i32", amount, stagger, op.increment),
              move(ctx, op, amount))
    return m, state


def advance(ctx: KernelContext, ops: list[OperandTile], state: StaggerState) -> Module:
    """Advance every load's offset one iteration along K; at the end of the unrolled range, back to its start.
    Branch-free, as Tensile's (KernelWriterAssembly.globalReadIncrement: s_cselect of the increment): the
    countdown picks each operand's increment or its wrapping advance, then one add per offset."""
    m = Module("advance along K, StaggerU wrap")
    m.add(ctx.inst("s_sub_u32", state.until_wrap, state.until_wrap, 1),
          ctx.inst("s_cmp_eq_u32", state.until_wrap, 0, comment="the last unrolled step: wrap to the start"))
    incs = {op.name: ctx.sgpr(f"StaggerInc{op.name}") for op in ops}
    for op in ops:
        m.add(ctx.inst("s_cselect_b32", incs[op.name], state.wrap_bytes[op.name], op.increment))
    for op in ops:
        m.add(move(ctx, op, incs[op.name]))
    return m
