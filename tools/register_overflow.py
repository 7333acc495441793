"""Per rocBLAS MFMA logic file: of the solutions supports() accepts, how many the writer cannot write because
their registers do not fit (isa/allocation.py's "needs more than N ?GPRs"), with the VGPR/AGPR/SGPR counts
each would use. Code generation only (writer.build.build_kernel, no assembler): ~0.1 s a kernel.

    PYTHONPATH=$PWD .venv/bin/python tools/register_overflow.py [--every N] [--files PATTERN] [--list]
        [LOGIC_ROOT] [arcturus aldebaran aquavanjaram942]
    PYTHONPATH=$PWD .venv/bin/python tools/register_overflow.py --explain LOGIC.yaml INDEX [--kind v|a|s]

--every N writes every Nth accepted solution of each file (default 1: all); --files keeps files whose name
contains PATTERN; --list prints each overflowing solution's name and counts; --explain LOGIC.yaml INDEX [--kind v|a|s] writes one
solution with unlimited registers and prints the registers live at its peak, grouped by name. LOGIC_ROOT defaults to
../shared/data/logic/rocblas-asm_full. Other build failures are counted apart, with their first words."""
from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

from tensile_asm.errors import UserError
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.logic import find_logic_files, read_logic_file
from tensile_asm.source import build as source_build
from tensile_asm.writer import build

SCHEDULES = {"arcturus": "gfx908", "aldebaran": "gfx90a", "aquavanjaram942": "gfx942"}
_OVER = re.compile(r"needs more than (\d+) (\w)GPRs(?: \(uses VGPR (\d+), AGPR (\d+), SGPR (\d+))?")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("args", nargs="*")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--files", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--explain", nargs=2, metavar=("LOGIC.yaml", "INDEX"))
    ap.add_argument("--kind", default="v", choices=("v", "a", "s"))
    ns = ap.parse_args(argv)
    if ns.explain:
        return explain(Path(ns.explain[0]), int(ns.explain[1]), ns.kind)
    root = Path(__file__).resolve().parents[1].parent / "shared/data/logic/rocblas-asm_full"
    scheds = []
    for a in ns.args:
        if a in SCHEDULES:
            scheds.append(a)
        else:
            root = Path(a)
    total = collections.Counter()
    for sched in scheds or list(SCHEDULES):
        arch_name = SCHEDULES[sched]
        arch = load_arch(arch_name)
        print(f"== {sched} ({arch_name})", flush=True)
        for path in sorted(find_logic_files(root / sched, arch_name)):
            if ns.files not in path.name or not path.name.startswith(sched):
                continue
            fname = path.name
            accepted = [e for e in read_logic_file(path).entries
                        if e.solution is not None and not e.error and not e.solution.rejection
                        and not source_build.is_source(e.solution) and build.supports(e.solution, arch) is None]
            written = over = other = 0
            worst = collections.Counter()
            for it in accepted[::ns.every]:
                name = f"{fname}#{it.index}"
                try:
                    build.build_kernel(it.solution, arch, name)
                    written += 1
                except UserError as e:
                    m = _OVER.search(str(e))
                    if not m:
                        other += 1
                        print(f"   other failure {name}: {str(e)[:160]}")
                        continue
                    over += 1
                    v, a, s = m[3], m[4], m[5]   # (older messages: without the counts)
                    worst[f"{m[2]}>{m[1]}"] += 1
                    if ns.list:
                        print(f"   {name} {_brief(it.solution)}: "
                              f"VGPR {v} AGPR {a} SGPR {s}")
            n = written + over + other
            total["accepted"] += len(accepted); total["written"] += n; total["over"] += over; total["other"] += other
            kinds = ", ".join(f"{k} {c}" for k, c in worst.items())
            print(f"  {fname}: accepted {len(accepted)}, written {n}: overflow {over}"
                  + (f" ({kinds})" if kinds else "") + (f", other {other}" if other else ""), flush=True)
    print(f"total: accepted {total['accepted']}, written {total['written']}, register overflow {total['over']}, "
          f"other failures {total['other']}")
    return 0


def explain(path: Path, index: int, kind: str) -> int:
    """Write one solution with unlimited registers and print the registers of ``kind`` live where most are:
    the register-name groups (digits as N) with their sizes, largest first."""
    from tensile_asm.isa import allocation
    from tensile_asm.isa.module import LabelDef
    from tensile_asm.writer import kernel as kernel_module

    arch = load_arch(next(a for sched, a in SCHEDULES.items() if path.name.startswith(sched)))
    entry = next(e for e in read_logic_file(path).entries if e.index == index)
    seen = {}

    def unlimited(module, limits, what="kernel"):
        items = list(module.flatten())
        intervals, loops = allocation._intervals(items)
        for iv in intervals.values():
            if iv.vreg.fixed is not None:
                iv.start = 0
        allocation._extend_for_loops(intervals, loops)
        seen.update(items=items, intervals=intervals)
        return allocation.allocate(module, {k: 1 << 16 for k in limits}, what)

    kernel_module.allocate = unlimited
    k = build.build_kernel(entry.solution, arch, f"{path.name}#{index}")
    r = k.resources
    print(f"{path.name}#{index} {_brief(entry.solution)}: VGPR {r.vgprs} AGPR {r.agprs} SGPR {r.sgprs}")
    delta = collections.Counter()
    for iv in seen["intervals"].values():
        if iv.vreg.kind == kind:
            delta[iv.start] += iv.vreg.count
            delta[iv.end + 1] -= iv.vreg.count
    live = peak = at = 0
    for pos in sorted(delta):
        live += delta[pos]
        if live > peak:
            peak, at = live, pos
    label = next((it.name for it in reversed(seen["items"][:at + 1]) if isinstance(it, LabelDef)), "entry")
    print(f"peak: {peak} {kind.upper()}GPRs live at instruction {at} (after label {label})")
    groups, counts = collections.Counter(), collections.Counter()
    for iv in seen["intervals"].values():
        if iv.vreg.kind == kind and iv.start <= at <= iv.end:
            name = re.sub(r"\d+", "N", iv.vreg.name)
            groups[name] += iv.vreg.count
            counts[name] += 1
    for name, n in groups.most_common():
        print(f"  {n:4d} in {counts[name]:3d} x {name}")
    return 0


def _brief(sol) -> str:
    p = sol.params
    keys = ("DepthU", "MatrixInstruction", "PrefetchGlobalRead", "PrefetchLocalRead",
            "GlobalReadVectorWidth", "VectorWidth", "StoreRemapVectorWidth", "MIArchVgpr", "1LDSBuffer")
    return f"MT{sol.derived.mt0}x{sol.derived.mt1} " + " ".join(f"{k}={p.get(k)}" for k in keys if k in p)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
