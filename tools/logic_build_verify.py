"""Build one rocBLAS schedule's logic with create-library, then verify a seeded sample of the built kernels of
EVERY logic file on the emulator at edge sizes; write bench/rocblas_logic_built_<schedule>.md.

    PYTHONPATH=$PWD .venv/bin/python tools/logic_build_verify.py vega20 [--jobs N] [--per-file 1] [--seed 1]
        [--logic-root DIR] [--out DIR] [--report PATH]

1. ``tensile-create-library --architecture <gfx> --jobs N <logic-root>/<schedule> <out>`` (timed);
2. from ``<out>/support.json``: per logic file, built/total and the not-built reasons grouped (digits as N);
3. per logic file, ``--per-file`` built solutions drawn with ``random.Random(seed)``, each run from the library
   (``benchmark.verify.verify_library``: its code object and GlobalSplitU helper as a launcher finds them, strict
   emulator, random A/B/C, D poisoned, NaN guards past A and B) at two sizes: one small (1, or the smallest
   multiple its Free0/Free1/Summation size-multiple predicates allow), beta 0; one with primes past the macro
   tile (rounded up to those multiples), batch 2 where the file is batched, beta 0.5 (0 without UseBeta).
   Sizes the solution's predicates refuse (e.g. GlobalSplitUCheckMinK) are listed as skipped, not run.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCHEDULES = {"vega10": "gfx900", "vega20": "gfx906", "arcturus": "gfx908", "aldebaran": "gfx90a",
             "aquavanjaram942": "gfx942"}
PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103,
          107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173, 179, 181, 191, 193, 197, 199, 211, 223,
          227, 229, 233, 239, 241, 251, 257, 263, 269, 271, 277, 281, 283, 293)


def _constraints(pred) -> dict[str, int]:
    """What a problem-predicate tree asks of the sizes: Free0/Free1SizeMultiple (m, n), BoundSizeMultiple or a
    SizeMultiple on the summation (k), LeadingFree0/1SizesGreaterOrEqual (m_min, n_min), GlobalSplitUCheckMinK
    (k_min)."""
    out: dict[str, int] = {}

    def keep(key, value, fn=max):
        out[key] = fn(out.get(key, 1), int(value))

    def walk(p):
        if isinstance(p, dict):
            t, v = p.get("type"), p.get("value")
            if t == "Free0SizeMultiple":
                keep("m", v)
            elif t == "Free1SizeMultiple":
                keep("n", v)
            elif t == "BoundSizeMultiple" or (t == "SizeMultiple" and p.get("index") == 3):
                keep("k", v)
            elif t == "LeadingFree0SizesGreaterOrEqual":
                keep("m_min", v)
            elif t == "LeadingFree1SizesGreaterOrEqual":
                keep("n_min", v)
            elif t == "GlobalSplitUCheckMinK":
                keep("k_min", v[0] * v[1] if isinstance(v, list) else v)
            for x in p.values():
                walk(x)
        elif isinstance(p, list):
            for x in p:
                walk(x)
    walk(pred)
    return out


def _prime_after(x: int) -> int:
    return next((p for p in PRIMES if p > x), x + 1)


def _up(x: int, mult: int) -> int:
    return -(-x // mult) * mult


def sizes_for(entry: dict):
    """(small size, edge size) for a library solution entry, honouring its size predicates."""
    from tensile_asm.problem import GemmSize

    sm = entry.get("sizeMapping", {})
    mt0, mt1 = sm.get("macroTile", [16, 16])[:2]
    du = sm.get("depthU", 8)
    c = _constraints(entry.get("problemPredicate", {}))
    batched = "Cijk" in entry.get("problemType", {}).get("operationIdentifier", "Cijk")
    fm, fn, fk = c.get("m", 1), c.get("n", 1), c.get("k", 1)
    small = GemmSize(_up(c.get("m_min", 1), fm), _up(c.get("n_min", 1), fn), _up(c.get("k_min", 1), fk), 1)
    edge = GemmSize(_up(_prime_after(max(mt0, c.get("m_min", 1))), fm), _up(_prime_after(mt1 // 2), fn),
                    _up(_prime_after(max(2 * du, c.get("k_min", 1))), fk), 2 if batched else 1)
    return small, edge


def build(schedule: str, logic_root: Path, out: Path, jobs: int) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "tensile_asm.cli.create_library", "--architecture", SCHEDULES[schedule],
           "--jobs", str(jobs), "--quiet", str(logic_root / schedule), str(out)]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"create-library failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return seconds, " ".join(cmd[1:])


def accepted_per_file(schedule: str, logic_root: Path) -> dict[str, dict]:
    """Per logic file, from the writers' supports() (parameters only, no kernel written): total, the accepted
    solutions' positions, and the first reason of the others."""
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.library.create import _collect, _default_builder

    gfx = SCHEDULES[schedule]
    arch, builder = load_arch(gfx), _default_builder()
    items, _ = _collect(logic_root / schedule, [gfx])
    files: dict[str, dict] = {}
    for it in items:
        f = files.setdefault(it.logic.path.name, {"total": 0, "accepted": [], "reasons": collections.Counter()})
        f["total"] += 1
        reason = it.reason
        if reason is None:
            reason = ("invalid: " + it.solution.rejection) if it.solution.rejection else \
                builder.supports(it.solution, arch)
        if reason is None:
            f["accepted"].append(it.index)
        else:
            f["reasons"][re.sub(r"\d+", "N", reason)[:140]] += 1
    return files


def cut_sample(schedule: str, logic_root: Path, dest: Path, files: dict[str, dict], per: int, seed: int) -> None:
    """dest/<schedule>/<file>: each logic file cut (tools/cut_logic.py) to ``per`` of its accepted solutions,
    drawn with ``random.Random(seed)``."""
    import yaml

    sys.path.insert(0, str(ROOT / "tools"))
    from cut_logic import cut

    rng = random.Random(seed)
    (dest / schedule).mkdir(parents=True, exist_ok=True)
    for name in sorted(files):
        picked = sorted(rng.sample(files[name]["accepted"], min(per, len(files[name]["accepted"]))))
        if not picked:
            continue
        data = yaml.load((logic_root / schedule / name).read_text(),
                         Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        keep = [data[5][i]["SolutionIndex"] for i in picked]
        (dest / schedule / name).write_text(yaml.dump(cut(data, keep), sort_keys=False,
                                                      Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))


def per_file(support: list[dict]) -> dict[str, dict]:
    files: dict[str, dict] = {}
    for e in support:
        f = files.setdefault(e["file"], {"total": 0, "built": [], "reasons": collections.Counter()})
        f["total"] += 1
        if e["built"]:
            f["built"].append(e["name"])
        else:
            f["reasons"][re.sub(r"\d+", "N", e["reason"] or "?")[:140]] += 1
    return files


def verify_sample(out: Path, files: dict[str, dict], per: int, seed: int, log) -> dict[str, list]:
    from tensile_asm.benchmark.verify import verify_library
    from tensile_asm.library.codeobjects import LibraryFolder

    folder = LibraryFolder(out)
    entries = {sol.get("name"): sol for _, sol, _ in folder.solutions()}
    rng = random.Random(seed)
    results: dict[str, list] = {}
    for file in sorted(files):
        names = sorted(set(files[file]["built"]))
        picked = rng.sample(names, min(per, len(names)))
        results[file] = []
        for name in picked:
            entry = entries[name]
            small, edge = sizes_for(entry)
            use_beta = bool(entry.get("problemType", {}).get("useBeta", True))
            t0 = time.perf_counter()
            runs = []
            for size, beta in ((small, 0.0), (edge, 0.5 if use_beta else 0.0)):
                [r] = verify_library(folder, [size], alpha=-1.25, beta=beta, seed=seed, names={name})
                runs.append((size, beta, r))
            seconds = time.perf_counter() - t0
            results[file].append((name, runs, seconds))
            for size, beta, r in runs:
                state = ("not run: " + r.not_run) if r.not_run else "skipped (predicates)" if r.skipped else \
                    "passed" if r.passed else "FAILED " + "; ".join(c.detail for c in r.results if not c.passed)
                log(f"  {file}: {name} {size} beta {beta:g}: {state}")
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("schedule", choices=sorted(SCHEDULES))
    ap.add_argument("--logic-root", type=Path, default=ROOT.parent / "shared/data/logic/rocblas-asm_full")
    ap.add_argument("--out", type=Path, default=None, help="create-library output (default /tmp/logic-built-<schedule>)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--per-file", type=int, default=1, help="built kernels verified per logic file")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report", type=Path, default=None)
    ap.add_argument("--skip-build", action="store_true", help="reuse --out from an earlier run")
    ap.add_argument("--sample-build", type=int, default=0, metavar="K",
                    help="where the whole schedule cannot be built in the time at hand: per file, accepted/total from "
                         "supports(), and create-library over each file cut to K accepted solutions (seeded)")
    a = ap.parse_args(argv)
    out = a.out or Path(f"/tmp/logic-built-{a.schedule}")
    report = a.report or ROOT / f"bench/rocblas_logic_built_{a.schedule}.md"
    gfx = SCHEDULES[a.schedule]
    accepted = None
    logic_root = a.logic_root
    if a.sample_build:
        t0 = time.perf_counter()
        accepted = accepted_per_file(a.schedule, a.logic_root)
        logic_root = Path(f"{out}-logic")
        if not a.skip_build:
            cut_sample(a.schedule, a.logic_root, logic_root, accepted, a.sample_build, a.seed)
        print(f"supports() over {a.schedule}, logic cut: {time.perf_counter() - t0:.0f} s", flush=True)
    if a.skip_build:
        build_s, cmd = None, "(reused)"
    else:
        build_s, cmd = build(a.schedule, logic_root, out, a.jobs)
        print(f"create-library {a.schedule} ({gfx}), jobs {a.jobs}: {build_s:.0f} s", flush=True)
    support = json.loads((out / "support.json").read_text())
    files = per_file(support)
    built = sum(len(f["built"]) for f in files.values())
    total = sum(f["total"] for f in files.values())
    print(f"built {built}/{total} ({100 * built / total:.1f} %) over {len(files)} logic files", flush=True)
    t0 = time.perf_counter()
    results = verify_sample(out, files, a.per_file, a.seed, lambda s: print(s, flush=True))
    verify_s = time.perf_counter() - t0
    runs = [r for rs in results.values() for _, runs, _ in rs for r in runs]
    ran = [r for _, _, r in runs if not r.not_run and not r.skipped]
    passed = [r for r in ran if r.passed]
    skipped = [r for _, _, r in runs if r.skipped or r.not_run]
    kernels = sum(len(rs) for rs in results.values())
    summary = (f"built {built}/{total} ({100 * built / total:.1f} %) over {len(files)} files; verified {kernels} "
               f"kernels ({len(passed)}/{len(ran)} runs passed, {len(skipped)} skipped by predicates)")
    if accepted is not None:
        acc = sum(len(f["accepted"]) for f in accepted.values())
        tot = sum(f["total"] for f in accepted.values())
        summary = (f"accepted by supports() {acc}/{tot} ({100 * acc / tot:.1f} %) over {len(accepted)} files; "
                   f"of a sample of {a.sample_build} per file, " + summary)
    print(summary, flush=True)

    lines = [f"# rocBLAS {a.schedule} ({gfx}) logic: built per file, and a verified sample", "",
             "Command (times under load: the machine's 2 cores shared with other work):", "",
             f"    PYTHONPATH=$PWD .venv/bin/python tools/logic_build_verify.py {a.schedule} --jobs {a.jobs} "
             f"--per-file {a.per_file} --seed {a.seed}" + (f" --sample-build {a.sample_build}" if a.sample_build
                                                             else ""), "",
             f"create-library: `{cmd.replace(str(a.logic_root), '<logic-root>').replace(str(out), '<out>')}`"
             + (f", {build_s:.0f} s" if build_s is not None else "") + f"; verification {verify_s:.0f} s.", "",
             f"**{summary}.**", "",
             "Built = create-library wrote and assembled the kernel (support.json). Each sampled kernel ran from the "
             "library on the strict emulator (random data, D poisoned, NaN guards after A and B) against the "
             "float64 reference at a small size with beta 0 and at a size of primes past the macro tile (rounded "
             "up to the solution's size-multiple predicates), batch 2 where batched, beta 0.5.", "",
             ]
    if accepted is not None:
        lines += [f"Sampled build: the whole schedule could not be built in the time at hand (machine shared), so per "
                  f"file accepted/total is supports() over every solution (parameters and limits, no kernel "
                  f"written), and create-library ran over each file cut (tools/cut_logic.py) to {a.sample_build} "
                  f"accepted solutions drawn with seed {a.seed}: built/sampled is of that sample (a kernel whose "
                  f"registers overflow is found only when written).", ""]
    lines += ["| logic file | " + ("accepted/total | built/sampled" if accepted else "built/total") +
              " | not built (first reason, digits as N) | verified (sizes, beta) |",
              "|---|---:|" + ("---:|" if accepted else "") + "---|---|"]
    for file in sorted(set(files) | set(accepted or {})):
        f = files.get(file, {"built": [], "total": 0, "reasons": collections.Counter()})
        counts, reasons_of = f"{len(f['built'])}/{f['total']}", f["reasons"]
        if accepted is not None:
            counts = f"{len(accepted[file]['accepted'])}/{accepted[file]['total']} | {counts}"
            reasons_of = accepted[file]["reasons"] + f["reasons"]
        reasons = "<br>".join(f"{n} {r}" for r, n in reasons_of.most_common()) or ""
        ver = []
        for name, runs, seconds in results.get(file, []):
            parts = []
            for size, beta, r in runs:
                state = "not run" if r.not_run else "skipped" if r.skipped else "ok" if r.passed else "FAIL"
                parts.append(f"{size} b{beta:g} {state}")
            ver.append(f"`{name[:60]}{'...' if len(name) > 60 else ''}`: " + ", ".join(parts))
        lines.append(f"| {file} | {counts} | {reasons.replace('|', '/')} | "
                     f"{'<br>'.join(ver) or '(none built)'} |")
    failed = [(file, name, size, beta, r) for file, rs in results.items() for name, runs, _ in rs
              for size, beta, r in runs if not r.not_run and not r.skipped and not r.passed]
    if failed:
        lines += ["", "Failures:", ""]
        for file, name, size, beta, r in failed:
            lines.append(f"- {file} {name} {size} beta {beta:g}: "
                         + "; ".join(c.detail for c in r.results if not c.passed))
    report.write_text("\n".join(lines) + "\n")
    print(f"wrote {report}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
