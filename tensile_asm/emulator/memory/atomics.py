"""Vector-memory atomics (``buffer_/global_/flat_atomic_*``): the integer set in 32 and 64 bits
(``_x2``), the fp64 add/min/max and the packed ``pk_add_f16``/``pk_add_bf16``, with and without
return (``glc``, ``sc0`` on gfx940+).

Semantics per the Vega/CDNA ISA guides ("Vector Memory Buffer Instructions": the atomic op table):
``inc``: ``old >= data ? 0 : old + 1``; ``dec``: ``old == 0 || old > data ? data : old - 1``
(unsigned); ``cmpswap``: the data operand is {source, compare}, memory becomes source where it
equals compare. The return is always the value before the operation.

Lanes are applied in ascending lane order (a batch of waves: wave order first), so lanes of one
instruction that hit one address see each other's updates like the hardware's serialisation in some
order; the final memory is exact for commutative ops and each returned value is exact for the order
chosen. Rounds: each round applies the first pending lane of every distinct address at once.
Out-of-range buffer lanes are dropped and return 0 (buffer_flat.py). In strict mode the returned value is
PENDING until ``s_waitcnt vmcnt``.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.buffer_flat import _buffer_addresses, _global_addresses, _vm_issue, _write_rows
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U32, U64 = np.uint32, np.uint64


def _signed(x, bits):
    return x.astype(np.int64) if bits == 64 else x.astype(np.uint32).view(np.int32)


def _f64(x):
    return x.view(np.float64)


def _pk_add(o, d, to_half):
    """Two 16-bit float adds in one dword; each sum exact in float64, rounded once (to_half)."""
    out = np.zeros_like(o)
    for shift in (U64(0), U64(16)):
        a = to_float(((o >> shift) & U64(0xFFFF)), to_half)
        b = to_float(((d >> shift) & U64(0xFFFF)), to_half)
        out |= from_float(a + b, to_half) << shift
    return out


def to_float(bits16, half):
    if half:
        return bits16.astype(np.uint16).view(np.float16).astype(np.float64)
    return (bits16.astype(U32) << U32(16)).view(np.float32).astype(np.float64)


def from_float(x, half):
    """float64 -> fp16/bf16 bits, round to nearest even (bf16: via fp32; 24 >= 2*8+2 bits, so the
    double rounding of one sum is innocuous)."""
    if half:
        return x.astype(np.float16).view(np.uint16).astype(U64)
    f = x.astype(np.float32).view(U32).astype(U64)
    nan = np.isnan(x)
    r = (f + U64(0x7FFF) + ((f >> U64(16)) & U64(1))) >> U64(16)
    return np.where(nan, (f >> U64(16)) | U64(0x40), r & U64(0xFFFF))


# op -> (data dwords per value, fn(old, data, compare, bits) -> new) on uint64 arrays
def _int_ops():
    def m(bits):
        return U64((1 << bits) - 1)
    return {
        "add": lambda o, d, c, b: (o + d) & m(b),
        "sub": lambda o, d, c, b: (o - d) & m(b),
        "swap": lambda o, d, c, b: d,
        "cmpswap": lambda o, d, c, b: np.where(o == c, d, o),
        "and": lambda o, d, c, b: o & d,
        "or": lambda o, d, c, b: o | d,
        "xor": lambda o, d, c, b: o ^ d,
        "smin": lambda o, d, c, b: np.where(_signed(o, b) <= _signed(d, b), o, d),
        "smax": lambda o, d, c, b: np.where(_signed(o, b) >= _signed(d, b), o, d),
        "umin": lambda o, d, c, b: np.minimum(o, d),
        "umax": lambda o, d, c, b: np.maximum(o, d),
        "inc": lambda o, d, c, b: np.where(o >= d, U64(0), (o + U64(1)) & m(b)),
        "dec": lambda o, d, c, b: np.where((o == 0) | (o > d), d, o - U64(1)),
    }


INT_OPS = _int_ops()
FLOAT_OPS = {
    "add_f64": lambda o, d, c, b: (_f64(o) + _f64(d)).view(U64),
    "min_f64": lambda o, d, c, b: np.fmin(_f64(o), _f64(d)).view(U64),
    "max_f64": lambda o, d, c, b: np.fmax(_f64(o), _f64(d)).view(U64),
    "pk_add_f16": lambda o, d, c, b: _pk_add(o, d, True),
    "pk_add_bf16": lambda o, d, c, b: _pk_add(o, d, False),
}


def _view(a, nbytes):
    if nbytes == 4:
        return a.u32
    return a.data[: a.data.size // 8 * 8].view(U64)


def in_rounds(view, idx, update):
    """Update ``view[idx]`` lane by lane in lane order: each round applies the first pending lane of
    every distinct index at once. ``update(old, lanes) -> new``; returns every lane's old value."""
    prev = np.empty(idx.shape, U64)
    left = np.arange(idx.size)
    while left.size:
        _, first = np.unique(idx[left], return_index=True)
        now = left[np.sort(first)]
        o = view[idx[now]].astype(U64)
        prev[now] = o
        view[idx[now]] = update(o, now).astype(view.dtype)
        left = np.setdiff1d(left, now, assume_unique=True)
    return prev


def apply_atomic(mem, addrs, data, cmp, fn, nbytes):
    """Apply ``fn`` per address in lane order; returns the pre-op values (uint64)."""
    old = np.zeros(addrs.shape, U64)
    for a, off, sel in mem.locate_atomic(addrs, nbytes):
        if (off % nbytes).any():
            raise Fault(f"misaligned {8 * nbytes}-bit atomic")
        d = data if sel is None else data[sel]
        c = None if cmp is None else (cmp if sel is None else cmp[sel])
        prev = in_rounds(_view(a, nbytes), off // nbytes,
                         lambda o, now: fn(o, d[now], None if c is None else c[now], 8 * nbytes))
        if sel is None:
            old[...] = prev
        else:
            old[sel] = prev
    return old


def _rows64(rows, k, wide):
    lo = rows[k].astype(U64)
    return lo | (rows[k + 1].astype(U64) << U64(32)) if wide else lo


def _split(vals, wide):
    lo = (vals & U64(0xFFFFFFFF)).astype(U32)
    return np.stack([lo, (vals >> U64(32)).astype(U32)]) if wide else lo[None, :]


def _parts(op):
    wide = op.endswith("_x2") or op.endswith("_f64")
    base = op[:-3] if op.endswith("_x2") else op
    fn = INT_OPS.get(base) or FLOAT_OPS[base]
    return base, wide, fn


def _check_data(data, base, wide):
    need = (2 if wide else 1) * (2 if base == "cmpswap" else 1)
    if data.count != need:
        raise Unsupported(f"data {data} should hold {need} dwords")


def buffer_atomic_builder(op):
    base, wide, fn = _parts(op)

    def build(ins, cx):
        addresses = _buffer_addresses(ins, cx)
        data = ins.operands[0]
        _check_data(data, base, wide)
        returns = ins.has_modifier("glc") or ins.has_modifier("sc0")
        nret = 2 if wide else 1
        keys = tuple(k for i in range(nret) for k in reg_keys(data.sub(i))) if returns else ()
        track = _vm_issue(cx, ins, keys)
        d0, nbytes = data.index, 8 if wide else 4

        def run(w):
            addr, ok, sel = addresses(w, 1, nbytes)
            addr, ok = addr[0], ok[0]
            rows = w.v[d0:d0 + data.count] if sel is None else w.v[d0:d0 + data.count, sel]
            old = np.zeros(ok.shape, U64)
            if ok.any():
                vals = _rows64(rows, 0, wide)[ok]
                cmp = _rows64(rows, nret, wide)[ok] if base == "cmpswap" else None
                old[ok] = apply_atomic(w.group.memory, addr[ok].astype(U64), vals, cmp, fn, nbytes)
            if returns:
                _write_rows(w, d0, nret, _split(old, wide), sel)
            if track:
                track(w)
        run.manages_defs = True
        if returns:
            run.extra_srcs = tuple(reg_keys(data))
        return run
    return build


def global_atomic_builder(op):
    base, wide, fn = _parts(op)

    def build(ins, cx):
        returns = ins.has_modifier("glc") or ins.has_modifier("sc0")
        ops = ins.operands
        dst, rest = (ops[0], ops[1:]) if returns else (None, ops)
        vaddr, data = rest[0], rest[1]
        saddr = rest[2] if len(rest) > 2 else None
        _check_data(data, base, wide)
        addresses = _global_addresses(vaddr, saddr, ins.modifier("offset", 0) or 0, cx)
        track = _vm_issue(cx, ins, reg_keys(dst) if returns else ())
        nret, nbytes = (2 if wide else 1), (8 if wide else 4)
        if returns and dst.count != nret:
            raise Unsupported(f"return register {dst} should hold {nret} dwords")

        def run(w):
            addr = addresses(w, 1)[0]
            sel = None if w.exec_full else w.exec_lanes
            rows = w.v[data.index:data.index + data.count]
            rows = rows if sel is None else rows[:, sel]
            if addr.size:
                cmp = _rows64(rows, nret, wide) if base == "cmpswap" else None
                old = apply_atomic(w.group.memory, addr.astype(U64), _rows64(rows, 0, wide), cmp, fn, nbytes)
                if returns:
                    _write_rows(w, dst.index, nret, _split(old, wide), sel)
            if track:
                track(w)
        run.manages_defs = True
        return run
    return build


_NAMES = ([n for n in INT_OPS if n not in ("add", "cmpswap")] + [f"{n}_x2" for n in INT_OPS]
          + list(FLOAT_OPS))
for _op in _NAMES:
    handles(f"buffer_atomic_{_op}")(buffer_atomic_builder(_op))
    handles(f"global_atomic_{_op}", f"flat_atomic_{_op}")(global_atomic_builder(_op))

__all__ = ["apply_atomic", "in_rounds", "to_float", "from_float", "INT_OPS", "FLOAT_OPS"]
