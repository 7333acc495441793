"""Register allocation: map every virtual register of a Module to a physical range.

Linear scan over the flattened instruction order. A register live anywhere in a loop (a label that
a later branch jumps back to) is kept for the whole loop, unless it is born inside the loop by a write
and dies there, so values carried between iterations are never overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _intervals(items) -> tuple[dict[VReg, _Interval], list[tuple[int, int]]]:
    intervals: dict[VReg, _Interval] = {}
    get = intervals.get
    labels: dict[str, int] = {}
    loops: list[tuple[int, int]] = []
    for pos, item in enumerate(items):
        cls = item.__class__
        if cls is LabelDef:
            labels[item.name] = pos
            continue
        if cls is not Instruction and not isinstance(item, Instruction):
            continue
        ndefs = -1
        for k, op in enumerate(item.operands):
            t = op.__class__
            if t is VRegRef:
                iv = get(op.vreg)
                if iv is None:
                    if ndefs < 0:
                        ndefs = item.info.num_defs
                    intervals[op.vreg] = _Interval(op.vreg, pos, pos, k < ndefs)
                else:
                    iv.end = pos
            elif t is Label and op.name in labels:
                loops.append((labels[op.name], pos))
    return intervals, loops


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


def allocate(module: Module, limits: dict[str, int], what: str = "kernel") -> Allocation:
    """Place every VReg of ``module``. ``limits`` is the number of registers of each kind available.

    Fixed registers (``VReg(fixed=N)``, such as the kernel-argument pointer in s[0:1]) keep their place.
    """
    items = module.code()
    intervals, loops = _intervals(items)
    for iv in intervals.values():
        if iv.vreg.fixed is not None:
            iv.start = 0  # set by the hardware before the first instruction
    _extend_for_loops(intervals, loops)

    assignment: dict[VReg, int] = {}
    next_free = {"v": 0, "s": 0, "a": 0}
    # Per kind, per physical register: the position where it becomes free (-1: never used; past the end: free).
    busy: dict[str, list[int]] = {"v": [], "s": [], "a": []}

    overflow = None
    ordered = sorted(intervals.values(), key=lambda iv: (iv.vreg.fixed is None, iv.start))
    for iv in ordered:
        reg = iv.vreg
        taken = busy[reg.kind]
        count = reg.count
        if reg.fixed is not None:
            base = reg.fixed
        else:           # the first aligned range whose registers are all free (their interval ended before)
            start, align = iv.start, reg.align
            base, size = 0, len(taken)
            while True:
                for r in range(base, min(base + count, size)):
                    if taken[r] >= start:   # busy: no range from base up to r can be free; next aligned past r
                        base = -(-(r + 1) // align) * align
                        break
                else:
                    break
        end = base + count
        if end > limits[reg.kind] and overflow is None:
            overflow = reg  # placed anyway, so the message can say how many the kernel needs
        if end > len(taken):
            taken.extend([-1] * (end - len(taken)))
        for r in range(base, end):
            if taken[r] < iv.end:
                taken[r] = iv.end
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
