"""Parse AMDGPU assembly text back into ``Instruction`` objects.

Two inputs: ``llvm-objdump -d --symbolize-operands`` output (every instruction carries its address
in the trailing ``// 000000001500: ...`` comment; branch targets print as ``L0`` and label lines as
``0000000000001584 <L0>:``) and our own ``.s`` text (labels as ``name:``, directives ignored).

What comes back is canonical: ``_e32``/``_e64`` suffixes are stripped, ``s_waitcnt`` keeps its
counters as modifiers, VOP3 source modifiers become the ``neg``/``abs`` operand masks, immediates
become ``Imm``. An integer immediate is the 32-bit pattern the hardware sees (inline integers
-16..64 included: the ISA feeds them to float operations as bits, not converted to float); a float
immediate (``1.0``, ``-0.5``, ``0.15915494``) is the fp32 value LLVM printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tensile_asm.isa.hwreg import hwreg_value, sendmsg_value
from tensile_asm.isa.instruction import SDWA_SELECTORS, SDWA_UNUSED, Instruction
from tensile_asm.isa.opcodes import strip_encoding_suffix
from tensile_asm.isa.registers import SPECIAL_WIDTH, Imm, Label, Reg, Special
from tensile_asm.isa.symbolic_fields import buffer_format, swizzle_offset


class AsmParseError(ValueError):
    """A line of assembly we cannot read; the message names the line."""


UNPARSED = "<unparsed>"     # opcode of an objdump line the parser could not read (text in the comment)


_REG = re.compile(r"^([vsa])(\d+)$|^([vsa])\[(\d+):(\d+)\]$")
_SYMBOL_LINE = re.compile(r"^([0-9a-fA-F]+)\s+<([^>]+)>:\s*$")
_ADDRESS_COMMENT = re.compile(r"//\s*([0-9a-fA-F]+):\s*([0-9a-fA-F]{8})?")
_LABEL_DEF = re.compile(r"^([A-Za-z_.$][\w.$]*):\s*(.*)$")
_OBJDUMP_LABEL = re.compile(r"^L\d+$")
_COUNTER = re.compile(r"(\w+)\((\d+)\)")

# Bare modifier flags (no value) of memory and VOP3 instructions.
FLAGS = frozenset({"offen", "idxen", "addr64", "glc", "slc", "dlc", "lds", "gds", "tfe", "lwe", "clamp",
                   "sc0", "sc1", "nt", "d16", "unorm", "da", "r128", "row_mirror",   # not a16: the register a16
                   "row_half_mirror", "row_bcast:15", "row_bcast:31", "wave_shl:1", "wave_rol:1",
                   "wave_shr:1", "wave_ror:1", "bound_ctrl:0", "fi:1"})
# SDWA selector names as small integers (the encoding's values).
_SELECTORS = {name: i for names in (SDWA_SELECTORS, SDWA_UNUSED) for i, name in enumerate(names)}
_BRANCHES = ("s_branch", "s_cbranch_")

# gfx9 s_waitcnt simm16 layout: counter -> (value, all-ones of its field); a field of all ones does not wait.
def decode_waitcnt_gfx9(simm16: int) -> tuple:
    """Counters (as modifiers) that a numeric gfx9 ``s_waitcnt`` operand waits for."""
    vm = (simm16 & 0xF) | ((simm16 >> 14) & 0x3) << 4
    fields = {"vmcnt": (vm, 0x3F), "expcnt": ((simm16 >> 4) & 0x7, 0x7), "lgkmcnt": ((simm16 >> 8) & 0xF, 0xF)}
    return tuple((n, v) for n, (v, ones) in fields.items() if v < ones)


@dataclass
class Function:
    """One symbol's instructions, in address order, with its local labels."""

    name: str
    address: int
    instructions: list = field(default_factory=list)
    labels: dict = field(default_factory=dict)          # label name -> address


def _split_operands(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        parts.append(tail)
    return parts


def _parse_number(tok: str):
    t = tok.strip()
    if t.startswith("lit(") and t.endswith(")"):
        t = t[4:-1]
    try:
        return int(t, 0)
    except ValueError:
        pass
    if re.fullmatch(r"-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?", t) or t.lower() in ("inf", "-inf", "nan"):
        return float(t)
    return None


def _symbolic_simm16(t: str) -> int:
    try:
        return hwreg_value(t) if t.startswith("hwreg(") else sendmsg_value(t)
    except (ValueError, KeyError, IndexError):
        raise AsmParseError(f"cannot read operand {t!r}") from None


def parse_operand(tok: str):
    """One operand token -> (operand, neg, abs). Raises ``AsmParseError`` for nonsense."""
    t = tok.strip()
    neg = absm = False
    if t.startswith("-") and len(t) > 1 and (t[1] in "|vsa" or t[1:].startswith(("abs(", "neg("))) \
            and _parse_number(t) is None:
        neg, t = True, t[1:]
    if t.startswith("neg(") and t.endswith(")"):
        neg, t = True, t[4:-1]
    if t.startswith("|") and t.endswith("|") and len(t) > 2:
        absm, t = True, t[1:-1]
    elif t.startswith("abs(") and t.endswith(")"):
        absm, t = True, t[4:-1]
    m = _REG.match(t)
    if m:
        if m.group(1):
            return Reg(m.group(1), int(m.group(2))), neg, absm
        lo, hi = int(m.group(4)), int(m.group(5))
        if hi < lo:
            raise AsmParseError(f"bad register range {tok!r}")
        return Reg(m.group(3), lo, hi - lo + 1), neg, absm
    if t in SPECIAL_WIDTH:
        return Special(t), neg, absm
    if t.startswith(("hwreg(", "sendmsg(")):          # symbolic s_getreg/s_setreg/s_sendmsg fields
        return Imm(_symbolic_simm16(t)), neg, absm
    num = _parse_number(t)
    if num is not None:
        return Imm(num), neg, absm
    if re.fullmatch(r"[A-Za-z_.$][\w.$]*", t):
        return Label(t), neg, absm
    raise AsmParseError(f"cannot read operand {tok!r}")


def _parse_modifier(tok: str):
    if tok in FLAGS and ":" not in tok:
        return (tok, None)
    if ":" in tok:
        name, value = tok.split(":", 1)
        if (name, value[:1]) in (("offset", "s"), ("format", "[")):       # printed symbolically
            try:
                return (name, (swizzle_offset if name == "offset" else buffer_format)(value))
            except ValueError as e:
                raise AsmParseError(f"cannot read modifier {tok!r}: {e}") from None
        if value.startswith("[") and value.endswith("]"):
            items = [int(x, 0) for x in value[1:-1].split(",") if x.strip()]
            width = 2 if name == "quad_perm" else 1
            return (name, sum(v << (i * width) for i, v in enumerate(items)))
        if value in _SELECTORS:
            return (name, _SELECTORS[value])
        num = _parse_number(value)
        if isinstance(num, int):
            return (name, num)
        raise AsmParseError(f"cannot read modifier {tok!r}")
    if tok in FLAGS or re.fullmatch(r"[a-z_0-9]+", tok):
        return (tok, None)
    raise AsmParseError(f"cannot read modifier {tok!r}")


def _looks_like_modifier(tok: str) -> bool:
    return tok in FLAGS or (":" in tok and not tok.lstrip("-|").startswith(("v[", "s[", "a[", "abs(", "neg(")))


def parse_instruction(text: str, address: int | None = None, source_line: int | None = None) -> Instruction:
    """Parse one instruction (no label, no comment) into a canonical ``Instruction``."""
    text = text.strip()
    if not text:
        raise AsmParseError("empty instruction")
    head, _, rest = text.partition(" ")
    opcode = strip_encoding_suffix(head.strip())
    rest = rest.strip()
    if opcode == "s_waitcnt":
        counters = _COUNTER.findall(rest)
        if counters:
            mods = tuple((n, int(v)) for n, v in counters)
        else:
            value = _parse_number(rest) if rest else None
            if not isinstance(value, int):
                raise AsmParseError(f"cannot read s_waitcnt operand {rest!r}")
            mods = decode_waitcnt_gfx9(value)
        return Instruction(opcode, (), mods, address=address, source_line=source_line)

    parts = _split_operands(rest) if rest else []
    modifiers: list = []
    if parts and not parts[-1].startswith(("hwreg(", "sendmsg(")):      # those hold spaces, no modifiers
        tail = parts[-1].split()
        if len(tail) > 1 or (tail and _looks_like_modifier(tail[0])):
            first_mod = 0 if _looks_like_modifier(tail[0]) else 1
            parts[-1:] = [" ".join(tail[:first_mod])] if first_mod else []
            modifiers = [_parse_modifier(t) for t in tail[first_mod:]]
    operands, neg_mask, abs_mask, sext_mask = [], 0, 0, 0
    for i, p in enumerate(parts):
        sext = p.startswith("sext(") and p.endswith(")")           # SDWA integer source modifier
        op, neg, absm = parse_operand(p[5:-1] if sext else p)
        operands.append(op)
        neg_mask |= neg << i
        abs_mask |= absm << i
        sext_mask |= sext << i
    if opcode.startswith(_BRANCHES) and operands and isinstance(operands[0], Imm) and address is not None:
        simm = operands[0].value & 0xFFFF
        simm -= (simm & 0x8000) << 1
        target = address + 4 + 4 * simm
        operands[0] = Label(f"0x{target:x}", target)
    if neg_mask:
        modifiers.append(("neg", neg_mask))
    if abs_mask:
        modifiers.append(("abs", abs_mask))
    if sext_mask:
        modifiers.append(("sext", sext_mask))
    return Instruction(opcode, tuple(operands), tuple(modifiers), address=address, source_line=source_line)


def _resolve_labels(fn: Function) -> None:
    for i, ins in enumerate(fn.instructions):
        if any(isinstance(o, Label) and o.address is None for o in ins.operands):
            ops = []
            for o in ins.operands:
                if isinstance(o, Label) and o.address is None:
                    if o.name not in fn.labels:
                        raise AsmParseError(f"{fn.name}: branch at 0x{ins.address:x} to unknown label {o.name}")
                    o = Label(o.name, fn.labels[o.name])
                ops.append(o)
            ins.operands = tuple(ops)


def parse_objdump(text: str, functions=None) -> dict[str, Function]:
    """Parse ``llvm-objdump -d --symbolize-operands`` output into functions keyed by symbol name.

    ``functions`` (names of the code object's function symbols) tells symbols from local labels;
    without it, names of the form ``L<n>`` are taken for labels. Given as a mapping name -> address, a
    symbol line at a function's address starts that function under its own name, whatever name objdump
    printed: it prints one symbol per address, and may pick a local label there (Tensile's kernels have
    ``<kernel>_preloaded`` at their entry); the printed name is kept as a label of the function.
    """
    result: dict[str, Function] = {}
    current: Function | None = None
    at = {a: n for n, a in functions.items()} if isinstance(functions, dict) else {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _SYMBOL_LINE.match(line)
        if m:
            addr, name = int(m.group(1), 16), m.group(2)
            if addr in at and at[addr] != name:
                current = result[at[addr]] = Function(at[addr], addr)
                current.labels[name] = addr
                continue
            is_function = name in functions if functions is not None else not _OBJDUMP_LABEL.match(name)
            if is_function or current is None:
                current = result[name] = Function(name, addr)
            else:
                current.labels[name] = addr
            continue
        if not raw.startswith((" ", "\t")) or current is None or line.strip() == "...":
            continue                                   # file header, section titles, elided padding
        body, _, comment = line.partition("//")
        am = _ADDRESS_COMMENT.search(line)
        if am is None:
            raise AsmParseError(f"objdump line {lineno}: no address comment in {line.strip()!r}")
        body = body.strip()
        if not body:
            continue
        try:
            ins = parse_instruction(body, int(am.group(1), 16))   # .s lines come from attach_source
        except AsmParseError as e:
            # Keep going: a line we cannot read only matters if it is executed (UNPARSED says why).
            ins = Instruction(UNPARSED, (), (), comment=f"{body} ({e})", address=int(am.group(1), 16))
        if am.group(2) and ins.opcode.startswith(_BRANCHES) and ins.operands and isinstance(ins.operands[0], Label):
            # The encoding is the ground truth (objdump prints no label for a branch to the symbol itself).
            simm = int(am.group(2), 16) & 0xFFFF
            simm -= (simm & 0x8000) << 1
            ins.operands = (Label(ins.operands[0].name, ins.address + 4 + 4 * simm),) + ins.operands[1:]
        current.instructions.append(ins)
    for fn in result.values():
        _resolve_labels(fn)
    return result


def _strip_comment(line: str) -> str:
    for marker in ("//", ";"):
        idx = line.find(marker)
        if idx >= 0:
            line = line[:idx]
    return line.strip()


def parse_asm(text: str) -> tuple[list[Instruction], dict[str, int]]:
    """Parse our own ``.s`` text: the instructions in order, and each label's instruction index.

    Directives (``.text``, ``.amdhsa_*`` ...) are skipped, as are the kernel-descriptor and metadata
    blocks. Branch operands stay ``Label(name)`` (no addresses: nothing was assembled).
    """
    instructions: list[Instruction] = []
    labels: dict[str, int] = {}
    skipping = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if skipping:
            if line.startswith(skipping):
                skipping = None
            continue
        if line.startswith(".amdhsa_kernel"):
            skipping = ".end_amdhsa_kernel"
            continue
        if line.startswith(".amdgpu_metadata"):
            skipping = ".end_amdgpu_metadata"
            continue
        line = _strip_comment(line)
        while True:
            m = _LABEL_DEF.match(line)
            if not m:
                break
            labels[m.group(1)] = len(instructions)
            line = m.group(2).strip()
        if not line or line.startswith("."):
            continue
        try:
            instructions.append(parse_instruction(line, None, lineno))
        except AsmParseError as e:
            raise AsmParseError(f"line {lineno} ({line!r}): {e}") from None
    return instructions, labels


__all__ = ["UNPARSED", "AsmParseError", "Function", "parse_asm", "parse_instruction", "parse_objdump", "parse_operand",
           "decode_waitcnt_gfx9"]
