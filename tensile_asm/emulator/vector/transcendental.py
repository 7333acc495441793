"""Transcendental approximations on fp16 and fp64: ``v_rcp/rsq/sqrt/exp/log/sin/cos_f16`` and
``v_rcp/rsq/sqrt_f64``. NOT bit-exact: the hardware computes approximations whose exact results AMD
does not publish; like float32.py's ``v_rcp_f32``/``v_sqrt_f32``/``v_exp_f32``..., these give the real
function's value rounded to the result type (fp16: evaluated in fp64 and rounded once; fp64 rcp and
sqrt are IEEE-exact divide/sqrt, rsq is 1/sqrt rounded twice), so the last bit may differ from
hardware. Code whose result depends on that bit cannot be checked with this emulator.

Functions (ISA opcode tables): exp is 2**x, log is log2, sin/cos take revolutions (sin(x * 2 pi)).
Special values follow IEEE (rcp(+-0) = +-inf, rsq/sqrt/log of a negative value NaN, log(0) = -inf);
a NaN produced from a non-NaN input is the positive quiet NaN (assumed: the default NaN).
fp16: VOP3 ``neg``/``abs`` and ``clamp`` apply, the high 16 bits of the destination are written as 0
(gfx9: LLVM ``GCNSubtarget::zeroesHigh16BitsOfDest`` lists these), fp16 denormals are kept. fp64:
``neg``/``abs`` apply, ``clamp``/output modifiers are refused; ``v_rcp_f64`` flushes denormal results to
zero (LLVM's AMDGPUInstCombineIntrinsic.cpp, folding llvm.amdgcn.rcp: "The instruction always flushes
denormal results (except for f16)").
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.emulator.vector.float64_packed16 import f64_src
from tensile_asm.emulator.vector.operands16 import allow_modifiers, f16_bits, f16_source, half_dest

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

F64, U32, U64 = np.float64, np.uint32, np.uint64
_TWO_PI = 2.0 * np.pi
_FUNCTIONS = {
    "rcp": lambda x: 1.0 / x,
    "rsq": lambda x: 1.0 / np.sqrt(x),
    "sqrt": np.sqrt,
    "exp": np.exp2,
    "log": np.log2,
    "sin": lambda x: np.sin(x * _TWO_PI),
    "cos": lambda x: np.cos(x * _TWO_PI),
}
_NAN16 = U32(0x0200)
_TINY64 = 2.0 ** -1022


def _apply(fn, x):
    """fn(x); a NaN made from a non-NaN input is the positive quiet NaN (assumed: the hardware's
    default NaN; numpy on x86 would give a negative one), a NaN input passes through (quieted)."""
    x = np.asarray(x, F64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = np.asarray(fn(x), F64)
    return np.where(np.isnan(r) & ~np.isnan(x), np.nan, r)


@handles(*(f"v_{name}_f16" for name in _FUNCTIONS))
def _trans_f16(ins, cx):
    allow_modifiers(ins, ("neg", "abs", "clamp"))
    fn = _FUNCTIONS[ins.opcode.split("_")[1]]
    a = f16_source(cx, ins, 1, False)
    write, _ = half_dest(cx, ins, False, keep_other=False)
    clamp = ins.has_modifier("clamp")

    def run(w):
        r = _apply(fn, a(w))
        if clamp:
            r = np.clip(r, 0.0, 1.0)
        bits = f16_bits(r)
        write(w, np.where(np.isnan(r), bits | _NAN16, bits))
    return run


@handles("v_rcp_f64", "v_rsq_f64", "v_sqrt_f64")
def _trans_f64(ins, cx):
    for m, _ in ins.modifiers:
        if m in ("clamp", "mul", "div"):
            raise Unsupported(f"{m} on {ins.opcode}")
    fn = _FUNCTIONS[ins.opcode.split("_")[1]]
    flush = ins.opcode == "v_rcp_f64"
    a, wr = f64_src(cx, ins, 1), cx.vwrite64(ins.operands[0])

    def run(w):
        r = _apply(fn, a(w))
        if flush:                    # the only op here whose result can be denormal
            r = np.where(np.abs(r) < _TINY64, np.copysign(0.0, r), r)
        wr(w, np.broadcast_to(r, (w.lanes,)).view(U64))
    return run
