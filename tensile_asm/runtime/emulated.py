"""The ``emulator`` backend of the Runtime interface (``runtime.base``): launch a GEMM kernel on the CPU
emulator, as its contract (``tensile_asm.gemm``) says. D is emulated; times come from the emulator's cycle
model of one workgroup and are labelled modelled."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from tensile_asm.benchmark.reference import (GemmInstance, batch_buffers, from_float, gather_batches,
                                             poison_value)
from tensile_asm.emulator.initial import PointerArray
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.errors import UserError
from tensile_asm.runtime.base import (EMULATED, MODELLED, GemmRun, GemmSize, GemmTiming, Runtime, TimingProtocol,
                                      code_paths, float8_ocp)

# numpy storage of the workspace's accumulator, by its bytes

# Pointer-array launches: each matrix's batches start this many 16-byte units into their own buffers
# (OffsetD/C/A/B = units * 16 / bytes per element), so a kernel that ignores an offset reads filler
# (C, A, B: the guard value) or writes over poison (D) and fails.
POINTER_ARRAY_LEAD_UNITS = {"D": 2, "C": 3, "A": 1, "B": 2}


def emulator_argument(kind: str, v):
    """An argument value as the emulator lays it out: arrays become buffers, scalars take their kind."""
    if isinstance(v, (np.ndarray, PointerArray)):
        return v
    if kind == "f16":   # the half's bits twice in a 4-byte slot, as Tensile's host passes alpha, alpha_2
        bits = int(np.float16(v).view(np.uint16))
        return np.uint32(bits | bits << 16)
    if kind == "i32":   # an int32 alpha/beta, two's complement in its slot
        return np.uint32(int(v) & 0xFFFFFFFF)
    return {"h16": np.float16, "f32": np.float32, "f64": np.float64, "c32": np.complex64, "c64": np.complex128, "u64": np.uint64, "u32": np.uint32}[kind](v)


def _scalar_bytes(kind: str, size: int, v) -> bytes:
    value = emulator_argument(kind, v)
    raw = value.tobytes() if isinstance(value, np.generic) else int(value).to_bytes(size, "little")
    return raw.ljust(size, b"\0")[:size]


def kernel_arguments(kernel, layout, values) -> list:
    """The launch's argument values in the kernel's own metadata arguments (``kernel``: a
    ``codeobject.KernelObject``, or None to pass ``layout`` as it is). Ours declare one metadata argument
    per layout entry; Tensile's group several of ours under one name (StridesD: a u64 holding
    StridesD0 and StridesD1; SizesFree: u96). Each of the kernel's arguments takes the contract's
    arguments of its name (or its name and an index), which must fill it exactly at its offset and
    be used up; anything else is a contract mismatch, reported naming the argument."""
    plain = [emulator_argument(a.kind, values[a.name]) for a in layout]
    if kernel is None:
        return plain
    declared = [a for a in kernel.args if not str(a.get(".value_kind", "")).startswith("hidden_")]
    if [(a.get(".name"), a.get(".offset"), a.get(".size")) for a in declared] == \
            [(a.name, a.offset, a.size) for a in layout]:
        return plain
    # Tensile's HIP helper kernels (beta-only, conversion) declare unnamed arguments: one per argument the host
    # passes, each at its offset and size, which is the contract's layout (gemm/helpers.py)
    if declared and all(not a.get(".name") for a in declared) and \
            [(a.get(".offset"), a.get(".size")) for a in declared] == [(a.offset, a.size) for a in layout]:
        return plain
    out, used = [], set()
    for md in declared:
        name, off, size = str(md.get(".name")), int(md[".offset"]), int(md[".size"])
        parts = [a for a in layout if a.name == name or (a.name.startswith(name) and a.name[len(name):].isdigit())]
        if not parts or parts[0].offset != off or sum(a.size for a in parts) != size or \
                any(b.offset != a.offset + a.size for a, b in zip(parts, parts[1:])):
            ours = ", ".join(f"{a.name} ({a.size} bytes at {a.offset})" for a in parts) or "none of that name"
            raise UserError(f"kernel {kernel.name}: its argument {name} ({size} bytes at offset {off}) does not "
                            f"match the GEMM contract's arguments (ours: {ours})")
        used.update(a.name for a in parts)
        if len(parts) == 1:
            out.append(emulator_argument(parts[0].kind, values[parts[0].name]))
        else:
            out.append(int.from_bytes(b"".join(_scalar_bytes(a.kind, a.size, values[a.name]) for a in parts),
                                      "little"))
    unused = [a.name for a in layout if a.name not in used]
    if unused:
        raise UserError(f"kernel {kernel.name}: it takes no argument for the GEMM contract's {', '.join(unused)}")
    return out


class EmulatedRuntime(Runtime):
    """Runs kernels on ``tensile_asm.emulator`` — an emulation, not a measurement."""

    name = "emulator"
    provenance = EMULATED

    def __init__(self, strict: bool = True, source: str | None = None, guard_bytes: int = 0,
                 guard_value: float = 1024.0, device: str | None = None, cu_count: int = 1,
                 kernarg_preload: bool = True):
        self.strict = strict
        # the emulated dispatch preloads kernel arguments into SGPRs where a kernel asks (gfx940+ firmware with
        # that support); False: as older firmware, which starts such a kernel at its entry (Emulator.launch)
        self.kernarg_preload = kernarg_preload
        self.device = device    # for time_gemm: a devices.yaml name (None: the architecture's default)
        self.source = source    # the .s text of the code object, so errors can name its lines
        # the compute units the emulated device reports (a persistent kernel's grid is a multiple of them;
        # the emulator runs the work-groups one after another, so few CUs make each loop over more tiles)
        self.cu_count = cu_count
        # bytes placed after A and B (0: none, so any read past them is a memory fault), all holding
        # guard_value: finite, as the memory a GPU reads there is, and large, so that a guard value which
        # reaches D (other than times zero) fails the comparison
        self.guard_bytes = guard_bytes
        self.guard_value = guard_value
        self._emulators: dict = {}      # code object path -> loaded Emulator

    def load(self, code):
        """The emulator of each code object (one path, or {kernel: path}), loaded once."""
        from tensile_asm.emulator import Emulator

        paths = code_paths(code)
        out = {}
        for path in (set(map(str, paths.values())) if isinstance(paths, dict) else {str(paths)}):
            st = Path(path).stat()
            key = (path, st.st_mtime_ns, st.st_size)    # a file rebuilt at the same path is loaded again
            if key not in self._emulators:
                self._emulators[key] = Emulator.load(path, strict=self.strict, source=self.source)
            out[path] = self._emulators[key]
        return out

    def run_gemm(self, co_path: Path | Mapping[str, Path], contract: GemmKernelContract, inst: GemmInstance,
                 alpha: float, beta: float) -> GemmRun:
        """Every launch the contract lists (GlobalSplitU's helper kernel included), in order, on copies
        of the instance's buffers; returns D (gathered back into the instance's layout for a
        pointer-array kernel)."""
        if contract.pointer_array:
            return self._run_pointer_array(co_path, contract, inst, alpha, beta)
        buffers = {t: inst.arrays[t].copy() for t in "ABCD"}
        for t in "AB":
            buffers[t] = self._guarded(buffers[t], inst.data_type, inst.float8_ocp)
        stats = self._launch_all(co_path, contract, inst, alpha, beta, buffers)
        return GemmRun(buffers["D"], stats, self.name, EMULATED)

    def _guarded(self, arr: np.ndarray, type_char: str, float8_ocp: bool = False) -> np.ndarray:
        """``arr`` followed by ``guard_bytes`` of the guard value (the array itself when there are none)."""
        if not self.guard_bytes:
            return arr
        guard = from_float(np.full(-(-self.guard_bytes // arr.itemsize), self.guard_value), type_char, float8_ocp)
        return np.concatenate([arr, guard.astype(arr.dtype, copy=False)])

    def _run_pointer_array(self, co_path, contract: GemmKernelContract, inst: GemmInstance, alpha: float,
                           beta: float) -> GemmRun:
        """A pointer-array launch: every batch of every matrix in its own buffer, at an element offset,
        the buffers placed in a shuffled order (pointers neither contiguous nor rising with the batch)."""
        rng = np.random.default_rng(inst.batch * 1009 + inst.m * 31 + inst.n)
        buffers, offsets, per_batch, fill = {}, {}, {}, {}
        for t in "ABCD":
            type_char = inst.data_type if t in "AB" else inst.dest_type
            itemsize = inst.arrays[t].itemsize
            offsets[t] = POINTER_ARRAY_LEAD_UNITS[t] * 16 // itemsize
            if t == "D":
                fill[t] = poison_value(type_char, inst.float8_ocp)
            else:
                fill[t] = from_float(np.array([self.guard_value]), type_char, inst.float8_ocp)[0]
            per_batch[t] = batch_buffers(inst, t, offsets[t], fill[t])
            if t in "AB":
                per_batch[t] = [self._guarded(buf, type_char, inst.float8_ocp) for buf in per_batch[t]]
            buffers[t] = PointerArray(per_batch[t], [int(i) for i in rng.permutation(inst.batch)])
        stats = self._launch_all(co_path, contract, inst, alpha, beta, buffers, offsets)
        d, stray = gather_batches(inst, "D", per_batch["D"], offsets["D"], fill["D"])
        return GemmRun(d, stats, self.name, EMULATED, stray)

    def _launch_all(self, co_path, contract: GemmKernelContract, inst: GemmInstance, alpha: float, beta: float,
                    buffers: dict, offsets: dict | None = None):
        """Every launch of the contract, in order, with ``buffers`` as the addresses; the GEMM's stats."""
        ws = contract.workspace(inst.m, inst.n, inst.batch)
        if ws is not None:      # poisoned: every element the post-GSU kernel reads must have been written
            # fp32 NaNs: poison for every accumulator (fp64, complex parts) until the GEMM writes it
            buffers["WS"] = np.full(ws.elements * ws.element_bytes // 4, np.nan, dtype=np.float32)
        # one code object, or {kernel: code object} (a library's helper kernels live in Kernels.so-000-<gfx>.hsaco)
        paths = dict(co_path) if isinstance(co_path, Mapping) else {}

        def emulator_for(kernel: str):
            path = str(paths.get(kernel, paths.get(contract.name) if paths else co_path))
            return self.load(path)[path]
        stats = None
        for launch in contract.launches(m=inst.m, n=inst.n, k=inst.k, batch=inst.batch, ld=inst.ld,
                                        batch_stride=inst.batch_stride, initial_stride=inst.first_stride, alpha=alpha, beta=beta, addresses=buffers,
                                        cu_count=self.cu_count, offsets=offsets):
            emulator = emulator_for(launch.kernel)
            args = kernel_arguments(emulator.code.kernels.get(launch.kernel), launch.layout, launch.values)
            result = emulator.launch(launch.kernel, grid=launch.grid, block=launch.block, args=args,
                                     kernarg_preload=self.kernarg_preload)
            if launch.kernel == contract.name:
                stats = result
        return stats

    def time_gemm(self, co_path, contract: GemmKernelContract, size: GemmSize, protocol: TimingProtocol | None = None,
                  alpha: float = 1.5, beta: float = 0.5) -> GemmTiming:
        """One emulated run at ``size`` on random data; the time is the emulator's cycle model of the GEMM
        kernel's first workgroup times the rounds of workgroups over the device's CUs, at its clock: modelled
        (the protocol's repetitions would give the same number, so they are not run)."""
        import math

        from tensile_asm.benchmark.reference import make_instance
        from tensile_asm.runtime.devices import device as device_named
        from tensile_asm.runtime.devices import for_arch

        batch = size.batch if contract.batched else 1
        inst = make_instance(size.m, size.n, size.k, batch, contract.transpose_a, contract.transpose_b, seed=1,
                             data_type=contract.data_type, dest_type=contract.dest_type,
                             float8_ocp=float8_ocp(co_path, contract))
        run = self.run_gemm(co_path, contract, inst, alpha, beta if contract.use_beta else 0.0)
        stats = run.stats
        if stats is None or stats.estimated_cycles is None:
            raise UserError(f"kernel {contract.name}: the emulator's cycle model gave no estimate")
        arch = next(iter(self.load(co_path).values())).code.processor
        dev = device_named(self.device) if self.device else for_arch(arch)
        rounds = math.ceil(stats.workgroups / dev.cus)
        seconds = rounds * stats.estimated_cycles / dev.clock_hz
        return GemmTiming(self.name, MODELLED, size, seconds, (seconds,),
                          f"emulator cycle model ({stats.cycle_model}) of one workgroup x {rounds} rounds of "
                          f"{stats.workgroups} workgroups over {dev.name}'s {dev.cus} CUs at {dev.clock_mhz:g} MHz")
