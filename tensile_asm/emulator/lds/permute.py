"""Cross-lane moves through the LDS crossbar: ``ds_bpermute_b32`` (gather) and ``ds_permute_b32``
(scatter). No LDS memory is touched; like every DS instruction they count in lgkmcnt, so in
strict mode the destination is PENDING until ``s_waitcnt lgkmcnt``.

``ds_bpermute_b32 vdst, vaddr, vdata offset:o``: each active lane reads ``vdata`` of lane
``((vaddr + o) >> 2) & 63``. ``ds_permute_b32``: each active lane writes its ``vdata`` to that lane
(the higher source lane wins a collision). Reading an inactive lane yields 0 (LLVM's
``llvm.amdgcn.ds_bpermute``/``ds_permute`` documentation).
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.emulator.strict import waitcnt as strict_mode
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U32 = np.uint32


@handles("ds_bpermute_b32", "ds_permute_b32")
def _permute(ins, cx):
    dst, addr, data = ins.operands[:3]
    if not all(isinstance(o, Reg) and o.kind == "v" for o in (dst, addr, data)):
        raise Unsupported("ds_(b)permute operands must be VGPRs")
    offset = ins.modifier("offset", 0) or 0
    gather = ins.opcode == "ds_bpermute_b32"
    a, s = addr.index, data.index
    wr = cx.vwrite(dst)
    keys = reg_keys(dst)
    strict = cx.strict
    lanes = cx.lanes

    def run(w):
        target = ((w.v[a].astype(np.int64) + offset) >> 2) & (lanes - 1)
        active = np.asarray(w.exec_lanes)
        src = np.where(active, w.v[s], U32(0))
        if gather:
            out = src[target]
        else:
            out = np.zeros(lanes, U32)
            for lane in np.flatnonzero(active):        # ascending: the higher lane wins
                out[target[lane]] = src[lane]
        wr(w, out)
        if strict:
            strict_mode.issue(w, ins, keys, "lds")
    run.manages_defs = True
    run.lane_bound = True
    run.extra_srcs = ()
    return run


__all__: list = []
