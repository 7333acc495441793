"""Write the master library create-library would write if every solution it reads were built: for comparing
selection only (tools/tensile_host/compare.py), over problem types our kernel writer cannot build yet.

usage: python tools/tensile_host/selection_library.py LOGIC_DIR OUT_DIR --architecture GFX[;GFX...]

This is ``tensile_asm.library.create.create_library`` with ``--library-format msgpack``, driven by a kernel
builder that accepts every solution and writes no kernels: OUT_DIR/library/TensileLibrary.dat is built by
the same code (naming, logic kinds, master-library tree, merging) from every solution that reads, while the
``.co`` files are placeholders (the bytes ``not a code object``) that nothing can load. Use
tensile-create-library for a library to run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tensile_asm.errors import UserError  # noqa: E402
from tensile_asm.kernel_cache import CacheEntry, KernelPart  # noqa: E402
from tensile_asm.library.create import create_library  # noqa: E402


class SelectionOnlyBuilder:
    """A KernelBuilder that builds every solution into nothing."""

    def version(self) -> str:
        return "tensile-host-selection-only-1"

    def supports(self, solution, arch) -> str | None:
        return None

    def compile_kernel(self, solution, arch, name, timing=None) -> CacheEntry:
        return CacheEntry([KernelPart(name, b"", {".name": name})], None)

    def link_parts(self, parts, arch, out_path) -> None:
        Path(out_path).write_bytes(b"not a code object")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logic_dir", type=Path)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--architecture", required=True, help="gfx name(s), ';'-separated")
    args = ap.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory() as cache:
            report = create_library(args.logic_dir, args.out_dir, args.architecture, build=SelectionOnlyBuilder(),
                                    library_format="msgpack", jobs=1, cache_dir=cache, progress=False)
    except UserError as e:
        print(f"selection_library.py: {e}", file=sys.stderr)
        return 2
    reasons = sorted({e.reason for e in report.not_built})
    print(f"{report.library_path}: {len(report.built)} solutions from {len(report.logic_files)} logic files; "
          f"{len(report.not_built)} left out, unread or invalid ({'; '.join(reasons[:3]) or '-'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
