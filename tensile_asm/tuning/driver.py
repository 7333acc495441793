"""``tensile-asm tune CONFIG OUT``: Tensile's tuning steps in Tensile's folders.

  OUT/1_BenchmarkProblems/<ProblemType>_<NN>/00_Final/   solutions.yaml (candidates), rejected.yaml (every fork
                                                          not benchmarked, with its reason), source/*.co (one code
                                                          object per candidate), results*.jsonl (one line per
                                                          solution and size, all shards')
  OUT/1_BenchmarkProblems/<ProblemType>_<NN>/Data/        00_Final.csv (Tensile's client layout), 00_Final.yaml
  OUT/2_BenchmarkData/<ProblemType>_<NN>.csv / .yaml      as Tensile copies them
  OUT/3_LibraryLogic/<Schedule>_<ProblemType>.yaml        one per problem type (size groups merged), winners only
  OUT/4_LibraryClient/                                    the library built from 3_LibraryLogic (create-library)

Steps 3 and 4 run when the config has a LibraryLogic section (as Tensile) or ``library_logic`` is forced.
A rerun keeps every (solution, size) result already recorded unless ForceRedoBenchmarkProblems is true (then
its own results file is redone; shards' files are kept for the merging run); a
config whose forks changed gets new candidate names, so only matching results are reused. ``shard=(I, N)``
benchmarks the candidates whose fork index is I modulo N and stops after step 1; a run without shard then
finds every shard's results and finishes the remaining steps.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tensile_asm.errors import UserError
from tensile_asm.progress import ProgressBar
from tensile_asm.runtime.base import GemmSize, TimingProtocol, get_runtime
from tensile_asm.tuning.candidates import Candidate, assign_keys, build_candidates, make_candidates
from tensile_asm.tuning.config import TuningConfig, read_config
from tensile_asm.tuning.results import Result, ResultWriter, benchmark_csv, load_results, results_file
from tensile_asm.tuning.winners import pick_winners, write_logic

# the emulator backend runs sizes up to this many flops (larger ones are not emulated: recorded as not run)
EMULATOR_MAX_FLOPS = 2 * 160 ** 3


@dataclass
class GroupReport:
    name: str
    forks: int
    candidates: list[Candidate]
    sizes: int
    benchmarked: int = 0
    reused: int = 0
    winners: list = field(default_factory=list)
    no_winner: list = field(default_factory=list)

    @property
    def built(self) -> int:
        return sum(1 for c in self.candidates if c.ok)

    @property
    def rejected(self) -> int:
        return len(self.candidates) - self.built


@dataclass
class TuneReport:
    out: Path
    backend: str
    arch: str
    groups: list[GroupReport]
    logic_files: list[Path]
    library: Path | None
    notes: list[str]
    selections: dict = field(default_factory=dict)     # logic file -> [tuning.selection.Choice]


def isa_of(arch: str) -> list[int]:
    """gfx90a -> [9, 0, 10] (Tensile's ISA tuple)."""
    digits = arch[3:]
    return [int(digits[:-2]), int(digits[-2], 16), int(digits[-1], 16)]


def _validation_sizes(c: Candidate, sizes) -> list[GemmSize]:
    """Small sizes for the emulator: the config's sizes it can run, else one derived from the tile that is not a
    multiple of it (two tiles and a bit along M and N, two DepthU steps and one along K)."""
    small = [GemmSize(s.m, s.n, s.k, s.batch) for s in sizes if s.flops <= EMULATOR_MAX_FLOPS]
    if small:
        return small[:3]
    d = c.solution.derived
    s = sizes[0]
    return [GemmSize(min(s.m, 2 * d.mt0 + 3), min(s.n, 2 * d.mt1 + 5), min(s.k, 2 * d.depth_u + 1), min(s.batch, 2))]


def tune(config_path, out_dir, backend: str = "model", arch: str | None = None, device: str | None = None,
         shard: tuple[int, int] | None = None, jobs: int | None = None, cache_dir=None, progress: bool | None = None,
         library_logic: bool = False, overrides: dict | None = None, maps: bool = False,
         selection: str = "nearest", selection_sizes=(), log=print) -> TuneReport:
    """``selection`` (tuning.selection): how sizes not benchmarked get a solution -- ``nearest`` (Tensile's: the
    library's distance to the exact rows) or ``model`` (the analytical model ranks the winners at each of
    ``selection_sizes``, M,N,K[,B] tuples, and its pick becomes an exact row)."""
    from tensile_asm.tuning.selection import SELECTIONS
    if selection not in SELECTIONS:
        raise UserError(f"--selection {selection!r}: use one of {', '.join(SELECTIONS)}")
    if selection == "model" and not selection_sizes:
        raise UserError("--selection model ranks the winners at the sizes given with --selection-size M,N,K[,B]; "
                        "give at least one")
    cfg = read_config(config_path, overrides)
    out = Path(out_dir)
    gp = cfg.global_parameters
    quiet = int(gp.get("PrintLevel", 1)) == 0
    say = (lambda *a: None) if quiet else log
    if progress is None:
        progress = bool(gp["ShowProgressBar"]) and sys.stderr.isatty()
    arch_name = _arch_name(cfg, arch, device)
    from tensile_asm.isa.arch import known_architectures, load_arch
    arch_obj, arch_error = None, None
    try:
        arch_obj = load_arch(arch_name)
    except UserError:
        arch_error = (f"architecture {arch_name} is not one this project writes kernels for "
                      f"({', '.join(known_architectures())})")
    if shard is not None and not (0 <= shard[0] < shard[1]):
        raise UserError(f"--shard {shard[0]}/{shard[1]}: I must be 0..N-1")
    options = {"device": device} if backend in ("model", "emulator") else {"monitor": bool(gp["HardwareMonitor"])}
    runtime = get_runtime(backend, **options)
    protocol = TimingProtocol.from_global_parameters(gp).check()
    from tensile_asm.library.create import default_jobs
    jobs = jobs or default_jobs()
    notes = list(cfg.notes)
    reports: list[GroupReport] = []
    by_type: dict[str, list] = {}
    for problem in cfg.problems:
        for group in problem.groups:
            notes += group.notes
            rep = _run_group(cfg, problem, group, out, runtime, protocol, arch_obj, arch_name, arch_error, shard,
                             jobs, cache_dir, progress, say)
            reports.append(rep)
            if problem.problem_type is not None:
                by_type.setdefault(problem.problem_type.name, []).append((problem, rep))
    if maps and shard is None:
        from tensile_asm.tuning.maps import write_maps
        provenance = runtime.provenance
        for problem in cfg.problems:
            for group in problem.groups:
                rep = next(r for r in reports if r.name == f"{problem.name}_{group.index:02d}")
                for path in write_maps(rep.name, group.sizes, rep.winners, out / "maps", provenance):
                    say(f"map        {path}")
    logic_files: list[Path] = []
    library = None
    do_logic = (cfg.library_logic is not None or library_logic) and shard is None
    if shard is not None:
        say(f"shard {shard[0]}/{shard[1]} done; run again without --shard to merge the shards' results and "
            f"write the logic files")
    elif not do_logic:
        say("no LibraryLogic section in the config: steps 3_LibraryLogic and 4_LibraryClient are skipped, as Tensile "
            "does (--library-logic writes them anyway)")
    if do_logic:
        logic_files, selections = _write_logic(cfg, by_type, out, arch_name, say, selection, selection_sizes, device)
        if logic_files and arch_error is None:
            library = _library_client(cfg, out, arch_name, jobs, cache_dir, progress, say)
    else:
        selections = {}
    return TuneReport(out, backend, arch_name, reports, logic_files, library, notes, selections)


def _arch_name(cfg: TuningConfig, arch: str | None, device: str | None) -> str:
    if arch:
        return arch
    if device:
        from tensile_asm.runtime.devices import device as device_named
        return device_named(device).arch
    if cfg.library_logic and cfg.library_logic.get("ArchitectureName") not in (None, "gfx000", "fallback"):
        return str(cfg.library_logic["ArchitectureName"])
    raise UserError(f"{cfg.path}: the config names no architecture (LibraryLogic ArchitectureName); say which to "
                    f"build for with --arch, e.g. --arch gfx90a, or --device mi210")


def _run_group(cfg, problem, group, out: Path, runtime, protocol, arch_obj, arch_name, arch_error, shard, jobs,
               cache_dir, progress, say) -> GroupReport:
    from tensile_asm.gemm import GemmKernelContract
    from tensile_asm.library.fileio import dump_yaml, write_atomic

    gp = cfg.global_parameters
    name = f"{problem.name}_{group.index:02d}"
    group_dir = out / "1_BenchmarkProblems" / name
    step_dir = group_dir / "00_Final"
    data_dir = group_dir / "Data"
    cands = make_candidates(problem, group, arch_obj, arch_error)
    if arch_obj is not None:
        isa = isa_of(arch_name)
        for c in cands:
            if c.solution is not None:
                c.solution.params["ISA"] = isa
        assign_keys(cands, arch_obj)
    rep = GroupReport(name, len(cands), cands, len(group.sizes))
    mine = [c for c in cands if c.ok and (shard is None or c.fork % shard[1] == shard[0])]
    say(f"{name}: {len(cands)} forks, {sum(c.ok for c in cands)} buildable, {len(group.sizes)} sizes"
        + (f" (shard {shard[0]}/{shard[1]}: {len(mine)} candidates)" if shard else ""))
    if gp.get("PrintSolutionRejectionReason"):
        for c in cands:
            if not c.ok:
                say(f"  fork {c.fork}: {c.reason}")
    step_dir.mkdir(parents=True, exist_ok=True)
    build_candidates(mine, arch_obj, step_dir / "source", cache_dir, jobs, progress)
    built = [c for c in cands if c.ok]
    write_atomic(step_dir / "solutions.yaml", dump_yaml(
        [{"MinimumRequiredVersion": gp["MinimumRequiredVersion"]},
         {"ProblemSizes": [{"Exact": list(s.sizes)} for s in group.sizes]}]
        + [dict(c.solution.to_logic_dict(), SolutionNameMin=c.name) for c in built]))
    write_atomic(step_dir / "rejected.yaml", dump_yaml(
        [{"fork": c.fork, "reason": c.reason, "parameters": c.params} for c in cands if not c.ok]))
    # benchmark
    # ForceRedoBenchmarkProblems redoes this run's own results; shards' results are what a run without
    # --shard merges, so they are kept (delete results.shard-* to redo them)
    if gp["ForceRedoBenchmarkProblems"]:
        results_file(step_dir, shard).unlink(missing_ok=True)
    runtime_id = f"{runtime.name}:{getattr(runtime, 'device', None) or ''}"
    done = load_results(step_dir, runtime_id)
    writer = ResultWriter(results_file(step_dir, shard))
    todo = [(c, s) for c in mine for s in group.sizes if (c.key, s.sizes) not in done]
    rep.reused = sum(1 for c in mine for s in group.sizes if (c.key, s.sizes) in done)
    bar = ProgressBar(len(todo), f"benchmarks ({runtime.name})", progress)
    failed_validation: dict[str, str] = {}
    try:
        for c, s in todo:
            contract = GemmKernelContract.from_solution(c.solution, c.name)
            r = _one(runtime, c, s, contract, protocol, group.sizes, failed_validation)
            r.kernel, r.runtime = c.key, runtime_id
            writer.add(r)
            rep.benchmarked += 1
            bar.step()
    finally:
        bar.close()
        writer.close()
    if shard is not None or problem.problem_type is None:
        return rep          # a shard stops here; a problem type not read has no sizes to report
    results = load_results(step_dir, runtime_id)
    data_dir.mkdir(parents=True, exist_ok=True)
    csv_text = benchmark_csv(problem.problem_type, group.sizes, built, results, gp["PerformanceMetric"], runtime.name)
    write_atomic(data_dir / "00_Final.csv", csv_text)
    shutil.copyfile(step_dir / "solutions.yaml", data_dir / "00_Final.yaml")
    bench = out / "2_BenchmarkData"
    bench.mkdir(parents=True, exist_ok=True)
    write_atomic(bench / f"{name}.csv", csv_text)
    shutil.copyfile(step_dir / "solutions.yaml", bench / f"{name}.yaml")
    missing = [c.name for c in built for s in group.sizes if (c.key, s.sizes) not in results]
    if missing:
        say(f"{name}: {len(missing)} (solution, size) results missing (a shard not run yet?); winners use the rest")
    rep.winners, rep.no_winner = pick_winners(group.sizes, built, results)
    return rep


def _one(runtime, c: Candidate, s, contract, protocol, sizes, failed_validation) -> Result:
    from tensile_asm.errors import EmulationError

    size = GemmSize(s.m, s.n, s.k, s.batch)
    if runtime.computes_d and c.name not in failed_validation:
        # validate each candidate once, at small sizes on the emulator, at the benchmark's sizes on a GPU
        small = _validation_sizes(c, sizes) if runtime.name == "emulator" else [size]
        beta = 0.5 if contract.use_beta else 0.0
        try:
            v = runtime.validate(c.code_object, contract, small, 1.5, beta, seed=c.fork)
            bad = [r for r in v.results if not r.passed]
            failed_validation[c.name] = (f"validation failed at {bad[0].size}: {bad[0].detail or 'wrong values'}"
                                         if bad else "")
        except (UserError, EmulationError) as e:
            failed_validation[c.name] = f"validation could not run: {e}"
    reason = failed_validation.get(c.name, "")
    if reason:
        return Result(c.name, list(s.sizes), -1.0, None, runtime.name, runtime.provenance, False, reason)
    if runtime.name == "emulator" and s.flops > EMULATOR_MAX_FLOPS:
        return Result(c.name, list(s.sizes), -1.0, None, runtime.name, runtime.provenance, False,
                      f"not run: {s} is too large to emulate (more than {EMULATOR_MAX_FLOPS} flops)")
    try:
        t = runtime.time_gemm(c.code_object, contract, size, protocol)
    except UserError as e:
        return Result(c.name, list(s.sizes), -1.0, None, runtime.name, runtime.provenance, False, str(e))
    return Result(c.name, list(s.sizes), t.gflops, t.microseconds, t.backend, t.provenance, True, t.detail)


def _write_logic(cfg: TuningConfig, by_type: dict, out: Path, arch: str, say, selection: str = "nearest",
                 selection_sizes=(), device: str | None = None) -> tuple[list[Path], dict]:
    from tensile_asm.library.fileio import write_atomic
    from tensile_asm.library.logic import schedule_alias
    from tensile_asm.tuning import selection as sel

    ll = cfg.library_logic or {}
    schedule = ll.get("ScheduleName") or "Tensile"
    try:
        alias = schedule_alias(arch)
    except UserError:
        alias = None
    if alias and alias not in schedule:
        if cfg.library_logic is not None:
            say(f"LibraryLogic ScheduleName {schedule!r} does not contain {alias!r}, the name create-library "
                f"looks for with {arch}; the logic files are named {alias}_<ProblemType>.yaml")
        schedule = alias
    devices = ll.get("DeviceNames") or ["fallback"]
    logic_dir = out / "3_LibraryLogic"
    fresh = any(rep.benchmarked for entries in by_type.values() for _, rep in entries)
    # the selection asked for is part of what the logic files hold: another one redoes them
    stamp = f"{selection} {sorted(tuple(s) for s in selection_sizes)}\n"
    stamp_file = logic_dir / "selection.txt"
    same = stamp_file.is_file() and stamp_file.read_text() == stamp
    if logic_dir.is_dir() and any(logic_dir.glob("*.yaml")) and not cfg.global_parameters["ForceRedoLibraryLogic"] \
            and not fresh and same:
        say("3_LibraryLogic already written from these results (ForceRedoLibraryLogic false): kept")
        return sorted(logic_dir.glob("*.yaml")), {}
    logic_dir.mkdir(parents=True, exist_ok=True)
    files, chosen = [], {}
    for pt_name, entries in by_type.items():
        winners = [w for _, rep in entries for w in rep.winners]
        if not winners:
            say(f"{pt_name}: no valid result at any size; no logic file")
            continue
        pt = entries[0][0].problem_type
        path = logic_dir / f"{schedule}_{pt_name}.yaml"
        wanted = [sel.tuning_size(pt, s, "--selection-size") for s in selection_sizes]
        measured = {tuple(w.sizes) for w in winners}
        if selection == "model":
            added = sel.model_rows(winners, wanted, device)
            winners = winners + added
            if added:
                say(f"{pt_name}: {len(added)} size(s) chosen by the model (modelled rows in the logic file)")
        write_logic(path, schedule=schedule, arch=arch, device_names=devices, problem_type=pt, winners=winners)
        files.append(path)
        if wanted:
            chosen[path] = sel.choices(path, selection, wanted, measured)
            write_atomic(sel.selection_path(path), sel.selection_csv(chosen[path]))
    write_atomic(stamp_file, stamp)
    return files, chosen


def _library_client(cfg, out: Path, arch: str, jobs, cache_dir, progress, say) -> Path | None:
    from tensile_asm.library.create import create_library

    lib = out / "4_LibraryClient"
    logic_time = max(p.stat().st_mtime for p in (out / "3_LibraryLogic").glob("*.yaml"))
    marker = lib / "support.json"       # written last by create-library
    if marker.is_file() and not cfg.global_parameters["ForceRedoLibraryClient"] \
            and marker.stat().st_mtime >= logic_time:
        say("4_LibraryClient already built from these logic files (ForceRedoLibraryClient false): kept")
        return lib
    create_library(out / "3_LibraryLogic", lib, arch, library_format=cfg.global_parameters["LibraryFormat"],
                   merge_files=bool(cfg.global_parameters["MergeFiles"]), jobs=jobs, cache_dir=cache_dir,
                   progress=progress)
    return lib
