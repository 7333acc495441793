"""The rarer scalar instructions (scalar/bits.py, scalar/control.py) against references written here from the ISA guide's
definitions: bit scans/counts, quad masks, bitset, 64-bit BFE/BFM, M0-relative moves, calls,
s_getreg/s_setreg of MODE, and the SOPP instructions that stop a launch."""

from __future__ import annotations

import numpy as np
import pytest

from emulator_asm import build
from tensile_asm.emulator.launch import Emulator
from tensile_asm.errors import EmulationError

M32, M64 = 0xFFFFFFFF, (1 << 64) - 1


def _bits(x, width):            # LSB first
    return [(x >> i) & 1 for i in range(width)]


def _from_bits(bits):
    return sum(b << i for i, b in enumerate(bits))


def _first(x, want, width):
    bits = _bits(x, width)
    return bits.index(want) if want in bits else M32


def _flbit(x, width):
    msb_first = _bits(x, width)[::-1]
    return msb_first.index(1) if 1 in msb_first else M32


def _flbit_signed(x, width):
    msb_first = _bits(x, width)[::-1]
    differ = [i for i, b in enumerate(msb_first) if b != msb_first[0]]
    return differ[0] if differ else M32


def _groups(x, groups, fn):
    bits = _bits(x, 4 * groups)
    return [fn(bits[4 * i:4 * i + 4]) for i in range(groups)]


# inputs: s[20:21] = X (64-bit), s[22:23] = Y, s24 = a, s25 = b, s26 = bfe control, s27/s28 = bfm, s29 = M0
# (asm, output width in dwords, sets SCC, reference(inputs) -> value)
CASES = [
    ("s_bcnt0_i32_b32 s40, s24", 1, True, lambda i: 32 - bin(i["a"]).count("1")),
    ("s_bcnt0_i32_b64 s40, s[20:21]", 1, True, lambda i: 64 - bin(i["X"]).count("1")),
    ("s_brev_b64 s[40:41], s[20:21]", 2, False, lambda i: _from_bits(_bits(i["X"], 64)[::-1])),
    ("s_ff0_i32_b32 s40, s24", 1, False, lambda i: _first(i["a"], 0, 32)),
    ("s_ff0_i32_b64 s40, s[20:21]", 1, False, lambda i: _first(i["X"], 0, 64)),
    ("s_ff1_i32_b64 s40, s[20:21]", 1, False, lambda i: _first(i["X"], 1, 64)),
    ("s_flbit_i32_b64 s40, s[20:21]", 1, False, lambda i: _flbit(i["X"], 64)),
    ("s_flbit_i32 s40, s24", 1, False, lambda i: _flbit_signed(i["a"], 32)),
    ("s_flbit_i32_i64 s40, s[20:21]", 1, False, lambda i: _flbit_signed(i["X"], 64)),
    ("s_quadmask_b32 s40, s24", 1, True, lambda i: _from_bits(_groups(i["a"], 8, any))),
    ("s_quadmask_b64 s[40:41], s[20:21]", 2, True, lambda i: _from_bits(_groups(i["X"], 16, any))),
    ("s_wqm_b32 s40, s24", 1, True,
     lambda i: _from_bits(sum(([int(g)] * 4 for g in _groups(i["a"], 8, any)), []))),
    ("s_wqm_b64 s[40:41], s[20:21]", 2, True,
     lambda i: _from_bits(sum(([int(g)] * 4 for g in _groups(i["X"], 16, any)), []))),
    ("s_bitreplicate_b64_b32 s[40:41], s24", 2, False,
     lambda i: _from_bits(sum(([b, b] for b in _bits(i["a"], 32)), []))),
    ("s_mov_b32 s40, s25\ns_bitset0_b32 s40, s24", 1, False, lambda i: i["b"] & ~(1 << (i["a"] & 31)) & M32),
    ("s_mov_b32 s40, s25\ns_bitset1_b32 s40, s24", 1, False, lambda i: i["b"] | 1 << (i["a"] & 31)),
    ("s_mov_b64 s[40:41], s[22:23]\ns_bitset0_b64 s[40:41], s24", 2, False,
     lambda i: i["Y"] & ~(1 << (i["a"] & 63)) & M64),
    ("s_mov_b64 s[40:41], s[22:23]\ns_bitset1_b64 s[40:41], s24", 2, False, lambda i: i["Y"] | 1 << (i["a"] & 63)),
    ("s_bfe_i64 s[40:41], s[20:21], s26", 2, True, lambda i: _bfe_ref(i["X"], i["off"], i["width"])),
    ("s_bfm_b64 s[40:41], s27, s28", 2, False,           # width S0[5:0], offset S1[5:0]
     lambda i: _from_bits([int(0 <= k - (i["c"] & 63) < (i["p"] & 63)) for k in range(64)])),
    ("s_mov_b32 m0, s29\ns_nop 0\ns_movrels_b32 s40, s20", 1, False, lambda i: i["sgprs"][i["m0"]]),
    ("s_mov_b32 m0, s29\ns_nop 0\ns_movrels_b64 s[40:41], s[20:21]", 2, False,
     lambda i: i["sgprs"][i["m0"]] | i["sgprs"][i["m0"] + 1] << 32),
    ("s_getreg_b32 s40, hwreg(HW_REG_MODE, 0, 10)", 1, False, lambda i: 0 | 0 << 2 | 3 << 4 | 3 << 6 | 1 << 8 | 1 << 9),
    ("s_getreg_b32 s40, hwreg(HW_REG_MODE, 4, 2)", 1, False, lambda i: 3),
    ("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 0xf\ns_wakeup\ns_mov_b32 s40, s25", 1, False, lambda i: i["b"]),
]


def _bfe_ref(x, off, width):
    field = _bits(x, 64)[off:off + width]
    if not field:
        return 0
    return _from_bits(field + [field[-1]] * (64 - width))


def _kernel():
    lines = ["s_load_dwordx16 s[20:35], s[0:1], 0x40", "s_load_dwordx2 s[2:3], s[0:1], 0x0",
             "v_mov_b32 v0, 0", "s_waitcnt lgkmcnt(0)"]
    slot = 0

    def store(regs):
        nonlocal slot
        for reg in regs:
            lines.extend([f"v_mov_b32 v1, {reg}", f"global_store_dword v0, v1, s[2:3] offset:{4 * slot}"])
            slot += 1

    for asm, width, scc, _ in CASES:
        lines.extend(asm.split("\n"))
        if scc:
            lines.append("s_cselect_b32 s42, 1, 0")
        store([f"s{40 + k}" for k in range(width)] + (["s42"] if scc else []))
    # s_movreld: s[40:49] = s[20:29], then s[40 + (M0 & 7)] = s25 and s[48 + (M0 & 6)], +1 = s[22:23]
    lines.extend(["s_mov_b64 s[40:41], s[20:21]", "s_mov_b64 s[42:43], s[22:23]", "s_mov_b64 s[44:45], s[24:25]",
                  "s_mov_b64 s[46:47], s[26:27]", "s_mov_b64 s[48:49], s[28:29]", "s_and_b32 s30, s29, 7",
                  "s_mov_b32 m0, s30", "s_nop 0", "s_movreld_b32 s40, s25", "s_and_b32 s30, s29, 6",
                  "s_mov_b32 m0, s30",
                  "s_nop 0", "s_movreld_b64 s[48:49], s[22:23]"])
    store([f"s{40 + k}" for k in range(10)])
    # calls: the return address is the next instruction's; s_swappc to a computed address
    lines.extend(["s_mov_b32 s50, 5", "s_getpc_b64 s[44:45]", "s_call_b64 s[40:41], func", "s_sub_u32 s46, s40, s44",
                  "s_getpc_b64 s[48:49]", "after_getpc:", "s_add_u32 s48, s48, func-after_getpc",
                  "s_addc_u32 s49, s49, 0", "s_getpc_b64 s[52:53]", "s_swappc_b64 s[40:41], s[48:49]",
                  "s_sub_u32 s47, s40, s52"])
    store(["s46", "s47", "s50"])
    lines.extend(["s_waitcnt vmcnt(0)", "s_endpgm", "func:", "s_add_u32 s50, s50, 1", "s_setpc_b64 s[40:41]"])
    return "\n".join(lines), slot


def _inputs(rng, edge=False):
    if edge:
        X, Y, a, b = 0, M64, 0xFFFF0000, 0
    else:
        X, Y = ((int(v) << 1 | 1) & M64 for v in rng.integers(1, 1 << 63, 2, dtype=np.uint64))
        a, b = (int(v) for v in rng.integers(1, 1 << 32, 2, dtype=np.uint64))
    off = int(rng.integers(0, 64))
    width = int(rng.integers(0, 65 - off))
    p, c, m0 = int(rng.integers(1, 1 << 32)), int(rng.integers(1, 1 << 32)), 2 * int(rng.integers(0, 7))
    sgprs = [X & M32, X >> 32, Y & M32, Y >> 32, a, b, off | width << 16, p, c, m0]
    sgprs += [int(v) for v in rng.integers(1, 1 << 32, 6, dtype=np.uint64)]
    return dict(X=X, Y=Y, a=a, b=b, off=off, width=width, p=p, c=c, m0=m0, sgprs=sgprs)


def _expected(inp, nslots):
    out = []
    for _, width, scc, ref in CASES:
        v = ref(inp)
        out += [(v >> (32 * k)) & M32 for k in range(width)]
        if scc:
            out.append(int(v != 0))
    regs = inp["sgprs"][:10]
    regs[inp["m0"] & 7] = inp["b"]
    if inp["m0"] & 6 == 0:
        regs[8:10] = [inp["Y"] & M32, inp["Y"] >> 32]
    out += regs
    out += [4, 4, 7]         # both return addresses are the call's address + 4; func ran twice
    assert len(out) == nslots
    return out


@pytest.mark.parametrize("seed,edge", [(1, False), (2, False), (3, True)])
def test_scalar_extras_match_references(seed, edge):
    source, nslots = _kernel()
    co = build(source, vgprs=4, sgprs=56, args=(("out", 8), ("inp", 64)))
    inp = _inputs(np.random.default_rng(seed), edge)
    out = np.full(nslots, 0xDEADBEEF, np.uint32)
    packed = sum(v << (32 * k) for k, v in enumerate(inp["sgprs"]))
    Emulator.load(co).launch("k", grid=1, block=64, args=[out, packed])
    np.testing.assert_array_equal(out, np.array(_expected(inp, nslots), np.uint32))


@pytest.mark.parametrize("body,message", [
    ("s_trap 2", r"s_trap 2 \(a trap: __builtin_trap"),
    ("s_sethalt 1", "s_sethalt"),
    ("s_sendmsg sendmsg(MSG_INTERRUPT)", "s_sendmsg MSG_INTERRUPT"),
    ("s_getreg_b32 s4, hwreg(HW_REG_HW_ID)", "HW_REG_HW_ID: only MODE is emulated"),
    ("s_getreg_b32 s4, hwreg(HW_REG_MODE)", r"MODE bits \[31:0\] reach past IEEE"),
    ("s_mov_b32 s4, 0\ns_setreg_b32 hwreg(HW_REG_MODE, 4, 2), s4",
     r"sets MODE bits \[5:4\] to 0x0 \(the kernel descriptor set 0x3\)"),
    ("s_mov_b32 m0, 100\ns_nop 0\ns_movrels_b32 s4, s2", r"s2 \+ M0 \(100\) lies outside s0..s101"),
    ("s_mov_b64 s[4:5], 0x40\ns_swappc_b64 s[6:7], s[4:5]", "jumps to 0x40, which is no instruction"),
])
def test_refused_scalar_instructions_stop_with_a_clear_error(body, message):
    co = build(body + "\ns_endpgm", vgprs=4, sgprs=16)
    with pytest.raises(EmulationError, match=message):
        Emulator.load(co).launch("k", grid=1, block=64, args=[np.zeros(1, np.uint32)])
