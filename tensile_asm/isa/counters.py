"""The wait counters of one architecture, as ``isa/<gfx>.yaml`` ``memory`` states them.

One function serves the waitcnt pass (``waitcnt_pass.py``, which waits for what the kernel needs) and
the emulator's strict checker (``emulator/strict/waitcnt.py``, which retires what ``s_waitcnt`` proves done):
each counter's maximum, where it saturates (a wave does not issue an operation while its counter is
at the maximum, so issuing one retires the oldest in-order one first) and where ``s_waitcnt`` with
that value waits for nothing.

The kinds of outstanding operation and the counter each counts in (gfx9): vector memory 'vm'
(vmcnt, in issue order); LDS 'lds' and GDS 'gds' (lgkmcnt, each in order among its own kind);
scalar memory 'smem' (lgkmcnt, out of order: only ``lgkmcnt(0)`` proves one done); GDS source VGPR
locks 'exp' (expcnt, in order).
"""

from __future__ import annotations

from dataclasses import dataclass

COUNTER_OF = {"vm": "vmcnt", "lds": "lgkmcnt", "gds": "lgkmcnt", "smem": "lgkmcnt", "exp": "expcnt"}
IN_ORDER = ("vm", "lds", "gds", "exp")          # 'smem' is the one kind that completes out of order


@dataclass(frozen=True)
class CounterLimits:
    vmcnt: int
    lgkmcnt: int
    expcnt: int

    def of(self, counter: str) -> int:
        return getattr(self, counter)


def counter_limits(arch) -> CounterLimits:
    """The counter maxima of ``arch`` (memory.max_vmcnt, max_lgkmcnt, max_expcnt of its YAML)."""
    m = arch.memory
    return CounterLimits(m["max_vmcnt"], m["max_lgkmcnt"], m["max_expcnt"])
