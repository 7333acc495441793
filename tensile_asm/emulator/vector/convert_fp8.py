"""fp8/bf8 conversions (gfx942, gfx950): ``v_cvt_f32_fp8/bf8`` (byte 0 of S0 -> fp32),
``v_cvt_pk_f32_fp8/bf8`` (bytes 0 and 1 -> an fp32 pair), ``v_cvt_pk_fp8_f32/bf8_f32`` (two fp32 ->
two bytes of one word of D).

Formats: FNUZ on gfx942 (E4M3 bias 8, E5M2 bias 16, 0x80 is the only NaN, no infinities, no -0), OCP
on gfx950 (E4M3FN, E5M2 with infinities); the value tables are matrix/mfma.py's. Decoding is exact. Other
bytes: the SDWA forms (``src0_sel``) pick the byte/word, as the VOP1 forms read byte 0 / word 0; the
VOP3 ``op_sel`` byte/word selection is refused (its bit order is not pinned down here).

Encoding rounds to nearest, ties to the even code (the CDNA3 ISA: round to nearest even), denormals
included; -0 and negative values rounding to zero give 0x00 in FNUZ (0x80 would be NaN), 0x80 in OCP.
The word not selected by the destination's ``op_sel`` entry keeps D's old bits (LLVM's ``llvm.amdgcn.cvt.pk.fp8.f32``
takes the old value as an operand). What the hardware does with values beyond the largest finite
fp8/bf8 (after rounding), infinities and NaNs is not documented in what was read (HIP's own
conversion clamps with v_med3 before it): such a lane stops the run with an error instead of
guessing.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.matrix.mfma import _FP8
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

F32, F64, I64, U32 = np.float32, np.float64, np.int64, np.uint32


def _ocp(cx) -> bool:
    return cx.arch.float8_ocp          # isa/<gfx>.yaml float8: ocp (gfx950)


def _refuse_modifiers(ins, allowed=()):
    for m, _ in ins.modifiers:
        if m not in allowed:
            raise Unsupported(f"modifier {m} on {ins.opcode}")


@handles("v_cvt_f32_fp8", "v_cvt_f32_bf8", "v_cvt_pk_f32_fp8", "v_cvt_pk_f32_bf8")
def _decode(ins, cx):
    _refuse_modifiers(ins)
    table = _FP8[(ins.opcode.endswith("bf8"), _ocp(cx))].astype(F32)
    src = cx.vread(ins.operands[1])
    d = ins.operands[0]
    if not ins.opcode.startswith("v_cvt_pk_"):
        wr = cx.vwrite(d)
        return lambda w: wr(w, np.broadcast_to(table[np.asarray(src(w), I64) & 0xFF].view(U32), (w.lanes,)))
    if not (isinstance(d, Reg) and d.kind == "v" and d.count == 2):
        raise Unsupported(f"destination {d} of {ins.opcode} (a VGPR pair)")
    lo, hi = cx.vwrite(d.sub(0)), cx.vwrite(d.sub(1))

    def run(w):
        x = np.asarray(src(w), I64)
        a, b = table[x & 0xFF].view(U32), table[(x >> 8) & 0xFF].view(U32)
        lo(w, np.broadcast_to(a, (w.lanes,)))
        hi(w, np.broadcast_to(b, (w.lanes,)))
    return run


def _encoder(bf8: bool, ocp: bool):
    """fp32 values -> fp8 codes (int64); raises Fault on lanes the hardware's result is unknown for."""
    table = _FP8[(bf8, ocp)]
    codes = np.arange(128)
    finite = codes[np.isfinite(table[:128])]                 # positive codes, value increasing with code
    values = table[finite]
    largest = values[-1]
    step = values[-1] - values[-2]                           # spacing at the top: rounding to largest below +half
    name = ("bf8" if bf8 else "fp8") + (" (OCP)" if ocp else " (FNUZ)")

    def encode(x, active):
        x = np.broadcast_to(np.asarray(x, F64), active.shape)
        mag = np.abs(x)
        bad = ~np.isfinite(x) | (mag >= largest + step / 2)
        if (bad & active).any():
            raise Fault(f"converting {x[bad & active][0]!r} to {name}: beyond the largest finite value "
                        f"{largest:g} (or inf/NaN); the hardware result is not documented")
        mag = np.where(bad, 0.0, mag)                        # lanes outside EXEC: not written
        i = np.clip(np.searchsorted(values, mag), 1, len(values) - 1)
        below, above = values[i - 1], values[i]
        take_above = (mag - below > above - mag) | ((mag - below == above - mag) & (finite[i] % 2 == 0))
        code = np.where(take_above, finite[i], finite[i - 1])    # above largest (< overflow bound): largest
        negative = np.signbit(x) & ((code != 0) | ocp)
        return np.where(negative, code | 0x80, code).astype(I64)
    return encode


@handles("v_cvt_pk_fp8_f32", "v_cvt_pk_bf8_f32")
def _encode(ins, cx):
    _refuse_modifiers(ins, ("neg", "abs", "op_sel"))
    sel = ins.modifier("op_sel", 0) or 0
    if sel & 0b011:
        raise Unsupported(f"op_sel {sel:#b} on {ins.opcode}: only the destination word select")
    high = bool(sel & 0b100)               # op_sel:[0,0,1]: the entry after the two sources
    encode = _encoder(ins.opcode == "v_cvt_pk_bf8_f32", _ocp(cx))
    a, b = cx.fsrc(ins, 1), cx.fsrc(ins, 2)
    d = ins.operands[0]
    if not (isinstance(d, Reg) and d.kind == "v" and d.count == 1):
        raise Unsupported(f"destination {d} of {ins.opcode}")
    old, wr = cx.vread(d), cx.vwrite(d)
    shift, keep = (16, 0x0000FFFF) if high else (0, 0xFFFF0000)

    def run(w):
        active = w.exec_lanes
        word = encode(a(w), active) | (encode(b(w), active) << 8)
        out = (np.asarray(old(w), I64) & keep) | (word << shift)
        wr(w, np.broadcast_to(out.astype(U32), (w.lanes,)))
    run.extra_srcs = reg_keys(d)
    run.lane_bound = True            # wave by wave: the out-of-range check reads this wave's EXEC
    return run
