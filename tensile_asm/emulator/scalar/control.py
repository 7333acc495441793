"""Scalar program control beyond alu.py's branches: M0-relative SGPR moves (s_movrels/s_movreld), calls
(s_call_b64 / s_swappc_b64: the return address is the next instruction's), s_getreg_b32 of MODE (from
the kernel descriptor's float modes), s_setreg that keeps those modes, and the SOPP instructions a
compute kernel may carry: s_wakeup is a no-op; s_trap, s_sethalt, s_sendmsg and s_sendmsghalt stop the
launch with an error naming what the kernel asked for. Semantics: AMD CDNA3 ISA guide, SOP1/SOP2/SOPK/SOPP
opcode tables. (The bit operations are bits.py's, the common SALU alu.py's.)
"""

from __future__ import annotations

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import M32, HandlerTable, Unsupported
from tensile_asm.emulator.state import READY
from tensile_asm.emulator.strict import waitcnt as strict_mode
from tensile_asm.isa.hwreg import (HWREG_NAMES, MODE_DESCRIPTOR_BITS, MODE_DENORM_SHIFT, SENDMSG_NAMES,
                                   hwreg_fields)
from tensile_asm.isa.registers import Imm, Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

SGPR_FILE = 102          # s0..s101: M0-relative moves stay inside the general SGPRs


# -- M0-relative SGPR moves ------------------------------------------------------------------------

def _sgpr_index(base: Reg, m0: int, count: int) -> int:
    i = base.index + m0
    if m0 >> 31 or i + count > SGPR_FILE:
        raise Fault(f"M0-relative SGPR s{base.index} + M0 ({m0}) lies outside s0..s{SGPR_FILE - 1}")
    return i


@handles("s_movrels_b32", "s_movrels_b64", "s_movreld_b32", "s_movreld_b64")
def _movrel(ins, cx):
    n = 2 if ins.opcode.endswith("64") else 1
    d, s0 = ins.operands
    relative_src = ins.opcode.startswith("s_movrels")
    moved = s0 if relative_src else d
    if not (isinstance(moved, Reg) and moved.kind == "s"):
        raise Unsupported(f"M0-relative operand {moved} is not an SGPR")
    strict = cx.strict
    if relative_src:
        wr = cx.swrite64(d) if n == 2 else cx.swrite(d)
        def run(w):
            i = _sgpr_index(s0, w.s[124], n)
            if strict:
                for k in range(i, i + n):
                    if w.rstate[k] != READY:
                        raise strict_mode.read_error(w, _Op(ins), k)
            wr(w, w.s[i] | (w.s[i + 1] << 32 if n == 2 else 0))
        run.extra_srcs = (124,)
        return run
    rd = cx.sread64(s0) if n == 2 else cx.sread(s0)
    def run_d(w):
        i = _sgpr_index(d, w.s[124], n)
        v = rd(w)
        for k in range(n):
            w.s[i + k] = (v >> (32 * k)) & M32
        if strict:
            keys = tuple(range(i, i + n))
            strict_mode.overwrite(w, keys)
            w.mark_ready(keys)
    run_d.manages_defs = True
    run_d.extra_srcs = (124,)
    return run_d


class _Op:
    """What strict_mode.read_error needs of an op."""
    __slots__ = ("inst",)

    def __init__(self, inst):
        self.inst = inst


# -- calls ---------------------------------------------------------------------------------------------

@handles("s_swappc_b64", "s_call_b64")
def _call(ins, cx):
    if ins.address is None:
        raise Unsupported(f"{ins.opcode} needs instruction addresses (run a code object)")
    d, target = ins.operands
    wr, ret, labels = cx.swrite64(d), ins.address + 4, cx.labels
    if ins.opcode == "s_call_b64":
        index = cx.target(target)
        def call(w):
            wr(w, ret)
            return index
        return call
    rd = cx.sread64(target)
    def swap(w):
        addr = rd(w)
        if addr not in labels:
            raise Fault(f"s_swappc_b64 jumps to 0x{addr:x}, which is no instruction of this code object")
        wr(w, ret)
        return labels[addr]
    return swap


# -- hardware registers ------------------------------------------------------------------------------

def mode_bits(kd) -> int:
    """MODE[9:0] as the kernel descriptor sets it: FP_ROUND, FP_DENORM, DX10_CLAMP, IEEE."""
    return (kd.float_round_mode_32 | kd.float_round_mode_16_64 << 2 | kd.float_denorm_mode_32 << MODE_DENORM_SHIFT
            | kd.float_denorm_mode_16_64 << (MODE_DENORM_SHIFT + 2) | int(kd.enable_dx10_clamp) << 8
            | int(kd.enable_ieee_mode) << 9)


def _mode_field(ins, simm16):
    ident, offset, size = hwreg_fields(simm16)
    if ident != 1:
        name = HWREG_NAMES.get(ident, str(ident))
        raise Unsupported(f"hardware register {name}: only MODE is emulated")
    if offset + size > MODE_DESCRIPTOR_BITS:
        raise Unsupported(f"MODE bits [{offset + size - 1}:{offset}] reach past IEEE (bit 9); the emulator models "
                          f"only FP_ROUND, FP_DENORM, DX10_CLAMP and IEEE")
    return offset, (1 << size) - 1


@handles("s_getreg_b32")
def _getreg(ins, cx):
    d, field = ins.operands
    offset, mask = _mode_field(ins, field.value)
    value, wr = (mode_bits(cx.kd) >> offset) & mask, cx.swrite(d)
    return lambda w: wr(w, value)


@handles("s_setreg_b32", "s_setreg_imm32_b32")
def _setreg(ins, cx):
    field, src = ins.operands
    offset, mask = _mode_field(ins, field.value)
    keep = (mode_bits(cx.kd) >> offset) & mask
    rd = cx.sread(src)
    def run(w):
        new = rd(w) & mask
        if new != keep:
            raise Fault(f"{ins.opcode} sets MODE bits [{offset + mask.bit_length() - 1}:{offset}] to 0x{new:x} "
                        f"(the kernel descriptor set 0x{keep:x}); the emulator's float modes are fixed by the "
                        f"descriptor (float_modes.py), so a kernel that changes them is not emulated")
    return run


# -- SOPP -------------------------------------------------------------------------------------------

@handles("s_wakeup")
def _wakeup(ins, cx):
    return lambda w: None


def _stop(message):
    def fn(w):
        raise Fault(message)
    return fn


@handles("s_trap")
def _trap(ins, cx):
    code = ins.operands[0].value if ins.operands else 0
    return _stop(f"the kernel executes s_trap {code} (a trap: __builtin_trap, abort or a failed device assert); "
                 f"the emulator has no trap handler and stops here")


@handles("s_sethalt")
def _sethalt(ins, cx):
    return _stop("the kernel executes s_sethalt (halts the wave for a debugger); not emulated")


@handles("s_sendmsg", "s_sendmsghalt")
def _sendmsg(ins, cx):
    value = ins.operands[0].value if ins.operands and isinstance(ins.operands[0], Imm) else 0
    name = SENDMSG_NAMES.get(value & 0xF, str(value & 0xF))
    return _stop(f"{ins.opcode} {name} (0x{value:x}): messages to the SPI/host are not emulated")


__all__ = ["mode_bits"]
