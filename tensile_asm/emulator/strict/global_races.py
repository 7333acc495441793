"""Strict mode: global-memory races between the workgroups of one launch.

The emulator runs workgroups one after another, so two workgroups that touch the same global bytes
without atomics get a deterministic answer here while the hardware's depends on scheduling. Per
allocation and per launch this records who touched each cell (a dword; a byte once the allocation
sees any sub-dword or misaligned access, so neighbouring workgroups may legally share a dword byte by
byte, as a 16-bit matrix with an odd leading dimension stored two elements at a time does):

* ``owner``: the workgroup whose plain store wrote the cell (>= 0), ``-2 - wg`` for an atomic by one
  workgroup, ``SEVERAL`` for atomics by more than one, -1 untouched;
* ``reader``: the latest earlier workgroup that loaded the cell (-1 none); ``misread``: the same for
  loads that are not naturally aligned (rare; the array exists once one happens). A workgroup's loads
  are only logged while it runs and folded in when it ends, so during its run they name other
  workgroups only.

Reported (as a ``Fault``; the wave loop names the instruction): a plain store to a cell another
workgroup stored to or atomically updated (write-write), or loaded (write-after-read); a plain load of
a cell another workgroup stored to (read-after-write: on hardware the reader may run first); an atomic
on a cell another workgroup stored to; and, between loads and atomics, only a load that is not
naturally aligned, before or after another workgroup's atomic on a cell it covers. Atomics among
themselves are the legitimate way and are not reported; accesses within one workgroup are the LDS
and waitcnt checks' business, not this one's.

The rule: a cell's writers decide what it is. A cell other workgroups write only through atomic
read-modify-writes is an atomic object, and a naturally aligned load of it (vector or scalar) is an
atomic load, not a race: on AMDGPU an aligned load is single-copy atomic and IS the relaxed atomic
load at ISA level (LLVM AMDGPUUsage, "Memory Model GFX90A"/"GFX942": ``load atomic monotonic`` of
global memory is a plain ``buffer/global/flat_load``, glc/sc bits only setting the scope), so it reads
a value of the cell's modification order. That is how the loop clang emits for a float
``atomicAdd``/``atomicMax`` without a native instruction starts (AtomicExpand's ``atomicrmw`` ->
``cmpxchg`` expansion; HIP's float ``atomicMax``): a ``global_load_dword`` of the address -- an
``s_load_dword`` where it is wave-uniform and nothing in the kernel stores before it -- then a
``global_atomic_cmpswap`` retry loop (tests/data/fixtures/hip_atomic_*). The loaded value is only the
loop's first guess: the cmpswap compares it with the cell's current value and returns that value for
the next try, so even a stale one -- what the scalar cache may hold, as it is not coherent with other
CUs' atomics -- costs an iteration, never a wrong result (LLVM's own model lets its non-atomic load
race: a racing load returns ``undef``, not undefined behaviour, llvm/docs/Atomics.rst "NotAtomic";
the cmpxchg validates it). Which value an atomic load sees depends on the workgroups' order, as an
atomic's returned value does; the checker cannot see how the value is used and accepts it.
A cell some workgroup stores to plainly is an ordinary object (a relaxed atomic store would be the
same instruction, but a kernel's plain stores are its outputs, and a flag another workgroup polls
cannot run on an emulator that runs workgroups one after another anyway): every access of another
workgroup to it -- store, load, atomic -- is a race, as the value left or read depends on the order.
A misaligned load is not single-copy atomic (it may combine bytes of two updates, a value in no
modification order), so it races with atomics too.

Arrays are created on first need, so loads of buffers nobody stores to cost a list append.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.device import Fault

UNTOUCHED = -1
SEVERAL = np.iinfo(np.int32).min          # atomics by more than one workgroup
FIX = "use an atomic, or make each workgroup write its own range"


class _Cells:
    """The race state of one allocation."""

    __slots__ = ("gran", "owner", "reader", "misread", "reads4", "reads")

    def __init__(self):
        self.gran = 4                     # bytes per cell: 4, or 1 after a sub-dword access
        self.owner = None
        self.reader = None
        self.misread = None
        self.reads4 = []                  # this workgroup's dword loads: byte offsets
        self.reads = []                   # its other loads: (byte offsets, bytes each)

    def cells(self, a, off, nbytes) -> np.ndarray:
        """The cell indices an access of ``nbytes`` at each byte offset touches (repeats are harmless)."""
        if self.gran == 4 and (nbytes < 4 or (off & 3).any()):
            # a misaligned dword covers parts of two dwords: its neighbours' bytes are not its own
            self.to_bytes(a)
        if self.gran == 1:
            return (off.reshape(-1, 1) + np.arange(nbytes)).ravel()
        return (off >> 2).ravel() if nbytes == 4 else ((off.reshape(-1, 1) + np.arange(0, nbytes, 4)) >> 2).ravel()

    def to_bytes(self, a) -> None:
        n = len(a.data)
        for name in ("owner", "reader", "misread"):
            x = getattr(self, name)
            if x is not None:
                setattr(self, name, np.repeat(x, 4)[:n])
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
        """Fold the finished workgroup's loads into ``reader``, the misaligned ones also into ``misread``."""
        me = self.current
        for a, st in self.read_log:
            parts, torn = [], []
            if st.reads4:
                off = np.concatenate([o.ravel() for o in st.reads4])
                parts.append(st.cells(a, off, 4))
                torn.append((off[(off & 3) != 0], 4))
            for off, n in st.reads:
                parts.append(st.cells(a, off, n))
                if n == 2:
                    torn.append((off[(off & 1) != 0], 2))
            st.array(a, "reader")[np.concatenate(parts)] = me
            torn = [st.cells(a, off, n) for off, n in torn if off.size]
            if torn:
                st.array(a, "misread")[np.concatenate(torn)] = me
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
        """A plain load of ``nbytes`` (1, 2 or 4; wider loads come dword by dword) at each byte offset."""
        st = self._cells(a)
        if st.gran == 4 and (nbytes < 4 or (off & 3).any()):
            st.to_bytes(a)
        if st.owner is not None:
            cells = st.cells(a, off, nbytes)
            prev = st.owner[cells]
            me = self.current
            other = (prev != UNTOUCHED) & (prev != me) & (prev != -2 - me)
            if other.any():
                self._check_load(a, st, off, nbytes, cells, prev, other)
        if not st.reads4 and not st.reads:
            self.read_log.append((a, st))
        if nbytes == 4:
            st.reads4.append(off)
        else:
            st.reads.append((off, nbytes))

    def _check_load(self, a, st, off, nbytes, cells, prev, other) -> None:
        """The cells in ``other`` another workgroup stored to or updated atomically: a race unless only
        atomically and this lane's load is naturally aligned (an atomic load; the module docstring)."""
        misaligned = np.repeat(((off & (nbytes - 1)) != 0).ravel(), len(cells) // off.size)
        bad = other & ((prev >= 0) | misaligned)
        if bad.any():
            atomic = prev[np.argmax(bad)] <= -2                 # the cell reported
            verb = "loads (misaligned, so not single-copy atomic)" if atomic else "loads"
            self._report(a, st, cells, prev, bad, verb, "stored to")

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
        if st.misread is not None:                              # aligned loads are atomic loads: fine
            loaded = st.misread[cells]
            torn = loaded != UNTOUCHED
            if torn.any():
                self._report(a, st, cells, loaded, torn, "atomically updates",
                             "loaded with a misaligned load (not single-copy atomic)")
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
