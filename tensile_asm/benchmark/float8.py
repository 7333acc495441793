"""The 8-bit floats for the reference: every code's exact value, and rounding float values to codes.

numpy has no fp8, so the data live as uint8 codes. gfx942 reads them as the FNUZ formats (the CDNA3 ISA's
"FP8" E4M3 with exponent bias 8 and "BF8" E5M2 with bias 16): no infinities, no negative zero, and 0x80
the only NaN. gfx950 reads them as the OCP formats (``ocp=True``; the CDNA4 ISA, OCP 8-bit floating point
spec): E4M3FN with bias 7 (no infinities, S.1111.111 the NaNs, largest 448) and E5M2 with bias 15 (IEEE-like:
infinities, NaNs, largest 57344); which one an architecture has is its ``float8`` entry in ``isa/<gfx>.yaml``.
``decode`` gives each code's value exactly (float64); ``encode`` rounds to the nearest code, ties to the even
one, saturating at the largest finite value (FNUZ: 240 for fp8, 57344 for bf8: what Tensile's kernels clip to
before converting, Fp32toFp8SWClip; OCP: 448 and 57344), NaN to the NaN code (``nan_code``: FNUZ 0x80, OCP
0xFF) and values rounding to zero to 0x00.

The hybrid types name A's format then B's: F8B8 is fp8 A with bf8 B, B8F8 the reverse.
"""

from __future__ import annotations

import numpy as np

# (exponent bits, mantissa bits, exponent bias) of the FNUZ formats, and of the OCP ones
FORMATS = {"F8": (4, 3, 8), "B8": (5, 2, 16)}
OCP_FORMATS = {"F8": (4, 3, 7), "B8": (5, 2, 15)}
HYBRIDS = {"F8B8": ("F8", "B8"), "B8F8": ("B8", "F8")}
NAN_CODE = 0x80
OCP_NAN_CODE = 0xFF       # a NaN in both OCP formats (E4M3FN S.1111.111, E5M2 S.11111.11)
# unit roundoff (half the spacing relative to the value) of each format's normal numbers
ROUNDOFF = {"F8": 2.0 ** -4, "B8": 2.0 ** -3}


def operand_types(data_type: str) -> tuple[str, str]:
    """(A's format, B's format) of an fp8 data type."""
    return HYBRIDS.get(data_type, (data_type, data_type))


def nan_code(ocp: bool = False) -> int:
    return OCP_NAN_CODE if ocp else NAN_CODE


def _table(fmt: str, ocp: bool = False) -> np.ndarray:
    ebits, mbits, bias = (OCP_FORMATS if ocp else FORMATS)[fmt]
    values = np.empty(256, dtype=np.float64)
    for code in range(256):
        e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
        mag = (m * 2.0 ** -mbits) * 2.0 ** (1 - bias) if e == 0 else (1 + m * 2.0 ** -mbits) * 2.0 ** (e - bias)
        if ocp and fmt == "F8" and e == 15 and m == 7:
            mag = np.nan                                   # E4M3FN: S.1111.111 only
        elif ocp and fmt == "B8" and e == 31:
            mag = np.inf if m == 0 else np.nan             # E5M2: infinities and NaNs, as IEEE
        values[code] = -mag if code & 0x80 else mag
    if not ocp:
        values[NAN_CODE] = np.nan
    return values


TABLES = {fmt: _table(fmt) for fmt in FORMATS}
OCP_TABLES = {fmt: _table(fmt, True) for fmt in OCP_FORMATS}


def decode(codes: np.ndarray, fmt: str, ocp: bool = False) -> np.ndarray:
    """float64 values of uint8 codes of format ``fmt`` (F8 or B8; OCP's with ``ocp``)."""
    return (OCP_TABLES if ocp else TABLES)[fmt][np.asarray(codes).astype(np.uint8)]


def encode(values: np.ndarray, fmt: str, ocp: bool = False) -> np.ndarray:
    """uint8 codes of ``values``: round to nearest, ties to even, saturating at the largest finite value."""
    table = (OCP_TABLES if ocp else TABLES)[fmt]
    positive = table[:128]                       # codes 0..127, value increasing with the code
    positive = positive[np.isfinite(positive)]   # (OCP: up to the largest finite one)
    x = np.asarray(values, dtype=np.float64)
    mag = np.minimum(np.abs(np.nan_to_num(x, nan=0.0)), positive[-1])
    i = np.clip(np.searchsorted(positive, mag), 1, len(positive) - 1)
    below, above = positive[i - 1], positive[i]
    up = (above - mag < mag - below) | ((above - mag == mag - below) & (i % 2 == 0))
    code = np.where(up, i, i - 1)
    # the sign bit (FNUZ has no negative zero: 0x80 is its NaN; OCP's -0 keeps it)
    code = np.where(np.signbit(x) & ((code != 0) | ocp), code | 0x80, code)
    return np.where(np.isnan(x), nan_code(ocp), code).astype(np.uint8)
