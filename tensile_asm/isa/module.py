"""A Module is a named tree of instructions, label definitions and comments.

Writer components each return a Module; the kernel is a Module of Modules. Passes work on the
flattened sequence; the tree keeps the rendered text readable (one comment header per component).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping, Union

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

    def flatten(self) -> Iterator[Union[Instruction, LabelDef, Comment]]:
        for item in self.items:
            if isinstance(item, Module):
                yield Comment(f"--- {item.name} ---")
                yield from item.flatten()
            else:
                yield item

    def instructions(self) -> list[Instruction]:
        return [i for i in self.flatten() if isinstance(i, Instruction)]

    def render(self, assignment: Mapping[VReg, int] | None = None) -> str:
        lines = []
        for item in self.flatten():
            text = item.render(assignment)
            lines.append(text if isinstance(item, LabelDef) else "  " + text)
        return "\n".join(lines) + "\n"
