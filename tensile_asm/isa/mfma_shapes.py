"""Which MFMA instruction an architecture has for a matrix-instruction shape, and its operand sizes.

The facts come from the isa tables only: the mnemonics from ``isa/instructions/<arch>.txt`` (what LLVM
knows for the target), M x N x K and the types from the mnemonic (both naming styles: gfx908/gfx90a's
``v_mfma_f32_32x32x2f32`` and gfx942's ``v_mfma_f32_32x32x2_f32``), the registers per lane of A, B and
C/D from the operand table (``operand_table.py``), and from those the blocks: A holds
``M*K*blocks/64`` values per lane. The emulator (emulator/matrix/mfma.py) parses names with the same
``parse_mfma``.

gfx950's ``v_mfma_f32_16x16x128_f8f6f4`` / ``32x32x64_f8f6f4`` name no input type: ``cbsz`` picks A's format and
``blgp`` B's (0 FP8 E4M3, 1 BF8 E5M2, 2-4 FP6/BF6/FP4: CDNA4 ISA guide; the operand table's 8 registers are the
8-bit formats'). They are listed once per 8-bit pair (fp8, bf8 and the hybrids), with those ``modifiers``; the
emulator runs them in emulator/matrix/f8f6f4.py. A lane's 32 items are paired with B's items of the same lane
group and index whatever k the hardware gives them (both 8-bit: the same k), so a GEMM loads K values in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tensile_asm.isa.instruction_lists import load_instructions
from tensile_asm.isa.opcodes import strip_encoding_suffix
from tensile_asm.isa.operand_table import signature

_NAME = re.compile(r"^v_mfma_(f32|i32|f64)_(\d+)x(\d+)x(\d+)(?:_(\d+)b)?_?(xf32|f32|f16|bf16|i8|f64|"
                   r"fp8_fp8|fp8_bf8|bf8_fp8|bf8_bf8)(_1k)?$")
_F8F6F4 = re.compile(r"^v_mfma_f32_(\d+)x(\d+)x(\d+)_f8f6f4$")
F8F6F4_FORMAT = {"fp8": 0, "bf8": 1}     # cbsz (A) / blgp (B) codes of the 8-bit formats
BITS = {"f32": 32, "xf32": 32, "f16": 16, "bf16": 16, "i8": 8, "f64": 64, "fp8": 8, "bf8": 8}


def parse_mfma(opcode: str):
    """(out type, M, N, K, (A type, B type)) of an MFMA mnemonic, or None."""
    m = _NAME.match(opcode)
    if not m:
        return None
    out, M, N, K, _blocks, types, _ = m.groups()
    a_t, b_t = types.split("_") if "_" in types else (types, types)
    return out, int(M), int(N), int(K), (a_t, b_t)


@dataclass(frozen=True)
class MfmaShape:
    opcode: str
    m: int
    n: int
    k: int
    blocks: int
    out_type: str          # f32, i32, f64
    in_type: str           # A/B element type as the mnemonic names it: f32, f16, bf16, f64, ...; A's and B's
                           # joined by ``_`` where they differ (gfx942's hybrid fp8_bf8, bf8_fp8)
    a_regs: int            # registers per lane of A (and of B)
    d_regs: int            # registers per lane of C/D
    modifiers: tuple = ()  # ((name, value), ...) the instruction needs: gfx950's f8f6f4 formats (cbsz, blgp)

    @property
    def values_per_lane(self) -> int:
        """A (and B) values one lane holds: K values of one row (MIInputPerThread)."""
        return self.m * self.k * self.blocks // 64


@lru_cache(maxsize=None)
def mfma_shapes(arch_name: str) -> tuple[MfmaShape, ...]:
    """Every MFMA of ``arch_name`` whose A and B have one size (what GEMM kernels use): one type, or the
    hybrid 8-bit floats (fp8 A with bf8 B and the reverse, ``in_type`` "fp8_bf8" / "bf8_fp8")."""
    shapes = []
    for listed in load_instructions(arch_name):
        name = strip_encoding_suffix(listed)
        parsed = parse_mfma(name)
        sig = signature(name)
        f8f6f4 = _F8F6F4.match(name)
        if f8f6f4 and sig is not None:
            m, n, k = (int(x) for x in f8f6f4.groups())
            a_regs, d_regs = sig[1].alternatives[0][1], sig[0].alternatives[0][1]
            if a_regs * 4 * 64 == m * k:       # the 8-bit formats: 4 values a register, one block
                for ta, ca in F8F6F4_FORMAT.items():
                    for tb, cb in F8F6F4_FORMAT.items():
                        mods = tuple((mod, v) for mod, v in (("cbsz", ca), ("blgp", cb)) if v)
                        shapes.append(MfmaShape(name, m, n, k, 1, "f32", ta if ta == tb else f"{ta}_{tb}", a_regs,
                                                d_regs, mods))
            continue
        if parsed is None or sig is None:
            continue
        out, m, n, k, (ta, tb) = parsed
        if BITS[ta] != BITS[tb]:
            continue
        a_regs, d_regs = sig[1].alternatives[0][1], sig[0].alternatives[0][1]
        bits = BITS[ta]
        per_lane = a_regs * 32 // bits if bits < 64 else a_regs // 2
        blocks = per_lane * 64 // (m * k)
        if blocks >= 1 and per_lane * 64 == blocks * m * k:
            shapes.append(MfmaShape(name, m, n, k, blocks, out, ta if ta == tb else f"{ta}_{tb}", a_regs, d_regs))
    return tuple(shapes)


def find_mfma(arch_name: str, in_type: str, out_type: str, m: int, n: int, k: int, blocks: int) -> MfmaShape | None:
    """The MFMA of ``arch_name`` computing ``blocks`` M x N x K products of ``in_type`` into ``out_type``."""
    for s in mfma_shapes(arch_name):
        if (s.in_type, s.out_type, s.m, s.n, s.k, s.blocks) == (in_type, out_type, m, n, k, blocks):
            return s
    return None


__all__ = ["BITS", "F8F6F4_FORMAT", "MfmaShape", "find_mfma", "mfma_shapes", "parse_mfma"]
