"""The selection part of a logic file: which library kind picks among its solutions, with its data.

Tensile 4.44 (LibraryIO.parseLibraryLogicList / parseLibraryLogicData, SolutionLibrary.FromOriginalState):

- list form: always ``Matching``: index order (entry 6), exact rows ``[[sizes], [solution, speed]]``
  (entry 7), distance (entry 12, default Euclidean; Equality, Manhattan, Ratio, JSD, Random, GridBased).
  Entry 9 (tile selection) is kept but not used, as Tensile ignores it.
- dict form: ``LibraryType`` ``Matching`` with ``Library: {indexOrder, table, distance}``, or
  ``DecisionTree`` with ``Library: [{region: [predicates], features: [...], trees: [{tree: [nodes],
  solution}], fallback}]``.

Anything else is refused with the field, the value and what is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tensile_asm.errors import UserError
from tensile_asm.library.dtree import FEATURES
from tensile_asm.library.matching import DISTANCES

LIBRARY_TYPES = ("Matching", "DecisionTree")
_VALUE_KEYS = {"Tile0Granularity": None, "Tile1Granularity": None, "CUGranularity": ("mt0", "mt1", "cus"),
               "WavesPerSIMD": ("mt0", "mt1", "cus", "ws")}


@dataclass
class ExactRow:
    sizes: tuple[int, ...]
    solution_index: int
    perf: float


@dataclass
class DecisionTreeRegion:
    """One row of a DecisionTree library: problems the region predicates accept go to its forest."""

    predicates: list[dict[str, Any]]
    features: list[dict[str, Any]]
    trees: list[tuple[list[dict[str, Any]], int]]  # (nodes, solution index)
    fallback: int | None


@dataclass
class Selection:
    kind: str  # Matching or DecisionTree
    distance: str = "Euclidean"
    index_order: list[int] = field(default_factory=list)
    rows: list[ExactRow] = field(default_factory=list)
    regions: list[DecisionTreeRegion] = field(default_factory=list)
    tile_selection: Any = None


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _all_int(xs: list) -> bool:
    """Every element an int and no bool (a row of plain ints answered without a call per element)."""
    return set(map(type, xs)) <= _INT_ONLY or all(_is_int(x) for x in xs)


_INT_ONLY = frozenset((int,))


def _solution(idx: Any, n: int, where: str) -> int:
    if not _is_int(idx) or not 0 <= idx < n:
        raise UserError(f"{where} names solution {idx!r}, but the file has {n} solutions (0..{n - 1})")
    return idx


def exact_rows(rows: Any, n_solutions: int, path: Path, distance: str = "Euclidean") -> list[ExactRow]:
    """``[[M, N, batch, K, ...], [index, speed]]`` rows; GridBased rows may leave the speed out."""
    if rows is None:
        return []
    if not isinstance(rows, list):
        raise UserError(f"{path}: exact logic must be a list of [[sizes], [solution index, perf]] rows")
    need = 1 if distance == "GridBased" else 2
    out = []
    for r, row in enumerate(rows):
        ok = (isinstance(row, list) and len(row) == 2 and isinstance(row[0], list) and len(row[0]) >= 3
              and _all_int(row[0]) and isinstance(row[1], list) and len(row[1]) >= need
              and _is_int(row[1][0]) and (len(row[1]) < 2 or isinstance(row[1][1], (int, float))))
        if not ok:
            raise UserError(f"{path}: exact logic row {r} {row!r} is not [[M, N, batch, K, ...], [index, perf]]")
        idx = _solution(row[1][0], n_solutions, f"{path}: exact logic row {r}")
        out.append(ExactRow(tuple(row[0]), idx, float(row[1][1]) if len(row[1]) > 1 else 0.0))
    return out


def _distance(value: Any, where: str) -> str:
    if value is None:
        return "Euclidean"
    if value not in DISTANCES:
        raise UserError(f"{where}: distance {value!r} is not one Tensile 4.44 knows; use one of {', '.join(DISTANCES)}")
    return value


def _index_order(value: Any, where: str) -> list[int]:
    if not isinstance(value, list) or not all(_is_int(i) for i in value):
        raise UserError(f"{where}: the index order must be a list of index numbers like [2, 3, 0, 1], not {value!r}")
    return list(value)


def selection_from_list(data: list[Any], n_solutions: int, path: Path) -> Selection:
    """The list form's selection (entries 6, 7, 9 and 12)."""
    extra = list(data) + [None] * (14 - len(data))
    distance = _distance(extra[12], f"{path}: entry 12")
    return Selection("Matching", distance, _index_order(data[6] or [], f"{path}: entry 6"),
                     exact_rows(data[7], n_solutions, path, distance), tile_selection=extra[9])


def selection_from_dict(data: dict[str, Any], n_solutions: int, path: Path) -> Selection:
    kind = data.get("LibraryType", "Matching")
    library = data.get("Library")
    if kind == "Matching":
        if not isinstance(library, dict):
            raise UserError(f"{path}: LibraryType Matching needs Library: {{indexOrder, table, distance}}")
        distance = _distance(library.get("distance"), f"{path}: Library.distance")
        return Selection("Matching", distance, _index_order(library.get("indexOrder") or [], f"{path}: Library.indexOrder"),
                         exact_rows(library.get("table"), n_solutions, path, distance))
    if kind == "DecisionTree":
        if not isinstance(library, list) or not library:
            raise UserError(f"{path}: LibraryType DecisionTree needs Library: a list of regions "
                            f"{{region, features, trees, fallback}}")
        return Selection("DecisionTree", regions=[_region(r, i, n_solutions, path) for i, r in enumerate(library)])
    raise UserError(f"{path}: LibraryType {kind!r} is not one Tensile 4.44 reads; use one of {', '.join(LIBRARY_TYPES)}")


def _region(raw: Any, i: int, n: int, path: Path) -> DecisionTreeRegion:
    where = f"{path}: Library region {i}"
    if not isinstance(raw, dict):
        raise UserError(f"{where} must be a mapping with region, features and trees")
    for key in ("region", "features", "trees"):
        if key not in raw:
            raise UserError(f"{where} has no {key!r}")
    preds = raw["region"]
    if not isinstance(preds, list) or not all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in preds):
        raise UserError(f"{where}: region must be a list of predicates like {{type: SizeInRange, index: 0, "
                        f"value: {{min: 0, max: 2048}}}}")
    features = raw["features"]
    if not isinstance(features, list) or not features:
        raise UserError(f"{where}: features must be a non-empty list like [{{type: FreeSizeA, index: 0}}]")
    for f in features:
        _check_feature(f, where)
    trees = []
    if not isinstance(raw["trees"], list):
        raise UserError(f"{where}: trees must be a list of {{tree: [nodes], solution: index}}")
    for t, tree in enumerate(raw["trees"]):
        tw = f"{where} tree {t}"
        if not isinstance(tree, dict) or "tree" not in tree or "solution" not in tree:
            raise UserError(f"{tw} must be a mapping {{tree: [nodes], solution: index}}")
        trees.append((_check_nodes(tree["tree"], len(features), tw), _solution(tree["solution"], n, tw)))
    fallback = raw.get("fallback")
    if fallback is not None:
        fallback = _solution(fallback, n, f"{where} fallback")
    return DecisionTreeRegion(preds, features, trees, fallback)


def _check_feature(f: Any, where: str) -> None:
    t = f.get("type") if isinstance(f, dict) else None
    if t not in FEATURES:
        raise UserError(f"{where}: feature {f!r} is not one Tensile 4.44 knows; use one of {', '.join(FEATURES)}")
    if t in ("FreeSizeA", "FreeSizeB", "BatchSize", "BoundSize") and not _is_int(f.get("index")):
        raise UserError(f"{where}: feature {t} needs an index, e.g. {{type: {t}, index: 0}}")
    if t in _VALUE_KEYS:
        keys, value = _VALUE_KEYS[t], f.get("value")
        good = isinstance(value, (int, float)) if keys is None else (
            isinstance(value, dict) and all(isinstance(value.get(k), (int, float)) for k in keys))
        if not good:
            want = "a number (1/MT)" if keys is None else "{" + ", ".join(keys) + "}"
            raise UserError(f"{where}: feature {t} needs value {want}, not {value!r}")


def _check_nodes(nodes: Any, n_features: int, where: str) -> list[dict[str, Any]]:
    """Tensile's Tree::valid, as an error naming the node."""
    if not isinstance(nodes, list) or not nodes:
        raise UserError(f"{where}: tree must be a non-empty list of {{featureIdx, threshold, nextIdxLTE, nextIdxGT}}")
    has_true = False
    for i, node in enumerate(nodes):
        ok = (isinstance(node, dict) and _is_int(node.get("featureIdx")) and _is_int(node.get("nextIdxLTE"))
              and _is_int(node.get("nextIdxGT")) and isinstance(node.get("threshold"), (int, float)))
        if not ok:
            raise UserError(f"{where} node {i}: {node!r} is not {{featureIdx, threshold, nextIdxLTE, nextIdxGT}}")
        if not 0 <= node["featureIdx"] < n_features:
            raise UserError(f"{where} node {i}: featureIdx {node['featureIdx']} is not one of the "
                            f"{n_features} features")
        for nxt in (node["nextIdxLTE"], node["nextIdxGT"]):
            has_true |= nxt == -2
            if nxt not in (-1, -2) and not i < nxt < len(nodes):
                raise UserError(f"{where} node {i}: next index {nxt} must be -1 (false), -2 (true) or a later "
                                f"node (up to {len(nodes) - 1})")
    if not has_true:
        raise UserError(f"{where}: no node leads to true (-2), so the tree never selects its solution")
    return nodes
