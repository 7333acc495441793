"""LocalSplitU: the groups' partial tiles summed through LDS before the store.

With LocalSplitU L the work-group's threads form L groups (thread serial / (NumThreads / L)), each summing
its share of every DepthU step of K into a partial MT0 x MT1 tile (VALU: local_memory.py; MFMA: group s
takes the MatrixInstK values of K-step u*L + s, Tensile 4.44's lsuOffset = sgid * kInterval). After the
loop every group writes its partial tile to LDS, group s at s*MT0*MT1 elements, element (r, c) at
c*MT0 + r (Tensile's localSplitULocalWrite; the operand tiles are dead by then), and thread t sums the
L partial values of the elements e = t + q*NumThreads (q = 0 .. MT0*MT1/NumThreads - 1) in group order
(localSplitULocalRead / localSplitUReduction). Tensile requires NumThreads to be a multiple of MT0
(solution/derive.py), so thread t's elements share row t % MT0 and sit NumThreads/MT0 columns apart.

The reduced elements go to the ordinary store (store.py) as one-element columns; each column's LDS reads
and sums are made just before it is stored (``Column.load``), into one register reused column after
column, so the reduction needs a few VGPRs however large the tile.
"""

from __future__ import annotations

from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.divide import divmod_const
from tensile_asm.writer.prologue import EntryRegisters


DS_READ = {4: "ds_read_b32", 8: "ds_read_b64", 16: "ds_read_b128"}
DS_WRITE = {4: "ds_write_b32", 8: "ds_write_b64", 16: "ds_write_b128"}


def reduced_columns(ctx: KernelContext, regs: EntryRegisters) -> tuple[Module, list]:
    """After the partial tiles are in LDS (and a barrier): the columns of this thread's reduced elements,
    each summing its L partial values when it is stored."""
    from tensile_asm.writer.store import Column, masked_row_offset

    g = ctx.geometry
    r = g.acc_regs                            # fp64 (2), complex (2 for C, 4 for Z), else 1: whole elements in LDS
    bpe = 4 * r
    tile = g.mt0 * g.mt1
    nt, lsu = g.num_threads, g.local_split_u
    per_thread, col_step = tile // nt, nt // g.mt0
    m = Module(f"LocalSplitU {lsu}: this thread's reduced elements")
    read_addr, row, col0 = ctx.vgpr("ReductionReadAddr"), ctx.vgpr("ReducedRow"), ctx.vgpr("ReducedCol0")
    row_off = ctx.vgpr("ReducedRowOffset")
    base0, base1 = ctx.sgpr("StoreTileBase0"), ctx.sgpr("StoreTileBase1")
    m.add(ctx.inst("v_lshlrev_b32", read_addr, bpe.bit_length() - 1, regs.serial),
          ctx.inst("s_mul_i32", base0, regs.tile0, g.mt0),
          ctx.inst("s_mul_i32", base1, regs.tile1, g.mt1),
          divmod_const(ctx, col0, row, regs.serial, g.mt0, nt - 1),
          ctx.inst("v_add_u32", row, base0, row),
          ctx.inst("v_add_u32", col0, base1, col0),
          masked_row_offset(ctx, regs, row_off, row))
    align = ctx.arch.vgpr["tuple_alignment"] if r > 1 else 1
    total, part = VReg("v", r, "ReducedC", align), VReg("v", r, "ReductionPart", align)
    col = ctx.vgpr("ReducedCol")
    pr = g.part_regs     # the real numbers of an element add apart (fp64 pairs, complex parts)
    add = "v_add_u32" if g.integer else "v_add_f64" if pr == 2 else "v_add_f32"

    def load(q: int):
        def make() -> Module:
            r = Module(f"sum the {lsu} partial values of element {q}")
            for s in range(lsu):
                off = (q * nt + s * tile) * bpe
                r.add(ctx.inst(DS_READ[bpe], total if s == 0 else part, read_addr,
                               mods=[("offset", off)] if off else ()))
                if s:
                    r.add(*(ctx.inst(add, total.slice(j, pr), total.slice(j, pr), part.slice(j, pr))
                            for j in range(0, g.acc_regs, pr)))
            return r.add(ctx.inst("v_add_u32", col, q * col_step, col0) if q else ctx.inst("v_mov_b32", col, col0))
        return make

    return m, [Column([total], [row_off], col, load(q)) for q in range(per_thread)]


def mfma_partials(ctx: KernelContext, regs: EntryRegisters, acc, p) -> Module:
    """Every group's partial tile to LDS from the MFMA accumulators (read from the AGPRs first), each
    element where the MFMA store would put it in the macro tile (mfma_store.py's mapping)."""
    from tensile_asm.writer.mfma import output_acc
    from tensile_asm.writer.mfma_store import _block_offsets, _lane_columns, _row_in_output, _swapped_lanes

    g, s = ctx.geometry, p.shape
    r, pr = g.acc_regs, g.part_regs
    bpe = 4 * r
    tile = g.mt0 * g.mt1
    wg0, wg1 = p.wave_group
    vw0, vw1 = p.vector_width
    lane_div = _lane_columns(p)
    mult = _row_in_output(p, 0)[1]
    m = Module(f"LocalSplitU {g.local_split_u}: MFMA partial tiles to LDS")
    lane, wave, tmp = ctx.vgpr("LsuLane"), ctx.vgpr("LsuWave"), ctx.vgpr("LsuTmp")
    row, col, addr = ctx.vgpr("LsuRow"), ctx.vgpr("LsuCol"), ctx.vgpr("LsuWriteAddr")
    if g.source_swap:     # lanes run along the rows: row lane % M, column block mult*(lane / N) (4x4: _swapped_lanes)
        lane_rows, lane_div = _swapped_lanes(p)
        row_lane = [ctx.inst("v_and_b32", tmp, lane_rows - 1, lane), ctx.inst("v_mul_u32_u24", tmp, vw0, tmp)]
        col_lane = [ctx.inst("v_lshrrev_b32", tmp, lane_div.bit_length() - 1, lane),
                    ctx.inst("v_mul_u32_u24", tmp, mult * vw1, tmp)]
    else:
        row_lane = [ctx.inst("v_lshrrev_b32", tmp, lane_div.bit_length() - 1, lane),
                    ctx.inst("v_mul_u32_u24", tmp, mult * vw0, tmp)]
        col_lane = [ctx.inst("v_and_b32", tmp, lane_div - 1, lane), ctx.inst("v_mul_u32_u24", tmp, vw1, tmp)]
    wave_shift = ctx.arch.wavefront_size.bit_length() - 1
    m.add(ctx.inst("s_barrier", comment="every group is done reading the operand tiles"),
          ctx.inst("v_and_b32", lane, ctx.arch.wavefront_size - 1, regs.serial),
          ctx.inst("v_lshrrev_b32", wave, wave_shift, regs.serial),
          ctx.inst("v_and_b32", tmp, wg0 - 1, wave),
          ctx.inst("v_mul_u32_u24", row, p.wave_stride(0), tmp),
          *row_lane,
          ctx.inst("v_add_u32", row, row, tmp),
          ctx.inst("v_lshrrev_b32", tmp, wg0.bit_length() - 1, wave),
          ctx.inst("v_and_b32", tmp, wg1 - 1, tmp),
          ctx.inst("v_mul_u32_u24", col, p.wave_stride(1), tmp),
          *col_lane,
          ctx.inst("v_add_u32", col, col, tmp),
          ctx.inst("v_lshrrev_b32", tmp, (wg0 * wg1).bit_length() - 1, wave, comment="LocalSplitU group"),
          ctx.inst("v_mul_u32_u24", addr, tile, tmp),
          ctx.inst("v_mul_u32_u24", tmp, g.mt0, col),
          ctx.inst("v_add3_u32", addr, addr, tmp, row),
          ctx.inst("v_lshlrev_b32", addr, bpe.bit_length() - 1, addr))
    items = s.d_regs // pr          # accumulator elements per output and lane
    # one element at a time: fp64 pairs; complex parts from the real and the imaginary accumulator sets
    copy = VReg("v", r, "LsuAccCopy", ctx.arch.vgpr["tuple_alignment"] if r > 1 else 1)
    move = "v_accvgpr_read_b32" if acc.kind == "a" else "v_mov_b32"
    for t1 in range(p.wave_tile[1]):
        for t0 in range(p.wave_tile[0]):
            out = output_acc(p, acc, t0, t1)
            for item in range(items):
                within, block_row, block_col = _block_offsets(p, item)
                if g.source_swap:
                    drow = p.tile_offset(0, t0) + vw0 * block_row
                    dcol = p.tile_offset(1, t1) + vw1 * (block_col + _row_in_output(p, within)[0])
                else:
                    drow = p.tile_offset(0, t0) + vw0 * (block_row + _row_in_output(p, within)[0])
                    dcol = p.tile_offset(1, t1) + vw1 * block_col
                off = (drow + dcol * g.mt0) * bpe
                if r == 1 and acc.kind == "v":
                    value = out[item]
                else:
                    m.add(*(ctx.inst(move, copy[part * pr + j], output_acc(p, acc, t0, t1, part)[item * pr + j])
                            for part in range(p.parts) for j in range(pr)))
                    value = copy if r > 1 else copy[0]
                m.add(ctx.inst(DS_WRITE[bpe], addr, value, mods=[("offset", off)] if off else ()))
    return m.add(ctx.inst("s_barrier", comment="partial tiles written (the pass waits for the local writes)"))


def mfma_columns(ctx: KernelContext, regs: EntryRegisters, acc, p) -> tuple[Module, list]:
    """The MFMA store's columns with LocalSplitU: partial tiles to LDS, then the reduced elements."""
    cols_mod, cols = reduced_columns(ctx, regs)
    return Module("LocalSplitU reduction").add(mfma_partials(ctx, regs, acc, p), cols_mod), cols
