"""Kernel shapes the writer's thread-to-data assignments cannot cover, with one readable reason each.

The geometry comes from a valid solution's derivation, which already guarantees what Tensile requires
(whole loads per thread, a NumLoadsCoalesced that splits them, ThreadTile a multiple of VectorWidth,
DepthU a multiple of LocalSplitU, at most 16 bytes per load); these are the writer's own limits on top.
Checked by ``build.supports`` for solutions and again by ``write_kernel``.
"""

from __future__ import annotations

from tensile_asm.writer.context import Geometry


def fractional(g: Geometry, op: str) -> bool:
    """Some load of ``op`` has lanes whose vector is outside the tile (FractionalLoad)."""
    from tensile_asm.writer.global_read import load_bounds
    return any(load_bounds(g, op, i) != (None, None) for i in range(g.num_loads(op)))


def geometry_reason(g: Geometry) -> str | None:
    """Shapes the writer's thread-to-data assignments cannot cover, with the reason."""
    iu = g.derived.inner_unroll
    if not g.derived.is_mfma and g.derived.loop_unroll < 2:
        return (f"LoopUnroll {g.derived.loop_unroll} (DepthU {g.depth_u} / LocalSplitU {g.local_split_u} / "
                f"InnerUnroll {iu}): the VALU writer unrolls at least 2; use a DepthU of at least 2 x LocalSplitU x "
                f"InnerUnroll")
    if g.depth_u % (g.local_split_u * iu):
        return (f"DepthU={g.depth_u} is not a multiple of LocalSplitU {g.local_split_u} x InnerUnroll {iu} "
                f"(Tensile's LoopUnroll would drop K values)")
    if g.stagger_u & (g.stagger_u - 1):
        return f"StaggerU={g.stagger_u}: the writer needs 0 or a power of two"
    for op, mt, tlu in (("A", g.mt0, g.tlu_a), ("B", g.mt1, g.tlu_b)):
        glvw = g.glvw(op)
        if (mt if tlu else g.depth_u) % glvw:
            return f"GlobalReadVectorWidth={glvw} does not divide the {op} tile's unit-stride side"
        lsc, lsp = g.load_spacing(op)
        per_row = lsc // glvw       # threads along the coalesced dimension
        if g.num_threads // per_row < lsp:
            return (f"NumLoadsCoalesced{op}={g.num_loads_coalesced(op)}: the threads do not cover whole rows "
                    f"of the {op} tile")
        if g.num_threads % per_row and not getattr(g, f"coalesce_group_{op.lower()}"):
            return (f"GlobalReadCoalesceGroup{op} false with a partial row of threads (FractionalLoad) is not "
                    f"implemented")
        tsgr = g.thread_separate(op)
        if tsgr and (g.direct_to_lds(op) or not getattr(g, f"coalesce_group_{op.lower()}")
                     or g.num_threads % g.wavefront_size or g.wavefront_size % per_row):
            return (f"ThreadSeparateGlobalRead{op}={tsgr} is implemented with GlobalReadCoalesceGroup{op}, whole waves "
                    f"and a row of threads within a wave, without DirectToLds{op}; use ThreadSeparateGlobalRead{op} 0")
        if fractional(g, op) and not g.buffer_load:
            return "FractionalLoad with partial loads needs BufferLoad (global loads have no range check)"
    from tensile_asm.writer.direct_to_lds import reason as direct_to_lds_reason
    why = direct_to_lds_reason(g)
    if why:
        return why
    if not g.buffer_store and g.global_split_u > 1 and not g.gsu_multiple_buffer:
        return "BufferStore false with GlobalSplitU SingleBuffer (global atomics) is not implemented"
    return None
