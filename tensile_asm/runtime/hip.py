"""The ``hip`` backend: code objects launched on an AMD GPU through hip-python (``pip install tensile-asm[hip]``),
timed with HIP events by Tensile's protocol (``runtime.base.run_protocol``): measured.

Everything GPU-specific is in ``HipApi`` (a thin layer over hip-python: modules, memory, launches, events); the
rest -- the kernarg bytes each launch gets, the data Tensile's DataInitType* asks for, which elements of D are
validated (NumElementsToValidate, spread with a prime stride as Tensile's client does), the protocol and its
arithmetic -- runs against any object with HipApi's methods, which is how it is tested on machines without a GPU.
On a machine without hip-python or without an AMD GPU the backend stops with one sentence (``unavailable``).
Clocks and temperature (GlobalParameters HardwareMonitor, on by default as in Tensile): read through AMD SMI's
Python API (``amdsmi``, shipped with ROCm; Tensile's client reads the same counters through rocm_smi) after
every synchronisation of the timed protocol, and summarised in each timing's detail; without ``amdsmi`` the
timing says that clocks were not logged and why.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import numpy as np

from tensile_asm.errors import UserError
from tensile_asm.runtime.base import (MEASURED, GemmRun, GemmSize, GemmTiming, ProtocolHooks, Runtime, TimingProtocol,
                                      code_paths, float8_ocp, run_protocol)

# hipModuleLaunchKernel's ``extra`` markers (hip_runtime_api.h: HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END)
LAUNCH_PARAM_BUFFER_POINTER, LAUNCH_PARAM_BUFFER_SIZE, LAUNCH_PARAM_END = 0x01, 0x02, 0x03
# Tensile's DataInitType values this backend fills (Common.py): 0 zeros, 1 ones, 2 twos, 3 random
DATA_INIT = {0: "zeros", 1: "ones", 2: "twos", 3: "random"}
_SCALAR_INIT = {0: 0.0, 1: 1.0, 2: 2.0}



class KernelParams(bytes):
    """A launch's kernarg bytes, with each argument's offset in them: HIP takes the bytes as one buffer; CUDA's
    cuLaunchKernel takes a pointer per argument (kernelParams), since its parameter buffer must be exactly the
    kernel's parameter size, which the 8-byte-rounded kernarg segment need not be."""

    def __new__(cls, data: bytes, offsets):
        obj = super().__new__(cls, data)
        obj.offsets = tuple(offsets)
        return obj

class HipApi:
    """hip-python, reduced to what the backend uses. Every call checks HIP's error code."""

    def __init__(self):
        from hip import hip  # noqa: F401  (the extra: pip install tensile-asm[hip])
        self.hip = hip

    def _check(self, result, what: str):
        err, *rest = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            name = self.hip.hipGetErrorString(err)
            raise UserError(f"HIP {what} failed: {name[1] if isinstance(name, tuple) else name}")
        return rest[0] if len(rest) == 1 else rest

    def device_count(self) -> int:
        return int(self._check(self.hip.hipGetDeviceCount(), "hipGetDeviceCount"))

    def cu_count(self) -> int:
        """The current device's compute units (rocBLAS passes them to Tensile's host, which picks GlobalSplitU's
        conversion kernel and a persistent kernel's grid from them)."""
        hip = self.hip
        device = self._check(hip.hipGetDevice(), "hipGetDevice")
        return int(self._check(hip.hipDeviceGetAttribute(
            hip.hipDeviceAttribute_t.hipDeviceAttributeMultiprocessorCount, device), "hipDeviceGetAttribute"))

    def module_load(self, image: bytes):
        return self._check(self.hip.hipModuleLoadData(image), "hipModuleLoadData")

    def function(self, module, name: str):
        return self._check(self.hip.hipModuleGetFunction(module, name.encode()), f"hipModuleGetFunction({name})")

    def malloc(self, nbytes: int) -> int:
        return self._check(self.hip.hipMalloc(max(1, nbytes)), "hipMalloc")

    def free(self, ptr) -> None:
        self._check(self.hip.hipFree(ptr), "hipFree")

    def to_device(self, ptr, host: np.ndarray) -> None:
        self._check(self.hip.hipMemcpy(ptr, host, host.nbytes, self.hip.hipMemcpyKind.hipMemcpyHostToDevice),
                    "hipMemcpy to the device")

    def to_host(self, host: np.ndarray, ptr) -> None:
        self._check(self.hip.hipMemcpy(host, ptr, host.nbytes, self.hip.hipMemcpyKind.hipMemcpyDeviceToHost),
                    "hipMemcpy to the host")

    def address(self, ptr) -> int:
        return int(ptr)

    def launch(self, function, grid, block, kernarg: bytes) -> None:
        buf = ctypes.create_string_buffer(kernarg, len(kernarg))
        size = ctypes.c_size_t(len(kernarg))
        extra = (ctypes.c_void_p * 5)(LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(buf), LAUNCH_PARAM_BUFFER_SIZE,
                                      ctypes.addressof(size), LAUNCH_PARAM_END)
        self._check(self.hip.hipModuleLaunchKernel(function, *grid, *block, 0, None, None, extra),
                    "hipModuleLaunchKernel")

    def event(self):
        return self._check(self.hip.hipEventCreate(), "hipEventCreate")

    def record(self, event) -> None:
        self._check(self.hip.hipEventRecord(event, None), "hipEventRecord")

    def synchronize(self, event) -> None:
        self._check(self.hip.hipEventSynchronize(event), "hipEventSynchronize")

    def elapsed_ms(self, start, stop) -> float:
        return float(self._check(self.hip.hipEventElapsedTime(start, stop), "hipEventElapsedTime"))


def validation_indices(total: int, count: int) -> np.ndarray:
    """Which of ``total`` elements of D to compare: all for -1 or count >= total, none for 0, else ``count``
    indices spread with a prime stride (Tensile's client spreads its NumElementsToValidate the same way)."""
    if count < 0 or count >= total:
        return np.arange(total)
    if count == 0:
        return np.arange(0)
    stride = max(1, total // count)
    while not _prime(stride) and stride > 1:
        stride -= 1
    return (np.arange(count, dtype=np.int64) * stride) % total


def _prime(n: int) -> bool:
    return n >= 2 and all(n % p for p in range(2, int(n ** 0.5) + 1))


def initial_instance(contract, size: GemmSize, protocol: TimingProtocol, seed: int = 0, float8_ocp: bool = False):
    """Host buffers as DataInitType* ask (random: the reference's random data, never zeros, which change power
    draw and clocks), and alpha, beta. ``float8_ocp``: fp8/bf8 data in the OCP formats (gfx950's; the kernel's
    architecture says, ``runtime.base.float8_ocp``), else gfx942's FNUZ."""
    from tensile_asm.benchmark.reference import from_float, make_instance

    for t in ("A", "B", "C", "D", "Alpha", "Beta"):
        v = protocol.data_init[t]
        allowed = DATA_INIT if t in "ABCD" else _SCALAR_INIT
        if v not in allowed:
            raise UserError(f"GlobalParameters: DataInitType{t} {v} is not supported by the hip backend; use "
                            f"{', '.join(f'{k} ({DATA_INIT[k]})' for k in allowed)}")
    batch = size.batch if contract.batched else 1
    inst = make_instance(size.m, size.n, size.k, batch, contract.transpose_a, contract.transpose_b, seed=seed,
                         data_type=contract.data_type, dest_type=contract.dest_type, float8_ocp=float8_ocp)
    for t in "ABC":
        v = protocol.data_init[t]
        if v != 3:
            kind = contract.data_type if t in "AB" else contract.dest_type
            inst.arrays[t] = from_float(np.full(inst.arrays[t].size, float(v)), kind, float8_ocp)
    return inst, _SCALAR_INIT[protocol.data_init["Alpha"]], _SCALAR_INIT[protocol.data_init["Beta"]]


class SmiMonitor:
    """The GPU's current shader clock, memory clock (MHz) and edge temperature (C), through ``amdsmi``."""

    def __init__(self, index: int = 0, smi: Any = None):
        if smi is None:
            import amdsmi as smi  # ROCm's AMD SMI Python package
            smi.amdsmi_init()
        self.smi = smi
        handles = smi.amdsmi_get_processor_handles()
        if not handles or index >= len(handles):
            raise UserError(f"AMD SMI sees {len(handles or [])} GPU(s); there is no GPU {index} to monitor")
        self.handle = handles[index]

    def _clock(self, kind) -> float:
        info = self.smi.amdsmi_get_clock_info(self.handle, kind)
        return float(info.get("clk", info.get("cur_clk")))

    def sample(self) -> dict[str, float]:
        s = self.smi
        return {"sclk_mhz": self._clock(s.AmdSmiClkType.GFX), "mclk_mhz": self._clock(s.AmdSmiClkType.MEM),
                "temp_c": float(s.amdsmi_get_temp_metric(self.handle, s.AmdSmiTemperatureType.EDGE,
                                                         s.AmdSmiTemperatureMetric.CURRENT))}


def monitor_summary(samples: list[dict[str, float]]) -> str:
    """'sclk 1502-1700 MHz (median 1650), mclk ..., edge 45-71 C over N samples'."""
    if not samples:
        return "no clock samples"
    parts = []
    for key, label, unit in (("sclk_mhz", "sclk", "MHz"), ("mclk_mhz", "mclk", "MHz"), ("temp_c", "edge", "C")):
        v = np.array([x[key] for x in samples], dtype=float)
        parts.append(f"{label} {v.min():g}-{v.max():g} {unit} (median {np.median(v):g})")
    return ", ".join(parts) + f" over {len(samples)} samples"


class HipRuntime(Runtime):
    """Measured on an AMD GPU."""

    name = "hip"
    provenance = MEASURED

    @classmethod
    def unavailable(cls) -> str | None:
        try:
            api = HipApi()
        except ImportError:
            return "hip-python is not installed (pip install tensile-asm[hip], with ROCm's HIP runtime)"
        try:
            count = api.device_count()
        except (UserError, OSError, RuntimeError) as e:
            return f"no AMD GPU is visible to HIP ({e})"
        return None if count > 0 else "no AMD GPU is visible to HIP (hipGetDeviceCount found none)"

    def __init__(self, api: Any = None, device: str | None = None, monitor: Any = True):
        """``monitor``: True (HardwareMonitor: AMD SMI if importable), False, or an object with ``sample()``."""
        self.api = api if api is not None else HipApi()
        self.device = device
        self._modules: dict = {}
        self.monitor, self.monitor_note = None, "clocks not logged (HardwareMonitor false)"
        if monitor is True and self.name != "hip":      # a backend built on this one for another vendor's GPU
            monitor, self.monitor_note = False, ""
        if monitor is True:
            try:
                self.monitor = SmiMonitor()
            except ImportError:
                self.monitor_note = "clocks not logged: AMD SMI's Python package (amdsmi, part of ROCm) is not installed"
            except Exception as e:      # the library's own errors: no driver access, a VM guest...
                self.monitor_note = f"clocks not logged: AMD SMI failed ({type(e).__name__}: {e})"
        elif monitor:
            self.monitor = monitor

    def load(self, code):
        """{kernel name: HIP function} of the code object(s), each module loaded once."""
        paths = code_paths(code)
        files = set(map(str, paths.values())) if isinstance(paths, dict) else {str(paths)}
        for path in files:
            st = Path(path).stat()
            key = (path, st.st_mtime_ns, st.st_size)
            if key not in self._modules:
                self._modules[key] = self.api.module_load(Path(path).read_bytes())
        return paths

    def _function(self, code, kernel: str):
        paths = code_paths(code)
        path = str(paths.get(kernel, next(iter(paths.values()))) if isinstance(paths, dict) else paths)
        st = Path(path).stat()
        self.load(path)
        return self.api.function(self._modules[(path, st.st_mtime_ns, st.st_size)], kernel)

    def _device_buffers(self, contract, inst) -> dict:
        ptrs = {}
        for t in "ABCD":
            ptrs[t] = self.api.malloc(inst.arrays[t].nbytes)
            self.api.to_device(ptrs[t], inst.arrays[t])
        ws = contract.workspace(inst.m, inst.n, inst.batch)
        if ws is not None:
            ptrs["WS"] = self.api.malloc(ws.elements * ws.element_bytes)
        return ptrs

    def _launches(self, code, contract, inst, alpha, beta, ptrs):
        if contract.pointer_array:
            raise UserError(f"kernel {contract.name}: pointer-array (StridedBatched false) kernels are not run by "
                            f"the hip backend yet; verify them on the emulator (tensile-asm verify)")
        addresses = {t: self.api.address(p) for t, p in ptrs.items()}
        out = []
        for launch in contract.launches(m=inst.m, n=inst.n, k=inst.k, batch=inst.batch, ld=inst.ld,
                                        batch_stride=inst.batch_stride, initial_stride=inst.first_stride, alpha=alpha, beta=beta, addresses=addresses,
                                        cu_count=self.api.cu_count() if hasattr(self.api, "cu_count") else None):
            params = KernelParams(launch.kernarg(), [a.offset for a in launch.layout])
            out.append((self._function(code, launch.kernel), launch.grid, launch.block, params))
        return out

    def run_gemm(self, code, contract, inst, alpha: float, beta: float) -> GemmRun:
        ptrs = self._device_buffers(contract, inst)
        try:
            for f, grid, block, kernarg in self._launches(code, contract, inst, alpha, beta, ptrs):
                self.api.launch(f, grid, block, kernarg)
            d = np.empty_like(inst.arrays["D"])
            self.api.to_host(d, ptrs["D"])
        finally:
            for p in ptrs.values():
                self.api.free(p)
        return GemmRun(d, None, self.name, MEASURED)

    def time_gemm(self, code, contract, size: GemmSize, protocol: TimingProtocol, alpha: float = 1.5,
                  beta: float = 0.5) -> GemmTiming:
        inst, alpha, beta = initial_instance(contract, size, protocol, float8_ocp=float8_ocp(code, contract))
        beta = beta if contract.use_beta else 0.0
        ptrs = self._device_buffers(contract, inst)
        failures: list[str] = []
        try:
            launches = self._launches(code, contract, inst, alpha, beta, ptrs)

            def enqueue():
                start, stop = self.api.event(), self.api.event()
                self.api.record(start)
                for f, grid, block, kernarg in launches:
                    self.api.launch(f, grid, block, kernarg)
                self.api.record(stop)
                return start, stop

            def after_warmups():
                if protocol.num_elements_to_validate == 0:
                    return
                for f, grid, block, kernarg in launches:     # one GEMM on the initial data, then compare
                    self.api.launch(f, grid, block, kernarg)
                d = np.empty_like(inst.arrays["D"])
                self.api.to_host(d, ptrs["D"])
                failures.extend(validate_elements(inst, d, alpha, beta, protocol.num_elements_to_validate, contract))

            readings: list[dict] = []
            armed = []      # samples are taken after the timed synchronisations, not the warm-ups'

            def synchronize(event):
                self.api.synchronize(event)
                if self.monitor is not None and armed:
                    readings.append(self.monitor.sample())

            def after_warmups_then_arm():
                after_warmups()
                armed.append(True)

            seconds, samples = run_protocol(protocol, ProtocolHooks(enqueue, synchronize,
                                                                    self.api.elapsed_ms,
                                                                    after_warmups=after_warmups_then_arm))
        finally:
            for p in ptrs.values():
                self.api.free(p)
        if failures:
            raise UserError(f"kernel {contract.name} at {size}: {failures[0]}")
        return GemmTiming(self.name, MEASURED, size, seconds, samples,
                          f"HIP events, {protocol.num_benchmarks}x{protocol.syncs_per_benchmark}x"
                          f"{protocol.enqueues_per_sync} GEMMs after {protocol.num_warmups} warm-ups"
                          + (f"; {monitor_summary(readings)}" if self.monitor is not None
                             else f"; {self.monitor_note}" if self.monitor_note else ""))


def validate_elements(inst, d: np.ndarray, alpha: float, beta: float, count: int, contract) -> list[str]:
    """The chosen elements of D against the float64 reference (the tolerance ``benchmark.reference`` uses)."""
    from tensile_asm.benchmark.reference import reference, to_float64, tolerance

    ref, scale = reference(inst, alpha, beta)
    got = to_float64(inst.view("D", d), inst.dest_type, inst.float8_ocp)
    flat_ref, flat_scale, flat_got = ref.reshape(-1), scale.reshape(-1), got.reshape(-1)
    idx = validation_indices(flat_ref.size, count)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.abs(flat_got[idx] - flat_ref[idx]) / np.maximum(flat_scale[idx], np.finfo(np.float64).tiny)
    rel = np.where(np.isnan(flat_got[idx]), np.inf, rel)
    tol = tolerance(inst.k, inst.data_type, inst.dest_type, "H" if contract.compute_type == "H" else None)
    bad = np.nonzero(~(rel <= tol))[0]
    if bad.size:
        i = int(idx[bad[0]])
        return [f"{bad.size} of {idx.size} validated elements of D differ from the reference (first: element {i}, "
                f"{flat_got[i]!r} for {flat_ref[i]!r})"]
    return []
