"""stdsort reproduces libstdc++'s std::sort order (and its heap-sort fallback), equal elements included."""

import random
import shutil
import subprocess

import pytest

from tensile_asm.library import stdsort
from tensile_asm.library.matching import sort_table

CXX = next((c for c in ("g++", "clang++", "clang++-22", "clang++-19") if shutil.which(c)), None)
PROGRAM = r"""
#include <algorithm>
#include <iostream>
#include <string>
#include <utility>
#include <vector>
int main() {
    std::string mode; size_t n;
    while (std::cin >> mode >> n) {
        std::vector<std::pair<long, long>> v(n);  // (key, tag); compared on the key only
        for (auto& e : v) std::cin >> e.first >> e.second;
        auto less = [](auto const& a, auto const& b) { return a.first < b.first; };
        if (mode == "sort") std::sort(v.begin(), v.end(), less);
        else std::partial_sort(v.begin(), v.end(), v.end(), less);
        for (auto const& e : v) std::cout << e.second << ' ';
        std::cout << '\n';
    }
}
"""


@pytest.fixture(scope="module")
def libstdcxx(tmp_path_factory):
    if CXX is None:
        pytest.skip("no C++ compiler (g++ or clang++) to compare with libstdc++'s std::sort")
    d = tmp_path_factory.mktemp("stdsort")
    (d / "sort.cpp").write_text(PROGRAM)
    subprocess.run([CXX, "-O1", "-std=c++17", "-o", str(d / "sort"), str(d / "sort.cpp")], check=True)
    return d / "sort"


def _cases(rng, n_cases):
    sizes = [0, 1, 2, 15, 16, 17, 33, 64, 100, 257, 1000]
    out = []
    for i in range(n_cases):
        n = sizes[i] if i < len(sizes) else rng.randint(0, 600)
        spread = rng.choice((1, 2, 3, 8, 50, 10**6))  # few distinct keys: many equal elements
        out.append([(rng.randrange(spread), tag) for tag in range(n)])
    out.append([(k // 7, tag) for tag, k in enumerate(range(500))])  # sorted runs
    out.append([(500 - k // 3, tag) for tag, k in enumerate(range(500))])  # reversed runs
    return out


def test_sort_and_heap_sort_order_equal_elements_as_libstdcxx(libstdcxx, request):
    rng = random.Random(5)
    cases = _cases(rng, 200 if request.config.getoption("--slow") else 40)
    text = "".join(f"{mode} {len(c)} " + " ".join(f"{k} {t}" for k, t in c) + "\n"
                   for c in cases for mode in ("sort", "heap"))
    got = subprocess.run([str(libstdcxx)], input=text, capture_output=True, text=True, check=True).stdout.splitlines()
    less = lambda a, b: a[0] < b[0]  # noqa: E731
    for i, case in enumerate(cases):
        ours = [t for _, t in stdsort.sort(case, less)]
        heap = list(case)
        stdsort._heap_sort(heap, 0, len(heap), less)
        assert ours == [int(x) for x in got[2 * i].split()], f"std::sort, case {i} (n={len(case)})"
        assert [t for _, t in heap] == [int(x) for x in got[2 * i + 1].split()], f"heap sort, case {i}"
        assert [k for k, _ in stdsort.sort(case, less)] == sorted(k for k, _ in case)


def test_equal_elements_are_not_kept_in_input_order():
    # what makes the emulation matter: past 16 elements std::sort is not stable
    case = [(0, t) for t in range(40)]
    assert [t for _, t in stdsort.sort(case, lambda a, b: a[0] < b[0])] != list(range(40))


def test_matching_table_sort_key_then_speed_descending():
    rng = random.Random(2)
    table = [{"key": [rng.choice((64, 128)), rng.choice((1, 64)), 64], "index": i, "speed": rng.choice((1.0, 2.5))}
             for i in range(60)]
    out = sort_table(table)
    assert sorted(e["index"] for e in out) == list(range(60))
    assert [(e["key"], -e["speed"]) for e in out] == sorted((e["key"], -e["speed"]) for e in table)
