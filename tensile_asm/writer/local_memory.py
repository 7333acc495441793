"""LDS staging: write the loaded tiles, and read one K-slice of the thread tile per MAC step.

LDS layout: A's tile as DepthU rows of MT0 elements, then B's as DepthU rows of MT1. With
VectorWidth 1 a thread's tile elements are SubGroup apart (Tensile's layout), so thread (t0, t1)
reads A[k][t0 + i*SG0] and B[k][t1 + j*SG1]; the element offsets become instruction offsets.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.isa.instruction import inst
from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.global_read import OperandTile
from tensile_asm.writer.prologue import EntryRegisters


def local_writes(ctx: KernelContext, op: OperandTile) -> Module:
    m = Module(f"local write {op.name}")
    for addr, data in zip(op.lds_addresses, op.data):
        m.add(inst("ds_write_b32", addr, data))
    return m


@dataclass
class LocalReadState:
    address_a: VReg
    address_b: VReg
    values_a: VReg        # ThreadTile0 registers
    values_b: VReg        # ThreadTile1 registers


def local_read_setup(ctx: KernelContext, regs: EntryRegisters) -> tuple[Module, LocalReadState]:
    g = ctx.geometry
    bpe_shift = g.bytes_per_element.bit_length() - 1
    state = LocalReadState(ctx.vgpr("LocalReadAddrA"), ctx.vgpr("LocalReadAddrB"),
                           VReg("v", g.tt0, "ValuA"), VReg("v", g.tt1, "ValuB"))
    m = Module("local read addresses")
    m.add(inst("v_lshlrev_b32", state.address_a, bpe_shift, regs.tid0),
          inst("v_lshlrev_b32", state.address_b, bpe_shift, regs.tid1),
          inst("v_add_u32", state.address_b, g.lds_offset_b, state.address_b))
    return m, state


def local_reads(ctx: KernelContext, state: LocalReadState, u: int) -> Module:
    """Read the thread tile's A and B values of K-slice ``u`` of the unrolled loop."""
    g = ctx.geometry
    bpe = g.bytes_per_element
    m = Module(f"local read k={u}")
    for i in range(g.tt0):
        m.add(inst("ds_read_b32", state.values_a[i], state.address_a, mods=[("offset", (u * g.mt0 + i * g.wg0) * bpe)]))
    for j in range(g.tt1):
        m.add(inst("ds_read_b32", state.values_b[j], state.address_b, mods=[("offset", (u * g.mt1 + j * g.wg1) * bpe)]))
    return m
