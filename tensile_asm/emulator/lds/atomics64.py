"""The LDS atomics atomics32.py leaves out: the 64-bit integer set (``ds_add_u64`` ... ``ds_xor_b64``),
``ds_add/min/max_f64``, ``ds_pk_add_f16``/``bf16``, ``ds_cmpst_f32``/``b64``/``f64``,
``ds_mskor_b32/b64``, ``ds_wrxchg_rtn_b32/b64``, ``ds_wrxchg2(st64)_rtn_b32/b64``,
``ds_wrap_rtn_b32``, each with its ``_rtn_`` form where one exists.

Semantics (Vega/CDNA ISA guides, DS opcode table; CLRX "GcnInstrsDs" pseudo-code): mskor
``mem = (mem & ~data0) | data1``; cmpst stores data1 where mem equals data0 (the ``_f32/_f64``
forms compare as floats: +0 == -0, NaN never equal); wrap ``mem >= data0 ? mem - data0 :
mem + data1``; wrxchg2 swaps two elements at ``offset0``/``offset1`` elements (x64 for st64) and
returns both old values. inc/dec/min/max as the 32-bit forms (memory/atomics.py shares the tables).
64-bit accesses need 8-byte aligned addresses. Lanes hitting one address apply in lane order; a
returned value is PENDING until ``s_waitcnt lgkmcnt``. Like atomics32.py, atomics are not recorded
by the race checker. ``ds_condxchg32_rtn_b64`` stays unimplemented: no source we have gives its semantics.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.atomics import FLOAT_OPS, INT_OPS, in_rounds
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.emulator.strict import waitcnt as strict_mode
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U32, U64 = np.uint32, np.uint64


def _feq(o, c, bits):
    f = np.float64 if bits == 64 else np.float32
    return o.astype(U64 if bits == 64 else U32).view(f) == c.astype(U64 if bits == 64 else U32).view(f)


def _int(name):
    fn = INT_OPS[name]
    return lambda o, d0, d1, b: fn(o, d0, None, b)


def _float(name):
    fn = FLOAT_OPS[name]
    return lambda o, d0, d1, b: fn(o, d0, None, b)


# ds name (without _rtn_) -> (bits, data operands, fn(old, data0, data1, bits) -> new)
OPS = {f"{ds}_{t}64": (64, 1, _int(op)) for ds, op, t in (
    ("add", "add", "u"), ("sub", "sub", "u"), ("inc", "inc", "u"), ("dec", "dec", "u"),
    ("min", "smin", "i"), ("max", "smax", "i"), ("min", "umin", "u"), ("max", "umax", "u"),
    ("and", "and", "b"), ("or", "or", "b"), ("xor", "xor", "b"))}
OPS.update({
    "rsub_u64": (64, 1, lambda o, d0, d1, b: d0 - o),
    "add_f64": (64, 1, _float("add_f64")), "min_f64": (64, 1, _float("min_f64")),
    "max_f64": (64, 1, _float("max_f64")),
    "pk_add_f16": (32, 1, _float("pk_add_f16")), "pk_add_bf16": (32, 1, _float("pk_add_bf16")),
    "mskor_b32": (32, 2, lambda o, d0, d1, b: (o & ~d0 & U64(0xFFFFFFFF)) | d1),
    "mskor_b64": (64, 2, lambda o, d0, d1, b: (o & ~d0) | d1),
    "cmpst_b64": (64, 2, lambda o, d0, d1, b: np.where(o == d0, d1, o)),
    "cmpst_f32": (32, 2, lambda o, d0, d1, b: np.where(_feq(o, d0, b), d1, o)),
    "cmpst_f64": (64, 2, lambda o, d0, d1, b: np.where(_feq(o, d0, b), d1, o)),
})
RTN_ONLY = {
    "wrxchg_rtn_b32": (32, 1, lambda o, d0, d1, b: d0),
    "wrxchg_rtn_b64": (64, 1, lambda o, d0, d1, b: d0),
    "wrap_rtn_b32": (32, 2, lambda o, d0, d1, b: np.where(o >= d0, o - d0, (o + d1) & U64(0xFFFFFFFF))),
}


def _lane_values(w, reg, sel, wide):
    lo = w.v[reg.index] if sel is None else w.v[reg.index][sel]
    if not wide:
        return lo.astype(U64)
    hi = w.v[reg.index + 1] if sel is None else w.v[reg.index + 1][sel]
    return lo.astype(U64) | (hi.astype(U64) << U64(32))


def _to_rows(vals, wide):
    lo = (vals & U64(0xFFFFFFFF)).astype(U32)
    return np.stack([lo, (vals >> U64(32)).astype(U32)]) if wide else lo[None, :]


def _elements(w, byte, nbytes):
    """Element indices of the active lanes' byte addresses, checked for alignment and range."""
    if byte.size and (byte % nbytes).any():
        raise Fault(f"misaligned {8 * nbytes}-bit LDS atomic (needs a {nbytes}-byte aligned address)")
    if byte.size and int(byte.max()) + nbytes > w.group.lds_size:
        raise Fault(f"LDS atomic at byte 0x{int(byte.max()):x} is outside the workgroup's {w.group.lds_size} "
                    f"bytes of LDS")
    return byte // nbytes


def _view(w, nbytes):
    lds = w.group.lds
    return lds if nbytes == 4 else lds[: lds.size // 2 * 2].view(U64)


def _write_back(w, dst, rows, sel):
    if sel is None:
        w.v[dst.index:dst.index + rows.shape[0]] = rows
    else:
        w.v[dst.index:dst.index + rows.shape[0], sel] = rows


def _check_vgprs(operands):
    if not all(isinstance(o, Reg) and o.kind == "v" for o in operands):
        raise Unsupported("LDS atomic operands must be VGPRs")


def _builder(bits, ndata, fn, returns):
    wide, nbytes = bits == 64, bits // 8

    def build(ins, cx):
        ops = list(ins.operands)
        dst = ops.pop(0) if returns else None
        vaddr, datas = ops[0], ops[1:1 + ndata]
        _check_vgprs([vaddr, *datas] + ([dst] if returns else []))
        if len(datas) != ndata or any(d.count != (2 if wide else 1) for d in datas):
            raise Unsupported(f"expected {ndata} data operand(s) of {bits} bits")
        addr, offset = cx.vread(vaddr), ins.modifier("offset", 0) or 0
        keys = reg_keys(dst) if returns else ()

        def run(w):
            sel = None if w.exec_full else w.exec_lanes
            a = addr(w)
            byte = (a if sel is None else a[sel]).astype(np.int64) + offset
            idx = _elements(w, byte, nbytes)
            d = [_lane_values(w, r, sel, wide) for r in datas] + [None]
            old = in_rounds(_view(w, nbytes), idx, lambda o, now: fn(
                o, d[0][now], None if d[1] is None else d[1][now], bits))
            if returns:
                _write_back(w, dst, _to_rows(old, wide), sel)
            if cx.strict:
                w.group.lds_tracker.atomic(w, byte, nbytes, ins)
                strict_mode.issue(w, ins, keys, "lds")
        run.manages_defs = True
        run.extra_srcs = ()
        return run
    return build


def _xchg2_builder(bits, stride64):
    wide, nbytes = bits == 64, bits // 8

    def build(ins, cx):
        dst, vaddr, d0, d1 = ins.operands[:4]
        _check_vgprs([dst, vaddr, d0, d1])
        scale = nbytes * (64 if stride64 else 1)
        offsets = [(ins.modifier(n, 0) or 0) * scale for n in ("offset0", "offset1")]
        addr, keys, per = cx.vread(vaddr), reg_keys(dst), (2 if wide else 1)

        def run(w):
            sel = None if w.exec_full else w.exec_lanes
            a = addr(w)
            base = (a if sel is None else a[sel]).astype(np.int64)
            view = _view(w, nbytes)
            for k, (off, src) in enumerate(zip(offsets, (d0, d1))):
                vals = _lane_values(w, src, sel, wide)
                old = in_rounds(view, _elements(w, base + off, nbytes), lambda o, now: vals[now])
                if cx.strict:
                    w.group.lds_tracker.atomic(w, base + off, nbytes, ins)
                rows = _to_rows(old, wide)
                if sel is None:
                    w.v[dst.index + k * per:dst.index + (k + 1) * per] = rows
                else:
                    w.v[dst.index + k * per:dst.index + (k + 1) * per, sel] = rows
            if cx.strict:
                strict_mode.issue(w, ins, keys, "lds")
        run.manages_defs = True
        run.extra_srcs = ()
        return run
    return build


for _name, (_bits, _nd, _fn) in OPS.items():
    handles(f"ds_{_name}")(_builder(_bits, _nd, _fn, False))
    _op, _type = _name.rsplit("_", 1)
    handles(f"ds_{_op}_rtn_{_type}")(_builder(_bits, _nd, _fn, True))
for _name, (_bits, _nd, _fn) in RTN_ONLY.items():
    handles(f"ds_{_name}")(_builder(_bits, _nd, _fn, True))
for _bits in (32, 64):
    handles(f"ds_wrxchg2_rtn_b{_bits}")(_xchg2_builder(_bits, False))
    handles(f"ds_wrxchg2st64_rtn_b{_bits}")(_xchg2_builder(_bits, True))

__all__: list = []
