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

Implemented: DirectToVgprA with TLU A (not transposed) and one value per lane and K-step (fp32, fp64, complex
C and Z: the MFMAs whose lanes each hold one A value per K-step, MIInputPerThread 1), any PrefetchGlobalRead,
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


def value_registers(g, p: MfmaPlan) -> int:
    """Registers of one operand value (one output's MFMA operand of one K-step): 1 for fp32, 2 for fp64, the real and
    imaginary parts for complex types."""
    return g.acc_regs if g.complex else p.shape.a_regs


def groups(g, p: MfmaPlan) -> int:
    """Loads per K-step: MIWaveTile[0] / VectorWidth, one per VW outputs."""
    return p.wave_tile[0] // p.vector_width[0]


def num_loads(g, p: MfmaPlan) -> int:
    return g.math_steps * groups(g, p)


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
        return (f"DirectToVgprA with A transposed (TLUA false, {g.problem_type.name}) is not implemented (its values "
                f"run along K: a lane's loads would cover several K-steps); use DirectToVgprA false")
    if p.shape.values_per_lane != 1:
        return (f"DirectToVgprA with MatrixInstruction {list(g.matrix_instruction)} ({g.data_type}: "
                f"{p.shape.values_per_lane} A values per lane and K-step, packed from separate loads) is not "
                f"implemented; DirectToVgprA is built for MFMAs of one value per lane (fp32, fp64, complex); "
                f"use DirectToVgprA false")
    if p.wave_group[1] != 1 or p.blocks[1] != 1:
        # Tensile rejects it too (isDirectToVgprDoable)
        return (f"DirectToVgprA needs MIWaveGroup[1] 1 and MatrixInstBN 1, not {p.wave_group[1]} and {p.blocks[1]} "
                f"(Tensile rejects it too)")
    if g.wave_separate("A"):
        return "DirectToVgprA with WaveSeparateGlobalReadA is not supported (Tensile rejects it too)"
    if int(params.get("InnerUnroll", 1)) > 1:
        return "DirectToVgprA with InnerUnroll > 1 is not supported (Tensile rejects it too)"
    if g.glvw("A") != p.vector_width[0]:
        return (f"DirectToVgprA with GlobalLoadVectorWidthA {g.glvw('A')} != VectorWidth {p.vector_width[0]} is not "
                f"supported (Tensile rejects it too)")
    if not params.get("ExpandPointerSwap", True):
        return "DirectToVgprA with ExpandPointerSwap false is not supported (Tensile rejects it too)"
    if int(params.get("ScheduleIterAlg", 3)) < 3 and g.prefetch_global_read_depth == 2:
        return ("DirectToVgprA with ScheduleIterAlg < 3 and PrefetchGlobalRead 2 is not supported (Tensile rejects it "
                "too)")
    if not g.buffer_load:
        return "DirectToVgprA with BufferLoad false is not implemented; use BufferLoad true"
    if g.num_loads("A") != num_loads(g, p):
        return (f"DirectToVgprA with NumLoadsA {g.num_loads('A')}: each wave's loads cover its own outputs, "
                f"{num_loads(g, p)} loads; not implemented otherwise")
    return None


def operand_set(ctx: KernelContext, p: MfmaPlan, index: int) -> VReg:
    """One register set of the DirectToVgpr operand: a DepthU step's values, [K-step][output][value registers]."""
    g = ctx.geometry
    per = value_registers(g, p)
    return VReg("v", g.math_steps * p.wave_tile[0] * per, f"DtvA_X{index}",
                align=ctx.arch.vgpr["tuple_alignment"] if per * p.vector_width[0] > 1 else 1)


def load_registers(ctx: KernelContext, p: MfmaPlan, values: VReg) -> list:
    """Load i's registers in ``values``: load i = K-step s * groups + group c fills outputs c*VW .. c*VW+VW-1."""
    g = ctx.geometry
    per, vw, n = value_registers(g, p), p.vector_width[0], groups(g, p)
    return [values.slice((s * p.wave_tile[0] + c * vw) * per, vw * per)
            for s in range(g.math_steps) for c in range(n)]


def step_values(ctx: KernelContext, p: MfmaPlan, values: VReg, step: int) -> VReg:
    """K-step ``step``'s MFMA operand (every output of the wave) in a register set."""
    per = value_registers(ctx.geometry, p)
    return values.slice(step * p.wave_tile[0] * per, p.wave_tile[0] * per)


def tile_coordinates(ctx: KernelContext, p: MfmaPlan, serial, load: int, name: str):
    """(Module, tile index, k index) of the first element of load ``load`` for this thread: the element the
    MFMA's lane takes for the first output of the load's group in the load's K-step."""
    from tensile_asm.writer.mfma_local_read import lane_tile_k
    g = ctx.geometry
    step, c = divmod(load, groups(g, p))
    lane, wave, tmp = ctx.vgpr(f"Dtv{name}Lane"), ctx.vgpr(f"Dtv{name}Wave"), ctx.vgpr(f"Dtv{name}Tmp")
    t_index, k_index, blk = ctx.vgpr(f"Dtv{name}Tile"), ctx.vgpr(f"Dtv{name}K"), ctx.vgpr(f"Dtv{name}Block")
    m = Module(f"{name} load {load} (DirectToVgpr, K-step {step}, outputs from {c * p.vector_width[0]}): "
               f"tile coordinates")
    m.add(ctx.inst("v_and_b32", lane, ctx.arch.wavefront_size - 1, serial),
          ctx.inst("v_lshrrev_b32", wave, ctx.arch.wavefront_size.bit_length() - 1, serial),
          lane_tile_k(ctx, p, 0, lane, wave, t_index, k_index, tmp, blk))
    t_off = p.tile_offset(0, c * p.vector_width[0])
    k_off = step * g.local_split_u * p.shape.k
    if t_off:
        m.add(ctx.inst("v_add_u32", t_index, t_off, t_index))
    if k_off:
        m.add(ctx.inst("v_add_u32", k_index, k_off, k_index))
    return m, t_index, k_index
