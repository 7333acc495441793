"""Load a master library and pick the solution for a problem, as Tensile's host library does (§6.6).

``Library.load(path)`` reads ``TensileLibrary.yaml`` or ``.dat`` (a create-library output directory, its
``library/`` folder, or the file itself; ``.gz`` allowed). ``select(problem, arch)`` walks the tree: hardware
rows for the architecture, the problem's operation identifier, the type/feature rows (falling through to the
next row when a subtree finds nothing), then the exact size if a table has it, else the nearest entry by
squared Euclidean distance over the table's properties (M, N, K) among entries whose solution's predicates
hold, ties broken by higher speed. ``None`` when nothing matches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from tensile_asm.errors import UserError
from tensile_asm.library.fileio import load_msgpack, load_yaml
from tensile_asm.problem import Problem

_TWO_POW_32 = 1 << 32


def _size_by_index(pr: Problem, index: int) -> int:
    pt = pr.problem_type
    return pr.size(pt.indices_summation[index] if index < 0 else index)


def _stride(tensor: str) -> Callable[[dict, Problem], bool]:
    def check(pred: dict, pr: Problem) -> bool:
        strides = pr.strides(tensor)
        pos = pred["index"]
        return pos < len(strides) and strides[pos] == pred["value"]
    return check


def _buffer_load(pred: dict, pr: Problem) -> bool:
    v, bpe = pred["value"], pr.problem_type.data_type.bytes
    return ((pr.strides("A")[1] * v["DUorMT0"] + v["ShiftPtrElemA"]) * bpe < _TWO_POW_32 and
            (pr.strides("B")[1] * v["DUorMT1"] + v["ShiftPtrElemB"]) * bpe < _TWO_POW_32)


def _min_k(pred: dict, pr: Problem) -> bool:
    v = pred["value"]
    need = v[0] * v[1] if isinstance(v, list) else v
    return pr.k >= need


def _arithmetic_intensity(pr: Problem) -> float:
    pt = pr.problem_type
    flops = 2.0 * pr.m * pr.n * pr.k * pr.batch
    elems = (pr.m * pr.k + pr.k * pr.n) * pt.data_type.bytes + 2 * pr.m * pr.n * pt.dest_type.bytes
    return flops / (elems * pr.batch)


_PROBLEM: dict[str, Callable[[dict, Problem], bool]] = {
    "Free0SizeMultiple": lambda p, pr: pr.m % p["value"] == 0,
    "Free1SizeMultiple": lambda p, pr: pr.n % p["value"] == 0,
    "BoundSizeMultiple": lambda p, pr: pr.k % p["value"] == 0,
    "BatchSizeMultiple": lambda p, pr: pr.batch % p["value"] == 0,
    "BatchSizeEqual": lambda p, pr: pr.batch == p["value"],
    "SizeEqual": lambda p, pr: _size_by_index(pr, p["index"]) == p["value"],
    "SizeGreaterThan": lambda p, pr: _size_by_index(pr, p["index"]) > p["value"],
    "SizeLessThan": lambda p, pr: _size_by_index(pr, p["index"]) < p["value"],
    "SizeMultiple": lambda p, pr: _size_by_index(pr, p["index"]) % p["value"] == 0,
    "SizeInRange": lambda p, pr: p["value"]["min"] <= _size_by_index(pr, p["index"]) <= p["value"]["max"],
    "MaxProblemSizeGreaterThan": lambda p, pr: max(pr.m, pr.n, pr.k) > p["value"],
    "ProblemSizeEqual": lambda p, pr: [pr.m, pr.n, pr.batch, pr.k] == list(p["value"]),
    "LeadingFree0SizesGreaterOrEqual": lambda p, pr: pr.m >= p["value"],
    "LeadingFree1SizesGreaterOrEqual": lambda p, pr: pr.n >= p["value"],
    "StrideAEqual": _stride("A"), "StrideBEqual": _stride("B"),
    "StrideCEqual": _stride("C"), "StrideDEqual": _stride("D"),
    "LDCEqualsLDD": lambda p, pr: pr.ldc == pr.ldd,
    "CDStridesEqual": lambda p, pr: pr.strides("C") == pr.strides("D"),
    "CEqualsD": lambda p, pr: pr.c_equals_d,
    "BetaZero": lambda p, pr: pr.beta == 0,
    "BetaOne": lambda p, pr: pr.beta == 1,
    "AlphaValue": lambda p, pr: pr.alpha is not None and pr.alpha == float(p["value"]),
    "BetaValue": lambda p, pr: pr.beta is not None and pr.beta == float(p["value"]),
    "AIGreaterThanEqual": lambda p, pr: _arithmetic_intensity(pr) >= p["value"],
    "AILessThanEqual": lambda p, pr: _arithmetic_intensity(pr) <= p["value"],
    "HighPrecisionAccumulate": lambda p, pr: pr.problem_type.high_precision_accumulate == p["value"],
    "TypesEqual": lambda p, pr: list(p["value"]) == [pr.problem_type.data_type.enum] * 2
    + [pr.problem_type.dest_type.enum] * 2,
    "OperationIdentifierEqual": lambda p, pr: pr.problem_type.operation_identifier == p["value"],
    "StridedBatched": lambda p, pr: pr.problem_type.strided_batched == p["value"],
    "F32XdlMathOp": lambda p, pr: p["value"] == (pr.problem_type.f32_xdl_math_op.enum
                                                 if pr.problem_type.f32_xdl_math_op else "Float"),
    "StochasticRounding": lambda p, pr: pr.problem_type.stochastic_rounding == p["value"],
    "Fp16AltImpl": lambda p, pr: pr.problem_type.fp16_alt_impl,
    "Fp16AltImplRound": lambda p, pr: pr.problem_type.fp16_alt_impl_round,
    "BufferLoadOffsetLimitCheck": _buffer_load,
    "BufferLoadOffsetLimitCheck_Beta": lambda p, pr: pr.beta == 0 or (
        pr.strides("C")[1] * p["value"] * pr.problem_type.dest_type.bytes < _TWO_POW_32),
    "BufferStoreOffsetLimitCheck": lambda p, pr: (
        pr.strides("D")[1] * p["value"] * pr.problem_type.dest_type.bytes < _TWO_POW_32),
    "GlobalSplitUCheckMinK": _min_k,
    # Requests this reader's callers cannot make yet: any kernel language, unit, determinism is fine.
    "KernelLanguageCompatible": lambda p, pr: True,
    "ArithmeticUnitCompatible": lambda p, pr: True,
    "DeterministicMode": lambda p, pr: True,
    "PersistentKernelCheck": lambda p, pr: True,
    "WorkspaceCheck": lambda p, pr: True,
    "EqualityMatching": lambda p, pr: True,
}
_PERF_METRICS = ("CUEfficiency", "ExperimentalGrid", "ExperimentalDTree")


class Library:
    """A master solution library: ``solutions`` by index and the selection ``tree``."""

    def __init__(self, data: dict[str, Any], path: Path | None = None):
        if not isinstance(data, dict) or "solutions" not in data or "library" not in data:
            raise UserError(f"{path or 'library'}: not a master solution library (needs 'solutions' and 'library')")
        self.path = path
        self.data = data
        self.tree = data["library"]
        self.solutions = {s["index"]: s for s in data["solutions"]}

    @classmethod
    def load(cls, path: str | Path) -> "Library":
        path = Path(path)
        if path.is_dir():
            for cand in ("library/TensileLibrary.yaml", "library/TensileLibrary.dat", "TensileLibrary.yaml",
                         "TensileLibrary.dat"):
                if (path / cand).is_file():
                    path = path / cand
                    break
            else:
                raise UserError(f"{path}: no TensileLibrary.yaml or TensileLibrary.dat here or in library/; "
                                f"run tensile-create-library first")
        name = path.name.removesuffix(".gz")
        data = load_msgpack(path) if name.endswith(".dat") else load_yaml(path)
        return cls(data, path)

    def entry(self, name: str) -> dict[str, Any]:
        """The solution entry of kernel ``name``."""
        for sol in self.solutions.values():
            if sol.get("name") == name:
                return sol
        names = ", ".join(sorted(s.get("name", "?") for s in self.solutions.values())) or "none"
        raise UserError(f"{self.path}: no solution named {name}; the library has {names}")

    def code_object(self, name: str) -> Path:
        """The code object beside the library file that holds kernel ``name`` (its symbol is the name)."""
        from tensile_asm.codeobject import read_code_object

        folder = self.path.parent if self.path else Path(".")
        candidates = sorted(folder.glob("*.co"))
        for co in candidates:
            if name in read_code_object(co).kernels:
                return co
        raise UserError(f"{folder}: none of its {len(candidates)} code objects (.co) holds kernel {name}; "
                        f"rebuild the library with tensile-create-library")

    def select(self, problem: Problem, arch: str = "gfx90a", cu_count: int | None = None,
               is_apu: int | None = None, perf_metric: str = "DeviceEfficiency") -> dict[str, Any] | None:
        """The chosen solution entry (a dict with ``name``, ``index``, ...) or ``None``."""
        self._hw = {"arch": arch, "cu_count": cu_count, "is_apu": is_apu}
        self._metric = perf_metric
        return self._node(self.tree, problem)

    # ---- predicates
    def _problem_pred(self, pred: dict, pr: Problem) -> bool:
        t = pred["type"]
        if t in ("TruePred", "FalsePred"):
            return t == "TruePred"
        if t in ("And", "Or"):
            results = (self._problem_pred(p, pr) for p in pred["value"])
            return all(results) if t == "And" else any(results)
        if t == "Not":
            return not self._problem_pred(pred["value"], pr)
        if t in _PERF_METRICS:
            return self._metric == t
        fn = _PROBLEM.get(t)
        if fn is None:
            raise UserError(f"{self.path}: problem predicate type {t!r} is not supported by this reader")
        return fn(pred, pr)

    def _hw_pred(self, pred: dict) -> bool:
        t, hw = pred["type"], self._hw
        if t in ("TruePred", "FalsePred"):
            return t == "TruePred"
        if t in ("And", "Or"):
            results = (self._hw_pred(p) for p in pred["value"])
            return all(results) if t == "And" else any(results)
        if t == "Not":
            return not self._hw_pred(pred["value"])
        if t == "AMDGPU":
            return self._hw_pred(pred["value"])
        if t == "Processor":
            return pred["value"] == hw["arch"]
        if t == "CUCount":
            return hw["cu_count"] is not None and pred["value"] == hw["cu_count"]
        if t == "IsAPU":
            return (hw["is_apu"] or 0) == pred["value"]
        raise UserError(f"{self.path}: hardware predicate type {t!r} is not supported by this reader")

    def _solution_ok(self, index: int, pr: Problem) -> bool:
        sol = self.solutions.get(index)
        if sol is None:
            return False
        return self._hw_pred(sol.get("hardwarePredicate", {"type": "TruePred"})) and \
            self._problem_pred(sol.get("problemPredicate", {"type": "TruePred"}), pr)

    # ---- tree
    def _node(self, node: dict, pr: Problem) -> dict[str, Any] | None:
        t = node["type"]
        if t == "Hardware":
            for row in node["rows"]:
                if self._hw_pred(row["predicate"]):
                    found = self._node(row["library"], pr)
                    if found is not None:
                        return found
            return None
        if t == "ProblemMap":
            prop = node.get("property", {}).get("type")
            if prop != "OperationIdentifier":
                raise UserError(f"{self.path}: ProblemMap on {prop!r} is not supported by this reader")
            child = node["map"].get(pr.problem_type.operation_identifier)
            return None if child is None else self._node(child, pr)
        if t == "Problem":
            for row in node["rows"]:
                if self._problem_pred(row["predicate"], pr):
                    found = self._node(row["library"], pr)
                    if found is not None:
                        return found
            return None
        if t == "Single":
            idx = node["index"]
            return self.solutions[idx] if idx >= 0 and self._solution_ok(idx, pr) else None
        if t == "Matching":
            return self._matching(node, pr)
        if t == "Placeholder":
            return self._placeholder(node, pr)
        raise UserError(f"{self.path}: library node type {t!r} is not supported by this reader")

    def _matching(self, node: dict, pr: Problem) -> dict[str, Any] | None:
        values = {"FreeSizeA": pr.m, "FreeSizeB": pr.n, "BoundSize": pr.k, "BatchSize": pr.batch}
        try:
            key = [values[p["type"]] for p in node["properties"]]
        except KeyError as e:
            raise UserError(f"{self.path}: Matching property {e.args[0]!r} is not supported by this reader") from None
        distance = node.get("distance", "Euclidean")
        table = node["table"]
        if distance == "Equality":
            ranked = [e for e in table if list(e["key"]) == key]
        elif distance in ("Euclidean", "Manhattan"):
            power = 2 if distance == "Euclidean" else 1
            ranked = sorted(table, key=lambda e: (sum(abs(a - b) ** power for a, b in zip(e["key"], key)),
                                                  -e.get("speed", 0.0)))
        else:
            raise UserError(f"{self.path}: Matching distance {distance!r} is not supported by this reader")
        for entry in ranked:
            if self._solution_ok(entry["index"], pr):
                return self.solutions[entry["index"]]
        return None

    def _placeholder(self, node: dict, pr: Problem) -> dict[str, Any] | None:
        base = self.path.parent if self.path else Path(".")
        for suffix in (".yaml", ".dat"):
            child_path = base / (node["value"] + suffix)
            if child_path.is_file():
                child = Library.load(child_path)
                self.solutions.update(child.solutions)
                return self._node(child.tree, pr)
        raise UserError(f"{self.path}: Placeholder {node['value']!r} names no .yaml or .dat file in {base}")
