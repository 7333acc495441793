"""Verify a GEMM kernel on a runtime against the float64 reference, size by size."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tensile_asm.benchmark.footprint import check_fits
from tensile_asm.benchmark.reference import compare, empty_instance, make_instance
from tensile_asm.errors import EmulationError
from tensile_asm.gemm import GemmKernelContract


@dataclass(frozen=True)
class Size:
    m: int
    n: int
    k: int
    batch: int = 1

    def __str__(self) -> str:
        return f"{self.m}x{self.n}x{self.k}" + (f"x{self.batch}" if self.batch != 1 else "")


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


def verify_sizes(co_path: Path, contract: GemmKernelContract, sizes: list[Size], alpha: float, beta: float,
                 seed: int, runtime, pad: int = 0) -> list[CaseResult]:
    """Run ``contract``'s launches from the code object at ``co_path`` for each size, on random data with
    D poisoned (C too when beta is 0), and compare D with the float64 reference. Sizes too large for
    host memory are refused, all of them before anything is allocated."""
    if beta != 0.0 and not contract.use_beta:
        raise ValueError("a kernel without beta (UseBeta false) computes D = alpha*A*B; verify it with beta 0")
    c = contract
    batches = [size.batch if c.batched else 1 for size in sizes]
    for size, batch in zip(sizes, batches):
        shape = empty_instance(size.m, size.n, size.k, batch, c.transpose_a, c.transpose_b, pad,
                               c.data_type, c.dest_type)
        check_fits(c, str(size), shape, strict=getattr(runtime, "strict", True))
    results = []
    for i, (size, batch) in enumerate(zip(sizes, batches)):
        inst = make_instance(size.m, size.n, size.k, batch, c.transpose_a, c.transpose_b,
                             pad=pad, beta_zero_c_nan=(beta == 0.0), seed=seed + i,
                             data_type=c.data_type, dest_type=c.dest_type)
        try:
            launch = runtime.run_gemm(co_path, contract, inst, alpha, beta)
        except EmulationError as e:
            results.append(CaseResult(size, alpha, beta, None, None, False, f"emulator: {e}"))
            continue
        # alpha and beta reach the kernel in the compute type (fp16 ones are rounded on the way)
        a_eff, b_eff = (float(np.float16(alpha)), float(np.float16(beta))) if c.compute_type == "H" \
            else (alpha, beta)
        cmp = compare(inst, launch.d, a_eff, b_eff)
        detail = ""
        if cmp.outside_writes:
            detail = f"{cmp.outside_writes} elements written outside D's M x N region"
        elif cmp.bad_elements:
            detail = f"{cmp.bad_elements} elements above tolerance"
        results.append(CaseResult(size, alpha, beta, cmp.max_rel_error, cmp.tolerance, cmp.passed, detail,
                                  getattr(launch.stats, "estimated_cycles", None)))
    return results
