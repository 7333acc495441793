"""Verify a GEMM kernel on a runtime against the float64 reference, size by size."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tensile_asm.benchmark.reference import compare, make_instance
from tensile_asm.errors import EmulationError
from tensile_asm.writer.context import Geometry


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


def verify_sizes(co_path: Path, kernel_name: str, geometry: Geometry, sizes: list[Size], alpha: float,
                 beta: float, seed: int, runtime, pad: int = 0) -> list[CaseResult]:
    if beta != 0.0 and not geometry.use_beta:
        raise ValueError("a kernel without beta (UseBeta false) computes D = alpha*A*B; verify it with beta 0")
    results = []
    for i, size in enumerate(sizes):
        batch = size.batch if geometry.batched else 1
        inst = make_instance(size.m, size.n, size.k, batch, geometry.transpose_a, geometry.transpose_b,
                             pad=pad, beta_zero_c_nan=(beta == 0.0), seed=seed + i,
                             data_type=geometry.data_type, dest_type=geometry.dest_type)
        try:
            launch = runtime.run_gemm(co_path, kernel_name, geometry, inst, alpha, beta)
        except EmulationError as e:
            results.append(CaseResult(size, alpha, beta, None, None, False, f"emulator: {e}"))
            continue
        # alpha and beta reach the kernel in the compute type (fp16 ones are rounded on the way)
        a_eff, b_eff = (float(np.float16(alpha)), float(np.float16(beta))) if geometry.compute_type == "H" \
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
