"""fp16/fp64 transcendental approximations (vector/transcendental.py): operand plumbing, modifiers, special values and
the zeroed high half, against per-lane Python math references (the emulator's values are the real
functions rounded once, which is what is checked; hardware may differ in the last bit)."""

import math

import numpy as np
import pytest

from conftest import have_llvm
from valu_kernel import run_block

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

RNG = np.random.default_rng(9)
SPECIAL16 = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x3C00, 0xBC00, 0x0001, 0x3800]
H = np.where(RNG.random(64) < 0.3, RNG.choice(SPECIAL16, 64),
             np.abs(RNG.standard_normal(64) * 4).astype(np.float16).view(np.uint16)).astype(np.uint32)
JUNK = RNG.integers(0, 1 << 16, 64, dtype=np.uint32) << 16
D = np.where(RNG.random(64) < 0.3, RNG.choice([0.0, -0.0, np.inf, -np.inf, np.nan, -4.0, 5e-324], 64),
             np.abs(RNG.standard_normal(64)) * 10.0 ** RNG.integers(-30, 30, 64))
D[:3] = [1e308, -3e307, 2.0 ** 1022]                    # reciprocals in the denormal range: flushed
W = D.view(np.uint64)
INPUTS = np.stack([H | JUNK, JUNK, (W & 0xFFFFFFFF).astype(np.uint32), (W >> 32).astype(np.uint32)]).astype(np.uint32)


def f16(bits):
    return float(np.array(bits & 0xFFFF, np.uint16).view(np.float16))


def bits16(x):
    with np.errstate(over="ignore"):
        b = int(np.array(x, np.float64).astype(np.float16).view(np.uint16))
    return b | 0x200 if math.isnan(x) else b


def ieee(fn):
    """fn on a float with IEEE results for the special cases math raises on."""
    def g(x):
        try:
            return fn(x)
        except (ValueError, ZeroDivisionError, OverflowError):
            if fn is RCP:
                return math.copysign(math.inf, x)
            if x == 0 and fn in (LOG2, RSQ):
                return -math.inf if fn is LOG2 else math.copysign(math.inf, x)
            if x == math.inf and fn is EXP2:
                return math.inf
            return math.nan
    return g


def RCP(x):
    r = 1.0 / x
    return math.copysign(0.0, r) if abs(r) < 2.0 ** -1022 else r        # denormal results flushed


def RSQ(x):
    return 1.0 / math.sqrt(x) if x != math.inf else 0.0


def LOG2(x):
    return math.log2(x)


def EXP2(x):
    return 2.0 ** x


F16_CASES = {
    "v_rcp_f16 v30, v10": ieee(RCP), "v_rsq_f16 v30, v10": ieee(RSQ),
    "v_sqrt_f16 v30, v10": ieee(math.sqrt), "v_exp_f16 v30, v10": ieee(EXP2),
    "v_log_f16 v30, v10": ieee(LOG2),
    "v_sin_f16 v30, v10": ieee(lambda x: math.sin(x * 2 * math.pi)),
    "v_cos_f16 v30, v10": ieee(lambda x: math.cos(x * 2 * math.pi)),
    "v_sqrt_f16_e64 v30, -v10 clamp": None,
}


def test_f16():
    ops = list(F16_CASES)
    got = run_block("\n".join(op.replace("v30", f"v{30 + k}") for k, op in enumerate(ops)), INPUTS, len(ops))
    h = [f16(int(v)) for v in H]
    for k, op in enumerate(ops):
        fn = F16_CASES[op]
        if fn is None:
            want = [bits16(-x) if math.isnan(x)                      # a NaN input passes (negated)
                    else bits16(math.nan) if x > 0 else bits16(min(math.sqrt(-x), 1.0)) for x in h]
        else:
            want = [bits16(fn(x)) for x in h]
        np.testing.assert_array_equal(got[k], np.array(want, np.uint32), err_msg=op)     # high half 0


def test_f64():
    ops = {"v_rcp_f64 v[30:31], v[12:13]": ieee(RCP), "v_sqrt_f64 v[32:33], v[12:13]": ieee(math.sqrt),
           "v_rsq_f64 v[34:35], v[12:13]": ieee(RSQ), "v_rcp_f64_e64 v[36:37], -|v[12:13]|": None}
    got = run_block("\n".join(ops), INPUTS, 8)
    pairs = (got[0::2].astype(np.uint64) | got[1::2].astype(np.uint64) << 32).view(np.float64)
    for k, (op, fn) in enumerate(ops.items()):
        want = [fn(float(x)) if fn else ieee(RCP)(-abs(float(x))) for x in D]
        np.testing.assert_array_equal(pairs[k], np.array(want), err_msg=op)
