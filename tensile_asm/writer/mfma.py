"""Matrix-core (MFMA) kernels: which instruction, the accumulators, and one K-step of MFMAs.

How the macro tile maps to waves (Tensile's MatrixInstruction kernels): the work-group's waves form an
MIWaveGroup[0] x MIWaveGroup[1] grid, wave w at (w % MIWaveGroup[0], w / MIWaveGroup[0]); each wave
computes MIWaveTile[0] x MIWaveTile[1] MFMA outputs of M x N, and the outputs of the waves interleave:
output (t0, t1) of wave (w0, w1) covers rows (t0*MIWaveGroup[0] + w0)*M .. +M and columns
(t1*MIWaveGroup[1] + w1)*N .. +N of the macro tile. One K-step (MatrixInstK values of K) issues one
MFMA per output, all reading A's values of output row t0 and B's of output column t1
(mfma_local_read.py loads them; mfma_store.py maps the accumulators to C).

Accumulators live in AGPRs: output (t0, t1) in the ``d_regs`` registers starting at
(t0 + t1*MIWaveTile[0]) * d_regs. The instruction, its blocks and its register counts come from the isa
tables (isa/mfma_shapes.py); the wait states between MFMAs and the reads of their results come from the
hazard pass, the waits for the LDS reads from the waitcnt pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.isa.arch import Arch
from tensile_asm.isa.mfma_shapes import MfmaShape, find_mfma
from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer.context import Geometry, KernelContext

# A/B data type -> the MFMA's input type and its output (accumulator) type, for the types implemented.
MFMA_TYPES = {"S": ("f32", "f32")}


@dataclass(frozen=True)
class MfmaPlan:
    shape: MfmaShape
    wave_group: tuple[int, int]
    wave_tile: tuple[int, int]

    @property
    def outputs(self) -> int:
        return self.wave_tile[0] * self.wave_tile[1]

    def output(self, t0: int, t1: int) -> int:
        """Index of output (t0, t1) among the wave's outputs (its accumulators' order)."""
        return t0 + t1 * self.wave_tile[0]


def _shape(g: Geometry, arch: Arch) -> MfmaShape | None:
    m, n, k, b = g.matrix_instruction
    in_t, out_t = MFMA_TYPES[g.data_type]
    return find_mfma(arch.name, in_t, out_t, m, n, k, b)


def mfma_reason(g: Geometry, params: dict, arch: Arch) -> str | None:
    """Why the MFMA writer cannot build this solution yet (None if it can)."""
    mi = list(g.matrix_instruction)
    if not arch.vgpr.get("accum"):
        return f"MatrixInstruction {mi}: {arch.name} has no matrix cores (MFMA)"
    if g.data_type not in MFMA_TYPES or (g.dest_type, g.compute_type) != (g.data_type, g.data_type):
        return (f"MatrixInstruction with data types {g.data_type}{g.dest_type}{g.compute_type} (A/B, C/D, compute) "
                f"is not implemented; the MFMA writer builds S")
    if _shape(g, arch) is None:
        return f"MatrixInstruction {mi}: {arch.name} has no MFMA for this shape and type"
    if mi[3] != 1:
        return f"MatrixInstruction {mi}: MFMAs of several blocks (B > 1) are not implemented"
    for what, v in (("MIWaveGroup", g.mi_wave_group[0]), ("MIWaveGroup", g.mi_wave_group[1])):
        if v & (v - 1):
            return f"{what} {list(g.mi_wave_group)}: the MFMA writer needs powers of two"
    checks = (
        (params.get("PrefetchGlobalRead", 0) not in (0, 1), "PrefetchGlobalRead 2 with MFMA is not implemented"),
        (g.vector_width != 1, f"VectorWidth {g.vector_width} with MFMA is not implemented (1 is)"),
        (g.local_split_u > 1, "LocalSplitU > 1 with MFMA is not implemented"),
        (bool(params.get("SourceSwap")), "SourceSwap (MFMA operands swapped) is not implemented"),
        (bool(params.get("MIArchVgpr")), "MIArchVgpr (MFMA accumulators in arch VGPRs) is not implemented"),
        (params.get("StoreRemapVectorWidth", 0) not in (0, None),
         "StoreRemapVectorWidth (C remapped through LDS) is not implemented"),
        (any(params.get(f"LdsBlockSizePerPad{t}", 0) not in (0, -1) and params.get(f"LdsPad{t}", 0)
             for t in "AB"), "LdsBlockSizePerPad with LdsPad (a pad every block) is not implemented"),
        (g.mt0 & (g.mt0 - 1) or g.mt1 & (g.mt1 - 1), f"MacroTile {g.mt0}x{g.mt1}: the MFMA writer needs powers of two"),
    )
    for failed, why in checks:
        if failed:
            return why
    return None


def plan(ctx: KernelContext) -> MfmaPlan:
    g = ctx.geometry
    shape = _shape(g, ctx.arch)
    if shape is None:
        raise ValueError(f"kernel {ctx.name}: {ctx.arch.name} has no MFMA for {list(g.matrix_instruction)}")
    return MfmaPlan(shape, tuple(g.mi_wave_group), tuple(g.mi_wave_tile))


def accumulators(ctx: KernelContext, p: MfmaPlan) -> VReg:
    return VReg("a", p.outputs * p.shape.d_regs, "MfmaAcc", align=ctx.arch.vgpr["tuple_alignment"])


def output_acc(p: MfmaPlan, acc: VReg, t0: int, t1: int) -> VReg:
    d = p.shape.d_regs
    return acc.slice(p.output(t0, t1) * d, d)


def zero_accumulators(ctx: KernelContext, acc: VReg) -> Module:
    m = Module("zero the MFMA accumulators")
    for r in range(acc.count):
        m.add(ctx.inst("v_accvgpr_write_b32", acc[r], 0))
    return m


def mfma_step(ctx: KernelContext, p: MfmaPlan, acc: VReg, values_a: VReg, values_b: VReg) -> Module:
    """One K-step: an MFMA per wave output, A's values of row t0 times B's of column t1."""
    s = p.shape
    wt0, wt1 = p.wave_tile
    m = Module(f"MFMA {s.opcode} x {wt0}x{wt1}")
    for t1 in range(wt1):
        for t0 in range(wt0):
            out = output_acc(p, acc, t0, t1)
            m.add(ctx.inst(s.opcode, out, values_a.slice(t0 * s.a_regs, s.a_regs),
                           values_b.slice(t1 * s.a_regs, s.a_regs), out))
    return m
