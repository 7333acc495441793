"""16-bit memory forms for HGEMM/BF16 kernels: ``buffer/global_load_short_d16`` (``_hi``) load into one
half of a VGPR and keep the other (or zero it, on targets whose isa/<gfx>.yaml says
``d16_loads_zero_other_half``: SRAM-ECC parts, where Tensile's kernels load the halves into two VGPRs and
OR them); ``buffer/global_store_short_d16_hi`` store the high half;
``ds_read_u16``/``ds_read_i16``/``ds_read_u16_d16``(``_hi``) and ``ds_write_b16``(``_d16_hi``). (The fp64
atomics are atomics.py's.)

Out-of-range buffer lanes follow buffer_flat.py (loads give 0 in the loaded half, stores are dropped). LDS
16-bit accesses are range-checked and recorded for the race checker by their dword.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.lds.read_write import byte_mask, sub_dword
from tensile_asm.emulator.memory.buffer_flat import _active, _vm_issue, element_addresses
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, reg_keys
from tensile_asm.emulator.strict import waitcnt as strict_mode

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U16, U32, U64 = np.uint16, np.uint32, np.uint64


def _merge(old, new16, high):
    return (old & U32(0xFFFF)) | (new16 << U32(16)) if high else (old & U32(0xFFFF0000)) | new16


def write_half(w, d0, half, high, zero_other: bool = False):
    """Write the 16-bit values ``half`` (uint32, one per active lane) into the low or high half of
    VGPR ``d0``, keeping the other half (the d16 loads of memory and LDS), or zeroing it (``zero_other``)."""
    row = w.v[d0]
    if zero_other:
        vals = half << U32(16) if high else half
    if w.exec_full:
        row[...] = vals if zero_other else _merge(row, half, high)
    else:
        sel = w.exec_lanes
        row[sel] = vals if zero_other else _merge(row[sel], half, high)


def zeroes_other_half(arch) -> bool:
    """Whether ``arch``'s d16 memory loads zero the other half of the VGPR (isa/<gfx>.yaml
    ``memory.d16_loads_zero_other_half``: SRAM-ECC parts, LLVM's d16PreservesUnusedBits = !SRAMECC,
    Tensile's HasEccHalf) rather than keep it."""
    return bool(arch.memory.get("d16_loads_zero_other_half", False))


def _d16_load_builder(kind, high):
    def build(ins, cx):
        dst = ins.operands[0]
        at, d0 = element_addresses(ins, cx, kind == "buffer", 1, 2), dst.index
        track = _vm_issue(cx, ins, reg_keys(dst))
        zero = zeroes_other_half(cx.arch)
        def run(w):
            addr, ok = at(w)
            vals = np.zeros(addr.shape, U32)
            if ok.any():
                vals[ok] = w.group.memory.load_small(addr[ok].astype(U64), 2, False)
            write_half(w, d0, vals, high, zero)
            if track:
                track(w)
        run.manages_defs = True
        return run
    return build


def _store_hi_builder(kind):
    def build(ins, cx):
        data = ins.operands[0] if kind == "buffer" else ins.operands[1]
        at = element_addresses(ins, cx, kind == "buffer", 0, 2)
        track = _vm_issue(cx, ins, ())
        def run(w):
            vals = _active(w, w.v[data.index]) >> U32(16)
            addr, ok = at(w)
            if ok.any():
                w.group.memory.store_small(addr[ok].astype(U64), vals[ok], 2)
            if track:
                track(w)
        return run
    return build


for _k in ("buffer", "global", "flat"):
    handles(f"{_k}_load_short_d16")(_d16_load_builder("buffer" if _k == "buffer" else "global", False))
    handles(f"{_k}_load_short_d16_hi")(_d16_load_builder("buffer" if _k == "buffer" else "global", True))
    handles(f"{_k}_store_short_d16_hi")(_store_hi_builder("buffer" if _k == "buffer" else "global"))


# -- LDS 16-bit ---------------------------------------------------------------------------------------

def _lds_halves(w, addr, offset):
    a = addr(w)
    if isinstance(a, int):
        a = np.full(w.lanes, a, U32)
    sel = None if w.exec_full else w.exec_lanes
    byte = (a if sel is None else a[sel]).astype(np.int64) + offset
    if byte.size and (byte & 1).any():
        raise Fault("misaligned 16-bit LDS access")
    if byte.size and int(byte.max()) + 2 > w.group.lds_size:
        raise Fault(f"LDS access at byte 0x{int(byte.max()):x} is outside the workgroup's {w.group.lds_size} "
                    f"bytes of LDS")
    return byte, sel


def _ds_read16_builder(signed, d16, high):
    def build(ins, cx):
        dst, vaddr = ins.operands[:2]
        addr, offset, d0 = cx.vread(vaddr), ins.modifier("offset", 0) or 0, dst.index
        keys = reg_keys(dst)
        zero = zeroes_other_half(cx.arch)
        def run(w):
            byte, sel = _lds_halves(w, addr, offset)
            vals = w.group.lds.view(U16)[byte >> 1].astype(U32)
            if signed:
                vals = vals.astype(U16).view(np.int16).astype(np.int32).view(U32)
            if cx.strict:
                w.group.lds_tracker.read(w, byte >> 2, ins, byte_mask(byte, 2))
            if d16:
                write_half(w, d0, vals, high, zero)
            elif sel is None:
                w.v[d0] = vals
            else:
                w.v[d0, sel] = vals
            if cx.strict:
                strict_mode.issue(w, ins, keys, "lds")
        run.manages_defs = True
        return run
    return build


def _ds_write16_builder(high):
    def build(ins, cx):
        vaddr, data = ins.operands[:2]
        addr, offset = cx.vread(vaddr), ins.modifier("offset", 0) or 0
        def run(w):
            byte, sel = _lds_halves(w, addr, offset)
            vals = _active(w, w.v[data.index])
            vals = (vals >> U32(16)) if high else vals
            if cx.strict:
                idx, mask, placed = sub_dword(byte, 2, vals)
                w.group.lds_tracker.write(w, idx, ins, mask, placed)
            w.group.lds.view(U16)[byte >> 1] = vals.astype(U16)
            if cx.strict:
                strict_mode.issue(w, ins, (), "lds", byte >> 2)
        return run
    return build


handles("ds_read_u16")(_ds_read16_builder(False, False, False))
handles("ds_read_i16")(_ds_read16_builder(True, False, False))
handles("ds_read_u16_d16")(_ds_read16_builder(False, True, False))
handles("ds_read_u16_d16_hi")(_ds_read16_builder(False, True, True))
handles("ds_write_b16")(_ds_write16_builder(False))
handles("ds_write_b16_d16_hi")(_ds_write16_builder(True))
