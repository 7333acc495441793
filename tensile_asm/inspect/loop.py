"""Find a kernel's main loop in its disassembled instructions, without relying on label names.

Every backward branch (a branch whose target address is not after the branch) closes a loop whose
body runs from the target to the branch. The main loop is an innermost loop (one whose body holds no
other loop: a persistent kernel's loop over tiles holds the main loop and the tail, and so more FMAs)
with the most FMA instructions (VALU multiply-accumulate or MFMA). Ties go to a loop that loads from
global memory (the main loop streams the next tile; Tensile's tail loop, unrolled into DepthU / K
guarded steps, can hold as many MFMAs but loads before it starts), then to the shorter body (the tail's
guards make it longer), then to the earlier loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.inspect.issue_model import FMA_CLASSES, classify
from tensile_asm.isa.registers import Label


@dataclass
class Loop:
    start: int                # index of the first body instruction
    end: int                  # index of the backward branch (inclusive)
    instructions: list        # the body, branch included

    @property
    def start_address(self) -> int | None:
        return self.instructions[0].address

    @property
    def end_address(self) -> int | None:
        return self.instructions[-1].address


def _target_index(ins, index_of_address: dict) -> int | None:
    if not ins.opcode.startswith(("s_branch", "s_cbranch_")) or not ins.operands:
        return None
    target = ins.operands[0]
    if not isinstance(target, Label) or target.address is None:
        return None
    return index_of_address.get(target.address)


def backward_loops(instructions: list) -> list[Loop]:
    """Every loop closed by a backward branch, in program order of the branches."""
    index_of_address = {ins.address: i for i, ins in enumerate(instructions) if ins.address is not None}
    loops = []
    for i, ins in enumerate(instructions):
        t = _target_index(ins, index_of_address)
        if t is not None and t <= i:
            loops.append(Loop(t, i, instructions[t:i + 1]))
    return loops


def innermost(loops: list[Loop]) -> list[Loop]:
    """The loops whose body holds no other loop's body."""
    return [a for a in loops
            if not any(b is not a and a.start <= b.start and b.end <= a.end and (b.start, b.end) != (a.start, a.end)
                       for b in loops)]


def main_loop(instructions: list) -> Loop | None:
    """The innermost loop with the most FMA instructions (then one with global loads, then the shortest);
    None when there is no loop."""
    loops = innermost(backward_loops(instructions))
    if not loops:
        return None

    def key(loop: Loop):
        classes = [classify(ins) for ins in loop.instructions]
        fmas = sum(c in FMA_CLASSES for c in classes)
        return (fmas, "vmem_load" in classes, -len(loop.instructions), -loop.start)

    return max(loops, key=key)
