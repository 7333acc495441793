"""LDS atomics: ``ds_add_u32`` ... ``ds_max_f32``, ``ds_cmpst_b32`` and their ``_rtn_`` forms.

Lanes of one wave that hit the same dword are applied one after another in ascending lane order
(the hardware serialises them in some order; for commutative operations the final memory is the
same, and each ``_rtn_`` lane gets the value before its own update). Like every DS instruction they
count in lgkmcnt: a returned value is PENDING in strict mode until ``s_waitcnt lgkmcnt``. Atomics are
recorded by the race tracker: a race with other waves' plain accesses, not with their atomics.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.emulator.strict import waitcnt as strict_mode
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U32 = np.uint32


def _f(x):
    return np.asarray([x], U32).view(np.float32)[0]


def _u(x):
    return int(np.asarray([x], np.float32).view(U32)[0])


def _i(x):
    return x - (1 << 32) if x & 0x80000000 else x


# old value, data -> new value (32-bit patterns)
OPS = {
    "add_u32": lambda o, d: (o + d) & 0xFFFFFFFF,
    "sub_u32": lambda o, d: (o - d) & 0xFFFFFFFF,
    "rsub_u32": lambda o, d: (d - o) & 0xFFFFFFFF,
    "inc_u32": lambda o, d: 0 if o >= d else o + 1,
    "dec_u32": lambda o, d: d if (o == 0 or o > d) else o - 1,
    "min_u32": min, "max_u32": max,
    "min_i32": lambda o, d: o if _i(o) <= _i(d) else d,
    "max_i32": lambda o, d: o if _i(o) >= _i(d) else d,
    "and_b32": lambda o, d: o & d, "or_b32": lambda o, d: o | d, "xor_b32": lambda o, d: o ^ d,
    "add_f32": lambda o, d: _u(np.float32(_f(o)) + np.float32(_f(d))),
    "min_f32": lambda o, d: _u(np.fmin(_f(o), _f(d))),
    "max_f32": lambda o, d: _u(np.fmax(_f(o), _f(d))),
}


def _builder(op: str, returns: bool, compare: bool):
    def build(ins, cx):
        operands = list(ins.operands)
        dst = operands.pop(0) if returns else None
        vaddr, data = operands[0], operands[1]
        cmp_src = operands[2] if compare else None   # ds_cmpst: data0 = compare value, data1 = new value
        if not all(isinstance(o, Reg) and o.kind == "v" for o in operands[:3 if compare else 2]):
            raise Unsupported("LDS atomic operands must be VGPRs")
        offset = ins.modifier("offset", 0) or 0
        a, dv = vaddr.index, data.index
        sv = cmp_src.index if compare else None
        wr = cx.vwrite(dst) if returns else None
        keys = reg_keys(dst) if returns else ()
        strict, fn = cx.strict, OPS.get(op)

        def run(w):
            lanes = np.flatnonzero(np.asarray(w.exec_lanes))
            addrs = (w.v[a].astype(np.int64) + offset)
            old_values = np.zeros(w.lanes, U32)
            lds = w.group.lds
            for lane in lanes:
                byte = int(addrs[lane])
                if byte & 3:
                    raise Fault("misaligned LDS atomic (needs a 4-byte aligned address)")
                if byte + 4 > w.group.lds_size:
                    raise Fault(f"LDS atomic at byte 0x{byte:x} is outside the workgroup's "
                                f"{w.group.lds_size} bytes of LDS")
                old = int(lds[byte >> 2])
                old_values[lane] = old
                if compare:     # store data1 where memory equals data0
                    if old == int(w.v[dv][lane]):
                        lds[byte >> 2] = w.v[sv][lane]
                else:
                    lds[byte >> 2] = fn(old, int(w.v[dv][lane]))
            if returns:
                wr(w, np.where(np.asarray(w.exec_lanes), old_values, w.v[dst.index]))
            if strict:
                w.group.lds_tracker.atomic(w, addrs[lanes], 4, ins)
                strict_mode.issue(w, ins, keys, "lds")
        run.manages_defs = True
        run.lane_bound = True
        run.extra_srcs = ()
        return run
    return build


for _op in OPS:
    handles(f"ds_{_op}")(_builder(_op, False, False))
    handles(f"ds_{_op.replace('_', '_rtn_', 1)}")(_builder(_op, True, False))
handles("ds_cmpst_b32")(_builder("cmpst", False, True))
handles("ds_cmpst_rtn_b32")(_builder("cmpst", True, True))

__all__: list = []
