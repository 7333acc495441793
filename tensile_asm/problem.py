"""Problem types (indices, data types, transposes) and problems (sizes, strides), Tensile-compatible.

A ``ProblemType`` is what a kernel is written for (``Cijk_Ailk_Bljk_SB``: batched SGEMM, A and B not
transposed, with beta). A ``Problem`` is one call: sizes M, N, K, batch and the leading dimensions
and batch strides of A, B, C, D. ``OperationType: GEMM`` derives the index assignments from TransposeA/B and
Batched; ``TensorContraction`` gives them (NumIndicesC, IndexAssignmentsA/B; any number of free, batch and
summation indices), as Tensile's ProblemType.initTensorContraction reads them.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Mapping

from tensile_asm.errors import UserError

INDEX_CHARS = "IJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class DataTypeInfo:
    index: int  # the integer stored in logic files (position in Tensile's DataType.properties)
    char: str  # the character used in problem-type names (S, D, H, I8, ...)
    enum: str  # the enum string used in master libraries (Float, Half, ...)
    abbrev: str  # the ISA-style abbreviation (f32, f16, ...)
    bytes: int
    name: str  # Tensile's long name (single, double, half, ...)

    def __str__(self) -> str:
        return self.char


# One table, in Tensile's order: the int in a logic file is the row number.
DATA_TYPES: tuple[DataTypeInfo, ...] = tuple(
    DataTypeInfo(i, c, e, a, b, n)
    for i, (c, e, a, b, n) in enumerate(
        [
            ("S", "Float", "f32", 4, "single"),
            ("D", "Double", "f64", 8, "double"),
            ("C", "ComplexFloat", "f32c", 8, "complexSingle"),
            ("Z", "ComplexDouble", "f64c", 16, "complexDouble"),
            ("H", "Half", "f16", 2, "half"),
            ("4xi8", "Int8x4", "i8", 4, "int8x4"),
            ("I", "Int32", "i32", 4, "int32"),
            ("B", "BFloat16", "bf16", 2, "bfloat16"),
            ("I8", "Int8", "i8", 1, "int8"),
            ("X", "XFloat32", "xf32", 4, "xfloat32"),
            ("F8", "Float8", "fp8_fp8", 1, "float8"),
            ("B8", "BFloat8", "bf8_bf8", 1, "bfloat8"),
            ("F8B8", "Float8BFloat8", "fp8_bf8", 1, "float8bfloat8"),
            ("B8F8", "BFloat8Float8", "bf8_fp8", 1, "bfloat8float8"),
        ]
    )
)


def data_type(value: Any, where: str = "DataType") -> DataTypeInfo:
    """Look a data type up by int index, char (``s``, ``I8``), long name (``single``) or enum (``Float``)."""
    if isinstance(value, DataTypeInfo):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value < len(DATA_TYPES):
            return DATA_TYPES[value]
    elif isinstance(value, str):
        low = value.lower()
        for dt in DATA_TYPES:
            if low in (dt.char.lower(), dt.name.lower(), dt.enum.lower()):
                return dt
    chars = ", ".join(dt.char.lower() for dt in DATA_TYPES)
    raise UserError(f"{where}: unknown data type {value!r}; use one of {chars} (or an int 0..{len(DATA_TYPES) - 1})")


# Hybrid 8-bit input types: (A's type, B's type).
HYBRID_TYPES = {"F8B8": ("F8", "B8"), "B8F8": ("B8", "F8")}

# (A/B, C/D, compute) combinations Tensile supports, and the subset that is high-precision accumulate.
VALID_GEMM_TYPES = {
    ("D", "D", "D"), ("S", "S", "S"), ("Z", "Z", "Z"), ("C", "C", "C"), ("H", "H", "H"), ("H", "H", "S"),
    ("H", "S", "S"), ("B", "B", "S"), ("B", "S", "S"), ("I8", "I", "I"), ("4xi8", "I", "I"), ("F8", "S", "S"),
    ("B8", "S", "S"), ("F8B8", "S", "S"), ("B8F8", "S", "S"), ("F8", "F8", "S"), ("B8", "B8", "S"),
    ("F8B8", "B8", "S"), ("B8F8", "B8", "S"), ("F8", "H", "S"), ("B8", "H", "S"), ("F8B8", "H", "S"),
    ("B8F8", "H", "S"),
}
HPA_TYPES = {
    ("H", "S", "S"), ("H", "H", "S"), ("B", "B", "S"), ("B", "S", "S"), ("I8", "I", "I"), ("4xi8", "I", "I"),
    ("F8", "S", "S"), ("B8", "S", "S"), ("F8B8", "S", "S"), ("B8F8", "S", "S"), ("F8B8", "B8", "S"),
    ("B8F8", "B8", "S"), ("F8", "H", "S"), ("B8", "H", "S"), ("F8B8", "H", "S"), ("B8F8", "H", "S"),
    ("F8", "F8", "S"), ("B8", "B8", "S"),
}

# Keys a user may write (with Tensile's defaults) ...
_INPUT_DEFAULTS: dict[str, Any] = {
    "OperationType": "GEMM", "DataType": None, "DestDataType": None, "ComputeDataType": None,
    "HighPrecisionAccumulate": False, "SilentHighPrecisionAccumulate": False,
    "TransposeA": False, "TransposeB": True, "Batched": False, "StridedBatched": True, "UseBeta": True,
    "UseInitialStridesAB": False, "UseInitialStridesCD": False,
    "ComplexConjugateA": False, "ComplexConjugateB": False,
    "Fp16AltImpl": False, "Fp16AltImplRound": False, "F32XdlMathOp": 0, "StochasticRounding": False,
    "Fp32toFp8SWClip": True, "Fp8NoPackUpConversion": False, "TileAwareSelection": False,
    "AllowNoFreeDims": False, "ConvolutionConfig": [], "SetConstStrideA": [], "SetConstStrideB": [],
    "ZeroPadA": [], "ZeroPadB": [], "MirrorDimsA": [], "MirrorDimsB": [],
}
# ... features accepted only with their default value until the writer implements them.
_UNSUPPORTED_FEATURES = ("ConvolutionConfig", "SetConstStrideA", "SetConstStrideB", "ZeroPadA", "ZeroPadB",
                         "MirrorDimsA", "MirrorDimsB", "AllowNoFreeDims")
# ... and the derived keys Tensile writes into logic files (recomputed here; stored values must agree).
_DERIVED_KEYS = (
    "IndexAssignmentsA", "IndexAssignmentsB", "NumIndicesC", "IndexAssignmentsLD", "NumIndicesLD",
    "TotalIndices", "IndicesFree", "IndicesBatch", "IndicesSummation", "NumIndicesFree", "NumIndicesBatch",
    "NumIndicesSummation", "IndexUnroll", "IndexUnrollA", "IndexUnrollB", "Index01A", "Index01B", "Index0",
    "Index1", "Tensor0", "Tensor1", "TileA", "TileB", "TLUA", "TLUB",
)
# ... and keys of older Tensile versions, accepted and ignored: UseInitialStrides (before the AB/CD split;
# read as UseInitialStridesAB), IndexAssignmentLDA/LDB/LDC (Tensile 4.7's per-solution ProblemType: the
# positions of the leading-dimension sizes, since replaced by IndexAssignmentsLD, which is derived).
_IGNORED_KEYS = ("AssignedDerivedParameters", "UseInitialStrides", "IndexAssignmentLDA", "IndexAssignmentLDB",
                 "IndexAssignmentLDC")
# Tensile's defaultProblemType IndexAssignmentsLD, left as it is for TensorContraction (NumIndicesLD 0).
_DEFAULT_LD = (3, 4, 5, 6)
KNOWN_KEYS = tuple(_INPUT_DEFAULTS) + _DERIVED_KEYS + _IGNORED_KEYS


def nearest(name: str, candidates) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.5)
    return f"; did you mean {close[0]}?" if close else ""


def _as_bool(value: Any, where: str, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise UserError(f"{where}: {key} must be true or false, not {value!r}")


@dataclass(frozen=True)
class ProblemType:
    """A GEMM problem type. Build it with ``ProblemType.from_dict``; the index fields are derived."""

    data_type: DataTypeInfo
    dest_type: DataTypeInfo
    compute_type: DataTypeInfo
    transpose_a: bool = False
    transpose_b: bool = True
    batched: bool = False
    strided_batched: bool = True
    use_beta: bool = True
    high_precision_accumulate: bool = False
    silent_hpa: bool = False
    use_initial_strides_ab: bool = False
    use_initial_strides_cd: bool = False
    complex_conjugate_a: bool = False
    complex_conjugate_b: bool = False
    fp16_alt_impl: bool = False
    fp16_alt_impl_round: bool = False
    f32_xdl_math_op: DataTypeInfo | None = None
    stochastic_rounding: bool = False
    operation_type: str = "GEMM"
    # TensorContraction only: (NumIndicesC, IndexAssignmentsA, IndexAssignmentsB) as the file gives them
    contraction: tuple[int, tuple[int, ...], tuple[int, ...]] | None = None
    # derived (GEMM index assignment, Tensile's ProblemType.initGEMM / assignDerivedParameters)
    index_assignments_a: tuple[int, ...] = field(init=False)
    index_assignments_b: tuple[int, ...] = field(init=False)
    num_indices_c: int = field(init=False)
    index_assignments_ld: tuple[int, ...] = field(init=False)
    total_indices: int = field(init=False)
    indices_free: tuple[int, ...] = field(init=False)
    indices_batch: tuple[int, ...] = field(init=False)
    indices_summation: tuple[int, ...] = field(init=False)
    index_unroll: int = field(init=False)
    tlu_a: bool = field(init=False)
    tlu_b: bool = field(init=False)

    def __post_init__(self) -> None:
        s = object.__setattr__
        if self.contraction is not None:
            nc, ia, ib = self.contraction[0], list(self.contraction[1]), list(self.contraction[2])
            s(self, "index_assignments_ld", _DEFAULT_LD)
        else:
            u = 3 if self.batched else 2
            ia = [u, 0] if self.transpose_a else [0, u]
            ib = [1, u] if self.transpose_b else [u, 1]
            if self.batched:
                ia.append(2)
                ib.append(2)
            nc = 3 if self.batched else 2
            s(self, "index_assignments_ld", tuple(range(nc + 1, nc + 5)))
        s(self, "index_assignments_a", tuple(ia))
        s(self, "index_assignments_b", tuple(ib))
        s(self, "num_indices_c", nc)
        total = max(max(ia), max(ib)) + 1
        s(self, "total_indices", total)
        s(self, "indices_free", tuple(i for i in range(nc) if (i in ia) != (i in ib)))
        s(self, "indices_batch", tuple(i for i in range(nc) if i in ia and i in ib))
        s(self, "indices_summation", tuple(i for i in range(nc, total)))
        s(self, "index_unroll", self.indices_summation[-1])
        s(self, "tlu_a", ia.index(self.index01_a) < ia.index(self.index_unroll))
        s(self, "tlu_b", ib.index(self.index01_b) < ib.index(self.index_unroll))

    # ---- more derived values, in Tensile's terms
    @property
    def index01_a(self) -> int:
        return next(i for i in self.index_assignments_a if i in self.indices_free)

    @property
    def index01_b(self) -> int:
        return next(i for i in self.index_assignments_b if i in self.indices_free)

    @property
    def tensor0(self) -> int:
        return 0 if self.index01_a < self.index01_b else 1

    @property
    def is_gemm_shaped(self) -> bool:
        """Two free indices, at most one batch index and one summation index: what a GEMM kernel computes."""
        return len(self.indices_free) == 2 and len(self.indices_batch) <= 1 and len(self.indices_summation) == 1

    @property
    def is_hpa_type(self) -> bool:
        return (self.data_type.char, self.dest_type.char, self.compute_type.char) in HPA_TYPES

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "ProblemType") -> "ProblemType":
        """Accept Tensile's ProblemType keys (a tuning config's or a logic file's, derived keys included)."""
        if not isinstance(d, Mapping):
            raise UserError(f"{where}: expected a mapping of ProblemType keys, got {type(d).__name__}")
        for key in d:
            if key not in KNOWN_KEYS:
                raise UserError(f"{where}: unknown ProblemType key {key!r}{nearest(str(key), KNOWN_KEYS)}")
        v = {**_INPUT_DEFAULTS, **d}
        op = v["OperationType"]
        if op not in ("GEMM", "TensorContraction"):
            raise UserError(f"{where}: OperationType {op!r} is not supported yet (convolutions come later); "
                            f"use GEMM or TensorContraction")
        contraction = _contraction(d, where) if op == "TensorContraction" else None
        if v["DataType"] is None:
            raise UserError(f"{where}: DataType is required (e.g. DataType: s)")
        ti = data_type(v["DataType"], f"{where}: DataType")
        to = data_type(v["DestDataType"], f"{where}: DestDataType") if v["DestDataType"] is not None else ti
        tc = data_type(v["ComputeDataType"], f"{where}: ComputeDataType") if v["ComputeDataType"] is not None else to
        flags = {k: _as_bool(v[k], where, k) for k in (
            "HighPrecisionAccumulate", "SilentHighPrecisionAccumulate", "TransposeA", "TransposeB", "Batched",
            "StridedBatched", "UseBeta", "UseInitialStridesAB", "UseInitialStridesCD", "ComplexConjugateA",
            "ComplexConjugateB", "Fp16AltImpl", "Fp16AltImplRound", "StochasticRounding")}
        if "UseInitialStrides" in d and "UseInitialStridesAB" not in d:
            flags["UseInitialStridesAB"] = _as_bool(d["UseInitialStrides"], where, "UseInitialStrides")
        if flags["HighPrecisionAccumulate"] and (ti.char, to.char, tc.char) == ("H", "H", "H"):
            tc = data_type("S")  # Tensile silently turns HHH + HPA into HHS
        if (ti.char, to.char, tc.char) not in VALID_GEMM_TYPES:
            raise UserError(f"{where}: the type combination DataType {ti.char}, DestDataType {to.char}, "
                            f"ComputeDataType {tc.char} is not a GEMM type Tensile supports (e.g. S,S,S or H,H,S)")
        for key in _UNSUPPORTED_FEATURES:
            if v[key] not in (False, [], None, 0):
                raise UserError(f"{where}: {key} {v[key]!r} is not supported yet; remove it")
        xdl = v["F32XdlMathOp"]
        xdl_type = None if xdl in (0, None, "s", "S") else data_type(xdl, f"{where}: F32XdlMathOp")
        if contraction is not None:  # Tensile ignores TransposeA/B and Batched here; ours follow the indices
            probe = cls(data_type=ti, dest_type=to, compute_type=tc, contraction=contraction)
            flags.update(TransposeA=not probe.tlu_a, TransposeB=probe.tlu_b, Batched=bool(probe.indices_batch))
        pt = cls(
            data_type=ti, dest_type=to, compute_type=tc, operation_type=op, contraction=contraction,
            transpose_a=flags["TransposeA"], transpose_b=flags["TransposeB"], batched=flags["Batched"],
            strided_batched=flags["StridedBatched"], use_beta=flags["UseBeta"],
            high_precision_accumulate=flags["HighPrecisionAccumulate"],
            silent_hpa=flags["SilentHighPrecisionAccumulate"],
            use_initial_strides_ab=flags["UseInitialStridesAB"], use_initial_strides_cd=flags["UseInitialStridesCD"],
            complex_conjugate_a=flags["ComplexConjugateA"], complex_conjugate_b=flags["ComplexConjugateB"],
            fp16_alt_impl=flags["Fp16AltImpl"], fp16_alt_impl_round=flags["Fp16AltImplRound"],
            f32_xdl_math_op=xdl_type, stochastic_rounding=flags["StochasticRounding"],
        )
        derived = pt.to_logic_dict()
        for key in _DERIVED_KEYS:
            if key in d and _norm(d[key]) != _norm(derived[key]):
                what = (f"IndexAssignmentsA {list(pt.index_assignments_a)}, IndexAssignmentsB "
                        f"{list(pt.index_assignments_b)}" if contraction else f"TransposeA {pt.transpose_a}, "
                        f"TransposeB {pt.transpose_b}, Batched {pt.batched}")
                raise UserError(f"{where}: derived key {key} is {d[key]!r} in the file but recomputes to "
                                f"{derived[key]!r} for this {op} ({what}); fix or remove it")
        return pt

    # ---- names
    @property
    def name(self) -> str:
        """Tensile's problem-type name, e.g. ``Cijk_Ailk_Bljk_SB``."""
        ic = INDEX_CHARS.lower()
        s = "C" + ic[: self.num_indices_c]
        s += "_A" + "".join(ic[i] for i in self.index_assignments_a) + ("C" if self.complex_conjugate_a else "")
        s += "_B" + "".join(ic[i] for i in self.index_assignments_b) + ("C" if self.complex_conjugate_b else "")
        s += "_" + self.data_type.char
        if self.is_hpa_type:
            s += self.dest_type.char + self.compute_type.char + "_"
        s += "B" if self.use_beta else ""
        s += "H" if self.high_precision_accumulate and not self.silent_hpa else ""
        if self.fp16_alt_impl:
            s += "RZ" if self.fp16_alt_impl_round else "R"
        s += "I" if self.use_initial_strides_ab else ""
        s += "Ic" if self.use_initial_strides_cd else ""
        s += "" if self.strided_batched else "_GB"
        if self.f32_xdl_math_op is not None and self.data_type.char == "S":
            s += "_M" + self.f32_xdl_math_op.char
        s += "_SR" if self.stochastic_rounding else ""
        return s

    def __str__(self) -> str:
        return self.name

    @property
    def operation_identifier(self) -> str:
        """The runtime key, e.g. ``Contraction_l_Ailk_Bljk_Cijk_Dijk`` (C indices first, then summation letters)."""
        letters = "ijklmnopqrstuvwxyz"
        nc = self.num_indices_c
        names = {i: letters[i] for i in range(nc)}
        for n, i in enumerate(self.indices_summation):
            names[i] = letters[nc + n]
        a = "".join(names[i] for i in self.index_assignments_a) + ("C" if self.complex_conjugate_a else "")
        b = "".join(names[i] for i in self.index_assignments_b) + ("C" if self.complex_conjugate_b else "")
        c = "".join(letters[i] for i in range(nc))
        sums = "".join(names[i] for i in self.indices_summation)
        return f"Contraction_{sums}_A{a}_B{b}_C{c}_D{c}"

    def to_logic_dict(self) -> dict[str, Any]:
        """The ProblemType as a logic file stores it: DataTypes as ints, every derived key filled in."""
        ia, ib = list(self.index_assignments_a), list(self.index_assignments_b)
        t0 = self.tensor0
        i0, i1 = sorted((self.index01_a, self.index01_b))
        return {
            "AllowNoFreeDims": False, "AssignedDerivedParameters": True, "Batched": self.batched,
            "ComplexConjugateA": self.complex_conjugate_a, "ComplexConjugateB": self.complex_conjugate_b,
            "ComputeDataType": self.compute_type.index, "ConvolutionConfig": [], "DataType": self.data_type.index,
            "DestDataType": self.dest_type.index, "F32XdlMathOp": (self.f32_xdl_math_op or DATA_TYPES[0]).index,
            "Fp16AltImpl": self.fp16_alt_impl, "Fp16AltImplRound": self.fp16_alt_impl_round,
            "HighPrecisionAccumulate": self.high_precision_accumulate,
            "Index0": i0, "Index01A": self.index01_a, "Index01B": self.index01_b, "Index1": i1,
            "IndexAssignmentsA": ia, "IndexAssignmentsB": ib, "IndexAssignmentsLD": list(self.index_assignments_ld),
            "IndexUnroll": self.index_unroll, "IndexUnrollA": ia.index(self.index_unroll),
            "IndexUnrollB": ib.index(self.index_unroll), "IndicesBatch": list(self.indices_batch),
            "IndicesFree": list(self.indices_free), "IndicesSummation": list(self.indices_summation),
            "MirrorDimsA": [], "MirrorDimsB": [], "NumIndicesBatch": len(self.indices_batch),
            "NumIndicesC": self.num_indices_c, "NumIndicesFree": len(self.indices_free),
            "NumIndicesLD": 0 if self.contraction is not None else 4,
            "NumIndicesSummation": len(self.indices_summation), "OperationType": self.operation_type,
            "SetConstStrideA": [], "SetConstStrideB": [], "SilentHighPrecisionAccumulate": self.silent_hpa,
            "StochasticRounding": self.stochastic_rounding, "StridedBatched": self.strided_batched,
            "TLUA": self.tlu_a, "TLUB": self.tlu_b, "Tensor0": t0, "Tensor1": 1 - t0, "TileA": t0, "TileAwareSelection":
            False, "TileB": 1 - t0, "TotalIndices": self.total_indices, "TransposeA": self.transpose_a,
            "TransposeB": self.transpose_b, "UseBeta": self.use_beta, "UseInitialStridesAB": self.use_initial_strides_ab,
            "UseInitialStridesCD": self.use_initial_strides_cd, "ZeroPadA": [], "ZeroPadB": [],
        }

    @property
    def ab_types(self) -> tuple[DataTypeInfo, DataTypeInfo]:
        """A's and B's data types as Tensile's master library and host library have them: a hybrid 8-bit
        input type is split into its halves (F8B8: A Float8, B BFloat8; B8F8 the other way round), as
        Contractions.ProblemType.FromOriginalState does; the host library has no hybrid DataType."""
        split = HYBRID_TYPES.get(self.data_type.char)
        return (data_type(split[0]), data_type(split[1])) if split else (self.data_type, self.data_type)

    def library_dict(self) -> dict[str, Any]:
        """The ``problemType`` entry of a master-library solution."""
        a, b = self.ab_types
        return {
            "aType": a.enum, "bType": b.enum, "cType": self.dest_type.enum,
            "dType": self.dest_type.enum, "f32XdlMathOp": (self.f32_xdl_math_op or DATA_TYPES[0]).enum,
            "highPrecisionAccumulate": self.high_precision_accumulate,
            "operationIdentifier": self.operation_identifier, "stochasticRounding": self.stochastic_rounding,
            "stridedBatched": self.strided_batched, "useBeta": self.use_beta,
            "useInitialStridesAB": self.use_initial_strides_ab, "useInitialStridesCD": self.use_initial_strides_cd,
        }


def _contraction(d: Mapping[str, Any], where: str) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """NumIndicesC and IndexAssignmentsA/B of a TensorContraction, checked as Tensile's assignDerivedParameters
    checks them: each C index in A or B, each other index in both (summation), no duplicates, two free indices."""
    nc, ia, ib = d.get("NumIndicesC"), d.get("IndexAssignmentsA"), d.get("IndexAssignmentsB")
    ok = (isinstance(nc, int) and not isinstance(nc, bool) and nc >= 2 and all(
        isinstance(x, list) and x and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in x)
        for x in (ia, ib)))
    if not ok:
        raise UserError(f"{where}: a TensorContraction needs NumIndicesC (an integer >= 2) and IndexAssignmentsA/B "
                        f"(lists of index numbers), e.g. NumIndicesC: 3, IndexAssignmentsA: [0, 3, 2], "
                        f"IndexAssignmentsB: [3, 1, 2]")
    for name, x in (("IndexAssignmentsA", ia), ("IndexAssignmentsB", ib)):
        if len(set(x)) != len(x):
            raise UserError(f"{where}: {name} {x} repeats an index; each index appears once per tensor")
    total = max(ia + ib) + 1
    for i in range(total):
        in_a, in_b = i in ia, i in ib
        if i < nc and not (in_a or in_b):
            raise UserError(f"{where}: C index {i} is in neither IndexAssignmentsA {ia} nor IndexAssignmentsB {ib}")
        if i >= nc and not (in_a and in_b):
            raise UserError(f"{where}: summation index {i} must be in both IndexAssignmentsA {ia} and "
                            f"IndexAssignmentsB {ib}")
    if sum(1 for i in range(nc) if (i in ia) != (i in ib)) < 2 or total == nc:
        raise UserError(f"{where}: IndexAssignmentsA {ia} and IndexAssignmentsB {ib} need two free indices and a "
                        f"summation index (AllowNoFreeDims is not supported)")
    return nc, tuple(ia), tuple(ib)


def _norm(v: Any) -> Any:
    return [_norm(x) for x in v] if isinstance(v, (list, tuple)) else v


@dataclass(frozen=True)
class Problem:
    """One GEMM call: D = alpha·op(A)·op(B) + beta·C for ``batch`` matrices.

    Leading dimensions and batch strides are in elements. Build it with ``Problem.make`` which packs the
    minimal strides for the problem type and rejects user-given ones below the minimum.
    """

    problem_type: ProblemType
    m: int
    n: int
    k: int
    batch: int
    lda: int
    ldb: int
    ldc: int
    ldd: int
    stride_a: int
    stride_b: int
    stride_c: int
    stride_d: int
    alpha: float | None = 1.0
    beta: float | None = None  # unknown unless given: BetaZero predicates then do not hold
    c_equals_d: bool = False
    # the stride of each tensor's first index, A, B, C, D (UseInitialStrides problem types; 1: column major)
    first_strides: tuple[int, int, int, int] = (1, 1, 1, 1)

    @classmethod
    def make(cls, problem_type: ProblemType, m: int, n: int, k: int, batch: int = 1, *,
             lda: int | None = None, ldb: int | None = None, ldc: int | None = None, ldd: int | None = None,
             stride_a: int | None = None, stride_b: int | None = None, stride_c: int | None = None,
             stride_d: int | None = None, alpha: float | None = 1.0, beta: float | None = None,
             first_strides: dict[str, int] | None = None) -> "Problem":
        """``first_strides``: the stride of A's, B's, C's or D's first index where not 1 (a problem of a
        UseInitialStrides type); such a tensor's leading dimension and batch stride are taken as given."""
        pt = problem_type
        first = {t: int(v) for t, v in (first_strides or {}).items()}
        for name, value in (("M", m), ("N", n), ("K", k), ("batch", batch)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise UserError(f"problem size {name} must be a positive integer, not {value!r}")
        if batch > 1 and not pt.batched:
            raise UserError(f"problem type {pt.name} is not batched but batch is {batch}; use batch 1 "
                            f"or a Batched problem type")
        rows_a, cols_a = (k, m) if pt.transpose_a else (m, k)
        rows_b, cols_b = (n, k) if pt.transpose_b else (k, n)
        lds = {}
        for name, given, minimum in (("lda", lda, rows_a), ("ldb", ldb, rows_b), ("ldc", ldc, m), ("ldd", ldd, m)):
            lds[name] = _checked(name, given, 0 if first.get(name[-1].upper(), 1) != 1 else minimum)
        strides = {}
        for name, given, minimum in (("stride_a", stride_a, lds["lda"] * cols_a),
                                     ("stride_b", stride_b, lds["ldb"] * cols_b),
                                     ("stride_c", stride_c, lds["ldc"] * n), ("stride_d", stride_d, lds["ldd"] * n)):
            strides[name] = _checked(name, given, 0 if first.get(name[-1].upper(), 1) != 1 else minimum)
        return cls(pt, m, n, k, batch, **lds, **strides, alpha=alpha, beta=beta, c_equals_d=False,
                   first_strides=tuple(first.get(t, 1) for t in "ABCD"))

    # ---- what the runtime library looks at
    @property
    def free_size_a(self) -> int:
        return self.m

    @property
    def free_size_b(self) -> int:
        return self.n

    @property
    def bound_size(self) -> int:
        return self.k

    def size(self, index: int) -> int:
        """Size of Tensile index ``index`` (I=M, J=N, K=batch, L=K for batched GEMM)."""
        pt = self.problem_type
        if index == pt.index_unroll:
            return self.k
        if index in pt.indices_batch:
            return self.batch
        return self.m if index == 0 else self.n

    def strides(self, tensor: str) -> tuple[int, ...]:
        """Strides of tensor A, B, C or D in the order of its indices (stride 0 is 1, column major, unless
        ``first_strides`` says otherwise)."""
        ld, batch_stride = {"A": (self.lda, self.stride_a), "B": (self.ldb, self.stride_b),
                            "C": (self.ldc, self.stride_c), "D": (self.ldd, self.stride_d)}[tensor]
        s0 = self.first_strides["ABCD".index(tensor)]
        return (s0, ld, batch_stride) if self.problem_type.batched else (s0, ld)


def _checked(name: str, given: int | None, minimum: int) -> int:
    if given is None:
        return minimum
    if not isinstance(given, int) or isinstance(given, bool) or given < minimum:
        raise UserError(f"{name} {given!r} is smaller than the minimum {minimum} for these sizes; "
                        f"leave it out to get the packed value or give at least {minimum}")
    return given


# One GEMM problem size: the emulator's verification, the runtimes and the tuner all use it.
@dataclass(frozen=True)
class GemmSize:
    m: int
    n: int
    k: int
    batch: int = 1

    @property
    def flops(self) -> int:
        """Tensile's flop count of a GEMM: 2*M*N*K*batch (ContractionProblem::flopCount)."""
        return 2 * self.m * self.n * self.k * self.batch

    def __str__(self) -> str:
        return f"{self.m}x{self.n}x{self.k}" + (f"x{self.batch}" if self.batch != 1 else "")
