"""gfx950 LDS transpose loads: ``ds_read_b64_tr_b16`` and ``ds_read_b64_tr_b8``.

Each lane names a 64-bit chunk of LDS (``vaddr + offset``) holding n = 64 / bits elements. The
wave works in groups of 16 lanes; within a group, element e of lane j's result is element j % n
of the chunk that lane (16 / n) * e + j // n named. For b16 the group's chunks form a 4 x 16 tile
(row e = the chunks of lanes 4e..4e+3 end to end) and lane j receives column j; for b8 an 8 x 16
tile, rows of two chunks (two interleaved 8 x 8 byte transposes). This is how Triton's AMD backend
places addresses for these loads (chooseLLDsReadB64TrLayout in lib/Dialect/TritonGPU/IR/
LinearLayoutConversions.cpp: its 16 x 4 "base unit" diagram, and the dot-operand layout with its
first lane bases and register bases exchanged); Triton GEMMs compiled for gfx950 that use them
match numpy (tests/test_emulator_fixtures.py), which a different mapping would not.

A group of 16 lanes must be wholly active or wholly inactive (which lanes feed a partially active
group's results is not documented): otherwise a fault. Addresses need dword alignment, as
``ds_read_b64`` here; the strict LDS checks (range, races, lgkmcnt) are those of read_write.py.

``ds_read_b64_tr_b4`` and ``ds_read_b96_tr_b6`` are not implemented: their mapping of packed 4-
and 6-bit values could not be established from public sources.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tensile_asm.emulator.lds.read_write import _lane_addresses, _lane_dwords
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.emulator.strict import waitcnt as strict_mode

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

_ROWS = np.array([[0], [4]], np.int64)          # the chunk's two dwords, byte offsets from the address
_UINT = {16: np.uint16, 8: np.uint8}


@lru_cache(maxsize=None)
def transpose_map(bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(source lane, source element) of result element e of lane j, each as an array [16, n]."""
    n = 64 // bits
    j, e = np.meshgrid(np.arange(16), np.arange(n), indexing="ij")
    return (16 // n) * e + j // n, j % n


def transpose_chunks(chunks: np.ndarray, bits: int) -> np.ndarray:
    """Apply the exchange to chunks [2 dwords, lanes] (lanes a multiple of 16): the result dwords."""
    n = 64 // bits
    elems = np.ascontiguousarray(chunks.T).view(_UINT[bits]).reshape(-1, 16, n)    # [groups, lane, element]
    lane, elem = transpose_map(bits)
    out = elems[:, lane, elem]
    return np.ascontiguousarray(out).reshape(-1, n).view(np.uint32).T              # [2, lanes]


def _active_groups(w):
    """Lane selector of the active 16-lane groups (None: all lanes), or a fault for a split group."""
    if w.exec_full:
        return None
    groups = np.asarray(w.exec_lanes).reshape(-1, 16)
    full = groups.all(1)
    if (groups.any(1) != full).any():
        first = 16 * int(np.argmax(groups.any(1) != full)) % 64          # a wave's lane (batches: any wave)
        raise Fault(f"EXEC covers only part of lanes {first}..{first + 15}: a transpose load's 16-lane "
                    f"group must be wholly active or inactive")
    return np.repeat(full, 16)


def _builder(bits: int):
    def build(ins, cx):
        dst, vaddr = ins.operands[:2]
        if dst.count != 2:
            raise Unsupported(f"destination {dst} is not a register pair")
        rows = _ROWS + (ins.modifier("offset", 0) or 0)
        if int(rows[0, 0]) % 4:
            raise Unsupported("offsets that are not dword multiples")
        rows4 = rows >> 2
        addr, d0, keys, strict = cx.vread(vaddr), dst.index, reg_keys(dst), cx.strict
        agpr = dst.kind == "a"                   # DS loads may write AGPRs
        span = int(rows.max()) + 4

        def run(w):
            groups = _active_groups(w)           # the active lanes themselves, split groups refused
            if strict:
                idx, sel = _lane_dwords(w, addr, rows4, span)
                w.group.lds_tracker.read(w, idx, ins)
                chunks = w.group.lds[idx]
            else:
                byte, sel = _lane_addresses(w, addr, rows)
                ok = byte + 4 <= w.group.lds_size
                chunks = np.where(ok, w.group.lds[np.where(ok, byte >> 2, 0)], 0).astype(np.uint32)
            vals = transpose_chunks(chunks, bits)
            file = w.a if agpr else w.v
            if groups is None:
                file[d0:d0 + 2] = vals
            else:
                file[d0:d0 + 2, groups] = vals
            if strict:
                strict_mode.issue(w, ins, keys, "lds")
        run.manages_defs = True
        run.agpr_ok = True
        return run
    return build


handles("ds_read_b64_tr_b16")(_builder(16))
handles("ds_read_b64_tr_b8")(_builder(8))
