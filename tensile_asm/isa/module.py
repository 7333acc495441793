"""A Module is a named tree of instructions, label definitions and comments.

Writer components each return a Module; the kernel is a Module of Modules. Passes work on the
flattened sequence; the tree keeps the rendered text readable (one comment header per component).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Union

from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.registers import VReg


@dataclass(frozen=True)
class LabelDef:
    name: str

    def render(self, assignment=None) -> str:
        return f"{self.name}:"


@dataclass(frozen=True)
class Comment:
    text: str

    def render(self, assignment=None) -> str:
        return f"// {self.text}"


Item = Union[Instruction, LabelDef, Comment, "Module"]


@dataclass
class Module:
    name: str
    items: list = field(default_factory=list)

    def add(self, *items) -> "Module":
        for item in items:
            if isinstance(item, (list, tuple)):
                self.add(*item)
            elif item is not None:
                self.items.append(item)
        return self

    def flatten(self) -> list[Union[Instruction, LabelDef, Comment]]:
        """The items in order, each sub-module announced by a ``--- name ---`` comment (one list built
        iteratively: nested generators cost a call per item per level)."""
        out: list = []
        stack = [iter(self.items)]
        while stack:
            for item in stack[-1]:
                if item.__class__ is Module or isinstance(item, Module):
                    out.append(Comment(f"--- {item.name} ---"))
                    stack.append(iter(item.items))
                    break
                out.append(item)
            else:
                stack.pop()
        return out

    def instructions(self) -> list[Instruction]:
        return [i for i in self.flatten() if isinstance(i, Instruction)]

    def render(self, assignment: Mapping[VReg, int] | None = None) -> str:
        lines = []
        memo: dict = {}            # id(operand) -> its text (the items keep their operands alive meanwhile)
        for item in self.flatten():
            cls = item.__class__
            if cls is Instruction:
                lines.append("  " + item.render(assignment, memo))
            elif cls is LabelDef:
                lines.append(item.render(assignment))
            else:
                lines.append("  " + item.render(assignment))
        return "\n".join(lines) + "\n"


def insert_before(target, inserted: Mapping[int, list], drop=None) -> None:
    """Put ``inserted[id(item)]`` before each item of ``target`` (a Module, changed in place down its
    tree so each insertion joins its item's sub-module; or a list of items), leaving out the items
    ``drop(item)`` is true for. The passes (waits, wait states) place their instructions with this."""
    def spliced(items):
        out = []
        for x in items:
            if drop is not None and drop(x):
                continue
            got = inserted.get(id(x))
            if got:
                out.extend(got)
            out.append(x)
        return out

    def apply(module: Module) -> None:
        for item in module.items:
            if isinstance(item, Module):
                apply(item)
        module.items = spliced(module.items)

    if isinstance(target, Module):
        apply(target)
    else:
        target[:] = spliced(target)
