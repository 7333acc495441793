"""tensile-create-library: build code objects and the master solution library from logic files.

  tensile-create-library --architecture gfx90a [--jobs N] [--strict] [--print-timing] LOGIC_DIR OUT_DIR [HIP]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tensile_asm.cli.common import EXIT_USAGE, run_main
from tensile_asm.errors import UserError
from tensile_asm.library.create import default_jobs

PROG = "tensile-create-library"
EXIT_STRICT = 1    # --strict and a solution was not built

# Tensile's TensileCreateLibrary options that this tool does not implement (yet), with what to do instead.
NOT_IMPLEMENTED = {
    "--num-merged-files": "one code object per architecture is written",
    "--short-file-names": "file names are not shortened",
    "--embed-library": "write the library files and load them at run time",
    "--generate-sources-and-exit": "only assembly kernels are generated",
    "--cxx-compiler": "the LLVM toolchain is found automatically (tools/setup)",
    "--cmake-cxx-compiler": "the LLVM toolchain is found automatically (tools/setup)",
    "--assembler": "the LLVM toolchain is found automatically (tools/setup)",
    "--client-config": "no client is built",
    "--build-client": "no client is built",
    "--keep-build-tmp": "no build directory is kept",
    "--offload-bundler": "offload bundles are written by tensile_asm/library/bundle.py, no bundler is run",
    "--package-library": "write the library files as they are",
    "--version": "libraries carry no version field",
    "--ignore-asm-cap-cache": "assembler capabilities come from isa/*.yaml",
    "--asm-cache": "assembler capabilities come from isa/*.yaml",
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Build GEMM kernels from Tensile library logic files into code objects named and packed as "
                    "Tensile 4.44 does (OUT_DIR/library/TensileLibrary_<gfx>.co: a compressed clang offload "
                    "bundle per architecture; helper kernels, GlobalSplitU's, and KernelLanguage: Source kernels in "
                    "Kernels.so-000-<gfx>.hsaco; "
                    "with --no-merge-files raw <kernel>_<gfx>.co and <helper>.so-000-<gfx>.hsaco), the master "
                    "solution library OUT_DIR/library/TensileLibrary.yaml (or .dat) listing the built solutions "
                    "(TensileLibrary_<gfx> with --separate-architectures; with --lazy-library-loading "
                    "TensileLibrary_lazy_<gfx> and a library and code object per problem type), "
                    "library/TensileManifest.txt listing those files, and OUT_DIR/support.json saying for every "
                    "solution whether it was built and, if not, why.",
        epilog="Logic files (*.yaml, then *.yml) are found recursively under LOGIC_DIR, as Tensile's "
               "findLogicFiles finds them: by the schedule name in their file name (gfx90a: aldebaran, gfx942: "
               "aquavanjaram942, gfx908: arcturus, gfx906: vega20, gfx900: vega10) or 'hip' (fallback logic), "
               "experimental/ folders only with --lazy-library-loading, in the file system's order (a folder's "
               "files before its subfolders'), which numbers the solutions as Tensile numbers them. "
               "Errors you can fix are reported in one line with exit code 2.")
    p.add_argument("logic_dir", metavar="LOGIC_DIR", help="folder holding library logic files (*.yaml)")
    p.add_argument("out_dir", metavar="OUT_DIR", help="output folder (library/ and support.json go here)")
    p.add_argument("runtime_language", metavar="HIP", nargs="?", default="HIP",
                   help="Tensile's runtime-language argument; only HIP is accepted")
    p.add_argument("--architecture", required=True,
                   help="target gfx name(s), e.g. gfx90a, or several separated by ';' (e.g. 'gfx90a;gfx942')")
    merge = p.add_mutually_exclusive_group()
    merge.add_argument("--merge-files", dest="merge_files", action="store_true", default=True,
                       help="one code object per architecture (default)")
    merge.add_argument("--no-merge-files", dest="merge_files", action="store_false",
                       help="one raw code object per kernel, library/<kernel>_<gfx>.co (names past 64 "
                       "characters shortened with a hash, as Tensile)")
    p.add_argument("--separate-architectures", action="store_true",
                   help="one master library per architecture, library/TensileLibrary_<gfx>.yaml (or .dat), its "
                        "solutions numbered from the architecture's index as Tensile (gfx90a: 0x90a << 18)")
    p.add_argument("--lazy-library-loading", action="store_true",
                   help="with --separate-architectures: library/TensileLibrary_lazy_<gfx> whose leaves are "
                        "placeholders naming one library per problem type, "
                        "TensileLibrary_Type_<AC>_<operation>_<gfx>.yaml (or .dat), each with its kernels in "
                        "the code object of that name (.co, a compressed bundle), as Tensile 4.44")
    p.add_argument("--write-master-solution-index", action="store_true",
                   help="with --lazy-library-loading: library/TensileMasterSolutionIndex.csv (architecture, lazy "
                        "library, library index, solution index, solution name of every solution of the logic, "
                        "built or not: support.json says which were built), as Tensile 4.44 writes it (only with "
                        "lazy loading)")
    p.add_argument("--library-format", choices=("yaml", "msgpack"), default="yaml",
                   help="TensileLibrary.yaml (default) or TensileLibrary.dat (msgpack)")
    p.add_argument("--code-object-version", choices=("default", "V4", "V5"), default="V5",
                   help="code object version; the kernels are written as V5 (default and V5 mean that)")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="worker processes writing and assembling kernels (default: the cores this process may "
                        "use, here %d)" % default_jobs())
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="kernel cache: each kernel's objects kept by a hash of its parameters, architecture, "
                        "this package's source and the toolchain, so an unchanged rebuild writes and assembles "
                        "nothing (default: $XDG_CACHE_HOME/tensile-asm, else ~/.cache/tensile-asm)")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor fill the kernel cache (build every kernel in a temporary one)")
    p.add_argument("--strict", action="store_true",
                   help="exit with status 1 if any solution was not built (the outputs and support.json are "
                        "still written)")
    p.add_argument("--print-timing", action="store_true",
                   help="print the seconds spent per stage (read, assess, build, link, library) and kernel counts")
    p.add_argument("--compress", choices=("zstd", "zlib", "none"), default="zstd",
                   help="compression of the merged code objects' offload bundles (default zstd, as Tensile's "
                   "bundler call; none: an uncompressed bundle); not a TensileCreateLibrary option")
    p.add_argument("--generate-manifest-and-exit", action="store_true",
                   help="write library/TensileManifest.txt (the files a build would write, from the solutions "
                   "the writer supports) and exit without building")
    p.add_argument("--verify-manifest", action="store_true",
                   help="check that every file library/TensileManifest.txt lists exists and exit (1 if not)")
    p.add_argument("--quiet", action="store_true", help="do not print the built / not-built table")
    return p


def _rejected_option(argv: list[str]) -> str | None:
    for arg in argv:
        opt = arg.split("=", 1)[0]
        if opt in NOT_IMPLEMENTED:
            return f"option {opt} is not implemented: {NOT_IMPLEMENTED[opt]}"
    return None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    reason = _rejected_option(argv)
    if reason:
        print(f"{PROG}: error: {reason}", file=sys.stderr)
        return EXIT_USAGE
    args = _parser().parse_args(argv)

    def body() -> int:
        from tensile_asm.library.create import create_library

        if args.runtime_language != "HIP":
            raise UserError(f"runtime language {args.runtime_language!r} is not supported; use HIP or leave it out")
        if args.code_object_version == "V4":
            raise UserError("--code-object-version V4 is not implemented; the kernels are written as code "
                            "object V5 (use V5 or default)")
        if args.verify_manifest:
            from tensile_asm.library.outputs import MANIFEST, verify_manifest
            missing = verify_manifest(Path(args.out_dir) / "library")
            for f in missing:
                print(f"{PROG}: {MANIFEST} lists {f}, which does not exist", file=sys.stderr)
            if not missing:
                print(f"every file in {Path(args.out_dir) / 'library' / MANIFEST} exists")
            return 1 if missing else 0
        report = create_library(args.logic_dir, args.out_dir, args.architecture,
                                library_format=args.library_format, merge_files=args.merge_files,
                                jobs=args.jobs, cache_dir=args.cache_dir, use_cache=not args.no_cache,
                                compress=args.compress, manifest_only=args.generate_manifest_and_exit,
                                separate_architectures=args.separate_architectures,
                                lazy_library_loading=args.lazy_library_loading,
                                master_solution_index=args.write_master_solution_index)
        if args.generate_manifest_and_exit:
            print(f"wrote {report.manifest_path}")
            return 0
        if not args.quiet:
            print(report.table())
            for path in report.code_objects + report.library_files + [report.manifest_path, report.support_path]:
                print(f"wrote {path}")
        if args.print_timing:
            print(report.timing_table())
        missing = report.not_built
        if args.strict and missing:
            first = missing[0]
            where = f"{first.logic_file}#{first.logic_index}" if first.logic_file is not None else "its logic file"
            print(f"{PROG}: error: --strict: {len(missing)} of {len(report.entries)} solutions were not built "
                  f"(first: {first.name} for {first.architecture} from {where}: {first.reason}); all are listed "
                  f"in {report.support_path}", file=sys.stderr)
            return EXIT_STRICT
        return 0

    return run_main(PROG, body)


if __name__ == "__main__":
    sys.exit(main())
