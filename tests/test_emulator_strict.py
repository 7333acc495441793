"""Strict mode: each hazard is reported with where it happened and what caused it; the same kernels
run without complaint when the hazard is removed (or strict mode is off)."""

import re

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build
from test_emulator_run import LDS_SHUFFLE, VADD, VADD_ARGS

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


def _vadd(body, strict=True):
    em = Emulator.load(build(body, args=VADD_ARGS, vgprs=8, sgprs=16), strict=strict)
    n = 300
    a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    c = np.full(n, np.nan, np.float32)
    return em, (lambda: em.launch("k", grid=2, block=256, args=[a, b, c, n])), c


def _address(em, opcode_text):
    return next(i.address for i in em.instructions("k") if i.render().startswith(opcode_text))


def test_missing_vmcnt_names_reader_register_and_load_in_flight():
    em, run, _ = _vadd(VADD.replace("s_waitcnt vmcnt(0)\n", ""))
    with pytest.raises(EmulationError) as info:
        run()
    msg = str(info.value)
    add = _address(em, "v_add_f32")
    load = _address(em, "global_load_dword v3")
    assert f"0x{add:x} `v_add_f32 v3, v3, v4`" in msg
    assert "reads v3 while the load that writes it is still in flight" in msg
    assert f"0x{load:x} `global_load_dword v3, v2, s[4:5]`" in msg
    assert "s_waitcnt vmcnt(1)" in msg              # one newer load may still be outstanding


def test_vmcnt_retires_oldest_first():
    em, run, _ = _vadd(VADD.replace("s_waitcnt vmcnt(0)", "s_waitcnt vmcnt(1)"))
    with pytest.raises(EmulationError, match=r"reads v4 .*global_load_dword v4.*vmcnt\(0\)"):
        run()
    # waiting for the older load only is enough when only its result is used
    ok = VADD.replace("s_waitcnt vmcnt(0)\nv_add_f32 v3, v3, v4",
                      "s_waitcnt vmcnt(1)\nv_add_f32 v5, v3, v3\ns_waitcnt vmcnt(0)\nv_add_f32 v3, v3, v4")
    _, run_ok, c = _vadd(ok)
    run_ok()
    np.testing.assert_array_equal(c, np.arange(300, dtype=np.float32) + 1)


def test_scalar_loads_need_lgkmcnt_zero():
    body = """
    s_load_dwordx2 s[4:5], s[0:1], 0x0
    s_load_dword s6, s[0:1], 0x8
    v_lshlrev_b32 v1, 2, v0
    ds_read_b32 v2, v1
    s_waitcnt lgkmcnt(1)
    v_mov_b32 v3, s6
    s_endpgm
    """
    em = Emulator.load(build(body, args=(("out", 8), ("n", 4)), vgprs=4, sgprs=8, lds=256))
    with pytest.raises(EmulationError, match=r"reads s6 .*s_load_dword s6.*lgkmcnt\(0\) \(scalar loads return out of order\)"):
        em.launch("k", grid=1, block=64, args=[np.zeros(1), 0])


def test_lds_reads_retire_in_order():
    body = """
    v_lshlrev_b32 v1, 2, v0
    v_mov_b32 v2, 1.0
    ds_write_b32 v1, v2
    ds_read_b32 v3, v1
    ds_read_b32 v4, v1 offset:4
    s_waitcnt lgkmcnt(1)
    v_add_f32 v5, v3, v3
    v_add_f32 v5, v4, v4
    s_endpgm
    """
    em = Emulator.load(build(body, args=(("x", 4),), vgprs=8, sgprs=8, lds=512))
    with pytest.raises(EmulationError, match=r"v_add_f32 v5, v4, v4.*reads v4 .*ds_read_b32 v4, v1 offset:4.*lgkmcnt\(0\)"):
        em.launch("k", grid=1, block=64, args=[0])


def _lds(body, strict=True):
    em = Emulator.load(build(body, args=(("in", 8), ("out", 8)), vgprs=8, sgprs=8, lds=1024), strict=strict)
    x = np.arange(256, dtype=np.float32)
    out = np.full(256, np.nan, np.float32)
    return em, (lambda: em.launch("k", grid=1, block=256, args=[x, out])), out


def test_lds_exchange_without_barrier_is_a_race():
    em, run, _ = _lds(LDS_SHUFFLE.replace("s_barrier\n", ""))
    with pytest.raises(EmulationError) as info:
        run()
    msg = str(info.value)
    assert "LDS race in workgroup (0, 0, 0)" in msg and "no s_barrier separates them" in msg
    m = re.search(r"wave (\d) reads LDS byte 0x([0-9a-f]+) at 0x([0-9a-f]+) `(ds_read_b32[^`]*)` while wave (\d) "
                  r"writes it at 0x([0-9a-f]+) `(ds_write_b32[^`]*)`", msg)
    assert m, msg
    assert m.group(1) != m.group(5)
    assert int(m.group(3), 16) in [i.address for i in em.instructions("k") if i.opcode == "ds_read_b32"]
    # without strict checks the same kernel runs (its result is whatever the wave order gave)
    _, loose, _ = _lds(LDS_SHUFFLE.replace("s_barrier\n", ""), strict=False)
    loose()


def test_lds_write_not_waited_for_before_the_barrier_is_a_race():
    _, run, _ = _lds(LDS_SHUFFLE.replace("ds_write_b32 v1, v2\ns_waitcnt lgkmcnt(0)\n", "ds_write_b32 v1, v2\n"))
    with pytest.raises(EmulationError, match="still in flight at the s_barrier before"):
        run()


def test_overwriting_lds_another_wave_reads_without_barrier_is_a_race():
    body = LDS_SHUFFLE.replace("global_store_dword v1, v5, s[6:7]",
                               "ds_write_b32 v1, v5\nglobal_store_dword v1, v5, s[6:7]")
    _, run, _ = _lds(body)
    with pytest.raises(EmulationError, match=r"LDS race.*(reads|writes) LDS byte"):
        run()
    fixed = body.replace("ds_write_b32 v1, v5\n", "s_barrier\nds_write_b32 v1, v5\n")
    _, run, out = _lds(fixed)
    run()
    assert not np.isnan(out).any()


def test_unknown_instruction_is_reported_by_name_and_address():
    em, run, _ = _vadd(VADD.replace("v_add_f32 v3, v3, v4", "v_screen_partition_4se_b32 v3, v4"))
    address = _address(em, "v_screen_partition_4se_b32")
    with pytest.raises(EmulationError, match=f"at 0x{address:x} `v_screen_partition_4se_b32 v3, v4`.*does not implement 'v_screen_partition_4se_b32'"):
        run()


def test_reading_a_register_nothing_wrote():
    _, run, _ = _vadd(VADD.replace("v_add_f32 v3, v3, v4", "v_add_f32 v3, v3, v6"))
    with pytest.raises(EmulationError, match="reads v6, which nothing has written since the wave started"):
        run()


def test_register_beyond_the_descriptor_grant():
    em = Emulator.load(build("v_mov_b32 v40, 0\ns_endpgm", args=(("x", 4),), vgprs=8, sgprs=8))
    with pytest.raises(EmulationError, match=r"uses v40 but the kernel descriptor grants 8 VGPRs"):
        em.launch("k", grid=1, block=64, args=[0])


def test_lds_access_outside_the_allocation():
    body = "v_lshlrev_b32 v1, 2, v0\nds_read_b32 v2, v1 offset:384\ns_endpgm"
    em = Emulator.load(build(body, args=(("x", 4),), vgprs=4, sgprs=8, lds=512))
    with pytest.raises(EmulationError, match="outside the workgroup's 512 bytes of LDS"):
        em.launch("k", grid=1, block=64, args=[0])
    em.launch("k", grid=1, block=64, args=[0], lds_bytes=1024)   # a larger dynamic allocation is fine


MAD_LOW_HALF = """v_cvt_u32_f32 v3, v3
v_cvt_u32_f32 v4, v4
v_mad_u64_u32 v[6:7], s[14:15], v3, v3, v[4:5]
v_cvt_f32_u32 v3, v6"""


def test_mad_u64_u32_with_an_unwritten_high_addend_gives_its_low_half():
    """LLVM's 32-bit multiply-add: v_mad_u64_u32 with the addend's high half (v5) never written. The low
    half of the result (i*i + 1, in v6) is defined and no fault; the result's high half (v7) is not, and reading
    it is."""
    _, run, c = _vadd(VADD.replace("v_add_f32 v3, v3, v4", MAD_LOW_HALF))
    run()
    i = np.arange(300, dtype=np.float64)
    assert np.array_equal(c, (i * i + 1).astype(np.float32))
    _, run, _ = _vadd(VADD.replace("v_add_f32 v3, v3, v4", MAD_LOW_HALF + "\nv_mov_b32 v3, v7"))
    with pytest.raises(EmulationError, match="reads v7, which nothing has written since the wave started"):
        run()
