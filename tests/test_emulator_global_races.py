"""Strict mode's global-memory race check between workgroups (tensile_asm/emulator/strict/global_races.py):
hand-written kernels of 2-3 workgroups that store, load and atomically update overlapping or
disjoint ranges. Races must be reported (naming the instruction, both workgroups, the byte and the
buffer); disjoint ranges, atomics, the compare-and-swap retry loop clang emits for float atomics
(a plain or scalar load of the address, then global_atomic_cmpswap) and non-strict runs must not.
Next to each accepted idiom stands the race it must still catch."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="needs llvm-mc/ld.lld")

GROUPS = 3
HEAD = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_waitcnt lgkmcnt(0)
v_lshlrev_b32 v1, 2, v0
global_load_dword v2, v1, s[4:5]
s_waitcnt vmcnt(0)
v_add_u32 v2, s2, v2
"""


def _at(reg: str, stride: int, first: int = 0) -> str:
    """v<reg> = lane*4 + (workgroup id + first) * stride bytes."""
    return f"s_add_u32 s8, s2, {first}\ns_mul_i32 s8, s8, {stride}\nv_add_u32 {reg}, s8, v1"


def _run(body: str, strict: bool = True, out_words: int = 64 * (GROUPS + 1)):
    rng = np.random.default_rng(7)
    x = rng.integers(1, 1 << 30, 64, dtype=np.uint32)
    out = np.full(out_words, 0xDEADBEEF, np.uint32)
    co = build(HEAD + body + "\ns_endpgm", args=(("x", 8), ("out", 8)))
    Emulator.load(co, strict=strict).launch("k", grid=GROUPS, block=64, args=[x, out])
    return x, out


STORE = _at("v3", 256) + "\nglobal_store_dword v3, v2, s[6:7]"


def test_disjoint_stores_are_fine():
    x, out = _run(STORE)
    want = np.concatenate([x + np.uint32(g) for g in range(GROUPS)] + [np.full(64, 0xDEADBEEF, np.uint32)])
    assert np.array_equal(out, want)


def test_write_write_race_is_reported_with_everything_needed_to_fix_it():
    body = _at("v3", 128) + "\nglobal_store_dword v3, v2, s[6:7]"       # halves overlap
    with pytest.raises(EmulationError) as e:
        _run(body)
    msg = str(e.value)
    assert "global_store_dword" in msg and "at 0x" in msg
    assert "global-memory race" in msg
    assert "workgroup (1, 0, 0) stores to the dword" in msg and "workgroup (0, 0, 0) stored to" in msg
    assert "'out' + 0x80" in msg
    assert "use an atomic, or make each workgroup write its own range" in msg


def test_non_strict_mode_is_silent():
    body = _at("v3", 128) + "\nglobal_store_dword v3, v2, s[6:7]"
    x, out = _run(body, strict=False)
    assert np.array_equal(out[32 * GROUPS:32 * GROUPS + 32], x[32:] + np.uint32(GROUPS - 1))


def test_read_after_write_is_reported():
    # every workgroup stores its own range, then loads workgroup 0's
    body = STORE + "\nglobal_load_dword v4, v1, s[6:7]\ns_waitcnt vmcnt(0)"
    with pytest.raises(EmulationError) as e:
        _run(body)
    msg = str(e.value)
    assert "global_load_dword v4" in msg
    assert "workgroup (1, 0, 0) loads the dword" in msg and "which workgroup (0, 0, 0) stored to" in msg


def test_write_after_read_is_reported():
    # every workgroup loads range 1, then stores its own range: workgroup 1 overwrites what 0 loaded
    body = (_at("v5", 0, 1) + "\nv_add_u32 v5, 0x100, v1\nglobal_load_dword v4, v5, s[6:7]\ns_waitcnt vmcnt(0)\n"
            + STORE)
    with pytest.raises(EmulationError) as e:
        _run(body)
    msg = str(e.value)
    assert "workgroup (1, 0, 0) stores to" in msg and "workgroup (0, 0, 0) loaded (without an atomic)" in msg
    assert "'out' + 0x100" in msg


def test_one_workgroup_may_reread_and_rewrite_its_own_range():
    body = STORE + "\nglobal_load_dword v4, v3, s[6:7]\ns_waitcnt vmcnt(0)\nv_add_u32 v4, 1, v4\n" \
                   "global_store_dword v3, v4, s[6:7]"
    x, out = _run(body)
    assert np.array_equal(out[:64 * GROUPS], np.concatenate([x + np.uint32(g + 1) for g in range(GROUPS)]))


def test_atomics_on_one_address_are_fine():
    body = "global_atomic_add v1, v2, s[6:7]\ns_waitcnt vmcnt(0)"
    x, out = _run(body, out_words=64)
    total = sum(x.astype(np.uint64) + g for g in range(GROUPS)) + 0xDEADBEEF
    assert np.array_equal(out, (total & 0xFFFFFFFF).astype(np.uint32))


def test_mixing_a_plain_store_and_atomics_is_reported():
    # workgroup 0 stores plainly, the others add atomically to the same dwords
    body = """s_cmp_eq_u32 s2, 0
s_cbranch_scc0 .Latomic
global_store_dword v1, v2, s[6:7]
s_branch .Ldone
.Latomic:
global_atomic_add v1, v2, s[6:7]
.Ldone:
s_waitcnt vmcnt(0)"""
    with pytest.raises(EmulationError) as e:
        _run(body, out_words=64)
    msg = str(e.value)
    assert "global_atomic_add" in msg and "atomically updates" in msg
    assert "workgroup (0, 0, 0) stored to (without an atomic)" in msg


def test_neighbouring_bytes_of_one_dword_are_fine_and_one_byte_is_a_race():
    # workgroup g stores byte g of dword `lane` (one dword shared by every workgroup, byte by byte)
    fine = "v_add_u32 v3, s2, v1\nglobal_store_byte v3, v2, s[6:7]"
    x, out = _run(fine, out_words=64)
    bytes_ = out.view(np.uint8).reshape(64, 4)
    for g in range(GROUPS):
        assert np.array_equal(bytes_[:, g], ((x + np.uint32(g)) & 0xFF).astype(np.uint8))
    assert np.all(bytes_[:, GROUPS:] == 0xDE)
    with pytest.raises(EmulationError) as e:
        _run("global_store_byte v1, v2, s[6:7] offset:1", out_words=64)
    assert "stores to the byte at" in str(e.value) and "'out' + 0x1" in str(e.value)


def test_misaligned_dwords_of_neighbouring_workgroups_share_dwords_byte_by_byte():
    # workgroup g stores dword `lane` at byte 2 + 256*g + 4*lane: two 16-bit values straddling two dwords, as
    # a 16-bit matrix with an odd leading dimension stored two elements at a time; the workgroups' ranges
    # share a dword but no byte. One byte of overlap (a stride of 255) is a race.
    x, out = _run(_at("v3", 256) + "\nglobal_store_dword v3, v2, s[6:7] offset:2")
    got = out.view(np.uint8)
    for g in range(GROUPS):
        assert np.array_equal(got[256 * g + 2:256 * g + 258], (x + np.uint32(g)).view(np.uint8))
    with pytest.raises(EmulationError) as e:
        _run(_at("v3", 255) + "\nglobal_store_dword v3, v2, s[6:7] offset:2")
    assert "stores to the byte at" in str(e.value)


def test_scalar_stores_race_too():
    body = "v_readfirstlane_b32 s9, v2\ns_store_dword s9, s[6:7], 0x10\ns_waitcnt lgkmcnt(0)"
    with pytest.raises(EmulationError) as e:
        _run(body)
    assert "s_store_dword" in str(e.value) and "'out' + 0x10" in str(e.value)


def test_a_plain_store_after_atomics_of_several_workgroups_is_reported():
    body = """s_cmp_lt_u32 s2, 2
s_cbranch_scc0 .Lplain
global_atomic_add v1, v2, s[6:7]
s_branch .Ldone
.Lplain:
global_store_dword v1, v2, s[6:7]
.Ldone:
s_waitcnt vmcnt(0)"""
    with pytest.raises(EmulationError) as e:
        _run(body, out_words=64)
    assert "workgroup (2, 0, 0) stores to" in str(e.value) and "several other workgroups atomically updated" \
        in str(e.value)


def test_buffer_stores_are_checked():
    body = """s_mov_b32 s12, s6
s_and_b32 s13, s7, 0xffff
s_mov_b32 s14, 0x1000
s_mov_b32 s15, 0
s_nop 4
buffer_store_dword v2, v1, s[12:15], 0 offen offset:8"""
    with pytest.raises(EmulationError) as e:
        _run(body)
    assert "buffer_store_dword" in str(e.value) and "'out' + 0x8" in str(e.value)


# -- the compare-and-swap retry loop (clang's float atomicAdd/atomicMax; hip_atomic_* fixtures) -------------
def _cas_add(guess: str) -> str:
    """out[v3] += v2 by clang's loop: ``guess`` loads the address into v4 (a plain or scalar load), then
    global_atomic_cmpswap (new, expected) retries with the value it returns until a lane's swap took."""
    return guess + """
s_mov_b64 s[10:11], 0
.Lretry:
v_add_u32 v6, v4, v2
v_mov_b32 v7, v4
global_atomic_cmpswap v4, v3, v[6:7], s[6:7] glc
s_waitcnt vmcnt(0)
v_cmp_eq_u32 vcc, v4, v7
s_or_b64 s[10:11], vcc, s[10:11]
s_andn2_b64 exec, exec, s[10:11]
s_cbranch_execnz .Lretry
s_or_b64 exec, exec, s[10:11]"""


VECTOR_GUESS = "v_mov_b32 v3, v1\nglobal_load_dword v4, v3, s[6:7]\ns_waitcnt vmcnt(0)"       # out[lane]
SCALAR_GUESS = "v_mov_b32 v3, 0\ns_load_dword s12, s[6:7], 0x0\ns_waitcnt lgkmcnt(0)\nv_mov_b32 v4, s12"  # out[0]


def _sum(x):
    """0xDEADBEEF + the sum of every workgroup's x + g, in uint32 arithmetic."""
    return (0xDEADBEEF + sum(int(v) + g for g in range(GROUPS) for v in x)) & 0xFFFFFFFF


def test_cas_loop_after_a_plain_load_of_the_address_is_fine():
    x, out = _run(_cas_add(VECTOR_GUESS), out_words=64)                 # every workgroup adds x + g to out[lane]
    assert np.array_equal(out, x * np.uint32(GROUPS) + np.uint32(0xDEADBEEF + sum(range(GROUPS))))


def test_cas_loop_after_a_scalar_load_of_the_address_is_fine():
    # every lane of every workgroup adds into out[0]: the scalar guess is stale for all but one lane a round
    x, out = _run(_cas_add(SCALAR_GUESS), out_words=64)
    assert out[0] == _sum(x) and np.all(out[1:] == 0xDEADBEEF)


def _first_group_stores(then: str) -> str:
    """Workgroup 0 stores x + g to out[lane] plainly; the others run ``then``."""
    return f"""s_cmp_eq_u32 s2, 0
s_cbranch_scc0 .Lothers
global_store_dword v1, v2, s[6:7]
s_waitcnt vmcnt(0)
s_branch .Ldone
.Lothers:
{then}
.Ldone:"""


@pytest.mark.parametrize("guess,op", [(VECTOR_GUESS, "global_load_dword v4"), (SCALAR_GUESS, "s_load_dword s12")],
                         ids=["vector", "scalar"])
def test_cas_loop_on_a_dword_another_workgroup_stored_plainly_is_reported(guess, op):
    with pytest.raises(EmulationError) as e:
        _run(_first_group_stores(_cas_add(guess)), out_words=64)
    msg = str(e.value)
    assert op in msg and "workgroup (1, 0, 0) loads the dword" in msg
    assert "which workgroup (0, 0, 0) stored to earlier" in msg and "'out' + 0x0" in msg


def test_a_plain_store_after_cas_loops_of_other_workgroups_is_reported():
    body = f"""s_cmp_lt_u32 s2, 2
s_cbranch_scc0 .Lplain
{_cas_add(VECTOR_GUESS)}
s_branch .Ldone
.Lplain:
global_store_dword v1, v2, s[6:7]
.Ldone:
s_waitcnt vmcnt(0)"""
    with pytest.raises(EmulationError) as e:
        _run(body, out_words=64)
    msg = str(e.value)
    assert "global_store_dword" in msg and "workgroup (2, 0, 0) stores to the dword" in msg
    assert "several other workgroups atomically updated" in msg


def test_a_scalar_load_of_a_dword_another_workgroup_stored_is_reported():
    body = _first_group_stores("s_load_dword s12, s[6:7], 0x8\ns_waitcnt lgkmcnt(0)")
    with pytest.raises(EmulationError) as e:
        _run(body, out_words=64)
    assert "s_load_dword" in str(e.value) and "loads the dword" in str(e.value) and "'out' + 0x8" in str(e.value)


def _groups_split(first: str, others: str) -> str:
    return f"""s_cmp_eq_u32 s2, 0
s_cbranch_scc0 .Lothers
{first}
s_branch .Ldone
.Lothers:
{others}
.Ldone:
s_waitcnt vmcnt(0)"""


ATOMIC_ADD = "global_atomic_add v1, v2, s[6:7]"


@pytest.mark.parametrize("load", ["global_load_dword v7, v1, s[6:7]", "global_load_ubyte v7, v1, s[6:7] offset:3",
                                  "global_load_ushort v7, v1, s[6:7] offset:2"], ids=["dword", "byte", "short"])
def test_aligned_loads_and_atomics_of_other_workgroups_are_fine_either_way(load):
    """A naturally aligned load is single-copy atomic: before or after another workgroup's atomics."""
    x, out = _run(_groups_split(ATOMIC_ADD, load), out_words=64)          # workgroup 0 adds x, 1 and 2 load
    assert np.array_equal(out, x + np.uint32(0xDEADBEEF))
    x, out = _run(_groups_split(load, ATOMIC_ADD), out_words=64)          # 0 loads, 1 and 2 add x + 1, x + 2
    assert np.array_equal(out, x * np.uint32(2) + np.uint32(0xDEADBEEF + 3))


@pytest.mark.parametrize("load", ["global_load_dword v7, v1, s[6:7] offset:2",
                                  "global_load_ushort v7, v1, s[6:7] offset:1"], ids=["dword", "short"])
def test_a_misaligned_load_and_atomics_of_another_workgroup_are_reported_either_way(load):
    """A misaligned load may combine bytes of two updates: not an atomic load, a race with atomics."""
    with pytest.raises(EmulationError) as e:
        _run(_groups_split(ATOMIC_ADD, load), out_words=65)
    msg = str(e.value)
    assert load.split(",")[0] in msg and "loads (misaligned, so not single-copy atomic)" in msg
    assert "which workgroup (0, 0, 0) atomically updated" in msg
    with pytest.raises(EmulationError) as e:
        _run(_groups_split(load, ATOMIC_ADD), out_words=65)
    msg = str(e.value)
    assert "global_atomic_add" in msg and "workgroup (1, 0, 0) atomically updates" in msg
    assert "workgroup (0, 0, 0) loaded with a misaligned load" in msg


def test_a_byte_store_into_a_dword_other_workgroups_update_atomically_is_reported():
    with pytest.raises(EmulationError) as e:
        _run(_groups_split(ATOMIC_ADD, "global_store_byte v1, v2, s[6:7] offset:1"), out_words=64)
    msg = str(e.value)
    assert "global_store_byte" in msg and "stores to the byte" in msg and "'out' + 0x1" in msg
    assert "workgroup (0, 0, 0) atomically updated" in msg
