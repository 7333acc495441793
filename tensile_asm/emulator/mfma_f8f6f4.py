"""gfx950 ``v_mfma_f32_32x32x64_f8f6f4``: D (32x32 f32) = A (32x64) x B (64x32) + C, with the formats of A
and B picked by ``cbsz`` and ``blgp`` (0 FP8 E4M3, 1 BF8 E5M2, 4 FP4 E2M1; CDNA4 ISA guide, VOP3P
V_MFMA_F32_32X32X64_F8F6F4). FP6/BF6 (2, 3) are refused: no source at hand gives their lane layout.

Layout (from AMD's "Matrix Core Programming on AMD CDNA3 and CDNA4" examples, sections 5.4/5.5, which
load the operands of the same operation with block scales): lane l holds row ``l % 32`` of A (column
``l % 32`` of B) and lane group ``g = l // 32``; of its 32 values, item t is
  FP8/BF8: k = 32 * (t // 16) + 16 * g + t % 16  (bytes of 8 registers, low byte first)
  FP4:     k = 32 * g + t                        (nibbles of 4 registers, low nibble first).
D/C use the 32x32 f32 layout of the other MFMAs (mfma.output_map). Products are summed in float64
and rounded once to f32, as mfma.py does. ``v_mfma_f32_16x16x128_f8f6f4`` and the block-scaled
``v_mfma_scale_*`` forms are not implemented (their lane layouts are not established here).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tensile_asm.emulator.mfma import _FP8, output_map
from tensile_asm.emulator.program import Unsupported, handles
from tensile_asm.isa.registers import Reg

_FORMATS = {0: ("fp8", 8), 1: ("bf8", 8), 4: ("fp4", 4)}        # cbsz / blgp code -> (name, bits)
_FP4 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0] * 2) * np.repeat([1.0, -1.0], 8)


@lru_cache(maxsize=None)
def k_index(fmt: str) -> np.ndarray:
    """k of item t held by lane l, as an array [32, 64]."""
    t, lane = np.meshgrid(np.arange(32), np.arange(64), indexing="ij")
    g = lane // 32
    if fmt == "fp4":
        return 32 * g + t
    return 32 * (t // 16) + 16 * g + t % 16


def _values(rows: np.ndarray, fmt: str) -> np.ndarray:
    """Registers [regs, 64] (uint32) -> items [32, 64] as float64."""
    bits = 4 if fmt == "fp4" else 8
    per = 32 // bits
    parts = [(rows >> np.uint32(bits * h)) & np.uint32((1 << bits) - 1) for h in range(per)]
    codes = np.stack(parts, axis=1).reshape(-1, rows.shape[1])          # item = reg * per + h
    return _FP4[codes] if fmt == "fp4" else _FP8[(fmt == "bf8", True)][codes]


def _matrix(rows: np.ndarray, fmt: str) -> np.ndarray:
    """A operand registers -> A[32][64] (B registers -> B transposed, [32][64])."""
    out = np.empty((32, 64))
    lane = np.broadcast_to(np.arange(64), (32, 64))
    out[lane % 32, k_index(fmt)] = _values(rows, fmt)
    return out


@handles("v_mfma_f32_32x32x64_f8f6f4")
def _mfma_f8f6f4(ins, cx):
    for m, _ in ins.modifiers:
        if m not in ("cbsz", "blgp"):
            raise Unsupported(f"modifier {m}")
    fa, fb = (_FORMATS.get(ins.modifier(m, 0) or 0) for m in ("cbsz", "blgp"))
    if fa is None or fb is None:
        raise Unsupported("FP6/BF6 operands (cbsz/blgp 2 or 3): lane layout not established")
    d, a, b, c = ins.operands[:4]
    if not all(isinstance(x, Reg) and x.kind in "va" for x in (d, a, b)) or d.count != 16:
        raise Unsupported("operands must be VGPR/AGPR tuples (D of 16 registers)")
    for op, (name, bits) in ((a, fa), (b, fb)):
        if op.count != bits:
            raise Unsupported(f"{op} does not hold 32 {name} values ({bits} registers)")
    if cx.lanes != 64:
        raise Unsupported("wave32")
    dmap = output_map(32, 32, 1, False)                                 # [16, 64] flat index i*32 + j
    c_reg = c if isinstance(c, Reg) else None
    if c_reg is not None and c_reg.count != 16:
        raise Unsupported(f"C operand {c}")
    c_const = None if c_reg is not None else cx.sread(c)

    def rows(w, r):
        return (w.v if r.kind == "v" else w.a)[r.index:r.index + r.count]

    def run(w):
        A, Bt = _matrix(rows(w, a), fa[0]), _matrix(rows(w, b), fb[0])
        prod = (A @ Bt.T).reshape(-1)
        if c_reg is not None:
            cv = np.zeros(32 * 32)
            cv[dmap] = rows(w, c_reg).view(np.float32).astype(np.float64)
        else:
            cv = np.float64(np.uint32(c_const(w)).view(np.float32))
        total = prod + cv
        dst = w.v if d.kind == "v" else w.a
        dst[d.index:d.index + 16] = total[dmap].astype(np.float32).view(np.uint32)
    run.lane_bound = True
    return run


__all__ = ["k_index"]
