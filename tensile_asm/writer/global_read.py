"""Global read of the A and B tiles: buffer resource descriptors, the thread-to-element assignment,
per-load byte offsets, the loads themselves, and moving the descriptors along K.

Assignment: thread t's load i covers element e = t + i*NumThreads of the MT x DepthU tile, split into
(coalesced, perpendicular) coordinates along the operand's unit-stride dimension. Rows beyond the free
size are clamped to the last row (their results are never stored), so every main-loop load is in
range; K beyond the summation size is handled by the tail loop's guard, which moves the offset out of
the descriptor's range so the load returns 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.isa.instruction import inst
from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VCC, VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.divide import divmod_const
from tensile_asm.writer.prologue import EntryRegisters

BUFFER_OOB = 0x80000000  # an offset past any num_records we set: loads give 0, stores are dropped


@dataclass
class OperandTile:
    """Everything one operand's global read needs, and the registers it owns."""

    name: str                  # 'A' or 'B'
    macro_tile: int
    tlu: bool                  # tile dimension is the unit-stride one
    free_size_arg: str         # SizesFree0 (M) or SizesFree1 (N)
    workgroup_index: int       # which workgroup id picks the tile
    srd: VReg
    increment: VReg
    offsets: list
    lds_addresses: list
    data: list

    @property
    def stride_arg(self) -> str:
        return f"Strides{self.name}0"


def make_operand(ctx: KernelContext, name: str) -> OperandTile:
    g = ctx.geometry
    n = g.num_loads(name)
    return OperandTile(
        name=name,
        macro_tile=g.mt0 if name == "A" else g.mt1,
        tlu=g.tlu_a if name == "A" else g.tlu_b,
        free_size_arg="SizesFree0" if name == "A" else "SizesFree1",
        workgroup_index=0 if name == "A" else 1,
        srd=ctx.sgpr(f"Srd{name}", 4),
        increment=ctx.sgpr(f"GlobalReadInc{name}"),
        offsets=[ctx.vgpr(f"GlobalReadOffset{name}{i}") for i in range(n)],
        lds_addresses=[ctx.vgpr(f"LocalWriteAddr{name}{i}") for i in range(n)],
        data=[ctx.vgpr(f"G2L{name}{i}") for i in range(n)],
    )


def tile_coordinates(ctx: KernelContext, op: OperandTile, regs: EntryRegisters, load: int):
    """Module computing (tile index, k index) of load ``load`` for this thread, and the two VRegs."""
    g = ctx.geometry
    m = Module(f"{op.name} load {load}: tile coordinates")
    coalesced_extent = op.macro_tile if op.tlu else g.depth_u
    element = ctx.vgpr(f"{op.name}Element")
    coal, perp = ctx.vgpr(f"{op.name}Coal"), ctx.vgpr(f"{op.name}Perp")
    if load:
        m.add(inst("v_add_u32", element, load * g.num_threads, regs.serial))
    else:
        m.add(inst("v_mov_b32", element, regs.serial))
    max_element = g.num_threads * g.num_loads(op.name) - 1
    m.add(divmod_const(ctx, perp, coal, element, coalesced_extent, max_element))
    tile_index, k_index = (coal, perp) if op.tlu else (perp, coal)
    return m, tile_index, k_index


def setup(ctx: KernelContext, op: OperandTile, regs: EntryRegisters) -> Module:
    """Descriptor, K increment, and per-load global offsets and LDS addresses."""
    g, arch = ctx.geometry, ctx.arch
    bpe = g.bytes_per_element
    m = Module(f"global read {op.name}: setup")
    srd, arg = op.srd, regs.arg
    # Base of this batch's matrix: Address + WorkGroup2 * batch stride * bpe (64-bit).
    if g.batched:
        prod = ctx.sgpr(f"BatchOffset{op.name}", 2)
        m.add(inst("s_mul_i32", prod[0], regs.workgroup[2], arg(f"Strides{op.name}1")),
              inst("s_mul_hi_u32", prod[1], regs.workgroup[2], arg(f"Strides{op.name}1")),
              inst("s_lshl_b64", prod, prod, bpe.bit_length() - 1),
              inst("s_add_u32", srd[0], arg(f"Address{op.name}")[0], prod[0]),
              inst("s_addc_u32", srd[1], arg(f"Address{op.name}")[1], prod[1]))
    else:
        m.add(inst("s_mov_b64", srd.slice(0, 2), arg(f"Address{op.name}")))
    size2d = arg(f"Tensor2dSize{op.name}")
    m.add(inst("s_lshl_b32", srd[2], size2d[0], bpe.bit_length() - 1,
               comment="num_records: this batch's matrix in bytes"),
          inst("s_mov_b32", srd[3], arch.memory["buffer_srd_word3"]))
    # Bytes to advance per DepthU step along K.
    if op.tlu:
        m.add(inst("s_mul_i32", op.increment, arg(op.stride_arg), g.depth_u * bpe))
    else:
        m.add(inst("s_mov_b32", op.increment, g.depth_u * bpe))
    tile_base, last_row = ctx.sgpr(f"TileBase{op.name}"), ctx.sgpr(f"LastRow{op.name}")
    m.add(inst("s_mul_i32", tile_base, regs.workgroup[op.workgroup_index], op.macro_tile),
          inst("s_sub_u32", last_row, arg(op.free_size_arg), 1))
    lds_base = 0 if op.name == "A" else g.lds_offset_b
    for i in range(g.num_loads(op.name)):
        coords, tile_index, k_index = tile_coordinates(ctx, op, regs, i)
        row, tmp = ctx.vgpr(f"{op.name}Row"), ctx.vgpr(f"{op.name}Tmp")
        m.add(coords,
              inst("v_add_u32", row, tile_base, tile_index),
              inst("v_min_u32", row, last_row, row, comment="clamp rows past the edge"))
        if op.tlu:   # element (row, k) at row + k*ld
            m.add(inst("v_mul_lo_u32", tmp, k_index, arg(op.stride_arg)),
                  inst("v_add_u32", tmp, tmp, row))
        else:        # element (row, k) at k + row*ld
            m.add(inst("v_mul_lo_u32", tmp, row, arg(op.stride_arg)),
                  inst("v_add_u32", tmp, tmp, k_index))
        m.add(inst("v_lshlrev_b32", op.offsets[i], bpe.bit_length() - 1, tmp))
        # LDS holds the tile K-major: element (t, k) at (k*MT + t)*bpe.
        m.add(inst("v_mul_u32_u24", tmp, op.macro_tile, k_index),
              inst("v_add_u32", tmp, tmp, tile_index),
              inst("v_lshlrev_b32", op.lds_addresses[i], bpe.bit_length() - 1, tmp))
        if lds_base:
            m.add(inst("v_add_u32", op.lds_addresses[i], lds_base, op.lds_addresses[i]))
    return m


def loads(ctx: KernelContext, op: OperandTile, offsets=None) -> Module:
    m = Module(f"global read {op.name}")
    for data, offset in zip(op.data, offsets or op.offsets):
        m.add(inst("buffer_load_dword", data, offset, op.srd, 0, mods=["offen"]))
    return m


def advance(ctx: KernelContext, op: OperandTile) -> Module:
    """Move the descriptor DepthU along K; num_records shrinks with it, saturating at 0."""
    srd = op.srd
    return Module(f"advance {op.name} along K").add(
        inst("s_add_u32", srd[0], srd[0], op.increment),
        inst("s_addc_u32", srd[1], srd[1], 0),
        inst("s_sub_u32", srd[2], srd[2], op.increment),
        inst("s_cselect_b32", srd[2], 0, srd[2], comment="borrow: nothing left in range"))


def guarded_offsets(ctx: KernelContext, op: OperandTile, regs: EntryRegisters, k_remaining: VReg):
    """Tail loop: offsets whose K index is past the summation size point out of range (load 0)."""
    m = Module(f"global read {op.name}: guard K in the tail")
    guarded = []
    for i, offset in enumerate(op.offsets):
        coords, _, k_index = tile_coordinates(ctx, op, regs, i)
        g_off = ctx.vgpr(f"GuardedOffset{op.name}{i}")
        m.add(coords,
              inst("v_cmp_lt_u32", VCC, k_index, k_remaining),
              inst("v_cndmask_b32", g_off, ctx.oob_offset, offset, VCC))
        guarded.append(g_off)
    return m, guarded
