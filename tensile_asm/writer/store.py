"""Write the C tile: D = alpha*acc + beta*C, with edges masked.

With GlobalSplitU the slices add alpha*acc into D with ``buffer_atomic_add_f32`` (a compare-and-swap
loop where the architecture lacks it: gfx900/gfx906; always for fp64 and fp16 D, the fp16 one on the dword
holding the half, its neighbour kept bit for bit; complex D part by part), after the
beta-only kernel (``beta_only.py``) has set D = beta*C; with GlobalSplitUAlgorithm MultipleBuffer each
slice writes its unscaled partial tile to its own part of a workspace (passed as D, packed M x N x
batch per slice) and the post-GSU kernel (``post_gsu.py``) reduces them into D.

Elements past M or N get an out-of-range buffer offset, so their stores are dropped (and their C loads
return 0). When beta is 0 the kernel takes a path that never loads C, so NaNs in C cannot reach D.
Without LocalSplitU each thread writes its own thread tile, one column at a time; with LocalSplitU the
groups' partial tiles are first summed through LDS and each thread writes MT0*MT1/NumThreads elements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import VCC, VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.batch_address import batch_base, branch_if_zero
from tensile_asm.writer.mac import element, fma, parts, unfused
from tensile_asm.writer.prologue import EntryRegisters


@dataclass
class Column:
    """Elements of one C column: their values, their row byte offsets (OOB past M) and the column."""

    values: list
    row_offsets: list
    col: VReg          # global column index n
    load: Callable[[], Module] | None = None   # puts the values in place (MFMA: reads the AGPRs)
    # StoreRemapVectorWidth (store_remap.py): the values go to LDS at these element offsets of column block
    # ``block`` (from the remap's write address), and the remap stores the block to D once it is complete
    remap: object | None = None
    lds_offsets: list | None = None
    block: int = 0


def _matrix_srd(ctx: KernelContext, regs: EntryRegisters, letter: str) -> tuple[Module, VReg]:
    g, arch = ctx.geometry, ctx.arch
    srd = ctx.sgpr(f"Srd{letter}", 4)
    arg = regs.arg
    ld = arg(f"Strides{letter}0")
    bpe = g.store_bpe if letter == "D" else g.out_bpe
    shift = bpe.bit_length() - 1
    m = Module(f"descriptor for {letter}")
    workspace = letter == "D" and g.strided_d      # strided, also for a pointer-array kernel
    m.add(batch_base(ctx, regs, srd.slice(0, 2), letter, bpe, g.batched, g.pointer_array and not workspace))
    if letter == "D" and g.writes_workspace:
        # slice s of the workspace starts s * M*N*batch elements in
        slice_elems, off = ctx.sgpr("WorkspaceSliceElems"), ctx.sgpr("WorkspaceSliceOffset", 2)
        m.add(ctx.inst("s_mul_i32", slice_elems, arg("SizesFree0"), arg("SizesFree1")))
        if g.batched:
            m.add(ctx.inst("s_mul_i32", slice_elems, slice_elems, arg("SizesFree2")))
        m.add(ctx.inst("s_mul_i32", off[0], slice_elems, regs.gsu_index),
              ctx.inst("s_mul_hi_u32", off[1], slice_elems, regs.gsu_index),
              ctx.inst("s_lshl_b64", off, off, shift),
              ctx.inst("s_add_u32", srd[0], srd[0], off[0]),
              ctx.inst("s_addc_u32", srd[1], srd[1], off[1]))
    if g.initial_strides_cd and not workspace:
        # num_records: the last element's offset plus one, (M-1)*s0 + (N-1)*ld + 1 (a first stride or ld of 0
        # broadcasts C along that index)
        tmp = ctx.sgpr(f"Records{letter}")
        m.add(ctx.inst("s_sub_u32", tmp, arg("SizesFree0"), 1),
              ctx.inst("s_mul_i32", tmp, tmp, arg(f"InitialStride{letter}")),
              ctx.inst("s_sub_u32", srd[2], arg("SizesFree1"), 1),
              ctx.inst("s_mul_i32", srd[2], srd[2], ld),
              ctx.inst("s_add_u32", srd[2], srd[2], tmp),
              ctx.inst("s_add_u32", srd[2], srd[2], 1, comment="num_records: (M-1)*s0 + (N-1)*ld + 1 elements"))
    else:
        m.add(ctx.inst("s_mul_i32", srd[2], ld, arg("SizesFree1"), comment="num_records: ld * N elements"))
    m.add(ctx.inst("s_lshl_b32", srd[2], srd[2], shift),
          ctx.inst("s_mov_b32", srd[3], arch.memory["buffer_srd_word3"]))
    return m, srd


@dataclass
class Scalars:
    """alpha and beta as the store's arithmetic reads them (fp16 arguments are widened to fp32 VGPRs)."""

    alpha: object
    beta: object


def load_scalars(ctx: KernelContext, regs: EntryRegisters) -> tuple[Module, Scalars]:
    g = ctx.geometry
    m = Module("alpha and beta")
    if g.compute_type != "H":
        return m, Scalars(regs.arg("Alpha"), regs.arg("Beta") if g.use_beta else None)
    alpha = ctx.vgpr("AlphaF32")
    m.add(ctx.inst("v_cvt_f32_f16", alpha, regs.arg("Alpha")))
    beta = None
    if g.use_beta:
        beta = ctx.vgpr("BetaF32")
        m.add(ctx.inst("v_cvt_f32_f16", beta, regs.arg("Beta")))
    return m, Scalars(alpha, beta)


def scale(ctx: KernelContext, v, alpha):
    """v *= alpha (complex types: the complex product, as Tensile's applyAlpha)."""
    if ctx.geometry is not None and ctx.geometry.complex:
        return complex_scale(ctx, v, alpha)
    if ctx.geometry is not None and ctx.geometry.integer:
        return ctx.inst("v_mul_lo_u32", v, alpha, v)
    if v.count == 2:
        return ctx.inst("v_mul_f64", v, alpha, v)
    return ctx.inst("v_mul_f32", v, alpha, v)


def complex_scale(ctx: KernelContext, v, alpha) -> Module:
    """v *= alpha for one complex element, in Tensile 4.44's order (applyAlpha): fp32 parts (C) keep a copy
    of the real part, re = ar*re - ai*im, im = ar*im + ai*re_copy (products rounded, then multiply-adds);
    fp64 parts (Z) form ar*re and ai*re first, then re = -ai*im + ar*re, im = ar*im + ai*re."""
    (re, im), (ar, ai) = parts(ctx, v), parts(ctx, alpha)
    m = Module("complex *= alpha")
    if ctx.geometry.part_regs == 1:
        fused = not unfused(ctx)
        copy = ctx.vgpr("AlphaRealCopy")
        return m.add(ctx.inst("v_mov_b32", copy, re),
                     ctx.inst("v_mul_f32", re, ar, re),
                     fma(ctx, re, ai, im, fused, neg_a=True),
                     ctx.inst("v_mul_f32", im, ar, im),
                     fma(ctx, im, ai, copy, fused))
    t1, t2 = ctx.vgpr("AlphaRealProduct", 2), ctx.vgpr("AlphaImagProduct", 2)
    return m.add(ctx.inst("v_mul_f64", t1, ar, re),
                 ctx.inst("v_mul_f64", t2, ai, re),
                 ctx.inst("v_fma_f64", re, ai, im, t1, mods=[("neg", 4)]),
                 ctx.inst("v_fma_f64", im, ar, im, t2))


def add_beta_c(ctx: KernelContext, v, beta, c) -> Module:
    """v += beta * c (C as the accumulator type); complex: four multiply-adds in Tensile's order
    (re += cr*br, re += ci*-bi, im += ci*br, im += cr*bi)."""
    fused = not unfused(ctx)
    if not ctx.geometry.complex:
        return Module("+= beta*C").add(fma(ctx, v, beta, c, fused=fused))
    (re, im), (br, bi), (cr, ci) = parts(ctx, v), parts(ctx, beta), parts(ctx, c)
    return Module("complex += beta*C").add(fma(ctx, re, cr, br, fused), fma(ctx, re, ci, bi, fused, neg_b=True),
                                           fma(ctx, im, ci, br, fused), fma(ctx, im, cr, bi, fused))


LOAD_OUT = {1: "buffer_load_ubyte", 2: "buffer_load_ushort", 4: "buffer_load_dword", 8: "buffer_load_dwordx2", 16: "buffer_load_dwordx4"}
STORE_OUT = {1: "buffer_store_byte", 2: "buffer_store_short", 4: "buffer_store_dword", 8: "buffer_store_dwordx2", 16: "buffer_store_dwordx4"}


def memory_op(ctx: KernelContext, opcode: str, value, offset, srd) -> Module:
    """A C/D load or store at byte ``offset``. Buffer form: out-of-range offsets are dropped by the
    hardware. With BufferStore off: a global access from the descriptor's base, issued only by the lanes
    whose offset is in range (EXEC masked), since global accesses have no range check."""
    from tensile_asm.isa.registers import EXEC

    m = Module(opcode)
    if ctx.geometry.buffer_store:
        return m.add(ctx.inst(opcode, value, offset, srd, 0, mods=["offen"]))
    saved, flat = ctx.sgpr("SavedExecStore", 2), opcode.replace("buffer_", "global_")
    operands = (value, offset, srd.slice(0, 2)) if "load" in opcode else (offset, value, srd.slice(0, 2))
    # masked offsets are the out-of-range value plus a column offset: in range means below it
    return m.add(ctx.inst("v_cmp_gt_u32", VCC, ctx.oob_offset, offset),
                 ctx.inst("s_and_saveexec_b64", saved, VCC),
                 ctx.inst(flat, *operands),
                 ctx.inst("s_mov_b64", EXEC, saved))


def widen_c(ctx: KernelContext, c) -> Module:
    """C as loaded (fp16/bf16 zero-extended) to the accumulator type, in place."""
    t = ctx.geometry.dest_type
    if t == "H":
        return Module("C to fp32").add(ctx.inst("v_cvt_f32_f16", c, c))
    if t == "B":
        return Module("C to fp32").add(ctx.inst("v_lshlrev_b32", c, 16, c))
    if t in FLOAT8_CONVERT:   # byte 0, exactly
        return Module("C to fp32").add(ctx.inst(f"v_cvt_f32_{FLOAT8_CONVERT[t]}", c, c))
    return Module("C as is")


# fp8 / bf8 C/D: the conversions' type names and the largest finite value of gfx942's FNUZ formats and of
# gfx950's OCP ones (E4M3FN 448; isa/<gfx>.yaml float8)
FLOAT8_CONVERT = {"F8": "fp8", "B8": "bf8"}
FLOAT8_MAX = {"F8": 240.0, "B8": 57344.0}
OCP_FLOAT8_MAX = {"F8": 448.0, "B8": 57344.0}
CLASS_NAN_INF = 0x207        # v_cmp_class_f32 mask: signalling and quiet NaN, -inf, +inf


def _f32_bits(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


def narrow(ctx: KernelContext, v) -> tuple[Module, object]:
    """The value to store in D's type: fp16 by conversion, bf16 by round-to-nearest-even of the upper half,
    fp8/bf8 clipped and rounded to nearest even (the byte stored is the low one)."""
    t = ctx.geometry.dest_type
    m = Module(f"D to {t}")
    if t == "H":
        out = ctx.vgpr("StoreHalf")
        return m.add(ctx.inst("v_cvt_f16_f32", out, v)), out
    if t in FLOAT8_CONVERT:
        # Tensile's Fp32toFp8SWClip: finite values clipped to +-the largest fp8/bf8 first (v_med3), NaN and
        # infinities passed as they are; then rounded to nearest even into the low byte (v_cvt_pk_*_f32)
        big, small = ctx.sgpr("Fp8Max"), ctx.vgpr("Fp8Min")
        flag, special = ctx.sgpr("Fp8NanInfClass"), ctx.sgpr("Fp8NanInf", 2)
        clipped, out = ctx.vgpr("Fp8Clipped"), ctx.vgpr("StoreFp8")
        largest = (OCP_FLOAT8_MAX if ctx.arch.float8_ocp else FLOAT8_MAX)[t]
        m.add(ctx.inst("s_mov_b32", flag, CLASS_NAN_INF),
              ctx.inst("v_cmp_class_f32", special, v, flag, comment="NaN or +-inf"),
              ctx.inst("s_mov_b32", big, _f32_bits(largest)),
              ctx.inst("v_mov_b32", small, _f32_bits(-largest)),
              ctx.inst("v_med3_f32", clipped, v, big, small, comment=f"clip to +-{largest:g}"),
              ctx.inst("v_cndmask_b32", clipped, clipped, v, special),
              ctx.inst("v_mov_b32", out, 0),
              ctx.inst(f"v_cvt_pk_{FLOAT8_CONVERT[t]}_f32", out, clipped, clipped, comment="round to nearest even"))
        return m, out
    if t == "B":
        out, bias = ctx.vgpr("StoreBF16"), ctx.sgpr("BF16RoundBias")
        m.add(ctx.inst("v_bfe_u32", out, v, 16, 1),
              ctx.inst("s_mov_b32", bias, 0x7FFF),
              ctx.inst("v_add3_u32", out, v, bias, out),
              ctx.inst("v_lshrrev_b32", out, 16, out))
        return m, out
    return m, v


def masked_row_offset(ctx, regs, dst: VReg, row: VReg) -> Module:
    """dst = row * bpe, or the out-of-range offset when row >= M (row is clobbered)."""
    shift = ctx.geometry.store_bpe.bit_length() - 1
    return Module("row offset").add(
        ctx.inst("v_cmp_lt_u32", VCC, row, regs.arg("SizesFree0")),
        ctx.inst("v_lshlrev_b32", row, shift, row),
        ctx.inst("v_cndmask_b32", dst, ctx.oob_offset, row, VCC))


def _element_offsets(ctx, regs, dst: VReg, row_offsets: list, col_off, letter: str):
    """dst[i] = row_offsets[i] + col_off, or the out-of-range offset where VCC (the column test) is off.
    With UseInitialStridesCD the row offsets (row * bpe, or out of range past M) are scaled by the first
    stride of ``letter`` (InitialStrideC/D) first: the in-range test then also takes the row's, and VCC
    is left holding the column test."""
    if not ctx.geometry.initial_strides_cd:    # a plain list: the kernel text stays as before initial strides
        return [inst for i, row_off in enumerate(row_offsets)
                for inst in (ctx.inst("v_add_u32", dst[i], row_off, col_off),
                             ctx.inst("v_cndmask_b32", dst[i], ctx.oob_offset, dst[i], VCC))]
    m = Module(f"{letter} element offsets")
    col_ok = ctx.sgpr("StoreColumnInRange", 2)
    m.add(ctx.inst("s_mov_b64", col_ok, VCC))
    for i, row_off in enumerate(row_offsets):
        m.add(ctx.inst("v_cmp_gt_u32", VCC, ctx.oob_offset, row_off, comment="row inside M"),
              ctx.inst("s_and_b64", VCC, VCC, col_ok),
              ctx.inst("v_mul_lo_u32", dst[i], row_off, regs.arg(f"InitialStride{letter}"),
                       comment=f"row * {letter}'s first stride"),
              ctx.inst("v_add_u32", dst[i], dst[i], col_off),
              ctx.inst("v_cndmask_b32", dst[i], ctx.oob_offset, dst[i], VCC))
    return m.add(ctx.inst("s_mov_b64", VCC, col_ok))


def _store_column(ctx, regs, scalars: Scalars, col: Column, srd_c, srd_d, with_beta: bool,
                  atomic=False) -> Module:
    """``atomic``: False, True, or for fp16 D the ``HalfAtomicTarget`` the compare-and-swap uses."""
    g = ctx.geometry
    shift = g.store_bpe.bit_length() - 1   # C is read only when D is D (never with a workspace)
    r = g.acc_regs
    n = len(col.values)
    m = Module(f"store {n} element(s) of a column{' with beta' if with_beta else ''}")
    remap = col.remap
    if col.load is not None:
        m.add(col.load())
    col_off, offsets = ctx.vgpr("StoreColOffset"), VReg("v", n, "StoreOffset")
    if remap is None or with_beta:   # the column's edge test (the remap tests D's columns itself)
        m.add(ctx.inst("v_cmp_lt_u32", VCC, col.col, regs.arg("SizesFree1")))
    if remap is None:
        m.add(ctx.inst("v_mul_lo_u32", col_off, col.col, regs.arg("StridesD0")),
              ctx.inst("v_lshlrev_b32", col_off, shift, col_off),
              _element_offsets(ctx, regs, offsets, col.row_offsets, col_off, "D"))
    if g.writes_workspace:   # unscaled partial sums in the accumulator type
        for i, v in enumerate(col.values):
            m.add(remap.write(ctx, v, col.lds_offsets[i]) if remap is not None
                  else memory_op(ctx, STORE_OUT[g.store_bpe], v, offsets[i], srd_d))
        return m
    for v in col.values:
        m.add(scale(ctx, v, scalars.alpha))
    if with_beta:
        # C has its own leading dimension; same rows, same edge mask (VCC still holds the column test).
        c_offsets, c_col_off = VReg("v", n, "StoreOffsetC"), ctx.vgpr("StoreColOffsetC")
        c_values = VReg("v", n * r, "ValuCLoaded", align=ctx.arch.vgpr["tuple_alignment"] if r > 1 else 1)
        m.add(ctx.inst("v_mul_lo_u32", c_col_off, col.col, regs.arg("StridesC0")),
              ctx.inst("v_lshlrev_b32", c_col_off, shift, c_col_off))
        m.add(_element_offsets(ctx, regs, c_offsets, col.row_offsets, c_col_off, "C"))
        for i in range(n):
            m.add(memory_op(ctx, LOAD_OUT[g.out_bpe], c_values.slice(i * r, r), c_offsets[i], srd_c))
        for i, v in enumerate(col.values):
            m.add(widen_c(ctx, c_values.slice(i * r, r)), add_beta_c(ctx, v, scalars.beta, c_values.slice(i * r, r)))
    for i, v in enumerate(col.values):
        if atomic and g.integer:    # int32 adds are exact in any order
            m.add(ctx.inst("buffer_atomic_add", v, offsets[i], srd_d, 0, mods=["offen"]))
            continue
        if atomic and g.dest_type == "S" and ctx.arch.instructions.get("atomic_add_f32"):
            m.add(ctx.inst("buffer_atomic_add_f32", v, offsets[i], srd_d, 0, mods=["offen"]))
            continue
        if atomic and g.dest_type == "H":
            m.add(atomic_add_half_cas(ctx, v, offsets[i], atomic))
            continue
        if atomic and g.complex:   # each part on its own (Tensile's complex atomics add the parts apart too)
            re, im = parts(ctx, v)
            m.add(atomic_add_cas(ctx, re, offsets[i], srd_d),
                  atomic_add_cas(ctx, im, offsets[i], srd_d, byte_offset=4 * g.part_regs))
            continue
        if atomic:
            m.add(atomic_add_cas(ctx, v, offsets[i], srd_d))
            continue
        narrowing, out = narrow(ctx, v)
        m.add(narrowing, remap.write(ctx, out, col.lds_offsets[i]) if remap is not None
              else memory_op(ctx, STORE_OUT[g.out_bpe], out, offsets[i], srd_d))
    return m


def _store_columns(ctx, regs, scalars: Scalars, columns: list, srd_c, srd_d, with_beta: bool,
                   atomic=False) -> Module:
    """Every column; with StoreRemapVectorWidth, each column block goes from LDS to D once it is complete."""
    m = Module("store the columns")
    for i, c in enumerate(columns):
        m.add(_store_column(ctx, regs, scalars, c, srd_c, srd_d, with_beta, atomic))
        if c.remap is not None and (i + 1 == len(columns) or columns[i + 1].block != c.block):
            m.add(c.remap.flush(ctx, regs, srd_d, c.block))
    return m


def atomic_add_cas(ctx: KernelContext, value, offset, srd, byte_offset: int = 0) -> Module:
    """D[offset] += value (fp32, or fp64 when ``value`` is a register pair) where the architecture has no
    atomic add for it (fp32 on gfx900/gfx906; fp64 everywhere this writer uses it): a compare-and-swap
    loop, as Tensile's non-native atomic store. Each in-range lane loads its element, then proposes
    old + value with ``buffer_atomic_cmpswap`` (``_x2`` for fp64; glc: it returns what memory held); lanes
    whose returned value is not the one they compared with (another work-group added in between) retry
    with it; the loop ends when every lane has swapped. Values compare as bits, so a NaN or -0 in D
    cannot loop forever. Out-of-range lanes (offset at or past the out-of-range value) take no part.
    ``byte_offset``: added to ``offset`` by the instructions (a complex element's imaginary part)."""
    from tensile_asm.isa.registers import EXEC

    at = ["offen", ("offset", byte_offset)] if byte_offset else ["offen"]

    wide = value.count == 2
    saved, done, again = ctx.sgpr("SavedExecAtomic", 2), ctx.label("AtomicDone"), ctx.label("AtomicRetry")
    old = ctx.vgpr("AtomicOld", 2) if wide else ctx.vgpr("AtomicOld")
    pair = ctx.vgpr("AtomicPair", 4 if wide else 2)     # pair: {new value, compare value}
    glc = ctx.arch.cache_modifier("glc")
    m = Module("atomic add by compare-and-swap").add(
        ctx.inst("v_cmp_gt_u32", VCC, ctx.oob_offset, offset, comment="lanes whose element is in D"),
        ctx.inst("s_and_saveexec_b64", saved, VCC),
        ctx.inst("s_cbranch_execz", done),
        ctx.inst("buffer_load_dwordx2" if wide else "buffer_load_dword", old, offset, srd, 0, mods=at,
                 comment="first guess of D"),
        LabelDef(again.name))
    if wide:
        m.add(ctx.inst("v_add_f64", pair.slice(0, 2), old, value),
              ctx.inst("v_mov_b32", pair[2], old[0]),
              ctx.inst("v_mov_b32", pair[3], old[1]),
              ctx.inst("buffer_atomic_cmpswap_x2", pair, offset, srd, 0, mods=[*at, glc]),
              ctx.inst("v_cmp_ne_u64", VCC, pair.slice(0, 2), old, comment="D changed since the guess: try again"),
              ctx.inst("v_mov_b32", old[0], pair[0]),
              ctx.inst("v_mov_b32", old[1], pair[1]))
    else:
        m.add(ctx.inst("v_add_f32", pair[0], old, value),
              ctx.inst("v_mov_b32", pair[1], old),
              ctx.inst("buffer_atomic_cmpswap", pair, offset, srd, 0, mods=[*at, glc]),
              ctx.inst("v_cmp_ne_u32", VCC, pair[0], old, comment="D changed since the guess: try again"),
              ctx.inst("v_mov_b32", old, pair[0]))
    return m.add(ctx.inst("s_and_b64", EXEC, EXEC, VCC),
                 ctx.inst("s_cbranch_execnz", again),
                 LabelDef(done.name),
                 ctx.inst("s_mov_b64", EXEC, saved))


@dataclass
class HalfAtomicTarget:
    """fp16 D seen as dwords: a descriptor from D's base rounded down to 4 bytes (its range rounded up to
    whole dwords), and the 0 or 2 bytes the base was rounded down by, which every D offset gains."""

    srd: VReg
    misalign: VReg


def half_atomic_target(ctx: KernelContext, srd_d: VReg) -> tuple[Module, HalfAtomicTarget]:
    t = HalfAtomicTarget(ctx.sgpr("SrdDDwords", 4), ctx.sgpr("DMisalign"))
    srd, mis = t.srd, t.misalign
    return Module("fp16 D as dwords (for the compare-and-swap)").add(
        ctx.inst("s_and_b32", mis, srd_d[0], 2, comment="D's base is 2-byte aligned; its dword starts 0 or 2 before"),
        ctx.inst("s_sub_u32", srd[0], srd_d[0], mis),
        ctx.inst("s_subb_u32", srd[1], srd_d[1], 0),
        ctx.inst("s_add_u32", srd[2], srd_d[2], mis),
        ctx.inst("s_add_u32", srd[2], srd[2], 3),
        ctx.inst("s_and_b32", srd[2], srd[2], 0xFFFFFFFC, comment="whole dwords: the last half's dword is in range"),
        ctx.inst("s_mov_b32", srd[3], srd_d[3])), t


def atomic_add_half_cas(ctx: KernelContext, value, offset, target: HalfAtomicTarget) -> Module:
    """fp16 D[offset] += value (fp32) with no 16-bit atomic (gfx9): a compare-and-swap loop on the dword that
    holds the half, as Tensile's GlobalSplitU store for half C/D (its pairs of halves, VectorAtomicWidth 2).
    Each try widens the half to fp32, adds, rounds once to fp16 and proposes the dword with the other half
    as it was (``v_bfi_b32``), so a neighbour another lane, work-group or slice owns is kept bit for bit;
    when two lanes or work-groups hit one dword, the loser's swap fails and it retries with the winner's
    dword. Out-of-range lanes take no part. The neighbour of D's last half can lie 2 bytes past D when M*N is
    odd and ld is M: it is rewritten with its own bits, atomically (Tensile's rule AssertFree0ElementMultiple
    >= 2 makes that the padding between columns or D's end for aligned bases)."""
    from tensile_asm.isa.registers import EXEC

    saved, done, again = ctx.sgpr("SavedExecAtomic", 2), ctx.label("AtomicDone"), ctx.label("AtomicRetry")
    addr, shift, mask, old, new = (ctx.vgpr(n) for n in ("AtomicAddr", "AtomicShift", "AtomicMask", "AtomicOld",
                                                             "AtomicNew"))
    pair = ctx.vgpr("AtomicPair", 2)     # pair: {new dword, compare dword}
    glc = ctx.arch.cache_modifier("glc")
    return Module("fp16 atomic add by compare-and-swap on the dword").add(
        ctx.inst("v_cmp_gt_u32", VCC, ctx.oob_offset, offset, comment="lanes whose element is in D"),
        ctx.inst("s_and_saveexec_b64", saved, VCC),
        ctx.inst("s_cbranch_execz", done),
        ctx.inst("v_add_u32", addr, target.misalign, offset, comment="offset from the dword-aligned base"),
        ctx.inst("v_and_b32", shift, 2, addr),
        ctx.inst("v_lshlrev_b32", shift, 3, shift, comment="0: low half, 16: high half"),
        ctx.inst("v_and_b32", addr, -4, addr),
        ctx.inst("v_mov_b32", mask, 0xFFFF),
        ctx.inst("v_lshlrev_b32", mask, shift, mask, comment="this element's bits of the dword"),
        ctx.inst("buffer_load_dword", old, addr, target.srd, 0, mods=["offen"], comment="first guess of the dword"),
        LabelDef(again.name),
        ctx.inst("v_lshrrev_b32", new, shift, old),
        ctx.inst("v_cvt_f32_f16", new, new),
        ctx.inst("v_add_f32", new, new, value),
        ctx.inst("v_cvt_f16_f32", new, new),
        ctx.inst("v_lshlrev_b32", new, shift, new),
        ctx.inst("v_bfi_b32", pair[0], mask, new, old, comment="the sum, and the neighbour half as it was"),
        ctx.inst("v_mov_b32", pair[1], old),
        ctx.inst("buffer_atomic_cmpswap", pair, addr, target.srd, 0, mods=["offen", glc]),
        ctx.inst("v_cmp_ne_u32", VCC, pair[0], old, comment="the dword changed since the guess: try again"),
        ctx.inst("v_mov_b32", old, pair[0]),
        ctx.inst("s_and_b64", EXEC, EXEC, VCC),
        ctx.inst("s_cbranch_execnz", again),
        LabelDef(done.name),
        ctx.inst("s_mov_b64", EXEC, saved))


def _thread_tile_columns(ctx: KernelContext, regs: EntryRegisters, acc: VReg) -> tuple[Module, list]:
    """Columns of this thread's tile: element i sits at row tile0*MT0 + tid0*VW + (i//VW)*SG0*VW + i%VW."""
    g = ctx.geometry
    vw = g.vector_width
    vw_shift = vw.bit_length() - 1
    m = Module("store: thread-tile rows and columns")
    base0, base1 = ctx.sgpr("StoreTileBase0"), ctx.sgpr("StoreTileBase1")
    first_row, first_col = ctx.vgpr("StoreRow0"), ctx.vgpr("StoreCol0")
    rows = VReg("v", g.tt0, "StoreRowOffset")
    m.add(ctx.inst("s_mul_i32", base0, regs.tile0, g.mt0),
          ctx.inst("s_mul_i32", base1, regs.tile1, g.mt1),
          ctx.inst("v_lshlrev_b32", first_row, vw_shift, regs.tid0),
          ctx.inst("v_add_u32", first_row, base0, first_row),
          ctx.inst("v_lshlrev_b32", first_col, vw_shift, regs.tid1),
          ctx.inst("v_add_u32", first_col, base1, first_col))
    for i in range(g.tt0):
        vec, lane = g.element_row(i)
        row = ctx.vgpr("StoreRow")
        delta = vec * g.wg0 * vw + lane
        m.add(ctx.inst("v_add_u32", row, delta, first_row) if delta else ctx.inst("v_mov_b32", row, first_row),
              masked_row_offset(ctx, regs, rows[i], row))
    columns = []
    for j in range(g.tt1):
        vec, lane = g.element_row(j)
        delta = vec * g.wg1 * vw + lane
        col = ctx.vgpr(f"StoreCol{j}")
        m.add(ctx.inst("v_add_u32", col, delta, first_col) if delta else ctx.inst("v_mov_b32", col, first_col))
        columns.append(Column([element(ctx, acc, i + j * g.tt0) for i in range(g.tt0)],
                              [rows[i] for i in range(g.tt0)], col))
    return m, columns


def _split_u_reduction(ctx: KernelContext, regs: EntryRegisters, acc: VReg) -> tuple[Module, list]:
    """The VALU groups' partial tiles to LDS; thread t then owns elements e = t + q*NumThreads of the
    MT0 x MT1 tile (column-major), returned as one-element columns (split_u.py sums them). Whole
    accumulator elements go to LDS: 4 bytes (fp32, int32), 8 (fp64, C), 16 (Z)."""
    from tensile_asm.writer.split_u import DS_WRITE, reduced_columns

    g = ctx.geometry
    vw, bpe = g.vector_width, 4 * g.acc_regs
    shift = bpe.bit_length() - 1
    tile_elems = g.mt0 * g.mt1
    m = Module(f"LocalSplitU {g.local_split_u}: reduce partial tiles through LDS")
    addr, tmp = ctx.vgpr("ReductionWriteAddr"), ctx.vgpr("ReductionTmp")
    # Partial tile of group s at s*MT0*MT1; element (r, c) at c*MT0 + r.
    m.add(ctx.inst("s_barrier", comment="every group is done reading the operand tiles"),
          ctx.inst("v_mul_u32_u24", addr, tile_elems, regs.split_group),
          ctx.inst("v_mul_u32_u24", tmp, g.mt0 * vw, regs.tid1),
          ctx.inst("v_add_u32", addr, addr, tmp),
          ctx.inst("v_lshlrev_b32", tmp, vw.bit_length() - 1, regs.tid0),
          ctx.inst("v_add_u32", addr, addr, tmp),
          ctx.inst("v_lshlrev_b32", addr, shift, addr))
    for j in range(g.tt1):
        cvec, clane = g.element_row(j)
        for i in range(g.tt0):
            rvec, rlane = g.element_row(i)
            off = ((rvec * g.wg0 * vw + rlane) + (cvec * g.wg1 * vw + clane) * g.mt0) * bpe
            m.add(ctx.inst(DS_WRITE[bpe], addr, element(ctx, acc, i + j * g.tt0),
                           mods=[("offset", off)] if off else ()))
    m.add(ctx.inst("s_barrier", comment="partial tiles written (the pass waits for the local writes)"))
    cols_mod, columns = reduced_columns(ctx, regs)
    return m.add(cols_mod), columns


def store_tile(ctx: KernelContext, regs: EntryRegisters, acc: VReg, columns_of=None) -> Module:
    """The store; ``columns_of(ctx, regs, acc)`` gives the (Module, columns) of the accumulators when they
    are not a VALU thread tile (MFMA: mfma_store.columns)."""
    g = ctx.geometry
    m = Module("global write")
    srd_d_mod, srd_d = _matrix_srd(ctx, regs, "D")
    if columns_of is not None:
        cols_mod, columns = columns_of(ctx, regs, acc)
    elif g.local_split_u > 1:
        cols_mod, columns = _split_u_reduction(ctx, regs, acc)
    else:
        cols_mod, columns = _thread_tile_columns(ctx, regs, acc)
    scalars_mod, scalars = load_scalars(ctx, regs)
    m.add(srd_d_mod, cols_mod, scalars_mod)
    if g.writes_workspace:
        # each slice writes its own partial tile; the post-GSU kernel applies alpha and beta
        return m.add(_store_columns(ctx, regs, scalars, columns, None, srd_d, False))
    if g.global_split_u > 1:
        # D already holds beta*C (the beta-only kernel ran first); every slice adds alpha * its sum.
        atomic = True
        if g.dest_type == "H":
            target_mod, atomic = half_atomic_target(ctx, srd_d)
            m.add(target_mod)
        return m.add(_store_columns(ctx, regs, scalars, columns, None, srd_d, False, atomic=atomic))
    if not g.use_beta:
        return m.add(_store_columns(ctx, regs, scalars, columns, None, srd_d, False))
    srd_c_mod, srd_c = _matrix_srd(ctx, regs, "C")
    beta_zero, end = ctx.label("BetaZero"), ctx.label("StoreEnd")
    # the same test as batch_address.load_batch_pointers': where it left C's pointer unread, no C is read here
    m.add(srd_c_mod, branch_if_zero(ctx, regs.arg("Beta"), g.compute_type, beta_zero, "Beta",
                                    comment="+0 and -0 both mean no C"))
    m.add(_store_columns(ctx, regs, scalars, columns, srd_c, srd_d, True))
    m.add(ctx.inst("s_branch", end), LabelDef(beta_zero.name))
    m.add(_store_columns(ctx, regs, scalars, columns, None, srd_d, False))
    return m.add(LabelDef(end.name))
