"""LDS reads of the MFMA operands, as Tensile's MFMA kernels read LDS (LraTileAssignmentMFMA,
LocalReadMFMA), on the operands' LDS tiles (K-major or unroll-major, padded: writer/lds_address.py).

The MFMA's A operand (B alike, with N): lane l of a wave holds row ``l % M`` of the output's M rows and
the K values ``(l / M) * V .. + V-1`` of the step (V = M*K/64 values per lane, one block). So lane l
reads, for output row t0 of the wave's tile and K-step s, the elements

    A_lds(tile index w0*M*VW + (l % M)*VW + tile_offset(t0),  K value s*K + (l/M)*V + v),   v = 0 .. V-1

(tile_offset(t0) = t0*MIWaveGroup[0]*M with VectorWidth VW 1; mfma.MfmaPlan.tile_offset) where w0 is the
wave's position along dim 0 (B: w1 = wave / MIWaveGroup[0], along dim 1). The lane and wave part is one
address per operand (set up once, ``lane_coordinates``); t0, s, v and the LDS buffer are instruction
offsets. In a K-major tile the V values lie a row apart (V reads); in an unroll-major one (TransposeLDS,
UnrollMajorLDS) they are neighbours, read by one wide ds_read.

LocalReadVectorWidth W = R*V (R > 1, Tensile's "numReadsIterCoalesced"): a lane's K values of R consecutive
K-steps are neighbours in an unroll-major tile, so one ds_read of W values fills the operands of R steps. The
K values a lane holds then change, not their sum over the R steps, and A and B change alike: in steps
r*R .. r*R + R-1, lane l holds K values r*R*K + (l / (M*B))*W + (s % R)*V + v (``k_steps_per_read``; the
K-major operand reads its values at those K values too). Where the registers of R steps' reads would be more
than the PrefetchLocalRead sets of one step each hold (few prefetched steps), R stays 1.

8- and 16-bit inputs (I8, H, B) stay their own size in LDS (context.Geometry.narrow_lds), as in Tensile's
kernels: in an unroll-major tile a lane's V values are V neighbouring elements, read by one
ds_read_b32/b64/b128 straight into the MFMA operand, lowest K value in the lowest bits as the MFMA takes
them; in a K-major tile they are V elements a row apart, each read zero-extended into a register of its own
(ds_read_u8 / ds_read_u16) and packed four (bytes) or two (halves) per register before the MFMA
(mfma.pack_operand). With VectorWidth VW > 1 a lane's VW neighbouring outputs along the tile are VW neighbouring
elements of each K row, so 16-bit values are read as Tensile's LocalReadMFMA reads them: one ds_read of VW values
(b32/b64/b128) per K value and VW outputs, half the registers of one read per value, and packed with v_perm_b32
(the low or high halves of two K values' reads; ``vector_reads``, mfma.pack_vector_operand).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.lds_address import element_address, offset
from tensile_asm.writer.mfma import MfmaPlan
from tensile_asm.writer.prologue import EntryRegisters

_READ = {1: "ds_read_b32", 2: "ds_read_b64", 3: "ds_read_b96", 4: "ds_read_b128"}
_READ_NARROW = {1: "ds_read_u8", 2: "ds_read_u16"}   # one value, zero-extended into a register


@dataclass
class MfmaReadState:
    address_a: VReg
    address_b: VReg
    values_a: list        # register sets (PrefetchLocalRead + 1), MIWaveTile[0] x registers of A each
    values_b: list
    steps_per_read: int = 1    # R: K-steps one wide read of an unroll-major operand covers
    wide_a: list | None = None  # R > 1, unroll-major A: register sets of R steps, tile t's step j at (t*R + j)
    wide_b: list | None = None
    # vector_reads: two SGPRs, the v_perm_b32 selectors of the low and the high halves of two registers
    pack_select: VReg | None = None

    def fresh(self) -> "MfmaReadState":
        """The same addresses with register sets of their own, for one pass of K-steps that reads every set
        before using it (kernel._mac_steps): each pass's sets are then live within the pass only, not from
        the main loop to a later pass (which the allocator would have to keep over the whole loop)."""
        def new(sets):
            return [VReg(r.kind, r.count, r.name, r.align) for r in sets] if sets else sets
        return replace(self, values_a=new(self.values_a), values_b=new(self.values_b), wide_a=new(self.wide_a),
                       wide_b=new(self.wide_b))


def _wide_sets(steps: int, sets: int, r: int) -> int:
    """Register sets of R steps' reads live at once: while step u computes, steps u .. u + sets-1 have been
    read (PrefetchLocalRead)."""
    ahead = sets - 1
    return max(len({x // r for x in range(u, min(u + ahead, steps - 1) + 1)}) for u in range(steps))


def k_steps_per_read(g, p: MfmaPlan) -> int:
    """R: K-steps whose values one read of an unroll-major operand fills (LocalReadVectorWidth / V), 8- and 16-bit
    inputs; 1 with LocalSplitU, DirectToVgpr, complex types, or where R steps' register sets would outnumber
    the PrefetchLocalRead sets."""
    v = p.shape.values_per_lane
    lrvw = g.local_read_vector_width
    if (not g.is_mfma or not g.narrow_lds or g.complex or g.local_split_u > 1 or any(g.direct_to_vgpr)
            or lrvw <= v or lrvw % v):
        return 1
    if not (g.lds_tile("A").unroll_major or g.lds_tile("B").unroll_major):
        return 1
    r = lrvw // v
    steps, sets = g.math_steps, g.local_read_sets
    if steps % r or _wide_sets(steps, sets, r) * r > sets:
        return 1
    return r


def wide(g, p: MfmaPlan, dim: int) -> bool:
    """The operand is read R steps at a time (R > 1, unroll-major tile)."""
    return k_steps_per_read(g, p) > 1 and g.lds_tile(_operand(dim)).unroll_major


def operand_values(g, p: MfmaPlan, state: MfmaReadState, dim: int, regset: int, step: int):
    """The registers an MFMA of K-step ``step`` reads: a VReg of the step's register set (MIWaveTile values
    of ``read_registers`` each), or, for an operand read R steps at a time, a list of one slice per tile."""
    sets = state.wide_a if dim == 0 else state.wide_b
    if not sets:
        return (state.values_a if dim == 0 else state.values_b)[regset]
    r, a_regs = state.steps_per_read, p.shape.a_regs
    regs = sets[(step // r) % len(sets)]
    return [regs.slice((t * r + step % r) * a_regs, a_regs) for t in range(p.wave_tile[dim])]


def widened(g, dim: int) -> bool:
    """Values read one register per value and packed before the MFMA: 8- and 16-bit ones in a K-major tile
    (one value each). (DirectToVgpr operands are packed from their loads: direct_to_vgpr.step_operand.)"""
    return g.narrow_lds and not g.direct_to_vgpr[dim] and not g.lds_tile(_operand(dim)).unroll_major


def vector_reads(g, p: MfmaPlan, dim: int) -> int:
    """VW where one read fills VW outputs' value of one K row (module docstring): a widened 16-bit operand with
    VectorWidth VW > 1 whose reads of VW * 2 bytes stay dword aligned (rows and block pads of whole dwords) and
    cross no block pad; else 1 (one ds_read_u16 per value). Memoised on the geometry."""
    memo = g.__dict__.setdefault("_mfma_vector_reads", {})
    if (dim, p) not in memo:
        memo[dim, p] = _vector_reads(g, p, dim)
    return memo[dim, p]


def _vector_reads(g, p: MfmaPlan, dim: int) -> int:
    vw = p.vector_width[dim]
    if vw < 2 or g.complex or g.lds_bpe != 2 or not widened(g, dim):
        return 1
    lay = g.lds_tile(_operand(dim))
    if (lay.stride_k * 2) % 4 or (lay.block_padded and (lay.pad * 2) % 4):
        return 1
    # every read's first element a multiple of VW (lane bases and offsets alike), and VW elements between pads:
    # no read's VW elements straddle a block pad (the first elements' placement lds_address.lds_reason checks)
    bases, offsets = read_pattern(g, p, dim, vector=vw)
    if any(b % vw for b in bases) or any(o % vw for o in offsets) or (lay.block_padded and lay.interval % vw):
        return 1
    return vw


def read_registers(g, p: MfmaPlan, dim: int) -> int:
    """Registers the reads fill per wave output and operand: the MFMA's operand, or one register per value
    (complex types: each value's real and imaginary parts, mfma_complex.py), or half of that where one read
    fills VW outputs' values (``vector_reads``)."""
    if g.complex:
        return p.shape.values_per_lane * g.acc_regs
    if not widened(g, dim):
        return p.shape.a_regs
    return p.shape.values_per_lane // 2 if vector_reads(g, p, dim) > 1 else p.shape.values_per_lane


def _operand(dim: int) -> str:
    return "A" if dim == 0 else "B"


def lane_coordinates(p: MfmaPlan, dim: int, wave_pos: int, lane: int, r: int = 1) -> tuple[int, int]:
    """(tile index, K value) of the first element lane ``lane`` of the wave at ``wave_pos`` along ``dim`` reads:
    row l % M of its block (l / divisor) % blocks (MfmaPlan.block_divisor), K values from (l / (M*B)) * V*R."""
    m, blocks = p.shape.m, p.blocks[dim]
    row = lane % m + (lane // p.block_divisor(dim)) % blocks * m
    return (wave_pos * p.wave_stride(dim) + row * p.vector_width[dim],
            (lane // (m * p.shape.blocks)) * p.shape.values_per_lane * r)


def reads(g, p: MfmaPlan, dim: int, step: int, vector: int | None = None) -> list[tuple[int, int, int, int]]:
    """The reads of one operand in K-step ``step``: (wave output t, first value v, tile offset, K offset) of
    each read, which reads ``read_values`` values (``vector_reads`` VW > 1: value v of outputs t .. t+VW-1)."""
    lay = g.lds_tile(_operand(dim))
    vw = vector_reads(g, p, dim) if vector is None else vector    # reads of VW outputs: their first one
    r = k_steps_per_read(g, p)
    if r > 1:   # R steps at a time (module docstring); the unroll-major operand reads in their first step
        if lay.unroll_major and step % r:
            return []
        first = (step // r) * r * p.shape.k + (0 if lay.unroll_major else (step % r) * p.shape.values_per_lane)
        count = 1 if lay.unroll_major else p.shape.values_per_lane
        return [(t, v, p.tile_offset(dim, t), first + v) for t in range(0, p.wave_tile[dim], vw)
                for v in range(count)]
    per = 1 if not lay.unroll_major else p.shape.values_per_lane
    # LocalSplitU L: the groups take K-steps in turn (group s's first step at s*K: split_group_k)
    return [(t, v, p.tile_offset(dim, t), step * g.local_split_u * p.shape.k + v)
            for t in range(0, p.wave_tile[dim], vw) for v in range(0, p.shape.values_per_lane, per)]


def read_values(g, p: MfmaPlan, dim: int) -> int:
    """Values one read instruction covers: V (R*V read R steps at a time) in an unroll-major tile, else 1."""
    if not g.lds_tile(_operand(dim)).unroll_major:
        return 1
    return p.shape.values_per_lane * k_steps_per_read(g, p)


def read_pattern(g, p: MfmaPlan, dim: int, vector: int | None = None) -> tuple[list[int], list[int]]:
    """(unpadded lane bases, unpadded offsets of every element read) of one operand's local reads, for
    ``lds_address.lds_reason`` (reads of VW outputs' values, ``vector_reads``: their first elements)."""
    lay = g.lds_tile(_operand(dim))
    r = k_steps_per_read(g, p)
    bases = {lay.unpadded(t, k + group * p.shape.k)
             for w in range(p.wave_group[dim]) for lane in range(64)
             for t, k in [lane_coordinates(p, dim, w, lane, r)] for group in range(g.local_split_u)}
    width = read_values(g, p, dim)
    offsets = {lay.unpadded(t_off, k_off + j) for step in range(g.math_steps)
               for _, _, t_off, k_off in reads(g, p, dim, step, vector) for j in range(width)}
    return sorted(bases), sorted(offsets)


def lane_tile_k(ctx: KernelContext, p: MfmaPlan, dim: int, lane: VReg, wave: VReg, t_index: VReg, k_index: VReg,
                tmp: VReg, blk: VReg) -> list:
    """The instructions t_index, k_index = (tile index, K value) of the first element lane ``lane`` of wave
    ``wave`` reads of its operand along ``dim`` in K-step 0 (``lane_coordinates`` in registers; LocalSplitU: the
    group's first step). A list, not a Module: it adds no comment line to the kernels that use it."""
    g, s = ctx.geometry, p.shape
    wg0 = p.wave_group[0]
    rows, vw = (s.m if dim == 0 else s.n), p.vector_width[dim]
    blocks, divisor = p.blocks[dim], p.block_divisor(dim)
    m = Module("lane coordinates")
    # wave position along this operand's dimension, times the rows of one output
    if dim == 0:
        m.add(ctx.inst("v_and_b32", tmp, wg0 - 1, wave))
    else:
        m.add(ctx.inst("v_lshrrev_b32", tmp, wg0.bit_length() - 1, wave),
              ctx.inst("v_and_b32", tmp, p.wave_group[1] - 1, tmp))
    m.add(ctx.inst("v_mul_u32_u24", t_index, p.wave_stride(dim), tmp, comment="wave offset along the tile"),
          ctx.inst("v_and_b32", tmp, rows - 1, lane))
    if blocks > 1:   # + M * the lane's block along this dimension
        m.add(ctx.inst("v_lshrrev_b32", blk, divisor.bit_length() - 1, lane),
              ctx.inst("v_and_b32", blk, blocks - 1, blk),
              ctx.inst("v_lshl_add_u32", tmp, blk, rows.bit_length() - 1, tmp, comment="+ M * block"))
    m.add(ctx.inst("v_lshlrev_b32", tmp, vw.bit_length() - 1, tmp) if vw > 1 else None,
          ctx.inst("v_add_u32", t_index, t_index, tmp, comment="+ (lane % M) * VW: the output row"),
          ctx.inst("v_lshrrev_b32", tmp, (rows * s.blocks).bit_length() - 1, lane),
          ctx.inst("v_mul_u32_u24", k_index, s.values_per_lane * k_steps_per_read(g, p), tmp,
                   comment="lane / (M*B): its K values"),
          _split_group_k(ctx, p, wave, k_index, tmp) if g.local_split_u > 1 else None)
    return m.items


def local_read_setup(ctx: KernelContext, regs: EntryRegisters, p: MfmaPlan) -> tuple[Module, MfmaReadState]:
    g = ctx.geometry
    wave_shift = ctx.arch.wavefront_size.bit_length() - 1
    per_a, per_b = read_registers(g, p, 0), read_registers(g, p, 1)
    vector = (vector_reads(g, p, 0), vector_reads(g, p, 1))
    align_a = ctx.arch.vgpr["tuple_alignment"] if per_a > 1 or vector[0] > 2 else 1
    align_b = ctx.arch.vgpr["tuple_alignment"] if per_b > 1 or vector[1] > 2 else 1
    sets = g.local_read_sets
    state = MfmaReadState(ctx.vgpr("LocalReadAddrA"), ctx.vgpr("LocalReadAddrB"),
                          [VReg("v", p.wave_tile[0] * per_a, f"MfmaA_X{i}", align_a) for i in range(sets)],
                          [VReg("v", p.wave_tile[1] * per_b, f"MfmaB_X{i}", align_b) for i in range(sets)])
    r = k_steps_per_read(g, p)
    if r > 1:
        state.steps_per_read = r
        n = _wide_sets(g.math_steps, sets, r)
        align = ctx.arch.vgpr["tuple_alignment"]
        if wide(g, p, 0):
            state.wide_a = [VReg("v", p.wave_tile[0] * per_a * r, f"MfmaA_W{i}", align) for i in range(n)]
        if wide(g, p, 1):
            state.wide_b = [VReg("v", p.wave_tile[1] * per_b * r, f"MfmaB_W{i}", align) for i in range(n)]
    lane, wave, tmp = ctx.vgpr("WaveLane"), ctx.vgpr("WaveIndex"), ctx.vgpr("LraTmp")
    t_index, k_index = ctx.vgpr("LraTileIndex"), ctx.vgpr("LraKIndex")
    m = Module("MFMA local read addresses")
    if max(vector) > 1:
        state.pack_select = ctx.sgpr("PackHalves", 2)
        m.add(ctx.inst("s_mov_b32", state.pack_select[0], 0x05040100, comment="v_perm_b32: the low halves"),
              ctx.inst("s_mov_b32", state.pack_select[1], 0x07060302, comment="v_perm_b32: the high halves"))
    m.add(ctx.inst("v_and_b32", lane, ctx.arch.wavefront_size - 1, regs.serial),
          ctx.inst("v_lshrrev_b32", wave, wave_shift, regs.serial))
    blk = ctx.vgpr("LraBlock")
    for dim, addr, extra in ((0, state.address_a, 0), (1, state.address_b, g.lds_offset_b)):
        if g.direct_to_vgpr[dim]:   # DirectToVgpr: no LDS tile; the global reads are the operand
            continue
        m.add(lane_tile_k(ctx, p, dim, lane, wave, t_index, k_index, tmp, blk),
              element_address(ctx, addr, g.lds_tile(_operand(dim)), t_index, k_index, g.lds_bpe, extra))
    return m, state


def _split_group_k(ctx: KernelContext, p: MfmaPlan, wave: VReg, k_index: VReg, tmp: VReg) -> Module:
    """k_index += LocalSplitU group * MatrixInstK: group s (waves s*W .. s*W + W-1 of the W =
    MIWaveGroup[0]*MIWaveGroup[1] waves of a group) starts at K-step s (Tensile's lsuOffset = sgid * kInterval
    in units of a lane's values); the steps then advance by LocalSplitU K-steps (``reads``)."""
    waves = p.wave_group[0] * p.wave_group[1]
    return Module("LocalSplitU group's first K-step").add(
        ctx.inst("v_lshrrev_b32", tmp, waves.bit_length() - 1, wave, comment="LocalSplitU group"),
        ctx.inst("v_mul_u32_u24", tmp, p.shape.k, tmp),
        ctx.inst("v_add_u32", k_index, k_index, tmp))


def local_reads(ctx: KernelContext, p: MfmaPlan, state: MfmaReadState, step: int, buffer: int = 0,
                regset: int = 0) -> Module:
    """Read A's and B's values of K-step ``step`` (of MatrixInstK values) for every output of the wave."""
    g = ctx.geometry
    bpe = g.lds_bpe
    regs_per_value = g.acc_regs
    base = g.lds_buffer_offset(buffer)
    m = Module(f"MFMA local reads, K-step {step}")
    for dim, values, addr in ((0, state.values_a[regset], state.address_a),
                              (1, state.values_b[regset], state.address_b)):
        if g.direct_to_vgpr[dim]:   # DirectToVgpr: the global reads are the operand (direct_to_vgpr.py)
            continue
        lay = g.lds_tile(_operand(dim))
        per_tile = read_registers(g, p, dim)
        wide_sets = state.wide_a if dim == 0 else state.wide_b
        if wide_sets:       # R steps' values of each tile at once (module docstring)
            regs = wide_sets[(step // state.steps_per_read) % len(wide_sets)]
            per_tile *= state.steps_per_read
            values = regs
        if g.narrow_lds:    # one ds_read_u8/u16 per value (K-major), or the V values at once
            nbytes = read_values(g, p, dim) * bpe
            vw = vector_reads(g, p, dim)
            for t, v, t_off, k_off in reads(g, p, dim, step):
                off = base + offset(lay, t_off, k_off) * bpe
                mods = [("offset", off)] if off else ()
                if vw > 1:      # value v of outputs t .. t+VW-1: VW/2 registers of VW halves
                    n = vw // 2
                    first = (t // vw) * p.shape.values_per_lane * n + v * n
                    m.add(ctx.inst(_READ[n], values.slice(first, n), addr, mods=mods))
                elif nbytes < 4:
                    m.add(ctx.inst(_READ_NARROW[nbytes], values[t * per_tile + v], addr, mods=mods))
                else:       # (at most 16 bytes a read: gfx950's f8f6f4 operands, 32 bytes, take two)
                    for r0 in range(0, nbytes // 4, 4):
                        n, o = min(4, nbytes // 4 - r0), off + r0 * 4
                        m.add(ctx.inst(_READ[n], values.slice(t * per_tile + r0, n), addr,
                                       mods=[("offset", o)] if o else ()))
            continue
        width = read_values(g, p, dim) * regs_per_value
        for t, v, t_off, k_off in reads(g, p, dim, step):
            off = base + offset(lay, t_off, k_off) * bpe
            first = t * per_tile + v * regs_per_value
            for r0 in range(0, width, 4):
                n = min(4, width - r0)
                o = off + r0 * 4
                m.add(ctx.inst(_READ[n], values.slice(first + r0, n), addr, mods=[("offset", o)] if o else ()))
    return m
