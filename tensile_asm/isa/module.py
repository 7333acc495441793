"""A Module is a named tree of instructions, label definitions and comments.

Writer components each return a Module; the kernel is a Module of Modules. Passes work on the
flattened sequence; the tree keeps the rendered text readable (one comment header per component).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Union

from tensile_asm.isa.instruction import Instruction, render_operand
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
            if item.__class__ is Instruction:
                self.items.append(item)
            elif isinstance(item, (list, tuple)):
                self.add(*item)
            elif item is not None:
                self.items.append(item)
        return self

    def flatten(self) -> list[Union[Instruction, LabelDef, Comment]]:
        """The items in order, each sub-module announced by a ``--- name ---`` comment."""
        out: list = []
        _walk(self.items, out, True)
        return out

    def code(self) -> list:
        """The items the passes read, in order: instructions and label definitions, without the comments
        (``flatten`` without its headers; positions keep the order of ``flatten``'s)."""
        out: list = []
        _walk(self.items, out, False)
        return out

    def instructions(self) -> list[Instruction]:
        return [i for i in self.code() if isinstance(i, Instruction)]

    def render(self, assignment: Mapping[VReg, int] | None = None) -> str:
        lines: list = []
        # id(operand) -> its text (the items keep their operands alive meanwhile)
        _render_into(self.items, lines, assignment, {})
        return "\n".join(lines) + "\n"


def _walk(items, out: list, headers: bool) -> None:
    """Append ``items`` to ``out`` with the items of each sub-module in its place (and, with ``headers``,
    a ``--- name ---`` comment before them; without, no comment at all)."""
    append = out.append
    for item in items:
        cls = item.__class__
        if cls is Instruction:
            append(item)
        elif cls is Module or isinstance(item, Module):
            if headers:
                append(Comment(f"--- {item.name} ---"))
            _walk(item.items, out, headers)
        elif headers or cls is not Comment:
            append(item)


def _render_into(items, lines: list, assignment, memo: dict) -> None:
    """The lines of ``items`` as ``flatten`` orders them (each sub-module's header comment rendered in
    place, without building the ``Comment``). An instruction without modifiers is ``plain_text``, inlined."""
    append, get = lines.append, memo.get
    for item in items:
        cls = item.__class__
        if cls is Instruction:
            if item.modifiers or item.opcode == "s_waitcnt":
                append("  " + item.render(assignment, memo))
                continue
            ops = item.operands
            if ops:
                texts = []
                for o in ops:
                    t = get(id(o))
                    if t is None:
                        t = memo[id(o)] = render_operand(o, assignment)
                    texts.append(t)
                text = item.opcode + " " + ", ".join(texts)
            else:
                text = item.opcode
            comment = item.comment
            append(f"  {text:<48} // {comment}" if comment else "  " + text)
        elif cls is Module or isinstance(item, Module):
            append(f"  // --- {item.name} ---")
            _render_into(item.items, lines, assignment, memo)
        elif cls is LabelDef:
            append(item.render(assignment))
        else:
            append("  " + item.render(assignment))


def insert_before(target, inserted: Mapping[int, list], drop=None) -> None:
    """Put ``inserted[id(item)]`` before each item of ``target`` (a Module, changed in place down its
    tree so each insertion joins its item's sub-module; or a list of items), leaving out the items
    ``drop(item)`` is true for. The passes (waits, wait states) place their instructions with this."""
    def spliced(items):
        out = None          # a new list from the first item changed on (an untouched module keeps its own)
        for k, x in enumerate(items):
            if drop is not None and drop(x):
                if out is None:
                    out = items[:k]
                continue
            got = inserted.get(id(x))
            if got:
                if out is None:
                    out = items[:k]
                out.extend(got)
            if out is not None:
                out.append(x)
        return items if out is None else out

    def apply(module: Module) -> None:
        for item in module.items:
            if item.__class__ is not Instruction and isinstance(item, Module):
                apply(item)
        module.items = spliced(module.items)

    if isinstance(target, Module):
        apply(target)
    else:
        target[:] = spliced(target)
