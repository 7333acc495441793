"""The writer's geometry of a GEMM solution given by its Tensile parameters, the way a logic file's solution
becomes a kernel: parameters -> Solution (derivation) -> ``writer.build.geometry``."""

from __future__ import annotations

from tensile_asm.solution.solution import Solution
from tensile_asm.writer.build import geometry
from tensile_asm.writer.context import Geometry

# A plain kernel unless a test asks for more: no prefetch, no stagger, no work-group remapping, scalar loads.
PLAIN = dict(VectorWidth=1, GlobalReadVectorWidth=1, PrefetchGlobalRead=0, PrefetchLocalRead=0, StaggerU=0,
             WorkGroupMapping=1)


def gemm_solution(wg, tt, depth_u: int, trans=(False, False), data_type: str = "s", batched: bool = True,
                  use_beta: bool = True, **params) -> Solution:
    """A valid solution: WorkGroup ``wg`` (2 entries, or 3 with LocalSplitU), ThreadTile ``tt``, DepthU, the
    problem type's transposes, and any other Tensile parameters over ``PLAIN``."""
    problem = {"OperationType": "GEMM", "DataType": data_type, "TransposeA": trans[0], "TransposeB": trans[1],
               "Batched": batched, "UseBeta": use_beta}
    wg = list(wg) + [1] * (3 - len(wg))
    sol = Solution.from_dict({"ProblemType": problem, **PLAIN, "WorkGroup": wg, "ThreadTile": list(tt),
                              "DepthU": depth_u, **params}, where="test solution")
    return sol.validate()


def gemm_geometry(wg, tt, depth_u: int, trans=(False, False), **kw) -> Geometry:
    return geometry(gemm_solution(wg, tt, depth_u, trans, **kw))
