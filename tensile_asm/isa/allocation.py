"""Register allocation: map every virtual register of a Module to a physical range.

Linear scan over the flattened instruction order. A register live anywhere in a loop (a label that
a later branch jumps back to) is kept for the whole loop, unless it is born inside the loop by a write
and dies there, so values carried between iterations are never overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping
from itertools import compress, count as counting, islice

from tensile_asm.errors import UserError
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import Label, VReg, VRegRef


@dataclass
class Allocation:
    assignment: dict          # VReg -> first physical index
    next_free: dict           # kind -> one past the highest register used


@dataclass(slots=True)
class _Interval:
    vreg: VReg
    start: int
    end: int
    first_is_def: bool


def _intervals(items, repeats: Mapping | None = None) -> tuple[dict[VReg, _Interval], list[tuple[int, int]]]:
    """Each virtual register's first and last position (whether it is written first), and the loops (label
    position, position of the branch back to it). Positions count the items in order, the items of a module
    in its place (``items`` as ``Module.flatten`` or ``code`` gives them, or the tree). ``repeats``:
    ``InstructionSet.repeats``, the modules that repeat another's code, whose registers are then read once."""
    intervals, loops, _, _, _ = _scan(items, repeats, {})
    return intervals, loops


def _scan(items, repeats, summaries: dict) -> tuple[dict, list, dict, int, bool]:
    """``_intervals``, the labels defined (name -> position), the number of positions, and whether any operand is
    a label. ``summaries``: id(module repeated) -> its ``_summary``."""
    intervals: dict[VReg, _Interval] = {}
    get = intervals.get
    labels: dict[str, int] = {}
    loops: list[tuple[int, int]] = []
    branches = False
    pos = -1
    parents: list = []      # the iterators of the enclosing modules' items
    it = iter(items)
    while True:
        for item in it:
            cls = item.__class__
            if cls is not Instruction:
                if cls is Module or isinstance(item, Module):
                    if repeats:
                        copied = repeats.get(id(item))
                        if copied is not None and copied[0] is item:
                            done = _summary(copied[1], repeats, summaries)
                            if done is not None and len(copied[1].items) == len(item.items):
                                # the same code as the module it repeats: its registers at the same distances
                                inner, length = done
                                for vreg, iv in inner.items():
                                    known = get(vreg)
                                    if known is None:
                                        intervals[vreg] = _Interval(vreg, pos + 1 + iv.start, pos + 1 + iv.end,
                                                                    iv.first_is_def)
                                    else:
                                        known.end = pos + 1 + iv.end
                                pos += length
                                continue
                    parents.append(it)
                    it = iter(item.items)
                    break
                pos += 1
                if cls is LabelDef or isinstance(item, LabelDef):
                    labels[item.name] = pos
                if not isinstance(item, Instruction):
                    continue
            else:
                pos += 1
            for op in item.operands:
                t = op.__class__
                if t is VRegRef:
                    iv = get(op.vreg)
                    if iv is None:      # its first operand: no earlier one names the register (``index``: that one)
                        ops = item.operands
                        intervals[op.vreg] = _Interval(op.vreg, pos, pos, ops.index(op) < item.info.num_defs)
                    else:
                        iv.end = pos
                elif t is Label:
                    branches = True
                    if op.name in labels:
                        loops.append((labels[op.name], pos))
        else:
            if not parents:
                return intervals, loops, labels, pos + 1, branches
            it = parents.pop()


def _summary(module: Module, repeats: Mapping, summaries: dict) -> tuple[dict, int] | None:
    """(intervals from position 0, number of positions) of a module's code; None if it defines or names a label
    (then it is walked where it is repeated)."""
    key = id(module)
    if key not in summaries:
        intervals, _, labels, length, branches = _scan(module.items, repeats, summaries)
        summaries[key] = None if labels or branches else (intervals, length)
    return summaries[key]


def _extend_for_loops(intervals, loops) -> None:
    changed = True
    while changed:  # nested loops may need several rounds
        changed = False
        for lo, hi in loops:
            for iv in intervals.values():
                if iv.end < lo or iv.start > hi:
                    continue
                inside = iv.start >= lo and iv.end <= hi
                if inside and iv.first_is_def:
                    continue
                new_start, new_end = min(iv.start, lo), max(iv.end, hi)
                if (new_start, new_end) != (iv.start, iv.end):
                    iv.start, iv.end, changed = new_start, new_end, True


def allocate(module: Module, limits: dict[str, int], what: str = "kernel", repeats: Mapping | None = None) -> Allocation:
    """Place every VReg of ``module``. ``limits`` is the number of registers of each kind available. ``repeats``:
    the modules of ``module`` that repeat another one's code (``InstructionSet.repeats``), read as that one.

    Fixed registers (``VReg(fixed=N)``, such as the kernel-argument pointer in s[0:1]) keep their place.
    """
    intervals, loops = _intervals(module.items, repeats)
    for iv in intervals.values():
        if iv.vreg.fixed is not None:
            iv.start = 0  # set by the hardware before the first instruction
    _extend_for_loops(intervals, loops)

    assignment: dict[VReg, int] = {}
    next_free = {"v": 0, "s": 0, "a": 0}
    # Per kind, per physical register: the position where it becomes free (-1: never used; past the end: free).
    busy: dict[str, list[int]] = {"v": [], "s": [], "a": []}
    # Per kind, per physical register: one past the last register of the range that set its ``busy`` position
    # (every register of that range is busy at least as long): a busy register's whole range is skipped at once.
    spans: dict[str, list[int]] = {"v": [], "s": [], "a": []}

    overflow = None
    ordered = sorted(intervals.values(), key=lambda iv: (iv.vreg.fixed is None, iv.start))
    for iv in ordered:
        reg = iv.vreg
        taken, span = busy[reg.kind], spans[reg.kind]
        count = reg.count
        if reg.fixed is not None:
            base = reg.fixed
        else:           # the first aligned range whose registers are all free (their interval ended before)
            start, align = iv.start, reg.align
            free = start.__gt__
            base, size = 0, len(taken)
            while True:
                # no range can start at a busy register: from the first free one at or past base (past the
                # registers used so far all are), aligned up
                if base < size:
                    base = next(compress(counting(base), map(free, islice(taken, base, None))), size)
                base = -(-base // align) * align
                window = taken[base:base + count]
                if not window:
                    break
                latest = max(window)
                if latest < start:
                    break
                # busy: no range from base up to that register can be free, nor up to the end of the range that
                # keeps it busy (all of that range is busy as long): next past that
                base = span[base + window.index(latest)]
        end = base + count
        if end > limits[reg.kind] and overflow is None:
            overflow = reg  # placed anyway, so the message can say how many the kernel needs
        if end > len(taken):
            taken.extend([-1] * (end - len(taken)))
            span.extend([0] * (end - len(span)))
        last = iv.end
        for r in range(base, end):
            if taken[r] < last:
                taken[r] = last
                span[r] = end
        assignment[reg] = base
        if end > next_free[reg.kind]:
            next_free[reg.kind] = end
    if overflow is not None:
        k = overflow.kind
        raise UserError(
            f"{what}: needs more than {limits[k]} {k.upper()}GPRs (uses VGPR {next_free['v']}, AGPR {next_free['a']}, "
            f"SGPR {next_free['s']}; '{overflow.name}' of {overflow.count} is the first past the limit); "
            f"choose a smaller ThreadTile or DepthU")
    return Allocation(assignment, next_free)


def spare_registers(next_free: int, count: int, align: int, limit: int, kind: str = "s", what: str = "kernel") -> int:
    """The first of ``count`` registers (aligned to ``align``) past every register an allocation placed
    (``next_free``): for code added after allocation (the long branches of isa/branch_relax.py) that no
    allocated register may share. Raises UserError when they are past ``limit``."""
    base = -(-next_free // align) * align
    if base + count > limit:
        raise UserError(f"{what}: needs more than {limit} {kind.upper()}GPRs ({count} more for long branches past "
                        f"the {next_free} allocated); choose a smaller ThreadTile or DepthU")
    return base
