"""Float VALU operations of vector/float_parts_madak.py on random data with NaN/inf/denormals/signed zeros, against
per-lane Python references (math.frexp/ldexp/floor, numpy fp16 arithmetic) written here."""

import math

import numpy as np
import pytest

from conftest import have_llvm
from valu_kernel import run_block

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

RNG = np.random.default_rng(5)
F32_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3e-39, 2.5, -2.5, -0.5, 0.49999997, 3e9, -3e9, -1e-10]
F16_SPECIAL = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x83FF, 0x3C00, 0xB800, 0x7BFF, 0x8001]
F64_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -2.5e-310, -1e-20, 1e300, -7.5]


def mix(special, random, n=64, share=0.4):
    return np.where(RNG.random(n) < share, RNG.choice(np.array(special), n), random(n))


F32 = mix(F32_SPECIAL, lambda n: (RNG.standard_normal(n) * 10.0 ** RNG.integers(-3, 4, n))).astype(np.float32)
F32[:4] = [0.0, -0.0, 0.0, np.nan]
OTHER32 = np.roll(F32, 5)
OTHER32[:4] = [np.inf, np.nan, -np.inf, 0.0]           # 0 * inf, -0 * NaN ... for v_mad_legacy_f32
H0 = mix(F16_SPECIAL, lambda n: RNG.standard_normal(n).astype(np.float16).view(np.uint16)).astype(np.uint32)
H1 = RNG.standard_normal(64).astype(np.float16).view(np.uint16).astype(np.uint32)
F64 = mix(F64_SPECIAL, lambda n: RNG.standard_normal(n) * 10.0 ** RNG.integers(-5, 5, n)).astype(np.float64)
EXP = RNG.integers(-40, 40, 64).astype(np.int64)
EXP[:4] = [-1100, 1100, -30000, 20]
NORMAL32 = RNG.standard_normal((2, 64)).astype(np.float32)
PAIRS = RNG.standard_normal((3, 64)).astype(np.float16).view(np.uint16).astype(np.uint32)
PACKED = [PAIRS[i] | (RNG.standard_normal(64).astype(np.float16).view(np.uint16).astype(np.uint32) << 16)
          for i in range(3)]
W64 = F64.view(np.uint64)
INPUTS = np.stack([F32.view(np.uint32), H0 | (H1 << 16), (W64 & 0xFFFFFFFF).astype(np.uint32),
                   (W64 >> 32).astype(np.uint32), (EXP & 0xFFFFFFFF).astype(np.uint32),
                   NORMAL32[0].view(np.uint32), NORMAL32[1].view(np.uint32), *PACKED,
                   OTHER32.view(np.uint32)]).astype(np.uint32)
# v10 f32, v11 fp16 pair, v[12:13] f64, v14 exponent, v15/v16 normal f32, v17..v19 fp16 pairs, v20 f32


def f16(bits):
    return float(np.array(bits & 0xFFFF, np.uint16).view(np.float16))


def bits16(x):
    with np.errstate(over="ignore"):
        b = int(np.array(x, np.float64).astype(np.float16).view(np.uint16))
    return b | 0x200 if math.isnan(x) else b


def b32(x):
    return int(np.array(x, np.float32).view(np.uint32))


def i32(x):
    if math.isnan(x):
        return 0
    return min(max(x, -2 ** 31), 2 ** 31 - 1) & 0xFFFFFFFF


def frexp_ref(x):
    if math.isnan(x) or math.isinf(x):
        return x, 0
    return math.frexp(x)


def fract_ref(x, below_one):
    if math.isinf(x) or math.isnan(x):
        return math.nan                             # positive quiet NaN
    return min(x - float(np.floor(x)), below_one)   # -0.0 + -floor(-0.0) is +0.0


def fract32_ref(x):
    """A NaN input comes back quieted with its sign (the neg modifier flips it first)."""
    if math.isnan(x):
        return b32(x) | 0x400000
    return b32(fract_ref(x, float(np.uint32(0x3F7FFFFF).view(np.float32))))


def ldexp_ref(x, k):
    try:
        return math.ldexp(x, k) if math.isfinite(x) else x
    except OverflowError:
        return math.copysign(math.inf, x)


def lanes(fn):
    return np.array([fn(i) for i in range(64)], np.uint64).astype(np.uint32)


def test_float_conversions_frexp_ldexp_fract():
    x32 = [float(v) for v in F32]
    h, e, d = [f16(int(v)) for v in H0], [int(v) for v in EXP], [float(v) for v in F64]
    below16 = f16(0x3BFF)
    ops = {
        "v_cvt_flr_i32_f32 v30, v10": lambda i: i32(math.floor(x32[i])) if math.isfinite(x32[i]) else i32(x32[i]),
        "v_cvt_rpi_i32_f32 v30, v10": lambda i: i32(math.floor(x32[i] + 0.5)) if math.isfinite(x32[i]) else i32(x32[i]),
        "v_cvt_flr_i32_f32_e64 v30, -v10": lambda i: i32(math.floor(-x32[i])) if math.isfinite(x32[i]) else i32(-x32[i]),
        "v_frexp_exp_i32_f32 v30, v10": lambda i: frexp_ref(x32[i])[1] & 0xFFFFFFFF,
        "v_frexp_mant_f32 v30, v10": lambda i: b32(frexp_ref(x32[i])[0]),
        "v_frexp_exp_i16_f16 v30, v11": lambda i: frexp_ref(h[i])[1] & 0xFFFF,
        "v_frexp_mant_f16 v30, v11": lambda i: bits16(frexp_ref(h[i])[0]),
        "v_frexp_exp_i32_f64 v30, v[12:13]": lambda i: frexp_ref(d[i])[1] & 0xFFFFFFFF,
        "v_ldexp_f16 v30, v11, v14": lambda i: bits16(h[i] * 2.0 ** max(min(e[i], 100), -100)
                                                      if math.isfinite(h[i]) else h[i]),
        "v_fract_f16 v30, v11": lambda i: bits16(fract_ref(h[i], below16)),
        "v_fract_f32 v30, v10": lambda i: fract32_ref(x32[i]),
        "v_fract_f32_e64 v30, -v10": lambda i: fract32_ref(-x32[i]),
    }
    ops64 = {
        "v_frexp_mant_f64 v[30:31], v[12:13]": lambda i: frexp_ref(d[i])[0],
        "v_ldexp_f64 v[30:31], v[12:13], v14": lambda i: ldexp_ref(d[i], e[i]),
        "v_fract_f64 v[30:31], v[12:13]": lambda i: fract_ref(d[i], float(np.array(0x3FEFFFFFFFFFFFFF, np.uint64).view(np.float64))),
        "v_fract_f64_e64 v[30:31], -v[12:13]": lambda i: fract_ref(-d[i], float(np.array(0x3FEFFFFFFFFFFFFF, np.uint64).view(np.float64))),
    }
    body = [op.replace("v30", f"v{30 + k}") for k, op in enumerate(ops)]
    base = 30 + len(ops)
    body += [op.replace("v[30:31]", f"v[{base + 2 * k}:{base + 2 * k + 1}]") for k, op in enumerate(ops64)]
    with np.errstate(over="ignore"):
        got = run_block("\n".join(body), INPUTS, len(ops) + 2 * len(ops64), arch="gfx942")
    for k, (op, ref) in enumerate(ops.items()):
        np.testing.assert_array_equal(got[k], lanes(ref), err_msg=op)
    for k, (op, ref) in enumerate(ops64.items()):
        pair = got[len(ops) + 2 * k].astype(np.uint64) | got[len(ops) + 2 * k + 1].astype(np.uint64) << 32
        want = np.array([ref(i) for i in range(64)], np.float64)
        np.testing.assert_array_equal(pair.view(np.float64), want, err_msg=op)     # NaNs compare equal here
        assert not np.isnan(want).all()


def mad16(a, b, c):
    p = np.float16(np.float16(a) * np.float16(b))
    return np.float16(p + np.float16(c))


def test_literal_and_16bit_multiply_adds():
    a, b = NORMAL32
    k = np.float32(10.0)
    with np.errstate(invalid="ignore", over="ignore"):
        legacy = np.where((F32 == 0) | (OTHER32 == 0), np.float32(0), F32 * OTHER32) + b   # 0 * inf/NaN is 0
    ops90a = {"v_madak_f32 v30, v15, v16, 0x41200000": np.float32(a * b) + k,
              "v_madmk_f32 v31, v15, 0x41200000, v16": np.float32(a * k) + b,
              "v_mad_legacy_f32 v32, v10, v20, v16": legacy}
    got = run_block("\n".join(ops90a), INPUTS, 3, arch="gfx90a")
    for j, want in enumerate(ops90a.values()):
        np.testing.assert_array_equal(got[j], np.asarray(want, np.float32).view(np.uint32))

    x, y, z = ([f16(int(v)) for v in p] for p in PAIRS)
    hi = [[int(v) >> 16 for v in p] for p in PACKED]
    ops = {
        "v_fmaak_f32 v30, v15, v16, 0x41200000": lanes(lambda i: b32(float(a[i]) * float(b[i]) + 10.0)),
        "v_fmamk_f32 v30, v15, 0x41200000, v16": lanes(lambda i: b32(float(a[i]) * 10.0 + float(b[i]))),
        "v_mov_b32 v30, v19\nv_mac_f16 v30, v17, v18":
            lanes(lambda i: (int(PACKED[2][i]) & 0xFFFF0000) | bits16(float(mad16(x[i], y[i], z[i])))),
        "v_mov_b32 v30, v19\nv_madak_f16 v30, v17, v18, 0x4500":
            lanes(lambda i: (int(PACKED[2][i]) & 0xFFFF0000) | bits16(float(mad16(x[i], y[i], 5.0)))),
        "v_mov_b32 v30, v19\nv_madmk_f16 v30, v17, 0x4500, v18":
            lanes(lambda i: (int(PACKED[2][i]) & 0xFFFF0000) | bits16(float(mad16(x[i], 5.0, y[i])))),
        "v_mov_b32 v30, v19\nv_pk_fmac_f16 v30, v17, v18":
            lanes(lambda i: bits16(x[i] * y[i] + z[i])
                  | bits16(f16(hi[0][i]) * f16(hi[1][i]) + f16(hi[2][i])) << 16),
    }
    body = "\n".join(op.replace("v30", f"v{30 + j}") for j, op in enumerate(ops))
    got = run_block(body, INPUTS, len(ops), arch="gfx942")
    for j, (op, want) in enumerate(ops.items()):
        np.testing.assert_array_equal(got[j], want, err_msg=op)


def _two_over_pi(n):
    """floor(2/pi * 2**n), pi from Euler's arctan(1/2) + arctan(1/3) (a formula the emulator does not use)."""
    def atan_inv(x, bits):
        total, power, k = 0, (1 << bits) // x, 0
        while power:
            total += (-1) ** k * (power // (2 * k + 1))
            power //= x * x
            k += 1
        return total
    g = n + 256
    pi = 4 * (atan_inv(2, g) + atan_inv(3, g))
    return (1 << (g + n + 1)) // pi


def test_trig_preop():
    from fractions import Fraction
    table = _two_over_pi(1184)
    assert table >> 1152 == 0xA2F9836E                   # LLVM's TwoByPi[0]
    x = np.concatenate([[1.0, -3.0, 1e300, 2.0 ** 1000, 1e-300, 0.0, np.inf, np.nan, 2.0 ** 900, 5e-324],
                        RNG.standard_normal(54) * 10.0 ** RNG.integers(-300, 300, 54)])
    seg = RNG.integers(0, 64, 64).astype(np.uint32)
    seg[:10] = [0, 1, 2, 31, 5, 20, 0, 0, 3, 21]
    w = x.view(np.uint64)
    words = np.stack([(w & 0xFFFFFFFF).astype(np.uint32), (w >> 32).astype(np.uint32), seg])
    got = run_block("v_trig_preop_f64 v[30:31], v[10:11], v12", words, 2, arch="gfx942")
    got = (got[0].astype(np.uint64) | got[1].astype(np.uint64) << 32).view(np.float64)
    for lane in range(64):
        if math.isnan(x[lane]):
            assert math.isnan(got[lane])
            continue
        exponent = int(w[lane] >> 52) & 0x7FF
        shift = (int(seg[lane]) & 31) * 53 + max(exponent - 1077, 0)
        chunk = (table >> (1184 - 53 - shift)) & ((1 << 53) - 1) if shift < 1120 else 0
        scale = -53 - shift + (128 if exponent >= 1968 else 0)
        want = float(Fraction(chunk) * Fraction(2) ** scale)
        assert got[lane] == want, (lane, x[lane], int(seg[lane]))
