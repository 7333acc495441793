"""Where this work-group's batch of A, B, C and D starts.

Strided batches: Address<X> + WorkGroup2 * Strides<X>1 elements. Pointer-array ("general") batches
(ProblemType StridedBatched false, Tensile's ``_GB`` kernels): Address<X> is an array of per-batch
pointers; the prologue (``load_batch_pointers``) replaces each Address<X> argument register by this
batch's pointer plus Offset<X> elements, as Tensile 4.44's ``loadBatchedAddress`` and
``allocateResources`` do, so later code takes Address<X> as the batch's base. Like Tensile's kernel
it never reads C's pointer when beta is 0, nor A's and B's when alpha or K is 0; then our kernel also
sets A's and B's buffer ranges (Tensor2dSize) to 0, so its buffer loads read zeros, not whatever lies
at the pointer arrays' addresses (with BufferLoad false, whose global loads have no range, it sets K to 0:
no A or B element is read).
"""

from __future__ import annotations

from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.writer.context import KernelContext

def batch_base(ctx: KernelContext, regs, base, letter: str, bpe: int, batched: bool = True,
               pointer_array: bool = False) -> Module:
    """base (an SGPR pair) = Address<letter> + WorkGroup2 * Strides<letter>1 * bpe, in 64 bits; for a
    pointer-array kernel, Address<letter> itself (``load_batch_pointers`` has made it this batch's)."""
    arg = regs.arg
    address = arg(f"Address{letter}")
    if not batched or pointer_array:
        return Module(f"base of {letter}").add(ctx.inst("s_mov_b64", base, address))
    prod, stride = ctx.sgpr(f"BatchOffset{letter}", 2), arg(f"Strides{letter}1")
    return Module(f"base of this batch's {letter}").add(
        ctx.inst("s_mul_i32", prod[0], regs.workgroup[2], stride),
        ctx.inst("s_mul_hi_u32", prod[1], regs.workgroup[2], stride),
        ctx.inst("s_lshl_b64", prod, prod, bpe.bit_length() - 1),
        ctx.inst("s_add_u32", base[0], address[0], prod[0]),
        ctx.inst("s_addc_u32", base[1], address[1], prod[1]))


def branch_if_zero(ctx: KernelContext, value, compute_type: str, label, name: str,
                   comment: str = "+0 and -0 both count as 0") -> list:
    """Instructions that branch to ``label`` when the alpha/beta argument ``value`` (compute type S, D or H)
    is +0 or -0 (compute type I: int32 0; complex C and Z: both parts +0 or -0, as Tensile's test)."""
    bits = ctx.sgpr(f"{name}Magnitude")
    if compute_type in ("C", "Z"):   # every part's sign bit off (the high word of each fp64 part), ORed
        words = 2 if compute_type == "C" else 4
        signs = (0, 1) if compute_type == "C" else (1, 3)
        out = [ctx.inst("s_and_b32", bits, value[signs[0]], 0x7FFFFFFF, comment=comment)]
        for w in range(words):
            if w == signs[0]:
                continue
            if w in signs:
                tmp = ctx.sgpr(f"{name}MagnitudePart")
                out += [ctx.inst("s_and_b32", tmp, value[w], 0x7FFFFFFF), ctx.inst("s_or_b32", bits, bits, tmp)]
            else:
                out.append(ctx.inst("s_or_b32", bits, bits, value[w]))
    elif compute_type == "D":   # fp64: sign bit off the high word, then OR in the low word
        out = [ctx.inst("s_and_b32", bits, value[1], 0x7FFFFFFF, comment=comment),
               ctx.inst("s_or_b32", bits, bits, value[0])]
    else:
        mask = 0x7FFF if compute_type == "H" else 0xFFFFFFFF if compute_type == "I" else 0x7FFFFFFF
        out = [ctx.inst("s_and_b32", bits, value[0], mask, comment=comment)]
    return out + [ctx.inst("s_cmp_eq_u32", bits, 0), ctx.inst("s_cbranch_scc1", label)]


def load_batch_pointers(ctx: KernelContext, regs) -> Module | None:
    """Pointer-array kernels: Address<X> = Address<X>[WorkGroup2] + Offset<X> * bytes per element (None for
    others: their code stays as it was)."""
    g, arg = ctx.geometry, regs.arg
    if not g.pointer_array:
        return None
    m = Module("this batch's pointers (pointer-array batched GEMM)")
    index = ctx.sgpr("BatchPointerOffset")
    # GlobalSplitU with a workspace (MultipleBuffer, _GA SingleBuffer): D is the workspace, strided as ever
    # (Tensile's isStridedBuffer), and Tensile's host passes the workspace as C too (ws_c, no pointer array);
    # these kernels do not read C (the helper kernels apply beta), so neither pointer is loaded
    letters = "AB" if g.strided_d else "DCAB"
    m.add(ctx.inst("s_lshl_b32", index, regs.workgroup[2], 3, comment="WorkGroup2 * 8 bytes per pointer"))
    if not g.strided_d:
        m.add(ctx.inst("s_load_dwordx2", arg("AddressD"), arg("AddressD"), index))
    if g.use_beta and not g.strided_d:
        skip_c = ctx.label("SkipBatchPointerC")
        m.add(branch_if_zero(ctx, arg("Beta"), g.compute_type, skip_c, "BatchBeta"),
              ctx.inst("s_load_dwordx2", arg("AddressC"), arg("AddressC"), index),
              LabelDef(skip_c.name))
    no_ab, done = ctx.label("NoBatchPointersAB"), ctx.label("BatchPointersDone")
    m.add(ctx.inst("s_cmp_eq_u32", arg("SizesSum0"), 0, comment="K == 0: A and B are not read"),
          ctx.inst("s_cbranch_scc1", no_ab),
          branch_if_zero(ctx, arg("Alpha"), g.compute_type, no_ab, "BatchAlpha"),
          ctx.inst("s_load_dwordx2", arg("AddressA"), arg("AddressA"), index),
          ctx.inst("s_load_dwordx2", arg("AddressB"), arg("AddressB"), index),
          ctx.inst("s_branch", done),
          LabelDef(no_ab.name))
    if g.buffer_load:
        m.add(ctx.inst("s_mov_b32", arg("Tensor2dSizeA")[0], 0, comment="empty ranges: A and B read as zeros"),
              ctx.inst("s_mov_b32", arg("Tensor2dSizeA")[1], 0),
              ctx.inst("s_mov_b32", arg("Tensor2dSizeB")[0], 0),
              ctx.inst("s_mov_b32", arg("Tensor2dSizeB")[1], 0))
    else:   # global loads have no range to empty: no K steps at all (alpha * A*B is 0 anyway)
        m.add(ctx.inst("s_mov_b32", arg("SizesSum0"), 0, comment="A and B are not read: K = 0"))
    m.add(LabelDef(done.name))
    for letter in letters:
        shift = (g.in_bpe if letter in "AB" else g.out_bpe).bit_length() - 1
        offset, address = arg(f"Offset{letter}"), arg(f"Address{letter}")
        m.add(ctx.inst("s_lshl_b64", offset, offset, shift, comment=f"Offset{letter} elements to bytes"),
              ctx.inst("s_add_u32", address[0], address[0], offset[0]),
              ctx.inst("s_addc_u32", address[1], address[1], offset[1]))
    return m
