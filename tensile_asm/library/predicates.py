"""Problem and hardware predicates of a master library, evaluated as Tensile 4.44's host library does.

Problem predicates follow Source/lib/include/Tensile/ContractionProblemPredicates.hpp over a
``ContractionView``; hardware predicates AMDGPUPredicates.hpp over a ``Hardware`` (processor, CU count,
APU flag; Tensile's defaults are CU count 0 and isAPU 0). An unknown predicate type is a UserError: the
library was written by something this reader does not know.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from tensile_asm.errors import UserError
from tensile_asm.library.problem_view import ContractionView

_TWO_POW_32 = 1 << 32
_SIZE_MAX = (1 << 64) - 1

# AMDGPU::Processor values (Tensile 4.44 AMDGPU.hpp); TargetProcessor compares them. A processor Tensile 4.44
# does not list (gfx950, ...) still matches a Processor predicate by name, but no TargetProcessor one.
_PROCESSOR_VALUE = {"gfx803": 803, "gfx900": 900, "gfx906": 906, "gfx908": 908, "gfx90a": 910, "gfx942": 942,
                    "gfx1010": 1010, "gfx1011": 1011, "gfx1012": 1012, "gfx1030": 1030, "gfx1031": 1031,
                    "gfx1032": 1032, "gfx1034": 1034, "gfx1035": 1035, "gfx1100": 1100, "gfx1101": 1101,
                    "gfx1102": 1102}


def processor_name(arch: str) -> str:
    """The processor of an architecture name: ``gfx90a:sramecc+:xnack-`` -> ``gfx90a`` (Tensile's gfxArch)."""
    m = re.search(r"gfx([0-9a-fA-F]{3,})", arch)
    return f"gfx{m.group(1).lower()}" if m else arch


@dataclass(frozen=True)
class Hardware:
    processor: str
    cu_count: int = 0
    is_apu: int = 0


def _bound_multiple(p: dict, v: ContractionView) -> bool:
    i = p["index"]
    size = v.bound_size(len(v.bound_sizes) + i if i < 0 else i)
    return size % p["value"] == 0


def _free0(p: dict, v: ContractionView) -> int:
    return (v.free_size_a if not v.transpose_c01 else v.free_size_b)(p["index"])


def _free1(p: dict, v: ContractionView) -> int:
    return (v.free_size_b if not v.transpose_c01 else v.free_size_a)(p["index"])


def _in_range(p: dict, v: ContractionView) -> bool:
    rng = p["value"] or {}
    size = v.size(p["index"])
    return rng.get("min", 0) <= size < rng.get("max", _SIZE_MAX)


def _buffer_load(p: dict, v: ContractionView) -> bool:
    x = p["value"]
    return ((v.strides["A"][1] * x["DUorMT0"] + x["ShiftPtrElemA"]) * v.types[0].bytes < _TWO_POW_32 and
            (v.strides["B"][1] * x["DUorMT1"] + x["ShiftPtrElemB"]) * v.types[1].bytes < _TWO_POW_32)


def _leading(free: str) -> Callable[[dict, ContractionView], bool]:
    def check(p: dict, v: ContractionView) -> bool:
        sizes = v.free_sizes_a if free == "A" else v.free_sizes_b
        return (sizes[0] if sizes else v.batch_size(0)) >= p["value"]
    return check


def _stride(tensor: str) -> Callable[[dict, ContractionView], bool]:
    def check(p: dict, v: ContractionView) -> bool:
        strides = v.strides[tensor]
        i = p["index"]
        return i < len(strides) and strides[i] == p["value"]
    return check


def _cu_efficiency(p: dict, v: ContractionView) -> bool:
    if v.performance_metric == "CUEfficiency":
        return True
    if v.performance_metric == "Auto":
        return v.flop_count() < 1500 * 1500 * 1500 * 2
    return False


def _scalar(which: str) -> Callable[[dict, ContractionView], bool]:
    def check(p: dict, v: ContractionView) -> bool:
        want = str(p["value"])
        have = v.alpha_restriction if which == "alpha" else v.beta_restriction
        return have == want or want == "Any"
    return check


PROBLEM: dict[str, Callable[[dict, ContractionView], bool]] = {
    "Free0SizeMultiple": lambda p, v: _free0(p, v) % p["value"] == 0,
    "Free1SizeMultiple": lambda p, v: _free1(p, v) % p["value"] == 0,
    "BatchSizeMultiple": lambda p, v: v.batch_size(p["index"]) % p["value"] == 0,
    "BatchSizeEqual": lambda p, v: v.batch_size(p["index"]) == p["value"],
    "BoundSizeMultiple": _bound_multiple,
    "ProblemSizeEqual": lambda p, v: v.problem_sizes[p["index"]] == p["value"],
    "MaxProblemSizeGreaterThan": lambda p, v: v.max_problem_size > p["value"],
    "LeadingFree0SizesGreaterOrEqual": _leading("A"),
    "LeadingFree1SizesGreaterOrEqual": _leading("B"),
    "SizeEqual": lambda p, v: v.size(p["index"]) == p["value"],
    "SizeGreaterThan": lambda p, v: v.size(p["index"]) > p["value"],
    "SizeLessThan": lambda p, v: v.size(p["index"]) < p["value"],
    "SizeMultiple": lambda p, v: v.size(p["index"]) % p["value"] == 0,
    "SizeInRange": _in_range,
    "StrideAEqual": _stride("A"), "StrideBEqual": _stride("B"),
    "StrideCEqual": _stride("C"), "StrideDEqual": _stride("D"),
    "LDCEqualsLDD": lambda p, v: v.strides["C"][1] == v.strides["D"][1],
    "CEqualsD": lambda p, v: v.c_equals_d,
    "BetaZero": lambda p, v: v.beta is not None and v.beta == 0.0,
    "BetaOne": lambda p, v: v.beta is not None and v.beta == 1.0,
    "HighPrecisionAccumulate": lambda p, v: v.high_precision_accumulate == p["value"],
    "KernelLanguageCompatible": lambda p, v: v.kernel_language in (p["value"], "Any"),
    "DeterministicMode": lambda p, v: v.deterministic_mode == p["value"],
    "ArithmeticUnitCompatible": lambda p, v: v.arithmetic_unit in (p["value"], "Any"),
    "AIGreaterThanEqual": lambda p, v: v.arithmetic_intensity() >= p["value"],
    "AILessThanEqual": lambda p, v: v.arithmetic_intensity() <= p["value"],
    "AlphaValue": _scalar("alpha"),
    "BetaValue": _scalar("beta"),
    "TypesEqual": lambda p, v: [t.enum for t in v.types] == list(p["value"]),
    "OperationIdentifierEqual": lambda p, v: v.operation_identifier == p["value"],
    "BufferLoadOffsetLimitCheck": _buffer_load,
    "BufferStoreOffsetLimitCheck": lambda p, v: v.strides["D"][1] * v.types[3].bytes * p["value"] < _TWO_POW_32,
    # the problem's persistent-kernel eligibility needs the hardware's CU count; Tensile's default is eligible
    "PersistentKernelCheck": lambda p, v: True,
    "GlobalSplitUCheckMinK": lambda p, v: v.bound_size(0) >= (p["value"][0] * p["value"][1]
                                                               if isinstance(p["value"], list) else p["value"]),
    "CDStridesEqual": lambda p, v: v.strides["C"] == v.strides["D"],
    "StridedBatched": lambda p, v: v.strided_batched == p["value"],
    "CUEfficiency": _cu_efficiency,
    "ExperimentalGrid": lambda p, v: v.performance_metric == "ExperimentalGrid",
    "ExperimentalDTree": lambda p, v: v.performance_metric == "ExperimentalDTree",
    "Fp16AltImpl": lambda p, v: v.fp16_alt_impl,
    "Fp16AltImplRound": lambda p, v: v.fp16_alt_impl_round,
    "StochasticRounding": lambda p, v: v.stochastic_rounding == p["value"],
    "F32XdlMathOp": lambda p, v: v.f32_xdl_math_op == p["value"],
    "EqualityMatching": lambda p, v: True,
}

def _workspace(p: dict, v: ContractionView, solution: dict) -> bool:
    """TaskPredicates.hpp WorkspaceCheck: the solution's requiredWorkspaceSize fits the problem's workspace
    (no workspace given: any size fits). Stream-K's partial-tile workspace needs the grid, which needs the
    hardware's CU count: such a solution is refused rather than guessed."""
    if v.workspace_size is None:
        return True
    sm = solution.get("sizeMapping", {})
    if sm.get("streamK", 0) > 0 and sm.get("streamKAtomic", 0) == 0:
        raise UserError(f"solution {solution.get('name')}: its Stream-K workspace size depends on the grid; "
                        f"select it without a workspace size")
    elements = 1
    for s in v.sizes_by_tensor["D"]:
        elements *= s
    return elements * sm.get("workspaceSizePerElemC", 0) <= v.workspace_size


TASK: dict[str, Callable[[dict, ContractionView, dict], bool]] = {"WorkspaceCheck": _workspace}


def _logic(pred: Any, leaf: Callable[[dict], bool], where: str) -> bool:
    if not isinstance(pred, dict) or "type" not in pred:
        raise UserError(f"{where}: a predicate must be a mapping with a 'type', not {pred!r}")
    t = pred["type"]
    if t == "TruePred":
        return True
    if t == "FalsePred":
        return False
    if t == "And":
        return all(_logic(p, leaf, where) for p in pred["value"])
    if t == "Or":
        return any(_logic(p, leaf, where) for p in pred["value"])
    if t == "Not":
        return not _logic(pred["value"], leaf, where)
    return leaf(pred)


def problem_holds(pred: Any, view: ContractionView, where: str = "library") -> bool:
    def leaf(p: dict) -> bool:
        fn = PROBLEM.get(p["type"])
        if fn is None:
            raise UserError(f"{where}: problem predicate type {p['type']!r} is not one Tensile 4.44 defines")
        return fn(p, view)
    return _logic(pred, leaf, where)


def task_holds(pred: Any, view: ContractionView, solution: dict, where: str = "library") -> bool:
    def leaf(p: dict) -> bool:
        fn = TASK.get(p["type"])
        if fn is None:
            raise UserError(f"{where}: task predicate type {p['type']!r} is not one Tensile 4.44 defines")
        return fn(p, view, solution)
    return _logic(pred, leaf, where)


def hardware_holds(pred: Any, hw: Hardware, where: str = "library") -> bool:
    def leaf(p: dict) -> bool:
        t = p["type"]
        if t == "AMDGPU":
            return hardware_holds(p["value"], hw, where)
        if t == "Processor":
            return processor_name(str(p["value"])) == hw.processor
        if t == "CUCount":
            return hw.cu_count == p["value"]
        if t == "IsAPU":
            return hw.is_apu == p["value"]
        if t == "TargetProcessor":
            other, mine = _PROCESSOR_VALUE.get(str(p["value"])), _PROCESSOR_VALUE.get(hw.processor)
            if other is None or mine is None or other > mine:
                return False
            return other == mine or other == 900
        raise UserError(f"{where}: hardware predicate type {t!r} is not one Tensile 4.44 defines")
    return _logic(pred, leaf, where)
