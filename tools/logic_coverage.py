"""Per rocBLAS schedule: how many solutions the writers accept (supports(), answered from parameters without
writing kernels) and the first reason for the rest, grouped with digits as N.

    .venv/bin/python tools/logic_coverage.py [LOGIC_ROOT] [vega10 vega20 arcturus aldebaran aquavanjaram942]

LOGIC_ROOT defaults to ../shared/data/logic/rocblas-asm_full. A kernel whose registers overflow is found only when
written, so "accepted" can exceed what create-library builds."""
import argparse, sys, re, collections
from pathlib import Path
from tensile_asm.library.create import _collect, _default_builder
from tensile_asm.isa.arch import load_arch
sched = {'vega10': 'gfx900', 'vega20': 'gfx906', 'arcturus': 'gfx908', 'aldebaran': 'gfx90a', 'aquavanjaram942': 'gfx942'}
ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("args", nargs="*", metavar="[LOGIC_ROOT] SCHEDULE",
                help="a folder holding the schedules' folders (default ../shared/data/logic/rocblas-asm_full), then "
                     "schedules (default all: " + " ".join(sched) + ")")
args = ap.parse_args().args
root = Path(__file__).resolve().parents[1].parent / 'shared/data/logic/rocblas-asm_full'
if args and args[0] not in sched:
    root = Path(args.pop(0))
    if not root.is_dir():
        sys.exit(f"{root}: neither a schedule ({', '.join(sched)}) nor a folder holding the schedules' folders")
unknown = [a for a in args if a not in sched]
if unknown:
    sys.exit(f"{unknown[0]}: not a schedule; use one of {', '.join(sched)}")
want = args or list(sched)
b = _default_builder()
for s in want:
    arch = sched[s]; a = load_arch(arch)
    items, files = _collect(root / s, [arch])
    reasons = collections.Counter(); built = 0
    for it in items:
        r = it.reason
        if r is None:
            r = ("invalid: " + it.solution.rejection) if it.solution.rejection else b.supports(it.solution, a)
        if r is None: built += 1
        else: reasons[re.sub(r'\d+', 'N', r)[:150]] += 1
    print(f"== {s} ({arch}): accepted {built}/{len(items)}", flush=True)
    for r, n in reasons.most_common(25): print(f"  {n:5d} {r}")
