"""Code generation per kernel, ours beside AMD Tensile 4.44's, on the same logic, on this machine:

    python bench/codegen_vs_tensile.py                    # lite_configs, gfx900;gfx906;gfx908;gfx90a
    python bench/codegen_vs_tensile.py --runs 3 --json OUT.json

What is timed, per kernel, as CPU seconds (``time.process_time``) of one process writing every kernel in turn
(``--jobs 1``, a fresh process per run, so one-time start-up costs such as loading tables are included):
- Tensile: ``KernelWriter.getKernelObjectAssemblyFile(kernel)`` inside Tensile's own TensileCreateLibrary
  (``../shared/reference/tensile/tensile-tcl``'s environment, its probe skipped): Tensile's KernelWriterAssembly
  writes the kernel's assembly text and saves the ``.s`` file; its assembler and linker run after that call,
  outside the timer.
- ours: ``writer.build.written(solution, arch, name)`` inside our create-library (``create_library(...,
  jobs=1)``, no kernel cache): the kernel and its helper kernels written, registers allocated, the waitcnt,
  hazard and branch passes, the text rendered with its metadata; the assembler runs after, outside the timer.
Both sides write every kernel of the logic their library builds; the table gives the kernel count of each,
the mean, median and 90th percentile of the per-kernel times, and the mean length of a kernel's text in lines
(Tensile's ``.s`` and ours, comments included). Run it on a quiet machine for numbers worth quoting; the
runs of a side alternate with the other side's.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
TCL = SHARED / "reference/tensile/tensile-tcl"
TENSILE_HOME = Path(os.environ.get("TENSILE_REF_HOME", Path.home() / ".cache/tensile-ref"))

# Runs TensileCreateLibrary as tensile-tcl does (its cached assembler capabilities, so no probe), with
# KernelWriter.getKernelObjectAssemblyFile timed; writes [(kernel, cpu s, wall s, lines of its .s)].
TENSILE_RUNNER = textwrap.dedent("""
    import json, os, pickle, sys, time
    sys.path.insert(0, os.environ["TENSILE_SRC"])
    import Tensile.TensileCreateLibrary as T
    from Tensile.KernelWriter import KernelWriter
    orig = T.assignGlobalParameters
    def assign(config, capabilitiesCache=None):
        with open(os.environ["TCL_CAPS_FILE"], "rb") as f:
            return orig(config, pickle.load(f))
    T.assignGlobalParameters = assign
    times = []
    write = KernelWriter.getKernelObjectAssemblyFile
    def timed(self, kernel):
        t0, w0 = time.process_time(), time.perf_counter()
        path = write(self, kernel)
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
        with open(path) as f:
            lines = sum(1 for _ in f)
        times.append((os.path.basename(path), cpu, wall, lines))
        return path
    KernelWriter.getKernelObjectAssemblyFile = timed
    sys.argv[0] = "TensileCreateLibrary"
    try:
        T.TensileCreateLibrary()
    finally:
        with open(os.environ["TIMES_OUT"], "w") as f:
            json.dump(times, f)
""")

# Runs our create-library in this checkout, jobs 1, no cache, with writer.build.written timed.
OURS_RUNNER = textwrap.dedent("""
    import json, sys, time
    from tensile_asm.writer import build
    from tensile_asm.library.create import create_library
    times = []
    write = build.written
    def timed(solution, arch, name):
        t0, w0 = time.process_time(), time.perf_counter()
        out = write(solution, arch, name)
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
        times.append((name, cpu, wall, out[0][1].count("\\n")))
        return out
    build.written = timed
    logic, out, arch, times_out = sys.argv[1:5]
    create_library(logic, out, arch, jobs=1, use_cache=False, progress=False)
    with open(times_out, "w") as f:
        json.dump(times, f)
""")


def run_tensile(logic: Path, arch: str, tmp: Path, k: int) -> list:
    caps = TENSILE_HOME / "asmcaps-clang19.pkl"
    if not (TENSILE_HOME / "venv/bin/python").exists() or not caps.exists():
        sys.exit(f"Tensile's environment is not set up under {TENSILE_HOME}: run {TCL} once (with its probe) first")
    runner, out, times = tmp / "tensile_runner.py", tmp / f"tensile{k}", tmp / f"tensile{k}.json"
    runner.write_text(TENSILE_RUNNER)
    out.mkdir()
    env = dict(os.environ, HIP_DEVICE_LIB_PATH="/usr/lib/x86_64-linux-gnu/amdgcn/bitcode",
               TENSILE_SRC=str(TENSILE_HOME / "src"), TCL_CAPS_FILE=str(caps), TIMES_OUT=str(times))
    llvm = "/usr/lib/llvm-19/bin"
    cmd = [str(TENSILE_HOME / "venv/bin/python"), "-u", str(runner), f"--cxx-compiler={llvm}/clang++",
           f"--c-compiler={llvm}/clang", f"--assembler={llvm}/clang++",
           f"--offload-bundler={llvm}/clang-offload-bundler", f"--architecture={arch}",
           "--code-object-version=default", "--no-enumerate", "--merge-files", "--library-format=msgpack",
           "--jobs", "1", str(logic), str(out), "HIP"]
    print(f"running Tensile {k}: TensileCreateLibrary --jobs 1 {logic} ({arch})", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, cwd=out, capture_output=True, text=True, env=env)
    if proc.returncode != 0 or not times.exists():
        sys.exit(f"Tensile's TensileCreateLibrary failed ({proc.returncode}):\n{proc.stdout[-1500:]}{proc.stderr[-1500:]}")
    return json.loads(times.read_text())


def run_ours(logic: Path, arch: str, tmp: Path, k: int) -> list:
    times = tmp / f"ours{k}.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    print(f"running ours {k}: create_library(jobs=1, no cache) {logic} ({arch})", file=sys.stderr, flush=True)
    proc = subprocess.run([sys.executable, "-c", OURS_RUNNER, str(logic), str(tmp / f"ours{k}"), arch, str(times)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"our create-library failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(times.read_text())


def summary(times: list) -> dict:
    cpu = sorted(1e3 * t[1] for t in times)
    return {"kernels": len(times), "mean_ms": statistics.mean(cpu), "median_ms": statistics.median(cpu),
            "p90_ms": cpu[int(0.9 * (len(cpu) - 1))], "total_s": sum(cpu) / 1e3,
            "lines": statistics.mean(t[3] for t in times)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--logic", type=Path, default=SHARED / "data/logic/lite_configs")
    p.add_argument("--arch", default="gfx900;gfx906;gfx908;gfx90a")
    p.add_argument("--runs", type=int, default=2, help="runs of each side, alternating (default 2)")
    p.add_argument("--json", type=Path, help="write every per-kernel time here")
    p.add_argument("--note", default="", help="a label printed above the table (e.g. 'quiet machine')")
    args = p.parse_args()
    if not args.logic.is_dir():
        sys.exit(f"--logic {args.logic}: not a folder of logic files")
    rows, raw = [], {}
    with tempfile.TemporaryDirectory(prefix="codegen-vs-tensile-") as tmp:
        tmp = Path(tmp)
        for k in range(args.runs):
            for side, run in (("Tensile 4.44", run_tensile), ("tensile-asm", run_ours)):
                times = run(args.logic, args.arch, tmp, k)
                raw[f"{side} run {k + 1}"] = times
                rows.append((side, k + 1, summary(times)))
    if args.json:
        args.json.write_text(json.dumps(raw))
    print(f"code generation per kernel (CPU ms, one process, jobs 1), {args.logic.name} for {args.arch}, "
          f"{datetime.date.today().isoformat()}{', ' + args.note if args.note else ''}\n")
    print("| tool | run | kernels | mean ms | median ms | p90 ms | sum s | lines per kernel |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for side, k, s in rows:
        print(f"| {side} | {k} | {s['kernels']} | {s['mean_ms']:.1f} | {s['median_ms']:.1f} | {s['p90_ms']:.1f} | "
              f"{s['total_s']:.2f} | {s['lines']:.0f} |")
    best = {side: min((s for sd, _, s in rows if sd == side), key=lambda s: s["mean_ms"])
            for side in ("Tensile 4.44", "tensile-asm")}
    t, o = best["Tensile 4.44"], best["tensile-asm"]
    print(f"\nbest runs: Tensile {t['mean_ms']:.1f} ms mean / {t['median_ms']:.1f} median, ours {o['mean_ms']:.1f} / "
          f"{o['median_ms']:.1f}: ours {t['mean_ms'] / o['mean_ms']:.2f}x less CPU per kernel (mean), "
          f"{t['median_ms'] / o['median_ms']:.2f}x (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
