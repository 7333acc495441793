"""LDS reads of the MFMA operands, as Tensile's MFMA kernels read LDS (LraTileAssignmentMFMA,
LocalReadMFMA), on the writer's K-major LDS tiles (DepthU rows of MacroTile + LdsPad elements).

The MFMA's A operand (B alike, with N): lane l of a wave holds row ``l % M`` of the output's M rows and
the K values ``(l / M) * V .. + V-1`` of the step (V = M*K/64 values per lane, one block). So lane l
reads, for output row t0 of the wave's tile and K-step s,

    A_lds[s*K + (l/M)*V + v][w0*M*VW + (l % M)*VW + tile_offset(t0)],   v = 0 .. V-1

(tile_offset(t0) = t0*MIWaveGroup[0]*M with VectorWidth VW 1; mfma.MfmaPlan.tile_offset) where w0 is the
wave's position along dim 0 (B: w1 = wave / MIWaveGroup[0], along dim 1). The lane and
wave part is one address per operand (set up once); t0, s, v and the LDS buffer are instruction offsets.

16-bit inputs sit in LDS widened to fp32 (the writer's LDS element, context.Geometry): their V values are
read as fp32 registers and packed two per register just before the MFMA (mfma.mfma_step), exactly,
since each was an fp16/bf16 value.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.mfma import MfmaPlan
from tensile_asm.writer.prologue import EntryRegisters

_READ = {1: "ds_read_b32", 2: "ds_read_b64"}


@dataclass
class MfmaReadState:
    address_a: VReg
    address_b: VReg
    values_a: list        # register sets (PrefetchLocalRead + 1), MIWaveTile[0] x registers of A each
    values_b: list


def widened(g) -> bool:
    """16-bit inputs: LDS holds them as fp32, read one register per value and packed before the MFMA."""
    return g.in_bpe < 4


def read_registers(g, p: MfmaPlan) -> int:
    """Registers the reads fill per wave output and operand: the MFMA's operand, or one fp32 per value."""
    return p.shape.values_per_lane if widened(g) else p.shape.a_regs


def local_read_setup(ctx: KernelContext, regs: EntryRegisters, p: MfmaPlan) -> tuple[Module, MfmaReadState]:
    g, s = ctx.geometry, p.shape
    bpe_shift = g.lds_bpe.bit_length() - 1
    wave_shift = ctx.arch.wavefront_size.bit_length() - 1
    per_tile = read_registers(g, p)
    align = ctx.arch.vgpr["tuple_alignment"] if per_tile > 1 else 1
    sets = g.local_read_sets
    state = MfmaReadState(ctx.vgpr("LocalReadAddrA"), ctx.vgpr("LocalReadAddrB"),
                          [VReg("v", p.wave_tile[0] * per_tile, f"MfmaA_X{i}", align) for i in range(sets)],
                          [VReg("v", p.wave_tile[1] * per_tile, f"MfmaB_X{i}", align) for i in range(sets)])
    lane, wave, tmp = ctx.vgpr("WaveLane"), ctx.vgpr("WaveIndex"), ctx.vgpr("LraTmp")
    m = Module("MFMA local read addresses")
    m.add(ctx.inst("v_and_b32", lane, ctx.arch.wavefront_size - 1, regs.serial),
          ctx.inst("v_lshrrev_b32", wave, wave_shift, regs.serial))
    wg0 = p.wave_group[0]
    for dim, addr, rows, row_len, wave_pos, extra in (
            (0, state.address_a, s.m, g.lds_row("A"), "A", 0),
            (1, state.address_b, s.n, g.lds_row("B"), "B", g.lds_offset_b)):
        vw = p.vector_width[dim]
        # wave position along this operand's dimension, times the rows of one output
        if wave_pos == "A":
            m.add(ctx.inst("v_and_b32", tmp, wg0 - 1, wave))
        else:
            m.add(ctx.inst("v_lshrrev_b32", tmp, wg0.bit_length() - 1, wave),
                  ctx.inst("v_and_b32", tmp, p.wave_group[1] - 1, tmp))
        m.add(ctx.inst("v_mul_u32_u24", addr, p.wave_stride(dim), tmp, comment="wave offset along the tile"),
              ctx.inst("v_and_b32", tmp, rows - 1, lane),
              ctx.inst("v_lshlrev_b32", tmp, vw.bit_length() - 1, tmp) if vw > 1 else None,
              ctx.inst("v_add_u32", addr, addr, tmp, comment="+ (lane % M) * VW: the output row"),
              ctx.inst("v_lshrrev_b32", tmp, rows.bit_length() - 1, lane),
              ctx.inst("v_mul_u32_u24", tmp, s.values_per_lane * row_len, tmp, comment="lane / M: its K values"),
              ctx.inst("v_add_u32", addr, addr, tmp),
              ctx.inst("v_lshlrev_b32", addr, bpe_shift, addr))
        if extra:
            m.add(ctx.inst("v_add_u32", addr, extra, addr, comment="B's tile"))
    return m, state


def local_reads(ctx: KernelContext, p: MfmaPlan, state: MfmaReadState, step: int, buffer: int = 0,
                regset: int = 0) -> Module:
    """Read A's and B's values of K-step ``step`` (of MatrixInstK values) for every output of the wave."""
    g, s = ctx.geometry, p.shape
    bpe = g.lds_bpe
    regs_per_value = g.acc_regs
    per_tile = read_registers(g, p)
    base = g.lds_buffer_offset(buffer)
    m = Module(f"MFMA local reads, K-step {step}")
    for dim, values, addr, row_len, tiles in (
            (0, state.values_a[regset], state.address_a, g.lds_row("A"), p.wave_tile[0]),
            (1, state.values_b[regset], state.address_b, g.lds_row("B"), p.wave_tile[1])):
        for t in range(tiles):
            for v in range(s.values_per_lane):
                off = base + ((step * s.k + v) * row_len + p.tile_offset(dim, t)) * bpe
                dst = values.slice(t * per_tile + v * regs_per_value, regs_per_value)
                m.add(ctx.inst(_READ[regs_per_value], dst, addr, mods=[("offset", off)] if off else ()))
    return m
