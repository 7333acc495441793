"""tools/logic_build_verify.py's verification sizes follow benchmark.sample's one sampling rule."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tensile_asm.benchmark.sample import next_prime, round_up, size_constraints
from tensile_asm.problem import GemmSize

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("logic_build_verify", REPO / "tools" / "logic_build_verify.py")
lbv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lbv)


def _entry(preds=(), mt=(128, 64), du=16, op="Contraction_l_Ailk_Bljk_Cijk_Dijk"):
    return {"problemPredicate": {"type": "And", "value": list(preds)},
            "problemType": {"operationIdentifier": op},
            "sizeMapping": {"macroTile": [*mt, 1], "depthU": du}}


def test_sizes_are_primes_past_the_tile_rounded_by_the_predicates():
    # no predicates: 1x1x1; primes past MT0, MT1/2 and 2 DepthU (a prime also past the small primes' table), batch 2
    assert lbv.sizes_for(_entry()) == (GemmSize(1, 1, 1, 1), GemmSize(131, 37, 37, 2))
    small, edge = lbv.sizes_for(_entry(mt=(256, 256), du=256))
    assert edge == GemmSize(257, 131, 521, 2) and edge.k == next_prime(512)
    # predicates the sampling rule reads: multiples, GlobalSplitU's minimum K, a fixed batch, a maximum M
    preds = [{"type": "Free0SizeMultiple", "index": 0, "value": 32}, {"type": "BoundSizeMultiple", "index": -1, "value": 8},
             {"type": "GlobalSplitUCheckMinK", "index": -1, "value": [16, 3]},
             {"type": "SizeEqual", "index": 2, "value": 1}, {"type": "SizeLessThan", "index": 0, "value": 100}]
    small, edge = lbv.sizes_for(_entry(preds))
    c = size_constraints(_entry(preds)["problemPredicate"])
    assert small == GemmSize(32, 1, 48, 1) and edge == GemmSize(96, 37, 48, 1)
    assert round_up(small, c) == small and round_up(edge, c) == edge
    # not batched (Contraction without a batch index): K is index 2, batch 1
    _, edge = lbv.sizes_for(_entry([{"type": "SizeMultiple", "index": 2, "value": 4}], op="Contraction_l_Ai_Bj_Cij"))
    assert edge == GemmSize(131, 37, 40, 1)
