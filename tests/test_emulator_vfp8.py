"""fp8/bf8 conversions (vector/convert_fp8.py), FNUZ on gfx942 and OCP on gfx950: every code decoded, random fp32
values (denormals, ties, signed zeros) encoded, against references written here from the formats."""

import math

import numpy as np
import pytest

from tensile_asm.errors import EmulationError

from conftest import have_llvm
from valu_kernel import run_block

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

RNG = np.random.default_rng(8)


def decode(code, bf8, ocp):
    mbits, ebits = (2, 5) if bf8 else (3, 4)
    bias = (15 if bf8 else 7) if ocp else (16 if bf8 else 8)
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if not ocp and code == 0x80:
        return math.nan
    if ocp and not bf8 and code & 0x7F == 0x7F:
        return math.nan
    if ocp and bf8 and e == 31:
        return sign * math.inf if m == 0 else math.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - mbits)
    return sign * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def encode(x, bf8, ocp):
    """Nearest finite code by brute force, ties to the even code; zero keeps its sign only in OCP."""
    best = None
    for code in range(128):
        v = decode(code, bf8, ocp)
        if not math.isfinite(v):
            continue
        key = (abs(abs(x) - v), code & 1)
        if best is None or key < best[0]:
            best = (key, code)
    code = best[1]
    if math.copysign(1.0, x) < 0 and (code != 0 or ocp):
        code |= 0x80
    return code


def f32(bits):
    return bits.view(np.float32)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_decode_every_code(arch):
    ocp = arch == "gfx950"
    codes = np.arange(256, dtype=np.uint32)
    words = np.stack([codes[:64] | codes[64:128] << 8 | codes[128:192] << 16 | codes[192:] << 24,
                      RNG.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)])
    body = ["v_cvt_f32_fp8 v30, v10", "v_cvt_f32_bf8 v31, v10",
            "v_cvt_f32_fp8_sdwa v32, v10 src0_sel:BYTE_1", "v_cvt_f32_bf8_sdwa v33, v10 src0_sel:BYTE_3",
            "v_cvt_pk_f32_fp8 v[34:35], v10", "v_cvt_pk_f32_bf8_sdwa v[36:37], v10 src0_sel:WORD_1"]
    got = f32(run_block("\n".join(body), words, 8, arch=arch)).astype(np.float64)
    want = {0: (0, False), 1: (0, True), 2: (1, False), 3: (3, True), 4: (0, False), 5: (1, False),
            6: (2, True), 7: (3, True)}                     # output row: (byte of v10, bf8)
    for row, (byte, bf8) in want.items():
        ref = np.array([decode(int(c >> (8 * byte)) & 0xFF, bf8, ocp) for c in words[0]])
        np.testing.assert_array_equal(got[row], ref, err_msg=f"row {row}")


def _values(bf8, ocp):
    finite = [decode(c, bf8, ocp) for c in range(128) if math.isfinite(decode(c, bf8, ocp))]
    mids = [(a + b) / 2 for a, b in zip(finite, finite[1:])]             # exact ties
    x = np.concatenate([RNG.choice(finite, 16) * RNG.choice([-1, 1], 16), RNG.choice(mids, 24) * RNG.choice([-1, 1], 24),
                        RNG.uniform(-max(finite), max(finite), 16), [0.0, -0.0, 1e-30, -1e-30, 1e-40, -1e-40],
                        [max(finite) * 1.01, -max(finite) * 1.01]])
    return x.astype(np.float32)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_encode_round_to_nearest_even(arch):
    ocp = arch == "gfx950"
    xf, xb = _values(False, ocp), _values(True, ocp)
    old = RNG.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    words = np.stack([xf.view(np.uint32), np.roll(xf, 7).view(np.uint32), xb.view(np.uint32),
                      np.roll(xb, 3).view(np.uint32), old])
    body = ["v_mov_b32 v30, v14", "v_cvt_pk_fp8_f32 v30, v10, v11",
            "v_mov_b32 v31, v14", "v_cvt_pk_bf8_f32 v31, v12, v13 op_sel:[0,0,1]",
            "v_mov_b32 v32, v14", "v_cvt_pk_fp8_f32 v32, -v10, |v11| op_sel:[0,0,1]"]
    got = run_block("\n".join(body), words, 3, arch=arch)
    a, b, c, d = (words[i].view(np.float32).astype(np.float64) for i in range(4))
    for lane in range(64):
        o = int(old[lane])
        lo = encode(a[lane], False, ocp) | encode(b[lane], False, ocp) << 8
        assert got[0][lane] == (o & 0xFFFF0000) | lo, lane
        hi = encode(c[lane], True, ocp) | encode(d[lane], True, ocp) << 8
        assert got[1][lane] == (o & 0xFFFF) | hi << 16, lane
        neg = encode(-a[lane], False, ocp) | encode(abs(b[lane]), False, ocp) << 8
        assert got[2][lane] == (o & 0xFFFF) | neg << 16, lane


def test_encode_out_of_range_is_an_error():
    words = np.full((2, 64), np.float32(1.0).view(np.uint32), np.uint32)
    words[1, 5] = np.float32(1000.0).view(np.uint32)                # beyond FNUZ fp8's 240
    with pytest.raises(EmulationError, match="fp8 \\(FNUZ\\).*not documented"):
        run_block("v_mov_b32 v30, 0\nv_cvt_pk_fp8_f32 v30, v10, v11", words, 1, arch="gfx942")
