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

KINDS_OF = {c: tuple(kd for kd, cc in COUNTER_OF.items() if cc == c) for c in dict.fromkeys(COUNTER_OF.values())}
_SIBLINGS = {kd: tuple(o for o in KINDS_OF[c] if o != kd) for kd, c in COUNTER_OF.items()}


def kind_tops(limits: CounterLimits) -> dict:
    """kind -> the maximum of its counter (where its newer-counts stop)."""
    return {kd: limits.of(c) for kd, c in COUNTER_OF.items()}


class Entry:
    """One pending effect: the ``at``-th operation of its kind issued on this path (``State.newer`` counts
    the operations of its kind issued after it); ``open``: no wait on its counter since it issued (it
    belongs to the newest batch), unless a wait came later (``State.closed``)."""

    __slots__ = ("at", "open")

    def __init__(self, at: int, open: bool = True):
        self.at, self.open = at, open

    def __repr__(self):
        return f"Entry(at={self.at}, open={self.open})"


class State:
    """Pending effects: register key (or pseudo register) -> kind -> Entry; per kind an upper bound of the
    outstanding operations (``counts``).

    Ages are kept lazily, so that issuing an operation costs nothing per pending entry: ``seq[kind]``
    counts the operations of a kind issued on this path, an entry records the count it was issued at,
    and its newer-count is ``min(seq - at, maximum)`` (the counter saturates; capping once at the end
    is the same as capping at each issue). A wait closes the batches of its kinds by recording
    ``closed[kind]`` (entries issued at or before it are no longer open); ``oldest[kind]`` is a lower
    bound of the ``at`` of a kind's entries, present while it may have some, so a saturated counter
    or a wait looks for entries to retire only when there can be some."""

    __slots__ = ("tops", "entries", "counts", "seq", "closed", "oldest")

    def __init__(self, tops: dict, entries=None, counts=None, seq=None, closed=None, oldest=None):
        self.tops = tops
        self.entries: dict = entries if entries is not None else {}
        self.counts: dict = counts if counts is not None else {}
        self.seq: dict = seq if seq is not None else {}
        self.closed: dict = closed if closed is not None else {}
        self.oldest: dict = oldest if oldest is not None else {}

    # -- one entry's view -----------------------------------------------------------------------------
    def newer(self, kind: str, e: Entry) -> int:
        """Operations of ``kind`` issued after ``e``, up to the counter's maximum."""
        n = self.seq[kind] - e.at
        top = self.tops[kind]
        return n if n < top else top

    def is_open(self, kind: str, e: Entry) -> bool:
        if not e.open:
            return False
        c = self.closed.get(kind)
        return c is None or e.at > c

    def copy(self) -> "State":
        closed = self.closed
        entries = {}
        for k, by in self.entries.items():
            nb = {}
            for kd, e in by.items():
                c = closed.get(kd)
                nb[kd] = Entry(e.at, e.open and (c is None or e.at > c))
            entries[k] = nb
        return State(self.tops, entries, dict(self.counts), dict(self.seq), {}, dict(self.oldest))

    def _canonical(self) -> tuple:
        return ({k: {kd: (self.newer(kd, e), self.is_open(kd, e)) for kd, e in by.items()}
                 for k, by in self.entries.items()}, self.counts)

    def __eq__(self, other):
        return self._canonical() == other._canonical()

    def _drop(self, doomed) -> None:
        for k, kd in doomed:
            by = self.entries[k]
            del by[kd]
            if not by:
                del self.entries[k]

    def _recount_oldest(self, kinds) -> None:
        for kind in kinds:
            if kind in self.oldest:
                ats = [e.at for by in self.entries.values() for kd, e in by.items() if kd == kind]
                if ats:
                    self.oldest[kind] = min(ats)
                else:
                    del self.oldest[kind]

    def join(self, other: "State") -> "State":
        """What holds on either path: every pending effect, the fewest newer operations, the most
        outstanding."""
        out = self.copy()
        for k, by in other.entries.items():
            for kd, e in by.items():
                n, o = other.newer(kd, e), other.is_open(kd, e)
                mby = out.entries.setdefault(k, {})
                mine = mby.get(kd)
                s = out.seq.setdefault(kd, 0)
                if mine is None:
                    mby[kd] = Entry(s - n, o)
                    low = out.oldest.get(kd)
                    out.oldest[kd] = s - n if low is None or s - n < low else low
                else:
                    if n < out.newer(kd, mine):
                        mine.at = s - n
                    mine.open = mine.open or o
        for kind, n in other.counts.items():
            out.counts[kind] = max(out.counts.get(kind, 0), n)
        return out

    # -- effects --------------------------------------------------------------------------------------
    def issue(self, kind: str, keys) -> None:
        """An operation of ``kind`` issued, completing ``keys`` (registers and pseudo registers)."""
        top = self.tops[kind]
        s = self.seq[kind] = self.seq.get(kind, 0) + 1
        counts = self.counts
        if kind != "smem" and not any(counts.get(other) for other in _SIBLINGS[kind]):
            # saturated: the oldest of this in-order kind retired before this one issued
            low = self.oldest.get(kind)
            if low is not None and s - low >= top:
                limit = s - top
                self._drop([(k, kd) for k, by in self.entries.items() for kd, e in by.items()
                            if kd == kind and e.at <= limit])
                self._recount_oldest((kind,))
        c = counts.get(kind, 0) + 1
        counts[kind] = c if c < top else top
        if keys:
            entries = self.entries
            for k in keys:
                by = entries.get(k)
                if by is None:
                    entries[k] = {kind: Entry(s)}
                else:
                    by[kind] = Entry(s)
            if kind not in self.oldest:
                self.oldest[kind] = s

    def overwrite(self, keys) -> None:
        """A register written by an instruction that is not a load: no pending load completes it any more."""
        entries = self.entries
        for k in keys:
            by = entries.get(k)
            if by is not None:
                self._drop([(k, kd) for kd in by if kd != "exp"])

    def wait(self, counter: str, n: int) -> None:
        """``s_waitcnt counter(n)``."""
        kinds = KINDS_OF[counter]
        oldest, seq = self.oldest, self.seq
        if any(kd in oldest and (n == 0 if kd == "smem" else min(seq[kd] - oldest[kd], self.tops[kd]) >= n)
               for kd in kinds):
            self._drop([(k, kd) for k, by in self.entries.items() for kd, e in by.items() if kd in kinds
                        and (self.newer(kd, e) >= n if kd != "smem" else n == 0)])
            self._recount_oldest(kinds)
        for kd in kinds:
            if kd in seq:
                self.closed[kd] = seq[kd]
            if kd in self.counts:
                self.counts[kd] = min(self.counts[kd], n)
                if not self.counts[kd]:
                    del self.counts[kd]

    # -- what an access needs -------------------------------------------------------------------------
    def need(self, key, kind: str) -> tuple | None:
        """(the count ``s_waitcnt`` must reach before an access of ``key`` pending on ``kind``, whether
        that operation is of the newest batch), or None when it is not pending."""
        by = self.entries.get(key)
        e = by.get(kind) if by is not None else None
        if e is None:
            return None
        if kind == "smem":
            return 0, self.is_open(kind, e)
        return min(self.seq[kind] - e.at, self.tops[kind] - 1), self.is_open(kind, e)
