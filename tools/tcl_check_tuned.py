"""Tune every shipped config with the model backend and hand each logic file the tuner writes to AMD's own
TensileCreateLibrary (Tensile 4.44 as ``../shared/reference/tensile/tensile-tcl --no-probe`` runs it), one logic
file at a time: the tuner's output must be a logic file Tensile itself builds.

usage: PYTHONPATH=$PWD python tools/tcl_check_tuned.py [--configs DIR] [--work DIR] [--only NAME ...] [--out MD]

Configs without a LibraryLogic section are tuned for gfx90a with ``--library-logic`` (as
bench/tune_shipped_configs.md does). A config whose tuning writes no logic file (no buildable fork) is listed as
such. Prints one line per logic file (``ok``/``FAILED`` with TensileCreateLibrary's exit status and the kernels
it wrote) and writes the table to ``--out`` (default: stdout only). Takes minutes per config on a shared machine:
not a CI test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
TCL = SHARED / "reference" / "tensile" / "tensile-tcl"


def _arch_of(logic: Path) -> str:
    data = yaml.load(logic.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    arch = data[2] if isinstance(data, list) else data.get("ArchitectureName")
    return arch["Architecture"] if isinstance(arch, dict) else str(arch)


def tune(config: Path, out: Path) -> tuple[int, str]:
    cfg = yaml.safe_load(config.read_text()) or {}
    cmd = [sys.executable, "-m", "tensile_asm.cli.main", "tune", str(config), str(out), "--backend", "model",
           "--jobs", "1"]
    if not cfg.get("LibraryLogic"):
        cmd += ["--arch", "gfx90a", "--library-logic"]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return r.returncode, " ".join(cmd[3:])


def tcl(logic: Path, work: Path) -> tuple[int, str, float]:
    arch = _arch_of(logic)
    src, dst = work / f"{logic.stem}.logic", work / f"{logic.stem}.tcl"
    src.mkdir(parents=True, exist_ok=True)
    for old in src.iterdir():
        old.unlink()
    (src / logic.name).write_text(logic.read_text())
    t = time.time()
    r = subprocess.run([str(TCL), "--no-probe", arch, str(src), str(dst)], capture_output=True, text=True)
    secs = time.time() - t
    lib = dst / "library"
    cos = sorted(p.name for p in lib.glob("*.co")) if lib.is_dir() else []
    tail = [ln for ln in (r.stdout + r.stderr).splitlines() if "fail" in ln.lower() or "error" in ln.lower()]
    note = ", ".join(cos) if r.returncode == 0 else "; ".join(tail[-3:]) or f"rc {r.returncode}"
    return r.returncode, f"{arch}: {note}", secs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", type=Path, default=SHARED / "data" / "configs")
    ap.add_argument("--work", type=Path, default=Path("/tmp/tcl_check_tuned"))
    ap.add_argument("--only", nargs="*", default=None, help="config file stems to check (default: all)")
    ap.add_argument("--reuse", action="store_true", help="reuse an existing tune folder under --work")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    if not TCL.is_file():
        print(f"{TCL} not found: the Tensile reference is needed", file=sys.stderr)
        return 2
    rows, failed = [], 0
    for config in sorted(a.configs.glob("*.yaml")):
        if a.only and config.stem not in a.only:
            continue
        out = a.work / "tune" / config.stem
        if not (a.reuse and (out / "3_LibraryLogic").is_dir()):
            rc, cmd = tune(config, out)
            if rc:
                rows.append((config.name, "-", f"tune failed rc {rc}: {cmd}", 0.0))
                failed += 1
                print(rows[-1], flush=True)
                continue
        logics = sorted((out / "3_LibraryLogic").glob("*.yaml"))
        if not logics:
            rows.append((config.name, "-", "no logic file (no buildable fork)", 0.0))
            print(f"{config.name}: no logic file", flush=True)
            continue
        for logic in logics:
            rc, note, secs = tcl(logic, a.work / "tcl")
            failed += rc != 0
            rows.append((config.name, logic.name, ("ok " if rc == 0 else f"FAILED rc {rc} ") + note, secs))
            print(f"{config.name} {logic.name}: {rows[-1][2]} ({secs:.0f} s)", flush=True)
    table = ["| config | logic file | TensileCreateLibrary 4.44 --no-probe | s |", "|---|---|---|---|"]
    table += [f"| {c} | {lg} | {n} | {s:.0f} |" for c, lg, n, s in rows]
    text = "\n".join(table) + f"\n\n{failed} failed\n"
    if a.out:
        a.out.write_text(text)
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
