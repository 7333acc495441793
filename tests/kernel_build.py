"""The build -> link step the kernel tests share: a solution the writer accepts, written, assembled and linked
into one code object, with the contract its launches follow (then ``benchmark.verify.verify_sizes``)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tensile_asm.gemm import GemmKernelContract
from tensile_asm.solution import Solution, min_names
from tensile_asm.writer.build import build_kernel, link_kernels, supports


def cut_solution(path) -> Solution:
    """The one solution of a logic file cut from rocblas-asm_full (tools/cut_logic.py), with Tensile's defaults."""
    data = yaml.load(Path(path).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return Solution.from_dict(dict(data[5][0], ProblemType=data[4]), where="logic", defaults_from="tensile")


def build_linked(sol, arch, directory, name: str | None = None, file: str | None = None):
    """Write ``sol`` for ``arch`` (asserting it is valid and ``supports()`` accepts it) as kernel ``name`` (default
    its min name), link it into ``directory/<file or name>.co``; returns (kernel, code object, contract)."""
    assert sol.valid, sol.rejection
    reason = supports(sol, arch)
    assert reason is None, reason
    name = name or min_names([sol])[0]
    kernel = build_kernel(sol, arch, name)
    co = Path(directory) / f"{file or name}.co"
    link_kernels([kernel], arch, co)
    return kernel, co, GemmKernelContract.from_solution(sol, name)
