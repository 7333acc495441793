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
    preloaded: VReg | None = None   # the preloaded arguments (s2 on), PreloadKernelArguments 1
    kernarg_base: int = 0      # byte offset in the kernarg segment of the argument block that is loaded

    def arg(self, name: str) -> VRegRef:
        return self.args[name]


def entry_registers(ctx: KernelContext, layout: list[Argument], workgroup_z: bool,
                    preload: int = 0) -> tuple[EntryRegisters, VReg]:
    """The registers the kernel starts with (work-group ids x, y and, with ``workgroup_z``, z) and the
    argument block that ``load_arguments`` loads. ``preload``: dwords of the layout that arrive in the user
    SGPRs after the kernarg pointer (s2 on; ``gemm.arguments.preload_dwords``), so that the work-group ids
    follow them and the block holds only the rest."""
    num_wg = 3 if workgroup_z else 2
    kernarg_ptr = VReg("s", 2, "KernArgAddress", align=2, fixed=0)
    workgroup = [VReg("s", 1, f"WorkGroup{i}", fixed=2 + preload + i) for i in range(num_wg)]
    serial = VReg("v", 1, "Serial", fixed=0)
    dwords = (layout[-1].offset + layout[-1].size + 3) // 4
    preloaded = VReg("s", preload, "KernArgsPreloaded", align=2, fixed=2) if preload else None
    block = ctx.sgpr("KernArgs", dwords - preload, align=4)
    # an argument narrower than a dword (a helper kernel's half alpha/beta) names the dword holding it
    args = {a.name: (preloaded.slice(a.offset // 4, max(1, a.size // 4)) if a.offset // 4 < preload
                     else block.slice(a.offset // 4 - preload, max(1, a.size // 4))) for a in layout}
    regs = EntryRegisters(kernarg_ptr, workgroup, serial, args, ctx.vgpr("Tid0"), ctx.vgpr("Tid1"),
                          ctx.vgpr("SplitGroup"), ctx.sgpr("TileId0"), ctx.sgpr("TileId1"), ctx.sgpr("GSUSumIdx"),
                          preloaded, preload * 4)
    return regs, block


def _smem_loads(ctx: KernelContext, regs: EntryRegisters, block: VReg, first: int, byte_offset: int) -> list:
    """s_loads of ``block`` (whose dword 0 is SGPR ``first`` when fixed) from the kernarg segment at
    ``byte_offset``: widest first, each destination aligned as SMEM needs (x4 and wider: 4 SGPRs, x2: 2)."""
    out, offset = [], 0
    while offset < block.count:
        remaining = block.count - offset
        for width, opcode in _SMEM_WIDTHS:
            if width <= remaining and (first + offset) % min(width, 4) == 0:
                break
        out.append(ctx.inst(opcode, block.slice(offset, width), regs.kernarg_ptr, byte_offset + offset * 4))
        offset += width
    return out


def load_arguments(ctx: KernelContext, regs: EntryRegisters, block: VReg) -> Module:
    """s_loads of the argument block (the arguments past the preloaded ones)."""
    return Module("load kernel arguments").add(_smem_loads(ctx, regs, block, 0, regs.kernarg_base))


PRELOAD_HEADER_BYTES = 256


def preload_header(ctx: KernelContext, regs: EntryRegisters) -> Module:
    """The first 256 bytes of a kernel with preloaded arguments (AMDGPUUsage "Preloaded Kernel Arguments"):
    firmware that preloads them starts the kernel after these bytes, with the arguments in their SGPRs;
    firmware that does not starts at the entry, where this header s_loads them into the same SGPRs and runs
    into the kernel (the waitcnt pass waits for them where they are first read), padded with s_nop 0 to its
    256 bytes (LLVM's AMDGPUPreloadKernArgProlog does the same with a branch; Tensile 4.44's header is 64
    s_nop, so its kernels read unloaded SGPRs on such firmware). ``check_preload_header`` checks the size."""
    loads = _smem_loads(ctx, regs, regs.preloaded, 2, 0)
    from tensile_asm.isa.encoding import encoded_bytes
    used = sum(encoded_bytes(i, ctx.arch.name) for i in loads)
    nop = ctx.inst("s_nop", 0)
    pad = (PRELOAD_HEADER_BYTES - used) // encoded_bytes(nop, ctx.arch.name)
    return Module("kernarg preload header (firmware without preloading starts here, with it 256 bytes on)").add(
        loads, [ctx.inst("s_nop", 0, comment="preload header padding") for _ in range(pad)])


def check_preload_header(module: Module, arch_name: str, name: str) -> None:
    """Raise unless the kernel's preload header (its first sub-module) still encodes to exactly 256 bytes after
    the passes (nothing may have been inserted into it)."""
    from tensile_asm.isa.encoding import encoded_bytes
    from tensile_asm.isa.instruction import Instruction
    header = module.items[0]
    size = sum(encoded_bytes(i, arch_name) for i in header.code() if isinstance(i, Instruction))
    if size != PRELOAD_HEADER_BYTES:
        raise AssertionError(f"kernel {name}: the kernarg preload header is {size} bytes, not {PRELOAD_HEADER_BYTES}")


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
