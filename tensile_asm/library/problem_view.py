"""What Tensile's host library sees of a problem when it selects a solution (its ``ContractionProblem``).

``ContractionView`` holds the sizes by index kind (free indices of A and of B, batch, bound), the tensor
strides, the data types, beta and the request flags, computed the way Tensile 4.44's
``ContractionProblem::normalize`` computes them (Source/lib/source/ContractionProblem.cpp): a free index
of C belongs to A or B, a batch index to both, bound (summation) indices come after C's. ``from_problem``
makes one from a GEMM ``Problem``; ``from_indices`` from any contraction (several free or batch indices,
initial strides other than 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from tensile_asm.errors import UserError
from tensile_asm.problem import DataTypeInfo, Problem, data_type

_LETTERS = "ijklmnopqrstuvwxyz"
PERFORMANCE_METRICS = ("DeviceEfficiency", "CUEfficiency", "Auto", "ExperimentalGrid", "ExperimentalDTree")


@dataclass(frozen=True)
class ContractionView:
    operation_identifier: str
    c_sizes: tuple[int, ...]
    free_sizes_a: tuple[int, ...]
    free_sizes_b: tuple[int, ...]
    batch_sizes: tuple[int, ...]
    bound_sizes: tuple[int, ...]
    strides: dict[str, tuple[int, ...]]  # A, B, C, D: strides in the order of each tensor's indices
    sizes_by_tensor: dict[str, tuple[int, ...]]
    types: tuple[DataTypeInfo, DataTypeInfo, DataTypeInfo, DataTypeInfo]  # a, b, c, d
    beta: float | None = None  # None: not known (BetaZero/BetaOne do not hold, beta counts as nonzero)
    alpha: float | None = None  # None: no alpha restriction (Tensile's default ScalarValue::Any)
    c_equals_d: bool = False
    strided_batched: bool = True
    high_precision_accumulate: bool = False
    f32_xdl_math_op: str = "Float"
    stochastic_rounding: bool = False
    fp16_alt_impl: bool = False
    fp16_alt_impl_round: bool = False
    deterministic_mode: bool = False
    performance_metric: str = "DeviceEfficiency"
    kernel_language: str = "Any"
    arithmetic_unit: str = "Any"
    transpose_c01: bool = False
    workspace_size: int | None = None  # bytes the caller offers; None: as much as any solution needs

    # ---- Tensile's accessors
    def free_size_a(self, i: int) -> int:
        return self.free_sizes_a[i]

    def free_size_b(self, i: int) -> int:
        return self.free_sizes_b[i]

    def batch_size(self, i: int) -> int:
        # Tensile indexes an unchecked vector; a problem without batch indices runs one batch
        return self.batch_sizes[i] if i < len(self.batch_sizes) else 1

    def bound_size(self, i: int) -> int:
        return self.bound_sizes[i]

    def size(self, index: int) -> int:
        """``ContractionProblem::size``: C's sizes, then the bound sizes."""
        if index < len(self.c_sizes):
            return self.c_sizes[index]
        return self.bound_sizes[index - len(self.c_sizes)]

    @property
    def problem_sizes(self) -> tuple[int, ...]:
        return self.c_sizes + self.bound_sizes

    @property
    def max_problem_size(self) -> int:
        return max((*self.free_sizes_a, *self.free_sizes_b, *self.bound_sizes), default=0)

    def flop_count(self) -> int:
        packing = 4 if self.types[0].char == "4xi8" else 1
        rv = 2 * packing
        for s in (*self.free_sizes_a, *self.free_sizes_b, *self.batch_sizes, *self.bound_sizes):
            rv *= s
        return rv

    def arithmetic_intensity(self) -> float:
        """``ContractionProblem::calcArithmeticIntensity``."""
        problem = 1
        for s in self.problem_sizes:
            problem *= s
        gflop = 2 * problem * 1e-9
        a = _prod(self.sizes_by_tensor["A"])
        b = _prod(self.sizes_by_tensor["B"])
        c = _prod(self.sizes_by_tensor["C"])
        if self.beta is None or self.beta != 0:
            gflop += 2 * c * 1e-9
            c *= 2
        gbyte = (a * self.types[0].bytes + b * self.types[1].bytes + c * self.types[2].bytes) * 1e-9
        return gflop / gbyte

    @property
    def alpha_restriction(self) -> str:
        return _scalar_value(self.alpha)

    @property
    def beta_restriction(self) -> str:
        return _scalar_value(self.beta)

    # ---- construction
    @classmethod
    def from_problem(cls, pr: Problem, **flags) -> "ContractionView":
        """The view of a GEMM ``Problem`` (flags: performance_metric, deterministic_mode, ...)."""
        pt = pr.problem_type
        sizes = {i: pr.size(i) for i in range(pt.total_indices)}
        return cls.from_indices(
            pt.index_assignments_a, pt.index_assignments_b, pt.num_indices_c, sizes,
            {t: pr.strides(t) for t in "ABCD"}, (*pt.ab_types, pt.dest_type, pt.dest_type),
            complex_conjugate=(pt.complex_conjugate_a, pt.complex_conjugate_b),
            **{"beta": pr.beta, "alpha": pr.alpha, "c_equals_d": pr.c_equals_d,
               "strided_batched": pt.strided_batched, "high_precision_accumulate": pt.high_precision_accumulate,
               "f32_xdl_math_op": pt.f32_xdl_math_op.enum if pt.f32_xdl_math_op else "Float",
               "stochastic_rounding": pt.stochastic_rounding, "fp16_alt_impl": pt.fp16_alt_impl,
               "fp16_alt_impl_round": pt.fp16_alt_impl_round, **flags})

    @classmethod
    def from_indices(cls, index_a: Sequence[int], index_b: Sequence[int], num_indices_c: int,
                     sizes: Sequence[int] | dict[int, int], strides: dict[str, Sequence[int]] | None = None,
                     types: Sequence[object] = ("S", "S", "S", "S"), complex_conjugate: tuple[bool, bool] = (False, False),
                     **flags) -> "ContractionView":
        """A contraction given as Tensile's index assignments (C has indices 0..num_indices_c-1, bound
        indices follow) and the size of every index; strides default to packed (first stride 1)."""
        sizes = dict(enumerate(sizes)) if not isinstance(sizes, dict) else dict(sizes)
        total = max((*index_a, *index_b, num_indices_c - 1)) + 1
        missing = [i for i in range(total) if i not in sizes]
        if missing:
            raise UserError(f"contraction problem: no size for index {missing[0]} (give all {total} sizes)")
        nc = num_indices_c
        free_a, free_b, batch = [], [], []
        for i in range(nc):
            in_a, in_b = i in index_a, i in index_b
            if in_a and in_b:
                batch.append(sizes[i])
            elif in_a:
                free_a.append(sizes[i])
            elif in_b:
                free_b.append(sizes[i])
            else:
                raise UserError(f"contraction problem: C index {i} is in neither A nor B")
        bound = [sizes[i] for i in range(nc, total)]
        by_tensor = {"A": tuple(sizes[i] for i in index_a), "B": tuple(sizes[i] for i in index_b),
                     "C": tuple(sizes[i] for i in range(nc)), "D": tuple(sizes[i] for i in range(nc))}
        packed = {t: _packed(s) for t, s in by_tensor.items()}
        given = {t: tuple(v) for t, v in (strides or {}).items()}
        names = {i: _LETTERS[i] for i in range(nc)}
        names.update({i: _LETTERS[i] for i in range(nc, total)})
        conj_a, conj_b = complex_conjugate
        opid = ("Contraction_" + "".join(names[i] for i in range(nc, total))
                + "_A" + "".join(names[i] for i in index_a) + ("C" if conj_a else "")
                + "_B" + "".join(names[i] for i in index_b) + ("C" if conj_b else "")
                + "_C" + "".join(names[i] for i in range(nc)) + "_D" + "".join(names[i] for i in range(nc)))
        return cls(operation_identifier=opid, c_sizes=by_tensor["C"], free_sizes_a=tuple(free_a),
                   free_sizes_b=tuple(free_b), batch_sizes=tuple(batch), bound_sizes=tuple(bound),
                   strides={t: given.get(t, packed[t]) for t in "ABCD"}, sizes_by_tensor=by_tensor,
                   types=tuple(data_type(t) for t in types), **flags)


def _packed(sizes: Sequence[int]) -> tuple[int, ...]:
    out, s = [], 1
    for n in sizes:
        out.append(s)
        s *= n
    return tuple(out)


def _prod(values: Sequence[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _scalar_value(v: float | None) -> str:
    """Tensile's toScalarValueEnum: 1 -> "1", -1 -> "-1", anything else -> "Any"."""
    if v is None:
        return "Any"
    return "1" if v == 1 else "-1" if v == -1 else "Any"
