"""Private (scratch) memory: ``scratch_*``, MUBUF through the private segment buffer, FLAT through the private aperture.

Model: every work-item owns a byte array of the kernel descriptor's private_segment_fixed_size
(AMDGPUUsage, "Private Segment"); a workgroup keeps one row per lane of its waves. The hardware
swizzles private memory per lane (element size 4, index stride 64); the emulator does not reproduce
that layout, which is invisible as long as every private access goes through these instructions:
the per-lane offset is all a kernel can name. What is not modelled is refused: a dynamic stack
(launch), a global access into the private aperture (it lies in no buffer: a fault), a flat access
whose lanes are partly private, ``idxen`` on the private buffer, a base or soffset that is not whole
per-lane dwords. Data operands may be AGPRs (gfx90a+).

Addressing, per lane:
- ``scratch_*``: vaddr (or ``off``) + saddr (or ``off``) + offset. On gfx940+ flat scratch is
  architected (the hardware sets FLAT_SCRATCH); on gfx90a the kernel must first set FLAT_SCRATCH
  from the flat scratch init SGPRs plus the wave offset, which this checks.
- MUBUF (gfx9 without flat scratch, e.g. ``buffer_store_dword v0, off, s[0:3], 0 offset:4``): the
  buffer resource is the private segment buffer V# (swizzled, add_tid). Its base and soffset are
  wave-level byte offsets (the wave's region is 64 lanes interleaved dword by dword), so
  (base - PRIVATE_BASE + soffset) / 64 is the per-lane offset they add; the stack pointer s32 of
  callable code is such a wave-scaled offset. Plus (offen ? vaddr : 0) + offset.
- FLAT (``flat_load``/``flat_store`` through a generic pointer to a stack object): an address in
  [src_private_base, + 4 GiB) is src_private_base | the per-lane offset; the emulator's
  src_private_base is PRIVATE_BASE. gfx90a requires FLAT_SCRATCH set as for scratch_*.

Initial state (AMDGPUUsage, "Initial Kernel Execution State"): the private segment buffer SGPRs hold
``segment_buffer()``, the flat scratch init SGPRs PRIVATE_BASE, the private segment size SGPR the
per-work-item size, and the private segment wave offset SGPR 0 (each wave has its own arrays).

Out-of-range (outside [0, size) per lane) is a fault in every mode. Reading private bytes never
written: the hardware returns whatever scratch memory holds; strict mode reports it like a read of
an unwritten register, non-strict mode reads 0.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.memory.short_d16 import zeroes_other_half
from tensile_asm.emulator.program import HandlerTable, Unsupported, reg_keys, register_file
from tensile_asm.emulator.state import FLAT_SCRATCH_LO
from tensile_asm.emulator.strict import waitcnt as strict_mode
from tensile_asm.errors import UserError
from tensile_asm.isa.registers import Reg, Special

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

PRIVATE_BASE = 0x7000_0000_0000          # the emulator's private aperture: no DeviceMemory buffer is there
APERTURE = 1 << 40                        # of the private segment buffer's base
APERTURE_FLAT = 1 << 32                   # flat addresses: src_private_base | the per-lane offset
WAVE_LANES = 64                           # lanes interleaved in a wave's private region (index stride 64)
ARCHITECTED_FLAT_SCRATCH = frozenset({"gfx940", "gfx941", "gfx942", "gfx950"})
U32 = np.uint32

# name suffix -> (bytes, kind): "dw" n dwords, "zext"/"sext" into 32 bits, "d16"/"d16s" (+ "_hi") into a
# half of the VGPR keeping the other, or zeroing it on SRAM-ECC targets (bytes sign-extended to 16 bits
# with "d16s").
LOADS = {"dword": (4, "dw"), "dwordx2": (8, "dw"), "dwordx3": (12, "dw"), "dwordx4": (16, "dw"),
         "ubyte": (1, "zext"), "sbyte": (1, "sext"), "ushort": (2, "zext"), "sshort": (2, "sext"),
         "ubyte_d16": (1, "d16"), "ubyte_d16_hi": (1, "d16_hi"), "sbyte_d16": (1, "d16s"),
         "sbyte_d16_hi": (1, "d16s_hi"), "short_d16": (2, "d16"), "short_d16_hi": (2, "d16_hi")}
# name suffix -> (bytes, from the high half)
STORES = {"dword": (4, False), "dwordx2": (8, False), "dwordx3": (12, False), "dwordx4": (16, False),
          "byte": (1, False), "short": (2, False), "byte_d16_hi": (1, True), "short_d16_hi": (2, True)}


def segment_buffer(size: int) -> list[int]:
    """The private segment buffer V# (gfx9): base PRIVATE_BASE, swizzle_enable (word1 bit 31),
    num_records = the wave's region, element size 4 (word3 bits 20:19 = 1), index stride 64
    (bits 22:21 = 3), add_tid_enable (bit 23)."""
    return [PRIVATE_BASE & 0xFFFFFFFF, (PRIVATE_BASE >> 32) | 1 << 31, size * WAVE_LANES & 0xFFFFFFFF,
            1 << 19 | 3 << 21 | 1 << 23]


def check_launch(kd, kernel: str) -> None:
    if kd.uses_dynamic_stack:
        raise UserError(f"kernel '{kernel}' uses a dynamic stack (kernel descriptor uses_dynamic_stack); the "
                        f"emulator models only the fixed private segment ({kd.private_segment_fixed_size} bytes)")


class PrivateMemory:
    """One workgroup's private segments: a byte row per lane (column of the register store)."""

    def __init__(self, columns: int, size: int, strict: bool):
        self.size = size
        self.data = np.zeros((columns, max(size, 1)), np.uint8)
        self.written = np.zeros(self.data.shape, bool) if strict else None

    def _index(self, cols, offs, nbytes):
        bad = (offs < 0) | (offs + nbytes > self.size)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise Fault(f"private memory fault: {nbytes}-byte access at per-lane offset {int(offs[j])} (register "
                        f"column {int(cols[j])}) outside the private segment of {self.size} bytes per work-item")
        return cols[:, None], offs[:, None] + np.arange(nbytes)

    def load(self, cols, offs, nbytes) -> np.ndarray:
        r, c = self._index(cols, offs, nbytes)
        if self.written is not None:
            unwritten = ~self.written[r, c]
            if unwritten.any():
                j = int(np.flatnonzero(unwritten.any(axis=1))[0])
                first = int(offs[j])
                raise Fault(f"strict: reads private bytes at per-lane offset {first}..{first + nbytes - 1} "
                            f"(register column {int(cols[j])}) that nothing has written (the hardware returns "
                            f"whatever scratch memory holds)")
        return self.data[r, c]

    def store(self, cols, offs, raw) -> None:
        r, c = self._index(cols, offs, raw.shape[1])
        self.data[r, c] = raw
        if self.written is not None:
            self.written[r, c] = True


def _private(w, cx) -> PrivateMemory:
    g = w.group
    if g.private is None:
        g.private = PrivateMemory(g.vstore.shape[1], cx.kd.private_segment_fixed_size, cx.strict)
    return g.private


def _columns(w):
    """The register-store columns of the active lanes (a wave, or a lockstep batch of all waves)."""
    first = w.subs[0] if hasattr(w, "subs") else w
    start = first.index * first.lanes
    cols = np.arange(start, start + w.lanes)
    return cols if w.exec_full else cols[w.exec_lanes]


def _lanes(w, row):
    return row if w.exec_full else row[w.exec_lanes]


# -- what loads write and stores take ---------------------------------------------------------------

def _load_runner(cx, ins, dst, nbytes, kind):
    if not (isinstance(dst, Reg) and dst.kind in "va"):
        raise Unsupported(f"destination {dst}")
    d0, regs = dst.index, register_file(dst)
    track = (lambda w, issue=strict_mode.issue, keys=reg_keys(dst): issue(w, ins, keys, "vm")) if cx.strict else None

    keep = not zeroes_other_half(cx.arch)      # d16: the other half kept, or zeroed (SRAM-ECC targets)

    def finish(w, raw):                        # raw: uint8 [active lanes, nbytes]
        sel = None if w.exec_full else w.exec_lanes
        file = regs(w)
        if kind == "dw":
            vals = np.ascontiguousarray(raw).view("<u4").T
            if sel is None:
                file[d0:d0 + vals.shape[0]] = vals
            else:
                file[d0:d0 + vals.shape[0], sel] = vals
        else:
            small = np.ascontiguousarray(raw).view({1: "<u1", 2: "<u2"}[nbytes]).reshape(-1).astype(np.int64)
            if kind in ("sext", "d16s", "d16s_hi"):
                top = 1 << (8 * nbytes - 1)
                small = (small ^ top) - top
            if kind in ("zext", "sext"):
                vals = (small & 0xFFFFFFFF).astype(U32)
            else:
                half = (small & 0xFFFF).astype(U32)
                row = _lanes(w, file[d0]) if keep else np.zeros_like(half)
                if kind.endswith("_hi"):
                    vals = (row & U32(0xFFFF)) | (half << U32(16))
                else:
                    vals = (row & U32(0xFFFF0000)) | half
            if sel is None:
                file[d0] = vals
            else:
                file[d0, sel] = vals
        if track:
            track(w)
    return finish


def _store_source(dst, nbytes, high):
    if not (isinstance(dst, Reg) and dst.kind in "va"):
        raise Unsupported(f"data {dst}")
    s0, n, regs = dst.index, max(1, nbytes // 4), register_file(dst)

    def raw(w):
        file = regs(w)
        rows = file[s0:s0 + n] if w.exec_full else file[s0:s0 + n, w.exec_lanes]
        if nbytes < 4:
            vals = rows[0] >> U32(16) if high else rows[0]
            return np.ascontiguousarray(vals.astype("<u4")).view(np.uint8).reshape(-1, 4)[:, :nbytes]
        return np.ascontiguousarray(rows.T.astype("<u4")).view(np.uint8).reshape(-1, nbytes)
    return raw


# -- scratch_* ----------------------------------------------------------------------------------------

def _scratch_offsets(cx, vaddr, saddr, offset):
    vi = vaddr.index if isinstance(vaddr, Reg) else None
    if vi is None and not (isinstance(vaddr, Special) and vaddr.name == "off"):
        raise Unsupported(f"vaddr {vaddr}")
    sd = None if saddr is None or (isinstance(saddr, Special) and saddr.name == "off") else cx.sread(saddr)
    check_flat = cx.arch.name not in ARCHITECTED_FLAT_SCRATCH

    def offsets(w):
        if check_flat:
            fs = w.s[FLAT_SCRATCH_LO] | w.s[FLAT_SCRATCH_LO + 1] << 32
            if fs != PRIVATE_BASE:
                raise Fault(f"scratch access while FLAT_SCRATCH is 0x{fs:x}; on {cx.arch.name} the kernel must set it "
                            f"to the flat scratch init SGPRs plus the private segment wave offset first")
        n = w.lanes if w.exec_full else int(np.count_nonzero(w.exec_lanes))
        base = offset + (sd(w) if sd is not None else 0)
        if vi is None:
            return np.full(n, base, np.int64)
        return _lanes(w, w.v[vi]).astype(np.int64) + base
    offsets.extra_srcs = () if not check_flat else (FLAT_SCRATCH_LO, FLAT_SCRATCH_LO + 1)
    return offsets


def _scratch_load(nbytes, kind):
    def build(ins, cx):
        dst, vaddr, saddr = (list(ins.operands) + [None])[:3]
        offsets = _scratch_offsets(cx, vaddr, saddr, ins.modifier("offset", 0) or 0)
        finish = _load_runner(cx, ins, dst, nbytes, kind)
        def run(w):
            if w.exec_lanes.any():
                finish(w, _private(w, cx).load(_columns(w), offsets(w), nbytes))
            else:
                finish(w, np.zeros((0, nbytes), np.uint8))
        run.manages_defs = run.agpr_ok = True
        run.extra_srcs = offsets.extra_srcs + (tuple(reg_keys(dst)) if kind.startswith("d16") and not zeroes_other_half(cx.arch) else ())
        return run
    return build


def _scratch_store(nbytes, high):
    def build(ins, cx):
        vaddr, data, saddr = (list(ins.operands) + [None])[:3]
        offsets = _scratch_offsets(cx, vaddr, saddr, ins.modifier("offset", 0) or 0)
        raw = _store_source(data, nbytes, high)
        track = (lambda w: strict_mode.issue(w, ins, (), "vm")) if cx.strict else None
        def run(w):
            if w.exec_lanes.any():
                _private(w, cx).store(_columns(w), offsets(w), raw(w))
            if track:
                track(w)
        run.extra_srcs = offsets.extra_srcs
        run.agpr_ok = True
        return run
    return build


for _name, (_n, _kind) in LOADS.items():
    handles(f"scratch_load_{_name}")(_scratch_load(_n, _kind))
for _name, (_n, _high) in STORES.items():
    handles(f"scratch_store_{_name}")(_scratch_store(_n, _high))


# -- MUBUF through the private segment buffer, FLAT through the private aperture ------------------------

def _buffer_private_offsets(ins, cx):
    """w -> per-lane offsets, or None when the resource is not the private segment buffer."""
    vdata, vaddr, srsrc, soffset = ins.operands[:4]
    if not (isinstance(srsrc, Reg) and srsrc.kind == "s" and srsrc.count == 4):
        raise Unsupported(f"buffer resource {srsrc}")
    r = srsrc.index
    offen, idxen = ins.has_modifier("offen"), ins.has_modifier("idxen")
    inst_offset = ins.modifier("offset", 0) or 0
    soff = (lambda w: 0) if isinstance(soffset, Special) and soffset.name == "off" else cx.sread(soffset)
    vi = vaddr.index if offen and isinstance(vaddr, Reg) else None
    if offen and vi is None:
        raise Unsupported(f"vaddr {vaddr} with offen")

    def offsets(w):
        s = w.s
        base = s[r] | (s[r + 1] & 0xFFFF) << 32
        if not (s[r + 1] >> 31 and PRIVATE_BASE <= base < PRIVATE_BASE + APERTURE):
            return None
        if idxen or ins.has_modifier("tfe"):
            raise Fault("idxen/tfe accesses through the private segment buffer are not emulated")
        wave_delta = base - PRIVATE_BASE + soff(w)
        if wave_delta % (4 * WAVE_LANES):
            raise Fault(f"private segment buffer base + soffset is {wave_delta} bytes into the wave's region, not "
                        f"whole per-lane dwords (a multiple of {4 * WAVE_LANES}); not emulated")
        lane_base = wave_delta // WAVE_LANES + inst_offset
        n = w.lanes if w.exec_full else int(np.count_nonzero(w.exec_lanes))
        if vi is None:
            return np.full(n, lane_base, np.int64)
        return _lanes(w, w.v[vi]).astype(np.int64) + lane_base
    return offsets


def _flat_private_offsets(ins, cx, load):
    """w -> per-lane offsets when every active lane's flat address lies in the private aperture, None when
    none does (the global path); a mix is refused."""
    vaddr = ins.operands[1 if load else 0]
    if not (isinstance(vaddr, Reg) and vaddr.kind == "v" and vaddr.count == 2):
        raise Unsupported(f"vaddr {vaddr}")
    i, offset = vaddr.index, ins.modifier("offset", 0) or 0
    check_flat = cx.arch.name not in ARCHITECTED_FLAT_SCRATCH

    def offsets(w):
        addr = (_lanes(w, w.v[i + 1]).astype(np.int64) << 32 | _lanes(w, w.v[i]).astype(np.int64)) + offset
        private = (addr >= PRIVATE_BASE) & (addr < PRIVATE_BASE + APERTURE_FLAT)
        if not private.any():
            return None
        if not private.all():
            raise Fault("a flat access with some lanes in the private aperture and some outside it is not emulated")
        if check_flat:
            fs = w.s[FLAT_SCRATCH_LO] | w.s[FLAT_SCRATCH_LO + 1] << 32
            if fs != PRIVATE_BASE:
                raise Fault(f"flat access to the private aperture while FLAT_SCRATCH is 0x{fs:x}; on {cx.arch.name} "
                            f"the kernel must set it to the flat scratch init SGPRs plus the private segment "
                            f"wave offset")
        return addr - PRIVATE_BASE
    return offsets


def _wrap(handlers, name, nbytes, private_offsets, data_index, load_kind=None, high=False):
    """Give the handler of ``name`` a private path, taken when ``private_offsets`` finds one."""
    base_builder = handlers.get(name)

    def build(ins, cx):
        if ins.has_modifier("lds"):                # LDS-DMA forms (lds/dma.py) are never private
            return base_builder(ins, cx)
        offsets = private_offsets(ins, cx)
        base = None
        if base_builder is not None:
            try:
                base = base_builder(ins, cx)
            except Unsupported:
                base = None
        data = ins.operands[data_index]
        if isinstance(data, Reg) and data.kind == "a" and not getattr(base, "agpr_ok", False):
            base = None                            # its global path would read VGPRs
        if load_kind is not None:
            finish = _load_runner(cx, ins, data, nbytes, load_kind)
            def run(w):
                offs = offsets(w)
                if offs is None:
                    return _other(w)
                finish(w, _private(w, cx).load(_columns(w), offs, nbytes))
        else:
            raw = _store_source(data, nbytes, high)
            track = (lambda w: strict_mode.issue(w, ins, (), "vm")) if cx.strict else None
            def run(w):
                offs = offsets(w)
                if offs is None:
                    return _other(w)
                _private(w, cx).store(_columns(w), offs, raw(w))
                if track:
                    track(w)

        def _other(w):
            if base is None:
                raise Fault(f"this form of '{name}' is emulated only for private memory")
            return base(w)
        run.manages_defs = load_kind is not None
        run.agpr_ok = True
        extra = tuple(getattr(base, "extra_srcs", ()))
        if load_kind is not None and load_kind.startswith("d16") and not zeroes_other_half(cx.arch):
            extra += tuple(reg_keys(data))       # the other half is kept: read
        run.extra_srcs = tuple(dict.fromkeys(extra))
        if getattr(base, "lane_bound", False):
            run.lane_bound = True
        return run
    handlers[name] = build


def add_private_paths(handlers: dict, apertures: dict) -> None:
    """Give the buffer and flat load/store handlers in ``handlers`` their private path (call after
    every table that holds them), and name the private aperture's base in ``apertures``."""
    for suffix, (n, kind) in LOADS.items():
        _wrap(handlers, f"buffer_load_{suffix}", n, _buffer_private_offsets, 0, load_kind=kind)
        _wrap(handlers, f"flat_load_{suffix}", n, lambda ins, cx: _flat_private_offsets(ins, cx, True), 0,
              load_kind=kind)
    for suffix, (n, high) in STORES.items():
        _wrap(handlers, f"buffer_store_{suffix}", n, _buffer_private_offsets, 0, high=high)
        _wrap(handlers, f"flat_store_{suffix}", n, lambda ins, cx: _flat_private_offsets(ins, cx, False), 1,
              high=high)
    apertures["src_private_base"] = PRIVATE_BASE


__all__ = ["PRIVATE_BASE", "PrivateMemory", "add_private_paths", "check_launch", "segment_buffer"]
