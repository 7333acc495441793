"""Scalar memory writes: ``s_store_dword*``, ``s_buffer_store_dword*``, ``s_atomic_*`` and
``s_buffer_atomic_*`` (32-bit and ``_x2`` 64-bit), addressed as the loads in loads.py.

A store writes memory at once (the scalar cache and its ``s_dcache_wb`` write-back are not
modelled: a later vector or scalar load sees the data). Stores ignore the two low address bits, as
SMEM loads do; an atomic's address must be aligned to its size (else a fault). Buffer forms drop
dwords at or beyond num_records (an atomic out of range changes nothing and returns 0). With
``glc`` an atomic returns the value memory held before it into its first data SGPR(s) (cmpswap:
data = [new, compare]); those SGPRs stay PENDING in strict mode until ``s_waitcnt lgkmcnt(0)``, and
every store or atomic counts in lgkmcnt, as do the cache operations ``s_dcache_wb``/``_inv`` (``_vol``),
which change nothing else here. Operations follow the CDNA3 ISA guide's SMEM table (inc:
0 once memory >= data, else +1; dec: data once memory is 0 or > data, else -1).
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.emulator.scalar.loads import _offset
from tensile_asm.emulator.strict import waitcnt as strict_mode
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles


def _signed(x: int, bits: int) -> int:
    return x - (1 << bits) if x >> (bits - 1) else x


# op -> fn(memory, data, compare, bits) -> new memory value
ATOMICS = {
    "add": lambda m, d, c, n: m + d,
    "sub": lambda m, d, c, n: m - d,
    "swap": lambda m, d, c, n: d,
    "cmpswap": lambda m, d, c, n: d if m == c else m,
    "smin": lambda m, d, c, n: d if _signed(d, n) < _signed(m, n) else m,
    "umin": lambda m, d, c, n: min(m, d),
    "smax": lambda m, d, c, n: d if _signed(d, n) > _signed(m, n) else m,
    "umax": lambda m, d, c, n: max(m, d),
    "and": lambda m, d, c, n: m & d,
    "or": lambda m, d, c, n: m | d,
    "xor": lambda m, d, c, n: m ^ d,
    "inc": lambda m, d, c, n: 0 if m >= d else m + 1,
    "dec": lambda m, d, c, n: d if m == 0 or m > d else m - 1,
}
_STORES = {"dword": 1, "dwordx2": 2, "dwordx4": 4}


def _addressing(ins, cx, buffer):
    """w -> (address, dwords in range from it or None for no limit)."""
    base = ins.operands[1]
    if not (isinstance(base, Reg) and base.kind == "s" and base.count == (4 if buffer else 2)):
        raise Unsupported(f"base {base}")
    off, b = _offset(ins, cx), base.index
    if buffer:
        def where_buffer(w):
            s = w.s
            o = off(w) & ~3
            return (s[b] | (s[b + 1] & 0xFFFF) << 32) + o, max(0, (s[b + 2] - o + 3) // 4)
        return where_buffer
    return lambda w: ((w.s[b] | w.s[b + 1] << 32) + off(w), None)


def _s_store_builder(n, buffer):
    def build(ins, cx):
        data = ins.operands[0]
        if not (isinstance(data, Reg) and data.kind == "s" and data.count == n):
            raise Unsupported(f"data {data} is not {n} SGPRs")
        where, d0 = _addressing(ins, cx, buffer), data.index
        strict = cx.strict
        def run(w):
            address, inside = where(w)
            address &= ~3
            count = n if inside is None else min(n, inside)
            if count:
                addrs = address + 4 * np.arange(count, dtype=np.uint64)
                w.group.memory.store_u32(addrs, np.array(w.s[d0:d0 + count], np.uint32))
            if strict:
                strict_mode.issue(w, ins, (), "smem")
        return run
    return build


def _s_atomic_builder(op, wide, buffer):
    fn, bits = ATOMICS[op], 64 if wide else 32
    nreg = (2 if wide else 1) * (2 if op == "cmpswap" else 1)
    mask = (1 << bits) - 1
    def build(ins, cx):
        data = ins.operands[0]
        if not (isinstance(data, Reg) and data.kind == "s" and data.count == nreg):
            raise Unsupported(f"data {data} is not {nreg} SGPRs")
        where, d0, half = _addressing(ins, cx, buffer), data.index, nreg // (2 if op == "cmpswap" else 1)
        returns = ins.has_modifier("glc")
        keys = tuple(reg_keys(data))[:half] if returns else ()
        strict = cx.strict
        def value(w, i):
            return w.s[i] | (w.s[i + 1] << 32 if wide else 0)
        def run(w):
            address, inside = where(w)
            if address % (bits // 8):
                raise Fault(f"misaligned {bits}-bit scalar atomic at 0x{address:x}")
            old = 0
            if inside is None or inside >= half:
                mem = w.group.memory
                words = mem.load_scalar(address, half, atomic=True)
                old = words[0] | (words[1] << 32 if wide else 0)
                new = fn(old, value(w, d0), value(w, d0 + half) if op == "cmpswap" else None, bits) & mask
                addrs = address + 4 * np.arange(half, dtype=np.uint64)
                mem.store_u32(addrs, np.array([(new >> (32 * k)) & 0xFFFFFFFF for k in range(half)], np.uint32),
                              atomic=True)
            if returns:
                for k in range(half):
                    w.s[d0 + k] = (old >> (32 * k)) & 0xFFFFFFFF
            if strict:
                strict_mode.issue(w, ins, keys, "smem")
        run.manages_defs = True
        run.extra_srcs = tuple(reg_keys(data))
        return run
    return build


for _name, _n in _STORES.items():
    handles(f"s_store_{_name}")(_s_store_builder(_n, False))
    handles(f"s_buffer_store_{_name}")(_s_store_builder(_n, True))
for _op in ATOMICS:
    for _wide in (False, True):
        _suffix = "_x2" if _wide else ""
        handles(f"s_atomic_{_op}{_suffix}")(_s_atomic_builder(_op, _wide, False))
        handles(f"s_buffer_atomic_{_op}{_suffix}")(_s_atomic_builder(_op, _wide, True))


@handles("s_dcache_wb", "s_dcache_inv", "s_dcache_wb_vol", "s_dcache_inv_vol")
def _dcache(ins, cx):
    if not cx.strict:
        return lambda w: None
    return lambda w: strict_mode.issue(w, ins, (), "smem")
