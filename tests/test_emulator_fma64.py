"""fp64 FMA rounds once: fma64.fma_f64 against exact rational arithmetic written here, and
v_fma_f64 / v_fmac_f64 in a kernel, on data where rounding the product first differs."""

from fractions import Fraction

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.emulator.vector.fma_f64 import fma_f64

from conftest import have_llvm
from emulator_asm import build


def reference(a, b, c):
    out = np.empty(len(a))
    for i, (x, y, z) in enumerate(zip(a.tolist(), b.tolist(), c.tolist())):
        if not all(np.isfinite(v) for v in (x, y, z)):
            with np.errstate(all="ignore"):
                out[i] = np.float64(x) * np.float64(y) + np.float64(z)
            continue
        q = Fraction(x) * Fraction(y) + Fraction(z)
        if q == 0:
            both_neg_zero = (x == 0 or y == 0) and z == 0 and (np.signbit(x) != np.signbit(y)) and np.signbit(z)
            out[i] = -0.0 if both_neg_zero else 0.0
        elif abs(q) >= Fraction(2) ** 1024 - Fraction(2) ** 970:        # rounds past the largest double
            out[i] = float("inf") if q > 0 else float("-inf")
        else:
            out[i] = float(q)                                           # Fraction -> float rounds to nearest
    return out


def hard_cases(rng, n):
    a, b, c = rng.standard_normal((3, n)) * np.exp2(rng.integers(-60, 60, (3, n)))
    cancel = rng.random(n) < 0.5                  # c close to -a*b: the product's low bits decide
    c[cancel] = -(a[cancel] * b[cancel]) * (1 + rng.standard_normal(cancel.sum()) * np.exp2(-rng.integers(20, 60, cancel.sum())))
    wide = rng.random(n) < 0.05
    a[wide] *= np.exp2(rng.integers(-1000, 960, wide.sum()))
    tiny = rng.random(n) < 0.03                   # products and results near the subnormal range
    a[tiny], b[tiny] = a[tiny] * 2.0 ** -500, b[tiny] * 2.0 ** -540
    c[tiny] *= 2.0 ** -1040
    special = rng.random(n) < 0.02
    b[special] = rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan], special.sum())
    return a, b, c


def same(x, y):
    return (x.view(np.uint64) == y.view(np.uint64)) | (np.isnan(x) & np.isnan(y))


def test_fma_f64_is_correctly_rounded():
    a, b, c = hard_cases(np.random.default_rng(21), 6000)
    a[:3], b[:3], c[:3] = [-0.0, 5.0, -0.0], [5.0, -0.0, -0.0], [-0.0, -0.0, -0.0]  # signed zero sums
    got, want = fma_f64(a, b, c), reference(a, b, c)
    assert same(got, want).all(), np.nonzero(~same(got, want))[0][:10]
    with np.errstate(all="ignore"):
        naive = a * b + c
    assert (~same(naive, want)).sum() > 1000           # the data exercises the double rounding
    assert got[0] == 0 and np.signbit(got[0]) and np.signbit(got[1]) and not np.signbit(got[2])


@pytest.mark.skipif(not have_llvm(), reason="needs the LLVM AMDGPU toolchain")
@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_v_fma_f64_and_v_fmac_f64_round_once(arch):
    body = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32 v1, 3, v0
s_waitcnt lgkmcnt(0)
global_load_dwordx2 v[2:3], v1, s[4:5]
global_load_dwordx2 v[4:5], v1, s[4:5] offset:512
global_load_dwordx2 v[6:7], v1, s[4:5] offset:1024
s_waitcnt vmcnt(0)
v_fma_f64 v[8:9], v[2:3], v[4:5], v[6:7]
v_fmac_f64 v[6:7], v[4:5], v[2:3]
v_fma_f64 v[10:11], -v[2:3], v[4:5], v[8:9]
global_store_dwordx2 v1, v[8:9], s[6:7]
global_store_dwordx2 v1, v[6:7], s[6:7] offset:512
global_store_dwordx2 v1, v[10:11], s[6:7] offset:1024
s_endpgm
"""
    a, b, c = hard_cases(np.random.default_rng(22), 64)
    out = np.full((3, 64), np.nan)
    Emulator.load(build(body, args=(("in", 8), ("out", 8)), vgprs=12, arch=arch)).launch(
        "k", grid=1, block=64, args=[np.stack([a, b, c]), out])
    first = reference(a, b, c)
    assert same(out[0], first).all() and same(out[1], reference(b, a, c)).all()
    assert same(out[2], reference(-a, b, first)).all()


def test_zero_factor_lanes_match_the_exact_fma():
    """Lanes with a zero factor take numpy's a*b + c (exact there): same value and zero sign as the exact fma."""
    import warnings

    from tensile_asm.emulator.vector.fma_f64 import _exact, fma_f64
    rng = np.random.default_rng(0)
    vals = np.array([0.0, -0.0, 1.5, -2.25, 1e-300, -1e-310, 3e300, np.inf, -np.inf, np.nan, 5e-324])
    a, b, c = (rng.choice(vals, 3000) for _ in range(3))
    with warnings.catch_warnings():     # inf - inf, inf * 0: the NaNs are what is compared
        warnings.simplefilter("ignore")
        got = fma_f64(a, b, c)
        want = np.array([_exact(x, y, z) for x, y, z in zip(a, b, c)])
    same = (np.isnan(got) & np.isnan(want)) | ((got == want) & (np.signbit(got) == np.signbit(want)))
    assert same.all()
