"""A Tensile tuning config, read as Tensile 4.44 reads it (Tensile.py, BenchmarkProblems.py, BenchmarkStructs.py).

Top level: GlobalParameters, BenchmarkProblems, LibraryLogic, LibraryClient (and TestParameters, the marks of
Tensile's own test suite, ignored). Each BenchmarkProblems entry is [ProblemType, size group, ...]; a problem
with no size group gets one empty group (Tensile's defaults: every catalogue default, the default sizes).
A size group: BenchmarkCommonParameters and ForkParameters (lists of ``{Parameter: [values]}``; a parameter
with one value is a constant, with several a fork; ``Groups`` in ForkParameters forks over whole parameter
sets), BenchmarkFinalParameters (``- ProblemSizes: [...]``), CustomKernels (none supported).
The obsolete sections of older Tensile (InitialSolutionParameters, BenchmarkForkParameters, JoinParameters,
BenchmarkJoinParameters) are accepted when empty, as Tensile 4.44 accepts them. When they hold values (4.44
refuses such a config), they are read with their old meaning collapsed onto 4.44's single final step:
InitialSolutionParameters as constants, BenchmarkForkParameters as forks, and Join/BenchmarkJoin as no-ops
(every fork is benchmarked at every size, which is what joining chose among); each is reported as a note.
Unknown keys anywhere are one error naming the nearest known key.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tensile_asm.errors import UserError
from tensile_asm.problem import ProblemType, nearest
from tensile_asm.solution.catalogue import ALIASES, LEGACY_KEYS, PARAMS, normalise
from tensile_asm.tuning import global_parameters
from tensile_asm.tuning.sizes import DEFAULT_BATCHED_SIZES, DEFAULT_SIZES, TuningSize, read_problem_sizes

TOP_LEVEL = ("GlobalParameters", "BenchmarkProblems", "LibraryLogic", "LibraryClient", "TestParameters")
GROUP_KEYS = ("InitialSolutionParameters", "BenchmarkCommonParameters", "ForkParameters", "BenchmarkForkParameters",
              "JoinParameters", "BenchmarkJoinParameters", "BenchmarkFinalParameters", "CustomKernels")
LIBRARY_LOGIC_KEYS = ("ScheduleName", "DeviceNames", "ArchitectureName", "SolutionImportanceMin", "LibraryType")
# Tensile 4.44 Common.defaultAnalysisParameters
LIBRARY_LOGIC_DEFAULTS = {"ScheduleName": "Tensile", "DeviceNames": "fallback", "ArchitectureName": "gfx000",
                          "SolutionImportanceMin": 0.01}


@dataclass
class SizeGroup:
    """One BenchmarkProblemSizeGroup: constant and forked solution parameters, the sizes."""

    index: int
    constants: dict[str, Any]
    forks: dict[str, list]                  # in the config's order
    groups: list[list[dict[str, Any]]]      # ForkParameters' Groups
    sizes: list[TuningSize]
    min_stride: tuple[int, ...] | None
    notes: list[str] = field(default_factory=list)

    def permutations(self) -> list[dict[str, Any]]:
        """Tensile's constructForkPermutations: the first fork parameter varies fastest, groups last."""
        axes = [(name, values) for name, values in self.forks.items()]
        axes += [(f"_group{i}", g) for i, g in enumerate(self.groups)]
        out = []
        total = 1
        for _, values in axes:
            total *= len(values)
        for i in range(total):
            perm, rest = {}, i
            for name, values in axes:
                v = values[rest % len(values)]
                rest //= len(values)
                if name.startswith("_group"):
                    perm.update(v)
                else:
                    perm[name] = v
            out.append(perm)
        return out


@dataclass
class BenchmarkProblem:
    index: int
    problem_type_raw: dict
    problem_type: ProblemType | None
    problem_type_error: str | None          # why this problem type cannot be tuned here (its forks are listed)
    groups: list[SizeGroup]

    @property
    def name(self) -> str:
        return self.problem_type.name if self.problem_type is not None else f"Problem{self.index:02d}"


@dataclass
class TuningConfig:
    path: Path
    global_parameters: dict[str, Any]
    problems: list[BenchmarkProblem]
    library_logic: dict[str, Any] | None    # None: no LibraryLogic section
    library_client: dict[str, Any] | None   # None: no LibraryClient section
    notes: list[str] = field(default_factory=list)


def _param_list(value: Any, where: str) -> list[tuple[str, list]]:
    """A section's ``[{Name: [values]}, ...]`` as (name, values) pairs, names and values checked."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise UserError(f"{where}: expected a list of single-key mappings such as - DepthU: [8, 16]")
    out = []
    for item in value:
        if not isinstance(item, dict) or len(item) != 1:
            raise UserError(f"{where}: entry {item!r} must be one mapping Parameter: [values]")
        (name, values), = item.items()
        out.append((str(name), values))
    return out


def _check_parameter(name: str, values: Any, where: str, notes: list[str]) -> list:
    if name not in PARAMS and name not in ALIASES and name not in LEGACY_KEYS:
        raise UserError(f"{where}: unknown solution parameter {name!r}{nearest(name, PARAMS)}")
    if not isinstance(values, list) or not values:
        raise UserError(f"{where}: {name} needs a non-empty list of values, e.g. {name}: [{_example(name)}]")
    if name in LEGACY_KEYS:
        notes.append(f"{where}: {name} is an older Tensile's parameter (Tensile 4.44 does not know it); it is kept "
                     f"in the solutions and changes no kernel here")
        return list(values)
    key = ALIASES.get(name, name)
    allowed = PARAMS[key].allowed
    checked = []
    for v in values:
        v = normalise(key, v)
        if not allowed(v):
            raise UserError(f"{where}: {name} value {v!r} is not allowed; use {allowed.text}")
        checked.append(v)
    return checked


def _example(name: str) -> str:
    p = PARAMS.get(name)
    return repr(p.default if p is not None and p.default is not None else 1)


def _read_group(pt: ProblemType | None, raw: Any, index: int, where: str, batched: bool) -> SizeGroup:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise UserError(f"{where}: a size group must be a mapping of BenchmarkCommonParameters, ForkParameters, "
                        f"BenchmarkFinalParameters ...")
    for key in raw:
        if key not in GROUP_KEYS:
            raise UserError(f"{where}: unknown size-group section {key!r}{nearest(str(key), GROUP_KEYS)}")
    notes: list[str] = []
    constants: dict[str, Any] = {}
    forks: dict[str, list] = {}

    def add(section: str):
        for name, values in _param_list(raw.get(section), f"{where}: {section}"):
            if name == "Groups" and section in ("ForkParameters", "BenchmarkForkParameters"):
                continue
            values = _check_parameter(name, values, f"{where}: {section}", notes)
            constants.pop(name, None)
            forks.pop(name, None)
            if len(values) == 1:      # as Tensile's separateParameters: one value is a constant wherever given
                constants[name] = values[0]
            else:
                forks[name] = values

    for old in ("InitialSolutionParameters", "BenchmarkForkParameters", "JoinParameters", "BenchmarkJoinParameters"):
        if raw.get(old):
            what = {"InitialSolutionParameters": "read as constant parameters",
                    "BenchmarkForkParameters": "read as fork parameters",
                    "JoinParameters": "ignored: every fork is benchmarked at every size, which joining chose among",
                    "BenchmarkJoinParameters": "ignored: every fork is benchmarked at every size"}[old]
            notes.append(f"{where}: {old} is a section of Tensile before 4.44 (4.44 refuses a config that fills it); "
                         f"{what}")
    if raw.get("InitialSolutionParameters"):
        add("InitialSolutionParameters")
    add("BenchmarkCommonParameters")
    add("ForkParameters")
    if raw.get("BenchmarkForkParameters"):
        add("BenchmarkForkParameters")
    for old in ("JoinParameters", "BenchmarkJoinParameters"):
        value = raw.get(old)
        if value and not isinstance(value, list):
            raise UserError(f"{where}: {old} must be a list of parameter names")
        for item in value or []:
            name = item if isinstance(item, str) else next(iter(item), None) if isinstance(item, dict) else None
            if name not in PARAMS and name not in ("MacroTile", "DepthU", "Groups"):
                raise UserError(f"{where}: {old} names unknown parameter {name!r}{nearest(str(name), PARAMS)}")
    groups = []
    for section in ("ForkParameters", "BenchmarkForkParameters"):
        for name, values in _param_list(raw.get(section), f"{where}: {section}"):
            if name != "Groups":
                continue
            if not isinstance(values, list) or not all(isinstance(g, list) and g for g in values):
                raise UserError(f"{where}: {section} Groups must be a list of groups, each a list of parameter mappings")
            for g in values:
                entries = []
                for entry in g:
                    if not isinstance(entry, dict):
                        raise UserError(f"{where}: {section} Groups entry {entry!r} must be a mapping of parameters")
                    checked = {}
                    for k, v in entry.items():
                        checked[k] = _check_parameter(k, [v], f"{where}: {section} Groups", notes)[0]
                    entries.append(checked)
                groups.append(entries)
    custom = raw.get("CustomKernels")
    if custom:
        raise UserError(f"{where}: CustomKernels {custom!r}: hand-written custom kernels are not part of this project; "
                        f"remove CustomKernels")
    final = raw.get("BenchmarkFinalParameters")
    if final is None:
        sizes_cfg = DEFAULT_BATCHED_SIZES if batched else DEFAULT_SIZES
        notes.append(f"{where}: no BenchmarkFinalParameters; Tensile's default sizes {sizes_cfg}")
    else:
        if not isinstance(final, list) or not final or not isinstance(final[0], dict) or "ProblemSizes" not in final[0]:
            raise UserError(f"{where}: BenchmarkFinalParameters must be a list whose first entry is ProblemSizes: [...]")
        for entry in final:
            for key in entry:
                if key != "ProblemSizes":
                    raise UserError(f"{where}: BenchmarkFinalParameters: unknown key {key!r}; only ProblemSizes is read")
        sizes_cfg = final[0]["ProblemSizes"]
    # Tensile forks over its parameter table's order (defaults first, updated by the config)
    order = {name: i for i, name in enumerate(PARAMS)}
    forks = dict(sorted(forks.items(), key=lambda kv: order.get(ALIASES.get(kv[0], kv[0]), len(order))))
    if pt is None:
        return SizeGroup(index, constants, forks, groups, [], None, notes)
    sizes, min_stride = read_problem_sizes(pt, sizes_cfg, f"{where}: ProblemSizes")
    if not sizes:
        raise UserError(f"{where}: ProblemSizes give no size; check the Range bounds (start <= stop)")
    return SizeGroup(index, constants, forks, groups, sizes, min_stride, notes)


def read_config(path: str | Path, overrides: dict | None = None) -> TuningConfig:
    """The config at ``path``; ``overrides``: GlobalParameters given on the command line (they win)."""
    from tensile_asm.library.fileio import load_yaml

    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such config file; give a Tensile tuning config (.yaml)")
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise UserError(f"{path}: a tuning config is a mapping with GlobalParameters, BenchmarkProblems, LibraryLogic")
    for key in data:
        if key not in TOP_LEVEL:
            raise UserError(f"{path}: unknown top-level section {key!r}{nearest(str(key), TOP_LEVEL)}")
    given = dict(data.get("GlobalParameters") or {})
    if not isinstance(data.get("GlobalParameters") or {}, dict):
        raise UserError(f"{path}: GlobalParameters must be a mapping of parameter: value")
    gp = global_parameters.with_defaults({**given, **(overrides or {})}, f"{path}: GlobalParameters")
    raw_problems = data.get("BenchmarkProblems")
    if not isinstance(raw_problems, list) or not raw_problems:
        raise UserError(f"{path}: BenchmarkProblems must be a non-empty list of [ProblemType, size groups...]")
    problems = []
    for i, entry in enumerate(raw_problems):
        where = f"{path}: BenchmarkProblems[{i}]"
        if not isinstance(entry, list) or not entry or not isinstance(entry[0], dict):
            raise UserError(f"{where}: each problem is a list whose first entry is the ProblemType mapping")
        pt, error = None, None
        try:
            pt = ProblemType.from_dict(entry[0], f"{where}: ProblemType")
        except UserError as e:
            error = str(e)
        batched = bool(entry[0].get("Batched", False))
        raw_groups = entry[1:] or [{}]
        groups = [_read_group(pt, g, j, f"{where}[{j + 1}]", batched) for j, g in enumerate(raw_groups)]
        problems.append(BenchmarkProblem(i, dict(entry[0]), pt, error, groups))
    logic = data.get("LibraryLogic", None) if "LibraryLogic" in data else None
    if "LibraryLogic" in data:
        logic = dict(LIBRARY_LOGIC_DEFAULTS, **(data["LibraryLogic"] or {}))
        for key in logic:
            if key not in LIBRARY_LOGIC_KEYS:
                raise UserError(f"{path}: LibraryLogic: unknown key {key!r}{nearest(str(key), LIBRARY_LOGIC_KEYS)}")
        if isinstance(logic["DeviceNames"], str):
            logic["DeviceNames"] = [logic["DeviceNames"]]
    client = None
    if "LibraryClient" in data:
        client = dict(data["LibraryClient"] or {})
        if client:
            raise UserError(f"{path}: LibraryClient: {sorted(client)[0]!r}: the library client section takes no keys "
                            f"here (Tensile's client build options do not apply); leave it empty")
    return TuningConfig(path, gp, problems, logic, client)


def fork_count(group: SizeGroup) -> int:
    n = 1
    for values in itertools.chain(group.forks.values(), group.groups):
        n *= len(values)
    return n
