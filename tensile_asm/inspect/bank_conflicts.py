"""LDS bank conflicts of a loop's DS instructions, replayed from lane addresses the emulator observed.

Addresses are not known statically, so the count comes from a run: the kernel is launched on the CPU
emulator (one workgroup), and each DS instruction of the loop records, for every wave, the lane
addresses of its first execution; the launch stops once every wave has closed the loop once.

Bank model (modelled; the bank count and width come from ``lds_banks`` in ``isa/<gfx>.yaml``): the
LDS has B banks of W bytes, dword d lives in bank d mod B, and it serves B*W bytes (128 on CDNA) per
clock. A wave's access is split into phases of consecutive lanes moving B*W bytes together: 32 lanes
for 4-byte accesses (the half-wave rule of AMD's GCN/CDNA optimisation guides), 16 lanes for 8 bytes,
8 lanes for 16 bytes (ROCm Composable Kernel notes, "LDS bank conflicts", for ds_write_b128).
Narrower accesses count as 4 bytes and ds_*_b96 as 16. In one phase, lanes reading the same dword
share it (broadcast); distinct dwords in one bank are served one per clock. A phase takes as many
clocks as its busiest bank; the conflict count is the clocks beyond one per phase with active lanes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from tensile_asm.errors import EmulationError, UserError
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.opcodes import op_info
from tensile_asm.isa.registers import Reg

_WIDTH = re.compile(r"_(b|u|i|f)(8|16|32|64|96|128)(_d16(_hi)?)?$")
_NO_MEMORY = ("ds_swizzle", "ds_permute", "ds_bpermute", "ds_nop", "ds_gws", "ds_append", "ds_consume",
              "ds_ordered_count")


@dataclass(frozen=True)
class DsAccess:
    """How one DS instruction addresses LDS: per lane, ``vaddr`` + each offset, ``dwords`` dwords."""

    vaddr: Reg
    offsets: tuple            # byte offsets of the elements (two for read2/write2)
    dwords: int               # dwords per element
    bytes_per_lane: int       # bytes one lane moves, for the phase size

    def dword_indices(self, lane_addresses: np.ndarray) -> np.ndarray:
        """[lanes, elements*dwords] dword indices from the lanes' ``vaddr`` values."""
        base = lane_addresses.astype(np.int64)[:, None]
        cols = np.array([o + 4 * k for o in self.offsets for k in range(self.dwords)], np.int64)[None, :]
        return (base + cols) >> 2


def ds_access(ins: Instruction) -> DsAccess | None:
    """The access pattern of a DS instruction; None for DS instructions that touch no LDS memory."""
    op = ins.opcode
    if not op.startswith("ds_") or op.startswith(_NO_MEMORY):
        return None
    info = op_info(op, returns=ins.has_modifier("glc"))
    vaddr = ins.operands[info.num_defs] if len(ins.operands) > info.num_defs else None
    if not isinstance(vaddr, Reg) or vaddr.kind != "v":
        return None
    m = _WIDTH.search(op)
    bits = int(m.group(2)) if m else 32
    dwords = max(1, bits // 32)
    if op.startswith(("ds_read2", "ds_write2", "ds_load_2addr", "ds_store_2addr", "ds_wrxchg2")):
        scale = dwords * 4 * (64 if "st64" in op else 1)
        offsets = tuple((ins.modifier(n, 0) or 0) * scale for n in ("offset0", "offset1"))
    else:
        offsets = (ins.modifier("offset", 0) or 0,)
    moved = max(4, bits // 8) * len(offsets)
    bytes_per_lane = 1 << (moved - 1).bit_length()            # b96 -> 16
    return DsAccess(vaddr, offsets, dwords, bytes_per_lane)


def access_cycles(dwords: np.ndarray, active: np.ndarray, bytes_per_lane: int, banks: int,
                  bank_bytes: int) -> tuple[int, int]:
    """(clocks, ideal clocks) one wave's access takes; ``dwords`` is [lanes, n], ``active`` [lanes]."""
    lanes = dwords.shape[0]
    per_phase = max(1, (banks * bank_bytes) // bytes_per_lane)
    cycles = ideal = 0
    for start in range(0, lanes, per_phase):
        sel = active[start:start + per_phase]
        if not sel.any():
            continue
        unique = np.unique(dwords[start:start + per_phase][sel].ravel())
        cycles += int(np.bincount(unique % banks, minlength=banks).max())
        ideal += 1
    return cycles, ideal


@dataclass
class InstructionConflicts:
    address: int | None
    text: str
    lanes_per_phase: int
    waves: int = 0                    # waves whose first execution was observed
    cycles: int = 0                   # worst observed wave
    ideal_cycles: int = 0
    conflict_cycles: int = 0          # worst observed wave: cycles beyond one per phase

    def as_dict(self) -> dict:
        return {"address": None if self.address is None else f"0x{self.address:x}", "instruction": self.text,
                "lanes_per_phase": self.lanes_per_phase, "waves": self.waves, "cycles": self.cycles,
                "ideal_cycles": self.ideal_cycles, "conflict_cycles": self.conflict_cycles}


@dataclass
class BankReport:
    source: str                       # how the addresses were obtained
    banks: int
    bank_bytes: int
    waves: int
    instructions: list = field(default_factory=list)      # InstructionConflicts, loop order
    not_executed: list = field(default_factory=list)      # texts of loop DS instructions never reached

    @property
    def conflict_cycles(self) -> int:
        return sum(i.conflict_cycles for i in self.instructions)

    @property
    def cycles(self) -> int:
        return sum(i.cycles for i in self.instructions)

    def as_dict(self) -> dict:
        return {"computed_from": self.source, "model": "modelled", "banks": self.banks,
                "bank_bytes": self.bank_bytes, "waves": self.waves, "ds_instructions": len(self.instructions),
                "cycles": self.cycles, "conflict_cycles": self.conflict_cycles,
                "conflicting": [i.as_dict() for i in self.instructions if i.conflict_cycles],
                "not_executed": self.not_executed}


@dataclass
class LaunchSpec:
    """What to launch for the replay: one workgroup is enough (the first one is observed)."""

    block: tuple
    args: tuple = ()
    grid: tuple = (1, 1, 1)
    description: str = ""


class _Enough(Exception):
    """Raised by the trace once every wave has closed the loop: the launch has shown what we need."""


def lds_bank_table(arch: Arch) -> tuple[int, int]:
    table = arch.extra.get("lds_banks")
    if not table or "count" not in table or "bytes" not in table:
        raise UserError(f"isa/{arch.name}.yaml has no 'lds_banks: {{count, bytes}}' entry, which the "
                        f"bank-conflict count needs; copy the one in isa/gfx90a.yaml")
    return int(table["count"]), int(table["bytes"])


def replay(co_path, kernel: str, loop_instructions: list, spec: LaunchSpec, arch: Arch,
           max_instructions: int = 5_000_000) -> BankReport:
    """Launch ``kernel`` as ``spec`` says and count the bank conflicts of the loop's DS instructions.

    Raises ``EmulationError``/``UserError`` when the launch fails.
    """
    from tensile_asm.emulator import Emulator

    banks, bank_bytes = lds_bank_table(arch)
    accesses = {ins.address: (ins, acc) for ins in loop_instructions
                if ins.address is not None and (acc := ds_access(ins)) is not None}
    branch = loop_instructions[-1].address
    emulator = Emulator.load(co_path, strict=False)
    threads = spec.block[0] * spec.block[1] * spec.block[2]
    waves = -(-threads // arch.wavefront_size)
    seen: dict = {}                    # (wave index, address) -> (dword indices, active lanes)
    closed: set = set()
    first_group: list = []

    def trace(w, ins):
        if not first_group:
            first_group.append(w.group.id)
        if w.group.id != first_group[0] or w.index in closed:
            return
        if ins.address == branch:
            closed.add(w.index)
            if len(closed) >= waves:
                raise _Enough
            return
        key = (w.index, ins.address)
        if key not in seen:
            acc = accesses[ins.address][1]
            active = np.array(w.exec_lanes, dtype=bool, copy=True)
            seen[key] = (acc.dword_indices(np.array(w.v[acc.vaddr.index], copy=True)), active)

    wanted = set(accesses) | {branch}
    try:
        emulator.launch(kernel, grid=spec.grid, block=spec.block, args=spec.args,
                        max_instructions=max_instructions, trace=trace, trace_if=lambda i: i.address in wanted)
    except _Enough:
        pass
    report = BankReport(spec.description, banks, bank_bytes, len(closed) or waves)
    for address, (ins, acc) in accesses.items():
        rec = InstructionConflicts(address, ins.render(), max(1, banks * bank_bytes // acc.bytes_per_lane))
        for (wave, addr), (dwords, active) in seen.items():
            if addr != address:
                continue
            cycles, ideal = access_cycles(dwords, active, acc.bytes_per_lane, banks, bank_bytes)
            rec.waves += 1
            if cycles - ideal >= rec.conflict_cycles:
                rec.cycles, rec.ideal_cycles, rec.conflict_cycles = cycles, ideal, cycles - ideal
        if rec.waves:
            report.instructions.append(rec)
        else:
            report.not_executed.append(rec.text)
    return report


__all__ = ["BankReport", "DsAccess", "EmulationError", "InstructionConflicts", "LaunchSpec", "access_cycles",
           "ds_access", "lds_bank_table", "replay"]
