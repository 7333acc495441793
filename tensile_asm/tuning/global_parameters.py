"""THE table of a tuning config's GlobalParameters: Tensile 4.44's names (Common.py ``globalParameters``), the
defaults of those this project honours (Tensile's, except ForceRedo*: see below), and the rest, accepted and without effect here (they configure
Tensile's C++ client build, its printing, or features this project does not have)."""

from __future__ import annotations

from typing import Any, Mapping

from tensile_asm.errors import UserError

# name -> (Tensile 4.44's default, what it does here)
HONOURED: dict[str, tuple[Any, str]] = {
    "MinimumRequiredVersion": ("0.0.0", "recorded in the logic files"),
    "PerformanceMetric": ("DeviceEfficiency", "the logic files' PerfMetric (GFlops column unit)"),
    "NumBenchmarks": (1, "data points per (solution, size)"),
    "NumWarmups": (0, "untimed GEMMs before timing (hip)"),
    "SyncsPerBenchmark": (1, "synchronisations per data point (hip)"),
    "EnqueuesPerSync": (1, "GEMMs per synchronisation (hip)"),
    "SleepPercent": (300, "host sleep after each synchronisation, % of its time (hip)"),
    "NumElementsToValidate": (128, "elements of D checked against the reference (hip: -1 all, 0 none); the "
                                   "emulator backend always checks every element at its small sizes"),
    "DataInitTypeAB": (3, "A and B data (3 random, 0 zeros, 1 ones, 2 twos) unless DataInitTypeA/B say"),
    "DataInitTypeA": (-1, "A data; -1: DataInitTypeAB"),
    "DataInitTypeB": (-1, "B data; -1: DataInitTypeAB"),
    "DataInitTypeC": (3, "C data"),
    "DataInitTypeD": (0, "D data before the GEMM"),
    "DataInitTypeAlpha": (2, "alpha (2: 2.0, 1: 1.0, 0: 0.0)"),
    "DataInitTypeBeta": (2, "beta (2: 2.0, 1: 1.0, 0: 0.0)"),
    # Tensile's default for the three ForceRedo* is True (redo everything); here False, so that rerunning a
    # killed or sharded tuning run resumes. A config that sets them is honoured.
    "ForceRedoBenchmarkProblems": (False, "False: (solution, size) results already on disk are kept"),
    "ForceRedoLibraryLogic": (False, "False: existing 3_LibraryLogic files are kept"),
    "ForceRedoLibraryClient": (False, "False: an existing 4_LibraryClient library is kept"),
    "ShowProgressBar": (True, "progress bar (on a terminal only)"),
    "PrintSolutionRejectionReason": (False, "print each rejected fork with its reason (they are always listed "
                                            "in 00_Final/rejected.yaml)"),
    "ExpandRanges": (True, "ranges are written into the logic file as exact sizes (False is not supported)"),
    "LibraryFormat": ("msgpack", "4_LibraryClient library format (yaml or msgpack)"),
    "MergeFiles": (True, "4_LibraryClient: one code object per architecture"),
    "SortProblems": (False, "benchmark sizes sorted, else in the config's order"),
    "CSVExportWinner": (False, "not written: the CSV always has every solution's column"),
    "PrintLevel": (1, "0: quiet"),
    "HardwareMonitor": (True, "hip backend: GPU clocks and temperature (AMD SMI) logged beside each timing"),
}

# Accepted, without effect here (Tensile's client build, device selection, debugging and printing).
TENSILE_ONLY = frozenset("""
Architecture AssemblerPath BenchmarkDataPath BenchmarkProblemsPath BoundsCheck BufferOffsetA BufferOffsetB
BufferOffsetC BufferOffsetD CCompiler CEqualD CMakeBuildType CMakeCFlags CMakeCXXFlags CSVMergeSameProblemID
ClientArgs ClientBuildPath ClientExecutionLockPath ClientLogLevel CodeFromFiles CodeObjectVersion
ConvolutionVsContraction CpuThreads CurrentISA CustomKernelDirectory CxxCompiler DebugKernel DebugSkipAtomic
DebugSkipNonAtomic Device DeviceLDS DictLibraryLogic DumpTensors EmbedLibrary EnableAsserts EnableDebugA
EnableDebugB EnableDebugC ExitOnFails ExpectedValueC ExperimentalLogicDir FlushCount FlushMemorySize
ForceCExpectedValue ForceGenerateKernel GenerateManifestAndExit GenerateSourcesAndExit GranularityThreshold
HipClangVersion IgnoreAsmCapCache IndexChars KeepBuildTmp KernelTime LazyLibraryLoading
LibraryClientPath LibraryLogicPath LibraryPrintDebug LibraryUpdateComment LibraryUpdateFile MaxDepthU
MaxFileName MaxLDS MaxWorkspaceSize NumMergedFiles PerfModelL2ReadBwMul PerfModelL2ReadHits
PerfModelL2WriteHits PerfModelReadEfficiency PinClocks Platform PreciseKernelTime PrintConvolutionUsage
PrintIndexAssignments PrintTensorA PrintTensorB PrintTensorC PrintTensorD PrintTensorRef PrintWinnersOnly
PristineOnGPU ROCmAgentEnumeratorPath ROCmSMIPath RuntimeLanguage ScriptPath SeparateArchitectures ShortNames
SolutionSelectionAlg SourcePath SupportedISA UnrollLoopEfficiencyEnable ValidationMaxToPrint
ValidationPrintValids VerifyManifest WavefrontWidth WorkingPath
""".split())

KNOWN = frozenset(HONOURED) | TENSILE_ONLY


def with_defaults(given: Mapping[str, Any] | None, where: str = "GlobalParameters") -> dict[str, Any]:
    """Tensile's defaults overridden by ``given``; an unknown name is one error with the nearest known one."""
    from tensile_asm.problem import nearest

    given = dict(given or {})
    for key in given:
        if key not in KNOWN:
            raise UserError(f"{where}: unknown global parameter {key!r}{nearest(str(key), KNOWN)}")
    out = {k: v for k, (v, _) in HONOURED.items()}
    out.update(given)
    if out["LibraryFormat"] not in ("yaml", "msgpack"):
        raise UserError(f"{where}: LibraryFormat {out['LibraryFormat']!r} is not known; use yaml or msgpack")
    if not out["ExpandRanges"]:
        raise UserError(f"{where}: ExpandRanges False (range rows in the logic file) is not supported; remove it")
    return out
