"""Build and verify REAL logic on the emulator: a sample of solutions, cut from logic files, built with
create-library and run at the one size rule's edge sizes (``tensile_asm.benchmark.sample``); or a sample of an
existing create-library output.

    # from logic: a schedule of ../shared/data/logic/rocblas-asm_full, or logic files / folders
    PYTHONPATH=$PWD .venv/bin/python tools/verify_logic_sample.py aldebaran [--files '*_HHS_BH.yaml']
        [--feature lsu-mfma] [--count 6] [--seed 1] [--solutions 3,7 | --all] [--arch gfx90a]
        [--mapping] [--stagger] [--strides] [--no-kernarg-preload] [--out DIR] [--jobs N]
    # from a create-library output folder: per logic file built/total and the grouped reasons, then a sample
    PYTHONPATH=$PWD .venv/bin/python tools/verify_logic_sample.py --library OUT_DIR [--per-file 1] [--seed 13]
        [--match REGEX] [--strides]

From logic: the logic files (``--files``: a glob on their names) are read for the architecture (``--arch``, else
the schedule's: vega10 gfx900, vega20 gfx906, arcturus gfx908, aldebaran gfx90a, aquavanjaram942 gfx942); the
solutions that use ``--feature`` (see FEATURES; default: every solution) and that the writer accepts
(``supports()``) are the candidates; ``--count`` of them are drawn with ``random.Random(--seed)`` (``--all``: every
one; ``--solutions``: these positions, one logic file). The chosen solutions are cut out of their files
(``sample.build_cut``: Tensile's format), built by create-library into ``--out`` (default a temporary folder),
and each built one runs on the strict emulator against the float64 reference at ``sample.edge_cases``' three
sizes: the smallest admitted problem with beta 0; M, N, K primes past the macro tile and 2 DepthU (batch 2 where
batched, beta 0.5); 13 x 11 x a prime past DepthU with beta 0; every size rounded up to what the solution's
predicates admit. ``--mapping`` (on for the wgm features): N past |WorkGroupMapping| + 1 rows of tiles, not a
multiple of it; ``--stagger`` (on for stagger-mapping): K past the StaggerU wrap; ``--strides`` (on for
initial-strides): first strides other than 1 where the solution takes them (``sample.initial_strides``);
``--no-kernarg-preload``: the emulated dispatch does not preload kernel arguments (firmware without it), so kernels
with PreloadKernelArguments 1 start at their entry, whose 256-byte header loads them (default: preloaded, the
waves start 256 bytes on).

From a library: ``--per-file`` built solutions of each (architecture, logic file) of its support.json drawn with
``--seed`` (``--match``: only names matching the regular expression), run at the same sizes.

Prints one line per solution (PASS, FAIL, CRASH, NOT RUN with the sizes, or NOT BUILT with the reason) and a
total; exits 1 if any failed, crashed or ran at no size.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOGIC_ROOT = ROOT.parent / "shared" / "data" / "logic" / "rocblas-asm_full"
SCHEDULES = {"vega10": "gfx900", "vega20": "gfx906", "arcturus": "gfx908", "aldebaran": "gfx90a",
             "aquavanjaram942": "gfx942"}


def _wgm(s) -> int:
    return s.params["WorkGroupMapping"]


def _wide_lds_bytes(s) -> int:
    return s.derived.lds.layout(4).bytes


FEATURES = {
    "wgm": lambda s, a: _wgm(s) > 1 and _wgm(s) & (_wgm(s) - 1) != 0,      # WorkGroupMapping not a power of two
    "wgm-negative": lambda s, a: _wgm(s) < -1,
    "stagger-mapping": lambda s, a: s.params["StaggerUMapping"] != 0 and s.params["StaggerU"] > 1,
    "lsu-mfma": lambda s, a: s.params["WorkGroup"][2] > 1 and bool(s.params.get("MatrixInstruction")),
    "iu-mfma": lambda s, a: s.params.get("InnerUnroll", 1) > 1 and bool(s.params.get("MatrixInstruction")),
    "mfma-pgr": lambda s, a: bool(s.params.get("MatrixInstruction")) and s.params["PrefetchGlobalRead"] > 0,
    "mfma-mt-side": lambda s, a: s.derived.is_mfma and (s.derived.mt0 not in _valid_sides()
                                                        or s.derived.mt1 not in _valid_sides()),
    "gb-persistent": lambda s, a: s.problem_type.batched and not s.problem_type.strided_batched
                                  and s.derived.persistent_kernel != 0,
    "gb-no-buffer-load": lambda s, a: s.problem_type.batched and not s.problem_type.strided_batched
                                      and not s.derived.buffer_load and s.params["KernelLanguage"] == "Assembly",
    "no-buffer-load-wide": lambda s, a: not s.derived.buffer_load and s.params["GlobalReadVectorWidth"] > 1
                                        and s.params["KernelLanguage"] == "Assembly",
    "mfma-blocks-remap": lambda s, a: s.derived.is_mfma and s.derived.mi_blocks != (1, 1) and bool(s.derived.store_remap),
    "mfma-blocks-swap": lambda s, a: s.derived.is_mfma and s.derived.mi_blocks != (1, 1) and bool(s.params["SourceSwap"]),
    # 16-bit MFMA solutions whose LDS held at fp32 would not fit (the old "needs N bytes of LDS" refusal)
    "lds16": lambda s, a: s.derived.is_mfma and s.problem_type.data_type.bytes == 2
                          and _wide_lds_bytes(s) > a.max_lds_bytes_per_workgroup,
    "wsgr": lambda s, a: bool(s.params.get("WaveSeparateGlobalReadA") or s.params.get("WaveSeparateGlobalReadB")),
    "complex": lambda s, a: s.problem_type.data_type.char in ("C", "Z"),
    "fractional-mfma": lambda s, a: s.derived.is_mfma and _fractional(s),
    "tsgr": lambda s, a: bool(s.params.get("ThreadSeparateGlobalReadA") or s.params.get("ThreadSeparateGlobalReadB")),
    "initial-strides": lambda s, a: s.problem_type.use_initial_strides_ab or s.problem_type.use_initial_strides_cd,
    "mfma": lambda s, a: s.derived.is_mfma,
    "valu": lambda s, a: not s.derived.is_mfma,
    "dtv": lambda s, a: bool(s.params.get("DirectToVgprA") or s.params.get("DirectToVgprB")),   # DirectToVgprA/B
    "preload": lambda s, a: s.derived.preload_kernargs,     # PreloadKernelArguments 1
}


def _fractional(s) -> bool:
    from tensile_asm.writer.build import geometry
    from tensile_asm.writer.limits import fractional
    g = geometry(s)
    return fractional(g, "A") or fractional(g, "B")


def _valid_sides():
    from tensile_asm.solution.derive import VALID_MT_SIDES
    return VALID_MT_SIDES


def _logic_files(sources: list[str], glob: str) -> tuple[list[Path], str | None]:
    """The logic files of the sources (schedule names, folders, files) matching ``glob``, and the schedule's gfx
    name when the sources name one schedule."""
    files, gfx = [], None
    for s in sources:
        if s in SCHEDULES:
            gfx = SCHEDULES[s]
            files += sorted((LOGIC_ROOT / s).glob(glob))
        elif Path(s).is_dir():
            files += sorted(p for p in Path(s).rglob("*") if p.suffix in (".yaml", ".yml") and p.match(glob))
        elif Path(s).is_file():
            files.append(Path(s))
        else:
            sys.exit(f"{s}: not a schedule ({', '.join(SCHEDULES)}), logic folder or logic file")
    return files, gfx


def _arch_of(path: Path, given: str | None, lf) -> str | None:
    if given:
        return given
    if lf.architecture != "fallback":
        from tensile_asm.library.predicates import processor_name
        return processor_name(lf.architecture)
    return None


def from_logic(a) -> int:
    from tensile_asm.benchmark.sample import build_cut
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.library.logic import read_logic_file
    from tensile_asm.writer.build import supports

    files, gfx = _logic_files(a.sources, a.files)
    arch_name = a.arch or gfx
    candidates, uses, total = [], 0, 0
    for path in files:
        lf = read_logic_file(path)
        name = _arch_of(path, arch_name, lf)
        if name is None:
            sys.exit(f"{path}: fallback logic names no architecture; give --arch")
        if arch_name is None:
            arch_name = name
        elif name != arch_name:
            sys.exit(f"{path}: declares {name}, not {arch_name}; verify one architecture per run (--arch)")
        arch = load_arch(arch_name)
        if a.solutions is not None and len(files) == 1:
            missing = sorted(a.solutions - {e.index for e in lf.entries})
            if missing:
                from tensile_asm.errors import UserError
                raise UserError(f"--solutions {','.join(map(str, missing))}: {path.name} has no solution at "
                                f"{'that position' if len(missing) == 1 else 'those positions'} (it has "
                                f"{len(lf.entries)}: 0 to {len(lf.entries) - 1})")
        for e in lf.entries:
            total += 1
            if a.solutions is not None and e.index not in a.solutions:
                continue
            s = e.solution
            if s is None or not s.valid or (a.feature and not FEATURES[a.feature](s, arch)):
                continue
            uses += 1
            reason = supports(s, arch)
            if reason is None:
                candidates.append((path, e.index))
            elif a.solutions is not None:
                print(f"REFUSED {path.name}#{e.index}: {reason}")
    if a.all or a.solutions is not None:
        chosen = candidates
    else:
        chosen = random.Random(a.seed).sample(candidates, min(a.count, len(candidates)))
    print(f"{len(files)} logic files for {arch_name}, {total} solutions; {uses} "
          f"{'use ' + a.feature if a.feature else 'readable'}, {len(candidates)} accepted; verifying "
          f"{len(chosen)}" + ("" if a.all or a.solutions is not None else f" (seed {a.seed})"), flush=True)
    if not chosen:
        return 0
    picks: dict[Path, list[int]] = collections.defaultdict(list)
    for path, index in chosen:
        picks[path].append(index)
    out = a.out or Path(tempfile.mkdtemp(prefix="verify-logic-sample-"))
    t0 = time.perf_counter()
    report = build_cut(dict(picks), arch_name, out, jobs=a.jobs, cache_dir=a.cache_dir)
    where = {}
    for e in report.entries:
        original = picks[next(p for p in picks if p.name == e.logic_file.name)][e.logic_index]
        where[e.name] = f"{e.logic_file.name}#{original}"
        if not e.built:
            print(f"NOT BUILT {where[e.name]} {e.name}: {e.reason}", flush=True)
    built = [e.name for e in report.entries if e.built]
    print(f"built {len(built)}/{len(report.entries)} into {out} ({time.perf_counter() - t0:.0f} s)", flush=True)
    return _verify(out / "library", built, where, a)


def from_library(a) -> int:
    from tensile_asm.errors import UserError
    if not (a.library / "support.json").is_file():
        raise UserError(f"--library {a.library}: no support.json there; give a tensile-create-library output folder")
    support = json.loads((a.library / "support.json").read_text())
    rows = support["solutions"] if isinstance(support, dict) else support
    files = collections.defaultdict(list)
    for r in rows:
        files[(r["architecture"], r["file"])].append(r)
    rng = random.Random(a.seed)
    chosen, where, reasons = [], {}, collections.Counter()
    for (gfx, f), rs in sorted(files.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        built = [r for r in rs if r["built"] and (a.match is None or re.search(a.match, r["name"]))]
        print(f"{gfx} {Path(str(f)).name:50s} {sum(r['built'] for r in rs):4d}/{len(rs):4d} built")
        for r in rs:
            if not r["built"]:
                reasons[(gfx, re.sub(r"\d+", "N", r["reason"] or "?")[:140])] += 1
        for r in rng.sample(built, min(a.per_file, len(built))):
            if r["name"] not in where:
                chosen.append(r["name"])
                where[r["name"]] = f"{Path(str(f)).name}#{r['index']}"
    for (gfx, why), n in sorted(reasons.items()):
        print(f"  {gfx} {n:5d} not built: {why}")
    print(f"verifying {len(chosen)} solutions ({a.per_file} per file, seed {a.seed})", flush=True)
    return _verify(a.library / "library", chosen, where, a)


def _verify(library: Path, names: list[str], where: dict[str, str], a) -> int:
    from tensile_asm.benchmark.sample import verify_solutions

    mapping = a.mapping or (a.feature or "").startswith("wgm")
    stagger = a.stagger or a.feature == "stagger-mapping"
    strides = a.strides or a.feature == "initial-strides"
    states = collections.Counter()
    for name in names:
        t0 = time.perf_counter()
        [res] = verify_solutions(library, [name], mapping=mapping, stagger=stagger, strides=strides, seed=a.seed,
                                 kernarg_preload=not a.no_kernarg_preload)
        states[res.state] += 1
        sizes = ", ".join(str(c) for c, _ in res.runs)
        print(f"{res.state} {where.get(name, '')} {name} [{sizes}] ({time.perf_counter() - t0:.0f} s)"
              + (f": {res.detail()}" if res.state != "PASS" else ""), flush=True)
    print(f"{len(names)} verified: " + ", ".join(f"{n} {s}" for s, n in sorted(states.items())))
    return 0 if set(states) <= {"PASS"} else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("sources", nargs="*", help="schedule names (rocblas-asm_full), logic folders or logic files")
    ap.add_argument("--library", type=Path, help="a create-library output folder (support.json, library/)")
    ap.add_argument("--files", default="*.yaml", help="glob on the logic files' names (default *.yaml)")
    ap.add_argument("--feature", choices=sorted(FEATURES), help="only solutions that use this feature")
    ap.add_argument("--arch", help="architecture (default: the schedule's, or the files' own)")
    ap.add_argument("--count", type=int, default=6, help="solutions drawn (default 6)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--all", action="store_true", help="every accepted solution")
    ap.add_argument("--solutions", type=lambda s: {int(x) for x in s.split(",")},
                    help="positions in the logic file, e.g. 3,7")
    ap.add_argument("--per-file", type=int, default=1, help="with --library: solutions per logic file (default 1)")
    ap.add_argument("--match", help="with --library: only solutions whose names match this regular expression")
    ap.add_argument("--mapping", action="store_true", help="N past the WorkGroupMapping blocks")
    ap.add_argument("--stagger", action="store_true", help="K past the StaggerU wrap")
    ap.add_argument("--strides", action="store_true", help="first strides other than 1 where a solution takes them")
    ap.add_argument("--no-kernarg-preload", action="store_true",
                    help="dispatch as firmware without kernel-argument preloading: a kernel that preloads (gfx942 "
                         "PreloadKernelArguments 1) starts at its entry and loads them itself")
    ap.add_argument("--out", type=Path, help="where the cut logic and its library go (default a temporary folder)")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--cache-dir", type=Path, default=None)
    a = ap.parse_args(argv)
    if (a.library is None) == (not a.sources):
        ap.error("give logic sources or --library, not both")
    from tensile_asm.errors import UserError
    try:
        return from_library(a) if a.library else from_logic(a)
    except UserError as e:
        print(f"verify_logic_sample: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
