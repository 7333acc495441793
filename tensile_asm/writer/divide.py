"""Division of a VGPR by a compile-time constant: shifts for powers of two, otherwise a magic
multiply-high whose exactness is checked here over every dividend the kernel can produce.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tensile_asm.isa.module import Module
from tensile_asm.writer.context import KernelContext


@lru_cache(maxsize=None)
def magic_for(divisor: int, max_dividend: int) -> tuple[int, int]:
    """(magic, shift) with floor(x * magic / 2**32) >> shift == x // divisor for 0 <= x <= max_dividend."""
    x = np.arange(max_dividend + 1, dtype=np.uint64)
    expected = x // np.uint64(divisor)
    for shift in range(32):
        magic = -(-(1 << (32 + shift)) // divisor)
        if magic >= 1 << 32:
            break
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
