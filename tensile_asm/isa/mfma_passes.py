"""How many passes an MFMA takes: the ``issue_cycles.mfma_passes`` table of ``isa/<gfx>.yaml``.

Entries are tried in order; the first whose ``pattern`` (re.search on the opcode) matches, and whose
optional ``when`` holds, wins. ``when`` maps a modifier to the values it may have (a missing modifier
counts as 0): gfx950's f8f6f4 MFMAs take half the passes when neither A nor B is FP8/BF8
(``cbsz``/``blgp`` 2-4: FP6, BF6, FP4), as the CDNA4 ISA guide's MFMA table and LLVM's
``PredIsF8_MFMA_SCALE`` (SISchedule.td) say. The hazard rules (isa/hazards.py) and the issue model
(inspect/issue_model.py) both read passes from here.
"""

from __future__ import annotations

import re

from tensile_asm.errors import UserError


def compile_table(entries, where: str) -> tuple:
    """((compiled pattern, passes, when), ...) from the yaml entries; a malformed one is a UserError."""
    try:
        return tuple((re.compile(e["pattern"]), int(e["passes"]),
                      {str(k): frozenset(int(v) for v in vs) for k, vs in (e.get("when") or {}).items()})
                     for e in entries)
    except (KeyError, TypeError, ValueError, AttributeError, re.error) as err:
        raise UserError(f"{where}: issue_cycles.mfma_passes entries need 'pattern' (a regex), 'passes' and "
                        f"optionally 'when' ({{modifier: [values]}}) ({err})") from None


def passes_of(table: tuple, ins, arch: str) -> int:
    """Passes of ``ins`` (an Instruction, or an opcode string: no modifiers)."""
    opcode = ins if isinstance(ins, str) else ins.opcode
    for pattern, passes, when in table:
        if pattern.search(opcode) and all((0 if isinstance(ins, str) else ins.modifier(m, 0) or 0) in values
                                          for m, values in when.items()):
            return passes
    raise UserError(f"isa/{arch}.yaml: no issue_cycles.mfma_passes pattern matches '{opcode}'; "
                    f"add one (passes from the ISA guide's MFMA table)")


__all__ = ["compile_table", "passes_of"]
