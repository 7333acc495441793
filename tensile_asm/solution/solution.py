"""A solution: a problem type plus Tensile solution parameters, with derived values and validity.

``Solution.from_dict`` takes a solution dict with Tensile's parameter names at the top level (as in a
tuning config fork, our own solution files, or a logic file's solution list). Keys that are derived are
recomputed, as Tensile's own TensileCreateLibrary recomputes them: a stored value that differs is the rule of
the Tensile version that wrote the file (recorded in ``stored_differences``, explained in
docs/logic-versions.md), except for the keys Tensile keeps from the file (``catalogue.FILE_WINS``). Keys of
older Tensile versions are kept verbatim; old spellings of parameters (``catalogue.ALIASES``) are read as the
parameter they name.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

from tensile_asm.errors import UserError
from tensile_asm.problem import ProblemType, nearest
from tensile_asm.solution.catalogue import ALIASES, DERIVED_KEYS, FILE_WINS, LEGACY_KEYS, PARAMS, defaults, normalise
from tensile_asm.solution import writer_rules
from tensile_asm.solution.derive import Derived, derive

# Derived keys that are bookkeeping, not values to recompute.
_BOOKKEEPING = {"SolutionIndex", "SolutionNameMin", "Valid", "AssignedDerivedParameters",
                "AssignedProblemIndependentDerivedParameters"}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


class Solution:
    """Parameters (``params``, Tensile names, defaults filled), ``problem_type`` and ``derived`` values.

    ``rejection`` is the one reason the solution is invalid (``None`` when valid); ``validate()`` raises it.
    ``legacy`` holds keys of older Tensile versions (kept verbatim). ``index`` and ``stored_name`` are the
    ``SolutionIndex`` and ``SolutionNameMin`` a logic file gave it, if any. ``stored_differences`` maps each
    derived key the file stores with another value than the derivation gives to ``(stored, derived)``;
    ``version`` is the Tensile version that wrote the file ("" if unknown). ``underived`` says what this
    project's derivation cannot derive yet for a solution Tensile accepts (its derived values are then
    incomplete; the builder reports it as a kernel reason). ``older_rules``: the rules of an older Tensile
    version the file's stored values show its writer used (``writer_rules``).
    """

    def __init__(self, problem_type: ProblemType, params: dict[str, Any], derived: Derived,
                 derived_keys: dict[str, Any], rejection: str | None, legacy: dict[str, Any] | None = None,
                 where: str = "solution", index: int | None = None, stored_name: str | None = None,
                 stored_differences: dict[str, tuple[Any, Any]] | None = None, version: str = "",
                 underived: str | None = None, older_rules: frozenset[str] = frozenset()):
        self.problem_type = problem_type
        self.params = params
        self.derived = derived
        self.derived_keys = derived_keys
        self.rejection = rejection
        self.legacy = legacy or {}
        self.where = where
        self.index = index
        self.stored_name = stored_name
        self.stored_differences = stored_differences or {}
        self.version = version
        self.underived = underived
        self.older_rules = older_rules

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "solution", problem_type: ProblemType | None = None,
                  defaults_from: str = "ours", version: str = "") -> "Solution":
        """Build a solution. ``defaults_from`` is "ours" for solutions we write and "tensile" for logic files
        written by Tensile (a key Tensile left out meant Tensile's default); ``version`` is the writing Tensile's
        version, kept for the record of stored derived values that differ."""
        if not isinstance(d, Mapping):
            raise UserError(f"{where}: expected a mapping of solution parameters, got {type(d).__name__}")
        pt = problem_type
        own = d.get("ProblemType")
        if isinstance(own, Mapping):
            own_pt = ProblemType.from_dict(own, f"{where}: ProblemType")
            if pt is not None and own_pt != pt:
                raise UserError(f"{where}: its ProblemType {own_pt.name} differs from the file's {pt.name}")
            pt = own_pt
        elif own not in (None, "derive"):
            raise UserError(f"{where}: ProblemType must be a mapping of ProblemType keys, not {own!r}")
        if pt is None:
            raise UserError(f"{where}: no ProblemType; add a ProblemType mapping (e.g. OperationType: GEMM, "
                            f"DataType: s, TransposeA: false, TransposeB: false, Batched: true)")
        params = defaults(defaults_from)
        stored: dict[str, Any] = {}
        legacy: dict[str, Any] = {}
        for key, value in d.items():
            if key == "ProblemType":
                continue
            if key in ALIASES:
                if ALIASES[key] in d:
                    legacy[key] = value  # the current spelling is given too: it wins
                    continue
                key = ALIASES[key]
            if key in PARAMS:
                value = normalise(key, value)
                if value is None and key == "MacroTile":
                    continue
                allowed = PARAMS[key].allowed
                if not allowed(value):
                    raise UserError(f"{where}: {key} {value!r} is not allowed; use {allowed.text}")
                params[key] = value
            elif key in DERIVED_KEYS:
                stored[key] = value
            elif key in LEGACY_KEYS:
                legacy[key] = value
            else:
                raise UserError(f"{where}: unknown solution parameter {key!r}{nearest(str(key), PARAMS)}")
        if "ISA" in params:
            params["ISA"] = list(params["ISA"])
        rules = writer_rules.older_rules(d) if defaults_from == "tensile" else frozenset()
        writer_rules.apply_to_params(rules, d, params)
        derivation = derive(params, pt, from_logic=defaults_from == "tensile", file_keys=stored, older_rules=rules)
        derived, keys = derivation.derived, derivation.keys
        if FILE_WINS <= stored.keys():
            kept = {k: (stored[k] or None) if k == "_GlobalAccumulation" else stored[k] for k in FILE_WINS}
            if kept["_GlobalAccumulation"] is True:
                # a boolean written by a Tensile before the kinds had names (rocBLAS's aldebaran BBS_BH_GB files):
                # true was the compute-type workspace, named by its kind as 4.44 derives it (SingleBuffer there)
                kept["_GlobalAccumulation"] = derived.global_accumulation
            keys.update(kept)
            derived = replace(derived, global_accumulation=kept["_GlobalAccumulation"])
        differences = {}
        for key, value in stored.items():
            if key in _BOOKKEEPING or key not in keys or key in FILE_WINS:
                continue
            if not _same(value, keys[key]):
                differences[key] = (value, keys[key])
        index = d.get("SolutionIndex")
        return cls(pt, params, derived, keys, derivation.reason, legacy, where,
                   index if isinstance(index, int) else None, d.get("SolutionNameMin"), differences, version,
                   derivation.underived, rules)

    # ---- validity
    @property
    def valid(self) -> bool:
        return self.rejection is None

    def validate(self) -> "Solution":
        """Raise UserError with the one reason this solution is invalid; return self when it is valid."""
        if self.rejection is not None:
            raise UserError(f"{self.where}: invalid solution: {self.rejection}")
        return self

    # ---- state views
    def naming_state(self) -> dict[str, Any]:
        """Every key a name may draw on: parameters, legacy keys and derived keys (Tensile names)."""
        state = {k: v for k, v in self.params.items() if k != "MacroTile"}
        state.update(self.legacy)
        state.update(self.derived_keys)
        return state

    def to_logic_dict(self, index: int | None = None, name: str | None = None) -> dict[str, Any]:
        """The solution as a logic file stores it: parameters, derived keys and its ProblemType."""
        out: dict[str, Any] = {k: v for k, v in self.params.items() if not (k == "MacroTile" and v is None)}
        out.update(self.legacy)
        out.update(self.derived_keys)
        out["ProblemType"] = self.problem_type.to_logic_dict()
        out.update(AssignedDerivedParameters=True, AssignedProblemIndependentDerivedParameters=True,
                   Valid=self.rejection is None)
        if index is not None or self.index is not None:
            out["SolutionIndex"] = index if index is not None else self.index
        if name is not None or self.stored_name is not None:
            out["SolutionNameMin"] = name if name is not None else self.stored_name
        return out

    def __repr__(self) -> str:
        d = self.derived
        return (f"<Solution {self.problem_type.name} MT{d.mt0}x{d.mt1}x{d.depth_u} "
                f"WG{self.params['WorkGroup']} {'valid' if self.valid else 'invalid'}>")


def load_solution_file(path: str | Path, index: int | None = None) -> Solution:
    """Read one solution: a YAML file holding one solution dict, or a logic file (``index`` picks one)."""
    from tensile_asm.library.fileio import load_yaml

    path = Path(path)
    data = load_yaml(path)
    if isinstance(data, list) or (isinstance(data, dict) and "Solutions" in data):
        from tensile_asm.library.logic import read_logic_file

        lf = read_logic_file(path)
        n = len(lf.entries)
        if index is None:
            if n != 1:
                raise UserError(f"{path}: a logic file with {n} solutions; say which one with an index 0..{n - 1}")
            index = 0
        if not 0 <= index < n:
            raise UserError(f"{path}: solution index {index} is out of range; the file has {n} solutions (0..{n - 1})")
        entry = lf.entries[index]
        if entry.solution is None:
            raise UserError(entry.error)
        return entry.solution
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected one solution (a mapping of parameters) or a logic file (a list)")
    if index not in (None, 0):
        raise UserError(f"{path}: holds a single solution; index {index} is out of range (use 0 or none)")
    # A solution dict copied out of a logic file (it carries Tensile's bookkeeping keys): a key left out
    # meant Tensile's default there, as when the whole logic file is read.
    from_logic = any(k in data for k in ("AssignedDerivedParameters", "SolutionNameMin", "SolutionIndex"))
    return Solution.from_dict(data, where=str(path), defaults_from="tensile" if from_logic else "ours")
