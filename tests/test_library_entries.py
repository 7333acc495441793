"""Master-library solution entries in the form Tensile's host library deserializes (found with
tools/tensile_host: the forms below made LoadLibraryFile refuse the whole file)."""

from tensile_asm.gemm import GemmKernelContract
from tensile_asm.library.master import type_predicates
from tensile_asm.library.problem_view import ContractionView
from tensile_asm.problem import Problem, ProblemType


def _pt(dt, dest="s"):
    return ProblemType.from_dict({"DataType": dt, "DestDataType": dest, "ComputeDataType": "s",
                                  "HighPrecisionAccumulate": True, "TransposeA": False, "TransposeB": True,
                                  "Batched": True})


def test_hybrid_8bit_inputs_are_written_as_their_a_and_b_types():
    # Tensile's C++ DataType has Float8 and BFloat8 only; Contractions.py splits F8B8/B8F8 into A and B
    for dt, a, b in (("F8B8", "Float8", "BFloat8"), ("B8F8", "BFloat8", "Float8"), ("F8", "Float8", "Float8")):
        pt = _pt(dt)
        entry = pt.library_dict()
        assert (entry["aType"], entry["bType"], entry["cType"], entry["dType"]) == (a, b, "Float", "Float")
        assert type_predicates(pt)[0] == {"type": "TypesEqual", "value": [a, b, "Float", "Float"]}
        view = ContractionView.from_problem(Problem.make(pt, 17, 5, 3, 2))
        assert [t.enum for t in view.types] == [a, b, "Float", "Float"]


def test_contract_reads_a_split_hybrid_type_back():
    pt = _pt("B8F8")
    entry = {"name": "K", "problemType": pt.library_dict(),
             "sizeMapping": {"workGroup": [16, 16, 1], "macroTile": [64, 64, 1], "globalSplitU": 1,
                             "globalAccumulation": 0, "workGroupMapping": 1, "depthU": 16}}
    assert GemmKernelContract.from_library_entry(entry).data_type == "B8F8"


def test_global_accumulation_is_written_as_tensiles_size_mapping_reads_it():
    # SizeMapping.FromOriginalState: SingleBuffer 1, MultipleBuffer 2, PartialsBuffer 3, anything else 0;
    # some aldebaran logic stores `_GlobalAccumulation: true` (it crashed solution_entry with KeyError: True)
    from pathlib import Path

    from tensile_asm.library.logic import read_logic_file
    from tensile_asm.library.master import solution_entry

    example = Path(__file__).resolve().parents[1] / "logic" / "aldebaran_Cijk_Ailk_Bljk_SB.yaml"
    sol = next(e.solution for e in read_logic_file(example).entries if e.solution is not None)
    for stored, written in ((None, 0), (True, 0), ("SingleBuffer", 1), ("MultipleBuffer", 2),
                            ("PartialsBuffer", 3)):
        sol.derived_keys = {**sol.derived_keys, "_GlobalAccumulation": stored}
        entry = solution_entry(sol, "K", 0, 0)
        assert entry["sizeMapping"]["globalAccumulation"] == written
        types = [p["type"] for p in entry["problemPredicate"]["value"]]
        assert ("GlobalSplitUCheckMinK" in types) == (stored is not None)
