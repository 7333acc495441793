"""Scalar bit operations beyond alu.py's: bit scans and counts (s_ff0/s_ff1, s_flbit, s_bcnt0), bit
reverse, quad masks and whole-quad mode masks, s_bitset0/1, s_bitreplicate, the 64-bit BFE/BFM.
Semantics: AMD CDNA3 ISA guide, SOP1/SOP2 opcode tables; SCC is "result != 0" where the guide sets it.
"""

from __future__ import annotations

from tensile_asm.emulator.program import M32, M64, HandlerTable, reg_keys

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles


def _first(bits: int, want: int, width: int) -> int:
    """Index of the lowest bit equal to ``want``, or -1 (as a 32-bit pattern)."""
    x = bits if want else ~bits & ((1 << width) - 1)
    return (x & -x).bit_length() - 1 if x else M32


def _leading(bits: int, width: int) -> int:
    """Position from the MSB of the first 1, or -1."""
    return width - bits.bit_length() if bits else M32


def _leading_signed(bits: int, width: int) -> int:
    """Position from the MSB of the first bit that differs from the sign bit, or -1 (0 and -1)."""
    if bits >> (width - 1):
        bits = ~bits & ((1 << width) - 1)
    return width - bits.bit_length() if bits else M32


def _quadmask(bits: int, groups: int) -> int:
    return sum(1 << i for i in range(groups) if bits >> (4 * i) & 0xF)


def _wqm(bits: int, groups: int) -> int:
    return sum(0xF << (4 * i) for i in range(groups) if bits >> (4 * i) & 0xF)


def _bitreplicate(bits: int) -> int:
    return sum(3 << (2 * i) for i in range(32) if bits >> i & 1)


def _bfe_i64(a: int, b: int) -> int:
    off, width = b & 63, (b >> 16) & 0x7F
    if width == 0:
        return 0
    v = (a >> off) & ((1 << width) - 1)
    if width < 64 and v >> (width - 1) & 1:
        v -= 1 << width
    return v & M64


# name: (source 64-bit, destination 64-bit, fn, sets SCC to "result != 0")
_UNARY = {
    "s_bcnt0_i32_b32": (False, False, lambda a: 32 - bin(a).count("1"), True),
    "s_bcnt0_i32_b64": (True, False, lambda a: 64 - bin(a).count("1"), True),
    "s_brev_b64": (True, True, lambda a: int(f"{a:064b}"[::-1], 2), False),
    "s_ff0_i32_b32": (False, False, lambda a: _first(a, 0, 32), False),
    "s_ff0_i32_b64": (True, False, lambda a: _first(a, 0, 64), False),
    "s_ff1_i32_b64": (True, False, lambda a: _first(a, 1, 64), False),
    "s_flbit_i32_b64": (True, False, lambda a: _leading(a, 64), False),
    "s_flbit_i32": (False, False, lambda a: _leading_signed(a, 32), False),
    "s_flbit_i32_i64": (True, False, lambda a: _leading_signed(a, 64), False),
    "s_quadmask_b32": (False, False, lambda a: _quadmask(a, 8), True),
    "s_quadmask_b64": (True, True, lambda a: _quadmask(a, 16), True),
    "s_wqm_b32": (False, False, lambda a: _wqm(a, 8), True),
    "s_wqm_b64": (True, True, lambda a: _wqm(a, 16), True),
    "s_bitreplicate_b64_b32": (False, True, _bitreplicate, False),
}


def _unary_builder(wide_src, wide_dst, fn, sets_scc):
    def build(ins, cx):
        d, s0 = ins.operands
        a = (cx.sread64 if wide_src else cx.sread)(s0)
        wr = (cx.swrite64 if wide_dst else cx.swrite)(d)
        def run(w):
            r = fn(a(w))
            wr(w, r)
            if sets_scc:
                w.scc = int(r != 0)
        return run
    return build


for _name, (_ws, _wd, _fn, _scc) in _UNARY.items():
    handles(_name)(_unary_builder(_ws, _wd, _fn, _scc))


@handles("s_bitset0_b32", "s_bitset1_b32", "s_bitset0_b64", "s_bitset1_b64")
def _bitset(ins, cx):
    wide, value = ins.opcode.endswith("64"), int(ins.opcode[8])
    d, s0 = ins.operands
    cur, wr = (cx.sread64(d), cx.swrite64(d)) if wide else (cx.sread(d), cx.swrite(d))
    index, width = cx.sread(s0), 63 if wide else 31
    def run(w):
        bit = 1 << (index(w) & width)
        wr(w, cur(w) | bit if value else cur(w) & ~bit)
    run.extra_srcs = reg_keys(d)             # the other bits of D are kept
    return run


@handles("s_bfe_i64")
def _bfe64(ins, cx):
    d, s0, s1 = ins.operands
    a, b, wr = cx.sread64(s0), cx.sread(s1), cx.swrite64(d)
    def run(w):
        r = _bfe_i64(a(w), b(w))
        wr(w, r)
        w.scc = int(r != 0)
    return run


@handles("s_bfm_b64")
def _bfm64(ins, cx):
    d, s0, s1 = ins.operands
    a, b, wr = cx.sread(s0), cx.sread(s1), cx.swrite64(d)
    return lambda w: wr(w, ((1 << (a(w) & 63)) - 1) << (b(w) & 63) & M64)
