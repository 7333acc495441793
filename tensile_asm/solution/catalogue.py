"""THE table of solution parameters: Tensile's names, allowed values, abbreviations, meanings, defaults.

Two defaults per parameter:
  * ``tensile_default`` — Tensile's own (``Common.defaultBenchmarkCommonParameters``). Used to fill in keys a
    logic file written by Tensile leaves out, since for Tensile a missing key meant that value.
  * ``default`` — ours, used for solutions we write (tuning configs, our own solution files). It is Tensile's
    default wherever our writer builds that value: DepthU -1 (automatic search; the writer needs the
    power of two it finds), VectorWidth/VectorWidthB/GlobalReadVectorWidth -1 (resolved by the derivation,
    to 1/2/4 for fp32), PrefetchGlobalRead 1, PrefetchLocalRead 1, WorkGroupMapping 8, StaggerU 32 with
    StaggerUStride 256, EdgeType Branch (our edge handling is always exact, whatever EdgeType says),
    GlobalSplitU 1, 1LDSBuffer 0. It differs only where the writer cannot build Tensile's default, or
    would not do what it promises (the rows say so by their values, with the reason beside them):
      - KernelLanguage Assembly: this project's writer emits assembly (Tensile's default is Source);
      - LdsPadA/B and LdsBlockSizePerPadA/B 0: Tensile's -1 derives a non-zero pad (VectorWidth elements)
        for an operand whose unit-stride dimension is K; the writer's LdsPad support is new and owned by
        its author, who flips these defaults once LdsPad -1 is part of the randomized tests;
      - ExpandPointerSwap False, OptNoLoadLoop 0: the writer has one loop copy and no optimised no-load
        loop, so these describe the kernels it builds (Tensile's values would be accepted and silently not
        honoured);
      - UseSgprForGRO 0: the writer honours _UseSgprForGRO (global-read offsets along the loads' second
        dimension in SGPRs, writer/global_read.py sgpr_offsets) since this session; the default stays 0 until
        Tensile's -1 is part of the randomized tests (it changes configs' derived keys and names).

Abbreviations follow Tensile's rule (the name with its lower-case letters removed, digits kept:
``PrefetchGlobalRead`` -> ``PGR``, ``1LDSBuffer`` -> ``1LDSB``) with one exception: ``MACInstruction`` has
an empty abbreviation. Two pairs collide, as in Tensile: MacroTileShapeMin/Max (MTSM), Min/MaxVgprNumber (MVN).

Besides parameters, logic files carry *derived* keys (recomputed on reading, as Tensile recomputes them; the few
Tensile keeps from the file are FILE_WINS), *legacy* keys (parameters, derived keys and annotations of older
Tensile versions, kept verbatim) and old spellings of current parameters (ALIASES, Tensile's own misspelling
among them). All are listed at the end; docs/logic-versions.md says which Tensile version wrote what.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Allowed:
    """A validator for a parameter's values, with the text used in error messages."""

    check: Callable[[Any], bool]
    text: str

    def __call__(self, value: Any) -> bool:
        try:
            return bool(self.check(value))
        except (TypeError, ValueError):
            return False


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def one_of(*values: Any) -> Allowed:
    return Allowed(lambda v: any(v == x for x in values), "one of " + ", ".join(str(x) for x in values))


def int_range(lo: int, hi: int, extra: tuple = ()) -> Allowed:
    text = f"an integer {lo}..{hi}" + (f" or {', '.join(map(str, extra))}" if extra else "")
    return Allowed(lambda v: (isinstance(v, int) and lo <= v <= hi) or v in extra, text)


BOOL = Allowed(lambda v: isinstance(v, bool) or v in (0, 1), "true or false")
ANY_DICT = Allowed(lambda v: isinstance(v, dict) and all(_is_int(k) and _is_int(x) for k, x in v.items()),
                   "a mapping {index: value} of integers")
ANY_STR = Allowed(lambda v: isinstance(v, str), "a string")
POW2_UP_TO_64 = one_of(1, 2, 4, 8, 16, 32, 64)
VECTOR_WIDTHS = one_of(-1, 1, 2, 3, 4, 6, 8, 16)
PER_MFMA = Allowed(lambda v: v == -1 or (isinstance(v, (int, float)) and 0.01 <= v < 32), "0.01..31.99 or -1")
WORK_GROUP = Allowed(lambda v: isinstance(v, list) and len(v) == 3 and all(_is_int(x) and x > 0 for x in v),
                     "[wg0, wg1, LocalSplitU], three positive integers")
THREAD_TILE = Allowed(lambda v: isinstance(v, list) and len(v) == 2 and all(_is_int(x) and x > 0 for x in v),
                      "[tt0, tt1], two positive integers")
MACRO_TILE = THREAD_TILE
MATRIX_INSTRUCTION = Allowed(lambda v: isinstance(v, list) and len(v) in (0, 4, 9) and all(_is_int(x) for x in v),
                             "[] (VALU), [M, N, K, B] or the 9-entry form")
ISA = Allowed(lambda v: isinstance(v, (list, tuple)) and len(v) == 3 and all(_is_int(x) for x in v),
              "[major, minor, stepping], e.g. [9, 0, 10]")
DEPTH_U = Allowed(lambda v: _is_int(v) and (-16 <= v <= -1 or 2 <= v <= 1024), "-16..-1 (automatic) or 2..1024")
AI_BOUND = Allowed(lambda v: v == -1 or (isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0),
                   "-1 (no bound) or a non-negative number")
LDS_BLOCK = one_of(-1, 0, 64, 128, 256, 512, 1024, 2048, 4096)


@dataclass(frozen=True)
class Param:
    name: str
    tensile_default: Any
    default: Any
    allowed: Allowed
    meaning: str

    @property
    def abbrev(self) -> str:
        return abbreviation(self.name)


def abbreviation(name: str) -> str:
    """Tensile's parameter-name abbreviation: lower-case letters removed (``MACInstruction`` -> empty)."""
    if name == "MACInstruction":
        return ""
    return "".join(c for c in name if not c.islower())


_ = None  # marks "same as Tensile's default" in the table below
_ROWS = [
    # name, tensile_default, ours (_ = same), allowed, meaning
    # ours differs: the writer emits assembly
    ("KernelLanguage", "Source", "Assembly", one_of("Assembly", "Source"), "assembly writer or HIP source writer"),
    ("WorkGroup", [16, 16, 1], _, WORK_GROUP, "threads per dimension [wg0, wg1, LocalSplitU]; 32..1024 in total"),
    ("ThreadTile", [4, 4], _, THREAD_TILE, "VALU: C elements per thread [tt0, tt1]; with MI: wave tile"),
    ("MacroTile", None, _, MACRO_TILE, "optional; if given it must equal the derived [MT0, MT1]"),
    ("MatrixInstruction", [], _, MATRIX_INSTRUCTION, "MFMA/WMMA shape [M,N,K,B] (or 9-entry form); [] = VALU"),
    ("DepthU", -1, _, DEPTH_U, "K elements per unrolled loop iteration; negative = automatic search"),
    ("DepthULdsDivisor", 1, _, one_of(1, 2, 4), "split LDS: LDS holds DepthU/divisor"),
    ("VectorWidth", -1, _, VECTOR_WIDTHS, "register vector width of the C/A tiles; -1 automatic"),
    ("VectorWidthB", -1, _, one_of(-1, 1, 2, 4, 8, 16), "vector width of B (MI only); -1 = VectorWidth"),
    ("GlobalReadVectorWidth", -1, _, VECTOR_WIDTHS, "elements per global load; -1 = VectorWidth"),
    ("LocalReadVectorWidth", -1, _, one_of(-1, 1, 2, 4, 8, 16), "elements per LDS read; -1 = VW (VALU) or MI input"),
    ("StoreVectorWidth", -1, _, VECTOR_WIDTHS, "elements per global store; -1 = VectorWidth"),
    ("StoreRemapVectorWidth", 0, _, one_of(-1, 0, 1, 2, 4, 8, 16), "MI: remap C through LDS for wider stores"),
    ("VectorStore", -1, _, one_of(-1, 0, 1), "store VectorWidth elements per instruction (1) or one (0)"),
    ("PrefetchGlobalRead", 1, _, one_of(0, 1, 2), "0 none, 1 double buffer global->VGPR->LDS, 2 one more in flight"),
    ("PrefetchLocalRead", 1, _, int_range(0, 128), "LDS->VGPR iterations issued ahead"),
    ("1LDSBuffer", 0, _, one_of(-1, 0, 1), "single LDS buffer even with PrefetchGlobalRead"),
    ("GlobalSplitU", 1, _, int_range(1, 4096), "split K across this many work-groups"),
    ("GlobalSplitUAlgorithm", "SingleBuffer", _, one_of("SingleBuffer", "MultipleBuffer"),
     "GSU: atomics into D, or per-slice workspace + reduction kernel"),
    ("GlobalSplitUSummationAssignmentRoundRobin", True, _, BOOL, "GSU: interleave K chunks across slices"),
    ("GlobalSplitUWorkGroupMappingRoundRobin", False, _, BOOL, "GSU: which work-group ids share a tile"),
    ("GlobalSplitUAtomicAdd", False, _, BOOL, "GSU SingleBuffer: use atomic add instructions"),
    ("MinKForGSU", 256, _, int_range(16, 256), "GSU kernels need K >= MinKForGSU*GSU (predicate)"),
    ("WorkGroupMapping", 8, _, int_range(-1024, 1024), "remap work-group ids in blocks of WGM along dim 1"),
    ("WorkGroupMappingType", "B", _, one_of("B", "Z"), "blocked or Z-order work-group mapping"),
    ("StaggerU", 32, _, one_of(0, 2, 4, 8, 16, 32, 64), "stagger the K start per work-group (memory channels)"),
    ("StaggerUStride", 256, _, one_of(0, 16, 32, 64, 128, 256, 512, 1024, 2048), "stagger step in bytes"),
    ("StaggerUMapping", 0, _, int_range(0, 4), "which work-group coordinate selects the stagger"),
    ("TransposeLDS", 0, _, one_of(-1, 0, 1), "store the non-TLU operand unroll-major in LDS"),
    ("UnrollMajorLDSA", False, _, BOOL, "A unroll-major in LDS"),
    ("UnrollMajorLDSB", False, _, BOOL, "B unroll-major in LDS"),
    # ours differ (LdsPad*, LdsBlockSizePerPad*): -1 derives non-zero pads; left to the LdsPad author
    ("LdsPadA", -1, 0, int_range(-1, 127), "LDS row padding of A in elements; -1 automatic"),
    ("LdsPadB", -1, 0, int_range(-1, 127), "LDS row padding of B in elements; -1 automatic"),
    ("LdsBlockSizePerPadA", -1, 0, LDS_BLOCK, "A: insert the pad every N bytes; 0 per row, -1 automatic"),
    ("LdsBlockSizePerPadB", -1, 0, LDS_BLOCK, "B: insert the pad every N bytes; 0 per row, -1 automatic"),
    ("EdgeType", "Branch", _, one_of("Branch", "ShiftPtr", "None"), "M/N edge strategy"),
    ("InnerUnroll", 1, _, POW2_UP_TO_64, "extra unroll of the MAC step"),
    ("LocalDotLayout", 1, _, one_of(1, 2, 4, 8), "interleave N unroll elements in LDS"),
    ("ScheduleIterAlg", 1, _, int_range(0, 3), "instruction scheduler; 3 is the MFMA interleaver"),
    ("ScheduleGlobalRead", 1, _, one_of(0, 1), "interleave global reads into the iteration"),
    ("ScheduleLocalWrite", 1, _, one_of(0, 1), "interleave local writes into the iteration"),
    ("GlobalReadPerMfma", 1, _, PER_MFMA, "SIA3: global reads per MFMA"),
    ("LocalWritePerMfma", -1, _, PER_MFMA, "SIA3: local writes per MFMA; -1 automatic"),
    # ours differ (EPS, ONLL): one loop copy, no optimised no-load loop in this writer
    ("ExpandPointerSwap", True, False, BOOL, "two loop copies instead of XOR-swapping LDS pointers (PGR only)"),
    ("OptNoLoadLoop", 1, 0, one_of(0, 1, 2), "optimised no-load loop variant"),
    ("SuppressNoLoadLoop", False, _, BOOL, "use buffer OOB instead of a separate no-load loop"),
    ("OptPreLoopVmcnt", True, _, BOOL, "PGR: optimise the pre-loop vmcnt wait"),
    ("SourceSwap", False, _, BOOL, "swap MFMA source operands"),
    ("MIArchVgpr", False, _, BOOL, "MFMA accumulates in VGPRs instead of AGPRs"),
    ("WaveSeparateGlobalReadA", 0, _, one_of(0, 1), "each wave loads a contiguous LDS block of A"),
    ("WaveSeparateGlobalReadB", 0, _, one_of(0, 1), "each wave loads a contiguous LDS block of B"),
    ("ThreadSeparateGlobalReadA", 0, _, one_of(0, 1, 2, 4), "spread unroll elements of A over lanes"),
    ("ThreadSeparateGlobalReadB", 0, _, one_of(0, 1, 2, 4), "spread unroll elements of B over lanes"),
    ("DirectToLdsA", False, _, BOOL, "load A global->LDS bypassing VGPRs"),
    ("DirectToLdsB", False, _, BOOL, "load B global->LDS bypassing VGPRs"),
    ("DirectToVgprA", False, _, BOOL, "load A global->VGPR bypassing LDS"),
    ("DirectToVgprB", False, _, BOOL, "load B global->VGPR bypassing LDS"),
    ("BufferLoad", True, _, BOOL, "buffer (SRD) loads instead of flat/global"),
    ("BufferStore", True, _, BOOL, "buffer (SRD) stores instead of flat/global"),
    # ours differs: global-read offsets stay in VGPRs in this writer
    ("UseSgprForGRO", -1, 0, one_of(-1, 0, 1), "keep per-load global read offsets in SGPRs; -1 heuristic"),
    ("UseInstOffsetForGRO", 0, _, one_of(-1, 0, 1), "DirectToLds: use instruction offsets for GRO"),
    ("NumLoadsCoalescedA", 1, _, int_range(-1, 64), "A global-load tile shape (1 search up, -1 search down)"),
    ("NumLoadsCoalescedB", 1, _, int_range(-1, 64), "B global-load tile shape (1 search up, -1 search down)"),
    ("FractionalLoad", 0, _, one_of(0, 1, 2), "allow threads with partial load work"),
    ("Use64bShadowLimit", 1, _, BOOL, "64-bit shadow buffer limit (buffers above 4 GiB)"),
    ("VectorAtomicWidth", -1, _, one_of(-1, 1, 2), "vectorised atomics for GSU"),
    ("PersistentKernel", 0, _, int_range(-1, 512), "persistent grid (work-groups per CU)"),
    ("PersistentKernelAlongBatch", False, _, BOOL, "persistent kernel spans batches"),
    ("PrefetchAcrossPersistent", 0, _, one_of(0, 1), "prefetch the next tile in persistent kernels"),
    ("PrefetchAcrossPersistentMode", 0, _, one_of(0, 1), "mode of PrefetchAcrossPersistent"),
    ("StreamK", 0, _, int_range(0, 3), "Stream-K decomposition"),
    ("StreamKAtomic", 0, _, one_of(0, 1), "Stream-K with atomic partial tiles"),
    ("StreamKXCCMapping", 0, _, one_of(0, 2, 3, 4, 5, 6, 7, 8), "Stream-K: work-groups contiguous per XCC (speed)"),
    ("DebugStreamK", 0, _, one_of(0, 1, 2, 3), "Stream-K debugging: skip the fix-up and/or partials"),
    ("DelayRemainingArguments", False, _, BOOL, "PreloadKernelArguments: load the other arguments after A/B (speed)"),
    ("PreloadKernelArguments", 0, _, one_of(-1, 0, 1), "gfx942: preload kernel arguments into SGPRs"),
    ("PackBatchDims", 0, _, one_of(0, 1, 2), "let the macro tile span batch dimensions"),
    ("PackFreeDims", 1, _, BOOL, "let the macro tile span free dimensions"),
    ("PackSummationDims", 0, _, one_of(0, 1), "pack summation dimensions into one loop"),
    ("PackGranularity", 2, _, one_of(2), "packing granularity"),
    ("UnrollIncIsDepthU", 0, _, one_of(0, 1), "debug: increment the unroll counter by DepthU"),
    ("MACInstruction", "FMA", _, one_of("MAD", "FMA", "MAC"), "VALU MAC flavour (MAC in old logic files)"),
    ("WavefrontSize", 64, _, one_of(32, 64), "wave32 or wave64"),
    ("MemoryModifierFormat", "", _, one_of("", "GLC", "SC0"), "cache-modifier spelling; empty = by ISA"),
    ("MaxOccupancy", 40, _, int_range(1, 40), "pad LDS to limit waves per CU"),
    ("MagicDivAlg", 2, _, one_of(0, 1, 2), "magic-number division variant"),
    ("MacroTileShapeMin", 1, _, int_range(1, 256), "reject tiles skinnier than this ratio (min)"),
    ("MacroTileShapeMax", 64, _, int_range(1, 256), "reject tiles skinnier than this ratio (max)"),
    ("AssertSummationElementMultiple", 1, _, one_of(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
     "assume K is a multiple of this (predicate BoundSizeMultiple)"),
    ("AssertFree0ElementMultiple", 1, _, one_of(1, 2, 4, 8, 16), "assume M is a multiple (Free0SizeMultiple)"),
    ("AssertFree1ElementMultiple", 1, _, one_of(1, 2, 4, 8, 16), "assume N is a multiple (Free1SizeMultiple)"),
    ("AssertMinApproxSize", -1, _, int_range(-1, 3), "legacy size assumption (kept as given)"),
    ("AssertStrideAEqual", {}, _, ANY_DICT, "{position: value} strides of A the kernel assumes"),
    ("AssertStrideBEqual", {}, _, ANY_DICT, "{position: value} strides of B the kernel assumes"),
    ("AssertStrideCEqual", {}, _, ANY_DICT, "{position: value} strides of C the kernel assumes"),
    ("AssertStrideDEqual", {}, _, ANY_DICT, "{position: value} strides of D the kernel assumes"),
    ("AssertSizeEqual", {}, _, ANY_DICT, "{index: value} sizes the kernel assumes"),
    ("AssertSizeGreaterThan", {}, _, ANY_DICT, "{index: value} lower size bounds"),
    ("AssertSizeLessThan", {}, _, ANY_DICT, "{index: value} upper size bounds"),
    ("AssertSizeMultiple", {}, _, ANY_DICT, "{index: value} size multiples"),
    ("AssertAlphaValue", False, _, one_of(False, 1, -1), "assume alpha is this value"),
    ("AssertBetaValue", False, _, one_of(False, 1, -1), "assume beta is this value"),
    ("AssertCEqualsD", False, _, BOOL, "assume C and D are the same buffer"),
    ("AssertAIGreaterThanEqual", -1, _, AI_BOUND, "select only for arithmetic intensity >= this (-1: any)"),
    ("AssertAILessThanEqual", -1, _, AI_BOUND, "select only for arithmetic intensity <= this (-1: any)"),
    ("CheckTensorDimAsserts", False, _, BOOL, "check the assertions inside the kernel"),
    ("CheckDimOverflow", 0, _, one_of(0, 1, 2), "check 32-bit dimension overflow inside the kernel"),
    ("LdcEqualsLdd", False, _, BOOL, "legacy: names carry SE (true) or SN (false)"),
    ("InterleaveAlpha", 0, _, one_of(0, 1), "interleave alpha scaling with beta loads"),
    ("AggressivePerfMode", 1, _, one_of(0, 1, 2), "s_setprio tricks"),
    ("LoopDoWhile", False, _, BOOL, "Source: do-while loop"),
    ("LoopTail", True, _, BOOL, "generate the tail loop for K not a multiple of DepthU"),
    ("GlobalReadCoalesceGroupA", True, _, BOOL, "adjacent threads read adjacent addresses (A)"),
    ("GlobalReadCoalesceGroupB", True, _, BOOL, "adjacent threads read adjacent addresses (B)"),
    ("GlobalReadCoalesceVectorA", True, _, one_of(True), "read short vectors from global (A)"),
    ("GlobalReadCoalesceVectorB", True, _, one_of(True), "read short vectors from global (B)"),
    ("GlobalRead2A", True, _, BOOL, "unused (Tensile legacy switch)"),
    ("GlobalRead2B", True, _, BOOL, "unused (Tensile legacy switch)"),
    ("LocalWrite2A", True, _, BOOL, "use ds_write2 for A"),
    ("LocalWrite2B", True, _, BOOL, "use ds_write2 for B"),
    ("LocalRead2A", True, _, BOOL, "use ds_read2 for A"),
    ("LocalRead2B", True, _, BOOL, "use ds_read2 for B"),
    ("UnrollMemFence", False, _, BOOL, "memory fence per sub-iteration"),
    ("VgprForLocalReadPacking", False, _, BOOL, "dedicated VGPRs for local-read packing"),
    ("ClusterLocalRead", 0, _, one_of(0, 1), "cluster local reads"),
    ("ExtraMiLatencyLeft", 0, _, int_range(0, 64), "extra MFMA latency budget for scheduling"),
    ("ExtraLatencyForLR", 0, _, int_range(-80, 64), "extra MFMAs between a local read and its wait (speed); "
     "negative (DirectToVgpr): fewer"),
    ("StorePriorityOpt", False, _, BOOL, "lower priority for the store phase"),
    ("NumElementsPerBatchStore", 0, _, int_range(0, 255), "elements per store batch; 0 as many as fit"),
    ("StoreSyncOpt", 0, _, int_range(0, 255), "sync/sleep after store batches"),
    ("GroupLoadStore", False, _, BOOL, "issue global loads/stores back to back"),
    ("AtomicAddC", False, _, BOOL, "C==D and beta 1: atomic add instead of load/store"),
    ("StoreCInUnroll", False, _, BOOL, "persistent: store C inside the unroll loop"),
    ("StoreCInUnrollInterval", 1, _, int_range(1, 15), "MFMAs between StoreCInUnroll stores"),
    ("StoreCInUnrollExact", False, _, BOOL, "StoreCInUnroll for one exact K"),
    ("StoreCInUnrollPostLoop", False, _, BOOL, "StoreCInUnroll post loop"),
    ("DisableVgprOverlapping", False, _, BOOL, "MI: do not overlap AB and C-tile VGPRs"),
    ("DisableAtomicFail", 0, _, BOOL, "assume atomics never fail"),
    ("DisableKernelPieces", 0, _, int_range(-9, 9), "debug: disable parts of the kernel"),
    ("PerformanceSyncLocation", -1, _, int_range(-1, 256), "legacy performance experiment"),
    ("PerformanceWaitLocation", -1, _, int_range(-1, 256), "legacy performance experiment"),
    ("PerformanceWaitCount", -1, _, int_range(-1, 15), "legacy performance experiment"),
    ("NonTemporalA", 0, _, int_range(0, 7), "cache policy bits for A loads"),
    ("NonTemporalB", 0, _, int_range(0, 7), "cache policy bits for B loads"),
    ("NonTemporalC", 0, _, int_range(0, 7), "cache policy bits for C loads"),
    ("NonTemporalD", 0, _, int_range(0, 7), "cache policy bits for D stores"),
    ("ForceStoreSC1", "Auto", _, one_of("Auto", False, True), "force sc0/sc1 bits on stores"),
    ("Fp16AltImpl", False, _, BOOL, "gfx90a fp16 through the bf16 path"),
    ("Fp16AltImplRound", False, _, BOOL, "rounding of Fp16AltImpl"),
    ("ReplacementKernel", False, _, BOOL, "use a replacement kernel if one exists"),
    ("CustomKernelName", "", _, ANY_STR, "hand-written kernel to use instead of generating one"),
    ("NoReject", False, _, BOOL, "accept a kernel even if checks reject it"),
    ("MinVgprNumber", 0, _, int_range(0, 255), "VGPR lower bound"),
    ("MaxVgprNumber", 256, _, int_range(0, 256), "VGPR upper bound"),
    ("ISA", [0, 0, 0], _, ISA, "target ISA of assembly kernels (set from the architecture)"),
]

PARAMS: dict[str, Param] = {
    name: Param(name, td, td if ours is None and td is not None else ours, allowed, meaning)
    for name, td, ours, allowed, meaning in _ROWS
}

# Keys Tensile derives from the parameters and writes into logic files; recomputed when reading. Tensile 4.44's
# TensileCreateLibrary does the same ("force redo the deriving of parameters, make sure old version logic yamls
# can be validated", LibraryIO.parseLibraryLogicData), so a stored value that differs from the derivation is the
# writing version's rule, never a reason to refuse the file: ``Solution.stored_differences`` records it, and
# docs/logic-versions.md explains each key by Tensile version. Exceptions are in FILE_WINS below.
DERIVED_KEYS = frozenset("""
MacroTile0 MacroTile1 MacroTileA MacroTileB ThreadTile0 ThreadTile1 ThreadTileA ThreadTileB SubGroup0 SubGroup1
SubGroupA SubGroupB NumThreads LocalSplitU LoopUnroll LoopIters LSCA LSCB LSPA LSPB LVCA LVCB LVPA LVPB NumLoadsA
NumLoadsB NumLoadsPerpendicularA NumLoadsPerpendicularB GlobalLoadVectorWidthA GlobalLoadVectorWidthB
LdsNumElements LdsOffsetA LdsOffsetB LdsOffsetA_Blk LdsOffsetB_Blk LdsNumElementsAlignedA LdsNumElementsAlignedB
MIBlock MIWaveGroup MIWaveTile MIWaveTileA MIWaveTileB MIInputPerThread MIOutputVectorWidth MIRegPerOut
MatrixInstM MatrixInstN MatrixInstK MatrixInstB MatrixInstBM MatrixInstBN EnableMatrixInstruction
GlobalWriteVectorWidth NumElementsPerThread NumGlobalWriteVectorsPerThread PackedC0IdxChars PackedC0IndicesX
PackedC1IdxChars PackedC1IndicesX GuaranteeNoPartialA GuaranteeNoPartialB LocalWriteUseSgprA LocalWriteUseSgprB
_DepthULds _DepthULdsA _DepthULdsB _GlobalAccumulation _WorkspaceSizePerElemC _UseSgprForGRO _VectorStore
_staggerStrideShift fractionalPerpOverhangA fractionalPerpOverhangB SolutionIndex SolutionNameMin Valid
AssignedDerivedParameters AssignedProblemIndependentDerivedParameters
EnableF32XdlMathOp EnableMatrixInstructionStore VectorWidthA
""".split())

# Derived keys whose stored value Tensile keeps instead of recomputing it: 4.44's assignDerivedParameters
# computes _GlobalAccumulation/_WorkspaceSizePerElemC only "if not in state", so the file's value defines the
# kernel (GlobalSplitU's accumulation: None = atomics into D, SingleBuffer/MultipleBuffer = workspace).
# ``False`` (Tensile 4.6-4.14's spelling of "none") reads as None.
FILE_WINS = frozenset({"_GlobalAccumulation", "_WorkspaceSizePerElemC"})

# Keys of older (or other) Tensile versions seen in real logic files: accepted and kept verbatim, never used by
# the derivation. True marks the ones that were solution parameters then; False marks derived keys or
# annotations of those versions. None of them is named: Tensile 4.44's TensileCreateLibrary names only its own
# validParameters (solution/naming.py).
LEGACY_KEYS: dict[str, bool] = {
    "LdsBlockSizePerPad": True, "DirectToLds": True, "GlobalReadWarmup": True, "LdsInitCVgprs": True,
    "MFMA_BF16_1K": True, "MIUseAccVgpr": True, "MinGlobalWriteVectorWidth": True, "NoLdsWriteCode": True,
    "NoTailLoop": True, "SplitGlobalRead": True, "allowLRVWBforTLUandMI": False, "PackedC0Indices": False,
    "PackedC1Indices": False, "BenchmarkFork": False, "CodeObjectVersion": False, "LdsPad": True,
    "UseInitialStrides": False, "Kernel": False,
    # Parameters of 4.6-4.31 that Tensile 4.44 neither knows nor names; present in some files of an architecture
    # only, they would put a token into every name of a library, so they are kept unnamed:
    # allowLRVWforTLUandMI (LocalReadVectorWidth > MIInputPerThread for TLU operands with MFMA; speed only),
    # InstSplit (4.14-4.31: split one MFMA's issue; speed only)
    "allowLRVWforTLUandMI": False, "InstSplit": False,
    # Tensile 4.14-4.31 derived keys: MFMA work-group shape and elements per MFMA input register
    "MIWG0": False, "MIWG1": False, "_NumElemPerMfmaInput": False,
    # Tensile 4.20 (arcturus tuning): a linear performance model of the solution, an annotation
    "LinearModel": False,
}

# Old spellings of current parameters: read as the current parameter (that version's meaning), unless the
# file also gives the current name. Tensile's own misspelling: 4.6-4.2x wrote (and its writer read)
# ``SuppresssNoLoadLoop``; later versions renamed it SuppressNoLoadLoop (4.44 ignores the old spelling).
ALIASES: dict[str, str] = {
    "SuppresssNoLoadLoop": "SuppressNoLoadLoop",
}


def normalise(name: str, value: Any) -> Any:
    """Bring old spellings to the parameter's type: ``True`` for an int parameter becomes 1, 0/1 for a bool
    parameter become ``False``/``True``, tuples become lists. Unknown names are returned unchanged."""
    p = PARAMS.get(name)
    if p is None:
        return value
    ref = p.tensile_default
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(ref, bool) and _is_int(value) and value in (0, 1):
        return bool(value)
    if _is_int(ref) and isinstance(value, bool):
        return int(value)
    return value


def defaults(which: str = "ours") -> dict[str, Any]:
    """A fresh dict of every parameter's default (``which`` is "ours" or "tensile"); MacroTile is left out."""
    key = "default" if which == "ours" else "tensile_default"
    out = {}
    for name, p in PARAMS.items():
        v = getattr(p, key)
        if v is not None:
            out[name] = list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v
    return out
