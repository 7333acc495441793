"""Every solution of Tensile's lite logic files builds for its architecture and verifies on the
emulator on three sizes: one macro tile exactly, one with M, N, K not multiples of the tile (and a
batch of 2), and 1x1x1."""

import tempfile
from pathlib import Path

import pytest

from tensile_asm import toolchain
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.logic import read_logic_file
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.writer.build import build_kernel, supports

from conftest import SHARED, have_llvm

LITE = SHARED / "data" / "logic" / "lite_configs"
FILES = sorted(LITE.glob("*.yaml")) if LITE.is_dir() else []

pytestmark = [pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)"),
              pytest.mark.skipif(not FILES, reason=f"{LITE} not found (shared data beside the checkout)")]


def lite_sizes(sol):
    mt0, mt1, du = sol.derived.mt0, sol.derived.mt1, sol.derived.depth_u
    return [Size(mt0, mt1, du), Size(mt0 + 3, 2 * mt1 - 1, 2 * du + 3, 2), Size(1, 1, 1)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_lite_logic_file_builds_and_verifies(path):
    logic = read_logic_file(path)
    arch_name = logic.architecture if isinstance(logic.architecture, str) else logic.architecture["Architecture"]
    arch = load_arch(arch_name)
    failures = []
    assert logic.solutions, f"{path.name} has no solutions"
    for index, entry in enumerate(logic.solutions):
        sol = getattr(entry, "solution", entry)
        assert sol is not None, f"{path.name} solution {index} did not parse"
        reason = supports(sol, arch)
        if reason:
            failures.append(f"{index}: not built: {reason}")
            continue
        kernel = build_kernel(sol, arch, f"lite{index}")
        co = Path(tempfile.mkdtemp(prefix="lite-")) / "k.co"
        toolchain.assemble_and_link(kernel.text(), arch, co)
        contract = GemmKernelContract.from_solution(sol, kernel.name)
        for r in verify_sizes(co, contract, lite_sizes(sol), 1.5, 0.5, index, EmulatedRuntime()):
            if not r.passed:
                failures.append(f"{index} {r.size}: {r.detail}")
    assert not failures, f"{path.name}: " + "; ".join(failures)
