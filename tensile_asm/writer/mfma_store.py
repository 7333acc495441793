"""The MFMA accumulators as C elements: which row and column each accumulator register of a lane holds,
as columns for the store (store.py applies alpha, beta, the edges and GlobalSplitU to them).

Output register r of lane l of an M x N MFMA (one block, 32-bit results; AMD's Matrix Instruction
Calculator, as emulator/matrix/mfma.py has it) holds element

    row i = r % 4 + 4*(l / N) + (256/N) * (r / 4),   column j = l % N

of the output; f64 results (16x16x4f64): row i = 4*(r/2) + l / 16 for register pair r/2. Row i of
output t0 of wave w0 is row w0*M*VW + i*VW + tile_offset(t0) of the macro tile, column j of output t1 of
wave w1 is column w1*N*VWB + j*VWB + tile_offset(t1) (writer/mfma.py, MfmaPlan.tile_offset). With
SourceSwap the MFMA computes the output transposed: register r of lane l holds row i = l % M and
column j = the formula's i. Each column's registers are read from the AGPRs into VGPRs
(``v_accvgpr_read_b32``) just before they are stored (with MIArchVgpr the store reads the accumulators
in place); the hazard pass puts the wait states the rules ask for between the last MFMA and those
reads. With StoreRemapVectorWidth the elements go to D through LDS (store_remap.py).
"""

from __future__ import annotations

from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer import store_remap
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.mfma import MfmaPlan, output_acc
from tensile_asm.writer.prologue import EntryRegisters
from tensile_asm.writer.store import Column, masked_row_offset


def _lane_columns(p: MfmaPlan) -> int:
    """Lanes per step of the row's lane part (columns held by one row of lanes): N, or for the 4x4 shapes, whose
    16 blocks run along the lanes (block l / 4), N times the blocks along N (lane l holds column l % (4*BN) and
    row block (l / (4*BN)) of the output)."""
    s = p.shape
    if s.out_type == "f64":
        return 16
    return s.n * p.blocks[1] if s.m == 4 else s.n


def _swapped_lanes(p: MfmaPlan) -> tuple[int, int]:
    """SourceSwap: (rows of C the lanes run along, lanes per step of the column's lane part). The MFMA's first
    operand is B, so register r of lane l holds C row l % M and the column the unswapped formula gives as the
    row; the 4x4 shapes' blocks run along the lanes, block b = l / 4 being output block (b % BM, b / BM) (A's
    blocks inner, ``MfmaPlan.block_divisor``), so lane l holds row l % (4*BM) and column block l / (4*BM)."""
    s = p.shape
    if s.m == 4:
        return 4 * p.blocks[0], 4 * p.blocks[0]
    return s.m, s.n


def _block_offsets(p: MfmaPlan, item: int) -> tuple[int, int, int]:
    """(item within its block, row offset, column offset) of accumulator element ``item``: the 16x16 and 32x32
    shapes of several blocks hold block b in registers b*M*N/64 .., block b being output block (b / BN, b % BN)
    (M*BM rows, N*BN columns), or with SourceSwap (A's blocks inner: ``MfmaPlan.block_divisor``) block
    (b % BM, b / BM); the 4x4 shapes' blocks run along the lanes (``_lane_columns``, ``_swapped_lanes``)."""
    s = p.shape
    if s.m == 4 or s.blocks == 1:
        return item, 0, 0
    per_block = s.m * s.n // 64
    b, rr = divmod(item, per_block)
    if p.swap:
        return rr, s.m * (b % p.blocks[0]), s.n * (b // p.blocks[0])
    return rr, s.m * (b // p.blocks[1]), s.n * (b % p.blocks[1])


def _row_in_output(p: MfmaPlan, item: int) -> tuple[int, int]:
    """(constant part, lane multiplier) of the row of output item ``item`` (one accumulator element):
    row = constant + multiplier * (lane / (N or 16))."""
    s = p.shape
    if s.out_type == "f64":
        return 4 * item, 1
    return item % 4 + (256 // s.n) * (item // 4), 4


def _copy(ctx: KernelContext, count: int) -> VReg:
    """The VGPRs a column's values are read into from the AGPRs, one set reused column after column (the
    allocator keeps a register live from its first to its last use: one set per column would hold them all)."""
    r = ctx.geometry.acc_regs
    return VReg("v", count * r, "StoreAccCopy", align=ctx.arch.vgpr["tuple_alignment"] if r > 1 else 1)


def _values(ctx: KernelContext, p: MfmaPlan, acc: VReg, parts: list, copy: VReg):
    """The values of ``parts`` ((output t0, t1, accumulator element), in store order) and the module that
    puts them in VGPRs: read from the AGPRs into ``copy`` just before the store, or the accumulators
    themselves with MIArchVgpr (then None)."""
    r = ctx.geometry.acc_regs
    if acc.kind == "v" and p.parts == 1:
        return [output_acc(p, acc, t0, t1).sub(i * r, r) for t0, t1, i in parts], None
    # complex types: the real part from the first accumulator set, the imaginary part from the second, side
    # by side in the copy (also with MIArchVgpr, whose accumulators hold the parts apart)
    q = r // p.parts
    op = "v_mov_b32" if acc.kind == "v" else "v_accvgpr_read_b32"

    def load():
        return Module("accumulators to VGPRs").add(
            [ctx.inst(op, copy[k * r + part * q + j], output_acc(p, acc, t0, t1, part)[i * q + j])
             for k, (t0, t1, i) in enumerate(parts) for part in range(p.parts) for j in range(q)])
    return [copy.slice(k * r, r) for k in range(len(parts))], load


def columns(ctx: KernelContext, regs: EntryRegisters, acc: VReg, p: MfmaPlan) -> tuple[Module, list]:
    g, s = ctx.geometry, p.shape
    items = s.d_regs // g.part_regs            # accumulator elements per output and lane
    wt0, wt1 = p.wave_tile
    wg0, wg1 = p.wave_group
    wave_shift = ctx.arch.wavefront_size.bit_length() - 1
    lane_div = _lane_columns(p)
    swap = g.source_swap
    m = Module("MFMA store: rows and columns of the accumulators")
    lane, wave, tmp = ctx.vgpr("StoreLane"), ctx.vgpr("StoreWave"), ctx.vgpr("StoreTmp")
    row0, col0 = ctx.vgpr("StoreRowBase"), ctx.vgpr("StoreColBase")
    base0, base1 = ctx.sgpr("StoreTileBase0"), ctx.sgpr("StoreTileBase1")
    mult = _row_in_output(p, 0)[1]
    vw0, vw1 = p.vector_width
    # the lane's part of an output: its row (column with SourceSwap) block multiplier*(lane / N), and its
    # column (row with SourceSwap) lane % N; M == N for the one-block shapes
    if swap:
        lane_rows, lane_div = _swapped_lanes(p)
        row_lane = [ctx.inst("v_and_b32", tmp, lane_rows - 1, lane),
                    ctx.inst("v_lshlrev_b32", tmp, vw0.bit_length() - 1, tmp) if vw0 > 1 else None]
        col_lane = [ctx.inst("v_lshrrev_b32", tmp, lane_div.bit_length() - 1, lane),
                    ctx.inst("v_mul_u32_u24", tmp, mult * vw1, tmp)]
    else:
        row_lane = [ctx.inst("v_lshrrev_b32", tmp, lane_div.bit_length() - 1, lane),
                    ctx.inst("v_mul_u32_u24", tmp, mult * vw0, tmp)]
        col_lane = [ctx.inst("v_and_b32", tmp, lane_div - 1, lane),
                    ctx.inst("v_lshlrev_b32", tmp, vw1.bit_length() - 1, tmp) if vw1 > 1 else None]
    m.add(ctx.inst("s_mul_i32", base0, regs.tile0, g.mt0),
          ctx.inst("s_mul_i32", base1, regs.tile1, g.mt1),
          ctx.inst("v_and_b32", lane, ctx.arch.wavefront_size - 1, regs.serial),
          ctx.inst("v_lshrrev_b32", wave, wave_shift, regs.serial),
          # row base: tile0*MT0 + w0*M*VW + the lane's row
          ctx.inst("v_and_b32", tmp, wg0 - 1, wave),
          ctx.inst("v_mul_u32_u24", row0, p.wave_stride(0), tmp),
          *row_lane,
          ctx.inst("v_add_u32", row0, row0, tmp),
          ctx.inst("v_add_u32", row0, base0, row0),
          # column base: tile1*MT1 + w1*N*VWB + the lane's column
          ctx.inst("v_lshrrev_b32", tmp, wg0.bit_length() - 1, wave),
          ctx.inst("v_and_b32", tmp, wg1 - 1, tmp),
          ctx.inst("v_mul_u32_u24", col0, p.wave_stride(1), tmp),
          *col_lane,
          ctx.inst("v_add_u32", col0, col0, tmp),
          ctx.inst("v_add_u32", col0, base1, col0))
    if swap:
        return m, _swapped_columns(ctx, regs, acc, p, m, row0, col0)
    rows = VReg("v", wt0 * items, "StoreRowOffset")
    for t0 in range(wt0):
        for item in range(items):
            row = ctx.vgpr("StoreRow")
            within, block_row, _ = _block_offsets(p, item)
            delta = p.tile_offset(0, t0) + vw0 * (block_row + _row_in_output(p, within)[0])
            m.add(ctx.inst("v_add_u32", row, delta, row0) if delta else ctx.inst("v_mov_b32", row, row0),
                  masked_row_offset(ctx, regs, rows[t0 * items + item], row))
    remap = None
    if g.store_remap:
        remap_mod, remap = _remap(ctx, regs, p, lane, wave, tmp)
        m.add(remap_mod)
    # the elements of one column: the items of the blocks at one column offset (all of them for one block)
    by_column = {}
    for i in range(items):
        by_column.setdefault(_block_offsets(p, i)[2], []).append(i)
    cols, copy = [], _copy(ctx, max(len(v) for v in by_column.values()))
    for t1 in range(wt1):
        for block_col, its in by_column.items():
            col = ctx.vgpr(f"StoreCol{t1}_{block_col}")
            delta = p.tile_offset(1, t1) + vw1 * block_col
            m.add(ctx.inst("v_add_u32", col, delta, col0) if delta else ctx.inst("v_mov_b32", col, col0))
            for t0 in range(wt0):
                values, load = _values(ctx, p, acc, [(t0, t1, i) for i in its], copy)
                lds = None
                if remap is not None:   # element offsets in the block: t0's rows, the MFMA block's, the item's
                    lds = [p.tile_offset(0, t0) + block_row + _row_in_output(p, within)[0]
                           for within, block_row, _ in (_block_offsets(p, i) for i in its)]
                cols.append(Column(values, [rows[t0 * items + i] for i in its], col, load,
                                   remap=remap, lds_offsets=lds, block=t1))
    return m, cols


def _swapped_columns(ctx: KernelContext, regs: EntryRegisters, acc: VReg, p: MfmaPlan, m: Module,
                     row0: VReg, col0: VReg) -> list:
    """SourceSwap: element ``item`` of output (t0, t1) is row row0 + tile_offset(t0) + VW*(its block's row
    offset) and column col0 + VWB*(its block's column offset + constant(item)) + tile_offset(t1), so a column
    holds that element of each t0 (with VectorWidth > 1, VW consecutive rows)."""
    s = p.shape
    items = s.d_regs // ctx.geometry.part_regs
    wt0, wt1 = p.wave_tile
    vw0, vw1 = p.vector_width
    places = [_block_offsets(p, item) for item in range(items)]
    block_rows = sorted({block_row for _, block_row, _ in places})
    rows = VReg("v", wt0 * len(block_rows), "StoreRowOffset")
    row_of = {}
    for t0 in range(wt0):
        for block_row in block_rows:
            row = ctx.vgpr("StoreRow")
            delta = p.tile_offset(0, t0) + vw0 * block_row
            row_of[t0, block_row] = rows[len(row_of)]
            m.add(ctx.inst("v_add_u32", row, delta, row0) if delta else ctx.inst("v_mov_b32", row, row0),
                  masked_row_offset(ctx, regs, row_of[t0, block_row], row))
    cols, copy = [], _copy(ctx, wt0)
    for t1 in range(wt1):
        for item, (within, block_row, block_col) in enumerate(places):
            col = ctx.vgpr(f"StoreCol{t1}_{item}")
            delta = p.tile_offset(1, t1) + vw1 * (block_col + _row_in_output(p, within)[0])
            m.add(ctx.inst("v_add_u32", col, delta, col0) if delta else ctx.inst("v_mov_b32", col, col0))
            values, load = _values(ctx, p, acc, [(t0, t1, item) for t0 in range(wt0)], copy)
            cols.append(Column(values, [row_of[t0, block_row] for t0 in range(wt0)], col, load))
    return cols


def _remap(ctx: KernelContext, regs: EntryRegisters, p: MfmaPlan, lane: VReg, wave: VReg, tmp: VReg):
    """StoreRemapVectorWidth: the LDS write address of the lane's first element of a column block, column
    w1*N + lane % N at (MT0 + pad) elements each, row w0*M*BM + multiplier*(lane / N) (VectorWidth is 1; an
    MFMA of several blocks has them along M only, MatrixInstBN 1: ``mfma.mfma_reason``)."""
    g, s = ctx.geometry, p.shape
    assert p.vector_width == (1, 1), "StoreRemapVectorWidth derives VectorWidth 1"
    assert p.blocks[1] == 1, "StoreRemapVectorWidth with MFMA blocks along N (MatrixInstBN > 1) is refused"
    m, r = store_remap.plan(ctx, regs, g.store_remap, s.n, s.m)
    wg0 = p.wave_group[0]
    lane_div = _lane_columns(p)
    mult = _row_in_output(p, 0)[1]
    col, row = ctx.vgpr("RemapWriteCol"), ctx.vgpr("RemapWriteRow")
    m.add(ctx.inst("v_lshrrev_b32", tmp, wg0.bit_length() - 1, wave),
          ctx.inst("v_mul_u32_u24", col, s.n, tmp),
          ctx.inst("v_and_b32", tmp, s.n - 1, lane),
          ctx.inst("v_add_u32", col, col, tmp),
          ctx.inst("v_and_b32", tmp, wg0 - 1, wave),
          ctx.inst("v_mul_u32_u24", row, p.rows(0), tmp),
          ctx.inst("v_lshrrev_b32", tmp, lane_div.bit_length() - 1, lane),
          ctx.inst("v_mul_u32_u24", tmp, mult, tmp),
          ctx.inst("v_add_u32", row, row, tmp),
          ctx.inst("v_mul_u32_u24", tmp, r.stride, col),
          ctx.inst("v_add_u32", tmp, tmp, row),
          ctx.inst("v_lshlrev_b32", r.write_addr, r.bpe.bit_length() - 1, tmp))
    return m, r
