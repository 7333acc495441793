"""Inspect a code object (or an assembly file, assembled first): per kernel, its resources and
occupancy, its main loop's instruction mix and static efficiency, and its LDS bank conflicts."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tensile_asm.codeobject import CodeObject, disassemble, read_code_object
from tensile_asm.errors import EmulationError, UserError
from tensile_asm.inspect.bank_conflicts import BankReport, LaunchSpec, replay
from tensile_asm.inspect.issue_model import IssueSummary, OverlapSummary, overlap, summarize
from tensile_asm.inspect.loop import Loop, main_loop
from tensile_asm.inspect.resources import Resources, kernel_resources
from tensile_asm.isa.arch import Arch, load_arch
from tensile_asm.isa.parser import AsmParseError, parse_objdump

ASM_SUFFIXES = (".s", ".S", ".asm")
_TARGET = re.compile(r'^\s*\.amdgcn_target\s+"?amdgcn-amd-amdhsa--(gfx[0-9a-f]+)', re.M)


@dataclass
class KernelReport:
    path: Path
    arch: Arch
    name: str
    resources: Resources
    loop: Loop | None
    issue: IssueSummary | None
    loop_reason: str
    banks: BankReport | None
    banks_reason: str
    overlap: OverlapSummary | None = None

    def as_dict(self) -> dict:
        d = {"file": str(self.path), "arch": self.arch.name, "kernel": self.name}
        d.update(self.resources.as_dict())
        if self.issue is None:
            d["loop"], d["loop_reason"] = None, self.loop_reason
        else:
            s = self.issue
            d["loop"] = {
                "start": _hex(self.loop.start_address), "end": _hex(self.loop.end_address),
                "instructions": s.instructions, "fma_instructions": s.fma_instructions, "mix": s.mix,
                "issue_cycles": s.clocks, "total_cycles": s.total_clocks, "fma_cycles": s.fma_clocks,
                "static_efficiency": round(s.static_efficiency, 6), "count_ratio": round(s.count_ratio, 6),
                "model": f"modelled: issue_cycles of isa/{self.arch.name}.yaml, one pass through the loop body",
            }
            if self.overlap is not None:
                o = self.overlap
                d["loop"]["overlap"] = {
                    "period_cycles": o.period, "mfma_cycles": o.mfma_clocks, "mfma_busy": round(o.mfma_busy, 6),
                    "model": "modelled: in-order issue, each MFMA runs in the matrix pipe while later instructions "
                             "issue; no memory latency; steady state of the loop body",
                }
        d["bank_conflicts"] = None if self.banks is None else self.banks.as_dict()
        if self.banks is None:
            d["bank_conflicts_reason"] = self.banks_reason
        return d


def _hex(a):
    return None if a is None else f"0x{a:x}"


def arch_of_assembly(text: str, path: Path, arch_name: str | None) -> Arch:
    if arch_name:
        return load_arch(arch_name)
    m = _TARGET.search(text)
    if not m:
        raise UserError(f"{path} has no '.amdgcn_target \"amdgcn-amd-amdhsa--gfxNNN\"' directive; "
                        f"name the architecture with --arch")
    return load_arch(m.group(1))


def inspect_kernel(co: CodeObject, arch: Arch, name: str, functions: dict, emulate: bool = True,
                   launch: LaunchSpec | None = None, path: Path | None = None) -> KernelReport:
    """Inspect one kernel of ``co``; ``functions`` is its parsed disassembly."""
    ko = co.kernels[name]
    fn = next((f for f in functions.values() if f.address == ko.entry), None)
    if fn is None:
        raise UserError(f"{co.path}: no code at the entry 0x{ko.entry:x} of kernel '{name}'")
    res = kernel_resources(ko, arch, fn.instructions)
    loop = main_loop(fn.instructions)
    issue, loop_reason = None, ""
    banks, banks_reason = None, ""
    if loop is None:
        loop_reason = "the kernel has no backward branch, so no loop"
        banks_reason = "not computed: no loop"
    else:
        issue = summarize(loop.instructions, arch)
        banks, banks_reason = _banks(co, arch, name, loop, emulate, launch)
    ov = overlap(loop.instructions, arch) if issue is not None and issue.mix.get("mfma") else None
    return KernelReport(path or co.path, arch, name, res, loop, issue, loop_reason, banks, banks_reason, ov)


def _banks(co, arch, name, loop, emulate, launch):
    if not any(ins.opcode.startswith("ds_") for ins in loop.instructions):
        return None, "not computed: the loop has no DS instructions"
    if not emulate:
        return None, "not computed: emulation turned off (--no-emulate)"
    if launch is None:
        from tensile_asm.inspect.launch import launch_spec

        launch, reason = launch_spec(co.kernels[name])
        if launch is None:
            return None, reason
    try:
        report = replay(co.path, name, loop.instructions, launch, arch)
    except (EmulationError, UserError) as e:
        return None, f"not computed: the emulated launch failed ({e})"
    if not report.instructions:
        return None, "not computed: the emulated launch never ran the loop's DS instructions"
    return report, ""


def inspect_code_object(path, arch_name: str | None = None, kernel: str | None = None, emulate: bool = True,
                        launch: LaunchSpec | None = None, arch: Arch | None = None,
                        shown_path: Path | None = None) -> list[KernelReport]:
    """Inspect every kernel of the code object at ``path`` (or only ``kernel``).

    ``arch`` overrides the architecture object (tests use a modified copy); ``launch`` gives the
    emulated launch for the bank-conflict count instead of the one ``inspect`` infers.
    """
    co = read_code_object(path)
    if arch is None:
        if arch_name and arch_name != co.processor:
            raise UserError(f"{shown_path or path} is a {co.processor} code object but --arch says {arch_name}; "
                            f"drop --arch or pass --arch {co.processor}")
        arch = load_arch(co.processor)
    if not co.kernels:
        raise UserError(f"{shown_path or path} holds no kernels (no '.kd' kernel descriptor symbols)")
    names = sorted(co.kernels)
    if kernel is not None:
        if kernel not in co.kernels:
            raise UserError(f"{shown_path or path} has no kernel '{kernel}'; it has {', '.join(names)}")
        names = [kernel]
    try:
        functions = parse_objdump(disassemble(co.path, co.processor),
                                 {n: a for n, (a, _) in co.functions.items()})
    except AsmParseError as e:
        raise UserError(f"cannot read the disassembly of {shown_path or path}: {e}") from None
    return [inspect_kernel(co, arch, n, functions, emulate, launch, shown_path) for n in names]


def inspect_file(path, arch_name: str | None = None, kernel: str | None = None, emulate: bool = True,
                 launch: LaunchSpec | None = None, arch: Arch | None = None) -> list[KernelReport]:
    """Inspect a ``.co`` file, or an assembly file (assembled and linked into a temporary ``.co``)."""
    from tensile_asm import toolchain

    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path} does not exist; pass a .co code object or a .s assembly file")
    if path.suffix not in ASM_SUFFIXES:
        return inspect_code_object(path, arch_name, kernel, emulate, launch, arch)
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise UserError(f"{path} is not a text assembly file; pass a .s file or a .co code object") from None
    asm_arch = arch or arch_of_assembly(text, path, arch_name)
    with tempfile.TemporaryDirectory(prefix="tensile-asm-inspect-") as tmp:
        co = Path(tmp) / (path.stem + ".co")
        toolchain.assemble_and_link(text, asm_arch, co, str(path))
        return inspect_code_object(co, None, kernel, emulate, launch, arch or asm_arch, shown_path=path)
