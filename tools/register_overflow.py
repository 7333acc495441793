"""Per rocBLAS MFMA logic file: of the solutions supports() accepts, how many the writer cannot write because
their registers do not fit (isa/allocation.py's "needs more than N ?GPRs"), with the VGPR/AGPR/SGPR counts
each would use. Code generation only (writer.build.build_kernel, no assembler): ~0.1 s a kernel.

    PYTHONPATH=$PWD .venv/bin/python tools/register_overflow.py [--every N] [--files PATTERN] [--list]
        [LOGIC_ROOT] [arcturus aldebaran aquavanjaram942]

--every N writes every Nth accepted solution of each file (default 1: all); --files keeps files whose name
contains PATTERN; --list prints each overflowing solution's name and counts. LOGIC_ROOT defaults to
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
from tensile_asm.writer import build

SCHEDULES = {"arcturus": "gfx908", "aldebaran": "gfx90a", "aquavanjaram942": "gfx942"}
_OVER = re.compile(r"needs more than (\d+) (\w)GPRs(?: \(uses VGPR (\d+), AGPR (\d+), SGPR (\d+))?")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("args", nargs="*")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--files", default="")
    ap.add_argument("--list", action="store_true")
    ns = ap.parse_args(argv)
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
                        and build.supports(e.solution, arch) is None]
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


def _brief(sol) -> str:
    p = sol.params
    keys = ("DepthU", "MatrixInstruction", "PrefetchGlobalRead", "PrefetchLocalRead",
            "GlobalReadVectorWidth", "VectorWidth", "StoreRemapVectorWidth", "MIArchVgpr", "1LDSBuffer")
    return f"MT{sol.derived.mt0}x{sol.derived.mt1} " + " ".join(f"{k}={p.get(k)}" for k in keys if k in p)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
