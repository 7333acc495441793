"""Vector compares (VOPC, v_cmpx), lane selects and cross-lane moves.

A compare writes one bit per lane to VCC or an SGPR pair, 0 for lanes outside EXEC; on gfx9 the
``v_cmpx`` forms write the same mask to EXEC as well. ``v_cndmask_b32 d, a, b, mask`` picks ``b``
where the mask bit is set.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.emulator.state import mask_of

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

_INT_REL = {
    "f": lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),
    "t": lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
    "eq": np.equal, "ne": np.not_equal, "lg": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}
_FLOAT_REL = {
    "f": _INT_REL["f"], "tru": _INT_REL["t"],
    "eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "lg": lambda a, b: np.less(a, b) | np.greater(a, b),
    "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    "u": lambda a, b: np.isnan(a) | np.isnan(b),
    "neq": lambda a, b: ~np.equal(a, b), "nlt": lambda a, b: ~np.less(a, b),
    "nle": lambda a, b: ~np.less_equal(a, b), "ngt": lambda a, b: ~np.greater(a, b),
    "nge": lambda a, b: ~np.greater_equal(a, b),
    "nlg": lambda a, b: ~(np.less(a, b) | np.greater(a, b)),
}


def _cmp_builder(rel, kind, exec_too):
    def build(ins, cx):
        d = ins.operands[0]
        if kind == "f32":
            a, b = cx.fsrc(ins, 1), cx.fsrc(ins, 2)
        elif kind in ("u64", "i64"):
            a, b = cx.vread64(ins.operands[1]), cx.vread64(ins.operands[2])
            if kind == "i64":
                a0, b0 = a, b
                a = lambda w: np.asarray(a0(w), np.uint64).view(np.int64)
                b = lambda w: np.asarray(b0(w), np.uint64).view(np.int64)
        else:
            rd = cx.vread_i if kind == "i32" else cx.vread
            a, b = rd(ins.operands[1]), rd(ins.operands[2])
        write = cx.mask_write(d)
        lanes = cx.lanes
        if not exec_too:
            return lambda w: write(w, np.broadcast_to(rel(a(w), b(w)), (lanes,)))
        def run(w):
            result = np.broadcast_to(rel(a(w), b(w)), (lanes,))
            write(w, result)
            w.set_exec(mask_of(result & w.exec_lanes))
        return run
    return build


for _x in ("", "x"):
    for _t in ("u32", "i32", "u64", "i64", "u16", "i16"):
        if _t.endswith("16"):
            continue
        for _rel, _fn in _INT_REL.items():
            if _rel == "lg":
                continue
            handles(f"v_cmp{_x}_{_rel}_{_t}")(_cmp_builder(_fn, _t, _x == "x"))
    for _rel, _fn in _FLOAT_REL.items():
        handles(f"v_cmp{_x}_{_rel}_f32")(_cmp_builder(_fn, "f32", _x == "x"))


@handles("v_cndmask_b32")
def _cndmask(ins, cx):
    if ins.modifiers:
        raise Unsupported("source modifiers on v_cndmask_b32")
    d, s0, s1, m = ins.operands
    a, b, mask, wr = cx.vread(s0), cx.vread(s1), cx.mask_read(m), cx.vwrite(d)
    return lambda w: wr(w, np.where(mask(w), b(w), a(w)).astype(np.uint32))


@handles("v_readfirstlane_b32")
def _readfirstlane(ins, cx):
    d, s0 = ins.operands
    wr, src = cx.swrite(d), cx.vread(s0)
    def run(w):
        v = src(w)
        if isinstance(v, int):
            return wr(w, v)
        lane = (w.exec & -w.exec).bit_length() - 1 if w.exec else 0
        wr(w, int(v[lane]))
    return run


@handles("v_readlane_b32")
def _readlane(ins, cx):
    d, s0, sel = ins.operands
    wr, src, lane = cx.swrite(d), cx.vread(s0), cx.sread(sel)
    def run(w):
        v = src(w)
        wr(w, v if isinstance(v, int) else int(v[lane(w) % w.lanes]))
    return run


@handles("v_writelane_b32")
def _writelane(ins, cx):
    d, s0, sel = ins.operands
    if not (d.kind == "v"):
        raise Unsupported("v_writelane_b32 to a non-VGPR")
    i, val, lane = d.index, cx.sread(s0), cx.sread(sel)
    return lambda w: w.v[i].__setitem__(lane(w) % w.lanes, val(w))


@handles("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32")
def _mbcnt(ins, cx):
    d, s0, s1 = ins.operands
    mask, add, wr = cx.sread(s0), cx.vread(s1), cx.vwrite(d)
    hi = ins.opcode.startswith("v_mbcnt_hi")
    lanes = np.arange(cx.lanes)
    upto = np.clip(lanes - 32, 0, 32) if hi else np.minimum(lanes, 32)
    def run(w):
        bits = np.unpackbits(np.frombuffer(mask(w).to_bytes(4, "little"), np.uint8), bitorder="little")
        prefix = np.concatenate(([0], np.cumsum(bits)))
        wr(w, (prefix[upto] + add(w)).astype(np.uint32))
    return run


@handles("v_bcnt_u32_b32")
def _bcnt(ins, cx):
    d, s0, s1 = ins.operands
    a, b, wr = cx.vread(s0), cx.vread(s1), cx.vwrite(d)
    def run(w):
        x = np.asarray(a(w), np.uint32)
        counts = np.unpackbits(x.reshape(-1, 1).view(np.uint8), axis=1).sum(axis=1).reshape(x.shape)
        wr(w, (counts + b(w)).astype(np.uint32))
    return run
