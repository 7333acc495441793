"""Load a master library and pick the solution for a problem, as Tensile 4.44's host library does.

``Library.load(path)`` reads ``TensileLibrary.yaml`` or ``.dat`` (a create-library output directory, its
``library/`` folder, or the file itself; ``.gz`` allowed). ``select(problem, arch)`` walks the tree the way
``MasterSolutionLibrary::findBestSolution`` does: ``Hardware`` and ``Problem`` nodes try their rows in order
and fall through to the next row when a subtree finds nothing; ``ProblemMap`` maps the problem's operation
identifier; ``Matching`` tables search by their distance (``tensile_asm.library.matching``);
``DecisionTree`` forests predict per tree (``tensile_asm.library.dtree``); ``Single`` returns its solution
if the solution's hardware, problem and task predicates hold (``tensile_asm.library.predicates``);
``Placeholder`` loads the lazily loaded file it names. ``None`` when nothing matches.
``problem`` is a GEMM ``Problem`` or a ``ContractionView`` (any contraction).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tensile_asm.errors import UserError
from tensile_asm.library import dtree, matching
from tensile_asm.library.fileio import load_msgpack, load_yaml
from tensile_asm.library.predicates import Hardware, hardware_holds, problem_holds, processor_name, task_holds
from tensile_asm.library.problem_view import PERFORMANCE_METRICS, ContractionView
from tensile_asm.problem import Problem

_PROPERTIES = {"FreeSizeA": ContractionView.free_size_a, "FreeSizeB": ContractionView.free_size_b,
               "BatchSize": ContractionView.batch_size, "BoundSize": ContractionView.bound_size}


class Library:
    """A master solution library: ``solutions`` by index and the selection ``tree``."""

    def __init__(self, data: dict[str, Any], path: Path | None = None):
        if not isinstance(data, dict) or "solutions" not in data or "library" not in data:
            raise UserError(f"{path or 'library'}: not a master solution library (needs 'solutions' and 'library')")
        self.path = path
        self.data = data
        self.tree = data["library"]
        self.solutions = {s["index"]: s for s in data["solutions"]}
        self._sorted: dict[int, tuple[list, list]] = {}  # Matching tables as the loader sorts them, and keys
        self._children: dict[str, Library] = {}  # lazy-loading placeholders, loaded once each (as the host library)

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
        """The code object beside the library file that holds kernel ``name`` (its symbol is the name): a
        ``.co`` (an offload bundle or an ELF) or, for helper kernels, a ``.hsaco``."""
        from tensile_asm.codeobject import read_code_object

        folder = self.path.parent if self.path else Path(".")
        candidates = sorted([*folder.glob("*.co"), *folder.glob("*.hsaco")])
        for co in candidates:
            if name in read_code_object(co).kernels:
                return co
        raise UserError(f"{folder}: none of its {len(candidates)} code objects (.co, .hsaco) holds kernel {name}; "
                        f"rebuild the library with tensile-create-library")

    def select(self, problem: Problem | ContractionView, arch: str = "gfx90a", cu_count: int | None = None,
               is_apu: int | None = None, perf_metric: str = "DeviceEfficiency") -> dict[str, Any] | None:
        """The chosen solution entry (a dict with ``name``, ``index``, ...) or ``None``. ``cu_count`` and
        ``is_apu`` default to Tensile's AMDGPU defaults (0); ``perf_metric`` is the problem's
        performance metric (DeviceEfficiency, CUEfficiency, Auto, ExperimentalGrid, ExperimentalDTree)."""
        if perf_metric not in PERFORMANCE_METRICS:
            raise UserError(f"performance metric {perf_metric!r} is not one Tensile knows; use one of "
                            f"{', '.join(PERFORMANCE_METRICS)}")
        if isinstance(problem, Problem):
            view = ContractionView.from_problem(problem, performance_metric=perf_metric)
        elif perf_metric != "DeviceEfficiency" and problem.performance_metric == "DeviceEfficiency":
            view = _with_metric(problem, perf_metric)
        else:
            view = problem
        hw = Hardware(processor_name(arch), cu_count or 0, is_apu or 0)
        try:
            return self._node(self.tree, view, hw)
        except (KeyError, TypeError, IndexError, AttributeError) as e:
            raise UserError(f"{self.path or 'library'}: its selection tree or a solution entry lacks or garbles "
                            f"{type(e).__name__} {e}; rebuild the library with tensile-create-library") from None

    def accepts(self, solution: dict[str, Any], problem: Problem | ContractionView, arch: str) -> bool:
        """Whether ``solution``'s problem and hardware predicates hold for ``problem`` on ``arch`` (Tensile's
        AMDGPU defaults: CU count and APU 0). Its task predicate (WorkspaceCheck) is left to the caller,
        who gives the kernel the workspace it needs."""
        view = ContractionView.from_problem(problem) if isinstance(problem, Problem) else problem
        where = f"{self.path or 'library'}: solution {solution.get('index')}"
        true = {"type": "TruePred"}
        return (problem_holds(solution.get("problemPredicate", true), view, where)
                and hardware_holds(solution.get("hardwarePredicate", true), Hardware(processor_name(arch), 0, 0),
                                   where))

    # ---- predicates
    def _solution_ok(self, index: int, v: ContractionView, hw: Hardware) -> bool:
        sol = self.solutions.get(index)
        if sol is None:
            return False
        where = f"{self.path or 'library'}: solution {index}"
        true = {"type": "TruePred"}
        return (task_holds(sol.get("taskPredicate", true), v, sol, where)
                and problem_holds(sol.get("problemPredicate", true), v, where)
                and hardware_holds(sol.get("hardwarePredicate", true), hw, where))

    def _single(self, index: int, v: ContractionView, hw: Hardware) -> dict[str, Any] | None:
        if index is None or index < 0:
            return None
        if index not in self.solutions:
            raise UserError(f"{self.path or 'library'}: the tree names solution {index}, which the library "
                            f"does not list")
        return self.solutions[index] if self._solution_ok(index, v, hw) else None

    # ---- tree
    def _node(self, node: dict, v: ContractionView, hw: Hardware) -> dict[str, Any] | None:
        t = node.get("type") if isinstance(node, dict) else None
        where = str(self.path or "library")
        if t == "Hardware":
            for row in node["rows"]:
                if hardware_holds(row["predicate"], hw, where):
                    found = self._node(row["library"], v, hw)
                    if found is not None:
                        return found
            return None
        if t == "ProblemMap":
            prop = node.get("property", {}).get("type")
            if prop != "OperationIdentifier":
                raise UserError(f"{where}: ProblemMap on {prop!r} is not one Tensile 4.44 writes "
                                f"(it maps OperationIdentifier)")
            child = node["map"].get(v.operation_identifier)
            return None if child is None else self._node(child, v, hw)
        if t == "Problem":
            for row in node["rows"]:
                if problem_holds(row["predicate"], v, where):
                    found = self._node(row["library"], v, hw)
                    if found is not None:
                        return found
            return None
        if t == "Single":
            return self._single(node["index"], v, hw)
        if t == "Matching":
            return self._matching(node, v, hw)
        if t == "DecisionTree":
            return dtree.best_solution(node, v, lambda value: self._node(value, v, hw), where)
        if t == "Placeholder":
            return self._placeholder(node, v, hw)
        raise UserError(f"{where}: library node type {t!r} is not one Tensile 4.44 writes "
                        f"(Hardware, ProblemMap, Problem, Single, Matching, DecisionTree, Placeholder)")

    def _matching(self, node: dict, v: ContractionView, hw: Hardware) -> dict[str, Any] | None:
        key = []
        for prop in node["properties"]:
            fn = _PROPERTIES.get(prop.get("type"))
            if fn is None:
                raise UserError(f"{self.path}: Matching property {prop.get('type')!r} is not supported by this "
                                f"reader (FreeSizeA, FreeSizeB, BatchSize, BoundSize are)")
            key.append(fn(v, prop.get("index", 0)))
        cached = self._sorted.get(id(node))
        if cached is None:
            table = matching.sort_table(node["table"])
            cached = self._sorted[id(node)] = (table, [list(e["key"]) for e in table])
        table, keys = cached

        def transform(entry: dict) -> dict[str, Any] | None:
            if entry.get("index", -1) != -1:
                return self._single(entry["index"], v, hw)
            return self._node(entry["value"], v, hw)
        return matching.best_match(table, key, node.get("distance", "Euclidean"), transform, keys)

    def _placeholder(self, node: dict, v: ContractionView, hw: Hardware) -> dict[str, Any] | None:
        child = self._children.get(node["value"])
        if child is None:
            base = self.path.parent if self.path else Path(".")
            for suffix in (".yaml", ".dat"):
                child_path = base / (node["value"] + suffix)
                if child_path.is_file():
                    child = self._children[node["value"]] = Library.load(child_path)
                    self.solutions.update(child.solutions)
                    break
        if child is not None:
            return self._node(child.tree, v, hw)
        raise UserError(f"{self.path}: Placeholder {node['value']!r} names no .yaml or .dat file in {base}")


def _with_metric(view: ContractionView, metric: str) -> ContractionView:
    from dataclasses import replace
    return replace(view, performance_metric=metric)
