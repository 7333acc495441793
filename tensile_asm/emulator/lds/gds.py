"""GDS (global data share): DS instructions with the ``gds`` modifier, on targets that have one.

Only gfx9 before gfx90a has GDS among our targets (``gds_bytes`` in ``isa/<gfx>.yaml``; llvm-mc
rejects ``gds`` for gfx90a and later). GDS is one memory shared by every workgroup of the launch
(``Emulator.launch(gds=...)``); the emulator runs workgroups one after another, so atomics from
several workgroups are applied in that order.

Addressing: M0 describes the window, ``M0[31:16]`` its base and ``M0[15:0]`` its size in bytes
(CLRX GCN ISA notes, "GcnInstrsDs": "The M0 register holds maximum size of a GDS memory in bits
0-15 ... and a GDS base offset (in bytes) in bits 16-31"; consistent with LLVM's
AMDGPUISelDAGToDAG glueCopyToM0LDSInit, which sets M0 to the kernel's GDS size, base 0, before a
region-address access); an access at ``vaddr + offset`` is to GDS byte ``base + vaddr + offset``.
An access outside the window (or beyond the GDS buffer the launch was given) is a fault in strict
mode: we found no public statement of what the hardware does. Without strict mode such reads
return 0 and such writes are dropped, as the emulator treats LDS out of range.

Counters: like every DS instruction a GDS one counts in lgkmcnt (its returned value is PENDING until
``s_waitcnt lgkmcnt``, in order among GDS operations); it also locks the VGPRs it reads until
``s_waitcnt expcnt`` (strict/waitcnt.py, strict/expcnt.py). GDS accesses are not checked for races between waves.

Instructions: reads and writes of 1-4 dwords (``read2``/``write2`` included) and the 32-bit atomics
of atomics32.py. Every other DS opcode with ``gds`` (``ds_gws_*``, ``ds_ordered_count``,
``ds_append`` ...) is an explicit error when executed.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.lds.atomics32 import OPS as ATOMIC_OPS
from tensile_asm.emulator.lds.read_write import _offsets
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys
from tensile_asm.emulator.state import M0
from tensile_asm.emulator.strict import waitcnt as strict_mode
from tensile_asm.emulator.strict.expcnt import locked_keys
from tensile_asm.errors import UserError
from tensile_asm.isa.registers import Reg

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U32 = np.uint32


class GdsMemory:
    """The launch's GDS as 32-bit words (a copy of the caller's array, copied back at the end)."""

    __slots__ = ("words", "nbytes", "source")

    def __init__(self, array: np.ndarray, capacity: int):
        if not isinstance(array, np.ndarray):
            raise UserError(f"gds must be a numpy array (its bytes are the GDS), not {type(array).__name__}")
        if not 0 < array.nbytes <= capacity:
            raise UserError(f"gds has {array.nbytes} bytes; the target's GDS holds 1 to {capacity}")
        self.source, self.nbytes = array, array.nbytes
        self.words = np.zeros((array.nbytes + 3) // 4, U32)
        self.words.view(np.uint8)[:array.nbytes] = np.ascontiguousarray(array).reshape(-1).view(np.uint8)

    def copy_back(self) -> None:
        raw = self.words.view(np.uint8)[:self.nbytes]
        np.copyto(self.source, raw.view(self.source.dtype).reshape(self.source.shape))


def _require_gds(cx) -> None:
    if not cx.arch.extra.get("gds_bytes"):
        raise Unsupported(f"{cx.arch.name} has no GDS (isa/{cx.arch.name}.yaml gives no gds_bytes)")


def _memory(w) -> GdsMemory:
    g = w.group.gds
    if g is None:
        raise Fault("this GDS instruction needs a GDS buffer, but the launch was given none "
                    "(pass gds=<numpy array> to Emulator.launch)")
    return g


def _lane_bytes(w, addr, rows):
    """Window-relative byte addresses [rows, active lanes] (dword aligned) and the lane selector."""
    a = addr(w)
    if isinstance(a, int):
        a = np.full(w.lanes, a, U32)
    sel = None if w.exec_full else w.exec_lanes
    if sel is not None:
        a = a[sel]
    if a.size and int(np.bitwise_or.reduce(a)) & 3:
        raise Fault("misaligned GDS access (dword accesses need 4-byte aligned addresses)")
    return a.astype(np.int64) + rows, sel


def _resolve(w, g: GdsMemory, rel, strict: bool):
    """GDS dword indices of window-relative byte addresses ``rel`` and which of them are in range."""
    m0 = w.s[M0]
    base, size = m0 >> 16, m0 & 0xFFFF
    absolute = rel + base
    ok = (rel + 4 <= size) & (absolute + 4 <= g.nbytes)
    if strict and not ok.all():
        bad = int(rel[~ok].max())
        if bad + 4 > size:
            raise Fault(f"strict: GDS access at window byte 0x{bad:x} is outside the window M0=0x{m0:08x} "
                        f"gives (base 0x{base:x}, size 0x{size:x} bytes); the hardware's behaviour there is "
                        f"not modelled")
        raise Fault(f"strict: GDS byte 0x{bad + base:x} is beyond the {g.nbytes}-byte GDS buffer given to "
                    f"launch (M0=0x{m0:08x}: base 0x{base:x}, size 0x{size:x})")
    return np.where(ok, absolute >> 2, 0), ok


def _read_builder(ndw, elements, elem_bytes, stride64=False):
    def build(ins, cx):
        _require_gds(cx)
        dst, vaddr = ins.operands[:2]
        if dst.count != ndw * len(elements):
            raise Unsupported(f"destination {dst} does not hold {ndw * len(elements)} dwords")
        rows = _offsets(ins, ndw, elements, elem_bytes, stride64)
        addr, d0, n = cx.vread(vaddr), dst.index, dst.count
        keys, locks, strict = reg_keys(dst), locked_keys(ins), cx.strict

        def run(w):
            g = _memory(w)
            rel, sel = _lane_bytes(w, addr, rows)
            idx, ok = _resolve(w, g, rel, strict)
            vals = np.where(ok, g.words[idx], 0).astype(U32)
            if sel is None:
                w.v[d0:d0 + n] = vals
            else:
                w.v[d0:d0 + n, sel] = vals
            if strict:
                strict_mode.issue(w, ins, keys, "gds")
                strict_mode.lock(w, ins, locks)
        return _finish(run, manages_defs=True)
    return build


def _write_builder(ndw, elements, elem_bytes, stride64=False):
    def build(ins, cx):
        _require_gds(cx)
        vaddr, *datas = ins.operands
        if len(datas) != len(elements) or any(d.count != ndw for d in datas):
            raise Unsupported("unexpected data operands")
        rows = _offsets(ins, ndw, elements, elem_bytes, stride64)
        addr, regs = cx.vread(vaddr), [(d.index, d.count) for d in datas]
        locks, strict = locked_keys(ins), cx.strict

        def run(w):
            g = _memory(w)
            rel, sel = _lane_bytes(w, addr, rows)
            idx, ok = _resolve(w, g, rel, strict)
            data = [w.v[i:i + n] if sel is None else w.v[i:i + n, sel] for i, n in regs]
            vals = data[0] if len(data) == 1 else np.concatenate(data)
            g.words[idx[ok]] = vals[ok]
            if strict:
                strict_mode.issue(w, ins, (), "gds")
                strict_mode.lock(w, ins, locks)
        return _finish(run)
    return build


def _atomic_builder(op: str, returns: bool, compare: bool):
    """Lanes applied one after another in ascending order, as atomics32.py does for LDS."""
    def build(ins, cx):
        _require_gds(cx)
        operands = list(ins.operands)
        dst = operands.pop(0) if returns else None
        srcs = operands[:3 if compare else 2]
        if len(srcs) < (3 if compare else 2) or not all(isinstance(o, Reg) and o.kind == "v" and o.count == 1
                                                        for o in srcs):
            raise Unsupported("GDS atomic operands must be single VGPRs")
        a, dv = srcs[0].index, srcs[1].index
        sv = srcs[2].index if compare else None          # ds_cmpst: data0 compares, data1 is stored
        offset = ins.modifier("offset", 0) or 0
        wr = cx.vwrite(dst) if returns else None
        keys, locks, strict, fn = reg_keys(dst) if returns else (), locked_keys(ins), cx.strict, ATOMIC_OPS.get(op)

        def run(w):
            g = _memory(w)
            lanes = np.flatnonzero(np.asarray(w.exec_lanes))
            rel = w.v[a][lanes].astype(np.int64) + offset
            if rel.size and int(np.bitwise_or.reduce(rel)) & 3:
                raise Fault("misaligned GDS atomic (needs a 4-byte aligned address)")
            idx, ok = _resolve(w, g, rel, strict)
            old_values = np.zeros(w.lanes, U32)
            words = g.words
            for j, lane in enumerate(lanes):
                if not ok[j]:
                    continue                                 # non-strict: out of range does nothing
                i = int(idx[j])
                old = int(words[i])
                old_values[lane] = old
                if compare:
                    if old == int(w.v[dv][lane]):
                        words[i] = w.v[sv][lane]
                else:
                    words[i] = fn(old, int(w.v[dv][lane]))
            if returns:
                wr(w, np.where(np.asarray(w.exec_lanes), old_values, w.v[dst.index]))
            if strict:
                strict_mode.issue(w, ins, keys, "gds")
                strict_mode.lock(w, ins, locks)
        return _finish(run, manages_defs=True)
    return build


def _finish(run, manages_defs=False):
    run.manages_defs = manages_defs
    run.lane_bound = True            # per wave: M0 and the shared GDS are read wave by wave
    run.extra_srcs = (M0,)
    return run


def _unsupported_gds(reason: str):
    def build(ins, cx):
        raise Unsupported(reason)
    return build


GDS_BUILDERS: dict = {}
for _n, _dw in (("b32", 1), ("b64", 2), ("b96", 3), ("b128", 4)):
    GDS_BUILDERS[f"ds_read_{_n}"] = _read_builder(_dw, (None,), 4 * _dw)
    GDS_BUILDERS[f"ds_write_{_n}"] = _write_builder(_dw, (None,), 4 * _dw)
for _n, _dw in (("b32", 1), ("b64", 2)):
    GDS_BUILDERS[f"ds_read2_{_n}"] = _read_builder(_dw, (0, 1), 4 * _dw)
    GDS_BUILDERS[f"ds_write2_{_n}"] = _write_builder(_dw, (0, 1), 4 * _dw)
    GDS_BUILDERS[f"ds_read2st64_{_n}"] = _read_builder(_dw, (0, 1), 4 * _dw, True)
    GDS_BUILDERS[f"ds_write2st64_{_n}"] = _write_builder(_dw, (0, 1), 4 * _dw, True)
for _op in ATOMIC_OPS:
    GDS_BUILDERS[f"ds_{_op}"] = _atomic_builder(_op, False, False)
    GDS_BUILDERS[f"ds_{_op.replace('_', '_rtn_', 1)}"] = _atomic_builder(_op, True, False)
GDS_BUILDERS["ds_cmpst_b32"] = _atomic_builder("cmpst", False, True)
GDS_BUILDERS["ds_cmpst_rtn_b32"] = _atomic_builder("cmpst", True, True)

# Always-GDS instructions: global wave sync, ordered count, append/consume counters.
_NOT_MODELLED = {
    "ds_gws_init": "global wave sync (GWS) is not modelled",
    "ds_gws_sema_v": "global wave sync (GWS) is not modelled",
    "ds_gws_sema_br": "global wave sync (GWS) is not modelled",
    "ds_gws_sema_p": "global wave sync (GWS) is not modelled",
    "ds_gws_sema_release_all": "global wave sync (GWS) is not modelled",
    "ds_gws_barrier": "global wave sync (GWS) is not modelled",
    "ds_ordered_count": "ordered count (GDS ordered append) is not modelled",
    "ds_append": "ds_append (an M0-addressed GDS/LDS counter) is not modelled",
    "ds_consume": "ds_consume (an M0-addressed GDS/LDS counter) is not modelled",
}
for _name, _why in _NOT_MODELLED.items():
    handles(_name)(_unsupported_gds(_why))


def _dispatch(name: str, lds_builder):
    gds_builder = GDS_BUILDERS.get(name)

    def build(ins, cx):
        if not ins.has_modifier("gds"):
            return lds_builder(ins, cx)
        if gds_builder is None:
            raise Unsupported("its gds form is not modelled")
        return gds_builder(ins, cx)
    build.gds_dispatch = True
    return build


def add_gds_forms(handlers: dict) -> None:
    """Give every DS handler in ``handlers`` its gds form (registry.py calls this after every DS table;
    a DS opcode without one here then fails clearly instead of running on LDS)."""
    for name, builder in list(handlers.items()):
        if name.startswith("ds_") and name not in _NOT_MODELLED and not getattr(builder, "gds_dispatch", False):
            handlers[name] = _dispatch(name, builder)
