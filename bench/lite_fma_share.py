"""Main-loop FMA share (modelled static efficiency) of the lite logic's kernels: ours vs AMD Tensile 4.44's.

    mkdir -p LOGIC && cp ../shared/data/logic/lite_configs/{vega,arcturus,aldebaran}*.yaml LOGIC/
    ../shared/reference/tensile/tensile-tcl --no-probe 'gfx900;gfx906;gfx908;gfx90a' LOGIC TCL --keep-build-tmp
    for g in gfx900 gfx906 gfx908 gfx90a; do
        PYTHONPATH=$PWD .venv/bin/python -m tensile_asm.cli.create_library --architecture $g --jobs 1 --no-cache \\
            --library-format yaml LOGIC OURS/$g; done
    PYTHONPATH=$PWD .venv/bin/python bench/lite_fma_share.py TCL OURS > bench/lite_fma_share.md

LOGIC: ../shared/data/logic/lite_configs without the aquavanjaram942 files (Tensile's gfx942 helper kernel does not
compile with clang-19 here, so Tensile builds no gfx942 kernel to compare with). Every code object of both libraries
goes through ``tensile_asm.inspect`` (what ``tensile-asm inspect --json --no-emulate`` prints): static efficiency =
FMA issue cycles / all issue cycles of one pass through the main loop body (the issue_cycles table of
isa/<arch>.yaml: a model, not a measurement; the FMA share of the loop's issue cycles), for Tensile's kernels and
ours alike. Solutions pair by (architecture, operation, index in the logic file): Tensile's TensileLibrary.dat and
our TensileLibrary.yaml both record every solution's libraryLogicIndex, problem type and kernel name, and the
kernel's architecture is the code object it sits in.
"""

from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

import msgpack
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _kernels(cos) -> dict[str, dict]:
    """kernel name -> (gfx, inspect's record) for every kernel of the code objects ``cos``."""
    from tensile_asm.inspect import inspect_code_object

    out = {}
    for co in sorted(cos):
        for r in inspect_code_object(co, emulate=False):
            out[r.name] = r.as_dict()
    return out


def _key(sol: dict, gfx: str) -> tuple:
    return gfx, sol["problemType"]["operationIdentifier"].replace("Contraction_l_", ""), int(sol["libraryLogicIndex"])


def tensile_side(tcl: Path) -> dict[tuple, dict]:
    """(gfx, operation, logic index) -> inspect's record of Tensile's kernel for that solution."""
    lib = msgpack.unpackb((tcl / "library/TensileLibrary.dat").read_bytes(), raw=False, strict_map_key=False)
    kernels = _kernels((tcl / "library").glob("TensileLibrary_gfx*.co"))
    out = {}
    for sol in lib["solutions"]:
        k = kernels.get(sol["name"])
        if k is not None:
            out[_key(sol, k["arch"])] = k
    return out


def our_side(ours: Path) -> dict[tuple, tuple[str, dict | None]]:
    """(gfx, operation, logic index) -> (solution name, inspect's record of our kernel or None)."""
    out = {}
    for gdir in sorted(p for p in ours.iterdir() if p.is_dir()):
        lib = yaml.load((gdir / "library/TensileLibrary.yaml").read_text(), Loader=yaml.CSafeLoader)
        kernels = _kernels((gdir / "library").glob("*.co"))
        for sol in lib["solutions"]:
            out[_key(sol, gdir.name)] = (sol["name"], kernels.get(sol["name"]))
    return out


def _cell(k: dict | None) -> str:
    if k is None:
        return "no kernel"
    loop = k["loop"]
    if loop is None:
        return f"no loop ({k.get('loop_reason')})"
    return f"{100 * loop['static_efficiency']:.1f}% ({loop['fma_instructions']}/{loop['instructions']})"


def _others(k: dict | None) -> str:
    if k is None or k["loop"] is None:
        return ""
    return ", ".join(f"{a} {b}" for a, b in k["loop"]["mix"].items() if a != "valu_fma")


def gfx906_bar() -> str:
    """Issue 10's bar: the lite 128x128 TT8x8 kernel (vega10_Cijk_Ailk_Bjlk_SB #4) built for gfx906."""
    import tempfile

    from tensile_asm.inspect.core import inspect_file
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.library.logic import read_logic_file
    from tensile_asm.writer.build import build_kernel

    sol = read_logic_file(ROOT.parent / "shared/data/logic/lite_configs/vega10_Cijk_Ailk_Bjlk_SB.yaml").solutions[4]
    kernel = build_kernel(sol, load_arch("gfx906"), "bar906")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{kernel.name}.s"
        path.write_text(kernel.text())
        [report] = inspect_file(path, emulate=False)
    loop = report.as_dict()["loop"]
    return (f"gfx906 bar (issue 10: >= 0.90): vega10_Cijk_Ailk_Bjlk_SB #4 (MT128x128x8 TT8x8) built for gfx906: "
            f"modelled static efficiency {loop['static_efficiency']:.4f} ({loop['fma_instructions']} FMA of "
            f"{loop['instructions']} loop instructions).")


def main(argv: list[str]) -> int:
    tcl, ours = Path(argv[0]), Path(argv[1])
    theirs, mine = tensile_side(tcl), our_side(ours)
    rows, worse, unpaired, equal = [], [], [], 0
    for key in sorted(mine):
        gfx, op, idx = key
        name, a = mine[key]
        b = theirs.get(key)
        if a is None or b is None or a["loop"] is None or b["loop"] is None:
            unpaired.append(f"{gfx} {op} #{idx}")
            diff = ""
        else:
            ea, eb = a["loop"]["static_efficiency"], b["loop"]["static_efficiency"]
            diff = f"{100 * (ea - eb):+.1f}"
            if ea < eb - 1e-9:
                worse.append(f"{gfx} {op} #{idx}")
            elif abs(ea - eb) < 1e-9:
                equal += 1
        rows.append(f"| {gfx} | {op} #{idx} | {name} | {_cell(a)} | {_cell(b)} | {diff} | {_others(a)} | "
                    f"{_others(b)} |")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print("# Lite logic: main-loop FMA share (modelled static efficiency), ours vs Tensile 4.44\n")
    print(f"Made {datetime.date.today().isoformat()} at {commit} by `bench/lite_fma_share.py`:\n")
    print(__doc__.split("\n\n", 1)[1].strip("\n"))
    compared = len(rows) - len(unpaired)
    print(f"\n**{compared} solutions compared; ours below Tensile's on {len(worse)}"
          + (f" ({', '.join(worse)})" if worse else "") + f", equal on {equal}, above on "
          f"{compared - len(worse) - equal}"
          + (f"; not compared (a kernel or loop missing on one side): {', '.join(unpaired)}" if unpaired else "")
          + ".**\n")
    print(gfx906_bar() + "\n")
    print("| arch | operation #index | our solution | ours (FMA/instructions) | Tensile | ours - Tensile (points) "
          "| our other loop instructions | Tensile's other loop instructions |")
    print("|---|---|---|---:|---:|---:|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
