"""The hazard pass: insert the fewest ``s_nop`` so that no rule of ``isa/<gfx>.yaml`` ``hazards`` fires.

Histories are walked backwards through fall-through and through every branch that targets a label
(loops included), up to the largest wait-state count any rule asks for; the requirement before an
instruction is the worst over those paths. Inserted wait states only ever lengthen distances, so
one forward sweep suffices and a second finds nothing to do (the pass is idempotent).
"""

from __future__ import annotations

from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.instruction_set import InstructionSet
from tensile_asm.isa.module import LabelDef, insert_before
from tensile_asm.isa.registers import Label

_TERMINATORS = ("s_branch", "s_endpgm", "s_setpc_b64")
MAX_NOP = 8            # s_nop 7 = 8 wait states


def nops_for(isa: InstructionSet, wait_states: int, comment: str = "") -> list:
    """``s_nop`` instructions providing ``wait_states`` (at most 8 each), created by ``isa``."""
    out = []
    while wait_states > 0:
        n = min(wait_states, MAX_NOP)
        out.append(isa.inst("s_nop", n - 1, comment=comment))
        wait_states -= n
        comment = ""
    return out


class _Stream:
    """A flattened instruction stream with its control-flow predecessors."""

    def __init__(self, items, model, profiles):
        self.items = items                            # instructions and label definitions
        self.model = model
        self.profiles = profiles
        self.extra = [0] * len(self.items)          # wait states inserted before item i
        labels = {x.name: i for i, x in enumerate(self.items) if isinstance(x, LabelDef)}
        self._pred_lists: dict = {}                   # position -> its predecessors (``_preds``)
        self.sources = {}                             # label position -> branch positions
        for i, x in enumerate(self.items):
            if isinstance(x, Instruction) and x.opcode.startswith(("s_branch", "s_cbranch_")):
                for o in x.operands:
                    if isinstance(o, Label) and o.name in labels:
                        self.sources.setdefault(labels[o.name], []).append(i)

    def _preds(self, p) -> list:
        """Positions control reaches item ``p`` from (fall-through first, then the branches to it)."""
        hit = self._pred_lists.get(p)
        if hit is None:
            prev = self.items[p - 1] if p > 0 else None
            hit = [p - 1] if prev is not None and not (isinstance(prev, Instruction)
                                                      and prev.opcode.startswith(_TERMINATORS)) else []
            hit += self.sources.get(p, ())
            self._pred_lists[p] = hit
        return hit

    def histories(self, i):
        """Every history of item ``i`` as [(instruction, profile, distance)], newest first."""
        limit = self.model.max_wait
        stack = [(i, self.extra[i], [])]
        while stack:
            p, dist, acc = stack.pop()
            preds = self._preds(p) if dist < limit else ()
            if not preds:
                yield acc
                continue
            for j in preds:
                item, new = self.items[j], acc
                d = dist
                if isinstance(item, Instruction):
                    prof = self.profiles[j]
                    new = acc + [(item, prof, d)]
                    d += prof.ws + self.extra[j]
                stack.append((j, d, new))

    def deficit(self, i) -> tuple:
        item, prof = self.items[i], self.profiles[i]
        worst, why = 0, None
        for history in self.histories(i):
            for v in self.model.violations(history, item, prof):
                if v.required - v.present > worst:
                    worst, why = v.required - v.present, v
        return worst, why


def plan_wait_states(items: list, shapes: list, arch, assignment=None) -> tuple[dict, int]:
    """({position in ``items``: the ``s_nop`` to insert before that item}, the wait states they give), for a
    stream of instructions and label definitions and the ``code_index.Shape`` of each (None for a label)."""
    from tensile_asm.isa.hazards import hazard_model

    model = hazard_model(arch)
    live = model.shape_profiles(shapes, assignment)
    if not any(p.consumes for p in live.values()):
        return {}, 0                                  # no instruction a live rule can fire on
    stream = _Stream(items, model, model.profiles_of(shapes, live))
    isa = InstructionSet(arch)
    inserted, total = {}, 0
    for i, prof in enumerate(stream.profiles):
        if prof is None or not prof.consumes:
            continue
        need, why = stream.deficit(i)
        if need:
            stream.extra[i] += need
            inserted[i] = nops_for(isa, need, f"hazard: {why.rule.name}")
            total += need
    return inserted, total


def insert_wait_states(target, arch, assignment=None) -> int:
    """Insert ``s_nop`` before every instruction a hazard rule of ``arch`` says waits too little.

    ``target`` is a Module (changed in place, nops go into the sub-module of the instruction) or a
    list of instructions and label definitions (changed in place). ``assignment`` resolves virtual
    registers (run the pass after allocation). Returns the wait states inserted.
    """
    from tensile_asm.isa.code_index import Index, index_code   # (code_index imports hazards, which imports this)

    items, shapes, _ = index_code(target, Index(assignment))
    inserted, total = plan_wait_states(items, shapes, arch, assignment)
    if inserted:
        insert_before(target, {id(items[i]): nops for i, nops in inserted.items()})
    return total
