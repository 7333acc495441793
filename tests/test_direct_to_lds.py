"""DirectToLds (writer/direct_to_lds.py): A's and B's global reads written straight to LDS with
buffer_load_dword ... lds (M0 per wave and load), no local writes for them; run on the strict emulator (waits
for the LDS-DMA loads before barriers and DS reads, LDS races between waves) against the float64 reference at
edge sizes, with one LDS buffer (PrefetchGlobalRead 0, as vega10's real DirectToLdsA solutions) and two."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution, min_names
from tensile_asm.writer.build import build_kernel, link_kernels, supports

from conftest import have_llvm


def _solution(ta, tb, dtl_a, dtl_b, pgr, **extra):
    problem = {"OperationType": "GEMM", "DataType": "s", "TransposeA": ta, "TransposeB": tb, "Batched": True}
    return Solution.from_dict({"ProblemType": problem, "WorkGroup": [16, 16, 1], "ThreadTile": [4, 4], "DepthU": 8,
                               "VectorWidth": 2, "GlobalReadVectorWidth": 1, "PrefetchGlobalRead": pgr,
                               "PrefetchLocalRead": 1, "DirectToLdsA": dtl_a, "DirectToLdsB": dtl_b, **extra},
                              where="DirectToLds case")


# (arch, transpose A, transpose B, DirectToLdsA, DirectToLdsB, PrefetchGlobalRead, StaggerU): vega10's real
# form (NN, A only, one LDS buffer), both operands with two LDS buffers (TN would make A's K contiguous: NT)
CASES = [("gfx900", False, False, True, False, 0, 0), ("gfx906", False, True, True, True, 1, 32)]


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{'NT' if c[2] else 'NN'}-PGR{c[5]}")
def test_direct_to_lds_matches_reference(case):
    arch_name, ta, tb, dtl_a, dtl_b, pgr, stagger = case
    sol = _solution(ta, tb, dtl_a, dtl_b, pgr, StaggerU=stagger)
    arch = load_arch(arch_name)
    assert sol.valid and supports(sol, arch) is None, supports(sol, arch)
    name = min_names([sol])[0]
    kernel = build_kernel(sol, arch, name)
    text = kernel.text()
    dma = [line for line in text.splitlines() if "buffer_load_dword" in line and line.rstrip().endswith("lds")]
    assert len(dma) >= 2 * (pgr + 1), dma          # A's (and B's) loads of the loop, its prologue and tail
    if dtl_b:                                       # both operands straight to LDS: no local write at all
        assert "ds_write" not in text.split("global write")[0]
    runtime = EmulatedRuntime()
    with tempfile.TemporaryDirectory() as tmp:
        co = Path(tmp) / f"{name}.co"
        link_kernels([kernel], arch, co)
        contract = GemmKernelContract.from_solution(sol, name)
        # 1x1x1; partial tiles along M and N, several DepthU steps and a tail, batch 2; beta 0 with C NaN
        for sizes, beta in (([Size(1, 1, 1, 1), Size(67, 37, 43, 2)], 0.5), ([Size(65, 3, 9, 1)], 0.0)):
            for r in verify_sizes(co, contract, sizes, 1.25, beta, 5, runtime):
                assert r.passed, f"{name} {r.size} beta {r.beta}: {r.detail} (max rel err {r.max_rel_error})"


@pytest.mark.parametrize("ta,tb,dtl_a,dtl_b,pgr,extra,words", [
    (True, False, True, False, 1, {}, "DirectToLdsA=True with A's summation index contiguous"),
    (False, False, True, False, 2, {}, "not PrefetchGlobalRead 2"),
    (False, False, True, False, 1, {"GlobalReadVectorWidth": 2}, "GlobalReadVectorWidthA 2"),
])
def test_direct_to_lds_refusals_name_the_parameter(ta, tb, dtl_a, dtl_b, pgr, extra, words):
    sol = _solution(ta, tb, dtl_a, dtl_b, pgr, **extra)
    why = supports(sol, load_arch("gfx906")) if sol.valid else sol.error
    assert why is not None and words in why and "use DirectToLdsA 0" in why, why
