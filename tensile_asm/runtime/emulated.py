"""Launch a GEMM kernel of ours on the CPU emulator, as its contract (``tensile_asm.gemm``) says."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tensile_asm.benchmark.reference import GemmInstance
from tensile_asm.gemm import GemmKernelContract

# numpy storage of the workspace's accumulator, by its bytes
_ACCUMULATOR = {4: np.float32, 8: np.float64}


@dataclass
class LaunchResult:
    d: np.ndarray           # the D buffer after the kernel ran
    stats: object           # what the emulator reports for the GEMM launch (instructions, waves, ...)


def emulator_argument(kind: str, v):
    """An argument value as the emulator lays it out: arrays become buffers, scalars take their kind."""
    if isinstance(v, np.ndarray):
        return v
    if kind == "f16":   # the half's bits in the low 16 bits of a 4-byte slot
        return np.uint32(np.float16(v).view(np.uint16))
    return {"f32": np.float32, "f64": np.float64, "u64": np.uint64, "u32": np.uint32}[kind](v)


class EmulatedRuntime:
    """Runs kernels on ``tensile_asm.emulator`` — an emulation, not a measurement."""

    name = "emulator"

    def __init__(self, strict: bool = True, source: str | None = None):
        self.strict = strict
        self.source = source    # the .s text of the code object, so errors can name its lines

    def run_gemm(self, co_path: Path, contract: GemmKernelContract, inst: GemmInstance,
                 alpha: float, beta: float) -> LaunchResult:
        """Every launch the contract lists (GlobalSplitU's helper kernel included), in order, on copies
        of the instance's buffers; returns D."""
        from tensile_asm.emulator import Emulator

        buffers = {t: inst.arrays[t].copy() for t in "ABCD"}
        ws = contract.workspace(inst.m, inst.n, inst.batch)
        if ws is not None:      # poisoned: every element the post-GSU kernel reads must have been written
            buffers["WS"] = np.full(ws.elements, np.nan, dtype=_ACCUMULATOR[ws.element_bytes])
        emulator = Emulator.load(str(co_path), strict=self.strict, source=self.source)
        stats = None
        for launch in contract.launches(m=inst.m, n=inst.n, k=inst.k, batch=inst.batch, ld=inst.ld,
                                        batch_stride=inst.batch_stride, alpha=alpha, beta=beta, addresses=buffers):
            args = [emulator_argument(a.kind, launch.values[a.name]) for a in launch.layout]
            result = emulator.launch(launch.kernel, grid=launch.grid, block=launch.block, args=args)
            if launch.kernel == contract.name:
                stats = result
        return LaunchResult(buffers["D"], stats)
