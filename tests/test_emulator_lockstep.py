"""Lockstep batches (emulator/batch.py): the same results, counts and strict reports as wave by wave,
including waves that diverge on a per-wave branch and meet again at a barrier."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build
from test_emulator_run import LDS_SHUFFLE

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

# Waves 0 and 2 take a branch the others skip (wave id from v_readfirstlane), then all meet at a
# barrier and exchange through LDS; each lane's result depends on its wave's path.
DIVERGE = """
s_load_dwordx4 s[4:7], s[0:1], 0x0         // in, out
v_lshlrev_b32 v1, 2, v0
s_waitcnt lgkmcnt(0)
global_load_dword v2, v1, s[4:5]
v_lshrrev_b32 v7, 6, v0
v_readfirstlane_b32 s8, v7                  // wave id
s_and_b32 s9, s8, 1
s_cmp_eq_u32 s9, 1
s_cbranch_scc1 .Lodd
s_waitcnt vmcnt(0)
v_mul_f32 v2, 4.0, v2
s_branch .Ljoin
.Lodd:
s_waitcnt vmcnt(0)
v_add_f32 v2, 1.0, v2
.Ljoin:
ds_write_b32 v1, v2
s_waitcnt lgkmcnt(0)
s_barrier
v_sub_u32 v4, 0xff, v0
v_lshlrev_b32 v4, 2, v4
ds_read_b32 v5, v4
s_waitcnt lgkmcnt(0)
v_sub_f32 v5, v5, v2
global_store_dword v1, v5, s[6:7]
s_endpgm
"""


def _run(body, lockstep, strict=True):
    em = Emulator.load(build(body, args=(("in", 8), ("out", 8)), vgprs=8, sgprs=16, lds=1024), strict=strict)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(256).astype(np.float32)
    out = np.full(256, np.nan, np.float32)
    res = em.launch("k", grid=1, block=256, args=[x, out], lockstep=lockstep)
    return x, out, res


@pytest.mark.parametrize("body", [LDS_SHUFFLE, DIVERGE])
def test_lockstep_matches_wave_by_wave(body):
    x, a, ra = _run(body, True)
    _, b, rb = _run(body, False)
    np.testing.assert_array_equal(a, b)
    assert ra.instructions == rb.instructions and ra.opcode_counts == rb.opcode_counts
    assert not np.isnan(a).any()


def test_divergent_waves_compute_their_own_path():
    x, out, _ = _run(DIVERGE, True)
    t = np.arange(256)
    y = np.where((t // 64) % 2 == 1, x + np.float32(1), x * np.float32(4)).astype(np.float32)
    np.testing.assert_array_equal(out, (y[255 - t] - y).astype(np.float32))


@pytest.mark.parametrize("lockstep", [True, False])
def test_race_between_waves_of_one_batch_is_reported(lockstep):
    racy = LDS_SHUFFLE.replace("s_barrier\n", "")
    with pytest.raises(EmulationError, match="LDS race"):
        em = Emulator.load(build(racy, args=(("in", 8), ("out", 8)), vgprs=8, sgprs=8, lds=1024))
        x = np.random.default_rng(1).standard_normal(256).astype(np.float32)
        em.launch("k", grid=1, block=256, args=[x, np.zeros(256, np.float32)], lockstep=lockstep)


def test_missing_lgkmcnt_after_divergence_is_reported():
    with pytest.raises(EmulationError, match="reads v5 while the load"):
        _run(DIVERGE.replace("ds_read_b32 v5, v4\ns_waitcnt lgkmcnt(0)", "ds_read_b32 v5, v4"), True)
