"""Instruction fields LLVM prints symbolically, back to their encoded values: the ``ds_swizzle_b32``
offset (``offset:swizzle(...)``) and the MTBUF ``format:[BUF_DATA_FORMAT_*,BUF_NUM_FORMAT_*]`` (gfx9).

Encodings from LLVM's SIDefines.h (``AMDGPU::Swizzle``, ``AMDGPU::MTBUFFormat``) and AMDGPUAsmParser:
QUAD_PERM = 0x8000 | lane0 | lane1 << 2 | lane2 << 4 | lane3 << 6; the bit-mask mode is
and_mask | or_mask << 5 | xor_mask << 10 (bit 15 clear), which SWAP/REVERSE/BROADCAST and the
BITMASK_PERM string (bit 4 first; 0: clear, 1: set, p: preserve, i: invert) are spellings of;
ROTATE = 0xC000 | dir << 10 | size << 5; FFT = 0xE000 | mask. gfx9 format = dfmt | nfmt << 4, an
absent part taking its default (dfmt 1, nfmt 0). tests/test_symbolic_fields.py checks every
spelling against llvm-mc/llvm-objdump.
"""

from __future__ import annotations

DATA_FORMATS = ("INVALID", "8", "16", "8_8", "32", "16_16", "10_11_11", "11_11_10", "10_10_10_2", "2_10_10_10",
                "8_8_8_8", "32_32", "16_16_16_16", "32_32_32", "32_32_32_32", "RESERVED_15")
NUM_FORMATS = ("UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "RESERVED_6", "FLOAT")
DEFAULT_DFMT, DEFAULT_NFMT = 1, 0


def _bitmask(and_mask: int, or_mask: int, xor_mask: int) -> int:
    return and_mask | or_mask << 5 | xor_mask << 10


def swizzle_offset(text: str) -> int:
    """``swizzle(QUAD_PERM,1,0,3,2)`` ... -> the 16-bit offset."""
    if not (text.startswith("swizzle(") and text.endswith(")")):
        raise ValueError(f"not a swizzle: {text!r}")
    mode, *args = [a.strip() for a in text[8:-1].split(",")]
    if mode == "QUAD_PERM":
        return 0x8000 | sum((int(a, 0) & 3) << (2 * i) for i, a in enumerate(args))
    if mode == "BITMASK_PERM":
        pattern = args[0].strip('"')
        and_m = or_m = xor_m = 0
        for i, ch in enumerate(pattern):
            bit = 1 << (len(pattern) - 1 - i)
            if ch in "pi":
                and_m |= bit
            if ch == "1":
                or_m |= bit
            if ch == "i":
                xor_m |= bit
        return _bitmask(and_m, or_m, xor_m)
    n = [int(a, 0) for a in args]
    if mode == "SWAP":
        return _bitmask(0x1F, 0, n[0])
    if mode == "REVERSE":
        return _bitmask(0x1F, 0, n[0] - 1)
    if mode == "BROADCAST":
        return _bitmask(0x1F & ~(n[0] - 1), n[1], 0)
    if mode == "ROTATE":
        return 0xC000 | n[0] << 10 | n[1] << 5
    if mode == "FFT":
        return 0xE000 | n[0]
    raise ValueError(f"unknown swizzle mode in {text!r}")


def buffer_format(text: str) -> int:
    """``[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_FLOAT]`` -> dfmt | nfmt << 4."""
    dfmt, nfmt = DEFAULT_DFMT, DEFAULT_NFMT
    for part in (p.strip() for p in text.strip("[]").split(",")):
        if part.startswith("BUF_DATA_FORMAT_"):
            dfmt = DATA_FORMATS.index(part[16:])
        elif part.startswith("BUF_NUM_FORMAT_"):
            nfmt = NUM_FORMATS.index(part[15:])
        else:
            raise ValueError(f"unknown buffer format {part!r}")
    return dfmt | nfmt << 4
