"""Main-loop FMA share (modelled static efficiency) of the lite logic's kernels: ours vs AMD Tensile 4.44's.

    ../shared/reference/tensile/tensile-tcl --no-probe 'gfx900;gfx906;gfx908;gfx90a' LOGIC TCL_OUT --keep-build-tmp
    for g in gfx900 gfx906 gfx908 gfx90a; do
        PYTHONPATH=$PWD .venv/bin/python -m tensile_asm.cli.create_library --architecture $g --jobs 1 LOGIC OURS/$g; done
    PYTHONPATH=$PWD .venv/bin/python bench/lite_fma_share.py TCL_OUT OURS > bench/lite_fma_share.md

LOGIC: ../shared/data/logic/lite_configs without the aquavanjaram942 files (Tensile's gfx942 helper kernel does not
compile with clang-19 here). Both libraries' code objects go through ``tensile-asm inspect --json --no-emulate``:
static efficiency = FMA issue cycles / all issue cycles of one pass through the main loop body (the issue_cycles
table of isa/<arch>.yaml: a model, not a measurement), for Tensile's kernels and ours alike. Kernels pair by
architecture and name (Tensile's multi-architecture build adds ISA/SNLL tokens; the other tokens, the parameters
that tell the solutions apart, are the same). TCL_OUT may be a build still running: its kept assembly files
(--keep-build-tmp) are inspected then.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def inspect(co: Path) -> dict[str, dict]:
    r = subprocess.run([sys.executable, "-m", "tensile_asm.cli.main", "inspect", "--json", "--no-emulate", str(co)],
                       cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if r.returncode:
        sys.exit(f"inspect {co} failed: {r.stderr[-2000:]}")
    doc = json.loads(r.stdout)
    return {k["kernel"]: k for k in doc.get("kernels", [doc])}     # one kernel: the object itself


def _tokens(name: str) -> frozenset:
    """A kernel name's parameter tokens, without those only a multi-architecture build adds (ISA..., SNLL...)."""
    return frozenset(t for t in name.split("_") if not t.startswith(("ISA", "SNLL")))


def tensile_kernels(out: Path) -> dict[tuple, dict]:
    """(gfx, name tokens) -> inspect's kernel record, for every kernel of a TensileCreateLibrary output: from its
    library code objects, or (a build still running) from the assembly files it kept (--keep-build-tmp)."""
    found = {}
    cos = sorted((out / "library").glob("TensileLibrary*.co"))
    files = cos or sorted((out / "build_tmp").rglob("*.s"))
    for f in files:
        for name, k in inspect(f).items():
            found[(k["arch"], _tokens(name))] = k
    return found


def main(argv: list[str]) -> int:
    tcl_out, ours = Path(argv[0]), Path(argv[1])
    theirs = tensile_kernels(tcl_out)
    rows, worse, missing = [], [], 0
    for gdir in sorted(p for p in ours.iterdir() if p.is_dir()):
        gfx = gdir.name
        lib = yaml.load((gdir / "library" / "TensileLibrary.yaml").read_text(), Loader=yaml.CSafeLoader)
        mine_k = {}
        for co in sorted((gdir / "library").glob("*.co")):
            mine_k.update(inspect(co))
        for sol in sorted(lib["solutions"], key=lambda s: (s["problemType"]["operationIdentifier"],
                                                            int(s["libraryLogicIndex"]))):
            op, idx = sol["problemType"]["operationIdentifier"].replace("Contraction_l_", ""), sol["libraryLogicIndex"]
            mine, tk = mine_k.get(sol["name"]), theirs.get((gfx, _tokens(sol["name"])))
            if tk is None or mine is None or not mine.get("loop") or not tk.get("loop"):
                missing += 1
                continue
            a, b = mine["loop"]["static_efficiency"], tk["loop"]["static_efficiency"]
            if a < b - 1e-9:
                worse.append(f"{gfx} {op} #{idx}")
            rows.append(f"| {gfx} | {op} #{idx} | {sol['name'][:60]} | "
                        f"{100 * a:.1f}% ({mine['loop']['fma_instructions']}/{mine['loop']['instructions']}) | "
                        f"{100 * b:.1f}% ({tk['loop']['fma_instructions']}/{tk['loop']['instructions']}) | "
                        f"{100 * (a - b):+.1f} |")
    print("# Lite logic: main-loop FMA share (modelled static efficiency), ours vs Tensile 4.44\n")
    print(__doc__.split("\n\n", 1)[1].strip().replace("\n    ", "\n    "))
    print(f"\n**{len(rows)} solutions compared ({missing} of ours without a Tensile kernel to pair with); ours "
          f"below Tensile's on {len(worse)}"
          + (f": {', '.join(worse)}" if worse else "") + ".**\n")
    print("| arch | operation #index | solution | ours (FMA/instructions) | Tensile | ours - Tensile (points) |")
    print("|---|---|---|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
