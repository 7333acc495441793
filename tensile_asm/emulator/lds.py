"""LDS (DS instructions) and, in strict mode, the workgroup's LDS race checker.

Addresses are ``vaddr + offset`` bytes; ``read2``/``write2`` offsets count elements (4 or 8 bytes,
64 elements for the ``st64`` forms). Accesses are gathered over the active lanes at once.

Race model (per dword): the barriers split a workgroup's run into intervals. Within one interval
the waves are unordered, so one wave reading or writing a dword that another wave writes in the
same interval is a race, whatever order the emulator happened to run the waves in. A write the
wave had not waited for (``s_waitcnt lgkmcnt``) when it reached the barrier is still in flight
after it, so it also belongs to the next interval; so does an LDS-DMA load's write (lds_dma.py)
not yet waited for with ``s_waitcnt vmcnt``, and a DS access of the wave's own in-flight DMA region
is an error. Accesses are only recorded as they happen (an append per instruction); each interval
is checked at once, vectorised, when it closes.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator import lds_dma
from tensile_asm.emulator import strict as strict_mode
from tensile_asm.emulator.memory import Fault
from tensile_asm.emulator.program import Unsupported, describe, handles, reg_keys, register_file
from tensile_asm.errors import EmulationError


class LdsTracker:
    def __init__(self, ndwords: int):
        self.ndwords = ndwords
        self.reads: dict = {}               # wave index -> [(dword indices, instruction)]
        self.writes: dict = {}              # wave index -> [(dword indices, instruction, carried over:
                                            #   the counter it was still waiting on, else None)]
        self.raw: list = []                 # (column owners, dword indices, instruction, is write)
        self.interval = 0

    def read(self, w, idx, inst) -> None:
        if w.pending.vm:
            lds_dma.check_in_flight(w, idx, inst, "reads")
        self.raw.append((w.column_owners(), idx, inst, False))

    def write(self, w, idx, inst) -> None:
        if w.pending.vm:
            lds_dma.check_in_flight(w, idx, inst, "writes")
        self.record_write(w, idx, inst)

    def record_write(self, w, idx, inst) -> None:
        self.raw.append((w.column_owners(), idx, inst, True))

    def _sort_raw(self) -> None:
        """Attribute the recorded accesses to waves (a batch's columns belong to its members)."""
        for owners, idx, inst, is_write in self.raw:
            for wave, cols in owners:
                part = idx if cols is None else idx[..., cols]
                if is_write:
                    self.writes.setdefault(wave, []).append((part, inst, None))
                else:
                    self.reads.setdefault(wave, []).append((part, inst))
        self.raw = []

    def close_interval(self, group) -> None:
        """Check the interval that ends now (at a barrier, or at the end of the workgroup)."""
        try:
            self._sort_raw()
            self._check(group)
        finally:
            self.reads, self.writes = {}, {}
            seen = set()                     # writes still in flight spill into the next interval
            for w in group.waves:            # (waves of a batch share their outstanding entries)
                for e in (*w.pending.lgkm, *w.pending.vm):      # vm: LDS-DMA loads (lds_dma.py)
                    if e.lds_parts is not None and id(e) not in seen:
                        seen.add(id(e))
                        counter = "vmcnt" if e.kind == "vm" else "lgkmcnt"
                        for wave, part in e.lds_parts:
                            self.writes.setdefault(wave, []).append((part, e.inst, counter))
            self.interval += 1

    def _check(self, group) -> None:
        if not self.writes:
            return
        owner = np.full(self.ndwords, -1, np.int32)
        for wave, recs in sorted(self.writes.items()):
            idx = np.unique(np.concatenate([r[0].ravel() for r in recs]))
            prev = owner[idx]
            clash = prev >= 0
            if clash.any():
                x = int(idx[np.argmax(clash)])
                self._report(group, x, int(prev[np.argmax(clash)]), wave, "writes")
            owner[idx] = wave
        for wave, recs in sorted(self.reads.items()):
            idx = np.unique(np.concatenate([r[0].ravel() for r in recs]))
            who = owner[idx]
            clash = (who >= 0) & (who != wave)
            if clash.any():
                j = int(np.argmax(clash))
                self._report(group, int(idx[j]), int(who[j]), wave, "reads")

    def _report(self, group, dword, writer, other, access):
        w_inst, carried = next((r[1], r[2]) for r in self.writes[writer] if (r[0] == dword).any())
        table = self.writes if access == "writes" else self.reads
        o_inst = next(r[1] for r in table[other] if (r[0] == dword).any())
        how = (f"that write was still in flight at the s_barrier before (wave {writer} had not waited for it "
               f"with s_waitcnt {carried})" if carried else "no s_barrier separates them")
        raise EmulationError(
            f"strict: LDS race in workgroup {group.id}, barrier interval {self.interval}: wave {other} {access} "
            f"LDS byte 0x{dword * 4:x} at {describe(o_inst)} while wave {writer} writes it at "
            f"{describe(w_inst)}; {how}")


def _active_addresses(w, addr):
    """The active lanes' byte addresses (dword aligned, else a fault) and the active-lane selector."""
    a = addr(w)
    if isinstance(a, int):
        a = np.full(w.lanes, a, np.uint32)
    sel = None if w.exec_full else w.exec_lanes
    if sel is not None:
        a = a[sel]
    if a.size and int(np.bitwise_or.reduce(a)) & 3:
        raise Fault("misaligned LDS access (dword accesses need 4-byte aligned addresses)")
    return a, sel


def _lane_addresses(w, addr, rows):
    """Byte addresses [elements*dwords, active lanes] and the active-lane selector."""
    a, sel = _active_addresses(w, addr)
    return a + rows, sel


def _lane_dwords(w, addr, rows4, span):
    """Strict: dword indices [elements*dwords, active lanes], range-checked, and the selector."""
    a, sel = _active_addresses(w, addr)
    if a.size:
        top = int(a.max()) + span
        if top > w.group.lds_size:
            raise Fault(f"LDS access at byte 0x{top - 4:x} is outside the workgroup's {w.group.lds_size} "
                        f"bytes of LDS")
    return (a >> 2) + rows4, sel


def _offsets(ins, ndw, elements, elem_bytes, stride64):
    if elements == (None,):
        offsets = (ins.modifier("offset", 0) or 0,)
    else:
        scale = elem_bytes * (64 if stride64 else 1)
        offsets = tuple((ins.modifier(n, 0) or 0) * scale for n in ("offset0", "offset1"))
    if any(o % 4 for o in offsets):
        raise Unsupported("offsets that are not dword multiples")
    return np.array([o + 4 * k for o in offsets for k in range(ndw)], np.int64)[:, None]


def _ds_read_builder(ndw, elements, elem_bytes, stride64=False):
    def build(ins, cx):
        dst, vaddr = ins.operands[:2]
        if dst.count != ndw * len(elements):
            raise Unsupported(f"destination {dst} does not hold {ndw * len(elements)} dwords")
        rows = _offsets(ins, ndw, elements, elem_bytes, stride64)
        addr = cx.vread(vaddr)
        d0, n = dst.index, dst.count
        keys = reg_keys(dst)
        issue = strict_mode.issue
        rows4, span = rows >> 2, int(rows.max()) + 4
        regs = register_file(dst)
        if cx.strict:
            def run(w):
                idx, sel = _lane_dwords(w, addr, rows4, span)
                w.group.lds_tracker.read(w, idx, ins)
                if sel is None:
                    regs(w)[d0:d0 + n] = w.group.lds[idx]
                else:
                    regs(w)[d0:d0 + n, sel] = w.group.lds[idx]
                issue(w, ins, keys, "lds")
        else:
            def run(w):
                byte, sel = _lane_addresses(w, addr, rows)
                ok = byte + 4 <= w.group.lds_size
                vals = np.where(ok, w.group.lds[np.where(ok, byte >> 2, 0)], 0).astype(np.uint32)
                if sel is None:
                    regs(w)[d0:d0 + n] = vals
                else:
                    regs(w)[d0:d0 + n, sel] = vals
        run.manages_defs = True
        run.agpr_ok = True
        return run
    return build


def _ds_write_builder(ndw, elements, elem_bytes, stride64=False):
    def build(ins, cx):
        vaddr, *datas = ins.operands
        if len(datas) != len(elements) or any(d.count != ndw for d in datas):
            raise Unsupported("unexpected data operands")
        rows = _offsets(ins, ndw, elements, elem_bytes, stride64)
        addr = cx.vread(vaddr)
        regs = [(register_file(d), d.index, d.count) for d in datas]
        strict = cx.strict
        issue = strict_mode.issue
        rows4, span = rows >> 2, int(rows.max()) + 4
        def run(w):
            if strict:
                idx, sel = _lane_dwords(w, addr, rows4, span)
            else:
                byte, sel = _lane_addresses(w, addr, rows)
            data = [f(w)[i:i + n] if sel is None else f(w)[i:i + n, sel] for f, i, n in regs]
            vals = data[0] if len(data) == 1 else np.concatenate(data)
            if strict:
                w.group.lds_tracker.write(w, idx, ins)
                w.group.lds[idx] = vals
                issue(w, ins, (), "lds", idx)
            else:
                ok = byte + 4 <= w.group.lds_size
                w.group.lds[(byte >> 2)[ok]] = vals[ok]
        run.agpr_ok = True
        return run
    return build


for _n, _dw in (("b32", 1), ("b64", 2), ("b96", 3), ("b128", 4)):
    handles(f"ds_read_{_n}")(_ds_read_builder(_dw, (None,), 4 * _dw))
    handles(f"ds_write_{_n}")(_ds_write_builder(_dw, (None,), 4 * _dw))
for _n, _dw in (("b32", 1), ("b64", 2)):
    handles(f"ds_read2_{_n}")(_ds_read_builder(_dw, (0, 1), 4 * _dw))
    handles(f"ds_write2_{_n}")(_ds_write_builder(_dw, (0, 1), 4 * _dw))
    handles(f"ds_read2st64_{_n}")(_ds_read_builder(_dw, (0, 1), 4 * _dw, True))
    handles(f"ds_write2st64_{_n}")(_ds_write_builder(_dw, (0, 1), 4 * _dw, True))
