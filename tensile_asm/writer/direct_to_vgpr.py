"""DirectToVgpr (Tensile's DirectToVgprA / DirectToVgprB) with MFMA: an operand's global reads land in the
registers its MFMAs read, bypassing LDS (no local write, no barrier for it, no local read, no LDS tile).

Each wave then loads exactly the values its own MFMAs take: lane l of the wave at w0 along dim 0 needs, in
K-step s, A's element (tile index, K value) that an LDS read would have given it (mfma_local_read.py:
``lane_tile_k`` plus the output's ``tile_offset`` and the step's K offset). With TLU (the operand's tile
dimension the unit-stride one, A not transposed) the VectorWidth outputs t .. t+VW-1 of a lane are VW
neighbouring elements in memory (VectorWidth interleaves the outputs row by row), so one load of
GlobalLoadVectorWidth = VW elements fills the operand registers of VW outputs; a K-step takes MIWaveTile[0] / VW
loads, a DepthU step ``math_steps`` times that, Tensile's NumLoadsA (NumThreads * GLVW elements a load, the
waves of MIWaveGroup[0] x LocalSplitU each loading their own rows and K-steps). As in Tensile, the other waves
along N (MIWaveGroup[1]) would need the same values, so DirectToVgprA needs MIWaveGroup[1] = 1 and
MatrixInstBN = 1 (Tensile rejects the others, SolutionStructs.isDirectToVgprDoable).

Registers: one operand set holds a whole DepthU step, [K-step][output][registers of one value], so K-step s's
MFMA operand is a slice of it. The loop keeps two sets: the tile computed and the next one. With
PrefetchGlobalRead 1 the next tile's loads go to the other set at the top of the iteration; with
PrefetchGlobalRead 2 (tile i+2 loaded while tile i computes) set i % 2 is refilled with tile i+2 after the
MFMAs of tile i, at the end of the iteration (kernel.py), so two sets suffice as in Tensile's PGR2 with DTV;
the loop's LDS buffer index is the set index. The waits before the MFMAs come from the waitcnt pass.

16-bit types (H, B): a lane holds V = MIInputPerThread K values per output (V/2 registers, two halves each, the
lower K value low). With TLU those V values lie a row of A apart, so a K-step takes V loads per group, one per K
value, each VW halves of VW outputs (Tensile's NumLoadsA counts them); before the step's MFMAs the halves are
packed (v_perm_b32: half e of the loads of K values 2r and 2r+1 into register r of output e), as Tensile's
VgprForLocalReadPacking. Vectors reaching past the free size are handled as for the LDS path (global_read.py:
whole vectors out of range, partial ones element by element), one rows-left register per group.

A transposed (TLU false: A's K index the unit-stride one, the Alik files): a lane's V K values of one output and
K-step are V neighbouring elements in memory, so one load of V elements (the MFMA operand: 8 bytes for 8-bit
32x32x16 and 16-bit 16x16x16/32x32x8, one fp64) fills one output's operand of one K-step: MIWaveTile[0] loads a
K-step, in the same K order as B's local reads (mfma_local_read.reads). Tensile loads GlobalReadVectorWidth
elements (16 bytes: two K-steps) and reads B with as wide a LocalReadVectorWidth so that both follow the same K
order; here every K-step's operand is its own load, which gives the same sum with B read as for any other kernel.
The K guard of the tail loop splits these loads as for any vector along K (global_read.guarded_loads); rows past
the free size load values (or 0 past the buffer) that only reach output rows that are never stored.

Implemented: DirectToVgprA with TLU A (not transposed): fp32, fp64, complex C and Z (one value per lane and K-step)
and fp16/bf16 with VectorWidth >= 2 (Tensile's numBytes * VW >= 4); with A transposed: VectorWidth 1 and real
types other than fp32 (Tensile rejects fp32 and complex fp32), PrefetchLocalRead >= 1; any PrefetchGlobalRead,
PrefetchLocalRead, 1LDSBuffer, LocalSplitU, SourceSwap, StaggerU, GlobalSplitU. ``dtv_reason`` refuses the rest.
"""

from __future__ import annotations

from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.mfma import MfmaPlan


def dtv(g, name: str) -> bool:
    """The operand ``name`` ('A' or 'B') is DirectToVgpr."""
    return bool(g.is_mfma and g.direct_to_vgpr[0 if name == "A" else 1])


def through_lds(g, name: str) -> bool:
    return not dtv(g, name)


def packed(g, p: MfmaPlan) -> bool:
    """The operand is packed from loads of one K value each (8/16-bit types, several values per lane, TLU A)."""
    return g.in_bpe < 4 and p.shape.values_per_lane > 1 and g.tlu_a


def load_width(g, p: MfmaPlan) -> int:
    """Elements one load covers: GlobalLoadVectorWidthA (= VectorWidth) with TLU A; with A transposed one output's
    MFMA operand, its V K values."""
    return g.glvw("A") if g.tlu_a else p.shape.values_per_lane


def value_registers(g, p: MfmaPlan) -> int:
    """Registers of one output's MFMA operand of one K-step: 1 for fp32, 2 for fp64, the real and imaginary parts
    for complex types, the packed halves for 16-bit types."""
    return g.acc_regs if g.complex else p.shape.a_regs


def groups(g, p: MfmaPlan) -> int:
    """Groups of VectorWidth outputs: MIWaveTile[0] / VectorWidth."""
    return p.wave_tile[0] // p.vector_width[0]


def per_group(g, p: MfmaPlan) -> int:
    """Loads per group and K-step: 1, or one per K value of a lane (packed types)."""
    return p.shape.values_per_lane if packed(g, p) else 1


def load_registers_each(g, p: MfmaPlan) -> int:
    """Registers one load fills."""
    if packed(g, p):
        return max(1, p.vector_width[0] * g.in_bpe // 4)
    return p.vector_width[0] * value_registers(g, p)


def num_loads(g, p: MfmaPlan) -> int:
    return g.math_steps * groups(g, p) * per_group(g, p)


def load_position(g, i: int, p: MfmaPlan) -> tuple[int, int, int]:
    """(K-step, group, K value) of load ``i``."""
    rest, j = divmod(i, per_group(g, p))
    step, c = divmod(rest, groups(g, p))
    return step, c, j


def k_delta(g, p: MfmaPlan, i: int) -> int:
    """K values between load ``i`` and the first load of its group (K-step 0, K value 0)."""
    step, _, j = load_position(g, i, p)
    return step * g.local_split_u * p.shape.k + j


def shared_offsets(g) -> bool:
    """With TLU A the loads of one group of outputs differ only in K: they share the group's offset VGPR and add
    their K distance (k_delta x stride bytes) as the buffer load's SGPR soffset, as Tensile's UseSgprForGRO does
    (a VGPR a load fewer: 30 of MT256x128 fp16's). The soffset is outside the buffer's range check, so a row past the
    free size must be out of range by its offset (bit 31, global_read._mark_edge_vector), which marks a whole
    vector: shared where 16-bit vectors partly past the size load element by element anyway (straddling), where
    vectors are one element, or where none is partly past it (GuaranteeNoPartial); otherwise one VGPR a load."""
    from tensile_asm.writer.global_read import straddling_vectors
    return bool(g.tlu_a and g.buffer_load and (straddling_vectors(g, "A") or g.glvw("A") == 1
                                               or g.guarantee_no_partial("A")))


def soffset_setup(ctx: KernelContext, op, stride) -> Module:
    """The K-distance SGPRs of the loads sharing offsets (``shared_offsets``): k_delta x stride x element bytes."""
    from tensile_asm.writer import mfma
    g, p = ctx.geometry, mfma.plan(ctx)
    m = Module(f"{op.name}: the K distances of the DirectToVgpr loads of a group (soffsets)")
    seen: list = []
    for i, reg in enumerate(op.soffsets):
        if reg == 0 or any(reg is r for r in seen):
            continue
        seen.append(reg)
        m.add(ctx.inst("s_mul_i32", reg, stride, k_delta(g, p, i) * g.in_bpe,
                       comment=f"{k_delta(g, p, i)} K values further"))
    return m


def dtv_reason(g, p: MfmaPlan, params: dict) -> str | None:
    """Why the DirectToVgpr operands of this MFMA solution cannot be built (None if they can, or there are none)."""
    if not any(g.direct_to_vgpr):
        return None
    if g.direct_to_vgpr[1]:
        return ("DirectToVgprB=True is not implemented (DirectToVgprA is: no rocBLAS logic uses B); use "
                "DirectToVgprB false")
    if g.direct_to_vgpr[0] and g.direct_to_vgpr[1] and g.prefetch_global_read_depth == 2:
        # Tensile rejects it too: both operands would need a third register set
        return "DirectToVgprA and DirectToVgprB with PrefetchGlobalRead 2 is not supported (Tensile rejects it)"
    if g.direct_to_lds("A") or g.direct_to_lds("B"):
        return ("DirectToVgprA with DirectToLds is not implemented (the loop's LDS buffers would be written by the "
                "loads of one operand and the local writes of none); use DirectToLds 0")
    if not g.tlu_a:
        reason = _transposed_reason(g, p, params)
        if reason:
            return reason
    elif p.shape.values_per_lane != 1 and not (g.in_bpe == 2 and p.shape.values_per_lane % 2 == 0):
        return (f"DirectToVgprA with MatrixInstruction {list(g.matrix_instruction)} ({g.data_type}: "
                f"{p.shape.values_per_lane} A values per lane and K-step of {g.in_bpe} bytes) is not implemented; "
                f"DirectToVgprA is built for fp32, fp64, complex and fp16/bf16 MFMAs; use DirectToVgprA false")
    if packed(g, p) and p.vector_width[0] * g.in_bpe < 4:
        # Tensile rejects it too (isDirectToVgprDoable: TLU with numBytes * VW < 4)
        return (f"DirectToVgprA with {g.data_type} and VectorWidth {p.vector_width[0]} is not supported (Tensile "
                f"needs VectorWidth * element bytes >= 4); use VectorWidth {4 // g.in_bpe}")
    if p.wave_group[1] != 1 or p.blocks[1] != 1:
        # Tensile rejects it too (isDirectToVgprDoable)
        return (f"DirectToVgprA needs MIWaveGroup[1] 1 and MatrixInstBN 1, not {p.wave_group[1]} and {p.blocks[1]} "
                f"(Tensile rejects it too)")
    if g.wave_separate("A"):
        return "DirectToVgprA with WaveSeparateGlobalReadA is not supported (Tensile rejects it too)"
    if int(params.get("InnerUnroll", 1)) > 1:
        return "DirectToVgprA with InnerUnroll > 1 is not supported (Tensile rejects it too)"
    if g.tlu_a and g.glvw("A") != p.vector_width[0]:
        return (f"DirectToVgprA with GlobalLoadVectorWidthA {g.glvw('A')} != VectorWidth {p.vector_width[0]} is not "
                f"supported (Tensile rejects it too)")
    if not params.get("ExpandPointerSwap", True):
        return "DirectToVgprA with ExpandPointerSwap false is not supported (Tensile rejects it too)"
    if int(params.get("ScheduleIterAlg", 3)) < 3 and g.prefetch_global_read_depth == 2:
        return ("DirectToVgprA with ScheduleIterAlg < 3 and PrefetchGlobalRead 2 is not supported (Tensile rejects it "
                "too)")
    if not g.buffer_load:
        return "DirectToVgprA with BufferLoad false is not implemented; use BufferLoad true"
    if g.tlu_a and g.num_loads("A") != num_loads(g, p):
        return (f"DirectToVgprA with NumLoadsA {g.num_loads('A')}: each wave's loads cover its own outputs, "
                f"{num_loads(g, p)} loads; not implemented otherwise")
    return None


def _transposed_reason(g, p: MfmaPlan, params: dict) -> str | None:
    """Why DirectToVgprA with A transposed (TLUA false) cannot be built: Tensile's own rejections
    (isDirectToVgprDoable) and this writer's limits."""
    what = f"DirectToVgprA with A transposed (TLUA false, {g.problem_type.name})"
    if g.data_type in ("S", "C"):
        return f"{what} and {g.data_type} data is not supported (Tensile rejects it too); use DirectToVgprA false"
    if g.prefetch_local_read == 0:
        return f"{what} and PrefetchLocalRead 0 is not supported (Tensile rejects it too); use PrefetchLocalRead 1"
    if int(params.get("FractionalLoad", 0)):
        return f"{what} and FractionalLoad is not supported (Tensile rejects it too); use FractionalLoad 0"
    lrvw = int(params.get("LocalReadVectorWidth", -1))
    if lrvw > 0 and g.glvw("A") != lrvw:
        return (f"{what} with GlobalLoadVectorWidthA {g.glvw('A')} != LocalReadVectorWidth {lrvw} is not supported "
                f"(Tensile rejects it too)")
    per_load = p.shape.k * g.glvw("A") * g.local_split_u // p.shape.values_per_lane
    if per_load == 0 or g.num_loads_coalesced("A") != g.depth_u // per_load:
        return (f"{what} with NumLoadsCoalescedA {g.num_loads_coalesced('A')} != DepthU // (MatrixInstK x "
                f"GlobalLoadVectorWidthA x LocalSplitU // MIInputPerThread) is not supported (Tensile rejects it too)")
    if g.complex:
        return f"{what} and complex data is not implemented; use DirectToVgprA false"
    if p.vector_width[0] != 1:
        return (f"{what} and VectorWidth {p.vector_width[0]} is not implemented (each output's K values are loads "
                f"of their own); use VectorWidth 1")
    if load_width(g, p) * g.in_bpe > 16:
        return f"{what}: a lane's {load_width(g, p)} K values are more than one 16-byte load; not implemented"
    return None


def operand_set(ctx: KernelContext, p: MfmaPlan, index: int) -> VReg:
    """One register set of the DirectToVgpr operand: a DepthU step's loads, [K-step][group][K value][registers of
    one load] (unpacked types: [K-step][output][value registers], the MFMA operands themselves)."""
    g = ctx.geometry
    each = load_registers_each(g, p)
    return VReg("v", num_loads(g, p) * each, f"DtvA_X{index}",
                align=ctx.arch.vgpr["tuple_alignment"] if each > 1 else 1)


def load_registers(ctx: KernelContext, p: MfmaPlan, values: VReg) -> list:
    """Load i's registers in ``values`` (``load_position``): with one load per group, outputs c*VW .. c*VW+VW-1 of
    its K-step."""
    each = load_registers_each(ctx.geometry, p)
    return [values.slice(i * each, each) for i in range(num_loads(ctx.geometry, p))]


def step_operand(ctx: KernelContext, p: MfmaPlan, values: VReg, step: int) -> tuple[Module, object]:
    """K-step ``step``'s MFMA operand of every output of the wave, from a register set: a slice of it, or for
    packed types the halves packed into registers of their own (module docstring)."""
    g = ctx.geometry
    per = value_registers(g, p)
    if not packed(g, p):
        return Module("DirectToVgpr operand"), values.slice(step * p.wave_tile[0] * per, p.wave_tile[0] * per)
    out = VReg("v", p.wave_tile[0] * per, "DtvPackedA", align=ctx.arch.vgpr["tuple_alignment"] if per > 1 else 1)
    m = Module(f"pack the DirectToVgpr A halves of K-step {step}")
    each, vw, v = load_registers_each(g, p), p.vector_width[0], p.shape.values_per_lane
    loads = load_registers(ctx, p, values)
    selectors = [ctx.sgpr("DtvPackLow"), ctx.sgpr("DtvPackHigh")]   # (VOP3 takes no literal before gfx10)
    m.add(ctx.inst("s_mov_b32", selectors[0], 0x05040100, comment="the low halves of both sources"),
          ctx.inst("s_mov_b32", selectors[1], 0x07060302, comment="the high halves of both sources"))
    for c in range(groups(g, p)):
        first = (step * groups(g, p) + c) * v
        for e in range(vw):
            for r in range(per):
                low, high = loads[first + 2 * r][e // 2], loads[first + 2 * r + 1][e // 2]
                # bytes 0-3 of the second source, 4-7 of the first: half e % 2 of each
                m.add(ctx.inst("v_perm_b32", out[(c * vw + e) * per + r], high, low, selectors[e % 2],
                               comment="K values 2r, 2r+1 of this output"))
    return m, out


def tile_coordinates(ctx: KernelContext, p: MfmaPlan, serial, load: int, name: str):
    """(Module, tile index, k index) of the first element of load ``load`` for this thread: the element the
    MFMA's lane takes for the first output of the load's group in the load's K-step."""
    from tensile_asm.writer.mfma_local_read import lane_tile_k
    g = ctx.geometry
    step, c, j = load_position(g, load, p)
    lane, wave, tmp = ctx.vgpr(f"Dtv{name}Lane"), ctx.vgpr(f"Dtv{name}Wave"), ctx.vgpr(f"Dtv{name}Tmp")
    t_index, k_index, blk = ctx.vgpr(f"Dtv{name}Tile"), ctx.vgpr(f"Dtv{name}K"), ctx.vgpr(f"Dtv{name}Block")
    m = Module(f"{name} load {load} (DirectToVgpr, K-step {step}, outputs from {c * p.vector_width[0]}): "
               f"tile coordinates")
    m.add(ctx.inst("v_and_b32", lane, ctx.arch.wavefront_size - 1, serial),
          ctx.inst("v_lshrrev_b32", wave, ctx.arch.wavefront_size.bit_length() - 1, serial),
          lane_tile_k(ctx, p, 0, lane, wave, t_index, k_index, tmp, blk))
    t_off = p.tile_offset(0, c * p.vector_width[0])
    k_off = step * g.local_split_u * p.shape.k + j
    if t_off:
        m.add(ctx.inst("v_add_u32", t_index, t_off, t_index))
    if k_off:
        m.add(ctx.inst("v_add_u32", k_index, k_off, k_index))
    return m, t_index, k_index
