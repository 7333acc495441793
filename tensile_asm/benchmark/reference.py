"""GEMM test data in device layout, the float64 reference, and the error measure.

Layout (column-major, Tensile's batched GEMM): A[m, k] at m + k*lda (transposed: k + m*lda),
B[k, n] at k + n*ldb (transposed: n + k*ldb), C/D[m, n] at m + n*ldc; batch b adds b * batch_stride.
With a first stride s0 (``first_stride``, Tensile's UseInitialStrides problems: the stride of each tensor's first
index) the first index is scaled by it: A[m, k] at m*s0 + k*lda, C/D[m, n] at m*s0 + n*ldc; s0 or ld may be 0
for the tensors only read (C broadcast along one index, as rocBLAS's SBIc bias problems).

Types: A/B and C/D are fp32 (S), fp64 (D), fp16 (H) or bf16 (B, held as uint16 bit patterns since
numpy has no bfloat16), or complex (C: complex64, Z: complex128, real and imaginary parts interleaved as
Tensile's); the reference computes in float64 (complex128) from the exact input values, with A and/or B
conjugated for the ``AlikC``/``BjlkC`` problem types (``conjugate``).

Pointer-array batched GEMM (``batch_buffers``/``gather_batches``): each batch's matrix is its own
buffer, ``lead`` filler elements (the kernel's element offset) followed by that batch's slice of the
flat array above; the reference and the comparison read the flat array gathered back.

Error measure: for each element of D, |D - ref| / (|alpha|*(|A||B|)[m, n] + |beta|*|C[m, n]|), the
componentwise bound a correctly rounded dot product satisfies; it must stay below
``tolerance(K)`` = 4*(K + 2)*eps(accumulation) + 2*eps(D's type), with fp32 accumulation for S, H and
B inputs and fp64 for D; xf32 problems (F32XdlMathOp XFloat32: gfx942's v_mfma_f32_*_xf32 round each fp32 A and B
value to xf32 before multiplying) add 2u + u^2 for the inputs' rounding (u = ``XF32_ROUNDOFF``, each product then
within (2u + u^2)|a||b| of the exact one). The reference keeps the exact fp32 inputs: how the hardware rounds to
xf32 (nearest or toward zero) is not given in the ISA documents at hand, and the emulator multiplies the inputs
as exact fp32, so the tolerance covers either. Complex elements use their modulus, and each part of a complex dot product is a sum of
2K real products, so K counts twice (plus alpha's and beta's complex products). Elements of D outside the M x N x batch region must keep their poison bits:
a kernel that writes past the edges fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tensile_asm.benchmark import float8

EPS32 = 2.0 ** -24
# xf32 (1 sign, 8 exponent, 10 fraction bits, as TF32): the relative error of one fp32 value rounded to it, the
# larger one of truncation (2^-10; round to nearest: 2^-11), since the rounding mode is not documented
XF32_ROUNDOFF = 2.0 ** -10
# per type: numpy storage, unit roundoff, poison bit pattern (quiet NaNs with a payload)
# 4xi8: four int8 values packed in 32 bits (Tensile's Int8x4; K counts packs); I8: int8; I: int32
STORAGE = {"S": np.float32, "D": np.float64, "H": np.float16, "B": np.uint16, "4xi8": np.uint32, "I": np.int32,
           "I8": np.int8, "C": np.complex64, "Z": np.complex128,
           "F8": np.uint8, "B8": np.uint8, "F8B8": np.uint8, "B8F8": np.uint8}
ROUNDOFF = {"S": 2.0 ** -24, "D": 2.0 ** -53, "H": 2.0 ** -11, "B": 2.0 ** -8, "4xi8": 0.0, "I": 0.0, "I8": 0.0,
            "C": 2.0 ** -24, "Z": 2.0 ** -53, **float8.ROUNDOFF}
# complex types: both parts hold their real type's poison (the bit pattern is per part)
POISON_BITS = {"S": 0x7FC0DEAD, "D": 0x7FF8DEADDEADDEAD, "H": 0x7E5D, "B": 0x7FDD, "4xi8": 0x7FC0DEAD,
               "I": 0x7FC0DEAD, "I8": 0x5D, "C": 0x7FC0DEAD, "Z": 0x7FF8DEADDEADDEAD,
               "F8": float8.NAN_CODE, "B8": float8.NAN_CODE, "F8B8": float8.NAN_CODE, "B8F8": float8.NAN_CODE}
COMPLEX_TYPES = ("C", "Z")
INTEGER_TYPES = ("4xi8", "I", "I8")
# gfx942's fp8/bf8 (FNUZ) and the hybrids (A's format, B's format): uint8 codes (float8.py)
FLOAT8_TYPES = ("F8", "B8", "F8B8", "B8F8")
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def operand_type(type_char: str, t: str) -> str:
    """The type of matrix ``t``'s elements (A, B, C or D) given the data type (A/B) or dest type (C/D):
    the hybrid fp8 types name A's format then B's."""
    return float8.operand_types(type_char)[t == "B"] if type_char in FLOAT8_TYPES else type_char


def to_float64(values: np.ndarray, type_char: str, ocp: bool = False) -> np.ndarray:
    """float64 values (complex128 for the complex types; fp8 codes decoded exactly, a hybrid type as A's
    format: use ``operand_type``; ``ocp``: the OCP fp8/bf8 formats of gfx950, else gfx942's FNUZ)."""
    if type_char in FLOAT8_TYPES:
        return float8.decode(values, operand_type(type_char, "A"), ocp)
    if type_char in COMPLEX_TYPES:
        return values.astype(np.complex128)
    if type_char == "B":
        return (values.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return values.astype(np.float64)


def from_float(values: np.ndarray, type_char: str, ocp: bool = False) -> np.ndarray:
    """Round float values into the storage of a type (bf16 by round-to-nearest-even)."""
    if type_char == "B":
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return rounded.astype(np.uint16)
    if type_char in FLOAT8_TYPES:   # nearest code, saturating (a hybrid type as A's format)
        return float8.encode(values, operand_type(type_char, "A"), ocp)
    if type_char == "I8":       # int8 saturates (a large guard value reads as 127)
        return np.clip(values, -128, 127).astype(np.int8)
    return values.astype(STORAGE[type_char])


def poison_bits(type_char: str, ocp: bool = False):
    """The poison pattern of one element, as an unsigned integer of its size (of one part for the complex
    types: compare ``part_bits`` of an array with it; fp8/bf8: the NaN code of the OCP formats with ``ocp``)."""
    size = np.dtype(STORAGE[type_char]).itemsize // (2 if type_char in COMPLEX_TYPES else 1)
    if ocp and type_char in FLOAT8_TYPES:
        return _UINT[size](float8.OCP_NAN_CODE)
    return _UINT[size](POISON_BITS[type_char])


def poison_value(type_char: str, ocp: bool = False):
    """One poisoned element in the type's storage (both parts poisoned for the complex types)."""
    bits = poison_bits(type_char, ocp)
    if type_char in COMPLEX_TYPES:
        return np.array([bits, bits]).view(STORAGE[type_char])[0]
    return bits.view(STORAGE[type_char])


def part_bits(values: np.ndarray) -> np.ndarray:
    """The bits of each element (of each part, for complex storage): [elements, parts] unsigned integers."""
    parts = 2 if np.iscomplexobj(values) else 1
    return values.view(_UINT[values.itemsize // parts]).reshape(-1, parts)


@dataclass
class GemmInstance:
    m: int
    n: int
    k: int
    batch: int
    transpose_a: bool
    transpose_b: bool
    data_type: str = "S"
    dest_type: str = "S"
    conjugate_a: bool = False                          # complex: A / B enter the product conjugated
    conjugate_b: bool = False
    ld: dict = field(default_factory=dict)            # A, B, C, D leading dimensions
    batch_stride: dict = field(default_factory=dict)
    first_stride: dict = field(default_factory=dict)   # A, B, C, D: stride of the first index (1 where absent)
    arrays: dict = field(default_factory=dict)         # flat float32 buffers A, B, C, D
    float8_ocp: bool = False                           # fp8/bf8 codes in the OCP formats (gfx950), else FNUZ

    def shape2d(self, t: str) -> tuple[int, int]:
        """(rows, cols) of one batch's stored matrix, rows being the unit-stride dimension."""
        if t == "A":
            return (self.k, self.m) if self.transpose_a else (self.m, self.k)
        if t == "B":
            return (self.n, self.k) if self.transpose_b else (self.k, self.n)
        return (self.m, self.n)

    def elements(self, t: str) -> int:
        """Elements of matrix ``t``'s buffer, every batch with its padding."""
        return self.batch_stride[t] * self.batch

    def element_bytes(self, t: str) -> int:
        return np.dtype(STORAGE[self.data_type if t in "AB" else self.dest_type]).itemsize

    def first(self, t: str) -> int:
        """The stride of matrix ``t``'s first (stored row) index: 1 unless ``first_stride`` says otherwise."""
        return self.first_stride.get(t, 1)

    def tensor2d_size(self, t: str) -> int:
        return self.ld[t] * self.shape2d(t)[1]

    def view(self, t: str, flat: np.ndarray | None = None, writeable: bool = False) -> np.ndarray:
        """The logical (batch, rows, cols) matrices: A as [b, m, k], B as [b, k, n], C/D as [b, m, n]. Read-only
        unless ``writeable`` (for D, whose region never overlaps itself; C's may, with a first stride or leading
        dimension of 0)."""
        flat = self.arrays[t] if flat is None else flat
        rows, cols = self.shape2d(t)
        s = flat.itemsize
        v = np.lib.stride_tricks.as_strided(flat, shape=(self.batch, rows, cols),
                                            strides=(self.batch_stride[t] * s, self.first(t) * s, self.ld[t] * s),
                                            writeable=writeable)
        if (t == "A" and self.transpose_a) or (t == "B" and self.transpose_b):
            v = v.transpose(0, 2, 1)
        return v


def empty_instance(m: int, n: int, k: int, batch: int = 1, transpose_a: bool = False, transpose_b: bool = False,
                   pad: int = 0, data_type: str = "S", dest_type: str = "S", first_stride: dict | None = None,
                   ld: dict | None = None) -> GemmInstance:
    """The instance's shape, leading dimensions and batch strides (``pad`` elements added), no arrays yet.
    ``first_stride``/``ld``: per tensor, the first index's stride and the leading dimension where not the
    packed ones (the leading dimension then defaults to just past the first index's span; D's region must not
    overlap itself)."""
    inst = GemmInstance(m, n, k, batch, transpose_a, transpose_b, data_type, dest_type)
    inst.first_stride = {t: v for t, v in (first_stride or {}).items() if v != 1}
    for t in "ABCD":
        rows, cols = inst.shape2d(t)
        s0 = inst.first(t)
        inst.ld[t] = (ld or {}).get(t, (rows - 1) * s0 + 1 + pad if s0 != 1 else rows + pad)
        span = (rows - 1) * s0 + (cols - 1) * inst.ld[t] + 1
        inst.batch_stride[t] = max(inst.ld[t] * cols, span) + pad * 3
    if inst.first("D") < 1 or inst.ld["D"] < (m - 1) * inst.first("D") + 1:
        raise ValueError(f"D's strides ({inst.first('D')}, {inst.ld['D']}) overlap its {m} x {n} elements")
    return inst


def make_instance(m: int, n: int, k: int, batch: int = 1, transpose_a: bool = False, transpose_b: bool = False,
                  pad: int = 0, beta_zero_c_nan: bool = False, seed: int = 0, data_type: str = "S",
                  dest_type: str = "S", conjugate: tuple[bool, bool] = (False, False), first_stride: dict | None = None,
                  ld: dict | None = None, float8_ocp: bool = False) -> GemmInstance:
    """Random data, never zeros: magnitudes in [0.25, 1) with random signs (each part of a complex value).
    D is poisoned. ``float8_ocp``: fp8/bf8 data in the OCP formats (gfx950's), else gfx942's FNUZ."""
    rng = np.random.default_rng(seed)
    inst = empty_instance(m, n, k, batch, transpose_a, transpose_b, pad, data_type, dest_type, first_stride, ld)
    inst.float8_ocp = float8_ocp
    inst.conjugate_a, inst.conjugate_b = conjugate
    for t in "ABCD":
        type_char = data_type if t in "AB" else dest_type
        size = inst.elements(t)
        if t == "D" or (t == "C" and beta_zero_c_nan):
            inst.arrays[t] = np.full(size, poison_value(type_char, float8_ocp), dtype=STORAGE[type_char])
        else:
            if type_char == "4xi8":     # every int8 value, packed four to a word
                inst.arrays[t] = rng.integers(-128, 128, (size, 4)).astype(np.int8).view(np.uint32).reshape(-1)
                continue
            if type_char == "I8":       # every int8 value
                inst.arrays[t] = rng.integers(-128, 128, size).astype(np.int8)
                continue
            if type_char == "I":        # all of int32 (alpha*AB + beta*C wraps, as the hardware's)
                inst.arrays[t] = rng.integers(-2**31, 2**31, size).astype(np.int32)
                continue
            if type_char in COMPLEX_TYPES:
                parts = rng.uniform(0.25, 1.0, (size, 2)) * np.where(rng.random((size, 2)) < 0.5, -1.0, 1.0)
                inst.arrays[t] = (parts[:, 0] + 1j * parts[:, 1]).astype(STORAGE[type_char])
                continue
            mag = rng.uniform(0.25, 1.0, size)
            inst.arrays[t] = from_float(np.where(rng.random(size) < 0.5, -mag, mag), operand_type(type_char, t),
                                        float8_ocp)
    return inst


def batch_buffers(inst: GemmInstance, t: str, lead: int, filler) -> list[np.ndarray]:
    """Matrix ``t`` split into one buffer per batch for a pointer-array launch: ``lead`` elements of
    ``filler`` (a value of the storage dtype, e.g. poison bits viewed as it) then the batch's
    ``batch_stride`` elements."""
    flat, bs = inst.arrays[t], inst.batch_stride[t]
    head = np.full(lead, filler, dtype=flat.dtype)
    return [np.concatenate([head, flat[b * bs:(b + 1) * bs]]) for b in range(inst.batch)]


def gather_batches(inst: GemmInstance, t: str, buffers: list[np.ndarray], lead: int,
                   filler) -> tuple[np.ndarray, int]:
    """The flat array of matrix ``t`` again from per-batch buffers made by ``batch_buffers``, and how
    many of their ``lead`` elements no longer hold ``filler``'s bits (a kernel that ignored the offset)."""
    bs = inst.batch_stride[t]
    flat = inst.arrays[t].copy()
    bits = part_bits(np.asarray([filler], dtype=flat.dtype))
    changed = 0
    for b, buf in enumerate(buffers):
        flat[b * bs:(b + 1) * bs] = buf[lead:lead + bs]
        changed += int((part_bits(buf[:lead]) != bits).any(axis=1).sum())
    return flat, changed


def _wrap32(x: np.ndarray) -> np.ndarray:
    return ((x + 2**31) % 2**32 - 2**31).astype(np.int64)


def integer_reference(inst: GemmInstance, alpha: int, beta: int) -> np.ndarray:
    """Exact alpha*A@B + beta*C in int32 arithmetic (wrapping modulo 2^32 as the hardware's integer
    multiply and add): Int8x4 A/B are K packs of four int8 values whose products all add up; Int8 A/B
    are K int8 values."""
    def unpack(t):
        if inst.data_type == "I8":
            return inst.view(t).astype(np.int64)[..., None]
        v = np.ascontiguousarray(inst.view(t), dtype=np.uint32)
        return v.view(np.int8).reshape(*v.shape, 4).astype(np.int64)   # little endian: byte q is value q
    a, b = unpack("A"), unpack("B")
    acc = _wrap32(np.einsum("bmkq,bknq->bmn", a, b))      # |products| < 2^14 each: exact in int64
    d = _wrap32(_wrap32(int(alpha) * acc) + (_wrap32(int(beta) * inst.view("C").astype(np.int64)) if beta else 0))
    return d


def reference(inst: GemmInstance, alpha: float, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """float64 alpha*A@B + beta*C, and the componentwise error scale for each element (integer types:
    the exact int32 result, scale 1 and tolerance 0)."""
    if inst.data_type in INTEGER_TYPES:
        ref = integer_reference(inst, int(alpha), int(beta)).astype(np.float64)
        return ref, np.ones_like(ref)
    a = to_float64(inst.view("A"), operand_type(inst.data_type, "A"), inst.float8_ocp)
    b = to_float64(inst.view("B"), operand_type(inst.data_type, "B"), inst.float8_ocp)
    if inst.conjugate_a:
        a = np.conj(a)
    if inst.conjugate_b:
        b = np.conj(b)
    ref = alpha * np.matmul(a, b)
    scale = abs(alpha) * np.matmul(np.abs(a), np.abs(b))
    if beta != 0.0:
        c = to_float64(inst.view("C"), inst.dest_type, inst.float8_ocp)
        ref = ref + beta * c
        scale = scale + abs(beta) * np.abs(c)
    return ref, scale


def tolerance(k: int, data_type: str = "S", dest_type: str = "S", accumulate_type: str | None = None,
              input_roundoff: float = 0.0) -> float:
    """``accumulate_type`` H: the kernel sums in fp16 (Tensile's HB kernels without HighPrecisionAccumulate
    accumulate with v_pk_fma_f16), so the sum's roundoff is fp16's; otherwise fp32's (fp64's for D).
    ``input_roundoff`` u: the MFMA rounds each A and B value first (xf32: ``XF32_ROUNDOFF``), 2u + u^2 more."""
    if data_type in INTEGER_TYPES:
        return 0.0      # exact
    if data_type in COMPLEX_TYPES:   # each part sums 2K real products; alpha and beta add complex products
        k = 2 * k + 4
    accumulate = ROUNDOFF["D"] if data_type in ("D", "Z") else ROUNDOFF["H"] if accumulate_type == "H" else ROUNDOFF["S"]
    return 4.0 * (k + 2) * accumulate + 2.0 * ROUNDOFF[dest_type] + 2.0 * input_roundoff + input_roundoff ** 2


@dataclass
class Comparison:
    max_rel_error: float
    tolerance: float
    bad_elements: int
    outside_writes: int

    @property
    def passed(self) -> bool:
        return self.bad_elements == 0 and self.outside_writes == 0 and np.isfinite(self.max_rel_error)


def compare(inst: GemmInstance, d_flat: np.ndarray, alpha: float, beta: float,
            accumulate_type: str | None = None, input_roundoff: float = 0.0) -> Comparison:
    ref, scale = reference(inst, alpha, beta)
    got = to_float64(inst.view("D", d_flat), inst.dest_type, inst.float8_ocp)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.abs(got - ref) / np.maximum(scale, np.finfo(np.float64).tiny)
    rel = np.where(np.isnan(got), np.inf, rel)
    tol = tolerance(inst.k, inst.data_type, inst.dest_type, accumulate_type, input_roundoff)
    # Everything outside the logical D region must still hold the poison pattern.
    mask = np.zeros(d_flat.size, dtype=bool)
    mask[_region_indices(inst)] = True
    outside = part_bits(d_flat)[~mask]
    return Comparison(float(rel.max()) if rel.size else 0.0, tol, int((rel > tol).sum()),
                      int((outside != poison_bits(inst.dest_type, inst.float8_ocp)).any(axis=1).sum()))


def _region_indices(inst: GemmInstance) -> np.ndarray:
    b = np.arange(inst.batch)[:, None, None] * inst.batch_stride["D"]
    m = np.arange(inst.m)[None, :, None] * inst.first("D")
    n = np.arange(inst.n)[None, None, :] * inst.ld["D"]
    return (b + m + n).reshape(-1)
