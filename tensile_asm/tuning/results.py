"""Benchmark results of one step: one JSON line per (solution, size), appended as each finishes (so a killed
run resumes where it stopped, and shards of one step write their own files that a later run reads together),
and the benchmark CSV in the column layout of Tensile's client (ResultFileReporter): GFlops (the problem index),
SizeI, SizeJ, ..., LDD, LDC, LDA, LDB, TotalFlops, then one GFLOPS column per solution (-1: not valid). Two
columns of ours, Backend and Provenance, sit before the solution columns (Tensile's LibraryLogic counts the
solution columns from the end of the row, so it reads the file unchanged)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path

RESULTS_GLOB = "results*.jsonl"


@dataclass
class Result:
    solution: str
    sizes: list[int]                # Tensile's size tuple
    gflops: float                   # -1 when not valid
    us: float | None
    backend: str
    provenance: str                 # measured | emulated | modelled
    valid: bool
    detail: str = ""
    kernel: str = ""                # the kernel's cache key (every parameter, the writer's version)
    runtime: str = ""               # backend and its options (device): results of another are not reused

    def key(self) -> tuple:
        return (self.kernel, tuple(self.sizes))


def results_file(step_dir: Path, shard: tuple[int, int] | None) -> Path:
    return step_dir / (f"results.shard-{shard[0]}-of-{shard[1]}.jsonl" if shard else "results.jsonl")


def load_results(step_dir: Path, runtime: str) -> dict[tuple, Result]:
    """Every result ``runtime`` recorded in the step folder (all shards'), by (kernel key, sizes); a line cut
    short by a kill is skipped."""
    out: dict[tuple, Result] = {}
    for path in sorted(step_dir.glob(RESULTS_GLOB)):
        for line in path.read_text().splitlines():
            try:
                r = Result(**json.loads(line))
            except (ValueError, TypeError):
                continue
            if r.runtime == runtime:
                out[r.key()] = r
    return out


class ResultWriter:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.f = open(path, "a")

    def add(self, r: Result) -> None:
        self.f.write(json.dumps(asdict(r)) + "\n")
        self.f.flush()

    def close(self) -> None:
        self.f.close()


def benchmark_csv(problem_type, sizes, cands, results: dict[tuple, Result], metric: str, backend: str) -> str:
    """Tensile's client CSV (one row per size, one column per solution)."""
    n = problem_type.total_indices
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    unit = "GFlopsPerCU" if metric == "CUEfficiency" else "GFlops"
    w.writerow([unit] + [f"Size{chr(ord('I') + i)}" for i in range(n)] + ["LDD", "LDC", "LDA", "LDB", "TotalFlops",
                                                                         "Backend", "Provenance"] + [c.name for c in cands])
    for p, s in enumerate(sizes):
        row = [p, *s.sizes, s.flops]
        provs = sorted({results[(c.key, s.sizes)].provenance for c in cands if (c.key, s.sizes) in results})
        row += [backend, "+".join(provs) or "-"]
        for c in cands:
            r = results.get((c.key, s.sizes))
            row.append(f"{r.gflops:.6g}" if r is not None and r.valid else "-1")
        w.writerow(row)
    return buf.getvalue()
