"""How Tensile 4.44's TensileCreateLibrary names and packs a library's code objects, for create-library's
output stage (the names: ``TensileCreateLibrary.buildObjectFileNames``; the packing:
``BuildCommands/AssemblyCommands.py`` and ``SharedCommands.compressCodeObject``).

- Merged (``--merge-files``, the default): the assembly kernels of an architecture in
  ``TensileLibrary_<gfx>.co``, an offload bundle (host entry + ``hipv4-amdgcn-amd-amdhsa--<gfx>``, 4096-aligned),
  compressed as Tensile always asks the bundler to (``--compress``); the source kernels, which for us are the
  helper kernels (GlobalSplitU's beta-only ``Cijk_S`` and post-GSU reductions), in
  ``Kernels.so-000-<gfx>.hsaco``, a raw ELF (Tensile unbundles its HIP compile).
- ``--no-merge-files``: each kernel in ``<kernel file base>_<gfx>.co`` (the name, shortened as Tensile does
  past 64 characters), the raw ELF (Tensile copies the linked object;
  "Code object files are not compressed in --no-merge-files build mode"), each helper kernel in
  ``<helper>.so-000-<gfx>.hsaco``.
- Lazy loading (``--lazy-library-loading``, with ``--separate-architectures``): each problem type's kernels in
  ``<its placeholder>.co`` (``TensileLibrary_Type_SS_Contraction_l_Ailk_Bjlk_Cijk_Dijk_gfx90a.co``), packed as
  the merged one; its KernelLanguage: Source kernels in ``<its placeholder>.hsaco`` (a fallback placeholder's:
  ``<placeholder>_<gfx>.hsaco``), a raw ELF; helper kernels still in ``Kernels.so-000-<gfx>.hsaco``.
- ``library/TensileManifest.txt``: the absolute paths of the library files, then the source code objects,
  then the assembly ones, one per line (``toFile``).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Iterable

from tensile_asm.errors import UserError
from tensile_asm.library import bundle
from tensile_asm.library.fileio import write_atomic

MANIFEST = "TensileManifest.txt"
COMPRESSIONS = ("zstd", "zlib", "none")


MAX_FILE_NAME = 64      # Tensile's globalParameters["MaxFileName"]


def kernel_file_base(name: str) -> str:
    """Tensile's ``KernelWriter.shortenFileBase``: a kernel name longer than 64 characters keeps its first 48
    and replaces the rest by the URL-safe base64 of its SHA-256 (``--no-merge-files`` file names)."""
    if len(name) <= MAX_FILE_NAME:
        return name
    pivot = MAX_FILE_NAME * 3 // 4
    return name[:pivot] + base64.b64encode(hashlib.sha256(name[pivot:].encode()).digest(), b"_-").decode()


def assembly_code_object(gfx: str, merge_files: bool, kernel: str | None = None) -> str:
    return f"TensileLibrary_{gfx}.co" if merge_files else f"{kernel_file_base(kernel)}_{gfx}.co"


def helper_code_object(gfx: str, merge_files: bool, helper: str | None = None) -> str:
    return f"Kernels.so-000-{gfx}.hsaco" if merge_files else f"{helper}.so-000-{gfx}.hsaco"


def lazy_source_code_object(placeholder: str, gfx: str) -> str:
    """Lazy loading: the ``.hsaco`` of a problem type's KernelLanguage: Source kernels, named as Tensile's
    SourceCommands names it and its host's PlaceholderLibrary.getCodeObjectFileName looks for it:
    ``<placeholder>.hsaco``, or ``<placeholder>_<gfx>.hsaco`` for a fallback placeholder (its name has no
    architecture)."""
    return f"{placeholder}_{gfx}.hsaco" if "fallback" in placeholder else f"{placeholder}.hsaco"


def pack(path: Path, gfx: str, compress: str = "zstd") -> None:
    """Rewrite the linked code object at ``path`` as Tensile's merged ``.co``: an offload bundle, compressed
    with ``compress`` (zstd, zlib) or not (none)."""
    if compress not in COMPRESSIONS:
        raise UserError(f"--compress {compress}: not a method; use one of {', '.join(COMPRESSIONS)}")
    elf = Path(path).read_bytes()
    Path(path).write_bytes(bundle.bundle_code_object(elf, gfx, None if compress == "none" else compress))


def write_manifest(lib_dir: Path, libraries: Iterable[Path], source: Iterable[Path],
                   assembly: Iterable[Path]) -> Path:
    paths = [str(Path(p).resolve()) for p in (*libraries, *source, *assembly)]
    return write_atomic(Path(lib_dir) / MANIFEST, "".join(p + "\n" for p in paths))


def verify_manifest(lib_dir: Path) -> list[str]:
    """The files the manifest lists that do not exist (TensileCreateLibrary ``--verify-manifest``)."""
    path = Path(lib_dir) / MANIFEST
    if not path.is_file():
        raise UserError(f"{path}: no manifest; run tensile-create-library (or with --generate-manifest-and-exit) "
                        f"first")
    return [line for line in path.read_text().splitlines() if line.strip() and not Path(line.strip()).exists()]


def _lazy_groups(kernels: list, gfx: str, code_object_of: dict[str, str]) -> dict[str, list]:
    """Lazy loading (AssemblyCommands.buildAssemblyCodeObjectFiles): a kernel goes to its problem type's
    ``<placeholder>.co``; one without a placeholder to ``TensileLibrary_<gfx>.co``."""
    groups: dict[str, list] = {}
    for k in kernels:
        co = code_object_of.get(k[0])
        groups.setdefault(f"{co}.co" if co else assembly_code_object(gfx, True), []).append(k)
    return groups


def link_code_objects(kernels: list[tuple[str, list]], gfx: str, lib_dir: Path, link, stage,
                      merge_files: bool = True, compress: str = "zstd",
                      code_object_of: dict[str, str] | None = None) -> None:
    """Link one architecture's built kernels as Tensile lays them out. ``kernels``: (kernel name, its
    parts: the kernel's and its helper kernels' ``KernelPart``s); ``link(parts, path)`` links parts into a
    code object; ``stage(final) -> Path`` gives the temporary path to write ``final`` under.
    ``code_object_of`` (lazy loading): {kernel: placeholder}, each placeholder's kernels in ``<placeholder>.co``,
    a compressed bundle as the merged one."""
    # KernelLanguage: Source kernels go where Tensile puts its HIP-compiled kernels: with the helpers, or with
    # lazy loading into their problem type's .hsaco (their helpers still with the other helpers)
    source = [k for k in kernels if any(p.name == k[0] and p.language == "Source" for p in k[1])]
    kernels = [k for k in kernels if k not in source]
    lazy_source: dict[str, list] = {}
    if code_object_of:
        for k in [k for k in source if code_object_of.get(k[0])]:
            lazy_source.setdefault(lazy_source_code_object(code_object_of[k[0]], gfx), []).append(k)
            source.remove(k)
    helpers: dict[str, object] = {p.name: p for _, parts in source for p in parts}
    for group in lazy_source.values():
        helpers.update({p.name: p for name, parts in group for p in parts if p.name != name})
    names = {name for name, _ in kernels}
    if code_object_of:
        groups = list(_lazy_groups(kernels, gfx, code_object_of).items())
    elif merge_files:
        groups = [(assembly_code_object(gfx, True), kernels)]
    else:
        groups = [(assembly_code_object(gfx, False, k[0]), [k]) for k in kernels]
    for file_name, group in groups:
        if not group:
            continue
        own = [p for _, parts in group for p in parts if p.name in names]
        helpers.update({p.name: p for _, parts in group for p in parts if p.name not in names})
        tmp = stage(Path(lib_dir) / file_name)
        link(own, tmp)
        if merge_files:
            pack(tmp, gfx, compress)
    for file_name, group in lazy_source.items():      # raw ELF, as Tensile unbundles its HIP compile
        own = {name for name, _ in group}
        link([p for _, parts in group for p in parts if p.name in own], stage(Path(lib_dir) / file_name))
    if not helpers:
        return
    for group in [list(helpers.values())] if merge_files else [[h] for h in helpers.values()]:
        link(group, stage(Path(lib_dir) / helper_code_object(gfx, merge_files, kernel_file_base(group[0].name))))


def expected_code_objects(kernels: dict[str, list[tuple[str, str | None]]], lib_dir: Path,
                          merge_files: bool = True, code_object_of: dict[str, str] | None = None,
                          source_kernels: frozenset[str] = frozenset()) -> tuple[list[Path], list[Path]]:
    """(helper and source kernel .hsaco paths, assembly .co paths) a build will write, from
    {gfx: [(kernel, helper or None)]} and the kernels that are KernelLanguage: Source
    (``--generate-manifest-and-exit``)."""
    source, assembly = [], []
    for gfx, ks in kernels.items():
        lazy_source = list(dict.fromkeys(lazy_source_code_object(code_object_of[k], gfx) for k, _ in ks
                                         if k in source_kernels and (code_object_of or {}).get(k)))
        source += [Path(lib_dir) / f for f in lazy_source]
        helpers = sorted({h for _, h in ks if h} | {kernel_file_base(k) for k, _ in ks if k in source_kernels
                                                    and not (code_object_of or {}).get(k)})
        ks = [k for k in ks if k[0] not in source_kernels]
        if not ks:
            source += [Path(lib_dir) / helper_code_object(gfx, merge_files, h)
                       for h in (helpers[:1] if merge_files else helpers)]
            continue
        if code_object_of:
            assembly += [Path(lib_dir) / f for f in _lazy_groups(ks, gfx, code_object_of)]
            source += [Path(lib_dir) / helper_code_object(gfx, True)] if helpers else []
        elif merge_files:
            assembly.append(Path(lib_dir) / assembly_code_object(gfx, True))
            source += [Path(lib_dir) / helper_code_object(gfx, True)] if helpers else []
        else:
            assembly += [Path(lib_dir) / assembly_code_object(gfx, False, k) for k, _ in ks]
            source += [Path(lib_dir) / helper_code_object(gfx, False, h) for h in helpers]
    return source, assembly
