"""The Runtime interface: one way to load a GEMM code object, launch a contract's launches, time and validate.

A backend (``emulator``, ``model``, ``hip``; ``get_runtime(name)``) implements:

* ``unavailable()`` (class method): None, or one sentence saying why this backend cannot run here;
* ``load(code)``: read a code object (a path, or {kernel: path} when helper kernels live elsewhere), once;
* ``run_gemm(code, contract, inst, alpha, beta) -> GemmRun``: every launch ``contract.launches(...)`` lists,
  in order, on copies of the ``GemmInstance``'s host buffers; D comes back. (``benchmark.verify.verify_sizes``
  calls this, so ``validate`` is the same on every backend that computes D.)
* ``time_gemm(code, contract, size, protocol, alpha, beta) -> GemmTiming``: seconds per GEMM (all of the
  contract's launches) by Tensile's benchmark protocol (``TimingProtocol``).

Every result says which backend produced it (``backend``) and how (``provenance``): ``measured`` on a GPU,
``emulated`` on the CPU emulator, ``modelled`` by a model (the emulator's cycle model included). The
contract (``tensile_asm.gemm.GemmKernelContract``) is the only description of a kernel a backend uses.
"""

from __future__ import annotations

import importlib
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np

from tensile_asm.errors import UserError
from tensile_asm.problem import GemmSize  # noqa: F401  (re-exported: backends and the tuner take it from here)

MEASURED, EMULATED, MODELLED = "measured", "emulated", "modelled"
PROVENANCES = (MEASURED, EMULATED, MODELLED)

# name -> "module:Class"; a backend module is imported only when asked for (hip-python is an extra)
BACKENDS: dict[str, str] = {
    "emulator": "tensile_asm.runtime.emulated:EmulatedRuntime",
    "model": "tensile_asm.runtime.model:ModelRuntime",
    "hip": "tensile_asm.runtime.hip:HipRuntime",
    "cuda": "tensile_asm.runtime.cuda:CudaRuntime",
}



@dataclass(frozen=True)
class TimingProtocol:
    """Tensile's benchmark protocol (GlobalParameters; the client's BenchmarkTimer): ``num_warmups`` GEMMs
    first, then ``num_benchmarks`` data points of ``syncs_per_benchmark`` synchronisations, each of
    ``enqueues_per_sync`` GEMMs timed with events around each enqueue; after each synchronisation the host
    sleeps ``sleep_percent`` % of the time it measured. Time per GEMM = all measured time / all enqueues.
    ``num_elements_to_validate``: elements of D compared with the reference after the warm-ups (-1: all,
    0: none). ``data_init``: Tensile's DataInitType per tensor (3 random, 0 zeros, 1 ones, 2 twos)."""

    num_warmups: int = 0
    enqueues_per_sync: int = 1
    syncs_per_benchmark: int = 1
    num_benchmarks: int = 1
    sleep_percent: int = 300
    num_elements_to_validate: int = 128
    data_init: Mapping[str, int] = field(default_factory=lambda: {"A": 3, "B": 3, "C": 3, "D": 0,
                                                                  "Alpha": 2, "Beta": 2})

    @classmethod
    def from_global_parameters(cls, gp: Mapping[str, Any]) -> "TimingProtocol":
        """From a config's GlobalParameters (Tensile's defaults, ``tuning.global_parameters``, where absent)."""
        from tensile_asm.tuning.global_parameters import with_defaults

        gp = with_defaults(gp)
        init = {t: int(gp[f"DataInitType{t}"]) for t in ("A", "B", "C", "D", "Alpha", "Beta")}
        for t in "AB":
            if init[t] == -1:
                init[t] = int(gp["DataInitTypeAB"])
        return cls(num_warmups=int(gp["NumWarmups"]), enqueues_per_sync=int(gp["EnqueuesPerSync"]),
                   syncs_per_benchmark=int(gp["SyncsPerBenchmark"]), num_benchmarks=int(gp["NumBenchmarks"]),
                   sleep_percent=int(gp["SleepPercent"]),
                   num_elements_to_validate=int(gp["NumElementsToValidate"]), data_init=init)

    def check(self) -> "TimingProtocol":
        for name in ("enqueues_per_sync", "syncs_per_benchmark", "num_benchmarks"):
            if getattr(self, name) < 1:
                raise UserError(f"GlobalParameters: {_tensile_name(name)} must be at least 1, not {getattr(self, name)}")
        for name in ("num_warmups", "sleep_percent"):
            if getattr(self, name) < 0:
                raise UserError(f"GlobalParameters: {_tensile_name(name)} must be 0 or more, not {getattr(self, name)}")
        return self


def _tensile_name(attr: str) -> str:
    return {"enqueues_per_sync": "EnqueuesPerSync", "syncs_per_benchmark": "SyncsPerBenchmark",
            "num_benchmarks": "NumBenchmarks", "num_warmups": "NumWarmups", "sleep_percent": "SleepPercent"}[attr]


@dataclass(frozen=True)
class GemmRun:
    """D after a GEMM's launches, with the backend's statistics for the GEMM kernel's launch."""

    d: np.ndarray
    stats: object
    backend: str
    provenance: str
    stray_writes: int = 0   # elements written outside the buffers ``d`` was gathered from (pointer-array offsets)


@dataclass(frozen=True)
class GemmTiming:
    """Seconds per GEMM (every launch of the contract) and where the number came from."""

    backend: str
    provenance: str
    size: GemmSize
    seconds: float
    samples: tuple[float, ...] = ()   # seconds per GEMM of each data point (NumBenchmarks)
    detail: str = ""                  # how it was obtained, for the record (model name, device, clocks ...)

    @property
    def gflops(self) -> float:
        """As Tensile's client: flops / time_us / 1000."""
        return self.size.flops / (self.seconds * 1e6) / 1000.0 if self.seconds > 0 else float("inf")

    @property
    def microseconds(self) -> float:
        return self.seconds * 1e6

    def as_dict(self) -> dict:
        return {"backend": self.backend, "provenance": self.provenance, "size": [self.size.m, self.size.n,
                self.size.k, self.size.batch], "us": self.microseconds, "gflops": self.gflops, "detail": self.detail}


@dataclass(frozen=True)
class Validation:
    """``verify_sizes``' results on one backend."""

    backend: str
    provenance: str
    results: list

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)


class Runtime(ABC):
    """A backend that runs (or models) GEMM code objects through their kernel contract."""

    name: ClassVar[str]
    provenance: ClassVar[str]
    computes_d: ClassVar[bool] = True     # False for a model: run_gemm/validate are not available

    @classmethod
    def unavailable(cls) -> str | None:
        """None when this backend can run on this machine, else one sentence saying why not."""
        return None

    @abstractmethod
    def load(self, code) -> Any:
        """Load a code object (path, or {kernel: path}) once; later calls with the same paths reuse it."""

    def run_gemm(self, code, contract, inst, alpha: float, beta: float) -> GemmRun:
        raise UserError(f"the {self.name} backend does not compute D (its results are {self.provenance}); "
                        f"validate with --backend emulator or hip")

    @abstractmethod
    def time_gemm(self, code, contract, size: GemmSize, protocol: TimingProtocol, alpha: float = 1.5,
                  beta: float = 0.5) -> GemmTiming:
        """Seconds per GEMM of ``contract``'s launches at ``size``."""

    def validate(self, code, contract, sizes: Sequence[GemmSize], alpha: float, beta: float,
                 seed: int = 0) -> Validation:
        """Each size on random data, D against the float64 reference (``benchmark.verify.verify_sizes``)."""
        from tensile_asm.benchmark.verify import Size, verify_sizes

        if not self.computes_d:
            self.run_gemm(code, contract, None, alpha, beta)     # raises the backend's sentence
        results = verify_sizes(code, contract, [Size(s.m, s.n, s.k, s.batch) for s in sizes], alpha, beta, seed,
                               self)
        return Validation(self.name, self.provenance, results)


def get_runtime(name: str, **options) -> Runtime:
    """The backend of this name, constructed with ``options``; UserError (one sentence) when unknown or
    when it cannot run on this machine."""
    from tensile_asm.problem import nearest

    if name not in BACKENDS:
        raise UserError(f"unknown backend {name!r}{nearest(name, BACKENDS)}; the backends are "
                        f"{', '.join(sorted(BACKENDS))}")
    module, cls_name = BACKENDS[name].split(":")
    cls = getattr(importlib.import_module(module), cls_name)
    reason = cls.unavailable()
    if reason:
        raise UserError(f"the {name} backend cannot run here: {reason}")
    return cls(**options)


def code_paths(code) -> dict[str, Path] | Path:
    """A code reference as a Path or {kernel: Path}."""
    if isinstance(code, Mapping):
        return {k: Path(v) for k, v in code.items()}
    return Path(code)


def float8_ocp(code, contract) -> bool:
    """Whether the kernel's fp8/bf8 A, B, C or D are the OCP formats: the architecture of its code object (a
    path, or {kernel: path}: the first) says (isa/<gfx>.yaml ``float8``); False without fp8 types."""
    from tensile_asm.benchmark.reference import FLOAT8_TYPES

    if not {contract.data_type, contract.dest_type} & set(FLOAT8_TYPES):
        return False
    from tensile_asm.codeobject import read_code_object
    from tensile_asm.isa.arch import load_arch

    paths = code_paths(code)
    path = next(iter(paths.values())) if isinstance(paths, dict) else paths
    return load_arch(read_code_object(path).processor).float8_ocp


# ---- Tensile's timing protocol, on abstract events (the hip backend gives it HIP's; tests give it fakes)

@dataclass(frozen=True)
class ProtocolHooks:
    """What a backend gives ``run_protocol``: ``enqueue()`` launches one GEMM (all of its kernels) between
    a start and a stop event and returns (start, stop); ``synchronize(stop)`` waits for that event;
    ``elapsed_ms(start, stop)`` reads the time between two events; ``sleep(seconds)`` pauses the host."""

    enqueue: Callable[[], tuple[Any, Any]]
    synchronize: Callable[[Any], None]
    elapsed_ms: Callable[[Any, Any], float]
    sleep: Callable[[float], None] = time.sleep
    after_warmups: Callable[[], None] | None = None    # e.g. read D back and validate


def run_protocol(protocol: TimingProtocol, hooks: ProtocolHooks) -> tuple[float, tuple[float, ...]]:
    """Tensile's BenchmarkTimer: returns (seconds per GEMM over every data point, seconds per GEMM of each
    data point). Warm-ups are enqueued and synchronised but not timed."""
    protocol.check()
    last = None
    for _ in range(protocol.num_warmups):
        last = hooks.enqueue()
    if last is not None:
        hooks.synchronize(last[1])
    if hooks.after_warmups is not None:
        hooks.after_warmups()
    total_ms, enqueues, samples = 0.0, 0, []
    for _ in range(protocol.num_benchmarks):
        point_ms, point_n = 0.0, 0
        for _ in range(protocol.syncs_per_benchmark):
            events = [hooks.enqueue() for _ in range(protocol.enqueues_per_sync)]
            hooks.synchronize(events[-1][1])
            sync_ms = sum(hooks.elapsed_ms(start, stop) for start, stop in events)
            point_ms += sync_ms
            point_n += len(events)
            if protocol.sleep_percent > 0:
                hooks.sleep(sync_ms / 1000.0 * protocol.sleep_percent / 100.0)
        samples.append(point_ms / 1000.0 / point_n)
        total_ms += point_ms
        enqueues += point_n
    return total_ms / 1000.0 / enqueues, tuple(samples)
