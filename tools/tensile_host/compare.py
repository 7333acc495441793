"""Compare our ``Library.select`` with Tensile's own C++ host library on the same master library file.

usage: python tools/tensile_host/compare.py LIBRARY [LIBRARY ...] [--count N] [--seed S] [--binary PATH]
                                            [--arch GFX ...] [--markdown]

LIBRARY is a create-library output folder, its ``library/`` folder, or a ``TensileLibrary.dat`` (``.dat.gz``
is unpacked to a temporary file first; Tensile reads plain msgpack only). For every architecture the
library's Hardware rows name (or each ``--arch``), every problem type its solutions are written for, ``--count``
problems are generated: sizes from the library's own Matching tables (exact, and one off), 1, primes, tile
multiples, random; batched; packed and padded leading dimensions and batch strides, ldc != ldd, leading
dimensions large enough to fail the 2^32 buffer-offset checks; alpha and beta in {0, 1, -1, other}; C == D or
not. Each problem is selected by ``tensile_asm.library.select.Library.select`` and by ``tensile-host-select``
(tools/tensile_host/select_main.cpp over Tensile's Source/lib; build it with tools/tensile_host/build.sh),
given the same hardware (gfx name, CU count, not an APU). Every disagreement is printed with its problem;
the exit status is 1 when there is any, 2 on a usage error. A pick between two Matching entries with the same
key and speed whose solutions both accept the problem is counted apart ("tied"), not as a disagreement:
Tensile sorts its table with std::sort on (key, speed), so its order between such entries is unspecified.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tensile_asm.errors import UserError  # noqa: E402
from tensile_asm.library.select import Library  # noqa: E402
from tensile_asm.problem import Problem, ProblemType, data_type  # noqa: E402

DEFAULT_BINARY = Path.home() / ".cache" / "tensile-host" / "bin" / "tensile-host-select"
# CU counts of the shipping parts (rocBLAS passes the device's; CUCount rows in a library add theirs).
CU_COUNTS = {"gfx803": 64, "gfx900": 64, "gfx906": 60, "gfx908": 120, "gfx90a": 104, "gfx942": 304,
             "gfx1010": 40, "gfx1030": 72, "gfx1100": 96}
SPECIAL_SIZES = (1, 2, 3, 5, 7, 13, 17, 31, 61, 67, 127, 131, 251, 257, 509, 521, 1021, 1031, 2039, 2053, 4093)
_OP = re.compile(r"Contraction_([a-z]+)_A([a-z]+)(C?)_B([a-z]+)(C?)_C([a-z]+)_D([a-z]+)$")


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
def hardware(tree: dict[str, Any]) -> dict[str, set[int]]:
    """Architectures the Hardware rows name, each with the CU counts its rows ask for."""
    out: dict[str, set[int]] = {}

    def visit(pred: dict[str, Any], cus: set[int]) -> None:
        t = pred.get("type")
        if t == "AMDGPU":
            visit(pred["value"], cus)
        elif t == "And":
            counts = {p["value"] for p in pred["value"] if p.get("type") == "CUCount"}
            for p in pred["value"]:
                visit(p, counts)
        elif t == "Processor":
            out.setdefault(pred["value"], set()).update(cus)

    if tree.get("type") == "Hardware":
        for row in tree["rows"]:
            visit(row["predicate"], set())
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


def problem_type(entry: dict[str, Any]) -> ProblemType:
    """Our ProblemType for a solution's ``problemType`` entry (GEMM operation identifiers only)."""
    op = entry["operationIdentifier"]
    m = _OP.match(op)
    if not m:
        raise UserError(f"operation identifier {op!r} is not a GEMM this comparison can generate problems for")
    sums, a, conj_a, b, conj_b, c, _ = m.groups()
    a_type, c_type = data_type(entry["aType"]), data_type(entry["cType"])
    spec: dict[str, Any] = {
        "DataType": a_type.char, "DestDataType": c_type.char, "TransposeA": a[0] in sums,
        "TransposeB": b[0] not in sums, "Batched": len(c) == 3, "ComplexConjugateA": bool(conj_a),
        "ComplexConjugateB": bool(conj_b), "HighPrecisionAccumulate": bool(entry.get("highPrecisionAccumulate")),
        "StridedBatched": bool(entry.get("stridedBatched", True)), "UseBeta": bool(entry.get("useBeta", True)),
        "UseInitialStridesAB": bool(entry.get("useInitialStridesAB")),
        "UseInitialStridesCD": bool(entry.get("useInitialStridesCD")),
        "StochasticRounding": bool(entry.get("stochasticRounding")),
    }
    if spec["HighPrecisionAccumulate"]:
        spec["ComputeDataType"] = "I" if a_type.char in ("I8", "4xi8") else "S"
    if entry.get("f32XdlMathOp", "Float") != "Float":
        spec["F32XdlMathOp"] = data_type(entry["f32XdlMathOp"]).char
    pt = ProblemType.from_dict(spec, where=op)
    if pt.operation_identifier != op:
        raise UserError(f"{op}: re-derived as {pt.operation_identifier}; this comparison cannot model it")
    return pt


def problem_types(lib: Library) -> dict[str, ProblemType]:
    """Each distinct problem type the library's solutions are written for, by its name."""
    seen: dict[str, ProblemType] = {}
    for sol in lib.solutions.values():
        key = json.dumps(sol["problemType"], sort_keys=True)
        if key not in seen:
            seen[key] = problem_type(sol["problemType"])
    return {pt.name: pt for pt in seen.values()}


# ---- problems
def _size(rng: random.Random, exact: list[dict[str, int]], prop: str, fallback: int) -> int:
    kind = rng.random()
    if kind < 0.30 and exact:
        value = rng.choice(exact).get(prop, fallback)
        return max(1, value + rng.choice((0, 0, 0, -1, 1)))
    if kind < 0.50:
        return rng.choice(SPECIAL_SIZES)
    if kind < 0.65:
        return rng.choice((16, 32, 64, 128, 256)) * rng.randint(1, 24)
    if kind < 0.80:
        return rng.randint(1, 64)
    return int(2 ** rng.uniform(0, 13))


def _ld(rng: random.Random, minimum: int) -> int:
    kind = rng.random()
    if kind < 0.70:
        return minimum
    if kind < 0.90:
        return minimum + rng.randint(1, 64)
    if kind < 0.96:
        return -(-minimum // 128) * 128
    return (1 << rng.choice((26, 27, 28, 30))) + rng.randint(0, 7)  # past the 2^32-byte buffer offset checks


def random_problem(pt: ProblemType, exact: list[dict[str, int]], rng: random.Random) -> Problem:
    row = rng.choice(exact) if exact and rng.random() < 0.25 else None
    if row is not None:  # an exact table size, every dimension from the same entry
        m, n, k = row.get("FreeSizeA", 1), row.get("FreeSizeB", 1), row.get("BoundSize", 1)
        batch = row.get("BatchSize", 1)
    else:
        m, n, k = (_size(rng, exact, p, 64) for p in ("FreeSizeA", "FreeSizeB", "BoundSize"))
        batch = 1
        if pt.batched and rng.random() < 0.4:
            batch = rng.choice((2, 3, 4, 5, 8, 16, 17, 64))
    if not pt.batched:
        batch = 1
    rows_a, cols_a = (k, m) if pt.transpose_a else (m, k)
    rows_b, cols_b = (n, k) if pt.transpose_b else (k, n)
    lda, ldb, ldc = _ld(rng, rows_a), _ld(rng, rows_b), _ld(rng, m)
    ldd = ldc if rng.random() < 0.85 else _ld(rng, m)
    pad = (lambda v: v) if rng.random() < 0.7 else (lambda v: v + rng.randint(1, 4096))
    alpha = rng.choice((1.0, 1.0, -1.0, 0.5, 2.0, 0.0))
    beta = 0.0 if not pt.use_beta else rng.choice((0.0, 0.0, 1.0, -1.0, 0.5))
    pr = Problem.make(pt, m, n, k, batch, lda=lda, ldb=ldb, ldc=ldc, ldd=ldd, stride_a=pad(lda * cols_a),
                      stride_b=pad(ldb * cols_b), stride_c=pad(ldc * n), stride_d=pad(ldd * n),
                      alpha=alpha, beta=beta)
    same_cd = pr.ldc == pr.ldd and pr.stride_c == pr.stride_d
    return dataclasses.replace(pr, c_equals_d=same_cd and rng.random() < 0.5)


def cpp_line(pr: Problem) -> str:
    """The problem as one stdin line of tensile-host-select (sizes: D's indices, then the summation index)."""
    pt = pr.problem_type
    sizes = [pr.m, pr.n] + ([pr.batch] if pt.batched else []) + [pr.k]
    a, c = pt.data_type.enum, pt.dest_type.enum
    xdl = pt.f32_xdl_math_op.enum if pt.f32_xdl_math_op else "Float"
    tensors = " ".join(f"{t.lower()}={','.join(map(str, pr.strides(t)))}" for t in "ABCD")
    return (f"op={pt.operation_identifier} types={a},{a},{c},{c} sizes={','.join(map(str, sizes))} {tensors} "
            f"alpha={pr.alpha!r} beta={pr.beta!r} hpa={int(pt.high_precision_accumulate)} "
            f"sb={int(pt.strided_batched)} ceqd={int(pr.c_equals_d)} xdl={xdl} alt={int(pt.fp16_alt_impl)} "
            f"altr={int(pt.fp16_alt_impl_round)} sr={int(pt.stochastic_rounding)}")


def run_tensile(binary: Path, dat: Path, arch: str, cus: int, lines: list[str]) -> list[str]:
    proc = subprocess.run([str(binary), str(dat), arch, str(cus), "0"], input="\n".join(lines) + "\n",
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
    type_name: str
    problems: int = 0
    agree: int = 0
    none_both: int = 0
    ties: int = 0
    errors: int = 0


def targets(lib: Library, archs: list[str] | None) -> Iterator[tuple[str, int, bool]]:
    """(architecture, CU count, named by the library) to select for: each architecture the Hardware rows name
    with each CU count they ask for and the part's own, plus one they do not name (everything must be none);
    a library without Hardware rows is selected for gfx90a."""
    hw = hardware(lib.tree)
    if archs is None:
        archs = sorted(hw) or ["gfx90a"]
        archs += [next(a for a in CU_COUNTS if a not in hw)] if hw else []
    for arch in archs:
        for cus in sorted(hw.get(arch, set()) | {CU_COUNTS.get(arch, 64)}):
            yield arch, cus, not hw or arch in hw


def compare(path: Path, binary: Path, count: int, seed: int, archs: list[str] | None,
            tmp: Path, show: int = 20) -> tuple[list[Row], list[str]]:
    dat = library_file(path, tmp)
    lib = Library.load(dat)
    types = problem_types(lib)
    exact = table_sizes(lib.tree)
    entries = tied_entries(lib.tree)
    rows, bad = [], []
    for arch, cus, named in targets(lib, archs):
        for name, pt in sorted(types.items()):
            rng = random.Random(f"{seed}:{path.name}:{arch}:{cus}:{name}")
            n = count if named else max(1, count // 10)
            problems = [random_problem(pt, exact.get(pt.operation_identifier, []), rng) for _ in range(n)]
            lines = [cpp_line(pr) for pr in problems]
            theirs = run_tensile(binary, dat, arch, cus, lines)
            row = Row(str(path), arch, cus, name, problems=len(problems))
            for pr, line, answer in zip(problems, lines, theirs):
                sol = lib.select(pr, arch, cu_count=cus, is_apu=0)
                ours = "none" if sol is None else f"{sol['index']} {sol['name']}"
                if answer.startswith("error"):
                    row.errors += 1
                if ours == answer:
                    row.agree += 1
                    row.none_both += ours == "none"
                    continue
                if sol is not None and answer[0].isdigit():
                    op, theirs_index = pr.problem_type.operation_identifier, int(answer.split()[0])
                    shared = entries.get((op, sol["index"]), set()) & entries.get((op, theirs_index), set())
                    if shared and lib._solution_ok(theirs_index, pr):  # equally near, equally fast, both valid
                        row.ties += 1
                        continue
                if len(bad) < show or show < 0:
                    bad.append(f"DISAGREE {path} {arch} cu={cus}: {line}\n    ours:    {ours}\n    Tensile: {answer}")
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
    ap.add_argument("--markdown", action="store_true", help="print the per-type table as markdown")
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
                rows, bad = compare(path, binary, args.count, args.seed, args.arch, Path(tmp), args.show)
                all_rows += rows
                all_bad += bad
    except UserError as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    for text in all_bad:
        if text:
            print(text)
    if args.markdown:
        print("| library | arch | CUs | problem type | problems | same solution | of which none on both sides "
              "| tied entries, other pick | differ | Tensile errors |")
        print("|---|---|---|---|---|---|---|---|---|---|")
    for r in all_rows:
        differ = r.problems - r.agree - r.ties
        if args.markdown:
            cells = (r.library, r.arch, r.cus, r.type_name, r.problems, r.agree, r.none_both, r.ties, differ, r.errors)
            print("| " + " | ".join(map(str, cells)) + " |")
        else:
            print(f"{r.library} {r.arch} cu={r.cus} {r.type_name}: {r.agree}/{r.problems} same solution "
                  f"({r.none_both} none on both sides), {r.ties} tied entries picked differently, {differ} differ, "
                  f"{r.errors} Tensile errors")
    total = sum(r.problems for r in all_rows)
    agree = sum(r.agree for r in all_rows)
    ties = sum(r.ties for r in all_rows)
    differ = total - agree - ties
    archs = {r.arch for r in all_rows}
    print(f"total: {agree}/{total} same solution ({100.0 * agree / max(total, 1):.2f}%), {ties} tied entries picked "
          f"differently (same key and speed, both solutions valid: Tensile's order between them is std::sort's), "
          f"{differ} differ; {sum(r.none_both for r in all_rows)} none on both sides; {len(all_rows)} "
          f"(arch, CUs, type) groups on {len(archs)} architectures")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
