"""LDS DMA: vector-memory loads whose data goes to LDS instead of VGPRs (``buffer_load_* ... lds``,
gfx940+ ``global_load_lds_*``, and their gfx9/gfx90a spelling ``global_load_<form> ... lds``, which
LLVM's llvm.amdgcn.global.load.lds.ll emits there), as Tensile's DirectToLds kernels and compilers
use them.

Semantics, cross-checked between the AMD CDNA4 ISA guide (section 9.1.9 "Memory Buffer Load to
LDS", section 10.3 "Addressing" of the FLAT chapter) and LLVM's llvm/docs/AMDGPUDMAOperations.md
(``llvm.amdgcn.{global,raw.buffer}.load.lds``: "offset applied to both global and LDS address", "the
LDS address is implicitly offset by 4 * lane_id bytes for sizes up to 4 bytes, and by 16 * lane_id
bytes for larger sizes"):

* the global side is an ordinary load (memory/buffer_flat.py's buffer addressing and range checks, or GLOBAL
  addressing); an out-of-range buffer dword reads 0 ("memory address clamping follows the same
  rules as any other buffer fetch"), and that 0 is what the LDS receives;
* lane ``t`` (its id in the wave, active lanes only) writes LDS byte
  ``M0 part + instruction offset + t * stride``, stride 4 (byte, short, dword) or 16 (dwordx3/x4,
  gfx950; x3 writes three dwords and skips the fourth). The M0 part is ``M0[15:0]`` for MUBUF on
  gfx9/CDNA1-3 and ``M0[17:0]`` on gfx950 (CDNA4 9.1.9), ``M0[17:2] * 4`` for GLOBAL (CDNA3/CDNA4
  10.3; taken for the gfx9 ``lds`` spelling too, where M0[17:16] can only point past the 64 KiB of
  LDS, i.e. a strict fault rather than a guessed wrap);
* byte and short loads still give each lane a whole dword, zero- or sign-extended to 32 bits (AMD's
  CDNA4 instruction descriptions: "... sign extend to 32 bits and store the result into a data
  share"; the separate sbyte/sshort opcodes only make sense that way);
* no VGPR is written (the first assembly operand is the address; LLVM omits vdata with ``lds``).

Writing outside the workgroup's LDS allocation is the programmer's to avoid (9.1.9.1): a strict
fault here, dropped lanes otherwise. An LDS address that is not dword aligned is not modelled
(a fault). The data are written when the load issues, but the write completes with vmcnt: in
strict mode the LDS region is an outstanding 'vm' entry of the wave (strict/waitcnt.py), a DS access of the
same wave that overlaps it before ``s_waitcnt vmcnt`` retires it is an error (``check_in_flight``),
and the LDS race checker (read_write.py) sees the write, carried past a barrier while it is in flight.
"""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator.memory.buffer_flat import _buffer_addresses, _global_addresses
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported, describe, reg_keys
from tensile_asm.emulator.state import M0
from tensile_asm.emulator.strict import waitcnt as strict_mode

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

U32, U64 = np.uint32, np.uint64

# Form -> (dwords per lane, (bytes, signed) of a sub-dword load or None).
FORMS = {"ubyte": (1, (1, False)), "sbyte": (1, (1, True)), "ushort": (1, (2, False)),
         "sshort": (1, (2, True)), "dword": (1, None), "dwordx3": (3, None), "dwordx4": (4, None)}
WIDE_TARGETS = ("gfx950",)                       # dwordx3/x4 LDS DMA (llvm-mc rejects them elsewhere)
BUFFER_M0_MASK = {"gfx950": 0x3FFFF}             # MUBUF LDS offset bits of M0; others: 0xFFFF
GLOBAL_M0_MASK = 0x3FFFC                         # M0[17:2] * 4


def is_lds_dma(inst) -> bool:
    op = inst.opcode
    return op.startswith("global_load_lds_") or (op.startswith(("buffer_load_", "global_load_"))
                                                 and inst.has_modifier("lds"))


def _lds_writer(ins, cx, ndw, m0_mask):
    """fn(w, values [ndw, active lanes]) writing each active lane's dwords to its LDS slot."""
    inst_offset = ins.modifier("offset", 0) or 0
    stride = 16 if ndw > 1 else 4
    rows = np.arange(ndw, dtype=np.int64)[:, None]
    wave_lanes, strict, issue = cx.lanes, cx.strict, strict_mode.issue

    def write(w, vals):
        base = (w.s[M0] & m0_mask) + inst_offset
        if base & 3:
            raise Fault(f"LDS-DMA to LDS byte 0x{base:x} (M0=0x{w.s[M0]:x}, offset:{inst_offset}), which is not "
                        f"dword aligned: not modelled")
        lane = np.arange(w.lanes, dtype=np.int64) % wave_lanes      # a lockstep batch spans several waves
        if not w.exec_full:
            lane = lane[w.exec_lanes]
        idx = ((base + stride * lane) >> 2)[None, :] + rows
        size = w.group.lds_size
        if strict:
            if idx.size and (int(idx.min()) < 0 or int(idx.max()) * 4 + 4 > size):
                bad = int(idx.max()) * 4 if int(idx.min()) >= 0 else int(idx.min()) * 4
                raise Fault(f"LDS-DMA writes LDS byte {'0x%x' % bad if bad >= 0 else bad}, outside the "
                            f"workgroup's {size} bytes of LDS (M0=0x{w.s[M0]:x}, offset:{inst_offset})")
            w.group.lds_tracker.record_write(w, idx, ins)
            w.group.lds[idx] = vals
            issue(w, ins, (), "vm", idx)
        else:
            ok = (idx >= 0) & (idx * 4 + 4 <= size)
            w.group.lds[idx[ok]] = vals[ok]
    return write


def _form(ins, cx, name):
    ndw, small = FORMS[name]
    if ndw > 1 and cx.arch.name not in WIDE_TARGETS:
        raise Unsupported(f"{ins.opcode} with lds exists only on {', '.join(WIDE_TARGETS)}")
    return ndw, small


def _buffer_builder(name):
    def build(ins, cx):
        ndw, small = _form(ins, cx, name)
        addresses = _buffer_addresses(ins, cx, lds=True)
        write = _lds_writer(ins, cx, ndw, BUFFER_M0_MASK.get(cx.arch.name, 0xFFFF))

        def run(w):
            addr, ok, sel = addresses(w, ndw, small[0] if small else 4)
            vals = np.zeros(addr.shape, U32)
            if ok.any():
                a = addr[ok].astype(U64)
                vals[ok] = w.group.memory.load_small(a, *small) if small else w.group.memory.load_u32(a)
            write(w, vals)
        run.manages_defs = True                     # the address operand is parsed as a "def"
        run.extra_srcs = reg_keys(ins.operands[0]) + (M0,)
        return run
    return build


def _global_builder(name):
    def build(ins, cx):
        ndw, small = _form(ins, cx, name)
        vaddr = ins.operands[0]
        saddr = ins.operands[1] if len(ins.operands) > 1 else None
        addresses = _global_addresses(vaddr, saddr, ins.modifier("offset", 0) or 0, cx)
        write = _lds_writer(ins, cx, ndw, GLOBAL_M0_MASK)

        def run(w):
            addr = addresses(w, ndw)
            vals = np.zeros(addr.shape, U32)
            if addr.size:
                a = addr.astype(U64)
                vals = w.group.memory.load_small(a, *small) if small else w.group.memory.load_u32(a)
            write(w, vals)
        run.manages_defs = True
        run.extra_srcs = reg_keys(vaddr) + (M0,)
        return run
    return build


def _with_lds_form(base, lds_build):
    def build(ins, cx):
        return lds_build(ins, cx) if ins.has_modifier("lds") else base(ins, cx)
    return build


for _name in FORMS:
    handles(f"global_load_lds_{_name}")(_global_builder(_name))


def add_lds_forms(handlers: dict) -> None:
    """Give the buffer/global loads in ``handlers`` (memory/buffer_flat.py's VGPR forms) their ``lds`` form."""
    for name in FORMS:
        for prefix, builder in (("buffer_load_", _buffer_builder), ("global_load_", _global_builder)):
            plain = handlers.get(prefix + name)
            if plain is not None:
                handlers[prefix + name] = _with_lds_form(plain, builder(name))


# -- strict: a DS access of LDS that an LDS-DMA load of the same wave is still writing -------------

def check_in_flight(w, idx, inst, access: str) -> None:
    """Raise if DS dwords ``idx`` overlap an LDS-DMA region of the same wave not yet waited for."""
    vm = w.pending.vm
    mine = None
    for pos, e in enumerate(vm):
        if e.lds_parts is None:
            continue
        if mine is None:
            mine = dict(w.split_columns(idx))
        for wave, part in e.lds_parts:
            ds = mine.get(wave)
            if ds is None or not ds.size or not part.size:
                continue
            common = np.intersect1d(ds, part)
            if common.size:
                raise Fault(f"strict: {describe(inst)} {access} LDS byte 0x{int(common[0]) * 4:x} while the LDS-DMA "
                            f"load {describe(e.inst)} of wave {wave} may still be writing it (LDS-DMA completes "
                            f"with vmcnt); it needs s_waitcnt vmcnt({len(vm) - 1 - pos}) before this instruction")


def merge_batch_members(b) -> None:
    """An LDS-DMA load ran wave by wave inside a lockstep batch (its M0 or another scalar source
    differs between the waves): the followers issued into scratch state, so the batch's entry (the
    leader's) takes their LDS regions too."""
    entry = b.pending.vm[-1]
    parts = list(entry.lds_parts or ())
    for w in b.subs[1:]:
        if w.pending.vm and w.pending.vm[-1].lds_parts:
            parts.extend(w.pending.vm[-1].lds_parts)
    entry.lds_parts = tuple(parts)
