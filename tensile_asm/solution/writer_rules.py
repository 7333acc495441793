"""Rules of older Tensile versions that a logic file's stored parameters prove its writer used.

Tensile's TensileCreateLibrary derives every logic solution again with its own rules; a rule that changed
between versions then gives another kernel than the one the file's writer built and tuned. Where the changed
rule decides what the kernel IS (its LDS layout, how many LDS buffers it has), we build the kernel the writing
version built. The writer is told by the stored values themselves, not by the file's MinimumRequiredVersion
(a minimum; rocBLAS's files also hold solutions copied from files of older versions, e.g. aquavanjaram942's
4.37.0 AlikC_Bljk_CB holds a 4.21 solution):

| rule (name) | the writing versions | what their stored values show | 4.44's rule | we build |
|-------------|----------------------|-------------------------------|-------------|----------|
| SIA2_KEEPS_1LDSBUFFER | before 4.25 (Tensile 0ad3cdcea, "MatrixInstruction for general int8", Jan 2021, first released in 4.26 / ROCm 4.1) | ScheduleIterAlg 2 with 1LDSBuffer 0 and an LdsNumElements counting both LDS buffers (LdsOffsetB_Blk + B); a version from 4.25 on forces, and so stores, 1LDSBuffer 1 with ScheduleIterAlg 2 | ScheduleIterAlg 2 forces 1LDSBuffer 1 (one LDS buffer, LdsNumElements = aligned A + B) | the file's 1LDSBuffer 0: two LDS buffers, as the writer's kernel (arcturus/aldebaran CB 4.21 files: 28 solutions, aquavanjaram942 AlikC_Bljk_CB 7) |
| PER_ROW_PAD_BEFORE_419 | before 4.19 (Tensile 142ac5e0c "re-factory Tensile to support all Matrix Instruction", May 2020, added LdsBlockSizePerPadA/B) | the single LdsBlockSizePerPad (-1 or a size) and no LdsBlockSizePerPadA/B | LdsBlockSizePerPadA/B (default -1): automatic, since 4.40 (e065ca1a8 "LdsPad optimization", ROCm 6.1) also for K-major MFMA operands with MIInputPerThread > 1 (pad every block of LdsBlockSizePerPad bytes) | 4.16-4.18 resolved -1 to a block size only with TransposeLDS, else kept every LdsPad after each LDS row; a size the file gives is the block size of both operands: aldebaran BBS_BH_GB 4.14 files, 15 solutions (LdsPadB 2 per 64/128-element row: 3600 elements where 4.44 derives 3592) |
| TLDS_EDITED_AFTER_DERIVATION | none: the parameters were edited after Tensile derived and stored the rest | TransposeLDS 1 with a stored UnrollMajorLDS false for an operand whose unit-stride index is not its free one (TLU false), which no version derives (from 4.20 on UnrollMajorLDS = TransposeLDS and not TLU), and a SolutionNameMin token TLDS0 | every Tensile reading the file derives again from the parameters (4.44: "force redo the deriving") | the kernel every version derives from the parameters; its stored LDS keys are stale, recorded and not a reason (aldebaran DB 271: 288 stored, 384 derived; a DirectToVgpr solution) |
"""

from __future__ import annotations

from typing import Any, Mapping

SIA2_KEEPS_1LDSBUFFER = "SIA2_KEEPS_1LDSBUFFER"
PER_ROW_PAD_BEFORE_419 = "PER_ROW_PAD_BEFORE_419"
TLDS_EDITED_AFTER_DERIVATION = "TLDS_EDITED_AFTER_DERIVATION"
# the stored keys a TLDS_EDITED_AFTER_DERIVATION solution has stale (the LDS layout TransposeLDS decides)
LDS_LAYOUT_KEYS = frozenset({"LdsNumElements", "LdsOffsetB", "LdsOffsetA_Blk", "LdsOffsetB_Blk",
                             "LdsNumElementsAlignedA", "LdsNumElementsAlignedB"})


def older_rules(stored: Mapping[str, Any]) -> frozenset[str]:
    """The older-version rules (names above) that the logic-file solution ``stored`` (its dict as the file
    stores it) shows its writer used."""
    rules = set()
    if stored.get("ScheduleIterAlg") == 2 and stored.get("1LDSBuffer") == 0 and stored.get("MatrixInstruction"):
        rules.add(SIA2_KEEPS_1LDSBUFFER)
    if ("LdsBlockSizePerPad" in stored and "LdsBlockSizePerPadA" not in stored
            and "LdsBlockSizePerPadB" not in stored):
        rules.add(PER_ROW_PAD_BEFORE_419)
    pt = stored.get("ProblemType") if isinstance(stored.get("ProblemType"), Mapping) else {}
    if stored.get("TransposeLDS") == 1 and "_TLDS0_" in f"{stored.get('SolutionNameMin', '')}_" and any(
            stored.get("UnrollMajorLDS" + tc) in (0, False) and pt.get("TLU" + tc) is False for tc in "AB"):
        rules.add(TLDS_EDITED_AFTER_DERIVATION)
    return frozenset(rules)


def apply_to_params(rules: frozenset[str], stored: Mapping[str, Any], params: dict[str, Any]) -> None:
    """Set the parameters whose meaning the rules fix before the derivation runs (``params``: Tensile names,
    defaults filled, the file's values read)."""
    if PER_ROW_PAD_BEFORE_419 in rules:
        size = stored["LdsBlockSizePerPad"]
        if size == -1 and not stored.get("TransposeLDS"):
            size = 0   # 4.16-4.18: -1 stays unresolved without TransposeLDS: LdsPad after each row
        if size != -1:
            params["LdsBlockSizePerPadA"] = params["LdsBlockSizePerPadB"] = size
