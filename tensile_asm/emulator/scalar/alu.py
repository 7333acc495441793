"""Scalar ALU (SOP1, SOP2, SOPK, SOPC) and program control (SOPP), on Python ints.

Semantics follow the CDNA2/CDNA3 ISA guides: SCC is the carry/borrow of unsigned adds/subs, the
signed overflow of ``_i32`` adds/subs, "result != 0" of bitwise ops and shifts, and the comparison
of compares, min and max.
"""

from __future__ import annotations

from tensile_asm.emulator.program import BARRIER, ENDPGM, M32, M64, HandlerTable, Unsupported
from tensile_asm.emulator.strict import waitcnt as strict_mode

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

SIGN32 = 0x80000000


def _s32(x: int) -> int:
    return x - (1 << 32) if x & SIGN32 else x


def _s64(x: int) -> int:
    return x - (1 << 64) if x >> 63 else x


def _sext16(x: int) -> int:
    x &= 0xFFFF
    return x - 0x10000 if x & 0x8000 else x


def _overflow(a: int, b: int, r: int) -> int:
    """Signed overflow of r = a + b (32-bit patterns)."""
    return int(((a ^ r) & (b ^ r) & SIGN32) != 0)


# -- SOP2 / SOP1 builders ---------------------------------------------------------------------------
# fn(a, b, scc) -> (result, new_scc or None)

_SOP2_32 = {
    "s_add_u32": lambda a, b, c: (a + b, (a + b) >> 32),
    "s_addc_u32": lambda a, b, c: (a + b + c, (a + b + c) >> 32),
    "s_sub_u32": lambda a, b, c: (a - b, int(b > a)),
    "s_subb_u32": lambda a, b, c: (a - b - c, int(b + c > a)),
    "s_add_i32": lambda a, b, c: (a + b, _overflow(a, b, (a + b) & M32)),
    "s_sub_i32": lambda a, b, c: (a - b, int(((a ^ b) & (a ^ (a - b)) & SIGN32) != 0)),
    "s_mul_i32": lambda a, b, c: (a * b, None),
    "s_mul_hi_u32": lambda a, b, c: ((a * b) >> 32, None),
    "s_mul_hi_i32": lambda a, b, c: ((_s32(a) * _s32(b)) >> 32, None),
    "s_lshl_b32": lambda a, b, c: (r := (a << (b & 31)) & M32, int(r != 0)),
    "s_lshr_b32": lambda a, b, c: (r := a >> (b & 31), int(r != 0)),
    "s_ashr_i32": lambda a, b, c: (r := (_s32(a) >> (b & 31)) & M32, int(r != 0)),
    "s_and_b32": lambda a, b, c: (r := a & b, int(r != 0)),
    "s_or_b32": lambda a, b, c: (r := a | b, int(r != 0)),
    "s_xor_b32": lambda a, b, c: (r := a ^ b, int(r != 0)),
    "s_andn2_b32": lambda a, b, c: (r := a & ~b & M32, int(r != 0)),
    "s_orn2_b32": lambda a, b, c: (r := (a | ~b) & M32, int(r != 0)),
    "s_nand_b32": lambda a, b, c: (r := ~(a & b) & M32, int(r != 0)),
    "s_nor_b32": lambda a, b, c: (r := ~(a | b) & M32, int(r != 0)),
    "s_xnor_b32": lambda a, b, c: (r := ~(a ^ b) & M32, int(r != 0)),
    "s_min_u32": lambda a, b, c: (a if a < b else b, int(a < b)),
    "s_max_u32": lambda a, b, c: (a if a > b else b, int(a > b)),
    "s_min_i32": lambda a, b, c: (a if _s32(a) < _s32(b) else b, int(_s32(a) < _s32(b))),
    "s_max_i32": lambda a, b, c: (a if _s32(a) > _s32(b) else b, int(_s32(a) > _s32(b))),
    "s_cselect_b32": lambda a, b, c: (a if c else b, None),
    "s_absdiff_i32": lambda a, b, c: (r := abs(_s32(a) - _s32(b)) & M32, int(r != 0)),
    "s_bfm_b32": lambda a, b, c: (((1 << (a & 31)) - 1) << (b & 31), None),
    "s_bfe_u32": lambda a, b, c: (r := (a >> (b & 31)) & ((1 << ((b >> 16) & 0x7F)) - 1), int(r != 0)),
    "s_bfe_i32": lambda a, b, c: _bfe_i32(a, b),
    "s_pack_ll_b32_b16": lambda a, b, c: ((a & 0xFFFF) | (b & 0xFFFF) << 16, None),
    "s_pack_lh_b32_b16": lambda a, b, c: ((a & 0xFFFF) | (b & 0xFFFF0000), None),
    "s_pack_hh_b32_b16": lambda a, b, c: ((a >> 16) | (b & 0xFFFF0000), None),
}
for _n in range(1, 5):
    _SOP2_32[f"s_lshl{_n}_add_u32"] = (lambda n: lambda a, b, c: (r := (a << n) + b, int(r > M32)))(_n)


def _bfe_i32(a, b):
    off, width = b & 31, (b >> 16) & 0x7F
    if width == 0:
        return 0, 0
    v = (a >> off) & ((1 << width) - 1)
    if v >> (width - 1) & 1:
        v -= 1 << width
    v &= M32
    return v, int(v != 0)


_SOP2_64 = {   # 64-bit sources and result (shift amounts are 32-bit: handled below)
    "s_and_b64": lambda a, b, c: (r := a & b, int(r != 0)),
    "s_or_b64": lambda a, b, c: (r := a | b, int(r != 0)),
    "s_xor_b64": lambda a, b, c: (r := a ^ b, int(r != 0)),
    "s_andn2_b64": lambda a, b, c: (r := a & ~b & M64, int(r != 0)),
    "s_orn2_b64": lambda a, b, c: (r := (a | ~b) & M64, int(r != 0)),
    "s_nand_b64": lambda a, b, c: (r := ~(a & b) & M64, int(r != 0)),
    "s_nor_b64": lambda a, b, c: (r := ~(a | b) & M64, int(r != 0)),
    "s_xnor_b64": lambda a, b, c: (r := ~(a ^ b) & M64, int(r != 0)),
    "s_cselect_b64": lambda a, b, c: (a if c else b, None),
}
_SHIFT_64 = {
    "s_lshl_b64": lambda a, b: (a << (b & 63)) & M64,
    "s_lshr_b64": lambda a, b: a >> (b & 63),
    "s_ashr_i64": lambda a, b: (_s64(a) >> (b & 63)) & M64,
    "s_bfe_u64": lambda a, b: (a >> (b & 63)) & ((1 << ((b >> 16) & 0x7F)) - 1),
}


def _sop2_builder(fn, wide):
    def build(ins, cx):
        d, s0, s1 = ins.operands
        rd = (cx.sread64 if wide else cx.sread)
        a, b = rd(s0), rd(s1)
        wr = cx.swrite64(d) if wide else cx.swrite(d)
        def run(w):
            r, scc = fn(a(w), b(w), w.scc)
            wr(w, r)
            if scc is not None:
                w.scc = scc
        return run
    return build


def _shift64_builder(fn):
    def build(ins, cx):
        d, s0, s1 = ins.operands
        a, b, wr = cx.sread64(s0), cx.sread(s1), cx.swrite64(d)
        def run(w):
            r = fn(a(w), b(w))
            wr(w, r)
            w.scc = int(r != 0)
        return run
    return build


for _name, _fn in _SOP2_32.items():
    handles(_name)(_sop2_builder(_fn, False))
for _name, _fn in _SOP2_64.items():
    handles(_name)(_sop2_builder(_fn, True))
for _name, _fn in _SHIFT_64.items():
    handles(_name)(_shift64_builder(_fn))

_SOP1 = {  # name: (wide, fn(a) -> result, sets scc "result != 0")
    "s_mov_b32": (False, lambda a: a, False),
    "s_mov_b64": (True, lambda a: a, False),
    "s_not_b32": (False, lambda a: ~a & M32, True),
    "s_not_b64": (True, lambda a: ~a & M64, True),
    "s_brev_b32": (False, lambda a: int(f"{a:032b}"[::-1], 2), False),
    "s_abs_i32": (False, lambda a: abs(_s32(a)) & M32, True),
    "s_sext_i32_i8": (False, lambda a: (a & 0xFF) - ((a & 0x80) << 1) & M32, False),
    "s_sext_i32_i16": (False, lambda a: (a & 0xFFFF) - ((a & 0x8000) << 1) & M32, False),
    "s_bcnt1_i32_b32": (False, lambda a: bin(a).count("1"), True),
    "s_ff1_i32_b32": (False, lambda a: (a & -a).bit_length() - 1 if a else M32, False),
    "s_flbit_i32_b32": (False, lambda a: 32 - a.bit_length() if a else M32, False),
}


def _sop1_builder(wide, fn, sets_scc):
    def build(ins, cx):
        d, s0 = ins.operands
        a = (cx.sread64 if wide else cx.sread)(s0)
        wr = cx.swrite64(d) if wide else cx.swrite(d)
        if sets_scc:
            def run(w):
                r = fn(a(w))
                wr(w, r)
                w.scc = int(r != 0)
        else:
            def run(w):
                wr(w, fn(a(w)))
        return run
    return build


for _name, (_wide, _fn, _scc) in _SOP1.items():
    handles(_name)(_sop1_builder(_wide, _fn, _scc))


@handles("s_bcnt1_i32_b64")
def _bcnt64(ins, cx):
    wr, a = cx.swrite(ins.operands[0]), cx.sread64(ins.operands[1])
    def run(w):
        r = bin(a(w)).count("1")
        wr(w, r)
        w.scc = int(r != 0)
    return run


@handles("s_cmov_b32", "s_cmov_b64")
def _cmov(ins, cx):
    wide = ins.opcode.endswith("64")
    wr = cx.swrite64(ins.operands[0]) if wide else cx.swrite(ins.operands[0])
    a = (cx.sread64 if wide else cx.sread)(ins.operands[1])
    def run(w):
        if w.scc:
            wr(w, a(w))
    return run


_SAVEEXEC = {  # name: (new exec from (s0, exec), sdst gets the new exec instead of the old)
    "and": (lambda s, e: s & e, False), "or": (lambda s, e: s | e, False), "xor": (lambda s, e: s ^ e, False),
    "andn2": (lambda s, e: s & ~e, False), "orn2": (lambda s, e: s | ~e, False),
    "nand": (lambda s, e: ~(s & e), False), "nor": (lambda s, e: ~(s | e), False),
    "xnor": (lambda s, e: ~(s ^ e), False), "andn1": (lambda s, e: ~s & e, False),
    "orn1": (lambda s, e: ~s | e, False),
}


def _saveexec_builder(fn, wrexec):
    def build(ins, cx):
        wr, a = cx.swrite64(ins.operands[0]), cx.sread64(ins.operands[1])
        def run(w):
            old = w.exec
            w.set_exec(fn(a(w), old) & M64)
            wr(w, w.exec if wrexec else old)
            w.scc = int(w.exec != 0)
        return run
    return build


for _name, (_fn, _wr) in _SAVEEXEC.items():
    handles(f"s_{_name}_saveexec_b64")(_saveexec_builder(_fn, _wr))
handles("s_andn1_wrexec_b64")(_saveexec_builder(lambda s, e: ~s & e, True))
handles("s_andn2_wrexec_b64")(_saveexec_builder(lambda s, e: s & ~e, True))

# -- SOPK ---------------------------------------------------------------------------------------------


@handles("s_movk_i32", "s_cmovk_i32", "s_addk_i32", "s_mulk_i32")
def _sopk(ins, cx):
    d, imm = ins.operands
    k = _sext16(imm.value)
    wr, cur = cx.swrite(d), cx.sread(d)
    op = ins.opcode
    if op == "s_movk_i32":
        return lambda w: wr(w, k)
    if op == "s_cmovk_i32":
        def run(w):
            if w.scc:
                wr(w, k)
        return run
    if op == "s_mulk_i32":
        return lambda w: wr(w, cur(w) * k)
    def addk(w):
        a = cur(w)
        r = (a + k) & M32
        w.scc = _overflow(a, k & M32, r)
        wr(w, r)
    return addk


# -- SOPC and SOPK compares ----------------------------------------------------------------------------
_CMP = {"eq": lambda a, b: a == b, "lg": lambda a, b: a != b, "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def _cmp_builder(rel, signed, wide, k_form):
    def build(ins, cx):
        s0, s1 = ins.operands
        a = (cx.sread64 if wide else cx.sread)(s0)
        if k_form:
            kv = _sext16(s1.value) if signed else s1.value & 0xFFFF
            b = lambda w: kv
        else:
            b = (cx.sread64 if wide else cx.sread)(s1)
        if signed and not k_form:
            def run(w):
                w.scc = int(rel(_s32(a(w)), _s32(b(w))))
        elif signed:
            def run(w):
                w.scc = int(rel(_s32(a(w)), b(w)))
        else:
            def run(w):
                w.scc = int(rel(a(w), b(w)))
        return run
    return build


for _rel, _fn in _CMP.items():
    for _t, _signed in (("u32", False), ("i32", True)):
        handles(f"s_cmp_{_rel}_{_t}")(_cmp_builder(_fn, _signed, False, False))
        handles(f"s_cmpk_{_rel}_{_t}")(_cmp_builder(_fn, _signed, False, True))
handles("s_cmp_eq_u64")(_cmp_builder(_CMP["eq"], False, True, False))
handles("s_cmp_lg_u64")(_cmp_builder(_CMP["lg"], False, True, False))


@handles("s_bitcmp0_b32", "s_bitcmp1_b32", "s_bitcmp0_b64", "s_bitcmp1_b64")
def _bitcmp(ins, cx):
    wide, want = ins.opcode.endswith("64"), int(ins.opcode[8])
    a, b = (cx.sread64 if wide else cx.sread)(ins.operands[0]), cx.sread(ins.operands[1])
    width = 63 if wide else 31
    def run(w):
        w.scc = int((a(w) >> (b(w) & width) & 1) == want)
    return run


# -- program counter -------------------------------------------------------------------------------


@handles("s_getpc_b64")
def _getpc(ins, cx):
    if ins.address is None:
        raise Unsupported("s_getpc_b64 needs instruction addresses (run a code object)")
    wr, pc = cx.swrite64(ins.operands[0]), ins.address + 4
    return lambda w: wr(w, pc)


@handles("s_setpc_b64")
def _setpc(ins, cx):
    rd, labels = cx.sread64(ins.operands[0]), cx.labels
    def run(w):
        addr = rd(w)
        if addr not in labels:
            from tensile_asm.emulator.memory.device import Fault
            raise Fault(f"s_setpc_b64 jumps to 0x{addr:x}, which is not an instruction of this kernel")
        return labels[addr]
    return run


# -- SOPP ---------------------------------------------------------------------------------------------


@handles("s_nop")
def _nop(ins, cx):
    extra = int(ins.operands[0].value) & 0xF if ins.operands else 0      # s_nop N: N+1 wait states
    def fn(w):
        w.nops += extra
    return fn


@handles("s_setprio", "s_sleep", "s_icache_inv", "s_ttracedata", "s_incperflevel", "s_decperflevel",
         "s_setkill")          # s_dcache_*: stores.py (they count in lgkmcnt)
def _noop(ins, cx):
    return lambda w: None


@handles("s_endpgm")
def _endpgm(ins, cx):
    return lambda w: ENDPGM


@handles("s_barrier")
def _barrier(ins, cx):
    return lambda w: BARRIER


@handles("s_waitcnt")
def _waitcnt(ins, cx):
    if not cx.strict:
        return lambda w: None
    vm, lgkm, exp = ins.modifier("vmcnt"), ins.modifier("lgkmcnt"), ins.modifier("expcnt")
    wait = strict_mode.wait
    return lambda w: wait(w, vm, lgkm, exp)


_BRANCH_COND = {
    "s_cbranch_scc0": lambda w: not w.scc,
    "s_cbranch_scc1": lambda w: w.scc,
    "s_cbranch_vccz": lambda w: not (w.s[106] or w.s[107]),
    "s_cbranch_vccnz": lambda w: w.s[106] or w.s[107],
    "s_cbranch_execz": lambda w: not w.exec,
    "s_cbranch_execnz": lambda w: w.exec,
}


@handles("s_branch")
def _branch(ins, cx):
    target = cx.target(ins.operands[0])
    return lambda w: target


def _cbranch_builder(cond):
    def build(ins, cx):
        target = cx.target(ins.operands[0])
        def run(w):
            if cond(w):
                return target
        return run
    return build


for _name, _cond in _BRANCH_COND.items():
    handles(_name)(_cbranch_builder(_cond))
