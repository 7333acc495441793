"""LDS staging: write the loaded tiles, and read one K-slice of the thread tile per MAC step.

LDS layout of one buffer: A's tile as DepthU rows of MT0 elements, then B's as DepthU rows of MT1;
with PrefetchGlobalRead a second buffer follows. A thread's tile elements come in vectors of
VectorWidth, vectors SubGroup apart (Tensile's layout): thread (t0, t1) reads A[k][(v*SG0 + t0)*VW ..]
and B[k][(v*SG1 + t1)*VW ..]. LocalSplitU group s handles K values s*LoopUnroll .. (s+1)*LoopUnroll-1.
Buffer, K and vector offsets all become instruction offsets.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.isa.module import Module
from tensile_asm.isa.registers import EXEC, VReg
from tensile_asm.writer.context import KernelContext
from tensile_asm.writer.global_read import OperandTile
from tensile_asm.writer.lds_address import vector_offsets
from tensile_asm.writer.prologue import EntryRegisters

_READ = {1: "ds_read_b32", 2: "ds_read_b64", 3: "ds_read_b96", 4: "ds_read_b128"}
_WRITE = {1: "ds_write_b32", 2: "ds_write_b64", 3: "ds_write_b96", 4: "ds_write_b128"}


def _chunks(regs: int):
    """Split a run of registers into LDS accesses of at most 16 bytes: (first register, count)."""
    first = 0
    while first < regs:
        n = min(4, regs - first)
        yield first, n
        first += n


# LDS writes of 1 and 2 bytes (the low bits of the register)
_WRITE_BYTES = {1: "ds_write_b8", 2: "ds_write_b16"}


def _narrow_writes(ctx: KernelContext, op: OperandTile, addr, data, base: int, apart) -> Module:
    """8- and 16-bit elements (LDS holds I8, H and B at their own size with MFMA): a vector contiguous in LDS
    as one write of its bytes, else element j of the vector (bits (j % per)*8*bpe of register j / per, per
    elements a register) alone at its row's offset, shifted down first (ds_write_b8/b16 write the low bits)."""
    g = ctx.geometry
    bpe = g.lds_bpe
    per = 4 // bpe
    m = Module(f"local write {op.name}: {8 * bpe}-bit elements")
    if apart is None:
        nbytes = op.glvw * bpe
        if nbytes < 4:
            return m.add(ctx.inst(_WRITE_BYTES[nbytes], addr, data[0], mods=[("offset", base)] if base else ()))
        for first, n in _chunks(nbytes // 4):
            off = base + first * 4
            m.add(ctx.inst(_WRITE[n], addr, data.slice(first, n), mods=[("offset", off)] if off else ()))
        return m
    for j in range(op.glvw):
        off = base + apart[j] * bpe
        src = data[j // per]
        if j % per:
            shifted = ctx.vgpr(f"LocalWritePiece{op.name}{j % per}")
            m.add(ctx.inst("v_lshrrev_b32", shifted, (j % per) * 8 * bpe, src))
            src = shifted
        m.add(ctx.inst(_WRITE_BYTES[bpe], addr, src, mods=[("offset", off)] if off else ()))
    return m


def local_writes(ctx: KernelContext, op: OperandTile, buffer: int = 0) -> Module:
    g = ctx.geometry
    base = g.lds_buffer_offset(buffer)
    r = g.acc_regs
    if op.dma_base is not None:
        return Module(f"no local write {op.name}: its DirectToLds loads wrote LDS buffer {buffer}")
    m = Module(f"local write {op.name} (buffer {buffer})")
    # the vector runs along the tile dimension (TLU) or along K: contiguous in LDS where that is the LDS
    # tile's row direction (K-major / unroll-major), else one element per row (writer/lds_address.py)
    apart = vector_offsets(g.lds_tile(op.name), op.tlu, op.glvw)
    shifts = op.lds_offsets or [0] * len(op.lds_addresses)
    for addr, data, mask, shift in zip(op.lds_addresses, op.lds_data, op.write_masks, shifts):
        base = g.lds_buffer_offset(buffer) + shift    # the load's own offset from its (shared) address
        writes = Module("writes")
        if g.lds_bpe < 4:
            writes.add(_narrow_writes(ctx, op, addr, data, base, apart))
        elif apart is None:
            for first, n in _chunks(op.glvw * r):
                off = base + first * 4
                writes.add(ctx.inst(_WRITE[n], addr, data.slice(first, n), mods=[("offset", off)] if off else ()))
        else:
            for j in range(op.glvw):
                off = base + apart[j] * g.lds_bpe
                writes.add(ctx.inst(_WRITE[r], addr, data.slice(j * r, r), mods=[("offset", off)] if off else ()))
        if mask is None:
            m.add(writes)
            continue
        # FractionalLoad: only the lanes whose vector is in the tile write it
        saved = ctx.sgpr(f"SavedExecLocalWrite{op.name}", 2)
        m.add(ctx.inst("s_and_saveexec_b64", saved, mask), writes, ctx.inst("s_mov_b64", EXEC, saved))
    return m


@dataclass
class LocalReadState:
    address_a: VReg
    address_b: VReg
    values_a: list        # register sets (two with PrefetchLocalRead), ThreadTile0 registers each
    values_b: list
    raw_a: list | None = None   # 16-bit A/B kept 16-bit in LDS (Geometry.valu_narrow_lds): the values as read,
    raw_b: list | None = None   # per register set, widened into values_a/b by ``widen_reads``


def local_read_setup(ctx: KernelContext, regs: EntryRegisters) -> tuple[Module, LocalReadState]:
    g = ctx.geometry
    vw = g.vector_width
    bpe_shift = g.bytes_per_element.bit_length() - 1
    sets = g.local_read_sets
    r = g.acc_regs
    align = ctx.arch.vgpr["tuple_alignment"] if vw * r > 1 else 1
    state = LocalReadState(ctx.vgpr("LocalReadAddrA"), ctx.vgpr("LocalReadAddrB"),
                           [VReg("v", g.tt0 * r, f"ValuA_X{s}", align) for s in range(sets)],
                           [VReg("v", g.tt1 * r, f"ValuB_X{s}", align) for s in range(sets)])
    if g.valu_narrow_lds:
        state.raw_a, state.raw_b = ([VReg("v", _raw_regs(tt, vw), f"Valu{x}_Raw{s}", align) for s in range(sets)]
                                    for x, tt in (("A", g.tt0), ("B", g.tt1)))
    m = Module("local read addresses")
    m.add(ctx.inst("v_lshlrev_b32", state.address_a, bpe_shift + (vw.bit_length() - 1), regs.tid0),
          ctx.inst("v_lshlrev_b32", state.address_b, bpe_shift + (vw.bit_length() - 1), regs.tid1),
          ctx.inst("v_add_u32", state.address_b, g.lds_offset_b, state.address_b))
    if g.local_split_u > 1:
        for addr, mt in ((state.address_a, g.lds_row("A")), (state.address_b, g.lds_row("B"))):
            tmp = ctx.vgpr("SplitGroupOffset")
            m.add(ctx.inst("v_mul_u32_u24", tmp, g.loop_unroll * mt * g.bytes_per_element, regs.split_group),
                  ctx.inst("v_add_u32", addr, addr, tmp))
    return m, state


def _raw_regs(tt: int, vw: int) -> int:
    """Registers of one thread tile side's 16-bit values as read: a vector of VectorWidth values (2 a register),
    one register for a lone value (ds_read_u16)."""
    return tt if vw == 1 else tt // 2


_READ_16 = {1: "ds_read_u16", 2: "ds_read_b32", 4: "ds_read_b64", 8: "ds_read_b128"}


def local_reads(ctx: KernelContext, state: LocalReadState, u: int, buffer: int = 0, regset: int = 0) -> Module:
    """Read the thread tile's A and B values of K-slice ``u`` (of this group's LoopUnroll)."""
    g = ctx.geometry
    if g.valu_narrow_lds:
        return _narrow_reads(ctx, state, u, buffer, regset)
    bpe, vw, r = g.lds_bpe, g.vector_width, g.acc_regs
    base = g.lds_buffer_offset(buffer)
    m = Module(f"local read k={u}")
    for values, addr, mt, sg, tt in ((state.values_a[regset], state.address_a, g.lds_row("A"), g.wg0, g.tt0),
                                     (state.values_b[regset], state.address_b, g.lds_row("B"), g.wg1, g.tt1)):
        for v in range(tt // vw):
            for first, n in _chunks(vw * r):
                off = base + (u * mt + v * sg * vw) * bpe + first * 4
                m.add(ctx.inst(_READ[n], values.slice(v * vw * r + first, n), addr, mods=[("offset", off)] if off else ()))
    return m




def _narrow_reads(ctx: KernelContext, state: LocalReadState, u: int, buffer: int, regset: int) -> Module:
    """16-bit A/B in LDS: each vector of VectorWidth values in one read of its 2 x VectorWidth bytes."""
    g = ctx.geometry
    vw, base = g.vector_width, g.lds_buffer_offset(buffer)
    m = Module(f"local read k={u} (16-bit)")
    per = 1 if vw == 1 else vw // 2          # registers per vector
    for raw, addr, mt, sg, tt in ((state.raw_a[regset], state.address_a, g.lds_row("A"), g.wg0, g.tt0),
                                  (state.raw_b[regset], state.address_b, g.lds_row("B"), g.wg1, g.tt1)):
        for v in range(tt // vw):
            off = base + (u * mt + v * sg * vw) * 2
            m.add(ctx.inst(_READ_16[vw], raw.slice(v * per, per), addr, mods=[("offset", off)] if off else ()))
    return m


def widen_reads(ctx: KernelContext, state: LocalReadState, regset: int) -> Module:
    """The 16-bit values of register set ``regset`` as fp32 in ``values_a/b`` (before the FMAs that use them):
    fp16 by v_cvt_f32_f16 (the upper half shifted down first), bf16 by moving it to the upper half of a zero
    fp32 (shift left 16, or masking off the lower half)."""
    g = ctx.geometry
    m = Module("widen the 16-bit values to fp32")
    vw = g.vector_width
    for raw, values, tt in ((state.raw_a[regset], state.values_a[regset], g.tt0),
                            (state.raw_b[regset], state.values_b[regset], g.tt1)):
        for e in range(tt):
            src, upper = (raw[e], False) if vw == 1 else (raw[e // 2], bool(e % 2))
            if g.data_type == "B":
                m.add(ctx.inst("v_and_b32", values[e], 0xFFFF0000, src) if upper
                      else ctx.inst("v_lshlrev_b32", values[e], 16, src))
                continue
            if upper:
                m.add(ctx.inst("v_lshrrev_b32", values[e], 16, src))
                src = values[e]
            m.add(ctx.inst("v_cvt_f32_f16", values[e], src))
    return m
