"""Vector ALU, integer and bitwise operations: numpy over the 64 lanes, written under EXEC.

Sources come from ``Compiler.vread`` (uint32 lanes, or a Python int for SGPRs and constants);
numpy's uint32 arithmetic wraps modulo 2**32 exactly like the hardware. ``rev`` ops take their
sources in reverse (``v_lshlrev_b32 d, shift, value``).
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import M32, HandlerTable, Unsupported
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U32, I32, U64 = np.uint32, np.int32, np.uint64
_24 = 0xFFFFFF


def _u64(x):
    return x.astype(U64) if isinstance(x, np.ndarray) else U64(x)


def _i64(x):
    return x.astype(np.int64) if isinstance(x, np.ndarray) else np.int64(x)


def _sext24(x):
    x = x & _24
    return (x ^ 0x800000) - 0x800000


def _sh(x):
    return x & 31


_BINARY = {   # name: (signed sources, fn(a, b))
    "v_add_u32": (False, lambda a, b: a + b),
    "v_sub_u32": (False, lambda a, b: a - b),
    "v_subrev_u32": (False, lambda a, b: b - a),
    "v_add_nc_u32": (False, lambda a, b: a + b),
    "v_mul_lo_u32": (False, lambda a, b: a * b),
    "v_mul_hi_u32": (False, lambda a, b: (_u64(a) * _u64(b)) >> U64(32)),
    "v_mul_hi_i32": (True, lambda a, b: (_i64(a) * _i64(b)) >> np.int64(32)),
    "v_mul_u32_u24": (False, lambda a, b: (a & _24) * (b & _24)),
    "v_mul_hi_u32_u24": (False, lambda a, b: (_u64(a & _24) * _u64(b & _24)) >> U64(32)),
    "v_mul_i32_i24": (True, lambda a, b: _i64(_sext24(a)) * _sext24(b)),
    "v_mul_hi_i32_i24": (True, lambda a, b: (_i64(_sext24(a)) * _sext24(b)) >> np.int64(32)),
    "v_lshlrev_b32": (False, lambda a, b: b << _sh(a)),
    "v_lshrrev_b32": (False, lambda a, b: b >> _sh(a)),
    "v_ashrrev_i32": (True, lambda a, b: b >> _sh(a)),
    "v_lshl_b32": (False, lambda a, b: a << _sh(b)),
    "v_lshr_b32": (False, lambda a, b: a >> _sh(b)),
    "v_ashr_i32": (True, lambda a, b: a >> _sh(b)),
    "v_and_b32": (False, lambda a, b: a & b),
    "v_or_b32": (False, lambda a, b: a | b),
    "v_xor_b32": (False, lambda a, b: a ^ b),
    "v_xnor_b32": (False, lambda a, b: ~(a ^ b)),
    "v_min_u32": (False, np.minimum),
    "v_max_u32": (False, np.maximum),
    "v_min_i32": (True, np.minimum),
    "v_max_i32": (True, np.maximum),
    "v_bfm_b32": (False, lambda a, b: ((U64(1) << _u64(_sh(a))) - U64(1)) << _u64(_sh(b))),
}

_TERNARY = {  # name: (signed sources, fn(a, b, c))
    "v_lshl_add_u32": (False, lambda a, b, c: (a << _sh(b)) + c),
    "v_add_lshl_u32": (False, lambda a, b, c: (a + b) << _sh(c)),
    "v_lshl_or_b32": (False, lambda a, b, c: (a << _sh(b)) | c),
    "v_and_or_b32": (False, lambda a, b, c: (a & b) | c),
    "v_or3_b32": (False, lambda a, b, c: a | b | c),
    "v_xad_u32": (False, lambda a, b, c: (a ^ b) + c),
    "v_add3_u32": (False, lambda a, b, c: a + b + c),
    "v_mad_u32_u24": (False, lambda a, b, c: (a & _24) * (b & _24) + c),
    "v_mad_i32_i24": (True, lambda a, b, c: _i64(_sext24(a)) * _sext24(b) + c),
    "v_bfe_u32": (False, lambda a, b, c: (a >> _sh(b)) & ((U64(1) << _u64(_sh(c))) - U64(1))),
    "v_bfe_i32": (True, lambda a, b, c: _bfe_i32(a, b, c)),
    "v_bfi_b32": (False, lambda a, b, c: (a & b) | (~a & c)),
    "v_alignbit_b32": (False, lambda a, b, c: ((_u64(a) << U64(32)) | _u64(b)) >> _u64(_sh(c))),
    "v_min3_u32": (False, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    "v_max3_u32": (False, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    "v_min3_i32": (True, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    "v_max3_i32": (True, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    "v_med3_u32": (False, lambda a, b, c: _med3(a, b, c)),
    "v_med3_i32": (True, lambda a, b, c: _med3(a, b, c)),
    "v_mul_lo_i32": (False, lambda a, b, c: a * b),
}


def _bfe_i32(a, b, c):
    width = _i64(_sh(c))
    v = _i64(a) >> _i64(_sh(b))
    shift = np.int64(64) - width
    out = (v << shift) >> shift
    return np.where(width == 0, 0, out)


def _med3(a, b, c):
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


def _finish(r):
    """Bring a result to uint32 lanes (or a masked int): int64/uint64 intermediates wrap."""
    if isinstance(r, np.ndarray):
        return r if r.dtype == U32 else r.astype(U32)
    if isinstance(r, np.generic):
        return int(r) & M32
    return r


def _no_modifiers(ins):
    if ins.modifiers:
        raise Unsupported(f"modifiers {' '.join(m for m, _ in ins.modifiers)} on an integer operation")


def _binary_builder(signed, fn):
    def build(ins, cx):
        _no_modifiers(ins)
        d, s0, s1 = ins.operands[:3]
        rd = cx.vread_i if signed else cx.vread
        a, b, wr = rd(s0), rd(s1), cx.vwrite(d)
        return lambda w: wr(w, _finish(fn(a(w), b(w))))
    return build


def _ternary_builder(signed, fn):
    def build(ins, cx):
        _no_modifiers(ins)
        d, s0, s1, s2 = ins.operands[:4]
        rd = cx.vread_i if signed else cx.vread
        a, b, c, wr = rd(s0), rd(s1), rd(s2), cx.vwrite(d)
        return lambda w: wr(w, _finish(fn(a(w), b(w), c(w))))
    return build


for _name, (_signed, _fn) in _BINARY.items():
    handles(_name)(_binary_builder(_signed, _fn))
for _name, (_signed, _fn) in _TERNARY.items():
    handles(_name)(_ternary_builder(_signed, _fn))

_UNARY = {
    "v_mov_b32": lambda a: a,
    "v_not_b32": lambda a: ~a,
    "v_bfrev_b32": lambda a: _bfrev(a),
    "v_ffbh_u32": lambda a: _ffbh(a),
    "v_ffbl_b32": lambda a: _ffbl(a),
    "v_accvgpr_read_b32": lambda a: a,
    "v_accvgpr_write_b32": lambda a: a,
    "v_accvgpr_mov_b32": lambda a: a,
}


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], U32)


def _bfrev(a):
    a = np.asarray(a, U32)
    return (_REV8[a & 0xFF] << 24) | (_REV8[(a >> 8) & 0xFF] << 16) | (_REV8[(a >> 16) & 0xFF] << 8) | _REV8[a >> 24]


def _ffbh(a):
    a = np.asarray(a, U32)
    n = np.where(a == 0, 0, np.floor(np.log2(np.maximum(a, 1).astype(np.float64))).astype(np.int64))
    return np.where(a == 0, M32, 31 - n).astype(np.int64).astype(U32)


def _ffbl(a):
    a = np.asarray(a, U32).astype(np.int64)
    low = a & -a
    n = np.where(a == 0, 0, np.log2(np.maximum(low, 1).astype(np.float64)).astype(np.int64))
    return np.where(a == 0, M32, n).astype(np.int64).astype(U32)


def _unary_builder(fn):
    def build(ins, cx):
        _no_modifiers(ins)
        d, s0 = ins.operands[:2]
        a, wr = cx.vread(s0), cx.vwrite(d)
        return lambda w: wr(w, _finish(fn(a(w))))
    return build


for _name, _fn in _UNARY.items():
    handles(_name)(_unary_builder(_fn))


# -- carry-in / carry-out adds (two destinations: the sum and a lane mask) -----------------------------

def _carry_builder(kind):
    def build(ins, cx):
        ops = ins.operands
        d, sdst = cx.vwrite(ops[0]), cx.mask_write(ops[1])
        a, b = cx.vread(ops[2]), cx.vread(ops[3])
        cin = cx.mask_read(ops[4]) if len(ops) > 4 else None
        def run(w):
            x, y = _u64(a(w)), _u64(b(w))
            c = cin(w).astype(U64) if cin is not None else U64(0)
            if kind == "add":
                full = x + y + c
                carry = full >> U64(32)
            elif kind == "sub":
                full = x - y - c
                carry = y + c > x
            else:                               # subrev
                full = y - x - c
                carry = x + c > y
            full = np.broadcast_to(full, (w.lanes,))
            d(w, (full & U64(M32)).astype(U32))
            sdst(w, np.broadcast_to(carry != 0, (w.lanes,)))
        return run
    return build


for _name, _kind in (("v_add_co_u32", "add"), ("v_addc_co_u32", "add"), ("v_sub_co_u32", "sub"),
                     ("v_subb_co_u32", "sub"), ("v_subrev_co_u32", "subrev"), ("v_subbrev_co_u32", "subrev")):
    handles(_name)(_carry_builder(_kind))


@handles("v_mad_u64_u32")
def _mad_u64_u32(ins, cx):
    d, sdst = cx.vwrite64(ins.operands[0]), cx.mask_write(ins.operands[1])
    a, b, c = cx.vread(ins.operands[2]), cx.vread(ins.operands[3]), cx.vread64(ins.operands[4])
    def run(w):
        prod = _u64(a(w)) * _u64(b(w))
        acc = _u64(c(w))
        total = np.broadcast_to(prod + acc, (w.lanes,))
        d(w, total)
        sdst(w, np.broadcast_to(total < prod, (w.lanes,)))
    addend = ins.operands[4]
    if not (cx.strict and isinstance(addend, Reg) and addend.count == 2):
        return run
    return _low_half_addend(ins, addend, run)


def _low_half_addend(ins, addend, run):
    """Strict mode for LLVM's 32-bit multiply-add on ``v_mad_u64_u32`` (its addend's high half left
    undefined, the result's low half used): the low 32 bits of a*b + c depend on c's low half only, so an
    unwritten (or still loading) high half of c is no fault; it makes the result's high half unwritten,
    which faults where something reads it."""
    from tensile_asm.emulator.program import reg_keys
    from tensile_asm.emulator.state import READY, UNWRITTEN
    from tensile_asm.emulator.strict import waitcnt
    dst_keys, carry_keys = reg_keys(ins.operands[0]), reg_keys(ins.operands[1])
    high_in, high_out = reg_keys(addend)[1], reg_keys(ins.operands[0])[1]

    def strict_run(w):
        defined = w.rstate[high_in] == READY
        run(w)
        keys = dst_keys + carry_keys
        waitcnt.overwrite(w, keys)
        w.mark_ready(keys)
        if not defined:
            w.rstate[high_out] = UNWRITTEN
    strict_run.exact_srcs = (ins.operands[2], ins.operands[3], addend.sub(0))
    strict_run.manages_defs = True
    return strict_run


# -- 64-bit shifts on VGPR pairs ----------------------------------------------------------------------

@handles("v_lshlrev_b64", "v_lshrrev_b64", "v_ashrrev_i64")
def _shift64(ins, cx):
    d, s0, s1 = ins.operands
    amount, value, wr = cx.vread(s0), cx.vread64(s1), cx.vwrite64(d)
    op = ins.opcode
    def run(w):
        sh = _u64(amount(w)) & U64(63)
        v = _u64(value(w))
        if op == "v_lshlrev_b64":
            r = v << sh
        elif op == "v_lshrrev_b64":
            r = v >> sh
        else:
            r = (v.view(np.int64) if isinstance(v, np.ndarray) else np.int64(v)) >> sh.astype(np.int64)
            r = np.asarray(r).view(U64) if isinstance(r, np.ndarray) else U64(r)
        wr(w, np.broadcast_to(r, (w.lanes,)))
    return run
