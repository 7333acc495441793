"""Private (scratch) memory: scratch_* (gfx942 architected flat scratch, gfx90a flat scratch) and MUBUF
through the private segment buffer (gfx90a), checked against a numpy model of each work-item's bytes;
HIP kernels compiled by clang-22 for both targets (data-indexed private arrays; a call with a stack
frame), run strict, against numpy/Python."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from emulator_asm import _CACHE, assemble, build, kernel_source
from tensile_asm.emulator.launch import Emulator
from tensile_asm.emulator.memory.short_d16 import zeroes_other_half
from tensile_asm.errors import EmulationError, UserError
from tensile_asm.isa.arch import load_arch
from tensile_asm.toolchain_paths import find_llvm_tool

U = np.uint32
SIZE = 64                      # private bytes per work-item in the hand-written kernels
BLOCK, GRID = 100, 2           # two waves per workgroup, the second one partial

# (store/load, suffix, data registers, + per-lane offset o = (tid & 3) * 4, constant offset, through an SGPR)
ACCESSES = [
    ("store", "dwordx3", "v[2:4]", False, 0, False),
    ("store", "dwordx4", "v[2:5]", True, 8, False),
    ("store", "byte_d16_hi", "v2", False, 40, True),
    ("store", "short", "v3", True, 42, False),
    ("store", "short_d16_hi", "v4", False, 58, False),
    ("store", "byte", "v5", False, 60, True),
    ("store", "dwordx2", "v[4:5]", True, 16, True),
    ("load", "dword", "v6", True, 8, False),
    ("load", "dwordx2", "v[8:9]", False, 4, False),
    ("load", "dwordx3", "v[12:14]", True, 12, False),
    ("load", "dwordx4", "v[16:19]", True, 8, True),
    ("load", "sbyte", "v20", False, 40, False),
    ("load", "ubyte", "v21", True, 9, True),
    ("load", "sshort", "v22", True, 42, False),
    ("load", "ushort", "v23", False, 58, True),
    ("load", "ubyte_d16", "v24", False, 60, False),
    ("load", "sbyte_d16_hi", "v25", True, 10, False),
    ("load", "short_d16", "v26", True, 42, True),
    ("load", "short_d16_hi", "v27", False, 58, False),
    ("load", "ubyte_d16_hi", "v28", False, 40, True),
    ("load", "sbyte_d16", "v29", False, 1, False),
]


def _render(kind, suffix, data, lane, const, via_s, mubuf):
    if mubuf:            # soffset s8 = 256: a wave-level offset, 256 / 64 = 4 bytes per lane
        vaddr = "v1" if lane else "off"
        soff, off = ("s8", const - 4) if via_s else ("0", const)
        mods = (" offen" if lane else "") + (f" offset:{off}" if off else "")
        ops = f"{data}, {vaddr}, s[0:3], {soff}"
        return f"buffer_{kind}_{suffix} {ops}{mods}"
    vaddr = "v1" if lane else "off"
    saddr, off = ("s4", const - 3) if via_s else ("off", const)      # s4 = 3
    ops = f"{data}, {vaddr}, {saddr}" if kind == "load" else f"{vaddr}, {data}, {saddr}"
    return f"scratch_{kind}_{suffix} {ops}" + (f" offset:{off}" if off else "")


def _kernel(mubuf):
    kp, wg = ("s[4:5]", "s6") if mubuf else ("s[0:1]", "s2")
    setup = "s_add_u32 s0, s0, s7\ns_addc_u32 s1, s1, 0\ns_movk_i32 s8, 0x100" if mubuf else "s_mov_b32 s4, 3"
    # a barrier between the stores and the loads: run wave by wave, wave 1 stores before wave 0 loads
    body = "\n".join(_render(*a, mubuf) for a in ACCESSES if a[0] == "store")
    body += "\ns_waitcnt vmcnt(0)\ns_barrier\n" + "\n".join(_render(*a, mubuf) for a in ACCESSES if a[0] == "load")
    return f"""
s_load_dwordx4 s[12:15], {kp}, 0x0
{setup}
s_mul_i32 s9, {wg}, {BLOCK}
v_add_u32 v30, s9, v0
v_mul_u32_u24 v31, 96, v30
v_mul_u32_u24 v30, 112, v30
v_and_b32 v1, 3, v0
v_lshlrev_b32 v1, 2, v1
s_waitcnt lgkmcnt(0)
global_load_dwordx4 v[2:5], v30, s[14:15]
global_load_dwordx4 v[6:9], v30, s[14:15] offset:16
global_load_dwordx4 v[10:13], v30, s[14:15] offset:32
global_load_dwordx4 v[14:17], v30, s[14:15] offset:48
global_load_dwordx4 v[18:21], v30, s[14:15] offset:64
global_load_dwordx4 v[22:25], v30, s[14:15] offset:80
global_load_dwordx4 v[26:29], v30, s[14:15] offset:96
s_waitcnt vmcnt(0)
{body}
s_waitcnt vmcnt(0)
global_store_dwordx4 v31, v[6:9], s[12:13]
global_store_dwordx4 v31, v[10:13], s[12:13] offset:16
global_store_dwordx4 v31, v[14:17], s[12:13] offset:32
global_store_dwordx4 v31, v[18:21], s[12:13] offset:48
global_store_dwordx4 v31, v[22:25], s[12:13] offset:64
global_store_dwordx4 v31, v[26:29], s[12:13] offset:80
s_endpgm
"""


def _reference(inp, keep):
    """Each work-item's private bytes as a numpy array, the accesses applied in order. ``keep``: d16 loads
    keep the other half of the VGPR (else zero it: SRAM-ECC targets, isa/<gfx>.yaml)."""
    n = len(inp)
    regs = {i: inp[:, i - 2].copy() for i in range(2, 30)}
    priv = np.zeros((n, SIZE), np.uint8)
    o = (np.arange(n) % BLOCK & 3) * 4
    rows = np.arange(n)[:, None]
    for kind, suffix, data, lane, const, _ in ACCESSES:
        first = int(data.strip("v[]").split(":")[0])
        addr = (o if lane else 0) + const
        if suffix.startswith("dword"):
            nd = {"dword": 1, "dwordx2": 2, "dwordx3": 3, "dwordx4": 4}[suffix]
            cols = addr[:, None] + np.arange(4 * nd) if lane else np.arange(const, const + 4 * nd)[None, :]
            if kind == "store":
                priv[rows, cols] = np.stack([regs[first + j] for j in range(nd)], 1).astype("<u4").view(np.uint8)
            else:
                vals = np.ascontiguousarray(priv[rows, cols]).view("<u4")
                for j in range(nd):
                    regs[first + j] = vals[:, j].copy()
            continue
        nbytes = 1 if "byte" in suffix else 2
        cols = (addr[:, None] if lane else np.full((n, 1), const)) + np.arange(nbytes)
        if kind == "store":
            v = regs[first] >> U(16) if suffix.endswith("_hi") else regs[first]
            priv[rows, cols] = v.astype("<u4").view(np.uint8).reshape(n, 4)[:, :nbytes]
            continue
        raw = np.ascontiguousarray(priv[rows, cols]).view("<u1" if nbytes == 1 else "<u2")[:, 0].astype(np.int64)
        if suffix.startswith("s"):
            raw = np.where(raw >= 1 << (8 * nbytes - 1), raw - (1 << 8 * nbytes), raw)
        if "d16" in suffix:
            half = (raw & 0xFFFF).astype(U)
            old = regs[first] if keep else np.zeros_like(half)
            regs[first] = (old & U(0xFFFF)) | half << U(16) if suffix.endswith("_hi") else (old & U(0xFFFF0000)) | half
        else:
            regs[first] = (raw & 0xFFFFFFFF).astype(U)
    return np.stack([regs[i] for i in range(6, 30)], 1)


def _private_kd(arch, mubuf):
    kd = f"  .amdhsa_private_segment_fixed_size {SIZE}\n"
    if arch != "gfx90a":
        return kd + "  .amdhsa_enable_private_segment 1\n"
    if mubuf:
        return kd + ("  .amdhsa_user_sgpr_private_segment_buffer 1\n"
                     "  .amdhsa_system_sgpr_private_segment_wavefront_offset 1\n")
    return kd + ("  .amdhsa_user_sgpr_flat_scratch_init 1\n"
                 "  .amdhsa_system_sgpr_private_segment_wavefront_offset 1\n")


@pytest.mark.parametrize("arch,mubuf,lockstep", [("gfx942", False, True), ("gfx90a", True, True),
                                                  ("gfx942", False, False), ("gfx90a", True, False)])
def test_private_accesses_every_width_and_form(arch, mubuf, lockstep):
    """lockstep: the two waves run as one batch (a row per lane of both); else wave by wave."""
    co = build(_kernel(mubuf), arch=arch, vgprs=32, sgprs=24, args=(("out", 8), ("inp", 8)),
               extra_kd=_private_kd(arch, mubuf))
    rng = np.random.default_rng(7)
    n = BLOCK * GRID
    inp = rng.integers(1, 1 << 32, (n, 28), dtype=np.uint64).astype(U)
    out = np.full((n, 24), 0xDEADBEEF, U)
    Emulator.load(co).launch("k", grid=GRID, block=BLOCK, args=[out, inp], lockstep=lockstep)
    np.testing.assert_array_equal(out, _reference(inp, keep=not zeroes_other_half(load_arch(arch))))


def _tiny(body, arch="gfx942", strict=True, kd=None):
    source = kernel_source(body, arch=arch, vgprs=8, sgprs=24, args=(("out", 8),),
                           extra_kd=kd if kd is not None else _private_kd(arch, False))
    co = assemble(source.replace(".amdhsa_next_free_vgpr 8\n", ".amdhsa_next_free_vgpr 12\n"), arch)   # a0..a3
    out = np.full(64, 0xDEADBEEF, U)
    Emulator.load(co, strict=strict).launch("k", grid=1, block=64, args=[out])
    return out


_STORE_OUT = """
s_load_dwordx2 s[12:13], s[0:1], 0x0
v_lshlrev_b32 v3, 2, v0
s_waitcnt vmcnt(0) lgkmcnt(0)
global_store_dword v3, v2, s[12:13]
s_endpgm
"""


def test_out_of_range_private_access_faults():
    with pytest.raises(EmulationError, match="outside the private segment of 64 bytes"):
        _tiny("v_lshlrev_b32 v1, 2, v0\nscratch_store_dword v1, v0, off offset:8\ns_endpgm")


def test_reading_unwritten_private_bytes_is_strict_error_else_zero():
    body = "v_mov_b32 v2, 5\nscratch_load_dword v2, off, off offset:32" + _STORE_OUT
    with pytest.raises(EmulationError, match="private bytes at per-lane offset 32..35 .* nothing has written"):
        _tiny(body)
    assert (_tiny(body, strict=False) == 0).all()


def test_private_memory_is_per_work_item():
    body = "scratch_store_dword off, v0, off offset:60\nscratch_load_dword v2, off, off offset:60" + _STORE_OUT
    np.testing.assert_array_equal(_tiny(body), np.arange(64, dtype=U))


def test_gfx90a_scratch_needs_flat_scratch_set():
    body = "scratch_store_dword v0, v0, off\ns_endpgm"
    with pytest.raises(EmulationError, match="reads flat_scratch_lo, which nothing has written"):
        _tiny(body, arch="gfx90a")
    with pytest.raises(EmulationError, match="FLAT_SCRATCH is 0x0; on gfx90a the kernel must set it"):
        _tiny(body, arch="gfx90a", strict=False)
    # the kernel's own set-up (as LLVM writes it: flat scratch init + wave offset) makes it work
    ok = ("s_add_u32 flat_scratch_lo, s2, s5\ns_addc_u32 flat_scratch_hi, s3, 0\n"
          "v_mov_b32 v1, 0\nscratch_store_dword v1, v0, off offset:4\nscratch_load_dword v2, v1, off offset:4\n"
          + _STORE_OUT)
    out = _tiny(ok, arch="gfx90a")
    np.testing.assert_array_equal(out, np.arange(64, dtype=U))


def test_mubuf_private_base_must_be_whole_lane_dwords():
    kd = _private_kd("gfx90a", True)
    body = "s_add_u32 s0, s0, 4\nbuffer_store_dword v0, off, s[0:3], 0\ns_endpgm"
    with pytest.raises(EmulationError, match="not whole per-lane dwords"):
        _tiny(body, arch="gfx90a", kd=kd)


def test_dynamic_stack_is_refused():
    with pytest.raises(UserError, match="dynamic stack"):
        _tiny("s_endpgm", kd=_private_kd("gfx942", False) + "  .amdhsa_uses_dynamic_stack 1\n")


# -- a HIP kernel with data-indexed private arrays (dword, short, byte elements) ---------------------

HIP = Path(__file__).parent / "data" / "private_arrays.hip"


def _compile_hip(arch, flat_scratch, source=HIP):
    extra = ["-Xclang", "-target-feature", "-Xclang", "+enable-flat-scratch"] if flat_scratch else []
    out = _CACHE / f"{source.stem}_{arch}{'_fs' if flat_scratch else ''}_{source.stat().st_mtime_ns}.co"
    if not out.is_file():
        _CACHE.mkdir(parents=True, exist_ok=True)
        cmd = [find_llvm_tool("clang"), "-x", "hip", "-nogpuinc", "-nogpulib", "--cuda-device-only",
               "--no-gpu-bundle-output", "-O2", f"--offload-arch={arch}", *extra, "-c", str(source), "-o", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    return out


def _hip_reference(idx, x):
    n, r = len(x), np.arange(len(x))
    a = (x[:, np.arange(96) & 15] * np.arange(1, 97, dtype=U)).astype(U)
    h = ((x[:, np.arange(80) & 15] >> (np.arange(80, dtype=U) & 7)) & 0xFFFF).astype(U)
    b = ((x[:, np.arange(72) & 15] >> (np.arange(72, dtype=U) & 15)) & 0xFF).astype(U)
    s = np.zeros(n, U)
    for i in range(16):
        k = idx[:, i]
        s = (s * U(3) + a[r, k % 96] + h[r, k % 80] * U(7) + b[r, k % 72]).astype(U)
        a[r, (k >> 8) % 96] = s
        h[r, (k >> 12) % 80] = s & 0xFFFF
        b[r, (k >> 16) % 72] = (s >> 3) & 0xFF
    return s ^ a[r, idx[:, 0] % 96] ^ (h[r, idx[:, 1] % 80] << U(8)) ^ b[r, idx[:, 2] % 72]


@pytest.mark.parametrize("arch,flat_scratch,expect", [("gfx90a", False, "buffer_store_dword"),
                                                      ("gfx90a", True, "scratch_store_dword"),
                                                      ("gfx942", False, "scratch_store_dword")])
def test_hip_private_arrays(arch, flat_scratch, expect):
    em = Emulator.load(_compile_hip(arch, flat_scratch))
    assert em.code.kernels["private_arrays"].descriptor.private_segment_fixed_size > 1000
    assert any(ins.opcode == expect for ins in em.instructions("private_arrays"))
    rng = np.random.default_rng(3)
    n = 64
    idx = rng.integers(0, 1 << 32, (n, 16), dtype=np.uint64).astype(U)
    x = rng.integers(0, 1 << 32, (n, 16), dtype=np.uint64).astype(U)
    out = np.full(n, 0xDEADBEEF, U)
    em.launch("private_arrays", grid=1, block=64, args=(idx, x, out))
    np.testing.assert_array_equal(out, _hip_reference(idx, x))


# -- a call that is not inlined, with its own private array in a stack frame (s32; wave-scaled on MUBUF) ----

CALL_HIP = Path(__file__).parent / "data" / "private_call.hip"


def _mix(inp, k, seed):
    t = [(inp[i & 15] * (i + 3) + seed) & 0xFFFFFFFF for i in range(40)]
    s = seed
    for i in range(8):
        s = (s * 5 + t[(k >> (3 * i)) % 40]) & 0xFFFFFFFF
        t[(s >> 4) % 40] ^= s
    return (s + t[k % 40]) & 0xFFFFFFFF


def _call_reference(idx, x):
    out = []
    for t in range(len(x)):
        inp, k = [int(v) for v in x[t]], [int(v) for v in idx[t]]
        a = [(inp[i & 15] + i) & 0xFFFFFFFF for i in range(24)]
        s = _mix(inp, k[0], 1)
        a[s % 24] = s
        s = _mix(inp, k[1] ^ a[k[2] % 24], s)
        out.append(s ^ a[k[3] % 24])
    return np.array(out, U)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_hip_call_with_stack_frame(arch):
    em = Emulator.load(_compile_hip(arch, False, CALL_HIP))
    assert sum(ins.opcode == "s_swappc_b64" for ins in em.instructions("calls")) == 2
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 1 << 32, (64, 4), dtype=np.uint64).astype(U)
    x = rng.integers(0, 1 << 32, (64, 16), dtype=np.uint64).astype(U)
    out = np.full(64, 0xDEADBEEF, U)
    em.launch("calls", grid=1, block=64, args=(idx, x, out))
    np.testing.assert_array_equal(out, _call_reference(idx, x))


# -- a generic (flat) pointer to a private array, passed to a function that is not inlined --------------

GENERIC_HIP = Path(__file__).parent / "data" / "private_generic.hip"


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_hip_flat_access_to_private_array(arch):
    em = Emulator.load(_compile_hip(arch, False, GENERIC_HIP))
    code = [ins.opcode for ins in em.instructions("gen")]
    assert "s_swappc_b64" in code
    rng = np.random.default_rng(11)
    idx = rng.integers(0, 1 << 32, 128, dtype=np.uint64).astype(U)
    x = rng.integers(0, 1 << 32, (64, 20), dtype=np.uint64).astype(U)
    out = np.full(64, 0xDEADBEEF, U)
    result = em.launch("gen", grid=1, block=64, args=(idx, x, out))
    assert result.opcode_counts.get("flat_store_dword") == 1
    a, r, k = x.astype(np.int64), np.arange(64), idx[:64].astype(np.int64)
    a[r, k % 20] += 3
    np.testing.assert_array_equal(out, ((a[r, (k >> 5) % 20] + a[r, idx[64:] % 20]) & 0xFFFFFFFF).astype(U))


def test_agpr_data_and_flat_aperture_on_gfx942():
    body = """
v_accvgpr_write_b32 a1, v0
s_mov_b64 s[4:5], src_private_base
v_mov_b32 v4, 0                                   // every lane its own offset 0
v_mov_b32 v5, s5
scratch_store_dword v4, a1, off offset:4
flat_load_dword v2, v[4:5] offset:4
s_waitcnt vmcnt(0) lgkmcnt(0)
v_add_u32 v2, 1, v2
flat_store_dword v[4:5], v2 offset:8
scratch_load_dword a2, v4, off offset:8
s_waitcnt vmcnt(0) lgkmcnt(0)
v_accvgpr_read_b32 v2, a2
""" + _STORE_OUT
    np.testing.assert_array_equal(_tiny(body), np.arange(64, dtype=U) + 1)


def test_flat_access_partly_private_is_refused():
    body = """
v_cmp_gt_u32 vcc, 32, v0
s_mov_b64 s[4:5], src_private_base
v_mov_b32 v4, 0
v_mov_b32 v5, s5
v_mov_b32 v6, 0x1000
v_cndmask_b32 v5, v6, v5, vcc
flat_store_dword v[4:5], v0
s_endpgm
"""
    with pytest.raises(EmulationError, match="some lanes in the private aperture and some outside"):
        _tiny(body)
