"""Strict mode: writes that a GDS operation's expcnt lock forbids (gfx9 EXP_CNT).

A GDS instruction reads its address and data VGPRs after it issues, so they may not be overwritten
until ``s_waitcnt expcnt(N)`` says it has read them (LLVM SIInsertWaitcnts: GDS_GPR_LOCK on
EXP_CNT, the address register included "same as export"). It also reads EXEC late: EXEC may not be
written while any GDS operation is outstanding on expcnt, whatever N (SIInsertWaitcnts waits
``expcnt(0)`` before an EXEC write when GDS_GPR_LOCK is pending). waitcnt.py keeps the locks;
``attach`` guards, at compile time, only the ops that write a register some GDS instruction of the
kernel could lock, so kernels without GDS pay nothing.
"""

from __future__ import annotations

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import reg_keys
from tensile_asm.emulator.state import EXEC_HI, EXEC_LO, VKEY, AKEY
from tensile_asm.emulator.strict.waitcnt import _inst_text, key_name
from tensile_asm.isa.registers import Special

EXEC_KEYS = frozenset((EXEC_LO, EXEC_HI))


def is_gds(inst) -> bool:
    return inst.opcode.startswith("ds_") and inst.has_modifier("gds")


def locked_keys(inst) -> tuple:
    """The VGPRs a GDS instruction locks: every VGPR it reads (address, data)."""
    try:
        uses = inst.uses
    except KeyError:
        uses = inst.operands
    return tuple(k for o in uses for k in reg_keys(o) if VKEY <= k < AKEY)


def _written_keys(inst) -> frozenset:
    try:
        info = inst.info
        defs = inst.defs
    except KeyError:
        return frozenset()
    keys = {k for o in defs for k in reg_keys(o)}
    keys.update(k for name in info.implicit_defs if name != "scc" for k in reg_keys(Special(name)))
    return frozenset(keys)


def attach(ops) -> None:
    """Wrap the ops that may overwrite a GDS-locked VGPR, or EXEC, with the expcnt check."""
    lockable = {k for op in ops if is_gds(op.inst) for k in locked_keys(op.inst)}
    if not lockable:
        return
    lockable |= EXEC_KEYS
    for op in ops:
        hit = tuple(sorted(_written_keys(op.inst) & lockable))
        if hit:
            op.fn = _guarded(op.fn, hit)
            op.batchable = False     # wave by wave, so no fused stretch (fuse.py) runs it unchecked


def _guarded(run, keys):
    def fn(w):
        locked = w.pending.locked
        if locked or w.pending.exp:
            for k in keys:
                if k in locked or (k in EXEC_KEYS and w.pending.exp):
                    raise write_error(w, k)
        return run(w)
    return fn


def write_error(w, key) -> Fault:
    """The strict violation of writing ``key`` while a GDS operation may still read it."""
    p = w.pending
    reg = key_name(key)
    if key in EXEC_KEYS:
        entry = p.exp[-1]
        return Fault(f"strict: writes {reg} while the GDS instruction {_inst_text(entry.inst)} is outstanding "
                     f"on expcnt (GDS reads EXEC late); it needs s_waitcnt expcnt(0) before this instruction")
    entry = p.locked[key]
    newer = len(p.exp) - 1 - list(p.exp).index(entry)
    return Fault(f"strict: overwrites {reg} while the GDS instruction {_inst_text(entry.inst)} may still be "
                 f"reading it (its address and data VGPRs stay locked until expcnt retires it); it needs "
                 f"s_waitcnt expcnt({newer}) before this instruction")
