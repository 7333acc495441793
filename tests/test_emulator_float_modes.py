"""fp32 denormal modes as the kernel descriptor sets them: kept (3) or flushed on input and output (0),
through single ops and fused multiply-add stretches; modes the emulator does not model are refused."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import assemble, kernel_source

pytestmark = pytest.mark.skipif(not have_llvm(), reason="needs the LLVM AMDGPU toolchain")

TINY = np.float32(2.0 ** -126)          # smallest normal fp32

BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32 v1, 2, v0
s_waitcnt lgkmcnt(0)
global_load_dword v2, v1, s[4:5]
global_load_dword v3, v1, s[4:5] offset:256
global_load_dword v4, v1, s[4:5] offset:512
global_load_dword v5, v1, s[4:5] offset:768
s_waitcnt vmcnt(0)
v_add_f32 v6, v2, v3
v_mul_f32 v7, v2, v3
v_mov_b32 v8, v4
v_mov_b32 v9, v5
v_fmac_f32 v8, v2, v3
v_fmac_f32 v9, v3, v2
global_store_dword v1, v6, s[6:7]
global_store_dword v1, v7, s[6:7] offset:256
global_store_dword v1, v8, s[6:7] offset:512
global_store_dword v1, v9, s[6:7] offset:768
s_endpgm
"""


def with_modes(source: str, **modes) -> str:
    for field, value in modes.items():
        directive = f".amdhsa_{field}"
        if directive in source:
            source = "\n".join(f"  {directive} {value}" if line.strip().startswith(directive + " ") else line
                               for line in source.splitlines()) + "\n"
        else:
            source = source.replace(".end_amdhsa_kernel", f"  {directive} {value}\n.end_amdhsa_kernel")
    return source


def run(**modes):
    co = assemble(with_modes(kernel_source(BODY, args=(("in", 8), ("out", 8)), vgprs=12), **modes))
    rng = np.random.default_rng(11)
    x = np.empty((4, 64), np.float32)
    x[0] = rng.uniform(1, 2, 64).astype(np.float32) * TINY * rng.choice([-1, 1], 64)   # normal, tiny
    x[1] = rng.uniform(0.1, 0.9, 64).astype(np.float32) * rng.choice([-1, 1], 64)     # products: denormal
    x[1, :8] = (rng.uniform(0.1, 0.9, 8) * TINY).astype(np.float32)                   # denormal inputs
    x[2] = rng.uniform(-1, 1, 64).astype(np.float32) * TINY * 0.5                      # denormal addends
    x[3] = rng.standard_normal(64).astype(np.float32)
    out = np.full((4, 64), np.float32(np.nan))
    Emulator.load(co).launch("k", grid=1, block=64, args=[x.copy(), out])
    return x, out


def flush(a):
    a = np.asarray(a, np.float32)
    return np.where(np.abs(a) < TINY, np.copysign(np.float32(0), a), a).astype(np.float32)


def fma64(a, b, c):       # exact enough here: the product of these values is exact in fp64
    return (np.float64(a) * np.float64(b) + np.float64(c)).astype(np.float32)


def test_denormals_kept_in_mode_3():
    x, out = run(float_denorm_mode_32=3)
    assert (np.abs(out[1][8:]) < TINY).sum() > 20 and (out[1][8:] != 0).all()  # denormal products survive
    np.testing.assert_array_equal(out[0], x[0] + x[1])
    np.testing.assert_array_equal(out[1], x[0] * x[1])
    np.testing.assert_array_equal(out[2], fma64(x[0], x[1], x[2]))
    np.testing.assert_array_equal(out[3], fma64(x[1], x[0], x[3]))


def test_denormals_flushed_on_input_and_output_in_mode_0():
    x, out = run(float_denorm_mode_32=0)
    a, b = flush(x[0]), flush(x[1])
    assert (b[:8] == 0).all() and (x[1][:8] != 0).all()
    np.testing.assert_array_equal(out[0], flush(a + b))
    np.testing.assert_array_equal(out[1].view(np.uint32), flush(a * b).view(np.uint32))   # signed zeros
    np.testing.assert_array_equal(out[2].view(np.uint32), flush(fma64(a, b, flush(x[2]))).view(np.uint32))
    np.testing.assert_array_equal(out[3], flush(fma64(b, a, x[3])))


@pytest.mark.parametrize("modes, words", [
    ({"float_denorm_mode_32": 1}, ".amdhsa_float_denorm_mode_32 1 (flush outputs only)"),
    ({"float_denorm_mode_32": 2}, ".amdhsa_float_denorm_mode_32 2 (flush inputs only)"),
    ({"float_round_mode_32": 3}, ".amdhsa_float_round_mode_32 3 (round toward zero)"),
])
def test_unmodelled_modes_are_refused_with_the_field_and_value(modes, words):
    with pytest.raises(EmulationError) as err:
        run(**modes)
    assert words in str(err.value) and "does not model" in str(err.value)


def test_fp16_fp64_denormal_mode_matters_only_with_fp16_fp64_instructions():
    run(float_denorm_mode_16_64=0)                                         # fp32-only kernel: fine
    body = BODY.replace("v_add_f32 v6, v2, v3", "v_add_f16 v6, v2, v3")
    co = assemble(with_modes(kernel_source(body, args=(("in", 8), ("out", 8)), vgprs=12), float_denorm_mode_16_64=0))
    with pytest.raises(EmulationError, match=r"float_denorm_mode_16_64 0 \(flush inputs and outputs\) with fp16"):
        Emulator.load(co).launch("k", grid=1, block=64, args=[np.ones((4, 64), np.float32),
                                                              np.zeros((4, 64), np.float32)])
