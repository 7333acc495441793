"""SDWA (sub-dword addressing, gfx9): ``<op>_sdwa`` runs the VOP1/VOP2/VOPC operation ``<op>`` on
bytes or words picked out of its sources, and writes its result into a byte or word of the
destination.

Sources (``src0_sel``/``src1_sel``: BYTE_0..3, WORD_0/1, DWORD): the selected bits are shifted down
to bit 0 and zero-extended to 32 bits, or sign-extended with ``sext(v1)`` (integer operands only).
The operation then reads that dword as its operand type: a 16-bit float op its low half, an fp32 op
the whole dword (no conversion). Float ``neg``/``abs`` act on the selected value at the operand's
type. On gfx9 a source may be an SGPR or an inline constant; selection applies to its bits too.

Destination (``dst_sel``, ``dst_unused``): the low bits of the result, as wide as the field, go into
the field; the other bits are 0 (UNUSED_PAD), copies of the field's top bit above it and 0 below it
(UNUSED_SEXT), or the destination's old bits (UNUSED_PRESERVE, which makes the old destination a
source for strict checks). LLVM's AMDGPUModifierSyntax.rst ("SDWA Modifiers") documents these and
the defaults printed text may leave out: DWORD selections, dst_unused UNUSED_PRESERVE. A VOPC has
no dst_sel: on gfx9 it writes its lane mask to ``sdst`` (an SGPR pair or VCC).

``clamp`` and the gfx9 output modifiers (``mul:2``, ``mul:4``, ``div:2``) are applied by the base
operation to its result before it is placed (clamp after omod); they are accepted only where the
base handler implements them (fp32 results; clamp of the 16-bit float ops and of the saturating
16-bit integer adds/subtracts), else refused.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tensile_asm.emulator.program import M32, Compiler, Unsupported, _float_post, _flush, reg_keys
from tensile_asm.isa.instruction import SDWA_SELECTORS, SDWA_UNUSED
from tensile_asm.isa.registers import INLINE_FLOATS, Imm, Reg, Special

U32, F16, F32 = np.uint32, np.float16, np.float32
WORD_0, DWORD = SDWA_SELECTORS.index("WORD_0"), SDWA_SELECTORS.index("DWORD")
UNUSED_PAD, UNUSED_SEXT, UNUSED_PRESERVE = range(len(SDWA_UNUSED))       # in SDWA_UNUSED's order
# selector value -> (shift, width) of its field
FIELDS = {SDWA_SELECTORS.index(name): field for name, field in {
    "BYTE_0": (0, 8), "BYTE_1": (8, 8), "BYTE_2": (16, 8), "BYTE_3": (24, 8), "WORD_0": (0, 16), "WORD_1": (16, 16),
    "DWORD": (0, 32)}.items()}
_SDWA_MODIFIERS = ("dst_sel", "dst_unused", "src0_sel", "src1_sel", "sext")
_OUTPUT_MODIFIERS = ("clamp", "mul", "div")
_INV_2PI = 0.15915494


def select(value, sel: int, sext: bool):
    """The field ``sel`` of a 32-bit value (uint32 lanes or a Python int), shifted to bit 0 and
    zero- or sign-extended to 32 bits."""
    shift, width = FIELDS[sel]
    if width == 32:
        return value
    if isinstance(value, np.ndarray):
        field = (value >> U32(shift)) & U32((1 << width) - 1)
        if sext:
            top = U32(1 << (width - 1))
            field = (field ^ top) - top           # wraps modulo 2**32: the sign-extended pattern
        return field
    field = (value >> shift) & ((1 << width) - 1)
    if sext and field >> (width - 1):
        field |= M32 & ~((1 << width) - 1)
    return field


def place(result, old, sel: int, unused: int):
    """A 32-bit result written through ``dst_sel``/``dst_unused``; ``old`` is the destination's
    value (read only for UNUSED_PRESERVE)."""
    shift, width = FIELDS[sel]
    if width == 32:
        return result
    field_mask = (1 << width) - 1
    field = np.asarray(result, U32) & U32(field_mask)
    out = field << U32(shift)
    if unused == UNUSED_SEXT:
        above = U32(M32 & ~((1 << (shift + width)) - 1))
        out = out | np.where(field >> U32(width - 1) != 0, above, U32(0))
    elif unused == UNUSED_PRESERVE:
        out = out | (np.asarray(old, U32) & U32(M32 & ~(field_mask << shift)))
    elif unused != UNUSED_PAD:
        raise Unsupported(f"dst_unused:{unused}")
    return out.astype(U32)


def _f16_constant_bits(op: Imm) -> int:
    """A float inline constant as a 16-bit float operand sees it: its fp16 encoding (1.0 is 0x3c00)."""
    if op.value not in INLINE_FLOATS and op.value != _INV_2PI:
        raise Unsupported(f"float constant {op.value} for a 16-bit operand")
    return int(np.float16(op.value).view(np.uint16))


def _selected_constant(op: Imm, sel: int, sext: bool, f16_operand: bool) -> Imm:
    """An inline-constant source with its selection applied. What a 16-bit float operation reads from
    a byte or the high word of a float constant is not documented: refused."""
    if sel == DWORD and not sext:
        return op
    if isinstance(op.value, float) and f16_operand:
        if sel != WORD_0 or sext:
            raise Unsupported(f"a float inline constant selected with src_sel:{sel} by a 16-bit operation")
        return op                  # WORD_0 of the fp16 encoding is the encoding
    return Imm(select(op.bits, sel, sext))


def _f16_source(opcode: str) -> bool:
    """Whether the operation reads its sources as fp16 (``v_<op>_f16``, ``v_cvt_<to>_f16``)."""
    return opcode.endswith("_f16")


class _SdwaCompiler(Compiler):
    """A Compiler whose reads of the SDWA sources apply their selection, and whose write of the
    vector destination goes through dst_sel/dst_unused."""

    def __init__(self, cx: Compiler, sources: dict, dst, dst_sel: int, unused: int, f16_constants: bool):
        self.__dict__.update(cx.__dict__)
        self._sources = sources                  # id(operand) -> (sel, sext)
        self._dst, self._dst_sel, self._unused = dst, dst_sel, unused
        self._f16_constants = f16_constants
        self.float_post_used = False             # the base asked for clamp/omod through vwrite_f
        self.modified_sources = set()            # operand indices whose neg/abs the base asked for

    def src_mod(self, inst, index: int):
        self.modified_sources.add(index)
        return super().src_mod(inst, index)

    def _selection(self, op):
        return self._sources.get(id(op))

    def vread(self, op):
        if isinstance(op, Imm) and isinstance(op.value, float) and self._f16_constants:
            bits = _f16_constant_bits(op)
            return lambda w: bits
        mine = self._selection(op)
        if mine is None:
            return super().vread(op)
        sel, sext = mine
        rd = super().vread(op)
        if FIELDS[sel][1] == 32:
            return rd
        return lambda w: select(rd(w), sel, sext)

    def vread_i(self, op):
        if self._selection(op) is None:
            return super().vread_i(op)
        rd = self.vread(op)

        def get(w):
            x = rd(w)
            return x.view(np.int32) if isinstance(x, np.ndarray) else x - ((x & 0x80000000) << 1)
        return get

    def vread_f(self, op, neg: bool = False, absolute: bool = False):
        if self._selection(op) is None:
            return super().vread_f(op, neg, absolute)
        rd = self.vread(op)
        flush = self.flush_f32

        def get(w):
            x = rd(w)
            f = x.view(F32) if isinstance(x, np.ndarray) else U32(x).view(F32)
            if flush:
                f = _flush(f)
            if absolute:
                f = np.abs(f)
            return -f if neg else f
        return get

    def vread64(self, op):
        if self._selection(op) is not None:
            raise Unsupported("64-bit SDWA sources")
        return super().vread64(op)

    def vwrite(self, op):
        wr = super().vwrite(op)
        if op is not self._dst or FIELDS[self._dst_sel][1] == 32:
            return wr
        sel, unused = self._dst_sel, self._unused
        old = super().vread(op)
        return lambda w, val: wr(w, place(val, old(w) if unused == UNUSED_PRESERVE else 0, sel, unused))

    def vwrite_f(self, op, inst=None):
        if op is not self._dst:
            return super().vwrite_f(op, inst)
        if not (isinstance(op, Reg) and op.kind == "v"):
            raise Unsupported(f"cannot write {op} as a float vector destination")
        post = _float_post(inst, self.flush_f32) if inst is not None else None
        self.float_post_used = inst is not None
        wr = self.vwrite(op)

        def write(w, val):
            if post is not None:
                val = post(val)
            wr(w, np.asarray(val, F32).view(U32))
        return write

    def vwrite64(self, op):
        if op is self._dst:
            raise Unsupported("64-bit SDWA destinations")
        return super().vwrite64(op)


def _sdwa_builder(ins, cx, handlers: dict):
    base_name = ins.opcode[: -len("_sdwa")]
    builder = handlers.get(base_name)
    if builder is None:
        raise Unsupported(f"the emulator does not implement '{base_name}'")
    base_mods = tuple((m, v) for m, v in ins.modifiers if m not in _SDWA_MODIFIERS)
    base_ins = dataclasses.replace(ins, opcode=base_name, modifiers=base_mods, _info=None)
    num_defs = base_ins.info.num_defs
    srcs = list(base_ins.operands[num_defs:])
    if any(not (isinstance(o, Special) and o.name == "vcc") for o in srcs[2:]):
        raise Unsupported("SDWA takes at most two sources (and VCC)")
    sext_mask = ins.modifier("sext", 0) or 0
    f16_constants = _f16_source(base_name)
    sources = {}
    for k, op in enumerate(srcs[:2]):
        if not isinstance(op, (Reg, Imm, Special)) or (isinstance(op, Reg) and op.count != 1):
            raise Unsupported(f"SDWA source {op}")
        sel = ins.modifier(f"src{k}_sel", DWORD)
        if sel not in FIELDS:
            raise Unsupported(f"src{k}_sel:{sel}")
        sext = bool(sext_mask >> (num_defs + k) & 1)
        if isinstance(op, Imm):
            srcs[k] = _selected_constant(op, sel, sext, f16_constants)   # some handlers read constants themselves
            continue
        if sources.setdefault(id(op), (sel, sext)) != (sel, sext):
            raise Unsupported("one operand object read with two selections")
    base_ins.operands = base_ins.operands[:num_defs] + tuple(srcs)
    vopc = base_ins.info.family == "VOPC"
    dst = None if vopc else base_ins.operands[0]
    dst_sel = ins.modifier("dst_sel", DWORD)
    unused = ins.modifier("dst_unused", UNUSED_PRESERVE)
    if dst_sel not in FIELDS or unused not in (UNUSED_PAD, UNUSED_SEXT, UNUSED_PRESERVE):
        raise Unsupported(f"dst_sel:{dst_sel} dst_unused:{unused}")
    if vopc and (ins.has_modifier("dst_sel") or ins.has_modifier("dst_unused")):
        raise Unsupported("dst_sel/dst_unused on a VOPC")
    sub = _SdwaCompiler(cx, sources, dst, dst_sel, unused, f16_constants)
    run = builder(base_ins, sub)
    output_mods = [m for m, _ in base_mods if m in _OUTPUT_MODIFIERS]
    applied = sub.float_post_used or (base_name in _CLAMP_IN_HANDLER and output_mods == ["clamp"])
    if output_mods and not applied:
        raise Unsupported(f"{' '.join(output_mods)} on {base_name} (its handler does not apply them)")
    float_mods = (ins.modifier("neg", 0) or 0) | (ins.modifier("abs", 0) or 0)
    ignored = [i for i in range(len(ins.operands)) if float_mods >> i & 1 and i not in sub.modified_sources]
    if ignored:
        raise Unsupported(f"neg/abs of operand {ignored[0]} on {base_name} (its handler does not apply them)")
    extra = tuple(getattr(run, "extra_srcs", ()))
    if dst is not None and FIELDS[dst_sel][1] < 32 and unused == UNUSED_PRESERVE:
        extra += reg_keys(dst)
    lane_bound = sub.lane_bound or getattr(run, "lane_bound", False)

    def sdwa(w):                 # its own function: the attributes below must not land on a shared one
        return run(w)
    sdwa.extra_srcs = extra
    sdwa.lane_bound = lane_bound
    return sdwa


# Operations whose handler applies clamp itself rather than through vwrite_f: the 16-bit float ops
# (float16.py, which refuses output modifiers) and the saturating 16-bit integer ones (integer16.py). Clamp
# on anything else that does not go through vwrite_f is refused until its handler is listed here.
_CLAMP_IN_HANDLER = frozenset({"v_add_f16", "v_sub_f16", "v_subrev_f16", "v_mul_f16", "v_max_f16", "v_min_f16",
                               "v_add_u16", "v_sub_u16", "v_subrev_u16"})


def add_sdwa_forms(handlers: dict) -> None:
    """Give every VOP1/VOP2/VOPC operation in ``handlers`` its ``<op>_sdwa`` form; VOP3-only operations
    (three sources) and 64-bit operands are refused when compiled."""
    def build(ins, cx):
        return _sdwa_builder(ins, cx, handlers)
    for name in [name for name in list(handlers) if name.startswith("v_") and not name.endswith(("_dpp", "_sdwa"))
                 and not name.startswith(("v_mfma", "v_smfmac", "v_pk_", "v_readlane", "v_writelane",
                                          "v_readfirstlane", "v_accvgpr"))]:
        handlers[name + "_sdwa"] = build


__all__ = ["FIELDS", "add_sdwa_forms", "place", "select"]
