"""The ``model`` backend: an analytical performance model of a GEMM kernel on a device (modelled, never
measured; this project has no AMD GPU). It ranks kernels per size; its absolute numbers are estimates.

Per kernel (read once from its code object, as ``tensile-asm inspect`` reads it): the main loop's issue clocks
per wave for one pass (one DepthU of K; ``isa/<gfx>.yaml`` issue_cycles), its LDS bytes per pass (the DS
instructions' widths x 64 lanes), and the occupancy its registers and LDS allow. Per size:

* work-groups: ceil(M/MT0) * ceil(N/MT1) * GlobalSplitU * batch, each running ceil(ceil(K/GSU) / DepthU) passes;
* wave quantisation: the busiest CU gets L = ceil(work-groups / CUs) of them, at most ``o`` at a time
  (occupancy in work-groups per CU); compute clocks = max(ceil(L/o) x one work-group's passes on its busiest
  SIMD, L x all its waves' issue clocks / SIMDs per CU) plus a fixed prologue and the epilogue's stores;
* LDS: L x passes x LDS bytes per pass / LDS bytes per clock per CU;
* global memory: A and B panels read once per block of concurrently running work-groups that share them (the
  block's shape follows WorkGroupMapping: WGM tiles along N, the rest along M; with WGM 1 along M first),
  reuse reduced when the block's DepthU slices do not fit the L2 (per L2 domain: XCDs on MI300/MI355);
  never below the compulsory bytes; C read (beta), D written; GlobalSplitU: SingleBuffer adds the beta-only
  kernel and atomic read-modify-writes of GSU partial tiles, MultipleBuffer writes GSU partial tiles to the
  workspace and the post-GSU kernel reads them back;
* time = max(compute, LDS, memory / (bandwidth x MEMORY_EFFICIENCY)) + launch overhead per launch.

What it leaves out: instruction latencies beyond issue (the emulator's cycle model has them), LDS bank
conflicts, TLB and DRAM page effects, clock throttling, the Infinity Cache beyond the L2.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from tensile_asm.errors import UserError
from tensile_asm.runtime.base import MODELLED, GemmSize, GemmTiming, Runtime, TimingProtocol, code_paths
from tensile_asm.runtime.devices import Device, device as device_named, for_arch

MODEL = "analytical v1"
# model parameters (not device facts): the fraction of peak HBM bandwidth a streaming kernel reaches, LDS bytes
# per clock per CU, fixed clocks of a work-group's prologue, bytes per clock one CU stores, seconds per launch
MEMORY_EFFICIENCY = 0.8
LDS_BYTES_PER_CLOCK = 128
PROLOGUE_CLOCKS = 600
STORE_BYTES_PER_CLOCK = 64
LAUNCH_SECONDS = 2.0e-6
_ELEMENT = {"S": 4, "D": 8, "H": 2, "B": 2, "I": 1, "I8": 1, "F8": 1, "B8": 1, "F8B8": 1, "B8F8": 1}
_DS_WIDTH = re.compile(r"ds_(read|write|load|store)(2st64|2)?_(b|u|i)(8|16|32|64|96|128)(_d16(_hi)?)?$")


@dataclass(frozen=True)
class KernelFacts:
    """What the model reads from a kernel's code object."""

    name: str
    arch: str
    loop_issue_clocks: int        # one wave, one pass through the main loop (one DepthU)
    loop_lds_bytes: int           # DS bytes one wave moves in one pass
    waves_per_simd: int           # occupancy its resources allow
    workgroup_size: int
    lds_bytes: int
    limited_by: str


def ds_bytes(opcode: str) -> int:
    """Bytes per lane of a DS read/write opcode (0 for other DS operations)."""
    m = _DS_WIDTH.match(opcode)
    if not m:
        return 0
    width = int(m.group(4)) // 8
    return width * (2 if m.group(2) else 1)


def kernel_facts(path: Path, name: str) -> KernelFacts:
    from tensile_asm.inspect import inspect_code_object

    [report] = inspect_code_object(path, kernel=name, emulate=False)
    if report.issue is None:
        raise UserError(f"kernel {name} in {path}: {report.loop_reason}; the model needs its main loop")
    lds = sum(ds_bytes(i.opcode) for i in report.loop.instructions) * 64
    res = report.resources
    return KernelFacts(name, report.arch.name, report.issue.total_clocks, lds,
                       int(res.occupancy["waves_per_simd"]), int(res.workgroup_size), int(res.lds_bytes),
                       str(res.occupancy["limited_by"]))


@dataclass(frozen=True)
class Estimate:
    seconds: float
    compute_s: float
    lds_s: float
    memory_s: float
    memory_bytes: float
    workgroups: int
    rounds: int
    bound: str

    def detail(self, dev: Device, facts: KernelFacts) -> str:
        return (f"{MODEL} on {dev.name}: {self.bound}-bound; compute {self.compute_s * 1e6:.2f} us, LDS "
                f"{self.lds_s * 1e6:.2f} us, memory {self.memory_s * 1e6:.2f} us ({self.memory_bytes / 1e6:.2f} MB), "
                f"{self.workgroups} work-groups in {self.rounds} round(s), occupancy {facts.waves_per_simd} "
                f"waves/SIMD ({facts.limited_by})")


def _block(nwg0: int, nwg1: int, concurrent: int, wgm: int) -> tuple[int, int]:
    """Shape (tiles along M, tiles along N) of a block of ``concurrent`` consecutive work-groups."""
    concurrent = max(1, min(concurrent, nwg0 * nwg1))
    if wgm > 1:
        b = min(nwg1, wgm)
        a = min(nwg0, -(-concurrent // b))
    else:
        a = min(nwg0, concurrent)
        b = min(nwg1, -(-concurrent // nwg0))
    return a, b


def estimate(contract, facts: KernelFacts, size: GemmSize, dev: Device) -> Estimate:
    m, n, k = size.m, size.n, size.k
    batch = size.batch if contract.batched else 1
    mt0, mt1 = contract.macro_tile
    gsu = max(1, contract.global_split_u)
    depth_u = max(1, contract.depth_u)
    elem = _ELEMENT.get(contract.data_type, 4)
    dest = _ELEMENT.get(contract.dest_type, 4)
    acc = contract.accumulator_bytes
    waves = max(1, -(-facts.workgroup_size // 64))
    simds = 4
    nwg0, nwg1 = -(-m // mt0), -(-n // mt1)
    workgroups = nwg0 * nwg1 * gsu * batch
    k_per = -(-k // gsu)
    passes = max(1, -(-k_per // depth_u))
    # occupancy in work-groups per CU (waves_per_simd counts every resource: VGPRs, SGPRs, LDS, the wave limit)
    per_cu = max(1, (facts.waves_per_simd * simds) // waves)
    busiest = -(-workgroups // dev.cus)
    rounds = -(-busiest // per_cu)
    chain = passes * facts.loop_issue_clocks * -(-waves // simds)       # one work-group on its busiest SIMD
    throughput = passes * facts.loop_issue_clocks * waves / simds       # one work-group's share of the CU
    store_clocks = mt0 * mt1 * (acc if contract.writes_workspace else dest) / STORE_BYTES_PER_CLOCK
    compute_clocks = max(rounds * chain, busiest * throughput) + rounds * (PROLOGUE_CLOCKS + store_clocks)
    lds_clocks = busiest * passes * facts.loop_lds_bytes * waves / LDS_BYTES_PER_CLOCK
    # global memory
    concurrent = min(workgroups, dev.cus * per_cu) // max(1, dev.l2_domains)
    a_tiles, b_tiles = _block(nwg0, nwg1, max(1, concurrent // gsu), contract.workgroup_mapping)
    working_set = (a_tiles * mt0 + b_tiles * mt1) * depth_u * elem * 2     # two DepthU slices in flight
    reuse = min(1.0, dev.l2_bytes / working_set) if working_set else 1.0
    raw = nwg0 * nwg1 * (mt0 + mt1) * k * elem * batch
    shared = nwg0 * nwg1 / (a_tiles * b_tiles) * (a_tiles * mt0 + b_tiles * mt1) * k * elem * batch
    reads = max((m * k + k * n) * elem * batch, reuse * shared + (1 - reuse) * raw)
    mn = m * n * batch
    out_bytes = mn * dest + (mn * dest if contract.use_beta else 0)
    launches = 1
    if gsu > 1:
        launches = 2
        if contract.writes_workspace:
            out_bytes = gsu * mn * acc * 2 + mn * dest + (mn * dest if contract.use_beta else 0)
        else:
            out_bytes += gsu * mn * dest * 2      # atomic read-modify-write of each partial tile
    memory_bytes = reads + out_bytes
    memory_s = memory_bytes / (dev.memory_gbs * 1e9 * MEMORY_EFFICIENCY)
    compute_s, lds_s = compute_clocks / dev.clock_hz, lds_clocks / dev.clock_hz
    bound = max((compute_s, "compute"), (lds_s, "LDS"), (memory_s, "memory"))[1]
    seconds = max(compute_s, lds_s, memory_s) + launches * LAUNCH_SECONDS
    return Estimate(seconds, compute_s, lds_s, memory_s, memory_bytes, workgroups, rounds, bound)


class ModelRuntime(Runtime):
    """Ranks kernels without a GPU: times are modelled; D is not computed."""

    name = "model"
    provenance = MODELLED
    computes_d = False

    def __init__(self, device: str | None = None):
        self.device = device
        self._facts: dict = {}

    def load(self, code):
        """The model's facts of every kernel in the code object(s) it is asked about, read when first needed."""
        return code_paths(code)

    def facts(self, code, name: str) -> KernelFacts:
        paths = code_paths(code)
        path = paths.get(name, next(iter(paths.values()))) if isinstance(paths, dict) else paths
        st = Path(path).stat()
        key = (str(path), st.st_mtime_ns, st.st_size, name)
        if key not in self._facts:
            self._facts[key] = kernel_facts(Path(path), name)
        return self._facts[key]

    def device_for(self, arch: str) -> Device:
        dev = device_named(self.device) if self.device else for_arch(arch)
        if dev.arch != arch:
            raise UserError(f"device {dev.name} is a {dev.arch}, but the kernel is built for {arch}; build for "
                            f"{dev.arch} or name a {arch} device")
        return dev

    def time_gemm(self, code, contract, size: GemmSize, protocol: TimingProtocol | None = None,
                  alpha: float = 1.5, beta: float = 0.5) -> GemmTiming:
        facts = self.facts(code, contract.name)
        dev = self.device_for(facts.arch)
        est = estimate(contract, facts, size, dev)
        return GemmTiming(self.name, MODELLED, size, est.seconds, (est.seconds,), est.detail(dev, facts))
