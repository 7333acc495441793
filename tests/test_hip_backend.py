"""The hip backend without a GPU: a fake HIP (memory at integer addresses, kernels that compute D from the kernarg
bytes they are given) checks argument packing, buffers, validation, Tensile's timing protocol and the error paths."""

import struct

import numpy as np
import pytest

from conftest import have_llvm
from tensile_asm.benchmark import float8
from tensile_asm.errors import UserError
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.runtime.base import GemmSize, TimingProtocol, get_runtime
from tensile_asm.runtime.hip import HipRuntime, validation_indices
from tensile_asm.solution import Solution


def contract(ta=False, tb=True, batched=True):
    sol = Solution.from_dict({"ProblemType": {"OperationType": "GEMM", "DataType": "s", "TransposeA": ta,
                                              "TransposeB": tb, "Batched": batched, "UseBeta": True},
                              "WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8}, where="test")
    return GemmKernelContract.from_solution(sol, "k")


class FakeHip:
    """A GPU in numpy: a launch decodes its kernarg with the contract's layout and computes D from it."""

    def __init__(self, c, elapsed_ms=None, wrong=0.0, fp8=None):
        self.c, self.mem, self.next, self.fp8 = c, {}, 0x10000, fp8
        self.launches, self.freed, self.events, self.synced = [], [], 0, []
        self.elapsed = list(elapsed_ms or [])
        self.wrong = wrong

    def module_load(self, image):
        return ("module", len(image))

    def function(self, module, name):
        return name

    def malloc(self, n):
        addr, self.next = self.next, self.next + ((n + 255) // 256 + 1) * 256
        self.mem[addr] = np.zeros(n, np.uint8)
        return addr

    def free(self, p):
        self.freed.append(p)

    def address(self, p):
        return p

    def to_device(self, p, host):
        self.mem[p][:host.nbytes] = host.view(np.uint8)

    def to_host(self, host, p):
        host.view(np.uint8)[:] = self.mem[p][:host.nbytes]

    def matrix(self, addr, rows, cols, ld, bstride, batch, fp8=None):
        """fp8: A's or B's codes, decoded as this GPU reads its kernel's type (``float8.decode``'s format
        and its ocp)."""
        if fp8 is not None:
            codes = np.lib.stride_tricks.as_strided(self.mem[addr], (batch, rows, cols), (bstride, 1, ld))
            return float8.decode(codes, *fp8)
        a = self.mem[addr].view(np.float32)
        return np.lib.stride_tricks.as_strided(a, (batch, rows, cols), (bstride * 4, 4, ld * 4)).astype(np.float64)

    def launch(self, f, grid, block, kernarg):
        self.launches.append((f, grid, block))
        v = {a.name: struct.unpack_from({"u64": "<Q", "u32": "<I", "f32": "<f"}[a.kind], kernarg, a.offset)[0]
             for a in self.c.layout()}
        m, n, b, k = v["SizesFree0"], v["SizesFree1"], v["SizesFree2"], v["SizesSum0"]
        a = self.matrix(v["AddressA"], *((k, m) if self.c.transpose_a else (m, k)), v["StridesA0"], v["StridesA1"], b,
                        self.fp8)
        bm = self.matrix(v["AddressB"], *((n, k) if self.c.transpose_b else (k, n)), v["StridesB0"], v["StridesB1"], b,
                         self.fp8)
        a = a.transpose(0, 2, 1) if self.c.transpose_a else a
        bm = bm.transpose(0, 2, 1) if self.c.transpose_b else bm
        cm = self.matrix(v["AddressC"], m, n, v["StridesC0"], v["StridesC1"], b)
        d = v["Alpha"] * (a @ bm) + v["Beta"] * cm + self.wrong
        out = self.mem[v["AddressD"]].view(np.float32)
        for i in range(b):
            for j in range(n):
                base = i * v["StridesD1"] + j * v["StridesD0"]
                out[base:base + m] = d[i, :, j]
        assert grid == (-(-m // self.c.macro_tile[0]), -(-n // self.c.macro_tile[1]), b)

    def event(self):
        self.events += 1
        return self.events

    def record(self, e):
        pass

    def synchronize(self, e):
        self.synced.append(e)

    def elapsed_ms(self, start, stop):
        return self.elapsed.pop(0)


@pytest.fixture
def code(tmp_path):
    p = tmp_path / "k.co"
    p.write_bytes(b"\x7fELF fake code object")
    return p


def test_hip_stops_with_one_sentence_without_hip_python_or_gpu():
    reason = HipRuntime.unavailable()
    if reason is None:
        pytest.skip("this machine has hip-python and an AMD GPU")
    assert "\n" not in reason and ("hip-python" in reason or "no AMD GPU" in reason)
    with pytest.raises(UserError, match="the hip backend cannot run here"):
        get_runtime("hip")


@pytest.mark.parametrize("ta,tb", [(False, True), (True, False)])
def test_arguments_reach_the_kernel_and_d_comes_back(code, ta, tb):
    c = contract(ta, tb)
    rt = HipRuntime(api=FakeHip(c))
    v = rt.validate(code, c, [GemmSize(37, 29, 19, 2), GemmSize(1, 1, 1), GemmSize(17, 61, 5, 3)], 1.25, -0.5, seed=4)
    assert v.backend == "hip" and v.provenance == "measured" and v.passed, v.results
    # every buffer allocated was freed
    assert sorted(rt.api.freed) == sorted(rt.api.mem)
    wrong = HipRuntime(api=FakeHip(c, wrong=1e-3))
    assert not wrong.validate(code, c, [GemmSize(13, 7, 5, 1)], 1.5, 0.5).passed


def test_timing_follows_tensiles_protocol(code):
    c = contract()
    p = TimingProtocol(num_warmups=2, enqueues_per_sync=3, syncs_per_benchmark=2, num_benchmarks=1, sleep_percent=0,
                       num_elements_to_validate=50)
    times = list(np.random.default_rng(3).uniform(0.1, 0.3, 6))
    api = FakeHip(c, elapsed_ms=times)
    t = HipRuntime(api=api).time_gemm(code, c, GemmSize(33, 20, 9, 2), p)
    assert t.provenance == "measured" and t.seconds == pytest.approx(sum(times) / 6 / 1000)
    assert t.gflops == pytest.approx(2 * 33 * 20 * 9 * 2 / (t.seconds * 1e6) / 1000)
    assert len(api.launches) == 2 + 1 + 6          # warm-ups, the validated GEMM, the timed ones
    bad = FakeHip(c, elapsed_ms=times, wrong=0.25)
    with pytest.raises(UserError, match="validated elements of D differ"):
        HipRuntime(api=bad).time_gemm(code, c, GemmSize(33, 20, 9, 2), p)
    with pytest.raises(UserError, match="DataInitTypeA 8 is not supported"):
        HipRuntime(api=FakeHip(c)).time_gemm(code, c, GemmSize(8, 8, 8), TimingProtocol(data_init={
            "A": 8, "B": 3, "C": 3, "D": 0, "Alpha": 2, "Beta": 2}))


def test_validation_indices_spread_with_a_prime_stride():
    assert list(validation_indices(10, -1)) == list(range(10)) and len(validation_indices(10, 0)) == 0
    idx = validation_indices(10007 * 3, 128)
    assert len(idx) == 128 == len(set(idx.tolist())) and idx.max() < 10007 * 3
    stride = int(idx[1] - idx[0])
    assert stride > 1 and all(stride % q for q in range(2, int(stride ** 0.5) + 1))


class FakeSmi:
    """amdsmi's calls the monitor makes, with readings that change per call."""

    class AmdSmiClkType:
        GFX, MEM = "gfx", "mem"

    class AmdSmiTemperatureType:
        EDGE = "edge"

    class AmdSmiTemperatureMetric:
        CURRENT = "current"

    def __init__(self, sclk, temps, handles=("gpu0",)):
        self.sclk, self.temps, self.handles = list(sclk), list(temps), list(handles)

    def amdsmi_get_processor_handles(self):
        return self.handles

    def amdsmi_get_clock_info(self, handle, kind):
        assert handle == "gpu0"
        return {"clk": self.sclk.pop(0)} if kind == "gfx" else {"cur_clk": 1600}

    def amdsmi_get_temp_metric(self, handle, kind, metric):
        assert (kind, metric) == ("edge", "current")
        return self.temps.pop(0)


def test_clocks_and_temperature_are_logged_after_each_timed_synchronisation(code):
    from tensile_asm.runtime.hip import SmiMonitor

    c = contract()
    p = TimingProtocol(num_warmups=1, enqueues_per_sync=2, syncs_per_benchmark=3, num_benchmarks=1, sleep_percent=0,
                       num_elements_to_validate=0)
    smi = FakeSmi(sclk=[1700, 1502, 1650], temps=[45, 71, 60])
    rt = HipRuntime(api=FakeHip(c, elapsed_ms=[0.2] * 6), monitor=SmiMonitor(smi=smi))
    t = rt.time_gemm(code, c, GemmSize(16, 16, 8), p)
    # three timed synchronisations: three samples (the warm-ups' is not one); every reading was used
    assert "sclk 1502-1700 MHz (median 1650)" in t.detail and "mclk 1600-1600 MHz" in t.detail
    assert "edge 45-71 C (median 60)" in t.detail and "over 3 samples" in t.detail
    assert smi.sclk == [] and smi.temps == []
    off = HipRuntime(api=FakeHip(c, elapsed_ms=[0.2] * 6), monitor=False).time_gemm(code, c, GemmSize(16, 16, 8), p)
    assert "clocks not logged (HardwareMonitor false)" in off.detail
    with pytest.raises(UserError, match="no GPU 1 to monitor"):
        SmiMonitor(index=1, smi=smi)


def test_without_amd_smi_the_timing_says_clocks_were_not_logged(code, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "amdsmi", None)        # import amdsmi raises ImportError
    c = contract()
    t = HipRuntime(api=FakeHip(c, elapsed_ms=[0.2])).time_gemm(code, c, GemmSize(8, 8, 8), TimingProtocol(
        sleep_percent=0, num_elements_to_validate=0))
    assert "clocks not logged: AMD SMI's Python package (amdsmi, part of ROCm) is not installed" in t.detail


@pytest.mark.skipif(not have_llvm(), reason="needs LLVM (llvm-mc, ld.lld)")
@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_fp8_data_is_in_the_format_of_the_kernels_architecture(tmp_path, arch):
    # gfx942's fp8 is FNUZ, gfx950's OCP E4M3FN (isa/<gfx>.yaml float8): the data the backend makes, and the D it
    # validates, must be in the format of the code object's architecture; the fake GPU reads A and B as that
    # architecture does (the hip backend made FNUZ data for gfx950 too, so validation failed there)
    from tensile_asm.benchmark.reference import to_float64
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.runtime.hip import initial_instance
    from test_mfma_kernels import make
    from kernel_build import build_linked

    sol = make({"OperationType": "GEMM", "DataType": "f8", "DestDataType": "s", "ComputeDataType": "s",
                "HighPrecisionAccumulate": True, "TransposeA": False, "TransposeB": False, "Batched": True},
               {"MatrixInstruction": [16, 16, 32, 1, 1, 1, 1, 1, 1], "DepthU": 64, "GlobalReadVectorWidth": 16,
                "LocalReadVectorWidth": 8, "TransposeLDS": 1})
    _, co, c = build_linked(sol, load_arch(arch), tmp_path)
    ocp = load_arch(arch).float8_ocp
    assert ocp == (arch == "gfx950")
    p = TimingProtocol(num_warmups=1, enqueues_per_sync=1, syncs_per_benchmark=1, num_benchmarks=1, sleep_percent=0,
                       num_elements_to_validate=-1)
    api = FakeHip(c, elapsed_ms=[0.2], fp8=("F8", ocp))
    t = HipRuntime(api=api, monitor=False).time_gemm(co, c, GemmSize(37, 23, 70, 2), p)
    assert t.seconds > 0 and len(api.launches) == 3
    # the random data spans the format: read in the other format, codes differ in value (or are NaN)
    other = FakeHip(c, elapsed_ms=[0.2], fp8=("F8", not ocp))
    with pytest.raises(UserError, match="validated elements of D differ"):
        HipRuntime(api=other, monitor=False).time_gemm(co, c, GemmSize(37, 23, 70, 2), p)
    # DataInitType 1 and 2: ones and twos in the kernel's format
    inst, _, _ = initial_instance(c, GemmSize(5, 3, 7), TimingProtocol(data_init={
        "A": 1, "B": 2, "C": 3, "D": 0, "Alpha": 2, "Beta": 2}), float8_ocp=ocp)
    assert inst.float8_ocp == ocp
    assert set(to_float64(inst.arrays["A"], "F8", ocp)) == {1.0} and set(to_float64(inst.arrays["B"], "F8", ocp)) == {2.0}
    assert set(to_float64(inst.arrays["A"], "F8", not ocp)) != {1.0}
