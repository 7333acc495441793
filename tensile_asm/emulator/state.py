"""The architectural state of one wave: register files, exec, VCC, SCC, M0, program counter.

Scalar registers are a Python list indexed by their hardware operand encoding (s0..s101, then
FLAT_SCRATCH 102-103, XNACK_MASK 104-105, VCC 106-107, M0 124, EXEC 126-127): SALU work is on
Python ints, which is faster than numpy scalars. Vector registers are ``uint32`` arrays of shape
[registers, lanes] with a float32 view of the same memory. EXEC is kept three ways at once (the two
SGPR words, a 64-bit int and a boolean lane mask), always through ``set_exec``.

Register keys (for the strict checker) are small ints: SGPR/special encodings as they are,
VGPR i -> VKEY + i, AGPR i -> AKEY + i.
"""

from __future__ import annotations

import numpy as np

VCC_LO, VCC_HI, M0, EXEC_LO, EXEC_HI = 106, 107, 124, 126, 127
FLAT_SCRATCH_LO, XNACK_MASK_LO = 102, 104
NUM_SCALAR = 128
VKEY, AKEY, NUM_KEYS = 256, 768, 1280

SPECIAL_INDEX = {"vcc": VCC_LO, "vcc_lo": VCC_LO, "vcc_hi": VCC_HI, "exec": EXEC_LO, "exec_lo": EXEC_LO,
                 "exec_hi": EXEC_HI, "m0": M0, "flat_scratch": FLAT_SCRATCH_LO,
                 "flat_scratch_lo": FLAT_SCRATCH_LO, "flat_scratch_hi": FLAT_SCRATCH_LO + 1}

# Register-state codes of the strict checker (one byte per key).
UNWRITTEN, READY, PENDING = 0, 1, 2

_ALL64 = (1 << 64) - 1
_mask_cache: dict[int, np.ndarray] = {}


def lanes_of(mask: int, lanes: int = 64) -> np.ndarray:
    """A 64-bit lane mask as a read-only boolean array (cached: loops reuse a few masks)."""
    arr = _mask_cache.get(mask)
    if arr is None:
        arr = np.unpackbits(np.frombuffer(mask.to_bytes(8, "little"), np.uint8), bitorder="little")
        arr = arr[:lanes].astype(bool)
        arr.flags.writeable = False
        if len(_mask_cache) > 4096:
            _mask_cache.clear()
        _mask_cache[mask] = arr
    return arr


def mask_of(lanes: np.ndarray) -> int:
    """A boolean lane array as a 64-bit int (lane i -> bit i)."""
    return int.from_bytes(np.packbits(lanes, bitorder="little").tobytes(), "little")


class Wave:
    """One wavefront. ``group`` is its workgroup (shared LDS, barrier bookkeeping)."""

    __slots__ = ("v", "vf", "a", "s", "scc", "exec", "exec_lanes", "exec_full", "pc", "done", "at_barrier",
                 "epoch", "rstate", "pending", "index", "group", "lanes", "instructions", "trace", "nops", "hz")

    def __init__(self, index: int, group, num_vgprs: int, num_agprs: int, lanes: int = 64, v=None, a=None):
        self.index = index                  # wave number within the workgroup
        self.group = group
        self.lanes = lanes
        # ``v``/``a`` may be column views into the workgroup's register storage (see batch.py).
        self.v = np.zeros((max(num_vgprs, 1), lanes), np.uint32) if v is None else v
        self.vf = self.v.view(np.float32)
        self.a = np.zeros((max(num_agprs, 1), lanes), np.uint32) if a is None else a
        self.s = [0] * NUM_SCALAR
        self.scc = 0
        self.exec = 0
        self.exec_lanes = lanes_of(0, lanes)
        self.exec_full = False
        self.pc = 0
        self.done = False
        self.at_barrier = False
        self.epoch = 0                      # barriers passed (the LDS race checker's clock)
        self.rstate = bytearray(NUM_KEYS)   # strict: UNWRITTEN / READY / PENDING per register key
        self.pending = None                 # strict: the outstanding memory operations
        self.instructions = 0
        self.trace = None
        self.nops = 0                       # extra wait states of executed s_nop (s_nop N: N)
        self.hz = {}                        # strict: hazard producers (emulator/strict/hazards.py)

    def set_exec(self, value: int) -> None:
        value &= _ALL64
        self.exec = value
        self.s[EXEC_LO] = value & 0xFFFFFFFF
        self.s[EXEC_HI] = value >> 32
        self.exec_lanes = lanes_of(value, self.lanes)
        self.exec_full = value == _ALL64

    def mark_ready(self, keys) -> None:
        st = self.rstate
        for k in keys:
            st[k] = READY

    def split_columns(self, idx):
        """[(wave index, the columns of ``idx`` that belong to it)]: one wave owns them all."""
        return ((self.index, idx),)

    def column_owners(self):
        """[(wave index, column slice or None for all)] of an access's active-lane columns."""
        return ((self.index, None),)

    def describe(self) -> str:
        g = self.group
        return f"workgroup {g.id}, wave {self.index}" if g is not None else f"wave {self.index}"
