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


@dataclass
class _Interval:
    vreg: VReg
    start: int
    end: int
    first_is_def: bool


def _intervals(items) -> tuple[dict[VReg, _Interval], list[tuple[int, int]]]:
    intervals: dict[VReg, _Interval] = {}
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
                iv = intervals.get(op.vreg)
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
    # Per kind, the physical registers in use with the position where they become free.
    busy: dict[str, dict[int, int]] = {"v": {}, "s": {}, "a": {}}

    overflow = None
    ordered = sorted(intervals.values(), key=lambda iv: (iv.vreg.fixed is None, iv.start))
    for iv in ordered:
        reg = iv.vreg
        taken = busy[reg.kind]
        if reg.fixed is not None:
            base = reg.fixed
        else:           # the first aligned range whose registers are all free (their interval ended before)
            start, count, align = iv.start, reg.count, reg.align
            base = 0
            while True:
                if base % align == 0 and all(taken.get(base + i, -1) < start for i in range(count)):
                    break
                base += 1
        if base + reg.count > limits[reg.kind] and overflow is None:
            overflow = reg  # placed anyway, so the message can say how many the kernel needs
        for i in range(reg.count):
            prev_end = taken.get(base + i, -1)
            taken[base + i] = max(prev_end, iv.end)
        assignment[reg] = base
        next_free[reg.kind] = max(next_free[reg.kind], base + reg.count)
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
