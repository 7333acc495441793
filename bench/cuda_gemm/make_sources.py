"""Render the fork space of bench/cuda_gemm (HIP source kernels, rendered for CUDA) into sources/ and
manifest.json, here, with the package; the GPU machine then needs only numpy and CuPy (and torch for cuBLAS).

    PYTHONPATH=. python bench/cuda_gemm/make_sources.py

The fork space: SGEMM NN (Cijk_Ailk_Bljk_SB), WorkGroup x ThreadTile x DepthU x PrefetchGlobalRead x
VectorWidth (the widest up to 4 the thread tile takes) x GlobalSplitU (1; 4 and 16 MultipleBuffer; 4 SingleBuffer:
each GlobalSplitU kernel's helper follows it in its .cu text, source/helpers.py), every fork the solution rules
accept and the source writer writes.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import shutil
from pathlib import Path

from tensile_asm.gemm import GemmKernelContract
from tensile_asm.solution.naming import min_names
from tensile_asm.solution.solution import Solution
from tensile_asm.source.writer import supports, write_source

HERE = Path(__file__).resolve().parent
PROBLEM = {"OperationType": "GEMM", "DataType": "s", "TransposeA": False, "TransposeB": False, "Batched": True,
           "UseBeta": True}
FORKS = {
    "WorkGroup": [[16, 16, 1], [8, 8, 1], [8, 8, 2]],
    "ThreadTile": [[4, 4], [8, 8], [4, 8], [8, 4]],
    "DepthU": [8, 16],
    "PrefetchGlobalRead": [0, 1],
}
# (GlobalSplitU, GlobalSplitUAlgorithm): split-K, Tensile's fork for large K and few tiles
SPLITS = [(1, "SingleBuffer"), (4, "MultipleBuffer"), (16, "MultipleBuffer"), (4, "SingleBuffer")]


def forks():
    keys = list(FORKS)
    for values in itertools.product(*(FORKS[k] for k in keys)):
        params = dict(zip(keys, values))
        tt = params["ThreadTile"]
        vw = min(4, tt[0], tt[1])
        for gsu, algorithm in SPLITS:
            yield {"ProblemType": PROBLEM, "KernelLanguage": "Source", "VectorWidth": vw, "GlobalSplitU": gsu,
                   "GlobalSplitUAlgorithm": algorithm, "WorkGroupMapping": 8, "StaggerU": 0, **params}


def main() -> None:
    solutions = []
    for params in forks():
        sol = Solution.from_dict(params, where="fork")
        if sol.valid and supports(sol) is None and sol.derived.mt0 * sol.derived.mt1 <= 128 * 128:
            solutions.append(sol)
    names = min_names(solutions)
    out = HERE / "sources"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    manifest = []
    for sol, name in zip(solutions, names):
        (out / f"{name}.cu").write_text(write_source(sol, name, language="cuda", helper=True))
        d = sol.derived
        manifest.append({"name": name, "source": f"sources/{name}.cu",
                         "contract": dataclasses.asdict(GemmKernelContract.from_solution(sol, name)),
                         "params": {"WorkGroup": sol.params["WorkGroup"], "ThreadTile": sol.params["ThreadTile"],
                                    "DepthU": d.depth_u, "PrefetchGlobalRead": d.prefetch_global_read,
                                    "VectorWidth": d.vector_width, "MacroTile": [d.mt0, d.mt1],
                                    "GlobalSplitU": d.global_split_u,
                                    "GlobalSplitUAlgorithm": sol.params.get("GlobalSplitUAlgorithm")}})
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(manifest)} kernels rendered into {out}")


if __name__ == "__main__":
    main()
