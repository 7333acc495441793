"""Lockstep execution: the waves of a workgroup that are at the same instruction with the same
strict-mode state run as one batch, so a vector instruction costs one numpy call over all their
lanes instead of one per wave.

Each wave's VGPRs/AGPRs are column views of the workgroup's register store (``initial.py``), so a
batch needs no copying: its ``v`` is the whole store. Scalar state (SGPRs, SCC, EXEC) stays per
wave. An op that ``Op.batchable`` marks as lane-local, and whose SGPR sources hold the same value in
every wave of the batch, runs once on the batch; every other op (scalar ALU, SMEM, branches, lane
masks, cross-lane moves) runs wave by wave on the members. When the members disagree on where to go
next (a branch taken by some, ``s_endpgm`` reached by some), the batch dissolves and its waves go
on alone; they form a batch again at the next barrier if their strict-mode states agree.

Strict mode: the batch has one register-state array and one list of outstanding memory operations,
shared by its first member (lockstep waves issue the same operations). The other members run their
per-wave ops against scratch copies, which are discarded.
"""

from __future__ import annotations

import copy

import numpy as np

from tensile_asm.emulator import fuse
from tensile_asm.emulator.lds.dma import is_lds_dma, merge_batch_members
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import describe
from tensile_asm.emulator.state import READY
from tensile_asm.emulator.strict import hazards
from tensile_asm.emulator.strict.waitcnt import Pending, read_error
from tensile_asm.errors import EmulationError


class WaveBatch:
    """Looks like a ``Wave`` to batchable handlers: registers span every member's lanes."""

    __slots__ = ("subs", "group", "v", "vf", "a", "lanes", "rstate", "pending", "exec_full", "exec_lanes",
                 "_exec_key", "_cols", "index", "instructions")

    def __init__(self, group, subs):
        self.subs = subs
        self.group = group
        self.v = group.vstore
        self.vf = self.v.view(np.float32)
        self.a = group.astore
        self.lanes = self.v.shape[1]
        lead = subs[0]
        self.rstate, self.pending = lead.rstate, lead.pending
        self.index = lead.index
        self.instructions = 0
        self._exec_key = None
        self.sync_exec()
        for w in subs[1:]:                 # scratch strict state for the followers' per-wave ops
            w.rstate, w.pending = bytearray(lead.rstate), Pending(lead.pending.limits)

    # -- the Wave interface batchable handlers use -----------------------------------------------
    @property
    def s(self):
        return self.subs[0].s

    @property
    def scc(self):
        return self.subs[0].scc

    def sync_exec(self) -> None:
        key = tuple(w.exec for w in self.subs)
        if key != self._exec_key:
            self._exec_key = key
            self.exec_full = all(w.exec_full for w in self.subs)
            self.exec_lanes = np.concatenate([w.exec_lanes for w in self.subs])
            self._cols = None

    def split_columns(self, idx):
        """Per member wave, the columns of ``idx`` (active lanes of the batch) that are its own."""
        return tuple((wi, idx[..., cols]) for wi, cols in self.column_owners())

    def column_owners(self):
        if self._cols is None:
            if self.exec_full:
                n = self.subs[0].lanes
                bounds = [(j * n, (j + 1) * n) for j in range(len(self.subs))]
            else:
                ends = np.cumsum([int(np.count_nonzero(w.exec_lanes)) for w in self.subs])
                bounds = list(zip([0, *ends[:-1].tolist()], ends.tolist()))
            self._cols = tuple((w.index, slice(lo, hi)) for w, (lo, hi) in zip(self.subs, bounds) if hi > lo)
        return self._cols

    def describe(self) -> str:
        return f"workgroup {self.group.id}, waves {self.subs[0].index}-{self.subs[-1].index} in lockstep"

    # -- forming and dissolving ------------------------------------------------------------------
    def dissolve(self) -> None:
        """Every member gets its own copy of the batch's strict-mode state, to go on alone."""
        for w in self.subs[1:]:
            w.rstate = bytearray(self.rstate)
            w.pending = _copy_pending(self.pending)
        hazards.copy_state(self.subs[0], self.subs[1:])


def _copy_pending(p: Pending) -> Pending:
    q = Pending(p.limits)
    q.vm = copy.copy(p.vm)
    q.lgkm = list(p.lgkm)
    q.owner = dict(p.owner)
    q.exp, q.locked = copy.copy(p.exp), dict(p.locked)
    return q


def can_batch(group) -> bool:
    """All waves of ``group`` are live, at one instruction, and agree on their strict-mode state."""
    waves = group.waves
    if len(waves) < 2 or getattr(group, "vstore", None) is None:
        return False
    lead = waves[0]
    for w in waves:
        if w.done or w.at_barrier or w.pc != lead.pc:
            return False
    for w in waves[1:]:
        if w.rstate != lead.rstate or not _same_pending(w.pending, lead.pending):
            return False
    return hazards.same_state(waves)


def _same_pending(p: Pending, q: Pending) -> bool:
    return ([id(e.inst) for e in p.vm] == [id(e.inst) for e in q.vm] and
            [id(e.inst) for e in p.lgkm] == [id(e.inst) for e in q.lgkm] and
            [id(e.inst) for e in p.exp] == [id(e.inst) for e in q.exp])


def merge_pending(group) -> None:
    """Before a batch forms: the leader's outstanding LDS writes carry every member's lanes."""
    lead = group.waves[0].pending
    for queue in ("lgkm", "vm"):                 # vm: LDS-DMA loads (lds/dma.py)
        for i, e in enumerate(getattr(lead, queue)):
            if e.lds_parts is None:
                continue
            parts = list(e.lds_parts)
            for w in group.waves[1:]:
                other = getattr(w.pending, queue)[i]
                if other is not e and other.lds_parts:
                    parts.extend(other.lds_parts)
            e.lds_parts = tuple(parts)


def run_batch(b: WaveBatch, ops, counts, strict, budget) -> None:
    """Run ``b`` until a barrier, the end, or divergence; the members' pc/done/at_barrier say which.
    On divergence the batch is dissolved (its members carry their own strict state)."""
    subs = b.subs
    nsub = len(subs)
    lead = subs[0]
    pc = lead.pc
    st = b.rstate
    n = 0
    limit = budget[0]
    outcome = None
    try:
        while True:
            op = ops[pc]
            if op.parts is not None:
                width = fuse.run_fused(op, b, st, lead.instructions + n + lead.nops, counts, nsub, strict,
                                       read_error, READY)
                n += width
                pc += width
                continue
            if strict:
                for k in op.srcs:
                    if st[k] != READY:
                        raise read_error(b, op, k)
                if op.hazard is not None:
                    op.hazard(lead, lead.instructions + n + lead.nops)
            skeys = op.skeys
            if op.batchable and (not skeys or _uniform(subs, skeys)):
                r = op.fn(b)
            else:
                r = op.fn(lead)
                rs = None
                for j in range(1, nsub):
                    rj = op.fn(subs[j])
                    if rj != r and rs is None:
                        rs = [r] * j
                    if rs is not None:
                        rs.append(rj)
                b.sync_exec()
                if strict and is_lds_dma(op.inst):
                    merge_batch_members(b)
                if rs is not None:
                    outcome = rs
            if strict:
                for k in op.defs:
                    st[k] = READY
            counts[pc] += nsub
            n += 1
            if outcome is not None:
                break
            if r is None:
                pc += 1
            elif r >= 0:
                pc = r
            else:
                outcome = r
                break
            if n > limit:
                raise Fault(f"the launch executed more than {budget[0] + n} instructions without "
                                 f"finishing (an endless loop?); pass max_instructions= to allow more")
    except Fault as e:
        for w in subs:
            w.pc = pc
        raise EmulationError(f"at {describe(getattr(e, 'at', None) or ops[pc].inst)} ({b.describe()}): {e}") from None
    finally:
        for w in subs:
            w.instructions += n
        budget[0] -= n * nsub
    b.dissolve()
    for w, r in zip(subs, outcome if isinstance(outcome, list) else [outcome] * nsub):
        _advance(w, pc, r)     # a list: the members disagree on what comes next


def _advance(w, pc, r) -> None:
    if r is None:
        w.pc = pc + 1
    elif r >= 0:
        w.pc = r
    elif r == -1:                                    # ENDPGM
        w.pc, w.done = pc, True
    else:                                            # BARRIER
        w.pc, w.at_barrier = pc + 1, True


def _uniform(subs, skeys) -> bool:
    s0 = subs[0].s
    for w in subs[1:]:
        s = w.s
        for k in skeys:
            if s[k] != s0[k]:
                return False
    return True
