"""gfx950 ``v_mfma_f32_32x32x64_f8f6f4`` and ``v_mfma_f32_16x16x128_f8f6f4``: D (MxM f32) = A x B + C with
the formats of A and B picked by ``cbsz`` and ``blgp`` (0 FP8 E4M3, 1 BF8 E5M2, 2 FP6 E2M3, 3 BF6 E3M2,
4 FP4 E2M1; CDNA4 ISA guide, VOP3P V_MFMA_F32_*_F8F6F4). Each lane holds 32 values of A and of B
(8, 6 or 4 registers, packed from bit 0 up: bytes, 6-bit fields as the guide's fp6 conversions pack
them, nibbles): lane l holds row/column ``l % M`` and lane group ``g = l // M``.

Which k a lane's item t stands for matters only when A and B differ in width: otherwise item t of
lane group g of A always meets item t of lane group g of B, whatever k that is. The k order of 8-bit
items is ``k = (K/2)*(t//16) + 16*g + t%16`` (K = 64 or 128), of FP4 items ``k = 32*g + t``: for 32x32x64
from AMD's "Matrix Core Programming on AMD CDNA3 and CDNA4" examples (sections 5.4/5.5), for 16x16x128
from Triton's gfx950 ``tl.dot_scaled`` kernels on the block-scaled form of this instruction
(scaled.py, whose fixtures match numpy only with it). So mixed widths are emulated for FP8/BF8 with
FP4 and refused otherwise (FP6 with another width).
D/C use the f32 layouts of the other MFMAs (mfma.output_map). Products are summed in float64 and
rounded once to f32, as mfma.py does. The block-scaled ``v_mfma_scale_*`` forms are not implemented.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tensile_asm.emulator.matrix.mfma import _FP8, output_map
from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

_FORMATS = {0: ("fp8", 8), 1: ("bf8", 8), 2: ("fp6", 6), 3: ("bf6", 6), 4: ("fp4", 4)}   # cbsz/blgp code
_SHAPES = {"v_mfma_f32_32x32x64_f8f6f4": 32, "v_mfma_f32_16x16x128_f8f6f4": 16}


def _minifloat_table(ebits: int, mbits: int) -> np.ndarray:
    """Every code of a sign/exponent/mantissa format without Inf/NaN (OCP MX FP6/FP4), bias 2**(e-1)-1."""
    code = np.arange(1 << (1 + ebits + mbits))
    bias = (1 << (ebits - 1)) - 1
    e, m = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    mag = np.where(e == 0, m / (1 << mbits) * 2.0 ** (1 - bias), (1 + m / (1 << mbits)) * 2.0 ** (e - bias))
    return np.where(code >> (ebits + mbits), -mag, mag)


_TABLES = {"fp8": _FP8[(False, True)], "bf8": _FP8[(True, True)], "fp6": _minifloat_table(2, 3),
           "bf6": _minifloat_table(3, 2), "fp4": _minifloat_table(2, 1)}


@lru_cache(maxsize=None)
def k_index(fmt: str, m: int) -> np.ndarray:
    """k of item t held by lane l, as an array [32, 64] (see the module note on when it matters)."""
    t, lane = np.meshgrid(np.arange(32), np.arange(64), indexing="ij")
    g = lane // m
    if fmt in ("fp8", "bf8"):
        return 2048 // m // 2 * (t // 16) + 16 * g + t % 16
    return 32 * g + t


def codes(rows: np.ndarray, bits: int) -> np.ndarray:
    """Registers [regs, 64] (uint32) -> the 32 packed codes of each lane, [32, 64], item t at bit bits*t."""
    wide = np.zeros(rows.shape[1], dtype=object)
    for r in range(rows.shape[0] - 1, -1, -1):
        wide = (wide << 32) | rows[r].astype(object)
    return np.array([[(int(v) >> (bits * t)) & ((1 << bits) - 1) for v in wide] for t in range(32)])


def operand_matrix(rows: np.ndarray, fmt: str, bits: int, m: int) -> np.ndarray:
    """A operand registers [regs, 64] -> A[m][2048/m] (B registers -> B transposed)."""
    out = np.empty((m, 64 * 32 // m))
    lane = np.broadcast_to(np.arange(64), (32, 64))
    out[lane % m, k_index(fmt, m)] = _TABLES[fmt][codes(rows, bits)]
    return out


def formats(ins) -> tuple:
    """((name, bits) of A, of B) from ``cbsz``/``blgp``."""
    fa, fb = (_FORMATS.get(ins.modifier(mod, 0) or 0) for mod in ("cbsz", "blgp"))
    if fa is None or fb is None:
        raise Unsupported("cbsz/blgp format codes above 4")
    if fa[1] != fb[1] and {fa[1], fb[1]} != {8, 4}:
        raise Unsupported(f"{fa[0]} A with {fb[0]} B: the k order of mixed widths is not established here")
    return fa, fb


def f8f6f4_runner(ins, cx, m, fa, fb, scales=None):
    """``fn(wave)`` computing D = A x B + C for operands D, A, B, C (the first four), with A and B in
    formats ``fa``/``fb``; ``scales(w)``, if given, returns [m, K] multipliers of A and of B transposed
    (scaled.py). Summed in float64, rounded once to f32."""
    d, a, b, c = ins.operands[:4]
    items = m * m // 64
    if not all(isinstance(x, Reg) and x.kind in "va" for x in (d, a, b)) or d.count != items:
        raise Unsupported(f"operands must be VGPR/AGPR tuples (D of {items} registers)")
    for op, (name, bits) in ((a, fa), (b, fb)):
        if op.count != bits:
            raise Unsupported(f"{op} does not hold 32 {name} values ({bits} registers)")
    if cx.lanes != 64:
        raise Unsupported("wave32")
    dmap = output_map(m, m, 1, False)                                   # [items, 64] flat index i*m + j
    c_reg = c if isinstance(c, Reg) else None
    if c_reg is not None and (c_reg.kind not in "va" or c_reg.count != items):
        raise Unsupported(f"C operand {c}")
    c_const = None if c_reg is not None else cx.sread(c)

    def rows(w, r):
        return (w.v if r.kind == "v" else w.a)[r.index:r.index + r.count]

    def run(w):
        A, Bt = operand_matrix(rows(w, a), *fa, m), operand_matrix(rows(w, b), *fb, m)
        if scales is not None:
            scale_a, scale_b = scales(w)
            A, Bt = A * scale_a, Bt * scale_b
        with np.errstate(invalid="ignore", over="ignore"):             # NaN scales, inf products
            prod = (A @ Bt.T).reshape(-1)
            if c_reg is not None:
                cv = np.zeros(m * m)
                cv[dmap] = rows(w, c_reg).view(np.float32).astype(np.float64)
            else:
                cv = np.float64(np.uint32(c_const(w)).view(np.float32))
            res = (prod + cv)[dmap].astype(np.float32)
        dst = w.v if d.kind == "v" else w.a
        dst[d.index:d.index + items] = res.view(np.uint32)
    run.lane_bound = True
    return run


@handles(*_SHAPES)
def _mfma_f8f6f4(ins, cx):
    for mod, _ in ins.modifiers:
        if mod not in ("cbsz", "blgp"):
            raise Unsupported(f"modifier {mod}")
    return f8f6f4_runner(ins, cx, _SHAPES[ins.opcode], *formats(ins))


__all__ = ["codes", "f8f6f4_runner", "formats", "k_index", "operand_matrix"]
