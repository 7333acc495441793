"""rocBLAS's hip fallback logic: per logic file, how many solutions the writers accept for one architecture
(supports(), from parameters, without writing kernels), and the first reason for the rest.

    PYTHONPATH=$PWD .venv/bin/python tools/hip_fallback_coverage.py gfx906
"""
import sys, re, collections
from pathlib import Path
from tensile_asm.library.create import _collect, _default_builder
from tensile_asm.isa.arch import load_arch
root = Path('/work/shared/data/logic/rocblas-asm_full/hip')
arch = sys.argv[1] if len(sys.argv) > 1 else 'gfx906'
b = _default_builder(); a = load_arch(arch)
items, files = _collect(root, [arch])
per = collections.defaultdict(lambda: [0, 0]); reasons = collections.Counter()
for it in items:
    r = it.reason
    if r is None:
        r = ("invalid: " + it.solution.rejection) if it.solution.rejection else b.supports(it.solution, a)
    f = it.logic.path.name
    per[f][1] += 1
    if r is None: per[f][0] += 1
    else: reasons[re.sub(r'\d+', 'N', r)[:160]] += 1
print(arch, sum(v[0] for v in per.values()), '/', sum(v[1] for v in per.values()))
for f in sorted(per): print(f"  {per[f][0]:3d}/{per[f][1]:3d} {f}")
for r, n in reasons.most_common(): print(f"  {n:5d} {r}")
