"""Typed buffer accesses: ``buffer_load/store_format_*`` (format from the V#) and ``tbuffer_*`` (MTBUF:
format from the instruction's dfmt/nfmt), emulated only where the format makes them plain dword
accesses: data format 32, 32_32, 32_32_32 or 32_32_32_32 with number format UINT, SINT or FLOAT
(no conversion), identity destination selects, and as many components as the instruction moves
(a load may read fewer than the format holds). Everything else is refused with the reason: the
conversions and the default-filled missing components are not emulated; nor are the ``_d16`` forms.

V# word 3 (Vega/CDNA ISA guides, "Buffer Resource"): DST_SEL_X/Y/Z/W [2:0] [5:3] [8:6] [11:9]
(4..7 = X..W), NUM_FORMAT [14:12], DATA_FORMAT [18:15]. MTBUF format = dfmt | nfmt << 4
(isa/symbolic_fields.py). Addressing and range checks as buffer_flat.py's dword loads and stores.
"""

from __future__ import annotations

from tensile_asm.emulator.memory.buffer_flat import _buffer_load_builder, _buffer_store_builder
from tensile_asm.emulator.memory.device import Fault
from tensile_asm.emulator.program import HandlerTable, Unsupported
from tensile_asm.isa.symbolic_fields import DATA_FORMATS, NUM_FORMATS, DEFAULT_DFMT, DEFAULT_NFMT

TABLE = HandlerTable()          # this module's opcodes; registry.py merges it
handles = TABLE.handles

COMPONENTS = {"x": 1, "xy": 2, "xyz": 3, "xyzw": 4}
DWORD_FORMATS = {"32": 1, "32_32": 2, "32_32_32": 3, "32_32_32_32": 4}
RAW_NUM_FORMATS = ("UINT", "SINT", "FLOAT")
IDENTITY_DST_SEL = 4 | 5 << 3 | 6 << 6 | 7 << 9


def format_problem(dfmt: int, nfmt: int, n: int, store: bool) -> str | None:
    """Why a format is not a plain dword access of ``n`` components (None: it is)."""
    data, num = DATA_FORMATS[dfmt], NUM_FORMATS[nfmt]
    if data not in DWORD_FORMATS or num not in RAW_NUM_FORMATS:
        return (f"format [BUF_DATA_FORMAT_{data},BUF_NUM_FORMAT_{num}] converts data; only 32-bit "
                f"UINT/SINT/FLOAT formats are emulated")
    m = DWORD_FORMATS[data]
    if n > m or (store and n != m):
        return f"the format has {m} component(s) and the instruction moves {n}"
    return None


def _builder(n, store, typed):
    def build(ins, cx):
        if typed:
            fmt = ins.modifier("format", DEFAULT_DFMT | DEFAULT_NFMT << 4)
            why = format_problem(fmt & 15, fmt >> 4 & 7, n, store)
            if why:
                raise Unsupported(why)
        inner = (_buffer_store_builder if store else _buffer_load_builder)(n)(ins, cx)
        r = ins.operands[2].index

        def run(w):
            word3 = int(w.s[r + 3])
            if word3 & 0xFFF != IDENTITY_DST_SEL:
                raise Fault(f"V# destination selects 0x{word3 & 0xFFF:x} are not the identity (X, Y, Z, W); "
                            f"swizzled format accesses are not emulated")
            if not typed:
                why = format_problem(word3 >> 15 & 15, word3 >> 12 & 7, n, store)
                if why:
                    raise Fault(f"V# {why}")
            return inner(w)
        for attr in ("manages_defs", "extra_srcs"):
            if hasattr(inner, attr):
                setattr(run, attr, getattr(inner, attr))
        return run
    return build


for _c, _n in COMPONENTS.items():
    for _prefix, _typed in (("buffer", False), ("tbuffer", True)):
        handles(f"{_prefix}_load_format_{_c}")(_builder(_n, False, _typed))
        handles(f"{_prefix}_store_format_{_c}")(_builder(_n, True, _typed))
# The _d16 forms (16-bit packing) stay unregistered: running one is the emulator's "does not implement".

__all__ = ["format_problem"]
