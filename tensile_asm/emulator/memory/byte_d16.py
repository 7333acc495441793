"""Byte d16 forms of buffer/global/flat memory: ``*_load_ubyte_d16``/``sbyte_d16`` (``_hi``) load a
byte, zero- or sign-extended to 16 bits, into the low (high) half of the destination and keep the
other half; ``*_store_byte_d16_hi`` stores bits [23:16] of the data VGPR (Vega/CDNA ISA guides,
MUBUF/FLAT opcode tables). Out-of-range buffer lanes follow buffer_flat.py: a load gives 0 in the loaded
half, a store is dropped. Loads are PENDING until ``s_waitcnt vmcnt`` in strict mode.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.buffer_flat import _active, _vm_issue, element_addresses
from tensile_asm.emulator.memory.short_d16 import write_half, zeroes_other_half
from tensile_asm.emulator.program import HandlerTable, reg_keys

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U32, U64 = np.uint32, np.uint64


def _load_builder(buffer, signed, high):
    def build(ins, cx):
        dst = ins.operands[0]
        at, d0 = element_addresses(ins, cx, buffer, 1, 1), dst.index
        track = _vm_issue(cx, ins, reg_keys(dst))
        zero = zeroes_other_half(cx.arch)

        def run(w):
            addr, ok = at(w)
            half = np.zeros(addr.shape, U32)
            if ok.any():
                vals = w.group.memory.load_small(addr[ok].astype(U64), 1, signed)
                half[ok] = vals & U32(0xFFFF)           # sign-extended to 32 bits: keep 16
            write_half(w, d0, half, high, zero)
            if track:
                track(w)
        run.manages_defs = True
        return run
    return build


def _store_hi_builder(buffer):
    def build(ins, cx):
        data = ins.operands[0] if buffer else ins.operands[1]
        at = element_addresses(ins, cx, buffer, 0, 1)
        track = _vm_issue(cx, ins, ())

        def run(w):
            vals = (_active(w, w.v[data.index]) >> U32(16)) & U32(0xFF)
            addr, ok = at(w)
            if ok.any():
                w.group.memory.store_small(addr[ok].astype(U64), vals[ok], 1)
            if track:
                track(w)
        return run
    return build


for _k in ("buffer", "global", "flat"):
    _buf = _k == "buffer"
    for _sign, _signed in (("u", False), ("s", True)):
        handles(f"{_k}_load_{_sign}byte_d16")(_load_builder(_buf, _signed, False))
        handles(f"{_k}_load_{_sign}byte_d16_hi")(_load_builder(_buf, _signed, True))
    handles(f"{_k}_store_byte_d16_hi")(_store_hi_builder(_buf))

__all__: list = []
