"""Verifying real logic on the emulator: the one size rule, and build-link-verify of a cut of logic files.

The size rule (``edge_cases``) reads what a library solution entry asks of a problem -- its size predicates
(``size_constraints``: Free0/Free1SizeMultiple, BoundSizeMultiple, LeadingFree0/1SizesGreaterOrEqual,
GlobalSplitUCheckMinK, SizeEqual/GreaterThan/LessThan/Multiple, AlphaValue/BetaValue) and its size mapping (macro
tile, DepthU, WorkGroupMapping, StaggerU) -- and gives three runs, each size rounded up to what the predicates
admit (``round_up``, the rounding ``benchmark.verify.admitted_size`` applies to a solution's parameters):

1. the smallest problem admitted (1 x 1 x 1 unless the predicates ask more), batch 1, beta 0 (C is NaN: a
   kernel that reads it fails);
2. the edge: M the first prime past the macro tile's M (a full tile and a partial one), N the first prime past
   MT1 (two rows of tiles, the second partial; with ``mapping``, past |WorkGroupMapping| + 1 rows and not a
   multiple of it: full WorkGroupMapping blocks and a remainder block), K the first prime past 2 x DepthU (with
   ``stagger``, past the StaggerU wrap: 2 x DepthU x 2^StaggerStrideShift x GlobalSplitU), batch 2 where the
   problem is batched, beta 0.5 (0 without beta);
3. 13 x 11 x (first prime past DepthU), batch 2 where batched, beta 0: a tile's corner with C never read.

Alpha is -1.25 (integer kernels: alpha -3, beta 5; an asserted AlphaValue/BetaValue is used instead).

``build_cut`` cuts logic files down to chosen solutions (``cut_logic``: Tensile's format, solutions renumbered)
and builds them with create-library; ``verify_solutions`` runs built solutions of a library folder at the rule's
sizes (``verify.verify_library``: the code object and helper as Tensile's launcher finds them, predicates
checked, strict emulator, D poisoned, NaN guards past A and B), with first strides other than 1 for solutions
that take them (``initial_strides``).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from tensile_asm.problem import GemmSize

ALPHA = -1.25
FREE_FIRST_STRIDE = {"A": 3, "B": 3, "C": 3, "D": 2}   # first strides where a solution asserts none


def next_prime(n: int) -> int:
    """The first prime greater than ``n``."""
    n += 1
    while n < 2 or any(n % d == 0 for d in range(2, int(n ** 0.5) + 1)):
        n += 1
    return n


@dataclass
class Constraints:
    """What a solution's predicates ask of M, N, K and the batch: multiples, minimums, maximums (exclusive),
    fixed values; alpha and beta when asserted."""

    multiple: dict[str, int] = field(default_factory=lambda: {"m": 1, "n": 1, "k": 1, "batch": 1})
    minimum: dict[str, int] = field(default_factory=lambda: {"m": 1, "n": 1, "k": 1, "batch": 1})
    below: dict[str, int] = field(default_factory=dict)
    equal: dict[str, int] = field(default_factory=dict)
    alpha: float | None = None
    beta: float | None = None


_GEMM_INDEX = {0: "m", 1: "n", 2: "batch", 3: "k"}     # Cijk: i, j free, k batch, l summation


def size_constraints(predicate: Any, batched: bool = True) -> Constraints:
    """The constraints of a problem-predicate tree (a library entry's ``problemPredicate``). Size predicates name
    a problem index: 0, 1 free (M, N), then the batch (when ``batched``) and the summation (K)."""
    c = Constraints()
    index = dict(_GEMM_INDEX) if batched else {0: "m", 1: "n", 2: "k"}

    def more(table: dict, key: str, value: int) -> None:
        table[key] = max(table.get(key, 1), int(value))

    def walk(p: Any) -> None:
        if isinstance(p, dict):
            t, v, i = p.get("type"), p.get("value"), p.get("index")
            if t == "Free0SizeMultiple":
                more(c.multiple, "m", v)
            elif t == "Free1SizeMultiple":
                more(c.multiple, "n", v)
            elif t == "BoundSizeMultiple":
                more(c.multiple, "k", v)
            elif t == "SizeMultiple" and i in index:
                more(c.multiple, index[i], v)
            elif t == "LeadingFree0SizesGreaterOrEqual":
                more(c.minimum, "m", v)
            elif t == "LeadingFree1SizesGreaterOrEqual":
                more(c.minimum, "n", v)
            elif t == "GlobalSplitUCheckMinK":
                more(c.minimum, "k", v[0] * v[1] if isinstance(v, list) else v)
            elif t == "SizeGreaterThan" and i in index:
                more(c.minimum, index[i], int(v) + 1)
            elif t == "SizeLessThan" and i in index:
                c.below[index[i]] = min(c.below.get(index[i], int(v)), int(v))
            elif t == "SizeEqual" and i in index:
                c.equal[index[i]] = int(v)
            elif t == "AlphaValue":
                c.alpha = float(v)
            elif t == "BetaValue":
                c.beta = float(v)
            for x in p.values():
                walk(x)
        elif isinstance(p, list):
            for x in p:
                walk(x)
    walk(predicate)
    return c


def round_up(size: GemmSize, c: Constraints) -> GemmSize:
    """``size`` moved to the nearest size at or above it that ``c`` admits: at least the minimum, rounded up to
    the multiple, a fixed value as it is; below a maximum where one is asserted (then the largest multiple
    under it)."""
    out = {}
    for key in ("m", "n", "k", "batch"):
        if key in c.equal:
            out[key] = c.equal[key]
            continue
        q = c.multiple.get(key, 1)
        v = -(-max(getattr(size, key), c.minimum.get(key, 1)) // q) * q
        if key in c.below and v >= c.below[key]:
            v = max(q, (c.below[key] - 1) // q * q)
        out[key] = v
    return GemmSize(out["m"], out["n"], out["k"], out["batch"])


@dataclass(frozen=True)
class Case:
    size: GemmSize
    alpha: float
    beta: float

    def __str__(self) -> str:
        return f"{self.size} beta {self.beta:g}"


def _batched(entry: dict) -> bool:
    return "Cijk" in entry.get("problemType", {}).get("operationIdentifier", "Cijk")


def _integer(entry: dict) -> bool:
    return entry.get("problemType", {}).get("aType") in ("Int8x4", "Int8", "Int32")


def edge_cases(entry: dict, *, mapping: bool = False, stagger: bool = False) -> list[Case]:
    """The rule's three runs for a library solution entry (``tensile_asm.library.master.solution_entry``), see the
    module's docstring."""
    sm = entry.get("sizeMapping", {})
    mt0, mt1 = sm.get("macroTile", [16, 16])[:2]
    du = sm.get("depthU", 8)
    batched = _batched(entry)
    c = size_constraints(entry.get("problemPredicate", {}), batched)
    batch = 2 if batched else 1
    rows = 2
    wgm = abs(sm.get("workGroupMapping", 1))
    if mapping and wgm > 1:
        rows = wgm + 2 if (wgm + 2) % wgm else wgm + 3     # full WorkGroupMapping blocks and a remainder block
    k = 2 * du
    if stagger and sm.get("staggerU", 0) > 1:
        k = 2 * du * (1 << sm.get("staggerStrideShift", 0)) * max(1, sm.get("globalSplitU", 1))
    use_beta = entry.get("problemType", {}).get("useBeta", True)
    alpha, beta = (-3.0, 5.0) if _integer(entry) else (ALPHA, 0.5)
    alpha = c.alpha if c.alpha is not None else alpha
    beta = beta if use_beta else 0.0
    beta0 = 0.0
    if c.beta is not None:
        beta = beta0 = c.beta
    return [Case(round_up(GemmSize(1, 1, 1, 1), c), alpha, beta0),
            Case(round_up(GemmSize(next_prime(mt0), next_prime(mt1 * (rows - 1)), next_prime(k), batch), c),
                 alpha, beta),
            Case(round_up(GemmSize(13, 11, next_prime(du), batch), c), alpha, beta0)]


def initial_strides(entry: dict, size: GemmSize) -> tuple[dict[str, int], dict[str, int]]:
    """(first stride, leading dimension) per tensor whose first stride the solution takes (UseInitialStridesAB:
    A, B; CD: C, D): the values its StrideXEqual predicates assert (e.g. C's first stride 0, a bias broadcast
    along I; C's leading dimension 0; A's leading dimension 1 with its first stride free), else a first stride of
    3 (A, B, C) or 2 (D); a fixed leading dimension other than 0 makes the first index stride past a column."""
    pt = entry.get("problemType", {})
    tensors = ("AB" if pt.get("useInitialStridesAB") else "") + ("CD" if pt.get("useInitialStridesCD") else "")
    first: dict[str, int] = {}
    ld: dict[str, int] = {}
    for t in tensors:
        fixed: dict[int, int] = {}

        def walk(p: Any) -> None:
            if isinstance(p, dict):
                if p.get("type") == f"Stride{t}Equal":
                    fixed[int(p["index"])] = int(p["value"])
                for v in p.values():
                    walk(v)
            elif isinstance(p, list):
                for v in p:
                    walk(v)
        walk(entry.get("problemPredicate", {}))
        if 1 in fixed:
            ld[t] = fixed[1]
        if 0 in fixed:
            first[t] = fixed[0]
        elif t in ld and ld[t] != 0:
            cols = {"A": size.k, "B": size.n, "C": size.n, "D": size.n}[t]
            first[t] = cols * ld[t] + 1
        else:
            first[t] = FREE_FIRST_STRIDE[t]
    return first, ld


# ---- a cut of logic files, built

def cut_logic(data: list, keep: list[int]) -> list:
    """A list-form logic file (``data``, as YAML loads it) with only the solutions whose SolutionIndex is in
    ``keep``, renumbered 0.. in that order; exact-logic rows of other solutions dropped (remapped otherwise).
    Everything else is kept as it is."""
    from tensile_asm.errors import UserError

    if not isinstance(data, list) or len(data) < 8 or not isinstance(data[5], list):
        raise UserError("only list-form logic files (Tensile's LibraryLogic output) can be cut; this one is not")
    sols = {s["SolutionIndex"]: s for s in data[5]}
    missing = [i for i in keep if i not in sols]
    if missing:
        raise UserError(f"no solution with SolutionIndex {missing}; the file has {sorted(sols)}")
    new_index = {old: new for new, old in enumerate(keep)}
    out = list(data)
    out[5] = [dict(sols[old], SolutionIndex=new_index[old]) for old in keep]
    if isinstance(data[7], list):
        out[7] = [[size, [new_index[entry[0]]] + list(entry[1:])] for size, entry in data[7] if entry[0] in new_index]
    return out


def build_cut(picks: dict[Path, list[int]], arch: str, out: Path, jobs: int | None = None,
              cache_dir: Path | None = None):
    """Cut each logic file of ``picks`` to its solutions (positions in the file) into ``out/logic`` and build them
    with create-library into ``out`` (``library/``, ``support.json``). Returns the CreateReport; its entries' ``index``
    is the position in the cut file: ``picks[file][index]`` in the original."""
    import yaml

    from tensile_asm.library.create import create_library
    from tensile_asm.library.fileio import load_yaml

    logic = out / "logic"
    shutil.rmtree(logic, ignore_errors=True)
    logic.mkdir(parents=True)
    for path, keep in picks.items():
        data = load_yaml(path)
        raw = data[5] if isinstance(data, list) and len(data) > 5 and isinstance(data[5], list) else None
        if raw is None:
            (logic / path.name).write_bytes(path.read_bytes())
            continue
        ids = [raw[i].get("SolutionIndex", i) for i in keep]
        (logic / path.name).write_text(yaml.dump(cut_logic(data, ids), Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                                                 default_flow_style=None, width=120))
    return create_library(logic, out, arch, jobs=jobs, cache_dir=cache_dir, progress=False)


@dataclass
class SampleResult:
    name: str
    runs: list = field(default_factory=list)       # (Case, verify.SolutionResult)

    @property
    def state(self) -> str:
        if any((r.not_run or "").startswith("CRASH") for _, r in self.runs):
            return "CRASH"
        ran = [r for _, r in self.runs if not r.not_run and r.results]
        if any(not r.passed for r in ran):
            return "FAIL"
        if not ran:
            return "NOT RUN"
        return "PASS"

    @property
    def passed(self) -> bool:
        return self.state == "PASS"

    def detail(self) -> str:
        out = []
        for case, r in self.runs:
            if r.not_run:
                out.append(f"{case}: {r.not_run}")
            elif r.skipped:
                out.append(f"{case}: its predicates do not accept it")
            else:
                out += [f"{case}: {x.detail}" for x in r.results if not x.passed]
        return "; ".join(out)


def verify_solutions(library: Path, names: Iterable[str] | None = None, *, mapping: bool = False,
                     stagger: bool = False, strides: bool = False, seed: int = 3,
                     log: Callable[[str], None] | None = None, kernarg_preload: bool = True) -> list[SampleResult]:
    """Run solutions of the library folder ``library`` (``names``: only these, in this order; else every one) at
    ``edge_cases``' sizes; ``strides``: with ``initial_strides`` for solutions that take first strides;
    ``kernarg_preload`` False: dispatched as firmware without kernel-argument preloading (gfx940+). A crash of the
    launcher or emulator is a result (CRASH), not the end of the run."""
    from tensile_asm.benchmark.verify import SolutionResult, verify_library
    from tensile_asm.errors import UserError
    from tensile_asm.library.codeobjects import LibraryFolder

    out = []
    with LibraryFolder(library) as folder:
        entries = {sol.get("name"): sol for _, sol, _ in folder.solutions()}
        names = list(names) if names is not None else list(entries)
        missing = [n for n in names if n not in entries]
        if missing:
            raise UserError(f"{folder.path}: its TensileLibrary has no solution named {missing[0]}"
                            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                            + "; give names of this library's solutions (or rebuild it)")
        for name in names:
            entry = entries[name]
            res = SampleResult(name)
            for case in edge_cases(entry, mapping=mapping, stagger=stagger):
                first, ld = initial_strides(entry, case.size) if strides else ({}, {})
                try:
                    [r] = verify_library(folder, [case.size], case.alpha, case.beta, seed, names={name},
                                         first_stride=first or None, ld=ld or None,
                                         kernarg_preload=kernarg_preload)
                except Exception as e:  # noqa: BLE001 -- a finding, reported with the others
                    r = SolutionResult(name, None, None, [], [], f"CRASH {type(e).__name__}: {e}")
                res.runs.append((case, r))
            if log is not None:
                sizes = ", ".join(str(c) for c, _ in res.runs)
                log(f"{res.state} {name} [{sizes}]" + (f": {res.detail()}" if res.state != "PASS" else ""))
            out.append(res)
    return out
