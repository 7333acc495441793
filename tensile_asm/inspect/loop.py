"""Find a kernel's main loop in its disassembled instructions, without relying on label names.

Every backward branch (a branch whose target address is not after the branch) closes a loop whose
body runs from the target to the branch. The main loop is the one with the most FMA instructions
(VALU multiply-accumulate or MFMA); ties go to the longer body, then to the earlier loop.
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


def main_loop(instructions: list) -> Loop | None:
    """The loop with the most FMA instructions (then the longest); None when there is no loop."""
    loops = backward_loops(instructions)
    if not loops:
        return None

    def key(loop: Loop):
        fmas = sum(classify(ins) in FMA_CLASSES for ins in loop.instructions)
        return (fmas, len(loop.instructions), -loop.start)

    return max(loops, key=key)
