"""From a size group's fork permutations to candidate kernels: each fork becomes a solution, or is listed with
the reason it is not benchmarked (invalid by Tensile's rules, a duplicate of an earlier fork, or not buildable by
this project's writer: ``writer.build.supports``, or its registers overflowed when written). Nothing is dropped
silently: ``rejected.yaml`` in the step folder lists every fork that is not a candidate."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensile_asm.errors import UserError


@dataclass
class Candidate:
    fork: int                       # position in Tensile's fork order
    params: dict[str, Any]          # the fork's parameters (constants and this permutation)
    solution: Any = None            # tensile_asm.solution.Solution, None when it could not be made
    name: str = ""                  # kernel name (min name over the group's candidates)
    reason: str | None = None       # why it is not benchmarked (None: a candidate)
    code_object: Path | None = None
    key: str = ""                   # kernel cache key

    @property
    def ok(self) -> bool:
        return self.reason is None


def _fingerprint(sol) -> str:
    import json

    d = sol.to_logic_dict()
    for k in ("SolutionIndex", "SolutionNameMin"):
        d.pop(k, None)
    return json.dumps(d, sort_keys=True, default=repr)


def make_candidates(problem, group, arch, arch_error: str | None) -> list[Candidate]:
    """Every fork of ``group`` as a Candidate (``arch``: the Arch built for, None with ``arch_error``)."""
    from tensile_asm.solution import Solution
    from tensile_asm.solution.derive import isa_from_arch
    from tensile_asm.solution.one_lds_buffer import one_lds_buffer_rejection
    from tensile_asm.writer.build import supports

    out: list[Candidate] = []
    seen: dict[str, int] = {}
    isa = isa_from_arch(arch.name) if arch is not None else None
    for i, perm in enumerate(group.permutations()):
        params = {**group.constants, **perm}
        if isa is not None and params.get("KernelLanguage", "Assembly") == "Assembly":
            params["ISA"] = isa   # as Tensile: derived values that depend on the ISA (MemoryModifierFormat) see it
        c = Candidate(i, params)
        out.append(c)
        if problem.problem_type_error:
            c.reason = f"problem type not supported: {problem.problem_type_error}"
            continue
        try:
            sol = Solution.from_dict({"ProblemType": problem.problem_type_raw, **params}, where=f"fork {i}")
        except UserError as e:
            c.reason = f"invalid: {e}"
            continue
        c.solution = sol
        if not sol.valid:
            c.reason = f"invalid solution (Tensile's rules): {sol.rejection}"
            continue
        why = one_lds_buffer_rejection(sol, arch.name if arch is not None else None)
        if why:
            c.reason = f"Tensile 4.44's kernel writer refuses it (estimate): {why}"
            continue
        fp = _fingerprint(sol)
        if fp in seen:
            c.reason = f"duplicate of fork {seen[fp]} (the same solution once derived)"
            continue
        seen[fp] = i
        if arch_error:
            c.reason = arch_error
            continue
        reason = supports(sol, arch)
        if reason:
            c.reason = f"not buildable by the writer: {reason}"
    ok = [c for c in out if c.ok]
    if ok:
        from tensile_asm.solution.naming import min_names
        for c, name in zip(ok, min_names([c.solution for c in ok])):
            c.name = name
    return out


def assign_keys(cands: list[Candidate], arch) -> None:
    """Each candidate's kernel cache key: it names the kernel's results too (every parameter and the writer's
    version are in it, so results of a changed config or writer are never reused)."""
    from tensile_asm.kernel_cache import kernel_key
    from tensile_asm.writer import build as builder

    version = builder.version()
    for c in cands:
        if c.ok:
            c.key = kernel_key(version, arch.name, c.name, c.solution)


def build_candidates(cands: list[Candidate], arch, out_dir: Path, cache_dir: Path | None, jobs: int,
                     progress: bool | None) -> None:
    """Write and assemble every candidate (through the kernel cache create-library uses), link each into
    ``out_dir/<name>.co``; a kernel that cannot be written gets its reason."""
    from tensile_asm.kernel_cache import KernelCache, default_cache_dir
    from tensile_asm.library.create import build_kernels
    from tensile_asm.writer import build as builder

    todo = [c for c in cands if c.ok]
    if not todo:
        return
    cache = KernelCache(cache_dir if cache_dir is not None else default_cache_dir())
    results, _ = build_kernels([(arch, c.name, c.solution, c.key) for c in todo], builder, cache, jobs, progress)
    out_dir.mkdir(parents=True, exist_ok=True)
    for c in todo:
        error = results.get(c.key)
        if error:
            c.reason = f"not buildable by the writer: {error}"
            continue
        path = out_dir / f"{c.name}.co"
        entry = cache.get(c.key)
        if entry is None:
            raise UserError(f"the kernel cache entry of {c.name} ({cache.path(c.key)}) vanished during the build; "
                            f"run again")
        marker = out_dir / f".{c.name}.key"
        if not (path.is_file() and marker.is_file() and marker.read_text() == c.key):
            tmp = out_dir / f".{c.name}.co.tmp"
            builder.link_parts(entry.parts, arch, tmp)
            tmp.replace(path)
            marker.write_text(c.key)
        c.code_object = path
