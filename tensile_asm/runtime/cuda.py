"""The ``cuda`` backend: HIP source kernels (``KernelLanguage: Source``) rendered for CUDA
(``tensile_asm.source.writer.write_source(..., language="cuda")``: the same template, the CUDA prelude),
compiled by NVRTC through CuPy and launched on an NVIDIA GPU, timed with CUDA events by Tensile's protocol:
measured -- on NVIDIA hardware, not on the AMD targets the kernels are written for.

It is the ``hip`` backend (``runtime.hip.HipRuntime``: buffers, kernarg bytes from the contract's launches,
DataInitType, validation, the protocol) with ``CudaApi`` in place of HIP: a "code object" is the rendered
``.cu`` file, compiled once per file; a launch passes one pointer per argument into the contract's kernarg bytes
(cuLaunchKernel's kernelParams), which matches the kernel's parameter list because both are the contract's
layout with natural alignment. A GlobalSplitU > 1 kernel's helper (beta-only or post-GSU) is looked up in the
same ``.cu`` file: render it with ``write_source(..., language="cuda", helper=True)`` (``source/helpers.py``).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from tensile_asm.errors import UserError
from tensile_asm.runtime.base import GemmSize, TimingProtocol
from tensile_asm.runtime.hip import HipRuntime

NVRTC_OPTIONS = ("--std=c++14", "-default-device")


class CudaApi:
    """CuPy, reduced to what the backend uses (HipApi's methods)."""

    def __init__(self):
        import cupy  # noqa: F401  (on the GPU machine)
        self.cp = cupy

    def device_count(self) -> int:
        return int(self.cp.cuda.runtime.getDeviceCount())

    def device_name(self) -> str:
        props = self.cp.cuda.runtime.getDeviceProperties(self.cp.cuda.Device().id)
        name = props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    def cu_count(self) -> int:
        """The device's multiprocessors (the contract picks GlobalSplitU's conversion variant from them)."""
        props = self.cp.cuda.runtime.getDeviceProperties(self.cp.cuda.Device().id)
        return int(props["multiProcessorCount"])

    def module_load(self, image: bytes):
        return self.cp.RawModule(code=image.decode(), options=NVRTC_OPTIONS, backend="nvrtc")

    def function(self, module, name: str):
        try:        # NVRTC compiles the module on its first function
            return module.get_function(name)
        except self.cp.cuda.compiler.CompileException as e:
            raise UserError(f"NVRTC rejected the source of {name}: {str(e).splitlines()[0]}") from None
        except self.cp.cuda.driver.CUDADriverError as e:
            raise UserError(f"the .cu text has no kernel {name} ({e}); a GlobalSplitU kernel's helper comes with "
                            f"write_source(..., language='cuda', helper=True)") from None

    def malloc(self, nbytes: int):
        return self.cp.cuda.alloc(max(1, nbytes))

    def free(self, ptr) -> None:
        pass    # CuPy returns the memory to its pool when the last reference goes

    def to_device(self, ptr, host: np.ndarray) -> None:
        host = np.ascontiguousarray(host)
        rt = self.cp.cuda.runtime
        rt.memcpy(int(ptr.ptr), host.ctypes.data, host.nbytes, rt.memcpyHostToDevice)

    def to_host(self, host: np.ndarray, ptr) -> None:
        rt = self.cp.cuda.runtime
        rt.memcpy(host.ctypes.data, int(ptr.ptr), host.nbytes, rt.memcpyDeviceToHost)

    def address(self, ptr) -> int:
        return int(ptr.ptr)

    def launch(self, function, grid, block, kernarg: bytes) -> None:
        """cuLaunchKernel with kernelParams: one pointer per argument into the kernarg bytes (its offsets come
        with it from the contract's layout, ``hip.KernelParams``); the whole-buffer ``extra`` route needs the
        buffer's size to equal the kernel's parameter size exactly, and the contract rounds it up to 8 bytes."""
        buf = ctypes.create_string_buffer(bytes(kernarg), max(1, len(kernarg)))
        base = ctypes.addressof(buf)
        params = (ctypes.c_void_p * max(1, len(kernarg.offsets)))(*(base + o for o in kernarg.offsets))
        stream = self.cp.cuda.get_current_stream().ptr
        # CuPy 13+ returns a RawKernel from get_function; its compiled Function (with the CUfunction) is .kernel
        handle = getattr(function, "kernel", function).ptr
        self.cp.cuda.driver.launchKernel(handle, *grid, *block, 0, stream, ctypes.addressof(params), 0)

    def event(self):
        return self.cp.cuda.Event()

    def record(self, event) -> None:
        event.record()

    def synchronize(self, event) -> None:
        event.synchronize()

    def elapsed_ms(self, start, stop) -> float:
        return float(self.cp.cuda.get_elapsed_time(start, stop))


class CudaRuntime(HipRuntime):
    """Measured on an NVIDIA GPU (source kernels rendered for CUDA)."""

    name = "cuda"

    @classmethod
    def unavailable(cls) -> str | None:
        try:
            api = CudaApi()
        except ImportError:
            return "CuPy is not installed (pip install cupy-cuda12x, with an NVIDIA driver)"
        try:
            count = api.device_count()
        except Exception as e:       # CuPy raises its CUDARuntimeError without a GPU or driver
            return f"no NVIDIA GPU is visible to CUDA ({e})"
        return None if count > 0 else "no NVIDIA GPU is visible to CUDA (cudaGetDeviceCount found none)"

    def __init__(self, api: Any = None, device: str | None = None):
        super().__init__(api if api is not None else CudaApi(), device)

    def time_gemm(self, code, contract, size: GemmSize, protocol: TimingProtocol, alpha: float = 1.5,
                  beta: float = 0.5):
        timing = super().time_gemm(code, contract, size, protocol, alpha, beta)
        return type(timing)(timing.backend, timing.provenance, timing.size, timing.seconds, timing.samples,
                            timing.detail.replace("HIP events", "CUDA events"))
