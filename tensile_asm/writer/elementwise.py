"""Scaffolding of the elementwise helper kernels GlobalSplitU needs (beta-only, conversion), launched as
Tensile 4.44's host launches them (gemm/helpers.py): a 1-D grid of 256-thread work-groups over the M x N x batch
elements of D, Tensile's element order (``id0 = id % M, id1 = id / M % N, id2 = id / (M * N)``; with VW
elements per thread, along M).

A work-group's elements may span several batches, so each wavefront walks the batches its lanes hold
(``batch_loop``): per batch, a uniform buffer descriptor (strided: base + batch * the batch stride; pointer
array: the batch's pointer + the offset, as Tensile's ``BatchD[wg] + offsetD``) and only that batch's lanes on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tensile_asm.gemm.helpers import THREADS
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import EXEC, VCC, VReg
from tensile_asm.writer.context import KernelContext

_F32_2_POW_32_BELOW = 0x4F7FFFFE     # 4294966784.0f: LLVM's scale of the reciprocal in its 32-bit udiv


def udiv(ctx: KernelContext, quotient: VReg, remainder: VReg, dividend: VReg, divisor, name: str) -> Module:
    """quotient = dividend // divisor, remainder = dividend % divisor for unsigned 32-bit values, ``divisor``
    (an SGPR or VGPR, uniform, not 0) known only at run time: LLVM's AMDGPU expansion (a float reciprocal, one
    Newton step in integers, then two corrections), exact for every 32-bit dividend and divisor."""
    d, f, z, t = (ctx.vgpr(f"{name}{n}") for n in ("Divisor", "Reciprocal", "Inverse", "Tmp"))
    m = Module(f"{name}: unsigned division")
    m.add(ctx.inst("v_mov_b32", d, divisor),
          ctx.inst("v_cvt_f32_u32", f, d),
          ctx.inst("v_rcp_iflag_f32", f, f),
          ctx.inst("v_mul_f32", f, _F32_2_POW_32_BELOW, f),
          ctx.inst("v_cvt_u32_f32", z, f),
          ctx.inst("v_sub_u32", t, 0, d),
          ctx.inst("v_mul_lo_u32", t, t, z),
          ctx.inst("v_mul_hi_u32", t, z, t),
          ctx.inst("v_add_u32", z, z, t),
          ctx.inst("v_mul_hi_u32", quotient, dividend, z),
          ctx.inst("v_mul_lo_u32", t, quotient, d),
          ctx.inst("v_sub_u32", remainder, dividend, t))
    for _ in range(2):
        m.add(ctx.inst("v_cmp_ge_u32", VCC, remainder, d),
              ctx.inst("v_add_u32", t, 1, quotient),
              ctx.inst("v_cndmask_b32", quotient, quotient, t, VCC),
              ctx.inst("v_sub_u32", t, remainder, d),
              ctx.inst("v_cndmask_b32", remainder, remainder, t, VCC))
    return m


@dataclass
class Element:
    """This thread's first element of D: row ``id0`` (M), column ``id1`` (N), batch ``id2`` (None unbatched)."""

    id0: VReg
    id1: VReg
    id2: VReg | None


def element(ctx: KernelContext, regs, batched: bool, vw: int = 1, reduction: int = 1) -> tuple[Module, Element]:
    """This thread's element (Tensile's conversion kernel: thread ``id`` of the grid takes element group
    ``id / reduction``, ``vw`` consecutive rows); EXEC keeps the lanes whose element exists and, with
    ``reduction`` > 1, only the first thread of each group (it sums every slice; the others have nothing to do)."""
    arg = regs.arg
    gid, e, rest = ctx.vgpr("ElementId"), ctx.vgpr("ElementGroup"), ctx.vgpr("ElementRest")
    id0, id1 = ctx.vgpr("Id0"), ctx.vgpr("Id1")
    base, rows = ctx.sgpr("ElementBase"), ctx.sgpr("RowGroups")
    m = Module("this thread's element")
    m.add(ctx.inst("s_lshl_b32", base, regs.workgroup[0], THREADS.bit_length() - 1),
          ctx.inst("v_add_u32", gid, base, regs.serial))
    if reduction > 1:
        first = ctx.vgpr("ReductionLane")
        m.add(ctx.inst("v_and_b32", first, reduction - 1, gid),
              ctx.inst("v_cmp_eq_u32", VCC, 0, first),
              ctx.inst("s_and_b64", EXEC, EXEC, VCC, comment="one thread of each reduction group works"),
              ctx.inst("v_lshrrev_b32", e, reduction.bit_length() - 1, gid))
    else:
        e = gid
    if vw > 1:
        m.add(ctx.inst("s_lshr_b32", rows, arg("SizesFree0"), vw.bit_length() - 1, comment="M / VW (M is even)"))
    m.add(udiv(ctx, rest, id0, e, rows if vw > 1 else arg("SizesFree0"), "Rows"))
    if vw > 1:
        m.add(ctx.inst("v_lshlrev_b32", id0, vw.bit_length() - 1, id0))
    id2 = None
    if batched:
        id2 = ctx.vgpr("Id2")
        m.add(udiv(ctx, id2, id1, rest, arg("SizesFree1"), "Cols"),
              ctx.inst("v_cmp_gt_u32", VCC, arg("SizesFree2"), id2))
    else:
        m.add(ctx.inst("v_mov_b32", id1, rest),
              ctx.inst("v_cmp_gt_u32", VCC, arg("SizesFree1"), id1))
    m.add(ctx.inst("s_and_b64", EXEC, EXEC, VCC, comment="lanes past the last element do nothing"))
    return m, Element(id0, id1, id2)


def batch_loop(ctx: KernelContext, el: Element, body: Callable[[object], Module]) -> Module:
    """``body(batch)`` once per batch the wavefront's lanes hold (``batch``: an SGPR; None unbatched: the body
    once), with EXEC on that batch's lanes only; then the end of the kernel."""
    m = Module("per batch of this wavefront")
    if el.id2 is None:
        return m.add(body(None), ctx.inst("s_endpgm"))
    remaining, batch = ctx.sgpr("LanesLeft", 2), ctx.sgpr("Batch")
    top, done = ctx.label("NextBatch"), ctx.label("BatchesDone")
    m.add(ctx.inst("s_mov_b64", remaining, EXEC),
          LabelDef(top.name),
          ctx.inst("s_mov_b64", EXEC, remaining),
          ctx.inst("s_cbranch_execz", done),
          ctx.inst("v_readfirstlane_b32", batch, el.id2),
          ctx.inst("v_cmp_eq_u32", VCC, batch, el.id2),
          ctx.inst("s_and_b64", EXEC, EXEC, VCC),
          ctx.inst("s_andn2_b64", remaining, remaining, EXEC),
          body(batch),
          ctx.inst("s_branch", top),
          LabelDef(done.name),
          ctx.inst("s_endpgm"))
    return m


def descriptor(ctx: KernelContext, regs, letter: str, bpe: int, batch, pointer_array: bool = False,
               name: str | None = None) -> tuple[Module, VReg]:
    """Buffer descriptor of ``batch``'s matrix ``letter`` (AddressD/C/WS): base + batch * Strides<letter>2
    elements, or for a pointer-array one Address<letter>[batch] + Offset<letter> elements. Its range is the
    whole 32-bit offset space: the elements' offsets are in range (lanes past the edge are off)."""
    arg = regs.arg
    name = name or letter
    srd = ctx.sgpr(f"Srd{name}", 4)
    shift = bpe.bit_length() - 1
    m = Module(f"descriptor for {name}")
    address = arg(f"Address{letter}")
    if batch is None:
        m.add(ctx.inst("s_mov_b64", srd.slice(0, 2), address))
    elif pointer_array:
        index, offset = ctx.sgpr(f"BatchPointer{name}"), ctx.sgpr(f"ByteOffset{name}", 2)
        m.add(ctx.inst("s_lshl_b32", index, batch, 3, comment="batch * 8 bytes per pointer"),
              ctx.inst("s_load_dwordx2", srd.slice(0, 2), address, index),
              ctx.inst("s_lshl_b64", offset, arg(f"Offset{letter}"), shift, comment=f"Offset{letter} elements to bytes"),
              ctx.inst("s_add_u32", srd[0], srd[0], offset[0]),
              ctx.inst("s_addc_u32", srd[1], srd[1], offset[1]))
    else:
        prod = ctx.sgpr(f"BatchOffset{name}", 2)
        stride = arg(f"Strides{letter}2")
        m.add(ctx.inst("s_mul_i32", prod[0], batch, stride),
              ctx.inst("s_mul_hi_u32", prod[1], batch, stride),
              ctx.inst("s_lshl_b64", prod, prod, shift),
              ctx.inst("s_add_u32", srd[0], address[0], prod[0]),
              ctx.inst("s_addc_u32", srd[1], address[1], prod[1]))
    m.add(ctx.inst("s_mov_b32", srd[2], 0xFFFFFFFF),
          ctx.inst("s_mov_b32", srd[3], ctx.arch.memory["buffer_srd_word3"]))
    return m, srd


def offset(ctx: KernelContext, dst: VReg, el: Element, stride1, bpe: int) -> Module:
    """dst = (id0 + id1 * stride1) * bpe: the element's byte offset in its batch."""
    return Module("element offset").add(
        ctx.inst("v_mul_lo_u32", dst, el.id1, stride1),
        ctx.inst("v_add_u32", dst, dst, el.id0),
        ctx.inst("v_lshlrev_b32", dst, bpe.bit_length() - 1, dst))
