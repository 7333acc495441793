"""The beta-only kernel GlobalSplitU needs before the GEMM: D = beta*C (0 when beta is 0, so NaNs in C
never reach D), which the GEMM's slices then add alpha*A*B into with atomics.

Tensile builds this helper as a HIP kernel named ``C<indices>_<DestChar>`` (``Cijk_S``); ours is
written in assembly with the same name and takes what Tensile 4.44's host passes it (gemm/helpers.py,
``generateBetaOnlyCall``): D (or the workspace), C (pointer arrays for ``_GB``), [OffsetD, OffsetC],
StridesD1/2, StridesC1/2 (0 where that size is 1), SizesFree0/1/2, Beta (in the compute type: fp32, int32,
fp16 for ``Cijk_H``, fp64 for ``Cijk_D``, complex). One element per thread, a 1-D grid of 256-thread
work-groups (writer/elementwise.py).

16-bit C/D (``H``): each thread reads its own half (``buffer_load_ushort``), multiplies it by the fp16 beta
in fp16 (``v_mul_f16``, as Tensile's ``((half)C[idxC]) * beta``) and writes the half back with
``buffer_store_short``; the neighbouring half of the dword is another thread's (or padding) and is not
touched here. The GEMM's slices later add into D with a compare-and-swap on the dword (store.py).
"""

from __future__ import annotations

from tensile_asm.gemm.helpers import beta_only_layout, beta_only_name
from tensile_asm.isa.allocation import allocate
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.writer import signature
from tensile_asm.writer.context import KernelContext

from tensile_asm.gemm.helpers import THREADS
from tensile_asm.writer import elementwise


# per C/D type: bytes, load, store, multiply (VGPR = beta * VGPR; None: complex), mask of beta's magnitude per dword
_TYPES = {
    "S": (4, "buffer_load_dword", "buffer_store_dword", "v_mul_f32", (0x7FFFFFFF,)),
    "I": (4, "buffer_load_dword", "buffer_store_dword", "v_mul_lo_u32", (0xFFFFFFFF,)),
    "H": (2, "buffer_load_ushort", "buffer_store_short", "v_mul_f16", (0x7FFF,)),
    "D": (8, "buffer_load_dwordx2", "buffer_store_dwordx2", "v_mul_f64", (0xFFFFFFFF, 0x7FFFFFFF)),
    "C": (8, "buffer_load_dwordx2", "buffer_store_dwordx2", None, (0x7FFFFFFF, 0x7FFFFFFF)),
    "Z": (16, "buffer_load_dwordx4", "buffer_store_dwordx4", None,
          (0xFFFFFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FFFFFFF)),
}


def _complex_beta(ctx: KernelContext, out, beta, c, part: int) -> Module:
    """out = beta * c for one complex element (fp32 parts for C, fp64 for Z; ``part`` registers a part):
    re = br*cr - bi*ci, im = bi*cr + br*ci (a product, then a multiply-add), as Tensile's helper's complex
    ``C[idxC] * beta``."""
    mul, fma = ("v_mul_f32", "v_fma_f32") if part == 1 else ("v_mul_f64", "v_fma_f64")
    br, bi = beta.slice(0, part), beta.slice(part, part)
    cr, ci = c.slice(0, part), c.slice(part, part)
    re, im = out.slice(0, part), out.slice(part, part)
    return Module("D = beta * C (complex)").add(
        ctx.inst(mul, re, br, cr),
        ctx.inst(fma, re, bi, ci, re, mods=[("neg", 2)]),
        ctx.inst(mul, im, bi, cr),
        ctx.inst(fma, im, br, ci, im))


# ``workspace``: C of these types widened to the fp32 workspace (load, widen)
_WIDEN = {"B": ("buffer_load_ushort", "v_lshlrev_b32", 16), "H": ("buffer_load_ushort", "v_cvt_f32_f16", None)}


def write_beta_only(arch: Arch, batched: bool, dest: str = "S", pointer_array: bool = False, workspace: bool = False):
    """D = beta*C for C/D of type ``dest``: fp32 S, int32 I (wrapping multiply, beta 0 on all 32 bits),
    fp16 H (multiplied in fp16), fp64 D, or complex C/Z (the complex product). Beta +0 or -0 (both parts, for
    complex) writes zeros without reading C (nor, with ``pointer_array``, C's pointer: Tensile's host may pass
    none then). ``workspace`` (Tensile's ``C<indices>_<D>_GA``, ``dest`` B or H): "D" is the packed fp32
    workspace of GlobalSplitU SingleBuffer with a compute type other than C/D's; C is widened to fp32 (bf16 by
    its bits, fp16 converted) and multiplied by the fp32 beta, and only C goes through pointers."""
    if workspace:
        return _write_workspace_beta_only(arch, batched, dest, pointer_array)
    from tensile_asm.writer.kernel import Kernel
    from tensile_asm.writer.prologue import entry_registers, load_arguments

    name = beta_only_name(batched, dest, pointer_array)
    layout = beta_only_layout(dest, pointer_array, batched)
    bpe, load, store, mul, masks = _TYPES[dest]
    ctx = KernelContext(arch, None, name)
    regs, block = entry_registers(ctx, layout, workgroup_z=False)
    arg = regs.arg
    off, c_off = ctx.vgpr("Offset"), ctx.vgpr("OffsetC")
    val = ctx.vgpr("Value", bpe // 4) if bpe >= 8 else ctx.vgpr("Value")
    beta = arg("Beta")
    element_mod, el = elementwise.element(ctx, regs, batched)

    def body(batch) -> Module:
        beta_bits = ctx.sgpr("BetaMagnitude")
        zero, done = ctx.label("BetaZero"), ctx.label("Done")
        srd_d_mod, srd_d = elementwise.descriptor(ctx, regs, "D", bpe, batch, pointer_array)
        srd_c_mod, srd_c = elementwise.descriptor(ctx, regs, "C", bpe, batch, pointer_array)
        m = Module("D = beta*C")
        m.add(srd_d_mod, elementwise.offset(ctx, off, el, arg("StridesD1"), bpe),
              elementwise.offset(ctx, c_off, el, arg("StridesC1"), bpe),
              ctx.inst("s_and_b32", beta_bits, beta[len(masks) - 1] if len(masks) > 1 else beta, masks[-1],
                       comment="+0 and -0 both mean D = 0"))
        if len(masks) > 1:      # fp64 and complex: the other dwords' magnitude bits too
            part_bits = ctx.sgpr("BetaPartMagnitude")
            for i, mask in enumerate(masks[:-1]):
                if mask == 0xFFFFFFFF:
                    m.add(ctx.inst("s_or_b32", beta_bits, beta_bits, beta[i]))
                else:
                    m.add(ctx.inst("s_and_b32", part_bits, beta[i], mask),
                          ctx.inst("s_or_b32", beta_bits, beta_bits, part_bits))
        m.add(ctx.inst("s_cmp_eq_u32", beta_bits, 0),
              ctx.inst("s_cbranch_scc1", zero),
              srd_c_mod,
              ctx.inst(load, val, c_off, srd_c, 0, mods=["offen"]))
        if mul is None:
            product = ctx.vgpr("Product", bpe // 4)
            m.add(_complex_beta(ctx, product, beta, val, bpe // 8),
                  [ctx.inst("v_mov_b32", val[i], product[i]) for i in range(bpe // 4)])
        else:
            m.add(ctx.inst(mul, val, beta, val))
        m.add(ctx.inst("s_branch", done),
              LabelDef(zero.name))
        for i in range(max(1, bpe // 4)):
            m.add(ctx.inst("v_mov_b32", val[i] if bpe >= 8 else val, 0))
        return m.add(LabelDef(done.name),
                     ctx.inst(store, val, off, srd_d, 0, mods=["offen"]))

    m = Module(name).add(load_arguments(ctx, regs, block), element_mod, elementwise.batch_loop(ctx, el, body))
    return finish(ctx, m, layout)


def _write_workspace_beta_only(arch: Arch, batched: bool, dest: str, pointer_array: bool):
    """``Cijk_<D>[_GB]_GA``: the packed fp32 workspace (strided by its strideW arguments, also for a pointer-array
    launch, whose OffsetD it ignores as Tensile's kernel) = beta * C widened to fp32."""
    from tensile_asm.writer.prologue import entry_registers, load_arguments

    name = beta_only_name(batched, dest, pointer_array, workspace=True)
    layout = beta_only_layout("S", pointer_array, batched)       # beta in the compute type, fp32 (BetaType)
    load, widen, shift = _WIDEN[dest]
    ctx = KernelContext(arch, None, name)
    regs, block = entry_registers(ctx, layout, workgroup_z=False)
    arg = regs.arg
    off, c_off, val = (ctx.vgpr(n) for n in ("Offset", "OffsetC", "Value"))
    element_mod, el = elementwise.element(ctx, regs, batched)

    def body(batch) -> Module:
        beta_bits = ctx.sgpr("BetaMagnitude")
        zero, done = ctx.label("BetaZero"), ctx.label("Done")
        srd_d_mod, srd_d = elementwise.descriptor(ctx, regs, "D", 4, batch, False)     # the workspace
        srd_c_mod, srd_c = elementwise.descriptor(ctx, regs, "C", 2, batch, pointer_array)
        return Module("WS = beta*C").add(
            srd_d_mod,
            elementwise.offset(ctx, off, el, arg("StridesD1"), 4),
            elementwise.offset(ctx, c_off, el, arg("StridesC1"), 2),
            ctx.inst("s_and_b32", beta_bits, arg("Beta"), 0x7FFFFFFF, comment="+0 and -0 both mean WS = 0"),
            ctx.inst("s_cmp_eq_u32", beta_bits, 0),
            ctx.inst("s_cbranch_scc1", zero),
            srd_c_mod,
            ctx.inst(load, val, c_off, srd_c, 0, mods=["offen"]),
            ctx.inst(widen, val, shift, val) if shift is not None else ctx.inst(widen, val, val),
            ctx.inst("v_mul_f32", val, arg("Beta"), val),
            ctx.inst("s_branch", done),
            LabelDef(zero.name),
            ctx.inst("v_mov_b32", val, 0),
            LabelDef(done.name),
            ctx.inst("buffer_store_dword", val, off, srd_d, 0, mods=["offen"]))

    m = Module(name).add(load_arguments(ctx, regs, block), element_mod, elementwise.batch_loop(ctx, el, body))
    return finish(ctx, m, layout)


def finish(ctx: KernelContext, m: Module, layout):
    """Allocate registers and wrap an elementwise kernel (256 threads, no LDS) as a Kernel."""
    from tensile_asm.writer.kernel import Kernel

    limits = {"v": ctx.arch.vgpr["arch_max"], "s": ctx.arch.sgpr["max_user"], "a": 0}
    alloc = allocate(m, limits, what=ctx.name)
    res = signature.Resources(vgprs=alloc.next_free["v"], agprs=0, sgprs=alloc.next_free["s"], lds_bytes=0,
                              workgroup_size=THREADS, workgroup_id_z=False)
    return Kernel(ctx.name, ctx.arch, ctx.geometry, layout, res, m, alloc.assignment)
