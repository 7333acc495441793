"""Strict mode: LDS races between the waves of a workgroup (``LdsTracker``, one per workgroup).

Race model (byte-exact): the barriers split a workgroup's run into intervals. Within one interval
the waves are unordered, so a wave reading bytes another wave writes in the same interval is a race,
and so are two waves writing one byte, whatever order the emulator happened to run the waves in,
unless both wrote the same known value there as their last write of it (the result is then the same
in every order; Triton's scale shuffle relies on it). LDS is byte addressed: the byte and short
forms (lds/byte.py, memory/short_d16.py, lds/swizzle_addtid.py) record which bytes of their dword
they touch, so accesses of different bytes of one dword do not clash. Atomics (lds/atomics32.py,
lds/atomics64.py) clash with other waves' plain reads and writes, not with their atomics. Kept
conservative (whole dwords, values unknown): LDS-DMA writes, transposing reads, atomics, and writes
carried over a barrier.

A write the wave had not waited for (``s_waitcnt lgkmcnt``) when it reached the barrier is still in
flight after it, so it also belongs to the next interval; so does an LDS-DMA load's write
(lds/dma.py) not yet waited for with ``s_waitcnt vmcnt``, and a DS access of the wave's own in-flight
DMA region is an error. Accesses are only recorded as they happen (an append per instruction, the
values written copied); each interval is checked when it closes: first per dword, vectorised, for
the dwords two waves touch, then byte by byte for those few only.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.lds import dma as lds_dma
from tensile_asm.emulator.program import describe
from tensile_asm.errors import EmulationError


class LdsTracker:
    def __init__(self, ndwords: int):
        self.ndwords = ndwords
        # wave index -> [(dwords, instruction, carried over: the counter a write was still waiting on,
        #   else None, byte masks, values, atomic)], in issue order
        self.reads: dict = {}
        self.writes: dict = {}
        self.raw: list = []                 # (column owners, dwords, instruction, kind, byte masks, values)
        self.interval = 0

    # Recording. ``mask``: uint8 per dword, the bytes touched (bit b = byte b), None = all four;
    # ``vals``: uint32 per dword, the bytes written in place, None = unknown (never benign).
    def read(self, w, idx, inst, mask=None) -> None:
        if w.pending.vm:
            lds_dma.check_in_flight(w, idx, inst, "reads")
        self.raw.append((w.column_owners(), idx, inst, _READ, mask, None))

    def write(self, w, idx, inst, mask=None, vals=None) -> None:
        if w.pending.vm:
            lds_dma.check_in_flight(w, idx, inst, "writes")
        self.record_write(w, idx, inst, mask, vals)

    def record_write(self, w, idx, inst, mask=None, vals=None) -> None:
        # copied: ``vals`` may be a view of the registers, which change before the interval closes
        self.raw.append((w.column_owners(), idx, inst, _WRITE, mask, None if vals is None else np.array(vals)))

    def atomic(self, w, byte, nbytes, inst) -> None:
        """An LDS atomic of ``nbytes`` at each active lane's ``byte``: no race with other waves' atomics,
        a race with their plain reads and writes."""
        idx = (np.asarray(byte, np.int64) >> 2)[None, :] + np.arange(nbytes // 4)[:, None]
        if w.pending.vm:
            lds_dma.check_in_flight(w, idx, inst, "updates")
        self.raw.append((w.column_owners(), idx, inst, _ATOMIC, None, None))

    def _sort_raw(self) -> None:
        """Attribute the recorded accesses to waves (a batch's columns belong to its members)."""
        for owners, idx, inst, kind, mask, vals in self.raw:
            for wave, cols in owners:
                if cols is None:
                    part, m, v = idx, mask, vals
                else:
                    part = idx[..., cols]
                    m = None if mask is None else mask[..., cols]
                    v = None if vals is None else vals[..., cols]
                if kind == _READ:
                    self.reads.setdefault(wave, []).append((part, inst, None, m, None, False))
                else:
                    self.writes.setdefault(wave, []).append((part, inst, None, m, v, kind == _ATOMIC))
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
                for e in (*w.pending.lgkm, *w.pending.vm):      # vm: LDS-DMA loads (lds/dma.py)
                    if e.lds_parts is not None and id(e) not in seen:
                        seen.add(id(e))
                        counter = "vmcnt" if e.kind == "vm" else "lgkmcnt"
                        for wave, part in e.lds_parts:          # whole dwords, values unknown
                            self.writes.setdefault(wave, []).append((part, e.inst, counter, None, None, False))
            self.interval += 1

    def _check(self, group) -> None:
        """First pass per dword, vectorised: the dwords two waves write, or one reads and another
        writes. Only those (rare) get the exact byte check."""
        if not self.writes:
            return
        owner = np.full(self.ndwords, -1, np.int32)
        clashes = []
        for wave, recs in sorted(self.writes.items()):
            idx = np.unique(np.concatenate([r[0].ravel() for r in recs]))
            clash = owner[idx] >= 0
            if clash.any():
                clashes.append(idx[clash])
            owner[idx] = wave
        for wave, recs in sorted(self.reads.items()):
            idx = np.unique(np.concatenate([r[0].ravel() for r in recs]))
            who = owner[idx]
            clash = (who >= 0) & (who != wave)
            if clash.any():
                clashes.append(idx[clash])
        if clashes:
            self._check_bytes(group, np.unique(np.concatenate(clashes)))

    def _check_bytes(self, group, dwords) -> None:
        """Every pair of waves over the clashing ``dwords``, byte by byte (see the module docstring)."""
        waves = {wave: _WaveBytes(dwords, self.writes.get(wave, ()), self.reads.get(wave, ()))
                 for wave in sorted(set(self.writes) | set(self.reads))}
        for a, wa in waves.items():
            for b, wb in waves.items():
                if a == b:
                    continue
                if a < b:
                    same = wa.known & wb.known & (wa.value == wb.value)
                    benign = same | (wa.atomic_only & wb.atomic_only)
                    bad = (wa.written & wb.written & ~benign) | (wa.atomic & wb.plain) | (wa.plain & wb.atomic)
                    if bad.any():
                        self._report(group, dwords, bad, a, b, "writes")
                bad = wa.read & wb.written
                if bad.any():
                    self._report(group, dwords, bad, b, a, "reads")

    def _report(self, group, dwords, bad, writer, other, access):
        j, byte = np.unravel_index(int(np.argmax(bad)), bad.shape)
        dword = int(dwords[j])
        w_rec = _last_touching(self.writes[writer], dword, byte)
        table = self.writes if access == "writes" else self.reads
        o_rec = _last_touching(table[other], dword, byte)
        if access == "writes" and o_rec[2] and not w_rec[2]:
            writer, other, w_rec, o_rec = other, writer, o_rec, w_rec     # name the carried-over one
        carried = w_rec[2]
        how = (f"that write was still in flight at the s_barrier before (wave {writer} had not waited for it "
               f"with s_waitcnt {carried})" if carried else "no s_barrier separates them")
        raise EmulationError(
            f"strict: LDS race in workgroup {group.id}, barrier interval {self.interval}: wave {other} {access} "
            f"LDS byte 0x{dword * 4 + int(byte):x} at {describe(o_rec[1])} while wave {writer} writes it at "
            f"{describe(w_rec[1])}; {how}")


_READ, _WRITE, _ATOMIC = 0, 1, 2
_ALL_BYTES = np.uint8(0xF)


def _touching(rec, dwords):
    """The entries of a record (in issue order) that fall on ``dwords``: their positions there, byte
    masks and values (None when unknown)."""
    idx, _, _, mask, vals, _ = rec
    flat = idx.ravel()
    on = np.isin(flat, dwords)
    pos = np.searchsorted(dwords, flat[on])
    mask = np.full(pos.size, _ALL_BYTES) if mask is None else mask.ravel()[on]
    return pos, mask, None if vals is None else vals.ravel()[on]


def _last_touching(recs, dword, byte):
    """The last record of a wave that touches ``byte`` of ``dword``."""
    found = None
    for rec in recs:
        _, mask, _ = _touching(rec, np.array([dword]))
        if ((mask >> np.uint8(byte)) & 1).any():
            found = rec
    return found


class _WaveBytes:
    """One wave's accesses of the clashing dwords in an interval, per byte ([dwords, 4] arrays): what it
    read, wrote (plainly, atomically) and, where its last write there had known values, the final value."""

    def __init__(self, dwords, writes, reads):
        shape = (dwords.size, 4)
        self.read, self.plain, self.atomic = (np.zeros(shape, bool) for _ in range(3))
        self.known, self.value = np.zeros(shape, bool), np.zeros(shape, np.uint8)
        for rec in writes:                           # in issue order: the last write of a byte wins
            pos, mask, vals = _touching(rec, dwords)
            data = None if vals is None else np.ascontiguousarray(vals, "<u4").view(np.uint8).reshape(-1, 4)
            for b in range(4):
                on = ((mask >> np.uint8(b)) & 1).astype(bool)
                at = pos[on]
                (self.atomic if rec[5] else self.plain)[at, b] = True
                self.known[at, b] = data is not None and not rec[5]
                if data is not None:
                    self.value[at, b] = data[on, b]
        for rec in reads:
            pos, mask, _ = _touching(rec, dwords)
            for b in range(4):
                self.read[pos[((mask >> np.uint8(b)) & 1).astype(bool)], b] = True
        self.written = self.plain | self.atomic
        self.atomic_only = self.atomic & ~self.plain
