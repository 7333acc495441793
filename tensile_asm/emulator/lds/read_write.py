"""LDS reads and writes (``ds_read*``/``ds_write*``, ``read2``/``write2``, ``st64``), and the byte helpers
the other DS modules share.

Addresses are ``vaddr + offset`` bytes; ``read2``/``write2`` offsets count elements (4 or 8 bytes,
64 elements for the ``st64`` forms). Accesses are gathered over the active lanes at once, range
checked, and in strict mode recorded for the race checker (strict/lds_races.py) and lgkmcnt.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys, register_file
from tensile_asm.emulator.strict import waitcnt as strict_mode

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles


def byte_mask(byte, width):
    """The bytes of their dword that ``width``-byte accesses at byte addresses ``byte`` touch."""
    return ((1 << width) - 1 << (byte & 3)).astype(np.uint8)


def sub_dword(byte, width, data):
    """A byte/short LDS write of the low ``width`` bytes of each lane's ``data`` at byte addresses
    ``byte``: its dwords, byte masks and the bytes in place in their dword."""
    shift = (byte & 3).astype(np.uint32) * np.uint32(8)
    vals = (np.asarray(data, np.uint32) & np.uint32((1 << 8 * width) - 1)) << shift
    return byte >> 2, byte_mask(byte, width), vals


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
                w.group.lds_tracker.write(w, idx, ins, None, vals)
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
