"""Scalar memory: ``s_load_dword*`` (64-bit base address in an SGPR pair) and ``s_buffer_load_dword*``
(buffer resource in four SGPRs; dwords at or beyond num_records read as 0).

The offset is an immediate byte offset or an SGPR (plus an ``offset:`` modifier when both are
given). The destination SGPRs are written at once; in strict mode they stay PENDING until
``s_waitcnt lgkmcnt(0)`` (scalar loads may return out of order).
"""

from __future__ import annotations

from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.emulator.strict import waitcnt as strict_mode
from tensile_asm.isa.registers import Imm, Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

_COUNTS = {"dword": 1, "dwordx2": 2, "dwordx4": 4, "dwordx8": 8, "dwordx16": 16}


def _offset(ins, cx):
    off = ins.operands[2] if len(ins.operands) > 2 else Imm(0)
    extra = ins.modifier("offset", 0) or 0
    if isinstance(off, Imm):
        value = off.value + extra
        return lambda w: value
    rd = cx.sread(off)
    return lambda w: rd(w) + extra


def _s_load_builder(n, buffer):
    def build(ins, cx):
        dst, base = ins.operands[:2]
        if not (isinstance(dst, Reg) and dst.kind == "s" and dst.count == n):
            raise Unsupported(f"destination {dst} is not {n} SGPRs")
        if not (isinstance(base, Reg) and base.kind == "s" and base.count == (4 if buffer else 2)):
            raise Unsupported(f"base {base}")
        off, b, d0 = _offset(ins, cx), base.index, dst.index
        keys = reg_keys(dst)
        strict = cx.strict
        def run(w):
            s = w.s
            if buffer:
                address = s[b] | (s[b + 1] & 0xFFFF) << 32
                num_records = s[b + 2]
                o = off(w) & ~3
                vals = [0] * n
                inside = max(0, min(n, (num_records - o + 3) // 4))
                if inside:
                    vals[:inside] = w.group.memory.load_scalar(address + o, inside)
            else:
                vals = w.group.memory.load_scalar((s[b] | s[b + 1] << 32) + off(w), n)
            s[d0:d0 + n] = vals
            if strict:
                strict_mode.issue(w, ins, keys, "smem")
        run.manages_defs = True
        return run
    return build


for _name, _n in _COUNTS.items():
    handles(f"s_load_{_name}")(_s_load_builder(_n, False))
    handles(f"s_buffer_load_{_name}")(_s_load_builder(_n, True))


@handles("s_memtime", "s_memrealtime")
def _memtime(ins, cx):
    d0 = ins.operands[0].index
    keys = reg_keys(ins.operands[0])
    strict = cx.strict
    def run(w):
        t = w.instructions
        w.s[d0], w.s[d0 + 1] = t & 0xFFFFFFFF, t >> 32
        if strict:
            strict_mode.issue(w, ins, keys, "smem")
    run.manages_defs = True
    return run
