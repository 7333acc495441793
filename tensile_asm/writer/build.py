"""From solutions to code objects: which solutions this writer can build, and building them.

``supports`` answers with one readable reason per solution the writer cannot build yet (the
features it implements grow issue by issue); ``compile_kernel`` writes one kernel and assembles it and
the helper kernels it needs into relocatable objects (create-library caches these by content);
``link_parts`` links such parts into one code object with a single metadata note; ``build_code_object``
does both for a list of solutions.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from tensile_asm import toolchain
from tensile_asm.errors import UserError
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.instruction_set import InstructionSet
from tensile_asm.kernel_cache import CacheEntry, KernelPart
from tensile_asm.source import build as source_build
from tensile_asm.solution import writer_rules
from tensile_asm.writer import signature
from tensile_asm.writer.context import Geometry
from tensile_asm.writer.kernel import Kernel, collector_paused, write_kernel
from tensile_asm.writer.limits import geometry_reason
from tensile_asm.writer.mfma import mfma_reason

# (parameter, accepted values, why) for parameters whose other values change the kernel in ways this
# writer does not implement yet. Values are compared after bool -> int.
FEATURE_LIMITS = (
    ("VectorWidth", {1, 2, 4, 8}, "VectorWidth must be 1, 2, 4 or 8 in this writer"),
    ("GlobalLoadVectorWidthA", {1, 2, 4, 8}, "GlobalReadVectorWidth must be 1, 2, 4 or 8 in this writer"),
    ("GlobalLoadVectorWidthB", {1, 2, 4, 8}, "GlobalReadVectorWidth must be 1, 2, 4 or 8 in this writer"),
    ("PrefetchGlobalRead", {0, 1, 2}, "PrefetchGlobalRead must be 0, 1 or 2"),
    ("GlobalSplitUWorkGroupMappingRoundRobin", {0}, "GlobalSplitUWorkGroupMappingRoundRobin is not implemented"),
    ("DepthULdsDivisor", {1}, "DepthULdsDivisor > 1 is not implemented"),
    ("StreamK", {0}, "StreamK is not implemented"),
    ("1LDSBuffer", {0, 1}, "1LDSBuffer -1 (automatic) is not implemented"),
    ("PreloadKernelArguments", {0, 1}, "PreloadKernelArguments -1 (automatic: 1 where the architecture and "
                                       "the solution allow it) is not implemented; use 0 or 1"),
)


def _value(v):
    return int(v) if isinstance(v, bool) else v


def geometry(solution) -> Geometry:
    """The writer's view of a solution: its problem type and derived values (nothing re-read from params)."""
    pt, d = solution.problem_type, solution.derived
    if d.global_split_u > 1 and d.global_accumulation == "SingleBuffer":
        # Tensile's _GlobalAccumulation SingleBuffer: the slices add into a compute-type workspace
        return Geometry(dataclasses.replace(pt, dest_type=pt.compute_type), d, workspace_for=pt)
    return Geometry(pt, d)


# (A/B, C/D, compute) types the writer builds: S, D, H (fp16 accumulating in fp32, rounded once at
# the store: more accurate than Tensile's fp16 accumulation), the HPA forms of H and B, int8 into int32
# (4xi8II with VALU dot products, I8II with MFMA), complex C and Z (VALU only so far), and gfx942's fp8/bf8
# (F8, B8 and the hybrids F8B8, B8F8; MFMA only) into fp32 with fp32, fp16 or fp8/bf8 C/D.
SUPPORTED_TYPES = {("S", "S", "S"), ("D", "D", "D"), ("H", "H", "H"), ("H", "H", "S"), ("H", "S", "S"),
                   ("B", "B", "S"), ("B", "S", "S"), ("4xi8", "I", "I"), ("I8", "I", "I"), ("C", "C", "C"),
                   ("Z", "Z", "Z")} | {
                   (ab, cd, "S") for ab in ("F8", "B8", "F8B8", "B8F8") for cd in ("S", "H")} | {
                   ("F8", "F8", "S"), ("B8", "B8", "S"), ("F8B8", "B8", "S"), ("B8F8", "B8", "S")}


def _problem_reason(solution) -> str | None:
    pt = solution.problem_type
    types = (pt.data_type.char, pt.dest_type.char, pt.compute_type.char)
    if types not in SUPPORTED_TYPES:
        names = ", ".join("".join(t) for t in sorted(SUPPORTED_TYPES))
        return f"data types {''.join(types)} (A/B, C/D, compute) are not implemented; the writer builds {names}"
    if pt.stochastic_rounding:
        return (f"StochasticRounding=True ({pt.dest_type.char} D rounded stochastically by Tensile's in-kernel "
                f"pseudo-random generator) is not implemented; use StochasticRounding false (round to nearest even)")
    if pt.batched and not pt.strided_batched:
        d = solution.derived
        if d.persistent_kernel and d.persistent_kernel_along_batch:
            return (f"PersistentKernel={d.persistent_kernel} with PersistentKernelAlongBatch and general "
                    f"(pointer-array) batched GEMM is not implemented (the batch's pointers are loaded once, before "
                    f"the tile loop); use PersistentKernelAlongBatch false")
    reason = _initial_strides_reason(solution)
    if reason:
        return reason
    if not getattr(pt, "is_gemm_shaped", True):
        return (f"TensorContraction {pt.name} has {len(pt.indices_free)} free, {len(pt.indices_batch)} batch and "
                f"{len(pt.indices_summation)} summation indices; the writer builds GEMM-shaped ones (2, 0..1, 1)")
    return None


def _initial_strides_reason(solution) -> str | None:
    """UseInitialStridesAB/CD (Tensile's I/Ic problem types, rocBLAS's SBIc/SBIIc): the kernel takes each first
    stride as an argument and scales the first index by it in its global reads (A/B) and its C loads and D
    stores (element by element). A vector of GlobalReadVectorWidth > 1 runs along the first index, so it is
    contiguous only where that stride is 1: as in Tensile, the solution must assert it (AssertStride<X>Equal
    {0: 1}, a StrideXEqual library predicate)."""
    pt, d, params = solution.problem_type, solution.derived, solution.params
    ab, cd = getattr(pt, "use_initial_strides_ab", False), getattr(pt, "use_initial_strides_cd", False)
    if not (ab or cd):
        return None
    which = " and ".join(k for k, on in (("UseInitialStridesAB", ab), ("UseInitialStridesCD", cd)) if on)
    if d.global_split_u > 1:
        return (f"{which} with GlobalSplitU={d.global_split_u} is not implemented (the beta-only and post-GSU "
                f"kernels take C's and D's first stride as 1); use GlobalSplitU 1")
    if cd and params.get("StoreRemapVectorWidth", 0):
        return (f"UseInitialStridesCD with StoreRemapVectorWidth={params['StoreRemapVectorWidth']} is not "
                f"implemented (the remap stores whole vectors along the first index); use StoreRemapVectorWidth 0")
    if ab:
        for t in "AB":
            width = params.get(f"GlobalLoadVectorWidth{t}") or params.get("GlobalReadVectorWidth", 1)
            asserted = (params.get(f"AssertStride{t}Equal") or {}).get(0, -1)
            if width > 1 and asserted != 1:
                return (f"UseInitialStridesAB with GlobalLoadVectorWidth{t}={width} needs AssertStride{t}Equal "
                        f"{{0: 1}} (its vectors run along the first index); use GlobalReadVectorWidth 1 or "
                        f"assert the stride")
    return None


# MFMA derived keys our derivation computes by Tensile 4.44's rule (docs/logic-versions.md): a stored value
# that differs is the writing version's rule, recorded and not a reason. GlobalWriteVectorWidth follows
# VectorWidth, which 4.44 sets to 1 for MFMA when it does not divide MIWaveTile[0] or with
# StoreRemapVectorWidth (SolutionStructs.assignDerivedParameters), as derive.py now does.
# The load tile (GlobalLoadVectorWidth, NumLoads*, LSC/LSP, LVC/LVP, GuaranteeNoPartial, _UseSgprForGRO) follows
# 4.44's rule too (derive._load_widths): Tensile 4.44's own Solution class, run on 1,181 MFMA solutions of five
# rocblas-asm_full files (arcturus BBS/BSS_BH, aldebaran SB, aquavanjaram942 SB/BBS_BH), derives what we derive
# for every solution without DirectToVgpr (refused below); the stored values that differ are older versions'.
# ThreadTile0/1/A/B and SubGroup0/1/A/B: Tensile 4.14 stored the MFMA wave tile in its own orientation (e.g.
# SubGroup [64, 2] where 4.44 derives [2, 128]); the kernel is MIWaveTile/MIWaveGroup's either way, and 4.44's
# Solution class derives ours (docs/logic-versions.md).
MFMA_KEYS_AS_444 = frozenset({"GlobalWriteVectorWidth", "NumGlobalWriteVectorsPerThread"} | {
    f"{k}{i}" for k in ("ThreadTile", "SubGroup") for i in "01AB"} | {
    f"{k}{t}" for k in ("GlobalLoadVectorWidth", "NumLoads", "NumLoadsCoalesced", "NumLoadsPerpendicular", "LSC",
                        "LSP", "LVC", "LVP", "GuaranteeNoPartial") for t in "AB"} | {"_UseSgprForGRO"})


def _stored_reason(solution) -> str | None:
    """An MFMA solution whose file stores a derived value other than ours: the MFMA derivation does not yet
    reproduce every Tensile version's rule (docs/logic-versions.md), so such a kernel is not built from a
    derivation the file contradicts. (VALU differences are older versions' rules that Tensile 4.44 also
    replaces on reading; they are built as Tensile builds them.)"""
    diffs = {k: v for k, v in getattr(solution, "stored_differences", {}).items() if k not in MFMA_KEYS_AS_444}
    if writer_rules.TLDS_EDITED_AFTER_DERIVATION in getattr(solution, "older_rules", ()):
        diffs = {k: v for k, v in diffs.items() if k not in writer_rules.LDS_LAYOUT_KEYS}   # stale, not a reason
    if not solution.params.get("StaggerU"):   # 4.44 derives StaggerUStride 0 -> shift 0; unused without StaggerU
        diffs.pop("_staggerStrideShift", None)
    if not diffs or not solution.derived.is_mfma:
        return None
    key = sorted(diffs)[0]
    stored, ours = diffs[key]
    version = f" (written by Tensile {solution.version})" if getattr(solution, "version", "") else ""
    return (f"MFMA derived key {key} is {stored!r} in the file{version} but {ours!r} by this derivation; "
            f"MFMA kernels are built only where the two agree")


def supports(solution, arch: Arch) -> str | None:
    """None if this writer can build ``solution`` for ``arch``, else the reason it cannot: from the
    parameters, the derived geometry and the architecture's limits, without writing the kernel. One limit
    is known only once the kernel is written: registers (``build_kernel`` then raises a UserError naming
    the register file; create-library reports such a kernel as not built)."""
    if source_build.is_source(solution):      # KernelLanguage: Source, written by tensile_asm.source
        return source_build.supports(solution, arch)
    if not solution.valid:
        return f"invalid solution: {solution.rejection}"
    if getattr(solution, "underived", None):
        return f"not derived by this project yet: {solution.underived}"
    reason = _problem_reason(solution)
    if reason:
        return reason
    params = solution.params
    reason = _stored_reason(solution)
    if reason:
        return reason
    g = geometry(solution)
    if g.is_mfma:
        reason = mfma_reason(g, params, arch)
        if reason:
            return reason
    elif params.get("DirectToVgprA") or params.get("DirectToVgprB"):
        # Tensile rejects it too (isDirectToVgprDoable)
        return "DirectToVgpr without MatrixInstruction is not supported (Tensile rejects it); use DirectToVgpr false"
    for name, accepted, why in FEATURE_LIMITS:
        if name in params and _value(params[name]) not in accepted:
            return f"{name}={params[name]}: {why}"
    if solution.derived.preload_kernargs and not arch.extra.get("kernarg_preload", False):
        return (f"PreloadKernelArguments=1: {arch.name} cannot preload kernel arguments into SGPRs (gfx940 and "
                f"later can: isa/<gfx>.yaml kernarg_preload); use PreloadKernelArguments 0")
    if params.get("WorkGroupMappingType", "B") != "B" and abs(params.get("WorkGroupMapping", 1)) > 1:
        return (f"WorkGroupMappingType={params['WorkGroupMappingType']} with WorkGroupMapping="
                f"{params['WorkGroupMapping']}: Z-order mapping is not implemented; use WorkGroupMappingType B")
    if solution.derived.stagger_u > 1 and solution.derived.stagger_u_mapping in (2, 3) and not solution.problem_type.batched:
        return (f"StaggerUMapping={params['StaggerUMapping']} staggers by the batch coordinate, which "
                f"{solution.problem_type.name} has not (Tensile's kernel reads WorkGroup2); use 0, 1 or 4")
    d = solution.derived
    if not d.fused_mac and not InstructionSet(arch).encoding("v_mac_f32"):
        # Tensile raises too ("MAC instruction specified but not supported")
        return f"MACInstruction={params['MACInstruction']}: {arch.name} has no v_mac_f32 (unfused); use FMA"
    reason = geometry_reason(g)
    if reason:
        return reason
    if g.data_type == "4xi8" and g.is_mfma:
        return "Int8x4 (4xi8II) with MatrixInstruction is not implemented"
    if g.float8 and not g.is_mfma:
        return (f"{g.data_type} (fp8/bf8) without MatrixInstruction is not implemented; the fp8 types are built "
                f"with gfx942's fp8 MFMAs")
    if g.data_type == "I8" and not g.is_mfma:
        return "Int8 (I8II) without MatrixInstruction is not implemented (VALU int8 kernels are built as 4xi8II)"
    if g.integer and not g.is_mfma and not InstructionSet(arch).encoding("v_dot4_i32_i8"):
        return f"Int8x4 (4xi8II) needs v_dot4_i32_i8, which {arch.name} does not have"
    if g.integer and g.global_split_u > 1 and g.gsu_multiple_buffer:
        return "GlobalSplitU MultipleBuffer with int32 C/D (4xi8II, I8II) is not implemented; use SingleBuffer"
    atomics = g.global_split_u > 1 and not g.gsu_multiple_buffer
    if g.workspace_for is not None and g.workspace_for.dest_type.char not in ("B", "H"):
        return (f"GlobalSplitU={g.global_split_u} SingleBuffer with C/D {g.workspace_for.dest_type.char} and compute "
                f"type {g.compute_type} (a compute-type workspace) is implemented for B and H C/D only; use "
                f"GlobalSplitUAlgorithm MultipleBuffer")
    if atomics and (g.dest_type, g.compute_type) not in (("S", "S"), ("I", "I"), ("D", "D"), ("H", "H"), ("C", "C"),
                                                         ("Z", "Z")):
        return (f"GlobalSplitU={g.global_split_u} SingleBuffer with C/D {g.dest_type} and compute type "
                f"{g.compute_type} is not implemented (Tensile accumulates it in an fp32 workspace, "
                f"_GlobalAccumulation SingleBuffer); the writer adds into fp32, int32, fp64, HHH fp16 and complex D; use "
                f"GlobalSplitUAlgorithm MultipleBuffer")
    if atomics and g.dest_type == "H" and int(params.get("AssertFree0ElementMultiple", 1)) < 2:
        # Tensile rejects it too ("Assembly GSU half requires AF0EM>=2 (for atomics on edge tiles)")
        return (f"GlobalSplitU={g.global_split_u} SingleBuffer with fp16 C/D needs AssertFree0ElementMultiple "
                f">= 2 (its atomics work on dwords of two halves), not "
                f"{params.get('AssertFree0ElementMultiple', 1)}")
    if g.lds_bytes > arch.max_lds_bytes_per_workgroup:
        return f"needs {g.lds_bytes} bytes of LDS, more than {arch.name}'s {arch.max_lds_bytes_per_workgroup}"
    if g.lds_bytes > 65536:
        # the writer addresses LDS tiles and buffers with 16-bit instruction offsets
        return (f"needs {g.lds_bytes} bytes of LDS; more than 64 KiB (possible on {arch.name}) is not implemented "
                f"(LDS instruction offsets are 16-bit)")
    return None


def build_kernel(solution, arch: Arch, name: str) -> Kernel:
    """Write the kernel of a supported solution; UserError if it is not supported or its registers do not fit."""
    if source_build.is_source(solution):
        raise UserError(f"solution {name} is KernelLanguage: Source; it is compiled from HIP "
                        f"(tensile_asm.source), not written as assembly")
    reason = supports(solution, arch)
    if reason:
        raise UserError(f"solution {name} cannot be built for {arch.name}: {reason}")
    with collector_paused():                # (writer/kernel.py says why)
        return write_kernel(geometry(solution), arch, name)


def helper_writers(g: Geometry, contract, arch: Arch) -> list:
    """(name, write) of every GlobalSplitU helper kernel of the GEMM ``g`` (``contract`` its launch contract), in
    ``contract.helper_kernels()`` order: the beta-only kernel (SingleBuffer, _GA) and every conversion variant
    Tensile's generator builds (_GA, MultipleBuffer; gemm/helpers.py)."""
    from tensile_asm.writer.beta_only import write_beta_only
    from tensile_asm.writer.post_gsu import write_post_gsu

    own = Geometry(g.workspace_for, g.derived) if g.workspace_for is not None else g

    def writer(h):
        if h.conversion is not None:
            return lambda: write_post_gsu(arch, own, h.conversion)
        if h.workspace != (g.workspace_for is not None):
            raise AssertionError(f"{contract.name}: the contract's beta-only kernel {h.name} and the GEMM's "
                                 f"workspace disagree")
        return lambda: write_beta_only(arch, g.batched, own.dest_type, g.pointer_array, workspace=h.workspace)

    return [(h.name, writer(h)) for h in contract.helper_kernels()]


def with_helpers(kernels: list[Kernel], arch: Arch) -> list[Kernel]:
    """The kernels plus the helper kernels they need, once each (``helper_writers``)."""
    from tensile_asm.writer.contract import kernel_contract

    out, names = list(kernels), {k.name for k in kernels}
    for k in kernels:
        if k.geometry is None:                      # a helper kernel (no GEMM geometry) needs none
            continue
        for name, write in helper_writers(k.geometry, kernel_contract(k), arch):
            if name in names:
                continue
            helper = write()
            if helper.name != name:
                raise AssertionError(f"helper kernel {helper.name} written where the contract launches {name}")
            out.append(helper)
            names.add(name)
    return out


def version() -> str:
    """What decides the bytes this builder writes: the package source and isa tables, and the assembler
    (part of every create-library cache key)."""
    from tensile_asm.kernel_cache import source_hash
    return f"writer:{source_hash(kernels=True)}:{toolchain.identity()}:{source_build.version()}"


def _parts(kernels: list[Kernel], arch: Arch, timing: dict | None = None, cache: bool = False) -> list[KernelPart]:
    """Each kernel (and the helpers it needs) assembled without metadata, with its metadata beside it
    (``cache``: through the toolchain's object cache, keyed by the assembly text)."""
    parts = []
    for k in with_helpers(kernels, arch):
        t0 = time.perf_counter()
        text = k.body_text()
        t1 = time.perf_counter()
        obj = toolchain.assemble(text, arch, f"{k.name}.s", cache=cache)
        if timing is not None:
            timing["generate"] = timing.get("generate", 0.0) + t1 - t0
            timing["assemble"] = timing.get("assemble", 0.0) + time.perf_counter() - t1
        parts.append(KernelPart(k.name, obj, k.metadata()))
    return parts


def written(solution, arch: Arch, name: str) -> list[tuple[str, str, dict]]:
    """(name, ``body_text``, ``metadata``) of the kernel of a supported solution and of each helper kernel it
    needs; UserError if it is not supported or its registers do not fit. The cyclic garbage collector stays
    paused until the kernels' objects are gone: resumed while a written kernel is alive, its next young
    collection walks every instruction and operand of it (bench/codegen_cpu_time.md, fourth round)."""
    with collector_paused():
        return [(k.name, k.body_text(), k.metadata()) for k in with_helpers([build_kernel(solution, arch, name)], arch)]


def compile_kernel(solution, arch: Arch, name: str, timing: dict | None = None) -> CacheEntry:
    """Write the kernel of a supported solution and assemble it with its helper kernels. A kernel that
    cannot be written (its registers do not fit) gives an entry with that reason and no parts; an
    assembler failure raises (ToolchainError). KernelLanguage: Source solutions are compiled from HIP
    (``tensile_asm.source.build``). ``timing``: "generate" (writing and rendering the kernels), "assemble"."""
    if source_build.is_source(solution):
        return source_build.compile_kernel(solution, arch, name, timing)
    t0 = time.perf_counter()
    try:
        texts = written(solution, arch, name)
    except UserError as e:
        return CacheEntry([], str(e))
    finally:
        if timing is not None:
            timing["generate"] = timing.get("generate", 0.0) + time.perf_counter() - t0
    parts = []
    for kernel_name, text, metadata in texts:
        t1 = time.perf_counter()
        parts.append(KernelPart(kernel_name, toolchain.assemble(text, arch, f"{kernel_name}.s", cache=False),
                                 metadata))
        if timing is not None:
            timing["assemble"] = timing.get("assemble", 0.0) + time.perf_counter() - t1
    return CacheEntry(parts, None)


def link_parts(parts: list[KernelPart], arch: Arch, out_path: Path) -> None:
    """Link kernel parts (a helper kernel named twice is linked once) with one metadata-only object into
    one code object at ``out_path``."""
    unique = list({p.name: p for p in parts}.values())
    meta = signature.header(arch) + signature.metadata_block(arch, [p.metadata for p in unique], compact=True)
    objects = [p.object for p in unique] + [toolchain.assemble(meta, arch, "metadata.s")]
    toolchain.link(objects, out_path, Path(out_path).name)


def link_kernels(kernels: list[Kernel], arch: Arch, out_path: Path) -> None:
    """Assemble each kernel (and the helpers they need) without metadata, plus one metadata-only
    object, and link them into one code object."""
    link_parts(_parts(kernels, arch, cache=True), arch, out_path)


def build_code_object(kernels: list[tuple[str, object]], arch: Arch, out_path: Path) -> dict[str, str]:
    """Write each (name, solution) once and link the kernels written into one code object at ``out_path``
    (nothing is written there when none is). Returns {name: reason} for the kernels that could not be
    written (their registers do not fit), which the code object leaves out."""
    parts, failed = [], {}
    for name, sol in kernels:
        entry = compile_kernel(sol, arch, name)
        if entry.error is not None:
            failed[name] = entry.error
        parts += entry.parts
    if parts:
        link_parts(parts, arch, Path(out_path))
    return failed
