"""LDS DMA (emulator/lds/dma.py): buffer_load_* ... lds and global_load_lds_* write each active lane's
data to LDS at M0 + instruction offset + lane * (4 or 16); checked by reading the LDS back with
ds_read against a numpy model, plus the strict errors (no s_waitcnt vmcnt before a DS access, races
between waves) and the cycle model."""

import re

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.emulator.cycles import latency_table
from tensile_asm.errors import EmulationError
from tensile_asm.inspect.issue_model import IssueTable
from tensile_asm.isa.arch import load_arch

from conftest import have_llvm
from emulator_asm import assemble, build, kernel_source

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

POISON = (0xDEADBEEF, 0x0BADF00D, 0xFEEDFACE, 0xC0FFEE11)
ARGS = (("in", 8), ("out", 8), ("nrec", 4), ("m0", 4), ("soff", 4), ("step", 4), ("exec_lo", 4), ("window", 4))
FORMS = {"ubyte": (1, 1, np.uint8), "sbyte": (1, 1, np.int8), "ushort": (1, 2, np.uint16),
         "sshort": (1, 2, np.int16), "dword": (1, 4, np.uint32), "dwordx3": (3, 4, np.uint32),
         "dwordx4": (4, 4, np.uint32)}
M0_MASK = {"gfx90a": 0xFFFF, "gfx942": 0xFFFF, "gfx950": 0x3FFFF}

# Poison 4 KiB of LDS from `window`, load to LDS under a partial EXEC, read the 4 KiB back to `out`.
KERNEL = """
s_load_dwordx4 s[4:7], s[0:1], 0x0              // in, out
s_load_dwordx4 s[16:19], s[0:1], 0x10           // nrec, m0, soff, step
s_load_dwordx2 s[20:21], s[0:1], 0x20           // exec_lo, window
s_waitcnt lgkmcnt(0)
s_mov_b32 s8, s4                                // V#: base = in, stride 0, num_records = nrec
s_and_b32 s9, s5, 0xffff
s_mov_b32 s10, s16
s_mov_b32 s11, 0x00020000
v_lshlrev_b32 v1, 4, v0                         // tid * 16
v_add_u32 v9, s21, v1                           // LDS window address
v_mov_b32 v4, {p0}
v_mov_b32 v5, {p1}
v_mov_b32 v6, {p2}
v_mov_b32 v7, {p3}
ds_write_b128 v9, v[4:7]
ds_write_b128 v9, v[4:7] offset:1024
ds_write_b128 v9, v[4:7] offset:2048
ds_write_b128 v9, v[4:7] offset:3072
v_mul_lo_u32 v2, v0, s19                        // global offset: tid * step
v_mov_b32 v3, 0
s_waitcnt lgkmcnt(0)
s_mov_b32 m0, s17
s_mov_b32 exec_lo, s20
s_mov_b32 exec_hi, 0x7fffffff
{load}
s_mov_b64 exec, -1
s_waitcnt vmcnt(0)
ds_read_b128 v[4:7], v9
ds_read_b128 v[10:13], v9 offset:1024
s_waitcnt lgkmcnt(1)
global_store_dwordx4 v1, v[4:7], s[6:7]
s_waitcnt lgkmcnt(0)
global_store_dwordx4 v1, v[10:13], s[6:7] offset:1024
ds_read_b128 v[4:7], v9 offset:2048
ds_read_b128 v[10:13], v9 offset:3072
s_waitcnt lgkmcnt(1)
global_store_dwordx4 v1, v[4:7], s[6:7] offset:2048
s_waitcnt lgkmcnt(0)
global_store_dwordx4 v1, v[10:13], s[6:7] offset:3072
s_endpgm
"""


def _run(arch, load, words, nrec=0, m0=0, soff=0, step=4, exec_lo=0xFFFFFFFF, window=0, lds=4096,
         lockstep=True, strict=True):
    body = KERNEL.format(load=load, p0=POISON[0], p1=POISON[1], p2=POISON[2], p3=POISON[3])
    em = Emulator.load(build(body, arch=arch, args=ARGS, vgprs=16, sgprs=24, lds=lds), strict=strict)
    out = np.full(1024, 0x5A5A5A5A, np.uint32)
    em.launch("k", grid=1, block=64, args=[words, out, nrec, m0, soff, step, exec_lo, window], lockstep=lockstep)
    return out


def _model(words, form, lds_base, inst_offset, step, exec_mask, in_range, global_base=0):
    """The 4 KiB LDS window after the load: poison, then each active lane's extended dwords."""
    ndw, nbytes, dtype = FORMS[form]
    lds = np.tile(np.array(POISON, np.uint32), 256)
    raw = words.view(np.uint8)
    stride = 16 if ndw > 1 else 4
    for t in range(64):
        if not exec_mask >> t & 1:
            continue
        for k in range(ndw):
            off = t * step + inst_offset + 4 * k             # range-checked part of the address
            if in_range(off):
                at = global_base + off
                v = raw[at:at + nbytes].copy().view(dtype)[0]
                value = np.uint32(np.int64(v) & 0xFFFFFFFF)  # zero- or sign-extended to 32 bits
            else:
                value = 0
            i = (lds_base + inst_offset + t * stride) // 4 + k
            if i < len(lds):                                  # past the window: dropped
                lds[i] = value
    return lds


def _words(seed, n=2048):
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    w.view(np.uint8)[w.view(np.uint8) == 0] = 0x81                      # no zero bytes anywhere
    return w


ARCH_FORMS = [(a, f) for a in ("gfx90a", "gfx942", "gfx950") for f in ("ubyte", "sbyte", "ushort", "sshort", "dword")]
ARCH_FORMS += [("gfx950", "dwordx3"), ("gfx950", "dwordx4")]


@pytest.mark.parametrize("arch,form", ARCH_FORMS)
def test_buffer_load_lds(arch, form):
    ndw = FORMS[form][0]
    step = 16 if ndw > 1 else 4 if form == "dword" else 3
    rng = np.random.default_rng(hash((arch, form)) % 2 ** 32)
    nrec = int(rng.integers(40, 64 * step))                  # some lanes out of range: the LDS gets 0
    soff, inst_offset = 8, 12
    m0_base = 256 + 16 * int(rng.integers(0, 60))
    m0 = m0_base | 0xFFFC0000                                # bits above the LDS offset field are ignored
    exec_lo = 0xFFF7FFBF
    words = _words(len(form))
    load = f"buffer_load_{form} v2, s[8:11], s18 offen offset:{inst_offset} lds"
    out = _run(arch, load, words, nrec=nrec, m0=m0, soff=soff, step=step, exec_lo=exec_lo)
    assert m0 & M0_MASK[arch] == m0_base
    expect = _model(words, form, m0_base, inst_offset, step, exec_lo | 0x7FFFFFFF << 32,
                    lambda off: off < nrec, global_base=soff)
    np.testing.assert_array_equal(out, expect)


def test_buffer_lds_lockstep_and_wave_by_wave_agree():
    words = _words(7)
    load = "buffer_load_ushort v2, s[8:11], 0 offen lds"
    a = _run("gfx942", load, words, nrec=4096, m0=64, step=2, lockstep=True)
    b = _run("gfx942", load, words, nrec=4096, m0=64, step=2, lockstep=False)
    np.testing.assert_array_equal(a, b)


def test_buffer_lds_structured_index_and_no_vaddr():
    """idxen: the record index is range-checked; `off`: every lane loads the same soffset address."""
    words = _words(3)
    idx = _run("gfx90a", "s_or_b32 s9, s9, 0x100000\nbuffer_load_dword v0, s[8:11], 0 idxen offset:4 lds",
               words, nrec=50, m0=512)
    expect = _model(words, "dword", 512, 4, 16, 0xFFFFFFFF | 0x7FFFFFFF << 32, lambda off: (off - 4) // 16 < 50)
    np.testing.assert_array_equal(idx, expect)
    same = _run("gfx90a", "buffer_load_dword off, s[8:11], s18 offset:8 lds", words, nrec=64, m0=0, soff=20)
    expect = _model(words, "dword", 0, 8, 0, 0xFFFFFFFF | 0x7FFFFFFF << 32, lambda off: off < 64, global_base=20)
    np.testing.assert_array_equal(same, expect)


def test_gfx950_buffer_m0_has_18_bits():
    """M0[17:16] count on gfx950 (160 KiB of LDS): the data land 64 KiB up."""
    words = _words(11)
    out = _run("gfx950", "buffer_load_dword v2, s[8:11], 0 offen lds", words, nrec=4096, m0=0x10000 + 128,
               window=0x10000, lds=0x11000)
    np.testing.assert_array_equal(out, _model(words, "dword", 128, 0, 4, 0xFFFFFFFF | 0x7FFFFFFF << 32,
                                              lambda off: True))


GLOBAL_FORMS = [(a, f) for a in ("gfx90a", "gfx942", "gfx950") for f in ("ubyte", "sbyte", "ushort", "sshort", "dword")]
GLOBAL_FORMS += [("gfx950", "dwordx3"), ("gfx950", "dwordx4")]


def _global_lds(arch, form, operands):
    """gfx940+ have global_load_lds_<form>; gfx9 up to gfx90a spell it global_load_<form> ... lds."""
    return f"global_load_{form} {operands} lds" if arch == "gfx90a" else f"global_load_lds_{form} {operands}"


@pytest.mark.parametrize("arch,form", GLOBAL_FORMS)
def test_global_load_lds(arch, form):
    ndw = FORMS[form][0]
    step = 16 if ndw > 1 else 4 if form == "dword" else 2
    words = _words(len(form) + 100)
    exec_lo = 0xEFFFFF7E
    # saddr form, negative offset: applied to the global address and to the LDS address alike
    g0 = 64                                               # added to v2: the offset is negative
    out = _run(arch, f"v_add_u32 v2, {g0}, v2\n" + _global_lds(arch, form, "v2, s[4:5] offset:-16"), words,
               m0=0x400 | 3, step=step, exec_lo=exec_lo)
    mask = exec_lo | 0x7FFFFFFF << 32
    expect = _model(words, form, 0x400, -16, step, mask, lambda off: True, global_base=g0)   # M0[1:0] dropped
    np.testing.assert_array_equal(out, expect)
    vaddr = (f"v_add_co_u32 v2, vcc, s4, v2\nv_mov_b32 v3, s5\ns_nop 1\nv_addc_co_u32 v3, vcc, 0, v3, vcc\n"
             f"v_add_co_u32 v2, vcc, {g0}, v2\ns_nop 1\nv_addc_co_u32 v3, vcc, 0, v3, vcc\n"
             + _global_lds(arch, form, "v[2:3], off offset:32"))
    out = _run(arch, vaddr, words, m0=0x800 | 0xFFFC0000, step=step, exec_lo=exec_lo)   # M0[31:18] ignored
    expect = _model(words, form, 0x800, 32, step, mask, lambda off: True, global_base=g0)
    np.testing.assert_array_equal(out, expect)


def test_lds_address_outside_the_allocation_is_a_strict_fault():
    with pytest.raises(EmulationError, match=r"outside the workgroup's 4096 bytes of LDS"):
        _run("gfx90a", "buffer_load_dword v2, s[8:11], 0 offen offset:8 lds", _words(2), nrec=64, m0=4096 - 256)


def test_without_strict_mode_lanes_outside_the_lds_are_dropped():
    words = _words(4)
    out = _run("gfx90a", "buffer_load_dword v2, s[8:11], 0 offen offset:8 lds", words, nrec=4096,
               m0=4096 - 256, strict=False)
    expect = _model(words, "dword", 4096 - 256, 8, 4, 0xFFFFFFFF | 0x7FFFFFFF << 32, lambda off: True)
    np.testing.assert_array_equal(out, expect)             # lane 62's dword would be byte 4096


def test_unaligned_buffer_lds_address_is_refused():
    with pytest.raises(EmulationError, match="not dword aligned"):
        _run("gfx90a", "buffer_load_dword v2, s[8:11], 0 offen lds", _words(2), nrec=64, m0=0x102)


# -- strict: the LDS write completes with vmcnt ---------------------------------------------------

WAIT = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_waitcnt lgkmcnt(0)
v_lshlrev_b32 v1, 2, v0
s_mov_b32 m0, 0x100
s_nop 0
global_load_lds_dword v1, s[4:5]
global_load_dword v3, v1, s[4:5] offset:256
{wait}
{ds}
s_waitcnt vmcnt(0) lgkmcnt(0)
global_store_dword v1, v2, s[6:7]
s_endpgm
"""


def _wait_kernel(wait, ds="ds_read_b32 v2, v1 offset:0x104"):
    source = kernel_source(WAIT.format(wait=wait, ds=ds), arch="gfx942", args=(("in", 8), ("out", 8)), lds=1024)
    em = Emulator.load(assemble(source, "gfx942"), source=source)     # errors name .s lines
    words, out = _words(5, 256), np.full(64, 0x5A5A5A5A, np.uint32)
    em.launch("k", grid=1, block=64, args=[words, out])
    return words, out


@pytest.mark.parametrize("ds,access", [("ds_read_b32 v2, v1 offset:0x104", "reads"),
                                       ("ds_write_b32 v1, v1 offset:0x1fc", "writes")])
def test_ds_access_before_the_vmcnt_wait_is_an_error(ds, access):
    with pytest.raises(EmulationError) as e:
        _wait_kernel("", ds)
    msg = str(e.value)
    assert re.search(rf"`{ds.split()[0]}.*` {access} LDS byte 0x", msg), msg
    assert "global_load_lds_dword v1, s[4:5]" in msg and "needs s_waitcnt vmcnt(1) before this instruction" in msg
    assert ".s line" in msg
    with pytest.raises(EmulationError, match=r"vmcnt\(1\)"):
        _wait_kernel("s_waitcnt vmcnt(2)", ds)         # waits for nothing


def test_vmcnt_wait_makes_the_ds_read_legal():
    words, out = _wait_kernel("s_waitcnt vmcnt(1)")       # the older load (the DMA) has completed
    np.testing.assert_array_equal(out, np.append(words[1:64], 0))     # lane 63 reads past the region


def test_ds_access_outside_the_region_needs_no_wait():
    _, out = _wait_kernel("", "ds_read_b32 v2, v1 offset:0x200")   # 0x100 + 256 bytes: just past it
    np.testing.assert_array_equal(out, np.zeros(64, np.uint32))


# -- several waves ---------------------------------------------------------------------------------

WAVES = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_waitcnt lgkmcnt(0)
v_lshrrev_b32 v3, 6, v0                         // wave id
s_nop 0
v_readfirstlane_b32 s12, v3
{m0}
s_mov_b32 m0, s13
v_lshlrev_b32 v1, 2, v0
s_nop 0
global_load_lds_dword v1, s[4:5]
{sync}
{addr}
ds_read_b32 v4, v2
s_waitcnt lgkmcnt(0)
s_mov_b64 exec, -1
global_store_dword v1, v4, s[6:7]
s_endpgm
"""
PER_WAVE_M0 = "s_lshl_b32 s13, s12, 8                         // this wave's LDS slice"
NEXT_SLICE = "v_add_u32 v2, 0x100, v1\nv_and_b32 v2, 0x3ff, v2     // the next wave's slice"


def _waves(sync, m0=PER_WAVE_M0, addr=NEXT_SLICE, lockstep=True):
    em = Emulator.load(build(WAVES.format(sync=sync, m0=m0, addr=addr), arch="gfx942",
                             args=(("in", 8), ("out", 8)), lds=1024))
    words, out = _words(9, 256), np.full(256, 0x5A5A5A5A, np.uint32)
    em.launch("k", grid=1, block=256, args=[words, out], lockstep=lockstep)
    return words, out


@pytest.mark.parametrize("lockstep", [True, False])
def test_waves_exchange_slices_after_vmcnt_and_barrier(lockstep):
    words, out = _waves("s_waitcnt vmcnt(0)\ns_barrier", lockstep=lockstep)
    np.testing.assert_array_equal(out, words[(np.arange(256) + 64) % 256])


@pytest.mark.parametrize("lockstep", [True, False])
def test_dma_still_in_flight_at_the_barrier_races(lockstep):
    with pytest.raises(EmulationError, match=r"LDS race.*global_load_lds_dword.*in flight at the s_barrier.*"
                                             r"s_waitcnt vmcnt\)"):
        _waves("s_barrier\ns_waitcnt vmcnt(0)", lockstep=lockstep)


@pytest.mark.parametrize("lockstep", [True, False])
def test_dma_racing_another_waves_ds_read_without_barrier(lockstep):
    with pytest.raises(EmulationError, match=r"LDS race.*reads LDS byte.*ds_read_b32.*global_load_lds_dword.*"
                                             r"no s_barrier separates them"):
        _waves("s_waitcnt vmcnt(0)", lockstep=lockstep)


@pytest.mark.parametrize("lockstep", [True, False])
def test_in_flight_check_covers_every_wave_of_a_batch(lockstep):
    """Waves 1-3 read their own slice before waiting; wave 0 (the batch's leader) reads nothing. M0
    differs per wave, so a batch runs the load wave by wave and must keep every wave's region."""
    with pytest.raises(EmulationError, match=r"ds_read_b32.* reads LDS byte 0x100 while the LDS-DMA load.*"
                                             r"of wave 1 .*needs s_waitcnt vmcnt\(0\)"):
        _waves("v_cmp_ne_u32 vcc, 0, v3\ns_and_saveexec_b64 s[14:15], vcc", addr="v_mov_b32 v2, v1",
               lockstep=lockstep)


@pytest.mark.parametrize("lockstep", [True, False])
def test_waves_with_one_m0_write_the_same_lds(lockstep):
    """Wave-uniform M0 (a lockstep batch runs the load once for all waves): a write-write race."""
    with pytest.raises(EmulationError, match=r"LDS race.*writes LDS byte.*global_load_lds_dword"):
        _waves("s_waitcnt vmcnt(0)\ns_barrier", m0="s_mov_b32 s13, 0x40", lockstep=lockstep)


# -- cycle model -----------------------------------------------------------------------------------

def test_cycle_model_times_it_as_a_vector_memory_load():
    arch = load_arch("gfx942")
    c, lat = IssueTable.of(arch).cycles, latency_table(arch)
    head = "s_load_dwordx4 s[4:7], s[0:1], 0x0\ns_waitcnt lgkmcnt(0)\nv_lshlrev_b32 v1, 2, v0\ns_mov_b32 m0, 0\ns_nop 0\n"
    results = []
    for extra in ("", "global_load_lds_dword v1, s[4:5]\ns_waitcnt vmcnt(0)\n"):
        em = Emulator.load(build(head + extra + "s_endpgm", arch="gfx942", args=(("in", 8), ("out", 8)), lds=256))
        res = em.launch("k", grid=1, block=64, args=[_words(1, 64), np.zeros(4, np.uint32)])
        results.append(res)
    assert results[1].estimated_cycles - results[0].estimated_cycles == c["vmem_load"] + lat["vmem_load"]
    assert results[1].cycle_estimate.waves[0].issue["vmem_load"] == c["vmem_load"]
