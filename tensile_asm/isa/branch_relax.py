"""The branch relaxation pass: replace every branch whose target is beyond its 16-bit offset by Tensile's
long-branch form.

``s_branch`` and ``s_cbranch_*`` jump by a signed 16-bit count of dwords from the instruction after them
(-32768 .. 32767: about 128 KiB either way). A kernel larger than that (a big unrolled loop: many ThreadTile
elements times DepthU, PrefetchGlobalRead 2) cannot reach its loop end. Run last, on the final stream (after
the waitcnt and hazard passes, which reason over the short branches: see below), the pass measures every
instruction with ``encoding.encoded_bytes`` (an upper bound, so a branch found to fit does fit), and
replaces each branch out of reach, as Tensile's ``longBranch`` (KernelWriterAssembly.py) does, by::

    s_getpc_b64 s[t:t+1]                 // the address of the next instruction
  .LLongBranchN:
    s_add_u32   s[t], s[t], target-.LLongBranchN
    s_addc_u32  s[t+1], s[t+1], 0        // -1 for a target behind (the offset's sign extension)
    s_setpc_b64 s[t:t+1]

a conditional branch by its inverse around that (``s_cbranch_scc1 L`` -> ``s_cbranch_scc0 .LLongBranchN_skip``,
the long form, ``.LLongBranchN_skip:``). The direction is known here, so the form is Tensile's
``longBranchPositive``/``longBranchNegative`` with the label difference as the literal. Longer branches move
other targets further away, so the pass repeats until no branch is out of reach (a branch once relaxed stays
so: sizes only grow, the fixed point is reached in a few rounds). ``s[t:t+1]`` is a pair no other code uses
(``allocation.spare_registers``, asked for only when a branch must be relaxed). A kernel whose branches all
fit is left untouched.

Why after the other passes is safe: the added instructions are scalar ALU, with no memory counter and no
hazard rule of ``isa/<gfx>.yaml`` among them (none names s_getpc/s_setpc on GFX9), and each only lengthens
a path into the target (the waits and wait states already placed stay enough); the fall-through of an
inverted branch has as many instructions as before. The long form writes SCC (the add with carry): the
pass refuses (an internal error) a target whose code reads SCC before writing it, which no kernel does.
"""

from __future__ import annotations

from typing import Callable

from tensile_asm.isa.encoding import MAX_INSTRUCTION_BYTES, encoded_bytes
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.instruction_set import InstructionSet
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import Label, LabelOffset, Reg

SIMM16_MIN, SIMM16_MAX = -(1 << 15), (1 << 15) - 1
_BRANCHES = ("s_branch", "s_cbranch_")
INVERSE = {"s_cbranch_scc0": "s_cbranch_scc1", "s_cbranch_scc1": "s_cbranch_scc0",
           "s_cbranch_vccz": "s_cbranch_vccnz", "s_cbranch_vccnz": "s_cbranch_vccz",
           "s_cbranch_execz": "s_cbranch_execnz", "s_cbranch_execnz": "s_cbranch_execz"}


def long_branch_bytes(opcode: str) -> int:
    """Size of the long form (the inverted short branch, s_getpc 4, s_add with literal 8, s_addc 4, s_setpc 4)."""
    return 20 + (0 if opcode == "s_branch" else 4)


def _target(ins: Instruction) -> str | None:
    for o in ins.operands:
        if o.__class__ is Label:
            return o.name
    return None


def far_branches(items: list, arch_name: str, relaxed: set | None = None) -> set:
    """Positions (in ``items``, instructions and label definitions) of the branches whose targets are out of
    the 16-bit reach, the long forms of ``relaxed`` (positions) counted, to the fixed point."""
    relaxed = set(relaxed or ())
    branches = [i for i, x in enumerate(items)
                if x.__class__ is Instruction and x.opcode.startswith(_BRANCHES) and _target(x) is not None]
    if not branches:
        return relaxed
    # No offset can exceed the whole stream: skip the measuring when even its largest size fits.
    if len(items) * MAX_INSTRUCTION_BYTES + len(branches) * long_branch_bytes("") <= 4 * SIMM16_MAX:
        return relaxed
    sizes = [encoded_bytes(x, arch_name) if x.__class__ is Instruction else 0 for x in items]
    while True:
        address, at, labels = 0, [], {}
        for i, x in enumerate(items):
            at.append(address)
            if x.__class__ is LabelDef:
                labels[x.name] = address
            elif i in relaxed:
                address += long_branch_bytes(x.opcode)
            else:
                address += sizes[i]
        grown = False
        for i in branches:
            if i in relaxed:
                continue
            name = _target(items[i])
            if name not in labels:
                continue
            offset = (labels[name] - (at[i] + 4)) // 4
            if not SIMM16_MIN <= offset <= SIMM16_MAX:
                relaxed.add(i)
                grown = True
        if not grown:
            return relaxed


def _reads_scc_first(items: list, label: str) -> bool:
    """Whether the code at ``label`` reads SCC before anything writes it (following the fall-through only,
    up to the next branch or end)."""
    start = next(i for i, x in enumerate(items) if x.__class__ is LabelDef and x.name == label)
    for x in items[start + 1:]:
        if x.__class__ is not Instruction:
            continue
        info = x.info
        if "scc" in info.implicit_uses:
            return True
        if "scc" in info.implicit_defs or x.opcode.startswith(_BRANCHES) or x.opcode in ("s_endpgm", "s_setpc_b64"):
            return False
    return False


def relax_branches(target: Module | list, arch, spare_pair: Callable[[], Reg], size: int | None = None) -> int:
    """Replace the branches of ``target`` (a Module, changed in place down its tree; or a list of
    instructions and label definitions) that cannot reach their label with the long form. ``spare_pair()``
    gives the SGPR pair the long forms use (called only if one is needed). ``size``: how many instructions
    and label definitions ``target`` has, when the caller knows (else its items are counted). Returns how
    many were relaxed."""
    if (_item_count(target) if size is None else size) * MAX_INSTRUCTION_BYTES <= 4 * SIMM16_MAX:
        return 0            # even at the largest size per item, every offset fits (most kernels: no flattening)
    items = target.code() if isinstance(target, Module) else [x for x in target if x.__class__ in (Instruction, LabelDef)]
    far = far_branches(items, arch.name)
    if not far:
        return 0
    isa = InstructionSet(arch)
    pair = spare_pair()
    taken = {x.name for x in items if x.__class__ is LabelDef}
    labels = {x.name: i for i, x in enumerate(items) if x.__class__ is LabelDef}
    inserted, drop, n = {}, set(), 0
    for i in sorted(far):
        ins = items[i]
        name = _target(ins)
        if _reads_scc_first(items, name):
            raise AssertionError(f"branch relaxation: the code at {name} reads SCC, which the long branch to it writes")
        while f".LLongBranch{n}" in taken or f".LLongBranch{n}_skip" in taken:
            n += 1
        pc, skip = f".LLongBranch{n}", f".LLongBranch{n}_skip"
        n += 1
        lo, hi = pair.sub(0), pair.sub(1)
        backward = labels[name] < i
        long_form = [isa.inst("s_getpc_b64", pair, comment=f"long branch to {name} (beyond the 16-bit offset)"),
                     LabelDef(pc),
                     isa.inst("s_add_u32", lo, lo, LabelOffset(0, name, pc)),
                     isa.inst("s_addc_u32", hi, hi, -1 if backward else 0, comment="the offset's sign"),
                     isa.inst("s_setpc_b64", pair)]
        if ins.opcode == "s_branch":
            seq = long_form
        else:
            if ins.opcode not in INVERSE:
                raise AssertionError(f"branch relaxation: no inverse of {ins.opcode}")
            seq = [isa.inst(INVERSE[ins.opcode], Label(skip), comment=f"long form of {ins.opcode} {name}"),
                   *long_form, LabelDef(skip)]
        # the replacement goes before the branch's successor, so the branch itself can be dropped
        inserted[id(ins)] = seq
        drop.add(id(ins))
    _replace(target, inserted, drop)
    return len(far)


def _item_count(target) -> int:
    """Items of a list, or of a Module's tree (sub-modules counted too: an upper bound of its instructions)."""
    if not isinstance(target, Module):
        return len(target)
    n, stack = 0, [target]
    while stack:
        m = stack.pop()
        n += len(m.items)
        stack.extend([x for x in m.items if x.__class__ is Module])
    return n


def _replace(target, inserted: dict, drop: set) -> None:
    """Put ``inserted[id(x)]`` in place of each ``x`` (in its sub-module of a Module tree, or in a list)."""
    def spliced(items):
        out = []
        for x in items:
            got = inserted.get(id(x))
            if got is not None:
                out.extend(got)
            if id(x) not in drop:
                out.append(x)
        return out

    if isinstance(target, Module):
        stack = [target]
        while stack:
            m = stack.pop()
            stack.extend(x for x in m.items if isinstance(x, Module))
            m.items = spliced(m.items)
    else:
        target[:] = spliced(target)


__all__ = ["INVERSE", "SIMM16_MAX", "SIMM16_MIN", "far_branches", "long_branch_bytes",
           "relax_branches"]
