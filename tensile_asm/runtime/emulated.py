"""Launch a GEMM kernel of ours on the CPU emulator, with Tensile's kernel arguments."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tensile_asm.benchmark.reference import GemmInstance
from tensile_asm.writer.arguments import argument_layout, argument_values
from tensile_asm.writer.context import Geometry


@dataclass
class LaunchResult:
    d: np.ndarray           # the D buffer after the kernel ran
    stats: object           # whatever the emulator reports (instructions, waves, ...)


class EmulatedRuntime:
    """Runs kernels on ``tensile_asm.emulator`` — an emulation, not a measurement."""

    name = "emulator"

    def __init__(self, strict: bool = True):
        self.strict = strict

    def run_gemm(self, co_path: Path, kernel_name: str, geometry: Geometry, inst: GemmInstance,
                 alpha: float, beta: float) -> LaunchResult:
        from tensile_asm.emulator import Emulator

        layout = argument_layout(geometry.batched, geometry.use_beta, geometry.compute_type)
        buffers = {t: inst.arrays[t].copy() for t in "ABCD"}
        values = argument_values(
            m=inst.m, n=inst.n, k=inst.k, batch=inst.batch, ld=inst.ld, batch_stride=inst.batch_stride,
            tensor2d_size={t: inst.tensor2d_size(t) for t in "AB"}, alpha=alpha, beta=beta,
            macro_tile=(geometry.mt0, geometry.mt1), addresses=buffers,
            workgroup_mapping=geometry.workgroup_mapping)
        args = []
        for arg in layout:
            v = values[arg.name]
            if isinstance(v, np.ndarray):
                args.append(v)
            elif arg.kind == "f32":
                args.append(np.float32(v))
            elif arg.kind == "f64":
                args.append(np.float64(v))
            elif arg.kind == "f16":   # the half's bits in the low 16 bits of a 4-byte slot
                args.append(np.uint32(np.float16(v).view(np.uint16)))
            elif arg.kind == "u64":
                args.append(np.uint64(v))
            else:
                args.append(np.uint32(v))
        batch = inst.batch if geometry.batched else 1
        grid = (values["NumWorkGroups0"], values["NumWorkGroups1"] * geometry.global_split_u, batch)
        block = (geometry.num_threads, 1, 1)
        emulator = Emulator.load(str(co_path), strict=self.strict)
        if geometry.global_split_u > 1:
            self._beta_only(emulator, geometry, inst, buffers, beta if geometry.use_beta else 0.0)
        stats = emulator.launch(kernel_name, grid=grid, block=block, args=args)
        return LaunchResult(buffers["D"], stats)

    def _beta_only(self, emulator, geometry: Geometry, inst: GemmInstance, buffers: dict, beta: float) -> None:
        """GlobalSplitU: D = beta*C first; the GEMM's slices then add into D atomically."""
        from tensile_asm.writer.beta_only import ROWS, COLS, beta_only_grid, beta_only_layout, beta_only_name

        values = {"AddressD": buffers["D"], "AddressC": buffers["C"], "StridesD0": inst.ld["D"],
                  "StridesD1": inst.batch_stride["D"], "StridesC0": inst.ld["C"], "StridesC1": inst.batch_stride["C"],
                  "SizesFree0": inst.m, "SizesFree1": inst.n, "SizesFree2": inst.batch, "Beta": beta}
        args = [values[a.name] if a.kind == "u64" else (np.float32(values[a.name]) if a.kind == "f32"
                else np.uint32(values[a.name])) for a in beta_only_layout()]
        grid = beta_only_grid(inst.m, inst.n, inst.batch if geometry.batched else 1)
        emulator.launch(beta_only_name(geometry.batched), grid=grid, block=(ROWS * COLS, 1, 1), args=args)
