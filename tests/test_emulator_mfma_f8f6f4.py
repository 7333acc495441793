"""gfx950 v_mfma_f32_32x32x64_f8f6f4 with FP8/BF8/FP4 operands on random data: operands placed in lanes the
way AMD's CDNA4 matrix-core examples load them, decoded and multiplied here in float64."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

REGS = {"fp8": 8, "bf8": 8, "fp4": 4}
CODE = {"fp8": 0, "bf8": 1, "fp4": 4}


def kernel(fa, fb, extra=""):
    na, nb = REGS[fa], REGS[fb]
    lines = ["s_load_dwordx4 s[4:7], s[0:1], 0x0", "v_lshlrev_b32 v1, 7, v0", "v_lshlrev_b32 v36, 6, v0",
             "s_waitcnt lgkmcnt(0)"]                        # in: 32 words per lane, out: 16
    slots = [(2 + r, r) for r in range(na)] + [(10 + r, 8 + r) for r in range(nb)] + [(20 + r, 16 + r) for r in range(16)]
    lines += [f"global_load_dword v{reg}, v1, s[4:5] offset:{4 * slot}" for reg, slot in slots]
    lines += ["s_waitcnt vmcnt(0)", "s_nop 2",
              f"v_mfma_f32_32x32x64_f8f6f4 v[20:35], v[2:{1 + na}], v[10:{9 + nb}], v[20:35] "
              f"cbsz:{CODE[fa]} blgp:{CODE[fb]}{extra}", "s_nop 7", "s_nop 7", "s_nop 7"]
    lines += [f"global_store_dword v36, v{20 + r}, s[6:7] offset:{4 * r}" for r in range(16)]
    return "\n".join(lines + ["s_endpgm"])


def decode(code, fmt):
    if fmt == "fp4":
        sign = -1.0 if code & 8 else 1.0
        e, m = (code >> 1) & 3, code & 1
        return sign * (m * 0.5 if e == 0 else (1 + m / 2) * 2.0 ** (e - 1))
    ebits, mbits, bias = (4, 3, 7) if fmt == "fp8" else (5, 2, 15)
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if e == 0:
        return sign * m / (1 << mbits) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def finite_codes(rng, fmt, shape):
    if fmt == "fp4":
        return rng.integers(0, 16, shape)
    codes = rng.integers(0, 256, shape)
    bad = (codes & 0x7F) == 0x7F if fmt == "fp8" else (codes & 0x7C) == 0x7C     # NaN (and Inf for bf8)
    return np.where(bad, codes & 0x3F, codes)


def operand(rng, fmt):
    """Matrix X[32 rows][64 k] as codes, and the lane registers [regs][64] holding it."""
    x = finite_codes(rng, fmt, (32, 64))
    regs = np.zeros((REGS[fmt], 64), np.uint32)
    for lane in range(64):
        r, g = lane % 32, lane // 32
        if fmt == "fp4":      # 16 bytes: byte i = elements 32g + 2i (low nibble) and 32g + 2i + 1
            items = [x[r, 32 * g + t] for t in range(32)]
            width = 4
        else:                 # 32 bytes: a_reg[i*16 + j] = X[r][16g + 32i + j]
            items = [x[r, 16 * g + 32 * i + j] for i in range(2) for j in range(16)]
            width = 8
        per = 32 // width
        for t, code in enumerate(items):
            regs[t // per, lane] |= np.uint32(int(code) << (width * (t % per)))
    return x, regs


@pytest.mark.parametrize("fa,fb", [("fp8", "fp8"), ("bf8", "fp4"), ("fp4", "fp4")])
def test_mfma_32x32x64_f8f6f4(fa, fb):
    rng = np.random.default_rng(CODE[fa] * 8 + CODE[fb])
    a_codes, a_regs = operand(rng, fa)
    bt_codes, b_regs = operand(rng, fb)                    # B transposed: row = column n of B
    c = rng.standard_normal((32, 32)).astype(np.float32)
    c_regs = np.zeros((16, 64), np.uint32)
    for lane in range(64):
        for q in range(16):                                # c_reg[4i + r] = C[(l/32)*4 + 8i + r][l%32]
            c_regs[q, lane] = c.view(np.uint32)[(lane // 32) * 4 + 8 * (q // 4) + q % 4, lane % 32]
    words = np.zeros((64, 32), np.uint32)                  # [lane][slot]: A in 0-7, B in 8-15, C in 16-31
    words[:, :REGS[fa]], words[:, 8:8 + REGS[fb]], words[:, 16:] = a_regs.T, b_regs.T, c_regs.T
    out = np.full((64, 16), 0xDEADBEEF, np.uint32)
    em = Emulator.load(build(kernel(fa, fb), args=(("in", 8), ("out", 8)), vgprs=40, sgprs=16, arch="gfx950"))
    em.launch("k", grid=1, block=64, args=[words, out])
    A = np.vectorize(lambda x: decode(int(x), fa))(a_codes)
    Bt = np.vectorize(lambda x: decode(int(x), fb))(bt_codes)
    D = (A @ Bt.T + c.astype(np.float64)).astype(np.float32)
    expect = np.zeros((16, 64), np.uint32)
    for lane in range(64):
        for q in range(16):
            expect[q, lane] = D.view(np.uint32)[(lane // 32) * 4 + 8 * (q // 4) + q % 4, lane % 32]
    np.testing.assert_array_equal(out.T, expect)


def test_fp6_operands_are_refused():
    src = kernel("fp8", "fp8").replace("v[2:9], v[10:17], v[20:35] cbsz:0 blgp:0", "v[2:7], v[10:17], v[20:35] cbsz:2 blgp:0")
    em = Emulator.load(build(src, args=(("in", 8), ("out", 8)), vgprs=40, sgprs=16, arch="gfx950"))
    with pytest.raises(EmulationError, match="FP6/BF6"):
        em.launch("k", grid=1, block=64, args=[np.zeros((64, 32), np.uint32), np.zeros((64, 16), np.uint32)])
