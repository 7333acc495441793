"""Instruction classes and the static issue model of ``tensile-asm inspect`` (modelled, not measured).

``classify`` is the one place an ``Instruction`` gets its class; the clocks of each class come from
the architecture's ``issue_cycles`` table (``isa/<gfx>.yaml``, with the sources of its numbers).
Static efficiency is the FMA issue clocks (VALU multiply-accumulate or MFMA) over all issue clocks of
one pass through an instruction sequence; the count ratio is the Tensile paper's plain estimate,
FMA instructions over all instructions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tensile_asm.errors import UserError
from tensile_asm.isa import mfma_passes
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.opcodes import op_info

# Every class the classifier can return; each needs a clock count in ``issue_cycles``.
CLASSES = ("valu_fma", "mfma", "valu", "valu_quarter", "salu", "smem", "ds_read", "ds_write",
           "vmem_load", "vmem_store", "branch", "waitcnt", "barrier", "nop", "misc")
FMA_CLASSES = ("valu_fma", "mfma")

# Floating-point multiply-accumulate on the VALU (integer v_mad_u32_u24 & co. are address math).
_VALU_FMA = re.compile(r"^v_(pk_)?(fma|fmac|mac|mad)(_legacy)?_f(16|32|64)$|^v_dot2c?_f32_b?f16$")
# Quarter-rate VALU (LLVM SISchedule.td WriteTrans32 / WriteQuarterRate32).
_VALU_QUARTER = re.compile(r"^v_(exp|log|rcp|rsq|sqrt|sin|cos)(_iflag|_clamp|_legacy)?_f(16|32|64)$"
                           r"|^v_mul_(lo|hi)_(u32|i32)$")
_BRANCHES = ("s_branch", "s_cbranch_", "s_setpc_", "s_swappc_", "s_call_")


def classify(ins: Instruction) -> str:
    """The issue class of one instruction (one of ``CLASSES``)."""
    op = ins.opcode
    if op.startswith(("v_mfma_", "v_smfmac_")):
        return "mfma"
    if op.startswith("v_"):
        if op == "v_nop":
            return "nop"
        if _VALU_FMA.match(op):
            return "valu_fma"
        if _VALU_QUARTER.match(op):
            return "valu_quarter"
        return "valu"
    if op.startswith("s_waitcnt"):
        return "waitcnt"
    if op == "s_barrier":
        return "barrier"
    if op == "s_nop":
        return "nop"
    if op.startswith(_BRANCHES):
        return "branch"
    try:
        info = op_info(op)
    except KeyError:
        return "misc"
    if info.family == "SMEM":
        return "smem"
    if info.family == "SOPP":
        return "misc"
    if op.startswith("s_"):
        return "salu"
    if info.family == "DS":
        return "ds_read" if info.memory == "load" or info.num_defs else "ds_write"
    if info.family in ("MUBUF", "GLOBAL", "FLAT"):
        if info.memory == "load":
            return "vmem_load"
        return "vmem_store" if info.memory in ("store", "atomic") else "misc"
    return "misc"


@dataclass(frozen=True)
class IssueTable:
    """An architecture's ``issue_cycles`` table, checked once."""

    arch: str
    cycles: dict
    mfma_pass: int
    mfma_passes: tuple          # (compiled pattern, passes, when), first match wins (isa/mfma_passes.py)

    @classmethod
    def of(cls, arch: Arch) -> "IssueTable":
        where = f"isa/{arch.name}.yaml"
        table = arch.extra.get("issue_cycles")
        if table is None:
            raise UserError(f"{where} has no 'issue_cycles' table, which 'tensile-asm inspect' needs; "
                            f"copy the one in isa/gfx90a.yaml and adjust it")
        missing = [c for c in CLASSES if c != "mfma" and c not in table] + \
                  [k for k in ("mfma_pass", "mfma_passes") if k not in table]
        if missing:
            raise UserError(f"{where}: issue_cycles lacks {', '.join(missing)}; every class needs a clock count")
        rules = mfma_passes.compile_table(table["mfma_passes"], where)
        cycles = {c: int(table[c]) for c in CLASSES if c != "mfma"}
        return cls(arch.name, cycles, int(table["mfma_pass"]), rules)

    def mfma_passes_of(self, ins) -> int:
        """Passes of an MFMA (an Instruction; an opcode string counts as having no modifiers)."""
        return mfma_passes.passes_of(self.mfma_passes, ins, self.arch)

    def clocks(self, ins: Instruction, cls: str | None = None) -> int:
        cls = cls or classify(ins)
        if cls == "mfma":
            return self.mfma_passes_of(ins) * self.mfma_pass
        if cls == "nop" and ins.opcode == "s_nop":
            n = ins.operands[0].value if ins.operands else 0
            return (int(n) + 1) * self.cycles["nop"]
        return self.cycles[cls]


@dataclass
class IssueSummary:
    instructions: int = 0
    fma_instructions: int = 0
    mix: dict = field(default_factory=dict)          # class -> instruction count
    clocks: dict = field(default_factory=dict)       # class -> issue clocks
    total_clocks: int = 0
    fma_clocks: int = 0

    @property
    def static_efficiency(self) -> float:
        return self.fma_clocks / self.total_clocks if self.total_clocks else 0.0

    @property
    def count_ratio(self) -> float:
        return self.fma_instructions / self.instructions if self.instructions else 0.0


def summarize(instructions: list, arch: Arch) -> IssueSummary:
    """Mix, issue clocks and both efficiency estimates of one pass through ``instructions``."""
    table = IssueTable.of(arch)
    s = IssueSummary()
    for ins in instructions:
        cls = classify(ins)
        c = table.clocks(ins, cls)
        s.instructions += 1
        s.mix[cls] = s.mix.get(cls, 0) + 1
        s.clocks[cls] = s.clocks.get(cls, 0) + c
        s.total_clocks += c
        if cls in FMA_CLASSES:
            s.fma_instructions += 1
            s.fma_clocks += c
    order = {c: i for i, c in enumerate(CLASSES)}
    s.mix = dict(sorted(s.mix.items(), key=lambda kv: (-kv[1], order[kv[0]])))
    s.clocks = {c: s.clocks[c] for c in s.mix}
    return s


@dataclass
class OverlapSummary:
    """The overlap model's answer for one loop body: modelled clocks of one pass in steady state and the
    clocks the matrix pipe is busy in it."""

    period: int
    mfma_clocks: int

    @property
    def mfma_busy(self) -> float:
        return self.mfma_clocks / self.period if self.period else 0.0


def overlap(instructions: list, arch: Arch, passes: int = 3) -> OverlapSummary:
    """The order-aware companion of ``summarize`` (modelled, not measured): one wave issues the body in
    order, every instruction taking its ``issue_cycles`` clocks of issue; an MFMA takes one issue slot
    (``mfma_pass`` clocks) and then runs in the matrix pipe for passes x mfma_pass clocks, so the
    instructions issued after it overlap its run, and the next MFMA waits until the pipe is free. Memory
    latency and register dependencies are not modelled (the s_nop and s_waitcnt in the code are, as issue
    clocks). The body is run ``passes`` times; the period is the last pass's clocks (steady state)."""
    table = IssueTable.of(arch)
    t = pipe_free = 0
    mfma = 0
    marks = []
    for _ in range(passes):
        for ins in instructions:
            cls = classify(ins)
            if cls == "mfma":
                start = max(t, pipe_free)
                run = table.clocks(ins, cls)
                pipe_free = start + run
                t = start + table.mfma_pass
                if not marks:
                    mfma += run
            else:
                t += table.clocks(ins, cls)
        marks.append(t)
    period = marks[-1] - marks[-2] if passes > 1 else marks[-1]
    return OverlapSummary(period, mfma)
