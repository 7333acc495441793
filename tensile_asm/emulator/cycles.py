"""A cycle model of one workgroup (modelled, never a measurement: this project has no AMD GPU).

The emulator records, for the first workgroup of a launch, the sequence of instructions each wave
executed. ``estimate`` replays those sequences on a simple machine:

* each wave sits on SIMD ``wave % simds_per_cu`` (4 on gfx9); a SIMD issues for one wave at a time,
  and an instruction holds it for its issue clocks from the ``issue_cycles`` table of
  ``isa/<gfx>.yaml`` (classes from ``tensile_asm.inspect.issue_model.classify``: VALU, MFMA passes,
  SALU, LDS, memory ...). Whichever wave could start earliest issues next.
* memory instructions complete ``latency[class]`` clocks after they issue (the ``latency`` table of
  ``isa/<gfx>.yaml``, modelled figures); vector-memory and LDS operations complete in issue order.
  ``s_waitcnt vmcnt(N)``/``lgkmcnt(N)`` holds its wave until at most N operations of that counter
  are outstanding; while it waits, other waves use the SIMD.
* ``s_barrier`` releases every wave of the workgroup when the last live one reaches it.
* GDS operations (DS with ``gds``): the isa tables have no GDS latency, so they are timed as LDS
  (their ds_read/ds_write class and latency). They also count in expcnt, which this model takes to
  reach the operation when it completes: ``s_waitcnt expcnt(N)`` waits like the other counters.
* a wave ends at ``s_endpgm`` once its outstanding memory operations have completed; the workgroup
  ends with its last wave.

Not modelled: dependencies between ALU results (VALU/MFMA latency beyond issue), instruction-cache
and branch costs beyond one issue slot, LDS bank conflicts, memory bandwidth and contention, other
workgroups sharing the CU, clock rates. The figure is for comparing kernels and seeing where a wave
waits, in shader clocks.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field

from tensile_asm.errors import UserError
from tensile_asm.inspect.issue_model import IssueTable, classify

MODEL = "issue+latency v1 (modelled: issue_cycles and latency of isa/<gfx>.yaml; not a measurement)"
LATENCY_CLASSES = ("vmem_load", "vmem_store", "ds_read", "ds_write", "smem")


class Recorder:
    """Wraps compiled ops so that each wave's executed op indices are appended to ``sequences``."""

    def __init__(self, ops: list):
        self.sequences: dict = defaultdict(list)
        self.ops = [self._wrap(op) for op in ops]

    def _wrap(self, op):
        new = copy.copy(op)                 # keeps every slot (batchable, hazard checks, ...)
        run, seqs = op.fn, self.sequences
        indices = [p.index for p in op.parts] if op.parts is not None else [op.index]   # fused: every part

        def fn(w):
            subs = getattr(w, "subs", None)          # a lockstep batch runs the op for all its waves
            if subs is None:
                seqs[w.index].extend(indices)
            else:
                for s in subs:
                    seqs[s.index].extend(indices)
            return run(w)
        new.fn = fn
        return new


@dataclass
class WaveCycles:
    wave: int
    simd: int
    end: int = 0
    instructions: int = 0
    issue: dict = field(default_factory=dict)     # class -> issue clocks
    wait_memory: int = 0                          # clocks held at s_waitcnt
    wait_barrier: int = 0                         # clocks held at s_barrier for slower waves
    wait_simd: int = 0                            # clocks waiting for the SIMD (other waves issuing)


@dataclass
class CycleEstimate:
    model: str
    cycles: int                                   # one workgroup, first wave issue to last wave end
    waves: list

    def issue_by_class(self) -> dict:
        total: dict = defaultdict(int)
        for w in self.waves:
            for c, n in w.issue.items():
                total[c] += n
        return dict(sorted(total.items(), key=lambda kv: -kv[1]))

    def __str__(self) -> str:
        mem = max((w.wait_memory for w in self.waves), default=0)
        bar = max((w.wait_barrier for w in self.waves), default=0)
        return (f"{self.cycles} cycles for one workgroup of {len(self.waves)} waves (modelled; per wave at most "
                f"{mem} waiting for memory, {bar} at barriers)")


def latency_table(arch) -> dict:
    table = arch.extra.get("latency")
    missing = [c for c in LATENCY_CLASSES if not table or c not in table]
    if missing:
        raise UserError(f"isa/{arch.name}.yaml: the cycle model needs latency.{', latency.'.join(missing)} "
                        f"(modelled clocks; copy the 'latency' table of isa/gfx90a.yaml)")
    return {c: int(table[c]) for c in LATENCY_CLASSES}


class _Kind:
    """What the model needs of one op: issue clocks, class, counter, latency, wait counts."""

    __slots__ = ("cls", "clocks", "counter", "latency", "vmcnt", "lgkmcnt", "expcnt", "gds", "end")

    def __init__(self, ins, table: IssueTable, latency: dict):
        self.cls = classify(ins)
        self.clocks = table.clocks(ins, self.cls)
        self.counter = self.latency = None
        self.vmcnt = self.lgkmcnt = self.expcnt = None
        self.end = ins.opcode == "s_endpgm"
        self.gds = ins.opcode.startswith("ds_") and ins.has_modifier("gds")     # timed as LDS (no GDS latency)
        try:
            counter = ins.info.counter
        except KeyError:
            counter = None
        if counter is not None and self.cls in latency:
            self.counter = "vm" if counter == "vm" else "lgkm"
            self.latency = latency[self.cls]
        elif counter is not None:                    # e.g. a DS op classified otherwise
            self.counter = "vm" if counter == "vm" else "lgkm"
            self.latency = latency["vmem_load" if counter == "vm" else "ds_read"]
        if ins.opcode == "s_waitcnt":
            self.vmcnt, self.lgkmcnt = ins.modifier("vmcnt"), ins.modifier("lgkmcnt")
            self.expcnt = ins.modifier("expcnt")


class _Wave:
    __slots__ = ("stats", "seq", "pos", "t", "vm", "lgkm", "exp", "barrier", "done")

    def __init__(self, stats: WaveCycles, seq: list):
        self.stats, self.seq, self.pos, self.t = stats, seq, 0, 0
        self.vm: list = []          # completion clocks of outstanding vector-memory operations
        self.lgkm: list = []        # (completion, in_order) of outstanding LDS/scalar-memory operations
        self.exp: list = []         # completion clocks of outstanding GDS operations (expcnt, in order)
        self.barrier = None         # arrival clock while waiting at s_barrier
        self.done = not seq


def _retire(pending: list, keep: int, key=lambda x: x) -> int:
    """Clock at which at most ``keep`` operations are outstanding; drops the completed ones."""
    if len(pending) <= keep:
        return 0
    pending.sort(key=key)
    n = len(pending) - keep
    when = key(pending[n - 1])
    del pending[:n]
    return when


def estimate(instructions: list, sequences: dict, arch) -> CycleEstimate:
    """Replay per-wave op-index ``sequences`` (wave index -> [op index]) of one workgroup."""
    table, latency = IssueTable.of(arch), latency_table(arch)
    simds = int(getattr(arch, "simds_per_cu", 4) or 4)
    kinds = [_Kind(ins, table, latency) for ins in instructions]
    waves = [_Wave(WaveCycles(i, i % simds), sequences.get(i, [])) for i in range(max(sequences, default=-1) + 1)]
    simd_free = [0] * simds
    while True:
        best, start = None, None
        for w in waves:
            if w.done or w.barrier is not None:
                continue
            s = max(w.t, simd_free[w.stats.simd])
            if start is None or s < start:
                best, start = w, s
        if best is None:
            waiting = [w for w in waves if w.barrier is not None]
            if not waiting:
                break
            release = max(w.barrier for w in waiting)      # every live wave is at the barrier
            for w in waiting:
                w.stats.wait_barrier += release - w.barrier
                w.t, w.barrier = release, None
            continue
        w = best
        k = kinds[w.seq[w.pos]]
        w.pos += 1
        st = w.stats
        st.instructions += 1
        st.wait_simd += start - w.t
        st.issue[k.cls] = st.issue.get(k.cls, 0) + k.clocks
        issued = start + k.clocks
        simd_free[st.simd] = issued
        w.t = issued
        if k.counter == "vm":
            w.vm.append(max(issued + k.latency, w.vm[-1] if w.vm else 0))      # in order
        elif k.counter == "lgkm":
            in_order = k.cls != "smem"
            last = max((c for c, o in w.lgkm if o), default=0) if in_order else 0
            w.lgkm.append((max(issued + k.latency, last), in_order))
            if k.gds:
                w.exp.append(max(issued + k.latency, w.exp[-1] if w.exp else 0))
        elif k.cls == "waitcnt":
            ready = issued
            if k.vmcnt is not None:
                ready = max(ready, _retire(w.vm, k.vmcnt))
            if k.lgkmcnt is not None:
                ready = max(ready, _retire(w.lgkm, k.lgkmcnt, key=lambda e: e[0]))
            if k.expcnt is not None:
                ready = max(ready, _retire(w.exp, k.expcnt))
            st.wait_memory += ready - issued
            w.t = ready
        elif k.cls == "barrier":
            w.barrier = issued
        if k.end or w.pos >= len(w.seq):
            drain = max([w.t, *w.vm, *(c for c, _ in w.lgkm)])
            st.wait_memory += drain - w.t
            w.t = st.end = drain
            w.done = True
    cycles = max((w.stats.end for w in waves), default=0)
    return CycleEstimate(MODEL, cycles, [w.stats for w in waves])


__all__ = ["CycleEstimate", "MODEL", "Recorder", "WaveCycles", "estimate"]
