"""Sparse MFMAs (v_smfmac_*) of gfx942/gfx950 against numpy on random 4:2-sparse A.

The reference starts from dense matrices: A (M x K) with 2 random non-zeros in each group of 4
consecutive k, B (K x N), C (M x N); D = A @ B + C in float64 (int64 for i8). The registers are
filled here from layouts written as matrix entry -> (register item, lane), independently of the
emulator's lane -> entry tables (see tensile_asm/emulator/matrix/sparse.py for the sources):
A row i, dense k in lane group g = k // kpl (kpl = K*M/64), its group's two non-zeros stored in
ascending k order with their positions in the index VGPR; B like a dense MFMA, split into
runs of kpl/n values (n = 2 for gfx950's 8-register B); C/D the dense MFMA layout.

Inputs are bounded away from zero and from large magnitudes, so every float64 sum is exact: the
only rounding, to f32 once, is the same in the reference, and results must match bit for bit.
The index VGPR holds a different random index set in every unselected set, so selecting the
wrong set (cbsz/abid) changes the result.
"""

import re

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import assemble, kernel_source
from test_emulator_mfma import d_place

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

GFX942 = ["v_smfmac_f32_16x16x32_f16", "v_smfmac_f32_32x32x16_f16", "v_smfmac_f32_16x16x32_bf16",
          "v_smfmac_f32_32x32x16_bf16", "v_smfmac_i32_16x16x64_i8", "v_smfmac_i32_32x32x32_i8",
          "v_smfmac_f32_16x16x64_fp8_fp8", "v_smfmac_f32_16x16x64_fp8_bf8", "v_smfmac_f32_16x16x64_bf8_fp8",
          "v_smfmac_f32_16x16x64_bf8_bf8", "v_smfmac_f32_32x32x32_fp8_fp8", "v_smfmac_f32_32x32x32_fp8_bf8",
          "v_smfmac_f32_32x32x32_bf8_fp8", "v_smfmac_f32_32x32x32_bf8_bf8"]
GFX950 = ["v_smfmac_f32_16x16x64_f16", "v_smfmac_f32_32x32x32_f16", "v_smfmac_f32_16x16x64_bf16",
          "v_smfmac_f32_32x32x32_bf16", "v_smfmac_i32_16x16x128_i8", "v_smfmac_i32_32x32x64_i8",
          "v_smfmac_f32_16x16x128_fp8_fp8", "v_smfmac_f32_16x16x128_fp8_bf8", "v_smfmac_f32_16x16x128_bf8_fp8",
          "v_smfmac_f32_16x16x128_bf8_bf8", "v_smfmac_f32_32x32x64_fp8_fp8", "v_smfmac_f32_32x32x64_fp8_bf8",
          "v_smfmac_f32_32x32x64_bf8_fp8", "v_smfmac_f32_32x32x64_bf8_bf8"]
GFX942_ON_GFX950 = ["v_smfmac_f32_32x32x16_f16", "v_smfmac_f32_16x16x32_bf16", "v_smfmac_i32_16x16x64_i8",
                    "v_smfmac_f32_32x32x32_bf8_fp8"]
# (arch, opcode, cbsz, abid, D and B in AGPRs, waves)
CASES = ([("gfx942", op, 0, 0, False, 1) for op in GFX942] +
         [("gfx950", op, 0, 0, False, 1) for op in GFX950 + GFX942_ON_GFX950] +
         [("gfx942", "v_smfmac_f32_16x16x32_f16", 0, 3, False, 1),     # four 8-bit sets: abid[1:0]
          ("gfx942", "v_smfmac_f32_32x32x16_bf16", 0, 2, True, 1),
          ("gfx942", "v_smfmac_f32_16x16x32_f16", 1, 2, False, 1),     # cbsz != 0: the first set
          ("gfx942", "v_smfmac_i32_32x32x32_i8", 0, 1, True, 2),       # two 16-bit sets: abid[0]
          ("gfx942", "v_smfmac_f32_16x16x64_fp8_bf8", 3, 1, False, 1),
          ("gfx950", "v_smfmac_f32_16x16x64_f16", 0, 1, False, 2),
          ("gfx950", "v_smfmac_f32_32x32x32_bf16", 2, 1, True, 1),
          ("gfx950", "v_smfmac_f32_16x16x128_fp8_bf8", 0, 0, True, 2)])
BITS = {"f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8}


def form(op):
    out, m, n, k, types = re.match(r"v_smfmac_(f32|i32)_(\d+)x(\d+)x(\d+)_(\w+)$", op).groups()
    ta, tb = types.split("_") if "_" in types else (types, types)
    return out, int(m), int(n), int(k), ta, tb


def random_values(rng, dtype, shape, arch):
    """(values, raw codes) of random numbers with 1/64 <= |x| <= 8 (i8: 1 <= |x| <= 127)."""
    sign = rng.choice([-1.0, 1.0], shape)
    if dtype == "i8":
        v = (sign * rng.integers(1, 128, shape)).astype(np.int64)
        return v.astype(np.float64), (v & 0xFF).astype(np.uint64)
    if dtype in ("f16", "bf16"):
        mag = np.clip(np.abs(rng.standard_normal(shape)), 2.0 ** -6, 8.0)
        f = (sign * mag).astype(np.float32)
        if dtype == "f16":
            h = f.astype(np.float16)
            return h.astype(np.float64), h.view(np.uint16).astype(np.uint64)
        bits = f.view(np.uint32) >> 16
        return (bits << 16).view(np.float32).astype(np.float64), bits.astype(np.uint64)
    # fp8 (E4M3) / bf8 (E5M2): normal numbers 2**-4 .. 2**4; FNUZ biases on gfx942, OCP on gfx950
    ocp = arch == "gfx950"
    mbits = 3 if dtype == "fp8" else 2
    bias = (7 if dtype == "fp8" else 15) if ocp else (8 if dtype == "fp8" else 16)
    e = rng.integers(-4, 4, shape)
    m = rng.integers(0, 1 << mbits, shape)
    codes = ((sign < 0).astype(np.int64) << 7) | ((e + bias) << mbits) | m
    return sign * (1 + m / (1 << mbits)) * 2.0 ** e, codes.astype(np.uint64)


def pack(bits, items):
    """items [n, lanes] of raw codes -> uint32 registers [n*bits/32, lanes], low bits first."""
    per = 32 // bits
    regs = np.zeros((items.shape[0] // per, items.shape[1]), np.uint64)
    for t in range(items.shape[0]):
        regs[t // per] |= items[t] << np.uint64(bits * (t % per))
    return regs.astype(np.uint32)


def operands(rng, arch, op, cbsz, abid):
    """Dense A, B, C and the registers A, B, index, C of one wave."""
    out, M, N, K, ta, tb = form(op)
    groups, kpl = 64 // M, K * M // 64
    A, a_raw = random_values(rng, ta, (M, K), arch)
    B, b_raw = random_values(rng, tb, (K, N), arch)
    if out == "i32":
        C = rng.integers(-(1 << 20), 1 << 20, (M, N)).astype(np.float64)
    else:
        C = random_values(rng, "f16", (M, N), arch)[0]
    # A: keep 2 random positions of every group of 4; stored in ascending k with their 2-bit index
    a_items = np.zeros((kpl // 2, 64), np.uint64)
    index = np.zeros(64, np.uint64)
    for i in range(M):
        for q in range(K // 4):
            keep = np.sort(rng.choice(4, 2, replace=False))
            A[i, 4 * q:4 * q + 4][np.setdiff1d(np.arange(4), keep)] = 0
            g, local = divmod(q, kpl // 4)
            for s, p in enumerate(keep):
                t = 2 * local + s
                a_items[t, i + M * g] = a_raw[i, 4 * q + p]
                index[i + M * g] |= np.uint64(int(p) << (2 * t))
    # the index VGPR: the chosen set where cbsz/abid point, other random index sets elsewhere
    sets = 32 // kpl
    chosen = 0 if cbsz or sets == 1 else abid % sets
    idx = np.zeros(64, np.uint64)
    for v in range(sets):
        bits = index if v == chosen else rng.integers(0, 1 << kpl, 64).astype(np.uint64)
        idx |= bits << np.uint64(kpl * v)
    # B: kpl values of column j per lane, in runs of r = kpl/n
    b_regs_n = K * N * BITS[tb] // 64 // 32
    r = kpl // max(1, b_regs_n // 4)
    b_items = np.zeros((kpl, 64), np.uint64)
    for k in range(K):
        run, g, e = k // (groups * r), (k % (groups * r)) // r, k % r
        for j in range(N):
            b_items[run * r + e, j + N * g] = b_raw[k, j]
    c_regs = np.zeros((M * N // 64, 64), np.uint32)
    for i in range(M):
        for j in range(N):
            reg, lane = d_place(out, M, N, 1, 0, i, j)
            c_regs[reg, lane] = (np.float32(C[i, j]).view(np.uint32) if out == "f32"
                                 else np.uint32(int(C[i, j]) & 0xFFFFFFFF))
    regs = (pack(BITS[ta], a_items), pack(BITS[tb], b_items), idx.astype(np.uint32)[None, :], c_regs)
    return (A, B, C), regs


def kernel(arch, op, cbsz, abid, acc, n_regs, waves, exec_mask=None):
    """Load the registers (row r of the input at byte r*stride + 4*tid), run the SMFMAC (under
    ``exec_mask`` if given), store D."""
    na, nb, nx, nd = n_regs
    stride = 256 * waves
    base = {"a": 4, "b": 4 + (na + 3) // 4 * 4}
    base["x"] = base["b"] + (nb + 3) // 4 * 4
    base["d"] = base["x"] + 4
    body = ["s_load_dwordx4 s[4:7], s[0:1], 0x0", "v_lshlrev_b32 v1, 2, v0", "s_waitcnt lgkmcnt(0)"]
    row = 0
    for name, n in (("a", na), ("b", nb), ("x", nx), ("d", nd)):
        for r in range(n):
            body += [f"v_add_u32 v2, {row * stride}, v1", f"global_load_dword v{base[name] + r}, v2, s[4:5]"]
            row += 1
    body.append("s_waitcnt vmcnt(0)")
    tup = lambda kind, b, n: f"{kind}{b}" if n == 1 else f"{kind}[{b}:{b + n - 1}]"
    dst, bsrc = tup("v", base["d"], nd), tup("v", base["b"], nb)
    if acc:
        body += [f"v_accvgpr_write_b32 a{r}, v{base['d'] + r}" for r in range(nd)]
        body += [f"v_accvgpr_write_b32 a{nd + r}, v{base['b'] + r}" for r in range(nb)]
        body.append("s_nop 2")
        dst, bsrc = tup("a", 0, nd), tup("a", nd, nb)
    mods = " ".join(m for m in (f"cbsz:{cbsz}" if cbsz else "", f"abid:{abid}" if abid else "") if m)
    smfmac = [f"{op} {dst}, {tup('v', base['a'], na)}, {bsrc}, v{base['x']} {mods}"]
    if exec_mask is not None:
        smfmac = [f"s_mov_b64 exec, {exec_mask:#x}"] + smfmac + ["s_mov_b64 exec, -1"]
    body += smfmac + ["s_nop 7"] * 10
    for r in range(nd):
        if acc:
            body += [f"v_accvgpr_read_b32 v{base['d'] + r}, a{r}", "s_nop 1"]
        body += [f"v_add_u32 v2, {r * stride}, v1", f"global_store_dword v2, v{base['d'] + r}, s[6:7]"]
    body.append("s_endpgm")
    vgprs = base["d"] + nd
    src = kernel_source("\n".join(body), args=(("in", 8), ("out", 8)), vgprs=vgprs, sgprs=16, arch=arch)
    if acc:
        agprs = nd + nb
        src = re.sub(r"  \.amdhsa_accum_offset \d+\n", "", src)
        src = src.replace(f".amdhsa_next_free_vgpr {vgprs}\n",
                          f".amdhsa_next_free_vgpr {vgprs + agprs}\n  .amdhsa_accum_offset {vgprs}\n")
    return src


def run_and_check(arch, op, cbsz, abid, acc, waves, exec_mask=None):
    out, M, N = form(op)[:3]
    rng = np.random.default_rng(sum(map(ord, f"{arch}{op}{cbsz}{abid}")))
    per_wave = [operands(rng, arch, op, cbsz, abid) for _ in range(waves)]
    n_regs = tuple(len(x) for x in per_wave[0][1])
    data = np.concatenate([np.concatenate([w[1][part] for w in per_wave], axis=1) for part in range(4)])
    src = kernel(arch, op, cbsz, abid, acc, n_regs, waves, exec_mask)
    em = Emulator.load(assemble(src, arch))
    nd = n_regs[3]
    result = np.full((nd, 64 * waves), 0xFFC00000, np.uint32)            # poisoned
    em.launch("k", grid=1, block=64 * waves, args=[data, result])
    for wave, ((A, B, C), _) in enumerate(per_wave):
        expect = A @ B + C
        got = np.zeros((M, N), np.uint32)
        for i in range(M):
            for j in range(N):
                reg, lane = d_place(out, M, N, 1, 0, i, j)
                got[i, j] = result[reg, 64 * wave + lane]
        if out == "i32":
            want = (expect.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)
        else:
            want = expect.astype(np.float32).view(np.uint32)
        np.testing.assert_array_equal(got, want, err_msg=f"wave {wave}")


@pytest.mark.parametrize("arch,op,cbsz,abid,acc,waves", CASES,
                         ids=[f"{c[0]}-{c[1]}-cbsz{c[2]}-abid{c[3]}{'-acc' if c[4] else ''}-w{c[5]}" for c in CASES])
def test_smfmac_layout_and_values(arch, op, cbsz, abid, acc, waves):
    run_and_check(arch, op, cbsz, abid, acc, waves)


def test_exec_is_ignored():
    """Like the MFMAs, an SMFMAC computes and writes every lane whatever EXEC holds."""
    run_and_check("gfx942", "v_smfmac_f32_16x16x32_f16", 0, 0, False, 1, exec_mask=0xFFFF)

def test_the_destination_is_read_as_the_accumulator():
    """Strict mode sees the SMFMAC read its destination: here v[0:3] holds only v0 (the lane id)."""
    body = ["v_mov_b32 v4, 0", "v_mov_b32 v5, 0", "v_mov_b32 v6, 0", "v_mov_b32 v7, 0", "v_mov_b32 v8, 0",
            "v_mov_b32 v9, 0", "v_mov_b32 v10, 0", "s_nop 4",
            "v_smfmac_f32_16x16x32_f16 v[0:3], v[4:5], v[6:9], v10", "s_nop 7", "s_nop 7", "s_endpgm"]
    em = Emulator.load(assemble(kernel_source("\n".join(body), vgprs=16, arch="gfx942"), "gfx942"))
    with pytest.raises(EmulationError, match="reads v1, which nothing has written"):
        em.launch("k", grid=1, block=64, args=[np.zeros(2, np.uint64)])
