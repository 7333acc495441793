"""The build -> link step the kernel tests share: a solution the writer accepts, written, assembled and linked
into one code object, with the contract its launches follow (then ``benchmark.verify.verify_sizes``), and
``verify_cut_solution``: build, link and verify at given sizes, the pattern of the tests of real cut solutions."""

from __future__ import annotations

import tempfile
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


def verify_cut_solution(sol, arch, cases, *, alpha: float = 1.5, seed: int = 7, runtime=None, name: str | None = None,
                        directory=None):
    """Build ``sol`` for ``arch`` (an ``Arch`` or its name) with ``build_linked`` (into ``directory``, default a fresh
    temporary folder; kernel ``name``), and verify it on the emulator (``runtime``, default a strict
    ``EmulatedRuntime()``) against the float64 reference at each case of ``cases``: (size, beta) or
    (size, beta, alpha), each on random data of ``seed``. Asserts every case passed, naming size, beta and detail
    of those that did not; returns (kernel, code object, contract)."""
    from tensile_asm.benchmark.verify import verify_sizes
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.runtime.emulated import EmulatedRuntime

    arch = load_arch(arch) if isinstance(arch, str) else arch
    directory = directory if directory is not None else tempfile.mkdtemp(prefix="cut-solution-")
    kernel, co, contract = build_linked(sol, arch, directory, name)
    runtime = runtime if runtime is not None else EmulatedRuntime()
    failed = []
    for case in cases:
        size, beta, a = (*case, alpha) if len(case) == 2 else case
        failed += [(str(r.size), beta, r.detail) for r in verify_sizes(co, contract, [size], a, beta, seed, runtime)
                   if not r.passed]
    assert not failed, failed
    return kernel, co, contract
