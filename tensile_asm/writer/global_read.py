"""Global read of the A and B tiles: buffer resource descriptors, the thread-to-element assignment,
per-load byte offsets, the loads themselves, and moving the descriptors along K.

Assignment: thread t's load i covers vector e = t + i*NumThreads of the MT x DepthU tile, each vector
GlobalReadVectorWidth elements along the operand's unit-stride dimension. Moving along K adds to the
per-load offsets (one VALU add per load instead of four SALU ops on the descriptor per operand); the
descriptor's num_records stays this batch's matrix, so no load can leave it: rows past the free size read whatever
the matrix holds there (only C rows that are never stored use them) or 0 past its end. K past the
summation size is handled by the tail loop's guard, which moves offsets out of range (loads give 0).

16-bit vectors along the free dimension (GlobalReadVectorWidth > 1, A not transposed or B transposed) must
not straddle the end of the matrix: the range check is per dword, so a dword whose first half is the
matrix's last element would read two bytes past it. Tensile 4.44 keeps such loads in range with ShiftPtr
(the vector is moved back to end at the last row, and the C values are shifted back after the loop); this
writer keeps the same guarantee (no read outside the matrix, every element exact) without moving C: at setup,
every vector that reaches past the free size gets offset bit 31 (its vector load is out of range and gives
0), and in a work-group whose tile has a partial vector (free size not a multiple of the width) the lanes
with one load its elements one by one (zero-extended 16-bit loads joined in pairs, the elements past the size out of
range), as Tensile's tail loop does along K (globalReadGuardK). Interior work-groups branch over that
(one scalar compare per operand and load phase). With AssertFree0/1ElementMultiple a multiple of the width
(Tensile's GuaranteeNoPartial; its Free0/1SizeMultiple predicate keeps other sizes away) no vector is partial
and the per-element code is not written. Vectors along K need no edge code in the unrolled loop (only whole
DepthU steps run there); the tail loop splits them into single elements, or into groups of
min(width, AssertSummationElementMultiple) elements that are all in or all out of K (Tensile's
elemAlignMin).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import EXEC, VCC, VReg
from tensile_asm.writer import direct_to_lds
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.direct_to_vgpr import dtv
from tensile_asm.writer.divide import divmod_const
from tensile_asm.writer.batch_address import batch_base
from tensile_asm.writer.lds_address import element_address, vector_offsets
from tensile_asm.writer.prologue import EntryRegisters

BUFFER_OOB = 0x80000000  # an offset past any num_records we set: loads give 0, stores are dropped
# buffer loads by bytes: 8- and 16-bit elements come zero-extended into a 32-bit register
LOAD_BYTES = {1: "buffer_load_ubyte", 2: "buffer_load_ushort", 4: "buffer_load_dword", 8: "buffer_load_dwordx2",
              12: "buffer_load_dwordx3", 16: "buffer_load_dwordx4"}
EDGE_BIT = 0x80000000    # set on the offsets of vectors reaching past the free size: their vector load gives 0


def load(ctx: KernelContext, op: "OperandTile", nbytes: int, data, offset, soffset=0):
    """One load of ``nbytes`` at byte ``offset`` (+ ``soffset``, an SGPR or 0) of the operand's matrix: a buffer
    load (out-of-range offsets give 0), or with BufferLoad off a global load from the descriptor's base address
    (which has no range check: the writer keeps those offsets in range itself)."""
    opcode = LOAD_BYTES[nbytes]
    if ctx.geometry.buffer_load:
        return ctx.inst(opcode, data, offset, op.srd, soffset, mods=["offen"])
    return ctx.inst(opcode.replace("buffer_", "global_"), data, offset, op.srd.slice(0, 2))


@dataclass
class OperandTile:
    """Everything one operand's global read needs, and the registers it owns."""

    name: str                  # 'A' or 'B'
    macro_tile: int
    tlu: bool                  # tile dimension is the unit-stride one
    glvw: int                  # elements per load, along the unit-stride dimension
    free_size_arg: str         # SizesFree0 (M) or SizesFree1 (N)
    srd: VReg
    chunk_bytes: VReg          # bytes of one DepthU step along K
    increment: VReg            # bytes one loop iteration advances (GlobalSplitU steps)
    offsets: list
    lds_addresses: list
    data: list                 # one VReg per load: the bytes as loaded
    lds_data: list             # one VReg per load: the elements as LDS holds them (fp32 / fp64)
    write_masks: list          # per load: None, or an SGPR pair of the lanes whose vector is in the tile
    edge_left: list | None = None   # per coalesced load: rows left before the free size (partial vectors), or None
    edge_flag: VReg | None = None   # SGPR: this work-group's tile has partial vectors of this operand
    dma_base: VReg | None = None    # DirectToLds: SGPR, lane 0's LDS address of load 0 (M0's base)
    # per load: bytes added to lds_addresses[i] as the local write's instruction offset (loads share an address
    # register where their LDS distance is a constant: ``lds_write_anchors``); None: 0 for every load
    lds_offsets: list | None = None
    # per load: an SGPR added to its offset by the buffer load (``sgpr_offsets``), or 0
    soffsets: list | None = None

    # VGPR with SGPR offsets where the loads further across run along the free dimension (K the unit-stride one):
    # the free size minus the row of the lane's first load (``row_gate``)
    rows_left: VReg | None = None

    dtv_set: VReg | None = None     # DirectToVgpr: the MFMA operand set the loads fill (direct_to_vgpr.py)

    def soffset(self, load: int):
        return self.soffsets[load] if self.soffsets else 0


    @property
    def stride_arg(self) -> str:
        return f"Strides{self.name}0"

    @property
    def tile_id(self) -> str:
        return "tile0" if self.name == "A" else "tile1"


def make_operand(ctx: KernelContext, name: str) -> OperandTile:
    g = ctx.geometry
    if dtv(g, name):
        return _dtv_operand(ctx, name, 0)
    n, glvw = g.num_loads(name), g.glvw(name)
    load_regs = max(1, glvw * g.in_bpe // 4)
    data = [ctx.vgpr(f"G2L{name}{i}", load_regs) for i in range(n)]
    widen = g.in_bpe < 4 and not g.narrow_lds
    edge = partial_vectors(g, name)
    nlc = g.num_loads_coalesced(name)
    anchors = lds_write_anchors(g, name)
    shared = sgpr_offsets(g, name)
    offsets = [ctx.vgpr(f"GlobalReadOffset{name}{c}") for c in range(nlc)]
    soffsets = [ctx.sgpr(f"GlobalReadSOffset{name}{p}") if p else 0 for p in range(n // nlc)]
    return OperandTile(
        name=name,
        macro_tile=g.mt0 if name == "A" else g.mt1,
        tlu=g.tlu_a if name == "A" else g.tlu_b,
        glvw=glvw,
        free_size_arg="SizesFree0" if name == "A" else "SizesFree1",
        srd=ctx.sgpr(f"Srd{name}", 4),
        chunk_bytes=ctx.sgpr(f"DepthUBytes{name}"),
        increment=ctx.sgpr(f"GlobalReadInc{name}"),
        offsets=[offsets[i % nlc] for i in range(n)] if shared else [ctx.vgpr(f"GlobalReadOffset{name}{i}")
                                                                      for i in range(n)],
        soffsets=[soffsets[i // nlc] for i in range(n)] if shared else None,
        rows_left=ctx.vgpr(f"RowsLeft{name}") if shared and not (g.tlu_a if name == "A" else g.tlu_b) else None,
        lds_addresses=_lds_write_registers(ctx, name, anchors),
        lds_offsets=[off for _, off in anchors],
        data=data,
        lds_data=[ctx.vgpr(f"G2LWide{name}{i}", glvw) for i in range(n)] if widen else data,
        write_masks=[ctx.sgpr(f"LoadInTile{name}{i}", 2) if load_bounds(g, name, i) != (None, None) else None
                     for i in range(n)],
        edge_left=[ctx.vgpr(f"EdgeLeft{name}{c}") for c in range(nlc)] if edge else None,
        edge_flag=ctx.sgpr(f"EdgeTile{name}") if edge else None,
        dma_base=ctx.sgpr(f"LdsDma{name}") if g.direct_to_lds(name) else None,
    )


def load_delta(g, name: str, load: int) -> tuple[int, int]:
    """(tile index, k index) of load ``load``'s first element minus load 0's, the same for every lane
    (``tile_coordinates``: load (p, c) is c x LSC further along the coalesced dimension, p x LSP across)."""
    lsc, lsp = g.load_spacing(name)
    p, c = divmod(load, g.num_loads_coalesced(name))
    tlu = g.tlu_a if name == "A" else g.tlu_b
    return (c * lsc, p * lsp) if tlu else (p * lsp, c * lsc)


def lds_write_anchors(g, name: str) -> list[tuple[int, int]]:
    """Per load: (the load whose LDS write address register it uses, the byte offset from that address).

    As Tensile keeps one local-write address per operand and gives every load an instruction offset, a load
    shares the address of an earlier load (its anchor) where its element is a constant distance d further in the
    tile: always without block pads, and with LdsBlockSizePerPad where d is a whole number of pad intervals
    or where no element the anchor's lanes write, d further, crosses a pad boundary (``_crosses_no_pad``; then
    padded(e + d) = padded(e) + padded(d) for every lane's e, as Tensile's constant write offsets assume). A load
    whose offset would leave the 16-bit instruction offset field starts an address of its own."""
    lay = g.lds_tile(name)
    apart = vector_offsets(lay, g.tlu_a if name == "A" else g.tlu_b, g.glvw(name))
    # the highest offset the writes of one load add, buffers and the vector's last element included
    reach = g.lds_buffer_offset(g.lds_buffers - 1) + (max(apart) + 1 if apart else g.glvw(name)) * g.lds_bpe
    anchors: list[tuple[int, int]] = []
    anchor = None   # (load, unpadded element distance of load 0 to it)
    for i in range(g.num_loads(name)):
        d = lay.unpadded(*load_delta(g, name, i))
        if anchor is not None:
            rel = d - anchor[1]
            off = lay.padded(rel) * g.lds_bpe
            if ((not lay.block_padded or rel % lay.interval == 0 or _crosses_no_pad(g, name, anchor[0], rel))
                    and 0 <= off and off + reach <= 65536):
                anchors.append((anchor[0], off))
                continue
        anchor = (i, d)
        anchors.append((i, 0))
    return anchors


def _crosses_no_pad(g, name: str, anchor: int, rel: int) -> bool:
    """No lane's first element of load ``anchor`` lies across a pad boundary from its element ``rel`` further
    (unpadded), so that the distance stays padded(rel) in every lane (the elements of each vector after the
    first are then placed as every load's are: ``lds_address.lds_reason`` checks no vector crosses a pad). The
    anchor's vectors start at every multiple of GLVW of its LSC-wide stretch of the coalesced dimension, in any
    row across: a superset of the lanes' ones, whatever the thread assignment."""
    lay = g.lds_tile(name)
    tlu = g.tlu_a if name == "A" else g.tlu_b
    lsc, _ = g.load_spacing(name)
    glvw = g.glvw(name)
    c0 = (anchor % g.num_loads_coalesced(name)) * lsc
    across = (g.depth_u if tlu else (g.mt0 if name == "A" else g.mt1))
    bases = [lay.unpadded(a, c) if tlu else lay.unpadded(c, a)
             for a in range(c0, c0 + lsc, glvw) for c in range(across)]
    return not lay.splits(bases, [rel])


def _lds_write_registers(ctx: KernelContext, name: str, anchors) -> list:
    regs: dict[int, VReg] = {}
    for a, _ in anchors:
        if a not in regs:
            regs[a] = ctx.vgpr(f"LocalWriteAddr{name}{a}")
    return [regs[a] for a, _ in anchors]


def sgpr_offsets(g, name: str) -> bool:
    """The loads of ``name`` further across (load (p, c), p > 0) share load (0, c)'s offset VGPR and add
    p x LSP x stride bytes in an SGPR, which the buffer load adds as its soffset (Tensile's _UseSgprForGRO).

    The soffset is outside the buffer's range check, so no load may reach past the matrix by it: where the loads
    further across step along K (the tile dimension is the unit-stride one), every vector reaching past the free
    size is out of range by its own offset (bit 31, set at setup): the 8- and 16-bit vectors along the free
    dimension are so marked already; others are marked when no vector is partly past the size
    (GlobalReadVectorWidth 1 or GuaranteeNoPartial), otherwise each load keeps its own VGPR. Where they step along
    the free dimension (K the unit-stride one), each such load compares the lane's rows left with its distance
    and, past the size, loads from the out-of-range offset instead (``row_gate``: two VALU instructions a load).
    Tensile shares the offsets without these guards (its loads past the free size read beyond the matrix:
    benchmark/verify.py LIBRARY_GUARD_BYTES). Used where Tensile does (``_UseSgprForGRO``: UseSgprForGRO, or with
    -1 at most 35 loads of both operands; buffer loads only), not with DirectToLds (its loads take no soffset)."""
    if not (g.derived.use_sgpr_for_gro and g.buffer_load and g.num_loads(name) > g.num_loads_coalesced(name)
            and not g.direct_to_lds(name)):
        return False
    if not (g.tlu_a if name == "A" else g.tlu_b):
        return True
    return straddling_vectors(g, name) or g.glvw(name) == 1 or g.guarantee_no_partial(name)


def row_gate(ctx: KernelContext, op: "OperandTile", load: int, offset) -> tuple[Module, object]:
    """(code, the offset to load with): for a load further across the free dimension sharing its offset VGPR
    (``sgpr_offsets``), the out-of-range offset in lanes whose row for this load is past the free size."""
    p = load // ctx.geometry.num_loads_coalesced(op.name)
    if op.rows_left is None or p == 0:
        return Module("row in range by its offset"), offset
    gated = ctx.vgpr(f"RowGated{op.name}")
    distance = p * ctx.geometry.load_spacing(op.name)[1]
    return Module(f"{op.name} load {load}: row inside the free size?").add(
        ctx.inst("v_cmp_lt_i32", VCC, distance, op.rows_left, comment=f"{distance} rows further still inside"),
        ctx.inst("v_cndmask_b32", gated, ctx.oob_offset, offset, VCC)), gated


def straddling_vectors(g, name: str) -> bool:
    """Vectors of ``name`` run along its free dimension in pieces smaller than a dword (8- or 16-bit elements,
    GlobalReadVectorWidth > 1): one reaching past the free size could straddle the end of the matrix."""
    tlu = g.tlu_a if name == "A" else g.tlu_b
    return tlu and g.in_bpe < 4 and g.glvw(name) > 1


def partial_vectors(g, name: str) -> bool:
    """Some vector of ``name`` may be partly inside the free size (no GuaranteeNoPartial): those lanes load
    element by element. With global loads (``global_edge``): every tile reaching past the free size."""
    return global_edge(g, name) or (straddling_vectors(g, name) and not g.guarantee_no_partial(name))


def global_edge(g, name: str) -> bool:
    """BufferLoad false with vectors along the free dimension (GlobalReadVectorWidth > 1, tile dimension the
    unit-stride one): global loads have no range check, so a vector reaching past the free size would read past
    the matrix. A work-group whose tile reaches past the size loads every vector element by element, element e
    from row min(r + e, size - 1) (``_global_edge_elements``: the rows past the size read the last row, whose
    values only reach outputs past the size); the others load whole vectors, all inside the size."""
    return not g.buffer_load and (g.tlu_a if name == "A" else g.tlu_b) and g.glvw(name) > 1


def _edge_slot(ctx: KernelContext, op: OperandTile, i: int) -> int:
    """The rows-left register of load ``i``: one per coalesced load (per group of VW outputs, DirectToVgpr)."""
    g = ctx.geometry
    if dtv(g, op.name):
        from tensile_asm.writer import direct_to_vgpr, mfma
        return direct_to_vgpr.load_position(g, i, mfma.plan(ctx))[1]
    return i % g.num_loads_coalesced(op.name)


def _dtv_operand(ctx: KernelContext, name: str, index: int) -> OperandTile:
    """A DirectToVgpr operand (writer/direct_to_vgpr.py): its loads fill register set ``index`` of the MFMA
    operand; no LDS address, no widening; 16-bit vectors partly past the free size load element by element as
    for the LDS path (one rows-left register per group of VectorWidth outputs, ``_edge_slot``)."""
    from tensile_asm.writer import direct_to_vgpr, mfma
    g, p = ctx.geometry, mfma.plan(ctx)
    n = direct_to_vgpr.num_loads(g, p)
    values = direct_to_vgpr.operand_set(ctx, p, index)
    data = direct_to_vgpr.load_registers(ctx, p, values)
    edge = partial_vectors(g, name)
    offsets, soffsets = [ctx.vgpr(f"GlobalReadOffset{name}{i}") for i in range(n)], None
    if direct_to_vgpr.shared_offsets(g):   # a group's loads: one offset VGPR, their K distance an SGPR each
        bases = [ctx.vgpr(f"GlobalReadOffset{name}{c}") for c in range(direct_to_vgpr.groups(g, p))]
        offsets = [bases[direct_to_vgpr.load_position(g, i, p)[1]] for i in range(n)]
        deltas = [direct_to_vgpr.k_delta(g, p, i) for i in range(n)]
        by_delta = {d: ctx.sgpr(f"GlobalReadSOffset{name}K{d}") for d in sorted(set(deltas)) if d}
        soffsets = [by_delta.get(d, 0) for d in deltas]
    return OperandTile(
        name=name, macro_tile=g.mt0 if name == "A" else g.mt1, tlu=g.tlu_a if name == "A" else g.tlu_b,
        glvw=direct_to_vgpr.load_width(g, p), free_size_arg="SizesFree0" if name == "A" else "SizesFree1",
        srd=ctx.sgpr(f"Srd{name}", 4), chunk_bytes=ctx.sgpr(f"DepthUBytes{name}"),
        increment=ctx.sgpr(f"GlobalReadInc{name}"), offsets=offsets, soffsets=soffsets,
        lds_addresses=[], data=data, lds_data=data, write_masks=[None] * n, dtv_set=values,
        edge_left=[ctx.vgpr(f"EdgeLeft{name}{c}") for c in range(direct_to_vgpr.groups(g, p))] if edge else None,
        edge_flag=ctx.sgpr(f"EdgeTile{name}") if edge else None)


def dtv_second_set(ctx: KernelContext, op: OperandTile) -> OperandTile:
    """A DirectToVgpr operand's second register set (the next tile's MFMA operands): same descriptor and offsets
    (the rows-left registers and edge flag stay the first set's)."""
    other = _dtv_operand(ctx, op.name, 1)
    return replace(op, data=other.data, lds_data=other.data, dtv_set=other.dtv_set)


def load_bounds(g, name: str, load: int) -> tuple[int | None, int | None]:
    """(perpendicular, coalesced) bounds below which load ``load``'s vectors lie in the tile, where some
    lane's vector does not (None: every lane's does). FractionalLoad (Tensile): LSC x LSP need not divide
    the tile, nor LSC/GLVW the threads, so the last loads along either dimension, and lanes past LSP rows
    (the partial row of threads), have no element of the tile; their local writes are masked off."""
    lsc, lsp = g.load_spacing(name)
    p, c = divmod(load, g.num_loads_coalesced(name))
    tlu = g.tlu_a if name == "A" else g.tlu_b
    mt = g.mt0 if name == "A" else g.mt1
    par, perp = (mt, g.depth_u) if tlu else (g.depth_u, mt)
    rows = -(-g.load_threads(name) // (lsc // g.glvw(name)))     # rows of threads, the last one perhaps partial
    perp_limit = min(perp, (p + 1) * lsp)
    return (perp_limit if p * lsp + rows > perp_limit else None,
            par if (c + 1) * lsc > par else None)


def tile_coordinates(ctx: KernelContext, op: OperandTile, regs: EntryRegisters, load: int):
    """Module computing (tile index, k index) of the first element of load ``load`` for this thread.

    Tensile's assignment: threads form rows of LSC/GLVW vectors along the coalesced dimension
    (thread t at vector t % (LSC/GLVW) of row t / (LSC/GLVW)); load (p, c), numbered p*NLC + c, is
    LSC elements further along the coalesced dimension per c and LSP further across per p.
    WaveSeparateGlobalRead: the lanes of each wave form those rows (t is the lane), and wave w's loads start
    w x LSP x NumLoadsPerpendicular further across, so each wave fills a contiguous block of the tile.
    """
    g = ctx.geometry
    if dtv(g, op.name):
        from tensile_asm.writer import direct_to_vgpr, mfma
        return direct_to_vgpr.tile_coordinates(ctx, mfma.plan(ctx), regs.serial, load, op.name)
    m = Module(f"{op.name} load {load}: tile coordinates")
    lsc, lsp = g.load_spacing(op.name)
    nlc = g.num_loads_coalesced(op.name)
    p, c = divmod(load, nlc)
    threads_per_row = lsc // op.glvw
    threads = g.load_threads(op.name)
    coal, perp = ctx.vgpr(f"{op.name}Coal"), ctx.vgpr(f"{op.name}Perp")
    thread = regs.serial
    if g.wave_separate(op.name):
        thread = ctx.vgpr(f"{op.name}Lane")
        m.add(ctx.inst("v_and_b32", thread, threads - 1, regs.serial, comment="lane: the wave's own load tile"))
    tsgr = g.thread_separate(op.name)
    if tsgr:    # ThreadSeparateGlobalRead: lane groups of a wave each load 1/(2 x tsgr) of its rows
        m.add(_thread_separate(ctx, op, thread, coal, perp, tsgr, threads_per_row))
    elif getattr(g, f"coalesce_group_{op.name.lower()}"):
        m.add(divmod_const(ctx, perp, coal, thread, threads_per_row, threads - 1))
    else:   # GlobalReadCoalesceGroup false: adjacent threads walk the perpendicular dimension
        m.add(divmod_const(ctx, coal, perp, thread, threads // threads_per_row, threads - 1))
    if op.glvw > 1:
        m.add(ctx.inst("v_lshlrev_b32", coal, op.glvw.bit_length() - 1, coal))
    if c:
        m.add(ctx.inst("v_add_u32", coal, c * lsc, coal))
    if g.wave_separate(op.name):   # wave w's block: w x LSP x NumLoadsPerpendicular further across (+ p x LSP)
        wave = ctx.vgpr(f"{op.name}Wave")
        block = lsp * g.num_loads(op.name) // nlc
        m.add(ctx.inst("v_lshrrev_b32", wave, threads.bit_length() - 1, regs.serial, comment="wave id"),
              ctx.inst("v_mul_u32_u24", wave, block, wave),
              ctx.inst("v_add_u32", perp, wave, perp))
    if p:
        m.add(ctx.inst("v_add_u32", perp, p * lsp, perp))
    tile_index, k_index = (coal, perp) if op.tlu else (perp, coal)
    return m, tile_index, k_index


def _thread_separate(ctx: KernelContext, op: OperandTile, thread, coal, perp, tsgr: int, per_row: int) -> Module:
    """Tensile 4.44's ThreadSeparateGlobalRead assignment (graTileAssignment): a wave's lanes form 2 x tsgr groups
    of G = wavefront / (2 x tsgr) lanes; group q loads vectors q x d .. (q + 1) x d - 1 of each of the wave's
    wavefront / LVC rows, d = LVC / (2 x tsgr), its lane i vector q x d + i % d of row i / d; wave w's rows start
    w x wavefront / LVC rows further (as without it). The same vectors as without it, each wave the same rows:
    only which lane loads which vector changes (each group reads a shorter contiguous run per row)."""
    g = ctx.geometry
    wave_size = g.wavefront_size
    groups = 2 * tsgr
    group_lanes, d = wave_size // groups, per_row // groups
    lane, tmp = ctx.vgpr(f"{op.name}TsgrLane"), ctx.vgpr(f"{op.name}TsgrTmp")
    log = lambda v: v.bit_length() - 1      # noqa: E731 -- powers of two (Tensile's rule: LVC divides the wave)
    m = Module(f"{op.name}: ThreadSeparateGlobalRead{op.name} {tsgr} (2 x {tsgr} lane groups per row)")
    m.add(ctx.inst("v_and_b32", lane, wave_size - 1, thread, comment="lane"),
          ctx.inst("v_and_b32", tmp, group_lanes - 1, lane, comment="lane in its group"),
          ctx.inst("v_lshrrev_b32", perp, log(d), tmp, comment="row in the wave"),
          ctx.inst("v_and_b32", coal, d - 1, tmp),
          ctx.inst("v_lshrrev_b32", tmp, log(group_lanes), lane, comment="group"),
          ctx.inst("v_lshl_add_u32", coal, tmp, log(d), coal, comment="vector: group x d + lane % d"))
    if g.num_threads > wave_size and not g.wave_separate(op.name):
        m.add(ctx.inst("v_lshrrev_b32", tmp, log(wave_size), thread, comment="wave"),
              ctx.inst("v_lshl_add_u32", perp, tmp, log(wave_size // per_row), perp,
                       comment=f"wave x {wave_size // per_row} rows further"))
    return m


def setup(ctx: KernelContext, op: OperandTile, regs: EntryRegisters) -> Module:
    """Descriptor, K increment, and per-load global offsets and LDS addresses."""
    g, arch = ctx.geometry, ctx.arch
    bpe = g.in_bpe
    shift = bpe.bit_length() - 1
    m = Module(f"global read {op.name}: setup")
    srd, arg = op.srd, regs.arg
    m.add(batch_base(ctx, regs, srd.slice(0, 2), op.name, bpe, g.batched, g.pointer_array))
    m.add(ctx.inst("s_lshl_b32", srd[2], arg(f"Tensor2dSize{op.name}")[0], shift,
               comment="num_records: this batch's matrix in bytes"),
          ctx.inst("s_mov_b32", srd[3], arch.memory["buffer_srd_word3"]))
    # Bytes of one DepthU step along K, and of one iteration (GlobalSplitU steps).
    first = arg(f"InitialStride{op.name}") if g.initial_strides_ab else None
    if op.tlu:
        m.add(ctx.inst("s_mul_i32", op.chunk_bytes, arg(op.stride_arg), g.depth_u * bpe))
    elif first is not None:     # K is A's / B's first index: it steps by InitialStride elements
        m.add(ctx.inst("s_mul_i32", op.chunk_bytes, first, g.depth_u * bpe))
    else:
        m.add(ctx.inst("s_mov_b32", op.chunk_bytes, g.depth_u * bpe))
    if g.global_split_u > 1:
        m.add(ctx.inst("s_mul_i32", op.increment, op.chunk_bytes, g.global_split_u))
    else:
        m.add(ctx.inst("s_mov_b32", op.increment, op.chunk_bytes))
    tile_base = ctx.sgpr(f"TileBase{op.name}")
    m.add(ctx.inst("s_mul_i32", tile_base, getattr(regs, op.tile_id), op.macro_tile))
    if op.edge_flag is not None:
        m.add(_edge_tile_flag(ctx, op, tile_base, arg(op.free_size_arg)))
    lds_base = 0 if op.name == "A" else g.lds_offset_b
    shared = op.soffsets is not None
    if shared and dtv(g, op.name):
        from tensile_asm.writer import direct_to_vgpr
        m.add(direct_to_vgpr.soffset_setup(ctx, op, arg(op.stride_arg)))
    elif shared:   # load (p, c): p x LSP steps of K past load (0, c), an SGPR each
        lsp = g.load_spacing(op.name)[1]
        nlc = g.num_loads_coalesced(op.name)
        for p in range(1, g.num_loads(op.name) // nlc):
            m.add(ctx.inst("s_mul_i32", op.soffsets[p * nlc], arg(op.stride_arg), p * lsp * bpe,
                           comment=f"loads {p * nlc}..: {p * lsp} steps of K further"))
    for i in range(len(op.offsets)):     # (DirectToVgpr: its own loads, direct_to_vgpr.num_loads)
        coords, tile_index, k_index = tile_coordinates(ctx, op, regs, i)
        row, tmp = ctx.vgpr(f"{op.name}Row"), ctx.vgpr(f"{op.name}Tmp")
        m.add(coords, ctx.inst("v_add_u32", row, tile_base, tile_index))
        if global_edge(g, op.name) and i < g.num_loads_coalesced(op.name):
            m.add(ctx.inst("v_sub_u32", op.edge_left[i], arg(op.free_size_arg), row,
                           comment="rows left before the free size (signed)"))
        if not g.buffer_load:   # no range check on global loads: rows past the edge read the last row
            last = ctx.sgpr(f"LastRow{op.name}")
            m.add(ctx.inst("s_sub_u32", last, arg(op.free_size_arg), 1), ctx.inst("v_min_u32", row, last, row))
        first_index = row if op.tlu else k_index
        if first is not None:   # UseInitialStridesAB: the first index steps by InitialStride elements
            scaled = ctx.vgpr(f"{op.name}FirstScaled")
            m.add(ctx.inst("v_mul_lo_u32", scaled, first_index, first))
            first_index = scaled
        if op.tlu:   # element (row, k) at row*s0 + k*ld (s0 = 1 without initial strides)
            m.add(ctx.inst("v_mul_lo_u32", tmp, k_index, arg(op.stride_arg)),
                  ctx.inst("v_add_u32", tmp, tmp, first_index))
        else:        # element (row, k) at k*s0 + row*ld
            m.add(ctx.inst("v_mul_lo_u32", tmp, row, arg(op.stride_arg)),
                  ctx.inst("v_add_u32", tmp, tmp, first_index))
        first_of_offset = all(op.offsets[i] is not r for r in op.offsets[:i])
        if first_of_offset:
            m.add(ctx.inst("v_lshlrev_b32", op.offsets[i], shift, tmp))
        if first_of_offset and op.rows_left is not None:   # rows past the size: out of range by the offset
            m.add(ctx.inst("v_sub_u32", op.rows_left, arg(op.free_size_arg), row, comment="rows left"),
                  ctx.inst("v_cmp_gt_i32", VCC, 1, op.rows_left, comment="this row past the free size"),
                  ctx.inst("v_or_b32", tmp, EDGE_BIT, op.offsets[i]),
                  ctx.inst("v_cndmask_b32", op.offsets[i], op.offsets[i], tmp, VCC))
        elif first_of_offset and (straddling_vectors(g, op.name) or shared) and g.buffer_load:
            m.add(_mark_edge_vector(ctx, op, i, row, arg(op.free_size_arg)))
        if op.write_masks[i] is not None:
            m.add(_in_tile_mask(ctx, op, i, tile_index, k_index))
        if dtv(g, op.name):     # DirectToVgpr: no LDS tile
            continue
        # element (t, k) of the LDS tile (K-major or unroll-major, pads: writer/lds_address.py), once per address
        # register (the loads sharing it write at an instruction offset from it)
        if all(op.lds_addresses[i] is not r for r in op.lds_addresses[:i]):
            m.add(element_address(ctx, op.lds_addresses[i], g.lds_tile(op.name), tile_index, k_index, g.lds_bpe,
                                  lds_base))
    if op.dma_base is not None:
        m.add(direct_to_lds.setup(ctx, op))
    return m


def _edge_tile_flag(ctx: KernelContext, op: OperandTile, tile_base, size) -> Module:
    """op.edge_flag = 1 where this work-group's tile holds a partial vector: the free size is not a multiple
    of the width and ends inside the tile."""
    t = ctx.sgpr(f"EdgeTmp{op.name}")
    if global_edge(ctx.geometry, op.name):
        return Module(f"{op.name}: does this tile reach past the free size (global loads)?").add(
            ctx.inst("s_sub_u32", op.edge_flag, size, tile_base, comment="rows of the tile inside the size"),
            ctx.inst("s_cmp_lt_u32", op.edge_flag, op.macro_tile),
            ctx.inst("s_cselect_b32", op.edge_flag, 1, 0))
    return Module(f"{op.name}: does this tile hold a partial vector?").add(
        ctx.inst("s_and_b32", t, size, op.glvw - 1, comment="size % GlobalReadVectorWidth"),
        ctx.inst("s_cselect_b32", t, 1, 0),
        ctx.inst("s_sub_u32", op.edge_flag, size, tile_base, comment="rows of the tile inside the size"),
        ctx.inst("s_cmp_lt_u32", op.edge_flag, op.macro_tile),
        ctx.inst("s_cselect_b32", op.edge_flag, t, 0))


def _mark_edge_vector(ctx: KernelContext, op: OperandTile, i: int, row, size) -> Module:
    """Load ``i``'s vector reaches past the free size (rows left < width; negative: wholly past it):
    set offset bit 31, so its vector load is out of range (0) in every step along K."""
    g = ctx.geometry
    c = _edge_slot(ctx, op, i)
    left = op.edge_left[c] if op.edge_left is not None else ctx.vgpr(f"EdgeLeftTmp{op.name}")
    marked = ctx.vgpr(f"EdgeOffset{op.name}")
    return Module(f"{op.name} load {i}: vector past the free size?").add(
        ctx.inst("v_sub_u32", left, size, row, comment="rows left before the free size"),
        ctx.inst("v_cmp_gt_i32", VCC, op.glvw, left, comment="rows left < width (signed: also wholly past)"),
        ctx.inst("v_or_b32", marked, EDGE_BIT, op.offsets[i]),
        ctx.inst("v_cndmask_b32", op.offsets[i], op.offsets[i], marked, VCC))


def _edge_elements(ctx: KernelContext, op: OperandTile, i: int, offset, data, k_ok=None) -> Module:
    """Load ``i``'s partial vectors element by element (the lanes with 0 < rows left < width; ``k_ok``: an
    SGPR pair further limiting them, the tail's K guard). The vector load gave these lanes 0; each element
    before the free size now loads into its half register, the others stay out of range."""
    g = ctx.geometry
    if g.in_bpe not in (1, 2):
        raise ValueError(f"per-element edge loads are written for 8- and 16-bit elements, not {g.in_bpe}-byte ones")
    left = op.edge_left[_edge_slot(ctx, op, i)]
    saved = ctx.sgpr(f"SavedExecEdge{op.name}", 2)
    real = ctx.vgpr(f"EdgeReal{op.name}")
    m = Module(f"{op.name} load {i}: partial vector, element by element")
    m.add(ctx.inst("v_cmp_gt_u32", VCC, op.glvw, left, comment="0 <= rows left < width: a partial vector"))
    if k_ok is not None:
        m.add(ctx.inst("s_and_b64", VCC, VCC, k_ok))
    m.add(ctx.inst("s_and_saveexec_b64", saved, VCC),
          ctx.inst("v_and_b32", real, EDGE_BIT - 1, offset, comment="the vector's own offset"))
    pieces = []
    for e in range(op.glvw):   # (rows left 0, a vector starting at the size, is a lane here too)
        src = ctx.vgpr(f"EdgeGuarded{op.name}{e}")
        m.add(ctx.inst("v_cmp_lt_u32", VCC, e, left),
              ctx.inst("v_cndmask_b32", src, ctx.oob_offset, real, VCC))
        pieces.append((e * g.in_bpe, src, e * g.in_bpe))
    m.add(narrow_loads(ctx, op, data, pieces, g.in_bpe, op.soffset(i)))
    m.add(ctx.inst("s_mov_b64", EXEC, saved))
    return m


def _global_edge_elements(ctx: KernelContext, op: OperandTile, i: int, offset, data) -> Module:
    """BufferLoad false, a tile reaching past the free size (``global_edge``): load ``i``'s vector element by
    element, element e from row min(r + e, size - 1): its own where r + e is inside the size, else the last row
    (rows left <= 0: the offset is already the last row's, setup clamps r)."""
    g = ctx.geometry
    bpe = g.in_bpe
    left = op.edge_left[i % g.num_loads_coalesced(op.name)]
    last = ctx.vgpr(f"EdgeLastOffset{op.name}")
    m = Module(f"{op.name} load {i}: element by element, rows past the free size read the last row")
    m.add(ctx.inst("v_max_i32", last, 1, left),
          ctx.inst("v_add_u32", last, -1, last, comment="elements to the last row (0 past the size)"),
          ctx.inst("v_lshl_add_u32", last, last, bpe.bit_length() - 1, offset))
    pieces = []
    for e in range(op.glvw):
        if e == 0:
            src = offset
        else:
            step, src = ctx.vgpr(f"EdgeStep{op.name}{e}"), ctx.vgpr(f"EdgeElement{op.name}{e}")
            m.add(ctx.inst("v_add_u32", step, e * bpe, offset),
                  ctx.inst("v_cmp_lt_i32", VCC, e, left, comment=f"element {e} inside the free size"),
                  ctx.inst("v_cndmask_b32", src, last, step, VCC))
        if bpe < 4:
            pieces.append((e * bpe, src, 0))
        else:
            m.add(load(ctx, op, bpe, data.slice(e * bpe // 4, bpe // 4), src))
    if pieces:
        m.add(narrow_loads(ctx, op, data, pieces, bpe))
    return m


def narrow_loads(ctx: KernelContext, op: OperandTile, data, pieces, nbytes: int, soffset=0) -> Module:
    """Pieces of ``nbytes`` (1 or 2) one by one: ``pieces`` [(byte position q in the vector, offset VGPR,
    instruction offset)] into bits (q % 4)*8 of ``data[q // 4]``. Each loads zero-extended
    (``buffer_load_ubyte``/``ushort``: the d16 forms zero the other half on SRAM-ECC parts,
    gfx906/gfx908/gfx90a/gfx942, and keep it elsewhere); the pieces above a register's lowest then join it
    (``v_lshl_or_b32``), as Tensile's HasEccHalf path does for halves."""
    what = "elements" if nbytes == ctx.geometry.in_bpe else f"pieces of {nbytes // ctx.geometry.in_bpe} elements"
    m = Module(f"{op.name}: {8 * nbytes}-bit {what} one by one")
    high = []
    buffer = ctx.geometry.buffer_load
    for q, voff, ioff in pieces:
        dst = data[q // 4] if q % 4 == 0 else ctx.vgpr(f"HighPiece{op.name}{q}")
        if buffer:
            mods = ["offen", ("offset", ioff)] if ioff else ["offen"]
            m.add(ctx.inst(LOAD_BYTES[nbytes], dst, voff, op.srd, soffset, mods=mods))
        else:       # global loads (BufferLoad false): the offset VGPR holds the piece's own offset
            if ioff or soffset:
                raise ValueError("global narrow loads take the piece's offset in its VGPR")
            if q % 4:   # a masked (tail) load leaves lanes off untouched: they join 0
                m.add(ctx.inst("v_mov_b32", dst, 0))
            m.add(load(ctx, op, nbytes, dst, voff))
        if q % 4:
            high.append((q, dst))
    for q, hi in high:
        m.add(ctx.inst("v_lshl_or_b32", data[q // 4], hi, (q % 4) * 8, data[q // 4], comment="upper piece"))
    return m


def edge_loads(ctx: KernelContext, op: OperandTile, offsets=None) -> Module:
    """After the vector loads of ``op``: the per-element loads of partial vectors, skipped (one scalar branch)
    by work-groups whose tile has none."""
    if op.edge_flag is None:
        return Module(f"{op.name}: no partial vectors")
    if global_edge(ctx.geometry, op.name):
        raise ValueError("global loads take their edge path in place of the vector loads (loads)")
    done = ctx.label(f"EdgeDone{op.name}")
    m = Module(f"{op.name}: partial vectors at the free edge").add(
        ctx.inst("s_cmp_eq_u32", op.edge_flag, 0),
        ctx.inst("s_cbranch_scc1", done))
    for i, (offset, data) in enumerate(zip(offsets or op.offsets, op.data)):
        m.add(_edge_elements(ctx, op, i, offset, data))
    m.add(LabelDef(done.name))
    return m


def _in_tile_mask(ctx: KernelContext, op: OperandTile, i: int, tile_index, k_index) -> Module:
    """op.write_masks[i] = the lanes whose vector of load ``i`` lies in the tile (tile-local coordinates)."""
    perp_limit, par_limit = load_bounds(ctx.geometry, op.name, i)
    coal, perp = (tile_index, k_index) if op.tlu else (k_index, tile_index)
    mask = op.write_masks[i]
    m = Module(f"{op.name} load {i}: lanes in the tile (FractionalLoad)")
    tests = [(lim, v) for lim, v in ((perp_limit, perp), (par_limit, coal)) if lim is not None]
    for j, (limit, value) in enumerate(tests):
        m.add(ctx.inst("v_cmp_gt_u32", VCC, limit, value))
        m.add(ctx.inst("s_mov_b64", mask, VCC) if j == 0 else ctx.inst("s_and_b64", mask, mask, VCC))
    return m


def loads(ctx: KernelContext, op: OperandTile, offsets=None, buffer: int = 0) -> Module:
    """The loads of one tile (DirectToLds: straight into LDS buffer ``buffer``)."""
    m = Module(f"global read {op.name}")
    if op.dma_base is not None:
        return m.add(*(direct_to_lds.load(ctx, op, i, offset, buffer)
                       for i, offset in enumerate(offsets or op.offsets)))
    if global_edge(ctx.geometry, op.name):
        return m.add(_global_vectors_or_elements(ctx, op, offsets or op.offsets))
    for i, (data, offset) in enumerate(zip(op.data, offsets or op.offsets)):
        gate, offset = row_gate(ctx, op, i, offset)
        m.add(gate, load(ctx, op, op.glvw * ctx.geometry.in_bpe, data, offset, op.soffset(i)))
    if op.edge_flag is not None:
        m.add(edge_loads(ctx, op, offsets))
    return m


def _global_vectors_or_elements(ctx: KernelContext, op: OperandTile, offsets) -> Module:
    """Global loads (``global_edge``): whole vectors, or in a tile reaching past the free size (one scalar
    branch) element by element."""
    elements, done = ctx.label(f"GlobalEdge{op.name}"), ctx.label(f"GlobalEdgeDone{op.name}")
    nbytes = op.glvw * ctx.geometry.in_bpe
    return Module(f"global read {op.name}: vectors, or elements in a tile past the free size").add(
        ctx.inst("s_cmp_lg_u32", op.edge_flag, 0),
        ctx.inst("s_cbranch_scc1", elements),
        [load(ctx, op, nbytes, data, offset) for data, offset in zip(op.data, offsets)],
        ctx.inst("s_branch", done),
        LabelDef(elements.name),
        [_global_edge_elements(ctx, op, i, offset, data) for i, (data, offset) in enumerate(zip(op.data, offsets))],
        LabelDef(done.name))


def widen(ctx: KernelContext, op: OperandTile) -> Module:
    """16-bit inputs to fp32 for LDS (once the loads have landed); nothing to do for S, D, 4xi8 and I8
    (LDS holds int8 as bytes)."""
    g = ctx.geometry
    m = Module(f"widen {op.name} to fp32")
    if g.in_bpe >= 4 or g.narrow_lds:
        return m
    for data, wide in zip(op.data, op.lds_data):
        for e in range(op.glvw):
            src = data[e // 2]
            if e % 2:   # the upper half of the register
                half = ctx.vgpr("UpperHalf")
                if g.data_type == "B":
                    m.add(ctx.inst("v_and_b32", wide[e], 0xFFFF0000, src))
                    continue
                m.add(ctx.inst("v_lshrrev_b32", half, 16, src))
                src = half
            if g.data_type == "H":
                m.add(ctx.inst("v_cvt_f32_f16", wide[e], src))
            else:       # bf16 is the upper half of an fp32
                m.add(ctx.inst("v_lshlrev_b32", wide[e], 16, src))
    return m


def tail_elements_per_load(g, op: OperandTile) -> int:
    """Elements of one guarded load along K in the tail loop: 1, or with AssertSummationElementMultiple
    (K a multiple of it: Tensile's BoundSizeMultiple predicate) min(width, it) elements that are all inside
    K or all past it (Tensile's elemAlignMin in globalReadGuardK)."""
    asem = g.assert_summation_multiple
    n = min(op.glvw, asem)
    return n if n > 0 and n & (n - 1) == 0 and op.glvw % n == 0 else 1


def guarded_loads(ctx: KernelContext, op: OperandTile, regs: EntryRegisters, k_remaining: VReg,
                  buffer: int = 0) -> Module:
    """Tail loop: every element whose K index is past the summation size loads 0 (its offset is moved
    out of range). Vectors along K are split into guarded pieces (``tail_elements_per_load``); pieces smaller
    than a dword load one by one (``narrow_loads``). DirectToLds: into LDS buffer ``buffer``."""
    g = ctx.geometry
    bpe = g.in_bpe
    m = Module(f"global read {op.name}: K-guarded (tail)")
    for i, (offset, data) in enumerate(zip(op.offsets, op.data)):
        coords, _, k_index = tile_coordinates(ctx, op, regs, i)
        m.add(coords)
        if not g.buffer_load:   # global loads: zero the data, load only the lanes whose k is in range
            m.add(_masked_global_loads(ctx, op, i, offset, data, k_index, k_remaining) if op.glvw == 1 else
                  _masked_global_vector(ctx, op, i, offset, data, k_index, k_remaining))
            continue
        if op.tlu:   # the whole vector shares one k
            g_off = ctx.vgpr(f"GuardedOffset{op.name}")
            m.add(ctx.inst("v_cmp_lt_u32", VCC, k_index, k_remaining),
                  ctx.inst("v_cndmask_b32", g_off, ctx.oob_offset, offset, VCC),
                  direct_to_lds.load(ctx, op, i, g_off, buffer) if op.dma_base is not None else
                  ctx.inst(LOAD_BYTES[op.glvw * bpe], data, g_off, op.srd, op.soffset(i), mods=["offen"]))
            if op.edge_flag is not None:
                k_ok = ctx.sgpr(f"TailKOk{op.name}", 2)
                done = ctx.label(f"TailEdgeDone{op.name}")
                m.add(ctx.inst("s_mov_b64", k_ok, VCC),
                      ctx.inst("s_cmp_eq_u32", op.edge_flag, 0),
                      ctx.inst("s_cbranch_scc1", done),
                      _edge_elements(ctx, op, i, offset, data, k_ok),
                      LabelDef(done.name))
            continue
        n = tail_elements_per_load(g, op)
        halves = []
        gate, offset = row_gate(ctx, op, i, offset)
        m.add(gate)
        for j in range(0, op.glvw, n):
            k_j, g_off = ctx.vgpr(f"GuardK{op.name}"), ctx.vgpr(f"GuardedOffset{op.name}{j}")
            m.add(ctx.inst("v_add_u32", k_j, j + n - 1, k_index) if j + n - 1 else ctx.inst("v_mov_b32", k_j, k_index),
                  ctx.inst("v_cmp_lt_u32", VCC, k_j, k_remaining),
                  ctx.inst("v_cndmask_b32", g_off, ctx.oob_offset, offset, VCC))
            off = j * bpe
            mods = ["offen", ("offset", off)] if off else ["offen"]
            if n * bpe < 4:     # pieces of a register are loaded one by one, then joined
                halves.append((j * bpe, g_off, off))
            else:
                m.add(ctx.inst(LOAD_BYTES[n * bpe], data.slice(j * bpe // 4, n * bpe // 4), g_off, op.srd,
                               op.soffset(i), mods=mods))
        if halves:
            m.add(narrow_loads(ctx, op, data, halves, n * bpe, op.soffset(i)))
    return m


def _masked_global_loads(ctx, op: OperandTile, i: int, offset, data, k_index, k_remaining) -> Module:
    """Tail loop without buffer loads (GlobalReadVectorWidth 1): lanes whose k is past the summation
    size keep a zeroed register and issue no load (EXEC off)."""
    from tensile_asm.isa.registers import EXEC

    g = ctx.geometry
    saved = ctx.sgpr(f"SavedExec{op.name}", 2)
    return Module(f"{op.name} load {i}: masked global load").add(
        [ctx.inst("v_mov_b32", data[r], 0) for r in range(data.count)],
        ctx.inst("v_cmp_lt_u32", VCC, k_index, k_remaining),
        ctx.inst("s_and_saveexec_b64", saved, VCC),
        load(ctx, op, g.in_bpe, data, offset),
        ctx.inst("s_mov_b64", EXEC, saved))


def _masked_global_vector(ctx, op: OperandTile, i: int, offset, data, k_index, k_remaining) -> Module:
    """Tail loop without buffer loads, GlobalReadVectorWidth > 1: the data is zeroed and only lanes (EXEC) whose
    elements' k is inside the summation size load. Along the free dimension (the vector shares one k): the vector
    load, or in a tile past the free size its elements (``_global_vectors_or_elements``); along K: piece by piece
    (``tail_elements_per_load``), each under its own k test, pieces narrower than a dword one by one."""
    from tensile_asm.isa.registers import EXEC

    g = ctx.geometry
    bpe = g.in_bpe
    saved = ctx.sgpr(f"SavedExec{op.name}", 2)
    m = Module(f"{op.name} load {i}: masked global loads (tail)")
    m.add([ctx.inst("v_mov_b32", data[r], 0) for r in range(data.count)])
    if op.tlu:
        m.add(ctx.inst("v_cmp_lt_u32", VCC, k_index, k_remaining),
              ctx.inst("s_and_saveexec_b64", saved, VCC))
        elements, done = ctx.label(f"TailGlobalEdge{op.name}"), ctx.label(f"TailGlobalEdgeDone{op.name}")
        m.add(ctx.inst("s_cmp_lg_u32", op.edge_flag, 0),
              ctx.inst("s_cbranch_scc1", elements),
              load(ctx, op, op.glvw * bpe, data, offset),
              ctx.inst("s_branch", done),
              LabelDef(elements.name),
              _global_edge_elements(ctx, op, i, offset, data),
              LabelDef(done.name),
              ctx.inst("s_mov_b64", EXEC, saved))
        return m
    n = tail_elements_per_load(g, op)
    for j in range(0, op.glvw, n):
        k_j = ctx.vgpr(f"GuardK{op.name}")
        m.add(ctx.inst("v_add_u32", k_j, j + n - 1, k_index) if j + n - 1 else ctx.inst("v_mov_b32", k_j, k_index),
              ctx.inst("v_cmp_lt_u32", VCC, k_j, k_remaining),
              ctx.inst("s_and_saveexec_b64", saved, VCC))
        src = offset
        if j:
            src = ctx.vgpr(f"PieceOffset{op.name}{j}")
            m.add(ctx.inst("v_add_u32", src, j * bpe, offset))
        if n * bpe < 4:
            m.add(narrow_loads(ctx, op, data, [(j * bpe, src, 0)], n * bpe))
        else:
            m.add(load(ctx, op, n * bpe, data.slice(j * bpe // 4, n * bpe // 4), src))
        m.add(ctx.inst("s_mov_b64", EXEC, saved))
    return m


def move(ctx: KernelContext, op: OperandTile, amount, negative: bool = False) -> Module:
    """Move every load's offset ``amount`` bytes along K (an SGPR). The descriptor stays put, so its
    num_records keeps bounding the whole matrix."""
    opcode = "v_subrev_u32" if negative else "v_add_u32"   # subrev: dst = src1 - src0
    unique = [off for i, off in enumerate(op.offsets) if all(off is not r for r in op.offsets[:i])]
    return Module(f"{'move back' if negative else 'advance'} {op.name} along K").add(
        [ctx.inst(opcode, off, amount, off) for off in unique])


def advance(ctx: KernelContext, op: OperandTile) -> Module:
    return move(ctx, op, op.increment)
