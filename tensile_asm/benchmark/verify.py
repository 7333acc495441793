"""Verify a GEMM kernel on a runtime against the float64 reference, size by size."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tensile_asm.benchmark.footprint import check_fits
from tensile_asm.benchmark.reference import COMPLEX_TYPES, XF32_ROUNDOFF, compare, empty_instance, make_instance
from tensile_asm.errors import EmulationError
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.problem import GemmSize
from tensile_asm.runtime.base import float8_ocp


Size = GemmSize   # the name verification has always used


def complex_scalar(x):
    """A complex kernel's alpha or beta from a real one: x * (1 + 0.5i) (a complex one as it is)."""
    return x if isinstance(x, complex) else complex(x, 0.5 * x)


@dataclass
class CaseResult:
    size: Size
    alpha: float
    beta: float
    max_rel_error: float | None
    tolerance: float | None
    passed: bool
    detail: str = ""
    estimated_cycles: int | None = None     # the emulator's cycle model, one workgroup (modelled)


def admitted_size(params: dict, size: Size) -> Size:
    """``size`` rounded up to the multiples a solution asserts (AssertFree0/Free1/SummationElementMultiple):
    Tensile's Free0/Free1SizeMultiple and BoundSizeMultiple predicates keep other sizes away from the kernel,
    which may read or write wrongly there (rocBLAS's I8II GLVW 4/8 solutions at M 1, gfx942's Alik_Bljk_SB_GB
    ASEM 2 solutions at odd K). Verifying a library solution at other sizes reports false failures. The rounding
    is ``benchmark.sample.round_up``, the one the size rule applies to a solution's predicates."""
    from tensile_asm.benchmark.sample import Constraints, round_up

    c = Constraints()
    for key, name in (("m", "Free0"), ("n", "Free1"), ("k", "Summation")):
        c.multiple[key] = max(1, int(params.get(f"Assert{name}ElementMultiple", 1) or 1))
    return round_up(size, c)


def verify_sizes(co_path: Path | dict[str, Path], contract: GemmKernelContract, sizes: list[Size], alpha: float,
                 beta: float, seed: int, runtime, pad: int = 0, first_stride: dict | None = None,
                 ld: dict | None = None) -> list[CaseResult]:
    """Run ``contract``'s launches from the code object at ``co_path`` (or {kernel: code object}) for each
    size, on random data with D poisoned (C too when beta is 0), and compare D with the float64 reference.
    Sizes too large for host memory are refused, all of them before anything is allocated. A complex kernel
    given a real alpha or beta x runs with x * (1 + 0.5i) (``complex_scalar``), so the imaginary parts are
    exercised; 0 stays 0. ``first_stride``/``ld``: per tensor, a first-index stride and leading dimension
    other than the packed ones (``reference.empty_instance``), for kernels that take them (UseInitialStrides)."""
    if beta != 0.0 and not contract.use_beta:
        raise ValueError("a kernel without beta (UseBeta false) computes D = alpha*A*B; verify it with beta 0")
    c = contract
    batches = [size.batch if c.batched else 1 for size in sizes]
    for size, batch in zip(sizes, batches):
        shape = empty_instance(size.m, size.n, size.k, batch, c.transpose_a, c.transpose_b, pad,
                               c.data_type, c.dest_type, first_stride, ld)
        check_fits(c, str(size), shape, strict=getattr(runtime, "strict", True))
    results = []
    ocp = float8_ocp(co_path, c)
    if c.compute_type in COMPLEX_TYPES:
        alpha, beta = complex_scalar(alpha), complex_scalar(beta)
    for i, (size, batch) in enumerate(zip(sizes, batches)):
        inst = make_instance(size.m, size.n, size.k, batch, c.transpose_a, c.transpose_b,
                             pad=pad, beta_zero_c_nan=(beta == 0.0), seed=seed + i,
                             data_type=c.data_type, dest_type=c.dest_type,
                             conjugate=(c.conjugate_a, c.conjugate_b), first_stride=first_stride, ld=ld,
                             float8_ocp=ocp)
        try:
            launch = runtime.run_gemm(co_path, contract, inst, alpha, beta)
        except EmulationError as e:
            results.append(CaseResult(size, alpha, beta, None, None, False, f"emulator: {e}"))
            continue
        # alpha and beta reach the kernel in the compute type (fp16 ones are rounded on the way)
        a_eff, b_eff = (float(np.float16(alpha)), float(np.float16(beta))) if c.compute_type == "H" \
            else (alpha, beta)
        cmp = compare(inst, launch.d, a_eff, b_eff, accumulate_type=c.compute_type if c.compute_type == "H" else None,
                      input_roundoff=XF32_ROUNDOFF if c.xf32 else 0.0)
        cmp.outside_writes += getattr(launch, "stray_writes", 0)
        detail = ""
        if cmp.outside_writes:
            detail = f"{cmp.outside_writes} elements written outside D's M x N region"
        elif cmp.bad_elements:
            detail = f"{cmp.bad_elements} elements above tolerance"
        results.append(CaseResult(size, alpha, beta, cmp.max_rel_error, cmp.tolerance, cmp.passed, detail,
                                  getattr(launch.stats, "estimated_cycles", None)))
    return results


# Tensile's kernels add the K step of their global reads as a scalar offset (UseSgprForGRO), which the
# buffer range check leaves out, so near the end of A/B they read past it (seen: up to 1.7 KB for a
# 128x64 tile, 17x13x9). Hardware returns what lies there; the guard holds a large finite value
# (EmulatedRuntime.guard_value), so one that reached D other than times zero would fail the comparison.
# (Some of Tensile's MFMA tail loops multiply such values by B's zeroed out-of-range elements: a NaN
# there would reach D; see bench/tensile_kernels_verified.md.)
LIBRARY_GUARD_BYTES = 16384


@dataclass
class SolutionResult:
    name: str
    architecture: str | None
    code_object: str | None             # the file (in the library folder) the kernel came from
    results: list[CaseResult]
    skipped: list[Size]                 # sizes whose predicates the solution does not accept
    not_run: str | None = None          # why the solution was not launched at all

    @property
    def passed(self) -> bool:
        return self.not_run is None and all(r.passed for r in self.results)


def initial_strides_for(contract: GemmKernelContract, first_stride: dict | None, ld: dict | None):
    """The first strides and leading dimensions of ``first_stride``/``ld`` that apply to ``contract``: those of
    the tensors whose first stride it takes (UseInitialStridesAB: A, B; CD: C, D); None for the others."""
    keep = ("AB" if contract.initial_strides_ab else "") + ("CD" if contract.initial_strides_cd else "")
    first = {t: v for t, v in (first_stride or {}).items() if t in keep}
    lds = {t: v for t, v in (ld or {}).items() if t in keep}
    return first or None, lds or None


def library_problem(contract: GemmKernelContract, entry: dict, size: Size, alpha: float, beta: float,
                    first_stride: dict | None = None, ld: dict | None = None):
    """The Problem (the strides ``make_instance`` lays the data out with) a library solution is asked."""
    from tensile_asm.problem import HYBRID_TYPES, Problem, ProblemType, data_type

    pt = entry["problemType"]
    a, b = data_type(pt["aType"]), data_type(pt.get("bType", pt["aType"]))
    # a hybrid 8-bit input type is written as its halves (aType Float8, bType BFloat8: F8B8)
    ab = a if a == b else data_type(next(h for h, halves in HYBRID_TYPES.items() if halves == (a.char, b.char)))
    ptype = ProblemType(ab, data_type(pt["dType"]), data_type(contract.compute_type),
                        transpose_a=contract.transpose_a, transpose_b=contract.transpose_b,
                        batched=contract.batched, strided_batched=not contract.pointer_array,
                        use_beta=bool(pt["useBeta"]),
                        high_precision_accumulate=bool(pt.get("highPrecisionAccumulate", False)),
                        complex_conjugate_a=contract.conjugate_a, complex_conjugate_b=contract.conjugate_b,
                        f32_xdl_math_op=data_type("X") if contract.xf32 else None)
    batch = size.batch if contract.batched else 1
    if not first_stride and not ld:
        return Problem.make(ptype, size.m, size.n, size.k, batch, alpha=alpha, beta=beta)
    shape = empty_instance(size.m, size.n, size.k, batch, contract.transpose_a, contract.transpose_b, 0,
                           contract.data_type, contract.dest_type, first_stride, ld)
    ptype = replace(ptype, use_initial_strides_ab=contract.initial_strides_ab,
                    use_initial_strides_cd=contract.initial_strides_cd)
    return Problem.make(ptype, size.m, size.n, size.k, batch, alpha=alpha, beta=beta,
                        first_strides=shape.first_stride, **{f"ld{t.lower()}": shape.ld[t] for t in "ABCD"},
                        **{f"stride_{t.lower()}": shape.batch_stride[t] for t in "ABCD"})


def verify_library(folder, sizes: list[Size], alpha: float, beta: float | None, seed: int, strict: bool = True,
                   names: set[str] | None = None, progress=None, guard_bytes: int = LIBRARY_GUARD_BYTES,
                   check_predicates: bool = True, first_stride: dict | None = None,
                   ld: dict | None = None, kernarg_preload: bool = True) -> list[SolutionResult]:
    """Every solution of a library folder (``tensile_asm.library.codeobjects.LibraryFolder``; ``names``:
    only these), on each size its predicates accept, launched from its code object on the emulator.
    ``beta`` None: 0.5 for solutions with beta, else 0. ``check_predicates`` False: every size, predicates
    aside. ``first_stride``/``ld``: per tensor, strides other than the packed ones, applied to the tensors
    whose first stride a solution takes (``initial_strides_for``). ``kernarg_preload`` False: the emulated
    dispatch does not preload kernel arguments (firmware without it; ``Emulator.launch``). A and B are followed by ``guard_bytes`` of NaN
    (see ``EmulatedRuntime``): Tensile's kernels read past their ends."""
    from tensile_asm.errors import UserError
    from tensile_asm.runtime.emulated import EmulatedRuntime

    out = []
    for lib, entry, gfx in folder.solutions():
        name = entry.get("name", "?")
        if names is not None and name not in names:
            continue
        try:
            contract = GemmKernelContract.from_library_entry(entry)
        except UserError as e:
            out.append(SolutionResult(name, gfx, None, [], [], str(e)))
            continue
        b = beta if beta is not None else (0.5 if contract.use_beta else 0.0)
        if b != 0.0 and not contract.use_beta:
            out.append(SolutionResult(name, gfx, None, [], [], f"beta {b:g} given, but the solution has no beta"))
            continue
        if gfx is None:
            out.append(SolutionResult(name, gfx, None, [], [], "the library does not say which architecture it is for"))
            continue
        accepted, skipped = [], []
        first, lds = initial_strides_for(contract, first_stride, ld)
        for size in sizes:
            problem = library_problem(contract, entry, size, alpha, b, first, lds)
            (accepted if not check_predicates or lib.accepts(entry, problem, gfx) else skipped).append(size)
        co = folder.code_object(name, gfx) if accepted else None
        if progress is not None:
            progress(name, gfx, accepted)
        runtime = EmulatedRuntime(strict=strict, guard_bytes=guard_bytes, kernarg_preload=kernarg_preload)
        helpers = contract.helper_names()
        paths = {name: co, **{h: folder.code_object(h, gfx) for h in helpers}} if accepted and helpers else co
        results = verify_sizes(paths, contract, accepted, alpha, b, seed, runtime, first_stride=first,
                               ld=lds) if accepted else []
        out.append(SolutionResult(name, gfx, folder.source_of(co) if co else None, results, skipped))
    return out
