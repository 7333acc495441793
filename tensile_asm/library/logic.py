"""Library logic files (LibraryLogic's output, TensileCreateLibrary's input): read, find, write.

The list form is a positional YAML list of 9..14 entries (§3.1): version, schedule, architecture (a gfx
string, ``fallback`` or ``{Architecture, CUCount, IsAPU}``), device names, ProblemType, solutions, index
order, exact logic (``[[sizes...], [solution index, perf]]`` rows, 4 or 8 sizes), range logic (null), tile
selection, perf metric, Fp16AltImpl, distance, Fp16AltImplRound. The dict form (``DictLibraryLogic``) is
read too. A solution that fails to parse is kept with its reason; it does not make the file unreadable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from tensile_asm.errors import UserError
from tensile_asm.library.fileio import dump_yaml, load_yaml, write_atomic
from tensile_asm.library.logic_kinds import ExactRow, Selection, selection_from_dict, selection_from_list
from tensile_asm.problem import ProblemType
from tensile_asm.solution.derive import isa_from_arch
from tensile_asm.solution.naming import min_names
from tensile_asm.solution.solution import Solution

# Schedule aliases in logic-file names (Tensile's Common.architectureMap).
SCHEDULE_ALIASES = {
    "gfx803": "r9nano", "gfx900": "vega10", "gfx906": "vega20", "gfx908": "arcturus", "gfx90a": "aldebaran",
    "gfx942": "aquavanjaram942", "gfx950": "gfx950", "gfx1010": "navi10", "gfx1011": "navi12",
    "gfx1012": "navi14", "gfx1030": "navi21", "gfx1100": "navi31", "gfx1101": "navi32", "gfx1102": "navi33",
    "gfx1151": "gfx1151", "gfx1200": "gfx1200", "gfx1201": "gfx1201",
}
DEFAULT_VERSION = "4.33.0"


@dataclass
class LogicEntry:
    """One solution of a logic file: parsed (``solution``) or not (``error`` says why)."""

    index: int
    raw: dict[str, Any]
    solution: Solution | None
    error: str | None

    @property
    def stored_name(self) -> str | None:
        name = self.raw.get("SolutionNameMin") if isinstance(self.raw, dict) else None
        return name if isinstance(name, str) else None


@dataclass
class LogicFile:
    path: Path
    version: str
    schedule: str
    architecture: str  # gfx name or "fallback"
    cu_count: int | None
    is_apu: int | None
    device_names: list[str]
    problem_type_raw: dict[str, Any]
    problem_type: ProblemType | None
    problem_type_error: str | None
    entries: list[LogicEntry]
    index_order: list[int]
    exact_logic: list[ExactRow]
    perf_metric: str = "DeviceEfficiency"
    fp16_alt_impl: bool = False
    fp16_alt_impl_round: bool = False
    distance: str = "Euclidean"
    library_type: str = "Matching"
    tile_selection: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
    selection: Selection | None = None  # the library kind and its data (library/logic_kinds.py)

    @property
    def solutions(self) -> list[Solution]:
        return [e.solution for e in self.entries if e.solution is not None]

    @property
    def failures(self) -> list[tuple[int, str]]:
        return [(e.index, e.error) for e in self.entries if e.error is not None]


def _arch_fields(value: Any, where: str) -> tuple[str, int | None, int | None]:
    if isinstance(value, str):
        return value, None, None
    if isinstance(value, dict) and isinstance(value.get("Architecture"), str):
        return value["Architecture"], value.get("CUCount"), value.get("IsAPU")
    raise UserError(f"{where}: architecture entry must be a gfx name, 'fallback' or "
                    f"{{Architecture, CUCount, IsAPU}}, not {value!r}")


def _parse_solutions(raw_solutions: Any, pt: ProblemType | None, pt_error: str | None, arch: str,
                     path: Path, version: str = "") -> list[LogicEntry]:
    if not isinstance(raw_solutions, list):
        raise UserError(f"{path}: the solutions entry must be a list of solution mappings")
    isa = isa_from_arch(arch) if arch.startswith("gfx") else None
    entries = []
    for i, raw in enumerate(raw_solutions):
        where = f"{path}: solution {i}"
        if pt is None:
            entries.append(LogicEntry(i, raw, None, f"{where}: {pt_error}"))
            continue
        try:
            d = dict(raw) if isinstance(raw, dict) else raw
            if isinstance(d, dict) and d.get("KernelLanguage") == "Assembly" and isa is not None:
                d["ISA"] = isa  # Tensile re-targets assembly solutions to the file's architecture
            sol = Solution.from_dict(d, where=where, problem_type=pt, defaults_from="tensile", version=version)
            if sol.index is None:
                sol.index = i
            entries.append(LogicEntry(i, raw, sol, None))
        except UserError as e:
            entries.append(LogicEntry(i, raw, None, str(e)))
    return entries


def read_logic_file(path: str | Path, data: Any = None) -> LogicFile:
    """Read a list- or dict-form logic file. Every solution is parsed with ``Solution.from_dict``.
    ``data``, if given, is the file's already-parsed YAML content (``path`` then only names it)."""
    path = Path(path)
    data = load_yaml(path) if data is None else data
    if isinstance(data, dict):
        return _read_dict_form(path, data)
    if not isinstance(data, list) or len(data) < 9:
        n = len(data) if isinstance(data, list) else type(data).__name__
        raise UserError(f"{path}: a logic file is a YAML list of 9 to 14 entries (or a mapping); got {n}")
    version = (data[0] or {}).get("MinimumRequiredVersion", "") if isinstance(data[0], dict) else ""
    arch, cu, apu = _arch_fields(data[2], f"{path}: entry 2")
    pt, pt_error = _problem_type(data[4], path)
    entries = _parse_solutions(data[5], pt, pt_error, arch, path, str(version))
    extra = list(data) + [None] * (14 - len(data))
    sel = selection_from_list(data, len(entries), path)
    return LogicFile(
        path=path, version=str(version), schedule=str(data[1]), architecture=arch, cu_count=cu, is_apu=apu,
        device_names=list(data[3] or []), problem_type_raw=data[4], problem_type=pt, problem_type_error=pt_error,
        entries=entries, index_order=sel.index_order, exact_logic=sel.rows,
        tile_selection=extra[9], perf_metric=extra[10] or "DeviceEfficiency",
        fp16_alt_impl=extra[11] == "Fp16AltImpl", distance=sel.distance,
        fp16_alt_impl_round=extra[13] == "Fp16AltImplRound", selection=sel,
    )


def _problem_type(raw: Any, path: Path) -> tuple[ProblemType | None, str | None]:
    try:
        return ProblemType.from_dict(raw, f"{path}: ProblemType"), None
    except UserError as e:
        return None, str(e)


def _read_dict_form(path: Path, data: dict[str, Any]) -> LogicFile:
    for key in ("ProblemType", "Solutions"):
        if key not in data:
            raise UserError(f"{path}: a dict-form logic file needs a {key} key")
    arch = data.get("ArchitectureName", "fallback")
    pt, pt_error = _problem_type(data["ProblemType"], path)
    entries = _parse_solutions(data["Solutions"], pt, pt_error, arch, path,
                               str(data.get("MinimumRequiredVersion", "")))
    sel = selection_from_dict(data, len(entries), path)
    return LogicFile(
        path=path, version=str(data.get("MinimumRequiredVersion", "")), schedule=str(data.get("ScheduleName", "")),
        architecture=arch, cu_count=data.get("CUCount"), is_apu=data.get("IsAPU"),
        device_names=list(data.get("DeviceNames") or []), problem_type_raw=data["ProblemType"], problem_type=pt,
        problem_type_error=pt_error, entries=entries, index_order=sel.index_order, exact_logic=sel.rows,
        perf_metric=data.get("PerfMetric") or "DeviceEfficiency", fp16_alt_impl=bool(data.get("Fp16AltImpl")),
        fp16_alt_impl_round=bool(data.get("Fp16AltImplRound")), distance=sel.distance, library_type=sel.kind,
        extra={"Library": data.get("Library")} if sel.kind != "Matching" else {}, selection=sel,
    )


def schedule_alias(arch: str) -> str:
    try:
        return SCHEDULE_ALIASES[arch]
    except KeyError:
        known = ", ".join(sorted(SCHEDULE_ALIASES))
        raise UserError(f"unknown architecture '{arch}' for logic-file discovery; use one of {known}") from None


def find_logic_files(logic_dir: str | Path, arch: str | Sequence[str], lazy: bool = False) -> list[Path]:
    """Logic files under ``logic_dir`` for ``arch`` (one gfx name or several), found as Tensile 4.44's
    TensileCreateLibrary.findLogicFiles finds them: every ``*.yaml`` file (``Path.rglob``: a folder's files,
    then its subfolders', in the file system's directory order), then every ``*.yml`` file, whose name
    without the extension contains one architecture's schedule alias (``gfx90a`` -> ``aldebaran``) or
    ``hip`` (the fallback files); without ``lazy`` loading, files in a folder named ``experimental`` below
    ``logic_dir`` are left out (Tensile reads them with it). The order is kept, not sorted: the library's
    solutions are numbered in it, so they are numbered as Tensile numbers them from the same folder.
    (Tensile also finds nothing when ``logic_dir`` itself lies in an ``experimental`` folder; we do.)"""
    logic_dir = Path(logic_dir)
    if not logic_dir.is_dir():
        raise UserError(f"logic directory {logic_dir} does not exist or is not a directory")
    archs = [arch] if isinstance(arch, str) else list(arch)
    matchers = [schedule_alias(a) for a in archs] + ["hip"]
    found = []
    for p in (f for ext in ("*.yaml", "*.yml") for f in logic_dir.rglob(ext)):
        if not any(m in p.stem for m in matchers) or not p.is_file():
            continue
        if not lazy and "experimental" in p.relative_to(logic_dir).parts[:-1]:
            continue
        found.append(p)
    return found


def write_logic_file(path: str | Path, *, schedule: str, architecture: str | dict, device_names: Sequence[str],
                     problem_type: ProblemType, solutions: Sequence[Solution],
                     exact_logic: Sequence[tuple[Sequence[int], int, float]], perf_metric: str = "DeviceEfficiency",
                     distance: str | None = None, version: str = DEFAULT_VERSION) -> Path:
    """Write the list form (11 entries; 13 with a ``distance``) atomically. Solutions get ``SolutionIndex``
    = position and ``SolutionNameMin`` = min names over this file's solutions."""
    names = min_names(list(solutions), kernel=False)
    sols = [s.to_logic_dict(index=i, name=n) for i, (s, n) in enumerate(zip(solutions, names))]
    order = [i for i in range(problem_type.total_indices) if i not in (problem_type.index_unroll,
             problem_type.index01_a, problem_type.index01_b)]
    order += [problem_type.index_unroll, *sorted((problem_type.index01_a, problem_type.index01_b))]
    for sizes, idx, _ in exact_logic:
        if not 0 <= idx < len(sols):
            raise UserError(f"{path}: exact size {list(sizes)} names solution {idx}; there are {len(sols)}")
    rows = [[list(sizes), [idx, float(perf)]] for sizes, idx, perf in exact_logic]
    doc: list[Any] = [{"MinimumRequiredVersion": version}, schedule, architecture, list(device_names),
                      problem_type.to_logic_dict(), sols, order, rows, None, None, perf_metric]
    if distance is not None:
        doc += [None, distance]
    return write_atomic(path, dump_yaml(doc))
