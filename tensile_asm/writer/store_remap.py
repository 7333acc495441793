"""StoreRemapVectorWidth (MFMA): the C tile goes to D through LDS, so that each lane stores
StoreRemapVectorWidth (SRVW) consecutive elements of a column with one instruction (Tensile 4.44's
storeRemap*, KernelWriterAssembly).

The store handles the accumulators one column block at a time: block t1 is the MatrixInstN x
MIWaveGroup[1] columns starting at column t1 * MatrixInstN * MIWaveGroup[1] of the macro tile, all
MacroTile0 rows. Each lane computes its elements as usual (alpha, beta with C read in the MFMA layout,
the conversion to D's type) and writes them to LDS, column c of the block at c * (MT0 + pad) elements
(pad = max(SRVW, MIOutputVectorWidth), Tensile's LDS size); after a barrier wave w reads columns
w * N / MIWaveGroup[0] .. of the block, lane l of it SRVW elements at row (l % (MT0/SRVW)) * SRVW of
column l / (MT0/SRVW), stepping MT0... by 64 / (MT0/SRVW) columns, and stores each vector with one
``buffer_store``. A work-group whose tile is whole along M stores vectors (a column past N drops the
whole vector by its out-of-range offset); one at the edge stores element by element, each masked.
With GlobalSplitU MultipleBuffer the unscaled partial sums go the same way into the workspace.
The LDS region overlaps the A/B tiles: a barrier first lets every wave finish its last local reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import VCC, VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.prologue import EntryRegisters

DS_WRITE = {1: "ds_write_b8", 2: "ds_write_b16", 4: "ds_write_b32", 8: "ds_write_b64", 16: "ds_write_b128"}
DS_READ = {1: "ds_read_u8", 2: "ds_read_u16", 4: "ds_read_b32", 8: "ds_read_b64", 16: "ds_read_b128"}
STORE = {1: "buffer_store_byte", 2: "buffer_store_short", 4: "buffer_store_dword", 8: "buffer_store_dwordx2", 16: "buffer_store_dwordx4"}


@dataclass
class StoreRemap:
    """One kernel's remap: its shape and the registers its LDS and global addresses live in."""

    width: int            # StoreRemapVectorWidth
    bpe: int              # bytes of one written element (D's type, or the workspace's)
    stride: int           # elements between two columns in LDS (MT0 + pad)
    block_cols: int       # columns of one block (MatrixInstN x MIWaveGroup[1])
    wave_cols: int        # columns one wave reads per block (MatrixInstN / MIWaveGroup[0])
    cols_per_read: int    # columns one read instruction of a wave covers
    barrier: bool         # the block's columns cross waves (MIWaveGroup[0] > 1)
    write_addr: VReg
    read_addr: VReg
    row: VReg             # global row of the lane's first element
    col: VReg             # global column of the lane's first read in block 0

    @property
    def reads(self) -> int:
        return self.wave_cols // self.cols_per_read

    def write(self, ctx: KernelContext, value, offset: int) -> Module:
        """Write one element (already in D's type, low bits of ``value``) at element ``offset`` of the block."""
        off = offset * self.bpe
        return Module("remap: element to LDS").add(
            ctx.inst(DS_WRITE[self.bpe], self.write_addr, value, mods=[("offset", off)] if off else ()))

    def flush(self, ctx: KernelContext, regs: EntryRegisters, srd_d, block: int) -> Module:
        """Read block ``block`` back from LDS in vectors and store them to D."""
        vec_bytes = self.width * self.bpe
        rpv = max(1, vec_bytes // 4)
        m = Module(f"remap: block {block} from LDS to D")
        if self.barrier:
            m.add(ctx.inst("s_barrier", comment="every wave's elements of the block are in LDS"))
        values = []
        for s in range(self.reads):
            v = VReg("v", rpv, f"RemapValues{s}", align=ctx.arch.vgpr["tuple_alignment"] if rpv > 1 else 1)
            off = s * self.cols_per_read * self.stride * self.bpe
            m.add(ctx.inst(DS_READ[vec_bytes], v, self.read_addr, mods=[("offset", off)] if off else ()))
            values.append(v)
        shift = self.bpe.bit_length() - 1
        edge, done = ctx.label("RemapEdge"), ctx.label("RemapDone")
        limit = ctx.sgpr("RemapRowLimit")
        # the tile is whole along M when tile0*MT0 + MT0 <= M: vectors never straddle M
        m.add(ctx.inst("s_mul_i32", limit, regs.tile0, ctx.geometry.mt0),
              ctx.inst("s_add_u32", limit, limit, ctx.geometry.mt0),
              ctx.inst("s_cmp_gt_u32", limit, regs.arg("SizesFree0")),
              ctx.inst("s_cbranch_scc1", edge))
        col, off = ctx.vgpr("RemapCol"), ctx.vgpr("RemapOffset")
        for s, v in enumerate(values):
            m.add(self._column(ctx, regs, col, off, block, s, shift),
                  ctx.inst(STORE[vec_bytes], v, off, srd_d, 0, mods=["offen"]))
        m.add(ctx.inst("s_branch", done), LabelDef(edge.name))
        row, elem_off, in_rows = ctx.vgpr("RemapRow"), ctx.vgpr("RemapElementOffset"), ctx.sgpr("RemapRowMask", 2)
        for s, v in enumerate(values):
            m.add(self._column(ctx, regs, col, off, block, s, shift))
            m.add(ctx.inst("s_mov_b64", in_rows, VCC, comment="column in range"))
            for i in range(self.width):
                m.add(ctx.inst("v_add_u32", row, i, self.row) if i else ctx.inst("v_mov_b32", row, self.row),
                      ctx.inst("v_cmp_lt_u32", VCC, row, regs.arg("SizesFree0")),
                      ctx.inst("s_and_b64", VCC, VCC, in_rows),
                      ctx.inst("v_add_u32", elem_off, i * self.bpe, off) if i else ctx.inst("v_mov_b32", elem_off, off),
                      ctx.inst("v_cndmask_b32", elem_off, ctx.oob_offset, elem_off, VCC))
                m.add(self._element_store(ctx, v, i, elem_off, srd_d))
        m.add(LabelDef(done.name))
        if self.barrier:
            m.add(ctx.inst("s_barrier", comment="the block is read: LDS free for the next one"))
        return m

    def _column(self, ctx, regs, col, off, block: int, step: int, shift: int) -> Module:
        """off = (column * ld + row) * bpe of read ``step`` of ``block``, out of range past N (VCC: column < N)."""
        delta = block * self.block_cols + step * self.cols_per_read
        return Module("remap: D offset").add(
            ctx.inst("v_add_u32", col, delta, self.col) if delta else ctx.inst("v_mov_b32", col, self.col),
            ctx.inst("v_mul_lo_u32", off, col, regs.arg("StridesD0")),
            ctx.inst("v_add_u32", off, off, self.row),
            ctx.inst("v_lshlrev_b32", off, shift, off),
            ctx.inst("v_cmp_lt_u32", VCC, col, regs.arg("SizesFree1")),
            ctx.inst("v_cndmask_b32", off, ctx.oob_offset, off, VCC))

    def _element_store(self, ctx, v: VReg, i: int, offset, srd_d) -> Module:
        m = Module("remap: one element")
        if self.bpe == 1:   # byte i % 4 of register i // 4 (fp8/bf8 D)
            reg, byte = v[i // 4], i % 4
            if byte == 2:
                return m.add(ctx.inst("buffer_store_byte_d16_hi", reg, offset, srd_d, 0, mods=["offen"]))
            if byte:
                shifted = ctx.vgpr("RemapByte")
                m.add(ctx.inst("v_lshrrev_b32", shifted, 8 * byte, reg))
                reg = shifted
            return m.add(ctx.inst("buffer_store_byte", reg, offset, srd_d, 0, mods=["offen"]))
        if self.bpe == 2:
            op = "buffer_store_short_d16_hi" if i % 2 else "buffer_store_short"
            return m.add(ctx.inst(op, v[i // 2], offset, srd_d, 0, mods=["offen"]))
        rpe = self.bpe // 4
        return m.add(ctx.inst(STORE[self.bpe], v.slice(i * rpe, rpe), offset, srd_d, 0, mods=["offen"]))


def plan(ctx: KernelContext, regs: EntryRegisters, width: int, mfma_n: int, mfma_m: int) -> tuple[Module, StoreRemap]:
    """The remap's LDS read address and the lane's global row and column (the write address is the MFMA
    layout's: ``mfma_store`` sets it up). Needs a barrier first: the LDS still holds the A/B tiles."""
    g = ctx.geometry
    wg0, wg1 = g.mi_wave_group
    wave = ctx.arch.wavefront_size
    out_vw = 1 if g.part_regs == 2 else 4     # MIOutputVectorWidth: 1 for f64 MFMAs (D, Z), else 4
    stride = g.mt0 + max(width, out_vw)
    threads_per_col = g.mt0 // width
    cols_per_read = wave // threads_per_col
    r = StoreRemap(width, g.store_bpe, stride, mfma_n * wg1, mfma_n // wg0, cols_per_read, wg0 > 1,
                   ctx.vgpr("RemapWriteAddr"), ctx.vgpr("RemapReadAddr"), ctx.vgpr("RemapRow0"),
                   ctx.vgpr("RemapCol0"))
    lane, wave_id, tmp, col_in, row_in = (ctx.vgpr(n) for n in ("RemapLane", "RemapWave", "RemapTmp", "RemapColIn",
                                                                  "RemapRowIn"))
    base = ctx.sgpr("RemapTileBase")
    m = Module(f"StoreRemapVectorWidth {width}: LDS read address, global row and column")
    if g.num_threads > wave:
        m.add(ctx.inst("s_barrier", comment="every wave is done with the A/B tiles in LDS"))
    m.add(ctx.inst("v_and_b32", lane, wave - 1, regs.serial),
          ctx.inst("v_lshrrev_b32", wave_id, wave.bit_length() - 1, regs.serial),
          # column in the block: wave * N/WG0 + lane / threads_per_col; row: (lane % threads_per_col) * SRVW
          ctx.inst("v_mul_u32_u24", col_in, r.wave_cols, wave_id),
          ctx.inst("v_lshrrev_b32", tmp, threads_per_col.bit_length() - 1, lane),
          ctx.inst("v_add_u32", col_in, col_in, tmp),
          ctx.inst("v_and_b32", row_in, threads_per_col - 1, lane),
          ctx.inst("v_lshlrev_b32", row_in, width.bit_length() - 1, row_in),
          ctx.inst("v_mul_u32_u24", tmp, stride, col_in),
          ctx.inst("v_add_u32", tmp, tmp, row_in),
          ctx.inst("v_lshlrev_b32", r.read_addr, r.bpe.bit_length() - 1, tmp),
          ctx.inst("s_mul_i32", base, regs.tile0, g.mt0),
          ctx.inst("v_add_u32", r.row, base, row_in),
          ctx.inst("s_mul_i32", base, regs.tile1, g.mt1),
          ctx.inst("v_add_u32", r.col, base, col_in))
    return m, r
