"""A create-library output folder: per logic file, built/total and the grouped reasons from support.json, then a
seeded sample of built solutions per file verified from the library on the strict emulator (1x1x1 beta 0, then
67x37x23 batch 2 beta 0.5; 67x37x1031 batch 2 for those whose predicates took neither: GlobalSplitU's
GlobalSplitUCheckMinK, 768 for the fallback logic's GSU 3 solutions). Exit status 1 if a sampled solution failed or ran at no size.

    PYTHONPATH=$PWD .venv/bin/python tools/hip_fallback_sample.py OUT_DIR [PER_FILE=1] [SEED=13] [NAME_PART]

NAME_PART: verify only the sampled solutions whose names contain it (e.g. _GSU).
"""
import json, random, re, sys, collections
from pathlib import Path
from tensile_asm.benchmark.verify import Size, verify_library
from tensile_asm.library.codeobjects import LibraryFolder
out = Path(sys.argv[1]); per_file = int(sys.argv[2]) if len(sys.argv) > 2 else 1; seed = int(sys.argv[3]) if len(sys.argv) > 3 else 13
name_part = sys.argv[4] if len(sys.argv) > 4 else ''
support = json.loads((out / 'support.json').read_text())
rows = support['solutions'] if isinstance(support, dict) and 'solutions' in support else support
files = collections.defaultdict(list)
for r in rows:
    files[(r['architecture'], r['file'])].append(r)
rng = random.Random(seed); pick = {}
reasons = collections.Counter()
for (gfx, f), rs in sorted(files.items()):
    built = [r for r in rs if r['built']]
    print(f"{gfx} {Path(f).name:45s} {len(built):3d}/{len(rs):3d}")
    for r in rs:
        if not r['built']:
            reasons[(gfx, re.sub(r'\d+', 'N', r['reason'] or '?')[:140])] += 1
    for r in rng.sample(built, min(per_file, len(built))):
        if name_part in r['name']:
            pick[r['name']] = (gfx, Path(f).name)
for (gfx, why), n in sorted(reasons.items()):
    print(f"  {gfx} {n:4d} {why}")
if per_file == 0:
    sys.exit(0)
sizes = [Size(1, 1, 1, 1), Size(67, 37, 23, 2)]
# GlobalSplitU solutions are selected only from a minimum K on (predicate GlobalSplitUCheckMinK: 768 for the
# fallback logic's GSU 3 ones): a larger K for those that accepted neither size above
fallback = Size(67, 37, 1031, 2)
failed, ran = set(), set()


def report(results, where):
    for s in results:
        if s.architecture not in {g for g, _ in pick.values()}:
            continue
        res = ", ".join(f"{r.size} b={r.beta:g} err={r.max_rel_error if r.max_rel_error is None else f'{r.max_rel_error:.1e}'} {'PASS' if r.passed else 'FAIL ' + r.detail}" for r in s.results)
        if s.results:
            ran.add(s.name)
            if not s.passed:
                failed.add(s.name)
        print(f"{pick[s.name][1]:45s} {s.architecture} {s.name[:60]}: {res or s.not_run or 'sizes not accepted ' + str(s.skipped)}{where}", flush=True)


with LibraryFolder(out / 'library') as folder:
    report(verify_library(folder, [sizes[0]], 1.5, 0.0, 7, strict=True, names=set(pick)), "")
    report(verify_library(folder, [sizes[1]], 1.5, 0.5, 7, strict=True, names=set(pick)), "")
    rest = set(pick) - ran
    if rest:
        report(verify_library(folder, [fallback], 1.5, 0.5, 7, strict=True, names=rest), " (larger K)")
not_run = sorted(set(pick) - ran)
print(f"verified {len(ran)} of {len(pick)} sampled solutions; failed {len(failed)}; not run at any size {len(not_run)}"
      + (": " + ", ".join(not_run) if not_run else ""))
sys.exit(1 if failed or not_run else 0)
