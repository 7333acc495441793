"""ProblemSizes of a tuning config, read as Tensile 4.44 reads them (SolutionStructs.ProblemSizes).

Entries: ``Exact: [sizes...]`` (the problem type's indices, e.g. M, N, batch, K for a batched GEMM, optionally
followed by LDD, LDC, LDA, LDB), ``Exact: {sizes: [...], stridesA: ...}``, ``Range: [dim, dim, ...]`` with each
dim ``[v]`` (one value), ``[min, max]`` (step min), ``[start, step, stop]``, ``[start, step, increment, stop]``
(the step grows by increment after each value) or an integer (the same size as that index), and
``MinStride: [...]`` (minimum strides per index: they only size Tensile's allocations). A GEMM's leading
dimensions not given are the smallest (``max`` of the sizes they span, as ExactList.convertLeadingDims).
Sizes come out as Tensile's tuples, (indices..., LDD, LDC, LDA, LDB), in the config's order, duplicates once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from tensile_asm.errors import UserError

# Tensile 4.44 Common.py: the sizes of a size group without BenchmarkFinalParameters
DEFAULT_SIZES = [{"Range": [[64, 64, 64, 512], 0, 0]}]
DEFAULT_BATCHED_SIZES = [{"Range": [[64, 64, 64, 512], 0, [1], 0]}]
_EXACT_DICT_FIELDS = ("count", "sizes", "stridesA", "stridesB", "stridesC", "stridesD", "padStartA", "padEndA",
                      "padStartB", "padEndB")


@dataclass(frozen=True)
class TuningSize:
    """One problem of the benchmark: Tensile's size tuple and the GEMM view of it."""

    sizes: tuple[int, ...]      # indices (I, J[, K], L) then LDD, LDC, LDA, LDB
    m: int
    n: int
    k: int
    batch: int
    ld: tuple[int, int, int, int]   # LDD, LDC, LDA, LDB

    def __str__(self) -> str:
        return f"{self.m}x{self.n}x{self.k}" + (f"x{self.batch}" if self.batch != 1 else "")

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k * self.batch


def _leading(pt, sizes: Sequence[int], given: Sequence[int] | None) -> tuple[int, int, int, int]:
    """LDD, LDC, LDA, LDB: given ones where not -1, else the smallest (Tensile's convertLeadingDims)."""
    m = sizes[0]
    a0, b0 = pt.index_assignments_a[0], pt.index_assignments_b[0]
    smallest = (m, m, sizes[a0], sizes[b0])
    if given is None:
        return smallest
    return tuple(max(s, -1 if g is None else g) for g, s in zip(given, smallest))


def _gemm_view(pt, sizes: tuple[int, ...], ld: tuple[int, int, int, int], where: str) -> TuningSize:
    free0, free1 = pt.index01_a, pt.index01_b
    k = 1
    for i in pt.indices_summation:
        k *= sizes[i]
    batch = 1
    for i in pt.indices_batch:
        batch *= sizes[i]
    if min(sizes[:pt.total_indices]) < 1:
        raise UserError(f"{where}: size {list(sizes[:pt.total_indices])} has an index below 1; every size must be "
                        f"at least 1")
    m, n = sizes[free0], sizes[free1]
    lda_min = sizes[pt.index_assignments_a[0]]
    ldb_min = sizes[pt.index_assignments_b[0]]
    for name, got, least in (("LDD", ld[0], m), ("LDC", ld[1], m), ("LDA", ld[2], lda_min), ("LDB", ld[3], ldb_min)):
        if got < least:
            raise UserError(f"{where}: size {list(sizes)} has {name} {got}, below the {least} its matrix needs; "
                            f"give {name} >= {least} or -1")
    return TuningSize(tuple(sizes[:pt.total_indices]) + ld, m, n, k, batch, ld)


def _range_dims(spec: Any, total: int, lds: int, where: str) -> list[tuple[int, ...]]:
    """Every size tuple of one Range entry, in Tensile's order (the first index varies fastest): ``total``
    indices then ``lds`` leading dimensions (a missing index maps to index 0, a missing LD is [0])."""
    if not isinstance(spec, list) or not spec or len(spec) > total + lds:
        raise UserError(f"{where}: Range must be a list with one entry per index (at most {total + lds}), e.g. "
                        f"Range: [[64, 64, 512], 0, [1], [256]]")
    spec = list(spec) + [0] * max(0, total - len(spec))
    spec += [[0]] * (total + lds - len(spec))
    sized: list[tuple[int, int, int, int]] = []
    kinds: list[tuple[str, int]] = []
    for i, dim in enumerate(spec):
        if isinstance(dim, list):
            if not dim or len(dim) > 4 or not all(isinstance(x, int) and not isinstance(x, bool) for x in dim):
                raise UserError(f"{where}: Range index {i} is {dim!r}; give [v], [min, max], [start, step, stop] or "
                                f"[start, step, increment, stop] (integers)")
            d = {1: lambda x: (x[0], 1, 0, x[0]), 2: lambda x: (x[0], x[0], 0, x[1]),
                 3: lambda x: (x[0], x[1], 0, x[2]), 4: lambda x: tuple(x)}[len(dim)](dim)
            if d[1] < 1 and d[0] < d[3]:
                raise UserError(f"{where}: Range index {i} {dim!r} has step {d[1]}; the step must be at least 1")
            kinds.append(("sized", len(sized)))
            sized.append(d)
        elif isinstance(dim, int) and not isinstance(dim, bool):
            if not 0 <= dim < i or kinds[dim][0] != "sized":
                raise UserError(f"{where}: Range index {i} maps to index {dim}, which must be an earlier index given "
                                f"as a list")
            kinds.append(("mapped", dim))
        else:
            raise UserError(f"{where}: Range index {i} is {dim!r}; give a list of sizes or the index it equals")
    values = []
    for start, step, inc, stop in sized:
        vals, cur, st = [], start, step
        while cur <= stop:
            vals.append(cur)
            cur += st
            st += inc
        values.append(vals)
    out = []
    # Tensile's odometer: index 0 fastest
    idx = [0] * len(values)
    if any(not v for v in values):
        return []
    while True:
        sized_now = [values[j][idx[j]] for j in range(len(values))]
        size = []
        for kind, ref in kinds:
            size.append(sized_now[ref] if kind == "sized" else size[ref])
        out.append(tuple(size))
        j = 0
        while j < len(idx):
            idx[j] += 1
            if idx[j] < len(values[j]):
                break
            idx[j] = 0
            j += 1
        if j == len(idx):
            return out


def read_problem_sizes(pt, config: Any, where: str) -> tuple[list[TuningSize], tuple[int, ...] | None]:
    """(sizes in the config's order without duplicates, MinStride or None)."""
    if not isinstance(config, list):
        raise UserError(f"{where}: ProblemSizes must be a list of Exact/Range/MinStride entries")
    total = pt.total_indices
    is_gemm = pt.contraction is None
    out: dict[tuple, TuningSize] = {}
    min_stride = None
    for n, entry in enumerate(config):
        w = f"{where}[{n}]"
        if not isinstance(entry, dict) or not entry:
            raise UserError(f"{w}: each ProblemSizes entry is a mapping such as Exact: [M, N, batch, K]")
        for kind, value in entry.items():
            if kind == "Exact":
                for s in _exact(pt, value, w):
                    out.setdefault(s.sizes, s)
            elif kind == "Range":
                lds = 4 if is_gemm else 0
                for full in _range_dims(value, total, lds, f"{w}: Range"):
                    tup = full[:total]
                    s = _gemm_view(pt, tup, _leading(pt, tup, full[total:] or None), f"{w}: Range")
                    out.setdefault(s.sizes, s)
            elif kind == "MinStride":
                if not isinstance(value, list) or len(value) != total:
                    raise UserError(f"{w}: MinStride {value!r} must list {total} integers, one per index")
                if min_stride is not None:
                    raise UserError(f"{w}: only one MinStride entry is allowed in a ProblemSizes list (as Tensile)")
                min_stride = tuple(int(x) for x in value)
            elif kind == "Conv":
                raise UserError(f"{w}: Conv sizes belong to convolution problem types, which this project does not "
                                f"tune; use Exact or Range")
            else:
                from tensile_asm.problem import nearest
                raise UserError(f"{w}: unknown ProblemSizes entry {kind!r}{nearest(str(kind), ('Exact', 'Range', 'MinStride'))}; "
                                f"use Exact, Range or MinStride")
    return list(out.values()), min_stride


def _exact(pt, value: Any, where: str) -> list[TuningSize]:
    total = pt.total_indices
    if isinstance(value, dict):
        unknown = [k for k in value if k not in _EXACT_DICT_FIELDS]
        if unknown:
            from tensile_asm.problem import nearest
            raise UserError(f"{where}: unknown Exact field {unknown[0]!r}{nearest(str(unknown[0]), _EXACT_DICT_FIELDS)}")
        sizes = value.get("sizes")
        if not isinstance(sizes, list) or len(sizes) not in (total, total + 4):
            raise UserError(f"{where}: Exact sizes must list {total} (or {total + 4} with LDD, LDC, LDA, LDB) integers")
        given = list(sizes[total:]) or [-1] * 4
        for i, t in enumerate("DCAB"):
            strides = value.get(f"strides{t}")
            if strides:
                given[i] = strides[0] if len(strides) == 1 else strides[1] if strides[0] in (1, -1) else strides[0]
        tup = tuple(sizes[:total])
        return [_gemm_view(pt, tup, _leading(pt, tup, given), where)]
    if not isinstance(value, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
        raise UserError(f"{where}: Exact must be a list of integers, e.g. Exact: [M, N, batch, K]")
    if len(value) == total:
        if -1 in value:
            raise UserError(f"{where}: Exact size {value} contains -1 (only leading dimensions may be -1)")
        tup = tuple(value)
        return [_gemm_view(pt, tup, _leading(pt, tup, None), where)]
    if len(value) == total + 4:
        tup = tuple(value[:total])
        return [_gemm_view(pt, tup, _leading(pt, tup, value[total:]), where)]
    names = "M, N, batch, K" if pt.batched else "M, N, K"
    raise UserError(f"{where}: Exact size {value} has {len(value)} entries; problem type {pt.name} takes {total} "
                    f"({names}) or {total + 4} (then LDD, LDC, LDA, LDB)")
