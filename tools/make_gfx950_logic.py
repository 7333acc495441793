"""Write bench/gfx950_logic/: Tensile-format logic files for gfx950 (CDNA4), one per type, with solutions of the
kind hipBLASLt's own gfx950 logic uses (asm_full/gfx950: MatrixInstruction 16x16x32 / 32x32x16 for f16/bf16,
MIWaveGroup [2, 2], PrefetchGlobalRead 2, TransposeLDS, SourceSwap, wide vectors; int8 and fp8 on the K-doubled
and f8f6f4 shapes). rocBLAS ships no gfx950 logic and hipBLASLt's files are TensileLite's format (other keys,
UserArgs kernels), so the solutions are written here with our derivation (``Solution.from_dict`` over the
parameters below, every derived key ours) and ``write_logic_file``. hipBLASLt's most common HHS tile,
MT256x256x32 MI16x16x32 MIWaveTile [8, 8] with PrefetchGlobalRead 2, needs 98,560 bytes of LDS there (100,352 by
Tensile 4.44's layout): past 64 KiB, which the derivation rejects (Tensile 4.44's MaxLDS; gfx950 has 160 KiB, but
the writer addresses LDS with 16-bit instruction offsets), so it is not in the files.

    python3 tools/make_gfx950_logic.py          # from the repository root
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tensile_asm.library.logic import write_logic_file  # noqa: E402
from tensile_asm.problem import ProblemType  # noqa: E402
from tensile_asm.solution import Solution  # noqa: E402

OUT = REPO / "bench" / "gfx950_logic"
DEVICES = ["Device 75a0", "Device 75a3"]      # MI350X / MI355X

# hipBLASLt-like knobs of its gfx950 HHS/BBS logic: PGR 2, PLR 0/1, TransposeLDS, SourceSwap, wide vectors
HPA16 = {"PrefetchGlobalRead": 2, "PrefetchLocalRead": 1, "TransposeLDS": 1, "SourceSwap": True,
         "GlobalReadVectorWidth": 8, "LocalReadVectorWidth": 8, "VectorWidth": 4, "VectorWidthB": 1,
         "LdsPadA": 8, "LdsPadB": 8, "StaggerU": 0, "WorkGroupMapping": 8, "ScheduleIterAlg": 3}
BYTE = {"PrefetchGlobalRead": 2, "PrefetchLocalRead": 1, "TransposeLDS": 1, "GlobalReadVectorWidth": 16,
        "VectorWidth": 4, "VectorWidthB": 1, "LdsPadA": 16, "LdsPadB": 16, "StaggerU": 0, "WorkGroupMapping": 8,
        "ScheduleIterAlg": 3}

FILES = {
    # (problem, [(MatrixInstruction (9-value), DepthU, extra)])
    "HHS_BH": ({"DataType": "h", "DestDataType": "h", "ComputeDataType": "s", "TransposeA": False,
                "TransposeB": False}, [
        ([16, 16, 32, 1, 1, 4, 4, 2, 2], 64, {**HPA16, "1LDSBuffer": 1}),
        ([32, 32, 16, 1, 1, 2, 2, 2, 2], 32, {**HPA16, "VectorWidth": 2}),
        ([16, 16, 16, 1, 1, 4, 2, 2, 2], 32, {**HPA16, "LocalReadVectorWidth": 4})]),                   # gfx942's shape, kept on gfx950
    "HSS_BH": ({"DataType": "h", "DestDataType": "s", "ComputeDataType": "s", "TransposeA": True,
                "TransposeB": False}, [
        ([32, 32, 16, 1, 1, 2, 2, 2, 2], 64, {**HPA16, "VectorWidth": 2, "1LDSBuffer": 1}),
        ([16, 16, 32, 1, 1, 2, 4, 2, 2], 32, {**HPA16, "VectorWidth": 2})]),
    "BBS_BH": ({"DataType": "b", "DestDataType": "b", "ComputeDataType": "s", "TransposeA": True,
                "TransposeB": False}, [
        ([16, 16, 32, 1, 1, 4, 4, 2, 2], 64, {**HPA16, "1LDSBuffer": 1}),
        ([32, 32, 16, 1, 1, 2, 2, 2, 2], 32, {**HPA16, "VectorWidth": 2}),
        ([32, 32, 8, 1, 1, 2, 2, 2, 2], 32, {**HPA16, "VectorWidth": 2, "LocalReadVectorWidth": 4})]),
    "BSS_BH": ({"DataType": "b", "DestDataType": "s", "ComputeDataType": "s", "TransposeA": False,
                "TransposeB": True}, [
        ([16, 16, 32, 1, 1, 4, 2, 2, 2], 32, HPA16)]),
    "SB": ({"DataType": "s", "DestDataType": "s", "ComputeDataType": "s", "TransposeA": False,
            "TransposeB": True}, [
        ([16, 16, 4, 1, 1, 4, 4, 2, 2], 16, {"PrefetchGlobalRead": 2, "PrefetchLocalRead": 1, "TransposeLDS": 1,
                                             "GlobalReadVectorWidth": 4, "VectorWidth": 4, "LdsPadA": 4,
                                             "LdsPadB": 4, "StaggerU": 0, "WorkGroupMapping": 8}),
        ([32, 32, 2, 1, 1, 2, 2, 2, 2], 16, {"PrefetchGlobalRead": 2, "GlobalReadVectorWidth": 4, "VectorWidth": 2,
                                             "StaggerU": 0})]),
    "DB": ({"DataType": "d", "DestDataType": "d", "ComputeDataType": "d", "TransposeA": False,
            "TransposeB": False}, [
        ([16, 16, 4, 1, 1, 2, 2, 2, 2], 16, {"PrefetchGlobalRead": 2, "GlobalReadVectorWidth": 2, "VectorWidth": 2,
                                             "StaggerU": 0})]),
    "I8II_BH": ({"DataType": "i8", "DestDataType": "i", "ComputeDataType": "i", "TransposeA": True,
                 "TransposeB": False}, [
        ([16, 16, 64, 1, 1, 4, 4, 2, 2], 128, {**BYTE, "1LDSBuffer": 1, "LocalReadVectorWidth": 16}),
        ([32, 32, 32, 1, 1, 2, 2, 2, 2], 64, {**BYTE, "LocalReadVectorWidth": 16})]),
    "F8SS_BH": ({"DataType": "f8", "DestDataType": "s", "ComputeDataType": "s", "TransposeA": True,
                 "TransposeB": False}, [
        ([16, 16, 128, 1, 1, 4, 4, 2, 2], 128, {**BYTE, "1LDSBuffer": 1}),
        ([32, 32, 64, 1, 1, 2, 2, 2, 2], 128, {**BYTE, "1LDSBuffer": 1}),
        ([16, 16, 32, 1, 1, 4, 4, 2, 2], 64, {**BYTE, "LocalReadVectorWidth": 8})]),
    "F8HS_BH": ({"DataType": "f8", "DestDataType": "h", "ComputeDataType": "s", "TransposeA": False,
                 "TransposeB": True}, [
        # (A and B contiguous along M and N: both K-major, read a byte at a time and packed; small tiles fit)
        ([16, 16, 128, 1, 1, 1, 2, 2, 2], 128, {**BYTE, "VectorWidth": 1, "PrefetchLocalRead": 0, "1LDSBuffer": 1})]),
    "B8F8SS_BH": ({"DataType": "b8f8", "DestDataType": "s", "ComputeDataType": "s", "TransposeA": True,
                   "TransposeB": False}, [
        ([32, 32, 64, 1, 1, 2, 2, 2, 2], 128, {**BYTE, "1LDSBuffer": 1})]),
}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    bad = 0
    for key, (problem, entries) in FILES.items():
        hpa = problem["DataType"] in ("h", "b", "i8", "f8", "b8", "f8b8", "b8f8") and problem["ComputeDataType"] != "h"
        pt = ProblemType.from_dict({"OperationType": "GEMM", "UseBeta": True, "Batched": True,
                                    "HighPrecisionAccumulate": hpa, **problem}, f"gfx950 {key} ProblemType")
        solutions = []
        for i, (mi, du, extra) in enumerate(entries):
            sol = Solution.from_dict({"MatrixInstruction": mi, "DepthU": du, "ISA": [9, 5, 0], **extra},
                                     where=f"gfx950 {key} solution {i}", problem_type=pt)
            if not sol.valid:
                print(f"{key} solution {i}: invalid: {sol.rejection}")
                bad += 1
            solutions.append(sol)
        if bad:
            continue
        sizes = [([256 * (i + 1), 256, 1, 512], i, 100.0 + i) for i in range(len(solutions))]
        out = OUT / f"gfx950_{pt.name}.yaml"
        write_logic_file(out, schedule="gfx950", architecture="gfx950", device_names=DEVICES, problem_type=pt,
                         solutions=solutions, exact_logic=sizes)
        print(f"wrote {out.relative_to(REPO)} ({len(solutions)} solutions)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
