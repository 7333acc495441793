"""gfx950 block-scaled MFMAs ``v_mfma_scale_f32_16x16x128_f8f6f4`` and ``v_mfma_scale_f32_32x32x64_f8f6f4``:
D = (A * 2^(scaleA - 127)) x (B * 2^(scaleB - 127)) + C, one E8M0 scale per 32 consecutive k of a row of A
(column of B), OCP MX. Syntax (llvm-mc-22): ``D, A, B, C, scaleA, scaleB op_sel:[x,y] op_sel_hi:[x,y]
cbsz:.. blgp:..``; objdump prints the ``v_mfma_ld_scale_b32`` prefix and the MFMA as this one line.

* A/B/C/D, the cbsz/blgp formats and the computation: the unscaled f8f6f4 MFMAs' (f8f6f4.py's
  ``f8f6f4_runner``, given this module's scales). With scales the k order of a lane's items shows even when
  A and B share a width: lane l holds row ``l % M``, lane group g = l // M, item t at k =
  ``K/2*(t//16) + 16*g + t%16`` for FP8/BF8 and ``32*g + t`` for FP4, at both shapes (the Triton 16x16x128
  mxfp8 kernel gives the wrong product with ``32*g + t`` for FP8 and the right one with this). BF8 has FP8's
  order (Triton mxbf8 kernels at both shapes, and BF8 with FP4 at 32x32x64). FP6/BF6 are refused: no source
  here pins their k order (Triton 3.9 has no e2m3/e3m2 dot_scaled for gfx950).
* Scales: scaleA and scaleB are VGPRs; each lane gives one byte, byte ``op_sel[n] + 2*op_sel_hi[n]``
  (n = 0 for A, 1 for B). The byte of lane ``i + M*kb`` scales row i of A (column i of B) over
  k in [32*kb, 32*kb + 32). Sources: llc-22 maps the opsel argument (0..3) of llvm.amdgcn.mfma.scale.* to
  op_sel = bit 0, op_sel_hi = bit 1; Triton's gfx950 scale layout (its test
  accelerate-amd-matmul-mfma-gfx950.mlir: lane bits 0-4 -> row, lane bit 5 -> k block, register -> the
  next 64 k, i.e. the next byte); and the Triton ``tl.dot_scaled`` fixtures
  (tests/data/fixtures/triton_gfx950_dot_scaled_*, all four bytes in use), which match numpy with this
  mapping and not with the alternatives tried (op_sel/op_sel_hi roles swapped; lane = k block + 64/M*row).
* E8M0 (OCP MX): 2^(e-127) for e = 0..254 (e = 0 is 2^-127), e = 255 is NaN; a NaN scale makes the
  products of its block NaN (so the D elements they reach).
Products and scales are summed in float64 and rounded once to f32, as mfma.py does: an emulation of the
result, not of the hardware's accumulation order.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.matrix.f8f6f4 import f8f6f4_runner, formats
from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

_SHAPES = {"v_mfma_scale_f32_32x32x64_f8f6f4": (32, 64), "v_mfma_scale_f32_16x16x128_f8f6f4": (16, 128)}
_MODIFIERS = ("cbsz", "blgp", "op_sel", "op_sel_hi")


def e8m0(scale_codes: np.ndarray) -> np.ndarray:
    """E8M0 scale codes -> float64 values (255 -> NaN)."""
    c = np.asarray(scale_codes, dtype=np.int64)
    return np.where(c == 255, np.nan, np.ldexp(1.0, c - 127))


def scale_bytes(op_sel: int, op_sel_hi: int) -> tuple[int, int]:
    """Byte of scaleA and of scaleB each lane gives."""
    return (op_sel & 1) | (op_sel_hi & 1) << 1, (op_sel >> 1 & 1) | (op_sel_hi >> 1 & 1) << 1


def block_scales(lane_words: np.ndarray, byte: int, m: int, k: int) -> np.ndarray:
    """Scale VGPR [64] (uint32) -> float64 [m, k]: the scale of each element of A (or of B transposed)."""
    per_lane = e8m0((lane_words.astype(np.uint32) >> np.uint32(8 * byte)) & np.uint32(0xFF))
    blocks = per_lane.reshape(64 // m, m).T                       # [row, kb] from lane row + m*kb
    return np.repeat(blocks, 32, axis=1)[:, :k]


@handles(*_SHAPES)
def _mfma_scale(ins, cx):
    m, k = _SHAPES[ins.opcode]
    for mod, _ in ins.modifiers:
        if mod not in _MODIFIERS:
            raise Unsupported(f"modifier {mod}")
    fa, fb = formats(ins)
    if 6 in (fa[1], fb[1]):
        raise Unsupported("FP6/BF6 operands of a scaled MFMA: their k order is not established here")
    if len(ins.operands) != 6:
        raise Unsupported("expected D, A, B, C, scaleA, scaleB")
    sa, sb = ins.operands[4:]
    if not all(isinstance(x, Reg) and x.kind == "v" and x.count == 1 for x in (sa, sb)):
        raise Unsupported("scale operands must be single VGPRs")
    byte_a, byte_b = scale_bytes(ins.modifier("op_sel", 0) or 0, ins.modifier("op_sel_hi", 0) or 0)

    def scales(w):
        return block_scales(w.v[sa.index], byte_a, m, k), block_scales(w.v[sb.index], byte_b, m, k)
    return f8f6f4_runner(ins, cx, m, fa, fb, scales)


__all__ = ["block_scales", "e8m0", "scale_bytes"]
