"""Sparse MFMA (``v_smfmac_*``) on gfx942/gfx950: D = A x B + D, with A (M x K) 4:2 structured-sparse.

Every row of A holds at most 2 non-zeros in each group of 4 consecutive k; the registers hold only
those 2 values and the index VGPR (the last operand) says where in its group each sits. The
destination is also the accumulator C. Layouts (AMD Composable Kernel's ck_tile amdgcn_mma SPARSE
table, kABKPerLane/kBKNumAccess, and its smfmac op test for gfx942 16-bit; AMD rocjitsu's
mma_exec.h labels k differently for some 8-bit forms but pairs the same A value, index bits and B
value in every form):

* A, lane ``i + M*g`` (G = 64/M lane groups): row i, dense k ``kpl*g .. kpl*(g+1)-1`` with
  ``kpl = K/G``; stored item t (16-bit two per register, 8-bit four, low bits first) belongs to the
  lane's group t//2 and sits at ``k = kpl*g + 4*(t//2) + idx_t``.
* idx_t is bits ``2t+1:2t`` of the selected index set: the lane's index VGPR holds 32/kpl sets of
  kpl bits; with ``cbsz == 0``, ``abid`` picks the set (abid[1:0] or abid[0]), with ``cbsz != 0``
  set 0 (LLVM MLIR AMDGPU.td, amdgpu.sparse_mfma, after llvm-project PR #193541: "cbsz == 0 selects
  one of four 8-bit sets via abid[1:0] ... cbsz != 0 selects the first set"; gfx950 8-bit forms:
  one 32-bit set, "hardware ignores both cbsz and abid").
* B, lane ``j + N*g``: ``kpl`` values of column j split into ``n = regs/4`` runs of ``kpl/n``;
  item t is ``k = (t // r) * (G*r) + g*r + t % r`` with ``r = kpl/n`` (n = 2 only for gfx950's 8-
  register B operands).
* D/C: the dense MFMA layout (mfma.output_map).

Each stored A value multiplies the B value its index selects (CK: "c_vec += a_vec * b_vec[idx]"),
so two equal indices in one group both count: no source says what hardware does then. Products are
summed in float64 and rounded once to f32 (i32 wraps), as mfma.py models MFMAs; fp8/bf8 decode as
FNUZ on gfx942 and OCP on gfx950. EXEC is ignored, as for MFMAs.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from tensile_asm.emulator.matrix.mfma import _BITS, _decode, _rows, output_map
from tensile_asm.emulator.program import Unsupported, reg_keys
from tensile_asm.isa.registers import Reg

_NAME = re.compile(r"^v_smfmac_(f32|i32)_(16|32)x(16|32)x(\d+)_(f16|bf16|i8|fp8_fp8|fp8_bf8|bf8_fp8|bf8_bf8)$")


def parse_smfmac(opcode: str):
    """(out type, M, N, K, (A type, B type)) of an SMFMAC mnemonic, or None."""
    m = _NAME.match(opcode)
    if not m or m.group(2) != m.group(3):
        return None
    out, M, N, K, types = m.groups()
    a_t, b_t = types.split("_") if "_" in types else (types, types)
    return out, int(M), int(N), int(K), (a_t, b_t)


@lru_cache(maxsize=None)
def a_slots(M: int, K: int, items: int) -> np.ndarray:
    """Dense k of stored A item t of lane l before its index is added, as an array [items, 64]."""
    t, lane = np.meshgrid(np.arange(items), np.arange(64), indexing="ij")
    kpl = K * M // 64
    return kpl * (lane // M) + 4 * (t // 2)


@lru_cache(maxsize=None)
def b_map(N: int, K: int, runs: int) -> np.ndarray:
    """Flat index j*K + k of B item t of lane l, as an array [kpl, 64]."""
    groups, kpl = 64 // N, K * N // 64
    r = kpl // runs
    t, lane = np.meshgrid(np.arange(kpl), np.arange(64), indexing="ij")
    k = (t // r) * (groups * r) + (lane // N) * r + t % r
    return (lane % N) * K + k


def index_shift(kpl: int, cbsz: int, abid: int) -> int:
    """Bit offset of the index set an SMFMAC uses (see the module note)."""
    sets = 32 // kpl
    if sets == 1 or cbsz:
        return 0
    return kpl * (abid % sets)


def _smfmac_builder(ins, cx):
    shape = parse_smfmac(ins.opcode)
    if shape is None:
        raise Unsupported(f"unknown SMFMAC shape '{ins.opcode}'")
    out, M, N, K, (ta, tb) = shape
    for mod, _ in ins.modifiers:
        if mod not in ("cbsz", "abid"):
            raise Unsupported(f"modifier {mod} on an SMFMAC")
    if cx.lanes != 64:
        raise Unsupported("wave32")
    d, a, b, x = ins.operands[:4]
    if not all(isinstance(r, Reg) and r.kind in "va" for r in (d, a, b)):
        raise Unsupported("SMFMAC matrix operands must be VGPRs or AGPRs")
    if not (isinstance(x, Reg) and x.kind == "v" and x.count == 1):
        raise Unsupported(f"index operand {x} must be one VGPR")
    kpl = K * N // 64                                # dense k per lane, for A and B alike
    bits_a, bits_b = _BITS[ta], _BITS[tb]
    items = kpl // 2
    if a.count * 32 != items * bits_a or b.count * 32 != kpl * bits_b or d.count != M * N // 64:
        raise Unsupported(f"operands {a}, {b}, {d} do not fit {M}x{N}x{K} {ta}/{tb}")
    runs = max(1, b.count // 4)
    slots = a_slots(M, K, items)                     # [items, 64]
    bflat = b_map(N, K, runs).reshape(-1)
    dmap = output_map(M, N, 1, False)                # [M*N/64, 64]
    shift = np.uint32(index_shift(kpl, ins.modifier("cbsz", 0) or 0, ins.modifier("abid", 0) or 0))
    two_t = (2 * np.arange(items, dtype=np.uint32))[:, None, None]
    ocp = cx.arch.float8_ocp          # isa/<gfx>.yaml float8: ocp (gfx950), else FNUZ
    dt = np.int64 if out == "i32" else np.float64
    G = 64 // M

    def run(w):
        L = w.lanes
        nw = L // 64
        va = _decode(_rows(w, a).reshape(a.count, nw, 64), ta, items, ocp)          # [items, nw, 64]
        vb = _decode(_rows(w, b).reshape(b.count, nw, 64), tb, kpl, ocp)            # [kpl, nw, 64]
        sel = (w.v[x.index].reshape(1, nw, 64) >> shift) >> two_t & np.uint32(3)
        kk = slots[:, None, :] + sel.astype(np.int64)                               # [items, nw, 64]
        Bt = np.zeros((nw, N * K), dt)
        Bt[:, bflat] = vb.transpose(1, 0, 2).reshape(nw, -1)
        Bt = Bt.reshape(nw, N, K)
        # lane = i + M*g: gather, per row i, the B value each stored A value selects
        av = va.reshape(items, nw, G, M).transpose(1, 3, 2, 0).reshape(nw, M, G * items).astype(dt)
        ak = kk.reshape(items, nw, G, M).transpose(1, 3, 2, 0).reshape(nw, M, 1, G * items)
        picked = np.take_along_axis(Bt[:, None, :, :], ak, axis=3)                  # [nw, M, N, G*items]
        prod = np.einsum("wmc,wmnc->wmn", av, picked).reshape(nw, M * N)
        rc = _rows(w, d).reshape(d.count, nw, 64)
        cv = rc.view(np.int32).astype(np.int64) if out == "i32" else rc.view(np.float32).astype(np.float64)
        C = np.zeros((nw, M * N), dt)
        C[:, dmap.reshape(-1)] = cv.transpose(1, 0, 2).reshape(nw, -1)
        res = (prod + C)[:, dmap.reshape(-1)].reshape(nw, d.count, 64).transpose(1, 0, 2)
        regs = res.astype(np.uint32) if out == "i32" else res.astype(np.float32).view(np.uint32)
        dst = w.v if d.kind == "v" else w.a
        dst[d.index:d.index + d.count] = regs.reshape(d.count, L)
    run.extra_srcs = reg_keys(d)                     # the destination is also the accumulator
    return run


_smfmac_builder.accepts = lambda name: parse_smfmac(name) is not None   # for emulator/coverage.py
PREFIXES = {"v_smfmac_": _smfmac_builder}      # opcode prefix -> builder (registry.py merges it)
