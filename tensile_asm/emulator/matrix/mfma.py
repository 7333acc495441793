"""MFMA (``v_mfma_*``) on gfx908/gfx90a/gfx942/gfx950: D = A x B + C per block, with the exact
lane-to-matrix layouts of AMD's Matrix Instruction Calculator (gfx9 / CDNA formulas):

* A[block][i][k] (B[block][k][j] alike, with j): ``kpl = M*K*blocks/64`` values per lane;
  lane = i + M*block + M*blocks*floor(k/kpl); the value is item ``k % kpl`` of the lane's registers
  (16-bit types two per register, low half first; 8-bit types four per register; f64 a pair).
* D[block][i][j], 32-bit outputs: lane = j + (N*floor(i/4)) % 64 (+ N*block when M*N < 64);
  register = i for 4x4 (16 blocks), 4*block + i%4 for 16x16, 16*block + 4*floor(i/8) + i%4 for 32x32.
* f64 outputs: lane = j + 16*(i%4) (+ 4*block for 4x4x4 with 4 blocks); register pair floor(i/4)
  for 16x16x4f64, pair 0 for 4x4x4f64.

Shapes come from the mnemonic (M x N x K), the number of blocks from the A operand's register count.
Products are summed in float64 and rounded once to f32 (i32 wraps; f64 rounds once more): an
emulation of the result, not of the hardware's internal accumulation order. xf32 inputs are taken
as exact f32. fp8/bf8 decode as FNUZ (bias 8/16) on gfx942 and as OCP E4M3/E5M2 on gfx950.
The CBSZ/ABID/BLGP broadcast modifiers are rejected (not emulated). EXEC is ignored, as MFMAs do.
Lane-local over batches: a batch's lanes are handled as [waves, 64].
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tensile_asm.emulator.program import Unsupported
from tensile_asm.isa.mfma_shapes import BITS, parse_mfma
from tensile_asm.isa.registers import Reg

_BITS = BITS


@lru_cache(maxsize=None)
def input_map(M: int, K: int, blocks: int) -> np.ndarray:
    """flat index (block*M + i)*K + k of item t of lane l, as an array [kpl, 64]."""
    kpl = M * K * blocks // 64
    t, lane = np.meshgrid(np.arange(kpl), np.arange(64), indexing="ij")
    i, g = lane % M, lane // M
    block, kgroup = g % blocks, g // blocks
    k = kgroup * kpl + t
    return (block * M + i) * K + k


@lru_cache(maxsize=None)
def output_map(M: int, N: int, blocks: int, f64: bool) -> np.ndarray:
    """flat index (block*M + i)*N + j held by output item r of lane l, as an array [items, 64]."""
    items = M * N * blocks // 64
    r, lane = np.meshgrid(np.arange(items), np.arange(64), indexing="ij")
    j = lane % N
    if f64:
        if blocks == 1:                       # 16x16x4f64
            i, block = 4 * r + lane // 16, 0 * r
        else:                                 # 4x4x4f64, 4 blocks
            i, block = lane // 16, (lane // 4) % 4
    elif M == 4 and N == 4:
        i, block = r, lane // 4
    else:
        per_block = M * N // 64
        block, rr = r // per_block, r % per_block
        i = rr % 4 + 4 * (lane // N) + 4 * (64 // N) * (rr // 4)
    return (block * M + i) * N + j


def _fp8_table(bf8: bool, ocp: bool) -> np.ndarray:
    code = np.arange(256)
    sign = np.where(code & 0x80, -1.0, 1.0)
    mbits, ebits = (2, 5) if bf8 else (3, 4)
    bias = (15 if bf8 else 7) if ocp else (16 if bf8 else 8)
    e = (code >> mbits) & ((1 << ebits) - 1)
    m = code & ((1 << mbits) - 1)
    val = np.where(e == 0, m / (1 << mbits) * 2.0 ** (1 - bias), (1 + m / (1 << mbits)) * 2.0 ** (e - bias))
    val = sign * val
    if not ocp:
        val[0x80] = np.nan                    # FNUZ: negative zero encodes NaN, no infinities
    elif bf8:
        top = e == (1 << ebits) - 1
        val[top & (m == 0)] = sign[top & (m == 0)] * np.inf
        val[top & (m != 0)] = np.nan
    else:
        val[(code & 0x7F) == 0x7F] = np.nan   # E4M3FN: only S.1111.111 is NaN
    return val


_FP8 = {(bf8, ocp): _fp8_table(bf8, ocp) for bf8 in (False, True) for ocp in (False, True)}


def _decode(rows: np.ndarray, dtype: str, kpl: int, ocp: bool) -> np.ndarray:
    """Registers [regs, waves, 64] (uint32) -> values [kpl, waves, 64] (float64 or int64)."""
    bits = _BITS[dtype]
    if bits == 64:
        u = rows[0::2].astype(np.uint64) | (rows[1::2].astype(np.uint64) << np.uint64(32))
        return u.view(np.float64)
    if bits == 32:
        return rows.view(np.float32).astype(np.float64)
    per = 32 // bits
    parts = [(rows >> np.uint32(bits * h)) & np.uint32((1 << bits) - 1) for h in range(per)]
    items = np.stack(parts, axis=1).reshape(-1, *rows.shape[1:])[:kpl]
    if dtype == "f16":
        return items.astype(np.uint16).view(np.float16).astype(np.float64)
    if dtype == "bf16":
        return (items << np.uint32(16)).view(np.float32).astype(np.float64)
    if dtype == "i8":
        return items.astype(np.uint8).view(np.int8).astype(np.int64)
    return _FP8[(dtype == "bf8", ocp)][items]


def _rows(w, reg: Reg):
    src = w.v if reg.kind == "v" else w.a
    return src[reg.index:reg.index + reg.count]


def _mfma_builder(ins, cx):
    shape = parse_mfma(ins.opcode)
    if shape is None:
        raise Unsupported(f"unknown MFMA shape '{ins.opcode}'")
    out, M, N, K, (ta, tb) = shape
    for mod in ("cbsz", "abid", "blgp"):
        if ins.modifier(mod, 0):
            raise Unsupported(f"the {mod} broadcast modifier")
    if ins.modifier("neg", 0) or ins.modifier("neg_lo", 0) or ins.modifier("neg_hi", 0):
        raise Unsupported("neg modifiers on an MFMA")
    d, a, b, c = ins.operands[:4]
    if not all(isinstance(x, Reg) and x.kind in "va" for x in (d, a, b)):
        raise Unsupported("MFMA operands must be VGPRs or AGPRs")
    bits_a = _BITS[ta]
    kpl = a.count * 32 // bits_a if bits_a < 64 else a.count // 2
    blocks = kpl * 64 // (M * K)
    if blocks < 1 or kpl * 64 != blocks * M * K:
        raise Unsupported(f"A operand {a} does not fit {M}x{N}x{K}")
    amap, bmap = input_map(M, K, blocks).reshape(-1), input_map(N, K, blocks).reshape(-1)
    f64 = out == "f64"
    dmap = output_map(M, N, blocks, f64)
    items = dmap.shape[0]
    ocp = cx.arch.float8_ocp          # isa/<gfx>.yaml float8: ocp (gfx950), else FNUZ
    c_is_reg = isinstance(c, Reg)
    c_const = None if c_is_reg else cx.sread(c)
    if c_is_reg and c.count != d.count:
        raise Unsupported(f"C operand {c} and D operand {d} differ in size")

    def run(w):
        L = w.lanes
        nw = L // 64
        ra = _rows(w, a).reshape(a.count, nw, 64)
        rb = _rows(w, b).reshape(b.count, nw, 64)
        va, vb = _decode(ra, ta, kpl, ocp), _decode(rb, tb, kpl, ocp)
        dt = np.int64 if out == "i32" else np.float64
        A = np.zeros((nw, blocks * M * K), dt)
        B = np.zeros((nw, blocks * N * K), dt)
        A[:, amap] = va.transpose(1, 0, 2).reshape(nw, -1)
        B[:, bmap] = vb.transpose(1, 0, 2).reshape(nw, -1)
        prod = np.matmul(A.reshape(nw, blocks, M, K), B.reshape(nw, blocks, N, K).transpose(0, 1, 3, 2))
        if c_is_reg:
            rc = _rows(w, c).reshape(c.count, nw, 64)
            if out == "f32":
                cv = rc.view(np.float32).astype(np.float64)
            elif out == "i32":
                cv = rc.view(np.int32).astype(np.int64)
            else:
                cv = _decode(rc, "f64", items, ocp)
            C = np.zeros((nw, blocks * M * N), dt)
            C[:, dmap.reshape(-1)] = cv.transpose(1, 0, 2).reshape(nw, -1)
            total = prod.reshape(nw, -1) + C
        else:
            cval = c_const(w)
            cval = np.uint32(cval).view(np.float32) if out == "f32" else cval
            total = prod.reshape(nw, -1) + (np.float64(cval) if out != "i32" else np.int64(np.int32(np.uint32(cval))))
        res = total[:, dmap.reshape(-1)].reshape(nw, items, 64).transpose(1, 0, 2)   # [items, nw, 64]
        if out == "f32":
            regs = res.astype(np.float32).view(np.uint32)
        elif out == "i32":
            regs = res.astype(np.int64).astype(np.uint32)
        else:
            u = res.astype(np.float64).view(np.uint64)
            regs = np.empty((2 * items, nw, 64), np.uint32)
            regs[0::2] = (u & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            regs[1::2] = (u >> np.uint64(32)).astype(np.uint32)
        dst = w.v if d.kind == "v" else w.a
        dst[d.index:d.index + d.count] = regs.reshape(d.count, L)
    return run


_mfma_builder.accepts = lambda name: parse_mfma(name) is not None   # for emulator/coverage.py
PREFIXES = {"v_mfma_": _mfma_builder}      # opcode prefix -> builder (registry.py merges it)
