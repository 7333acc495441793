"""``Emulator``: load a code object, lay out kernel arguments, run workgroups wave by wave.

Workgroups run one after another; inside one, each wave runs until it reaches ``s_barrier`` or
``s_endpgm``, then the next wave runs; when every live wave waits at the barrier they all pass it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tensile_asm.codeobject import CodeObject, disassemble, read_code_object
from tensile_asm.emulator import batch, cycles, float_modes, fuse, initial
from tensile_asm.emulator.lds.gds import GdsMemory
from tensile_asm.emulator.strict.lds_races import LdsTracker
from tensile_asm.emulator.memory import scratch
from tensile_asm.emulator.memory.device import DeviceMemory, Fault
from tensile_asm.emulator.program import ENDPGM, Limits, Op, compile_ops, describe
from tensile_asm.emulator.strict import waitcnt as strict_mode
from tensile_asm.emulator.strict.global_races import GlobalRaces
from tensile_asm.errors import EmulationError, UserError
from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.parser import parse_objdump

DEFAULT_MAX_INSTRUCTIONS = 50_000_000      # per launch: a guard against kernels that never end


@dataclass
class LaunchResult:
    """Per-launch statistics."""

    kernel: str
    grid: tuple
    block: tuple
    workgroups: int = 0
    waves: int = 0
    instructions: int = 0                 # wave-instructions executed
    seconds: float = 0.0
    lds_bytes: int = 0
    strict: bool = True
    opcode_counts: dict = field(default_factory=dict)
    estimated_cycles: int | None = None   # cycle model of the first workgroup: modelled, not measured
    cycle_model: str = ""                 # the model's name (see emulator/cycles.py)
    cycle_estimate: object = None         # its CycleEstimate (per wave: issue clocks by class, waits)

    def __str__(self) -> str:
        return (f"{self.kernel}: {self.workgroups} workgroups, {self.waves} waves, {self.instructions} "
                f"instructions in {self.seconds:.3f} s")


class Workgroup:
    __slots__ = ("id", "lds", "lds_size", "lds_tracker", "memory", "waves", "vstore", "astore", "gds", "private")

    def __init__(self, wg_id, lds_size, memory, strict):
        self.id = wg_id
        self.lds_size = lds_size
        self.lds = np.zeros((lds_size + 3) // 4, np.uint32)
        self.lds_tracker = LdsTracker(len(self.lds)) if strict else None
        self.memory = memory
        self.waves = []
        self.gds = None                     # the launch's GdsMemory, shared by every workgroup
        self.private = None                 # scratch.PrivateMemory, made by the first private access


class _Loaded:
    """What one code object file yields once: parsed metadata, instructions, compiled programs."""

    def __init__(self, path: Path):
        self.code: CodeObject = read_code_object(path)
        self.arch = load_arch(self.code.processor)
        text = disassemble(path, self.code.processor)
        self.functions = parse_objdump(text, {n: a for n, (a, _) in self.code.functions.items()})
        self.programs: dict = {}

    def attach_source(self, asm_text: str) -> int:
        """Give each instruction the line of the ``.s`` it was assembled from, so strict errors can name
        it. A function's instructions are matched in order from its label; a function whose opcodes do
        not match the text one for one is left without lines. Returns how many functions matched."""
        from tensile_asm.isa.opcodes import strip_encoding_suffix
        from tensile_asm.isa.parser import parse_asm

        source, labels = parse_asm(asm_text)
        matched = 0
        for name, fn in self.functions.items():
            start = labels.get(name)
            if start is None:
                continue
            lines = source[start:start + len(fn.instructions)]
            if len(lines) == len(fn.instructions) and all(
                    strip_encoding_suffix(a.opcode) == strip_encoding_suffix(b.opcode)
                    for a, b in zip(lines, fn.instructions)):
                for src, ins in zip(lines, fn.instructions):
                    ins.source_line = src.source_line
                matched += 1
        return matched


_CACHE: dict = {}


def _load_cached(path: Path) -> _Loaded:
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    entry = _CACHE.get(key)
    if entry is None:
        if len(_CACHE) > 64:
            _CACHE.clear()
        entry = _CACHE[key] = _Loaded(path)
    return entry


class Emulator:
    """Runs the kernels of one code object on the CPU. ``strict`` turns on the hazard checks."""

    def __init__(self, loaded: _Loaded, strict: bool = True):
        self._loaded = loaded
        self.code = loaded.code
        self.arch = loaded.arch
        self.strict = strict

    @classmethod
    def load(cls, path, strict: bool = True, source: str | None = None) -> "Emulator":
        """``source``: the assembly text the code object was built from; errors then name its lines."""
        path = Path(path)
        if not path.is_file():
            raise UserError(f"code object {path} does not exist; build it first")
        loaded = _load_cached(path)
        if source is not None:
            loaded.attach_source(source)
        return cls(loaded, strict)

    @property
    def kernels(self) -> list[str]:
        return sorted(self.code.kernels)

    def _kernel(self, name: str):
        if name not in self.code.kernels:
            raise UserError(f"{self.code.path} has no kernel '{name}'; it has {', '.join(self.kernels) or 'none'}")
        return self.code.kernels[name]

    def instructions(self, name: str) -> list:
        ko = self._kernel(name)
        for fn in self._loaded.functions.values():
            if fn.address == ko.entry:
                return fn.instructions
        raise UserError(f"{self.code.path}: no code at the entry 0x{ko.entry:x} of kernel '{name}'")

    def limits(self, name: str) -> Limits:
        kd = self._kernel(name).descriptor
        total = kd.vgprs(self.arch.vgpr["granule"])
        sgprs = min(kd.sgprs(self.arch.sgpr.get("encoding_granule", 8)), self.arch.sgpr["max_user"])
        if self.arch.unified_vgpr_file:
            return Limits(min(kd.accum_offset, total), max(0, total - kd.accum_offset), sgprs)
        return Limits(total, total if self.arch.vgpr.get("accum") else 0, sgprs)

    def program(self, name: str) -> list:
        key = (name, self.strict)
        ops = self._loaded.programs.get(key)
        if ops is None:
            descriptor = self._kernel(name).descriptor
            code = self.instructions(name)
            if any(ins.opcode in ("s_call_b64", "s_swappc_b64") for ins in code):   # callees follow the kernel
                entries = {ko.entry for ko in self.code.kernels.values()}
                code = code + [i for fn in self._loaded.functions.values() if fn.address not in entries
                               for i in fn.instructions]
            float_modes.check(name, descriptor, code)
            ops = compile_ops(code, self.arch, descriptor, self.limits(name), self.strict)
            ops = fuse.fuse_runs(ops, flush_f32=descriptor.float_denorm_mode_32 != 3)
            self._loaded.programs[key] = ops
        return ops

    def launch(self, kernel: str, grid=(1, 1, 1), block=(64, 1, 1), args=(), lds_bytes=None,
               max_instructions: int = DEFAULT_MAX_INSTRUCTIONS, trace=None, trace_if=None,
               lockstep: bool = True, cycle_model: bool = True, gds=None,
               kernarg_preload: bool = True) -> LaunchResult:
        """Run ``kernel`` over ``grid`` workgroups of ``block`` work-items; ndarrays in ``args`` are
        device buffers whose final contents are copied back into them.

        ``trace(wave, instruction)``, when given, is called just before each executed instruction for
        which ``trace_if(instruction)`` is true (every instruction without ``trace_if``); it sees the
        wave's registers as the instruction will read them. An exception it raises ends the launch.

        ``cycle_model``: record the first workgroup's instruction sequences and set
        ``estimated_cycles`` from the cycle model (cycles.py; modelled, not measured).

        ``gds``: a numpy array whose bytes are the global data share (targets with GDS, e.g. gfx908:
        ``gds_bytes`` in isa/<gfx>.yaml), shared by every workgroup; copied in before the launch and
        back into the array after it, like buffer args. Without it a GDS instruction is an error.

        ``kernarg_preload``: the dispatch preloads kernel arguments, as firmware with that support does (gfx940+):
        for a kernel whose descriptor asks for it, the arguments' dwords arrive in SGPRs and the waves start 256
        bytes past the entry. False: as firmware without it, the waves start at the entry with only the kernarg
        pointer, and the kernel's header must load them (``initial.WaveSetup``).
        """
        start = time.perf_counter()
        ko = self._kernel(kernel)
        grid, block = _dims(grid, "grid"), _dims(block, "block")
        threads = block[0] * block[1] * block[2]
        max_wg = int(ko.metadata.get(".max_flat_workgroup_size", 1024))
        if threads > max_wg:
            raise UserError(f"block {block} has {threads} work-items but kernel '{kernel}' allows at most {max_wg} "
                            f"(.max_flat_workgroup_size); use a smaller block")
        kd = ko.descriptor
        lds = kd.group_segment_fixed_size if lds_bytes is None else int(lds_bytes)
        if lds < kd.group_segment_fixed_size or lds > self.arch.max_lds_bytes_per_workgroup:
            raise UserError(f"lds_bytes={lds_bytes} must lie between the kernel's fixed group segment "
                            f"({kd.group_segment_fixed_size}) and {self.arch.max_lds_bytes_per_workgroup}")
        scratch.check_launch(kd, kernel)
        ops = self.program(kernel)
        if trace is not None:
            ops = _traced(ops, trace, trace_if)
        gds_memory = None
        if gds is not None:
            capacity = self.arch.extra.get("gds_bytes")
            if not capacity:
                raise UserError(f"gds= given, but {self.arch.name} has no GDS (isa/{self.arch.name}.yaml)")
            gds_memory = GdsMemory(gds, int(capacity))
        memory = DeviceMemory()
        memory.races = GlobalRaces() if self.strict else None
        buffers = initial.marshal_args(ko, args, memory, grid, block, lds)
        setup = initial.WaveSetup(self.arch, kd, self.limits(kernel), grid, block, memory, buffers, lds,
                                  kernarg_preload=kernarg_preload)
        if setup.preloaded:
            start = ko.entry + initial.PRELOAD_SKIP
            setup.start_pc = next((i for i, op in enumerate(ops) if op.inst.address == start), None)
            if setup.start_pc is None:
                raise UserError(f"kernel '{kernel}' preloads kernel arguments, but no instruction starts 256 bytes "
                                f"past its entry (0x{start:x}), where a preloading dispatch starts it")
        counts = [0] * len(ops)
        result = LaunchResult(kernel, grid, block, lds_bytes=lds, strict=self.strict)
        budget = [max_instructions]
        with np.errstate(all="ignore"):
            for z in range(grid[2]):
                for y in range(grid[1]):
                    for x in range(grid[0]):
                        group = Workgroup((x, y, z), lds, memory, self.strict)
                        group.gds = gds_memory
                        setup.populate(group)
                        if memory.races is not None:
                            memory.races.begin(group.id)
                        recorder = cycles.Recorder(ops) if cycle_model and result.workgroups == 0 else None
                        _run_group(group, recorder.ops if recorder else ops, counts, self.strict, budget,
                                   lockstep=lockstep and trace is None)
                        if memory.races is not None:
                            memory.races.end()
                        if recorder is not None:
                            est = cycles.estimate([op.inst for op in ops], recorder.sequences, self.arch)
                            result.estimated_cycles, result.cycle_model = est.cycles, est.model
                            result.cycle_estimate = est
                        result.workgroups += 1
                        result.waves += len(group.waves)
        initial.copy_back(buffers)
        if gds_memory is not None:
            gds_memory.copy_back()
        result.instructions = sum(counts)
        mix: dict = {}
        for op, c in zip(ops, counts):
            if c:
                mix[op.inst.opcode] = mix.get(op.inst.opcode, 0) + c
        result.opcode_counts = dict(sorted(mix.items(), key=lambda kv: -kv[1]))
        result.seconds = time.perf_counter() - start
        return result


def _traced(ops, trace, trace_if) -> list:
    """A copy of ``ops`` whose selected ops call ``trace`` first (the compiled program stays untouched)."""
    out = []
    for op in ops:
        if op.parts is not None:
            op = op.parts[0]                 # traced runs go op by op
        if trace_if is None or trace_if(op.inst):
            def fn(w, _run=op.fn, _inst=op.inst):
                trace(w, _inst)
                return _run(w)
            hazard, op = op.hazard, Op(fn, op.srcs, op.defs, op.inst, op.index)
            op.hazard = hazard
        out.append(op)
    return out


def _dims(value, what) -> tuple:
    if isinstance(value, (int, np.integer)):
        value = (int(value),)
    dims = tuple(int(v) for v in value)
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise UserError(f"{what}={value!r} must be one to three positive integers")
    return dims + (1,) * (3 - len(dims))


def _run_group(group, ops, counts, strict, budget, lockstep=True) -> None:
    while True:
        if lockstep and batch.can_batch(group):
            batch.merge_pending(group)
            batch.run_batch(batch.WaveBatch(group, list(group.waves)), ops, counts, strict, budget)
        for w in group.waves:
            if not w.done and not w.at_barrier:
                _run_wave(w, ops, counts, strict, budget)
        live = [w for w in group.waves if not w.done]
        if group.lds_tracker is not None:
            group.lds_tracker.close_interval(group)
        if not live:
            return
        for w in live:                       # every live wave waits at the barrier: pass it
            w.at_barrier = False
            w.epoch += 1


def _run_wave(w, ops, counts, strict, budget) -> None:
    pc = w.pc
    st = w.rstate
    n = 0
    op = ops[pc] if pc < len(ops) else None
    limit = budget[0]
    try:
        while True:
            op = ops[pc]
            if op.parts is not None:
                width = fuse.run_fused(op, w, st, w.instructions + n + w.nops, counts, 1, strict,
                                       strict_mode.read_error, 1)
                n += width
                pc += width
                continue
            if strict:
                for k in op.srcs:
                    if st[k] != 1:
                        raise strict_mode.read_error(w, op, k)
                if op.hazard is not None:
                    op.hazard(w, w.instructions + n + w.nops)
            r = op.fn(w)
            if strict:
                for k in op.defs:
                    st[k] = 1
            counts[pc] += 1
            n += 1
            if r is None:
                pc += 1
            elif r >= 0:
                pc = r
            elif r == ENDPGM:
                w.done = True
                break
            else:
                w.at_barrier = True
                pc += 1
                break
            if n > limit:
                raise Fault(f"the launch executed more than {budget[0] + n} instructions without "
                            f"finishing (an endless loop?); pass max_instructions= to allow more")
    except Fault as e:
        raise EmulationError(f"at {describe(getattr(e, 'at', None) or op.inst)} ({w.describe()}): {e}") from None
    except IndexError:
        if pc >= len(ops):
            last = ops[-1].inst if ops else None
            raise EmulationError(f"{w.describe()} ran past the last instruction"
                                 f"{' ' + describe(last) if last else ''} without s_endpgm") from None
        raise
    finally:
        w.pc = pc
        w.instructions += n
        budget[0] -= n


__all__ = ["Emulator", "LaunchResult"]
