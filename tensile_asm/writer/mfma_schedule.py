"""The MFMA main-loop scheduler: spread the loop's memory work between its MFMAs.

An MFMA issues in one slot and then runs in the matrix pipe for passes x 4 clocks; instructions the wave
issues meanwhile cost no matrix time, and the next MFMA waits for the pipe anyway. Written component by
component, a loop iteration is clusters: the next tile's global reads and pointer moves, then per K-step
the LDS reads of a later step and the step's MFMAs, then the LDS writes of the next tile. ``interleave``
merges the two streams of one straight-line region (the MFMAs in their order; everything else in its
order) so that after each MFMA come as many of the other instructions as fit in its run (their
``issue_cycles`` clocks, isa/<arch>.yaml), in the manner of Tensile's ScheduleIterAlg 3 (GlobalReadPerMfma,
LocalWritePerMfma), but sized by the MFMA's own passes.

Only the merge changes: both streams keep their own order, and an instruction never crosses an MFMA it
shares a register with (it writes what the MFMA reads or writes, or reads what the MFMA writes), nor one
when it writes EXEC. So every value is produced before it is used as before; the waits for memory come
afterwards from the waitcnt pass (isa/waitcnt_pass.py) and the wait states from the hazard pass
(isa/hazards.py), which see the merged order. Barriers and LDS accesses keep their order among
themselves (they are all in the second stream), which is what the LDS buffers' safety rests on.
"""

from __future__ import annotations

from tensile_asm.inspect.issue_model import IssueTable
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.module import Comment, LabelDef, Module
from tensile_asm.isa.registers import Reg, Special, VRegRef


AHEAD = 0     # MFMAs a region instruction may move ahead of its place as written, beyond the one before it
# wait states between a VALU write and an MFMA reading it (isa/gfx90a.yaml valu_write_mfma_read; gfx908 and
# gfx942 alike): the order leaves that many instructions between them where it can (the hazard pass still rules)
VALU_MFMA_WAIT = 2


def _keys(operands) -> set:
    out = set()
    for op in operands:
        if isinstance(op, VRegRef):
            out.update((id(op.vreg), op.offset + i) for i in range(op.count))
        elif isinstance(op, Reg):
            out.update((op.kind, op.index + i) for i in range(op.count))
        elif isinstance(op, Special):
            out.add(op.name)
    return out


def _is_mfma(ins: Instruction) -> bool:
    return ins.opcode.startswith(("v_mfma_", "v_smfmac_"))


class _Access:
    __slots__ = ("ins", "defs", "uses")

    def __init__(self, ins: Instruction):
        self.ins = ins
        self.defs = _keys(ins.defs)
        self.uses = _keys(ins.uses)


def _conflict(other: _Access, mfma: _Access) -> bool:
    return bool(other.defs & (mfma.uses | mfma.defs) or other.uses & mfma.defs or "exec" in other.defs)


def _accesses(region: list) -> list[_Access] | None:
    """The instructions of ``region``; None when it holds a label or a branch (not straight-line)."""
    out = []
    for item in Module("region").add(region).flatten():
        if isinstance(item, Comment):
            continue
        if isinstance(item, LabelDef) or item.opcode.startswith(("s_branch", "s_cbranch_", "s_setpc", "s_endpgm")):
            return None
        out.append(_Access(item))
    return out


def _independent(xs: list[_Access], ys: list[_Access]) -> bool:
    """No register of one stream is written by the other (SCC included: every scalar ALU instruction)."""
    def scc(a: _Access) -> bool:
        return a.ins.opcode.startswith("s_") and a.ins.opcode not in ("s_waitcnt", "s_barrier", "s_nop")

    xd = set().union(*(a.defs for a in xs)) if xs else set()
    xu = set().union(*(a.uses for a in xs)) if xs else set()
    yd = set().union(*(a.defs for a in ys)) if ys else set()
    yu = set().union(*(a.uses for a in ys)) if ys else set()
    if any(scc(a) for a in xs) and any(scc(a) for a in ys):
        return False
    return not (xd & (yd | yu) or yd & xu)


def interleave(region: list, arch: Arch, late: list = (), early: list = (),
               name: str = "MFMA schedule") -> Module:
    """``early``, ``region`` and ``late`` (Modules and instructions; the MFMAs in ``region``) as one sequence with the non-MFMA instructions spread into the runs of the MFMAs.

    Three streams fill each run, in this priority: the region's own instructions the next MFMA needs (its
    LDS reads, so they are in flight during this run), ``early`` (the next tile's global reads and pointer
    moves: issued early, so their latency starts early, as Tensile's GlobalReadPerMfma), the region's other
    own instructions (the LDS reads of later K-steps), and ``late`` (the next
    tile's LDS writes, whose data arrive last): these only once the other two are out, and from the MFMA
    on whose runs left hold them all, as Tensile's LocalWritePerMfma places its writes at the end of the
    loop. ``early`` moves past the region only when they share no register; otherwise it stays in
    front. A part that holds a label or a branch is left as written (and in its place in the order).
    Comments are dropped; the result is one Module of instructions."""
    e, r, l = _accesses(early), _accesses(region), _accesses(late)
    if r is None:           # not straight-line: as written
        return Module(name).add(early, region, late)
    if e is None:           # e.g. global reads that branch around edge loads: stay in front
        return Module(name).add(early, interleave(region, arch, late, name=name))
    if l is None:
        return Module(name).add(interleave(region, arch, early=early, name=name), late)
    mfmas = [a for a in r if _is_mfma(a.ins)]
    if not mfmas:
        return Module(name).add([a.ins for a in e + r + l])
    position = {id(a): i for i, a in enumerate(e + r + l)}                  # the order as written
    own = [a for a in r if not _is_mfma(a.ins)]
    if not _independent(e, own) or any(_is_mfma(a.ins) for a in e + l):
        own, e = e + own, []
    table = IssueTable.of(arch)
    run = [table.clocks(m.ins, "mfma") - table.mfma_pass for m in mfmas]   # each run after its issue slot

    def needs(stream: list[_Access]) -> list[int]:
        """For each MFMA, the last item of ``stream`` before it that it shares a register with."""
        out = []
        for m in mfmas:
            pm = position[id(m)]
            out.append(max((k for k, a in enumerate(stream) if position[id(a)] < pm and _conflict(a, m)),
                           default=-1))
        return out

    def after(stream: list[_Access]) -> list[int]:
        """For each item of ``stream``, the last MFMA before it that it shares a register with."""
        return [max((i for i, m in enumerate(mfmas) if position[id(m)] < position[id(a)] and _conflict(a, m)),
                    default=-1) for a in stream]

    streams = [e, own, l]
    need = [needs(e), needs(own), [-1] * len(mfmas)]
    late_clocks = sum(table.clocks(a.ins) for a in l)
    late_from, room = len(mfmas), 0
    while late_from > 0 and room < late_clocks:
        late_from -= 1
        room += run[late_from]
    # the region's own instructions move at most AHEAD MFMAs earlier than written (the LDS reads of a later
    # K-step, the packing of its operands): earlier, their registers would be live longer than written
    first_after = [min((i for i, m in enumerate(mfmas) if position[id(m)] > position[id(a)]), default=len(mfmas))
                   for a in own]
    # the packing of a step's operands (VALU) one MFMA further, out of the way of the VALU-write-to-MFMA-read
    # wait states: its registers live one MFMA run longer
    ahead = [AHEAD + 1 if a.ins.opcode.startswith("v_") else AHEAD for a in own]
    wait = [after(e), [max(x, f - h - 1) for x, f, h in zip(after(own), first_after, ahead)],
            [max(x, late_from) for x in after(l)]]
    done = [0, 0, 0]
    out: list[Instruction] = []

    def take(s: int) -> None:
        out.append(streams[s][done[s]].ins)
        done[s] += 1

    def fill_gap(i: int, m: _Access) -> None:
        """Where a VALU write that MFMA ``m`` reads sits fewer than VALU_MFMA_WAIT instructions before it (the
        hazard pass would add an s_nop), issue ready instructions that ``m`` does not touch in between."""
        gap = 0
        for back, ins in enumerate(reversed(out[-VALU_MFMA_WAIT:])):
            if ins.opcode.startswith("v_") and not ins.opcode.startswith(("v_mfma_", "v_smfmac_")):
                written = _keys(ins.defs)
                if written & m.uses:                       # m reads it: back instructions between
                    gap = max(gap, VALU_MFMA_WAIT - back)
                elif i + 1 < len(mfmas) and written & mfmas[i + 1].uses:    # the next MFMA: m is between too
                    gap = max(gap, VALU_MFMA_WAIT - back - 1)
        while gap > 0:
            ready = [s for s in (0, 1) if done[s] < len(streams[s]) and wait[s][done[s]] <= i - 1
                     and not _conflict(streams[s][done[s]], m)]
            if not ready:
                return
            take(ready[0])
            gap -= 1

    def packing_ready(i: int) -> bool:
        """A VALU instruction (a later step's packing) among the region's own instructions ready in MFMA i's run."""
        j = done[1]
        while j < len(own) and wait[1][j] <= i:
            if own[j].ins.opcode.startswith("v_"):
                return True
            j += 1
        return False

    for i, m in enumerate(mfmas):
        for s in (0, 1):
            while done[s] <= need[s][i]:
                take(s)
        fill_gap(i, m)
        out.append(m.ins)
        budget = run[i]
        upcoming = need[1][i + 1] if i + 1 < len(mfmas) else -1
        while budget > 0:
            # the next MFMA's operands first (in flight during this run), then the global reads, then the rest
            # (and the packing of a later step's operands, VALU: early in the run, far from the MFMA reading it)
            order = (1, 0) if done[1] <= upcoming or packing_ready(i) else (0, 1)
            ready = [s for s in order if done[s] < len(streams[s]) and wait[s][done[s]] <= i]
            if not ready and done[0] == len(e) and done[1] == len(own) and done[2] < len(l) \
                    and wait[2][done[2]] <= i:
                ready = [2]
            if not ready:
                break
            s = ready[0]
            budget -= table.clocks(streams[s][done[s]].ins)
            take(s)
    for s in (0, 1, 2):
        while done[s] < len(streams[s]):
            take(s)
    return Module(name).add(out)
