"""gfx950 scaled up-conversions ``v_cvt_scalef32_*``: FP8/BF8/FP4 codes -> f32, f16 or bf16, each value
multiplied by the scale S1 (an f32 that holds an OCP MX E8M0 scale in its exponent field).

* Selection (llc-22 on the ``llvm.amdgcn.cvt.scalef32.*`` intrinsics): ``f32_fp8/bf8`` and ``f16_fp8/bf8``
  convert byte ``op_sel[0] + 2*op_sel[1]`` of S0; ``f16_*`` write the f16 to the half ``op_sel[2]`` of D
  and keep the other half (the intrinsic takes D's old value); ``pk_*_fp8/bf8`` convert bytes 0-1 of
  S0, or 2-3 with ``op_sel[0]``; ``pk_*_fp4`` convert the two nibbles (low first) of byte
  ``op_sel[0] + 2*op_sel[1]``. Two results are written low first (a VGPR pair for f32, one VGPR of two
  halves for f16/bf16).
* Scale: the hardware reads only the exponent field: 2^(e-127), e = 0 is 2^-127, e = 255 NaN (HIP
  amd_hip_ocp.h ``__amd_scale_to_float``: "the scale operand is encoded in the exponent bits of an
  IEEE-754 float - always in the form 1.0 * 2**scale"). A scale with sign or mantissa bits set is refused
  (error) rather than guessed at: sources disagree on whether those bits are ignored.
* Result: the exact product rounded once to the destination, to nearest even, subnormals kept, beyond
  the largest finite value -> infinity; NaN codes and NaN scales give NaN (HIP's reference conversion
  ``fcbx::to_float``, amd_hip_ocp_host.hpp: "Overflow: return infinity (gfx950 HW behavior)").
  The denormal mode of the wave is not applied (not modelled for these).

Down-conversions ``v_cvt_scalef32_pk_{fp8,bf8,fp4}_{f32,f16,bf16}``: each input divided by the scale
(HIP's ``fcbx::from_float`` subtracts the scale exponent; MLIR's ``arith.scaling_truncf`` is x / scale),
then rounded to nearest, ties to the even code, subnormal codes included (CDNA3 ISA for fp8, as convert_fp8.py;
HIP's reference for fp4), -0 and negatives that round to zero keep the sign. Two results go to one word
of D (fp8: word ``op_sel[3]`` for two f32 sources, ``op_sel[2]`` for one packed 16-bit source) or one
byte (fp4: byte ``op_sel[2] + 2*op_sel[3]``, first value in the low nibble); the rest of D is kept
(llc-22 on the intrinsics, which take D's old value). Results beyond the largest finite code, Inf/NaN
inputs and NaN scales are errors: HIP's reference saturates some and gives NaN for others, and nothing
second confirms it.
The stochastic-rounding (``_sr_``) forms and the FP6/BF6 ``pk32``/``2xpk16`` forms are not implemented.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.matrix.f8f6f4 import _TABLES
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.emulator.vector.convert_fp8 import _encoder as fp8_encoder
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

# destination: (significant bits, smallest normal exponent, largest finite value)
_DEST = {"f32": (24, -126, float(np.finfo(np.float32).max)), "f16": (11, -14, 65504.0),
         "bf16": (8, -126, float(np.float32(2 - 2 ** -7) * np.float32(2.0 ** 127)))}


def scale_values(words, active) -> np.ndarray:
    """f32 scale bit patterns -> float64 2^(e-127) (NaN for e = 255); a Fault where an active lane's
    scale has sign or mantissa bits."""
    u = np.broadcast_to(np.asarray(words, dtype=np.int64) & 0xFFFFFFFF, active.shape)
    bad = ((u & 0x807FFFFF) != 0) & active
    if bad.any():
        raise Fault(f"scale 0x{int(u[bad][0]):08x} is not 2^k: only an E8M0 scale in the exponent field "
                    f"is modelled")
    e = u >> 23
    return np.where(e == 255, np.nan, np.ldexp(1.0, e - 127))


def round_to(x: np.ndarray, dest: str) -> np.ndarray:
    """float64 -> the nearest value of f32/f16/bf16 (ties to even, subnormals kept, overflow -> inf)."""
    bits, emin, top = _DEST[dest]
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        _, e = np.frexp(x)                                        # x = m * 2^e, 0.5 <= |m| < 1
        step = np.ldexp(1.0, np.maximum(e - 1, emin) - (bits - 1))
        q = np.where(np.isfinite(x), np.round(x / step) * step, x)
        return np.where(np.abs(q) > top, np.copysign(np.inf, x), q)


def encode(x: np.ndarray, dest: str) -> np.ndarray:
    """Values already representable in dest -> their bit patterns (uint32; 16-bit in the low half)."""
    if dest == "f32":
        return x.astype(np.float32).view(np.uint32)
    if dest == "f16":
        return x.astype(np.float16).view(np.uint16).astype(np.uint32)
    bf = (x.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint32)
    return np.where(np.isnan(x), np.uint32(0x7FC0), bf)


def _parse(opcode: str):
    """'v_cvt_scalef32_pk_bf16_fp4' -> (packed, dest, source format), or None."""
    parts = opcode.split("_")[3:]
    packed = parts[0] == "pk"
    parts = parts[1:] if packed else parts
    if len(parts) != 2 or parts[0] not in _DEST or parts[1] not in ("fp8", "bf8", "fp4"):
        return None
    if parts[1] == "fp4" and not packed or not packed and parts[0] == "bf16":
        return None
    return packed, parts[0], parts[1]


_NAMES = [f"v_cvt_scalef32_{p}{d}_{s}" for p in ("", "pk_") for d in _DEST for s in ("fp8", "bf8", "fp4")]
_NAMES = [n for n in _NAMES if _parse(n)]


@handles(*_NAMES)
def _cvt_scaled(ins, cx):
    packed, dest, fmt = _parse(ins.opcode)
    for mod, _ in ins.modifiers:
        if mod != "op_sel":
            raise Unsupported(f"modifier {mod} on {ins.opcode}")
    sel = ins.modifier("op_sel", 0) or 0
    d, s0, s1 = ins.operands[:3]
    src, scale = cx.vread(s0), cx.vread(s1)
    table = _TABLES[fmt]
    if packed and fmt == "fp4":
        shift, width, count = 8 * (sel & 3), 4, 2
    elif packed:
        shift, width, count = 16 * (sel & 1), 8, 2
    else:
        shift, width, count = 8 * (sel & 3), 8, 1
    dst_hi = bool(sel & 4) and not packed and dest == "f16"
    if dest == "f32" and count == 2:
        if not (isinstance(d, Reg) and d.kind == "v" and d.count == 2):
            raise Unsupported(f"destination {d} of {ins.opcode} (a VGPR pair)")
        writes = [cx.vwrite(d.sub(0)), cx.vwrite(d.sub(1))]
    else:
        writes = [cx.vwrite(d)]
    old = cx.vread(d) if dest == "f16" and not packed else None

    def run(w):
        x = np.broadcast_to(np.asarray(src(w), np.int64), (w.lanes,)) >> shift
        k = scale_values(scale(w), w.exec_lanes)
        with np.errstate(invalid="ignore"):
            vals = [encode(round_to(table[(x >> (width * i)) & ((1 << width) - 1)] * k, dest), dest)
                    for i in range(count)]
        if dest == "f32":
            for wr, v in zip(writes, vals):
                wr(w, v)
        elif count == 2:
            writes[0](w, vals[0] | (vals[1] << np.uint32(16)))
        else:
            keep = np.broadcast_to(np.asarray(old(w), np.uint32), (w.lanes,))
            v = (keep & np.uint32(0xFFFF)) | (vals[0] << np.uint32(16)) if dst_hi else \
                (keep & np.uint32(0xFFFF0000)) | vals[0]
            writes[0](w, v)
    if old is not None:
        run.extra_srcs = reg_keys(d)
    run.lane_bound = True            # wave by wave: the scale check reads this wave's EXEC
    return run




def fp4_encoder():
    """f64 values -> E2M1 codes (int64): nearest, ties to the even code; a Fault beyond 6 (+ half a step)."""
    values = _TABLES["fp4"][:8]                                   # positive codes 0..7, increasing

    def encode(x, active):
        x = np.broadcast_to(np.asarray(x, np.float64), active.shape)
        mag = np.abs(x)
        bad = ~np.isfinite(x) | (mag >= 7.0)
        if (bad & active).any():
            raise Fault(f"converting {x[bad & active][0]!r} to fp4: beyond the largest finite value 6 (or inf/NaN); "
                        f"the hardware result is not pinned down here")
        mag = np.where(bad, 0.0, mag)
        i = np.clip(np.searchsorted(values, mag), 1, 7)
        below, above = values[i - 1], values[i]
        up = (mag - below > above - mag) | ((mag - below == above - mag) & (i % 2 == 0))
        code = np.where(up, i, i - 1)
        return np.where(np.signbit(x), code | 8, code).astype(np.int64)
    return encode


def _halves(words, bf16: bool):
    """uint32 lanes -> (low, high) 16-bit halves as float64 (f16 or bf16)."""
    u = np.asarray(words, np.uint32)
    if bf16:
        return tuple(((u >> np.uint32(s)) << np.uint32(16)).astype(np.uint32).view(np.float32).astype(np.float64)
                     for s in (0, 16))
    return tuple(((u >> np.uint32(s)) & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
                 for s in (0, 16))


_DOWN = [f"v_cvt_scalef32_pk_{t}_{s}" for t in ("fp8", "bf8", "fp4") for s in ("f32", "f16", "bf16")]


@handles(*_DOWN)
def _cvt_scaled_down(ins, cx):
    target, source = ins.opcode.split("_")[-2:]
    for mod, _ in ins.modifiers:
        if mod != "op_sel":
            raise Unsupported(f"modifier {mod} on {ins.opcode}")
    sel = ins.modifier("op_sel", 0) or 0
    d = ins.operands[0]
    if not (isinstance(d, Reg) and d.kind == "v" and d.count == 1):
        raise Unsupported(f"destination {d} of {ins.opcode}")
    if source == "f32":
        a, b, scale = (cx.vread(op) for op in ins.operands[1:4])
        inputs = lambda w: (np.asarray(a(w), np.uint32).view(np.float32).astype(np.float64),
                            np.asarray(b(w), np.uint32).view(np.float32).astype(np.float64))
    else:
        src, scale = cx.vread(ins.operands[1]), cx.vread(ins.operands[2])
        inputs = lambda w: _halves(src(w), source == "bf16")
    if target == "fp4":
        encode, width = fp4_encoder(), 4
        shift = 8 * ((sel >> 2 & 1) + 2 * (sel >> 3 & 1))
        keep = ~(0xFF << shift) & 0xFFFFFFFF
    else:
        encode, width = fp8_encoder(target == "bf8", True), 8
        shift = 16 * (sel >> (3 if source == "f32" else 2) & 1)
        keep = ~(0xFFFF << shift) & 0xFFFFFFFF
    old, wr = cx.vread(d), cx.vwrite(d)

    def run(w):
        active = w.exec_lanes
        k = scale_values(scale(w), active)
        if np.isnan(k[active]).any():
            raise Fault("a NaN scale (exponent field 255): the result is not pinned down here")
        lo, hi = (np.broadcast_to(v, active.shape) / np.where(np.isnan(k), 1.0, k) for v in inputs(w))
        packed = encode(lo, active) | (encode(hi, active) << width)
        out = (np.broadcast_to(np.asarray(old(w), np.int64), active.shape) & keep) | (packed << shift)
        wr(w, out.astype(np.uint32))
    run.extra_srcs = reg_keys(d)
    run.lane_bound = True
    return run


__all__ = ["encode", "fp4_encoder", "round_to", "scale_values"]
