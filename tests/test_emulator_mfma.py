"""Every MFMA of gfx908/gfx90a/gfx942/gfx950 against numpy on random data, with the lane layouts
written here from AMD's Matrix Instruction Calculator formulas (matrix entry -> register and lane),
independently of the emulator's (lane -> entry) tables."""

import re

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.emulator.matrix.mfma import parse_mfma

from conftest import have_llvm
from emulator_asm import assemble, kernel_source

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

LEGACY = ["v_mfma_f32_32x32x1f32", "v_mfma_f32_16x16x1f32", "v_mfma_f32_4x4x1f32", "v_mfma_f32_32x32x2f32",
          "v_mfma_f32_16x16x4f32", "v_mfma_f32_32x32x4f16", "v_mfma_f32_16x16x4f16", "v_mfma_f32_4x4x4f16",
          "v_mfma_f32_32x32x8f16", "v_mfma_f32_16x16x16f16", "v_mfma_i32_32x32x4i8", "v_mfma_i32_16x16x4i8",
          "v_mfma_i32_4x4x4i8", "v_mfma_i32_32x32x8i8", "v_mfma_i32_16x16x16i8", "v_mfma_f32_32x32x2bf16",
          "v_mfma_f32_16x16x2bf16", "v_mfma_f32_4x4x2bf16", "v_mfma_f32_32x32x4bf16", "v_mfma_f32_16x16x8bf16"]
GFX90A = ["v_mfma_f32_32x32x4bf16_1k", "v_mfma_f32_16x16x4bf16_1k", "v_mfma_f32_4x4x4bf16_1k",
          "v_mfma_f32_32x32x8bf16_1k", "v_mfma_f32_16x16x16bf16_1k", "v_mfma_f64_16x16x4f64",
          "v_mfma_f64_4x4x4f64"]
GFX942 = ["v_mfma_f32_32x32x1_2b_f32", "v_mfma_f32_16x16x1_4b_f32", "v_mfma_f32_4x4x1_16b_f32",
          "v_mfma_f32_32x32x2_f32", "v_mfma_f32_16x16x4_f32", "v_mfma_f32_32x32x4_2b_f16",
          "v_mfma_f32_16x16x4_4b_f16", "v_mfma_f32_4x4x4_16b_f16", "v_mfma_f32_32x32x8_f16",
          "v_mfma_f32_16x16x16_f16", "v_mfma_f32_32x32x4_2b_bf16", "v_mfma_f32_16x16x4_4b_bf16",
          "v_mfma_f32_4x4x4_16b_bf16", "v_mfma_f32_32x32x8_bf16", "v_mfma_f32_16x16x16_bf16",
          "v_mfma_i32_32x32x4_2b_i8", "v_mfma_i32_16x16x4_4b_i8", "v_mfma_i32_4x4x4_16b_i8",
          "v_mfma_i32_32x32x16_i8", "v_mfma_i32_16x16x32_i8", "v_mfma_f64_16x16x4_f64", "v_mfma_f64_4x4x4_4b_f64",
          "v_mfma_f32_16x16x32_fp8_fp8", "v_mfma_f32_16x16x32_fp8_bf8", "v_mfma_f32_16x16x32_bf8_fp8",
          "v_mfma_f32_16x16x32_bf8_bf8", "v_mfma_f32_32x32x16_fp8_fp8", "v_mfma_f32_32x32x16_bf8_bf8"]
XF32 = ["v_mfma_f32_16x16x8_xf32", "v_mfma_f32_32x32x4_xf32"]
GFX950 = ["v_mfma_f32_16x16x32_f16", "v_mfma_f32_32x32x16_f16", "v_mfma_f32_16x16x32_bf16",
          "v_mfma_f32_32x32x16_bf16", "v_mfma_i32_16x16x64_i8", "v_mfma_i32_32x32x32_i8"]
CASES = ([("gfx908", o) for o in LEGACY] + [("gfx90a", o) for o in LEGACY + GFX90A] +
         [("gfx942", o) for o in GFX942 + XF32] + [("gfx950", o) for o in GFX942 + GFX950])
BITS = {"f32": 32, "xf32": 32, "f16": 16, "bf16": 16, "i8": 8, "f64": 64, "fp8": 8, "bf8": 8}


def shape(op):
    out, M, N, K, (ta, tb) = parse_mfma(op)
    m = re.search(r"_(\d+)b_", op)
    if m:
        blocks = int(m.group(1))
    elif re.search(r"x\d+_", op):                         # gfx940-style name without _Nb: one block
        blocks = 1
    else:
        kpl = {"f32": 1, "f16": 4, "bf16": 4 if op.endswith("_1k") else 2, "i8": 4, "f64": 1}[ta]
        blocks = kpl * 64 // (M * K)
    return out, M, N, K, blocks, ta, tb


def a_place(M, K, blocks, block, i, k):
    """Calculator: lane = M*block + M*blocks*floor(k/kpl) + i (the middle term when M*blocks < 64)."""
    kpl = M * K * blocks // 64
    lane = M * block + (M * blocks * (k // kpl) if M * blocks < 64 else 0) + i
    return lane, k % kpl


def d_place(out, M, N, blocks, block, i, j):
    """Calculator: (register item, lane) of C/D[block][i][j]."""
    if out == "f64":
        lane = 16 * (i % 4) + (N * block if M * N < 64 else 0) + j
        return (i // 4 if blocks == 1 else 0), lane
    lane = (N * (i // 4)) % 64 + (N * block if M * N < 64 else 0) + j
    if M == 4:
        reg = i
    elif M == 16:
        reg = 4 * block + i % 4
    else:
        reg = 16 * block + 4 * (i // 8) + i % 4
    return reg, lane


def random_values(rng, dtype, shape_, arch):
    if dtype in ("f32", "xf32"):
        v = rng.standard_normal(shape_).astype(np.float32)
        return v.astype(np.float64), v.view(np.uint32).astype(np.uint64)
    if dtype == "f64":
        v = rng.standard_normal(shape_)
        return v, v.view(np.uint64)
    if dtype == "f16":
        v = rng.standard_normal(shape_).astype(np.float16)
        return v.astype(np.float64), v.view(np.uint16).astype(np.uint64)
    if dtype == "bf16":
        bits = (rng.standard_normal(shape_).astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64), bits
    if dtype == "i8":
        v = rng.integers(-128, 128, shape_)
        return v.astype(np.float64), (v & 0xFF).astype(np.uint64)
    # fp8 / bf8: random finite codes, decoded independently of the emulator
    ocp = arch == "gfx950"
    mb, eb = (2, 5) if dtype == "bf8" else (3, 4)
    bias = (15 if dtype == "bf8" else 7) if ocp else (16 if dtype == "bf8" else 8)
    codes = rng.integers(0, 256, shape_)
    e, m = (codes >> mb) & ((1 << eb) - 1), codes & ((1 << mb) - 1)
    bad = (codes == 0x80) if not ocp else ((e == (1 << eb) - 1) if dtype == "bf8" else ((codes & 0x7F) == 0x7F))
    codes = np.where(bad, 0x01, codes)
    e, m = (codes >> mb) & ((1 << eb) - 1), codes & ((1 << mb) - 1)
    val = np.where(e == 0, m * 2.0 ** (1 - bias - mb), (1 + m / (1 << mb)) * 2.0 ** (e - bias))
    return np.where(codes & 0x80, -val, val), codes.astype(np.uint64)


def pack(bits_per, items, kpl):
    """items [kpl, 64] of raw codes -> uint32 registers [regs, 64]."""
    if bits_per == 64:
        return np.stack([items[0] & 0xFFFFFFFF, items[0] >> 32]).astype(np.uint32)
    per = 32 // bits_per
    regs = np.zeros((max(1, kpl // per), 64), np.uint64)
    for t in range(kpl):
        regs[t // per] |= items[t] << np.uint64(bits_per * (t % per))
    return regs.astype(np.uint32)


@pytest.mark.parametrize("arch,op", CASES, ids=[f"{a}-{o}" for a, o in CASES])
def test_mfma_layout_and_values(arch, op):
    out, M, N, K, blocks, ta, tb = shape(op)
    rng = np.random.default_rng(abs(hash(op)) % 1000)
    kpl = M * K * blocks // 64
    A, a_raw = random_values(rng, ta, (blocks, M, K), arch)
    B, b_raw = random_values(rng, tb, (blocks, K, N), arch)
    if out == "i32":
        C = rng.integers(-1000, 1000, (blocks, M, N)).astype(np.float64)
    else:
        C = rng.standard_normal((blocks, M, N)).astype(np.float32 if out == "f32" else np.float64).astype(np.float64)
    a_items, b_items = np.zeros((kpl, 64), np.uint64), np.zeros((kpl, 64), np.uint64)
    for blk in range(blocks):
        for i in range(M):
            for k in range(K):
                lane, t = a_place(M, K, blocks, blk, i, k)
                a_items[t, lane] = a_raw[blk, i, k]
        for j in range(N):
            for k in range(K):
                lane, t = a_place(N, K, blocks, blk, j, k)
                b_items[t, lane] = b_raw[blk, k, j]
    dwords = 2 if out == "f64" else 1
    ditems = M * N * blocks // 64
    c_regs = np.zeros((ditems * dwords, 64), np.uint32)
    for blk in range(blocks):
        for i in range(M):
            for j in range(N):
                r, lane = d_place(out, M, N, blocks, blk, i, j)
                if out == "f64":
                    u = np.float64(C[blk, i, j]).view(np.uint64)
                    c_regs[2 * r, lane], c_regs[2 * r + 1, lane] = int(u) & 0xFFFFFFFF, int(u) >> 32
                elif out == "f32":
                    c_regs[r, lane] = np.float32(C[blk, i, j]).view(np.uint32)
                else:
                    c_regs[r, lane] = np.uint32(np.int64(C[blk, i, j]) & 0xFFFFFFFF)
    ra, rb = pack(BITS[ta], a_items, kpl), pack(BITS[tb], b_items, kpl)
    na, nb, nc = len(ra), len(rb), len(c_regs)
    data = np.concatenate([ra, rb, c_regs]).astype(np.uint32)
    body = ["s_load_dwordx4 s[4:7], s[0:1], 0x0", "v_lshlrev_b32 v1, 2, v0", "s_waitcnt lgkmcnt(0)"]
    va, vb, vc = 4, 4 + na + na % 2, 0
    vb_end = vb + nb
    vc = vb_end + vb_end % 2
    for r in range(na + nb + nc):
        dst = va + r if r < na else (vb + r - na if r < na + nb else vc + r - na - nb)
        body += [f"v_add_u32 v2, {r * 256}, v1", f"global_load_dword v{dst}, v2, s[4:5]"]
    body.append("s_waitcnt vmcnt(0)")
    for r in range(nc):
        body.append(f"v_accvgpr_write_b32 a{r}, v{vc + r}")
    reg = lambda kind, base, n: f"{kind}{base}" if n == 1 else f"{kind}[{base}:{base + n - 1}]"
    body += ["s_nop 2", f"{op} {reg('a', 0, nc)}, {reg('v', va, na)}, {reg('v', vb, nb)}, {reg('a', 0, nc)}"]
    body += ["s_nop 7"] * 8
    for r in range(nc):
        body += [f"v_accvgpr_read_b32 v{vc + r}, a{r}", f"v_add_u32 v2, {r * 256}, v1",
                 "s_nop 0",           # gfx908: v_accvgpr_read -> memory read of its VGPR needs 2 wait states
                 f"global_store_dword v2, v{vc + r}, s[6:7]"]
    body.append("s_endpgm")
    vgprs = vc + nc + 2
    vgprs += vgprs % 2
    src = kernel_source("\n".join(body), args=(("in", 8), ("out", 8)), vgprs=vgprs, sgprs=16, arch=arch)
    if arch != "gfx908":
        acc = (vgprs + 3) // 4 * 4
        src = re.sub(r"  \.amdhsa_accum_offset \d+\n", "", src)
        src = src.replace(f".amdhsa_next_free_vgpr {vgprs}\n",
                          f".amdhsa_next_free_vgpr {acc + nc}\n  .amdhsa_accum_offset {acc}\n")
    em = Emulator.load(assemble(src, arch))
    result = np.full((nc, 64), 0xFFC00000, np.uint32)           # poisoned
    em.launch("k", grid=1, block=64, args=[data, result])
    expect = np.einsum("bik,bkj->bij", A, B) + C
    got = np.zeros((blocks, M, N))
    for blk in range(blocks):
        for i in range(M):
            for j in range(N):
                r, lane = d_place(out, M, N, blocks, blk, i, j)
                if out == "f64":
                    got[blk, i, j] = np.array([result[2 * r, lane], result[2 * r + 1, lane]], np.uint32).view(np.float64)[0]
                elif out == "f32":
                    got[blk, i, j] = result[r, lane].view(np.float32)
                else:
                    got[blk, i, j] = result[r, lane].view(np.int32)
    tol = 0 if out == "i32" else (1e-6 if out == "f32" else 1e-12)
    np.testing.assert_allclose(got, expect, rtol=tol, atol=tol * np.abs(expect).max())
