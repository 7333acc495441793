"""Matrix-core (MFMA) kernels: which instruction, the accumulators, and one K-step of MFMAs.

How the macro tile maps to waves (Tensile's MatrixInstruction kernels): the work-group's waves form an
MIWaveGroup[0] x MIWaveGroup[1] grid, wave w at (w % MIWaveGroup[0], w / MIWaveGroup[0]); each wave
computes MIWaveTile[0] x MIWaveTile[1] MFMA outputs of M x N, and the outputs of the waves interleave:
output (t0, t1) of wave (w0, w1) covers rows (t0*MIWaveGroup[0] + w0)*M .. +M and columns
(t1*MIWaveGroup[1] + w1)*N .. +N of the macro tile when VectorWidth is 1; with VectorWidth VW, VW
neighbouring outputs interleave row by row (``MfmaPlan.tile_offset``, Tensile's LraTileAssignmentMFMA
"apply VectorWidth" and LocalReadMFMA's MIWaveGroupShape). One K-step (MatrixInstK values of K) issues one
MFMA per output, all reading A's values of output row t0 and B's of output column t1
(mfma_local_read.py loads them; mfma_store.py maps the accumulators to C).

With SourceSwap the MFMA takes B's values first and A's second (Tensile's Components/MFMA.py), so it
computes the output transposed: the lanes run along the rows of C (mfma_store.py). Accumulators live in
AGPRs (arch VGPRs with MIArchVgpr, gfx90a on): output (t0, t1) in the ``d_regs`` registers starting at
(t0 + t1*MIWaveTile[0]) * d_regs. The instruction, its blocks and its register counts come from the isa
tables (isa/mfma_shapes.py); the wait states between MFMAs and the reads of their results come from the
hazard pass, the waits for the LDS reads from the waitcnt pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.isa.arch import Arch
from tensile_asm.isa.mfma_shapes import MfmaShape, find_mfma, mfma_shapes
from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import VReg
from tensile_asm.writer.context import Geometry, KernelContext

# A/B data type -> the MFMA's input type and its output (accumulator) type, for the types implemented.
# Complex C and Z run the real MFMAs of their parts (mfma_complex.py).
MFMA_TYPES = {"S": ("f32", "f32"), "D": ("f64", "f64"), "H": ("f16", "f32"), "B": ("bf16", "f32"),
              "I8": ("i8", "i32"), "C": ("f32", "f32"), "Z": ("f64", "f64"), "F8": ("fp8", "f32"),
              "B8": ("bf8", "f32"), "F8B8": ("fp8_bf8", "f32"), "B8F8": ("bf8_fp8", "f32")}
# the hybrid fp8 MFMAs with their operands exchanged (SourceSwap: B's values are the first operand)
SWAPPED_IN_TYPE = {"fp8_bf8": "bf8_fp8", "bf8_fp8": "fp8_bf8"}
# MFMA input types whose values are bytes (packed four to a register from byte reads)
BYTE_IN_TYPES = ("i8", "fp8", "bf8", "fp8_bf8", "bf8_fp8")


@dataclass(frozen=True)
class MfmaPlan:
    shape: MfmaShape
    wave_group: tuple[int, int]
    wave_tile: tuple[int, int]
    vector_width: tuple[int, int] = (1, 1)   # VectorWidth, VectorWidthB
    blocks: tuple[int, int] = (1, 1)         # the MFMA's blocks along dims 0 and 1 (MatrixInstBM, BN)
    swap: bool = False                       # SourceSwap
    parts: int = 1                           # accumulator sets: 2 for complex types (real, then imaginary)

    def rows(self, dim: int) -> int:
        """Rows (dim 0) or columns (dim 1) of one output: the MFMA's blocks side by side."""
        return self.shape.m * self.blocks[0] if dim == 0 else self.shape.n * self.blocks[1]

    def block_divisor(self, dim: int) -> int:
        """Lanes per step of the operand's block index along ``dim``: block b of the MFMA (lanes (l / M) % B
        of its operands) is block (b / BN, b % BN) of the output, the second operand's blocks inner (Tensile's
        LraTileAssignmentMFMA dividedForBlkId), so lane l reads block (l / divisor) % blocks[dim]."""
        m = self.shape.m
        inner = dim == 0 if self.swap else dim == 1
        return m if inner else m * self.blocks[1 - dim]

    def wave_stride(self, dim: int) -> int:
        """Elements between the outputs of neighbouring waves along ``dim``."""
        return self.rows(dim) * self.vector_width[dim]

    def tile_offset(self, dim: int, t: int) -> int:
        """Element offset of the wave's output ``t`` along ``dim``: outputs come in vectors of VectorWidth
        (VW neighbours interleave row by row: row i of output t sits at i*VW + t % VW), vectors
        MIWaveGroup waves apart."""
        vw = self.vector_width[dim]
        return (t // vw) * self.wave_group[dim] * self.rows(dim) * vw + t % vw

    @property
    def outputs(self) -> int:
        return self.wave_tile[0] * self.wave_tile[1]

    def output(self, t0: int, t1: int) -> int:
        """Index of output (t0, t1) among the wave's outputs (its accumulators' order)."""
        return t0 + t1 * self.wave_tile[0]


def xf32(g: Geometry) -> bool:
    """fp32 A/B computed by the xf32 MFMAs (gfx942): F32XdlMathOp X on an S problem (Tensile's
    EnableF32XdlMathOp). A and B stay fp32 in memory, LDS and registers; the MFMA takes two values per lane."""
    xdl = getattr(g.problem_type, "f32_xdl_math_op", None)
    return g.data_type == "S" and xdl is not None and xdl.char == "X"


def _shape(g: Geometry, arch: Arch) -> MfmaShape | None:
    m, n, k, b = g.matrix_instruction
    in_t, out_t = MFMA_TYPES[g.data_type]
    if xf32(g):
        in_t = "xf32"
    if g.source_swap:   # Tensile's MFMA.py: the hybrid's types follow the operands
        in_t = SWAPPED_IN_TYPE.get(in_t, in_t)
    return find_mfma(arch.name, in_t, out_t, m, n, k, b)


def mfma_reason(g: Geometry, params: dict, arch: Arch) -> str | None:
    """Why the MFMA writer cannot build this solution yet (None if it can)."""
    mi = list(g.matrix_instruction)
    if not arch.vgpr.get("accum"):
        return f"MatrixInstruction {mi}: {arch.name} has no matrix cores (MFMA)"
    if g.data_type not in MFMA_TYPES:
        return (f"MatrixInstruction with data type {g.data_type} is not implemented; the MFMA writer builds "
                f"{', '.join(MFMA_TYPES)}")
    if _shape(g, arch) is None:
        if xf32(g) and not any(s.in_type == "xf32" for s in mfma_shapes(arch.name)):
            # CDNA4 removed the xf32 MFMAs (hipBLASLt emulates them with bf16 MFMAs, F32XEmulation: not Tensile's)
            return (f"F32XdlMathOp X (xf32) with MatrixInstruction {mi}: {arch.name} has no xf32 MFMAs; use "
                    f"F32XdlMathOp none (the fp32 MFMAs)")
        return f"MatrixInstruction {mi}: {arch.name} has no MFMA for this shape and type"
    if g.complex:
        from tensile_asm.writer.mfma_complex import complex_reason
        why = complex_reason(g, _shape(g, arch))
        if why:
            return why
    if mi[3] != 1:
        if g.data_type in ("D", "Z"):
            return f"MatrixInstruction {mi}: f64 MFMAs of several blocks (4x4x4f64) are not implemented"
        if g.store_remap and g.mi_blocks[1] > 1:
            return (f"MatrixInstruction {mi}: StoreRemapVectorWidth with MFMA blocks along N (MatrixInstBN "
                    f"{g.mi_blocks[1]}) is not implemented; use blocks along M (MatrixInstBM) or "
                    f"StoreRemapVectorWidth 0")
    for what, v in (("MIWaveGroup", g.mi_wave_group[0]), ("MIWaveGroup", g.mi_wave_group[1])):
        if v & (v - 1):
            return f"{what} {list(g.mi_wave_group)}: the MFMA writer needs powers of two"
    if g.mi_wave_tile[0] % g.vector_width or g.mi_wave_tile[1] % g.vector_width_b:
        return (f"MIWaveTile {list(g.mi_wave_tile)} is not a multiple of VectorWidth {g.vector_width} / "
                f"VectorWidthB {g.vector_width_b}")
    checks = (
        # Tensile rejects it there too (HasMFMA_vgpr): gfx908's MFMAs write AGPRs only
        (g.mi_arch_vgpr and not arch.vgpr.get("unified"),
         f"MIArchVgpr is not supported by {arch.name}: its MFMAs write AGPRs only"),
    )
    for failed, why in checks:
        if failed:
            return why
    from tensile_asm.writer.lds_address import lds_reason
    from tensile_asm.writer.mfma_local_read import read_pattern
    p = MfmaPlan(_shape(g, arch), tuple(g.mi_wave_group), tuple(g.mi_wave_tile), (g.vector_width, g.vector_width_b),
                 tuple(g.mi_blocks), g.source_swap)
    why = _accumulator_reason(g, p, arch)
    if why:
        return why
    from tensile_asm.writer.direct_to_vgpr import dtv_reason
    return (dtv_reason(g, p, params) or lds_reason(g, lambda op: read_pattern(g, p, 0 if op == "A" else 1))
            or _narrow_alignment_reason(g, p))


def _accumulator_reason(g: Geometry, p: MfmaPlan, arch: Arch) -> str | None:
    """The accumulators follow from MacroTile, MatrixInstruction and the waves (MIWaveTile outputs of d_regs
    registers per lane, twice for complex types): more than the AGPR file (the arch VGPR file with
    MIArchVgpr) can never be written. Tensile rejects such solutions too (its AGPR count past 256)."""
    parts = 2 if g.complex else 1
    acc = parts * p.outputs * p.shape.d_regs
    kind, limit = ("arch VGPRs", arch.vgpr["arch_max"]) if g.mi_arch_vgpr else ("AGPRs", arch.vgpr["accum_max"])
    if acc <= limit:
        return None
    return (f"MatrixInstruction {list(g.matrix_instruction)} with MacroTile {g.mt0}x{g.mt1}: the accumulators need "
            f"{acc} {kind} per lane (MIWaveTile {list(g.mi_wave_tile)} x {p.shape.d_regs}"
            f"{' x 2 complex parts' if parts == 2 else ''}), more than {arch.name}'s {limit}; use a smaller "
            f"MacroTile (MIWaveTile) or more waves (MIWaveGroup)")


def _narrow_alignment_reason(g: Geometry, p: MfmaPlan) -> str | None:
    """8- and 16-bit LDS elements (I8, H, B with MFMA): the wide accesses (the V values of an unroll-major
    read, a vector written along the LDS row) must stay dword aligned (2-byte ones halfword aligned), so the
    row stride and block pads must be multiples of that; every access starts at a multiple of its width along
    the row."""
    if not g.narrow_lds:
        return None
    for dim, op in enumerate("AB"):
        lay = g.lds_tile(op)
        tlu = g.tlu_a if op == "A" else g.tlu_b
        read = p.shape.values_per_lane if lay.unroll_major else 1
        write = g.glvw(op) if lay.unroll_major != tlu else 1     # the vector runs along the LDS row
        align = min(4, max(read, write) * g.lds_bpe)
        stride = (lay.stride_tile if lay.unroll_major else lay.stride_k) * g.lds_bpe
        pad = lay.pad * g.lds_bpe if lay.block_padded else 0
        if stride % align or pad % align:
            return (f"LdsPad{op} {lay.pad} with {8 * g.lds_bpe}-bit LDS elements: LDS rows of {stride} bytes (block pads of "
                    f"{pad}) misalign its {align}-byte LDS accesses; use a pad that is a multiple of {align}")
    return None


def plan(ctx: KernelContext) -> MfmaPlan:
    g = ctx.geometry
    shape = _shape(g, ctx.arch)
    if shape is None:
        raise ValueError(f"kernel {ctx.name}: {ctx.arch.name} has no MFMA for {list(g.matrix_instruction)}")
    return MfmaPlan(shape, tuple(g.mi_wave_group), tuple(g.mi_wave_tile), (g.vector_width, g.vector_width_b),
                    tuple(g.mi_blocks), g.source_swap, 2 if g.complex else 1)


def accumulators(ctx: KernelContext, p: MfmaPlan) -> VReg:
    """AGPRs, or arch VGPRs with MIArchVgpr (gfx90a on)."""
    kind = "v" if ctx.geometry.mi_arch_vgpr else "a"
    return VReg(kind, p.parts * p.outputs * p.shape.d_regs, "MfmaAcc", align=ctx.arch.vgpr["tuple_alignment"])


def output_acc(p: MfmaPlan, acc: VReg, t0: int, t1: int, part: int = 0) -> VReg:
    """The accumulators of output (t0, t1); complex types: of its real (``part`` 0) or imaginary part (1)."""
    d = p.shape.d_regs
    return acc.slice((part * p.outputs + p.output(t0, t1)) * d, d)


def zero_accumulators(ctx: KernelContext, acc: VReg) -> Module:
    m = Module("zero the MFMA accumulators")
    op = "v_mov_b32" if acc.kind == "v" else "v_accvgpr_write_b32"
    for r in range(acc.count):
        m.add(ctx.inst(op, acc[r], 0))
    return m


def pack_operand(ctx: KernelContext, p: MfmaPlan, wide: VReg, tiles: int, name: str) -> tuple[Module, list]:
    """The MFMA operands of narrow inputs from the values read from LDS one register per value (a K-major
    tile), packed low K value first: fp16/bf16 read as 16-bit values (ds_read_u16, zero-extended) two per
    register (v_lshl_or_b32); 8-bit values (int8, fp8, bf8) four per register
    from the bytes (ds_read_u8: two v_perm_b32 place bytes
    0,1 and 2,3, the others zero, an OR joins them).

    In place, as Tensile packs into its ValuA registers: tile t's operand is the first a_regs of its V value
    registers, register r packed from values r*P .. r*P+P-1 (P per register). r <= r*P, so each register is
    written after its own values are read and before no value still to be read: no registers of their own.
    Returns the packing and each tile's operand registers (``name`` names the packing)."""
    s = p.shape
    m = Module(f"pack {name}")
    per_reg = s.values_per_lane // s.a_regs
    if s.in_type in BYTE_IN_TYPES:
        low, high = ctx.sgpr("I8PackLow"), ctx.sgpr("I8PackHigh")
        lo_pair, hi_pair = ctx.vgpr("I8PackLo"), ctx.vgpr("I8PackHi")
        m.add(ctx.inst("s_mov_b32", low, 0x0C0C0400, comment="byte 0 of the second source, of the first, zeros"),
              ctx.inst("s_mov_b32", high, 0x04000C0C, comment="zeros, then the same pair in bytes 2, 3"))
    elif s.in_type not in ("f16", "bf16"):
        raise ValueError(f"no packing for MFMA input type {s.in_type}")
    for t in range(tiles):
        base = t * s.values_per_lane
        for r in range(s.a_regs):
            first = base + r * per_reg
            v = [wide[first + j] for j in range(per_reg)]
            dst = wide[base + r]
            if s.in_type in BYTE_IN_TYPES:
                m.add(ctx.inst("v_perm_b32", lo_pair, v[1], v[0], low),
                      ctx.inst("v_perm_b32", hi_pair, v[3], v[2], high),
                      ctx.inst("v_or_b32", dst, lo_pair, hi_pair))
            else:
                m.add(ctx.inst("v_lshl_or_b32", dst, v[1], 16, v[0], comment="two halves, low K first"))
    return m, [wide.slice(t * s.values_per_lane, s.a_regs) for t in range(tiles)]


def pack_vector_operand(ctx: KernelContext, p: MfmaPlan, regs: VReg, tiles: int, vw: int, select: VReg,
                        name: str) -> tuple[Module, list]:
    """The MFMA operands of 16-bit inputs read VW outputs at a time (mfma_local_read.vector_reads): per group of
    VW outputs, value v's VW halves in VW/2 registers (output j of the group in half j % 2 of register j / 2).
    Output t's register r joins values 2r (low) and 2r+1 (high) of its half with one v_perm_b32 (``select``:
    the selectors of the low and of the high halves), as Tensile's LocalReadMFMA packs them. Each output's
    operand is a register range of its own (free once that output's MFMAs have read it)."""
    s = p.shape
    half = vw // 2
    group = s.values_per_lane * half
    align = ctx.arch.vgpr["tuple_alignment"] if s.a_regs > 1 else 1
    packed = [VReg("v", s.a_regs, f"{name}{t}", align=align) for t in range(tiles)]
    m = Module(f"pack {name}")
    for t in range(tiles):
        q, j = divmod(t, vw)
        for r in range(s.a_regs):
            lo = regs[q * group + 2 * r * half + j // 2]
            hi = regs[q * group + (2 * r + 1) * half + j // 2]
            m.add(ctx.inst("v_perm_b32", packed[t][r], hi, lo, select[j % 2],
                           comment=f"output {t}: K {2 * r}, {2 * r + 1}"))
    return m, [reg.all() for reg in packed]


def mfma_step(ctx: KernelContext, p: MfmaPlan, acc: VReg, values_a: VReg, values_b: VReg,
              widened: tuple[bool, bool] = (False, False)) -> Module:
    """One K-step as one Module: ``mfma_step_parts``' packing, then its MFMAs."""
    packs, mfmas = mfma_step_parts(ctx, p, acc, values_a, values_b, widened)
    return Module(mfmas.name).add(packs.items, mfmas.items) if packs.items else mfmas


def mfma_step_parts(ctx: KernelContext, p: MfmaPlan, acc: VReg, values_a: VReg, values_b: VReg,
                    widened: tuple[bool, bool] = (False, False), vector: tuple[int, int] = (1, 1),
                    select: VReg | None = None) -> tuple[Module, Module]:
    """One K-step: an MFMA per wave output, A's values of row t0 times B's of column t1 (an operand read one
    register per value, ``widened`` (A, B), is packed first: in place, or from reads of ``vector`` (A, B)
    outputs at a time with the v_perm_b32 selectors ``select``). An operand is a VReg of MIWaveTile operands, or a
    list of each tile's registers (read several K-steps at a time: mfma_local_read.operand_values)."""
    if p.parts == 2:
        from tensile_asm.writer.mfma_complex import complex_step
        return Module("no packing"), complex_step(ctx, p, acc, values_a, values_b)
    s = p.shape
    wt0, wt1 = p.wave_tile
    m = Module(f"MFMA {s.opcode} x {wt0}x{wt1}")
    packs = Module("pack the MFMA operands")
    if widened[0]:
        pack_a, values_a = (pack_vector_operand(ctx, p, values_a, wt0, vector[0], select, "MfmaPackedA")
                            if vector[0] > 1 else pack_operand(ctx, p, values_a, wt0, "MfmaPackedA"))
        packs.add(pack_a)
    if widened[1]:
        pack_b, values_b = (pack_vector_operand(ctx, p, values_b, wt1, vector[1], select, "MfmaPackedB")
                            if vector[1] > 1 else pack_operand(ctx, p, values_b, wt1, "MfmaPackedB"))
        packs.add(pack_b)
    swap = ctx.geometry.source_swap
    # the MFMAs of a packed operand's tile one after the other, so the next tile's packing is further from its
    # first MFMA than the VALU-write-to-MFMA-read wait states (no s_nop); else B's tiles outer
    if widened[0] and not widened[1]:
        order = [(t0, t1) for t0 in range(wt0) for t1 in range(wt1)]
    else:
        order = [(t0, t1) for t1 in range(wt1) for t0 in range(wt0)]
    for t0, t1 in order:
        out = output_acc(p, acc, t0, t1)
        a, b = _tile(values_a, t0, s.a_regs), _tile(values_b, t1, s.a_regs)
        # SourceSwap: B first, so the MFMA computes the output transposed (mfma_store.py)
        m.add(ctx.inst(s.opcode, out, *((b, a) if swap else (a, b)), out, mods=s.modifiers))
    return packs, m


def _tile(values, t: int, regs: int):
    """Tile ``t``'s operand registers: a slice of a VReg of MIWaveTile operands, or the list's entry."""
    return values[t] if isinstance(values, list) else values.slice(t * regs, regs)
