"""The KernelWriter: compose the components into one kernel, allocate registers, render text.

Summation loop without PrefetchGlobalRead: global loads of A and B; move the descriptors along K;
barrier (everyone is done reading the previous tile); write LDS; barrier; then the MAC steps. With PrefetchGlobalRead the tile of iteration i+1 is loaded while iteration i computes, into
the other of two LDS buffers; the loop is unrolled twice so buffer offsets stay immediates, and the
last iteration (no more loads) runs from a copy of the body without global reads. The MAC steps read
K-slice u+1 from LDS while computing slice u with PrefetchLocalRead. The tail loop runs once more
with K-guarded loads into buffer 0 when K is not a multiple of DepthU. The components only state what
they load and use: the waitcnt pass (isa/waitcnt_pass.py) places every s_waitcnt when the kernel is
finished (before a use of a loaded register, and for the LDS writes before a barrier).
The steps that compute the tile from LDS are VALU FMAs (local_memory.py, mac.py) or, for MatrixInstruction
solutions, MFMAs (mfma.py, mfma_local_read.py, mfma_store.py); the loop around them is the same.
"""

from __future__ import annotations

import dataclasses
import gc
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from tensile_asm.isa.allocation import allocate, spare_registers
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.kernel_passes import finish_code
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import Reg
from tensile_asm.writer import (direct_to_vgpr, global_read, local_memory, mac, mfma, mfma_local_read, mfma_store,
                                signature, split_u, stagger, store)
from tensile_asm.gemm.arguments import Argument, argument_layout, preload_dwords
from tensile_asm.writer.batch_address import load_batch_pointers
from tensile_asm.writer.context import Geometry, KernelContext
from tensile_asm.writer.limits import geometry_reason
from tensile_asm.writer.prologue import (check_preload_header, entry_registers, load_arguments, preload_header,
                                         thread_coordinates, workgroup_mapping)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector meanwhile (re-enabled after, if it was on). Writing or
    rendering a kernel allocates a few hundred thousand objects that reference counting frees (no cycles):
    the collector would walk every live one again and again meanwhile (~15 % of the CPU time of a kernel,
    bench/codegen_cpu_time.md)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


@dataclass
class Kernel:
    name: str
    arch: Arch
    geometry: Geometry | None  # None for the elementwise helper kernels
    layout: list[Argument]
    resources: signature.Resources
    module: Module
    assignment: dict

    def __post_init__(self):
        # s_waitcnt wherever a pending memory operation must be complete (waitcnt_pass.py), then
        # hazard-free by construction: s_nop wherever isa/<arch>.yaml `hazards` asks (both idempotent).
        # Last, a branch beyond its 16-bit offset becomes the long form, through an SGPR pair past the
        # allocated. finish_code runs the three passes over one flattened stream.
        finish_code(self.module, self.arch, self.assignment, self._spare_sgpr_pair)

    def _spare_sgpr_pair(self) -> Reg:
        base = spare_registers(self.resources.sgprs, 2, 2, self.arch.sgpr["max_user"], "s", f"kernel {self.name}")
        self.resources = dataclasses.replace(self.resources, sgprs=base + 2)
        return Reg("s", base, 2)

    def body_text(self) -> str:
        """Function text without metadata (for linking several kernels with one metadata note)."""
        with collector_paused():
            body = self.module.render(self.assignment)
        return (signature.header(self.arch) + signature.function_open(self.name) + body
                + signature.function_close(self.name)
                + signature.descriptor(self.arch, self.name, self.resources, self.layout))

    def metadata(self) -> dict:
        return signature.kernel_metadata(self.arch, self.name, self.resources, self.layout)

    def text(self) -> str:
        """A complete, standalone assembly file for this kernel."""
        return self.body_text() + signature.metadata_block(self.arch, [self.metadata()])

    def occupancy(self) -> dict:
        r = self.resources
        return self.arch.occupancy(r.vgprs, r.agprs, r.sgprs, r.lds_bytes, r.workgroup_size)


@dataclass
class _Math:
    """What computes the tile from LDS, VALU FMAs (mac.py, local_memory.py) or MFMAs (mfma*.py):
    ``reads(state, step, buffer, regset)`` and ``step(acc, state, regset)`` for each of the
    ``Geometry.math_steps`` steps, the accumulators and how the store finds their C elements."""

    setup: Callable      # (ctx, regs) -> (Module, read state)
    reads: Callable      # (ctx, state, step, buffer, regset) -> Module
    step: Callable       # (ctx, acc, state, regset) -> Module
    accumulators: Callable   # (ctx) -> VReg
    zero: Callable       # (ctx, acc) -> Module
    columns: Callable | None  # for store.store_tile (None: the VALU thread tile)
    dtv_sets: dict | None = None   # DirectToVgprA: LDS buffer index -> the A register set (direct_to_vgpr.py)
    # MFMA: ``step`` as (its operands' packing, its MFMAs), so the packing can precede a later step's reads
    step_parts: Callable | None = None


def _valu_math() -> _Math:
    return _Math(local_memory.local_read_setup, local_memory.local_reads,
                 lambda ctx, acc, state, regset=0, step=0, buffer=0: mac.mac_step(ctx, acc, state, regset),
                 mac.accumulators, mac.zero_accumulators, None)


def _mfma_math(ctx: KernelContext) -> _Math:
    p = mfma.plan(ctx)
    dtv_sets: dict = {}

    def values_a(state, regset, step, buffer):
        """(packing, A's operand of this K-step). DirectToVgprA: the global reads of this buffer's tile are the
        operand (16-bit types packed from them first: direct_to_vgpr.step_operand)."""
        if direct_to_vgpr.dtv(ctx.geometry, "A"):
            return direct_to_vgpr.step_operand(ctx, p, dtv_sets[buffer], step)
        return Module("no packing"), mfma_local_read.operand_values(ctx.geometry, p, state, 0, regset, step)

    def step_parts(ctx, acc, state, regset=0, step=0, buffer=0):
        pack_a, a = values_a(state, regset, step, buffer)
        packs, mfmas = mfma.mfma_step_parts(
            ctx, p, acc, a, mfma_local_read.operand_values(ctx.geometry, p, state, 1, regset, step),
            (mfma_local_read.widened(ctx.geometry, 0), mfma_local_read.widened(ctx.geometry, 1)),
            (mfma_local_read.vector_reads(ctx.geometry, p, 0), mfma_local_read.vector_reads(ctx.geometry, p, 1)),
            state.pack_select)
        if pack_a.items:
            packs = Module(packs.name).add(pack_a.items, packs.items)
        return packs, mfmas

    def step(ctx, acc, state, regset=0, step=0, buffer=0):
        packs, mfmas = step_parts(ctx, acc, state, regset, step, buffer)
        return Module(mfmas.name).add(packs.items, mfmas.items) if packs.items else mfmas

    return _Math(
        lambda ctx, regs: mfma_local_read.local_read_setup(ctx, regs, p),
        lambda ctx, state, u, buffer=0, regset=0: mfma_local_read.local_reads(ctx, p, state, u, buffer, regset),
        step,
        lambda ctx: mfma.accumulators(ctx, p),
        mfma.zero_accumulators,
        lambda ctx, regs, acc: (split_u.mfma_columns if ctx.geometry.local_split_u > 1 else mfma_store.columns)(
            ctx, regs, acc, p),
        dtv_sets, step_parts)


@dataclass
class _Parts:
    ctx: KernelContext
    regs: object
    a: global_read.OperandTile
    b: global_read.OperandTile
    acc: object
    lr: object
    math: _Math
    stagger: stagger.StaggerState | None = None
    tail_fix: dict | None = None    # operand -> SGPR: bytes the offsets move before the tail loop
    chunks: object = None           # SGPR: K / DepthU


def _mac_steps(p: _Parts, buffer: int) -> Module:
    """The steps of (LDS reads, FMAs or MFMAs) of one unrolled iteration, on one LDS buffer.

    With PrefetchLocalRead P the reads of slice u+P are issued before slice u is computed, into a
    register set of their own, so they are in flight while slice u computes (the waitcnt pass waits
    for slice u's reads only)."""
    ctx, g = p.ctx, p.ctx.geometry
    if g.is_mfma:   # every set is read before it is used here: registers of this pass's own
        p = dataclasses.replace(p, lr=p.lr.fresh())
    else:           # the same registers in every pass on this buffer: written once, repeated (InstructionSet.repeat)
        key = ("mac_steps", buffer, id(p.lr), p.acc)
        done = ctx.written.get(key)
        if done is not None:
            return ctx.isa.repeat(done)
        m = ctx.written[key] = _mac_steps_of(p, buffer)
        return m
    return _mac_steps_of(p, buffer)


def _mac_steps_of(p: _Parts, buffer: int) -> Module:
    ctx, g = p.ctx, p.ctx.geometry
    m = Module(f"MAC steps on LDS buffer {buffer}")
    steps, sets = g.math_steps, g.local_read_sets
    ahead = sets - 1
    for u in range(min(ahead, steps)):
        m.add(p.math.reads(ctx, p.lr, u, buffer, regset=u % sets))
    for u in range(steps):
        reads = p.math.reads(ctx, p.lr, u + ahead, buffer, regset=(u + ahead) % sets) if u + ahead < steps else None
        if p.math.step_parts is not None and ahead:
            # MFMA: the packing of step u's operands (from reads already issued) before step u+P's reads, so the
            # scheduler can move it further ahead of its MFMAs than the reads (writer/mfma_schedule.py)
            packs, mfmas = p.math.step_parts(ctx, p.acc, p.lr, regset=u % sets, step=u, buffer=buffer)
            m.add(packs.items, reads, mfmas)
            continue
        m.add(reads, p.math.step(ctx, p.acc, p.lr, regset=u % sets, step=u, buffer=buffer))
    return m


def _scheduled(p: _Parts, early: list, region: list, late: list) -> Module | list:
    """A main-loop iteration's straight-line part, in this order: the next tile's global reads ``early``,
    the MAC steps ``region``, the next tile's LDS writes ``late``; for MFMA kernels the memory work is
    spread between the MFMAs (writer/mfma_schedule.py), VALU kernels keep it as written."""
    if not p.ctx.geometry.is_mfma:
        return [early, region, late]
    from tensile_asm.writer.mfma_schedule import interleave
    return interleave(region, p.ctx.arch, late, early, name="loop iteration, memory work between the MFMAs")


def _advance(p: _Parts) -> Module:
    if p.stagger is not None:
        return stagger.advance(p.ctx, [p.a, p.b], p.stagger)
    return Module("advance descriptors").add(global_read.advance(p.ctx, p.a), global_read.advance(p.ctx, p.b))


def _advance_split(p: _Parts, later: list) -> tuple[Module, Module]:
    """The advance along K, the moves of the operands ``later`` apart (issued after those operands' loads)."""
    if p.stagger is not None:
        return stagger.advance_split(p.ctx, [p.a, p.b], p.stagger, later)
    late = {op.name for op in later}
    return (Module("advance descriptors").add([global_read.advance(p.ctx, op) for op in (p.a, p.b)
                                               if op.name not in late]),
            Module("advance descriptors").add([global_read.advance(p.ctx, op) for op in (p.a, p.b) if op.name in late]))


def _lds_operands(p: _Parts, a, b) -> list:
    """The operands (of a load set) that go through LDS: not the DirectToVgpr ones."""
    return [op for op in (a, b) if direct_to_vgpr.through_lds(p.ctx.geometry, op.name)]


def _write_tile(p: _Parts, buffer: int) -> Module:
    ops = _lds_operands(p, p.a, p.b)
    return Module("global reads to LDS").add(
        [global_read.widen(p.ctx, op) for op in ops], [local_memory.local_writes(p.ctx, op, buffer) for op in ops],
        p.ctx.inst("s_barrier", comment="tile visible to all waves (the pass waits for the local writes)"))


def _loop_single_buffer(p: _Parts, counter, k_size) -> Module:
    ctx, g = p.ctx, p.ctx.geometry
    begin, end = ctx.label("LoopBeginL"), ctx.label("LoopEndL")
    loads = [global_read.loads(ctx, p.a), global_read.loads(ctx, p.b), _advance(p)]
    done_reading = ctx.inst("s_barrier", comment="all waves done reading the previous tile")
    # DirectToLds loads write the one LDS buffer as they land: only once every wave is done reading it
    dtl = g.direct_to_lds("A") or g.direct_to_lds("B")
    return Module("summation loop").add(
        ctx.inst("s_cmp_eq_u32", counter, 0),
        ctx.inst("s_cbranch_scc1", end),
        LabelDef(begin.name),
        [done_reading, loads] if dtl else [loads, done_reading],
        _write_tile(p, 0),
        _mac_steps(p, 0),
        ctx.inst("s_sub_u32", counter, counter, 1),
        ctx.inst("s_cmp_eq_u32", counter, 0),
        ctx.inst("s_cbranch_scc0", begin),
        LabelDef(end.name))


def _loop_prefetch(p: _Parts, counter, k_size) -> Module:
    """PrefetchGlobalRead: two LDS buffers, the loop unrolled twice, no-load copies for the last step."""
    ctx = p.ctx
    begin, end = ctx.label("LoopBeginL"), ctx.label("LoopEndL")
    last = [ctx.label("LastIterationBuffer0"), ctx.label("LastIterationBuffer1")]
    m = Module("summation loop (PrefetchGlobalRead)")
    m.add(ctx.inst("s_cmp_eq_u32", counter, 0),
          ctx.inst("s_cbranch_scc1", end),
          global_read.loads(ctx, p.a), global_read.loads(ctx, p.b), _advance(p),
          _write_tile(p, 0),
          ctx.inst("s_sub_u32", counter, counter, 1, comment="iterations that still load"),
          ctx.inst("s_cmp_eq_u32", counter, 0),
          ctx.inst("s_cbranch_scc1", last[0]),
          LabelDef(begin.name))
    one_buffer = ctx.geometry.one_lds_buffer
    for buf in (0, 1):
        # DirectToVgprA: the next tile's A goes to the register set of the other buffer index
        a = p.a2 if direct_to_vgpr.dtv(ctx.geometry, "A") and buf == 0 else p.a
        m.add(_scheduled(p, [global_read.loads(ctx, a, buffer=1 - buf), global_read.loads(ctx, p.b, buffer=1 - buf),
                             _advance(p)],
                         [_mac_steps(p, buf)],
                         [ctx.inst("s_barrier", comment="1LDSBuffer: all waves done reading before it is overwritten")
                          if one_buffer else None,
                          _write_tile(p, 1 - buf)]),
              ctx.inst("s_sub_u32", counter, counter, 1),
              ctx.inst("s_cmp_eq_u32", counter, 0),
              ctx.inst("s_cbranch_scc1", last[1 - buf]))
    m.add(ctx.inst("s_branch", begin),
          LabelDef(last[0].name), _mac_steps(p, 0), ctx.inst("s_branch", end),
          LabelDef(last[1].name), _mac_steps(p, 1),
          LabelDef(end.name))
    return m


def _loop_prefetch2(p: _Parts, counter, k_size) -> Module:
    """PrefetchGlobalRead 2, as Tensile's: while tile i computes from one LDS buffer, tile i+1 (loaded into the
    load VGPRs one iteration earlier) is written to the other buffer, and behind those local writes (a local write
    has read its registers when it issues) tile i+2 is loaded into the same VGPRs: one set of load registers, as
    Tensile's "global read right after the corresponding local write". The loop is unrolled twice; the last two
    tiles run from copies without loads. With 1LDSBuffer tile i+1 can go to LDS only once every wave has read
    tile i: the writes, and the loads behind them, close the iteration."""
    ctx = p.ctx
    begin, end = ctx.label("LoopBeginL"), ctx.label("LoopEndL")
    last = ctx.label("LastIteration")
    no_load = [ctx.label("NoLoadBuffer0"), ctx.label("NoLoadBuffer1")]
    one_buffer = ctx.geometry.one_lds_buffer

    direct = direct_to_vgpr.dtv(ctx.geometry, "A")
    a_sets = [p.a, p.a2] if direct else [p.a]

    def loads(s=0):
        """The next tile's loads (DirectToVgprA: A into its register set ``s``)."""
        return [global_read.loads(ctx, a_sets[s]), global_read.loads(ctx, p.b), _advance(p)]

    def writes(buf):
        ops = _lds_operands(p, p.a, p.b)
        return Module(f"global reads to LDS buffer {buf}").add(
            ctx.inst("s_barrier", comment="1LDSBuffer: all waves done reading before it is overwritten")
            if one_buffer else None,
            [global_read.widen(ctx, op) for op in ops], [local_memory.local_writes(ctx, op, buf) for op in ops])

    def visible():
        return ctx.inst("s_barrier", comment="tile visible to all waves (the pass waits for the local writes)")

    def direct_iteration(buf):
        """DirectToVgprA: A's register set buf holds tile i's MFMA operands; tile i+2 refills it after them."""
        early_move, late_move = _advance_split(p, [p.a])
        b_loads = [global_read.loads(ctx, p.b), early_move]
        a_loads = [global_read.loads(ctx, a_sets[buf]), late_move]
        if one_buffer:
            return _scheduled(p, [], [_mac_steps(p, buf)], [writes(1 - buf), b_loads, visible(), a_loads])
        return _scheduled(p, [writes(1 - buf), b_loads], [_mac_steps(p, buf)], [visible(), a_loads])

    def count_down(target):
        return [ctx.inst("s_sub_u32", counter, counter, 1),
                ctx.inst("s_cmp_eq_u32", counter, 0),
                ctx.inst("s_cbranch_scc1", target)]

    m = Module("summation loop (PrefetchGlobalRead 2)")
    m.add(ctx.inst("s_cmp_eq_u32", counter, 0),
          ctx.inst("s_cbranch_scc1", end),
          loads(), writes(0), visible(),
          count_down(last),
          loads(1 if direct else 0),
          count_down(no_load[0]),
          LabelDef(begin.name))
    for buf in (0, 1):
        # LDS buffer buf holds tile i, the load VGPRs tile i+1: to LDS buffer 1-buf, then tile i+2 into them
        if direct:
            m.add(direct_iteration(buf))
        elif one_buffer:
            m.add(_scheduled(p, [], [_mac_steps(p, buf)], [writes(1 - buf), loads(), visible()]))
        else:
            m.add(_scheduled(p, [writes(1 - buf), loads()], [_mac_steps(p, buf)], [visible()]))
        m.add(count_down(no_load[1 - buf]))
    m.add(ctx.inst("s_branch", begin))
    for buf in (0, 1):
        # no tile left to load: compute buffer buf, write the tile in the VGPRs to buffer 1-buf, compute it
        m.add(LabelDef(no_load[buf].name), _mac_steps(p, buf), writes(1 - buf), visible(), _mac_steps(p, 1 - buf),
              ctx.inst("s_branch", end))
    m.add(LabelDef(last.name), _mac_steps(p, 0), LabelDef(end.name))
    return m


def _tail(p: _Parts, k_size) -> Module:
    ctx, g = p.ctx, p.ctx.geometry
    k_rem, tail_end = ctx.sgpr("TailSizeL"), ctx.label("TailLoopEndL")
    m = Module("tail loop")
    if g.global_split_u > 1:
        m.add(ctx.inst("s_cmp_lg_u32", p.regs.gsu_index, 0, comment="GlobalSplitU slice 0 sums the tail"),
              ctx.inst("s_cbranch_scc1", tail_end))
    m.add(_k_remainder(ctx, k_rem, k_size, p.chunks),
          ctx.inst("s_cmp_eq_u32", k_rem, 0),
          ctx.inst("s_cbranch_scc1", tail_end))
    if p.tail_fix is not None:
        m.add([global_read.move(ctx, op, p.tail_fix[op.name]) for op in (p.a, p.b)])
    done_reading = ctx.inst("s_barrier", comment="all waves done reading LDS")
    if g.direct_to_lds("A") or g.direct_to_lds("B"):      # those loads write LDS buffer 0 as they land
        m.add(done_reading, global_read.guarded_loads(ctx, p.a, p.regs, k_rem),
              global_read.guarded_loads(ctx, p.b, p.regs, k_rem))
    else:
        m.add(global_read.guarded_loads(ctx, p.a, p.regs, k_rem), global_read.guarded_loads(ctx, p.b, p.regs, k_rem),
              done_reading)
    m.add(_write_tile(p, 0), _mac_steps(p, 0), LabelDef(tail_end.name))
    return m


def _split_k(p: _Parts, chunks, counter) -> Module:
    """Iterations of this work-group: all DepthU steps, or with GlobalSplitU G the steps s, s+G, ...
    of slice s, whose loads then start s steps in."""
    ctx, g = p.ctx, p.ctx.geometry
    gsu = g.global_split_u
    if gsu == 1:
        return Module("iterations").add(ctx.inst("s_mov_b32", counter, chunks))
    from tensile_asm.writer.divide import scalar_divmod
    m = Module(f"GlobalSplitU {gsu}: this slice's iterations")
    left, rem, start = ctx.sgpr("StepsFromSlice"), ctx.sgpr("GsuRemainder"), ctx.sgpr("SliceStartBytes")
    m.add(ctx.inst("s_sub_u32", left, chunks, p.regs.gsu_index),
          ctx.inst("s_cselect_b32", left, 0, left, comment="borrow: no step for this slice"),
          ctx.inst("s_add_u32", left, left, gsu - 1),
          scalar_divmod(ctx, counter, rem, left, gsu))
    for op in (p.a, p.b):
        m.add(ctx.inst("s_mul_i32", start, p.regs.gsu_index, op.chunk_bytes), global_read.move(ctx, op, start))
    return m


def _tail_position(p: _Parts, chunks, counter) -> Module:
    """Where the loads are after the loop, and the move to the tail's step (after all full steps).

    After the loop the offsets are at step s + L*G (slice s of G, L iterations), or back at the
    staggered start s + stagger*G when StaggerU wrapped them; the tail loop needs step ``chunks``."""
    ctx, g = p.ctx, p.ctx.geometry
    if g.global_split_u == 1 and p.stagger is None:
        return Module("tail position: offsets already there")
    m = Module("tail position")
    end = ctx.sgpr("StepsAfterLoop")
    iterations = p.stagger.iterations if p.stagger is not None else counter
    m.add(ctx.inst("s_mul_i32", end, iterations, g.global_split_u))
    if g.global_split_u > 1:
        m.add(ctx.inst("s_add_u32", end, end, p.regs.gsu_index))
    m.add(ctx.inst("s_sub_u32", end, chunks, end, comment="steps from there to the tail (may wrap: offsets are mod 2^32)"))
    p.tail_fix = {}
    for op in (p.a, p.b):
        fix = ctx.sgpr(f"TailFix{op.name}")
        m.add(ctx.inst("s_mul_i32", fix, end, op.chunk_bytes))
        p.tail_fix[op.name] = fix
    return m


def _k_chunks(ctx: KernelContext, chunks, k_size) -> Module:
    """chunks = K / DepthU for every 32-bit K: a shift by DepthU's power of two, then (DepthU not a power
    of two) unsigned division of the shifted K by the odd part with Hacker's Delight's magicu
    (``gemm.arguments.magic_number_alg2``): q = mulhi(x, M) >> s, or with the add indicator
    q = (((x - mulhi(x, M)) >> 1) + mulhi(x, M)) >> (s - 1)."""
    from tensile_asm.gemm.arguments import magic_number_alg2
    du = ctx.geometry.depth_u
    two = (du & -du).bit_length() - 1
    odd = du >> two
    m = Module(f"K / DepthU={du}").add(ctx.inst("s_lshr_b32", chunks, k_size, two) if two else
                                       ctx.inst("s_mov_b32", chunks, k_size))
    if odd == 1:
        return m
    magic, shift = magic_number_alg2(odd)
    add, shift = shift >> 31, shift & 0x7FFFFFFF
    if not add:
        return m.add(ctx.inst("s_mul_hi_u32", chunks, chunks, magic),
                     ctx.inst("s_lshr_b32", chunks, chunks, shift) if shift else None)
    high = ctx.sgpr("DepthUMulHi")
    return m.add(ctx.inst("s_mul_hi_u32", high, chunks, magic),
                 ctx.inst("s_sub_u32", chunks, chunks, high),
                 ctx.inst("s_lshr_b32", chunks, chunks, 1),
                 ctx.inst("s_add_u32", chunks, chunks, high),
                 ctx.inst("s_lshr_b32", chunks, chunks, shift - 1) if shift > 1 else None)


def _k_remainder(ctx: KernelContext, k_rem, k_size, chunks) -> Module:
    """k_rem = K % DepthU (K - chunks * DepthU)."""
    du = ctx.geometry.depth_u
    if du & (du - 1) == 0:
        return Module("K % DepthU").add(ctx.inst("s_and_b32", k_rem, k_size, du - 1))
    return Module("K % DepthU").add(ctx.inst("s_mul_i32", k_rem, chunks, du),
                                    ctx.inst("s_sub_u32", k_rem, k_size, k_rem))


def _magic_divide(ctx: KernelContext, quotient, dividend, magic, shift_abit, tmp) -> Module:
    """quotient = dividend / d by the host's magic pair for d (``gemm.arguments.magic_number_alg2``, Tensile's
    sMagicDivAlg2): (mulhi(x, magic) + x * abit) >> shift, abit in bit 31 of the shift argument."""
    return Module("magic division").add(
        ctx.inst("s_mul_hi_u32", tmp[0], dividend, magic),
        ctx.inst("s_lshr_b32", tmp[1], shift_abit, 31, comment="abit"),
        ctx.inst("s_mul_i32", quotient, dividend, tmp[1]),
        ctx.inst("s_add_u32", quotient, quotient, tmp[0]),
        ctx.inst("s_and_b32", tmp[1], shift_abit, 0x7FFFFFFF, comment="shift"),
        ctx.inst("s_lshr_b32", quotient, quotient, tmp[1]))


def _persistent_begin(ctx: KernelContext, regs) -> tuple[Module, object, object]:
    """PersistentKernel (Tensile's meaning): work-group x starts at tile serial x and steps by the grid's
    work-groups (GridNumWorkGroups0) until the serial passes the tiles (NumWorkGroups0 * NumWorkGroups1,
    times NumWorkGroups2 along the batch); each tile's work-group ids come from its serial (wg0 = serial
    % NumWorkGroups0, wg1 = serial / NumWorkGroups0; along the batch, wg2 = serial / (tiles of one batch)).
    Returns the loop head, the entry registers with those ids in place of the hardware's, and the end
    label. The head's barrier keeps a tile's LDS writes after every wave's reads of the previous tile."""
    g = ctx.geometry
    arg = regs.arg
    along = g.persistent_kernel_along_batch
    serial, tiles = ctx.sgpr("SerialWorkGroupIter"), ctx.sgpr("PersistentTiles")
    ids = [ctx.sgpr("PersistentWorkGroup0"), ctx.sgpr("PersistentWorkGroup1"),
           ctx.sgpr("PersistentWorkGroup2") if along else (regs.workgroup[2] if g.batched else None)]
    begin, end = ctx.label("PersistentLoopBegin"), ctx.label("PersistentLoopEnd")
    tmp, ij = ctx.sgpr("PersistentTmp", 2), ctx.sgpr("PersistentTileIJ")
    m = Module(f"PersistentKernel {g.persistent_kernel}: loop over tiles")
    m.add(ctx.inst("s_mov_b32", serial, regs.workgroup[0], comment="first tile: this work-group's id"),
          ctx.inst("s_mul_i32", tiles, arg("NumWorkGroups0"), arg("NumWorkGroups1")))
    if along:
        m.add(ctx.inst("s_mul_i32", tiles, tiles, arg("NumWorkGroups2")))
    m.add(LabelDef(begin.name),
          ctx.inst("s_cmp_ge_u32", serial, tiles),
          ctx.inst("s_cbranch_scc1", end),
          ctx.inst("s_barrier", comment="every wave done with the previous tile's LDS"))
    if along:
        m.add(_magic_divide(ctx, ids[2], serial, arg("MagicNumProblemNumGroupTiles0By1"),
                            arg("MagicShiftProblemNumGroupTiles0By1"), tmp),
              ctx.inst("s_mul_i32", ij, ids[2], arg("NumWorkGroups0")),
              ctx.inst("s_mul_i32", ij, ij, arg("NumWorkGroups1")),
              ctx.inst("s_sub_u32", ij, serial, ij, comment="serial % tiles of one batch"))
    else:
        m.add(ctx.inst("s_mov_b32", ij, serial))
    m.add(_magic_divide(ctx, ids[1], ij, arg("MagicNumberProblemNumGroupTiles0"),
                        arg("MagicShiftProblemNumGroupTiles0"), tmp),
          ctx.inst("s_mul_i32", ids[0], ids[1], arg("NumWorkGroups0")),
          ctx.inst("s_sub_u32", ids[0], ij, ids[0], comment="wg0 = serial % NumWorkGroups0"),
          ctx.inst("s_add_u32", serial, serial, arg("GridNumWorkGroups0"), comment="this work-group's next tile"))
    return m, dataclasses.replace(regs, workgroup=ids[:3 if g.batched else 2]), (begin, end)


def write_kernel(geometry: Geometry, arch: Arch, name: str) -> Kernel:
    reason = geometry_reason(geometry)
    if reason:
        raise ValueError(f"kernel {name}: {reason}")
    ctx = KernelContext(arch, geometry, name)
    g = geometry
    layout = argument_layout(g.batched, g.use_beta, g.compute_type, stagger_u=g.stagger_u > 0,
                             workgroup_mapping=abs(g.workgroup_mapping) > 1, persistent=g.persistent_kernel != 0,
                             persistent_along_batch=g.persistent_kernel_along_batch, pointer_array=g.pointer_array,
                             initial_strides_ab=g.initial_strides_ab, initial_strides_cd=g.initial_strides_cd,
                             preload=g.preload_kernargs)
    preload = preload_dwords(layout) if g.preload_kernargs else 0
    regs, arg_block = entry_registers(ctx, layout, g.batched, preload)
    body = Module(name)
    if preload:
        body.add(preload_header(ctx, regs))
    body.add(load_arguments(ctx, regs, arg_block), load_batch_pointers(ctx, regs), thread_coordinates(ctx, regs),
             ctx.inst("v_mov_b32", ctx.oob_offset, global_read.BUFFER_OOB, comment="out-of-range buffer offset"))
    persistent = None
    if g.persistent_kernel:
        head, regs, persistent = _persistent_begin(ctx, regs)
        body.add(head)
    body.add(workgroup_mapping(ctx, regs))
    math = _mfma_math(ctx) if g.is_mfma else _valu_math()
    lr_mod, lr_state = math.setup(ctx, regs)
    a, b = global_read.make_operand(ctx, "A"), global_read.make_operand(ctx, "B")
    acc = math.accumulators(ctx)
    body.add(lr_mod, global_read.setup(ctx, a, regs), global_read.setup(ctx, b, regs),
             math.zero(ctx, acc))
    parts = _Parts(ctx, regs, a, b, acc, lr_state, math)
    k_size, counter = regs.arg("SizesSum0"), ctx.sgpr("LoopCounterL")
    chunks = ctx.sgpr("NumChunksL")
    parts.chunks = chunks
    body.add(_k_chunks(ctx, chunks, k_size), _split_k(parts, chunks, counter))
    if g.stagger_u > 1:
        stagger_mod, parts.stagger = stagger.setup(ctx, regs, [a, b], counter)
        body.add(stagger_mod)
    body.add(_tail_position(parts, chunks, counter))
    if g.prefetch_global_read_depth == 2:
        loop = _loop_prefetch2
    else:
        loop = _loop_prefetch if g.prefetch_global_read else _loop_single_buffer
    if g.prefetch_global_read and direct_to_vgpr.dtv(g, "A"):   # DirectToVgprA: the next tile's register set
        parts.a2 = global_read.dtv_second_set(ctx, a)
    if math.dtv_sets is not None and direct_to_vgpr.dtv(g, "A"):
        math.dtv_sets.update({0: a.dtv_set, 1: (parts.a2 or a).dtv_set})
    body.add(loop(parts, counter, k_size), _tail(parts, k_size), store.store_tile(ctx, regs, acc, math.columns))
    if persistent is not None:
        body.add(ctx.inst("s_branch", persistent[0]), LabelDef(persistent[1].name))
    body.add(ctx.inst("s_endpgm"))

    limits = {"v": arch.vgpr["arch_max"], "s": arch.sgpr["max_user"], "a": arch.vgpr.get("accum_max", 0)}
    allocation = allocate(body, limits, what=f"kernel {name}", repeats=ctx.isa.repeats)
    nf = allocation.next_free
    res = signature.Resources(vgprs=nf["v"], agprs=nf["a"], sgprs=nf["s"], lds_bytes=g.lds_bytes,
                              workgroup_size=g.num_threads, workgroup_id_z=g.batched, preload_dwords=preload)
    kernel = Kernel(name, arch, g, layout, res, body, allocation.assignment)
    if preload:
        check_preload_header(kernel.module, arch.name, name)
    return kernel
