"""DPP (data-parallel primitives, gfx9): ``<op>_dpp`` runs the VOP1/VOP2 operation ``<op>`` with
its first source read from another lane of the same wave.

Lane selection (``dpp_ctrl``): ``quad_perm:[a,b,c,d]`` (within each group of 4), ``row_shl:n`` /
``row_shr:n`` / ``row_ror:n`` (within each row of 16 lanes), ``wave_shl/shr/rol/ror:1`` (across the
wave), ``row_mirror`` / ``row_half_mirror``, ``row_bcast:15`` (lane 15 of each row to the next row),
``row_bcast:31`` (lane 31 to rows 2 and 3) and gfx90a's ``row_newbcast:n`` (lane n of each row to
its row). A source lane is invalid when it falls outside the row/wave (or ``row_bcast`` has no source
for that row) or is inactive in EXEC; an invalid source reads 0 with ``bound_ctrl`` set, and
otherwise the lane is not written. ``row_mask``/``bank_mask`` leave the lanes of disabled rows /
banks (groups of 4 lanes within a row) unwritten. Unwritten lanes keep the destination's old value,
so in strict mode the destination is also a source when some lanes may be unwritten.

DP ALU DPP (gfx90a/gfx942/gfx950): an operation with a 64-bit VGPR operand (``v_fmac_f64``,
``v_ceil_f64``, ``v_cvt_f64_f32``, ``v_cvt_f32_f64``, gfx942+'s ``v_mov_b64`` ...) takes DPP with
``row_newbcast`` only (LLVM AMDGPUBaseInfo ``isDPALU_DPP``/``isLegalDPALU_DPPControl``; llvm-mc-22 says
"DP ALU dpp only supports row_newbcast"); other controls are refused here too. A 64-bit source reads
both halves from the same source lane; a 64-bit destination keeps both old registers in unwritten lanes.
Not DPP on gfx9 (llvm-mc-22: "dpp variant of this instruction is not supported"): VOPC (``v_cmp*``,
``v_cmpx*``, 32- and 64-bit) and VOP3-only operations (``v_fma_f32``, ``v_add_f64``, ``v_fma_f16``,
``v_mad_u32_u24``); ``_e64_dpp`` is refused likewise. ``fi`` is not an operand on gfx9.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tensile_asm.emulator.program import Compiler, Unsupported, _flush, reg_keys
from tensile_asm.emulator.state import mask_of
from tensile_asm.isa.registers import Reg

U32, U64, F32 = np.uint32, np.uint64, np.float32
_LANES = 64
_CTRLS = ("quad_perm", "row_shl", "row_shr", "row_ror", "wave_shl", "wave_shr", "wave_rol", "wave_ror",
          "row_mirror", "row_half_mirror", "row_bcast", "row_newbcast")


def source_lanes(ctrl: str, value) -> np.ndarray:
    """For each of 64 lanes, the lane its DPP source is read from, or -1 when there is none."""
    lane = np.arange(_LANES)
    row, pos = lane & ~15, lane & 15
    if ctrl == "quad_perm":
        sel = [(value >> (2 * i)) & 3 for i in range(4)] if isinstance(value, int) else list(value)
        return (lane & ~3) + np.asarray(sel)[lane & 3]
    if ctrl in ("row_shl", "row_shr"):
        p = pos + value if ctrl == "row_shl" else pos - value
        return np.where((p >= 0) & (p < 16), row + p, -1)
    if ctrl == "row_ror":
        return row + (pos - value) % 16
    if ctrl in ("wave_shl", "wave_shr", "wave_rol", "wave_ror"):
        step = 1 if ctrl in ("wave_shl", "wave_rol") else -1
        src = lane + step
        return src % _LANES if ctrl in ("wave_rol", "wave_ror") else np.where((src >= 0) & (src < _LANES), src, -1)
    if ctrl == "row_mirror":
        return row + 15 - pos
    if ctrl == "row_half_mirror":
        return (lane & ~7) + 7 - (lane & 7)
    if ctrl == "row_bcast" and value == 15:
        return np.where(row >= 16, row - 1, -1)
    if ctrl == "row_bcast" and value == 31:
        return np.where(row >= 32, 31, -1)
    if ctrl == "row_newbcast":
        return row + value
    raise Unsupported(f"DPP control {ctrl}:{value}")


def _written_lanes(row_mask: int, bank_mask: int) -> np.ndarray:
    lane = np.arange(_LANES)
    return ((row_mask >> (lane >> 4)) & 1).astype(bool) & ((bank_mask >> ((lane >> 2) & 3)) & 1).astype(bool)


class _DppCompiler(Compiler):
    """A Compiler whose reads of ``operand`` (the DPP source) come from the selected lanes."""

    def __init__(self, cx: Compiler, operand: Reg, shuffle):
        self.__dict__.update(cx.__dict__)
        self._operand, self._shuffle = operand, shuffle

    def _mine(self, op) -> bool:
        return op is self._operand

    def vread(self, op):
        if not self._mine(op):
            return super().vread(op)
        i, shuffle = op.index, self._shuffle
        return lambda w: shuffle(w, w.v[i])

    def vread_i(self, op):
        if not self._mine(op):
            return super().vread_i(op)
        rd = self.vread(op)
        return lambda w: rd(w).view(np.int32)

    def vread_f(self, op, neg: bool = False, absolute: bool = False):
        if not self._mine(op):
            return super().vread_f(op, neg, absolute)
        rd = self.vread(op)
        base = (lambda w: _flush(rd(w).view(F32))) if self.flush_f32 else (lambda w: rd(w).view(F32))
        if absolute:
            raw = base
            base = lambda w: np.abs(raw(w))
        if neg:
            raw2 = base
            base = lambda w: -raw2(w)
        return base

    def vread64(self, op):
        if not self._mine(op):
            return super().vread64(op)
        i, shuffle = op.index, self._shuffle
        # DP ALU DPP: both halves of the pair come from the same source lane.
        return lambda w: (shuffle(w, w.v[i]).astype(U64) | (shuffle(w, w.v[i + 1]).astype(U64) << U64(32)))


def _dpp_builder(ins, cx, handlers: dict):
    base_name = ins.opcode[: -len("_dpp")]
    builder = handlers.get(base_name)
    if builder is None:
        raise Unsupported(f"the emulator does not implement '{base_name}'")
    if cx.lanes != _LANES:
        raise Unsupported("DPP on wave32")
    ctrl = [(m, v) for m, v in ins.modifiers if m in _CTRLS]
    if len(ctrl) != 1:
        raise Unsupported(f"DPP control {ctrl}")
    if ctrl[0][0] != "row_newbcast" and any(isinstance(o, Reg) and o.kind == "v" and o.count == 2
                                           for o in ins.operands[:4]):
        raise Unsupported(f"{ctrl[0][0]} on a DP ALU (64-bit operand) DPP operation: only row_newbcast exists")
    src_lane = source_lanes(*ctrl[0])
    row_mask, bank_mask = ins.modifier("row_mask", 0xF), ins.modifier("bank_mask", 0xF)
    bound_zero = bool(ins.modifier("bound_ctrl", 0)) or ins.has_modifier("bound_ctrl")
    enabled = _written_lanes(0xF if row_mask is None else row_mask, 0xF if bank_mask is None else bank_mask)
    valid_lane = src_lane >= 0
    safe = np.where(valid_lane, src_lane, 0)

    source_exec = [None]           # EXEC as the instruction found it (run() narrows EXEC to the written lanes)

    def shuffle(w, row):
        active = source_exec[0] if source_exec[0] is not None else np.asarray(w.exec_lanes)
        valid = valid_lane & active[safe]
        return np.where(valid, row[safe], U32(0))

    base_mods = tuple((m, v) for m, v in ins.modifiers
                      if m not in _CTRLS and m not in ("row_mask", "bank_mask", "bound_ctrl", "fi"))
    base_ins = dataclasses.replace(ins, opcode=base_name, modifiers=base_mods, _info=None)
    src0 = ins.operands[1] if len(ins.operands) > 1 else None
    if not (isinstance(src0, Reg) and src0.kind == "v"):
        raise Unsupported("the DPP source must be a VGPR")
    run_base = builder(base_ins, _DppCompiler(cx, src0, shuffle))
    every_lane = bool(enabled.all()) and (bound_zero or bool(valid_lane.all()))

    def run(w):
        old, active = w.exec, np.asarray(w.exec_lanes)
        lanes = active & enabled
        if not bound_zero:
            lanes &= valid_lane & active[safe]
        new = mask_of(lanes)
        source_exec[0] = active
        try:
            if new == old:
                return run_base(w)
            w.set_exec(new)
            try:
                return run_base(w)
            finally:
                w.set_exec(old)
        finally:
            source_exec[0] = None
    run.lane_bound = True
    extra = tuple(getattr(run_base, "extra_srcs", ()))
    dst = ins.operands[0]
    if not every_lane and isinstance(dst, Reg):
        extra += reg_keys(dst)
    run.extra_srcs = extra
    return run


def add_dpp_forms(handlers: dict) -> None:
    """Give every VOP1/VOP2 operation in ``handlers`` its ``<op>_dpp`` form (the builder refuses forms it
    cannot express); VOP3-only and VOPC operations have no gfx9 DPP form (the assembler refuses them)."""
    def build(ins, cx):
        return _dpp_builder(ins, cx, handlers)
    for name in [name for name in list(handlers) if name.startswith("v_") and not name.startswith(
            ("v_mfma", "v_smfmac", "v_pk_", "v_cmp", "v_readlane", "v_writelane", "v_readfirstlane"))]:
        handlers[name + "_dpp"] = build


__all__ = ["add_dpp_forms", "source_lanes"]
