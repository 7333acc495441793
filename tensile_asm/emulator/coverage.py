"""Which instructions of an architecture the emulator implements, against the full list LLVM knows
(``isa/instructions/<arch>.txt``, see tensile_asm/isa/instruction_lists.py).

A listed name counts as implemented when a handler is registered for it: its canonical name (the
``_e32``/``_e64``/``_vop3`` suffix stripped, as the parser does) is in ``HANDLERS``, or a prefix
handler (MFMA) accepts it; a ``_dpp``/``_sdwa`` name needs a handler registered under that exact
name. Operand forms and modifiers a handler refuses are errors when the instruction runs, so this
counts mnemonics, not every operand form. Families follow the encodings of LLVM's instruction
tables, with DPP, SDWA and MFMA/SMFMAC taken out of VOP1/VOP2/VOPC/VOP3P and FLAT split by
segment; MIMG, EXP and VINTRP are graphics-only (not used by compute kernels) but still counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tensile_asm.isa.instruction_lists import load_instructions

COMPUTE_FAMILIES = ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P",
                    "DPP", "SDWA", "MFMA/SMFMAC", "DS", "MUBUF", "MTBUF", "FLAT", "GLOBAL", "SCRATCH")
GRAPHICS_FAMILIES = ("MIMG", "EXP", "VINTRP")
REPORTED_ARCHES = ("gfx908", "gfx90a", "gfx942", "gfx950")     # the targets of issue #3

_ENCODING_SUFFIX = re.compile(r"_(e32|e64|vop3)$")


def canonical(name: str) -> str:
    return _ENCODING_SUFFIX.sub("", name)


def family(name: str, encoding: str) -> str:
    if name.endswith("_dpp"):
        return "DPP"
    if name.endswith("_sdwa"):
        return "SDWA"
    if name.startswith(("v_mfma", "v_smfmac")):
        return "MFMA/SMFMAC"
    if name.startswith("v_interp_"):
        return "VINTRP"      # v_interp_p1ll_f16 and friends are VOP3-encoded but as graphics-only
    if encoding == "FLAT":
        return "GLOBAL" if name.startswith("global_") else "SCRATCH" if name.startswith("scratch_") else "FLAT"
    return encoding


def is_implemented(name: str) -> bool:
    from tensile_asm.emulator.registry import registry
    handlers, prefixes = registry().handlers, registry().prefixes

    if name.endswith(("_dpp", "_sdwa")):
        return name in handlers
    base = canonical(name)
    if base in handlers:
        return True
    for prefix, builder in prefixes.items():
        if base.startswith(prefix):
            accepts = getattr(builder, "accepts", None)   # a prefix builder may name what it parses
            return accepts(base) if accepts else True
    return False


@dataclass(frozen=True)
class FamilyCoverage:
    family: str
    implemented: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def total(self) -> int:
        return len(self.implemented) + len(self.missing)

    @property
    def graphics(self) -> bool:
        return self.family in GRAPHICS_FAMILIES


def coverage(arch: str) -> list[FamilyCoverage]:
    """One entry per family listed for ``arch``, compute families first, in a fixed order."""
    groups: dict[str, tuple[list, list]] = {}
    for name, encoding in sorted(load_instructions(arch).items()):
        done, missing = groups.setdefault(family(name, encoding), ([], []))
        (done if is_implemented(name) else missing).append(name)
    order = COMPUTE_FAMILIES + GRAPHICS_FAMILIES
    unknown = set(groups) - set(order)
    if unknown:
        raise ValueError(f"isa/instructions/{arch}.txt: encodings {sorted(unknown)} have no family here")
    return [FamilyCoverage(f, tuple(groups[f][0]), tuple(groups[f][1])) for f in order if f in groups]
