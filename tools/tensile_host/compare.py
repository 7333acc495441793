"""Compare our ``Library.select`` with Tensile's own C++ host library on the same master library file.

usage: python tools/tensile_host/compare.py LIBRARY [LIBRARY ...] [--count N] [--seed S] [--binary PATH]
                                            [--arch GFX ...] [--metric M ...] [--show N] [--markdown]

LIBRARY is a create-library output folder, its ``library/`` folder, or a ``TensileLibrary.dat`` (``.dat.gz``
is unpacked to a temporary file first; Tensile reads plain msgpack only). For every architecture the
library's Hardware rows name (or each ``--arch``) with the part's CU count and each CU-count/APU row, one
architecture they do not name, every problem type (operation identifier, data types, flags) its solutions
are written for, and each ``--metric``, ``--count`` problems are generated: sizes from the library's own
Matching tables (exact, and one off), 1, primes, tile multiples, random; batches; packed and padded leading
dimensions and batch strides, ldc != ldd, leading dimensions past the 2^32-byte buffer-offset checks;
alpha and beta in {0, 1, -1, other}; C == D or not; workspace sizes. Each problem is selected by
``tensile_asm.library.select.Library.select`` and by ``tensile-host-select`` (tools/tensile_host/
select_main.cpp over Tensile's Source/lib; build it with tools/tensile_host/build.sh) for the same hardware.
Every disagreement is printed with its problem; the exit status is 1 when there is any, 2 on a usage error.
A pick between two Matching entries with the same key and speed whose solutions both accept the problem
is counted apart ("tied"): the C++ standard leaves their order to the ``std::sort`` implementation
(select reproduces libstdc++'s).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tensile_asm.errors import UserError  # noqa: E402
from tensile_asm.library.select import Library  # noqa: E402
from tensile_asm.library.predicates import Hardware, processor_name  # noqa: E402
from tensile_asm.library.problem_view import PERFORMANCE_METRICS, ContractionView  # noqa: E402
from tensile_asm.problem import data_type  # noqa: E402

DEFAULT_BINARY = Path.home() / ".cache" / "tensile-host" / "bin" / "tensile-host-select"
# CU counts of the shipping parts (rocBLAS passes the device's; CUCount rows in a library add theirs).
CU_COUNTS = {"gfx803": 64, "gfx900": 64, "gfx906": 60, "gfx908": 120, "gfx90a": 104, "gfx942": 304,
             "gfx1010": 40, "gfx1030": 72, "gfx1100": 96}
SPECIAL_SIZES = (1, 2, 3, 5, 7, 13, 17, 31, 61, 67, 127, 131, 251, 257, 509, 521, 1021, 1031, 2039, 2053, 4093)
_OP = re.compile(r"Contraction_([a-z]+)_A([a-z]+?)(C?)_B([a-z]+?)(C?)_C([a-z]+)_D([a-z]+)$")
_LETTERS = "ijklmnopqrstuvwxyz"


def find_binary(given: str | None) -> Path | None:
    """The tensile-host-select binary: ``given``, $TENSILE_HOST_SELECT, or the build script's default place."""
    for cand in (given, os.environ.get("TENSILE_HOST_SELECT"), str(DEFAULT_BINARY)):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return Path(cand)
    return None


def library_file(path: Path, tmp: Path) -> Path:
    """The plain ``.dat`` for ``path`` (a folder, a .dat or a .dat.gz, which is unpacked into ``tmp``)."""
    if path.is_dir():
        for cand in ("library/TensileLibrary.dat", "TensileLibrary.dat"):
            if (path / cand).is_file():
                return path / cand
        raise UserError(f"{path}: no TensileLibrary.dat here or in library/; build it with "
                        f"tensile-create-library --library-format msgpack")
    if path.name.endswith(".dat.gz"):
        out = tmp / path.name.removesuffix(".gz")
        out.write_bytes(gzip.decompress(path.read_bytes()))
        return out
    if path.name.endswith(".dat") and path.is_file():
        return path
    raise UserError(f"{path}: not a TensileLibrary.dat (msgpack), .dat.gz or a folder holding one")


# ---- what the library holds
def hardware(tree: dict[str, Any]) -> dict[str, set[tuple[int | None, int]]]:
    """Architectures the Hardware rows name, each with the (CU count or None, is-APU) its rows ask for."""
    out: dict[str, set[tuple[int | None, int]]] = {}

    def visit(pred: dict[str, Any], cus: int | None, apu: int) -> None:
        t = pred.get("type")
        if t == "AMDGPU":
            visit(pred["value"], cus, apu)
        elif t == "And":
            parts = pred["value"]
            cus = next((p["value"] for p in parts if p.get("type") == "CUCount"), cus)
            apu = next((p["value"] for p in parts if p.get("type") == "IsAPU"), apu)
            for p in parts:
                visit(p, cus, apu)
        elif t == "Processor":
            out.setdefault(pred["value"], set()).add((cus, apu))

    if tree.get("type") == "Hardware":
        for row in tree["rows"]:
            visit(row["predicate"], None, 0)
    return out


def table_sizes(node: dict[str, Any], op: str | None = None,
                out: dict[str, list[dict[str, int]]] | None = None) -> dict[str, list[dict[str, int]]]:
    """Per operation identifier, the sizes (by Matching property) of every table entry under it."""
    out = {} if out is None else out
    t = node.get("type")
    if t == "ProblemMap":
        for key, child in node["map"].items():
            table_sizes(child, key, out)
    elif t in ("Hardware", "Problem"):
        for row in node["rows"]:
            table_sizes(row["library"], op, out)
    elif t == "Matching" and op is not None:
        names = [p["type"] for p in node["properties"]]
        out.setdefault(op, []).extend(dict(zip(names, e["key"])) for e in node["table"])
    return out


def tied_entries(node: dict[str, Any], op: str | None = None,
                 out: dict[tuple[str, int], set[tuple]] | None = None) -> dict[tuple[str, int], set[tuple]]:
    """Per (operation identifier, solution index), the (table, key, speed) of its Matching entries: two
    solutions sharing one are tied, and Tensile's order between them is std::sort's, which is unspecified."""
    out = {} if out is None else out
    t = node.get("type")
    if t == "ProblemMap":
        for key, child in node["map"].items():
            tied_entries(child, key, out)
    elif t in ("Hardware", "Problem"):
        for row in node["rows"]:
            tied_entries(row["library"], op, out)
    elif t == "Matching" and op is not None:
        for e in node["table"]:
            out.setdefault((op, e["index"]), set()).add((id(node), tuple(e["key"]), e.get("speed")))
    return out


@dataclasses.dataclass(frozen=True)
class Spec:
    """One problem type as a solution's ``problemType`` entry gives it (any contraction)."""

    op: str
    index_a: tuple[int, ...]
    index_b: tuple[int, ...]
    nc: int
    total: int
    types: tuple[str, str, str, str]  # A, B, C, D data types (Tensile's enum names)
    conj: tuple[bool, bool]
    hpa: bool
    strided_batched: bool
    use_beta: bool
    initial_ab: bool
    initial_cd: bool
    xdl: str
    stochastic_rounding: bool

    @property
    def name(self) -> str:
        flags = [f for f, on in (("HPA", self.hpa), ("GB", not self.strided_batched), ("noBeta", not self.use_beta),
                                 ("I", self.initial_ab), ("Ic", self.initial_cd), ("SR", self.stochastic_rounding),
                                 (f"Xdl{self.xdl}", self.xdl != "Float")) if on]
        t = self.types
        return " ".join([self.op, "/".join(dict.fromkeys(t))] + flags)

    def indices(self, kind: str) -> list[int]:
        """C indices by kind, in C order (free of A, free of B, batch), or the bound indices."""
        if kind == "bound":
            return list(range(self.nc, self.total))
        in_a = [i in self.index_a for i in range(self.nc)]
        in_b = [i in self.index_b for i in range(self.nc)]
        want = {"freeA": (True, False), "freeB": (False, True), "batch": (True, True)}[kind]
        return [i for i in range(self.nc) if (in_a[i], in_b[i]) == want]


def spec(entry: dict[str, Any]) -> Spec:
    op = entry["operationIdentifier"]
    m = _OP.match(op)
    if not m:
        raise UserError(f"operation identifier {op!r} is not Contraction_<bound>_A.._B.._C.._D..")
    sums, a, conj_a, b, conj_b, c, d = m.groups()
    if c != d or sorted(c + sums) != list(_LETTERS[:len(c) + len(sums)]) or c != _LETTERS[:len(c)]:
        raise UserError(f"{op}: this comparison generates problems only for C == D indexed i, j, ... with the "
                        f"bound indices after them")
    types = tuple(data_type(entry[k]).enum for k in ("aType", "bType", "cType", "dType"))
    return Spec(op, tuple(_LETTERS.index(ch) for ch in a), tuple(_LETTERS.index(ch) for ch in b), len(c),
                len(c) + len(sums), types, (bool(conj_a), bool(conj_b)),
                bool(entry.get("highPrecisionAccumulate")), bool(entry.get("stridedBatched", True)),
                bool(entry.get("useBeta", True)), bool(entry.get("useInitialStridesAB")),
                bool(entry.get("useInitialStridesCD")), entry.get("f32XdlMathOp", "Float"),
                bool(entry.get("stochasticRounding")))


def specs(lib: Library) -> dict[str, Spec]:
    """Each distinct problem type the library's solutions are written for, by name."""
    out: dict[str, Spec] = {}
    for sol in lib.solutions.values():
        sp = spec(sol["problemType"])
        out.setdefault(sp.name, sp)
    return out


# ---- problems
def _size(rng: random.Random, exact: list[dict[str, int]], prop: str | None) -> int:
    kind = rng.random()
    if kind < 0.30 and exact and prop:
        value = rng.choice(exact).get(prop, 1)
        return max(1, value + rng.choice((0, 0, 0, -1, 1)))
    if kind < 0.50:
        return rng.choice(SPECIAL_SIZES)
    if kind < 0.65:
        return rng.choice((16, 32, 64, 128, 256)) * rng.randint(1, 24)
    if kind < 0.80:
        return rng.randint(1, 64)
    return int(2 ** rng.uniform(0, 13))


def _strides(rng: random.Random, sizes: dict[int, int], order: tuple[int, ...], initial: bool) -> tuple[int, ...]:
    """Packed strides for a tensor with indices ``order``, sometimes padded: the leading dimension by a
    little, to a multiple of 128, or past the 2^32-byte buffer offset checks; later strides by a little."""
    first = rng.choice((1, 1, 1, 2, 3)) if initial else 1
    out = [first]
    for pos in range(1, len(order)):
        packed = out[-1] * sizes[order[pos - 1]]
        kind = rng.random()
        if kind < 0.70:
            out.append(packed)
        elif kind < 0.90:
            out.append(packed + rng.randint(1, 64 if pos == 1 else 4096))
        elif kind < 0.96:
            out.append(-(-packed // 128) * 128)
        else:
            out.append(max(packed, (1 << rng.choice((26, 27, 28, 30))) + rng.randint(0, 7)))
    return tuple(out)


def random_view(sp: Spec, exact: list[dict[str, int]], rng: random.Random) -> ContractionView:
    kinds = {k: sp.indices(k) for k in ("freeA", "freeB", "batch", "bound")}
    props = {"freeA": "FreeSizeA", "freeB": "FreeSizeB", "batch": "BatchSize", "bound": "BoundSize"}
    sizes: dict[int, int] = {}
    row = rng.choice(exact) if exact and rng.random() < 0.25 else None
    for kind, idx in kinds.items():
        for n, i in enumerate(idx):
            if row is not None and n == 0 and props[kind] in row:  # an exact table size
                sizes[i] = row[props[kind]]
            elif kind == "batch":
                sizes[i] = rng.choice((2, 3, 4, 5, 8, 16, 17, 64)) if rng.random() < 0.4 else 1
            else:
                sizes[i] = _size(rng, exact, props[kind] if n == 0 else None)
    strides = {"A": _strides(rng, sizes, sp.index_a, sp.initial_ab),
               "B": _strides(rng, sizes, sp.index_b, sp.initial_ab),
               "C": _strides(rng, sizes, tuple(range(sp.nc)), sp.initial_cd)}
    strides["D"] = strides["C"] if rng.random() < 0.85 else _strides(rng, sizes, tuple(range(sp.nc)), sp.initial_cd)
    half = sp.types[0] in ("Half", "BFloat16")
    alt = half and rng.random() < 0.15
    return ContractionView.from_indices(
        sp.index_a, sp.index_b, sp.nc, sizes, strides, sp.types, complex_conjugate=sp.conj,
        alpha=rng.choice((1.0, 1.0, -1.0, 0.5, 2.0, 0.0)),
        beta=rng.choice((0.0, 0.0, 1.0, -1.0, 0.5)) if sp.use_beta else 0.0,
        c_equals_d=strides["C"] == strides["D"] and rng.random() < 0.5,
        strided_batched=sp.strided_batched, high_precision_accumulate=sp.hpa, f32_xdl_math_op=sp.xdl,
        stochastic_rounding=sp.stochastic_rounding, fp16_alt_impl=alt, fp16_alt_impl_round=alt and rng.random() < 0.5,
        workspace_size=rng.choice((0, 1 << 20, 1 << 28, 1 << 40)))


def cpp_line(v: ContractionView) -> str:
    """The problem as one stdin line of tensile-host-select (sizes: C's indices, then the bound indices)."""
    tensors = " ".join(f"{t.lower()}={','.join(map(str, v.strides[t]))}" for t in "ABCD")
    return (f"op={v.operation_identifier} types={','.join(t.enum for t in v.types)} "
            f"sizes={','.join(map(str, v.problem_sizes))} {tensors} alpha={v.alpha!r} beta={v.beta!r} "
            f"hpa={int(v.high_precision_accumulate)} sb={int(v.strided_batched)} ceqd={int(v.c_equals_d)} "
            f"xdl={v.f32_xdl_math_op} alt={int(v.fp16_alt_impl)} altr={int(v.fp16_alt_impl_round)} "
            f"sr={int(v.stochastic_rounding)} ws={v.workspace_size}")


def run_tensile(binary: Path, dat: Path, arch: str, cus: int, apu: int, lines: list[str],
                metric: str) -> list[str]:
    proc = subprocess.run([str(binary), str(dat), arch, str(cus), str(apu), metric], input="\n".join(lines) + "\n",
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise UserError(f"{binary} {dat} {arch}: exit {proc.returncode}: {proc.stderr.strip()}")
    out = proc.stdout.splitlines()
    if len(out) != len(lines):
        raise UserError(f"{binary}: {len(out)} answers for {len(lines)} problems; stderr: {proc.stderr.strip()}")
    return out


# ---- the comparison
@dataclasses.dataclass
class Row:
    library: str
    arch: str
    cus: int
    apu: int
    type_name: str
    problems: int = 0
    agree: int = 0
    none_both: int = 0
    ties: int = 0
    errors: int = 0
    metric: str = "DeviceEfficiency"
    chosen: set = dataclasses.field(default_factory=set)  # solution indices Tensile picked

    @property
    def differ(self) -> int:
        return self.problems - self.agree - self.ties


def targets(lib: Library, archs: list[str] | None) -> Iterator[tuple[str, int, int, bool]]:
    """(architecture, CU count, is-APU, named by the library) to select for: each architecture the Hardware
    rows name with the part's own CU count and each CU count / APU flag a row asks for, plus one architecture
    they do not name (everything must be none); a library without Hardware rows is selected for gfx90a."""
    hw = hardware(lib.tree)
    if archs is None:
        archs = sorted(hw) or ["gfx90a"]
        archs += [next(a for a in CU_COUNTS if a not in hw)] if hw else []
    for arch in archs:
        own = CU_COUNTS.get(arch, 64)
        combos = {(own, 0)} | {(cus or own, apu) for cus, apu in hw.get(arch, set())}
        for cus, apu in sorted(combos):
            yield arch, cus, apu, not hw or arch in hw


def compare(path: Path, binary: Path, count: int, seed: int, archs: list[str] | None, tmp: Path,
            show: int = 20, metric: str = "DeviceEfficiency") -> tuple[list[Row], list[str]]:
    dat = library_file(path, tmp)
    lib = Library.load(dat)
    types = specs(lib)
    exact = table_sizes(lib.tree)
    entries = tied_entries(lib.tree)
    rows, bad = [], []
    for arch, cus, apu, named in targets(lib, archs):
        hw = Hardware(processor_name(arch), cus, apu)
        for name, sp in sorted(types.items()):
            rng = random.Random(f"{seed}:{path.name}:{arch}:{cus}:{apu}:{name}")
            n = count if named else max(1, count // 10)
            views = [random_view(sp, exact.get(sp.op, []), rng) for _ in range(n)]
            lines = [cpp_line(v) for v in views]
            theirs = run_tensile(binary, dat, arch, cus, apu, lines, metric)
            row = Row(str(path), arch, cus, apu, name, problems=len(views), metric=metric)
            for v, line, answer in zip(views, lines, theirs):
                try:
                    sol = lib.select(v, arch, cu_count=cus, is_apu=apu, perf_metric=metric)
                    ours = "none" if sol is None else f"{sol['index']} {sol['name']}"
                except UserError as e:
                    sol, ours = None, f"error {e}"
                if answer.startswith("error"):
                    row.errors += 1
                elif answer != "none":
                    row.chosen.add(answer.split()[0])
                if ours == answer:
                    row.agree += 1
                    row.none_both += ours == "none"
                    continue
                if sol is not None and answer[0].isdigit():
                    theirs_index = int(answer.split()[0])
                    shared = entries.get((sp.op, sol["index"]), set()) & entries.get((sp.op, theirs_index), set())
                    if shared and lib._solution_ok(theirs_index, v, hw):  # equally near and fast, both valid
                        row.ties += 1
                        continue
                if len(bad) < show or show < 0:
                    bad.append(f"DISAGREE {path} {arch} cu={cus} apu={apu} {metric}: {line}\n    ours:    {ours}\n    Tensile: {answer}")
                else:
                    bad.append("")
            rows.append(row)
    return rows, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("libraries", nargs="+", type=Path, help="create-library output folders or TensileLibrary.dat")
    ap.add_argument("--count", type=int, default=100, help="problems per (architecture, CU count, problem type)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (same seed, same problems)")
    ap.add_argument("--binary", help=f"tensile-host-select (default $TENSILE_HOST_SELECT or {DEFAULT_BINARY})")
    ap.add_argument("--arch", action="append", help="architecture to select for (default: each the library names)")
    ap.add_argument("--show", type=int, default=20, help="disagreements to print in full (-1: all)")
    ap.add_argument("--metric", action="append", choices=PERFORMANCE_METRICS,
                    help="the problems' performance metric, on both sides (repeat for several; default "
                         "DeviceEfficiency)")
    ap.add_argument("--markdown", action="store_true",
                    help="print one markdown table line per (library, problem type) instead of one line per group")
    args = ap.parse_args(argv)
    binary = find_binary(args.binary)
    if binary is None:
        print(f"compare.py: no tensile-host-select binary (looked at --binary, $TENSILE_HOST_SELECT, "
              f"{DEFAULT_BINARY}); build it with tools/tensile_host/build.sh", file=sys.stderr)
        return 2
    all_rows, all_bad = [], []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for path in args.libraries:
                for metric in args.metric or ["DeviceEfficiency"]:
                    rows, bad = compare(path, binary, args.count, args.seed, args.arch, Path(tmp), args.show,
                                        metric)
                    all_rows += rows
                    all_bad += bad
    except UserError as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    for text in all_bad:
        if text:
            print(text)
    if args.markdown:
        print_markdown(all_rows)
    else:
        for r in all_rows:
            print(f"{r.library} {r.arch} cu={r.cus} apu={r.apu} {r.metric} {r.type_name}: {r.agree}/{r.problems} "
                  f"same solution ({r.none_both} none on both sides), {r.ties} tied, {r.differ} differ, "
                  f"{r.errors} Tensile errors; Tensile picked {len(r.chosen)} distinct solutions")
    total = sum(r.problems for r in all_rows)
    agree = sum(r.agree for r in all_rows)
    ties = sum(r.ties for r in all_rows)
    differ = sum(r.differ for r in all_rows)
    archs = {r.arch for r in all_rows}
    print(f"total: {agree}/{total} same solution ({100.0 * agree / max(total, 1):.2f}%), {ties} tied entries picked "
          f"differently (same key and speed, both solutions valid: Tensile's order between them is std::sort's), "
          f"{differ} differ; {sum(r.none_both for r in all_rows)} none on both sides; {len(all_rows)} "
          f"(library, arch, CUs, APU, metric, type) groups on {len(archs)} architectures")
    return 0 if differ == 0 else 1


def print_markdown(rows: list[Row]) -> None:
    """One line per (library, problem type): the hardware and metrics it was selected for, and the counts."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.library, r.type_name), []).append(r)
    print("| library | problem type | selected for (arch/CUs[/APU], metric) | problems | same solution "
          "| of which none on both sides | tied entries, other pick | differ | Tensile errors "
          "| solutions Tensile picked |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (lib, name), rs in groups.items():
        hw = ", ".join(dict.fromkeys(f"{r.arch}/{r.cus}{'/APU' if r.apu else ''}" for r in rs))
        metrics = ", ".join(dict.fromkeys(r.metric for r in rs))
        cells = (lib, name, f"{hw}; {metrics}", *(sum(getattr(r, k) for r in rs)
                 for k in ("problems", "agree", "none_both", "ties", "differ", "errors")),
                 len(set().union(*(r.chosen for r in rs))))
        print("| " + " | ".join(map(str, cells)) + " |")


if __name__ == "__main__":
    sys.exit(main())
