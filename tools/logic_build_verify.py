"""Build rocBLAS schedules' logic with create-library, ONE LOGIC FILE AT A TIME (every solution of it), then verify
a seeded sample of the built kernels of every logic file on the emulator at edge sizes; write
bench/rocblas_logic_built_<schedule>.md.

    # build (restartable: a file whose OUT/<schedule>/<file>/support.json exists is not built again):
    PYTHONPATH=$PWD .venv/bin/python tools/logic_build_verify.py vega10 vega20 ... --build-only [--jobs N]
        [--cache-dir DIR] [--out DIR] [--source DIR] [--build-budget SECONDS]
    # table and verification (per schedule; files not built yet are listed as such):
    PYTHONPATH=$PWD .venv/bin/python tools/logic_build_verify.py vega20 --skip-build [--per-file 1] [--seed 1]
        [--verify-budget SECONDS] [--out DIR] [--report PATH]

1. per logic file, ``tensile-create-library --architecture <gfx> --jobs N <dir holding that file> OUT/<schedule>/<file>``
   (timed; ``--source``: the tensile_asm tree it runs from, e.g. a frozen export, so that the checkout can move on;
   its commit is recorded in OUT/<schedule>/<file>/build.json). Schedules in the order given, the files of each
   in an order shuffled with ``--seed``, so that a build cut short (``--build-budget``, or stopped) leaves the
   schedule it was in with complete files drawn without bias;
2. from each file's ``support.json``: built/total and the not-built reasons grouped (digits as N);
3. per logic file, ``--per-file`` built solutions drawn with ``random.Random(f"{seed}/{file}")``, each run from its
   library (``benchmark.verify.verify_library``: its code object and GlobalSplitU helper as a launcher finds them, strict
   emulator, random A/B/C, D poisoned, NaN guards past A and B) at two sizes (``sizes_for``, rounded by
   benchmark.sample's one sampling rule, ``size_constraints``/``round_up``/``next_prime``): the smallest its
   predicates admit (1 x 1 x 1 unless they ask more), batch 1, beta 0; primes past the macro tile's M, half its N
   and 2 x DepthU (rounded up to what the predicates admit), batch 2 where the file is batched, beta 0.5 (0
   without UseBeta).
   UseInitialStrides solutions (SBIc/SBIIc files) get first strides as benchmark.sample.initial_strides chooses.
   Sizes the solution's predicates refuse (e.g. GlobalSplitUCheckMinK) are listed as skipped, not run. With
   ``--verify-budget`` no new kernel is started after that many seconds; the files left are listed as not verified.
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
def sizes_for(entry: dict):
    """(small size, edge size) for a library solution entry, by the sampling rule's helpers
    (``benchmark.sample.size_constraints``, ``round_up``, ``next_prime``: the predicates' multiples, minimums,
    maximums and fixed values): the smallest size admitted, batch 1; M the first prime past the macro tile's M, N
    the first prime past half its N, K the first prime past 2 x DepthU, batch 2 where the problem is batched, each
    rounded up to what the predicates admit."""
    from tensile_asm.benchmark.sample import next_prime, round_up, size_constraints
    from tensile_asm.problem import GemmSize

    sm = entry.get("sizeMapping", {})
    mt0, mt1 = sm.get("macroTile", [16, 16])[:2]
    du = sm.get("depthU", 8)
    batched = "Cijk" in entry.get("problemType", {}).get("operationIdentifier", "Cijk")
    c = size_constraints(entry.get("problemPredicate", {}), batched)
    small = round_up(GemmSize(1, 1, 1, 1), c)
    edge = round_up(GemmSize(next_prime(mt0), next_prime(mt1 // 2), next_prime(2 * du), 2 if batched else 1), c)
    return small, edge


def _commit(source: Path) -> str:
    r = subprocess.run(["git", "-C", str(source), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if r.returncode == 0 and (source / ".git").exists():
        dirty = subprocess.run(["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return r.stdout.strip() + ("+uncommitted changes" if dirty else "")
    mark = source / "COMMIT"            # an export (git archive) of a commit carries it in this file
    return mark.read_text().strip() if mark.exists() else "unknown"


def logic_files(logic_root: Path, schedule: str) -> list[str]:
    files = sorted(p.name for p in (logic_root / schedule).glob("*.yaml"))
    if not files:
        sys.exit(f"{logic_root / schedule}: no logic files (*.yaml) there; give the folder holding the schedules' "
                 "folders with --logic-root")
    return files


def build_order(schedules: list[str], logic_root: Path, seed: int) -> list[tuple[str, str]]:
    """(schedule, file): the schedules in the order given, each one's files shuffled with ``seed`` (a build cut
    short leaves the last schedule with complete files drawn without bias)."""
    order = []
    for s in schedules:
        files = logic_files(logic_root, s)
        random.Random(seed).shuffle(files)
        order += [(s, f) for f in files]
    return order


def build_file(schedule: str, file: str, logic_root: Path, out: Path, jobs: int, cache_dir: Path | None,
               source: Path, commit: str) -> dict:
    """create-library over one logic file into out/<schedule>/<stem>; writes and returns build.json's record."""
    stem = file[:-len(".yaml")]
    dest = out / schedule / stem
    logic = out / "logic" / schedule / stem       # a folder holding just this file (a link to it)
    logic.mkdir(parents=True, exist_ok=True)
    if not (logic / file).exists():
        (logic / file).symlink_to((logic_root / schedule / file).resolve())
    cmd = [sys.executable, "-m", "tensile_asm.cli.create_library", "--architecture", SCHEDULES[schedule],
           "--jobs", str(jobs), "--print-timing", "--quiet"]
    cmd += ["--cache-dir", str(cache_dir)] if cache_dir else []
    t0, load0 = time.perf_counter(), os.getloadavg()[0]
    r = subprocess.run(cmd + [str(logic), str(dest)], cwd=source, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(source)})
    record = {"schedule": schedule, "file": file, "returncode": r.returncode, "commit": commit,
              "seconds": round(time.perf_counter() - t0, 1), "load_before": load0, "load_after": os.getloadavg()[0],
              "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "command": "create-library " + " ".join(cmd[4:]) + f" <{file}> <out>",
              "output": (r.stdout + r.stderr)[-3000:]}
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "build.json").write_text(json.dumps(record, indent=1))
    return record


def build_all(schedules: list[str], logic_root: Path, out: Path, jobs: int, cache_dir: Path | None, source: Path,
              seed: int, budget: float | None, rebuild: bool, log) -> None:
    commit = _commit(source)
    t0 = time.perf_counter()
    for schedule, file in build_order(schedules, logic_root, seed):
        dest = out / schedule / file[:-len(".yaml")]
        if (dest / "support.json").exists() and not rebuild:
            continue
        if budget is not None and time.perf_counter() - t0 >= budget:
            log(f"build budget of {budget:.0f} s spent: not starting {schedule}/{file} and the files after it")
            return
        rec = build_file(schedule, file, logic_root, out, jobs, cache_dir, source, commit)
        state = "ok" if rec["returncode"] == 0 else f"FAILED ({rec['returncode']}): {rec['output'][-500:]}"
        log(f"{schedule}/{file}: {rec['seconds']:.0f} s, load {rec['load_after']:.1f}: {state}")


def read_file_results(out: Path, schedule: str, files: list[str]) -> dict[str, dict]:
    """Per logic file: built names, total, grouped reasons, build record; ``None`` fields where not built yet."""
    res: dict[str, dict] = {}
    for file in files:
        dest = out / schedule / file[:-len(".yaml")]
        rec = json.loads((dest / "build.json").read_text()) if (dest / "build.json").exists() else None
        f = {"record": rec, "total": None, "built": [], "reasons": collections.Counter(), "out": dest}
        if (dest / "support.json").exists():
            support = json.loads((dest / "support.json").read_text())
            f["total"] = len(support)
            for e in support:
                if e["built"]:
                    f["built"].append(e["name"])
                else:
                    why = re.sub(r"^kernel \S+: ", "", e["reason"] or "?")   # grouped by cause, not kernel
                    f["reasons"][re.sub(r"\d+", "N", why)[:160]] += 1
        res[file] = f
    return res


def _run_record(size, beta: float, r) -> dict:
    """One verification run as verify.json keeps it: state ok / FAIL / skipped (predicates) / not run."""
    crash = (r.not_run or "").startswith("CRASH")
    state = ("FAIL" if crash else "not run" if r.not_run else "skipped" if r.skipped else "ok" if r.passed else
             "FAIL")
    detail = r.not_run or "; ".join(c.detail for c in r.results if not c.passed)
    return {"size": str(size), "beta": beta, "state": state, "detail": detail}


def verify_sample(files: dict[str, dict], per: int, seed: int, budget: float | None, reverify: bool, log) -> None:
    """Per built file, ``per`` built kernels drawn with random.Random(f"{seed}/{file}"), each at sizes_for's two sizes;
    the runs go to OUT/<schedule>/<file>/verify.json (a file verified before with the same seed and count is not run
    again unless ``reverify``). With ``budget`` (seconds) no file is started once it is spent."""
    from tensile_asm.benchmark.verify import SolutionResult, verify_library
    from tensile_asm.library.codeobjects import LibraryFolder

    # each file's draw is its own (seeded by seed and the file's name): the same kernels whichever other files are
    # built yet, so verification can run beside a build and resume after it
    picks = {file: random.Random(f"{seed}/{file}").sample(sorted(set(f["built"])), min(per, len(set(f["built"]))))
             for file, f in files.items()}
    order = sorted(picks)
    random.Random(seed).shuffle(order)  # a budget cut short leaves an unbiased subset of files verified
    t0 = time.perf_counter()
    for file in order:
        record = files[file]["out"] / "verify.json"
        if not picks[file] or (not reverify and record.exists() and
                               json.loads(record.read_text()).get("key") == [seed, per]):
            continue
        if budget is not None and time.perf_counter() - t0 >= budget:
            log(f"verification budget of {budget:.0f} s spent: {file} and the files after it not verified")
            break
        folder = LibraryFolder(files[file]["out"])
        entries = {sol.get("name"): sol for _, sol, _ in folder.solutions()}
        kernels = []
        for name in picks[file]:
            entry = entries[name]
            small, edge = sizes_for(entry)
            pt = entry.get("problemType", {})
            t1 = time.perf_counter()
            runs = []
            for size, beta in ((small, 0.0), (edge, 0.5 if pt.get("useBeta", True) else 0.0)):
                first = ld = None
                if pt.get("useInitialStridesAB") or pt.get("useInitialStridesCD"):
                    from tensile_asm.benchmark.sample import initial_strides   # as its predicates allow
                    first, ld = initial_strides(entry, size)
                try:
                    rs = verify_library(folder, [size], alpha=-1.25, beta=beta, seed=seed, names={name},
                                        first_stride=first, ld=ld)
                    # a logic file may hold the same kernel twice (two SolutionIndex, one name): each entry runs,
                    # the record keeps a failed one if any, else one that ran, else the first
                    r = min(rs, key=lambda x: (x.passed, x.not_run is not None or not x.results))
                except Exception as e:  # a crash in the launcher or emulator is a finding, not the end of the run
                    r, rs = SolutionResult(name, None, None, [], [], f"CRASH {type(e).__name__}: {e}"), [None]
                run = _run_record(size, beta, r)
                if len(rs) > 1:
                    run["detail"] = (f"{len(rs)} library entries of this name, all run; " + run["detail"]).rstrip("; ")
                runs.append(run)
                log(f"  {file}: {name} {size} beta {beta:g}: {run['state']} {run['detail']}".rstrip())
            kernels.append({"name": name, "runs": runs, "seconds": round(time.perf_counter() - t1, 1)})
        record.write_text(json.dumps({"key": [seed, per], "kernels": kernels,
                                      "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}, indent=1))


def read_verified(files: dict[str, dict], seed: int, per: int) -> dict[str, list]:
    out = {}
    for file, f in files.items():
        record = f["out"] / "verify.json"
        if record.exists():
            data = json.loads(record.read_text())
            if data.get("key") == [seed, per]:
                out[file] = data["kernels"]
    return out


def report(schedule: str, files: dict[str, dict], results: dict[str, list], a, verify_s: float) -> tuple[str, str]:
    """(summary line, markdown)."""
    gfx = SCHEDULES[schedule]
    done = {f: v for f, v in files.items() if v["total"] is not None}
    built = sum(len(v["built"]) for v in done.values())
    total = sum(v["total"] for v in done.values())
    runs = [r for ks in results.values() for k in ks for r in k["runs"]]
    ran = [r for r in runs if r["state"] in ("ok", "FAIL")]
    failed = [r for r in runs if r["state"] == "FAIL"]
    skipped = [r for r in runs if r["state"] not in ("ok", "FAIL")]
    kernels = sum(len(rs) for rs in results.values())
    with_built = [f for f, v in done.items() if v["built"]]
    commits = sorted({v["record"]["commit"] for v in done.values() if v["record"]})
    build_s = sum(v["record"]["seconds"] for v in done.values() if v["record"])
    pct = f"{100 * built / total:.1f} %" if total else "-"
    summary = (f"{schedule} ({gfx}): built {built}/{total} ({pct}) over {len(done)}/{len(files)} logic files built in "
               f"full; verified {kernels} kernels of {len(results)}/{len(with_built)} files with built kernels: "
               f"{len(ran) - len(failed)}/{len(ran)} runs passed, {len(failed)} failed, {len(skipped)} skipped by "
               f"predicates")
    lines = [f"# rocBLAS {schedule} ({gfx}) logic: every solution through create-library, per file, and a verified "
             "sample", "",
             f"**{summary}.**", "",
             f"Code: commit {', '.join(commits) or '?'} (each file's build records it). Commands (times under load: "
             "the machine's 2 cores shared with six other helpers' work; the build ran under `nice -n 19`):", "",
             f"    nice -n 19 env PYTHONPATH=$PWD .venv/bin/python tools/logic_build_verify.py {schedule} ... "
             "--build-only --jobs 2 --cache-dir DIR --out OUT [--source EXPORT]",
             f"    PYTHONPATH=$PWD .venv/bin/python tools/logic_build_verify.py {schedule} --skip-build --out OUT "
             f"--per-file {a.per_file} --seed {a.seed}" + (f" --verify-budget {a.verify_budget:.0f}"
                                                         if a.verify_budget else ""), "",
             f"Build: one create-library per logic file (`--architecture {gfx} --jobs 2`), {build_s:.0f} s in all "
             f"for the {len(done)} files (load average {_load_range(done)}); verification in this run {verify_s:.0f} s (each kernel's seconds in OUT/<schedule>/<file>/verify.json).", "",
             "Measured: **built** = create-library wrote the kernel and LLVM assembled and linked it into the "
             "library (support.json says built); the reasons are support.json's for the others (the writer's "
             "supports() refusal, or the failure found when writing, e.g. registers that do not fit). **Verified** "
             "= the sampled kernel launched from the library's code object on the strict emulator (random A/B/C, D "
             "poisoned, NaN past the ends of A and B) matched the float64 numpy reference, at the smallest size its "
             "predicates admit (1 x 1 x 1 unless they ask more) with beta 0 and at a size of primes past the macro "
             "tile's M, half its N and 2 x DepthU (rounded up to what the predicates admit: benchmark.sample's "
             "size_constraints/round_up), batch 2 where the file is batched, beta 0.5. "
             "Not measured: speed, and the solutions not sampled.", "",
             "| logic file | built/total | not built (reason, digits as N) | build s | verified (size, beta: result) |",
             "|---|---:|---|---:|---|"]
    for file in sorted(files):
        v = files[file]
        if v["total"] is None:
            rec = v["record"]
            why = (f"create-library failed ({rec['returncode']}): {rec['output'][-300:]}" if rec else
                   "not built in the time of this run")
            lines.append(f"| {file} | - | {why.replace('|', '/').replace(chr(10), ' ')} | | |")
            continue
        reasons = "<br>".join(f"{n} {r}" for r, n in v["reasons"].most_common())
        ver = []
        for k in results.get(file, []):
            name = k["name"]
            ver.append(f"`{name[:60]}{'...' if len(name) > 60 else ''}`: " +
                       ", ".join(f"{r['size']} b{r['beta']:g} {r['state']}" for r in k["runs"]))
        verified = "<br>".join(ver) or ("(none built)" if not v["built"] else "not verified (budget)")
        lines.append(f"| {file} | {len(v['built'])}/{v['total']} | {reasons.replace('|', '/')} | "
                     f"{v['record']['seconds']:.0f} | {verified} |" if v["record"] else
                     f"| {file} | {len(v['built'])}/{v['total']} | {reasons.replace('|', '/')} | | {verified} |")
    grouped = collections.Counter()
    for v in done.values():
        grouped.update(v["reasons"])
    if grouped:
        lines += ["", "Not built, all files together:", "", "```"]
        lines += [f"{n:6d} {r}" for r, n in grouped.most_common()] + ["```"]
    fails = [(file, k["name"], r) for file, ks in results.items() for k in ks for r in k["runs"]
             if r["state"] == "FAIL"]
    if fails:
        lines += ["", "Verification failures:", ""]
        for file, name, r in fails:
            lines.append(f"- {file} `{name}` {r['size']} beta {r['beta']:g}: {r['detail']}")
    return summary, "\n".join(lines) + "\n"


def _load_range(done: dict) -> str:
    loads = [x for v in done.values() if v["record"] for x in (v["record"]["load_before"], v["record"]["load_after"])]
    return f"{min(loads):.1f}-{max(loads):.1f}" if loads else "?"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("schedules", nargs="+", choices=sorted(SCHEDULES))
    ap.add_argument("--logic-root", type=Path, default=ROOT.parent / "shared/data/logic/rocblas-asm_full")
    ap.add_argument("--out", type=Path, default=Path("/tmp/logic-built"),
                    help="per-file create-library outputs go to OUT/<schedule>/<file> (default /tmp/logic-built)")
    ap.add_argument("--source", type=Path, default=ROOT,
                    help="the tensile_asm tree create-library runs from (default this checkout)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cache-dir", type=Path, default=None, help="create-library's kernel cache")
    ap.add_argument("--build-only", action="store_true", help="build, and write no table")
    ap.add_argument("--skip-build", action="store_true", help="build nothing: table and verification from OUT")
    ap.add_argument("--rebuild", action="store_true", help="build files already built in OUT again")
    ap.add_argument("--build-budget", type=float, default=None, metavar="SECONDS",
                    help="start no file build after this many seconds")
    ap.add_argument("--per-file", type=int, default=1, help="built kernels verified per logic file")
    ap.add_argument("--verify-budget", type=float, default=None, metavar="SECONDS",
                    help="start no kernel's verification after this many seconds (per schedule)")
    ap.add_argument("--reverify", action="store_true",
                    help="verify files again that OUT/<schedule>/<file>/verify.json says were verified (same seed)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report", type=Path, default=None,
                    help="the table (default bench/rocblas_logic_built_<schedule>.md; one schedule only)")
    a = ap.parse_args(argv)
    if a.report and len(a.schedules) > 1:
        ap.error("--report names one file: give one schedule with it")
    if not a.skip_build:
        build_all(a.schedules, a.logic_root, a.out, a.jobs, a.cache_dir, a.source, a.seed, a.build_budget,
                  a.rebuild, lambda s: print(s, flush=True))
    if a.build_only:
        return 0
    failed = 0
    for schedule in a.schedules:
        files = read_file_results(a.out, schedule, logic_files(a.logic_root, schedule))
        t0 = time.perf_counter()
        verify_sample(files, a.per_file, a.seed, a.verify_budget, a.reverify, lambda s: print(s, flush=True))
        results = read_verified(files, a.seed, a.per_file)
        summary, text = report(schedule, files, results, a, time.perf_counter() - t0)
        path = a.report or ROOT / f"bench/rocblas_logic_built_{schedule}.md"
        path.write_text(text)
        print(summary, flush=True)
        print(f"wrote {path}", flush=True)
        failed += sum(r["state"] == "FAIL" for ks in results.values() for k in ks for r in k["runs"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
