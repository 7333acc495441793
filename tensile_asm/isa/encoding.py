"""How many bytes each instruction encodes to on the GFX9 family (gfx900 .. gfx950): the fact the branch
relaxation pass (branch_relax.py) measures distances with.

Every encoding's base size (the GFX9 ISA manuals' encoding chapters), plus a 32-bit literal dword after
the 32-bit encodings (SOP*, VOP1/VOP2/VOPC) when an operand is a constant the hardware cannot encode
inline. A VOP1/VOP2/VOPC instruction written without a suffix is assembled in its 32-bit form unless its
operands need the 64-bit (VOP3) one, as LLVM chooses: any modifier (neg, abs, clamp, omod, op_sel, or the
DPP/SDWA controls, also 8 bytes), a second source (VOP2, VOPC) that is not a VGPR, a compare writing other than vcc, a
carry or mask that is not vcc. GFX9's VOP3/VOP3P take no literal. Where the form cannot be told, the
larger size is counted: the estimate is an upper bound of the true size (tests/test_branch_relax.py
compares it with llvm-mc's encoding of real kernels), so a distance found to fit does fit.
"""

from __future__ import annotations

from functools import lru_cache

from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.instruction_lists import load_instructions
from tensile_asm.isa.opcodes import strip_encoding_suffix
from tensile_asm.isa.registers import INLINE_FLOATS, Imm, LabelOffset, Reg, Special, VRegRef

# Bytes of each encoding (the names of isa/instructions/<arch>.txt), without a literal.
ENCODING_BYTES = {
    "SOP1": 4, "SOP2": 4, "SOPC": 4, "SOPK": 4, "SOPP": 4,
    "VOP1": 4, "VOP2": 4, "VOPC": 4,
    "VOP3": 8, "VOP3P": 8, "SMEM": 8, "DS": 8, "MUBUF": 8, "MTBUF": 8, "FLAT": 8, "MIMG": 8,
}
LITERAL_BYTES = 4
# The encodings that can carry a literal dword after them on GFX9.
LITERAL_ENCODINGS = ("SOP1", "SOP2", "SOPC", "VOP1", "VOP2", "VOPC")
MAX_INSTRUCTION_BYTES = 12          # a 64-bit encoding, or a 32-bit one with its literal
_SHORT_VALU = ("VOP1", "VOP2", "VOPC")


@lru_cache(maxsize=None)
def _forms(arch_name: str, opcode: str) -> tuple[str | None, bool]:
    """(encoding of the form as written or of its 32-bit form, whether a 64-bit form exists too)."""
    names = load_instructions(arch_name)
    if opcode in names:
        enc = names[opcode]
        if opcode.endswith(("_sdwa", "_dpp")):
            return "VOP3", False        # 8 bytes (the 32-bit encoding and its SDWA/DPP dword)
        return enc, False
    if f"{opcode}_e32" in names:
        return names[f"{opcode}_e32"], f"{opcode}_e64" in names
    if f"{opcode}_e64" in names:
        return names[f"{opcode}_e64"], False
    return None, False


def _is_inline(imm: Imm) -> bool:
    v = imm.value
    if isinstance(v, float):
        return v == 0.0 or v in INLINE_FLOATS
    return -16 <= v <= 64


def _is_vgpr(o) -> bool:
    return o.__class__ in (VRegRef, Reg) and o.kind == "v"


def _is_vcc(o) -> bool:
    return o.__class__ is Special and o.name == "vcc"


def encoded_bytes(ins: Instruction, arch_name: str) -> int:
    """The size of ``ins`` once assembled for ``arch_name`` (an upper bound where the form is not certain)."""
    opcode = ins.opcode
    enc, has64 = _forms(arch_name, opcode)
    if enc is None:
        return MAX_INSTRUCTION_BYTES
    if enc in _SHORT_VALU and not opcode.endswith("_e32") and _needs_vop3(ins, enc):
        return ENCODING_BYTES["VOP3"]
    size = ENCODING_BYTES[enc]
    if enc in LITERAL_ENCODINGS:
        for o in ins.operands:
            if isinstance(o, Imm) and (o.__class__ is LabelOffset or not _is_inline(o)):
                size += LITERAL_BYTES
                break
    elif enc == "SOPK" and "imm32" in opcode:
        size += LITERAL_BYTES
    return size


def _needs_vop3(ins: Instruction, enc: str) -> bool:
    """Whether LLVM encodes this VOP1/VOP2/VOPC instruction written without a suffix as VOP3 (or DPP/SDWA,
    also 8 bytes)."""
    if ins.modifiers:
        return True
    ops, ndefs = ins.operands, ins.info.num_defs
    if enc == "VOPC":
        if not (ops and _is_vcc(ops[0])):
            return True
        srcs = ops[ndefs:]
        return len(srcs) > 1 and not _is_vgpr(srcs[1])
    if enc == "VOP2":
        if ndefs > 1 and not _is_vcc(ops[1]):        # carry out
            return True
        srcs = ops[ndefs:]
        if len(srcs) > 1 and not _is_vgpr(srcs[1]):
            return True
        op = strip_encoding_suffix(ins.opcode)
        if (op.startswith(("v_addc", "v_subb", "v_cndmask")) and len(srcs) > 2
                and not _is_vcc(srcs[-1])):           # carry in / select mask
            return True
    return False


__all__ = ["ENCODING_BYTES", "LITERAL_BYTES", "MAX_INSTRUCTION_BYTES", "encoded_bytes"]
