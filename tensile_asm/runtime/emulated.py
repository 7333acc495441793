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


def _scalar(kind: str, v):
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

    def run_gemm(self, co_path: Path, kernel_name: str, geometry: Geometry, inst: GemmInstance,
                 alpha: float, beta: float) -> LaunchResult:
        from tensile_asm.emulator import Emulator

        layout = argument_layout(geometry.batched, geometry.use_beta, geometry.compute_type)
        buffers = {t: inst.arrays[t].copy() for t in "ABCD"}
        batch = inst.batch if geometry.batched else 1
        ld, batch_stride, gemm_buffers = inst.ld, inst.batch_stride, buffers
        if geometry.writes_workspace:
            # MultipleBuffer: the GEMM writes packed partial tiles (accumulator type) to a workspace
            workspace = np.full(geometry.global_split_u * inst.m * inst.n * batch, np.nan,
                                dtype=np.float64 if geometry.acc_regs == 2 else np.float32)
            gemm_buffers = {**buffers, "D": workspace}
            ld = {**inst.ld, "D": inst.m}
            batch_stride = {**inst.batch_stride, "D": inst.m * inst.n}
        values = argument_values(
            m=inst.m, n=inst.n, k=inst.k, batch=inst.batch, ld=ld, batch_stride=batch_stride,
            tensor2d_size={t: inst.tensor2d_size(t) for t in "AB"}, alpha=alpha, beta=beta,
            macro_tile=(geometry.mt0, geometry.mt1), addresses=gemm_buffers,
            workgroup_mapping=geometry.workgroup_mapping)
        args = [_scalar(arg.kind, values[arg.name]) for arg in layout]
        grid = (values["NumWorkGroups0"], values["NumWorkGroups1"] * geometry.global_split_u, batch)
        block = (geometry.num_threads, 1, 1)
        emulator = Emulator.load(str(co_path), strict=self.strict, source=self.source)
        beta_eff = beta if geometry.use_beta else 0.0
        if geometry.global_split_u > 1 and not geometry.writes_workspace:
            self._beta_only(emulator, geometry, inst, buffers, beta_eff)
        stats = emulator.launch(kernel_name, grid=grid, block=block, args=args)
        if geometry.writes_workspace:
            self._post_gsu(emulator, geometry, inst, buffers, gemm_buffers["D"], alpha, beta_eff)
        return LaunchResult(buffers["D"], stats)

    def _post_gsu(self, emulator, geometry: Geometry, inst: GemmInstance, buffers: dict, workspace, alpha, beta):
        """MultipleBuffer: D = alpha * (sum of the slices' partial tiles) + beta*C."""
        from tensile_asm.writer.elementwise import COLS, ROWS, grid
        from tensile_asm.writer.post_gsu import post_gsu_layout, post_gsu_name

        batch = inst.batch if geometry.batched else 1
        values = {"AddressD": buffers["D"], "AddressC": buffers["C"], "AddressWS": workspace,
                  "StridesD0": inst.ld["D"], "StridesD1": inst.batch_stride["D"], "StridesC0": inst.ld["C"],
                  "StridesC1": inst.batch_stride["C"], "SizesFree0": inst.m, "SizesFree1": inst.n,
                  "SizesFree2": batch, "Alpha": alpha, "Beta": beta}
        layout = post_gsu_layout(geometry.compute_type)
        args = [_scalar(a.kind, values[a.name]) for a in layout]
        name = post_gsu_name(geometry.batched, geometry.dest_type, geometry.compute_type, geometry.global_split_u)
        emulator.launch(name, grid=grid(inst.m, inst.n, batch), block=(ROWS * COLS, 1, 1), args=args)

    def _beta_only(self, emulator, geometry: Geometry, inst: GemmInstance, buffers: dict, beta: float) -> None:
        """GlobalSplitU: D = beta*C first; the GEMM's slices then add into D atomically."""
        from tensile_asm.writer.beta_only import ROWS, COLS, beta_only_grid, beta_only_layout, beta_only_name

        values = {"AddressD": buffers["D"], "AddressC": buffers["C"], "StridesD0": inst.ld["D"],
                  "StridesD1": inst.batch_stride["D"], "StridesC0": inst.ld["C"], "StridesC1": inst.batch_stride["C"],
                  "SizesFree0": inst.m, "SizesFree1": inst.n, "SizesFree2": inst.batch, "Beta": beta}
        args = [_scalar(a.kind, values[a.name]) for a in beta_only_layout()]
        grid = beta_only_grid(inst.m, inst.n, inst.batch if geometry.batched else 1)
        emulator.launch(beta_only_name(geometry.batched), grid=grid, block=(ROWS * COLS, 1, 1), args=args)
