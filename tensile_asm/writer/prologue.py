"""Kernel entry: load the kernel arguments into SGPRs, name the hardware-initialised registers,
and split the flat thread index into the 2-D thread coordinates of the C tile.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.isa.instruction import inst, waitcnt
from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg, VRegRef
from tensile_asm.writer.arguments import Argument
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.divide import divmod_const

# SMEM loads: widest first; x4 and wider need a 4-aligned destination.
_SMEM_WIDTHS = ((16, "s_load_dwordx16"), (8, "s_load_dwordx8"), (4, "s_load_dwordx4"),
                (2, "s_load_dwordx2"), (1, "s_load_dword"))


@dataclass
class EntryRegisters:
    kernarg_ptr: VReg
    workgroup: list            # VRegs for workgroup id x, y[, z]
    serial: VReg               # flat work-item id (v0)
    args: dict                 # argument name -> VRegRef into the argument block
    tid0: VReg
    tid1: VReg

    def arg(self, name: str) -> VRegRef:
        return self.args[name]


def entry_registers(ctx: KernelContext, layout: list[Argument]) -> tuple[EntryRegisters, VReg]:
    num_wg = 3 if ctx.geometry.batched else 2
    kernarg_ptr = VReg("s", 2, "KernArgAddress", align=2, fixed=0)
    workgroup = [VReg("s", 1, f"WorkGroup{i}", fixed=2 + i) for i in range(num_wg)]
    serial = VReg("v", 1, "Serial", fixed=0)
    dwords = (layout[-1].offset + layout[-1].size + 3) // 4
    block = ctx.sgpr("KernArgs", dwords, align=4)
    args = {a.name: block.slice(a.offset // 4, a.size // 4) for a in layout}
    regs = EntryRegisters(kernarg_ptr, workgroup, serial, args, ctx.vgpr("Tid0"), ctx.vgpr("Tid1"))
    return regs, block


def load_arguments(ctx: KernelContext, regs: EntryRegisters, block: VReg) -> Module:
    m = Module("load kernel arguments")
    offset = 0
    while offset < block.count:
        remaining = block.count - offset
        for width, opcode in _SMEM_WIDTHS:
            if width <= remaining and offset % min(width, 4) == 0:
                break
        m.add(inst(opcode, block.slice(offset, width), regs.kernarg_ptr, offset * 4))
        offset += width
    m.add(waitcnt(lgkmcnt=0, comment="kernel arguments"))
    return m


def thread_coordinates(ctx: KernelContext, regs: EntryRegisters) -> Module:
    g = ctx.geometry
    m = Module("thread coordinates in the C tile")
    m.add(divmod_const(ctx, regs.tid1, regs.tid0, regs.serial, g.wg0, g.num_threads - 1))
    return m
