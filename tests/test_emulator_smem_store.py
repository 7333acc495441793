"""SMEM stores and atomics (scalar/stores.py) against a dword-list model of memory written here: every
store width, immediate/SGPR offsets, buffer num_records cut-offs, every 32/64-bit atomic with and
without glc, buffer atomics in and out of range, strict lgkmcnt on returned values."""

from __future__ import annotations

import numpy as np
import pytest

from emulator_asm import build
from tensile_asm.emulator.launch import Emulator
from tensile_asm.errors import EmulationError

M32 = 0xFFFFFFFF
NUM_RECORDS = 162          # buffer stores/atomics: dword 40 (bytes 160..163) is the last one in range


def _s(x, bits):
    return x - (1 << bits) if x >> (bits - 1) else x


REF = {   # memory, data, compare, bits -> new memory (CDNA3 ISA guide, SMEM atomics)
    "add": lambda m, d, c, b: m + d, "sub": lambda m, d, c, b: m - d, "swap": lambda m, d, c, b: d,
    "cmpswap": lambda m, d, c, b: d if m == c else m,
    "smin": lambda m, d, c, b: min(_s(m, b), _s(d, b)), "umin": lambda m, d, c, b: min(m, d),
    "smax": lambda m, d, c, b: max(_s(m, b), _s(d, b)), "umax": lambda m, d, c, b: max(m, d),
    "and": lambda m, d, c, b: m & d, "or": lambda m, d, c, b: m | d, "xor": lambda m, d, c, b: m ^ d,
    "inc": lambda m, d, c, b: 0 if m >= d else m + 1, "dec": lambda m, d, c, b: d if m == 0 or m > d else m - 1,
}


def _program(vals, mem0):
    """(kernel lines, reference memory after, reference results)."""
    mem, results = list(mem0), []
    lines = ["s_load_dwordx2 s[2:3], s[0:1], 0x0", "s_load_dwordx4 s[4:7], s[0:1], 0x8", "v_mov_b32 v0, 0",
             "s_waitcnt lgkmcnt(0)", "s_load_dwordx16 s[32:47], s[6:7], 0x0", "s_load_dwordx16 s[48:63], s[6:7], 0x40",
             "s_mov_b32 s8, s2", "s_and_b32 s9, s3, 0xffff", f"s_movk_i32 s10, {NUM_RECORDS}", "s_mov_b32 s11, 0",
             "s_waitcnt lgkmcnt(0)"]

    def store(dst_dword, src, n, asm):
        lines.append(asm)
        for k in range(n):
            mem[dst_dword + k] = vals[src + k]

    store(0, 0, 1, "s_store_dword s32, s[2:3], 0x0")
    store(2, 2, 2, "s_store_dwordx2 s[34:35], s[2:3], 0x8")
    store(4, 4, 4, "s_store_dwordx4 s[36:39], s[2:3], 0x13")            # the two low address bits are ignored
    lines.append("s_movk_i32 s12, 0x20")
    store(8, 8, 1, "s_store_dword s40, s[2:3], s12")
    store(39, 8, 2, "s_buffer_store_dwordx4 s[40:43], s[8:11], 0x9c")   # dwords 41, 42 lie past num_records
    lines.append("s_buffer_store_dword s44, s[8:11], 0xa4")            # wholly out of range: dropped

    def atomic(op, wide, dword, data_src, glc=True, buffer=False, cmp=None, offset=None):
        n = 2 if wide else 1
        bits = 32 * n
        regs = n * (2 if op == "cmpswap" else 1)
        data = sum(vals[data_src + k] << (32 * k) for k in range(n))
        lines.extend(f"s_mov_b32 s{20 + k}, s{32 + data_src + k}" for k in range(n))
        if op == "cmpswap":
            for k in range(n):
                lines.append(f"s_mov_b32 s{20 + n + k}, {(cmp >> (32 * k)) & M32}")
        dst = f"s[20:{20 + regs - 1}]" if regs > 1 else "s20"
        base = "s[8:11]" if buffer else "s[2:3]"
        name = f"s_{'buffer_' if buffer else ''}atomic_{op}{'_x2' if wide else ''}"
        lines.append(f"{name} {dst}, {base}, {hex(offset if offset is not None else 4 * dword)}{' glc' if glc else ''}")
        inside = not buffer or 4 * (dword + n - 1) < NUM_RECORDS       # each dword starts below num_records
        old = sum(mem[dword + k] << (32 * k) for k in range(n)) if inside else 0
        if inside:
            new = REF[op](old, data, cmp, bits) & ((1 << bits) - 1)
            for k in range(n):
                mem[dword + k] = (new >> (32 * k)) & M32
        if glc:
            lines.append("s_waitcnt lgkmcnt(0)")
            for k in range(n):
                lines.extend([f"v_mov_b32 v1, s{20 + k}",
                              f"global_store_dword v0, v1, s[4:5] offset:{4 * len(results)}"])
                results.append((old >> (32 * k)) & M32)

    for i, op in enumerate(REF):
        cmp = (mem[16 + i]) if op == "cmpswap" else None
        atomic(op, False, 16 + i, 10 + i, cmp=cmp)
        cmp64 = (mem[30 + 2 * (i % 4)] | mem[31 + 2 * (i % 4)] << 32) if op == "cmpswap" else None
        atomic(op, True, 30 + 2 * (i % 4), 2 * i % 28, cmp=cmp64)
    atomic("cmpswap", False, 17, 5, cmp=mem[17] ^ 1)                     # compare fails: memory kept
    atomic("add", False, 18, 6, glc=False)
    atomic("umax", True, 38, 7, glc=False)
    atomic("xor", False, 40, 9, buffer=True)                               # the last dword in range
    atomic("add", False, 41, 3, buffer=True)                               # out of range: returns 0
    atomic("sub", False, 12, 11, offset=None)
    lines.extend(["s_waitcnt vmcnt(0) lgkmcnt(0)", "s_endpgm"])
    return "\n".join(lines), mem, results


@pytest.mark.parametrize("arch,seed", [("gfx90a", 1), ("gfx942", 2), ("gfx90a", 3)])
def test_scalar_stores_and_atomics(arch, seed):
    rng = np.random.default_rng(seed)
    vals = [int(v) for v in rng.integers(1, 1 << 32, 32, dtype=np.uint64)]
    mem0 = [int(v) for v in rng.integers(1, 1 << 32, 64, dtype=np.uint64)]
    source, mem_ref, res_ref = _program(vals, mem0)
    co = build(source, arch=arch, vgprs=4, sgprs=72, args=(("mem", 8), ("res", 8), ("vals", 8)))
    mem = np.array(mem0, np.uint32)
    res = np.full(len(res_ref), 0xDEADBEEF, np.uint32)
    Emulator.load(co).launch("k", grid=1, block=64, args=[mem, res, np.array(vals, np.uint32)])
    np.testing.assert_array_equal(mem, np.array(mem_ref, np.uint32))
    np.testing.assert_array_equal(res, np.array(res_ref, np.uint32))


def test_returned_value_needs_lgkmcnt_zero():
    body = """
s_load_dwordx2 s[2:3], s[0:1], 0x0
s_waitcnt lgkmcnt(0)
s_mov_b32 s4, 7
s_atomic_add s4, s[2:3], 0x0 glc
s_add_u32 s5, s4, 1
s_endpgm
"""
    co = build(body, vgprs=4, sgprs=16)
    with pytest.raises(EmulationError, match=r"reads s4 .*s_atomic_add s4.*lgkmcnt\(0\)"):
        Emulator.load(co).launch("k", grid=1, block=64, args=[np.ones(4, np.uint32)])


def test_misaligned_64bit_atomic_faults():
    body = "s_load_dwordx2 s[2:3], s[0:1], 0x0\ns_waitcnt lgkmcnt(0)\ns_atomic_add_x2 s[4:5], s[2:3], 0x4\ns_endpgm"
    co = build(body, vgprs=4, sgprs=16)
    with pytest.raises(EmulationError, match="misaligned 64-bit scalar atomic"):
        Emulator.load(co, strict=False).launch("k", grid=1, block=64, args=[np.ones(4, np.uint32)])


def test_dcache_operations_count_in_lgkmcnt():
    body = """
s_load_dwordx2 s[2:3], s[0:1], 0x0
s_waitcnt lgkmcnt(0)
s_store_dword s2, s[2:3], 0x0
s_dcache_wb
s_dcache_inv
s_waitcnt lgkmcnt(0)
s_endpgm
"""
    co = build(body, vgprs=4, sgprs=16)
    mem = np.ones(4, np.uint32)
    result = Emulator.load(co).launch("k", grid=1, block=64, args=[mem])
    assert result.opcode_counts["s_dcache_wb"] == 1 and mem[0] != 1 and (mem[1:] == 1).all()
