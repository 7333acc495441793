"""Device memory of one launch: buffers at distinct fake addresses with unmapped gaps between them.

Every access is vectorised over lanes (and dwords): find the allocation(s) the addresses fall in,
then gather or scatter on a numpy view. An address in no allocation raises ``Fault``; the wave loop
turns it into an ``EmulationError`` naming the instruction.
"""

from __future__ import annotations

import bisect

import numpy as np


class Fault(Exception):
    """A problem found while executing one instruction; the wave loop adds where it happened."""


BASE_ADDRESS = 0x10_0000_0000        # below 2**47 (canonical) and 2**48 (buffer descriptor base)
ALIGNMENT = 0x1000
GAP = 0x10_0000                      # unmapped bytes after every allocation


class Allocation:
    __slots__ = ("base", "size", "name", "data", "u32", "f32", "array")

    def __init__(self, base: int, size: int, name: str, array=None):
        self.base, self.size, self.name, self.array = base, size, name, array
        padded = (size + 3) // 4 * 4
        self.data = np.zeros(padded, np.uint8)
        self.u32 = self.data.view(np.uint32)
        self.f32 = self.data.view(np.float32)

    @property
    def end(self) -> int:
        return self.base + self.size

    def __repr__(self) -> str:
        return f"{self.name} [0x{self.base:x}, 0x{self.end:x})"


class DeviceMemory:
    def __init__(self):
        self.allocations: list[Allocation] = []
        self._bases: list[int] = []
        self._next = BASE_ADDRESS
        self.races = None                # strict mode: global_races.GlobalRaces, told of every access

    def alloc(self, size: int, name: str, init=None, array=None) -> Allocation:
        """Reserve ``size`` bytes; ``init`` (bytes or uint8 array) fills them."""
        a = Allocation(self._next, size, name, array)
        if init is not None:
            raw = np.frombuffer(init, np.uint8) if isinstance(init, (bytes, bytearray)) else init
            a.data[:len(raw)] = raw
        self.allocations.append(a)
        self._bases.append(a.base)
        self._next = (a.base + size + GAP + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        return a

    def describe(self, address: int) -> str:
        i = bisect.bisect_right(self._bases, address) - 1
        near = []
        if i >= 0:
            near.append(f"after {self.allocations[i]!r}")
        if i + 1 < len(self.allocations):
            near.append(f"before {self.allocations[i + 1]!r}")
        return "; ".join(near) or "no buffers are allocated"

    def _fault(self, address: int, nbytes: int):
        raise Fault(f"memory fault: {nbytes}-byte access at address 0x{address:x} lies in no buffer "
                    f"({self.describe(address)})")

    def locate(self, addrs: np.ndarray, nbytes: int):
        """Yield (allocation, byte offsets, selector) covering every address; selector None = all."""
        lo = int(addrs.min())
        hi = int(addrs.max())
        i = bisect.bisect_right(self._bases, lo) - 1
        if i >= 0:
            a = self.allocations[i]
            if hi + nbytes <= a.end:
                if lo < a.base:
                    self._fault(lo, nbytes)
                return [(a, (addrs - np.uint64(a.base)).astype(np.int64), None)]
        bases = np.array(self._bases, np.uint64)
        idx = np.searchsorted(bases, addrs, side="right").astype(np.int64) - 1
        out = []
        for j in np.unique(idx):
            sel = idx == j
            if j < 0:
                self._fault(int(addrs[sel].min()), nbytes)
            a = self.allocations[int(j)]
            off = (addrs[sel] - np.uint64(a.base)).astype(np.int64)
            bad = off + nbytes > a.size
            if bad.any():
                self._fault(int(addrs[sel][bad][0]), nbytes)
            out.append((a, off, sel))
        return out

    # -- dword access ------------------------------------------------------------------------------
    def load_u32(self, addrs: np.ndarray) -> np.ndarray:
        out = np.empty(addrs.shape, np.uint32)
        for a, off, sel in self.locate(addrs, 4):
            vals = a.u32[off >> 2] if not (off & 3).any() else _gather_unaligned(a.data, off)
            if sel is None:
                out[...] = vals
            else:
                out[sel] = vals
            if self.races is not None:
                self.races.load(a, off, 4)
        return out

    def store_u32(self, addrs: np.ndarray, values: np.ndarray, atomic: bool = False) -> None:
        """``atomic``: the store half of a read-modify-write (scalar/stores.py), for the race checker."""
        for a, off, sel in self.locate(addrs, 4):
            if self.races is not None:
                (self.races.atomic if atomic else self.races.store)(a, off, 4)
            vals = values if sel is None else values[sel]
            if not (off & 3).any():
                a.u32[off >> 2] = vals
            else:
                b = np.ascontiguousarray(vals, dtype="<u4").view(np.uint8).reshape(-1, 4)
                a.data[off.reshape(-1, 1) + np.arange(4)] = b

    # -- sub-dword access --------------------------------------------------------------------------
    def load_small(self, addrs: np.ndarray, nbytes: int, signed: bool) -> np.ndarray:
        out = np.empty(addrs.shape, np.uint32)
        dtype = {1: np.int8 if signed else np.uint8, 2: np.int16 if signed else np.uint16}[nbytes]
        for a, off, sel in self.locate(addrs, nbytes):
            raw = a.data[off.reshape(-1, 1) + np.arange(nbytes)]
            vals = np.ascontiguousarray(raw).view(dtype).reshape(off.shape).astype(np.int32).view(np.uint32)
            if sel is None:
                out[...] = vals
            else:
                out[sel] = vals
            if self.races is not None:
                self.races.load(a, off, nbytes)
        return out

    def store_small(self, addrs: np.ndarray, values: np.ndarray, nbytes: int) -> None:
        for a, off, sel in self.locate(addrs, nbytes):
            if self.races is not None:
                self.races.store(a, off, nbytes)
            vals = (values if sel is None else values[sel]).astype("<u4")
            b = vals.view(np.uint8).reshape(-1, 4)[:, :nbytes]
            a.data[off.reshape(-1, 1) + np.arange(nbytes)] = b

    # -- scalar (SMEM) -----------------------------------------------------------------------------
    def load_scalar(self, address: int, ndwords: int, atomic: bool = False) -> list[int]:
        address &= ~3                      # SMEM ignores the two low address bits
        i = bisect.bisect_right(self._bases, address) - 1
        if i < 0 or address + 4 * ndwords > self.allocations[i].end:
            self._fault(address, 4 * ndwords)
        a = self.allocations[i]
        start = (address - a.base) >> 2
        if self.races is not None and not atomic:
            self.races.load(a, 4 * np.arange(start, start + ndwords, dtype=np.int64), 4)
        return a.u32[start:start + ndwords].tolist()

    def locate_atomic(self, addrs: np.ndarray, nbytes: int):
        """``locate`` for an atomic read-modify-write of ``nbytes`` per address (told to the race checker)."""
        out = self.locate(addrs, nbytes)
        if self.races is not None:
            for a, off, _ in out:
                self.races.atomic(a, off, nbytes)
        return out


def _gather_unaligned(data: np.ndarray, off: np.ndarray) -> np.ndarray:
    raw = data[off.reshape(-1, 1) + np.arange(4)]
    return np.ascontiguousarray(raw).view("<u4").reshape(off.shape)
