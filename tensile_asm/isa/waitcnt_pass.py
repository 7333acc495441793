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

from tensile_asm.isa.code_index import Index, Shape, index_code
from tensile_asm.isa.counters import COUNTER_OF, counter_limits
from tensile_asm.isa.hazards import key_name, operand_keys
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.instruction_set import InstructionSet
from tensile_asm.isa.module import insert_before
from tensile_asm.isa.registers import Label, Special
from tensile_asm.isa.waitcnt_state import KINDS_OF, LDS_DMA, LDS_WRITE, State, kind_tops

_TERMINATORS = ("s_branch", "s_endpgm", "s_setpc_b64")
_EXEC_KEYS = frozenset(operand_keys(Special("exec")))
_VGPR_KEYS = range(256, 768)
_NONE = frozenset()


def _joined(groups: tuple) -> tuple:
    """The keys of several operands in order (one operand's own tuple)."""
    if len(groups) == 1:
        return groups[0]
    out = ()
    for g in groups:
        if g:
            out += g
    return out


class _Facts(Shape):
    """What one instruction means to the counters (computed once per shape: ``code_index``)."""

    __slots__ = ("reads", "writes", "touched", "write_only", "kind", "counter", "completes", "locks",
                 "barrier", "ds", "writes_exec", "special", "ends_block", "targets", "terminator")

    def __init__(self, ins: Instruction, assignment, memo: dict):
        Shape.__init__(self, ins, assignment, memo)
        (n, implicit_uses, implicit_defs, kind, counter, ds, barrier, mode, branch,
         self.terminator) = _opcode_facts(ins)
        opkeys = self.opkeys
        self.reads = reads = (opkeys[n] if len(opkeys) == n + 1 else _joined(opkeys[n:])) + implicit_uses
        self.writes = writes = (opkeys[0] if n == 1 else _joined(opkeys[:n])) + implicit_defs
        self.touched = frozenset(reads + writes)
        self.writes_exec = writes_exec = not _EXEC_KEYS.isdisjoint(writes)
        self.special = barrier or ds or writes_exec
        self.ds, self.barrier, self.kind, self.counter = ds, barrier, kind, counter
        if branch:
            self.targets = [o.name for o in ins.operands if isinstance(o, Label)]
            self.ends_block = bool(self.targets) or self.terminator
        else:
            self.targets, self.ends_block = (), self.terminator
        self.completes, self.locks, self.write_only = (), (), _NONE
        if kind is None:
            return
        self.write_only = frozenset(writes) - frozenset(reads)
        self.completes = writes
        if mode == "dma":                          # LDS-DMA: writes LDS
            self.completes = (LDS_WRITE, LDS_DMA)
        elif mode == "lds_write":
            self.completes = writes + (LDS_WRITE,)
        if kind == "gds":                          # its address and data VGPRs stay locked (expcnt)
            self.locks = tuple(k for k in reads if k in _VGPR_KEYS)


_IMPLICIT_KEYS: dict = {}


def _implicit_keys(names: tuple) -> tuple:
    """The register keys of an opcode's implicit operands (SCC left out), computed once per tuple."""
    got = _IMPLICIT_KEYS.get(names)
    if got is None:
        got = _IMPLICIT_KEYS[names] = tuple(k for n in names if n != "scc" for k in operand_keys(Special(n)))
    return got


_OPCODE_FACTS: dict = {}


def _opcode_facts(ins: Instruction) -> tuple:
    """What the opcode and modifiers of ``ins`` say, computed once per (opcode, modifiers): (defs,
    implicit read keys, implicit write keys, kind, counter, DS LDS access, s_barrier, what it completes
    besides its registers, a branch, ends straight-line code)."""
    key = (ins.opcode, ins.modifiers) if ins.modifiers else ins.opcode
    got = _OPCODE_FACTS.get(key)
    if got is None:
        info = ins.info
        kind = _kind(ins)
        ds = info.family == "DS" and kind == "lds"
        mode = None
        if kind == "vm" and info.num_defs == 0 and info.memory == "load":
            mode = "dma"
        elif ds and info.memory in ("store", "atomic"):
            mode = "lds_write"
        got = _OPCODE_FACTS[key] = (
            info.num_defs, _implicit_keys(info.implicit_uses), _implicit_keys(info.implicit_defs), kind,
            COUNTER_OF[kind] if kind is not None else None, ds, ins.opcode == "s_barrier", mode,
            ins.opcode.startswith(("s_branch", "s_cbranch_")), ins.opcode.startswith(_TERMINATORS))
    return got


def _kind(ins: Instruction) -> str | None:
    counter = ins.info.counter
    if counter == "lgkm":
        return "gds" if ins.has_modifier("gds") else "lds"
    return counter                                       # 'vm', 'smem' or None


def _needs(st: State, f: _Facts, only: str | None = None) -> dict:
    """counter -> (count, batch open, why) that must hold before the instruction of ``f`` issues (``only``:
    that counter alone). ``why`` is a register key or a sentence."""
    need: dict = {}
    entries = st.entries
    if entries and not entries.keys().isdisjoint(f.touched):
        seq, tops = st.seq, st.tops
        for k in f.touched:
            by = entries.get(k)
            if by is None:
                continue
            for kind, e in by.items():
                counter = COUNTER_OF[kind]
                if only is not None and counter != only:
                    continue
                if kind == "exp" and k not in f.writes:
                    continue                              # a GDS lock forbids writes only
                if kind == f.kind and kind != "smem" and k in f.write_only:
                    continue                              # WAW with a load of the same in-order kind
                if kind == "smem":
                    n = 0
                else:
                    n = seq[kind] - e.at
                    if n >= tops[kind]:
                        n = tops[kind] - 1
                if counter not in need or n < need[counter][0]:
                    need[counter] = (n, st.is_open(kind, e), k)
    if f.writes_exec and st.counts.get("exp") and only in (None, "expcnt"):
        need["expcnt"] = (0, True, "EXEC (GDS reads it late)")
    if f.barrier:
        _pseudo_need(st, need, LDS_WRITE, ("lds", "vm"), "LDS writes before s_barrier", only)
    if f.ds:
        _pseudo_need(st, need, LDS_DMA, ("vm",), "LDS-DMA loads before a DS access", only)
    return need


def _pseudo_need(st: State, need: dict, key, kinds, why: str, only) -> None:
    for kind in kinds:
        got = st.need(key, kind)
        counter = COUNTER_OF[kind]
        if got is not None and (only is None or only == counter) and (
                counter not in need or got[0] < need[counter][0]):
            need[counter] = (*got, why)


def _need_on(st: State, f: _Facts, counter: str) -> tuple | None:
    """``_needs(st, f, counter).get(counter)`` without its reason: (count, batch open) or None (the waits'
    look-ahead asks this of every instruction after a wait that touches a pending register)."""
    best = None
    entries, seq, tops, closed = st.entries, st.seq, st.tops, st.closed
    for k in f.touched:
        by = entries.get(k)
        if by is None:
            continue
        for kind, e in by.items():
            if COUNTER_OF[kind] != counter:
                continue
            if kind == "exp" and k not in f.writes:
                continue                              # a GDS lock forbids writes only
            if kind == f.kind and kind != "smem" and k in f.write_only:
                continue                              # WAW with a load of the same in-order kind
            if kind == "smem":
                n = 0
            else:
                n = seq[kind] - e.at
                if n >= tops[kind]:
                    n = tops[kind] - 1
            if best is None or n < best[0]:
                c = closed.get(kind)
                best = (n, e.open and (c is None or e.at > c))
    if f.special:
        if f.writes_exec and counter == "expcnt" and st.counts.get("exp"):
            best = (0, True)
        if f.barrier:
            for kind in ("lds", "vm"):
                if COUNTER_OF[kind] == counter:
                    got = st.need(LDS_WRITE, kind)
                    if got is not None and (best is None or got[0] < best[0]):
                        best = got
        if f.ds and counter == "vmcnt":
            got = st.need(LDS_DMA, "vm")
            if got is not None and (best is None or got[0] < best[0]):
                best = got
    return best


def _with_batch(need: dict, st: State, facts, start: int) -> dict:
    """Widen each wait of ``need`` to what the instructions from ``start`` on need from the same batch: the
    straight-line code after it, up to a label, after a branch, or before the next operation issued on
    that counter."""
    out = {}
    for counter, (n, batch, what) in need.items():
        table: dict = {}          # register key -> what an access of it needs on ``counter`` (the state is fixed)
        kinds = KINDS_OF[counter]
        # the registers that could lower the count: an instruction that touches none of them and is no
        # barrier, DS access or EXEC write needs no fewer on this counter
        low = _below(st, kinds, n)
        for j in range(start, len(facts)):
            f = facts[j]
            if f is None or f.counter == counter:
                break
            if f.special or not low.isdisjoint(f.touched):
                if f.kind is None and not f.special and counter != "expcnt":
                    m = None      # _need_on for an instruction no load-kind or GDS-lock exception applies to
                    for k in f.touched:
                        v = table.get(k, _UNSET)
                        if v is _UNSET:
                            v = table[k] = _key_need(st, k, counter)
                        if v is not None and (m is None or v[0] < m[0]):
                            m = v
                else:
                    m = _need_on(st, f, counter)
                if m is not None and m[1] == batch and m[0] < n:
                    n = m[0]
                    low = _below(st, kinds, n)
            if f.ends_block:
                break
        out[counter] = (n, what)
    return out


_UNSET = object()


def _below(st: State, kinds: tuple, n: int) -> set:
    """The register keys with a pending operation of ``kinds`` (one counter's) that an access must wait
    for with a count below ``n`` (as ``_key_need`` counts)."""
    seq, tops = st.seq, st.tops
    out = set()
    for k, by in st.entries.items():
        for kind, e in by.items():
            if kind in kinds:
                if kind == "smem":
                    c = 0
                else:
                    c = seq[kind] - e.at
                    if c >= tops[kind]:
                        c = tops[kind] - 1
                if c < n:
                    out.add(k)
                    break
    return out


def _key_need(st: State, k, counter: str) -> tuple | None:
    """(count, batch open) an access of register ``k`` needs on ``counter`` from its pending loads (the first
    of the fewest newer operations, as ``_need_on``), or None."""
    by = st.entries.get(k)
    if by is None:
        return None
    best = None
    for kind, e in by.items():
        if COUNTER_OF[kind] != counter:
            continue
        if kind == "smem":
            n = 0
        else:
            n = st.seq[kind] - e.at
            if n >= st.tops[kind]:
                n = st.tops[kind] - 1
        if best is None or n < best[0]:
            c = st.closed.get(kind)
            best = (n, e.open and (c is None or e.at > c))
    return best


class _Segment:
    """What one run over the straight-line code from a label (or the start) to the next label gave: the
    state it started from, the waits, the states at its branches, the state it ended with (None after
    a terminator) and where the next label is. The same start state gives the same run."""

    __slots__ = ("start", "waits", "branches", "end", "next")

    def __init__(self, start: State):
        self.start, self.waits, self.branches, self.end, self.next = start, {}, [], None, None


def required_waits(items, arch, assignment=None) -> dict:
    """id(instruction) -> {counter: (count, what)} for the instructions of ``items`` (instructions and
    label definitions; existing ``s_waitcnt`` ignored) that need a wait before them.

    The dataflow is iterated until no label's state grows; a segment (label to label) whose start state
    is the one of the previous round is not run again, its previous result is taken."""
    stream, facts, _ = index_code(items, Index(assignment, _Facts), skip="s_waitcnt")
    return {id(stream[j]): need for j, need in _required(stream, facts, arch).items()}


def _required(stream: list, facts: list, arch) -> dict:
    """position -> {counter: (count, what)}: ``required_waits`` of a stream of instructions (no
    ``s_waitcnt``) and label definitions, with the ``_Facts`` of each (None for a label)."""
    tops = kind_tops(counter_limits(arch))
    at_label: dict = {}                                   # label -> join of the states branching to it
    done: dict = {}                                       # segment start -> _Segment of the last round
    count = len(stream)

    def branch(target, st) -> bool:
        old = at_label.get(target)
        new = st.copy() if old is None else old.join(st)
        if old is None or new != old:
            at_label[target] = new
            return True
        return False

    while True:
        waits, grew, st, i = {}, False, State(tops), 0
        while i < count:                                  # a segment starts at i: a label, or the start
            key, first = -1, i
            if facts[i] is None:
                came = at_label.get(stream[i].name)
                st = came.copy() if st is None else (st if came is None else st.join(came))
                key, first = i, i + 1
            prev = done.get(key)
            if prev is not None and (prev.start == st if st is not None and prev.start is not None
                                     else prev.start is st):
                waits.update(prev.waits)
                for target, at_branch in prev.branches:
                    grew = branch(target, at_branch) or grew
                st, i = (prev.end.copy() if prev.end is not None else None), prev.next
                continue
            seg = done[key] = _Segment(st.copy() if st is not None else None)
            j = first
            while j < count:
                f = facts[j]
                if f is None:                             # the next label
                    break
                if st is not None:                        # else unreachable: nothing branches here
                    # apply instruction j to st, its wait first (an instruction that touches no pending
                    # register and is no barrier, DS access or EXEC write needs none, and its writes
                    # complete no pending load)
                    entries = st.entries
                    if f.special or (entries and not entries.keys().isdisjoint(f.touched)):
                        need = _needs(st, f)
                        if need:
                            need = _with_batch(need, st, facts, j + 1)
                            for counter, (n, _) in need.items():
                                st.wait(counter, n)
                            waits[j] = seg.waits[j] = need
                        if f.kind is None and f.writes:
                            st.overwrite(f.writes)
                    if f.kind is not None:
                        st.issue(f.kind, f.completes)
                        if f.locks:
                            st.issue("exp", f.locks)
                    if f.ends_block:
                        for target in f.targets:
                            seg.branches.append((target, st.copy()))
                            grew = branch(target, st) or grew
                        if f.terminator:
                            st = None
                j += 1
            seg.end, seg.next, i = (st.copy() if st is not None else None), j, j
        if not grew:
            return waits


def wait_instruction(isa: InstructionSet, need: dict) -> Instruction:
    counts = {c: n for c, (n, _) in need.items()}
    why = "; ".join(dict.fromkeys(key_name(w) if isinstance(w, int) else w for _, w in need.values()))
    return isa.waitcnt(vmcnt=counts.get("vmcnt"), lgkmcnt=counts.get("lgkmcnt"), expcnt=counts.get("expcnt"),
                       comment=f"for {why}")


def plan_waits(target, arch, assignment=None) -> tuple:
    """The waits ``target`` (a Module's tree, or a list of instructions and label definitions) needs:
    (its instructions and label definitions without their ``s_waitcnt``, the ``_Facts`` of each -- a
    ``code_index.Shape``, None for a label --, {position: the ``s_waitcnt`` to insert before that item},
    the ``s_waitcnt`` it had, the ``code_index.Index`` of those shapes)."""
    index = Index(assignment, _Facts)
    stream, facts, old = index_code(target, index, skip="s_waitcnt")
    isa = InstructionSet(arch)
    waits = {j: wait_instruction(isa, need) for j, need in _required(stream, facts, arch).items()}
    return stream, facts, waits, old, index


def insert_waitcnt(target, arch, assignment=None) -> int:
    """Replace the ``s_waitcnt`` of ``target`` (a Module, changed in place, waits going into the
    sub-module of the instruction that needs them; or a list of instructions and label definitions)
    by the ones the rules need. Returns how many it inserted."""
    stream, _, waits, old, _ = plan_waits(target, arch, assignment)
    old = {id(x) for x in old}
    insert_before(target, {id(stream[j]): [w] for j, w in waits.items()},
                  drop=(lambda x: id(x) in old) if old else None)
    return len(waits)
