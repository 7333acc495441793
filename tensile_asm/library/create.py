"""create-library: logic files in, code object(s) + master library + support report out.

Flow: find the logic files for each architecture (by schedule alias), parse them, name every solution
(min naming over all solutions of the build, so kernel symbols and library names agree), ask the kernel
builder which solutions it supports (answered from parameters and limits, without writing kernels), build
those into one code object per architecture (``library/TensileLibrary_<gfx>.co``, a raw ELF, no offload
bundle), writing each kernel once (one whose writing fails, e.g. its registers do not fit, is reported as
not built), write ``library/TensileLibrary.yaml`` (or ``.dat``) listing only the built solutions, and
``support.json`` with one entry per solution.
Every output is written under a temporary name and renamed into place, after all inputs have been read.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from tensile_asm.errors import UserError
from tensile_asm.isa.arch import Arch, load_arch
from tensile_asm.library.fileio import publish, write_atomic
from tensile_asm.library.logic import LogicFile, find_logic_files, read_logic_file, schedule_alias
from tensile_asm.library.master import LibraryPart, build_master_library, write_master_library
from tensile_asm.solution.naming import min_names


class KernelBuilder(Protocol):
    def supports(self, solution, arch: Arch) -> str | None:
        """None if the solution can be built for ``arch`` (answered without writing it), else the reason."""

    def build_code_object(self, kernels: list[tuple[str, Any]], arch: Arch, out_path: Path) -> dict[str, str]:
        """Write each (name, solution) once and link them into ``out_path``; returns {name: reason} for the
        kernels that failed to be written (left out; nothing is written when every one failed)."""


@dataclass
class SupportEntry:
    name: str
    architecture: str
    built: bool
    reason: str | None
    logic_file: Path | None = None
    logic_index: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "architecture": self.architecture, "built": self.built, "reason": self.reason}


@dataclass
class CreateReport:
    out_dir: Path
    architectures: list[str]
    logic_files: list[Path]
    entries: list[SupportEntry]
    code_objects: list[Path] = field(default_factory=list)
    library_path: Path | None = None
    support_path: Path | None = None

    @property
    def built(self) -> list[SupportEntry]:
        return [e for e in self.entries if e.built]

    @property
    def not_built(self) -> list[SupportEntry]:
        return [e for e in self.entries if not e.built]

    def table(self) -> str:
        rows = [("arch", "built", "solution", "reason")]
        rows += [(e.architecture, "yes" if e.built else "no", e.name, e.reason or "") for e in self.entries]
        w0, w1 = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
        w2 = max(len(r[2]) for r in rows)
        lines = [f"{a:<{w0}}  {b:<{w1}}  {c:<{w2}}  {d}".rstrip() for a, b, c, d in rows]
        lines.append(f"{len(self.built)} built, {len(self.not_built)} not built")
        return "\n".join(lines)


@dataclass
class _Item:
    arch: str
    logic: LogicFile
    index: int
    solution: Any  # Solution or None
    reason: str | None
    name: str = ""


def parse_architectures(arch: str | Sequence[str]) -> list[str]:
    names = [a for a in (arch.replace(";", " ").replace(",", " ").split() if isinstance(arch, str) else arch) if a]
    if not names:
        raise UserError("no architecture given; use e.g. --architecture gfx90a")
    return list(dict.fromkeys(names))


def _default_builder() -> KernelBuilder:
    try:
        from tensile_asm.writer import build
    except ImportError as e:
        raise UserError(f"the kernel builder tensile_asm.writer.build cannot be imported ({e}); "
                        f"it is needed to build code objects") from None
    return build


def _collect(logic_dir: Path, archs: list[str]) -> tuple[list[_Item], list[Path]]:
    items: list[_Item] = []
    files: list[Path] = []
    for arch in archs:
        paths = find_logic_files(logic_dir, arch)
        if not paths:
            raise UserError(f"no logic files for {arch} under {logic_dir}: their names must contain the schedule "
                            f"name {schedule_alias(arch)!r} (e.g. {schedule_alias(arch)}_Cijk_Ailk_Bljk_SB.yaml)")
        for path in paths:
            lf = read_logic_file(path)
            files.append(path)
            file_reason = None
            if lf.architecture not in (arch, "fallback"):
                file_reason = f"{path.name} declares architecture {lf.architecture}, not {arch}"
            elif lf.library_type != "Matching":
                file_reason = f"{path.name}: LibraryType {lf.library_type} is not supported yet"
            for e in lf.entries:
                reason = file_reason or e.error
                items.append(_Item(arch, lf, e.index, None if reason else e.solution, reason))
    return items, files


def create_library(logic_dir: str | Path, out_dir: str | Path, arch: str | Sequence[str],
                   build: KernelBuilder | None = None, library_format: str = "yaml",
                   merge_files: bool = True) -> CreateReport:
    """Build code objects and the master library for ``arch`` (one gfx name or several, ``;``-separated)."""
    logic_dir, out_dir = Path(logic_dir), Path(out_dir)
    if library_format not in ("yaml", "msgpack"):
        raise UserError(f"library format {library_format!r} is not known; use yaml or msgpack")
    archs = parse_architectures(arch)
    arch_objs = {a: load_arch(a) for a in archs}
    items, files = _collect(logic_dir, archs)
    builder = build if build is not None else _default_builder()

    parsed = [it for it in items if it.solution is not None]
    for it, name in zip(parsed, min_names([it.solution for it in parsed], kernel=True)):
        it.name = name
    for it in items:
        if it.solution is None:
            it.name = it.logic.entries[it.index].stored_name or f"{it.logic.path.name}#{it.index}"
        elif it.solution.rejection is not None:
            it.reason = f"invalid solution: {it.solution.rejection}"
        else:
            it.reason = builder.supports(it.solution, arch_objs[it.arch])

    lib_dir = out_dir / "library"
    lib_dir.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path]] = []
    try:
        for a in archs:
            kernels = {it.name: it.solution for it in items if it.arch == a and it.reason is None}
            if not kernels:
                continue
            groups = [list(kernels.items())] if merge_files else [[kv] for kv in kernels.items()]
            for group in groups:
                final = lib_dir / (f"TensileLibrary_{a}.co" if merge_files else f"{group[0][0]}_{a}.co")
                fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=lib_dir)
                os.close(fd)
                staged.append((Path(tmp), final))
                failed = builder.build_code_object(group, arch_objs[a], Path(tmp))
                for it in items:
                    if it.arch == a and it.name in failed:
                        it.reason = failed[it.name]
                if len(failed) == len(group):
                    staged.pop()[0].unlink(missing_ok=True)
        for tmp, final in staged:
            publish(tmp, final)
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)

    parts: list[LibraryPart] = []
    logic_files: list[LogicFile] = []
    for it in items:
        if not any(it.logic is lf for lf in logic_files):
            logic_files.append(it.logic)
    for lf in logic_files:
        chosen = [(it.index, it.solution, it.name) for it in items if it.logic is lf and it.reason is None]
        if chosen:
            parts.append(LibraryPart(lf, chosen))
    library_path = write_master_library(build_master_library(parts), lib_dir, library_format)
    entries = [SupportEntry(it.name, it.arch, it.reason is None, it.reason, it.logic.path, it.index) for it in items]
    support_path = write_atomic(out_dir / "support.json",
                                json.dumps([e.to_json() for e in entries], indent=2) + "\n")
    return CreateReport(out_dir, archs, files, entries, [final for _, final in staged], library_path, support_path)
