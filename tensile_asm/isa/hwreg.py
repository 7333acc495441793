"""The ``hwreg(...)`` and ``sendmsg(...)`` operands LLVM prints for s_getreg/s_setreg and s_sendmsg,
back to their 16-bit encodings, and the gfx9 MODE register fields.

Encodings (checked against llvm-mc-22 -show-encoding on gfx90a/gfx942): hwreg = id | offset << 6 |
(size - 1) << 11, ``hwreg(ID)`` meaning offset 0, size 32; sendmsg = msg | op << 4 | stream << 8.
"""

from __future__ import annotations

HWREG_IDS = {"HW_REG_MODE": 1, "HW_REG_STATUS": 2, "HW_REG_TRAPSTS": 3, "HW_REG_HW_ID": 4,
             "HW_REG_GPR_ALLOC": 5, "HW_REG_LDS_ALLOC": 6, "HW_REG_IB_STS": 7, "HW_REG_SH_MEM_BASES": 15,
             "HW_REG_TBA_LO": 16, "HW_REG_TBA_HI": 17, "HW_REG_TMA_LO": 18, "HW_REG_TMA_HI": 19,
             "HW_REG_XCC_ID": 20, "HW_REG_SQ_PERF_SNAPSHOT_DATA": 21, "HW_REG_SQ_PERF_SNAPSHOT_DATA1": 22,
             "HW_REG_SQ_PERF_SNAPSHOT_PC_LO": 23, "HW_REG_SQ_PERF_SNAPSHOT_PC_HI": 24}
HWREG_NAMES = {v: k for k, v in HWREG_IDS.items()}

SENDMSG_IDS = {"MSG_INTERRUPT": 1, "MSG_GS": 2, "MSG_GS_DONE": 3, "MSG_SAVEWAVE": 4, "MSG_STALL_WAVE_GEN": 5,
               "MSG_HALT_WAVES": 6, "MSG_ORDERED_PS_DONE": 7, "MSG_EARLY_PRIM_DEALLOC": 8, "MSG_GS_ALLOC_REQ": 9,
               "MSG_GET_DOORBELL": 10, "MSG_SYSMSG": 15}
SENDMSG_OPS = {"GS_OP_NOP": 0, "GS_OP_CUT": 1, "GS_OP_EMIT": 2, "GS_OP_EMIT_CUT": 3,
               "SYSMSG_OP_ECC_ERR_INTERRUPT": 1, "SYSMSG_OP_REG_RD": 2, "SYSMSG_OP_HOST_TRAP_ACK": 3,
               "SYSMSG_OP_TTRACE_PC": 4}
SENDMSG_NAMES = {v: k for k, v in SENDMSG_IDS.items()}

# gfx9 MODE (AMD CDNA3 ISA guide, "MODE" hardware register): the bits a kernel descriptor sets.
# FP_ROUND [3:0] (fp32 [1:0], fp16/fp64 [3:2]), FP_DENORM [7:4] (fp32 [5:4], fp16/fp64 [7:6]), DX10_CLAMP 8,
# IEEE 9, each initialised from the kernel descriptor field of the same encoding (COMPUTE_PGM_RSRC1).
MODE_DENORM_SHIFT = 4
MODE_DESCRIPTOR_BITS = 10          # bits [9:0]; above them LOD_CLAMPED, DEBUG_EN, EXCP_EN, FP16_OVFL, ...


def _args(text: str, prefix: str) -> list[str]:
    if not (text.startswith(prefix + "(") and text.endswith(")")):
        raise ValueError(f"not {prefix}(...): {text!r}")
    return [a.strip() for a in text[len(prefix) + 1:-1].split(",")]


def hwreg_value(text: str) -> int:
    """``hwreg(HW_REG_MODE, 4, 4)`` -> 0x1901."""
    args = _args(text, "hwreg")
    ident = HWREG_IDS[args[0]] if args[0] in HWREG_IDS else int(args[0], 0)
    offset, size = (int(args[1], 0), int(args[2], 0)) if len(args) == 3 else (0, 32)
    return ident | offset << 6 | (size - 1) << 11


def hwreg_fields(simm16: int) -> tuple[int, int, int]:
    """(id, bit offset, size) of an encoded hwreg operand."""
    return simm16 & 0x3F, (simm16 >> 6) & 0x1F, ((simm16 >> 11) & 0x1F) + 1


def sendmsg_value(text: str) -> int:
    """``sendmsg(MSG_GS_DONE, GS_OP_NOP)`` -> 3."""
    args = _args(text, "sendmsg")
    parts = [SENDMSG_IDS.get(a, SENDMSG_OPS.get(a)) if a in SENDMSG_IDS or a in SENDMSG_OPS else int(a, 0)
             for a in args] + [0, 0]
    return parts[0] | parts[1] << 4 | parts[2] << 8


__all__ = ["HWREG_IDS", "HWREG_NAMES", "SENDMSG_NAMES", "hwreg_fields", "hwreg_value", "sendmsg_value"]
