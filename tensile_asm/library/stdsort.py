"""The order GNU libstdc++'s ``std::sort`` leaves a sequence in, equal elements included.

Tensile's host library sorts each Matching table with ``std::sort`` when it loads it
(Serialization/MatchingLibrary.hpp: key ascending, then speed descending). ``std::sort`` is not stable,
so entries equal in key and speed (real logic files have them: two solutions measured at one size with
the same speed) end in an order the C++ standard leaves open; which one the search meets first decides
the selection. rocBLAS on Linux is built against libstdc++, whose introsort is reproduced here step by
step (bits/stl_algo.h and bits/stl_heap.h, GCC 12: median-of-three pivot moved to the front, unguarded
partition, recursion on the right part, heap sort past depth 2*floor(log2 n), then insertion sort with a
threshold of 16 elements), so ``sort(seq, less)`` gives the permutation libstdc++ gives.
"""

from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")
Less = Callable[[T, T], bool]
_THRESHOLD = 16


def sort(seq: list[T], less: Less) -> list[T]:
    """A new list: ``seq`` in the order ``std::sort(seq.begin(), seq.end(), less)`` leaves it."""
    a = list(seq)
    n = len(a)
    if n > 1:
        _introsort_loop(a, 0, n, 2 * (n.bit_length() - 1), less)
        _final_insertion_sort(a, 0, n, less)
    return a


def _introsort_loop(a: list, first: int, last: int, depth: int, less: Less) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(a, first, last, less)  # std::__partial_sort(first, last, last)
            return
        depth -= 1
        cut = _unguarded_partition_pivot(a, first, last, less)
        _introsort_loop(a, cut, last, depth, less)
        last = cut


def _unguarded_partition_pivot(a: list, first: int, last: int, less: Less) -> int:
    mid = first + (last - first) // 2
    _move_median_to_first(a, first, first + 1, mid, last - 1, less)
    return _unguarded_partition(a, first + 1, last, first, less)


def _move_median_to_first(a: list, result: int, x: int, y: int, z: int, less: Less) -> None:
    if less(a[x], a[y]):
        if less(a[y], a[z]):
            pick = y
        elif less(a[x], a[z]):
            pick = z
        else:
            pick = x
    elif less(a[x], a[z]):
        pick = x
    elif less(a[y], a[z]):
        pick = z
    else:
        pick = y
    a[result], a[pick] = a[pick], a[result]


def _unguarded_partition(a: list, first: int, last: int, pivot: int, less: Less) -> int:
    while True:
        while less(a[first], a[pivot]):
            first += 1
        last -= 1
        while less(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _final_insertion_sort(a: list, first: int, last: int, less: Less) -> None:
    if last - first > _THRESHOLD:
        _insertion_sort(a, first, first + _THRESHOLD, less)
        for i in range(first + _THRESHOLD, last):
            _unguarded_linear_insert(a, i, less)
    else:
        _insertion_sort(a, first, last, less)


def _insertion_sort(a: list, first: int, last: int, less: Less) -> None:
    for i in range(first + 1, last):
        if less(a[i], a[first]):
            val = a[i]
            a[first + 1:i + 1] = a[first:i]  # std::move_backward
            a[first] = val
        else:
            _unguarded_linear_insert(a, i, less)


def _unguarded_linear_insert(a: list, last: int, less: Less) -> None:
    val = a[last]
    nxt = last - 1
    while less(val, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = val


# ---- std::__partial_sort(first, last, last): __heap_select (make_heap) then __sort_heap
def _heap_sort(a: list, first: int, last: int, less: Less) -> None:
    n = last - first
    if n >= 2:  # std::__make_heap
        parent = (n - 2) // 2
        while True:
            _adjust_heap(a, first, parent, n, a[first + parent], less)
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:  # std::__sort_heap: __pop_heap(first, last - 1, last - 1) each time
        last -= 1
        val = a[last]
        a[last] = a[first]
        _adjust_heap(a, first, 0, last - first, val, less)


def _adjust_heap(a: list, first: int, hole: int, length: int, val, less: Less) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2  # std::__push_heap
    while hole > top and less(a[first + parent], val):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = val
