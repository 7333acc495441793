"""Fused stretches of multiply-adds (emulator/fuse.py) give exactly the op-by-op results, counts and
strict reports, and only independent ops are fused."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build
from test_emulator_alu import fma_ref

pytestmark = pytest.mark.skipif(not have_llvm(), reason="needs the LLVM AMDGPU toolchain")

ROWS = 15                       # input row i -> v(2+i)


def kernel(third_source: str = "v6", lanes: int = 64) -> str:
    """Row i of ``in`` (``lanes`` floats) goes to v(2+i); v10-v16 go to rows 0-6 of ``out``."""
    step = f"s_add_u32 s{{0}}, s{{0}}, {4 * lanes}\ns_addc_u32 s{{1}}, s{{1}}, 0"
    loads = "\n".join(f"global_load_dword v{2 + i}, v1, s[4:5]\n" + step.format(4, 5) for i in range(ROWS))
    stores = "\n".join(f"global_store_dword v1, v{10 + i}, s[6:7]\n" + step.format(6, 7) for i in range(7))
    return f"""
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32 v1, 2, v0
s_waitcnt lgkmcnt(0)
{loads}
s_waitcnt vmcnt(0)
v_fmac_f32 v10, v2, v3
v_fmac_f32 v11, v4, v5
v_fmac_f32 v12, {third_source}, v7
v_fmac_f32 v13, v8, v9
v_fmac_f32 v14, v10, v2
s_mov_b64 s[8:9], exec
s_mov_b32 exec_hi, 0
v_fmac_f32 v15, v2, v4
v_fmac_f32 v16, v3, v5
s_mov_b64 exec, s[8:9]
{stores}
s_endpgm
"""


def inputs(seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((ROWS, 64)) * 10.0 ** rng.integers(-3, 4, (ROWS, 1))).astype(np.float32)
    # lane 0: the double-rounding trap of test_fma_rounds_once, for the first fused op
    x[0, 0], x[1, 0], x[8, 0] = 1 + 2.0 ** -23, (1 - 2.0 ** -23) * 2.0 ** -24, 1 + 2.0 ** -23
    return x


def run(x, **kw):
    em = Emulator.load(build(kernel(kw.pop("third_source", "v6")), args=(("in", 8), ("out", 8)), vgprs=24,
                             sgprs=12))
    out = np.full((7, 64), np.float32(-777.0))
    result = em.launch("k", grid=1, block=64, args=[x.copy(), out], **kw)
    return em, out, result


@pytest.mark.parametrize("seed", [1, 2])
def test_fused_results_equal_reference_and_op_by_op(seed):
    x = inputs(seed)
    em, fused, res = run(x)
    assert [len(op.parts) for op in em.program("k") if op.parts is not None] == [4, 2]
    _, plain, res_plain = run(x, trace=lambda w, i: None)          # traced launches run op by op
    v = {2 + i: x[i] for i in range(ROWS)}
    r10 = fma_ref(v[2], v[3], v[10])
    expect = [r10, fma_ref(v[4], v[5], v[11]), fma_ref(v[6], v[7], v[12]), fma_ref(v[8], v[9], v[13]),
              fma_ref(r10, v[2], v[14])]
    low = np.arange(64) < 32                                         # EXEC held lanes 32-63 off
    expect += [np.where(low, fma_ref(v[2], v[4], v[15]), v[15]), np.where(low, fma_ref(v[3], v[5], v[16]), v[16])]
    np.testing.assert_array_equal(fused.view(np.uint32), np.array(expect).view(np.uint32))
    np.testing.assert_array_equal(fused.view(np.uint32), plain.view(np.uint32))
    assert fused[0, 0] == np.float32(1 + 2.0 ** -23)                # single rounding inside the fused call
    assert res.instructions == res_plain.instructions
    assert res.opcode_counts == res_plain.opcode_counts
    assert res.estimated_cycles == res_plain.estimated_cycles


def test_strict_report_names_the_part_that_reads_an_unwritten_register():
    with pytest.raises(EmulationError) as err:
        run(inputs(3), third_source="v20")
    message = str(err.value)
    assert "v_fmac_f32 v12, v20, v7" in message and "v20" in message and "nothing has written" in message


def test_lockstep_batches_and_single_waves_agree_on_fused_kernels():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((ROWS, 256)).astype(np.float32)       # four waves of one workgroup
    em = Emulator.load(build(kernel(lanes=256), args=(("in", 8), ("out", 8)), vgprs=24, sgprs=12))
    assert any(op.parts is not None for op in em.program("k"))
    outs = []
    for lockstep in (True, False):
        out = np.full((7, 256), np.float32(-777.0))
        em.launch("k", grid=1, block=256, args=[x.copy(), out], lockstep=lockstep)
        outs.append(out)
    np.testing.assert_array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32))
    np.testing.assert_array_equal(outs[0][0].view(np.uint32), fma_ref(x[0], x[1], x[8]).view(np.uint32))
