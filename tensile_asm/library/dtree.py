"""DecisionTree libraries: features and forests as Tensile 4.44's host library evaluates them.

From Source/lib/include/Tensile/{MLFeatures.hpp, DecisionTree.hpp, DecisionTreeLibrary.hpp} and
source/MLFeatures.cpp. The key is a vector of 32-bit floats, one per feature; each tree walks from node 0
(``key[featureIdx] <= threshold`` goes to ``nextIdxLTE``, else ``nextIdxGT``; -1 means false, -2 true).
The trees are tried in order: the first whose solution applies to the problem and whose walk ends in
true gives the solution; else the library's ``nullValue`` (the logic file's fallback) is returned.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tensile_asm.errors import UserError
from tensile_asm.library.problem_view import ContractionView

FEATURES = ("FreeSizeA", "FreeSizeB", "BatchSize", "BoundSize", "Tile0Granularity", "Tile1Granularity",
            "CUGranularity", "WavesPerSIMD", "ProblemScaleMeasure")
IDX_RETURN_FALSE, IDX_RETURN_TRUE = -1, -2
f32 = np.float32


def _granularity(x: np.float32) -> np.float32:
    """ContractionSolution::computeGranularity: x / ceil(x), in float."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return f32(x / np.ceil(x))


def _tiles_per_cu(v: ContractionView, scale: dict[str, Any]) -> np.float32:
    tiles_m = f32(f32(v.free_size_a(0)) * f32(scale["mt0"]))
    tiles_n = f32(f32(v.free_size_b(0)) * f32(scale["mt1"]))
    total = f32(f32(1) * np.ceil(tiles_m) * np.ceil(tiles_n))
    return f32(total * f32(scale["cus"]))


def feature_value(feature: dict[str, Any], v: ContractionView) -> np.float32:
    t = feature.get("type")
    if t == "FreeSizeA":
        return f32(v.free_size_a(feature["index"]))
    if t == "FreeSizeB":
        return f32(v.free_size_b(feature["index"]))
    if t == "BatchSize":
        return f32(v.batch_size(feature["index"]))
    if t == "BoundSize":
        return f32(v.bound_size(feature["index"]))
    if t == "Tile0Granularity":
        return _granularity(f32(f32(v.free_size_a(0)) * f32(feature["value"])))
    if t == "Tile1Granularity":
        return _granularity(f32(f32(v.free_size_b(0)) * f32(feature["value"])))
    if t == "CUGranularity":
        return _granularity(_tiles_per_cu(v, feature["value"]))
    if t == "WavesPerSIMD":
        return f32(np.ceil(_tiles_per_cu(v, feature["value"])) * f32(feature["value"]["ws"]))
    if t == "ProblemScaleMeasure":
        # Tensile multiplies freeSizeB(0) by itself (not by freeSizeA(0)); kept as it is
        return f32(v.free_size_b(0) * v.free_size_b(0) * v.batch_size(0))
    raise UserError(f"DecisionTree feature type {t!r} is not one Tensile 4.44 knows; use one of {', '.join(FEATURES)}")


def predict(tree: Sequence[dict[str, Any]], key: Sequence[np.float32], where: str) -> bool:
    """DecisionTree::Tree::predict."""
    idx = 0
    while 0 <= idx < len(tree):
        node = tree[idx]
        lte = key[node["featureIdx"]] <= f32(node["threshold"])
        idx = node["nextIdxLTE"] if lte else node["nextIdxGT"]
        if idx == IDX_RETURN_FALSE:
            return False
        if idx == IDX_RETURN_TRUE:
            return True
    raise UserError(f"{where}: a decision tree walked to node {idx}, outside its {len(tree)} nodes "
                    f"(Tensile throws 'Decision Tree out of bounds error'); fix the tree")


def best_solution(node: dict[str, Any], v: ContractionView, transform: Callable[[dict[str, Any]], Any],
                  where: str) -> Any:
    """BasicForest::findBestMatch over a ``DecisionTree`` library node."""
    key = [feature_value(f, v) for f in node["features"]]
    for tree in node["trees"]:
        found = transform(tree["value"])
        if found is not None and predict(tree["tree"], key, where):
            return found
    return transform(node["nullValue"])
