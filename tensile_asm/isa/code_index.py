"""The register keys of a kernel's instructions, computed once for the passes that read them.

The waitcnt pass (``waitcnt_pass.py``) and the hazard pass (``hazard_pass.py``, rules in ``hazards.py``)
both ask which registers each instruction names. They read the same flattened stream (the hazard pass
with the waits inserted), so the keys are computed once per *shape*: instructions of the same opcode,
modifiers and operand objects (the writer repeats a loop body's MAC steps with the same operand objects)
share one ``Shape``, which holds the keys of each operand (``hazards.operand_keys``, virtual registers
placed by the assignment). A pass keeps its own facts on a subclass of ``Shape`` (the waitcnt pass's
``_Facts``); the hazard rules read ``ins`` and ``opkeys`` only.

A shape is valid for one run of the passes over one stream, whose instructions keep their operands
alive (the cache is keyed by the operands' ``id``).
"""

from __future__ import annotations

from tensile_asm.isa.hazards import _KEY_BASE, operand_keys
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import Reg, Special, VRegRef


def _keys_of(o, assignment) -> tuple:
    """``hazards.operand_keys(o, assignment)`` (() for immediates, labels, SCC, unplaced registers)."""
    t = type(o)
    if t is VRegRef:
        index = assignment.get(o.vreg) if assignment else None
        if index is None:
            return ()
        start = _KEY_BASE[o.vreg.kind] + index + o.offset
        return tuple(range(start, start + o.count))
    if t is Reg or t is Special:
        return operand_keys(o)
    return operand_keys(o, assignment)


def _remember(o, assignment, memo: dict, i: int) -> tuple:
    """The keys of operand ``o`` (``id(o)`` = ``i``), kept in ``memo``."""
    if o.__class__ is VRegRef:                   # _keys_of, inline for the common case
        index = assignment.get(o.vreg) if assignment else None
        if index is None:
            got = ()
        else:
            start = _KEY_BASE[o.vreg.kind] + index + o.offset
            got = tuple(range(start, start + o.count))
    else:
        got = _keys_of(o, assignment)
    memo[i] = got
    return got


class Shape:
    """One distinct instruction of a stream (``ins``: the first of its shape) and the register keys of
    each of its operands (``opkeys``, in operand order)."""

    __slots__ = ("ins", "opkeys")

    def __init__(self, ins: Instruction, assignment, memo: dict):
        self.ins = ins
        self.opkeys = tuple([memo[i] if (i := id(o)) in memo else _remember(o, assignment, memo, i)
                             for o in ins.operands])


class Index:
    """The shapes of one stream: ``shape(ins)`` gives the one of ``ins`` (made on first sight with
    ``factory(ins, assignment, memo)``)."""

    __slots__ = ("assignment", "factory", "cache", "memo")

    def __init__(self, assignment, factory=Shape):
        self.assignment, self.factory, self.cache, self.memo = assignment, factory, {}, {}

    def shape(self, ins: Instruction) -> Shape:
        key = (ins.opcode, ins.modifiers, *map(id, ins.operands))
        got = self.cache.get(key)
        if got is None:
            got = self.cache[key] = self.factory(ins, self.assignment, self.memo)
        return got


def index_code(target, index: Index, skip: str | None = None) -> tuple[list, list, list]:
    """(the instructions and label definitions of ``target`` -- a Module's tree in ``code()`` order, or a
    list -- but those of opcode ``skip``; the shape of each, None for a label; the skipped instructions)."""
    stream, shapes, skipped = [], [], []
    _walk(target.items if isinstance(target, Module) else target, index, skip, stream, shapes, skipped)
    return stream, shapes, skipped


def _walk(items, index: Index, skip, stream: list, shapes: list, skipped: list) -> None:
    """``index_code`` of ``items`` (sub-modules walked in place), appended to the lists. (A module-level
    function: a nested recursive one would be a reference cycle holding the index until the cyclic
    collector runs.)"""
    cache = index.cache
    for x in items:
        cls = x.__class__
        if cls is Instruction or (cls is not LabelDef and cls is not Module and isinstance(x, Instruction)):
            if x.opcode == skip:
                skipped.append(x)
                continue
            ops = x.operands
            n = len(ops)          # (the key of ``Index.shape``, built without an iterator for up to 4 operands)
            if n == 3:
                key = (x.opcode, x.modifiers, id(ops[0]), id(ops[1]), id(ops[2]))
            elif n == 2:
                key = (x.opcode, x.modifiers, id(ops[0]), id(ops[1]))
            elif n == 4:
                key = (x.opcode, x.modifiers, id(ops[0]), id(ops[1]), id(ops[2]), id(ops[3]))
            else:
                key = (x.opcode, x.modifiers, *map(id, ops))
            f = cache.get(key)
            if f is None:
                f = cache[key] = index.factory(x, index.assignment, index.memo)
            stream.append(x)
            shapes.append(f)
        elif cls is LabelDef or (cls is not Module and isinstance(x, LabelDef)):
            stream.append(x)
            shapes.append(None)
        elif cls is Module or isinstance(x, Module):
            _walk(x.items, index, skip, stream, shapes, skipped)


__all__ = ["Index", "Shape", "index_code"]
