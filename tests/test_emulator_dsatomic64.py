"""LDS 64-bit, fp64, packed-16-bit, mskor/cmpst/wrap/wrxchg atomics against a serial numpy model: two
waves, every lane hitting one of eight 8-byte slots (32-bit ops use the slot's low dword)."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

U, U64 = np.uint32, np.uint64
BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32 v1, 3, v0
v_and_b32 v2, 7, v0
v_lshlrev_b32 v2, 3, v2
s_waitcnt lgkmcnt(0)
global_load_dwordx2 v[4:5], v1, s[4:5]
v_add_u32 v3, 0x400, v1
global_load_dwordx2 v[6:7], v3, s[4:5]
v_mov_b32 v8, 0
v_mov_b32 v9, 0
v_mov_b32 v12, 0
v_mov_b32 v13, 0
v_mov_b32 v14, 0
v_mov_b32 v15, 0
v_cmp_gt_u32 vcc, 8, v0
s_and_saveexec_b64 s[8:9], vcc
v_add_u32 v3, 0x800, v1
global_load_dwordx2 v[10:11], v3, s[4:5]
s_waitcnt vmcnt(0)
ds_write_b64 v2, v[10:11]
s_mov_b64 exec, s[8:9]
s_waitcnt vmcnt(0) lgkmcnt(0)
s_barrier
{op}
s_waitcnt lgkmcnt(0)
s_barrier
global_store_dwordx2 v1, v[8:9], s[6:7]
v_add_u32 v3, 0x400, v1
global_store_dwordx2 v3, v[12:13], s[6:7]
s_and_saveexec_b64 s[8:9], vcc
ds_read_b64 v[10:11], v2
s_waitcnt lgkmcnt(0)
v_add_u32 v3, 0x800, v1
global_store_dwordx2 v3, v[10:11], s[6:7]
s_endpgm
"""


def _f(x, bits):
    return float(np.array([x], U64 if bits == 64 else U).view(np.float64 if bits == 64 else np.float32)[0])


def _b(x, bits):
    return int(np.array([x], np.float64 if bits == 64 else np.float32).view(U64 if bits == 64 else U)[0])


def _pk(o, d, half):
    r = 0
    for sh in (0, 16):
        a, b = (o >> sh) & 0xFFFF, (d >> sh) & 0xFFFF
        if half:
            s = float(np.uint16(a).view(np.float16)) + float(np.uint16(b).view(np.float16))
            r |= int(np.float16(s).view(np.uint16)) << sh
        else:
            s = float(np.uint32(a << 16).view(np.float32)) + float(np.uint32(b << 16).view(np.float32))
            f = int(np.float32(s).view(U))
            r |= (((f + 0x7FFF + ((f >> 16) & 1)) >> 16) & 0xFFFF) << sh
    return r


def _s(x, bits):
    return x - (1 << bits) if x >> (bits - 1) else x


def step(kind, o, d0, d1, bits):
    m = (1 << bits) - 1
    return {
        "add": lambda: (o + d0) & m, "sub": lambda: (o - d0) & m, "rsub": lambda: (d0 - o) & m,
        "inc": lambda: 0 if o >= d0 else o + 1, "dec": lambda: d0 if o == 0 or o > d0 else o - 1,
        "min_i": lambda: o if _s(o, bits) <= _s(d0, bits) else d0, "max_u": lambda: max(o, d0),
        "and": lambda: o & d0, "or": lambda: o | d0, "xor": lambda: o ^ d0,
        "add_f": lambda: _b(_f(o, bits) + _f(d0, bits), bits),
        "min_f": lambda: _b(min(_f(o, bits), _f(d0, bits)), bits),
        "max_f": lambda: _b(max(_f(o, bits), _f(d0, bits)), bits),
        "pk_f16": lambda: _pk(o, d0, True), "pk_bf16": lambda: _pk(o, d0, False),
        "mskor": lambda: (o & ~d0 & m) | d1, "cmpst": lambda: d1 if o == d0 else o,
        "cmpst_f": lambda: d1 if _f(o, bits) == _f(d0, bits) else o,
        "swap": lambda: d0, "wrap": lambda: o - d0 if o >= d0 else (o + d1) & m,
    }[kind]()


# op text, model kind, bits, returns, data kind, arch
CASES = {
    "add_rtn_u64": ("ds_add_rtn_u64 v[8:9], v2, v[4:5]", "add", 64, "int"),
    "sub_u64": ("ds_sub_u64 v2, v[4:5]", "sub", 64, "int"),
    "rsub_rtn_u64": ("ds_rsub_rtn_u64 v[8:9], v2, v[4:5]", "rsub", 64, "int"),
    "inc_rtn_u64": ("ds_inc_rtn_u64 v[8:9], v2, v[4:5]", "inc", 64, "small"),
    "dec_u64": ("ds_dec_u64 v2, v[4:5]", "dec", 64, "small"),
    "min_rtn_i64": ("ds_min_rtn_i64 v[8:9], v2, v[4:5]", "min_i", 64, "int"),
    "max_u64": ("ds_max_u64 v2, v[4:5]", "max_u", 64, "int"),
    "and_rtn_b64": ("ds_and_rtn_b64 v[8:9], v2, v[4:5]", "and", 64, "int"),
    "or_b64": ("ds_or_b64 v2, v[4:5]", "or", 64, "int"),
    "xor_rtn_b64": ("ds_xor_rtn_b64 v[8:9], v2, v[4:5]", "xor", 64, "int"),
    "add_rtn_f64": ("ds_add_rtn_f64 v[8:9], v2, v[4:5]", "add_f", 64, "float"),
    "min_f64": ("ds_min_f64 v2, v[4:5]", "min_f", 64, "float"),
    "max_rtn_f64": ("ds_max_rtn_f64 v[8:9], v2, v[4:5]", "max_f", 64, "float"),
    "pk_add_rtn_f16": ("ds_pk_add_rtn_f16 v8, v2, v4", "pk_f16", 32, "half"),
    "pk_add_bf16": ("ds_pk_add_bf16 v2, v4", "pk_bf16", 32, "bhalf"),
    "mskor_rtn_b32": ("ds_mskor_rtn_b32 v8, v2, v4, v6", "mskor", 32, "int"),
    "mskor_b64": ("ds_mskor_b64 v2, v[4:5], v[6:7]", "mskor", 64, "int"),
    "cmpst_rtn_b64": ("ds_cmpst_rtn_b64 v[8:9], v2, v[4:5], v[6:7]", "cmpst", 64, "cmp"),
    "cmpst_rtn_f32": ("ds_cmpst_rtn_f32 v8, v2, v4, v6", "cmpst_f", 32, "cmp"),
    "cmpst_f64": ("ds_cmpst_f64 v2, v[4:5], v[6:7]", "cmpst_f", 64, "cmp"),
    "wrxchg_rtn_b32": ("ds_wrxchg_rtn_b32 v8, v2, v4", "swap", 32, "int"),
    "wrxchg_rtn_b64": ("ds_wrxchg_rtn_b64 v[8:9], v2, v[4:5]", "swap", 64, "int"),
    "wrap_rtn_b32": ("ds_wrap_rtn_b32 v8, v2, v4, v6", "wrap", 32, "small"),
}


def _inputs(data_kind, bits, rng):
    m = (1 << bits) - 1
    if data_kind == "small":
        return ([int(x) for x in rng.integers(1, 30, n)] for n in (128, 128, 8))
    if data_kind == "float":
        g = lambda n: [_b(x, 64) for x in rng.uniform(-4, 4, n)]
        return g(128), g(128), g(8)
    if data_kind in ("half", "bhalf"):
        def g(n):
            v = rng.uniform(0.5, 2, 2 * n).astype(np.float16 if data_kind == "half" else np.float32)
            h = v.view(np.uint16) if data_kind == "half" else (v.view(U) >> 16).astype(np.uint16)
            return [int(x) for x in h.view(U)]
        return g(128), g(128), g(8)
    d0, d1, init = (rng.integers(1, 1 << 63, n, dtype=np.int64) for n in (128, 128, 8))
    d0, d1, init = ([int(x) & m for x in a] for a in (d0, d1, init))
    if data_kind == "cmp":                      # lanes 0-7 compare equal, lanes 8-15 see what 0-7 stored
        if bits == 32:
            d0, d1, init = ([_b(x, 32) for x in rng.uniform(-4, 4, 128)] for _ in range(3))
            init = init[:8]
            init[0], d0[0] = 0, 0x80000000      # +0 == -0 as floats
        d0[1:8] = init[1:8]
        d0[8:16] = d1[:8]
    return [int(x) for x in d0], [int(x) for x in d1], [int(x) for x in init[:8]]


def run_case(name, drop_wait=False):
    text, kind, bits, data_kind = CASES[name]
    rng = np.random.default_rng(len(name) * 31 + bits)
    d0, d1, init = _inputs(data_kind, bits, rng)
    m = (1 << bits) - 1
    words = np.zeros(768, U64)
    words[:128], words[128:256], words[256:264] = d0, d1, [x | (0x5A5A5A5A << 32 if bits == 32 else 0) for x in init]
    out = np.full(3 * 256, 0xDEADBEEF, U)
    body = BODY.format(op=text)
    if drop_wait:
        body = body.replace("{}\ns_waitcnt lgkmcnt(0)\n".format(text), f"{text}\nv_add_u32 v8, 1, v8\n")
    arch = "gfx942" if kind.startswith("pk") else "gfx90a"
    co = build(body, args=(("in", 8), ("out", 8)), vgprs=16, sgprs=16, lds=1024, max_wg=128, arch=arch)
    Emulator.load(co).launch("k", grid=1, block=128, args=[words.view(U), out])
    mem, ret = list(init), [0] * 128
    for lane in range(128):
        s = lane & 7
        ret[lane] = mem[s]
        mem[s] = step(kind, mem[s], d0[lane] & m, d1[lane] & m, bits)
    returns = "_rtn_" in text
    got = out.view(U64)
    if returns:
        assert [int(x) for x in got[:128]] == ret
    else:
        assert not got[:128].any()
    hi = 0x5A5A5A5A << 32 if bits == 32 else 0
    assert [int(x) for x in got[256:264]] == [x | hi for x in mem]


@pytest.mark.parametrize("name", list(CASES))
def test_lds_atomic(name):
    run_case(name)


def test_wrxchg2_swaps_two_elements_and_returns_both():
    rng = np.random.default_rng(9)
    for text, st64 in (("ds_wrxchg2_rtn_b32 v[8:9], v2, v4, v6 offset0:0 offset1:1", False),
                       ("ds_wrxchg2st64_rtn_b64 v[12:15], v2, v[4:5], v[6:7] offset1:1", True)):
        d0, d1 = (rng.integers(1, 1 << 62, 128) for _ in range(2))
        init = rng.integers(1, 1 << 62, 8)
        words = np.zeros(768, U64)
        words[:128], words[128:256], words[256:264] = d0, d1, init
        out = np.full(3 * 256, 0xDEADBEEF, U)
        co = build(BODY.format(op=text), args=(("in", 8), ("out", 8)), vgprs=16, sgprs=16, lds=1024, max_wg=128)
        Emulator.load(co).launch("k", grid=1, block=128, args=[words.view(U), out])
        got = out.view(U64)
        if not st64:     # dword 0 and dword 1 of the slot, each swapped in lane order
            lo, hi = [int(x) & 0xFFFFFFFF for x in init], [int(x) >> 32 for x in init]
            ret = []
            for lane in range(128):
                s = lane & 7
                ret.append(lo[s] | hi[s] << 32)
                lo[s], hi[s] = int(d0[lane]) & 0xFFFFFFFF, int(d1[lane]) & 0xFFFFFFFF
            assert [int(x) for x in got[:128]] == ret
            assert [int(x) for x in got[256:264]] == [a | b << 32 for a, b in zip(lo, hi)]
        else:            # the slot's old values come back in v[12:13] (the element 512 bytes up is
            slot = [int(x) for x in init]                       # uninitialised LDS: not checked)
            ret = []
            for lane in range(128):
                ret.append(slot[lane & 7])
                slot[lane & 7] = int(d0[lane])
            assert not got[:128].any()
            assert [int(x) for x in got[128:256]] == ret
            assert [int(x) for x in got[256:264]] == slot


def test_returned_value_pending_until_lgkmcnt():
    with pytest.raises(EmulationError, match=r"reads v8.*ds_add_rtn_u64.*lgkmcnt"):
        run_case("add_rtn_u64", drop_wait=True)


def test_misaligned_64bit_lds_atomic_is_a_fault():
    body = BODY.format(op="v_or_b32 v2, 4, v2\nds_add_u64 v2, v[4:5]")
    co = build(body, args=(("in", 8), ("out", 8)), vgprs=16, sgprs=16, lds=1024, max_wg=128)
    with pytest.raises(EmulationError, match="misaligned 64-bit LDS atomic"):
        Emulator.load(co).launch("k", grid=1, block=128, args=[np.zeros(1536, U), np.zeros(768, U)])
