"""create-library: logic files in, code object(s) + master library + support report out.

Stages (each timed, ``CreateReport.timing``):
1. read: find the logic files for the architectures as Tensile's findLogicFiles does (``find_logic_files``: its
   order, which numbers the solutions) and parse each once;
2. assess: name every solution (min naming over all solutions of the build, so kernel symbols and library
   names agree) and ask the kernel builder which it supports (answered from parameters and limits, without
   writing kernels);
3. build (``build_kernels``): every distinct kernel -- (architecture, name, parameters) hashed into a
   content key -- is written and assembled once, by ``jobs`` worker processes, into the kernel cache
   (``tensile_asm.kernel_cache``); a kernel already there is neither written nor assembled. Workers return
   only whether the kernel could be written, so the memory held does not grow with the build. While
   worker processes write kernels, this process writes the master library (into a staging folder) as if
   every kernel builds; if one could not be written, the library is written again once the build ends;
4. output (``write_code_objects``): per architecture, link the built kernels' cached objects into one code
   object (``library/TensileLibrary_<gfx>.co``, a raw ELF, no offload bundle), or one per kernel without
   ``merge_files``; then ``library/TensileLibrary.yaml`` (or ``.dat``) listing only the built solutions (numbered
   as Tensile numbers every solution of the logic: an unbuilt one is a gap, ``master._numbered``), and
   ``support.json`` with one entry per solution (name, architecture, logic file relative to the logic folder,
   the solution's index in it, built, reason).
Every output is written under a temporary name and renamed into place once all kernels are built; a kernel
that cannot be written (e.g. its registers do not fit) is reported as not built.
"""

from __future__ import annotations

import concurrent.futures
import gc
import json
import multiprocessing
import os
import shutil
import statistics
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, Sequence

import msgpack

from tensile_asm.errors import UserError
from tensile_asm.progress import ProgressBar
from tensile_asm.isa.arch import Arch, load_arch
from tensile_asm.kernel_cache import (CacheEntry, KernelCache, KernelPart, default_cache_dir, kernel_key,
                                     output_key, source_hash)
from tensile_asm.library import outputs
from tensile_asm.library.fileio import parse_cache, publish, write_atomic
from tensile_asm.library.logic import LogicFile, find_logic_files, read_logic_file, schedule_alias
from tensile_asm.library.master import LibraryFiles, LibraryPart, build_library_files, write_master_library
from tensile_asm.library.predicates import processor_name
from tensile_asm.solution.naming import min_names


class KernelBuilder(Protocol):
    def version(self) -> str:
        """Identifies what this builder writes (source, toolchain): part of every kernel's cache key."""

    def supports(self, solution, arch: Arch) -> str | None:
        """None if the solution can be built for ``arch`` (answered without writing it), else the reason."""

    def compile_kernel(self, solution, arch: Arch, name: str, timing: dict | None = None) -> CacheEntry:
        """Write kernel ``name`` and assemble it and the helper kernels it needs (``parts``), or give the
        reason it cannot be written (``error``); adds seconds spent per step to ``timing``."""

    def link_parts(self, parts: list[KernelPart], arch: Arch, out_path: Path) -> None:
        """Link kernel parts (a helper named twice once) into one code object at ``out_path``."""


@dataclass
class SupportEntry:
    name: str
    architecture: str
    built: bool
    reason: str | None
    logic_file: Path | None = None
    logic_index: int | None = None

    def to_json(self, logic_dir: Path | None = None) -> dict[str, Any]:
        """``file`` is relative to ``logic_dir`` when given (and under it)."""
        file = self.logic_file
        if file is not None and logic_dir is not None and file.is_relative_to(logic_dir):
            file = file.relative_to(logic_dir)
        return {"name": self.name, "architecture": self.architecture,
                "file": None if file is None else str(file),
                "index": self.logic_index, "built": self.built, "reason": self.reason}


@dataclass
class BuildStats:
    kernels: int = 0        # distinct kernels the build needs
    duplicates: int = 0     # solutions that named a kernel already counted
    cached: int = 0         # found in the cache: neither written nor assembled
    compiled: int = 0       # written and assembled by this build
    jobs: int = 1
    cpu: dict[str, float] = field(default_factory=dict)   # wall seconds summed over workers: generate, assemble
    generate_each: list[float] = field(default_factory=list)   # wall seconds writing each kernel written
    meanwhile: Any = None       # what build_kernels' ``meanwhile`` returned (None: not run)
    overlapped: dict[str, float] = field(default_factory=dict)   # wall seconds of stages run during the build


@dataclass
class CreateReport:
    out_dir: Path
    architectures: list[str]
    logic_files: list[Path]
    entries: list[SupportEntry]
    code_objects: list[Path] = field(default_factory=list)
    library_path: Path | None = None
    support_path: Path | None = None
    timing: dict[str, float] = field(default_factory=dict)   # wall seconds per stage
    stats: BuildStats = field(default_factory=BuildStats)
    manifest_path: Path | None = None
    library_files: list[Path] = field(default_factory=list)   # every master/placeholder library written

    @property
    def built(self) -> list[SupportEntry]:
        return [e for e in self.entries if e.built]

    @property
    def not_built(self) -> list[SupportEntry]:
        return [e for e in self.entries if not e.built]

    def table(self) -> str:
        rows = [("arch", "built", "solution", "reason")]
        rows += [(e.architecture, "yes" if e.built else "no", e.name, e.reason or "") for e in self.entries]
        w0, w1 = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
        w2 = max(len(r[2]) for r in rows)
        lines = [f"{a:<{w0}}  {b:<{w1}}  {c:<{w2}}  {d}".rstrip() for a, b, c, d in rows]
        lines.append(f"{len(self.built)} built, {len(self.not_built)} not built")
        return "\n".join(lines)

    def timing_table(self) -> str:
        s = self.stats
        lines = [f"{stage:<8} {seconds:8.3f} s" for stage, seconds in self.timing.items()]
        lines.append(f"{'total':<8} {sum(self.timing.values()):8.3f} s")
        lines.append(f"kernels: {s.kernels} distinct ({s.duplicates} duplicate solutions), {s.compiled} written "
                     f"and assembled, {s.cached} from the cache; jobs {s.jobs}")
        for stage, seconds in s.overlapped.items():
            lines.append(f"{stage} written while the workers built kernels (inside build): {seconds:.3f} s")
        if s.cpu:
            lines.append("worker time (wall, summed over workers): " + ", ".join(f"{k} {v:.3f} s" for k, v in s.cpu.items())
                         + (f" ({1e3 * s.cpu.get('generate', 0.0) / s.compiled:.1f} ms generation per kernel"
                            + (f", median {1e3 * statistics.median(s.generate_each):.1f})" if s.generate_each else ")")
                            if s.compiled else ""))
        return "\n".join(lines)


@dataclass
class _Item:
    arch: str
    logic: LogicFile
    index: int
    solution: Any  # Solution or None
    reason: str | None
    name: str = ""
    key: str = ""


def parse_architectures(arch: str | Sequence[str]) -> list[str]:
    names = [a for a in (arch.replace(";", " ").replace(",", " ").split() if isinstance(arch, str) else arch) if a]
    if not names:
        raise UserError("no architecture given; use e.g. --architecture gfx90a")
    return list(dict.fromkeys(names))


def _default_builder() -> KernelBuilder:
    try:
        from tensile_asm.writer import build
    except ImportError as e:
        raise UserError(f"the kernel builder tensile_asm.writer.build cannot be imported ({e}); "
                        f"it is needed to build code objects") from None
    return build


def _collect(logic_dir: Path, archs: list[str], lazy: bool = False) -> tuple[list[_Item], list[Path]]:
    """The solutions of the logic files found for ``archs`` (``find_logic_files``: Tensile's order, each file
    read once), file by file: a file's solutions go to the architecture it declares; a fallback file's to
    each architecture (its kernels are built for each). A file found by its name that declares an
    architecture not built is kept with that reason, under the first architecture its name matches."""
    files = find_logic_files(logic_dir, archs, lazy)
    for arch in archs:
        alias = schedule_alias(arch)
        if not any(alias in p.stem or "hip" in p.stem for p in files):
            raise UserError(f"no logic files for {arch} under {logic_dir}: their names must contain the schedule "
                            f"name {alias!r} (e.g. {alias}_Cijk_Ailk_Bljk_SB.yaml)")
    items: list[_Item] = []
    for path in files:
        lf = read_logic_file(path)
        if lf.architecture == "fallback":
            targets = [(a, None) for a in archs]
        else:
            declared = [a for a in archs if processor_name(a) == processor_name(lf.architecture)]
            if declared:
                targets = [(declared[0], None)]
            else:
                named = next((a for a in archs if schedule_alias(a) in path.stem), archs[0])
                targets = [(named, f"{path.name} declares architecture {lf.architecture}, not "
                                   f"{' or '.join(archs)}")]
        for arch, file_reason in targets:
            for e in lf.entries:
                reason = file_reason or e.error
                items.append(_Item(arch, lf, e.index, None if reason else e.solution, reason))
    return items, files


@contextmanager
def _stage(timing: dict[str, float], name: str) -> Iterator[None]:
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timing[name] = timing.get(name, 0.0) + time.perf_counter() - t0


# The work of one build, set in the parent before the worker processes fork (they read it, nothing is
# sent to them but indices; they send back only the error, if any, and their timing).
_WORK: list[tuple[KernelBuilder, KernelCache, Arch, str, Any, str]] = []
GC_THRESHOLD = 20000    # allocations between young-generation collections while kernels are written


def _compile_one(i: int) -> tuple[int, str | None, dict[str, float]]:
    builder, cache, arch, name, solution, key = _WORK[i]
    timing: dict[str, float] = {}
    entry = cache.get(key)          # another build sharing the cache may have written it meanwhile
    if entry is None:
        entry = builder.compile_kernel(solution, arch, name, timing)
        cache.put(key, entry)
    return i, entry.error, timing


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def build_kernels(work: list[tuple[Arch, str, Any, str]], builder: KernelBuilder, cache: KernelCache,
                  jobs: int, progress: bool | None = None, meanwhile: Callable[[], Any] | None = None
                  ) -> tuple[dict[str, str | None], BuildStats]:
    """Build stage: every distinct kernel (arch, name, solution, key) into the cache, written and assembled
    once, in ``jobs`` processes. Returns {key: None when built, else the reason it could not be written}.
    ``meanwhile``, when worker processes run, is called in a thread of this process while they write
    (its exception, if any, is raised once the kernels are built); ``BuildStats.meanwhile`` holds its
    result."""
    stats = BuildStats(jobs=jobs)
    results: dict[str, str | None] = {}
    todo: list[int] = []
    global _WORK
    _WORK = [(builder, cache, arch, name, sol, key) for arch, name, sol, key in work]
    # Writing a kernel allocates some hundred thousand objects that live until it is assembled: with the
    # default thresholds the collector keeps walking them and the logic read so far (about a third of
    # the generation time). Freeze what exists (the forked workers then leave it alone, and do not copy
    # its pages by touching it) and collect the young generation less often, for this stage only.
    try:
        _build_all(todo, results, stats, cache, jobs, progress, meanwhile)
    finally:
        _WORK = []
    return results, stats


def _build_all(todo: list[int], results: dict, stats: BuildStats, cache: KernelCache, jobs: int,
               progress: bool | None, meanwhile: Callable[[], Any] | None) -> None:
    with _few_collections():
        for i, (_, _, _, _, _, key) in enumerate(_WORK):
            entry = cache.get(key)
            if entry is None:
                todo.append(i)
            else:
                results[key] = entry.error
        stats.kernels, stats.cached, stats.compiled = len(_WORK), len(_WORK) - len(todo), len(todo)
        bar = ProgressBar(len(todo), "kernels written and assembled", progress)
        try:
            def collect(done) -> None:
                for i, error, timing in done:
                    results[_WORK[i][5]] = error
                    for k, v in timing.items():
                        stats.cpu[k] = stats.cpu.get(k, 0.0) + v
                    if "generate" in timing:
                        stats.generate_each.append(timing["generate"])
                    bar.step()

            workers = min(jobs, len(todo))
            if workers <= 1 and (meanwhile is None or jobs <= 1 or not todo):
                collect(map(_compile_one, todo))
            else:
                # Costliest first (larger tiles write longer kernels) so the last ones do not run alone.
                todo.sort(key=lambda i: -_cost(_WORK[i][4]))
                ctx = multiprocessing.get_context("fork")
                with ctx.Pool(workers) as pool:
                    results_iter = pool.imap_unordered(_compile_one, todo)
                    side = None
                    if meanwhile is not None:     # after the fork: the workers do not inherit its objects
                        side = concurrent.futures.ThreadPoolExecutor(1)
                        future = side.submit(meanwhile)
                    try:
                        collect(results_iter)
                    finally:
                        if side is not None:
                            side.shutdown(wait=True)
                    if side is not None:
                        stats.meanwhile = future.result()
        finally:
            bar.close()


@contextmanager
def _few_collections() -> Iterator[None]:
    """Freeze the objects that exist and collect the young generation every GC_THRESHOLD allocations:
    writing a kernel, or a library file, allocates some hundred thousand objects that live until it is
    done, and with the default thresholds the collector keeps walking them and the logic read so far."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], GC_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _cost(solution) -> int:
    """A guess at how long a kernel takes to write: its macro tile times DepthU (bigger tiles, more code)."""
    d = getattr(solution, "derived", None)
    return getattr(d, "mt0", 1) * getattr(d, "mt1", 1) * getattr(d, "depth_u", 1)


@dataclass
class BuiltKernel:
    name: str
    key: str        # its entry in the kernel cache


def write_code_objects(built: dict[str, list[BuiltKernel]], lib_dir: Path, builder: KernelBuilder,
                       cache: KernelCache, arch_objs: dict[str, Arch], merge_files: bool,
                       compress: str = "zstd", code_object_of: dict[str, str] | None = None
                       ) -> list[tuple[Path, Path]]:
    """Output stage for code objects: link each architecture's built kernels (from the cache) as Tensile
    names and packs them (``library/outputs.py``: a compressed offload bundle per architecture, or one raw
    ``.co`` per kernel without ``merge_files``; helper kernels in ``.hsaco`` files), under temporary names.
    Returns (temporary, final) pairs for the caller to publish once every other output is ready (it removes
    them on failure)."""
    staged: list[tuple[Path, Path]] = []

    def stage(final: Path) -> Path:
        fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=lib_dir)
        os.close(fd)
        staged.append((Path(tmp), final))
        return Path(tmp)

    try:
        for a, kernels in built.items():
            if not kernels:
                continue
            def link(parts: list[KernelPart], path: Path, a: str = a) -> None:
                # linked code objects are cached by what goes into them (an unchanged rebuild links nothing)
                key = output_key("code object", builder.version(), a, *(x for p in parts for x in (p.name, p.object)))
                linked = cache.get_output(key)
                if linked is not None:
                    Path(path).write_bytes(linked)
                    return
                builder.link_parts(parts, arch_objs[a], Path(path))
                cache.put_output(key, Path(path).read_bytes())

            parts: list[tuple[str, list[KernelPart]]] = []
            for k in kernels:
                entry = cache.get(k.key)
                if entry is None:
                    raise UserError(f"the kernel cache entry of {k.name} ({cache.path(k.key)}) vanished "
                                    f"during the build; run again")
                parts.append((k.name, entry.parts))
            outputs.link_code_objects(parts, a, lib_dir, link, stage, merge_files, compress, code_object_of)
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    return staged


def _remove_stale_temporaries(out_dir: Path) -> None:
    """Temporary outputs a killed build left behind (``.<name>.<random>.tmp``; two builds into one folder
    at once are not supported)."""
    for p in [*(out_dir / "library").glob(".*.tmp"), *out_dir.glob(".support.json.*.tmp")]:
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def create_library(logic_dir: str | Path, out_dir: str | Path, arch: str | Sequence[str],
                   build: KernelBuilder | None = None, library_format: str = "yaml",
                   merge_files: bool = True, jobs: int | None = None, cache_dir: str | Path | None = None,
                   use_cache: bool = True, progress: bool | None = None, compress: str = "zstd",
                   manifest_only: bool = False, separate_architectures: bool = False,
                   lazy_library_loading: bool = False, master_solution_index: bool = False) -> CreateReport:
    """Build code objects and the master library for ``arch`` (one gfx name or several, ``;``-separated).

    ``jobs``: worker processes (default: the cores this process may use). ``cache_dir``: the kernel cache
    (default ``$XDG_CACHE_HOME/tensile-asm``); ``use_cache=False`` builds in a temporary cache removed at
    the end. ``progress``: draw a progress bar on stderr (default: when stderr is a terminal). ``compress``:
    zstd, zlib or none for the merged code objects' offload bundles. ``manifest_only``: write
    ``library/TensileManifest.txt`` (the files a build would write) and nothing else.
    ``separate_architectures``: one ``TensileLibrary_<gfx>`` per architecture; ``lazy_library_loading`` (needs
    it and ``merge_files``, as Tensile): ``TensileLibrary_lazy_<gfx>`` with a placeholder library and a code
    object per problem type (``library/master.py``, ``library/outputs.py``). ``master_solution_index``: with
    lazy loading, also ``library/TensileMasterSolutionIndex.csv`` (as Tensile writes it only then)."""
    logic_dir, out_dir = Path(logic_dir), Path(out_dir)
    if lazy_library_loading and not (merge_files and separate_architectures):
        raise UserError("--lazy-library-loading requires --merge-files and --separate-architectures (as Tensile "
                        "4.44's TensileCreateLibrary); add --separate-architectures and drop --no-merge-files")
    if library_format not in ("yaml", "msgpack"):
        raise UserError(f"library format {library_format!r} is not known; use yaml or msgpack")
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise UserError(f"--jobs {jobs}: the number of worker processes must be at least 1")
    timing: dict[str, float] = {}
    cache_root = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) if use_cache else None
    with _stage(timing, "read"), parse_cache(cache_root):
        archs = parse_architectures(arch)
        arch_objs = {a: load_arch(a) for a in archs}
        items, files = _collect(logic_dir, archs, lazy_library_loading)
        if lazy_library_loading and len(archs) > 1:
            fallback = next((it.logic.path for it in items if it.logic.architecture == "fallback"), None)
            if fallback is not None:
                raise UserError(f"{fallback}: fallback logic (ArchitectureName fallback) with --lazy-library-loading "
                                f"names one code object (<type>_fallback.co) that each of {', '.join(archs)} would "
                                f"write (Tensile 4.44 overwrites it); build one architecture per output folder")
    builder = build if build is not None else _default_builder()

    with _stage(timing, "assess"):
        parsed = [it for it in items if it.solution is not None]
        for it, name in zip(parsed, min_names([it.solution for it in parsed], kernel=True)):
            it.name = name
        for it in items:
            if it.solution is None:
                it.name = it.logic.entries[it.index].stored_name or f"{it.logic.path.name}#{it.index}"
            elif it.solution.rejection is not None:
                it.reason = f"invalid solution: {it.solution.rejection}"
            else:
                it.reason = builder.supports(it.solution, arch_objs[it.arch])
        version = builder.version()
        work: dict[str, tuple[Arch, str, Any, str]] = {}
        wanted = [it for it in items if it.reason is None]
        for it in wanted:
            it.key = kernel_key(version, it.arch, it.name, it.solution)
            work.setdefault(it.key, (arch_objs[it.arch], it.name, it.solution, it.key))

    if manifest_only:
        return _manifest_only(out_dir, archs, files, items, library_format, merge_files, timing,
                              separate_architectures, lazy_library_loading)

    with tempfile.TemporaryDirectory(prefix="tensile-asm-cache-") as scratch:
        cache = KernelCache(cache_root if cache_root is not None else scratch)
        lib_dir = out_dir / "library"
        lib_dir.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(out_dir)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", suffix=".tmp", dir=lib_dir))
        staged: list[tuple[Path, Path]] = []

        def library_stage() -> tuple[LibraryFiles, list[Path]]:
            """The master library files of the solutions whose reason is None, written into ``staging``."""
            libraries = build_library_files(_library_parts(items, separate_architectures),
                                            separate_architectures, lazy_library_loading)
            return libraries, _write_library(libraries, staging, library_format, cache)

        def library_meanwhile() -> tuple[float, tuple[LibraryFiles, list[Path]]]:
            # written as if every kernel builds (the usual case), while the workers write them; used
            # only if they all did, else written again below
            t0 = time.perf_counter()
            out = library_stage()
            return time.perf_counter() - t0, out

        try:
            with _stage(timing, "build"):
                results, stats = build_kernels(list(work.values()), builder, cache, jobs, progress,
                                               meanwhile=library_meanwhile)
                stats.duplicates = len(wanted) - len(work)
            for it in wanted:
                it.reason = results[it.key]
            if stats.meanwhile is not None and all(it.reason is None for it in wanted):
                seconds, (libraries, library_files) = stats.meanwhile
                stats.overlapped["library"] = seconds
            else:
                with _stage(timing, "library"), _few_collections():
                    libraries, library_files = library_stage()
            stats.meanwhile = None
            with _stage(timing, "link"):
                built: dict[str, dict[str, BuiltKernel]] = {a: {} for a in archs}
                for it in items:
                    if it.reason is None:
                        built[it.arch].setdefault(it.name, BuiltKernel(it.name, it.key))
                staged = write_code_objects({a: list(ks.values()) for a, ks in built.items()}, lib_dir, builder,
                                            cache, arch_objs, merge_files, compress, libraries.code_object_of)
            with _stage(timing, "library"):
                entries = [SupportEntry(it.name, it.arch, it.reason is None, it.reason, it.logic.path, it.index)
                           for it in items]
                support = json.dumps([e.to_json(logic_dir) for e in entries], indent=2) + "\n"
                # everything is ready: publish (each file renamed into place)
                for tmp, final in staged:
                    publish(tmp, final)
                for f in library_files:
                    publish(f, lib_dir / f.name)
                finals = [final for _, final in staged]
                manifest = outputs.write_manifest(lib_dir, [lib_dir / f.name for f in library_files],
                                                  [f for f in finals if f.suffix == ".hsaco"],
                                                  [f for f in finals if f.suffix == ".co"])
                support_path = write_atomic(out_dir / "support.json", support)
                if master_solution_index and lazy_library_loading:
                    write_atomic(lib_dir / MASTER_SOLUTION_INDEX, libraries.master_solution_index())
        finally:
            for tmp, _ in staged:
                tmp.unlink(missing_ok=True)
            shutil.rmtree(staging, ignore_errors=True)
    library_path = lib_dir / library_files[0].name if library_files else None   # the (first) master library
    return CreateReport(out_dir, archs, files, entries, [final for _, final in staged], library_path,
                        support_path, timing, stats, manifest, [lib_dir / f.name for f in library_files])


MASTER_SOLUTION_INDEX = "TensileMasterSolutionIndex.csv"


def _library_parts(items: list[_Item], separate: bool) -> list[tuple[str, LibraryPart]]:
    """(gfx, part) per logic file, each with its built solutions: every file of the architecture, even one with
    none built, since the library numbers every solution of its files as Tensile does (``master._numbered``).
    Without ``separate`` a fallback (hip_*) file read for several architectures is one library part, as
    Tensile parses it once, its solutions listed once; with it, a part per architecture. A file that declares
    another architecture, or whose problem type could not be read, is no part."""
    by_file: dict[tuple, tuple[str, LogicFile, dict]] = {}
    for it in items:
        lf = it.logic
        if lf.problem_type is None or (lf.architecture != "fallback"
                                       and processor_name(lf.architecture) != processor_name(it.arch)):
            continue
        key = (it.arch, lf.path) if separate else lf.path
        _, lf, chosen = by_file.setdefault(key, (it.arch, lf, {}))
        if it.reason is None:
            chosen.setdefault(it.index, (it.index, it.solution, it.name))
    return [(a, LibraryPart(lf, list(chosen.values()))) for a, lf, chosen in by_file.values()]


def _write_library(files: LibraryFiles, staging: Path, library_format: str, cache: KernelCache) -> list[Path]:
    """The master library files of the built solutions, written into ``staging`` (copied from the cache when
    the same libraries were written before). Returns the files written, in ``files``' order."""
    lib = files.libraries
    try:       # msgpack: the same bytes for equal data (marshal's depend on reference counts)
        key = output_key("library", source_hash(), library_format, msgpack.packb(lib, use_bin_type=True))
    except (TypeError, ValueError):      # not plain data: not cached
        key = None
    cached = cache.get_output(key) if key else None
    if cached is not None:
        try:
            written = []
            for name, data in msgpack.unpackb(cached, raw=False)["files"]:
                (staging / name).write_bytes(data)
                written.append(staging / name)
            return written
        except (ValueError, TypeError, AttributeError, KeyError, msgpack.UnpackException):
            pass
    written = [write_master_library(data, staging, library_format, name) for name, data in lib.items()]
    if key:
        cache.put_output(key, msgpack.packb({"files": [[p.name, p.read_bytes()] for p in written]},
                                            use_bin_type=True))
    return written


def _manifest_only(out_dir: Path, archs: list[str], files: list[Path], items: list, library_format: str,
                   merge_files: bool, timing: dict, separate: bool = False, lazy: bool = False) -> CreateReport:
    """``--generate-manifest-and-exit``: the files a build would write, from the solutions the writer says
    it supports (as Tensile, without building; a kernel whose registers turn out not to fit would be missing)."""
    from tensile_asm.gemm import GemmKernelContract

    lib_dir = out_dir / "library"
    lib_dir.mkdir(parents=True, exist_ok=True)
    kernels: dict[str, list[tuple[str, str | None]]] = {a: [] for a in archs}
    for it in items:
        if it.reason is None and all(it.name != k for k, _ in kernels[it.arch]):
            helpers = GemmKernelContract.from_solution(it.solution, it.name).helper_names()
            kernels[it.arch] += [(it.name, h) for h in helpers or [None]]
    libraries = build_library_files(_library_parts(items, separate), separate, lazy)
    source_kernels = frozenset(it.name for it in items
                               if it.reason is None and it.solution.params.get("KernelLanguage") == "Source")
    source, assembly = outputs.expected_code_objects(kernels, lib_dir, merge_files, libraries.code_object_of,
                                                     source_kernels)
    ext = ".yaml" if library_format == "yaml" else ".dat"
    manifest = outputs.write_manifest(lib_dir, [lib_dir / (name + ext) for name in libraries.libraries],
                                      source, assembly)
    entries = [SupportEntry(it.name, it.arch, False, it.reason or "not built: --generate-manifest-and-exit",
                            it.logic.path, it.index) for it in items]
    return CreateReport(out_dir, archs, files, entries, timing=timing, manifest_path=manifest)
