"""Typed instructions: an opcode, its operands in assembly order, and its modifiers.

Which operands are written and which are read comes from ``opcodes.op_info``; text is rendered
only at the end, after register allocation, from the same objects the passes reason over. The asm
parser builds ``Instruction`` objects from text LLVM already accepted; everything that generates
code creates them through ``instruction_set.InstructionSet(arch)``, checked for the arch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from tensile_asm.isa.opcodes import OpInfo, op_info
from tensile_asm.isa.registers import _OPERAND_TYPES, Imm, Label, Operand, Reg, Special, VReg, VRegRef, as_operand

# Modifiers are (name, value) pairs; value None means a bare flag such as ``offen``.
# Source modifiers of VOP3 floats are two masks, ('neg', bits) and ('abs', bits), where bit i
# applies to ``operands[i]``; they render inline as ``-v1`` and ``|v1|``.
Modifier = tuple[str, int | None]
OPERAND_MASK_MODIFIERS = ("neg", "abs", "sext")      # sext: SDWA integer sources, ``sext(v1)``

WAITCNT_COUNTERS = ("vmcnt", "expcnt", "lgkmcnt")

# SDWA modifier values (their encodings are the indices), rendered by name as LLVM prints them.
SDWA_SELECTORS = ("BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD")
SDWA_UNUSED = ("UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE")
_NAMED_VALUES = {"dst_sel": SDWA_SELECTORS, "src0_sel": SDWA_SELECTORS, "src1_sel": SDWA_SELECTORS,
                 "dst_unused": SDWA_UNUSED}


@dataclass(slots=True)      # slotted: the writer creates a few thousand per kernel and the passes read them all
class Instruction:
    opcode: str
    operands: tuple = ()
    modifiers: tuple[Modifier, ...] = ()
    comment: str = ""
    # Filled in for instructions parsed back from a code object.
    address: int | None = None
    source_line: int | None = None
    _info: OpInfo | None = field(default=None, repr=False, compare=False)

    @property
    def info(self) -> OpInfo:
        info = self._info
        if info is None:
            if self.modifiers:
                info = op_info(self.opcode, self.has_modifier("glc") or self.has_modifier("sc0"),
                               self.has_modifier("lds"))
            else:
                info = op_info(self.opcode, False, False)
            self._info = info
        return info

    def has_modifier(self, name: str) -> bool:
        for m, _ in self.modifiers:
            if m == name:
                return True
        return False

    def modifier(self, name: str, default: int | None = None) -> int | None:
        for m, v in self.modifiers:
            if m == name:
                return v
        return default

    @property
    def defs(self) -> tuple:
        return self.operands[: self.info.num_defs]

    @property
    def uses(self) -> tuple:
        return self.operands[self.info.num_defs:]

    def registers(self) -> Iterable:
        """Every register operand (physical or virtual), defs first."""
        return (o for o in self.operands if isinstance(o, (Reg, VRegRef)))

    def render(self, assignment: Mapping[VReg, int] | None = None, memo: dict | None = None) -> str:
        """The instruction's text, virtual registers placed by ``assignment``. ``memo`` (id(operand) -> its
        text), when given, is shared by the instructions of one rendering, whose operands stay alive."""
        if memo is None:
            memo = {}
        if self.opcode == "s_waitcnt":
            text = "s_waitcnt " + " ".join(f"{n}({v})" for n, v in self.modifiers)
        elif not self.modifiers:
            return plain_text(self, assignment, memo)
        else:
            named, masks = [], False         # the modifiers written after the operands, as text
            for n, v in self.modifiers:
                if n in OPERAND_MASK_MODIFIERS:
                    masks = True
                else:
                    named.append(n if v is None else f"{n}:{_value_text(n, v)}")
            neg, absm, sext = ((self.modifier(m, 0) or 0 for m in OPERAND_MASK_MODIFIERS) if masks else (0, 0, 0))
            texts, marked = [], absm | neg | sext
            for i, o in enumerate(self.operands):
                t = memo.get(id(o))
                if t is None:
                    t = memo[id(o)] = render_operand(o, assignment)
                if marked >> i & 1:
                    if absm >> i & 1:
                        t = f"|{t}|"
                    if neg >> i & 1:
                        t = f"-{t}"
                    if sext >> i & 1:
                        t = f"sext({t})"
                texts.append(t)
            text = self.opcode
            if texts:
                text += " " + ", ".join(texts)
            if named:
                text += " " + " ".join(named)
        if self.comment:
            text = f"{text:<48} // {self.comment}"
        return text

    def __str__(self) -> str:
        return self.render()


def _value_text(name: str, value: int) -> str:
    names = _NAMED_VALUES.get(name)
    return names[value] if names and 0 <= value < len(names) else str(value)


def plain_text(ins: Instruction, assignment, memo: dict) -> str:
    """``ins.render(assignment, memo)`` of an instruction without modifiers (not ``s_waitcnt``)."""
    text = ins.opcode
    if ins.operands:
        texts = []
        for o in ins.operands:
            t = memo.get(id(o))
            if t is None:
                t = memo[id(o)] = render_operand(o, assignment)
            texts.append(t)
        text += " " + ", ".join(texts)
    if ins.comment:
        return f"{text:<48} // {ins.comment}"
    return text


def render_operand(o, assignment) -> str:
    """The text of one operand, a virtual register placed by ``assignment`` (its own text when unplaced)."""
    if type(o) is VRegRef:
        index = assignment.get(o.vreg) if assignment is not None else None
        if index is None:
            return str(o)
        index += o.offset                     # str(o.resolve(assignment)), without building the Reg
        return f"{o.vreg.kind}{index}" if o.count == 1 else f"{o.vreg.kind}[{index}:{index + o.count - 1}]"
    return str(o)


def inst(opcode: str, *operands, mods: Iterable = (), comment: str = "") -> Instruction:
    """Build an instruction for no particular architecture: the opcode need only have a family in
    ``opcodes.op_info`` and the operands be operands. Writers and passes create instructions through
    ``instruction_set.InstructionSet(arch)``, which checks them against the arch; this is its builder,
    and what tests use for arch-free instruction objects."""
    info = op_info(opcode, False, False)  # raises KeyError for an opcode we cannot describe
    if mods:
        norm_mods = tuple([(m, None) if isinstance(m, str) else (m[0], m[1]) for m in mods])
        info = None                         # glc/sc0/lds change it: Instruction.info asks again
    else:
        norm_mods = ()
    ops = tuple([o if o.__class__ in _OPERAND_TYPES else as_operand(o) for o in operands])
    return Instruction(opcode, ops, norm_mods, comment, None, None, info)


def waitcnt(vmcnt: int | None = None, lgkmcnt: int | None = None, expcnt: int | None = None,
            comment: str = "") -> Instruction:
    """``s_waitcnt`` with named counters; a counter left out is not waited for. Unchecked: writers
    and passes use ``InstructionSet(arch).waitcnt``, which checks the counts against the arch."""
    mods = tuple((n, v) for n, v in (("vmcnt", vmcnt), ("expcnt", expcnt), ("lgkmcnt", lgkmcnt)) if v is not None)
    if not mods:
        raise ValueError("s_waitcnt needs at least one counter")
    return Instruction("s_waitcnt", (), mods, comment)


__all__ = ["Instruction", "inst", "waitcnt", "Imm", "Label", "Reg", "Special", "VReg", "VRegRef"]
