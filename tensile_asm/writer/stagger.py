"""StaggerU: each work-group starts its walk along K at a different DepthU step, wrapping around at the
end of the unrolled iterations, so that work-groups running at the same time hit different memory
channels. The sum is the same; only the order of the K steps changes. After the loop the offsets are
back at the stagger start (``start_chunk``); the kernel moves them to where the tail loop needs them.

The start is Tensile 4.44's (KernelWriterAssembly.declareStaggerParms): StaggerUIter = OrigStaggerUIter
(the host's mask, ``gemm.arguments.stagger_u_iterations``) & the StaggerUMapping coordinate of the tile,
shifted by StaggerStrideShift: 0 the tile's column wg0, 1 its row wg1 (both after WorkGroupMapping and the
GlobalSplitU split), 2 the batch wg2, 3 the serial wg0 + wg1*nwg0 + wg2*nwg0*nwg1, 4 the whole mask. A
start past the unrolled iterations (a host that passed a larger mask) starts at 0.
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


def stagger_coordinate(ctx: KernelContext, regs: EntryRegisters, out: VReg) -> Module:
    """``out`` = the tile coordinate StaggerUMapping picks (4: all ones, the whole mask)."""
    g = ctx.geometry
    mapping = g.stagger_u_mapping
    m = Module(f"StaggerUMapping {mapping}")
    if mapping == 0:
        return m.add(ctx.inst("s_mov_b32", out, regs.tile0))
    if mapping == 1:
        return m.add(ctx.inst("s_mov_b32", out, regs.tile1))
    if mapping == 4:
        return m.add(ctx.inst("s_mov_b32", out, -1))
    if len(regs.workgroup) < 3:
        raise ValueError(f"StaggerUMapping {mapping} reads the batch coordinate; the problem has no batch index")
    if mapping == 2:
        return m.add(ctx.inst("s_mov_b32", out, regs.workgroup[2]))
    if mapping == 3:
        tmp = ctx.sgpr("StaggerSerialTmp")
        return m.add(ctx.inst("s_mul_i32", out, regs.arg("NumWorkGroups0"), regs.arg("NumWorkGroups1")),
                     ctx.inst("s_mul_i32", out, out, regs.workgroup[2]),
                     ctx.inst("s_mul_i32", tmp, regs.arg("NumWorkGroups0"), regs.tile1),
                     ctx.inst("s_add_u32", out, out, tmp),
                     ctx.inst("s_add_u32", out, out, regs.tile0, comment="wg0 + wg1*nwg0 + wg2*nwg0*nwg1"))
    raise ValueError(f"StaggerUMapping {mapping} is not one of Tensile's 0..4")


def setup(ctx: KernelContext, regs: EntryRegisters, ops: list[OperandTile], loop_iters: VReg) -> tuple[Module, StaggerState]:
    g = ctx.geometry
    m = Module(f"StaggerU {g.stagger_u}")
    stagger, amount = ctx.sgpr("StaggerUIter"), ctx.sgpr("StaggerBytes")
    state = StaggerState(ctx.sgpr("StaggerUntilWrap"), {}, stagger)
    m.add(stagger_coordinate(ctx, regs, stagger),
          ctx.inst("s_and_b32", stagger, stagger, regs.arg("OrigStaggerUIter"), comment="StaggerUIter"))
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
    return advance_split(ctx, ops, state, ())[0]


def advance_split(ctx: KernelContext, ops: list[OperandTile], state: StaggerState, later) -> tuple[Module, Module]:
    """``advance``, with the moves of the operands ``later`` (DirectToVgpr operands loaded after the MFMAs,
    kernel.py) in a second Module: their increments are picked with the others', the adds come after their loads."""
    m = Module("advance along K, StaggerU wrap")
    m.add(ctx.inst("s_sub_u32", state.until_wrap, state.until_wrap, 1),
          ctx.inst("s_cmp_eq_u32", state.until_wrap, 0, comment="the last unrolled step: wrap to the start"))
    incs = {op.name: ctx.sgpr(f"StaggerInc{op.name}") for op in ops}
    for op in ops:
        m.add(ctx.inst("s_cselect_b32", incs[op.name], state.wrap_bytes[op.name], op.increment))
    late = {op.name for op in later}
    for op in ops:
        if op.name not in late:
            m.add(move(ctx, op, incs[op.name]))
    return m, Module("advance along K, StaggerU wrap (after the loads)").add(
        [move(ctx, op, incs[op.name]) for op in ops if op.name in late])
