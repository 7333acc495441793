"""Our MFMA main loop against Tensile's own kernel for the same real solution (issue #11, deliverable 7).

For the most frequent MacroTile / MatrixInstruction shapes of aldebaran's SGEMM (_SB, _SB_GB) and HHS (_HHS_BH)
logic, one real solution per shape that our writer builds is cut into a small logic directory; Tensile 4.44's own
TensileCreateLibrary (../shared/reference/tensile/tensile-tcl) and our create-library both build it, and
``tensile-asm inspect`` (tensile_asm.inspect) reads both code objects: the main loop's modelled static efficiency
(MFMA issue cycles over all issue cycles of one pass through the loop body, from isa/gfx90a.yaml's issue_cycles;
a model, not a measurement), the MFMA share of the loop's instructions, VGPRs, AGPRs and waves per SIMD.

    # 1. choose the solutions and cut the logic files (LOGIC/selection.json records the choice)
    .venv/bin/python bench/mfma_loop_vs_tensile.py select LOGIC [COUNT]
    # 2. build them with Tensile and with us
    ../shared/reference/tensile/tensile-tcl --no-probe gfx90a LOGIC TCL --keep-build-tmp
    .venv/bin/python -m tensile_asm.cli.create_library --architecture gfx90a --no-merge-files LOGIC OURS HIP
    # 3. the table
    .venv/bin/python bench/mfma_loop_vs_tensile.py table LOGIC OURS TCL > bench/mfma_loop_vs_tensile.md
"""

from __future__ import annotations

import collections
import datetime
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOGIC_ROOT = ROOT.parent / "shared/data/logic/rocblas-asm_full/aldebaran"
FILES = ["aldebaran_Cijk_Ailk_Bljk_SB.yaml", "aldebaran_Cijk_Alik_Bljk_SB.yaml",
         "aldebaran_Cijk_Ailk_Bljk_SB_GB.yaml", "aldebaran_Cijk_Alik_Bljk_SB_GB.yaml",
         "aldebaran_Cijk_Ailk_Bljk_HHS_BH.yaml", "aldebaran_Cijk_Alik_Bljk_HHS_BH.yaml"]


def shape_key(path: str, sol) -> tuple:
    d, mi = sol.derived, list(sol.params["MatrixInstruction"])
    return ("HHS" if "_HHS_" in path else "S", f"{d.mt0}x{d.mt1}", "x".join(str(v) for v in mi[:4]))


def select(out: Path, count: int) -> int:
    """The ``count`` most frequent (type, MacroTile, MatrixInstruction) shapes over FILES, and for each the
    first solution (in file order) that supports() accepts and whose registers fit; cut into ``out``."""
    from tensile_asm.errors import UserError
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.library.logic import read_logic_file
    from tensile_asm.writer.build import build_kernel, supports

    arch = load_arch("gfx90a")
    freq, cands = collections.Counter(), collections.defaultdict(list)
    for f in FILES:
        for e in read_logic_file(LOGIC_ROOT / f).entries:
            s = e.solution
            if s is None or e.error or not s.params.get("MatrixInstruction"):
                continue
            key = shape_key(f, s)
            freq[key] += 1
            cands[key].append((f, e.index, s))
    rows, by_file = [], collections.defaultdict(list)
    for key, n in freq.most_common():
        if len(rows) == count:
            break
        chosen, why = None, "no solution of this shape is accepted by supports()"
        for f, index, s in cands[key]:
            if not s.valid or supports(s, arch) is not None:
                continue
            try:
                build_kernel(s, arch, "probe")
            except UserError as e:
                why = str(e)
                continue
            chosen = (f, index)
            break
        row = {"type": key[0], "macro_tile": key[1], "mi": key[2], "solutions": n}
        if chosen:
            row.update(file=chosen[0], index=chosen[1], cut_index=len(by_file[chosen[0]]))
            by_file[chosen[0]].append(chosen[1])
        else:
            row["not_built"] = why
        rows.append(row)
        print(f"{key} x{n}: {chosen or why}", file=sys.stderr, flush=True)
    out.mkdir(parents=True, exist_ok=True)
    for f, indices in by_file.items():
        subprocess.run([sys.executable, str(ROOT / "tools/cut_logic.py"), str(LOGIC_ROOT / f), str(out / f)]
                       + [str(i) for i in indices], check=True)
    (out / "selection.json").write_text(json.dumps(rows, indent=1))
    return 0


def _reports(paths) -> dict:
    """kernel name -> inspect's dict, for every kernel of the code objects at ``paths``."""
    from tensile_asm.inspect import inspect_code_object

    out = {}
    for p in sorted(paths):
        for r in inspect_code_object(p, emulate=False):
            out[r.name] = r.as_dict()
    return out


def _cells(d: dict | None) -> list[str]:
    if d is None:
        return ["not built"] + [""] * 6
    loop = d["loop"]
    if loop is None:
        return [f"no loop ({d['loop_reason']})"] + [""] * 6
    busy = loop.get("overlap", {}).get("mfma_busy")
    return [f"{100 * loop['static_efficiency']:.1f}%", f"{100 * loop['count_ratio']:.1f}%",
            f"{loop['fma_instructions']}/{loop['instructions']}", str(d["vgpr"]), str(d["agpr"]),
            str(d["occupancy"]["waves_per_simd"]), "" if busy is None else f"{100 * busy:.1f}%"]


def _others(d: dict | None) -> str:
    if d is None or d["loop"] is None:
        return ""
    return ", ".join(f"{k} {v}" for k, v in d["loop"]["mix"].items() if k != "mfma")


def table(logic: Path, ours: Path, tcl: Path) -> int:
    rows = json.loads((logic / "selection.json").read_text())
    support = json.loads((ours / "support.json").read_text())
    name_of = {(s["file"], s["index"]): s["name"] for s in support}
    mine = _reports((ours / "library").glob("*.co"))
    theirs = _reports((tcl / "build_tmp").rglob("*.co"))
    print("# Our MFMA main loop vs Tensile's kernel for the same solution (aldebaran, gfx90a)\n")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"Made {datetime.date.today().isoformat()} at {commit} by `bench/mfma_loop_vs_tensile.py` (commands in its docstring;"
          f" Tensile 4.44 via tensile-tcl). Static efficiency: MFMA issue cycles / all issue cycles of one pass"
          f" through the main loop body, modelled from isa/gfx90a.yaml's issue_cycles (`tensile-asm inspect`), "
          f"not measured. MFMA share: MFMA instructions / all loop instructions. VGPR/AGPR as declared, "
          f"waves: waves per SIMD the resources allow. MFMA busy: inspect's order-aware overlap model (in-order "
          f"issue; the instructions after an MFMA issue while it runs in the matrix pipe; no memory latency), "
          f"the matrix pipe's share of one pass in steady state: where static efficiency ignores the order, "
          f"this shows how much memory work hides under the MFMAs.\n")
    head = ["shape (type MT MI)", "solutions", "solution (file#index)",
            "ours eff", "Tensile eff", "ours MFMA busy", "Tensile MFMA busy", "ours MFMA share", "Tensile MFMA share", "ours MFMA/instr",
            "Tensile MFMA/instr", "ours VGPR", "Tensile VGPR", "ours AGPR", "Tensile AGPR", "ours waves",
            "Tensile waves"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    at_least, behind, details = 0, [], []
    busy_at_least, busy_behind = 0, []
    for r in rows:
        shape = f"{r['type']} {r['macro_tile']} {r['mi']}"
        if "file" not in r:
            print(f"| {shape} | {r['solutions']} | none built: {r['not_built']} |" + " |" * (len(head) - 3))
            continue
        name = name_of.get((r["file"], r["cut_index"]))
        a, b = mine.get(name), theirs.get(name)
        ca, cb = _cells(a), _cells(b)
        cells = [shape, str(r["solutions"]), f"{r['file'].replace('aldebaran_Cijk_', '').replace('.yaml', '')}#{r['index']}",
                 ca[0], cb[0], ca[6], cb[6], ca[1], cb[1], ca[2], cb[2], ca[3], cb[3], ca[4], cb[4], ca[5], cb[5]]
        print("| " + " | ".join(cells) + " |")
        if a and b and a["loop"] and b["loop"]:
            if a["loop"]["static_efficiency"] >= b["loop"]["static_efficiency"] - 5e-7:
                at_least += 1
            else:
                behind.append(shape)
            ba, bb = a["loop"].get("overlap"), b["loop"].get("overlap")
            if ba and bb and ba["mfma_busy"] >= bb["mfma_busy"] - 5e-7:
                busy_at_least += 1
            else:
                busy_behind.append(shape)
        details.append((shape, name, _others(a), _others(b)))
    print(f"\nOurs at least Tensile's static efficiency: {at_least} of {len(rows)} rows"
          + (f"; behind: {', '.join(behind)}." if behind else "."))
    print(f"Ours at least Tensile's MFMA busy share (overlap model): {busy_at_least} of {len(rows)} rows"
          + (f"; behind: {', '.join(busy_behind)}." if busy_behind else "."))
    print("\n## The other instructions of each main loop (ours; Tensile's)\n")
    print("| shape | kernel | ours | Tensile |\n|---|---|---|---|")
    for shape, name, oa, ob in details:
        print(f"| {shape} | `{name}` | {oa} | {ob} |")
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "select" and len(argv) in (2, 3):
        return select(Path(argv[1]), int(argv[2]) if len(argv) == 3 else 20)
    if argv and argv[0] == "table" and len(argv) == 4:
        return table(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
