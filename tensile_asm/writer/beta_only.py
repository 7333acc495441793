"""The beta-only kernel GlobalSplitU needs before the GEMM: D = beta*C (0 when beta is 0, so NaNs in C
never reach D), which the GEMM's slices then add alpha*A*B into with atomics.

Tensile builds this helper as a HIP kernel named ``C<indices>_<DestChar>`` (``Cijk_S``); ours is
written in assembly with the same name. Arguments (our ABI): AddressD, AddressC, StridesD0/1,
StridesC0/1, SizesFree0/1/2, Beta. Work-group: 256 threads = 64 rows x 4 columns of D; grid
(ceil(M/64), ceil(N/4), batch).
"""

from __future__ import annotations

from tensile_asm.isa.allocation import allocate
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.instruction import inst, waitcnt
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import VCC, VReg
from tensile_asm.writer import signature
from tensile_asm.writer.arguments import Argument
from tensile_asm.writer.context import Geometry, KernelContext

ROWS, COLS = 64, 4
BUFFER_OOB = 0x80000000


def beta_only_name(batched: bool, dest_char: str = "S") -> str:
    return ("Cijk" if batched else "Cij") + f"_{dest_char}"


def beta_only_layout() -> list[Argument]:
    spec = [("AddressD", 8, "u64"), ("AddressC", 8, "u64"), ("StridesD0", 4, "u32"), ("StridesD1", 4, "u32"),
            ("StridesC0", 4, "u32"), ("StridesC1", 4, "u32"), ("SizesFree0", 4, "u32"), ("SizesFree1", 4, "u32"),
            ("SizesFree2", 4, "u32"), ("Beta", 4, "f32")]
    out, offset = [], 0
    for name, size, kind in spec:
        out.append(Argument(name, size, kind, offset))
        offset += size
    return out


def write_beta_only(arch: Arch, batched: bool):
    from tensile_asm.writer.kernel import Kernel
    from tensile_asm.writer.prologue import entry_registers, load_arguments

    geometry = Geometry(wg0=ROWS, wg1=COLS, tt0=1, tt1=1, depth_u=1, transpose_a=False, transpose_b=False,
                        batched=True, use_beta=True)
    name = beta_only_name(batched)
    ctx = KernelContext(arch, geometry, name)
    layout = beta_only_layout()
    regs, block = entry_registers(ctx, layout)
    arg = regs.arg
    m = Module(name)
    row, col, tmp, off, val, oob = (ctx.vgpr(n) for n in ("Row", "Col", "Tmp", "Offset", "Value", "OOB"))
    srd_c, srd_d, batch_off = ctx.sgpr("SrdC", 4), ctx.sgpr("SrdD", 4), ctx.sgpr("BatchOffset", 2)
    beta_bits, base = ctx.sgpr("BetaMagnitude"), ctx.sgpr("Base")
    zero, done = ctx.label("BetaZero"), ctx.label("Done")
    m.add(load_arguments(ctx, regs, block),
          inst("v_mov_b32", oob, BUFFER_OOB),
          inst("v_and_b32", row, ROWS - 1, regs.serial),
          inst("s_lshl_b32", base, regs.workgroup[0], 6),
          inst("v_add_u32", row, base, row),
          inst("v_lshrrev_b32", col, 6, regs.serial),
          inst("s_lshl_b32", base, regs.workgroup[1], 2),
          inst("v_add_u32", col, base, col))
    for letter, srd in (("D", srd_d), ("C", srd_c)):
        m.add(inst("s_mul_i32", batch_off[0], regs.workgroup[2], arg(f"Strides{letter}1")),
              inst("s_mul_hi_u32", batch_off[1], regs.workgroup[2], arg(f"Strides{letter}1")),
              inst("s_lshl_b64", batch_off, batch_off, 2),
              inst("s_add_u32", srd[0], arg(f"Address{letter}")[0], batch_off[0]),
              inst("s_addc_u32", srd[1], arg(f"Address{letter}")[1], batch_off[1]),
              inst("s_mul_i32", srd[2], arg(f"Strides{letter}0"), arg("SizesFree1")),
              inst("s_lshl_b32", srd[2], srd[2], 2),
              inst("s_mov_b32", srd[3], arch.memory["buffer_srd_word3"]))
    c_off = ctx.vgpr("OffsetC")
    # offset = (row + col*ld)*4 when row < M and col < N, else out of range
    m.add(inst("v_mul_lo_u32", tmp, col, arg("StridesD0")), inst("v_add_u32", tmp, tmp, row),
          inst("v_lshlrev_b32", off, 2, tmp),
          inst("v_mul_lo_u32", tmp, col, arg("StridesC0")), inst("v_add_u32", tmp, tmp, row),
          inst("v_lshlrev_b32", c_off, 2, tmp),
          inst("v_cmp_lt_u32", VCC, row, arg("SizesFree0")),
          inst("v_cndmask_b32", off, oob, off, VCC),
          inst("v_cndmask_b32", c_off, oob, c_off, VCC),
          inst("v_cmp_lt_u32", VCC, col, arg("SizesFree1")),
          inst("v_cndmask_b32", off, oob, off, VCC),
          inst("v_cndmask_b32", c_off, oob, c_off, VCC),
          inst("s_and_b32", beta_bits, arg("Beta"), 0x7FFFFFFF),
          inst("s_cmp_eq_u32", beta_bits, 0),
          inst("s_cbranch_scc1", zero),
          inst("buffer_load_dword", val, c_off, srd_c, 0, mods=["offen"]),
          waitcnt(vmcnt=0),
          inst("v_mul_f32", val, arg("Beta"), val),
          inst("s_branch", done),
          LabelDef(zero.name),
          inst("v_mov_b32", val, 0),
          LabelDef(done.name),
          inst("buffer_store_dword", val, off, srd_d, 0, mods=["offen"]),
          inst("s_endpgm"))
    limits = {"v": arch.vgpr["arch_max"], "s": arch.sgpr["max_user"], "a": 0}
    alloc = allocate(m, limits, what=name)
    res = signature.Resources(vgprs=alloc.next_free["v"], agprs=0, sgprs=alloc.next_free["s"], lds_bytes=0,
                              workgroup_size=ROWS * COLS, workgroup_id_z=True)
    return Kernel(name, arch, geometry, layout, res, m, alloc.assignment)


def beta_only_grid(m: int, n: int, batch: int) -> tuple[int, int, int]:
    return (-(-m // ROWS), -(-n // COLS), batch)
