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
    # (instructions and label definitions in ``code()`` order, the ``code_index.Shape`` of each -- None for
    # a label --, the assignment): what the passes indexed (``remember_shapes``), so ``render`` renders
    # each distinct instruction once. Not a field: no part of the module's value.
    _coded = None

    def remember_shapes(self, items: list, shapes: list, assignment) -> None:
        """Let ``render(assignment)`` reuse ``shapes`` (``code_index.Shape`` per item of ``items``, which must
        be this tree's instructions and labels in ``code()`` order, others possibly inserted between
        them): the text (without comment) of each shape is rendered once. An item of the
        tree not met in order in ``items`` is rendered on its own, so a later change stays rendered true."""
        self._coded = (items, shapes, assignment)

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
        coded = self._coded
        if coded is not None and coded[2] is assignment:
            _render_coded(self.items, lines, assignment, {}, coded[0], coded[1], 0, {})
        else:
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


def _plain_text(item: Instruction, assignment, memo: dict) -> str:
    """The text of a modifier-free instruction without its comment (``memo``: id(operand) -> its text)."""
    ops = item.operands
    if not ops:
        return item.opcode
    get = memo.get
    texts = []
    for o in ops:
        t = get(id(o))
        if t is None:
            t = memo[id(o)] = render_operand(o, assignment)
        texts.append(t)
    return item.opcode + " " + ", ".join(texts)


def _render_into(items, lines: list, assignment, memo: dict) -> None:
    """The lines of ``items`` as ``flatten`` orders them (each sub-module's header comment rendered in
    place, without building the ``Comment``). An instruction without modifiers is ``_plain_text``."""
    append = lines.append
    for item in items:
        cls = item.__class__
        if cls is Instruction:
            if item.modifiers or item.opcode == "s_waitcnt":
                append("  " + item.render(assignment, memo))
                continue
            text = _plain_text(item, assignment, memo)
            comment = item.comment
            append(f"  {text:<48} // {comment}" if comment else "  " + text)
        elif cls is Module or isinstance(item, Module):
            append(f"  // --- {item.name} ---")
            _render_into(item.items, lines, assignment, memo)
        elif cls is LabelDef:
            append(item.render(assignment))
        else:
            append("  " + item.render(assignment))


def _render_coded(items, lines: list, assignment, memo: dict, coded: list, shapes: list, p: int,
                  done: dict) -> int:
    """``_render_into`` with ``coded[p:]`` (and ``shapes``, ``Module.remember_shapes``) expected next: an
    instruction that is ``coded[p]`` takes the text of its shape (``done``: shape -> its text without a
    comment, rendered on first sight). Returns the position in ``coded`` after ``items``."""
    append = lines.append
    n = len(coded)
    for item in items:
        cls = item.__class__
        if cls is Instruction:
            if p < n and coded[p] is item:
                shape = shapes[p]
                p += 1
                text = done.get(shape)
                if text is None:
                    if item.modifiers or item.opcode == "s_waitcnt":
                        text = (Instruction(item.opcode, item.operands, item.modifiers, "", None, None, item._info)
                                if item.comment else item).render(assignment, memo)
                    else:
                        text = _plain_text(item, assignment, memo)
                    done[shape] = text
            elif item.modifiers or item.opcode == "s_waitcnt":
                text = item.render(assignment, memo)
                append("  " + text)
                continue
            else:
                text = _plain_text(item, assignment, memo)
            comment = item.comment
            append(f"  {text:<48} // {comment}" if comment else "  " + text)
        elif cls is Module or isinstance(item, Module):
            append(f"  // --- {item.name} ---")
            p = _render_coded(item.items, lines, assignment, memo, coded, shapes, p, done)
        elif cls is LabelDef:
            if p < n and coded[p] is item:
                p += 1
            append(item.render(assignment))
        else:
            if p < n and coded[p] is item:            # (a subclass of Instruction or LabelDef)
                p += 1
            append("  " + item.render(assignment))
    return p


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
