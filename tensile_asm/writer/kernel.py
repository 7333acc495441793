"""The KernelWriter: compose the components into one kernel, allocate registers, render text.

Schedule of the unrolled loop (no prefetch yet): global loads of A and B; move the descriptors
along K; wait; barrier (everyone is done reading the previous tile); write LDS; wait; barrier; then
DepthU steps of (LDS reads, wait, ThreadTile0 x ThreadTile1 FMAs). The tail loop runs the same body
once more with K-guarded loads when K is not a multiple of DepthU.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.isa.allocation import allocate
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.instruction import inst, waitcnt
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.writer import global_read, local_memory, mac, signature, store
from tensile_asm.writer.arguments import Argument, argument_layout
from tensile_asm.writer.context import Geometry, KernelContext
from tensile_asm.writer.prologue import entry_registers, load_arguments, thread_coordinates


@dataclass
class Kernel:
    name: str
    arch: Arch
    geometry: Geometry
    layout: list[Argument]
    resources: signature.Resources
    module: Module
    assignment: dict

    def body_text(self) -> str:
        """Function text without metadata (for linking several kernels with one metadata note)."""
        return (signature.header(self.arch) + signature.function_open(self.name)
                + self.module.render(self.assignment) + signature.function_close(self.name)
                + signature.descriptor(self.arch, self.name, self.resources, self.layout))

    def metadata(self) -> dict:
        return signature.kernel_metadata(self.arch, self.name, self.resources, self.layout)

    def text(self) -> str:
        """A complete, standalone assembly file for this kernel."""
        return self.body_text() + signature.metadata_block(self.arch, [self.metadata()])

    def occupancy(self) -> dict:
        r = self.resources
        return self.arch.occupancy(r.vgprs, r.agprs, r.sgprs, r.lds_bytes, r.workgroup_size)


def _unrolled_body(ctx: KernelContext, a, b, acc, lr_state, offsets_a=None, offsets_b=None,
                   advance: bool = True) -> Module:
    g = ctx.geometry
    m = Module("unrolled iteration")
    m.add(global_read.loads(ctx, a, offsets_a), global_read.loads(ctx, b, offsets_b))
    if advance:
        m.add(global_read.advance(ctx, a), global_read.advance(ctx, b))
    m.add(waitcnt(vmcnt=0, comment="global reads landed"),
          inst("s_barrier", comment="all waves done reading the previous tile"),
          local_memory.local_writes(ctx, a), local_memory.local_writes(ctx, b),
          waitcnt(lgkmcnt=0, comment="local writes done"),
          inst("s_barrier", comment="tile visible to all waves"))
    for u in range(g.depth_u):
        m.add(local_memory.local_reads(ctx, lr_state, u),
              waitcnt(lgkmcnt=0, comment=f"k={u} operands"),
              mac.mac_step(ctx, acc, lr_state))
    return m


def write_kernel(geometry: Geometry, arch: Arch, name: str) -> Kernel:
    ctx = KernelContext(arch, geometry, name)
    g = geometry
    layout = argument_layout(g.batched, g.use_beta)
    regs, arg_block = entry_registers(ctx, layout)
    body = Module(name)
    body.add(load_arguments(ctx, regs, arg_block), thread_coordinates(ctx, regs),
             inst("v_mov_b32", ctx.oob_offset, global_read.BUFFER_OOB, comment="out-of-range buffer offset"))
    lr_mod, lr_state = local_memory.local_read_setup(ctx, regs)
    a, b = global_read.make_operand(ctx, "A"), global_read.make_operand(ctx, "B")
    acc = mac.accumulators(ctx)
    body.add(lr_mod, global_read.setup(ctx, a, regs), global_read.setup(ctx, b, regs),
             mac.zero_accumulators(ctx, acc))

    loop = Module("summation loop")
    k_size, counter, k_rem = regs.arg("SizesSum0"), ctx.sgpr("LoopCounterL"), ctx.sgpr("TailSizeL")
    begin, end, tail_end = ctx.label("LoopBeginL"), ctx.label("LoopEndL"), ctx.label("TailLoopEndL")
    shift = g.depth_u.bit_length() - 1
    loop.add(inst("s_lshr_b32", counter, k_size, shift, comment=f"K / DepthU={g.depth_u}"),
             inst("s_cmp_eq_u32", counter, 0),
             inst("s_cbranch_scc1", end),
             LabelDef(begin.name),
             _unrolled_body(ctx, a, b, acc, lr_state),
             inst("s_sub_u32", counter, counter, 1),
             inst("s_cmp_eq_u32", counter, 0),
             inst("s_cbranch_scc0", begin),
             LabelDef(end.name))
    tail = Module("tail loop")
    tail.add(inst("s_and_b32", k_rem, k_size, g.depth_u - 1, comment="K % DepthU"),
             inst("s_cmp_eq_u32", k_rem, 0),
             inst("s_cbranch_scc1", tail_end))
    guard_a, offsets_a = global_read.guarded_offsets(ctx, a, regs, k_rem)
    guard_b, offsets_b = global_read.guarded_offsets(ctx, b, regs, k_rem)
    tail.add(guard_a, guard_b,
             _unrolled_body(ctx, a, b, acc, lr_state, offsets_a, offsets_b, advance=False),
             LabelDef(tail_end.name))
    body.add(loop, tail, store.store_tile(ctx, regs, acc), inst("s_endpgm"))

    limits = {"v": arch.vgpr["arch_max"], "s": arch.sgpr["max_user"], "a": arch.vgpr.get("accum_max", 0)}
    allocation = allocate(body, limits, what=f"kernel {name}")
    nf = allocation.next_free
    res = signature.Resources(vgprs=nf["v"], agprs=nf["a"], sgprs=nf["s"], lds_bytes=g.lds_bytes,
                              workgroup_size=g.num_threads, workgroup_id_z=g.batched)
    return Kernel(name, arch, g, layout, res, body, allocation.assignment)
