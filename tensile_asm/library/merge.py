"""merge-logic: merge incremental tuning results into a logic directory, as Tensile's
``Tensile/Utilities/merge.py`` (4.44) does.

For every ``*.yaml`` in INCREMENTAL whose file name is also in ORIGINAL (both folders read flat, as
Tensile's ``allFiles`` does), the two raw logic documents are merged and written to OUT under that name:

1. both have their solutions renumbered (``SolutionIndex`` = position);
2. sizes written with 8 entries (newer Tensile) are trimmed to the first 4 (M, N, batch, K) unless
   ``trim`` is off; a trimmed size already present is dropped;
3. a solution with ``StaggerU: 0`` gets ``StaggerUMapping``, ``StaggerUStride`` and
   ``_staggerStrideShift`` 0;
4. solutions no size uses are dropped from both, and the rest renumbered;
5. each incremental size: if the original has it, the incremental solution replaces the original's when its
   efficiency is higher, or always when forced; a size the original lacks is added. An incremental
   solution equal to one already present (all keys but ``SolutionIndex``/``SolutionNameMin``) is reused,
   otherwise appended;
6. solutions no longer used are dropped and the rest renumbered.

The merge policy, as Tensile's default: forced unless the file name contains ``arcturus`` (``force``
True/False overrides). ``add_solution_tags`` keys sizes by (MFMA or VALU, AssertAlphaValue,
AssertBetaValue, AssertCEqualsD) too, so solutions with different requirements coexist for one size,
and a new size is not added where a compatible (more general) solution is already faster.
The output is dumped as Tensile dumps it (sorted keys, flow style for leaves, width 80).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tensile_asm.errors import UserError
from tensile_asm.library.fileio import Dumper, load_yaml, write_atomic

SOLUTIONS, SIZES = 5, 7      # positions in a list-form logic document

_VALU, _MFMA = 0, 1
_ANY, _ONE, _NEG_ONE, _ZERO = 0, 1, 2, 3
_C_EQ_D, _C_NEQ_D = 0, 1


@dataclass
class MergeStats:
    file: str
    forced: bool
    sizes_added: int
    solutions_added: int
    solutions_removed: int
    sizes_replaced: int
    sizes_kept: int
    duplicate_sizes_removed: int

    def line(self) -> str:
        return (f"{self.file}: {self.sizes_added} size(s) added, {self.sizes_replaced} replaced, {self.sizes_kept} "
                f"kept (original faster), {self.solutions_added} solution(s) added, {self.solutions_removed} "
                f"removed (merge policy: {'forced' if self.forced else 'faster wins'})")


def _scalar_tag(value: Any, where: str) -> int:
    if value == "Any":
        return _ANY
    if value == 1:
        return _ONE
    if value == -1:
        return _NEG_ONE
    if value == 0:
        return _ZERO
    raise UserError(f"{where}: AssertAlphaValue/AssertBetaValue {value!r} is not Any, 1, -1 or 0")


def _tag(solution: dict, where: str) -> tuple:
    mfma = _MFMA if solution.get("EnableMatrixInstruction", False) or solution.get("MatrixInstruction", False) \
        else _VALU
    return (mfma, _scalar_tag(solution.get("AssertAlphaValue", "Any"), where),
            _scalar_tag(solution.get("AssertBetaValue", "Any"), where),
            _C_EQ_D if solution.get("AssertCEqualsD", False) else _C_NEQ_D)


def _check(doc: Any, path: Path) -> list:
    if not isinstance(doc, list) or len(doc) <= SIZES or not isinstance(doc[SOLUTIONS], list) \
            or not isinstance(doc[SIZES], list):
        raise UserError(f"{path}: not a list-form logic file (a list whose entry 5 is the solutions and entry 7 "
                        f"the [[sizes], [solution index, efficiency]] rows); merge-logic merges those")
    for r, row in enumerate(doc[SIZES]):
        if not (isinstance(row, list) and len(row) == 2 and isinstance(row[0], list)
                and isinstance(row[1], list) and len(row[1]) == 2):
            raise UserError(f"{path}: size row {r} {row!r} is not [[M, N, batch, K, ...], [index, efficiency]]")
    for i, s in enumerate(doc[SOLUTIONS]):
        if not isinstance(s, dict):
            raise UserError(f"{path}: solution {i} is not a mapping of solution parameters")
    return doc


def _reindex(doc: list) -> None:
    for i, s in enumerate(doc[SOLUTIONS]):
        s["SolutionIndex"] = i


def _find(solutions: list, index: int, path: Path) -> dict:
    if 0 <= index < len(solutions) and solutions[index]["SolutionIndex"] == index:
        return solutions[index]
    found = [s for s in solutions if s["SolutionIndex"] == index]
    if len(found) != 1:
        raise UserError(f"{path}: a size row names solution index {index}, which the file does not have")
    return found[0]


def _trim(rows: list) -> tuple[list, int]:
    """Tensile's fixSizeInconsistencies: sizes of 8 or more entries lose their last 4; a trimmed size
    already in the table (checked as it goes) is dropped."""
    duplicates = []
    for i in range(len(rows)):
        size = rows[i][0]
        if len(size) >= 8:
            size = size[:-4]
            if any(size == item for row in rows for item in row):
                duplicates.append(i - len(duplicates))
            else:
                rows[i][0] = size
    out = copy.deepcopy(rows)
    for i in duplicates:
        out.pop(i)
    return out, len(duplicates)


def _sanitise(solutions: list) -> None:
    for s in solutions:
        if s.get("StaggerU") == 0:
            s["StaggerUMapping"] = 0
            s["StaggerUStride"] = 0
            s["_staggerStrideShift"] = 0


def _drop_unused(doc: list) -> int:
    used = {index for _, (index, _) in doc[SIZES]}
    before = len(doc[SOLUTIONS])
    doc[SOLUTIONS] = [s for s in doc[SOLUTIONS] if s["SolutionIndex"] in used]
    new_index = {}
    for i, s in enumerate(doc[SOLUTIONS]):
        new_index[s["SolutionIndex"]] = i
        s["SolutionIndex"] = i
    doc[SIZES] = [[size, [new_index[index], eff]] for size, (index, eff) in doc[SIZES]]
    return before - len(doc[SOLUTIONS])


def _strip(s: dict) -> dict:
    return {k: v for k, v in s.items() if k not in ("SolutionIndex", "SolutionNameMin")}


def _fingerprint(value: Any) -> Any:
    """A hashable form under which values Python's == calls equal (1, 1.0, True) coincide."""
    if isinstance(value, dict):
        return frozenset((k, _fingerprint(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_fingerprint(v) for v in value)
    if isinstance(value, bool) or (isinstance(value, float) and value.is_integer()):
        return int(value)
    return value


class _Pool:
    """The merged solution list; an added solution equal to one already there (all keys but SolutionIndex
    and SolutionNameMin, compared with ==, as Tensile's addKernel) is reused: the first such one."""

    def __init__(self, solutions: list):
        self.solutions = copy.deepcopy(solutions)
        self.by_print: dict = {}
        for s in self.solutions:
            self.by_print.setdefault(_fingerprint(_strip(s)), []).append(s)

    def add(self, solution: dict) -> int:
        stripped = _strip(solution)
        candidates = self.by_print.setdefault(_fingerprint(stripped), [])
        for s in candidates:
            if _strip(s) == stripped:
                return s["SolutionIndex"]
        added = copy.deepcopy(solution)
        added["SolutionIndex"] = len(self.solutions)
        self.solutions.append(added)
        candidates.append(added)
        return added["SolutionIndex"]


def _fastest_compatible(orig: dict, size: tuple) -> float:
    tags = size[0]
    compatible = [tags]
    if tags[1] != _ANY:
        compatible += [(t[0], _ANY) + t[2:] for t in compatible]
    if tags[2] != _ANY:
        compatible += [t[:2] + (_ANY,) + t[3:] for t in compatible]
    if tags[3] != _C_NEQ_D:
        compatible += [t[:3] + (_C_NEQ_D,) + t[4:] for t in compatible]
    best = 0
    for tag in compatible:
        hit = orig.get((tag,) + size[1:])
        if hit:
            best = max(best, hit[1])
    return best


def merge_documents(original: list, incremental: list, force: bool, trim: bool = True,
                    add_solution_tags: bool = False, orig_path: Path = Path("original"),
                    inc_path: Path = Path("incremental"), name: str = "") -> tuple[list, MergeStats]:
    """Merge two list-form logic documents (changed in place; the merged document is returned)."""
    orig, inc = _check(original, orig_path), _check(incremental, inc_path)
    _reindex(orig)
    _reindex(inc)
    for doc, path in ((orig, orig_path), (inc, inc_path)):
        for _, (index, _) in doc[SIZES]:
            _find(doc[SOLUTIONS], index, path)
    if add_solution_tags:
        for doc, path in ((orig, orig_path), (inc, inc_path)):
            doc[SIZES] = [[[_tag(_find(doc[SOLUTIONS], i, path), str(path))] + size, [i, eff]]
                          for size, (i, eff) in doc[SIZES]]
    duplicates = 0
    if trim:
        orig[SIZES], n = _trim(orig[SIZES])
        inc[SIZES], m = _trim(inc[SIZES])
        duplicates = n + m
    _sanitise(orig[SOLUTIONS])
    _sanitise(inc[SOLUTIONS])
    removed_orig = _drop_unused(orig)
    _drop_unused(inc)

    pool = _Pool(orig[SOLUTIONS])
    rows = copy.deepcopy(orig[SIZES])
    by_size = {_key(size): [j, eff] for j, (size, (_, eff)) in enumerate(orig[SIZES])}
    replaced = kept = 0
    for size, (index, eff) in inc[SIZES]:
        solution = _find(inc[SOLUTIONS], index, inc_path)
        hit = by_size.get(_key(size))
        if hit is not None:
            j, orig_eff = hit
            if eff > orig_eff or force:
                rows[j][1] = [pool.add(solution), eff]
                replaced += 1
            else:
                kept += 1
        elif add_solution_tags and _fastest_compatible(by_size, _key(size)) > eff:
            kept += 1
        else:
            rows.append([size, [pool.add(solution), eff]])
    if add_solution_tags:
        rows = [[size[1:], [i, eff]] for size, (i, eff) in rows]
    merged = copy.deepcopy(orig)
    merged[SOLUTIONS], merged[SIZES] = pool.solutions, rows
    removed_merged = _drop_unused(merged)
    stats = MergeStats(name, force, len(rows) - len(orig[SIZES]), len(pool.solutions) - len(orig[SOLUTIONS]),
                       removed_merged + removed_orig, replaced, kept, duplicates)
    return merged, stats


def _key(size: list) -> tuple:
    return tuple(tuple(x) if isinstance(x, list) else x for x in size)


def dump_logic(doc: list) -> str:
    """Tensile's dump of a merged logic file: ``yaml.dump(data, CSafeDumper, default_flow_style=None)``."""
    return yaml.dump(doc, Dumper=Dumper, default_flow_style=None)


def _yaml_files(folder: Path, what: str) -> dict[str, Path]:
    if not folder.is_dir():
        raise UserError(f"{what} folder {folder} does not exist or is not a folder")
    return {p.name: p for p in sorted(folder.iterdir()) if p.suffix.lower() == ".yaml" and p.is_file()}


def merge_logic(original_dir: str | Path, incremental_dir: str | Path, out_dir: str | Path,
                force: bool | None = None, trim: bool = True, add_solution_tags: bool = False
                ) -> tuple[list[MergeStats], list[str]]:
    """Merge every incremental logic file that has an original of the same name into ``out_dir``.
    Returns the per-file statistics and the incremental files skipped (no original of that name)."""
    original_dir, incremental_dir, out_dir = Path(original_dir), Path(incremental_dir), Path(out_dir)
    originals = _yaml_files(original_dir, "ORIGINAL")
    incrementals = _yaml_files(incremental_dir, "INCREMENTAL")
    skipped = [n for n in incrementals if n not in originals]
    merged: list[tuple[Path, str]] = []
    stats = []
    for name, inc_path in incrementals.items():
        if name not in originals:
            continue
        forced = ("arcturus" not in str(inc_path)) if force is None else force
        doc, st = merge_documents(load_yaml(originals[name]), load_yaml(inc_path), forced, trim, add_solution_tags,
                                  originals[name], inc_path, name)
        merged.append((out_dir / name, dump_logic(doc)))
        stats.append(st)
    for path, text in merged:        # written once every file has merged
        write_atomic(path, text)
    return stats, skipped
