"""Vector-memory cache maintenance: ``buffer_wbl2`` (write back L2), ``buffer_inv``, ``buffer_invl2``,
``buffer_wbinvl1``, ``buffer_wbinvl1_vol`` (invalidate). The emulated device memory has no caches and
every access is coherent, so none changes memory. Waits follow LLVM's SIInsertWaitcnts: a
``buffer_wbl2`` counts in vmcnt ("has to be followed by S_WAITCNT vmcnt(0) ... to ensure the
writeback has completed"), the invalidates do not (``getMUBUFIsBufferInv``: no VMEM event).
"""

from __future__ import annotations

from tensile_asm.emulator.memory.buffer_flat import _vm_issue
from tensile_asm.emulator.program import HandlerTable

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles


@handles("buffer_wbl2")
def _writeback(ins, cx):
    track = _vm_issue(cx, ins, ())

    def run(w):
        if track:
            track(w)
    return run


@handles("buffer_inv", "buffer_invl2", "buffer_wbinvl1", "buffer_wbinvl1_vol")
def _invalidate(ins, cx):
    return lambda w: None


__all__: list = []
