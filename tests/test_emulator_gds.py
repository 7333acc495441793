"""GDS (DS instructions with ``gds``, gfx908) on random data against numpy, the M0 window, and the
strict expcnt check: a GDS instruction's address/data VGPRs may not be overwritten before
``s_waitcnt expcnt`` says it has read them."""

from types import SimpleNamespace

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import Limits, compile_ops
from tensile_asm.errors import EmulationError, UserError
from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.parser import parse_instruction

from conftest import have_llvm
from emulator_asm import assemble, kernel_source

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

U = np.uint32
ARGS = (("in", 8), ("out", 8))
PROLOGUE = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32 v1, 2, v0
s_mov_b32 m0, {m0}
s_waitcnt lgkmcnt(0)
global_load_dword v2, v1, s[4:5]
s_waitcnt vmcnt(0)
"""


def _build(body, **kw):
    src = kernel_source(body, args=ARGS, arch="gfx908", vgprs=16, sgprs=16, **kw)
    return assemble(src, "gfx908"), src


def _random(rng, n):
    return rng.integers(1, 1 << 32, n, dtype=np.uint64).astype(U)


# Window base 0x100, size 0x800. Write at window byte 64 + 4*lane, read back, read2 the neighbour
# lane's word and an untouched word 256 bytes on, then ds_add_rtn on 8 slots at window byte 1024.
RW_BODY = PROLOGUE.format(m0="0x01000800") + """
ds_write_b32 v1, v2 offset:64 gds
s_waitcnt expcnt(0) lgkmcnt(0)
ds_read_b32 v3, v1 offset:64 gds
v_xor_b32 v4, 4, v1
ds_read2_b32 v[5:6], v4 offset0:16 offset1:80 gds
v_and_b32 v7, 28, v1
ds_add_rtn_u32 v8, v7, v2 offset:1024 gds
s_waitcnt lgkmcnt(0)
global_store_dword v1, v3, s[6:7]
global_store_dword v1, v5, s[6:7] offset:256
global_store_dword v1, v6, s[6:7] offset:512
global_store_dword v1, v8, s[6:7] offset:768
s_endpgm
"""


def test_gds_write_read_and_returning_atomic_match_numpy():
    rng = np.random.default_rng(11)
    data, gds0 = _random(rng, 64), _random(rng, 1024)
    gds, out = gds0.copy(), np.full(256, 0xDEADBEEF, U)
    co, _ = _build(RW_BODY)
    Emulator.load(co).launch("k", grid=1, block=64, args=[data, out], gds=gds)

    lane, base = np.arange(64), 0x100 // 4
    want = gds0.copy()
    want[base + 16 + lane] = data
    ret = np.zeros(64, U)
    for i in lane:                      # one wave: lanes serialised in ascending order
        slot = base + 256 + (i & 7)
        ret[i] = want[slot]
        want[slot] = U((int(want[slot]) + int(data[i])) & 0xFFFFFFFF)
    assert np.array_equal(out[:64], data)
    assert np.array_equal(out[64:128], data[lane ^ 1])
    assert np.array_equal(out[128:192], gds0[base + 80 + (lane ^ 1)])
    assert np.array_equal(out[192:], ret)
    assert np.array_equal(gds, want)


# Three workgroups of two waves add into and max into 16 shared GDS slots.
ATOMIC_BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_lshl_b32 s3, s2, 9
v_lshlrev_b32 v1, 2, v0
v_add_u32 v9, s3, v1
s_mov_b32 m0, 0x80
s_waitcnt lgkmcnt(0)
global_load_dword v2, v9, s[4:5]
v_and_b32 v7, 60, v1
s_waitcnt vmcnt(0)
ds_add_u32 v7, v2 gds
ds_max_u32 v7, v2 offset:64 gds
s_waitcnt expcnt(0) lgkmcnt(0)
s_endpgm
"""


def test_gds_atomics_from_several_waves_and_workgroups_match_numpy():
    rng = np.random.default_rng(12)
    data, gds0 = _random(rng, 3 * 128), _random(rng, 32)
    gds = gds0.copy()
    co, _ = _build(ATOMIC_BODY, max_wg=128)
    result = Emulator.load(co).launch("k", grid=3, block=128, args=[data, np.zeros(4, U)], gds=gds)
    assert result.waves == 6
    slot = np.arange(3 * 128) % 128 & 15
    sums = [(int(gds0[s]) + int(data[slot == s].astype(np.uint64).sum())) & 0xFFFFFFFF for s in range(16)]
    maxes = [max(int(gds0[16 + s]), int(data[slot == s].max())) for s in range(16)]
    assert np.array_equal(gds[:16], np.array(sums, U))
    assert np.array_equal(gds[16:], np.array(maxes, U))


# Window base 0x40: write then read at window byte 128 + 4*lane.
WINDOW_BODY = PROLOGUE.format(m0="{m0}") + """
ds_write_b32 v1, v2 offset:128 gds
s_waitcnt expcnt(0) lgkmcnt(0)
ds_read_b32 v3, v1 offset:128 gds
s_waitcnt lgkmcnt(0)
global_store_dword v1, v3, s[6:7]
s_endpgm
"""


def test_gds_window_bounds():
    rng = np.random.default_rng(13)
    data, gds0 = _random(rng, 64), _random(rng, 256)
    co, _ = _build(WINDOW_BODY.format(m0="0x00400100"))     # size 0x100: lanes 32-63 fall outside
    with pytest.raises(EmulationError, match=r"window byte 0x17c is outside the window M0=0x00400100"):
        Emulator.load(co).launch("k", grid=1, block=64, args=[data, np.zeros(64, U)], gds=gds0.copy())

    gds, out = gds0.copy(), np.full(64, 0xDEADBEEF, U)        # not strict: dropped / read as 0
    Emulator.load(co, strict=False).launch("k", grid=1, block=64, args=[data, out], gds=gds)
    want = gds0.copy()
    want[16 + 32:16 + 64] = data[:32]
    assert np.array_equal(gds, want)
    assert np.array_equal(out, np.concatenate([data[:32], np.zeros(32, U)]))

    co, _ = _build(WINDOW_BODY.format(m0="0x00400200"))     # inside the window, beyond a 256-byte buffer
    with pytest.raises(EmulationError, match=r"GDS byte 0x[0-9a-f]+ is beyond the 256-byte GDS buffer"):
        Emulator.load(co).launch("k", grid=1, block=64, args=[data, np.zeros(64, U)], gds=gds0[:64].copy())


def test_gds_needs_a_buffer_and_a_target_with_gds():
    co, _ = _build(WINDOW_BODY.format(m0="0x00400200"))
    data = _random(np.random.default_rng(14), 64)
    with pytest.raises(EmulationError, match=r"`ds_write_b32 v1, v2 offset:128 gds`.*needs a GDS buffer"):
        Emulator.load(co).launch("k", grid=1, block=64, args=[data, np.zeros(64, U)])
    with pytest.raises(AssertionError, match="gds modifier is not supported"):
        assemble(kernel_source(WINDOW_BODY.format(m0="0x00400200"), args=ARGS, arch="gfx90a"), "gfx90a")
    # gfx90a code cannot carry gds (the assembler refuses it), so compile the parsed instruction directly
    ops = compile_ops([parse_instruction("ds_write_b32 v1, v2 gds")], load_arch("gfx90a"),
                      SimpleNamespace(float_denorm_mode_32=3), Limits(16, 0, 16), strict=True)
    with pytest.raises(Fault, match="'ds_write_b32'.*gfx90a has no GDS"):
        ops[0].fn(None)


def test_gds_on_a_target_without_gds_is_refused_at_launch():
    src = kernel_source("s_endpgm", arch="gfx90a")
    with pytest.raises(UserError, match="gfx90a has no GDS"):
        Emulator.load(assemble(src, "gfx90a")).launch("k", gds=np.zeros(4, U))


def test_gws_is_an_explicit_error():
    co, _ = _build("s_mov_b32 m0, 0\nv_mov_b32 v1, 0\ns_nop 0\nds_gws_init v1 gds\ns_endpgm")
    with pytest.raises(EmulationError, match=r"ds_gws_init.*global wave sync \(GWS\) is not modelled"):
        Emulator.load(co).launch("k", grid=1, block=64, args=[np.zeros(4, U), np.zeros(4, U)], gds=np.zeros(4, U))


# Two GDS writes; v2 (the first's data) is overwritten after expcnt(1), v4 (the second's) after expcnt(0).
EXP_BODY = PROLOGUE.format(m0="0x200") + """
ds_write_b32 v1, v2 gds
v_add_u32 v4, 1, v2
ds_write_b32 v1, v4 offset:256 gds
{wait1}
v_mov_b32 v2, 0
{wait2}
v_mov_b32 v4, 0
s_waitcnt lgkmcnt(0)
ds_read_b32 v3, v1 gds
ds_read_b32 v5, v1 offset:256 gds
s_waitcnt lgkmcnt(0)
global_store_dword v1, v3, s[6:7]
global_store_dword v1, v5, s[6:7] offset:256
s_endpgm
"""
SYMBOLIC = ("s_waitcnt expcnt(1)", "s_waitcnt expcnt(0)")
NUMERIC = ("s_waitcnt 0xcf1f", "s_waitcnt 0xcf0f")       # the same waits as simm16 (vmcnt, lgkmcnt at max)


def _run_exp(wait1, wait2):
    co, src = _build(EXP_BODY.format(wait1=wait1, wait2=wait2))
    data = _random(np.random.default_rng(15), 64)
    out = np.full(128, 0xDEADBEEF, U)
    Emulator.load(co, source=src).launch("k", grid=1, block=64, args=[data, out], gds=np.zeros(128, U))
    return data, out


@pytest.mark.parametrize("waits", [SYMBOLIC, NUMERIC], ids=["symbolic", "numeric"])
def test_expcnt_waits_let_the_locked_vgprs_be_overwritten(waits):
    data, out = _run_exp(*waits)
    assert np.array_equal(out[:64], data)
    assert np.array_equal(out[64:], data + U(1))


def test_overwriting_gds_data_before_expcnt_is_a_strict_error():
    with pytest.raises(EmulationError) as e:
        _run_exp("", SYMBOLIC[1])
    msg = str(e.value)
    assert "(.s line " in msg and "`v_mov_b32 v2, 0`" in msg
    assert "overwrites v2 while the GDS instruction" in msg and "`ds_write_b32 v1, v2 gds`" in msg
    assert "needs s_waitcnt expcnt(1) before this instruction" in msg
    with pytest.raises(EmulationError, match=r"`v_mov_b32 v4, 0`.*overwrites v4 .*`ds_write_b32 v1, v4 "
                                             r"offset:256 gds`.*s_waitcnt expcnt\(0\)"):
        _run_exp(SYMBOLIC[0], "")


def test_deleting_any_expcnt_wait_is_caught():
    good = EXP_BODY.format(wait1=SYMBOLIC[0], wait2=SYMBOLIC[1])
    lines = good.strip().splitlines()
    cut = [i for i, line in enumerate(lines) if "expcnt" in line]
    assert len(cut) == 2
    for i in cut:
        co, src = _build("\n".join(lines[:i] + lines[i + 1:]))
        with pytest.raises(EmulationError, match=r"strict: overwrites v[24] while the GDS instruction"):
            Emulator.load(co, source=src).launch("k", grid=1, block=64, args=[np.ones(64, U), np.zeros(128, U)],
                                                 gds=np.zeros(128, U))


@pytest.mark.parametrize("early, message", [
    ("v_lshlrev_b32 v1, 2, v0", r"overwrites v1 while the GDS instruction .*`ds_write_b32 v1, v4 offset:256 gds`"),
    ("s_mov_b64 exec, -1", r"writes exec_lo while the GDS instruction .*reads EXEC late.*expcnt\(0\)"),
])
def test_address_vgpr_and_exec_are_locked_too(early, message):
    with pytest.raises(EmulationError, match=message):
        _run_exp(early, SYMBOLIC[1])


def test_cycle_model_waits_for_expcnt():
    co, _ = _build(WINDOW_BODY.format(m0="0x00400200"))
    data = _random(np.random.default_rng(16), 64)
    result = Emulator.load(co).launch("k", grid=1, block=64, args=[data, np.zeros(64, U)], gds=np.zeros(256, U))
    assert result.cycle_estimate.waves[0].wait_memory >= 64 + 64     # the GDS write, then the read (as LDS)


# A GDS read returns through lgkmcnt; mixed with an LDS read, only lgkmcnt(0) proves either done
# (each kind retires in its own order; LLVM's SIInsertWaitcnts also waits 0 for mixed LDS/GDS events).
LGKM_BODY = PROLOGUE.format(m0="0x100") + """
ds_write_b32 v1, v2
ds_write_b32 v1, v2 gds
s_waitcnt expcnt(0) lgkmcnt(0)
ds_read_b32 v3, v1
ds_read_b32 v5, v1 gds
s_waitcnt lgkmcnt({n})
v_add_u32 v6, v3, v5
global_store_dword v1, v6, s[6:7]
s_endpgm
"""


def test_gds_returns_through_lgkmcnt():
    data = _random(np.random.default_rng(17), 64)
    out = np.full(64, 0xDEADBEEF, U)
    co, src = _build(LGKM_BODY.format(n=0), lds=256)
    Emulator.load(co, source=src).launch("k", grid=1, block=64, args=[data, out], gds=np.zeros(64, U))
    assert np.array_equal(out, data + data)
    co, src = _build(LGKM_BODY.format(n=1), lds=256)
    with pytest.raises(EmulationError, match=r"reads v3 while the load that writes it is still in flight: .*"
                                             r"`ds_read_b32 v3, v1`; it needs s_waitcnt lgkmcnt\(0\)"):
        Emulator.load(co, source=src).launch("k", grid=1, block=64, args=[data, out], gds=np.zeros(64, U))
