"""gfx950 block-scaled MFMAs (v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4).

* Triton: the tl.dot_scaled fixtures (tests/data/fixtures/triton_gfx950_dot_scaled*, run strict by
  tests/test_emulator_fixtures.py) pin the per-lane scale placement, the op_sel/op_sel_hi byte select and
  the k order against numpy.
* Hand-assembled: every supported cbsz/blgp pair at both shapes, random codes and a different random E8M0
  scale per (row, 32-k block), every scale byte, checked bit-exactly against a numpy reference that places
  operands from the dense matrices by the layout written out here (not by the emulator's tables).
"""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build
from test_emulator_mfma_f8f6f4 import BITS, CODE, c_position, decode, finite_codes

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


def kernel(m, fa, fb, op_sel, op_sel_hi):
    na, nb, nd = BITS[fa], BITS[fb], m * m // 64
    lines = ["s_load_dwordx4 s[4:7], s[0:1], 0x0", "v_lshlrev_b32 v1, 8, v0", "v_lshlrev_b32 v36, 6, v0",
             "s_waitcnt lgkmcnt(0)"]         # in: 64 words per lane (A 0-7, B 8-15, C 16-31, scales 32-33)
    slots = ([(2 + r, r) for r in range(na)] + [(10 + r, 8 + r) for r in range(nb)]
             + [(20 + r, 16 + r) for r in range(nd)] + [(18, 32), (19, 33)])
    lines += [f"global_load_dword v{reg}, v1, s[4:5] offset:{4 * slot}" for reg, slot in slots]
    lines += ["s_waitcnt vmcnt(0)", "s_nop 2",
              f"v_mfma_scale_f32_{m}x{m}x{2048 // m}_f8f6f4 v[20:{19 + nd}], v[2:{1 + na}], v[10:{9 + nb}], "
              f"v[20:{19 + nd}], v18, v19 op_sel:[{op_sel[0]},{op_sel[1]},0] "
              f"op_sel_hi:[{op_sel_hi[0]},{op_sel_hi[1]},0] cbsz:{CODE[fa]} blgp:{CODE[fb]}",
              "s_nop 7", "s_nop 7", "s_nop 7"]
    lines += [f"global_store_dword v36, v{20 + r}, s[6:7] offset:{4 * r}" for r in range(nd)]
    return "\n".join(lines + ["s_endpgm"])


def lane_k(fmt, m, g, t):
    """k of item t of lane group g (8-bit: two 16-item halves, K/2 apart; 4-bit: 32 consecutive)."""
    if BITS[fmt] == 8:
        return (2048 // m // 2) * (t // 16) + 16 * g + t % 16
    return 32 * g + t


def operand(rng, fmt, m):
    x = finite_codes(rng, fmt, (m, 2048 // m))
    regs = np.zeros((BITS[fmt], 64), np.uint32)
    for lane in range(64):
        packed = 0
        for t in range(32):
            packed |= int(x[lane % m, lane_k(fmt, m, lane // m, t)]) << (BITS[fmt] * t)
        for q in range(BITS[fmt]):
            regs[q, lane] = (packed >> (32 * q)) & 0xFFFFFFFF
    return x, regs


def scales(rng, m, byte):
    """E8M0 codes [m rows, 2048/m/32 blocks] (around 127, but 2^+-20 apart) and the scale VGPR [64] holding
    code (row, kb) in byte `byte` of lane row + m*kb (other bytes random)."""
    codes = rng.integers(107, 148, (m, 64 // m))
    words = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    for lane in range(64):
        w = int(words[lane]) & ~(0xFF << (8 * byte))
        words[lane] = w | int(codes[lane % m, lane // m]) << (8 * byte)
    return codes, words


def run_case(m, fa, fb, op_sel, op_sel_hi, seed):
    rng = np.random.default_rng(seed)
    a_codes, a_regs = operand(rng, fa, m)
    bt_codes, b_regs = operand(rng, fb, m)
    sa_codes, sa_words = scales(rng, m, op_sel[0] + 2 * op_sel_hi[0])
    sb_codes, sb_words = scales(rng, m, op_sel[1] + 2 * op_sel_hi[1])
    c = rng.standard_normal((m, m)).astype(np.float32)
    nd = m * m // 64
    words = np.zeros((64, 64), np.uint32)
    words[:, :BITS[fa]], words[:, 8:8 + BITS[fb]] = a_regs.T, b_regs.T
    words[:, 32], words[:, 33] = sa_words, sb_words
    for lane in range(64):
        for q in range(nd):
            words[lane, 16 + q] = c.view(np.uint32)[c_position(m, lane, q)]
    out = np.full((64, 16), 0xDEADBEEF, np.uint32)
    em = Emulator.load(build(kernel(m, fa, fb, op_sel, op_sel_hi), args=(("in", 8), ("out", 8)), vgprs=40,
                             sgprs=16, arch="gfx950"))
    em.launch("k", grid=1, block=64, args=[words, out])
    A = np.vectorize(lambda x: decode(int(x), fa))(a_codes) * np.repeat(2.0 ** (sa_codes - 127.0), 32, 1)
    Bt = np.vectorize(lambda x: decode(int(x), fb))(bt_codes) * np.repeat(2.0 ** (sb_codes - 127.0), 32, 1)
    D = (A @ Bt.T + c.astype(np.float64)).astype(np.float32)
    return out[:, :nd], np.array([[D.view(np.uint32)[c_position(m, lane, q)] for q in range(nd)] for lane in range(64)])


PAIRS = [("fp8", "fp8"), ("fp8", "bf8"), ("bf8", "fp8"), ("bf8", "bf8"), ("fp8", "fp4"), ("fp4", "bf8"), ("fp4", "fp4")]


@pytest.mark.parametrize("m", [32, 16])
@pytest.mark.parametrize("fa,fb", PAIRS)
def test_mfma_scale(m, fa, fb):
    i = PAIRS.index((fa, fb))
    op_sel, op_sel_hi = (i & 1, i >> 1 & 1), (i >> 2 & 1, (i + m) & 1)      # varied bytes for A and B
    got, expect = run_case(m, fa, fb, op_sel, op_sel_hi, seed=i * 64 + m)
    np.testing.assert_array_equal(got, expect)
    assert len(set(expect.ravel().tolist())) > (m * m // 64) * 32


def test_nan_scale_poisons_its_block_only():
    """E8M0 0xFF is NaN: every D element whose row of A has a NaN scale is NaN, the others are not."""
    rng = np.random.default_rng(7)
    m = 32
    a_codes, a_regs = operand(rng, "fp8", m)
    _, b_regs = operand(rng, "fp8", m)
    words = np.zeros((64, 64), np.uint32)
    words[:, :8], words[:, 8:16] = a_regs.T, b_regs.T
    words[:, 32], words[:, 33] = 127, 127
    words[5 + 32, 32] = 255                                # row 5, k block 1
    out = np.zeros((64, 16), np.uint32)
    em = Emulator.load(build(kernel(m, "fp8", "fp8", (0, 0), (0, 0)), args=(("in", 8), ("out", 8)), vgprs=40,
                             sgprs=16, arch="gfx950"))
    em.launch("k", grid=1, block=64, args=[words, out])
    nan_rows = {c_position(m, lane, q)[0] for lane in range(64) for q in range(16)
                if np.isnan(out[lane, q:q + 1].view(np.float32)[0])}
    assert nan_rows == {5}


def test_fp6_is_refused():
    em = Emulator.load(build(kernel(16, "fp6", "fp6", (0, 0), (0, 0)), args=(("in", 8), ("out", 8)), vgprs=40,
                             sgprs=16, arch="gfx950"))
    with pytest.raises(EmulationError, match="FP6/BF6"):
        em.launch("k", grid=1, block=64, args=[np.zeros((64, 64), np.uint32), np.zeros((64, 16), np.uint32)])
