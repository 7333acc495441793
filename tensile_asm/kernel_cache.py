"""The content-addressed kernel cache of create-library: one file per built kernel, found by a hash of
everything that decides its bytes.

Key (``kernel_key``): the kernel's name, architecture, problem type, solution parameters and derived
values, the builder's version (for the writer: a hash of this package's source and the ``isa/*.yaml``
tables, so any change to the code generation misses) and the toolchain's identity (the assembler's path,
size and modification time). An entry (``<cache>/kernels/<key[:2]>/<key>.kernel``, msgpack) holds either
the kernel's parts -- the kernel and the helper kernels it needs, each as (symbol name, relocatable ELF
object, code-object metadata) -- or the reason it could not be written (so a warm rebuild does not try
again). Entries are written under a temporary name and renamed into place (``atomic_file.write_atomic``;
``os.replace`` is atomic on
POSIX): a reader sees a whole entry or none, a build killed at any moment leaves at most a stray
temporary file (never read), and two builds sharing the cache write the same bytes under the same name.
An entry that does not decode (a damaged disk, a foreign file) is a miss and is rebuilt. Finished outputs
(linked code objects, library files) are kept too (``<cache>/outputs/``, with a checksum), keyed by what they
are made of, so an unchanged rebuild only copies them.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgpack

from tensile_asm.atomic_file import write_atomic

ENTRY_FORMAT = 1
PACKAGE_DIR = Path(__file__).resolve().parent
ISA_DIR = PACKAGE_DIR.parent / "isa"
TEMPLATE_DIR = PACKAGE_DIR.parent / "templates"     # the source writer's jinja2 templates


@dataclass(frozen=True)
class KernelPart:
    """One kernel symbol of a code object: its relocatable object (no metadata note) and its metadata."""

    name: str
    object: bytes
    metadata: dict
    language: str = "Assembly"   # KernelLanguage: Source kernels go to the .hsaco code objects, as Tensile's


@dataclass(frozen=True)
class CacheEntry:
    parts: list[KernelPart]
    error: str | None    # the reason the kernel could not be written (then ``parts`` is empty)


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tensile-asm"


# Subpackages that cannot change a kernel's bytes (they read, run or report kernels, or write libraries):
# left out of ``source_hash(kernels=True)`` so that editing them does not rebuild every cached kernel.
NOT_KERNEL_SOURCE = ("emulator", "inspect", "benchmark", "runtime", "cli", "library", "tuning")


@lru_cache(maxsize=None)
def source_hash(kernels: bool = False) -> str:
    """A hash of the package's Python source, the architecture tables and the source writer's templates (``kernels``: only the source
    that writes kernels): the version of what is generated."""
    h = hashlib.sha256()
    paths = sorted(PACKAGE_DIR.rglob("*.py"))
    if kernels:
        paths = [p for p in paths if p.relative_to(PACKAGE_DIR).parts[0] not in NOT_KERNEL_SOURCE]
    for p in paths + sorted(ISA_DIR.glob("*.yaml")) + sorted(q for q in TEMPLATE_DIR.glob("*") if q.is_file()):
        h.update(str(p.relative_to(PACKAGE_DIR.parent)).encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


def kernel_key(builder_version: str, arch: str, name: str, solution: Any) -> str:
    """The cache key of kernel ``name`` for ``arch`` written from ``solution`` by a builder of that version."""
    params = sorted((k, repr(v)) for k, v in solution.params.items())
    text = "\0".join((f"entry{ENTRY_FORMAT}", builder_version, arch, name, repr(solution.problem_type),
                      repr(solution.derived), repr(params)))
    return hashlib.sha256(text.encode()).hexdigest()


class KernelCache:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.dir = self.root / "kernels"

    def path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.kernel"

    def has(self, key: str) -> bool:
        return self.path(key).is_file()

    def get(self, key: str) -> CacheEntry | None:
        try:
            data = msgpack.unpackb(self.path(key).read_bytes(), raw=False)
            if data["format"] != ENTRY_FORMAT or data["key"] != key:
                return None
            parts = [KernelPart(*row) for row in data["parts"]]
            return CacheEntry(parts, data["error"])
        except (OSError, ValueError, KeyError, TypeError, msgpack.UnpackException):
            return None

    def put(self, key: str, entry: CacheEntry) -> None:
        data = msgpack.packb({"format": ENTRY_FORMAT, "key": key, "error": entry.error,
                              "parts": [[p.name, p.object, p.metadata] + ([p.language] if p.language != "Assembly" else [])
                                        for p in entry.parts]}, use_bin_type=True)
        write_atomic(self.path(key), data)

    # Finished outputs (a linked code object, a master library file), by a key of everything they are made
    # of: a rebuild with nothing changed copies them instead of linking or serialising again.
    def output_path(self, key: str) -> Path:
        return self.root / "outputs" / key[:2] / key

    def get_output(self, key: str) -> bytes | None:
        try:
            data = self.output_path(key).read_bytes()
        except OSError:
            return None
        digest, body = data[:32], data[32:]
        return body if hashlib.sha256(body).digest() == digest else None   # a damaged file is a miss

    def put_output(self, key: str, data: bytes) -> None:
        write_atomic(self.output_path(key), hashlib.sha256(data).digest() + data)


def output_key(*parts: str | bytes) -> str:
    h = hashlib.sha256(f"output{ENTRY_FORMAT}".encode())
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little") + b)
    return h.hexdigest()

