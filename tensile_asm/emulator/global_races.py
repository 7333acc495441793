"""Strict mode: global-memory races between the workgroups of one launch.

The emulator runs workgroups one after another, so two workgroups that touch the same global bytes
without atomics get a deterministic answer here while the hardware's depends on scheduling. Per
allocation and per launch this records who touched each cell (a dword; a byte once the allocation
sees any sub-dword access, so neighbouring workgroups may legally share a dword byte by byte):

* ``owner``: the workgroup whose plain store wrote the cell (>= 0), ``-2 - wg`` for an atomic by one
  workgroup, ``SEVERAL`` for atomics by more than one, -1 untouched;
* ``reader``: the latest earlier workgroup that loaded the cell (-1 none). A workgroup's loads are
  only logged while it runs and folded in when it ends, so during its run ``reader`` names other
  workgroups only.

Reported (as a ``Fault``; the wave loop names the instruction): a plain store to a cell another
workgroup stored to or atomically updated (write-write), or loaded (write-after-read); a plain load
of a cell another workgroup stored to or atomically updated (read-after-write: on hardware the reader
may run first); an atomic on a cell another workgroup stored to plainly or loaded. Atomics among
themselves are the legitimate way and are not reported; accesses within one workgroup are the LDS
and waitcnt checks' business, not this one's. Arrays are created on first need, so loads of buffers
nobody stores to cost a list append.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory import Fault

UNTOUCHED = -1
SEVERAL = np.iinfo(np.int32).min          # atomics by more than one workgroup
FIX = "use an atomic, or make each workgroup write its own range"


class _Cells:
    """The race state of one allocation."""

    __slots__ = ("gran", "owner", "reader", "reads4", "reads")

    def __init__(self):
        self.gran = 4                     # bytes per cell: 4, or 1 after a sub-dword access
        self.owner = None
        self.reader = None
        self.reads4 = []                  # this workgroup's dword loads: byte offsets
        self.reads = []                   # its other loads: (byte offsets, bytes each)

    def cells(self, a, off, nbytes) -> np.ndarray:
        """The cell indices an access of ``nbytes`` at each byte offset touches (repeats are harmless)."""
        if nbytes < 4 and self.gran == 4:
            self.to_bytes(a)
        if self.gran == 1:
            return (off.reshape(-1, 1) + np.arange(nbytes)).ravel()
        if not (off & 3).any():
            return (off >> 2).ravel() if nbytes == 4 else ((off.reshape(-1, 1) + np.arange(0, nbytes, 4)) >> 2).ravel()
        return ((off.reshape(-1, 1) + np.arange(nbytes)) >> 2).ravel()

    def to_bytes(self, a) -> None:
        n = len(a.data)
        if self.owner is not None:
            self.owner = np.repeat(self.owner, 4)[:n]
        if self.reader is not None:
            self.reader = np.repeat(self.reader, 4)[:n]
        self.gran = 1

    def array(self, a, name) -> np.ndarray:
        x = getattr(self, name)
        if x is None:
            x = np.full(len(a.data) // self.gran, UNTOUCHED, np.int32)
            setattr(self, name, x)
        return x


class GlobalRaces:
    """One launch's tracker; ``DeviceMemory.races`` while strict mode is on."""

    def __init__(self):
        self.groups: list = []            # workgroup ids in run order (index = the id used in the arrays)
        self.current = -1
        self.state: dict = {}             # id(allocation) -> _Cells
        self.read_log: list = []          # allocations with loads logged in this workgroup

    # -- workgroup boundaries ----------------------------------------------------------------------
    def begin(self, group_id) -> None:
        self.groups.append(group_id)
        self.current = len(self.groups) - 1

    def end(self) -> None:
        """Fold the finished workgroup's loads into ``reader``."""
        me = self.current
        for a, st in self.read_log:
            parts = [st.cells(a, np.concatenate([o.ravel() for o in st.reads4]), 4)] if st.reads4 else []
            parts += [st.cells(a, off, n) for off, n in st.reads]
            st.array(a, "reader")[np.concatenate(parts)] = me
            st.reads4, st.reads = [], []
        self.read_log = []
        self.current = -1

    def _cells(self, a) -> _Cells:
        st = self.state.get(id(a))
        if st is None:
            st = self.state[id(a)] = _Cells()
        return st

    # -- accesses ------------------------------------------------------------------------------------
    def load(self, a, off, nbytes) -> None:
        st = self._cells(a)
        if nbytes < 4 and st.gran == 4:
            st.to_bytes(a)
        if st.owner is not None:
            cells = st.cells(a, off, nbytes)
            prev = st.owner[cells]
            me = self.current
            bad = (prev != UNTOUCHED) & (prev != me) & (prev != -2 - me)
            if bad.any():
                self._report(a, st, cells, prev, bad, "loads", "stored to")
        if not st.reads4 and not st.reads:
            self.read_log.append((a, st))
        if nbytes == 4:
            st.reads4.append(off)
        else:
            st.reads.append((off, nbytes))

    def store(self, a, off, nbytes) -> None:
        st = self._cells(a)
        cells = st.cells(a, off, nbytes)
        me = self.current
        owner = st.array(a, "owner")
        prev = owner[cells]
        bad = (prev != UNTOUCHED) & (prev != me) & (prev != -2 - me)
        if bad.any():
            self._report(a, st, cells, prev, bad, "stores to", "stored to")
        self._check_readers(a, st, cells, "stores to")
        owner[cells] = me

    def atomic(self, a, off, nbytes) -> None:
        st = self._cells(a)
        cells = st.cells(a, off, nbytes)
        me = self.current
        owner = st.array(a, "owner")
        prev = owner[cells]
        bad = (prev >= 0) & (prev != me)
        if bad.any():
            self._report(a, st, cells, prev, bad, "atomically updates", "stored to (without an atomic)")
        self._check_readers(a, st, cells, "atomically updates")
        mine = (prev == UNTOUCHED) | (prev == me) | (prev == -2 - me)
        owner[cells] = np.where(mine, np.int32(-2 - me), np.int32(SEVERAL))

    def _check_readers(self, a, st, cells, verb) -> None:
        if st.reader is not None:
            prev = st.reader[cells]
            bad = prev != UNTOUCHED
            if bad.any():
                self._report(a, st, cells, prev, bad, verb, "loaded (without an atomic)")

    # -- the error -----------------------------------------------------------------------------------
    def _report(self, a, st, cells, prev, bad, verb, what) -> None:
        j = int(np.argmax(bad))
        other = int(prev[j])
        byte = int(cells[j]) * st.gran
        if other == SEVERAL:
            who, what = "several other workgroups", "atomically updated"
        elif other <= -2:
            who, what = f"workgroup {self.groups[-2 - other]}", "atomically updated"
        else:
            who = f"workgroup {self.groups[other]}"
        unit = "dword" if st.gran == 4 else "byte"
        raise Fault(
            f"strict: global-memory race: workgroup {self.groups[self.current]} {verb} the {unit} at address "
            f"0x{a.base + byte:x} ({a.name} + 0x{byte:x}), which {who} {what} earlier in this launch; "
            f"the emulator runs workgroups one after another, but on hardware they run concurrently, so the "
            f"result depends on their order: {FIX}")
