"""Strict mode: the hazard rules of ``isa/<gfx>.yaml`` (``tensile_asm/isa/hazards.py``, the engine the
writer's hazard pass uses) checked on the stream each wave actually executes.

At compile time each op learns which rules it can take part in, pruned to rules whose producer and
consumer registers both occur in the kernel (``HazardModel.profiles``): most ops get no check at all.
At run time a wave keeps, per (rule, register key), the wait-state clock after its last producer and
that producer's op index; a consumer finds the nearest producer of each operand and compares the
wait states between them (instructions issued since, ``s_nop N`` counting N+1) with what the rule
requires. The clock of a wave is ``instructions + nops`` (``nops``: the extra wait states of its
``s_nop``s), so ops without a check cost nothing.
"""

from __future__ import annotations

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.isa.hazards import Violation, hazard_model

STRIDE = 2048          # table key: rule index * STRIDE + register key
BETWEEN = STRIDE - 1   # ... or + BETWEEN: the last instruction of the rule's `between` class
WINDOW = 32            # more wait states than any rule asks for: older entries no longer matter


def attach(ops, arch) -> None:
    """Set ``op.hazard`` to ``fn(wave, clock)`` on every op that checks or records a live rule."""
    model = hazard_model(arch)
    if not model.rules:
        return
    profiles = model.profiles([op.inst for op in ops])
    consumed = {idx for p in profiles for idx, _ in p.consumes}
    if not consumed:
        return
    memo: dict = {}

    def required(idx, src, dst, group):
        key = (idx, src, dst, group)
        need = memo.get(key)
        if need is None:
            need = memo[key] = model.required(idx, ops[src].inst, profiles[src].produces[idx], ops[dst].inst, group)
        return need

    gated = [idx for idx in consumed if model.rules[idx].between is not None]
    for op, prof in zip(ops, profiles):
        checks = tuple((idx, idx * STRIDE, group, model.rules[idx].between is not None)
                       for idx, groups in prof.consumes for group in groups)
        records = tuple(idx * STRIDE + k for idx, groups in prof.produces.items() if idx in consumed
                        for g in groups for k in g)
        records += tuple(idx * STRIDE + BETWEEN for idx in gated if model.rules[idx].between(op.inst, model))
        if checks or records:
            op.hazard = _hook(op.index, checks, records, prof.ws, required, model, ops)


def _hook(index, checks, records, ws, required, model, ops):
    def hazard(w, clock):
        table = w.hz
        for idx, base, group, gated in checks:
            best = None
            for k in group:
                e = table.get(base + k)
                if e is not None and (best is None or e[0] > best[0]):
                    best = e
            if best is not None and gated:         # no `between` instruction since the producer: no hazard
                mark = table.get(base + BETWEEN)
                if mark is None or mark[0] < best[0]:
                    best = None
            if best is not None:
                need = required(idx, best[1], index, group)
                have = clock - best[0]
                if have < need:
                    v = Violation(model.rules[idx], ops[best[1]].inst, ops[index].inst, group, have, need)
                    raise Fault(f"strict: {v.message()}")
        if records:
            entry = (clock + ws, index)
            for key in records:
                table[key] = entry
    return hazard


def clock(w) -> int:
    return w.instructions + w.nops


def relative(w) -> dict:
    """The wave's hazard table relative to its clock, without entries too old to matter."""
    now = clock(w)
    return {k: (now - c, i) for k, (c, i) in w.hz.items() if now - c < WINDOW}


def same_state(waves) -> bool:
    """Whether ``waves`` (about to run in lockstep) have the same recent producers."""
    if not any(w.hz for w in waves):
        return True
    first = relative(waves[0])
    return all(relative(w) == first for w in waves[1:])


def copy_state(lead, followers) -> None:
    """After a lockstep batch (which kept only ``lead``'s table): every follower gets it, on its clock."""
    if not lead.hz and not any(w.hz for w in followers):
        return
    now = clock(lead)
    table = {k: (c, i) for k, (c, i) in lead.hz.items() if now - c < WINDOW}
    lead.hz = table
    for w in followers:
        shift = clock(w) - now
        w.hz = {k: (c + shift, i) for k, (c, i) in table.items()}
