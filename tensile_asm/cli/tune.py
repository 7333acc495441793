"""``tensile-asm tune`` and ``tensile-asm predict`` (and the ``tensile`` entry point, Tensile's argument shape)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tensile_asm.cli.common import parse_size, run_main
from tensile_asm.errors import UserError

BACKENDS = ("hip", "emulator", "model")


def _shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected I/N, e.g. --shard 0/4") from None
    if n < 1 or not 0 <= i < n:
        raise argparse.ArgumentTypeError(f"{text!r}: I must be 0..N-1 and N at least 1, e.g. --shard 0/4")
    return i, n


def add_tune_arguments(p: argparse.ArgumentParser, tensile_shape: bool = False) -> None:
    p.add_argument("config", type=Path, metavar="CONFIG.yaml", help="a Tensile tuning config")
    p.add_argument("output", type=Path, metavar="OUT", help="folder of the step folders (created; reruns resume)")
    p.add_argument("--backend", choices=BACKENDS, default="hip",
                   help="hip: time on an AMD GPU with hip-python (measured); emulator: validate on the CPU emulator, "
                        "times from its cycle model (modelled, small sizes only); model: the analytical model "
                        "(modelled). Default hip")
    p.add_argument("--arch", default=None, help="architecture to build for (default: LibraryLogic ArchitectureName, "
                                                "else the --device's)")
    p.add_argument("--device", default=None, metavar="NAME",
                   help="model/emulator device (tensile-asm predict --list-devices; default: the architecture's)")
    p.add_argument("--shard", type=_shard, default=None, metavar="I/N",
                   help="benchmark only the candidates whose fork index is I modulo N (0-based) and stop after "
                        "step 1; a run without --shard then merges every shard's results")
    p.add_argument("--library-logic", action="store_true",
                   help="write 3_LibraryLogic and 4_LibraryClient even when the config has no LibraryLogic section")
    p.add_argument("--maps", action="store_true",
                   help="for size groups that vary in two of M, N, K, batch: PNG maps of the winning GFLOPS and of "
                        "the winning solution in OUT/maps/ (needs matplotlib: pip install tensile-asm[plots])")
    p.add_argument("--selection", choices=("nearest", "model"), default="nearest",
                   help="how sizes not benchmarked get a solution. nearest (Tensile's): the library picks the exact "
                        "row nearest by the logic file's distance (Euclidean); model: the analytical model ranks "
                        "the winners at each --selection-size and its pick is added to the logic file as an exact "
                        "row (modelled). Either way OUT/3_LibraryLogic/<logic>.selection.csv lists the choice for "
                        "each --selection-size. Default nearest")
    p.add_argument("--selection-size", action="append", default=[], metavar="M,N,K[,BATCH]",
                   help="a size not benchmarked to choose a solution for (repeat for several)")
    p.add_argument("--jobs", type=int, default=None, help="kernel-building processes (default: the cores)")
    p.add_argument("--cache-dir", type=Path, default=None, help="kernel cache (default: create-library's)")
    p.add_argument("--global-parameters", nargs="+", default=[], metavar="KEY=VALUE",
                   help="override GlobalParameters of the config (VALUE read as YAML), as Tensile's option")


def run_tune(args) -> int:
    from tensile_asm.tuning import driver

    overrides = {}
    for item in args.global_parameters:
        if "=" not in item:
            raise UserError(f"--global-parameters {item!r}: expected KEY=VALUE, e.g. SleepPercent=0")
        import yaml
        key, value = item.split("=", 1)
        overrides[key] = yaml.safe_load(value)
    report = driver.tune(args.config, args.output, backend=args.backend, arch=args.arch, device=args.device,
                         shard=args.shard, jobs=args.jobs, cache_dir=args.cache_dir,
                         library_logic=args.library_logic, overrides=overrides, maps=args.maps,
                         selection=args.selection, selection_sizes=[parse_size(s) for s in args.selection_size])
    for note in report.notes:
        print(f"note: {note}")
    for g in report.groups:
        reasons: dict[str, int] = {}
        for c in g.candidates:
            if not c.ok:
                head = "duplicate of an earlier fork" if c.reason.startswith("duplicate") else c.reason[:160]
                reasons[head] = reasons.get(head, 0) + 1
        print(f"{g.name}: {g.forks} forks: {g.built} built, {g.rejected} rejected; {g.sizes} sizes; "
              f"{g.benchmarked} benchmarked, {g.reused} reused; winners for {len(g.winners)} sizes"
              + (f", none for {len(g.no_winner)}" if g.no_winner else ""))
        top = sorted(reasons.items(), key=lambda kv: -kv[1])
        for reason, n in top[:6]:
            print(f"    {n:6d} x {reason}")
        if len(top) > 6:
            print(f"    {sum(n for _, n in top[6:]):6d} x {len(top) - 6} other reasons (00_Final/rejected.yaml lists all)")
    for f in report.logic_files:
        print(f"logic file {f}")
        for c in report.selections.get(f, []):
            print(f"    {c.size}: solution {c.solution_index} {c.solution_name} ({c.method}"
                  + (f", {c.gflops:.1f} GFLOPS modelled" if c.method == "model" else f", {c.provenance}") + ")")
    if report.library is not None:
        print(f"library    {report.library}")
    provenance = {"hip": "measured", "emulator": "modelled (emulator cycle model; validation emulated)",
                  "model": "modelled (analytical model)"}[report.backend]
    print(f"backend {report.backend}: times are {provenance}; step folders in {report.out}")
    return 0


def add_parsers(sub) -> None:
    tune = sub.add_parser("tune", help="run a Tensile tuning config: benchmark every fork at every size, keep the "
                                       "winners, write the logic file and build the library",
                          description="Run a Tensile tuning config in Tensile's step folders (1_BenchmarkProblems, "
                                      "2_BenchmarkData, 3_LibraryLogic, 4_LibraryClient). Forks that are invalid or "
                                      "that the writer cannot build are listed with their reason in "
                                      "00_Final/rejected.yaml. Every result says its backend and whether it was "
                                      "measured, emulated or modelled.")
    add_tune_arguments(tune)
    pred = sub.add_parser("predict", help="the analytical model's GFLOPS of one solution at sizes on a device "
                                          "(modelled, not measured)")
    pred.add_argument("--device", default=None, help="device name (see --list-devices)")
    pred.add_argument("--solution", type=Path, default=None,
                      help="YAML file with one solution, or a logic file with --index")
    pred.add_argument("--index", type=int, default=None, help="solution index when --solution is a logic file")
    pred.add_argument("--size", action="append", default=[], metavar="M,N,K[,BATCH]", help="repeat for several")
    pred.add_argument("--json", action="store_true", help="print a JSON list of {size, gflops, ...} in --size order")
    pred.add_argument("--list-devices", action="store_true", help="print the devices table and its sources")


def run_predict(args) -> int:
    from tensile_asm.runtime.devices import device, devices

    if args.list_devices:
        table = devices()
        if args.json:
            print(json.dumps([d.as_dict() for d in table.values()], indent=1))
            return 0
        print(f"{'device':<10} {'arch':<7} {'CUs':>4} {'MHz':>5} {'GB/s':>7} {'L2 MB':>6}  peak TFLOPS")
        for d in table.values():
            peaks = ", ".join(f"{k} {v:g}" for k, v in d.peak_tflops.items())
            print(f"{d.name:<10} {d.arch:<7} {d.cus:>4} {d.clock_mhz:>5g} {d.memory_gbs:>7g} "
                  f"{d.l2_bytes / 2 ** 20:>6g}  {peaks}" + (f"  ({d.note})" if d.note else ""))
        print("sources: tensile-asm predict --list-devices --json; devices/devices.yaml")
        return 0
    missing = [f"--{o}" for o in ("device", "solution") if getattr(args, o) is None]
    if missing or not args.size:
        raise UserError(f"predict needs {', '.join(missing + ([] if args.size else ['--size']))} "
                        f"(or --list-devices)")
    dev = device(args.device)
    rows = predict(args.solution, args.index, dev.name, [parse_size(s) for s in args.size])
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{rows[0]['kernel']} on {dev.name} (modelled by the analytical model, not measured)")
    print(f"{'size':<22} {'GFLOPS':>10} {'us':>12}  bound")
    for r in rows:
        print(f"{'x'.join(map(str, r['size'])):<22} {r['gflops']:>10.1f} {r['us']:>12.2f}  {r['bound']}")
    return 0


def predict(solution_path: Path, index: int | None, device_name: str, sizes) -> list[dict]:
    """The model's rows for one solution at each size (in order): the kernel is built once."""
    from tensile_asm.gemm import GemmKernelContract
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.runtime.base import GemmSize
    from tensile_asm.runtime.devices import device
    from tensile_asm.runtime.model import ModelRuntime, estimate
    from tensile_asm.solution import load_solution_file
    from tensile_asm.solution.naming import min_names
    from tensile_asm.writer.build import build_kernel, link_kernels

    dev = device(device_name)
    arch = load_arch(dev.arch)
    sol = load_solution_file(solution_path, index=index)
    sol.validate()
    name = min_names([sol])[0]
    kernel = build_kernel(sol, arch, name)
    contract = GemmKernelContract.from_solution(sol, name)
    rt = ModelRuntime(device=dev.name)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tensile-asm-predict-") as tmp:
        co = Path(tmp) / f"{name}.co"
        link_kernels([kernel], arch, co)
        facts = rt.facts(co, name)
        for s in sizes:
            size = GemmSize(*s)
            if size.batch != 1 and not contract.batched:
                raise UserError(f"--size {','.join(map(str, s))}: the solution's problem type is not batched; "
                                f"give M,N,K")
            est = estimate(contract, facts, size, dev)
            rows.append({"size": list(s), "gflops": size.flops / est.seconds / 1e9, "us": est.seconds * 1e6,
                         "bound": est.bound, "kernel": name, "device": dev.name, "provenance": "modelled",
                         "detail": est.detail(dev, facts)})
    return rows


def tensile_main(argv: list[str] | None = None) -> int:
    """``tensile CONFIG.yaml OUT``: Tensile's command line (the tuning driver of this project behind it)."""
    p = argparse.ArgumentParser(prog="tensile", description="Tensile's tuning command: run a tuning config "
                                "(tensile-asm tune with Tensile's argument shape).")
    add_tune_arguments(p, tensile_shape=True)
    p.add_argument("--no-cache", action="store_true", help="accepted for Tensile's shape: candidates are always "
                                                           "regenerated (kernels still come from the kernel cache)")
    p.add_argument("--version", action="version", version="tensile (tensile-asm) 4.44-compatible")
    args = p.parse_args(argv)
    return run_main("tensile", lambda: run_tune(args))


if __name__ == "__main__":
    sys.exit(tensile_main())
