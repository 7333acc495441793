"""LDS (DS instructions) and, in strict mode, the workgroup's LDS race checker.

Addresses are ``vaddr + offset`` bytes; ``read2``/``write2`` offsets count elements (4 or 8 bytes,
64 elements for the ``st64`` forms). Accesses are gathered over the active lanes at once.

Race model (per dword): every wave counts the barriers it has passed (its epoch). A write becomes
visible to other waves from the barrier after the writing wave waited for it (``s_waitcnt
lgkmcnt``). Reading a dword another wave wrote that is not yet visible, writing one another wave
read or wrote in the same barrier interval: both are races, whatever order the emulator happened
to run the waves in.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator import strict as strict_mode
from tensile_asm.emulator.memory import Fault
from tensile_asm.emulator.program import Unsupported, describe, handles, reg_keys

_NEVER = np.iinfo(np.int32).max


class LdsTracker:
    def __init__(self, ndwords: int):
        self.writer = np.full(ndwords, -1, np.int16)
        self.wseq = np.zeros(ndwords, np.int64)
        self.wepoch = np.zeros(ndwords, np.int32)
        self.visible = np.zeros(ndwords, np.int32)
        self.reader = np.full(ndwords, -1, np.int16)
        self.repoch = np.full(ndwords, -1, np.int32)
        self.seq = 0
        self.writes = {}                     # seq -> instruction (for messages)

    def _race(self, w, idx, what) -> Fault:
        return Fault(f"strict: LDS race: {what} at LDS byte 0x{int(idx) * 4:x} ({w.describe()})")

    def read(self, w, idx) -> None:
        e, me = w.epoch, w.index
        wr = self.writer[idx]
        bad = (wr >= 0) & (wr != me) & (self.visible[idx] > e)
        if bad.any():
            j = int(np.argmax(bad))
            i = idx.flat[j]
            inst = self.writes.get(int(self.wseq[i]))
            how = ("had not waited for it (s_waitcnt lgkmcnt) before the s_barrier"
                   if self.wepoch[i] < e else "with no s_barrier between that write and this read")
            raise self._race(w, i, f"this wave reads data that wave {int(wr.flat[j])} wrote "
                                   f"({describe(inst) if inst else 'a write'}) and {how}")
        stale = self.repoch[idx] != e
        other = ~stale & (self.reader[idx] != me)
        self.reader[idx[stale]] = me
        self.repoch[idx[stale]] = e
        self.reader[idx[other]] = -2

    def write(self, w, idx, inst) -> int:
        e, me = w.epoch, w.index
        rd = self.reader[idx]
        war = (self.repoch[idx] == e) & (rd != me) & (rd != -1)
        if war.any():
            i = idx.flat[int(np.argmax(war))]
            who = "other waves" if self.reader[i] == -2 else f"wave {int(self.reader[i])}"
            raise self._race(w, i, f"this wave overwrites data that {who} read with no s_barrier in between")
        wr = self.writer[idx]
        waw = (wr >= 0) & (wr != me) & (self.visible[idx] > e)
        if waw.any():
            j = int(np.argmax(waw))
            raise self._race(w, idx.flat[j], f"this wave and wave {int(wr.flat[j])} write the same dword "
                                              f"with no s_barrier (after a wait) in between")
        self.seq += 1
        self.writes[self.seq] = inst
        self.writer[idx] = me
        self.wseq[idx] = self.seq
        self.wepoch[idx] = e
        self.visible[idx] = _NEVER
        return self.seq

    def retire(self, seq, idx, epoch) -> None:
        mine = self.wseq[idx] == seq
        self.visible[idx[mine]] = epoch + 1


def _lane_addresses(w, addr, offsets, ndw):
    """Byte addresses [elements*dwords, active lanes] and the active-lane selector."""
    a = addr(w)
    if isinstance(a, int):
        a = np.full(w.lanes, a, np.uint32)
    sel = None if w.exec_full else w.exec_lanes
    base = (a if sel is None else a[sel]).astype(np.int64)
    rows = [base + (off + 4 * k) for off in offsets for k in range(ndw)]
    return np.stack(rows), sel


def _check(w, byte, inst_bytes=4):
    size = w.group.lds_size
    if byte.size and (byte.min() < 0 or byte.max() + inst_bytes > size):
        bad = int(byte.max()) if byte.max() + inst_bytes > size else int(byte.min())
        raise Fault(f"LDS access at byte 0x{bad:x} is outside the workgroup's {size} bytes of LDS")


def _ds_read_builder(ndw, elements, elem_bytes, stride64=False):
    def build(ins, cx):
        dst, vaddr = ins.operands[:2]
        if dst.count != ndw * len(elements):
            raise Unsupported(f"destination {dst} does not hold {ndw * len(elements)} dwords")
        if elements == (None,):
            offsets = (ins.modifier("offset", 0) or 0,)
        else:
            scale = elem_bytes * (64 if stride64 else 1)
            offsets = tuple((ins.modifier(n, 0) or 0) * scale for n in ("offset0", "offset1"))
        addr = cx.vread(vaddr)
        d0, n = dst.index, dst.count
        keys = reg_keys(dst)
        strict = cx.strict
        def run(w):
            byte, sel = _lane_addresses(w, addr, offsets, ndw)
            if byte.size and (byte & 3).any():
                raise Fault("misaligned LDS access (dword accesses need 4-byte aligned addresses)")
            idx = byte >> 2
            if strict:
                _check(w, byte)
                w.group.lds_tracker.read(w, idx)
                vals = w.group.lds[idx]
            else:
                ok = (byte >= 0) & (byte + 4 <= w.group.lds_size)
                vals = np.where(ok, w.group.lds[np.where(ok, idx, 0)], 0).astype(np.uint32)
            if sel is None:
                w.v[d0:d0 + n] = vals
            else:
                w.v[d0:d0 + n, sel] = vals
            if strict:
                strict_mode.issue(w, ins, keys, "lds")
        run.manages_defs = True
        return run
    return build


def _ds_write_builder(ndw, elements, elem_bytes, stride64=False):
    def build(ins, cx):
        vaddr, *datas = ins.operands
        if len(datas) != len(elements) or any(d.count != ndw for d in datas):
            raise Unsupported("unexpected data operands")
        if elements == (None,):
            offsets = (ins.modifier("offset", 0) or 0,)
        else:
            scale = elem_bytes * (64 if stride64 else 1)
            offsets = tuple((ins.modifier(n, 0) or 0) * scale for n in ("offset0", "offset1"))
        addr = cx.vread(vaddr)
        regs = [(d.index, d.count) for d in datas]
        strict = cx.strict
        def run(w):
            byte, sel = _lane_addresses(w, addr, offsets, ndw)
            if byte.size and (byte & 3).any():
                raise Fault("misaligned LDS access (dword accesses need 4-byte aligned addresses)")
            rows = [w.v[i:i + n] if sel is None else w.v[i:i + n, sel] for i, n in regs]
            vals = rows[0] if len(rows) == 1 else np.concatenate(rows)
            idx = byte >> 2
            if strict:
                _check(w, byte)
                seq = w.group.lds_tracker.write(w, idx, ins)
                w.group.lds[idx] = vals
                strict_mode.issue(w, ins, (), "lds", seq, idx)
            else:
                ok = (byte >= 0) & (byte + 4 <= w.group.lds_size)
                w.group.lds[idx[ok]] = vals[ok]
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
