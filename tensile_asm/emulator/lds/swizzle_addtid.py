"""The remaining single DS instructions: ``ds_swizzle_b32`` (a cross-lane move, no LDS access),
``ds_read_addtid_b32``/``ds_write_addtid_b32``, the 8-bit d16 forms (``ds_read_u8_d16``/``_hi``,
``ds_read_i8_d16``/``_hi``, ``ds_write_b8_d16_hi``) and ``ds_nop``. All count in lgkmcnt (strict:
destinations PENDING until ``s_waitcnt lgkmcnt``).

ds_swizzle_b32 (Vega/CDNA ISA guides, DS_SWIZZLE_B32; encodings in isa/symbolic_fields.py): with
offset[15:8] == 0x80 each lane of a quad reads lane ``offset[2i+1:2i]`` of its quad; with offset[15]
clear lane i reads lane ``((i & and_mask) | or_mask) ^ xor_mask`` of its own 32-lane half
(and/or/xor = offset[4:0], [9:5], [14:10]). An inactive source lane gives 0. Other offsets (the
FFT and rotate modes, offset >= 0xc000) are refused.

addtid (RDNA/CDNA ISA pseudo-code): lane i accesses LDS byte ``offset + M0[15:0] + 4 * i``.

8-bit d16: the byte, zero- or sign-extended to 16 bits, replaces the low (``_d16``) or high
(``_d16_hi``) half of the destination, the other half kept; ``ds_write_b8_d16_hi`` stores data bits
[23:16]. Byte accesses are range-checked and recorded for the race checker by their dword.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.lds.read_write import byte_mask, sub_dword
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.memory.short_d16 import write_half, zeroes_other_half
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.emulator.state import M0
from tensile_asm.emulator.strict import waitcnt as strict_mode
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U32 = np.uint32


def swizzle_sources(offset: int, lanes: int) -> np.ndarray:
    """The source lane of every lane for a ds_swizzle_b32 offset."""
    i = np.arange(lanes)
    if offset & 0xFF00 == 0x8000:
        return (i & ~3) | ((offset >> (2 * (i & 3))) & 3)
    if offset < 0x8000:
        and_m, or_m, xor_m = offset & 31, offset >> 5 & 31, offset >> 10 & 31
        return ((((i & 31) & and_m) | or_m) ^ xor_m) | (i & ~31)
    raise Unsupported(f"swizzle offset 0x{offset:x}: only the quad-permute (0x80xx) and bit-mask (< 0x8000) "
                      f"modes are emulated, not FFT/rotate (>= 0xc000) or other bit-15 encodings")


def _finish(run, lane_bound=True, extra=()):
    run.manages_defs = True
    run.lane_bound = lane_bound
    run.extra_srcs = extra
    return run


@handles("ds_swizzle_b32")
def _swizzle(ins, cx):
    dst, src = ins.operands[:2]
    if not all(isinstance(o, Reg) and o.kind == "v" for o in (dst, src)):
        raise Unsupported("ds_swizzle_b32 operands must be VGPRs")
    source = swizzle_sources(ins.modifier("offset", 0) or 0, cx.lanes)
    wr, s, keys, strict = cx.vwrite(dst), src.index, reg_keys(dst), cx.strict

    def run(w):
        vals = np.where(np.asarray(w.exec_lanes), w.v[s], U32(0))
        wr(w, vals[source])
        if strict:
            strict_mode.issue(w, ins, keys, "lds")
    return _finish(run)


def _check_range(w, byte, width):
    if byte.size and int(byte.max()) + width > w.group.lds_size:
        raise Fault(f"LDS access at byte 0x{int(byte.max()):x} is outside the workgroup's {w.group.lds_size} "
                    f"bytes of LDS")


def _addtid_dwords(w, offset):
    sel = None if w.exec_full else np.asarray(w.exec_lanes)
    lane = np.arange(w.lanes) if sel is None else np.flatnonzero(sel)
    byte = offset + (int(w.s[M0]) & 0xFFFF) + 4 * lane
    if byte.size and (byte & 3).any():
        raise Fault("misaligned ds_*_addtid_b32 (offset + M0[15:0] must be a multiple of 4)")
    _check_range(w, byte, 4)
    return (byte >> 2)[None, :], sel


@handles("ds_read_addtid_b32")
def _read_addtid(ins, cx):
    dst = ins.operands[0]
    offset, d, keys, strict = ins.modifier("offset", 0) or 0, dst.index, reg_keys(dst), cx.strict

    def run(w):
        idx, sel = _addtid_dwords(w, offset)
        if strict:
            w.group.lds_tracker.read(w, idx, ins)
        if sel is None:
            w.v[d:d + 1] = w.group.lds[idx]
        else:
            w.v[d:d + 1, sel] = w.group.lds[idx]
        if strict:
            strict_mode.issue(w, ins, keys, "lds")
    return _finish(run, extra=(M0,))


@handles("ds_write_addtid_b32")
def _write_addtid(ins, cx):
    data = ins.operands[0]
    offset, s, strict = ins.modifier("offset", 0) or 0, data.index, cx.strict

    def run(w):
        idx, sel = _addtid_dwords(w, offset)
        vals = w.v[s:s + 1] if sel is None else w.v[s:s + 1, sel]
        if strict:
            w.group.lds_tracker.write(w, idx, ins, None, vals)
        w.group.lds[idx] = vals
        if strict:
            strict_mode.issue(w, ins, (), "lds", idx)
    return _finish(run, extra=(M0,))


def _lane_bytes(w, addr, offset):
    a = addr(w)
    if isinstance(a, int):
        a = np.full(w.lanes, a, U32)
    sel = None if w.exec_full else w.exec_lanes
    byte = (a if sel is None else a[sel]).astype(np.int64) + offset
    _check_range(w, byte, 1)
    return byte, sel


def _read8_d16_builder(signed, high):
    def build(ins, cx):
        dst, vaddr = ins.operands[:2]
        addr, offset, d, keys = cx.vread(vaddr), ins.modifier("offset", 0) or 0, dst.index, reg_keys(dst)
        zero = zeroes_other_half(cx.arch)

        def run(w):
            byte, _ = _lane_bytes(w, addr, offset)
            raw = w.group.lds.view(np.uint8)[byte]
            half = (raw.view(np.int8).astype(np.int16).view(np.uint16) if signed else raw).astype(U32)
            if cx.strict:
                w.group.lds_tracker.read(w, byte >> 2, ins, byte_mask(byte, 1))
            write_half(w, d, half, high, zero)
            if cx.strict:
                strict_mode.issue(w, ins, keys, "lds")
        run.manages_defs = True
        return run
    return build


@handles("ds_write_b8_d16_hi")
def _write8_hi(ins, cx):
    vaddr, data = ins.operands[:2]
    addr, offset, s = cx.vread(vaddr), ins.modifier("offset", 0) or 0, data.index

    def run(w):
        byte, sel = _lane_bytes(w, addr, offset)
        vals = w.v[s] if sel is None else w.v[s][sel]
        if cx.strict:
            idx, mask, placed = sub_dword(byte, 1, vals >> U32(16))
            w.group.lds_tracker.write(w, idx, ins, mask, placed)
        w.group.lds.view(np.uint8)[byte] = ((vals >> U32(16)) & U32(0xFF)).astype(np.uint8)
        if cx.strict:
            strict_mode.issue(w, ins, (), "lds", byte >> 2)
    return run


@handles("ds_nop")
def _nop(ins, cx):
    strict = cx.strict

    def run(w):
        if strict:
            strict_mode.issue(w, ins, (), "lds")
    return run


handles("ds_read_u8_d16")(_read8_d16_builder(False, False))
handles("ds_read_u8_d16_hi")(_read8_d16_builder(False, True))
handles("ds_read_i8_d16")(_read8_d16_builder(True, False))
handles("ds_read_i8_d16_hi")(_read8_d16_builder(True, True))

__all__ = ["swizzle_sources"]
