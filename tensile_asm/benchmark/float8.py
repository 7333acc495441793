"""gfx942's 8-bit floats for the reference: every code's exact value, and rounding float values to codes.

numpy has no fp8, so the data live as uint8 codes. gfx942 reads them as the FNUZ formats (the CDNA3 ISA's
"FP8" E4M3 with exponent bias 8 and "BF8" E5M2 with bias 16): no infinities, no negative zero, and 0x80
the only NaN. ``decode`` gives each code's value exactly (float64); ``encode`` rounds to the nearest code,
ties to the even one, saturating at the largest finite value (240 for fp8, 57344 for bf8: what Tensile's
kernels clip to before converting, Fp32toFp8SWClip), NaN to 0x80 and values rounding to zero to 0x00.

The hybrid types name A's format then B's: F8B8 is fp8 A with bf8 B, B8F8 the reverse.
"""

from __future__ import annotations

import numpy as np

# (exponent bits, mantissa bits, exponent bias) of the FNUZ formats
FORMATS = {"F8": (4, 3, 8), "B8": (5, 2, 16)}
HYBRIDS = {"F8B8": ("F8", "B8"), "B8F8": ("B8", "F8")}
NAN_CODE = 0x80
# unit roundoff (half the spacing relative to the value) of each format's normal numbers
ROUNDOFF = {"F8": 2.0 ** -4, "B8": 2.0 ** -3}


def operand_types(data_type: str) -> tuple[str, str]:
    """(A's format, B's format) of an fp8 data type."""
    return HYBRIDS.get(data_type, (data_type, data_type))


def _table(fmt: str) -> np.ndarray:
    ebits, mbits, bias = FORMATS[fmt]
    values = np.empty(256, dtype=np.float64)
    for code in range(256):
        e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
        mag = (m * 2.0 ** -mbits) * 2.0 ** (1 - bias) if e == 0 else (1 + m * 2.0 ** -mbits) * 2.0 ** (e - bias)
        values[code] = -mag if code & 0x80 else mag
    values[NAN_CODE] = np.nan
    return values


TABLES = {fmt: _table(fmt) for fmt in FORMATS}


def decode(codes: np.ndarray, fmt: str) -> np.ndarray:
    """float64 values of uint8 codes of format ``fmt`` (F8 or B8)."""
    return TABLES[fmt][np.asarray(codes).astype(np.uint8)]


def encode(values: np.ndarray, fmt: str) -> np.ndarray:
    """uint8 codes of ``values``: round to nearest, ties to even, saturating at the largest finite value."""
    table = TABLES[fmt]
    positive = table[:128]                       # codes 0..127, value increasing with the code
    x = np.asarray(values, dtype=np.float64)
    mag = np.minimum(np.abs(np.nan_to_num(x, nan=0.0)), positive[-1])
    i = np.clip(np.searchsorted(positive, mag), 1, 127)
    below, above = positive[i - 1], positive[i]
    up = (above - mag < mag - below) | ((above - mag == mag - below) & (i % 2 == 0))
    code = np.where(up, i, i - 1)
    code = np.where((x < 0) & (code != 0), code | 0x80, code)
    return np.where(np.isnan(x), NAN_CODE, code).astype(np.uint8)
