"""The waitcnt pass (tensile_asm/isa/waitcnt_pass.py) on small hand-built streams: which s_waitcnt it
inserts, where, and that a second run changes nothing. The generated kernels' waits are checked on the
emulator by tests/test_mutations.py (deleting any one of them is caught)."""

import pytest

from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.counters import counter_limits
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.parser import parse_instruction
from tensile_asm.isa.waitcnt_pass import insert_waitcnt

ARCH = load_arch("gfx908")
LOAD, USE = "buffer_load_dword v{}, v0, s[8:11], 0 offen", "v_add_f32 v{0}, v{0}, v{0}"


def stream(*lines):
    return [LabelDef(t[:-1]) if t.endswith(":") else parse_instruction(t) for t in lines]


def run(*lines, arch=ARCH):
    """The stream after the pass, as text lines (comments dropped)."""
    items = stream(*lines)
    insert_waitcnt(items, arch)
    return [f"{x.name}:" if isinstance(x, LabelDef) else x.render().split("//")[0].strip() for x in items]


def waits_before(out, line):
    """The s_waitcnt directly before the first ``line`` of ``out`` (None: no wait there)."""
    i = out.index(line)
    return out[i - 1] if i and out[i - 1].startswith("s_waitcnt") else None


def test_use_of_a_vector_load_waits_for_it_and_only_it():
    out = run(LOAD.format(1), LOAD.format(2), LOAD.format(3), "v_mov_b32 v5, v1", "s_endpgm")
    assert waits_before(out, "v_mov_b32 v5, v1") == "s_waitcnt vmcnt(2)"
    assert sum(t.startswith("s_waitcnt") for t in out) == 1


def test_in_order_ds_reads_give_lgkmcnt_n():
    out = run("ds_read_b32 v1, v0", "ds_read_b32 v2, v0 offset:4", "ds_read_b32 v3, v0 offset:8",
              "s_waitcnt lgkmcnt(0)",                     # a stale wait: the pass replaces it
              "v_mov_b32 v5, v1", "s_endpgm")
    assert waits_before(out, "v_mov_b32 v5, v1") == "s_waitcnt lgkmcnt(2)"
    assert sum(t.startswith("s_waitcnt") for t in out) == 1


def test_smem_and_ds_mix():
    """A scalar load completes out of order: only lgkmcnt(0) proves it done; LDS reads still count in order
    among themselves (a pending scalar load cannot make lgkmcnt(N) pass with an older LDS read in flight)."""
    out = run("s_load_dwordx2 s[4:5], s[0:1], 0x0", "ds_read_b32 v1, v0", "ds_read_b32 v2, v0 offset:4",
              "v_mov_b32 v5, v1", "ds_read_b32 v3, v0 offset:8", "v_add_u32 v6, s4, v6", "s_endpgm")
    assert waits_before(out, "v_mov_b32 v5, v1") == "s_waitcnt lgkmcnt(1)"
    assert waits_before(out, "v_add_u32 v6, s4, v6") == "s_waitcnt lgkmcnt(0)"


def test_a_wait_covers_the_batch_the_code_after_it_uses():
    """Loads issued together and used together (a tile written to LDS) get one wait; the LDS reads of the
    next step, issued before the wait, are not waited for (they overlap this step's arithmetic)."""
    out = run(LOAD.format(1), LOAD.format(2), "ds_write_b32 v0, v1", "ds_write_b32 v0, v2 offset:4", "s_endpgm")
    assert waits_before(out, "ds_write_b32 v0, v1") == "s_waitcnt vmcnt(0)"
    assert sum(t.startswith("s_waitcnt") for t in out) == 1
    # PrefetchLocalRead's pattern: step 0 waits for its reads only (the next issue ends its reach); step 1's
    # reads were issued before that wait, step 2's after it: step 1 does not wait for step 2's.
    out = run("ds_read_b32 v1, v0", "ds_read_b32 v2, v0 offset:4", "v_mov_b32 v5, v1",
              "ds_read_b32 v3, v0 offset:8", "v_mov_b32 v6, v2", "v_mov_b32 v7, v3", "s_endpgm")
    assert waits_before(out, "v_mov_b32 v5, v1") == "s_waitcnt lgkmcnt(1)"
    assert waits_before(out, "v_mov_b32 v6, v2") == "s_waitcnt lgkmcnt(1)"
    assert waits_before(out, "v_mov_b32 v7, v3") == "s_waitcnt lgkmcnt(0)"


@pytest.mark.parametrize("smem", [False, True])
def test_lgkmcnt_saturates_at_the_maximum(smem):
    """Issuing with the counter at its maximum retires the oldest LDS operation first, unless a scalar load
    is outstanding too (then it is unknown which finished, and the wait names the largest useful count)."""
    top = counter_limits(ARCH).lgkmcnt
    head = ["s_load_dword s4, s[0:1], 0x0"] if smem else []
    reads = [f"ds_read_b32 v{10 + i}, v0 offset:{4 * i}" for i in range(top + 2)]
    out = run(*head, *reads, "v_mov_b32 v1, v10", "v_mov_b32 v2, v12", "s_endpgm")
    if smem:
        assert waits_before(out, "v_mov_b32 v1, v10") == f"s_waitcnt lgkmcnt({top - 1})"
    else:
        assert waits_before(out, "v_mov_b32 v1, v10") is None          # retired by the 16th and 17th issue
        assert waits_before(out, "v_mov_b32 v2, v12") == f"s_waitcnt lgkmcnt({top - 1})"


def test_vmcnt_saturates_at_the_maximum():
    top = counter_limits(ARCH).vmcnt
    loads = [f"buffer_load_dword v{10 + i}, v0, s[8:11], 0 offen offset:{4 * i}" for i in range(top + 1)]
    out = run(*loads, "v_mov_b32 v1, v10", "v_mov_b32 v2, v11", "s_endpgm")
    assert waits_before(out, "v_mov_b32 v1, v10") is None
    assert waits_before(out, "v_mov_b32 v2, v11") == f"s_waitcnt vmcnt({top - 1})"


def test_loop_back_edge_carries_a_pending_load():
    """v1 is loaded at the end of each iteration and read at the top of the next: the wait sits at the use,
    at the loop head (the first iteration needs none, the dataflow joins the back-edge in)."""
    out = run("v_mov_b32 v1, 0", "s_mov_b32 s6, 4", ".LLoop:", "v_add_f32 v2, v1, v2",
              "v_add_u32 v0, 4, v0", LOAD.format(1), "s_sub_u32 s6, s6, 1", "s_cmp_eq_u32 s6, 0",
              "s_cbranch_scc0 .LLoop", "s_endpgm")
    assert waits_before(out, "v_add_f32 v2, v1, v2") == "s_waitcnt vmcnt(0)"
    assert out.index("s_waitcnt vmcnt(0)") > out.index(".LLoop:")


def test_forward_branch_joins_pending_loads():
    out = run("s_cmp_eq_u32 s6, 0", "s_cbranch_scc1 .LSkip", LOAD.format(1), LOAD.format(2), ".LSkip:",
              "v_mov_b32 v5, v1", "s_endpgm")
    assert waits_before(out, "v_mov_b32 v5, v1") == "s_waitcnt vmcnt(1)"


def test_write_after_a_pending_load():
    """A VALU write of a register a load will still write waits (the late load would clobber it); a second
    load of the same kind does not (loads return in order)."""
    out = run(LOAD.format(1), "v_mov_b32 v1, 0", "s_endpgm")
    assert waits_before(out, "v_mov_b32 v1, 0") == "s_waitcnt vmcnt(0)"
    out = run(LOAD.format(1), "buffer_load_dword v1, v0, s[8:11], 0 offen offset:4", "s_endpgm")
    assert not any(t.startswith("s_waitcnt") for t in out)


def test_barrier_waits_for_lds_writes_not_reads():
    """The LDS race checker counts a write still in flight at a barrier into the interval after it; a read
    is recorded when issued, so only the writes must be done (here: older than one read)."""
    out = run("ds_write_b32 v0, v1", "ds_read_b32 v2, v0 offset:64", "s_barrier", "s_endpgm")
    assert waits_before(out, "s_barrier") == "s_waitcnt lgkmcnt(1)"
    out = run("ds_read_b32 v2, v0 offset:64", "s_barrier", "s_endpgm")
    assert waits_before(out, "s_barrier") is None


def test_barrier_waits_for_lds_dma():
    out = run("buffer_load_dword v0, s[8:11], 0 lds", LOAD.format(1), "s_barrier", "s_endpgm")
    assert waits_before(out, "s_barrier") == "s_waitcnt vmcnt(1)"


def test_gds_locks_its_vgprs_and_exec():
    out = run("ds_add_u32 v1, v2 gds", "v_mov_b32 v3, 0", "v_mov_b32 v2, 0", "s_endpgm")
    assert waits_before(out, "v_mov_b32 v3, 0") is None
    assert waits_before(out, "v_mov_b32 v2, 0") == "s_waitcnt expcnt(0)"
    out = run("ds_add_u32 v1, v2 gds", "s_mov_b64 exec, -1", "s_endpgm")
    assert waits_before(out, "s_mov_b64 exec, -1") == "s_waitcnt expcnt(0)"


def test_idempotent_on_a_module():
    lines = ["s_load_dwordx4 s[8:11], s[0:1], 0x0", "v_lshlrev_b32 v0, 2, v0", LOAD.format(1), LOAD.format(2),
             ".LLoop:", "ds_write_b32 v0, v1", "s_barrier", "ds_read_b32 v3, v0 offset:4", "v_mov_b32 v4, v3",
             LOAD.format(1), "s_cbranch_scc0 .LLoop", "s_endpgm"]
    m = Module("k").add(Module("part").add(stream(*lines[:4])), stream(*lines[4:]))
    first = insert_waitcnt(m, ARCH)
    text = m.render()
    assert first == 4 and insert_waitcnt(m, ARCH) == first and m.render() == text
