"""Run a stretch of independent fp32 multiply-adds as one numpy call.

A GEMM kernel's inner loop is mostly ``v_fmac_f32`` to distinct accumulators (16 in a row for a 4x4
thread tile, 64 for 8x8). Each costs about ten small numpy calls on 64-256 lanes, so the interpreter's
overhead, not the arithmetic, dominates. ``fuse_runs`` replaces the first op of each such stretch with
one that gathers the stretch's source rows, computes every result at once with the same arithmetic
(``vector/float32.fma_f32`` / the unfused gfx9 multiply-add), and scatters them back.

The results are bit for bit those of running the ops one by one, because the fused ops are
independent: no op of a stretch reads or writes a register another op of it writes. Strict mode sees
every op of the stretch: the run loops (``launch._run_wave``, ``batch.run_batch``) check each part's
sources and hazard rules at its own clock, mark each part's destinations written and count each part
(``run_fused``). Nothing branches into the middle of a stretch, so the parts after the first are
still in ``ops`` but only reached as parts.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import Op, _flush
from tensile_asm.emulator.vector.float32 import F32, fma_f32
from tensile_asm.isa.registers import Label, Reg

MAX_PARTS = 128


def _fma(a, b, c, denormals):
    return fma_f32(a, b, c, denormals)


def _mad(a, b, c, denormals):
    with np.errstate(all="ignore"):
        return (a * b).astype(F32) + c          # gfx9 v_mac/v_mad: the product rounds to fp32 first


# opcode -> (arithmetic, where the addend comes from: an operand index, or 0 for the destination)
_FUSABLE = {
    "v_fmac_f32": (_fma, 0),
    "v_fma_f32": (_fma, 3),
    "v_mac_f32": (_mad, 0),
    "v_mad_f32": (_mad, 3),
}


def _operands(op: Op):
    """(dest, a, b, addend) VGPR indices of a plain all-VGPR multiply-add, or None."""
    ins = op.inst
    entry = _FUSABLE.get(ins.opcode)
    if entry is None or ins.modifiers or not op.batchable:
        return None
    want = 3 if entry[1] == 0 else 4
    regs = ins.operands
    if len(regs) != want or not all(isinstance(r, Reg) and r.kind == "v" and r.count == 1 for r in regs):
        return None
    d, a, b = (r.index for r in regs[:3])
    return d, a, b, (d if entry[1] == 0 else regs[3].index)


def _branch_targets(ops) -> set:
    index_of = {op.inst.address: i for i, op in enumerate(ops) if op.inst.address is not None}
    targets = set()
    for op in ops:
        for o in op.inst.operands:
            if isinstance(o, Label):
                if o.address not in index_of:
                    return None                 # a target we cannot place: fuse nothing
                targets.add(index_of[o.address])
    return targets


def fuse_runs(ops: list, flush_f32: bool) -> list:
    """``ops`` with each stretch of two or more independent multiply-adds fused (a new list)."""
    targets = _branch_targets(ops)
    if targets is None:
        return ops
    out = list(ops)
    i = 0
    while i < len(ops):
        first = _operands(ops[i])
        if first is None:
            i += 1
            continue
        opcode = ops[i].inst.opcode
        parts, regs = [ops[i]], [first]
        written, read = {first[0]}, set(first[1:])
        j = i + 1
        while j < len(ops) and len(parts) < MAX_PARTS and j not in targets:
            nxt = _operands(ops[j])
            if nxt is None or ops[j].inst.opcode != opcode:
                break
            d, a, b, c = nxt
            srcs = {a, b, c}
            if d in written or d in read or srcs & written:
                break
            parts.append(ops[j])
            regs.append(nxt)
            written.add(d)
            read |= srcs
            j += 1
        if len(parts) > 1:
            out[i] = _fused_op(parts, regs, _FUSABLE[opcode][0], not flush_f32)
        i = j
    return out


def _fused_op(parts, regs, arithmetic, denormals):
    d, a, b, c = (np.array(col, np.intp) for col in zip(*regs))
    flush = not denormals

    def fn(w):
        vf = w.vf
        x, y, z = vf[a], vf[b], vf[c]
        if flush:
            x, y, z = _flush(x), _flush(y), _flush(z)
        r = arithmetic(x, y, z, denormals)
        if flush:
            r = _flush(r)
        vf[d] = r if w.exec_full else np.where(w.exec_lanes, r, vf[d])

    first = parts[0]
    op = Op(fn, first.srcs, first.defs, first.inst, first.index, batchable=True)
    op.parts = tuple(parts)
    return op


def run_fused(op, w, st, clock, counts, per_op, strict, read_error, ready):
    """Run fused ``op`` on ``w`` (a wave or a lockstep batch) whose first part issues at ``clock``.

    Strict: each part's sources are checked and its hazard rules applied at its own clock, in
    order, as if the parts ran one by one; a violation's ``Fault`` carries the part as ``at``.
    Returns the number of parts."""
    parts = op.parts
    if strict:
        hz_wave = w.subs[0] if hasattr(w, "subs") else w
        for j, part in enumerate(parts):
            try:
                for k in part.srcs:
                    if st[k] != ready:
                        raise read_error(w, part, k)
                if part.hazard is not None:
                    part.hazard(hz_wave, clock + j)
            except Fault as e:
                e.at = part.inst                  # the run loops report this part, not the first
                raise
    op.fn(w)
    pc = op.index
    for j, part in enumerate(parts):
        if strict:
            for k in part.defs:
                st[k] = ready
        counts[pc + j] += per_op
    return len(parts)


__all__ = ["fuse_runs", "run_fused"]
