"""Matching tables: distance functions and the table searches of Tensile 4.44's host library.

From Source/lib/include/Tensile/Distance.hpp and PropertyMatching.hpp:

- the table is sorted when loaded: key ascending, then speed descending, by ``std::sort``, which leaves
  entries equal in both in an order of its own: libstdc++'s, reproduced by ``stdsort``;
- ``Equality``: the first entry not below the key (``lower_bound``) is the only candidate, and only if its
  key is equal;
- ``GridBased``: the (M, N) group of the key (clamped to the table), searched for the smallest distance;
  if none of its solutions applies, the next groups, then backwards from the last group's start for the
  first entry whose solution applies;
- every other distance: from ``lower_bound(key)`` rightwards, then leftwards, stopping a direction once
  ``improvementPossible`` (on the first key element) says no better entry can follow; an entry replaces
  the best one if it is closer, or as close and faster, and its solution applies.

``best_match(table, key, distance, transform)`` returns what ``transform`` (a table value -> solution or
None) gave for the chosen entry, or None.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from tensile_asm.errors import UserError
from tensile_asm.library import stdsort

DISTANCES = ("Euclidean", "Equality", "Manhattan", "Ratio", "JSD", "Random", "GridBased")
Key = Sequence[int]


def sort_table(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table in the order Tensile's loader leaves it: its ``std::sort`` as libstdc++ does it."""
    rows = [(list(e["key"]), float(e.get("speed", 0.0)), e) for e in table]
    ordered = stdsort.sort(rows, lambda a, b: a[0] < b[0] or (a[0] == b[0] and a[1] > b[1]))
    return [e for _, _, e in ordered]


def _log(x: float) -> float:
    if x != x:
        return x
    if x == 0:
        return -math.inf
    return math.inf if x == math.inf else math.log(x)


def _div(a: float, b: float) -> float:
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


def _round(x: float) -> float:
    """std::round: halves away from zero (Python's round() rounds them to even)."""
    if x != x or x in (math.inf, -math.inf):
        return x
    f = math.floor(abs(x))
    r = f + 1 if abs(x) - f >= 0.5 else f
    return math.copysign(r, x)


def _ceil(x: float) -> float:
    return float(math.ceil(x)) if math.isfinite(x) else x


def _normalize(p: Key, q: Key) -> tuple[list[float], list[float]]:
    sp, sq = float(sum(p[:3])), float(sum(q[:3]))
    return [_div(p[i], sp) for i in range(3)], [_div(q[i], sq) for i in range(3)]


def _mul(a: float, b: float) -> float:
    return math.nan if (a == 0 and b in (math.inf, -math.inf)) or (b == 0 and a in (math.inf, -math.inf)) else a * b


def _kl(p: Sequence[float], q: Sequence[float]) -> float:
    return sum(_mul(p[i], _log(_div(p[i], q[i]))) for i in range(3))


def distance(name: str, p1: Key, p2: Key) -> float:
    """Distance ``name`` from the problem key ``p1`` to the table key ``p2`` (Distance.hpp)."""
    if name in ("Euclidean", "Equality"):
        d = 0.0
        for a, b in zip(p1, p2):
            di = float(a - b)
            d += di * di
        return d
    if name == "Manhattan":
        d = 0.0
        for a, b in zip(p1, p2):
            d += float(abs(a - b))
        return d
    if name == "Ratio":
        d = 1.0
        for a, b in zip(p1, p2):
            d += abs(_log(_div(float(a), float(b))))
        return d
    if name == "JSD":
        np_, nq = _normalize(p1, p2)
        m = [0.5 * (np_[i] + nq[i]) for i in range(3)]  # Tensile's JSD looks at the first three key elements
        return 0.5 * _kl(np_, m) + 0.5 * _kl(nq, m)
    if name == "GridBased":
        m, n, k = float(p2[0]), float(p2[1]), float(p2[2])
        step_m = _ceil(_div(p1[0], m)) if p1[0] <= 32768 else 1.0
        step_n = _ceil(_div(p1[1], n)) if p1[1] <= 32768 else 1.0
        if p1[0] <= 32768 and p1[1] <= 32768:
            ratio = float(p1[0] * p1[1]) / (step_m * m * step_n * n)
            d = _round(_div(100 * step_m * step_n, ratio ** 2))
        else:
            d = _round(10000 * step_m * step_n * (float(p1[0] - p2[0]) ** 2 + float(p1[1] - p2[1]) ** 2) ** 0.5)
        return d + _div(abs(k - p1[2]), k + p1[2] * 8)
    if name == "Random":
        raise UserError("a Matching table with the Random distance picks by rand() in Tensile's host library; "
                        "no reproducible selection exists for it")
    raise UserError(f"Matching distance {name!r} is not one Tensile 4.44 knows; use one of {', '.join(DISTANCES)}")


def improvement_possible(name: str, p1: Key, p2: Key, best: float) -> bool:
    """Distance.hpp's improvementPossible for index 0."""
    if name == "Euclidean":
        d0 = float(p1[0] - p2[0])
        return d0 * d0 < best or list(p1) == list(p2)
    if name == "Manhattan":
        return float(abs(p1[0] - p2[0])) < best or list(p1) == list(p2)
    if name == "JSD":
        np_, nq = _normalize(p1, p2)
        m = 0.5 * (np_[0] + nq[0])
        d0 = 0.5 * _mul(np_[0], _log(_div(np_[0], m))) + 0.5 * _mul(nq[0], _log(_div(nq[0], m)))
        return d0 < best or list(p1) == list(p2)
    return True  # Ratio, Random, GridBased


def _lower_bound(n_lo: int, n_hi: int, below: Callable[[int], bool]) -> int:
    lo, hi = n_lo, n_hi
    while lo < hi:
        mid = (lo + hi) // 2
        if below(mid):
            lo = mid + 1
        else:
            hi = mid
    return lo


def best_match(table: Sequence[dict[str, Any]], key: Key, dist: str,
               transform: Callable[[dict[str, Any]], Any], keys: list[list[int]] | None = None) -> Any:
    """The solution Tensile's ``findBestMatch`` returns for ``key`` from a sorted ``table`` (``keys``: its
    entries' keys as lists, if the caller keeps them)."""
    if not table:
        return None
    key = list(key)
    keys = keys if keys is not None else [list(e["key"]) for e in table]
    start = _lower_bound(0, len(table), lambda i: keys[i] < key)
    if dist == "Equality":
        return transform(table[start]) if start < len(table) and keys[start] == key else None
    if dist == "GridBased":
        return _grid(table, keys, key, transform)
    distance(dist, key, keys[0])  # refuses Random and unknown distances before any search
    best, best_d, best_speed = None, math.inf, 0.0
    for order in (range(start, len(table)), range(start - 1, -1, -1)):
        for i in order:
            if best is not None and not improvement_possible(dist, key, keys[i], best_d):
                break
            d = distance(dist, key, keys[i])
            speed = float(table[i].get("speed", 0.0))
            if d < best_d or (d == best_d and speed > best_speed):
                found = transform(table[i])
                if found is not None:
                    best, best_d, best_speed = found, d, speed
    return best


def _grid(table: Sequence[dict[str, Any]], keys: list[list[int]], key: list[int],
          transform: Callable[[dict[str, Any]], Any]) -> Any:
    end = len(table)
    last_m = keys[-1][0]
    n_upper, n_lower = 0, 0
    best, best_d, found = None, math.inf, False
    while n_upper != end and not found:
        target = min(key[0], last_m)
        m_lower = _lower_bound(n_upper, end, lambda i: keys[i][0] < target)
        target = min(keys[m_lower][0] + 1, last_m + 1)
        m_upper = _lower_bound(m_lower, end, lambda i: keys[i][0] < target)
        max_n = keys[m_upper - 1][1]
        target = min(key[1], max_n)
        n_lower = _lower_bound(m_lower, m_upper, lambda i: keys[i][1] < target)
        target = min(keys[n_lower][1] + 1, max_n + 1)
        n_upper = _lower_bound(n_lower, m_upper, lambda i: keys[i][1] < target)
        for i in range(n_lower, n_upper):
            d = distance("GridBased", key, keys[i])
            if d < best_d:
                match = transform(table[i])
                if match is not None:
                    best, best_d, found = match, d, True
    if not found:
        for i in range(n_lower - 1, -1, -1):
            match = transform(table[i])
            if match is not None:
                return match
    return best
