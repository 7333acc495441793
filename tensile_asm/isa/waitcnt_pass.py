"""The waitcnt pass: insert the ``s_waitcnt`` a kernel needs, and no other.

Writer components only state what they load and what they use; this pass, run after register
allocation (physical registers: two virtual registers sharing one are one register to a pending
load), removes every ``s_waitcnt`` already in the stream and inserts, before each instruction that
needs it, one ``s_waitcnt`` naming the counters it must wait for (the rules: ``waitcnt_state.py``).

Control flow is a forward dataflow: the state at a label is the join of the states of every branch
to it and of the fall-through, loops included (a load issued at the end of an iteration is pending
at the loop head), iterated until no label's state grows. The states are finite (newer-counts stop
at the counter's maximum), so it ends. Running the pass again gives the same stream (idempotent).
"""

from __future__ import annotations

from tensile_asm.isa.counters import COUNTER_OF, counter_limits
from tensile_asm.isa.hazards import key_name, operand_keys
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.instruction_set import InstructionSet
from tensile_asm.isa.module import LabelDef, Module, insert_before
from tensile_asm.isa.registers import Label, Special
from tensile_asm.isa.waitcnt_state import LDS_DMA, LDS_WRITE, State

_TERMINATORS = ("s_branch", "s_endpgm", "s_setpc_b64")
_EXEC_KEYS = frozenset(operand_keys(Special("exec")))
_VGPR_KEYS = range(256, 768)


class _Facts:
    """What one instruction means to the counters (computed once per instruction)."""

    __slots__ = ("reads", "writes", "touched", "write_only", "kind", "completes", "locks", "barrier", "ds",
                 "writes_exec", "ends_block")

    def __init__(self, ins: Instruction, assignment):
        info = ins.info
        keys = lambda ops: tuple(k for o in ops for k in operand_keys(o, assignment))   # noqa: E731
        self.reads = keys(ins.uses) + _implicit_keys(info.implicit_uses)
        self.writes = keys(ins.defs) + _implicit_keys(info.implicit_defs)
        self.touched = frozenset(self.reads + self.writes)
        self.write_only = frozenset(self.writes) - frozenset(self.reads)
        self.writes_exec = bool(_EXEC_KEYS.intersection(self.writes))
        self.kind = _kind(ins)
        self.ds = info.family == "DS" and self.kind == "lds"
        self.barrier = ins.opcode == "s_barrier"
        self.ends_block = False
        self.completes, self.locks = (), ()
        if self.kind is None:
            return
        self.completes = self.writes
        if self.kind == "vm" and info.num_defs == 0 and info.memory == "load":     # LDS-DMA: writes LDS
            self.completes = (LDS_WRITE, LDS_DMA)
        elif self.ds and info.memory in ("store", "atomic"):
            self.completes = self.writes + (LDS_WRITE,)
        if self.kind == "gds":                          # its address and data VGPRs stay locked (expcnt)
            self.locks = tuple(k for k in self.reads if k in _VGPR_KEYS)


_IMPLICIT_KEYS: dict = {}


def _implicit_keys(names: tuple) -> tuple:
    """The register keys of an opcode's implicit operands (SCC left out), computed once per tuple."""
    got = _IMPLICIT_KEYS.get(names)
    if got is None:
        got = _IMPLICIT_KEYS[names] = tuple(k for n in names if n != "scc" for k in operand_keys(Special(n)))
    return got


def _kind(ins: Instruction) -> str | None:
    counter = ins.info.counter
    if counter == "lgkm":
        return "gds" if ins.has_modifier("gds") else "lds"
    return counter                                       # 'vm', 'smem' or None


def _needs(st: State, f: _Facts, limits, only: str | None = None) -> dict:
    """counter -> (count, batch open, why) that must hold before the instruction of ``f`` issues (``only``:
    that counter alone). ``why`` is a register key or a sentence."""
    need: dict = {}
    entries = st.entries
    if entries:
        for k in f.touched:
            by = entries.get(k)
            if by is None:
                continue
            for kind, e in by.items():
                if only is not None and COUNTER_OF[kind] != only:
                    continue
                if kind == "exp" and k not in f.writes:
                    continue                              # a GDS lock forbids writes only
                if kind == f.kind and kind != "smem" and k in f.write_only:
                    continue                              # WAW with a load of the same in-order kind
                n = 0 if kind == "smem" else min(e.newer, limits.of(COUNTER_OF[kind]) - 1)
                counter = COUNTER_OF[kind]
                if counter not in need or n < need[counter][0]:
                    need[counter] = (n, e.open, k)
    if f.writes_exec and st.counts.get("exp") and only in (None, "expcnt"):
        need["expcnt"] = (0, True, "EXEC (GDS reads it late)")
    for applies, key, kinds, why in ((f.barrier, LDS_WRITE, ("lds", "vm"), "LDS writes before s_barrier"),
                                     (f.ds, LDS_DMA, ("vm",), "LDS-DMA loads before a DS access")):
        if applies:
            for kind in kinds:
                got = st.need(key, kind, limits)
                counter = COUNTER_OF[kind]
                if got is not None and (only is None or only == counter) and (
                        counter not in need or got[0] < need[counter][0]):
                    need[counter] = (*got, why)
    return need


def _with_batch(need: dict, st: State, later, limits) -> dict:
    """Widen each wait of ``need`` to what the instructions ``later`` (the straight-line code after it)
    need from the same batch, up to the next operation issued on that counter."""
    out = {}
    for counter, (n, batch, what) in need.items():
        for f in later:
            if f is None or (f.kind is not None and COUNTER_OF[f.kind] == counter):
                break                                     # a label, a branch, or the next issue
            m = _needs(st, f, limits, counter).get(counter)
            if m is not None and m[1] == batch and m[0] < n:
                n = m[0]
        out[counter] = (n, what)
    return out


def _step(st: State, f: _Facts, later, limits) -> dict:
    """Apply one instruction to ``st`` (its wait first); returns the wait it needs."""
    need = _needs(st, f, limits)
    if need:
        need = _with_batch(need, st, later, limits)
    for counter, (n, _) in need.items():
        st.wait(counter, n)
    if f.kind is None:
        st.overwrite(f.writes)
    else:
        st.issue(f.kind, f.completes, limits)
        if f.locks:
            st.issue("exp", f.locks, limits)
    return need


def _targets(ins: Instruction) -> list[str]:
    if ins.opcode.startswith(("s_branch", "s_cbranch_")):
        return [o.name for o in ins.operands if isinstance(o, Label)]
    return []


def required_waits(items, arch, assignment=None) -> dict:
    """id(instruction) -> {counter: (count, what)} for the instructions of ``items`` (instructions and
    label definitions; existing ``s_waitcnt`` ignored) that need a wait before them."""
    limits = counter_limits(arch)
    stream = [x for x in items if isinstance(x, LabelDef)
              or (isinstance(x, Instruction) and x.opcode != "s_waitcnt")]
    facts = [None if isinstance(x, LabelDef) else _Facts(x, assignment) for x in stream]
    for i, x in enumerate(stream):                        # straight-line code ends at a branch too
        if facts[i] is not None and (_targets(x) or x.opcode.startswith(_TERMINATORS)):
            facts[i].ends_block = True
    at_label: dict = {}                                   # label -> join of the states branching to it
    while True:
        waits, grew, st = {}, False, State()
        for i, x in enumerate(stream):
            if isinstance(x, LabelDef):
                came = at_label.get(x.name)
                st = came.copy() if st is None else (st if came is None else st.join(came))
                continue
            if st is None:                                # unreachable: nothing branches here
                continue
            need = _step(st, facts[i], _straight(facts, i + 1), limits)
            if need:
                waits[id(x)] = need
            for target in _targets(x):
                old = at_label.get(target)
                new = st.copy() if old is None else old.join(st)
                if old is None or new != old:
                    at_label[target], grew = new, True
            if x.opcode.startswith(_TERMINATORS):
                st = None
        if not grew:
            return waits


def _straight(facts, start):
    """The facts of the instructions from ``start`` on, None at the first label; stops after a branch."""
    for f in facts[start:]:
        yield f
        if f is None or f.ends_block:
            return


def wait_instruction(isa: InstructionSet, need: dict) -> Instruction:
    counts = {c: n for c, (n, _) in need.items()}
    why = "; ".join(dict.fromkeys(key_name(w) if isinstance(w, int) else w for _, w in need.values()))
    return isa.waitcnt(vmcnt=counts.get("vmcnt"), lgkmcnt=counts.get("lgkmcnt"), expcnt=counts.get("expcnt"),
                       comment=f"for {why}")


def insert_waitcnt(target, arch, assignment=None) -> int:
    """Replace the ``s_waitcnt`` of ``target`` (a Module, changed in place, waits going into the
    sub-module of the instruction that needs them; or a list of instructions and label definitions)
    by the ones the rules need. Returns how many it inserted."""
    items = list(target.flatten()) if isinstance(target, Module) else list(target)
    isa = InstructionSet(arch)
    waits = {k: [wait_instruction(isa, need)] for k, need in required_waits(items, arch, assignment).items()}
    insert_before(target, waits, drop=lambda x: isinstance(x, Instruction) and x.opcode == "s_waitcnt")
    return len(waits)
