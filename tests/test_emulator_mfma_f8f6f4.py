"""gfx950 v_mfma_f32_32x32x64_f8f6f4 / v_mfma_f32_16x16x128_f8f6f4 with FP8/BF8/FP6/BF6/FP4 operands on random
data. Operands are placed in lanes the way AMD's CDNA4 matrix-core examples load them (32x32x64 FP8 and
FP4); where A and B have one width any k order gives the same D, so there the test packs k in an order of
its own (reversed within each lane) to show the emulator does not depend on it."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

BITS = {"fp8": 8, "bf8": 8, "fp6": 6, "bf6": 6, "fp4": 4}
CODE = {"fp8": 0, "bf8": 1, "fp6": 2, "bf6": 3, "fp4": 4}
EM = {"fp8": (4, 3), "bf8": (5, 2), "fp6": (2, 3), "bf6": (3, 2), "fp4": (2, 1)}     # exponent, mantissa bits


def kernel(m, fa, fb):
    na, nb, nd = BITS[fa], BITS[fb], m * m // 64
    lines = ["s_load_dwordx4 s[4:7], s[0:1], 0x0", "v_lshlrev_b32 v1, 7, v0", "v_lshlrev_b32 v36, 6, v0",
             "s_waitcnt lgkmcnt(0)"]                        # in: 32 words per lane (A 0-7, B 8-15, C 16-31)
    slots = [(2 + r, r) for r in range(na)] + [(10 + r, 8 + r) for r in range(nb)] + [(20 + r, 16 + r) for r in range(nd)]
    lines += [f"global_load_dword v{reg}, v1, s[4:5] offset:{4 * slot}" for reg, slot in slots]
    lines += ["s_waitcnt vmcnt(0)", "s_nop 2",
              f"v_mfma_f32_{m}x{m}x{2048 // m}_f8f6f4 v[20:{19 + nd}], v[2:{1 + na}], v[10:{9 + nb}], v[20:{19 + nd}] "
              f"cbsz:{CODE[fa]} blgp:{CODE[fb]}", "s_nop 7", "s_nop 7", "s_nop 7"]
    lines += [f"global_store_dword v36, v{20 + r}, s[6:7] offset:{4 * r}" for r in range(nd)]
    return "\n".join(lines + ["s_endpgm"])


def decode(code, fmt):
    ebits, mbits = EM[fmt]
    bias = 7 if fmt == "fp8" else 15 if fmt == "bf8" else (1 << (ebits - 1)) - 1
    sign = -1.0 if code >> (ebits + mbits) else 1.0
    e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if e == 0:
        return sign * m / (1 << mbits) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def finite_codes(rng, fmt, shape):
    codes = rng.integers(0, 1 << BITS[fmt], shape)
    if fmt == "fp8":
        return np.where((codes & 0x7F) == 0x7F, codes & 0x3F, codes)          # S.1111.111 is NaN
    if fmt == "bf8":
        return np.where((codes & 0x7C) == 0x7C, codes & 0x3F, codes)          # exponent 31: Inf/NaN
    return codes


def k_of(fmt, m, g, t, mixed):
    if fmt in ("fp8", "bf8") and mixed:     # AMD example 5.4 (32x32x64): a_reg[i*16+j] = A[r][16g + 32i + j];
        return (2048 // m // 2) * (t // 16) + 16 * g + t % 16   # 16x16x128: 64i, from Triton dot_scaled kernels
    if mixed:                                             # AMD example 5.5 (FP4): 16 bytes from 32g, low nibble first
        return 32 * g + t
    return 32 * g + 31 - t                                # one width: any order, here reversed


def operand(rng, fmt, m, mixed):
    """Matrix X[m rows][2048/m k] as codes, and the lane registers [regs][64] holding it."""
    x = finite_codes(rng, fmt, (m, 2048 // m))
    regs = np.zeros((BITS[fmt], 64), np.uint32)
    for lane in range(64):
        r, g = lane % m, lane // m
        packed = 0
        for t in range(32):
            packed |= int(x[r, k_of(fmt, m, g, t, mixed)]) << (BITS[fmt] * t)
        for q in range(BITS[fmt]):
            regs[q, lane] = (packed >> (32 * q)) & 0xFFFFFFFF
    return x, regs


def c_position(m, lane, q):
    if m == 32:                                           # AMD example: c_reg[4i + r] = C[(l/32)*4 + 8i + r][l%32]
        return (lane // 32) * 4 + 8 * (q // 4) + q % 4, lane % 32
    return 4 * (lane // 16) + q, lane % 16


@pytest.mark.parametrize("m,fa,fb", [(32, "fp8", "fp8"), (32, "bf8", "fp4"), (32, "fp4", "fp8"), (32, "fp4", "fp4"),
                                     (32, "fp6", "bf6"), (16, "fp8", "bf8"), (16, "fp4", "fp4"), (16, "bf6", "bf6"),
                                     (16, "fp8", "fp4"), (16, "fp4", "bf8")])
def test_mfma_f8f6f4(m, fa, fb):
    rng = np.random.default_rng(CODE[fa] * 8 + CODE[fb] + m)
    mixed = BITS[fa] != BITS[fb]
    a_codes, a_regs = operand(rng, fa, m, mixed)
    bt_codes, b_regs = operand(rng, fb, m, mixed)         # B transposed: row = column n of B
    c = rng.standard_normal((m, m)).astype(np.float32)
    nd = m * m // 64
    words = np.zeros((64, 32), np.uint32)
    words[:, :BITS[fa]], words[:, 8:8 + BITS[fb]] = a_regs.T, b_regs.T
    for lane in range(64):
        for q in range(nd):
            words[lane, 16 + q] = c.view(np.uint32)[c_position(m, lane, q)]
    out = np.full((64, 16), 0xDEADBEEF, np.uint32)
    em = Emulator.load(build(kernel(m, fa, fb), args=(("in", 8), ("out", 8)), vgprs=40, sgprs=16, arch="gfx950"))
    em.launch("k", grid=1, block=64, args=[words, out])
    A = np.vectorize(lambda x: decode(int(x), fa))(a_codes)
    Bt = np.vectorize(lambda x: decode(int(x), fb))(bt_codes)
    D = (A @ Bt.T + c.astype(np.float64)).astype(np.float32)
    expect = np.array([[D.view(np.uint32)[c_position(m, lane, q)] for q in range(nd)] for lane in range(64)])
    np.testing.assert_array_equal(out[:, :nd], expect)
    assert len(set(expect.ravel().tolist())) > nd * 32


@pytest.mark.parametrize("m,fa,fb,message", [(16, "fp6", "fp4", "mixed widths"), (32, "fp6", "fp8", "mixed widths")])
def test_unestablished_mixes_are_refused(m, fa, fb, message):
    em = Emulator.load(build(kernel(m, fa, fb), args=(("in", 8), ("out", 8)), vgprs=40, sgprs=16, arch="gfx950"))
    with pytest.raises(EmulationError, match=message):
        em.launch("k", grid=1, block=64, args=[np.zeros((64, 32), np.uint32), np.zeros((64, 16), np.uint32)])
