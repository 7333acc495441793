"""8-bit LDS accesses: ``ds_write_b8`` (the low byte of the data VGPR) and ``ds_read_u8``/``ds_read_i8``
(the byte zero- or sign-extended to 32 bits), as Triton's fp8/int8 kernels use them.

Any byte address is aligned. Accesses are range-checked and, in strict mode, recorded for the race
checker and lgkmcnt by the dword that holds the byte (as the 16-bit forms in memory/short_d16.py do).
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.lds.read_write import byte_mask, sub_dword
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, reg_keys
from tensile_asm.emulator.strict import waitcnt as strict_mode

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U8, U32 = np.uint8, np.uint32


def _lds_bytes(w, addr, offset):
    """The active lanes' byte addresses, range-checked, and the active-lane selector."""
    a = addr(w)
    if isinstance(a, int):
        a = np.full(w.lanes, a, U32)
    sel = None if w.exec_full else w.exec_lanes
    byte = (a if sel is None else a[sel]).astype(np.int64) + offset
    if byte.size and int(byte.max()) + 1 > w.group.lds_size:
        raise Fault(f"LDS access at byte 0x{int(byte.max()):x} is outside the workgroup's {w.group.lds_size} "
                    f"bytes of LDS")
    return byte, sel


def _read_builder(signed):
    def build(ins, cx):
        dst, vaddr = ins.operands[:2]
        addr, offset, d0, keys = cx.vread(vaddr), ins.modifier("offset", 0) or 0, dst.index, reg_keys(dst)
        agpr = dst.kind == "a"                   # gfx90a+: DS loads may write AGPRs

        def run(w):
            byte, sel = _lds_bytes(w, addr, offset)
            vals = w.group.lds.view(U8)[byte]
            vals = vals.view(np.int8).astype(np.int32).view(U32) if signed else vals.astype(U32)
            if cx.strict:
                w.group.lds_tracker.read(w, byte >> 2, ins, byte_mask(byte, 1))
            file = w.a if agpr else w.v
            if sel is None:
                file[d0] = vals
            else:
                file[d0, sel] = vals
            if cx.strict:
                strict_mode.issue(w, ins, keys, "lds")
        run.manages_defs = True
        run.agpr_ok = True
        return run
    return build


@handles("ds_write_b8")
def _write_b8(ins, cx):
    vaddr, data = ins.operands[:2]
    addr, src, offset = cx.vread(vaddr), cx.vread(data), ins.modifier("offset", 0) or 0     # data: VGPR or AGPR

    def run(w):
        byte, sel = _lds_bytes(w, addr, offset)
        row = src(w)
        vals = (row if sel is None else row[sel]).astype(U8)       # the low byte
        if cx.strict:
            idx, mask, placed = sub_dword(byte, 1, vals)
            w.group.lds_tracker.write(w, idx, ins, mask, placed)
        w.group.lds.view(U8)[byte] = vals
        if cx.strict:
            strict_mode.issue(w, ins, (), "lds", byte >> 2)
    run.agpr_ok = True
    return run


handles("ds_read_u8")(_read_builder(False))
handles("ds_read_i8")(_read_builder(True))
