"""The emulator's cycle model (emulator/cycles.py): hand-written kernels whose instruction mix gives
a count that follows from the issue_cycles and latency tables of isa/gfx90a.yaml."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.emulator.cycles import latency_table
from tensile_asm.inspect.issue_model import IssueTable
from tensile_asm.isa.arch import load_arch

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

ARCH = load_arch("gfx90a")
C = IssueTable.of(ARCH).cycles
LAT = latency_table(ARCH)


def _cycles(body, block=64, **kw):
    em = Emulator.load(build(body, args=(("out", 8),), vgprs=8, sgprs=16, **kw))
    out = np.zeros(1024, np.float32)
    res = em.launch("k", grid=1, block=block, args=[out])
    assert "modelled" in res.cycle_model
    return res


def test_known_instruction_mix():
    body = "s_load_dwordx2 s[4:5], s[0:1], 0x0\ns_waitcnt lgkmcnt(0)\n" + "v_add_f32 v1, v0, v0\n" * 10 + \
           "v_fmac_f32 v1, v1, v1\n" * 5 + "v_mul_lo_u32 v2, v0, v0\n" * 2 + "s_endpgm"
    res = _cycles(body)
    wait_end = max(C["smem"] + C["waitcnt"], C["smem"] + LAT["smem"])
    expect = wait_end + 10 * C["valu"] + 5 * C["valu_fma"] + 2 * C["valu_quarter"] + C["misc"]
    assert res.estimated_cycles == expect == 300                 # gfx90a: 4 + 200 + 40 + 20 + 32 + 4
    w = res.cycle_estimate.waves[0]
    assert w.issue == {"smem": 4, "waitcnt": 4, "valu": 40, "valu_fma": 20, "valu_quarter": 32, "misc": 4}
    assert w.wait_memory == LAT["smem"] - C["waitcnt"]


LOAD_STORE = """s_load_dwordx2 s[4:5], s[0:1], 0x0
v_lshlrev_b32 v1, 2, v0
s_waitcnt lgkmcnt(0)
{extra}
v_add_f32 v3, v0, v0
global_store_dword v1, v3, s[4:5]
s_endpgm"""


def test_dependent_load_wait_adds_the_latency():
    base = _cycles(LOAD_STORE.format(extra="")).estimated_cycles
    extra = "global_load_dword v2, v1, s[4:5]\ns_waitcnt vmcnt(0)\nv_add_f32 v3, v2, v2"
    more = _cycles(LOAD_STORE.format(extra=extra)).estimated_cycles
    # the load issues, the wait holds the wave for the load's latency (its own issue slot inside it),
    # then one more VALU op
    assert more - base == C["vmem_load"] + LAT["vmem_load"] + C["valu"]
    # the store's latency is in both: a wave ends when its memory operations have completed
    assert base >= LAT["vmem_store"]


def test_barrier_waits_for_the_slowest_wave():
    body = """v_readfirstlane_b32 s4, v0
s_cmp_lt_u32 s4, 64
s_cbranch_scc1 skip
""" + "v_add_f32 v1, v0, v0\n" * 20 + """skip:
s_barrier
v_add_f32 v2, v0, v0
s_endpgm"""
    res = _cycles(body, block=128)
    w0, w1 = res.cycle_estimate.waves
    assert w0.wait_barrier == 20 * C["valu"] and w1.wait_barrier == 0
    assert w0.end == w1.end == res.estimated_cycles


def test_waves_sharing_a_simd_take_turns():
    body = "v_add_f32 v1, v0, v0\n" * 30 + "s_endpgm"
    four, eight = _cycles(body, block=256).estimated_cycles, _cycles(body, block=512).estimated_cycles
    assert four == 30 * C["valu"] + C["misc"]
    assert eight == 2 * four                      # waves 0-3 and 4-7 share SIMDs 0-3


def test_cycle_model_can_be_turned_off():
    em = Emulator.load(build("s_endpgm", args=(("out", 8),)))
    res = em.launch("k", grid=1, block=64, args=[np.zeros(4, np.float32)], cycle_model=False)
    assert res.estimated_cycles is None
