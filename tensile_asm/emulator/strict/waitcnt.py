"""Strict mode: outstanding memory operations per wave and the errors that name them.

The model (gfx9): vector-memory operations (loads and stores) retire in issue order and count in
vmcnt; LDS operations retire in order among themselves and count in lgkmcnt; scalar-memory loads
also count in lgkmcnt but may return out of order, so only ``lgkmcnt(0)`` proves one finished.
``s_waitcnt lgkmcnt(N)`` therefore retires the LDS operations older than the newest N (if SMEM loads
completed first, N LDS operations may still be in flight) and every SMEM load only when N is 0.

The counters saturate at the maxima of isa/<gfx>.yaml ``memory`` (gfx9: vmcnt 63, lgkmcnt 15, expcnt
7; isa/counters.py reads them for this checker and for the waitcnt pass alike): a wave does not issue
an operation while its counter is at the maximum, so issuing one retires the oldest outstanding
operation first — for lgkmcnt only when the outstanding ones are all of one in-order kind (with SMEM
among them, which one finished is unknown, and nothing is retired).

Values are written eagerly when an operation issues; its destination registers are PENDING until a
sufficient ``s_waitcnt`` retires it, and reading a PENDING register is an error.

GDS operations (gfx908 and older) count in lgkmcnt like LDS ones, in order among themselves (kind
'gds'; mixed with LDS operations, each kind retires in its own order). They also count in expcnt:
their address and data VGPRs stay locked until ``s_waitcnt expcnt(N)`` retires them, in order
(expcnt.py checks the writes).
"""

from __future__ import annotations

from collections import deque

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.state import AKEY, PENDING, READY, UNWRITTEN, VKEY
from tensile_asm.isa.counters import COUNTER_OF, IN_ORDER, CounterLimits


class Outstanding:
    """One issued memory operation that has not been waited for."""

    __slots__ = ("inst", "keys", "kind", "lds_parts")

    def __init__(self, inst, keys, kind, lds_parts=None):
        self.inst, self.keys, self.kind = inst, keys, kind     # kind: 'vm', 'lds', 'gds', 'smem', 'exp'
        self.lds_parts = lds_parts     # LDS writes: ((wave index, dwords), ...), for the race checker


class Pending:
    __slots__ = ("vm", "lgkm", "owner", "exp", "locked", "limits")

    def __init__(self, limits: CounterLimits):
        self.limits = limits         # the architecture's counter maxima (isa/counters.py)
        self.vm: deque = deque()
        self.lgkm: list = []
        self.owner: dict = {}        # register key -> the Outstanding that will write it
        self.exp: deque = deque()    # expcnt: GDS operations whose source VGPRs are still locked
        self.locked: dict = {}       # register key -> the newest entry of ``exp`` that locks it


def issue(w, inst, keys, kind, lds_index=None) -> None:
    """Record a memory operation; its destination ``keys`` become PENDING."""
    p = w.pending
    entry = Outstanding(inst, keys, kind, None if lds_index is None else w.split_columns(lds_index))
    if kind == "vm":
        if len(p.vm) >= p.limits.vmcnt:          # the wave waited for the oldest before issuing this one
            _retire(w, p.vm.popleft())
        p.vm.append(entry)
    else:
        if len(p.lgkm) >= p.limits.lgkmcnt and kind in IN_ORDER_LGKM and all(e.kind == kind for e in p.lgkm):
            _retire(w, p.lgkm.pop(0))
        p.lgkm.append(entry)
    st = w.rstate
    for k in keys:
        st[k] = PENDING
        p.owner[k] = entry


def _retire(w, entry) -> None:
    p, st = w.pending, w.rstate
    for k in entry.keys:
        if p.owner.get(k) is entry:
            del p.owner[k]
            st[k] = READY


def wait(w, vmcnt, lgkmcnt, expcnt=None) -> None:
    """Apply ``s_waitcnt`` (None: that counter is not waited for)."""
    p = w.pending
    if vmcnt is not None:
        while len(p.vm) > vmcnt:
            _retire(w, p.vm.popleft())
    if lgkmcnt is not None and p.lgkm:
        if lgkmcnt == 0:
            for e in p.lgkm:
                _retire(w, e)
            p.lgkm.clear()
        else:
            done = set()
            for kind in IN_ORDER_LGKM:
                same = [e for e in p.lgkm if e.kind == kind]
                for e in same[:max(0, len(same) - lgkmcnt)]:
                    _retire(w, e)
                    done.add(id(e))
            if done:
                p.lgkm = [e for e in p.lgkm if id(e) not in done]
    if expcnt is not None:
        while len(p.exp) > expcnt:
            e = p.exp.popleft()
            for k in e.keys:
                if p.locked.get(k) is e:
                    del p.locked[k]


# lgkmcnt operations that retire in issue order among their own kind ('smem' ones do not).
IN_ORDER_LGKM = tuple(k for k in IN_ORDER if COUNTER_OF[k] == "lgkmcnt")      # ('lds', 'gds')


def lock(w, inst, keys) -> None:
    """A GDS operation issued: its source VGPRs ``keys`` are locked until expcnt retires it."""
    p = w.pending
    entry = Outstanding(inst, keys, "exp")
    if len(p.exp) >= p.limits.expcnt:
        old = p.exp.popleft()
        for k in old.keys:
            if p.locked.get(k) is old:
                del p.locked[k]
    p.exp.append(entry)
    for k in keys:
        p.locked[k] = entry


def overwrite(w, keys) -> None:
    """A non-memory instruction wrote ``keys``: they no longer wait for a load's value."""
    owner = w.pending.owner
    for k in keys:
        owner.pop(k, None)


def key_name(k: int) -> str:
    if k >= AKEY:
        return f"a{k - AKEY}"
    if k >= VKEY:
        return f"v{k - VKEY}"
    names = {106: "vcc_lo", 107: "vcc_hi", 124: "m0", 126: "exec_lo", 127: "exec_hi", 102: "flat_scratch_lo",
             103: "flat_scratch_hi", 104: "xnack_mask_lo", 105: "xnack_mask_hi"}
    return names.get(k, f"s{k}")


def _inst_text(inst) -> str:
    where = " ".join(w for w in (f"0x{inst.address:x}" if inst.address is not None else "",
                                 f"(.s line {inst.source_line})" if inst.source_line is not None else "") if w)
    return f"{where} `{inst.render()}`"


def read_error(w, op, key) -> Fault:
    """The strict violation of ``op`` reading register ``key`` (UNWRITTEN or PENDING)."""
    reg = key_name(key)
    state = w.rstate[key]
    if state == UNWRITTEN:
        return Fault(f"strict: reads {reg}, which nothing has written since the wave started "
                     f"(and the hardware does not initialise it)")
    entry = w.pending.owner.get(key)
    if entry is None:                      # should not happen; report rather than guess
        return Fault(f"strict: reads {reg} whose state is {state}")
    if entry.kind == "vm":
        newer = len(w.pending.vm) - 1 - list(w.pending.vm).index(entry)
        need = f"s_waitcnt vmcnt({newer})"
    elif entry.kind in IN_ORDER_LGKM:
        same = [e for e in w.pending.lgkm if e.kind == entry.kind]
        need = f"s_waitcnt lgkmcnt({len(same) - 1 - same.index(entry)})"
    else:
        need = "s_waitcnt lgkmcnt(0) (scalar loads return out of order)"
    return Fault(f"strict: reads {reg} while the load that writes it is still in flight: "
                 f"{_inst_text(entry.inst)}; it needs {need} before this instruction")
