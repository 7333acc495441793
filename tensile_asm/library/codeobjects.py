"""A library folder's code objects and solutions, as Tensile lays them out, whoever wrote them.

Code objects: ``TensileLibrary_<gfx>.co`` (merged; an offload bundle, compressed or not, or a raw ELF),
``<kernel>_<gfx>.co`` (``--no-merge-files``: raw ELFs), the lazy-loading per-problem-type
``TensileLibrary_<type>_<gfx>.co`` files, and ``Kernels.so-000-<gfx>.hsaco`` / ``*.hsaco`` (source and
helper kernels, raw ELFs). ``LibraryFolder.code_object(kernel, gfx)`` finds the file holding a kernel and
gives a path to its ELF (bundles are unpacked into a temporary folder, once each).

Master libraries: ``TensileLibrary.yaml``/``.dat`` (all architectures), ``TensileLibrary_<gfx>.*``
(``--separate-architectures``), ``TensileLibrary_lazy_<gfx>.*`` (lazy loading: ``Placeholder`` nodes name the
per-type libraries beside it). ``LibraryFolder.solutions()`` lists every solution of every master library,
the lazy ones' placeholders loaded.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any, Iterator

from tensile_asm.errors import UserError
from tensile_asm.library import bundle

_MASTER = re.compile(r"^TensileLibrary(_lazy)?(_gfx[0-9a-z]+)?\.(yaml|dat)(\.gz)?$")


class LibraryFolder:
    """The ``library/`` folder of a TensileCreateLibrary output (ours or Tensile's)."""

    def __init__(self, path: str | Path):
        path = Path(path)
        if path.is_file():
            self.masters = [path]
            path = path.parent
        else:
            if (path / "library").is_dir() and not any(_MASTER.match(p.name) for p in path.iterdir()):
                path = path / "library"
            if not path.is_dir():
                raise UserError(f"{path}: no such library folder")
            self.masters = sorted(p for p in path.iterdir() if _MASTER.match(p.name))
        if not self.masters:
            raise UserError(f"{path}: no TensileLibrary.yaml/.dat (or TensileLibrary_<gfx>, TensileLibrary_lazy_<gfx>) "
                            f"here or in library/; run tensile-create-library first")
        self.path = path
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._index: dict[tuple[str, str], Path] | None = None

    # ---- solutions
    def libraries(self) -> list:
        from tensile_asm.library.select import Library
        return [Library.load(p) for p in self.masters]

    def solutions(self) -> list[tuple[Any, dict[str, Any], str | None]]:
        """(Library, solution entry, processor) for every solution of every master library, lazy
        libraries' placeholders loaded. The processor comes from the Hardware row above the solution
        (or the file name of a separate-architecture library, or the ISA in the kernel name); a fallback
        solution comes once per architecture whose code objects hold its kernel. A solution that no node of the
        tree names (rocBLAS logic has solutions in no row of the exact table; Tensile builds them) is listed too,
        for the library file's architecture, else those whose code objects hold its kernel."""
        from tensile_asm.library.select import Library

        out, seen, reached, libs = [], set(), set(), {}

        def add(sub, index, sol, gfx):
            gfx = gfx or _isa_in_name(sol)
            # a fallback solution (hip_* logic, no processor predicate) is built for every architecture:
            # one entry per architecture whose code objects hold its kernel
            targets = [gfx] if gfx else sorted({g for n, g in self.index() if n == sol.get("name")}) or [None]
            for g in targets:
                key = (id(sub), index, g)
                if key not in seen:
                    seen.add(key)
                    out.append((sub, sol, g))

        for lib in self.libraries():
            m = re.search(r"_(gfx[0-9a-z]+)\.", lib.path.name)
            libs[id(lib)] = (lib, m.group(1) if m else None)
            for sub, index, gfx in self._walk(lib, lib.tree, m.group(1) if m else None):
                libs.setdefault(id(sub), (sub, None))
                sol = sub.solutions.get(index)
                if sol is not None:
                    reached.add((id(sub), index))
                    add(sub, index, sol, gfx)
        # a solution no size maps to (Tensile's logic has them: in no row of the exact table) is still built;
        # its architecture: the library file's, else the code objects holding its kernel
        for key, (lib, gfx) in libs.items():
            for index, sol in sorted(lib.solutions.items()):
                if (key, index) not in reached:
                    add(lib, index, sol, gfx)
        return out

    def _walk(self, lib, node: Any, gfx: str | None) -> Iterator[tuple[Any, int, str | None]]:
        from tensile_asm.library.select import Library

        if isinstance(node, list):
            for v in node:
                yield from self._walk(lib, v, gfx)
            return
        if not isinstance(node, dict):
            return
        t = node.get("type")
        if t == "Hardware":
            for row in node.get("rows", []):
                yield from self._walk(lib, row.get("library"), _processor_of(row.get("predicate")) or gfx)
            return
        if t == "Placeholder":
            for suffix in (".yaml", ".dat", ".yaml.gz", ".dat.gz"):
                p = self.path / (str(node["value"]) + suffix)
                if p.is_file():
                    child = Library.load(p)
                    yield from self._walk(child, child.tree, gfx)
                    return
            raise UserError(f"{self.path}: Placeholder {node['value']!r} names no .yaml or .dat file here")
        if t == "Single":
            yield lib, int(node["index"]), gfx
            return
        if t == "Matching":
            for entry in node.get("table", []):
                yield lib, int(entry["index"]), gfx
            return
        for v in node.values():
            yield from self._walk(lib, v, gfx)

    # ---- code objects
    def _files(self) -> list[Path]:
        return sorted(p for p in self.path.iterdir() if p.suffix in (".co", ".hsaco") and p.is_file())

    def _elf_paths(self, path: Path) -> list[tuple[str | None, Path]]:
        """(gfx or None, ELF path) for each code object in the file."""
        data = path.read_bytes()
        if data.startswith(b"\x7fELF"):
            return [(None, path)]
        if not bundle.is_bundle(data):
            return []
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="tensile-asm-library-")
        out = []
        for i, entry in enumerate(bundle.read_bundle(data, str(path))):
            if entry.gfx is None or not entry.data:
                continue
            elf = Path(self._tmp.name) / f"{path.stem}.{i}.{entry.gfx}.co"
            elf.write_bytes(entry.data)
            out.append((entry.gfx, elf))
        return out

    def index(self) -> dict[tuple[str, str], Path]:
        """{(kernel name, gfx): ELF path} over every code object of the folder."""
        from tensile_asm.codeobject import read_code_object

        if self._index is None:
            self._index = {}
            for path in self._files():
                for gfx, elf in self._elf_paths(path):
                    co = read_code_object(elf)
                    for name in co.kernels:
                        self._index.setdefault((name, gfx or co.processor), elf)
        return self._index

    def code_object(self, kernel: str, gfx: str) -> Path:
        """The ELF (a path) holding ``kernel`` for ``gfx``."""
        found = self.index().get((kernel, gfx))
        if found is None:
            raise UserError(f"{self.path}: none of its {len(self._files())} code objects (.co, .hsaco) holds kernel "
                            f"{kernel} for {gfx}; rebuild the library")
        return found

    def source_of(self, elf: Path) -> str:
        """The library file an ELF path of ``code_object`` came from."""
        elf = Path(elf)
        if elf.parent == self.path:
            return elf.name
        return elf.name.split(".")[0] + next((p.suffix for p in self._files() if p.stem == elf.name.split(".")[0]), "")

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "LibraryFolder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _processor_of(pred: Any) -> str | None:
    """The processor a hardware predicate names (inside And/AMDGPU), if any."""
    if isinstance(pred, dict):
        if pred.get("type") == "Processor":
            return str(pred.get("value"))
        for v in pred.values():
            found = _processor_of(v)
            if found:
                return found
    elif isinstance(pred, list):
        for v in pred:
            found = _processor_of(v)
            if found:
                return found
    return None


def _isa_in_name(sol: dict[str, Any]) -> str | None:
    found = _processor_of(sol.get("hardwarePredicate"))
    if found:
        return found
    m = re.search(r"_ISA([0-9a-f]+)_", str(sol.get("name", "")))
    return f"gfx{m.group(1)}" if m else None
