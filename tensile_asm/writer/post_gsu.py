"""The conversion (post-GSU) kernel of GlobalSplitU with a workspace: D = alpha * (the sum of the GlobalSplitU
partial tiles in the workspace) + beta*C, converted to D's type (C is not read when beta is 0). MultipleBuffer
launches it with the solution's GlobalSplitU, alpha and beta; _GlobalAccumulation SingleBuffer with gsu 1,
alpha 1 and beta 0 (its workspace already holds beta*C + alpha*A*B).

Arguments and launch as Tensile 4.44's host makes them (gemm/helpers.py, ``generateOutputConversionCall``): D,
WS, C (D and C as pointer arrays for ``_GB``), [OffsetD, OffsetC], Alpha, Beta, StridesD1/2, StridesWS1/2,
StridesC1/2, SizesFree0/1/2, GSU; slice s of the workspace is a packed M x N x batch tile of the accumulator
type at element s*M*N*batch. A 1-D grid of 256-thread work-groups; Tensile's generator builds several variants
(``helpers.conversion_variants``) and its host picks one by the problem size and the CU count: ``_VW2``, two
consecutive rows per thread (M is even then); ``_R<r>``, r threads per element group, of which here the first
sums every slice and the others do nothing; ``PostGSU<mod>[_mod<unit>]``, Tensile's unrolling of the slice loop,
a name only here: every variant loops over the GSU argument. The variants are correct for the host's launch,
not tuned as Tensile's (no wide loads, no cross-lane reduction).
"""

from __future__ import annotations

from dataclasses import replace

from tensile_asm.gemm.helpers import Conversion, conversion_layout
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer import elementwise
from tensile_asm.writer.beta_only import finish
from tensile_asm.writer.context import Geometry, KernelContext
from tensile_asm.writer.mac import fma
from tensile_asm.writer.store import LOAD_OUT, STORE_OUT, add_beta_c, load_scalars, narrow, scale, widen_c


def write_post_gsu(arch: Arch, gemm: Geometry, variant: Conversion):
    """The conversion kernel ``variant`` (gemm.helpers.Conversion) for the GEMM ``gemm``'s types."""
    from tensile_asm.writer.prologue import entry_registers, load_arguments

    # The GEMM's types (C/D, accumulator, alpha and beta); the conversion always takes beta, so one kernel
    # serves the GEMMs with and without it.
    g = Geometry(replace(gemm.problem_type, use_beta=True), gemm.derived)
    pa, batched, vw = gemm.pointer_array, gemm.batched, variant.vw
    name = variant.name(batched, gemm.dest_type, pa)
    ctx = KernelContext(arch, g, name)
    layout = conversion_layout(gemm.compute_type, pa, batched)
    regs, block = entry_registers(ctx, layout, workgroup_z=False)
    arg = regs.arg
    r, acc_bpe = g.acc_regs, 4 * g.acc_regs
    align = arch.vgpr["tuple_alignment"] if r > 1 else 1
    m = Module(name).add(load_arguments(ctx, regs, block))
    if g.compute_type == "H":       # alpha and beta are halves sharing a dword: beta is its upper half
        beta_half = ctx.sgpr("BetaHalf")
        m.add(ctx.inst("s_lshr_b32", beta_half, arg("Beta"), 16))
        regs.args["Beta"] = beta_half
    element_mod, el = elementwise.element(ctx, regs, batched, vw, variant.reduction)
    m.add(element_mod)
    ws_off, d_off, c_off = ctx.vgpr("OffsetWS"), ctx.vgpr("OffsetD"), ctx.vgpr("OffsetC")
    totals = [VReg("v", r, f"Sum{j}", align) for j in range(vw)]
    parts_ = [VReg("v", r, f"Part{j}", align) for j in range(vw)]
    c_vals = [VReg("v", r, f"ValueC{j}", align) for j in range(vw)]
    load = LOAD_OUT[acc_bpe]
    pr = g.part_regs        # complex: the real and the imaginary parts add apart
    add = "v_add_f64" if pr > 1 else "v_add_f32"
    slice_bytes, count = ctx.sgpr("SliceBytes", 2), ctx.sgpr("SlicesLeft")

    def at(j: int, nbytes: int) -> list:
        return ["offen", ("offset", j * nbytes)] if j else ["offen"]

    def body(batch) -> Module:
        b = Module("D = alpha * sum + beta*C")
        srd_d_mod, srd_d = elementwise.descriptor(ctx, regs, "D", g.out_bpe, batch, pa)
        srd_ws_mod, srd_ws = elementwise.descriptor(ctx, regs, "WS", acc_bpe, batch, False)
        srd_c_mod, srd_c = elementwise.descriptor(ctx, regs, "C", g.out_bpe, batch, pa)   # only where beta is not 0
        loop = ctx.label("NextSlice")
        # as Tensile's kernel: the sum starts at 0 and adds the GSU slices in order (GSU >= 1)
        b.add(srd_d_mod, srd_ws_mod,
              elementwise.offset(ctx, ws_off, el, arg("StridesWS1"), acc_bpe),
              elementwise.offset(ctx, d_off, el, arg("StridesD1"), g.out_bpe),
              elementwise.offset(ctx, c_off, el, arg("StridesC1"), g.out_bpe),
              [ctx.inst("v_mov_b32", totals[j][q] if r > 1 else totals[j], 0) for j in range(vw) for q in range(r)],
              ctx.inst("s_mov_b32", count, arg("GSU")),
              LabelDef(loop.name),
              [ctx.inst(load, parts_[j], ws_off, srd_ws, 0, mods=at(j, acc_bpe)) for j in range(vw)],
              [ctx.inst(add, totals[j].slice(q, pr), totals[j].slice(q, pr), parts_[j].slice(q, pr))
               for j in range(vw) for q in range(0, r, pr)],
              ctx.inst("s_add_u32", srd_ws[0], srd_ws[0], slice_bytes[0], comment="the next slice"),
              ctx.inst("s_addc_u32", srd_ws[1], srd_ws[1], slice_bytes[1]),
              ctx.inst("s_sub_u32", count, count, 1),
              ctx.inst("s_cmp_lg_u32", count, 0),
              ctx.inst("s_cbranch_scc1", loop))
        scalars_mod, scalars = load_scalars(ctx, regs)
        beta_zero = ctx.label("BetaZero")
        beta_bits, beta = ctx.sgpr("BetaMagnitude"), regs.arg("Beta")
        b.add(scalars_mod, [scale(ctx, totals[j], scalars.alpha) for j in range(vw)])
        if g.complex:   # beta is 0 when both parts are (either sign)
            bits = ctx.sgpr("BetaPartMagnitude")
            b.add(ctx.inst("s_mov_b32", beta_bits, 0))
            for q in range(2):
                b.add(ctx.inst("s_and_b32", bits, beta[q * pr + pr - 1], 0x7FFFFFFF),
                      ctx.inst("s_or_b32", beta_bits, beta_bits, bits),
                      ctx.inst("s_or_b32", beta_bits, beta_bits, beta[q * pr]) if pr > 1 else None)
        elif g.compute_type == "D":
            b.add(ctx.inst("s_and_b32", beta_bits, beta[1], 0x7FFFFFFF), ctx.inst("s_or_b32", beta_bits, beta_bits, beta[0]))
        else:
            b.add(ctx.inst("s_and_b32", beta_bits, beta if g.compute_type == "H" else beta[0],
                           0x7FFF if g.compute_type == "H" else 0x7FFFFFFF))
        b.add(ctx.inst("s_cmp_eq_u32", beta_bits, 0),
              ctx.inst("s_cbranch_scc1", beta_zero),
              srd_c_mod)
        for j in range(vw):
            b.add(ctx.inst(LOAD_OUT[g.out_bpe], c_vals[j], c_off, srd_c, 0, mods=at(j, g.out_bpe)),
                  widen_c(ctx, c_vals[j]),
                  add_beta_c(ctx, totals[j], scalars.beta, c_vals[j]) if g.complex
                  else fma(ctx, totals[j], scalars.beta, c_vals[j]))
        b.add(LabelDef(beta_zero.name))
        for j in range(vw):
            narrowing, out = narrow(ctx, totals[j])
            b.add(narrowing, ctx.inst(STORE_OUT[g.out_bpe], out, d_off, srd_d, 0, mods=at(j, g.out_bpe)))
        return b

    # a slice: M*N*batch elements of the accumulator type (64-bit bytes)
    mn = ctx.sgpr("SliceElements")
    m.add(ctx.inst("s_mul_i32", mn, arg("SizesFree0"), arg("SizesFree1")))
    if batched:
        m.add(ctx.inst("s_mul_i32", mn, mn, arg("SizesFree2")))
    m.add(ctx.inst("s_lshr_b32", slice_bytes[1], mn, 32 - (acc_bpe.bit_length() - 1)),
          ctx.inst("s_lshl_b32", slice_bytes[0], mn, acc_bpe.bit_length() - 1),
          elementwise.batch_loop(ctx, el, body))
    return finish(ctx, m, layout)
