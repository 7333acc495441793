"""Vector memory: MUBUF (buffer_*) with buffer-resource semantics, and GLOBAL/FLAT addressing.

Buffer resource (V#, four SGPRs, gfx9): base address = word0 | word1[15:0] << 32 (48 bits),
stride = word1[29:16], swizzle enable = word1[31], num_records = word2, add_tid_enable = word3[23].

Address = base + soffset + (idxen ? index * stride : 0) + (offen ? vgpr_offset : 0) + inst_offset.

Range check (AMD "Vega"/CDNA ISA guides, "Buffer Instructions" -> "Range Checking"): a raw buffer
(add_tid = 0, swizzle = 0, idxen = 0) is out of range when
``inst_offset + (offen ? vgpr_offset : 0) >= num_records``; soffset is not part of the check (LLVM
IntrinsicsAMDGPU.td, raw buffer intrinsics: "offset ... included in bounds checking", "soffset ...
excluded from bounds checking"). The dword components of ``_dwordx2/x3/x4`` are range-checked one
by one. A structured access (idxen) is out of range when ``index >= num_records``. Out-of-range
loads return 0, out-of-range stores and atomics are dropped. Swizzled and add-tid buffers are not
emulated (an error, never a silent guess).
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys, register_file
from tensile_asm.emulator.strict import waitcnt as strict_mode
from tensile_asm.isa.registers import Reg, Special

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U32, U64 = np.uint32, np.uint64
_DWORDS = {"dword": 1, "dwordx2": 2, "dwordx3": 3, "dwordx4": 4}
_SMALL = {"ubyte": (1, False), "sbyte": (1, True), "ushort": (2, False), "sshort": (2, True),
          "byte": (1, False), "short": (2, False)}


def _active(w, x):
    return x if w.exec_full else x[w.exec_lanes]


def _write_rows(w, d0, n, vals, sel, regs=None):
    rows = w.v if regs is None else regs(w)
    if sel is None:
        rows[d0:d0 + n] = vals
    else:
        rows[d0:d0 + n, sel] = vals


def _srd(w, r):
    s = w.s
    w0, w1, w2, w3 = s[r], s[r + 1], s[r + 2], s[r + 3]
    if w1 >> 31 or (w3 >> 23) & 1:
        raise Fault("swizzled or add-tid buffer resources are not emulated")
    return w0 | (w1 & 0xFFFF) << 32, (w1 >> 16) & 0x3FFF, w2


def _buffer_addresses(ins, cx, lds=False):
    """A function w -> (addresses [dwords, active], in-range mask, active selector). ``lds``: an
    LDS-DMA form (lds/dma.py), whose assembly has no vdata operand."""
    vaddr, srsrc, soffset = ins.operands[:3] if lds else ins.operands[1:4]
    if not (isinstance(srsrc, Reg) and srsrc.kind == "s" and srsrc.count == 4):
        raise Unsupported(f"buffer resource {srsrc} is not four SGPRs")
    if ins.has_modifier("lds") != lds or ins.has_modifier("tfe"):
        raise Unsupported("lds/tfe buffer forms")
    offen, idxen = ins.has_modifier("offen"), ins.has_modifier("idxen")
    inst_offset = ins.modifier("offset", 0) or 0
    soff = cx.sread(soffset) if not (isinstance(soffset, Special) and soffset.name == "off") else (lambda w: 0)
    if (offen or idxen) and not (isinstance(vaddr, Reg) and vaddr.kind == "v"):
        raise Unsupported(f"vaddr {vaddr} with offen/idxen")
    vi = vaddr.index if isinstance(vaddr, Reg) else None
    r = srsrc.index

    def addresses(w, ndw, elem_bytes=4):
        base, stride, num_records = _srd(w, r)
        sel = None if w.exec_full else w.exec_lanes
        nact = w.lanes if sel is None else int(np.count_nonzero(sel))
        index = _active(w, w.v[vi]).astype(np.int64) if idxen else 0
        voff = _active(w, w.v[vi + (1 if idxen else 0)]).astype(np.int64) if offen else 0
        offset = np.broadcast_to(voff + inst_offset, (nact,))
        comp = offset[None, :] + np.arange(ndw, dtype=np.int64)[:, None] * elem_bytes
        if idxen:
            ok = np.broadcast_to(np.broadcast_to(index, (nact,)) < num_records, comp.shape)
            comp = comp + np.broadcast_to(index, (nact,))[None, :] * stride
        else:
            ok = comp < num_records
        addr = comp + (base + soff(w))
        return addr, ok, sel
    return addresses


def _vm_issue(cx, ins, keys):
    if not cx.strict:
        return None
    issue = strict_mode.issue
    return lambda w: issue(w, ins, keys, "vm")


def _buffer_load_builder(ndw, small=None):
    def build(ins, cx):
        addresses = _buffer_addresses(ins, cx)
        dst = ins.operands[0]
        d0, n = dst.index, dst.count
        track = _vm_issue(cx, ins, reg_keys(dst))
        regs = register_file(dst)
        def run(w):
            addr, ok, sel = addresses(w, ndw, small[0] if small else 4)
            vals = np.zeros(addr.shape, U32)
            if ok.any():
                mem = w.group.memory
                a = addr[ok].astype(U64)
                vals[ok] = mem.load_small(a, *small) if small else mem.load_u32(a)
            _write_rows(w, d0, n, vals, sel, regs)
            if track:
                track(w)
        run.manages_defs = True
        run.agpr_ok = True
        return run
    return build


def _buffer_store_builder(ndw, small=None):
    def build(ins, cx):
        addresses = _buffer_addresses(ins, cx)
        src = ins.operands[0]
        s0, n = src.index, src.count
        track = _vm_issue(cx, ins, ())
        regs = register_file(src)
        def run(w):
            addr, ok, sel = addresses(w, ndw, small[0] if small else 4)
            if ok.any():
                vals = regs(w)[s0:s0 + n] if sel is None else regs(w)[s0:s0 + n, sel]
                a = addr[ok].astype(U64)
                if small:
                    w.group.memory.store_small(a, vals[ok], small[0])
                else:
                    w.group.memory.store_u32(a, vals[ok])
            if track:
                track(w)
        run.agpr_ok = True
        return run
    return build


def _atomic(mem, addrs, data, cmp, kind, returns):
    """Apply one atomic per address in lane order; the pre-op values when ``returns``."""
    old = np.zeros(addrs.shape, U32)
    for a, off, sel in mem.locate_atomic(addrs, 4):
        if (off & 3).any():
            raise Fault("misaligned atomic")
        idx = off >> 2
        d = data if sel is None else data[sel]
        unique = len(np.unique(idx)) == len(idx)
        if kind in ("add", "add_f32") and (unique or not returns):
            prev = a.u32[idx].copy()
            if kind == "add":
                np.add.at(a.u32, idx, d)
            else:
                np.add.at(a.f32, idx, d.view(np.float32))
        else:
            prev = np.empty(len(idx), U32)
            c = None if cmp is None else (cmp if sel is None else cmp[sel])
            for j, i in enumerate(idx):
                prev[j] = a.u32[i]
                if kind == "add":
                    a.u32[i] = (int(a.u32[i]) + int(d[j])) & 0xFFFFFFFF
                elif kind == "add_f32":
                    a.f32[i] = np.float32(a.f32[i]) + d[j:j + 1].view(np.float32)[0]
                elif kind == "cmpswap" and a.u32[i] == c[j]:
                    a.u32[i] = d[j]
        if sel is None:
            old[...] = prev
        else:
            old[sel] = prev
    return old


def _buffer_atomic_builder(kind):
    def build(ins, cx):
        addresses = _buffer_addresses(ins, cx)
        data = ins.operands[0]
        returns = ins.has_modifier("glc") or ins.has_modifier("sc0")
        d0 = data.index
        keys = reg_keys(data.sub(0)) if returns else ()
        track = _vm_issue(cx, ins, keys)
        def run(w):
            addr, ok, sel = addresses(w, 1)
            ok = ok[0]
            rows = w.v[d0:d0 + data.count] if sel is None else w.v[d0:d0 + data.count, sel]
            old = np.zeros(ok.shape, U32)
            if ok.any():
                cmp = rows[1][ok] if kind == "cmpswap" else None
                old[ok] = _atomic(w.group.memory, addr[0][ok].astype(U64), rows[0][ok], cmp, kind, returns)
            if returns:
                _write_rows(w, d0, 1, old[None, :], sel)
            if track:
                track(w)
        run.manages_defs = True
        if returns:
            run.extra_srcs = tuple(reg_keys(data))
        return run
    return build


for _n, _dw in _DWORDS.items():
    handles(f"buffer_load_{_n}")(_buffer_load_builder(_dw))
    handles(f"buffer_store_{_n}")(_buffer_store_builder(_dw))
for _n, _small in _SMALL.items():
    if _n in ("byte", "short"):
        handles(f"buffer_store_{_n}")(_buffer_store_builder(1, _small))
    else:
        handles(f"buffer_load_{_n}")(_buffer_load_builder(1, _small))
handles("buffer_atomic_add_f32")(_buffer_atomic_builder("add_f32"))
handles("buffer_atomic_add")(_buffer_atomic_builder("add"))
handles("buffer_atomic_cmpswap")(_buffer_atomic_builder("cmpswap"))


# -- GLOBAL / FLAT --------------------------------------------------------------------------------

def _global_addresses(vaddr, saddr, offset, cx):
    if isinstance(saddr, Special) and saddr.name == "off" or saddr is None:
        if not (isinstance(vaddr, Reg) and vaddr.kind == "v" and vaddr.count == 2):
            raise Unsupported(f"64-bit vaddr expected, got {vaddr}")
        i = vaddr.index
        def addresses(w, ndw):
            lo, hi = _active(w, w.v[i]).astype(U64), _active(w, w.v[i + 1]).astype(U64)
            base = (lo | (hi << U64(32))).astype(np.int64) + offset
            return base[None, :] + 4 * np.arange(ndw, dtype=np.int64)[:, None]
        return addresses
    sbase = cx.sread64(saddr)
    i = vaddr.index
    def addresses_s(w, ndw):
        base = _active(w, w.v[i]).astype(np.int64) + (sbase(w) + offset)
        return base[None, :] + 4 * np.arange(ndw, dtype=np.int64)[:, None]
    return addresses_s


def element_addresses(ins, cx, buffer, vaddr_index, size):
    """fn(w) -> (byte address of one ``size``-byte element per active lane, in-range mask) for a buffer
    instruction or a global/flat one whose vaddr is operand ``vaddr_index`` (loads 1, stores 0)."""
    if buffer:
        addresses = _buffer_addresses(ins, cx)
        def at(w):
            addr, ok, _ = addresses(w, 1, size)
            return addr[0], ok[0]
        return at
    ops = ins.operands                     # load: vdst, vaddr[, saddr]; store: vaddr, vdata[, saddr]
    saddr = ops[2] if len(ops) > 2 else None
    addresses = _global_addresses(ops[vaddr_index], saddr, ins.modifier("offset", 0) or 0, cx)
    def at_global(w):
        addr = addresses(w, 1)[0]
        return addr, np.ones(addr.shape, bool)
    return at_global


def _global_load_builder(ndw, small=None):
    def build(ins, cx):
        dst, vaddr = ins.operands[:2]
        saddr = ins.operands[2] if len(ins.operands) > 2 else None
        addresses = _global_addresses(vaddr, saddr, ins.modifier("offset", 0) or 0, cx)
        d0, n = dst.index, dst.count
        track = _vm_issue(cx, ins, reg_keys(dst))
        regs = register_file(ins.operands[0])
        def run(w):
            addr = addresses(w, ndw)
            sel = None if w.exec_full else w.exec_lanes
            if addr.size:
                a = addr.astype(U64)
                vals = w.group.memory.load_small(a, *small) if small else w.group.memory.load_u32(a)
                _write_rows(w, d0, n, vals, sel, regs)
            if track:
                track(w)
        run.manages_defs = True
        run.agpr_ok = True
        return run
    return build


def _global_store_builder(ndw, small=None):
    def build(ins, cx):
        vaddr, data = ins.operands[:2]
        saddr = ins.operands[2] if len(ins.operands) > 2 else None
        addresses = _global_addresses(vaddr, saddr, ins.modifier("offset", 0) or 0, cx)
        s0, n = data.index, data.count
        track = _vm_issue(cx, ins, ())
        regs = register_file(data)
        def run(w):
            addr = addresses(w, ndw)
            if addr.size:
                vals = regs(w)[s0:s0 + n] if w.exec_full else regs(w)[s0:s0 + n, w.exec_lanes]
                if small:
                    w.group.memory.store_small(addr.astype(U64), vals, small[0])
                else:
                    w.group.memory.store_u32(addr.astype(U64), vals)
            if track:
                track(w)
        run.agpr_ok = True
        return run
    return build


def _global_atomic_builder(kind):
    def build(ins, cx):
        returns = ins.has_modifier("glc") or ins.has_modifier("sc0")
        ops = ins.operands
        dst, (vaddr, data) = (ops[0], ops[1:3]) if returns else (None, ops[0:2])
        saddr = ops[3] if returns and len(ops) > 3 else (ops[2] if not returns and len(ops) > 2 else None)
        addresses = _global_addresses(vaddr, saddr, ins.modifier("offset", 0) or 0, cx)
        track = _vm_issue(cx, ins, reg_keys(dst) if returns else ())
        def run(w):
            addr = addresses(w, 1)[0]
            sel = None if w.exec_full else w.exec_lanes
            rows = w.v[data.index:data.index + data.count]
            rows = rows if sel is None else rows[:, sel]
            if addr.size:
                old = _atomic(w.group.memory, addr.astype(U64), rows[0], rows[1] if kind == "cmpswap" else None,
                              kind, returns)
                if returns:
                    _write_rows(w, dst.index, 1, old[None, :], sel)
            if track:
                track(w)
        run.manages_defs = True
        return run
    return build


for _prefix in ("global", "flat"):
    for _n, _dw in _DWORDS.items():
        handles(f"{_prefix}_load_{_n}")(_global_load_builder(_dw))
        handles(f"{_prefix}_store_{_n}")(_global_store_builder(_dw))
    for _n, _small in _SMALL.items():
        if _n in ("byte", "short"):
            handles(f"{_prefix}_store_{_n}")(_global_store_builder(1, _small))
        else:
            handles(f"{_prefix}_load_{_n}")(_global_load_builder(1, _small))
    handles(f"{_prefix}_atomic_add_f32")(_global_atomic_builder("add_f32"))
    handles(f"{_prefix}_atomic_add")(_global_atomic_builder("add"))
    handles(f"{_prefix}_atomic_cmpswap")(_global_atomic_builder("cmpswap"))
