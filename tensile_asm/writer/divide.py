"""Division by a compile-time constant: shifts for powers of two, otherwise a magic multiply-high whose
exactness over every dividend the kernel can produce is proved here (``magic_for``), for VGPRs
(``divmod_const``) and SGPRs (``scalar_divmod``, work-group ids).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tensile_asm.isa.module import Module
from tensile_asm.writer.context import KernelContext

# Largest dividend the exhaustive check walks when the bound below does not prove a candidate.
_EXHAUSTIVE_LIMIT = 1 << 20

# Work-group ids and the serials WorkGroupMapping forms from them stay below 2**31 (the host refuses
# larger grids: gemm.arguments.workgroup_mapping_values); every divisor has a proved magic up to there.
WORKGROUP_MAX = (1 << 31) - 1


def _proved(divisor: int, magic: int, bits: int, max_dividend: int) -> bool:
    """floor(x * magic / 2**bits) == x // divisor for 0 <= x <= max_dividend, where magic = ceil(2**bits / d).

    With e = magic*d - 2**bits (0 <= e < d) and x = q*d + r: x*magic / 2**bits = q + r/d + x*e/(d * 2**bits),
    whose floor is q when r/d + x*e/(d * 2**bits) < 1, which x*e < 2**bits ensures (r <= d - 1)."""
    error = magic * divisor - (1 << bits)
    return 0 <= error < divisor and max_dividend * error < 1 << bits


@lru_cache(maxsize=None)
def magic_for(divisor: int, max_dividend: int) -> tuple[int, int]:
    """(magic, shift) with floor(x * magic / 2**32) >> shift == x // divisor for 0 <= x <= max_dividend:
    the smallest shift whose magic ceil(2**(32+shift) / divisor) fits 32 bits and is proved exact over the
    range (``_proved``), or, for ranges up to 2**20, checked exact on every dividend. Any divisor has one
    for dividends below 2**31 (shift floor(log2 divisor) gives e < d <= 2**(shift+1), so x*e < 2**(32+shift))."""
    x = None
    for shift in range(32):
        bits = 32 + shift
        magic = -(-(1 << bits) // divisor)
        if magic >= 1 << 32:
            break
        if _proved(divisor, magic, bits, max_dividend):
            return magic, shift
        if max_dividend <= _EXHAUSTIVE_LIMIT:
            if x is None:
                x = np.arange(max_dividend + 1, dtype=np.uint64)
                expected = x // np.uint64(divisor)
            got = ((x * np.uint64(magic)) >> np.uint64(32)) >> np.uint64(shift)
            if np.array_equal(got, expected):
                return magic, shift
    raise ValueError(f"no 32-bit magic number divides by {divisor} up to {max_dividend}")


def divmod_const(ctx: KernelContext, quotient, remainder, dividend, divisor: int, max_dividend: int) -> Module:
    """quotient = dividend // divisor, remainder = dividend % divisor (either may be None)."""
    m = Module(f"divmod by {divisor}")
    if divisor & (divisor - 1) == 0:
        shift = divisor.bit_length() - 1
        if quotient is not None:
            m.add(ctx.inst("v_lshrrev_b32", quotient, shift, dividend))
        if remainder is not None:
            m.add(ctx.inst("v_and_b32", remainder, divisor - 1, dividend))
        return m
    magic, shift = magic_for(divisor, max_dividend)
    q = quotient if quotient is not None else ctx.vgpr("div_quotient")
    magic_reg = ctx.sgpr("div_magic")
    m.add(ctx.inst("s_mov_b32", magic_reg, magic),
          ctx.inst("v_mul_hi_u32", q, dividend, magic_reg),
          ctx.inst("v_lshrrev_b32", q, shift, q) if shift else None)
    if remainder is not None:
        product = ctx.vgpr("div_product")
        m.add(ctx.inst("v_mul_u32_u24", product, divisor, q),
              ctx.inst("v_sub_u32", remainder, dividend, product))
    return m


def scalar_divmod(ctx: KernelContext, quotient, remainder, dividend, divisor: int,
                  max_dividend: int = (1 << 24) - 1) -> Module:
    """Scalar quotient = dividend // divisor and remainder = dividend % divisor (either may be None) by a
    constant, exact for dividends up to ``max_dividend``. The quotient register may be the dividend's
    only when no remainder is asked for."""
    m = Module(f"scalar divmod by {divisor}")
    if divisor == 1:
        return m.add(ctx.inst("s_mov_b32", quotient, dividend) if quotient is not None else None,
                     ctx.inst("s_mov_b32", remainder, 0) if remainder is not None else None)
    if divisor & (divisor - 1) == 0:
        shift = divisor.bit_length() - 1
        return m.add(ctx.inst("s_and_b32", remainder, dividend, divisor - 1) if remainder is not None else None,
                     ctx.inst("s_lshr_b32", quotient, dividend, shift) if quotient is not None else None)
    magic, shift = magic_for(divisor, max_dividend)
    q = quotient if quotient is not None else ctx.sgpr("sdiv_quotient")
    m.add(ctx.inst("s_mul_hi_u32", q, dividend, magic),
          ctx.inst("s_lshr_b32", q, q, shift) if shift else None)
    if remainder is not None:
        m.add(ctx.inst("s_mul_i32", remainder, q, divisor),
              ctx.inst("s_sub_u32", remainder, dividend, remainder))
    return m
