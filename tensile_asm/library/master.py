"""The master solution library (TensileCreateLibrary's ``TensileLibrary.yaml``/``.dat``), §4.2/§4.3.

``build_master_library(parts)`` turns logic files (each with the subset of its solutions that were built,
and their kernel names) into ``{"solutions": [...], "library": <tree>}`` as Tensile 4.44's
MasterSolutionLibrary.FromOriginalState does: a ``Hardware`` node (processor, CU count, APU) whose rows hold
a ``ProblemMap`` on the operation identifier, four ``Problem`` levels (perf metric, Fp16AltImpl,
Fp16AltImplRound, problem types) and the selection level: a ``Problem`` row (``EqualityMatching`` or true)
over a ``Matching`` table, or one row per region over a ``DecisionTree`` forest. Several logic files merge
as Tensile merges them: rows with equal predicates merge recursively, maps by key, tables concatenate; rows
are then sorted in Tensile's predicate order.

``build_library_files`` splits the library as TensileCreateLibrary does: one ``TensileLibrary`` file, one
``TensileLibrary_<gfx>`` per architecture (``--separate-architectures``, indices from the architecture's
index), or for lazy loading ``TensileLibrary_lazy_<gfx>`` whose problem-type level holds ``Placeholder`` nodes
naming one file per problem type with that type's solutions and selection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import msgpack

from tensile_asm.errors import UserError
from tensile_asm.library.fileio import dump_yaml, write_atomic
from tensile_asm.library.logic import LogicFile
from tensile_asm.library.logic_kinds import Selection
from tensile_asm.library.predicates import processor_name
from tensile_asm.problem import ProblemType, data_type
from tensile_asm.solution.solution import Solution

TRUE = {"type": "TruePred"}


@dataclass
class LibraryPart:
    """One logic file's contribution: ``(logic index, solution, kernel name)`` for each built solution."""

    logic: LogicFile
    solutions: Sequence[tuple[int, Solution, str]]


def _pred(type_: str, value: Any = None, index: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type_}
    if index is not None:
        out["index"] = index
    if value is not None:
        out["value"] = value
    return out


def _and(preds: list[dict[str, Any]]) -> dict[str, Any]:
    if not preds:
        return dict(TRUE)
    return preds[0] if len(preds) == 1 else {"type": "And", "value": preds}


def problem_predicate(sol: Solution) -> dict[str, Any]:
    """The solution's ``problemPredicate`` (Contractions.ProblemPredicate.FromOriginalState order)."""
    p, d, pt = sol.params, sol.derived_keys, sol.problem_type
    preds: list[dict[str, Any]] = []
    for key, tag, index in (("AssertSummationElementMultiple", "BoundSizeMultiple", -1),
                            ("AssertFree0ElementMultiple", "Free0SizeMultiple", 0),
                            ("AssertFree1ElementMultiple", "Free1SizeMultiple", 0)):
        if p[key] != 1:
            preds.append(_pred(tag, p[key], index))
    for tc in "ABCD":   # the derivation sets {0: 1} without initial strides (solution/derive.py)
        dim = [_pred(f"Stride{tc}Equal", v, pos) for pos, v in p[f"AssertStride{tc}Equal"].items() if v != -1]
        if dim:
            preds.append(_and(dim))
    for key, tag in (("AssertSizeEqual", "SizeEqual"), ("AssertSizeGreaterThan", "SizeGreaterThan"),
                     ("AssertSizeMultiple", "SizeMultiple"), ("AssertSizeLessThan", "SizeLessThan")):
        dim = [_pred(tag, v, pos) for pos, v in p[key].items() if v != -1]
        if dim:
            preds.append(_and(dim))
    for key, tag in (("AssertAlphaValue", "AlphaValue"), ("AssertBetaValue", "BetaValue")):
        if p[key] is not False:
            preds.append(_pred(tag, str(p[key])))
    if p["AssertCEqualsD"]:
        preds.append(_pred("CEqualsD"))
    preds.append(_pred("OperationIdentifierEqual", pt.operation_identifier))
    if not pt.use_beta:
        preds.append(_pred("BetaZero"))
    preds.append(_pred("StridedBatched", pt.strided_batched))
    preds += type_predicates(pt)
    if pt.data_type.char != "4xi8":
        preds.append(_pred("LeadingFree0SizesGreaterOrEqual", d["GlobalLoadVectorWidthA"] if pt.tlu_a else 1))
        preds.append(_pred("LeadingFree1SizesGreaterOrEqual", d["GlobalLoadVectorWidthB"] if pt.tlu_b else 1))
    preds.append(_pred("KernelLanguageCompatible", p["KernelLanguage"]))
    if p["GlobalSplitU"] > 1 and d["_GlobalAccumulation"] != "MultipleBuffer":
        preds.append(_pred("DeterministicMode", False))
    if p["PersistentKernel"]:
        preds.append(_pred("PersistentKernelCheck"))
    preds.append(_pred("ArithmeticUnitCompatible", "MFMA" if sol.derived.is_mfma else "VALU"))
    if p["BufferLoad"]:
        shift_a = pt.tlu_a and p["AssertFree0ElementMultiple"] < d["GlobalLoadVectorWidthA"]
        shift_b = pt.tlu_b and p["AssertFree1ElementMultiple"] < d["GlobalLoadVectorWidthB"]
        preds.append(_pred("BufferLoadOffsetLimitCheck", {
            "DUorMT0": p["DepthU"] if pt.tlu_a else d["MacroTile0"],
            "DUorMT1": p["DepthU"] if pt.tlu_b else d["MacroTile1"],
            "ShiftPtrElemA": d["GlobalLoadVectorWidthA"] if shift_a else 0,
            "ShiftPtrElemB": d["GlobalLoadVectorWidthB"] if shift_b else 0}))
    if p["BufferStore"]:
        preds.append(_pred("BufferStoreOffsetLimitCheck", d["MacroTile1"]))
    if d["_GlobalAccumulation"] is not None and not p["StreamK"]:
        preds.append(_pred("GlobalSplitUCheckMinK", p["MinKForGSU"] * p["GlobalSplitU"]))
    return _and(preds)


def type_predicates(pt: ProblemType) -> list[dict[str, Any]]:
    a, b = pt.ab_types
    return [_pred("TypesEqual", [a.enum, b.enum, pt.dest_type.enum, pt.dest_type.enum]),
            _pred("HighPrecisionAccumulate", pt.high_precision_accumulate),
            _pred("F32XdlMathOp", (pt.f32_xdl_math_op.enum if pt.f32_xdl_math_op else "Float")),
            _pred("StochasticRounding", pt.stochastic_rounding)]


def _workgroup_mapping(p) -> int:
    """WorkGroupMapping as Tensile 4.44 writes it (SolutionStructs): negative only for assembly kernels with
    WorkGroupMappingType B (the host then counts its blocks along dim 0), -1 as 1."""
    wgm = p["WorkGroupMapping"]
    if p["KernelLanguage"] != "Assembly" or p["WorkGroupMappingType"] == "Z":
        wgm = abs(wgm)
    return 1 if wgm == -1 else wgm


def solution_entry(sol: Solution, name: str, index: int, logic_index: int) -> dict[str, Any]:
    p, d = sol.params, sol.derived_keys
    # SizeMapping.FromOriginalState: any other stored value (None, or a boolean some logic files hold) is 0
    accumulation = {"SingleBuffer": 1, "MultipleBuffer": 2, "PartialsBuffer": 3}.get(d["_GlobalAccumulation"], 0)
    ws = d["_WorkspaceSizePerElemC"]
    return {
        "name": name, "index": index, "libraryLogicIndex": logic_index, "debugKernel": False,
        "hardwarePredicate": dict(TRUE), "problemPredicate": problem_predicate(sol),
        "taskPredicate": _pred("WorkspaceCheck") if ws > 0 else dict(TRUE),
        "ideals": {}, "linearModel": {}, "problemType": sol.problem_type.library_dict(),
        "sizeMapping": {
            "depthU": p["DepthU"], "globalAccumulation": accumulation, "globalSplitU": p["GlobalSplitU"],
            "macroTile": [d["MacroTile0"], d["MacroTile1"], 1], "magicDivAlg": p["MagicDivAlg"],
            "packBatchDims": p["PackBatchDims"], "packSummationDims": p["PackSummationDims"],
            "persistentKernel": p["PersistentKernel"], "persistentKernelAlongBatch": p["PersistentKernelAlongBatch"],
            "preloadKernargs": p["PreloadKernelArguments"], "sourceKernel": p["KernelLanguage"] == "Source",
            "staggerStrideShift": d["_staggerStrideShift"], "staggerU": p["StaggerU"], "streamK": p["StreamK"],
            "streamKAtomic": p["StreamKAtomic"], "threadTile": list(p["ThreadTile"]),
            "workGroup": list(p["WorkGroup"]), "workGroupMapping": _workgroup_mapping(p),
            "workspaceSizePerElemC": ws,
        },
    }


def hardware_predicate(lf: LogicFile) -> dict[str, Any]:
    """Hardware.HardwarePredicate.FromHardware: the processor (Tensile's gfxArch/gfxName of the name),
    and CUCount / IsAPU when the logic file's architecture gives them."""
    if lf.architecture == "fallback":
        return dict(TRUE)
    proc = _pred("Processor", processor_name(lf.architecture))
    if lf.cu_count is None and lf.is_apu is None:
        return _pred("AMDGPU", proc)
    parts = [proc] + ([_pred("CUCount", lf.cu_count)] if lf.cu_count is not None else [])
    parts += [_pred("IsAPU", lf.is_apu)] if lf.is_apu is not None else []
    return _pred("AMDGPU", {"type": "And", "value": parts})


def _selection(lf: LogicFile) -> Selection:
    if lf.selection is not None:
        return lf.selection
    return Selection(lf.library_type, lf.distance, list(lf.index_order), list(lf.exact_logic))


def _matching(lf: LogicFile, remap: dict[int, int]) -> dict[str, Any]:
    """MatchingLibrary.FromOriginalState: index order value 2/3/1 (and 0 for Equality) become FreeSizeA/
    FreeSizeB/BoundSize (BatchSize); a row's key takes its sizes at those positions of the index order."""
    sel = _selection(lf)
    order, distance = sel.index_order, sel.distance
    props = {2: {"type": "FreeSizeA", "index": 0}, 3: {"type": "FreeSizeB", "index": 0},
             1: {"type": "BoundSize", "index": 0}}
    if distance == "Equality":
        props[0] = {"type": "BatchSize", "index": 0}
    properties = [props[i] for i in order if i in props]
    positions = [pos for pos, i in enumerate(order) if i in props]
    table = []
    for row in sel.rows:
        if row.solution_index not in remap:  # not built: Tensile's KeyError, the row is left out
            continue
        if max(positions, default=-1) >= len(row.sizes):
            raise UserError(f"{lf.path}: exact row {list(row.sizes)} has fewer sizes than the index order "
                            f"{order} needs")
        entry: dict[str, Any] = {"key": [row.sizes[p] for p in positions], "index": remap[row.solution_index]}
        if distance != "GridBased":
            entry["speed"] = row.perf
        table.append(entry)
    table.sort(key=lambda e: e["key"])
    pred = _pred("EqualityMatching") if distance == "Equality" else dict(TRUE)
    return {"type": "Problem", "rows": [{"predicate": pred, "library": {
        "type": "Matching", "properties": properties, "table": table, "distance": distance}}]}


def _decision_tree(lf: LogicFile, remap: dict[int, int]) -> dict[str, Any]:
    """DecisionTreeLibrary.FromOriginalState per region: a Problem row (the region's predicate, And of
    several) holding the forest; trees whose solution was not built are left out, an unbuilt fallback is
    the null solution (-1)."""
    rows = []
    for region in lf.selection.regions:
        preds = [{k: p[k] for k in ("type", "index", "value") if p.get(k) is not None} for p in region.predicates]
        trees = [{"tree": nodes, "value": {"type": "Single", "index": remap[sol]}}
                 for nodes, sol in region.trees if sol in remap]
        fallback = remap.get(region.fallback, -1) if region.fallback is not None else -1
        rows.append({"predicate": preds[0] if len(preds) == 1 else _and(preds) if preds else dict(TRUE),
                     "library": {"type": "DecisionTree", "features": region.features, "trees": trees,
                                 "nullValue": {"type": "Single", "index": fallback}}})
    return {"type": "Problem", "rows": rows}


def _selection_node(lf: LogicFile, remap: dict[int, int]) -> dict[str, Any]:
    return _decision_tree(lf, remap) if _selection(lf).kind == "DecisionTree" else _matching(lf, remap)


def _tree(lf: LogicFile, remap: dict[int, int], leaf: dict[str, Any] | None = None) -> dict[str, Any]:
    """MasterSolutionLibrary.FromOriginalState's levels, bottom up: selection (or, lazily loaded, the
    ``leaf`` Placeholder in its place), problem type predicates, Fp16AltImplRound, Fp16AltImpl, perf metric,
    operation identifier, hardware."""
    pt = lf.problem_type
    node = leaf if leaf is not None else _selection_node(lf, remap)
    levels = [
        _and(type_predicates(pt)),
        _pred("Fp16AltImplRound") if lf.fp16_alt_impl_round else dict(TRUE),
        _pred("Fp16AltImpl") if lf.fp16_alt_impl else dict(TRUE),
        dict(TRUE) if lf.perf_metric == "DeviceEfficiency" else _pred(lf.perf_metric),
    ]
    for pred in levels:
        node = {"type": "Problem", "rows": [{"predicate": pred, "library": node}]}
    node = {"type": "ProblemMap", "property": {"type": "OperationIdentifier"}, "map": {pt.operation_identifier: node}}
    return {"type": "Hardware", "rows": [{"predicate": hardware_predicate(lf), "library": node}]}


# ---- Tensile's row order after a merge (Properties.Predicate.__lt__, Hardware.HardwarePredicate.__lt__)
_DATA_TYPE_VALUES = ("TypesEqual", "F32XdlMathOp")


def _py_lt(x: Any, y: Any) -> bool:
    """Python's ``<`` on Tensile's predicate objects, written for their dict state."""
    if isinstance(x, dict) and isinstance(y, dict) and "type" in x and "type" in y:
        return _pred_lt(x, y)
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        for a, b in zip(x, y):
            if a != b:
                return _py_lt(a, b)
        return len(x) < len(y)
    try:
        return x < y
    except TypeError:
        raise ValueError(f"Tensile cannot order predicate values {x!r} and {y!r}") from None


def _value_key(pred: dict[str, Any]) -> Any:
    value = pred.get("value")
    if pred["type"] in _DATA_TYPE_VALUES:  # DataType objects order by their index in Tensile's type table
        return [data_type(v).index for v in value] if isinstance(value, list) else data_type(value).index
    if isinstance(value, dict) and "type" not in value:
        return frozenset(value.values())  # Tensile compares a dict value as the set of its values
    return value


def _pred_lt(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if b["type"] == "TruePred":
        return a["type"] != "TruePred"
    if a["type"] == "TruePred":
        return False
    if a["type"] == "AMDGPU" and b["type"] == "AMDGPU":
        return _hardware_lt(a, b)
    ta = (a["type"], a.get("index"), _value_key(a))
    tb = (b["type"], b.get("index"), _value_key(b))
    return _py_lt(ta, tb)


def _hw_parts(pred: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
    inner = pred["value"]
    if inner["type"] != "And":
        return inner, 0, -1
    find = {p["type"]: p for p in inner["value"]}
    return (find.get("Processor"), find["CUCount"]["value"] if "CUCount" in find else 0,
            find["IsAPU"]["value"] if "IsAPU" in find else -1)


def _hardware_lt(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """APU rows before XPU rows before generic ones; then more CUs first; then by processor name."""
    proc_a, cu_a, apu_a = _hw_parts(a)
    proc_b, cu_b, apu_b = _hw_parts(b)
    if apu_a == apu_b:
        if cu_a == cu_b == 0:
            return _py_lt(("Processor", None, proc_a["value"]), ("Processor", None, proc_b["value"]))
        return cu_a > cu_b
    return apu_a > apu_b


class _Ordered:
    def __init__(self, row: dict[str, Any]):
        self.pred = row["predicate"]

    def __lt__(self, other: "_Ordered") -> bool:
        return _pred_lt(self.pred, other.pred)


def merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Merge library node ``b`` into ``a`` (same type) and return ``a``, as Tensile's ``merge`` methods do:
    predicate rows merge when their predicates are equal, else ``b``'s row is appended, and the rows are
    sorted (stable, with Tensile's predicate order); maps merge by key; Matching tables concatenate and
    sort by key. DecisionTree libraries do not merge (Tensile refuses too)."""
    if a["type"] != b["type"]:
        raise ValueError(f"a {a['type']} library and a {b['type']} library meet at the same place")
    if a["type"] in ("Hardware", "Problem"):
        for row in b["rows"]:
            same = next((r for r in a["rows"] if r["predicate"] == row["predicate"]), None)
            if same is None:
                a["rows"].append(row)
            else:
                merge(same["library"], row["library"])
        a["rows"].sort(key=_Ordered)
    elif a["type"] == "ProblemMap":
        for key, node in b["map"].items():
            a["map"][key] = merge(a["map"][key], node) if key in a["map"] else node
    elif a["type"] == "Matching":
        if a["properties"] != b["properties"] or a["distance"] != b["distance"]:
            raise ValueError(f"Matching tables with different properties or distances ({a['distance']}, "
                             f"{b['distance']}) meet at the same place")
        a["table"] = sorted(a["table"] + b["table"], key=lambda e: e["key"])
    elif a["type"] == "Placeholder":
        pass        # PlaceholderLibrary.merge: the first one stays (its file holds both, merged)
    else:
        raise ValueError(f"two {a['type']} libraries meet at the same place; Tensile does not merge them")
    return a


def _merged(library: dict[str, Any] | None, tree: dict[str, Any], lf: LogicFile) -> dict[str, Any]:
    try:
        return tree if library is None else merge(library, tree)
    except ValueError as e:
        raise UserError(f"{lf.path}: its selection cannot join the library built from the logic "
                        f"files before it: {e}; give each such file its own problem type, architecture "
                        f"or region") from None


def _numbered(part: LibraryPart, first: int) -> tuple[dict[int, int], list[dict[str, Any]], int]:
    """The part's solutions numbered as Tensile numbers its logic file's: every solution of the file, built or
    not, counts (the n-th is ``first + n``), so an index names the same solution as in Tensile's library; an
    unbuilt one is left out (its index is a gap: nothing can select it). Returns ({logic index: index},
    the built solutions' entries, the index after the file's last solution)."""
    remap: dict[int, int] = {}
    solutions = []
    for logic_index, sol, name in part.solutions:
        remap[logic_index] = first + logic_index
        solutions.append(solution_entry(sol, name, first + logic_index, logic_index))
    return remap, solutions, first + len(part.logic.entries)


def build_master_library(parts: Sequence[LibraryPart], first_index: int = 0) -> dict[str, Any]:
    """One master library of ``parts``, solution indices counted from ``first_index`` over every solution of
    the parts' files (``_numbered``)."""
    solutions: list[dict[str, Any]] = []
    library: dict[str, Any] | None = None
    for part in parts:
        remap, entries, first_index = _numbered(part, first_index)
        if not remap:
            continue
        solutions += entries
        library = _merged(library, _tree(part.logic, remap), part.logic)
    return {"solutions": solutions, "library": library or {"type": "Hardware", "rows": []}}


# ---- --separate-architectures and --lazy-library-loading (TensileCreateLibrary.makeMasterLibraries,
# MasterSolutionLibrary.FromOriginalState with the placeholder level, generateMasterFileList)

def architecture_index(gfx: str) -> int:
    """MasterSolutionLibrary.ArchitectureIndexMap: an architecture's solutions are numbered from the hex
    digits after ``gfx`` shifted left by 18 (gfx90a: 0x90a << 18 = 606601216); fallback from 0."""
    if gfx == "fallback":
        return 0
    m = re.match(r"gfx([0-9a-f]*)", gfx)
    if m is None or not m.group(1):
        raise UserError(f"architecture {gfx!r}: not a gfx name; separate architectures need e.g. gfx90a")
    return int(m.group(1), 16) << 18


def placeholder_name(lf: LogicFile) -> str:
    """The name FromOriginalState gives a problem type's lazily loaded library (and its code object):
    ``TensileLibrary`` + the type (``_Type_<A><C>``, ``_HPA``) + ``_Fp16AltRnz`` / ``_Fp16Alt`` + ``_<perf
    metric>`` unless DeviceEfficiency + ``_<operation identifier>`` + ``_CU<n>`` + ``_APU``/``_XPU`` +
    ``_<ArchitectureName>``, the levels' order bottom up."""
    pt = lf.problem_type
    name = f"TensileLibrary_Type_{pt.ab_types[0].char}{pt.dest_type.char}"
    name += "_HPA" if pt.high_precision_accumulate else ""
    name += "_Fp16AltRnz" if lf.fp16_alt_impl_round else ""
    name += "_Fp16Alt" if lf.fp16_alt_impl and not lf.extra.get("Fp16AltImplRnz") else ""
    name += f"_{lf.perf_metric}" if lf.perf_metric != "DeviceEfficiency" else ""
    name += f"_{pt.operation_identifier}"
    name += f"_CU{lf.cu_count}" if lf.cu_count else ""
    name += ("_APU" if lf.is_apu == 1 else "_XPU") if lf.is_apu is not None else ""
    return name + f"_{lf.architecture}"


@dataclass
class LibraryFiles:
    """The library files of a build, ``{file name without extension: library}`` in writing order, and for
    lazy loading the code object (name without ``.co``) of each kernel: its problem type's placeholder."""

    libraries: dict[str, dict[str, Any]]
    code_object_of: dict[str, str]
    # lazy loading: per architecture, per lazy (problem type) library, its solutions' (index, solution name)
    lazy_index: dict[str, dict[str, list[tuple[int, str]]]] = field(default_factory=dict)

    def master_solution_index(self) -> str:
        """``TensileMasterSolutionIndex.csv`` as Tensile 4.44's ``writeMasterSolutionIndexCSV`` writes it for a
        lazy-loading build: per architecture, per lazy library, each solution's index (twice: the library's key
        and the solution's own) and its solution name (the logic file's SolutionNameMin)."""
        lines = ["architectureName,libraryName,libraryIndex,solutionIndex,solutionName"]
        for gfx, libs in self.lazy_index.items():
            for name, rows in libs.items():
                lines += [f"{gfx},{name},{index},{index},{sol_name}" for index, sol_name in rows]
        return "\n".join(lines) + "\n"


def build_library_files(parts: Sequence[tuple[str, LibraryPart]], separate: bool = False,
                        lazy: bool = False) -> LibraryFiles:
    """The master library files TensileCreateLibrary writes from ``parts`` ((gfx, part) pairs):
    ``TensileLibrary`` (all architectures, indices from 0); with ``separate`` one ``TensileLibrary_<gfx>`` per
    architecture, its indices from ``architecture_index(gfx)``; with ``lazy`` (which needs ``separate``, as
    Tensile) ``TensileLibrary_lazy_<gfx>``, no solutions and a ``Placeholder`` where each problem type's
    selection was, then one library per placeholder holding that type's solutions and selection, indices
    running on over the architecture's placeholders in logic-file order."""
    if lazy and not separate:
        raise UserError("--lazy-library-loading requires --separate-architectures (as Tensile 4.44's "
                        "TensileCreateLibrary); add --separate-architectures")
    if not separate:
        return LibraryFiles({"TensileLibrary": build_master_library([p for _, p in parts])}, {})
    by_arch: dict[str, list[LibraryPart]] = {}
    for gfx, part in parts:
        by_arch.setdefault(processor_name(gfx), []).append(part)
    if not lazy:
        return LibraryFiles({f"TensileLibrary_{gfx}": _with_fallback(ps, gfx) for gfx, ps in by_arch.items()}, {})
    libraries: dict[str, dict[str, Any]] = {}
    code_object_of: dict[str, str] = {}
    lazy_index: dict[str, dict[str, list[tuple[int, str]]]] = {}
    for gfx, ps in by_arch.items():
        master: dict[str, Any] | None = None
        lazies: dict[str, dict[str, Any]] = {}
        index_of: dict[str, list[tuple[int, str]]] = {}
        # TensileCreateLibrary.addFallback: the fallback (hip_*) libraries keep their own numbering (from
        # ArchitectureIndexMap("fallback") = 0) and are inserted into each architecture's master library,
        # after the architecture's own (an architecture with fallback logic only gets the fallback's)
        for fallback in (False, True):
            next_index = architecture_index("fallback" if fallback else gfx)
            for part in ps:
                if (part.logic.architecture == "fallback") != fallback:
                    continue
                name = placeholder_name(part.logic)
                remap, solutions, next_index = _numbered(part, next_index)
                # Tensile's master solution index lists every solution of the lazy library, built or not
                index_of.setdefault(name, []).extend(
                    (next_index - len(part.logic.entries) + e.index, e.stored_name or _kernel_of(part, e.index))
                    for e in part.logic.entries)
                if not remap:
                    continue
                for _, _, kernel in part.solutions:
                    code_object_of[kernel] = name
                own = {"solutions": solutions, "library": _selection_node(part.logic, remap)}
                if name in lazies:      # MasterSolutionLibrary.merge of two lazy libraries of one name
                    lazies[name]["solutions"] += solutions
                    _merged(lazies[name]["library"], own["library"], part.logic)
                else:
                    lazies[name] = own
                master = _merged(master, _tree(part.logic, remap, {"type": "Placeholder", "value": name}),
                                 part.logic)
        lazy_index[gfx] = index_of
        libraries[f"TensileLibrary_lazy_{gfx}"] = {"solutions": [],
                                                   "library": master or {"type": "Hardware", "rows": []}}
        libraries.update(lazies)
    return LibraryFiles(libraries, code_object_of, lazy_index)


def _kernel_of(part: LibraryPart, logic_index: int) -> str:
    return next((kernel for i, _, kernel in part.solutions if i == logic_index), f"{part.logic.path.name}#{logic_index}")


def _with_fallback(parts: Sequence[LibraryPart], gfx: str) -> dict[str, Any]:
    """An architecture's ``--separate-architectures`` library as TensileCreateLibrary.addFallback makes it: its
    own logic numbered from ``architecture_index(gfx)``, then the fallback logic's library (numbered from 0,
    as Tensile's "fallback" library) inserted: its solutions after the architecture's, its tree merged in."""
    own = build_master_library([p for p in parts if p.logic.architecture != "fallback"], architecture_index(gfx))
    fallback_parts = [p for p in parts if p.logic.architecture == "fallback"]
    if not any(p.solutions for p in fallback_parts):
        return own
    fallback = build_master_library(fallback_parts, architecture_index("fallback"))
    if not own["solutions"]:
        return fallback
    own["solutions"] += fallback["solutions"]
    own["library"] = _merged(own["library"], fallback["library"], fallback_parts[0].logic)
    return own


def write_master_library(lib: dict[str, Any], out_dir: str | Path, fmt: str = "yaml",
                         name: str = "TensileLibrary") -> Path:
    """Write ``<name>.yaml`` (``fmt`` yaml) or ``<name>.dat`` (msgpack) atomically."""
    out_dir = Path(out_dir)
    if fmt == "yaml":
        return write_atomic(out_dir / f"{name}.yaml", dump_yaml(lib, explicit=True))
    if fmt == "msgpack":
        return write_atomic(out_dir / f"{name}.dat", msgpack.packb(lib, use_bin_type=True))
    raise ValueError(f"unknown library format {fmt!r}")
