"""The Runtime interface: backend registry, Tensile's timing protocol on fake events, the emulator backend
through it (validation against the reference, modelled times), every result labelled."""

from pathlib import Path

import numpy as np
import pytest

from tensile_asm import toolchain
from tensile_asm.errors import UserError
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.base import (EMULATED, MODELLED, GemmSize, GemmTiming, ProtocolHooks, Runtime,
                                      TimingProtocol, get_runtime, run_protocol)
from tensile_asm.solution import Solution, min_names
from tensile_asm.writer.build import build_kernel

from conftest import have_llvm


def test_unknown_backend_is_one_sentence_with_a_suggestion():
    with pytest.raises(UserError, match="did you mean emulator"):
        get_runtime("emulater")


def test_backends_implement_the_interface():
    rt = get_runtime("emulator")
    assert isinstance(rt, Runtime) and rt.name == "emulator" and rt.provenance == EMULATED


class FakeGpu:
    """Events are (enqueue index) pairs; each enqueue 'takes' a scripted number of milliseconds."""

    def __init__(self, times_ms):
        self.times = list(times_ms)
        self.n = 0
        self.synced, self.slept = [], []

    def enqueue(self):
        i = self.n
        self.n += 1
        return (i, i)

    def elapsed(self, start, stop):
        return self.times[start]

    def hooks(self):
        return ProtocolHooks(self.enqueue, self.synced.append, self.elapsed, self.slept.append)


def test_protocol_arithmetic_warmups_excluded_and_sleep_proportional():
    # 2 warm-ups (100 ms each, not counted), then 2 data points x 2 syncs x 3 enqueues
    rng = np.random.default_rng(5)
    timed = list(rng.uniform(0.5, 2.0, 12))
    gpu = FakeGpu([100.0, 100.0] + timed)
    p = TimingProtocol(num_warmups=2, enqueues_per_sync=3, syncs_per_benchmark=2, num_benchmarks=2,
                       sleep_percent=50)
    seconds, samples = run_protocol(p, gpu.hooks())
    assert gpu.n == 14
    assert seconds == pytest.approx(sum(timed) / 12 / 1000)
    assert samples == pytest.approx((sum(timed[:6]) / 6 / 1000, sum(timed[6:]) / 6 / 1000))
    # one sync after the warm-ups, then one per sync; sleep = 50% of each sync's measured time
    assert gpu.synced == [1, 4, 7, 10, 13]
    assert gpu.slept == pytest.approx([sum(timed[i:i + 3]) / 1000 * 0.5 for i in (0, 3, 6, 9)])


def test_protocol_from_global_parameters_uses_tensile_defaults():
    p = TimingProtocol.from_global_parameters({"EnqueuesPerSync": 7, "DataInitTypeAB": 0, "DataInitTypeB": 1})
    assert (p.enqueues_per_sync, p.syncs_per_benchmark, p.sleep_percent, p.num_elements_to_validate) == (7, 1, 300, 128)
    assert p.data_init["A"] == 0 and p.data_init["B"] == 1 and p.data_init["C"] == 3
    with pytest.raises(UserError, match="EnqueuesPerSync must be at least 1"):
        run_protocol(TimingProtocol(enqueues_per_sync=0), FakeGpu([1.0]).hooks())


def test_timing_gflops_is_tensiles_arithmetic():
    t = GemmTiming("x", MODELLED, GemmSize(128, 96, 37, 3), 2.5e-5)
    assert t.gflops == pytest.approx(2 * 128 * 96 * 37 * 3 / 25.0 / 1000)
    assert t.as_dict()["provenance"] == "modelled"


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed")
def test_emulator_backend_validates_and_times(tmp_path: Path):
    sol = Solution.from_dict({"ProblemType": {"OperationType": "GEMM", "DataType": "s", "TransposeA": False,
                                              "TransposeB": True, "Batched": True, "UseBeta": True},
                              "WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8}, where="test")
    arch = load_arch("gfx90a")
    name = min_names([sol])[0]
    co = tmp_path / "k.co"
    toolchain.assemble_and_link(build_kernel(sol, arch, name).text(), arch, co)
    contract = GemmKernelContract.from_solution(sol, name)
    rt = get_runtime("emulator")
    v = rt.validate(co, contract, [GemmSize(17, 13, 11, 2), GemmSize(1, 1, 1)], 1.5, 0.5, seed=3)
    assert v.backend == "emulator" and v.provenance == EMULATED and v.passed and len(v.results) == 2
    t = rt.time_gemm(co, contract, GemmSize(33, 17, 16))
    assert t.provenance == MODELLED and t.backend == "emulator" and t.seconds > 0 and "mi210" in t.detail
    assert "1 rounds of 6 workgroups" in t.detail


def _model_case(**params):
    from tensile_asm.runtime.model import KernelFacts
    sol = Solution.from_dict({"ProblemType": {"OperationType": "GEMM", "DataType": "s", "TransposeA": False,
                                              "TransposeB": True, "Batched": True, "UseBeta": True},
                              "WorkGroup": [16, 16, 1], "ThreadTile": [4, 4], "DepthU": 16, **params}, where="t")
    facts = KernelFacts("k", "gfx900", loop_issue_clocks=400, loop_lds_bytes=2048, waves_per_simd=1,
                        workgroup_size=256, lds_bytes=8192, limited_by="vgpr")
    return GemmKernelContract.from_solution(sol, "k"), facts


def test_model_quantises_waves_and_charges_gsu_traffic():
    from tensile_asm.runtime.devices import device
    from tensile_asm.runtime.model import estimate

    dev = device("mi25")                 # 64 CUs; one 4-wave work-group per CU at 1 wave per SIMD
    c, facts = _model_case()
    full = estimate(c, facts, GemmSize(64 * 8, 64 * 8, 256), dev)        # 64 work-groups: one round
    over = estimate(c, facts, GemmSize(64 * 8, 64 * 8 + 1, 256), dev)    # 72: a second round
    assert (full.workgroups, full.rounds, over.workgroups, over.rounds) == (64, 1, 72, 2)
    assert over.compute_s == pytest.approx(2 * full.compute_s, rel=0.01)
    gsu, _ = _model_case(GlobalSplitU=4, GlobalSplitUAlgorithm="MultipleBuffer")
    one = estimate(c, facts, GemmSize(256, 256, 4096), dev)
    split = estimate(gsu, facts, GemmSize(256, 256, 4096), dev)
    assert split.workgroups == 4 * one.workgroups and split.memory_bytes > one.memory_bytes
    assert split.seconds < one.seconds      # 16 work-groups leave 48 CUs idle; splitting K uses them
    # WorkGroupMapping groups tiles that share panels: less traffic than row-major order on a wide grid
    wgm, _ = _model_case(WorkGroupMapping=8)
    plain, _ = _model_case(WorkGroupMapping=1)
    wide = GemmSize(64 * 200, 64 * 40, 512)
    assert estimate(wgm, facts, wide, dev).memory_bytes < estimate(plain, facts, wide, dev).memory_bytes
