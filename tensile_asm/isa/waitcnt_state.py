"""What the waitcnt pass knows at one point of a kernel: the memory operations that may still be in
flight, which registers (or which LDS effect) each will complete, and how many newer operations of
its kind were issued after it. ``waitcnt_pass.py`` runs it forward over the instruction stream.

The rules are emulator/strict/waitcnt.py's (the strict checker), on the counter facts of ``counters.py``:

* an instruction that reads a register a pending load writes (RAW), or writes it (WAW; not needed
  when it is a load of the same in-order kind, which completes after it), waits for that load:
  ``vmcnt(N)`` / ``lgkmcnt(N)`` with N the operations of its kind issued after it, ``lgkmcnt(0)``
  for a scalar load (out of order);
* an instruction that writes a VGPR a GDS instruction still reads (its address and data, locked until
  ``expcnt`` retires it) waits ``expcnt(N)``; a write of EXEC with any GDS outstanding ``expcnt(0)``;
* ``s_barrier`` waits for this wave's outstanding LDS writes (DS stores and atomics, LDS-DMA loads):
  the LDS race checker (emulator/strict/lds_races.py) counts a write still in flight at a barrier
  as part of the interval after it, where other waves read it. LDS reads are recorded when issued, so the checker
  asks nothing of reads still in flight at a barrier (a read's own registers are covered by RAW);
* a DS instruction waits for the wave's LDS-DMA loads still in flight (emulator/lds/dma.py).

Granularity: an instruction that must wait for an operation waits, at once, also for what the
instructions after it need from the same *batch* (the operations of one kind issued since the last
wait on their counter: the loads of a tile, the LDS reads of one unroll step), up to the next issue
on that counter (``waitcnt_pass.py`` looks ahead); so the code using a batch waits once, not once per
register, and an unroll step still computes while the reads of the next one are in flight.

Counters saturate: issuing an operation with the counter at its maximum retires the oldest first (for
lgkmcnt only while one in-order kind alone is outstanding), so no wait is needed for it.
"""

from __future__ import annotations

from tensile_asm.isa.counters import COUNTER_OF, CounterLimits

LDS_WRITE, LDS_DMA = "LDS write in flight", "LDS-DMA load in flight"     # pseudo registers


class Entry:
    """One pending effect: ``newer`` operations of its kind were issued after it; ``open``: no wait on
    its counter since it issued (it belongs to the newest batch)."""

    __slots__ = ("newer", "open")

    def __init__(self, newer=0, open=True):
        self.newer, self.open = newer, open

    def key(self):
        return self.newer, self.open

    def __eq__(self, other):
        return self.key() == other.key()

    def __repr__(self):
        return f"Entry{self.key()}"


class State:
    """Pending effects: register key (or pseudo register) -> kind -> Entry; and per kind an upper bound
    of the outstanding operations."""

    __slots__ = ("entries", "counts")

    def __init__(self, entries=None, counts=None):
        self.entries: dict = entries if entries is not None else {}
        self.counts: dict = counts if counts is not None else {}

    def copy(self) -> "State":
        return State({k: {kd: Entry(*e.key()) for kd, e in by.items()} for k, by in self.entries.items()},
                     dict(self.counts))

    def __eq__(self, other):
        return self.entries == other.entries and self.counts == other.counts

    def _all(self):
        return ((k, kd, e) for k, by in self.entries.items() for kd, e in by.items())

    def _drop(self, doomed) -> None:
        for k, kd in doomed:
            by = self.entries[k]
            del by[kd]
            if not by:
                del self.entries[k]

    def join(self, other: "State") -> "State":
        """What holds on either path: every pending effect, the fewest newer operations, the most
        outstanding."""
        out = self.copy()
        for k, kd, e in other._all():
            mine = out.entries.setdefault(k, {}).get(kd)
            if mine is None:
                out.entries[k][kd] = Entry(*e.key())
            else:
                mine.newer = min(mine.newer, e.newer)
                mine.open = mine.open or e.open
        for kind, n in other.counts.items():
            out.counts[kind] = max(out.counts.get(kind, 0), n)
        return out

    # -- effects --------------------------------------------------------------------------------------
    def issue(self, kind: str, keys, limits: CounterLimits) -> None:
        """An operation of ``kind`` issued, completing ``keys`` (registers and pseudo registers)."""
        top = limits.of(COUNTER_OF[kind])
        for _, kd, e in self._all():
            if kd == kind:
                e.newer = min(e.newer + 1, top)
        if kind != "smem" and not any(self.counts.get(other) for other, c in COUNTER_OF.items()
                                      if c == COUNTER_OF[kind] and other != kind):
            # saturated: the oldest of this in-order kind retired before this one issued
            self._drop([(k, kd) for k, kd, e in self._all() if kd == kind and e.newer >= top])
        self.counts[kind] = min(self.counts.get(kind, 0) + 1, top)
        for k in keys:
            self.entries.setdefault(k, {})[kind] = Entry()

    def overwrite(self, keys) -> None:
        """A register written by an instruction that is not a load: no pending load completes it any more."""
        for k in keys:
            by = self.entries.get(k)
            if by is not None:
                self._drop([(k, kd) for kd in by if kd != "exp"])

    def wait(self, counter: str, n: int) -> None:
        """``s_waitcnt counter(n)``."""
        kinds = [kd for kd, c in COUNTER_OF.items() if c == counter]
        self._drop([(k, kd) for k, kd, e in self._all() if kd in kinds
                    and (e.newer >= n if kd != "smem" else n == 0)])
        for _, kd, e in self._all():
            if kd in kinds:
                e.open = False
        for kd in kinds:
            if kd in self.counts:
                self.counts[kd] = min(self.counts[kd], n)
                if not self.counts[kd]:
                    del self.counts[kd]

    # -- what an access needs -------------------------------------------------------------------------
    def need(self, key, kind: str, limits: CounterLimits) -> tuple | None:
        """(the count ``s_waitcnt`` must reach before an access of ``key`` pending on ``kind``, whether
        that operation is of the newest batch), or None when it is not pending."""
        e = self.entries.get(key, {}).get(kind)
        if e is None:
            return None
        if kind == "smem":
            return 0, e.open
        return min(e.newer, limits.of(COUNTER_OF[kind]) - 1), e.open
