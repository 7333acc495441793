"""The cuda backend without a GPU: the source template rendered for CUDA compiles to PTX (clang's CUDA mode with
NVRTC's built-ins declared: tests/data/nvrtc_builtins.h), and CudaRuntime -- the hip backend's plumbing with
CuPy in place of HIP -- passes the contract's kernarg bytes and validates D, on the fake GPU of
test_hip_backend."""

import shutil
import subprocess

import pytest

from tensile_asm.errors import UserError
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.runtime.base import GemmSize, TimingProtocol, get_runtime
from tensile_asm.runtime.cuda import CudaRuntime
from tensile_asm.solution import Solution
from tensile_asm.source.writer import write_source

from conftest import REPO
from test_hip_backend import FakeHip


def solution(a="s", d=None, c=None, strided=True, **params):
    pt = {"OperationType": "GEMM", "DataType": a, "TransposeA": False, "TransposeB": True, "Batched": True,
          "UseBeta": True, "StridedBatched": strided}
    if d:
        pt.update(DestDataType=d, ComputeDataType=c, HighPrecisionAccumulate=True)
    return Solution.from_dict({"ProblemType": pt, "KernelLanguage": "Source", "WorkGroup": [8, 8, 1],
                               "ThreadTile": [2, 2], "DepthU": 8, **params}, where="test")


@pytest.mark.skipif(shutil.which("clang++-19") is None, reason="clang 19 (CUDA mode) is not installed")
@pytest.mark.parametrize("types", [("s", None, None), ("h", "h", "s"), ("d", None, None), ("b", "s", "s"),
                                   ("h", None, None), ("c", None, None, False), ("i8", "i", "i", False),
                                   ("4xi8", "i", "i")])
def test_the_cuda_rendering_compiles_to_ptx(tmp_path, types):
    text = write_source(solution(*types, PrefetchGlobalRead=1, WorkGroupMapping=8), "Cijk_cuda", language="cuda")
    assert "hip_runtime.h" not in text and "__builtin_amdgcn" not in text
    src = tmp_path / "k.cu"
    src.write_text(text)
    proc = subprocess.run(["clang++-19", "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80", "-nocudainc",
                           "-nocudalib", "-include", str(REPO / "tests" / "data" / "nvrtc_builtins.h"), "-O2", "-S",
                           "-o", str(tmp_path / "k.ptx"), str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[:2000]
    ptx = (tmp_path / "k.ptx").read_text()
    # the MACs: integer multiply-adds, or fused ones (complex: NVRTC's __fmaf_rn, declared here, is called)
    mac = "mad.lo" if types[1] == "i" else "__fmaf_rn" if types[0] == "c" else "fma.rn"
    assert ".entry Cijk_cuda(" in ptx and mac in ptx


def test_cuda_stops_with_one_sentence_without_cupy_or_gpu():
    reason = CudaRuntime.unavailable()
    if reason is None:
        pytest.skip("this machine has CuPy and an NVIDIA GPU")
    assert "\n" not in reason and ("CuPy" in reason or "no NVIDIA GPU" in reason)
    with pytest.raises(UserError, match="the cuda backend cannot run here"):
        get_runtime("cuda")


def test_cuda_runtime_passes_the_contract_and_validates(tmp_path):
    c = GemmKernelContract.from_solution(solution(), "k")
    code = tmp_path / "k.cu"
    code.write_text("// the fake GPU does not compile")
    rt = CudaRuntime(api=FakeHip(c))
    v = rt.validate(code, c, [GemmSize(37, 29, 19, 2), GemmSize(1, 1, 1)], 1.25, -0.5, seed=4)
    assert v.backend == "cuda" and v.provenance == "measured" and v.passed, v.results
    rt = CudaRuntime(api=FakeHip(c, elapsed_ms=[2.0] * 4))
    t = rt.time_gemm(code, c, GemmSize(64, 64, 64), TimingProtocol(num_benchmarks=2, enqueues_per_sync=2,
                                                                     sleep_percent=0, num_elements_to_validate=0))
    assert t.backend == "cuda" and t.seconds == pytest.approx(2e-3) and "CUDA events" in t.detail


@pytest.mark.skipif(shutil.which("clang++-19") is None, reason="clang 19 (CUDA mode) is not installed")
@pytest.mark.parametrize("types, algorithm, strided", [(("s", None, None), "SingleBuffer", True),
                                                       (("h", "h", "s"), "MultipleBuffer", False),
                                                       (("i8", "i", "i"), "SingleBuffer", False)])
def test_global_split_u_kernels_carry_their_helper_in_the_cuda_text(tmp_path, types, algorithm, strided):
    sol = solution(*types, strided=strided, GlobalSplitU=3, GlobalSplitUAlgorithm=algorithm)
    helper = GemmKernelContract.from_solution(sol, "Cijk_cuda").helper_name()
    src = tmp_path / "k.cu"
    src.write_text(write_source(sol, "Cijk_cuda", language="cuda", helper=True))
    proc = subprocess.run(["clang++-19", "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80", "-nocudainc",
                           "-nocudalib", "-include", str(REPO / "tests" / "data" / "nvrtc_builtins.h"), "-O2", "-S",
                           "-o", str(tmp_path / "k.ptx"), str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[:2000]
    ptx = (tmp_path / "k.ptx").read_text()
    assert ".entry Cijk_cuda(" in ptx and f".entry {helper}(" in ptx
    # SingleBuffer's slices add into D atomically (NVRTC's atomicAdd, declared here, is called)
    assert ("atomicAdd" in ptx) == (algorithm == "SingleBuffer")
