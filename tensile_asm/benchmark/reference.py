"""GEMM test data in device layout, the float64 reference, and the error measure.

Layout (column-major, Tensile's batched GEMM): A[m, k] at m + k*lda (transposed: k + m*lda),
B[k, n] at k + n*ldb (transposed: n + k*ldb), C/D[m, n] at m + n*ldc; batch b adds b * batch_stride.

Error measure: for each element of D, |D - ref| / (|alpha|*(|A||B|)[m, n] + |beta|*|C[m, n]|), the
componentwise bound a correctly rounded fp32 dot product satisfies; it must stay below
``tolerance(K)`` = 4*(K + 2)*2^-24. Elements of D outside the M x N x batch region must keep their
poison bits: a kernel that writes past the edges fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

EPS32 = 2.0 ** -24
POISON = np.uint32(0x7FC0DEAD)   # a quiet NaN with a recognisable payload


@dataclass
class GemmInstance:
    m: int
    n: int
    k: int
    batch: int
    transpose_a: bool
    transpose_b: bool
    ld: dict = field(default_factory=dict)            # A, B, C, D leading dimensions
    batch_stride: dict = field(default_factory=dict)
    arrays: dict = field(default_factory=dict)         # flat float32 buffers A, B, C, D

    def shape2d(self, t: str) -> tuple[int, int]:
        """(rows, cols) of one batch's stored matrix, rows being the unit-stride dimension."""
        if t == "A":
            return (self.k, self.m) if self.transpose_a else (self.m, self.k)
        if t == "B":
            return (self.n, self.k) if self.transpose_b else (self.k, self.n)
        return (self.m, self.n)

    def tensor2d_size(self, t: str) -> int:
        return self.ld[t] * self.shape2d(t)[1]

    def view(self, t: str, flat: np.ndarray | None = None) -> np.ndarray:
        """The logical (batch, rows, cols) matrices: A as [b, m, k], B as [b, k, n], C/D as [b, m, n]."""
        flat = self.arrays[t] if flat is None else flat
        rows, cols = self.shape2d(t)
        s = flat.itemsize
        v = np.lib.stride_tricks.as_strided(flat, shape=(self.batch, rows, cols),
                                            strides=(self.batch_stride[t] * s, s, self.ld[t] * s))
        if (t == "A" and self.transpose_a) or (t == "B" and self.transpose_b):
            v = v.transpose(0, 2, 1)
        return v


def make_instance(m: int, n: int, k: int, batch: int = 1, transpose_a: bool = False, transpose_b: bool = False,
                  pad: int = 0, beta_zero_c_nan: bool = False, seed: int = 0) -> GemmInstance:
    """Random data, never zeros: magnitudes in [0.25, 1) with random signs. D is poisoned."""
    rng = np.random.default_rng(seed)
    inst = GemmInstance(m, n, k, batch, transpose_a, transpose_b)
    for t in "ABCD":
        rows, cols = inst.shape2d(t)
        inst.ld[t] = rows + pad
        inst.batch_stride[t] = inst.ld[t] * cols + pad * 3
        size = inst.batch_stride[t] * batch
        if t == "D":
            inst.arrays[t] = np.full(size, POISON, dtype=np.uint32).view(np.float32)
        elif t == "C" and beta_zero_c_nan:
            inst.arrays[t] = np.full(size, np.nan, dtype=np.float32)
        else:
            mag = rng.uniform(0.25, 1.0, size).astype(np.float32)
            inst.arrays[t] = np.where(rng.random(size) < 0.5, -mag, mag).astype(np.float32)
    return inst


def reference(inst: GemmInstance, alpha: float, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """float64 alpha*A@B + beta*C, and the componentwise error scale for each element."""
    a, b = inst.view("A").astype(np.float64), inst.view("B").astype(np.float64)
    ref = alpha * np.matmul(a, b)
    scale = abs(alpha) * np.matmul(np.abs(a), np.abs(b))
    if beta != 0.0:
        c = inst.view("C").astype(np.float64)
        ref = ref + beta * c
        scale = scale + abs(beta) * np.abs(c)
    return ref, scale


def tolerance(k: int) -> float:
    return 4.0 * (k + 2) * EPS32


@dataclass
class Comparison:
    max_rel_error: float
    tolerance: float
    bad_elements: int
    outside_writes: int

    @property
    def passed(self) -> bool:
        return self.bad_elements == 0 and self.outside_writes == 0 and np.isfinite(self.max_rel_error)


def compare(inst: GemmInstance, d_flat: np.ndarray, alpha: float, beta: float) -> Comparison:
    ref, scale = reference(inst, alpha, beta)
    got = inst.view("D", d_flat).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.abs(got - ref) / np.maximum(scale, np.finfo(np.float64).tiny)
    rel = np.where(np.isnan(got), np.inf, rel)
    tol = tolerance(inst.k)
    # Everything outside the logical D region must still hold the poison pattern.
    mask = np.zeros(d_flat.size, dtype=bool)
    mask[_region_indices(inst)] = True
    outside = d_flat.view(np.uint32)[~mask]
    return Comparison(float(rel.max()) if rel.size else 0.0, tol, int((rel > tol).sum()),
                      int((outside != POISON).sum()))


def _region_indices(inst: GemmInstance) -> np.ndarray:
    b = np.arange(inst.batch)[:, None, None] * inst.batch_stride["D"]
    m = np.arange(inst.m)[None, :, None]
    n = np.arange(inst.n)[None, None, :] * inst.ld["D"]
    return (b + m + n).reshape(-1)
