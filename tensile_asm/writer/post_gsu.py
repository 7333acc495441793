"""The post-GSU kernel of GlobalSplitUAlgorithm MultipleBuffer: D = alpha * (sum of the GlobalSplitU
partial tiles in the workspace) + beta*C, converted to D's type (C is not read when beta is 0).

Workspace layout (our ABI with the GEMM kernel, which receives it as its D): slice s holds a packed
M x N x batch tile of the accumulator type at element s*M*N*batch. Arguments: AddressD, AddressC,
AddressWS, StridesD0/1, StridesC0/1, SizesFree0/1/2, Alpha, Beta (compute type); pointer-array
(``..._GB_PostGSU<n>``): AddressD/AddressC arrays of per-batch pointers, OffsetD/OffsetC after AddressWS, the
workspace strided as ever (Tensile's conversion kernel: BatchD, W, BatchC, offsetD, offsetC). One thread per
element, 64 x 4 per work-group, grid (ceil(M/64), ceil(N/4), batch).
"""

from __future__ import annotations

from dataclasses import replace

from tensile_asm.gemm.helpers import post_gsu_layout, post_gsu_name
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import VCC, VReg
from tensile_asm.writer import elementwise
from tensile_asm.writer.beta_only import finish
from tensile_asm.writer.context import Geometry, KernelContext
from tensile_asm.writer.elementwise import BUFFER_OOB
from tensile_asm.writer.mac import fma
from tensile_asm.writer.store import LOAD_OUT, STORE_OUT, add_beta_c, load_scalars, narrow, scale, widen_c


def write_post_gsu(arch: Arch, gemm: Geometry, slices: int | None = None):
    """``slices``: partial tiles to add (default the GEMM's GlobalSplitU); 1 makes the SingleBuffer workspace's
    conversion kernel ``helpers.conversion_name`` (its launch passes alpha 1 and beta 0)."""
    from tensile_asm.gemm.helpers import conversion_name
    from tensile_asm.writer.prologue import entry_registers, load_arguments

    # The GEMM's types (C/D, accumulator, alpha and beta); the reduction always takes beta, so one helper
    # serves the GEMMs with and without it.
    g = Geometry(replace(gemm.problem_type, use_beta=True), gemm.derived)
    pa = gemm.pointer_array
    slices = gemm.global_split_u if slices is None else slices
    name = (post_gsu_name(gemm.batched, gemm.dest_type, gemm.compute_type, slices, pa) if slices > 1
            else conversion_name(gemm.batched, gemm.dest_type, pa))
    ctx = KernelContext(arch, g, name)
    layout = post_gsu_layout(gemm.compute_type, pa)
    regs, block = entry_registers(ctx, layout, workgroup_z=True)
    arg = regs.arg
    r, acc_bpe = g.acc_regs, 4 * g.acc_regs
    align = arch.vgpr["tuple_alignment"] if r > 1 else 1
    m = Module(name)
    oob, ws_off, d_off, c_off = (ctx.vgpr(n) for n in ("OOB", "OffsetWS", "OffsetD", "OffsetC"))
    total, part, c_val = (VReg("v", r, n, align) for n in ("Sum", "Part", "ValueC"))
    coords, row, col = elementwise.coordinates(ctx, regs)
    srd_d_mod, srd_d = elementwise.descriptor(ctx, regs, "D", g.out_bpe, pa)
    srd_c_mod, srd_c = elementwise.descriptor(ctx, regs, "C", g.out_bpe, pa)    # built only where beta is not 0
    m.add(load_arguments(ctx, regs, block), ctx.inst("v_mov_b32", oob, BUFFER_OOB), coords, srd_d_mod)
    # Workspace: base AddressWS; element (m, n, b) of slice s at s*slice + b*M*N + n*M + m.
    srd_ws, mn, slice_bytes, tmp = ctx.sgpr("SrdWS", 4), ctx.sgpr("MN"), ctx.sgpr("SliceBytes"), ctx.sgpr("Tmp")
    batch_base = ctx.vgpr("BatchBase")
    m.add(ctx.inst("s_mov_b64", srd_ws.slice(0, 2), arg("AddressWS")),
          ctx.inst("s_mul_i32", mn, arg("SizesFree0"), arg("SizesFree1")),
          ctx.inst("s_mul_i32", slice_bytes, mn, arg("SizesFree2")),
          ctx.inst("s_lshl_b32", slice_bytes, slice_bytes, acc_bpe.bit_length() - 1),
          ctx.inst("s_mul_i32", srd_ws[2], slice_bytes, slices),
          ctx.inst("s_mov_b32", srd_ws[3], arch.memory["buffer_srd_word3"]),
          ctx.inst("s_mul_i32", tmp, mn, regs.workgroup[2]),
          ctx.inst("v_mov_b32", batch_base, tmp),
          ctx.inst("v_mul_lo_u32", ws_off, col, arg("SizesFree0")),
          ctx.inst("v_add3_u32", ws_off, ws_off, row, batch_base),
          ctx.inst("v_lshlrev_b32", ws_off, acc_bpe.bit_length() - 1, ws_off),
          elementwise.masked_offset(ctx, regs, d_off, row, col, arg("StridesD0"), g.out_bpe, oob),
          elementwise.masked_offset(ctx, regs, c_off, row, col, arg("StridesC0"), g.out_bpe, oob),
          # rows/columns past the edge: out-of-range workspace reads too (VCC holds the column test)
          ctx.inst("v_cmp_eq_u32", VCC, d_off, oob),
          ctx.inst("v_cndmask_b32", ws_off, ws_off, oob, VCC))
    load = LOAD_OUT[acc_bpe]
    pr = g.part_regs        # complex: the real and the imaginary parts add apart
    add = "v_add_f64" if pr > 1 else "v_add_f32"
    m.add(ctx.inst(load, total, ws_off, srd_ws, 0, mods=["offen"]))
    for s in range(1, slices):
        m.add(ctx.inst("v_add_u32", ws_off, slice_bytes, ws_off),
              ctx.inst(load, part, ws_off, srd_ws, 0, mods=["offen"]),
              *(ctx.inst(add, total.slice(q, pr), total.slice(q, pr), part.slice(q, pr)) for q in range(0, r, pr)))
    scalars_mod, scalars = load_scalars(ctx, regs)
    beta_zero, done = ctx.label("BetaZero"), ctx.label("Done")
    beta_bits, beta = ctx.sgpr("BetaMagnitude"), arg("Beta")
    m.add(scalars_mod, scale(ctx, total, scalars.alpha))
    if g.complex:   # beta is 0 when both parts are (either sign)
        bits = ctx.sgpr("BetaPartMagnitude")
        m.add(ctx.inst("s_mov_b32", beta_bits, 0))
        for q in range(2):
            m.add(ctx.inst("s_and_b32", bits, beta[q * pr + pr - 1], 0x7FFFFFFF),
                  ctx.inst("s_or_b32", beta_bits, beta_bits, bits),
                  ctx.inst("s_or_b32", beta_bits, beta_bits, beta[q * pr]) if pr > 1 else None)
    elif g.compute_type == "D":
        m.add(ctx.inst("s_and_b32", beta_bits, beta[1], 0x7FFFFFFF), ctx.inst("s_or_b32", beta_bits, beta_bits, beta[0]))
    else:
        m.add(ctx.inst("s_and_b32", beta_bits, beta[0], 0x7FFF if g.compute_type == "H" else 0x7FFFFFFF))
    m.add(ctx.inst("s_cmp_eq_u32", beta_bits, 0),
          ctx.inst("s_cbranch_scc1", beta_zero),
          srd_c_mod,
          ctx.inst(LOAD_OUT[g.out_bpe], c_val, c_off, srd_c, 0, mods=["offen"]),
          widen_c(ctx, c_val),
          add_beta_c(ctx, total, scalars.beta, c_val) if g.complex else fma(ctx, total, scalars.beta, c_val),
          LabelDef(beta_zero.name))
    narrowing, out = narrow(ctx, total)
    m.add(narrowing, ctx.inst(STORE_OUT[g.out_bpe], out, d_off, srd_d, 0, mods=["offen"]), ctx.inst("s_endpgm"))
    return finish(ctx, m, layout)
