"""tensile-asm: emit and verify GEMM kernels for one solution.

  tensile-asm emit   --arch gfx90a --solution SOL.yaml [--index I] -o OUT/
  tensile-asm verify --arch gfx90a --solution SOL.yaml [--index I] --size M,N,K[,BATCH] ...
                     [--alpha A] [--beta B] [--asm FILE.s] [--seed S]
  tensile-asm verify --library DIR [--solution NAME] --size M,N,K[,BATCH] ... [--alpha A] [--beta B]
  tensile-asm inspect FILE.co|FILE.s [--arch gfx90a] [--kernel NAME] [--json] [--no-emulate]
  tensile-asm inspect --arch gfx90a --solution SOL.yaml [--index I] [--json] [--no-emulate]
  tensile-asm emulator-coverage [--arch gfx90a ...] [--missing] [--json | --markdown]
  tensile-asm merge-logic ORIGINAL INCREMENTAL OUT [--force | --no-force] [--no-trim] [--add-solution-tags]
  tensile-asm tune CONFIG.yaml OUT/ [--backend hip|emulator|model] [--arch gfx90a] [--device mi210] [--shard I/N]
  tensile-asm predict --device mi210 --solution SOL.yaml [--index I] --size M,N,K[,B] ... [--json]
  tensile-asm predict --list-devices
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

from tensile_asm.cli import emulator_coverage, tune
from tensile_asm.cli.common import parse_size, run_main
from tensile_asm.errors import UserError

PROG = "tensile-asm"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Generate and verify GEMM kernels in AMDGPU assembly. "
                                "Verification runs the linked code object on a CPU emulator (emulated, not measured).")
    sub = p.add_subparsers(dest="command", required=True)

    def solution_args(sp, required=True):
        sp.add_argument("--arch", required=required, help="target architecture, e.g. gfx90a (see isa/*.yaml)")
        sp.add_argument("--solution", required=required, type=Path,
                        help="YAML file with one solution (Tensile parameter names), or a logic file with --index")
        sp.add_argument("--index", type=int, default=None, help="solution index when --solution is a logic file")

    emit = sub.add_parser("emit", help="write NAME.s and NAME.co (and NAME.hip for a KernelLanguage: Source "
                                       "solution) and print the kernel's resources")
    solution_args(emit)
    emit.add_argument("-o", "--output", required=True, type=Path, help="output directory")

    verify = sub.add_parser("verify", help="run the kernel on the CPU emulator against a float64 numpy reference",
                            description="Build a solution's kernel (--arch, --solution) or take the solutions of a "
                            "library built earlier, by tensile-create-library or by Tensile's TensileCreateLibrary "
                            "(--library: its TensileLibrary*.yaml/.dat, lazy-loading placeholders included, and "
                            "code objects: offload bundles, compressed or not, raw .co and .hsaco; no kernel "
                            "writer), run each on every --size its predicates accept on the CPU emulator and "
                            "compare D with a float64 numpy reference.")
    solution_args(verify, required=False)
    verify.add_argument("--library", type=Path, default=None, metavar="DIR",
                        help="a create-library output directory (or its library/ folder or TensileLibrary "
                        "file): verify its solutions from the library files alone; with it, --solution NAME "
                        "picks one solution by name (default: every solution)")
    verify.add_argument("--kernel", default=None, metavar="NAME",
                        help="with --library: only the solution of this kernel (the same name in Tensile's libraries)")
    verify.add_argument("--ignore-predicates", action="store_true",
                        help="with --library: run each solution on every --size, even where its predicates do "
                        "not accept it (some only keep a size from a slow kernel, e.g. GlobalSplitUCheckMinK; "
                        "others, e.g. Free0SizeMultiple, state what the kernel assumes)")
    verify.add_argument("--size", action="append", required=True, metavar="M,N,K[,BATCH]",
                        help="problem size; repeat for several")
    verify.add_argument("--alpha", type=float, default=1.5,
                        help="alpha (default 1.5; complex kernels run with alpha * (1 + 0.5i))")
    verify.add_argument("--beta", type=float, default=None,
                        help="default 0.5, or 0 when the problem type has UseBeta: false (complex kernels: "
                        "beta * (1 + 0.5i))")
    verify.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    verify.add_argument("--asm", type=Path, default=None,
                        help="verify this (possibly hand-edited) assembly file instead of the generated one")
    verify.add_argument("--no-strict", action="store_true",
                        help="do not stop on missing waits, hazards or LDS races (strict is the default)")

    insp = sub.add_parser("inspect", help="resources, occupancy, main-loop mix, modelled static efficiency "
                          "and LDS bank conflicts of a .co or .s")
    insp.add_argument("file", type=Path, nargs="?", default=None,
                      help="code object (.co) or assembly file (.s, assembled first); or give --solution")
    insp.add_argument("--arch", default=None, help="architecture of a .s without an .amdgcn_target directive, "
                      "or of the kernel built from --solution")
    insp.add_argument("--solution", type=Path, default=None,
                      help="build this solution (a solution YAML or a logic file with --index) and inspect it")
    insp.add_argument("--index", type=int, default=None, help="solution index when --solution is a logic file")
    insp.add_argument("--kernel", default=None, help="inspect only this kernel of the code object")
    insp.add_argument("--json", action="store_true", help="print one JSON object")
    insp.add_argument("--no-emulate", action="store_true",
                      help="skip the emulated launch that counts LDS bank conflicts")
    emulator_coverage.add_parser(sub)
    tune.add_parsers(sub)
    merge = sub.add_parser(
        "merge-logic", help="merge incremental tuning results into a logic folder (Tensile's merge.py)",
        description="For each *.yaml in INCREMENTAL with a file of the same name in ORIGINAL, write the merged "
                    "logic file to OUT: new sizes are added; a size both have takes the incremental solution if "
                    "it is faster (or always, when forced); solutions no size uses are dropped and the rest "
                    "renumbered. As Tensile's Tensile/Utilities/merge.py; the default merge policy is Tensile's: "
                    "forced unless the file name contains 'arcturus'.")
    merge.add_argument("original", type=Path, metavar="ORIGINAL", help="logic folder without the tuned sizes")
    merge.add_argument("incremental", type=Path, metavar="INCREMENTAL", help="logic folder with the tuning results")
    merge.add_argument("out", type=Path, metavar="OUT", help="folder the merged logic files are written to")
    policy = merge.add_mutually_exclusive_group()
    policy.add_argument("--force", dest="force", action="store_true", default=None,
                        help="a size both have always takes the incremental solution")
    policy.add_argument("--no-force", dest="force", action="store_false",
                        help="a size both have takes the incremental solution only if it is faster")
    merge.add_argument("--no-trim", dest="trim", action="store_false",
                       help="keep 8-entry sizes as they are (default: trim to M, N, batch, K as Tensile does)")
    merge.add_argument("--add-solution-tags", action="store_true",
                       help="key sizes by MFMA/VALU and the Alpha/Beta/CEqualsD assertions too, so solutions with "
                            "different requirements coexist for one size")
    return p


def _load(args):
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.solution import load_solution_file
    from tensile_asm.solution.naming import min_names
    from tensile_asm.writer.build import build_kernel

    arch = load_arch(args.arch)
    sol = load_solution_file(args.solution, index=args.index)
    sol.validate()
    name = min_names([sol])[0]
    if _is_source(sol):     # KernelLanguage: Source: compiled from HIP, no assembly Kernel object
        return arch, sol, None
    kernel = build_kernel(sol, arch, name)
    return arch, sol, kernel


def _is_source(sol) -> bool:
    from tensile_asm.source.build import is_source
    return is_source(sol)


def _source_name(sol) -> str:
    from tensile_asm.solution.naming import min_names
    return min_names([sol])[0]


def _print_resources(kernel) -> None:
    r, occ = kernel.resources, kernel.occupancy()
    print(f"kernel     {kernel.name}")
    print(f"registers  {r.vgprs} VGPR, {r.agprs} AGPR, {r.sgprs} SGPR")
    print(f"LDS        {r.lds_bytes} bytes")
    print(f"occupancy  {occ['waves_per_simd']} waves/SIMD (limited by {occ['limited_by']})")


def cmd_emit(args) -> int:
    from tensile_asm import toolchain
    from tensile_asm.writer.build import link_kernels

    arch, sol, kernel = _load(args)
    if kernel is None:
        return _emit_source(arch, sol, args.output)
    text = kernel.text()
    out = args.output
    co = out / f"{kernel.name}.co"
    link_kernels([kernel], arch, co)   # with the helper kernels it needs (GlobalSplitU's beta-only)
    toolchain.write_atomic(out / f"{kernel.name}.s", text)
    _print_resources(kernel)
    print(f"wrote      {out / (kernel.name + '.s')}\n           {co}")
    return 0


def _emit_source(arch, sol, out: Path) -> int:
    """emit for a KernelLanguage: Source solution: the HIP text, clang's assembly and the code object."""
    from tensile_asm import toolchain
    from tensile_asm.source.build import link_source_kernel, resources_text

    name = _source_name(sol)
    co = out / f"{name}.co"
    text, asm, metadata = link_source_kernel(sol, arch, name, co)
    toolchain.write_atomic(out / f"{name}.hip", text)
    toolchain.write_atomic(out / f"{name}.s", asm)
    print(resources_text(name, metadata))
    print(f"wrote      {out / (name + '.hip')}\n           {out / (name + '.s')}\n           {co}")
    return 0


def cmd_verify(args) -> int:
    if args.library is not None:
        given = [f"--{o}" for o in ("arch", "index", "asm") if getattr(args, o) is not None]
        if given:
            raise UserError(f"verify --library takes its kernels from the library; drop {', '.join(given)}")
        args.solution_name = str(args.solution) if args.solution is not None else None
        return _verify_library(args)
    missing = [f"--{o}" for o in ("arch", "solution") if getattr(args, o) is None]
    if missing:
        raise UserError(f"verify needs {' and '.join(missing)} (or --library OUT_DIR for a library built earlier)")
    if args.kernel is not None:
        raise UserError("verify --kernel picks a kernel of --library OUT_DIR; a --solution has one kernel")
    return _verify_solution(args)


def _verify_solution(args) -> int:
    from tensile_asm import toolchain
    from tensile_asm.benchmark.verify import Size, verify_sizes
    from tensile_asm.gemm import GemmKernelContract
    from tensile_asm.runtime.emulated import EmulatedRuntime
    from tensile_asm.writer.build import link_kernels, with_helpers

    sizes = [Size(*parse_size(s)) for s in args.size]
    arch, sol, kernel = _load(args)
    if kernel is None and args.asm is not None:
        raise UserError(f"verify --asm replaces an assembly kernel; {args.solution} is KernelLanguage: Source")
    contract = GemmKernelContract.from_solution(sol, kernel.name if kernel is not None else _source_name(sol))
    if args.beta is None:
        args.beta = 0.5 if sol.problem_type.use_beta else 0.0
    elif args.beta != 0.0 and not sol.problem_type.use_beta:
        raise UserError(f"--beta {args.beta:g}: the solution's ProblemType has UseBeta: false, so the kernel "
                        f"computes D = alpha*A*B; use --beta 0 or a problem type with UseBeta: true")
    with tempfile.TemporaryDirectory(prefix="tensile-asm-verify-") as tmp:
        co = Path(tmp) / "kernel.co"
        if args.asm is not None:
            if not args.asm.is_file():
                raise UserError(f"--asm {args.asm}: no such file")
            helpers = [k.text() for k in with_helpers([kernel], arch)[1:]]
            toolchain.link([toolchain.assemble(t, arch, str(args.asm) if i == 0 else "helper.s")
                            for i, t in enumerate([args.asm.read_text()] + helpers)], co, str(args.asm))
            name = _single_kernel_name(co, default=kernel.name,
                                       exclude={k.name for k in with_helpers([kernel], arch)[1:]})
            contract = dataclasses.replace(contract, name=name)
            print(f"verifying {args.asm} (kernel {name}) on the emulator")
        elif kernel is None:
            from tensile_asm.source.build import link_source_kernel
            _, asm, _ = link_source_kernel(sol, arch, contract.name, co)
            print(f"verifying {contract.name} (KernelLanguage: Source) on the emulator")
        else:
            link_kernels([kernel], arch, co)
            print(f"verifying {kernel.name} on the emulator")
        source = args.asm.read_text() if args.asm is not None else kernel.text() if kernel is not None else asm
        runtime = EmulatedRuntime(strict=not args.no_strict, source=source)
        results = verify_sizes(co, contract, sizes, args.alpha, args.beta, args.seed, runtime)
    return _print_results(results)


def _verify_library(args) -> int:
    """Every solution of a library (ours or one Tensile's TensileCreateLibrary wrote) whose predicates
    accept a size, launched from its code object on the emulator: no writer."""
    from tensile_asm.benchmark.verify import Size, verify_library
    from tensile_asm.library.codeobjects import LibraryFolder

    sizes = [Size(*parse_size(s)) for s in args.size]
    names = {n for n in (args.solution_name, args.kernel) if n} or None
    with LibraryFolder(args.library) as folder:
        def progress(name, gfx, accepted):
            print(f"verifying {name} ({gfx}) on the emulator", flush=True)
        solutions = verify_library(folder, sizes, args.alpha, args.beta, args.seed, strict=not args.no_strict,
                                   names=names, progress=progress, check_predicates=not args.ignore_predicates)
        if not solutions:
            what = f"no solution named {', '.join(sorted(names))}" if names else "no solutions"
            raise UserError(f"{folder.path}: the library has {what}; nothing to verify")
    failed = ran = 0
    for s in solutions:
        if s.not_run:
            print(f"{s.name} ({s.architecture}): not run: {s.not_run}")
            failed += 1
            continue
        if not s.results:
            print(f"{s.name} ({s.architecture}): its predicates accept none of the sizes")
            continue
        ran += 1
        print(f"{s.name} ({s.architecture}, {s.code_object})")
        failed += _print_results(s.results)
        if s.skipped:
            print(f"  sizes its predicates do not accept: {', '.join(str(z) for z in s.skipped)}")
    print(f"{ran} solutions run, {failed} failed or not run, "
          f"{sum(1 for s in solutions if not s.not_run and not s.results)} accepted no size")
    if ran == 0 and failed == 0:
        raise UserError("no solution's predicates accept any of the sizes; try other --size values")
    return 1 if failed else 0


def _print_results(results) -> int:
    failed = 0
    print(f"{'size':<18} {'alpha':>7} {'beta':>7} {'max rel err':>12} {'tolerance':>10}  result")
    for r in results:
        err = "-" if r.max_rel_error is None else f"{r.max_rel_error:.3e}"
        tol = "-" if r.tolerance is None else f"{r.tolerance:.1e}"
        print(f"{str(r.size):<18} {r.alpha:>7g} {r.beta:>7g} {err:>12} {tol:>10}  "
              f"{'PASS' if r.passed else 'FAIL'}{'  ' + r.detail if r.detail else ''}")
        failed += not r.passed
        if r.estimated_cycles is not None:
            print(f"{'':<18} modelled: {r.estimated_cycles} cycles for one workgroup (cycle model, not a measurement)")
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


def cmd_inspect(args) -> int:
    from tensile_asm.inspect import run
    from tensile_asm.writer.build import link_kernels

    if (args.file is None) == (args.solution is None):
        raise UserError("inspect: give either a code object or assembly file, or --solution SOL.yaml with --arch")
    if args.solution is None:
        return run(args)
    if args.arch is None:
        raise UserError(f"inspect --solution {args.solution}: say which architecture to build for, e.g. --arch gfx90a")
    arch, sol, kernel = _load(args)
    name = kernel.name if kernel is not None else _source_name(sol)
    with tempfile.TemporaryDirectory(prefix="tensile-asm-inspect-") as tmp:
        args.file = Path(tmp) / f"{name}.co"
        if kernel is None:
            from tensile_asm.source.build import link_source_kernel
            link_source_kernel(sol, arch, name, args.file)
        else:
            link_kernels([kernel], arch, args.file)
        args.kernel = args.kernel or name
        return run(args)


def _single_kernel_name(co: Path, default: str, exclude: set = frozenset()) -> str:
    from tensile_asm.codeobject import read_code_object

    names = [n for n in read_code_object(co).kernels if n not in exclude]
    return names[0] if len(names) == 1 else default


def cmd_merge_logic(args) -> int:
    from tensile_asm.library.merge import merge_logic

    stats, skipped = merge_logic(args.original, args.incremental, args.out, args.force, args.trim,
                                 args.add_solution_tags)
    for st in stats:
        print(st.line())
    for name in skipped:
        print(f"{name}: skipped (no file of that name in {args.original})")
    print(f"{len(stats)} file(s) merged into {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler = {"emit": cmd_emit, "verify": cmd_verify, "inspect": cmd_inspect,
               "emulator-coverage": emulator_coverage.run, "merge-logic": cmd_merge_logic,
               "tune": tune.run_tune, "predict": tune.run_predict}[args.command]
    return run_main(PROG, lambda: handler(args))


if __name__ == "__main__":
    sys.exit(main())
