"""Compile a kernel's parsed instructions once into a list of ``Op`` closures.

Each handler builder (listed per opcode in its module's ``HandlerTable``, merged by registry.py)
receives the ``Instruction`` and a ``Compiler`` and returns ``fn(wave)``; the compiler hands out
operand accessors (read an SGPR, a VGPR row, an inline constant ...) so that decoding happens here,
not per wave or per lane. ``fn`` returns None to fall through, an op index to branch, or ``ENDPGM`` /
``BARRIER``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.state import AKEY, SPECIAL_INDEX, VKEY, lanes_of, mask_of
from tensile_asm.errors import EmulationError
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.parser import UNPARSED
from tensile_asm.isa.registers import Imm, Label, Reg, Special

ENDPGM, BARRIER = -1, -2
M32, M64 = 0xFFFFFFFF, (1 << 64) - 1
FLT_MIN = np.float32(1.17549435e-38)


class HandlerTable(dict):
    """One module's opcodes and their handler builders (canonical names, no _e32/_e64). Defining
    entries registers nothing: ``registry.build_registry`` merges the tables it lists."""

    def handles(self, *opcodes):
        """Decorator: ``builder`` handles ``opcodes``."""
        def deco(builder):
            for name in opcodes:
                self[name] = builder
            return builder
        return deco


class Unsupported(Exception):
    """An operand form or modifier a handler does not implement (reported when executed)."""


@dataclass(frozen=True)
class Limits:
    """Registers the kernel descriptor grants one wave."""
    vgprs: int
    agprs: int
    sgprs: int


class Op:
    """One compiled instruction. ``batchable``: it may run once over a batch of waves in lockstep
    (a vector op whose result per lane depends only on that lane, its wave's uniform SGPR sources
    ``skeys`` and shared memory); anything else runs wave by wave (see batch.py)."""

    __slots__ = ("fn", "srcs", "defs", "inst", "index", "batchable", "skeys", "hazard", "parts")

    def __init__(self, fn, srcs, defs, inst, index, batchable=False):
        self.fn, self.srcs, self.defs, self.inst, self.index = fn, srcs, defs, inst, index
        self.batchable = batchable
        self.hazard = None       # strict: fn(wave, clock) checking/recording hazard rules (strict/hazards.py)
        self.parts = None        # a fused stretch: the ops it runs at once (fuse.py)
        self.skeys = tuple(k for k in srcs if k < VKEY and k not in (126, 127))


def register_file(op):
    """``fn(wave)`` -> the wave's VGPR or AGPR rows, whichever file ``op`` names (memory data operands
    may be AGPRs on gfx90a and later)."""
    if isinstance(op, Reg) and op.kind == "a":
        return lambda w: w.a
    return lambda w: w.v


def reg_keys(op) -> tuple:
    if isinstance(op, Reg):
        base = {"s": 0, "v": VKEY, "a": AKEY}[op.kind]
        return tuple(range(base + op.index, base + op.index + op.count))
    if isinstance(op, Special) and op.name in SPECIAL_INDEX:
        i = SPECIAL_INDEX[op.name]
        return (i, i + 1) if op.name in ("vcc", "exec", "flat_scratch") else (i,)
    return ()


def describe(inst: Instruction) -> str:
    where = " ".join(w for w in (f"0x{inst.address:x}" if inst.address is not None else "",
                                 f"(.s line {inst.source_line})" if inst.source_line is not None else "") if w)
    return f"{where} `{inst.render()}`"


def imm64(imm: Imm) -> int:
    v = imm.value
    if isinstance(v, float):
        return int(np.float64(v).view(np.uint64))
    return v & M64


class Compiler:
    """Operand accessors for handler builders; one per (kernel, launch configuration)."""

    def __init__(self, arch, descriptor, strict: bool, labels: dict):
        self.arch = arch
        self.kd = descriptor
        self.strict = strict
        self.lanes = arch.wavefront_size
        self.labels = labels                       # address -> op index
        self.flush_f32 = descriptor.float_denorm_mode_32 != 3
        self.lane_bound = False      # set by accessors whose meaning depends on a 64-lane wave

    # -- control flow ------------------------------------------------------------------------------
    def target(self, op) -> int:
        if not isinstance(op, Label) or op.address not in self.labels:
            raise Unsupported(f"branch target {op} is not an instruction of this kernel")
        return self.labels[op.address]

    # -- scalar ------------------------------------------------------------------------------------
    def sread(self, op):
        if isinstance(op, Imm):
            c = op.bits
            return lambda w: c
        if isinstance(op, Reg) and op.kind == "s":
            i = op.index
            return lambda w: w.s[i]
        if isinstance(op, Special):
            if op.name == "scc":
                return lambda w: w.scc
            if op.name in SPECIAL_INDEX:
                i = SPECIAL_INDEX[op.name]
                return lambda w: w.s[i]
        raise Unsupported(f"cannot read {op} as a 32-bit scalar operand")

    def sread64(self, op):
        if isinstance(op, Imm):
            c = imm64(op)
            return lambda w: c
        if isinstance(op, Reg) and op.kind == "s" and op.count == 2:
            i, j = op.index, op.index + 1
            return lambda w: w.s[i] | w.s[j] << 32
        if isinstance(op, Special) and op.name == "exec":
            return lambda w: w.exec
        if isinstance(op, Special) and op.name in ("vcc", "flat_scratch"):
            i = SPECIAL_INDEX[op.name]
            return lambda w: w.s[i] | w.s[i + 1] << 32
        if isinstance(op, Special) and op.name in _apertures():
            c = _apertures()[op.name]
            return lambda w: c
        raise Unsupported(f"cannot read {op} as a 64-bit scalar operand")

    def swrite(self, op):
        if isinstance(op, Reg) and op.kind == "s" and op.count == 1:
            i = op.index
            def wr(w, val):
                w.s[i] = val & M32
            return wr
        if isinstance(op, Special) and op.name in ("exec_lo", "exec_hi"):
            hi = op.name == "exec_hi"
            def wr_exec(w, val):
                val &= M32
                w.set_exec((w.exec & M32) | val << 32 if hi else (w.exec & ~M32) | val)
            return wr_exec
        if isinstance(op, Special) and op.name in SPECIAL_INDEX and op.name not in ("vcc", "exec", "flat_scratch"):
            i = SPECIAL_INDEX[op.name]
            def wr_special(w, val):
                w.s[i] = val & M32
            return wr_special
        raise Unsupported(f"cannot write {op} as a 32-bit scalar destination")

    def swrite64(self, op):
        if isinstance(op, Special) and op.name == "exec":
            return lambda w, val: w.set_exec(val)
        if isinstance(op, Reg) and op.kind == "s" and op.count == 2:
            i = op.index
        elif isinstance(op, Special) and op.name in ("vcc", "flat_scratch"):
            i = SPECIAL_INDEX[op.name]
        else:
            raise Unsupported(f"cannot write {op} as a 64-bit scalar destination")
        def wr(w, val):
            w.s[i] = val & M32
            w.s[i + 1] = (val >> 32) & M32
        return wr

    # -- vector ------------------------------------------------------------------------------------
    def vread(self, op):
        """uint32 lanes (VGPR/AGPR row) or a Python int in [0, 2**32) for scalar sources."""
        if isinstance(op, Reg) and op.kind == "v":
            i = op.index
            return lambda w: w.v[i]
        if isinstance(op, Reg) and op.kind == "a":
            i = op.index
            return lambda w: w.a[i]
        return self.sread(op)

    def vread_i(self, op):
        """int32 lanes or a signed Python int."""
        if isinstance(op, Reg) and op.kind in "va":
            i = op.index
            if op.kind == "v":
                return lambda w: w.v[i].view(np.int32)
            return lambda w: w.a[i].view(np.int32)
        rd = self.sread(op)
        return lambda w: _signed(rd(w))

    def vread_f(self, op, neg: bool = False, absolute: bool = False):
        """float32 lanes or an np.float32 scalar, with the VOP3 abs/neg source modifiers applied."""
        if isinstance(op, Reg) and op.kind == "v":
            i = op.index
            base = lambda w: w.vf[i]
        elif isinstance(op, Reg) and op.kind == "a":
            i = op.index
            base = lambda w: w.a[i].view(np.float32)
        elif isinstance(op, Imm):
            c = np.uint32(op.bits).view(np.float32)
            base = lambda w: c
        else:
            rd = self.sread(op)
            base = lambda w: np.uint32(rd(w)).view(np.float32)
        if self.flush_f32:
            raw = base
            base = lambda w: _flush(raw(w))
        if absolute and neg:
            return lambda w: -np.abs(base(w))
        if absolute:
            return lambda w: np.abs(base(w))
        if neg:
            return lambda w: -base(w)
        return base

    def vread64(self, op):
        """uint64 lanes from a VGPR pair, or a 64-bit Python int."""
        if isinstance(op, Reg) and op.kind == "v" and op.count == 2:
            i = op.index
            return lambda w: w.v[i].astype(np.uint64) | (w.v[i + 1].astype(np.uint64) << np.uint64(32))
        return self.sread64(op)

    def vwrite(self, op):
        """Write uint32/int32 lanes (or an int) to a VGPR/AGPR under EXEC."""
        if not (isinstance(op, Reg) and op.kind in "va"):
            raise Unsupported(f"cannot write {op} as a vector destination")
        i, file = op.index, op.kind
        def wr(w, val):
            if type(val) is int:
                val &= M32
            row = w.v[i] if file == "v" else w.a[i]
            if w.exec_full:
                row[...] = val
            else:
                np.copyto(row, val, where=w.exec_lanes, casting="unsafe")
        return wr

    def vwrite_f(self, op, inst: Instruction | None = None):
        """Write float32 lanes under EXEC, applying clamp / output modifiers and denormal flushing."""
        if not (isinstance(op, Reg) and op.kind == "v"):
            raise Unsupported(f"cannot write {op} as a float vector destination")
        i = op.index
        post = _float_post(inst, self.flush_f32) if inst is not None else None
        def wr(w, val):
            if post is not None:
                val = post(val)
            row = w.vf[i]
            if w.exec_full:
                row[...] = val
            else:
                np.copyto(row, val, where=w.exec_lanes, casting="unsafe")
        return wr

    def vwrite64(self, op):
        if not (isinstance(op, Reg) and op.kind == "v" and op.count == 2):
            raise Unsupported(f"cannot write {op} as a 64-bit vector destination")
        lo, hi = self.vwrite(op.sub(0)), self.vwrite(op.sub(1))
        def wr(w, val):
            val = np.asarray(val, np.uint64)
            lo(w, (val & np.uint64(M32)).astype(np.uint32))
            hi(w, (val >> np.uint64(32)).astype(np.uint32))
        return wr

    def mask_read(self, op):
        """A lane mask (SGPR pair, VCC, EXEC or constant) as booleans."""
        rd = self.sread64(op)
        lanes = self.lanes
        self.lane_bound = True
        return lambda w: lanes_of(rd(w), lanes)

    def mask_write(self, op):
        """Write a boolean lane array as a 64-bit mask; lanes outside EXEC are written as 0."""
        wr = self.swrite64(op)
        self.lane_bound = True
        def write(w, lanes):
            wr(w, mask_of(lanes & w.exec_lanes) if not w.exec_full else mask_of(lanes))
        return write

    def src_mod(self, inst: Instruction, index: int) -> tuple[bool, bool]:
        neg = inst.modifier("neg", 0) or 0
        absm = inst.modifier("abs", 0) or 0
        return bool(neg >> index & 1), bool(absm >> index & 1)

    def fsrc(self, inst: Instruction, index: int):
        neg, absm = self.src_mod(inst, index)
        return self.vread_f(inst.operands[index], neg, absm)


def _signed(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


def _flush(x):
    if isinstance(x, np.ndarray):
        tiny = np.abs(x) < FLT_MIN
        return np.where(tiny, np.copysign(np.float32(0), x), x) if tiny.any() else x
    return np.copysign(np.float32(0), x) if abs(x) < FLT_MIN else x


def _float_post(inst: Instruction, flush: bool):
    steps = []
    omod = {("mul", 2): 2.0, ("mul", 4): 4.0, ("div", 2): 0.5}
    for m, v in inst.modifiers:
        if (m, v) in omod:
            factor = np.float32(omod[(m, v)])
            steps.append(lambda x, f=factor: x * f)
        elif m in ("mul", "div"):
            raise Unsupported(f"output modifier {m}:{v}")
    if inst.has_modifier("clamp"):
        steps.append(lambda x: np.clip(x, np.float32(0), np.float32(1)))
    if flush:
        steps.append(_flush)
    if not steps:
        return None
    def post(x):
        for s in steps:
            x = s(x)
        return x
    return post


def _raiser(message: str):
    def fn(w):
        raise Fault(message)
    return fn


def check_limits(inst: Instruction, limits: Limits) -> None:
    for op in inst.operands:
        if not isinstance(op, Reg):
            continue
        top = op.index + op.count
        granted = {"v": limits.vgprs, "a": limits.agprs, "s": limits.sgprs}[op.kind]
        if top > granted:
            what = {"v": "VGPRs", "a": "AGPRs", "s": "SGPRs"}[op.kind]
            raise EmulationError(f"instruction at {describe(inst)} uses {op} but the kernel descriptor grants "
                                 f"{granted} {what} ({op.kind}0..{op.kind}{granted - 1}); raise the register "
                                 f"count in .amdhsa_next_free_* or use fewer registers")


# Opcodes whose destination is also read (accumulators, read-modify-write SOPK).
READS_DEST = frozenset({"v_fmac_f32", "v_mac_f32", "v_fmac_f64", "s_addk_i32", "s_mulk_i32", "s_cmovk_i32",
                        "v_swap_b32", "v_permlane16_swap_b32", "v_permlane32_swap_b32",
                        "v_mac_legacy_f32", "v_fmac_legacy_f32", "v_dot2c_f32_f16"})


def _apertures() -> dict:
    from tensile_asm.emulator.registry import registry
    return registry().apertures


def compile_ops(instructions: list, arch, descriptor, limits: Limits, strict: bool) -> list:
    from tensile_asm.emulator.registry import registry
    handlers, prefixes = registry().handlers, registry().prefixes

    labels = {ins.address: i for i, ins in enumerate(instructions) if ins.address is not None}
    cx = Compiler(arch, descriptor, strict, labels)
    ops = []
    for index, ins in enumerate(instructions):
        check_limits(ins, limits)
        builder = handlers.get(ins.opcode)
        if builder is None:
            builder = next((b for p, b in prefixes.items() if ins.opcode.startswith(p)), None)
        cx.lane_bound = False
        if ins.opcode == UNPARSED:
            fn = _raiser(f"the disassembly line `{ins.comment}` could not be parsed")
        elif builder is None:
            fn = _raiser(f"the emulator does not implement '{ins.opcode}'")
        else:
            try:
                fn = builder(ins, cx)
                if _agpr_memory_operand(ins) and not getattr(fn, "agpr_ok", False):
                    raise Unsupported("AGPR data operands of this memory instruction are not implemented")
            except Unsupported as e:
                fn = _raiser(f"the emulator does not support this form of '{ins.opcode}': {e}")
        # A handler that tracks its own destinations (loads: PENDING until waited for) says so
        # with fn.manages_defs; fn.extra_srcs lists registers it reads beyond the uses; fn.exact_srcs, the
        # registers it reads in place of the uses (a packed operation whose op_sel reads one half of a pair).
        self_managed = getattr(fn, "manages_defs", False)
        try:
            info = ins.info
            defs, uses = ins.defs, ins.uses
            implicit_uses = tuple(k for name in info.implicit_uses if name not in ("exec", "scc")
                                  for k in reg_keys(Special(name)))
        except KeyError:
            defs, uses, implicit_uses = (), ins.operands, ()
        read = getattr(fn, "exact_srcs", None)
        srcs = tuple(k for o in (uses if read is None else read) for k in reg_keys(o)) + implicit_uses + \
            getattr(fn, "extra_srcs", ())
        if ins.opcode in READS_DEST:
            srcs += tuple(k for o in defs for k in reg_keys(o))
        dkeys = () if self_managed else tuple(k for o in defs for k in reg_keys(o))
        batchable = (builder is not None and not cx.lane_bound and _batchable(ins, defs)
                     and not getattr(fn, "lane_bound", False))
        ops.append(Op(fn, tuple(dict.fromkeys(srcs)), dkeys, ins, index, batchable))
    if strict:
        from tensile_asm.emulator.strict import expcnt, hazards
        hazards.attach(ops, arch)
        expcnt.attach(ops)
    return ops


def _agpr_memory_operand(ins: Instruction) -> bool:
    """A memory instruction with an AGPR operand: its handler must say it reads/writes the AGPR file
    (``fn.agpr_ok``), since memory handlers index VGPRs by default (gfx90a+ allow AGPR data)."""
    if not ins.opcode.startswith(("ds_", "buffer_", "global_", "flat_", "scratch_")):
        return False
    return any(isinstance(o, Reg) and o.kind == "a" for o in ins.operands)


_VECTOR_FAMILIES = frozenset({"VOP", "MFMA", "DS", "MUBUF", "GLOBAL", "FLAT"})
_LANE_SPECIFIC = ("v_readlane", "v_writelane", "v_readfirstlane", "v_mbcnt", "v_permlane", "v_swap")


def _batchable(ins: Instruction, defs) -> bool:
    """Vector ops that write only VGPRs/AGPRs/memory and read no lane masks or lane numbers."""
    try:
        family = ins.info.family
    except KeyError:
        return False
    if family not in _VECTOR_FAMILIES or ins.opcode.startswith(_LANE_SPECIFIC):
        return False
    if any(m in ("dpp8", "row_shl", "row_shr", "row_ror", "wave_shl", "wave_shr", "wave_rol", "wave_ror",
                 "row_mirror", "row_half_mirror", "row_bcast", "quad_perm", "row_newbcast", "row_share",
                 "row_xmask") for m, _ in ins.modifiers):
        return False
    return all(isinstance(d, Reg) and d.kind in "va" for d in defs)
