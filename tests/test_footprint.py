"""Sizes too large for host memory are refused in one sentence before anything is allocated, through the
Python API and the CLI; and the estimate is not below what verifying a size really takes."""

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from tensile_asm.benchmark.footprint import available_bytes, check_fits, footprint
from tensile_asm.benchmark.reference import empty_instance
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.errors import UserError
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution

from conftest import have_llvm

SOLUTION = {"ProblemType": {"OperationType": "GEMM", "DataType": "s", "TransposeA": False, "TransposeB": True,
                            "Batched": True, "UseBeta": True},
            "WorkGroup": [8, 8, 1], "ThreadTile": [4, 2], "DepthU": 16, "VectorWidth": 1, "GlobalReadVectorWidth": 1,
            "PrefetchGlobalRead": 0, "PrefetchLocalRead": 0, "WorkGroupMapping": 1, "StaggerU": 0}


def contract(**extra):
    return GemmKernelContract.from_solution(Solution.from_dict({**SOLUTION, **extra}, where="test"), "k")


def test_a_huge_size_is_one_sentence_before_any_allocation(tmp_path):
    tracemalloc.start()
    try:
        with pytest.raises(UserError) as e:
            verify_sizes(tmp_path / "never-read.co", contract(), [Size(7, 7, 7), Size(100000, 100000, 100000)],
                         1.5, 0.5, 0, EmulatedRuntime())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"{peak} bytes were allocated before the refusal"
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("size 100000x100000x100000 needs about ")
    for part in ("A 37.3 GiB", "B 37.3 GiB", "C 37.3 GiB", "D 37.3 GiB", "float64 reference", "emulator's copies",
                 "is available (MemAvailable in /proc/meminfo)"):
        assert part in msg, (part, msg)


def test_workspace_and_available_memory_are_counted(tmp_path):
    multiple = contract(GlobalSplitU=4, GlobalSplitUAlgorithm="MultipleBuffer")
    inst = empty_instance(1000, 500, 64, 2, False, True)
    parts = footprint(multiple, inst)
    assert parts["workspace"] == 4 * 1000 * 500 * 2 * 4 and parts["D"] == 1000 * 500 * 2 * 4
    assert parts["the emulator's copies"] > footprint(multiple, inst, strict=False)["the emulator's copies"]
    total = sum(parts.values())
    check_fits(multiple, "1000x500x64x2", inst, available=total)          # fits exactly
    with pytest.raises(UserError, match=r"workspace 15\.3 MiB.* but 1\.0 KiB is available"):
        check_fits(multiple, "1000x500x64x2", inst, available=1024)
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       32000000 kB\nMemAvailable:    1234 kB\n")
    assert available_bytes(meminfo) == 1234 * 1024
    assert available_bytes(tmp_path / "missing") is None


def _check_the_estimate_covers_a_real_verification(tmp_path):
    """tracemalloc's peak while verifying a size (the code object already loaded) stays below the estimate."""
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.writer.build import build_kernel, link_kernels

    big_tiles = {"WorkGroup": [16, 16, 1], "ThreadTile": [8, 8], "DepthU": 8}      # few work-groups: quick
    sol = Solution.from_dict({**SOLUTION, **big_tiles, "GlobalSplitU": 2, "GlobalSplitUAlgorithm": "MultipleBuffer"},
                             where="test")
    co = tmp_path / "k.co"
    link_kernels([build_kernel(sol, load_arch("gfx90a"), "k")], load_arch("gfx90a"), co)
    c = GemmKernelContract.from_solution(sol, "k")
    verify_sizes(co, c, [Size(4, 4, 4)], 1.5, 0.5, 0, EmulatedRuntime())     # loads and compiles the kernels
    size = Size(300, 140, 9)
    tracemalloc.start()
    try:
        [r] = verify_sizes(co, c, [size], 1.5, 0.5, 0, EmulatedRuntime())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.passed, r.detail
    estimate = sum(footprint(c, empty_instance(300, 140, 9, 1, False, True)).values())
    assert peak <= estimate, (peak, estimate)


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
def test_the_estimate_covers_a_real_verification(tmp_path):
    # in a fresh interpreter: what an xdist worker cached or left for the collector before this test
    # would otherwise count in the peak, which then depends on the tests that ran before it
    code = f"import pathlib, test_footprint as t; t._check_the_estimate_covers_a_real_verification(pathlib.Path({str(tmp_path)!r}))"
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", code], cwd=tests, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
def test_cli_huge_size_is_one_line_exit_2(tmp_path, capsys):
    import yaml
    from tensile_asm.cli.main import main

    path = tmp_path / "sol.yaml"
    path.write_text(yaml.safe_dump(SOLUTION))
    assert main(["verify", "--arch", "gfx90a", "--solution", str(path), "--size", "100000,100000,100000"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "needs about" in err and "MemAvailable" in err
    assert "Traceback" not in err and "MemoryError" not in err
