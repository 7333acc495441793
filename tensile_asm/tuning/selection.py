"""Which solution a size the benchmark did not run gets (``tune --selection``):

- ``nearest`` (Tensile's): the logic file keeps the benchmarked sizes only; a library built from it gives an
  unseen size the solution of the exact row nearest by the logic file's distance (Euclidean unless the file
  names another), searched as Tensile 4.44's host library searches its ``Matching`` table -- the table is the
  one create-library builds (``library.master``) and the search is ``library.matching``'s, not a copy. For
  ``--selection-size`` sizes the choice is reported (``<logic file stem>.selection.csv``), the logic file is
  unchanged.
- ``model``: for each ``--selection-size`` size the analytical model ranks the logic file's solutions (the
  winners of the benchmarked sizes; ties to the simpler, as the winners) and the fastest is added to the logic
  file as an exact row whose GFLOPS is the model's (labelled ``modelled`` in the .selection.csv); a size that was
  benchmarked keeps its benchmarked row. Other unseen sizes still go to the nearest row, now over both kinds.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from tensile_asm.errors import UserError

SELECTIONS = ("nearest", "model")

# Matching properties -> the GEMM size they read (Tensile's FreeSizeA/FreeSizeB/BoundSize/BatchSize, index 0)
_PROPERTY = {"FreeSizeA": "m", "FreeSizeB": "n", "BoundSize": "k", "BatchSize": "batch"}


@dataclass
class Choice:
    size: object                 # tuning.sizes.TuningSize
    method: str                  # nearest | model
    solution_index: int          # in the logic file
    solution_name: str
    gflops: float | None         # the model's, for method model
    provenance: str              # "modelled" for model; for nearest, "nearest row <sizes>"


def tuning_size(pt, mnkb: Sequence[int], where: str):
    """An M,N,K[,B] size as the problem type's Tensile size tuple (smallest leading dimensions)."""
    from tensile_asm.tuning.sizes import read_problem_sizes

    m, n, k, *rest = mnkb
    batch = rest[0] if rest else 1
    if pt.total_indices == 4:
        exact = [m, n, batch, k]
    elif pt.total_indices == 3 and batch == 1:
        exact = [m, n, k]
    else:
        raise UserError(f"{where} {','.join(map(str, mnkb))}: problem type {pt.name} "
                        f"{'is not batched; give M,N,K' if pt.total_indices == 3 else 'is not a GEMM this selects for'}")
    [size], _ = read_problem_sizes(pt, [{"Exact": exact}], where)
    return size


def _table(logic_path: Path):
    from tensile_asm.library import master, matching
    from tensile_asm.library.logic import read_logic_file

    lf = read_logic_file(logic_path)
    node = master._matching(lf, {i: i for i in range(len(lf.entries))})["rows"][0]["library"]
    return lf, node, matching.sort_table(node["table"])


def nearest(logic_path: Path, size) -> tuple[int, list[int]] | None:
    """(solution index, key of the row chosen) that the library built from ``logic_path`` selects for ``size``
    by the file's Matching distance; None if no row applies (an Equality table without that size)."""
    from tensile_asm.library import matching

    _, node, table = _table(logic_path)
    key = [getattr(size, _PROPERTY[p["type"]]) for p in node["properties"]]
    entry = matching.best_match(table, key, node["distance"], lambda e: e)
    return None if entry is None else (entry["index"], list(entry["key"]))


def model_rank(winners, size, device: str | None):
    """(winner whose solution the model finds fastest at ``size``, its modelled GFLOPS); each distinct solution
    once, ties (within winners.TIE) to the simpler."""
    from tensile_asm.gemm import GemmKernelContract
    from tensile_asm.runtime.base import GemmSize
    from tensile_asm.runtime.model import ModelRuntime
    from tensile_asm.tuning.winners import TIE, simplicity

    rt = ModelRuntime(device=device)
    seen, scored = set(), []
    for w in winners:
        c = w.candidate
        if c.name in seen:
            continue
        seen.add(c.name)
        contract = GemmKernelContract.from_solution(c.solution, c.name)
        t = rt.time_gemm(c.code_object, contract, GemmSize(size.m, size.n, size.k, size.batch))
        scored.append((t.gflops, w))
    best = max(g for g, _ in scored)
    g, w = min(((g, w) for g, w in scored if g >= best * (1 - TIE)),
               key=lambda gw: (simplicity(gw[1].candidate.solution), gw[1].candidate.fork))
    return w, g


def model_rows(winners, sizes, device: str | None) -> list:
    """Winner rows the model adds for ``sizes`` not already among the winners' sizes."""
    from tensile_asm.tuning.winners import Winner

    have = {tuple(w.sizes) for w in winners}
    rows = []
    for s in sizes:
        if tuple(s.sizes) in have:
            continue
        have.add(tuple(s.sizes))
        w, g = model_rank(winners, s, device)
        rows.append(Winner(s.sizes, w.candidate, g, "modelled"))
    return rows


def choices(logic_path: Path, method: str, sizes, measured: set) -> list[Choice]:
    """What the written logic file gives each of ``sizes`` (``measured``: the benchmarked size tuples)."""
    from tensile_asm.library.logic import read_logic_file

    lf = read_logic_file(logic_path)
    rows = {tuple(r.sizes): r for r in lf.exact_logic}
    out = []
    for s in sizes:
        row = rows.get(tuple(s.sizes))
        if row is not None and tuple(s.sizes) in measured:
            out.append(Choice(s, "benchmarked", row.solution_index, _name(lf, row.solution_index), row.perf,
                              "a benchmarked size"))
        elif row is not None and method == "model":
            out.append(Choice(s, "model", row.solution_index, _name(lf, row.solution_index), row.perf, "modelled"))
        else:
            found = nearest(logic_path, s)
            if found is None:
                out.append(Choice(s, "nearest", -1, "", None, "no row applies"))
            else:
                idx, key = found
                out.append(Choice(s, "nearest", idx, _name(lf, idx), None, f"nearest row {key}"))
    return out


def _name(lf, index: int) -> str:
    return lf.entries[index].stored_name or ""


def selection_csv(rows: list[Choice]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["M", "N", "K", "Batch", "Method", "SolutionIndex", "SolutionNameMin", "GFlops", "Provenance"])
    for c in rows:
        w.writerow([c.size.m, c.size.n, c.size.k, c.size.batch, c.method, c.solution_index, c.solution_name,
                    "" if c.gflops is None else f"{c.gflops:.6g}", c.provenance])
    return buf.getvalue()


def selection_path(logic_path: Path) -> Path:
    """Beside the logic file, not a .yaml (create-library reads every .yaml there)."""
    return Path(logic_path).with_suffix(".selection.csv")
