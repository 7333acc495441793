"""Write the C tile: D = alpha*acc + beta*C, with edges masked.

Elements past M or N get an out-of-range buffer offset, so their stores are dropped (and their C loads
return 0). When beta is 0 the kernel takes a path that never loads C, so NaNs in C cannot reach D.
The tile is written one column of the thread tile at a time to bound the registers needed.
"""

from __future__ import annotations

from tensile_asm.isa.instruction import inst, waitcnt
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import VCC, VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.prologue import EntryRegisters


def _matrix_srd(ctx: KernelContext, regs: EntryRegisters, letter: str) -> tuple[Module, VReg]:
    g, arch = ctx.geometry, ctx.arch
    srd = ctx.sgpr(f"Srd{letter}", 4)
    arg = regs.arg
    address, ld = arg(f"Address{letter}"), arg(f"Strides{letter}0")
    shift = g.bytes_per_element.bit_length() - 1
    m = Module(f"descriptor for {letter}")
    if g.batched:
        prod = ctx.sgpr(f"BatchOffset{letter}", 2)
        m.add(inst("s_mul_i32", prod[0], regs.workgroup[2], arg(f"Strides{letter}1")),
              inst("s_mul_hi_u32", prod[1], regs.workgroup[2], arg(f"Strides{letter}1")),
              inst("s_lshl_b64", prod, prod, shift),
              inst("s_add_u32", srd[0], address[0], prod[0]),
              inst("s_addc_u32", srd[1], address[1], prod[1]))
    else:
        m.add(inst("s_mov_b64", srd.slice(0, 2), address))
    m.add(inst("s_mul_i32", srd[2], ld, arg("SizesFree1"), comment="num_records: ld * N elements"),
          inst("s_lshl_b32", srd[2], srd[2], shift),
          inst("s_mov_b32", srd[3], arch.memory["buffer_srd_word3"]))
    return m, srd


def _row_offsets(ctx: KernelContext, regs: EntryRegisters) -> tuple[Module, VReg, VReg]:
    """Byte offset of each thread-tile row (OOB where the row is past M), and the thread's first column."""
    g = ctx.geometry
    shift = g.bytes_per_element.bit_length() - 1
    rows = VReg("v", g.tt0, "StoreRowOffset")
    row, col0 = ctx.vgpr("StoreRow"), ctx.vgpr("StoreCol0")
    tile0, tile1 = ctx.sgpr("StoreTile0"), ctx.sgpr("StoreTile1")
    m = Module("store: row offsets")
    m.add(inst("s_mul_i32", tile0, regs.workgroup[0], g.mt0),
          inst("s_mul_i32", tile1, regs.workgroup[1], g.mt1),
          inst("v_add_u32", col0, tile1, regs.tid1))
    for i in range(g.tt0):
        m.add(inst("v_add_u32", row, tile0, regs.tid0),
              inst("v_add_u32", row, i * g.wg0, row) if i else None,
              inst("v_cmp_lt_u32", VCC, row, regs.arg("SizesFree0")),
              inst("v_lshlrev_b32", row, shift, row),
              inst("v_cndmask_b32", rows[i], ctx.oob_offset, row, VCC))
    return m, rows, col0


def _column(ctx, regs, acc, rows, col0, srd_c, srd_d, j: int, with_beta: bool, tag: str) -> Module:
    g = ctx.geometry
    shift = g.bytes_per_element.bit_length() - 1
    m = Module(f"store column {j}{' with beta' if with_beta else ''}")
    col, col_off = ctx.vgpr(f"StoreCol{tag}"), ctx.vgpr(f"StoreColOffset{tag}")
    offsets = VReg("v", g.tt0, f"StoreOffset{tag}")
    m.add(inst("v_add_u32", col, j * g.wg1, col0) if j else inst("v_mov_b32", col, col0),
          inst("v_mul_lo_u32", col_off, col, regs.arg("StridesD0")),
          inst("v_lshlrev_b32", col_off, shift, col_off),
          inst("v_cmp_lt_u32", VCC, col, regs.arg("SizesFree1")))
    for i in range(g.tt0):
        m.add(inst("v_add_u32", offsets[i], rows[i], col_off),
              inst("v_cndmask_b32", offsets[i], ctx.oob_offset, offsets[i], VCC))
    cell = [acc[i + j * g.tt0] for i in range(g.tt0)]
    for i in range(g.tt0):
        m.add(inst("v_mul_f32", cell[i], regs.arg("Alpha"), cell[i]))
    if with_beta:
        # C has its own leading dimension; same rows, same edge mask (VCC still holds the column test).
        c_offsets = VReg("v", g.tt0, f"StoreOffsetC{tag}")
        c_col_off = ctx.vgpr(f"StoreColOffsetC{tag}")
        m.add(inst("v_mul_lo_u32", c_col_off, col, regs.arg("StridesC0")),
              inst("v_lshlrev_b32", c_col_off, shift, c_col_off))
        for i in range(g.tt0):
            m.add(inst("v_add_u32", c_offsets[i], rows[i], c_col_off),
                  inst("v_cndmask_b32", c_offsets[i], ctx.oob_offset, c_offsets[i], VCC))
        c_values = VReg("v", g.tt0, f"ValuCLoaded{tag}")
        for i in range(g.tt0):
            m.add(inst("buffer_load_dword", c_values[i], c_offsets[i], srd_c, 0, mods=["offen"]))
        m.add(waitcnt(vmcnt=0, comment="C loaded"))
        for i in range(g.tt0):
            m.add(inst("v_fmac_f32", cell[i], regs.arg("Beta"), c_values[i]))
    for i in range(g.tt0):
        m.add(inst("buffer_store_dword", cell[i], offsets[i], srd_d, 0, mods=["offen"]))
    return m


def store_tile(ctx: KernelContext, regs: EntryRegisters, acc: VReg) -> Module:
    g = ctx.geometry
    m = Module("global write")
    srd_d_mod, srd_d = _matrix_srd(ctx, regs, "D")
    rows_mod, rows, col0 = _row_offsets(ctx, regs)
    m.add(srd_d_mod, rows_mod)
    if not g.use_beta:
        for j in range(g.tt1):
            m.add(_column(ctx, regs, acc, rows, col0, None, srd_d, j, False, "N"))
        return m
    srd_c_mod, srd_c = _matrix_srd(ctx, regs, "C")
    beta_zero, end = ctx.label("BetaZero"), ctx.label("StoreEnd")
    beta_bits = ctx.sgpr("BetaMagnitude")
    m.add(srd_c_mod,
          inst("s_and_b32", beta_bits, regs.arg("Beta"), 0x7FFFFFFF, comment="+0 and -0 both mean no C"),
          inst("s_cmp_eq_u32", beta_bits, 0),
          inst("s_cbranch_scc1", beta_zero))
    for j in range(g.tt1):
        m.add(_column(ctx, regs, acc, rows, col0, srd_c, srd_d, j, True, "B"))
    m.add(inst("s_branch", end), LabelDef(beta_zero.name))
    for j in range(g.tt1):
        m.add(_column(ctx, regs, acc, rows, col0, None, srd_d, j, False, "N"))
    m.add(LabelDef(end.name))
    return m
