"""fp64 fused multiply-add with a single rounding (``v_fma_f64``, ``v_fmac_f64``), on numpy lanes.

numpy has no fused fp64 FMA and no wider float to compute in, so the exact value is carried in pieces
(Boldo & Melquiond, "Emulation of a FMA and correctly-rounded sums: proved algorithms using rounding
to odd", IEEE Trans. Computers 57(4), 2008, algorithm 5.4):

    uh + ul = a*b exactly          (Dekker's product with Veltkamp splitting)
    th + tl = c + uh exactly       (Knuth's TwoSum)
    v = RO(tl + ul)                (round to odd: RN, then step to the odd neighbour if inexact)
    fma = RN(th + v)

which is the correctly rounded a*b+c when nothing overflows or underflows. Lanes outside that range
(a non-finite input or result, a factor beyond 2**995 where the splitting overflows, a product or
result below 2**-960 where the pieces lose bits, and zero products or results, whose sign the pieces
do not carry) are redone exactly with Python integers; lanes with a zero factor (and finite inputs) are
a*b + c in fp64, which is exact there.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

F64, U64 = np.float64, np.uint64
_SPLIT = F64(2.0 ** 27 + 1)
_BIG, _SMALL = F64(2.0 ** 995), F64(2.0 ** -960)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def _two_product(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def fma_f64(a, b, c):
    """a*b+c rounded once to fp64 (arrays broadcast; scalars give a 0-d result)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, F64), np.asarray(b, F64), np.asarray(c, F64))
    with np.errstate(all="ignore"):
        uh, ul = _two_product(a, b)
        th, tl = _two_sum(c, uh)
        s, e = _two_sum(tl, ul)
        even = (np.asarray(s).view(U64) & U64(1)) == 0
        odd = np.where((e != 0) & even, np.nextafter(s, np.copysign(F64(np.inf), e)), s)
        r = np.asarray(th + odd, F64)
        risky = (~np.isfinite(r) | ~np.isfinite(uh) | ~np.isfinite(c) | (np.abs(a) > _BIG) | (np.abs(b) > _BIG)
                 | (np.abs(uh) < _SMALL) | (np.abs(r) < _SMALL))     # zeros too: their signs
        # a zero factor (the rest finite): the product is an exact +-0, so a*b + c in fp64 is the fma, signed
        # zeros included (the common case of zero accumulators and zeroed out-of-range inputs)
        zero = ((a == 0) | (b == 0)) & np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        if zero.any():
            r = np.where(zero, a * b + c, r)
            risky = risky & ~zero
    if risky.any():
        r = r.copy()
        for i in zip(*np.nonzero(risky)) if r.ndim else [()]:
            r[i] = _exact(float(a[i]), float(b[i]), float(c[i]))
    return r


def _exact(a: float, b: float, c: float) -> float:
    """IEEE fma(a, b, c), round to nearest even, in exact arithmetic (one lane)."""
    if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
        return float(F64(a) * F64(b) + F64(c))            # inf/NaN rules need no extra precision
    x = Fraction(a) * Fraction(b) + Fraction(c)
    if x == 0:
        # an exact zero is +0 in round-to-nearest, unless both addends are -0
        if (a == 0 or b == 0) and c == 0:
            return -0.0 if (np.signbit(a) != np.signbit(b)) and np.signbit(c) else 0.0
        return 0.0
    try:
        return x.numerator / x.denominator                # int true division rounds correctly
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


__all__ = ["fma_f64"]
