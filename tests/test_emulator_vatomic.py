"""Global/flat/buffer atomics against a serial numpy model: two workgroups of two waves, every lane
hitting one of eight slots (collisions serialised in lane, wave, workgroup order) or a slot of its
own; returned values, final memory, out-of-range buffer lanes (dropped, return 0), strict vmcnt."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

N = 256                        # lanes in all: 2 workgroups x 128
M64 = (1 << 64) - 1

BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_load_dwordx2 s[8:9], s[0:1], 0x10
s_waitcnt lgkmcnt(0)
s_lshl_b32 s3, s2, 7
v_add_u32 v1, s3, v0
v_lshlrev_b32 v9, {shift}, v1
global_load_{ld} {data}, v9, s[4:5]
v_add_u32 v12, 0x1000, v9
global_load_{ld} {cmp}, v12, s[4:5]
v_and_b32 v8, {mask}, v1
v_lshlrev_b32 v8, {shift}, v8
s_mov_b32 s12, s8
s_and_b32 s13, s9, 0xffff
s_mov_b32 s14, {nrec}
s_mov_b32 s15, 0x00020000
v_mov_b32 v11, s9
v_add_co_u32 v10, vcc, s8, v8
s_nop 1
v_addc_co_u32 v11, vcc, 0, v11, vcc
s_waitcnt vmcnt(0)
{op}
s_waitcnt vmcnt(0) lgkmcnt(0)
{store}
s_endpgm
"""


def _signed(x, bits):
    return x - (1 << bits) if x >> (bits - 1) else x


def _f64(x):
    return float(np.uint64(x).view(np.float64))


def _b64(f):
    return int(np.float64(f).view(np.uint64))


def _halves(o, d, half):
    out = 0
    for sh in (0, 16):
        a, b = (o >> sh) & 0xFFFF, (d >> sh) & 0xFFFF
        if half:
            s = np.float64(np.uint16(a).view(np.float16)) + np.float64(np.uint16(b).view(np.float16))
            r = int(np.float16(s).view(np.uint16))
        else:   # bf16: exact sum in float64, round to nearest even on the fp32 pattern
            s = np.float32(np.uint32(a << 16).view(np.float32)) + np.float64(np.uint32(b << 16).view(np.float32))
            f = int(np.float32(s).view(np.uint32))
            r = ((f + 0x7FFF + ((f >> 16) & 1)) >> 16) & 0xFFFF
        out |= r << sh
    return out


def step(op, o, d, c, bits):
    m = (1 << bits) - 1
    base = op[:-3] if op.endswith("_x2") else op
    return {
        "add": lambda: (o + d) & m, "sub": lambda: (o - d) & m, "swap": lambda: d,
        "cmpswap": lambda: d if o == c else o, "and": lambda: o & d, "or": lambda: o | d, "xor": lambda: o ^ d,
        "smin": lambda: o if _signed(o, bits) <= _signed(d, bits) else d,
        "smax": lambda: o if _signed(o, bits) >= _signed(d, bits) else d,
        "umin": lambda: min(o, d), "umax": lambda: max(o, d),
        "inc": lambda: 0 if o >= d else o + 1,
        "dec": lambda: d if o == 0 or o > d else o - 1,
        "add_f64": lambda: _b64(_f64(o) + _f64(d)),
        "min_f64": lambda: _b64(min(_f64(o), _f64(d))),
        "max_f64": lambda: _b64(max(_f64(o), _f64(d))),
        "pk_add_f16": lambda: _halves(o, d, True),
        "pk_add_bf16": lambda: _halves(o, d, False),
    }[base]()


def inputs(op, bits, rng, slots):
    base = op[:-3] if op.endswith("_x2") else op
    m = (1 << bits) - 1
    if base in ("inc", "dec"):                           # small values: wrap-arounds happen
        data = rng.integers(1, 40, N).astype(object)
        init = rng.integers(0, 40, slots).astype(object)
    elif base.endswith("f64"):
        data = [_b64(x) for x in rng.uniform(-4, 4, N)]
        init = [_b64(x) for x in rng.uniform(-4, 4, slots)]
    elif base.startswith("pk_add"):
        half = base.endswith("_f16")
        def pk(n):
            v = rng.uniform(0.5, 2.0, 2 * n).astype(np.float16 if half else np.float32)
            bits16 = v.view(np.uint16) if half else (v.view(np.uint32) >> 16).astype(np.uint16)
            return [int(x) for x in bits16.view(np.uint32)]
        data, init = pk(N), pk(slots)
    else:
        data = [int(x) & m for x in rng.integers(1, 1 << 62, N)]
        init = [int(x) & m for x in rng.integers(1, 1 << 62, slots)]
    cmp = [int(x) & m for x in rng.integers(1, 1 << 62, N)]
    if base == "cmpswap":                                # lanes 0-7 match memory, lanes 8-15 what 0-7 stored
        cmp[:8] = list(init[:8]) if slots == 8 else cmp[:8]
        cmp[8:16] = data[:8]
        if slots == N:
            cmp[::3] = init[::3]
    return [int(x) for x in data], [int(x) for x in init], cmp


def model(op, bits, data, init, cmp, slots, in_range):
    mem, ret = list(init), [0] * N
    for g in range(N):
        s = g % slots
        if not in_range(s):
            continue
        ret[g] = mem[s]
        mem[s] = step(op, mem[s], data[g], cmp[g], bits)
    return ret, mem


def words(vals, bits):
    a = np.array([v & M64 for v in vals], np.uint64)
    return a.astype(np.uint32) if bits == 32 else a.view(np.uint32)


def run_atomic(op, form, returns=True, slots=8, arch="gfx90a", nrec_slots=None, strict=True, drop_wait=False):
    wide = op.endswith("_x2") or op.endswith("_f64")
    bits, nb = (64, 8) if wide else (32, 4)
    rng = np.random.default_rng(abs(hash((op, form, returns, slots))) % 2**32)
    data, init, cmp = inputs(op, bits, rng, slots)
    base = op[:-3] if op.endswith("_x2") else op
    dreg = ("v[2:5]" if wide else "v[2:3]") if base == "cmpswap" else ("v[2:3]" if wide else "v2")
    ret = "v[6:7]" if wide else "v6"
    rtn = (" sc0" if arch in ("gfx942", "gfx950") else " glc") if returns else ""
    if form == "buffer":
        inst, out_reg = f"buffer_atomic_{op} {dreg}, v8, s[12:15], 0 offen{rtn}", ("v[2:3]" if wide else "v2")
    elif form == "flat":
        inst = f"flat_atomic_{op} {ret + ', ' if returns else ''}v[10:11], {dreg}{rtn}"
        out_reg = ret
    else:
        inst = f"global_atomic_{op} {ret + ', ' if returns else ''}v8, {dreg}, s[8:9]{rtn}"
        out_reg = ret
    store = f"global_store_{'dwordx2' if wide else 'dword'} v9, {out_reg}, s[6:7]" if returns else ""
    body = BODY.format(shift=3 if wide else 2, ld="dwordx2" if wide else "dword", data="v[2:3]" if wide else "v2",
                       cmp="v[4:5]" if wide else "v3", mask=slots - 1, nrec=(nrec_slots or slots) * nb,
                       op=inst, store=store)
    if drop_wait:
        body = body.replace("s_waitcnt vmcnt(0) lgkmcnt(0)\n", "")
    in_words = np.zeros(2048, np.uint32)
    in_words[:len(words(data, bits))] = words(data, bits)
    in_words[1024:1024 + len(words(cmp, bits))] = words(cmp, bits)
    mem = words(init, bits).copy()
    out = np.full(2 * N, 0xDEADBEEF, np.uint32)
    co = build(body, args=(("in", 8), ("out", 8), ("mem", 8)), vgprs=16, sgprs=20, arch=arch, max_wg=128)
    Emulator.load(co, strict=strict).launch("k", grid=2, block=128, args=[in_words, out, mem])
    limit = nrec_slots if form == "buffer" and nrec_slots else slots
    ret_m, mem_m = model(op, bits, data, init, cmp, slots, lambda s: s < limit)
    return out, mem, words(ret_m, bits), words(mem_m, bits), returns, wide


def check(result):
    out, mem, ret_m, mem_m, returns, wide = result
    assert np.array_equal(mem, mem_m)
    if returns:
        assert np.array_equal(out[:len(ret_m)], ret_m)
    else:
        assert (out == 0xDEADBEEF).all()


INT = ["add", "sub", "swap", "cmpswap", "and", "or", "xor", "smin", "smax", "umin", "umax", "inc", "dec"]


@pytest.mark.parametrize("op", INT + [f"{o}_x2" for o in INT])
def test_global_integer_atomics_colliding(op):
    check(run_atomic(op, "global"))


@pytest.mark.parametrize("op", ["add_f64", "min_f64", "max_f64", "pk_add_f16", "pk_add_bf16"])
def test_float_atomics_colliding_and_unique(op):
    arch = "gfx942" if op.endswith("bf16") else "gfx90a"      # bf16 atomics are gfx940+
    check(run_atomic(op, "global", arch=arch))
    check(run_atomic(op, "global", slots=N, arch=arch))


@pytest.mark.parametrize("op,form,returns", [("sub", "buffer", True), ("cmpswap_x2", "buffer", True),
                                             ("umax_x2", "buffer", False), ("dec", "flat", True),
                                             ("max_f64", "flat", False), ("xor_x2", "flat", True),
                                             ("cmpswap", "global", False), ("inc_x2", "global", False),
                                             ("add_f64", "buffer", True)])
def test_forms(op, form, returns):
    check(run_atomic(op, form, returns=returns))


def test_buffer_out_of_range_lanes_are_dropped_and_return_zero():
    result = run_atomic("smin_x2", "buffer", nrec_slots=6)
    check(result)
    assert (result[0][:2 * N].reshape(-1, 2)[np.arange(N) % 8 >= 6] == 0).all()


def test_gfx94x_sc0_returns():
    check(run_atomic("cmpswap_x2", "global", arch="gfx942"))
    check(run_atomic("pk_add_bf16", "buffer", arch="gfx950", slots=N))     # buffer bf16: gfx950 only


def test_unique_addresses_return_the_initial_values():
    check(run_atomic("inc", "global", slots=N))


def test_missing_vmcnt_after_a_returning_atomic_is_reported():
    with pytest.raises(EmulationError, match=r"reads v6.*global_atomic_umin v6.*vmcnt"):
        run_atomic("umin", "global", drop_wait=True)
    run_atomic("umin", "global", drop_wait=True, strict=False)
