"""Instructions for one architecture, checked when they are created.

``InstructionSet(arch).inst(opcode, *operands)`` builds an ``Instruction`` only if ``opcode`` is in
``isa/instructions/<arch>.txt`` (what LLVM knows for that target), its operands match the row of
``operand_table`` in count, kind and register count, and each register range is one the arch can
take there (AGPRs it has, aligned tuples); otherwise it raises ``InstructionError`` naming the
opcode, the architecture and the operand. ``waitcnt`` checks each count against the arch's
counter limits. The writer and the passes create instructions only through an ``InstructionSet``;
the plain ``instruction.inst`` stays for text that LLVM already checked (the asm parser's input).
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from operator import attrgetter
from typing import Iterable

from tensile_asm.isa.arch import Arch
from tensile_asm.isa.counters import counter_limits
from tensile_asm.isa.instruction import Instruction, inst, waitcnt
from tensile_asm.isa.instruction_lists import LISTED_ARCHES, load_instructions
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.opcodes import op_info, strip_encoding_suffix
from tensile_asm.isa.operand_table import OperandSpec, signature
from tensile_asm.isa.registers import _OPERAND_TYPES, SPECIAL_WIDTH, Imm, Label, Reg, Special, VRegRef, as_operand

MEMORY_ENCODINGS = ("DS", "MUBUF", "MTBUF", "FLAT", "SMEM")
KIND_NAMES = {"v": "VGPR", "a": "AGPR", "s": "SGPR", "i": "constant", "l": "label", "o": "off"}


class InstructionError(ValueError):
    """An instruction the architecture does not have, or operands its encoding cannot take."""


@lru_cache(maxsize=None)
def _listed(arch_name: str) -> dict[str, str]:
    return load_instructions(arch_name)


def _mnemonics(arch_name: str) -> set[str]:
    return {strip_encoding_suffix(n) for n in _listed(arch_name)}


class InstructionSet:
    """The instructions of ``arch``: a factory that checks what it creates."""

    def __init__(self, arch: Arch):
        self.arch = arch
        self._passed = _PASSED.setdefault(arch.name, set())    # shapes checked on this arch (``check``)
        self._passed_plain = _PASSED_PLAIN.setdefault(arch.name, set())    # of modifier-free ones (``inst``)
        # id(module) -> (module, the module it repeats): what ``repeat`` made (allocation.allocate reads the code
        # it repeats once)
        self.repeats: dict[int, tuple[Module, Module]] = {}

    def encoding(self, opcode: str) -> str | None:
        """The listed encoding of ``opcode`` (without a suffix: of its 32-bit form if it has one)."""
        return _row(self.arch.name, opcode)[0]

    def inst(self, opcode: str, *operands, mods: Iterable = (), comment: str = "") -> Instruction:
        if mods:    # instruction.inst normalises the modifiers (Instruction.info reads glc/sc0/lds from them)
            ins = inst(opcode, *operands, mods=mods, comment=comment)
            self.check(ins)
            return ins
        # without modifiers (the writer's hottest call): instruction.inst inlined, checked once per shape
        # (``_PASSED_PLAIN``)
        info = _PLAIN_INFO.get(opcode)
        if info is None:        # op_info raises KeyError for an opcode we cannot describe
            info = _PLAIN_INFO[opcode] = op_info(opcode, False, False)
        if not _OPERAND_TYPES.issuperset(map(type, operands)):   # e.g. an int or a whole VReg: converted
            operands = tuple(map(as_operand, operands))
        shape = (opcode, *map(_SHAPE_OF, operands))
        ins = Instruction(opcode, operands, (), comment, None, None, info)
        if shape not in self._passed_plain:
            self._check(ins)
            self._passed_plain.add(shape)
        return ins

    def repeat(self, module: Module) -> Module:
        """The same code again as new objects, for code written once and repeated in a kernel (the loop's copies of
        the MAC steps), which would cost as much again to write: each instruction a new ``Instruction`` of the same
        opcode, operands (the same operand objects, the same tuple), modifiers and comment, each sub-module a new
        ``Module`` (every instruction of a kernel is its own object: the passes place their waits by identity).
        Checked as it was created; labels are not repeated (a label is defined once). Recorded in ``repeats``."""
        copy = _repeat(module)
        self.repeats[id(copy)] = (copy, module)
        return copy

    def waitcnt(self, vmcnt: int | None = None, lgkmcnt: int | None = None, expcnt: int | None = None,
                comment: str = "") -> Instruction:
        limits = counter_limits(self.arch)
        for name, value in (("vmcnt", vmcnt), ("lgkmcnt", lgkmcnt), ("expcnt", expcnt)):
            limit = limits.of(name)
            if value is not None and not 0 <= value <= limit:
                raise InstructionError(f"s_waitcnt {name}({value}) on {self.arch.name}: the count must be 0..{limit}")
        return waitcnt(vmcnt=vmcnt, lgkmcnt=lgkmcnt, expcnt=expcnt, comment=comment)

    def check(self, ins: Instruction) -> None:
        shape = _shape(ins)
        passed = self._passed
        if shape in passed:
            return
        self._check(ins)
        if shape is not None:
            passed.add(shape)

    def _check(self, ins: Instruction) -> None:
        opcode = ins.opcode
        encoding, specs = _row(self.arch.name, opcode)
        if encoding is None:
            raise InstructionError(self._unknown(opcode))
        where = f"{opcode} on {self.arch.name}"
        if specs is None:
            raise InstructionError(f"{where}: no operand row for it in tensile_asm/isa/operand_table.py; add one")
        if opcode.startswith(("global_atomic", "flat_atomic")) and ins.info.num_defs == 1:
            specs = (specs[1],) + specs         # glc/sc0: the atomic returns the old value first
        elif encoding == "MUBUF" and ins.info.memory == "load" and ins.has_modifier("lds"):
            specs = specs[1:]                   # LDS DMA: the data goes to LDS, no VGPR operand (LLVM omits it)
        if len(ins.operands) != len(specs):
            raise InstructionError(f"{where} takes {len(specs)} operands ({' '.join(map(str, specs)) or 'none'}), "
                                   f"given {len(ins.operands)}: {', '.join(map(str, ins.operands))}")
        for i, (operand, spec) in enumerate(zip(ins.operands, specs)):
            if not fits(operand, spec):
                raise InstructionError(f"{where}: operand {i} must be {describe_spec(spec)}, given {describe(operand)}")
            if isinstance(operand, (Reg, VRegRef)):
                why = self._placement(operand, encoding)
                if why:
                    raise InstructionError(f"{where}: operand {i} ({describe(operand)}): {why}")

    def _placement(self, reg, encoding: str) -> str | None:
        """Why the arch cannot take this register range here: AGPRs it lacks (or, before gfx90a, in
        memory instructions), or a range that starts off its alignment (a virtual register's slice
        is checked by its offset; the allocator aligns the base, or the base is fixed: then from there)."""
        vgpr = self.arch.vgpr
        if reg.kind == "a" and not vgpr["accum"]:
            return f"{self.arch.name} has no AGPRs"
        if reg.kind == "a" and encoding in MEMORY_ENCODINGS and not vgpr["unified"]:
            return f"memory instructions on {self.arch.name} take no AGPRs (gfx90a and later do)"
        start = reg.index if isinstance(reg, Reg) else reg.offset + (reg.vreg.fixed or 0)
        align = vgpr["tuple_alignment"] if reg.kind != "s" else (2 if reg.count == 2 else 4)
        if reg.count > 1 and start % align:
            return f"a range of {reg.count} registers must start at a multiple of {align} on {self.arch.name}"
        return None

    def _unknown(self, opcode: str) -> str:
        text = f"{opcode} is not an instruction of {self.arch.name} (isa/instructions/{self.arch.name}.txt)"
        elsewhere = [a for a in LISTED_ARCHES if a != self.arch.name and opcode in _mnemonics(a) | set(_listed(a))]
        if elsewhere:
            return f"{text}; it is one of {', '.join(elsewhere)}"
        close = difflib.get_close_matches(opcode, _mnemonics(self.arch.name), n=1)
        return f"{text}; did you mean {close[0]}?" if close else text


# arch name -> the shapes of instructions that passed ``check`` there: what the check reads of an instruction
# is its opcode, its defs (an atomic's depend on its modifiers), and per operand its ``_shape`` (registers.py):
# the type, register kind and count, special-register name, and the start of a range modulo 4 (every
# alignment rule divides 4). ``_PASSED_PLAIN``: the same of instructions without modifiers, whose defs
# follow from the opcode (``op_info(opcode)``), so their shape leaves them out.
_PASSED: dict[str, set] = {}
_PASSED_PLAIN: dict[str, set] = {}
_PLAIN_INFO: dict = {}          # opcode -> op_info(opcode) (no modifiers)
_SHAPE_OF = attrgetter("_shape")


def _repeat(module: Module) -> Module:
    return Module(module.name, [Instruction(x.opcode, x.operands, x.modifiers, x.comment, x.address, x.source_line,
                                            x._info) if x.__class__ is Instruction else _repeat_item(x)
                                for x in module.items])


def _repeat_item(x):
    if x.__class__ is Module:
        return _repeat(x)
    if isinstance(x, (LabelDef, Instruction, Module)):
        raise TypeError(f"InstructionSet.repeat: {x!r} cannot be repeated")
    return x        # a Comment: a value


def _shape(ins: Instruction) -> tuple | None:
    try:
        return (ins.opcode, ins.info.num_defs, *[o._shape for o in ins.operands])
    except (KeyError, AttributeError):   # an opcode op_info cannot describe, or not an operand: checked in full
        return None


@lru_cache(maxsize=None)
def _row(arch_name: str, opcode: str) -> tuple[str | None, tuple | None]:
    """(listed encoding, operand specs of the form written) of ``opcode`` on ``arch_name``. A forced
    ``_e32`` VOP2/VOPC takes only a VGPR as its second source."""
    names = _listed(arch_name)
    encoding = next((names[n] for n in (opcode, f"{opcode}_e32", f"{opcode}_e64") if n in names), None)
    specs = signature(strip_encoding_suffix(opcode)) if encoding else None
    defs = op_info(opcode).num_defs if specs else 0
    if specs and opcode.endswith("_e32") and encoding in ("VOP2", "VOPC") and len(specs) > defs + 1:
        width = specs[defs + 1].alternatives[0][1]
        vgpr = OperandSpec((("v", width),), f"v{width if width > 1 else ''}")
        specs = specs[:defs + 1] + (vgpr,) + specs[defs + 2:]
    return encoding, specs


def fits(operand, spec: OperandSpec) -> bool:
    for kinds, width in spec.alternatives:
        if isinstance(operand, (Reg, VRegRef)):
            if operand.kind in kinds and operand.count == width:
                return True
        elif isinstance(operand, Special):
            if operand.name == "off":
                if "o" in kinds:
                    return True
            elif "s" in kinds and SPECIAL_WIDTH[operand.name] == width:
                return True
        elif isinstance(operand, Imm) and "i" in kinds or isinstance(operand, Label) and "l" in kinds:
            return True
    return False


def describe_spec(spec: OperandSpec) -> str:
    alts = []
    for kinds, width in spec.alternatives:
        names = " or ".join(KIND_NAMES[k] for k in kinds)
        regs = [k for k in kinds if k in "vas"]
        alts.append(f"{names} x{width}" if regs and width > 1 else names)
    return " / ".join(alts) + f" ({spec})"


def describe(operand) -> str:
    if isinstance(operand, (Reg, VRegRef)):
        return f"{KIND_NAMES[operand.kind]} x{operand.count} {operand}" if operand.count > 1 else \
            f"{KIND_NAMES[operand.kind]} {operand}"
    if isinstance(operand, Special):
        return "off" if operand.name == "off" else f"{operand.name} (SGPR x{SPECIAL_WIDTH[operand.name]})"
    if isinstance(operand, Imm):
        return f"constant {operand}"
    return f"label {operand}"


__all__ = ["InstructionError", "InstructionSet", "describe", "fits"]
