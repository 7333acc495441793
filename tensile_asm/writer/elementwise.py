"""Scaffolding of the elementwise helper kernels GlobalSplitU needs (beta-only, post-GSU reduction):
one thread per element of a 64 x 4 block of C/D, descriptors per batch, and masked element offsets.
"""

from __future__ import annotations

from tensile_asm.gemm.helpers import COLS, ROWS
from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VCC, VReg
from tensile_asm.writer.batch_address import batch_base
from tensile_asm.writer.context import KernelContext

BUFFER_OOB = 0x80000000


def coordinates(ctx: KernelContext, regs) -> tuple[Module, VReg, VReg]:
    """This thread's row (m) and column (n) of D."""
    row, col, base = ctx.vgpr("Row"), ctx.vgpr("Col"), ctx.sgpr("Base")
    m = Module("element coordinates").add(
        ctx.inst("v_and_b32", row, ROWS - 1, regs.serial),
        ctx.inst("s_lshl_b32", base, regs.workgroup[0], ROWS.bit_length() - 1),
        ctx.inst("v_add_u32", row, base, row),
        ctx.inst("v_lshrrev_b32", col, ROWS.bit_length() - 1, regs.serial),
        ctx.inst("s_lshl_b32", base, regs.workgroup[1], COLS.bit_length() - 1),
        ctx.inst("v_add_u32", col, base, col))
    return m, row, col


def descriptor(ctx: KernelContext, regs, letter: str, bpe: int, pointer_array: bool = False) -> tuple[Module, VReg]:
    """Buffer descriptor of this batch's matrix ``letter``: base + WorkGroup2*batch stride, ld*N records; for a
    pointer-array helper (Tensile's ``_GB``), Address<letter>[WorkGroup2] + Offset<letter> elements."""
    arg = regs.arg
    srd = ctx.sgpr(f"Srd{letter}", 4)
    shift = bpe.bit_length() - 1
    m = Module(f"descriptor for {letter}")
    if pointer_array:
        index, offset = ctx.sgpr(f"BatchPointer{letter}"), ctx.sgpr(f"ByteOffset{letter}", 2)
        m.add(ctx.inst("s_lshl_b32", index, regs.workgroup[2], 3, comment="WorkGroup2 * 8 bytes per pointer"),
              ctx.inst("s_load_dwordx2", srd.slice(0, 2), arg(f"Address{letter}"), index),
              ctx.inst("s_lshl_b64", offset, arg(f"Offset{letter}"), shift, comment=f"Offset{letter} elements to bytes"),
              ctx.inst("s_add_u32", srd[0], srd[0], offset[0]),
              ctx.inst("s_addc_u32", srd[1], srd[1], offset[1]))
    else:
        m.add(batch_base(ctx, regs, srd.slice(0, 2), letter, bpe))
    m.add(ctx.inst("s_mul_i32", srd[2], arg(f"Strides{letter}0"), arg("SizesFree1")),
        ctx.inst("s_lshl_b32", srd[2], srd[2], shift),
        ctx.inst("s_mov_b32", srd[3], ctx.arch.memory["buffer_srd_word3"]))
    return m, srd


def masked_offset(ctx: KernelContext, regs, dst: VReg, row: VReg, col: VReg, ld, bpe: int, oob: VReg) -> Module:
    """dst = (row + col*ld)*bpe, or out of range when row >= M or col >= N."""
    tmp = ctx.vgpr("OffsetTmp")
    return Module("masked element offset").add(
        ctx.inst("v_mul_lo_u32", tmp, col, ld),
        ctx.inst("v_add_u32", tmp, tmp, row),
        ctx.inst("v_lshlrev_b32", dst, bpe.bit_length() - 1, tmp),
        ctx.inst("v_cmp_lt_u32", VCC, row, regs.arg("SizesFree0")),
        ctx.inst("v_cndmask_b32", dst, oob, dst, VCC),
        ctx.inst("v_cmp_lt_u32", VCC, col, regs.arg("SizesFree1")),
        ctx.inst("v_cndmask_b32", dst, oob, dst, VCC))
