"""The beta-only kernel GlobalSplitU needs before the GEMM: D = beta*C (0 when beta is 0, so NaNs in C
never reach D), which the GEMM's slices then add alpha*A*B into with atomics.

Tensile builds this helper as a HIP kernel named ``C<indices>_<DestChar>`` (``Cijk_S``); ours is
written in assembly with the same name. Arguments (our ABI): AddressD, AddressC, StridesD0/1,
StridesC0/1, SizesFree0/1/2, Beta. Work-group: 256 threads = 64 rows x 4 columns of D; grid
(ceil(M/64), ceil(N/4), batch).
"""

from __future__ import annotations

from tensile_asm.gemm.helpers import beta_only_layout, beta_only_name
from tensile_asm.isa.allocation import allocate
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.writer import signature
from tensile_asm.writer.context import KernelContext

from tensile_asm.writer import elementwise
from tensile_asm.writer.elementwise import BUFFER_OOB, COLS, ROWS


def write_beta_only(arch: Arch, batched: bool, dest: str = "S"):
    """D = beta*C for fp32 C/D, or int32 (``dest`` I: wrapping multiply, beta 0 on all 32 bits)."""
    from tensile_asm.writer.kernel import Kernel
    from tensile_asm.writer.prologue import entry_registers, load_arguments

    name = beta_only_name(batched, dest)
    integer = dest == "I"
    ctx = KernelContext(arch, None, name)
    regs, block = entry_registers(ctx, beta_only_layout(dest), workgroup_z=True)
    arg = regs.arg
    m = Module(name)
    off, c_off, val, oob = (ctx.vgpr(n) for n in ("Offset", "OffsetC", "Value", "OOB"))
    beta_bits = ctx.sgpr("BetaMagnitude")
    zero, done = ctx.label("BetaZero"), ctx.label("Done")
    coords, row, col = elementwise.coordinates(ctx, regs)
    srd_d_mod, srd_d = elementwise.descriptor(ctx, regs, "D", 4)
    srd_c_mod, srd_c = elementwise.descriptor(ctx, regs, "C", 4)
    m.add(load_arguments(ctx, regs, block), ctx.inst("v_mov_b32", oob, BUFFER_OOB), coords, srd_d_mod, srd_c_mod,
          elementwise.masked_offset(ctx, regs, off, row, col, arg("StridesD0"), 4, oob),
          elementwise.masked_offset(ctx, regs, c_off, row, col, arg("StridesC0"), 4, oob),
          ctx.inst("s_and_b32", beta_bits, arg("Beta"), 0xFFFFFFFF if integer else 0x7FFFFFFF),
          ctx.inst("s_cmp_eq_u32", beta_bits, 0),
          ctx.inst("s_cbranch_scc1", zero),
          ctx.inst("buffer_load_dword", val, c_off, srd_c, 0, mods=["offen"]),
          ctx.inst("v_mul_lo_u32" if integer else "v_mul_f32", val, arg("Beta"), val),
          ctx.inst("s_branch", done),
          LabelDef(zero.name),
          ctx.inst("v_mov_b32", val, 0),
          LabelDef(done.name),
          ctx.inst("buffer_store_dword", val, off, srd_d, 0, mods=["offen"]),
          ctx.inst("s_endpgm"))
    return finish(ctx, m, beta_only_layout(dest))


def finish(ctx: KernelContext, m: Module, layout):
    """Allocate registers and wrap an elementwise kernel (256 threads, no LDS) as a Kernel."""
    from tensile_asm.writer.kernel import Kernel

    limits = {"v": ctx.arch.vgpr["arch_max"], "s": ctx.arch.sgpr["max_user"], "a": 0}
    alloc = allocate(m, limits, what=ctx.name)
    res = signature.Resources(vgprs=alloc.next_free["v"], agprs=0, sgprs=alloc.next_free["s"], lds_bytes=0,
                              workgroup_size=ROWS * COLS, workgroup_id_z=True)
    return Kernel(ctx.name, ctx.arch, ctx.geometry, layout, res, m, alloc.assignment)
