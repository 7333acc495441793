"""Addresses in an operand's LDS tile, for the local writes and the local reads alike.

An operand's tile is laid out as Tensile 4.44 lays it out (``solution.layout.OperandLds``): K-major (K value
k a row of MacroTile elements) or unroll-major (UnrollMajorLDS / TransposeLDS: tile index t a row of DepthU
elements), each row followed by LdsPad elements -- or, with LdsBlockSizePerPad, LdsPad elements after every
LdsBlockSizePerPad bytes of the unpadded tile (element e at ``e + (e // interval) * pad``).

Every LDS access is a per-lane address register (computed once, block pads included) plus an instruction
offset; the offset gets the block pads of its own part (``OperandLds.padded``). That sum is the element's
address only where no access crosses a pad boundary that neither part accounts for: ``lds_reason`` checks
this for every access the kernel makes (``OperandLds.splits``) and refuses the solution otherwise.
"""

from __future__ import annotations

from tensile_asm.isa.module import Module
from tensile_asm.solution.layout import OperandLds
from tensile_asm.writer.context import Geometry, KernelContext


def element_address(ctx: KernelContext, dst, lay: OperandLds, tile_index, k_index, bpe: int,
                    base: int = 0) -> Module:
    """dst = byte address of element (tile_index, k_index) of the tile, plus ``base`` bytes (VGPRs; ``dst``
    must be neither index)."""
    tmp = ctx.vgpr("LdsElementTmp")
    m = Module("LDS element address")
    if lay.unroll_major:   # (t, k) at t*(DepthU + pad) + k
        m.add(ctx.inst("v_mul_u32_u24", dst, lay.stride_tile, tile_index), ctx.inst("v_add_u32", dst, dst, k_index))
    else:                  # (t, k) at k*(MT + pad) + t
        m.add(ctx.inst("v_mul_u32_u24", dst, lay.stride_k, k_index), ctx.inst("v_add_u32", dst, dst, tile_index))
    if lay.block_padded:
        m.add(ctx.inst("v_lshrrev_b32", tmp, lay.interval.bit_length() - 1, dst,
                       comment=f"blocks of {lay.interval} elements before it"),
              ctx.inst("v_mul_u32_u24", tmp, lay.pad, tmp),
              ctx.inst("v_add_u32", dst, dst, tmp, comment=f"+ {lay.pad} elements of pad per block"))
    if bpe > 1:
        m.add(ctx.inst("v_lshlrev_b32", dst, bpe.bit_length() - 1, dst))
    if base:
        m.add(ctx.inst("v_add_u32", dst, base, dst))
    return m


def offset(lay: OperandLds, t: int, k: int) -> int:
    """Element offset of (t, k) from an address register, block pads of the offset's own part included."""
    return lay.padded(lay.unpadded(t, k))


def vector_offsets(lay: OperandLds, along_tile: bool, n: int) -> list[int] | None:
    """Element offsets of ``n`` neighbouring elements along the tile dimension (or along K) from the first;
    None where they are contiguous in LDS (one wide access)."""
    stride = lay.stride_tile if along_tile else lay.stride_k
    if stride == 1:
        return None
    return [lay.padded(j * stride) for j in range(n)]


def write_pattern(g: Geometry, op: str) -> tuple[list[int], list[int]]:
    """(unpadded first elements, offsets) of the local writes of ``op``: every vector start in the tile
    (a superset of the threads' ones) and the offsets of the vector's elements."""
    lay = g.lds_tile(op)
    tlu = g.tlu_a if op == "A" else g.tlu_b
    glvw = g.glvw(op)
    mt = g.mt0 if op == "A" else g.mt1
    along = range(0, mt if tlu else g.depth_u, glvw)
    across = range(mt if not tlu else g.depth_u)
    bases = [lay.unpadded(a, c) if tlu else lay.unpadded(c, a) for a in along for c in across]
    stride = lay.stride_tile if tlu else lay.stride_k
    return bases, [j * stride for j in range(glvw)]


def lds_reason(g: Geometry, read_pattern) -> str | None:
    """Why the tiles' block pads cannot be honoured by address + instruction offset (None if they can).
    ``read_pattern(operand)``: (unpadded lane bases, unpadded offsets) of the operand's local reads."""
    for op in "AB":
        lay = g.lds_tile(op)
        if not lay.block_padded:
            continue
        block = lay.interval * g.in_bpe
        if lay.interval & (lay.interval - 1):
            return f"LdsBlockSizePerPad{op} {block}: the writer needs a power of two of elements between pads"
        if lay.splits(*write_pattern(g, op)):
            return (f"LdsBlockSizePerPad{op} {block} with LdsPad{op} {lay.pad}: a pad falls inside a local write "
                    f"of {op} (not implemented)")
        if lay.splits(*read_pattern(op)):
            return (f"LdsBlockSizePerPad{op} {block} with LdsPad{op} {lay.pad}: a pad falls between a local "
                    f"read's address and its offset (not implemented)")
    return None
