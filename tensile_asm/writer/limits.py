"""Kernel shapes the writer's thread-to-data assignments cannot cover, with one readable reason each.

Checked by ``build.supports`` for solutions and by ``write_kernel`` for any Geometry, so a hand-built
shape the assignments cannot cover is refused instead of producing a wrong kernel.
"""

from __future__ import annotations

from tensile_asm.writer.context import Geometry


def geometry_reason(g: Geometry) -> str | None:
    """Shapes the writer's thread-to-data assignments cannot cover, with the reason."""
    if g.depth_u & (g.depth_u - 1):
        return f"DepthU={g.depth_u}: the writer needs a power of two"
    if g.stagger_u & (g.stagger_u - 1):
        return f"StaggerU={g.stagger_u}: the writer needs 0 or a power of two"
    for op, mt, tlu in (("A", g.mt0, g.tlu_a), ("B", g.mt1, g.tlu_b)):
        glvw = g.glvw(op)
        if (mt * g.depth_u) % (g.num_threads * glvw):
            return (f"MacroTile{0 if op == 'A' else 1}={mt} x DepthU={g.depth_u} is not a multiple of "
                    f"NumThreads={g.num_threads} x GlobalReadVectorWidth={glvw}, so the {op} tile cannot be "
                    f"split into whole loads")
        if (mt if tlu else g.depth_u) % glvw:
            return f"GlobalReadVectorWidth={glvw} does not divide the {op} tile's unit-stride side"
        coal, perp = g.load_extents(op)
        nlc, loads = g.num_loads_coalesced(op), g.num_loads(op)
        if loads % nlc or (coal // glvw) % nlc or perp % (loads // nlc):
            return f"NumLoadsCoalesced{op}={nlc} does not split the {op} tile's {loads} loads per thread"
        lsc, lsp = g.load_spacing(op)
        if g.num_threads % (lsc // glvw) or (g.num_threads // (lsc // glvw)) != lsp:
            return f"NumLoadsCoalesced{op}={nlc}: the threads do not cover whole rows of the {op} tile"
    if g.tt0 % g.vector_width or g.tt1 % g.vector_width:
        return f"VectorWidth={g.vector_width} does not divide ThreadTile {g.tt0}x{g.tt1}"
    if g.local_split_u > 1 and (g.mt0 * g.mt1) % g.num_threads:
        return (f"LocalSplitU={g.local_split_u}: the {g.mt0}x{g.mt1} tile does not split evenly over "
                f"{g.num_threads} threads for the reduction")
    if not g.buffer_load and (g.glvw_a > 1 or g.glvw_b > 1):
        return "BufferLoad false (global loads, no range check) is implemented for GlobalReadVectorWidth 1 only"
    if not g.buffer_store and g.global_split_u > 1 and not g.gsu_multiple_buffer:
        return "BufferStore false with GlobalSplitU SingleBuffer (global atomics) is not implemented"
    if g.local_split_u > 1 and g.acc_regs > 1:
        return "LocalSplitU with fp64 accumulators is not implemented"
    if g.in_bpe < 4 and (g.glvw_a > 1 or g.glvw_b > 1):
        return ("GlobalReadVectorWidth > 1 for 16-bit inputs is not implemented (a vector load could "
                "straddle the end of the matrix)")
    if g.glvw_a * g.in_bpe > 16 or g.glvw_b * g.in_bpe > 16:
        return f"GlobalReadVectorWidth x {g.in_bpe} bytes exceeds the 16-byte load"
    if g.depth_u % g.local_split_u:
        return f"DepthU={g.depth_u} is not a multiple of LocalSplitU={g.local_split_u}"
    return None
