"""Kernel entry: load the kernel arguments into SGPRs, name the hardware-initialised registers,
and split the flat thread index into the 2-D thread coordinates of the C tile.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import VReg, VRegRef
from tensile_asm.gemm.arguments import Argument
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.divide import WORKGROUP_MAX, divmod_const, scalar_divmod

# SMEM loads: widest first; x4 and wider need a 4-aligned destination.
_SMEM_WIDTHS = ((16, "s_load_dwordx16"), (8, "s_load_dwordx8"), (4, "s_load_dwordx4"),
                (2, "s_load_dwordx2"), (1, "s_load_dword"))


@dataclass
class EntryRegisters:
    kernarg_ptr: VReg
    workgroup: list            # VRegs for workgroup id x, y[, z]
    serial: VReg               # flat work-item id (v0)
    args: dict                 # argument name -> VRegRef into the argument block
    tid0: VReg                 # thread's column in the SubGroup0 x SubGroup1 grid
    tid1: VReg
    split_group: VReg          # LocalSplitU group of the thread (0 when LocalSplitU is 1)
    tile0: VReg                # which MacroTile of C along dim 0 / dim 1 this work-group computes
    tile1: VReg
    gsu_index: VReg            # which GlobalSplitU slice of K this work-group sums

    def arg(self, name: str) -> VRegRef:
        return self.args[name]


def entry_registers(ctx: KernelContext, layout: list[Argument],
                    workgroup_z: bool) -> tuple[EntryRegisters, VReg]:
    """The registers the kernel starts with (work-group ids x, y and, with ``workgroup_z``, z) and the
    argument block."""
    num_wg = 3 if workgroup_z else 2
    kernarg_ptr = VReg("s", 2, "KernArgAddress", align=2, fixed=0)
    workgroup = [VReg("s", 1, f"WorkGroup{i}", fixed=2 + i) for i in range(num_wg)]
    serial = VReg("v", 1, "Serial", fixed=0)
    dwords = (layout[-1].offset + layout[-1].size + 3) // 4
    block = ctx.sgpr("KernArgs", dwords, align=4)
    args = {a.name: block.slice(a.offset // 4, a.size // 4) for a in layout}
    regs = EntryRegisters(kernarg_ptr, workgroup, serial, args, ctx.vgpr("Tid0"), ctx.vgpr("Tid1"),
                          ctx.vgpr("SplitGroup"), ctx.sgpr("TileId0"), ctx.sgpr("TileId1"), ctx.sgpr("GSUSumIdx"))
    return regs, block


def load_arguments(ctx: KernelContext, regs: EntryRegisters, block: VReg) -> Module:
    m = Module("load kernel arguments")
    offset = 0
    while offset < block.count:
        remaining = block.count - offset
        for width, opcode in _SMEM_WIDTHS:
            if width <= remaining and offset % min(width, 4) == 0:
                break
        m.add(ctx.inst(opcode, block.slice(offset, width), regs.kernarg_ptr, offset * 4))
        offset += width
    return m


def thread_coordinates(ctx: KernelContext, regs: EntryRegisters) -> Module:
    """serial = tid0 + SG0*(tid1 + SG1*group)."""
    g = ctx.geometry
    m = Module("thread coordinates in the C tile")
    rest = ctx.vgpr("SerialDivSG0")
    m.add(divmod_const(ctx, rest, regs.tid0, regs.serial, g.wg0, g.num_threads - 1))
    if g.local_split_u > 1:
        m.add(divmod_const(ctx, regs.split_group, regs.tid1, rest, g.wg1, g.num_threads // g.wg0 - 1))
    else:
        m.add(ctx.inst("v_mov_b32", regs.tid1, rest))
    return m


def workgroup_mapping(ctx: KernelContext, regs: EntryRegisters) -> Module:
    """Which C tile this work-group computes: Tensile 4.44's graWorkGroup. With GlobalSplitU G, work-group
    id 1 counts the slices fastest (slice = wg1 % G, tile row = wg1 / G). WorkGroupMapping W > 1 walks the
    tiles in blocks of W tiles along dim 1: block = wg1 / W, serial = wg0 + (wg1 % W) * nwg0, and within
    the block tile0 = serial / h, tile1 = block * W + serial % h, where h is W for the NumFullBlocks full
    blocks and the host's WgmRemainder1 (nwg1 % W) for the last one, divided by the host's
    ``smallMagicNumber`` as ``(x * magic) >> 31`` (exact for the grids the host accepts). The divisions by
    the constant W are magic multiplies proved exact for every work-group id (``divide.scalar_divmod``).
    A negative W is Tensile 4.44's assembly meaning: the kernel takes the three mapping arguments but keeps
    the hardware's order (KernelWriterAssembly remaps only for W > 1 since Tensile 4.40)."""
    g = ctx.geometry
    wgm = g.workgroup_mapping
    m = Module(f"work-group mapping (WorkGroupMapping {wgm})")
    wg0, wg1 = regs.workgroup[0], regs.workgroup[1]
    if g.global_split_u > 1:
        gsu = g.global_split_u
        reduced = ctx.sgpr("WorkGroup1Tiles")
        m.add(scalar_divmod(ctx, reduced, regs.gsu_index, wg1, gsu))
        wg1 = reduced
    if wgm <= 1:
        return m.add(ctx.inst("s_mov_b32", regs.tile0, wg0), ctx.inst("s_mov_b32", regs.tile1, wg1))
    block, serial, tmp = ctx.sgpr("WgmBlock"), ctx.sgpr("WgmSerial"), ctx.sgpr("WgmTmp")
    full, rem = ctx.label("WgmFullBlock"), ctx.label("WgmDone")
    arg = regs.arg
    m.add(scalar_divmod(ctx, block, tmp, wg1, wgm, WORKGROUP_MAX),
          ctx.inst("s_mul_i32", tmp, tmp, arg("NumWorkGroups0")),
          ctx.inst("s_add_u32", serial, wg0, tmp, comment="serial = wg0 + (wg1 % WGM) * nwg0"),
          ctx.inst("s_cmp_lt_u32", block, arg("NumFullBlocks")),
          ctx.inst("s_cbranch_scc1", full),
          # remainder block: height WgmRemainder1; q = serial / rem = (serial * magic) >> 31 by the host's
          # magic number (Tensile's smallMagicNumber)
          ctx.inst("s_mul_hi_u32", regs.tile0, serial, arg("MagicNumberWgmRemainder1")),
          ctx.inst("s_lshl_b32", regs.tile0, regs.tile0, 1),
          ctx.inst("s_mul_i32", tmp, serial, arg("MagicNumberWgmRemainder1")),
          ctx.inst("s_lshr_b32", tmp, tmp, 31),
          ctx.inst("s_or_b32", regs.tile0, regs.tile0, tmp),
          ctx.inst("s_mul_i32", tmp, regs.tile0, arg("WgmRemainder1")),
          ctx.inst("s_sub_u32", regs.tile1, serial, tmp),
          ctx.inst("s_branch", rem),
          LabelDef(full.name),
          scalar_divmod(ctx, regs.tile0, regs.tile1, serial, wgm, WORKGROUP_MAX),
          LabelDef(rem.name),
          ctx.inst("s_mul_i32", tmp, block, wgm),
          ctx.inst("s_add_u32", regs.tile1, regs.tile1, tmp))
    return m
