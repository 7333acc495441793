"""DirectToLds (Tensile's DirectToLdsA/B): an operand's global reads write LDS directly.

``buffer_load_dword ... lds`` gives no VGPR a value: lane t of the wave writes its dword to LDS byte
M0 + instruction offset + 4*t (the emulator's emulator/lds/dma.py; AMD's "Memory Buffer Load to LDS"). The
writer's thread-to-element assignment already puts a wave's 64 lanes on 64 consecutive elements of one row of
the K-major LDS tile when the operand's tile dimension is its unit-stride one (TLU), a load is one dword
(GlobalReadVectorWidth x element bytes = 4), the row of threads is whole waves, and the LDS rows are not padded
(Tensile drops LdsPad with DirectToLds, solution/layout.py). Each load's M0 is then lane 0's LDS address: the
wave's first load's, read once at setup (``v_readfirstlane_b32``) into one SGPR, plus the load's constant
distance from it (LSP rows and LSC elements per step) and the LDS buffer's offset. There are no local writes for the operand: the loop's barrier that ends a tile's writes waits for the
loads (the waitcnt pass counts an LDS-DMA load as an LDS write), and the loads of the next tile go to the other
LDS buffer (PrefetchGlobalRead 1), which every wave finished reading before the previous barrier; with one LDS
buffer (PrefetchGlobalRead 0, and the tail loop) they issue after the barrier that ends the reads. K past the
summation size (tail loop) and rows past the end of the matrix read 0 from the buffer's range check, as the
writer's other loads do, and that 0 is what LDS receives.
"""

from __future__ import annotations

from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import M0


def reason(g) -> str | None:
    """Why the writer cannot give this geometry's DirectToLds operands Tensile's meaning, or None."""
    from tensile_asm.writer.limits import fractional

    for op in "AB":
        if not g.direct_to_lds(op):
            continue
        what = f"DirectToLds{op}=True"
        tlu = g.tlu_a if op == "A" else g.tlu_b
        if g.derived.is_mfma:
            return (f"{what} with MatrixInstruction is not implemented (DirectToLds is written for VALU kernels "
                    f"only: the MFMA loop's schedule and LDS layouts are not adapted to it); use DirectToLds{op} 0")
        if not tlu:
            return (f"{what} with {op}'s summation index contiguous in memory is not implemented (consecutive lanes "
                    f"would write LDS a row apart, not 4 bytes); use DirectToLds{op} 0")
        if g.glvw(op) * g.in_bpe != 4 or g.lds_bpe != g.in_bpe:
            return (f"{what} with GlobalReadVectorWidth{op} {g.glvw(op)} of {g.in_bpe}-byte elements is not "
                    f"implemented (buffer_load_dword ... lds moves one dword per lane); use DirectToLds{op} 0")
        if g.valu_narrow_lds:
            return (f"{what} with 16-bit A/B kept 16-bit in LDS (their fp32 layout needs more than 64 KiB) is not "
                    f"implemented; use DirectToLds{op} 0")
        if not g.buffer_load:
            return f"{what} needs BufferLoad (buffer_load_dword ... lds); use DirectToLds{op} 0"
        if g.prefetch_global_read_depth > 1 or g.one_lds_buffer:
            return (f"{what} is implemented with PrefetchGlobalRead 0, or 1 with two LDS buffers (the loads "
                    f"write an LDS buffer no wave reads), not PrefetchGlobalRead {g.prefetch_global_read_depth} / "
                    f"1LDSBuffer; use DirectToLds{op} 0")
        if g.local_split_u > 1 or g.persistent_kernel:
            return f"{what} with LocalSplitU or PersistentKernel is not implemented; use DirectToLds{op} 0"
        lsc, _ = g.load_spacing(op)
        if g.wave_separate(op) or fractional(g, op) or (lsc // g.glvw(op)) % g.wavefront_size:
            return (f"{what}: a wave's lanes do not load consecutive elements of one LDS row (LSC {lsc}, "
                    f"WaveSeparateGlobalRead, FractionalLoad); use DirectToLds{op} 0")
        tile = g.lds_tile(op)
        if tile.unroll_major or tile.pad:
            return f"{what} with a padded or unroll-major LDS tile is not implemented; use DirectToLds{op} 0"
    return None


def setup(ctx, op) -> Module:
    """Lane 0's LDS address of the wave's first load, the base of every load's M0 (lanes follow at 4 bytes)."""
    return Module(f"DirectToLds {op.name}: the wave's LDS address for M0").add(
        ctx.inst("v_readfirstlane_b32", op.dma_base, op.lds_addresses[0]))


def load_distance(g, name: str, i: int) -> int:
    """Bytes from load 0's LDS address to load ``i``'s (the same lane): load (p, c) is p*LSP rows of the unpadded
    K-major tile and c*LSC elements further (global_read.tile_coordinates)."""
    lsc, lsp = g.load_spacing(name)
    p, c = divmod(i, g.num_loads_coalesced(name))
    return (p * lsp * g.lds_tile(name).macro_tile + c * lsc) * g.lds_bpe


def load(ctx, op, i: int, offset, buffer: int) -> Module:
    """Load ``i`` of ``op`` at byte ``offset`` of the matrix into LDS buffer ``buffer``."""
    g = ctx.geometry
    extra = load_distance(g, op.name, i) + g.lds_buffer_offset(buffer)
    return Module(f"{op.name} load {i} to LDS buffer {buffer}").add(
        ctx.inst("s_add_u32", M0, op.dma_base, extra) if extra else ctx.inst("s_mov_b32", M0, op.dma_base),
        ctx.inst("buffer_load_dword", offset, op.srd, 0, mods=["offen", "lds"]))
