"""gfx950 scaled up-conversions v_cvt_scalef32_{,pk_}{f32,f16,bf16}_{fp8,bf8,fp4} on every byte/word select, with
random codes (and in every byte of some lanes: zeros, NaN/Inf codes, the smallest subnormals) and per-lane scales that include the edge exponents
(0 = 2^-127: subnormal and vanishing results; 255: NaN; large: overflow to infinity) against a numpy
reference: codes decoded here from their bit fields, the product rounded by numpy's own casts (f16, f32)
or the usual f32 -> bf16 round-to-nearest-even bit trick. Triton kernels that use pk_bf16_fp8/fp4 run
strict in tests/test_emulator_fixtures.py (triton_gfx950_dot_scaled_upcast_*)."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


def decode(code: int, fmt: str) -> float:
    ebits, mbits, bias = {"fp8": (4, 3, 7), "bf8": (5, 2, 15), "fp4": (2, 1, 1)}[fmt]
    sign = -1.0 if code >> (ebits + mbits) & 1 else 1.0
    e, m = code >> mbits & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if fmt == "fp8" and e == 15 and m == 7:
        return np.nan
    if fmt == "bf8" and e == 31:
        return sign * np.inf if m == 0 else np.nan
    mag = m / (1 << mbits) * 2.0 ** (1 - bias) if e == 0 else (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
    return sign * mag


@np.errstate(over="ignore")
def to_bits(x: float, dest: str) -> int:
    if dest == "f32":
        return int(np.float32(x).view(np.uint32))
    if dest == "f16":
        return int(np.float16(x).view(np.uint16))
    u = int(np.float32(x).view(np.uint32))                 # exact: at most 4 significant bits
    if np.isnan(x):
        return 0x7FC0
    return (u + 0x7FFF + (u >> 16 & 1)) >> 16


def kernel(opcode: str, op_sel: str, pair: bool) -> str:
    dst = "v[4:5]" if pair else "v4"
    store = "global_store_dwordx2 v6, v[4:5], s[6:7]" if pair else "global_store_dword v6, v4, s[6:7]"
    return "\n".join([
        "s_load_dwordx4 s[4:7], s[0:1], 0x0", "v_lshlrev_b32 v1, 4, v0", "v_lshlrev_b32 v6, 3, v0",
        "s_waitcnt lgkmcnt(0)", "global_load_dword v2, v1, s[4:5]", "global_load_dword v3, v1, s[4:5] offset:4",
        "global_load_dword v4, v1, s[4:5] offset:8", "s_waitcnt vmcnt(0)",
        f"{opcode} {dst}, v2, v3 {op_sel}".strip(), "s_nop 1", store, "s_endpgm"])


# scale exponent fields: tiny, NaN, around 1, and large (f16 overflow; f32 overflow with bf8's 57344)
EXPONENTS = np.array([0, 255, 127, 100, 106, 113, 120, 126, 128, 131, 135, 140, 150, 254])


def run(opcode, sel, seed=0, scales=None):
    rng = np.random.default_rng(seed)
    parts = opcode.split("_")
    packed, dest, fmt = parts[3] == "pk", parts[-2], parts[-1]
    pair = packed and dest == "f32"
    src = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    special = np.array([0x00, 0x80, 0x7F, 0xFF, 0x7C, 0xFC, 0x01, 0x81, 0x7E, 0x08], np.uint32)   # zeros, NaN/Inf, tiny
    src[:10] = special * np.uint32(0x01010101)
    if scales is None:
        scales = (EXPONENTS[rng.integers(0, len(EXPONENTS), 64)] << 23).astype(np.uint32)
    old = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    words = np.stack([src, scales, old, old], 1)
    out = np.full((64, 2), 0xDEADBEEF, np.uint32)
    op_sel = f"op_sel:[{sel & 1},{sel >> 1 & 1},{sel >> 2 & 1}]" if sel else ""
    em = Emulator.load(build(kernel(opcode, op_sel, pair), args=(("in", 8), ("out", 8)), vgprs=8, sgprs=16,
                             arch="gfx950"))
    em.launch("k", grid=1, block=64, args=[words, out])
    expect = np.zeros((64, 2), np.uint32)
    for lane in range(64):
        k = np.nan if scales[lane] >> 23 == 255 else 2.0 ** (int(scales[lane] >> 23) - 127)
        if fmt == "fp4":
            byte = int(src[lane]) >> (8 * (sel & 3)) & 0xFF
            codes = [byte & 15, byte >> 4]
        elif packed:
            codes = [int(src[lane]) >> (16 * (sel & 1) + 8 * i) & 0xFF for i in range(2)]
        else:
            codes = [int(src[lane]) >> (8 * (sel & 3)) & 0xFF]
        vals = [to_bits(decode(c, fmt) * k, dest) for c in codes]
        if pair:
            expect[lane] = vals
        elif packed:
            expect[lane, 0] = vals[0] | vals[1] << 16
        else:
            keep = int(old[lane]) & (0xFFFF if sel & 4 else 0xFFFF0000)
            expect[lane, 0] = keep | vals[0] << (16 if sel & 4 else 0) if dest == "f16" else vals[0]
    cols = 2 if pair else 1
    return out[:, :cols], expect[:, :cols], dest


def same(got, expect, dest):
    """Bit-exact, except that any NaN matches any NaN (payload and sign are not modelled)."""
    halves = dest in ("f16", "bf16")
    g = np.concatenate([got & 0xFFFF, got >> 16], 1) if halves else got
    e = np.concatenate([expect & 0xFFFF, expect >> 16], 1) if halves else expect
    nan = {"f32": lambda x: (x & 0x7F800000) == 0x7F800000 and x & 0x7FFFFF,
           "f16": lambda x: (x & 0x7C00) == 0x7C00 and x & 0x3FF,
           "bf16": lambda x: (x & 0x7F80) == 0x7F80 and x & 0x7F}[dest]
    for a, b in zip(g.ravel().tolist(), e.ravel().tolist()):
        assert a == b or (nan(a) and nan(b)), f"got {a:#x}, expected {b:#x}"


CASES = [(f"v_cvt_scalef32_{d}_{s}", sel) for d in ("f32", "f16") for s in ("fp8", "bf8") for sel in (0, 1, 2, 3)]
CASES += [("v_cvt_scalef32_f16_fp8", 5), ("v_cvt_scalef32_f16_bf8", 6)]                 # high destination half
CASES += [(f"v_cvt_scalef32_pk_{d}_{s}", sel) for d in ("f32", "f16", "bf16") for s in ("fp8", "bf8") for sel in (0, 1)]
CASES += [(f"v_cvt_scalef32_pk_{d}_fp4", sel) for d in ("f32", "f16", "bf16") for sel in (0, 1, 2, 3)]


@pytest.mark.parametrize("opcode,sel", CASES)
def test_cvt_scalef32(opcode, sel):
    got, expect, dest = run(opcode, sel, seed=CASES.index((opcode, sel)))
    same(got, expect, dest)


def test_edge_results_occur():
    """The random scales do reach the edges: infinities, NaNs, zeros from non-zero codes, subnormals."""
    got, _, _ = run("v_cvt_scalef32_pk_f32_bf8", 0, seed=3)
    f = got.view(np.float32)
    assert np.isinf(f).any() and np.isnan(f).any() and (f == 0).any()
    assert ((np.abs(f) < np.finfo(np.float32).tiny) & (f != 0)).any()
    got, _, _ = run("v_cvt_scalef32_pk_f16_fp8", 1, seed=4)
    h = np.concatenate([got & 0xFFFF, got >> 16]).astype(np.uint16).view(np.float16)
    assert np.isinf(h).any() and ((np.abs(h) < np.finfo(np.float16).tiny) & (h != 0)).any()


def test_scale_that_is_not_a_power_of_two_is_refused():
    with pytest.raises(EmulationError, match="not 2\\^k"):
        run("v_cvt_scalef32_pk_f32_fp8", 0, scales=np.full(64, np.float32(1.5).view(np.uint32)))


# -- down-conversions ------------------------------------------------------------------------------

def code_values(fmt):
    return np.array([decode(c, fmt) for c in range(1 << (8 if fmt != "fp4" else 4))])


def nearest_even(x: float, fmt: str) -> int:
    """Brute force: the finite code nearest to x, ties to the even code, the sign kept for zeros."""
    vals = code_values(fmt)
    half = len(vals) // 2
    mags = vals[:half]
    ok = np.flatnonzero(np.isfinite(mags))
    dist = np.abs(mags[ok] - abs(x))
    best = ok[dist == dist.min()]
    code = int(best[0]) if len(best) == 1 else int(best[best % 2 == 0][0])
    return code | (half if np.signbit(x) else 0)


def down_kernel(opcode, op_sel, three):
    srcs = "v2, v3, v7" if three else "v2, v7"
    return "\n".join([
        "s_load_dwordx4 s[4:7], s[0:1], 0x0", "v_lshlrev_b32 v1, 4, v0", "v_lshlrev_b32 v6, 2, v0",
        "s_waitcnt lgkmcnt(0)", "global_load_dword v2, v1, s[4:5]", "global_load_dword v3, v1, s[4:5] offset:4",
        "global_load_dword v7, v1, s[4:5] offset:8", "global_load_dword v4, v1, s[4:5] offset:12",
        "s_waitcnt vmcnt(0)", f"{opcode} v4, {srcs} {op_sel}".strip(), "s_nop 1",
        "global_store_dword v6, v4, s[6:7]", "s_endpgm"])


def run_down(opcode, sel, seed=0, blow_up=False):
    rng = np.random.default_rng(seed)
    target, source = opcode.split("_")[-2:]
    vals = code_values(target)
    finite = np.sort(np.unique(np.abs(vals[np.isfinite(vals)])))
    mids = (finite[1:] + finite[:-1]) / 2                          # exact ties
    exps = rng.integers(120, 128 if source == "f16" else 135, 64)       # f16 sources: stay below 65504
    k = 2.0 ** (exps - 127)
    v = np.where(rng.random((64, 2)) < 0.4, rng.choice(mids, (64, 2)),
                 rng.uniform(-1, 1, (64, 2)) * finite[-1] * rng.choice([1, 2 ** -6, 2 ** -12], (64, 2)))
    v *= rng.choice([-1, 1], (64, 2))
    v[0] = [-finite[1] / 4, finite[-1]]                            # rounds to -0; the largest value
    if blow_up:
        v[5, 1] = finite[-1] * 1.5
    x = v * k[:, None]
    if source == "f32":
        words = x.astype(np.float32).view(np.uint32)
    elif source == "f16":
        words = x.astype(np.float16).view(np.uint16).astype(np.uint32)
        words = words[:, :1] | words[:, 1:] << 16
    else:
        u = x.astype(np.float32).view(np.uint32)
        words = (u >> 16)[:, :1] | (u >> 16)[:, 1:] << 16             # truncation is exact: few bits
    seen = words if source == "f32" else np.stack([words[:, 0] & 0xFFFF, words[:, 0] >> 16], 1)
    xs = (seen.view(np.float32) if source == "f32" else seen.astype(np.uint16).view(np.float16) if source == "f16"
          else (seen << 16).astype(np.uint32).view(np.float32)).astype(np.float64)
    old = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    inp = np.zeros((64, 4), np.uint32)
    inp[:, 0] = words[:, 0]
    inp[:, 1] = words[:, 1] if source == "f32" else 0
    inp[:, 2] = (exps << 23).astype(np.uint32)
    inp[:, 3] = old
    out = np.full(64, 0xDEADBEEF, np.uint32)
    op_sel = f"op_sel:[{','.join(str(sel >> i & 1) for i in range(4))}]" if sel else ""
    em = Emulator.load(build(down_kernel(opcode, op_sel, source == "f32"), args=(("in", 8), ("out", 8)), vgprs=8,
                             sgprs=16, arch="gfx950"))
    em.launch("k", grid=1, block=64, args=[inp, out])
    expect = np.zeros(64, np.uint32)
    for lane in range(64):
        codes = [nearest_even(xs[lane, i] / k[lane], target) for i in range(2)]
        if target == "fp4":
            shift = 8 * ((sel >> 2 & 1) + 2 * (sel >> 3 & 1))
            expect[lane] = int(old[lane]) & ~(0xFF << shift) & 0xFFFFFFFF | (codes[0] | codes[1] << 4) << shift
        else:
            shift = 16 * (sel >> (3 if source == "f32" else 2) & 1)
            expect[lane] = int(old[lane]) & ~(0xFFFF << shift) & 0xFFFFFFFF | (codes[0] | codes[1] << 8) << shift
    return out, expect


DOWN = [(f"v_cvt_scalef32_pk_{t}_f32", sel) for t in ("fp8", "bf8") for sel in (0, 8)]
DOWN += [(f"v_cvt_scalef32_pk_{t}_{s}", sel) for t in ("fp8", "bf8") for s in ("f16", "bf16") for sel in (0, 4)]
DOWN += [(f"v_cvt_scalef32_pk_fp4_{s}", sel) for s in ("f32", "f16", "bf16") for sel in (0, 4, 8, 12)]


@pytest.mark.parametrize("opcode,sel", DOWN)
def test_cvt_scalef32_down(opcode, sel):
    got, expect = run_down(opcode, sel, seed=DOWN.index((opcode, sel)))
    np.testing.assert_array_equal(got, expect)


def test_down_conversion_beyond_the_largest_code_is_refused():
    with pytest.raises(EmulationError, match="beyond the largest"):
        run_down("v_cvt_scalef32_pk_fp4_f32", 0, blow_up=True)
