"""The passes a written kernel goes through, in order, over one flattened stream.

``finish_code`` runs what ``insert_waitcnt``, ``insert_wait_states`` and ``relax_branches`` do one after
the other, with the same result, but flattens the Module tree once: the waitcnt pass
(``waitcnt_pass.py``) indexes the stream (``code_index``: the register keys of each distinct instruction),
the hazard pass (``hazard_pass.py``) reads that index on the stream with the waits in place, the waits
and the ``s_nop`` go into the tree in one splice, and branch relaxation (``branch_relax.py``) is told
how many items the result has (most kernels: too few for any branch to be out of reach). The module
keeps the shapes (``Module.remember_shapes``): its rendering renders each distinct instruction once.
"""

from __future__ import annotations

from typing import Callable

from tensile_asm.isa.branch_relax import relax_branches
from tensile_asm.isa.hazard_pass import plan_wait_states
from tensile_asm.isa.module import Module, insert_before
from tensile_asm.isa.registers import Reg
from tensile_asm.isa.waitcnt_pass import plan_waits


def with_waits(stream: list, shapes: list, waits: dict, index) -> tuple[list, list]:
    """``stream`` and its ``shapes`` with ``waits[j]`` (a new instruction) before item ``j``, and its shape."""
    items, out, prev = [], [], 0
    for j in sorted(waits):
        w = waits[j]
        items += stream[prev:j]
        out += shapes[prev:j]
        items.append(w)
        out.append(index.shape(w))
        prev = j
    items += stream[prev:]
    out += shapes[prev:]
    return items, out


def finish_code(module: Module, arch, assignment: dict, spare_pair: Callable[[], Reg]) -> None:
    """Insert the waits and wait states ``module`` needs and relax its far branches (see the module doc)."""
    stream, facts, waits, old, index = plan_waits(module, arch, assignment)
    items, shapes = with_waits(stream, facts, waits, index) if waits else (stream, facts)
    nops, _ = plan_wait_states(items, shapes, arch, assignment)
    before = {id(items[p]): ns for p, ns in nops.items()}     # before a stream item or before a wait
    inserted = {}
    for j, w in waits.items():
        inserted[id(stream[j])] = before.pop(id(w), []) + [w]
    for key, ns in before.items():
        got = inserted.get(key)
        inserted[key] = ns if got is None else got + ns
    if inserted or old:
        old_ids = {id(x) for x in old}
        insert_before(module, inserted, drop=(lambda x: id(x) in old_ids) if old else None)
    relax_branches(module, arch, spare_pair, size=len(items) + sum(len(ns) for ns in nops.values()))
    module.remember_shapes(items, shapes, assignment)


__all__ = ["finish_code", "with_waits"]
