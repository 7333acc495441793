"""create-library speed beside AMD Tensile's TensileCreateLibrary on the same logic, one command:

    python bench/create_library_speed.py            # lite_configs, gfx900;gfx906;gfx908;gfx90a
    python bench/create_library_speed.py --skip-tensile --logic DIR --arch gfx90a

Runs, each in a fresh output folder (wall-clock time of the whole command, Python start-up included):
- Tensile as users run it: ``../shared/reference/tensile/tensile-tcl ARCHS LOGIC OUT`` (its ~42 s assembler
  capability probe included), and with ``--no-probe``;
- ours cold (an empty kernel cache: every kernel written and assembled) with ``--jobs 1`` and ``--jobs 2``;
- ours warm (the cache the cold run filled, a fresh output folder: nothing written or assembled) with jobs 1
  and 2; and a one-solution change (one solution's WorkGroupMapping changed in a copy of the logic).
Prints a markdown table: seconds, kernels per second (distinct built kernels over the run's seconds), and the
speed-up over Tensile with and without its probe. Run it on a quiet machine for numbers worth quoting.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
TCL = SHARED / "reference/tensile/tensile-tcl"


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, str]:
    print(f"running: {' '.join(cmd)}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    print(f"  {seconds:.1f} s", file=sys.stderr, flush=True)
    return seconds, proc.stdout


def ours(logic: Path, out: Path, arch: str, cache: Path, jobs: int) -> tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return timed([sys.executable, "-m", "tensile_asm.cli.create_library", "--architecture", arch, "--quiet",
                  "--print-timing", "--jobs", str(jobs), "--cache-dir", str(cache), str(logic), str(out)], env)


def built_kernels(out: Path) -> int:
    support = json.loads((out / "support.json").read_text())
    return len({(e["architecture"], e["name"]) for e in support if e["built"]})


CHANGE = ("WorkGroupMapping: 8\n", "WorkGroupMapping: 4\n")   # a value others already have: names stay


def changed_copy(logic: Path, dest: Path) -> Path:
    """A copy of the logic with one solution changed: the first ``WorkGroupMapping: 8`` of a vega10/vega20
    file (VALU solutions, which this writer builds; else of any file) becomes 4. The parameter already
    differs between solutions, so the other kernels keep their (min-naming) names."""
    shutil.copytree(logic, dest)
    paths = sorted(dest.rglob("*.yaml"), key=lambda p: (not p.name.startswith("vega"), str(p)))
    for path in paths:
        text = path.read_text()
        at = text.find(CHANGE[0])
        if at >= 0:
            path.write_text(text[:at] + CHANGE[1] + text[at + len(CHANGE[0]):])
            return dest
    sys.exit(f"no solution with {CHANGE[0].strip()} under {logic} to change")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--logic", type=Path, default=SHARED / "data/logic/lite_configs")
    p.add_argument("--arch", default="gfx900;gfx906;gfx908;gfx90a")
    p.add_argument("--skip-tensile", action="store_true", help="time ours only")
    p.add_argument("--note", default="", help="a label printed above the table (e.g. 'quiet machine')")
    args = p.parse_args()
    rows = []   # (tool, mode, jobs, seconds, kernels, stdout)
    with tempfile.TemporaryDirectory(prefix="cl-speed-") as tmp:
        tmp = Path(tmp)
        if not args.skip_tensile:
            for mode, extra in (("as users run it (probe)", []), ("--no-probe", ["--no-probe"])):
                out = tmp / f"tensile{len(rows)}"
                s, _ = timed([str(TCL), *extra, args.arch, str(args.logic), str(out)])
                cos = sorted((out / "library").glob("*.co")) + sorted((out / "library").glob("*.hsaco"))
                if not cos:
                    sys.exit(f"Tensile wrote no code object under {out}/library")
                rows.append(("Tensile 4.44", mode, "all cores", s, None, ""))
        for jobs in (1, 2):
            cache = tmp / f"cache-j{jobs}"
            s, text = ours(args.logic, tmp / f"cold{jobs}", args.arch, cache, jobs)
            n = built_kernels(tmp / f"cold{jobs}")
            rows.append(("tensile-asm", "cold (empty cache)", str(jobs), s, n, text))
        for jobs in (1, 2):
            s, text = ours(args.logic, tmp / f"warm{jobs}", args.arch, tmp / "cache-j2", jobs)
            rows.append(("tensile-asm", "warm (unchanged rebuild)", str(jobs), s, built_kernels(tmp / f"warm{jobs}"),
                         text))
        changed = changed_copy(args.logic, tmp / "changed-logic")
        s, text = ours(changed, tmp / "changed", args.arch, tmp / "cache-j2", 2)
        rows.append(("tensile-asm", "one solution changed", "2", s, built_kernels(tmp / "changed"), text))
    kernels = next(r[4] for r in rows if r[4] is not None)
    tensile = {r[1]: r[3] for r in rows if r[0].startswith("Tensile")}
    print(f"create-library speed, {args.logic.name} for {args.arch} ({kernels} kernels), "
          f"{datetime.date.today().isoformat()}{', ' + args.note if args.note else ''}, "
          f"{os.cpu_count()} cores\n")
    head = "| tool | run | jobs | seconds | kernels/s |"
    line = "|---|---|---|---:|---:|"
    if tensile:
        head += " vs Tensile as run | vs Tensile --no-probe |"
        line += "---:|---:|"
    print(head)
    print(line)
    for tool, mode, jobs, s, n, _ in rows:
        cells = f"| {tool} | {mode} | {jobs} | {s:.1f} | {(n or kernels) / s:.1f} |"
        if tensile:
            cells += "".join(f" {t / s:.1f}x |" for t in tensile.values())
        print(cells)
    print("\nour stage timings (--print-timing):")
    for tool, mode, jobs, _, _, text in rows:
        if text:
            print(f"\n{mode}, jobs {jobs}:\n{text.rstrip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
