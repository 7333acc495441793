"""The master solution library (TensileCreateLibrary's ``TensileLibrary.yaml``/``.dat``), §4.2/§4.3.

``build_master_library(parts)`` turns logic files (each with the subset of its solutions that were built,
and their kernel names) into ``{"solutions": [...], "library": <tree>}``: a ``Hardware`` node whose rows hold
a ``ProblemMap`` on the operation identifier, five nested ``Problem`` levels (perf metric, Fp16AltImpl,
Fp16AltImplRound, types, Equality) and a ``Matching`` leaf over [FreeSizeA, FreeSizeB, BoundSize]. Several
logic files merge: rows with equal predicates merge recursively, maps by key, tables concatenate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import msgpack

from tensile_asm.library.fileio import dump_yaml, write_atomic
from tensile_asm.library.logic import LogicFile
from tensile_asm.problem import ProblemType
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
    for tc, initial in (("A", pt.use_initial_strides_ab), ("B", pt.use_initial_strides_ab),
                        ("C", pt.use_initial_strides_cd), ("D", pt.use_initial_strides_cd)):
        asserts = dict(p[f"AssertStride{tc}Equal"])
        if not initial:
            asserts.setdefault(0, 1)  # the kernel assumes unit stride in the first dimension
        dim = [_pred(f"Stride{tc}Equal", v, pos) for pos, v in asserts.items() if v != -1]
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
    if d["_GlobalAccumulation"] is not None:
        preds.append(_pred("GlobalSplitUCheckMinK", p["MinKForGSU"] * p["GlobalSplitU"]))
    return _and(preds)


def type_predicates(pt: ProblemType) -> list[dict[str, Any]]:
    return [_pred("TypesEqual", [pt.data_type.enum, pt.data_type.enum, pt.dest_type.enum, pt.dest_type.enum]),
            _pred("HighPrecisionAccumulate", pt.high_precision_accumulate),
            _pred("F32XdlMathOp", (pt.f32_xdl_math_op.enum if pt.f32_xdl_math_op else "Float")),
            _pred("StochasticRounding", pt.stochastic_rounding)]


def solution_entry(sol: Solution, name: str, index: int, logic_index: int) -> dict[str, Any]:
    p, d = sol.params, sol.derived_keys
    accumulation = {None: 0, "SingleBuffer": 1, "MultipleBuffer": 2}[d["_GlobalAccumulation"]]
    ws = d["_WorkspaceSizePerElemC"]
    return {
        "name": name, "index": index, "libraryLogicIndex": logic_index, "debugKernel": False,
        "hardwarePredicate": dict(TRUE), "problemPredicate": problem_predicate(sol),
        "taskPredicate": _pred("WorkspaceCheck", ws, 0) if ws > 0 else dict(TRUE),
        "ideals": {}, "linearModel": {}, "problemType": sol.problem_type.library_dict(),
        "sizeMapping": {
            "depthU": p["DepthU"], "globalAccumulation": accumulation, "globalSplitU": p["GlobalSplitU"],
            "macroTile": [d["MacroTile0"], d["MacroTile1"], 1], "magicDivAlg": p["MagicDivAlg"],
            "packBatchDims": p["PackBatchDims"], "packSummationDims": p["PackSummationDims"],
            "persistentKernel": p["PersistentKernel"], "persistentKernelAlongBatch": p["PersistentKernelAlongBatch"],
            "preloadKernargs": p["PreloadKernelArguments"], "sourceKernel": p["KernelLanguage"] == "Source",
            "staggerStrideShift": d["_staggerStrideShift"], "staggerU": p["StaggerU"], "streamK": p["StreamK"],
            "streamKAtomic": p["StreamKAtomic"], "threadTile": list(p["ThreadTile"]),
            "workGroup": list(p["WorkGroup"]), "workGroupMapping": abs(p["WorkGroupMapping"]),
            "workspaceSizePerElemC": ws,
        },
    }


def hardware_predicate(lf: LogicFile) -> dict[str, Any]:
    if lf.architecture == "fallback":
        return dict(TRUE)
    proc = _pred("Processor", lf.architecture)
    if lf.cu_count is None and lf.is_apu is None:
        return _pred("AMDGPU", proc)
    parts = [proc] + ([_pred("CUCount", lf.cu_count)] if lf.cu_count is not None else [])
    parts += [_pred("IsAPU", lf.is_apu)] if lf.is_apu is not None else []
    return _pred("AMDGPU", {"type": "And", "value": parts})


def _matching(lf: LogicFile, remap: dict[int, int]) -> dict[str, Any]:
    pt = lf.problem_type
    equality = lf.distance == "Equality"
    props = [{"type": "FreeSizeA", "index": 0}, {"type": "FreeSizeB", "index": 0}]
    positions = [pt.index01_a, pt.index01_b]
    if equality and pt.indices_batch:
        props.append({"type": "BatchSize", "index": 0})
        positions.append(pt.indices_batch[0])
    props.append({"type": "BoundSize", "index": 0})
    positions.append(pt.index_unroll)
    table = [{"key": [row.sizes[i] for i in positions], "index": remap[row.solution_index], "speed": row.perf}
             for row in lf.exact_logic if row.solution_index in remap]
    table.sort(key=lambda e: e["key"])
    return {"type": "Matching", "properties": props, "table": table, "distance": lf.distance}


def _tree(lf: LogicFile, remap: dict[int, int]) -> dict[str, Any]:
    pt = lf.problem_type
    node = _matching(lf, remap)
    levels = [
        _pred("EqualityMatching") if lf.distance == "Equality" else dict(TRUE),
        _and(type_predicates(pt)),
        _pred("Fp16AltImplRound") if lf.fp16_alt_impl_round else dict(TRUE),
        _pred("Fp16AltImpl") if lf.fp16_alt_impl else dict(TRUE),
        dict(TRUE) if lf.perf_metric == "DeviceEfficiency" else _pred(lf.perf_metric),
    ]
    for pred in levels:
        node = {"type": "Problem", "rows": [{"predicate": pred, "library": node}]}
    node = {"type": "ProblemMap", "property": {"type": "OperationIdentifier"}, "map": {pt.operation_identifier: node}}
    return {"type": "Hardware", "rows": [{"predicate": hardware_predicate(lf), "library": node}]}


def _row_order(row: dict[str, Any]) -> tuple:
    pred = row["predicate"]
    inner = pred.get("value") if isinstance(pred.get("value"), dict) else {}
    specific = inner.get("type") == "And"
    return (pred["type"] == "TruePred", not specific, str(inner.get("value", "")) if not specific else "")


def merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Merge library node ``b`` into ``a`` (same type) and return ``a``."""
    if a["type"] != b["type"]:
        raise ValueError(f"cannot merge a {a['type']} node with a {b['type']} node")
    if a["type"] in ("Hardware", "Problem"):
        for row in b["rows"]:
            same = next((r for r in a["rows"] if r["predicate"] == row["predicate"]), None)
            if same is None:
                a["rows"].append(row)
            else:
                merge(same["library"], row["library"])
        a["rows"].sort(key=_row_order)
    elif a["type"] == "ProblemMap":
        for key, node in b["map"].items():
            a["map"][key] = merge(a["map"][key], node) if key in a["map"] else node
    elif a["type"] == "Matching":
        if a["properties"] != b["properties"] or a["distance"] != b["distance"]:
            raise ValueError("cannot merge Matching tables with different properties or distance")
        a["table"] = sorted(a["table"] + b["table"], key=lambda e: e["key"])
    return a


def build_master_library(parts: Sequence[LibraryPart]) -> dict[str, Any]:
    solutions: list[dict[str, Any]] = []
    library: dict[str, Any] | None = None
    for part in parts:
        remap = {}
        for logic_index, sol, name in part.solutions:
            remap[logic_index] = len(solutions)
            solutions.append(solution_entry(sol, name, len(solutions), logic_index))
        if not remap:
            continue
        tree = _tree(part.logic, remap)
        library = tree if library is None else merge(library, tree)
    return {"solutions": solutions, "library": library or {"type": "Hardware", "rows": []}}


def write_master_library(lib: dict[str, Any], out_dir: str | Path, fmt: str = "yaml") -> Path:
    """Write ``TensileLibrary.yaml`` (``fmt`` yaml) or ``TensileLibrary.dat`` (msgpack) atomically."""
    out_dir = Path(out_dir)
    if fmt == "yaml":
        return write_atomic(out_dir / "TensileLibrary.yaml", dump_yaml(lib, explicit=True))
    if fmt == "msgpack":
        return write_atomic(out_dir / "TensileLibrary.dat", msgpack.packb(lib, use_bin_type=True))
    raise ValueError(f"unknown library format {fmt!r}")
