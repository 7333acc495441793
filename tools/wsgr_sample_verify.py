"""Sample REAL rocBLAS WSGR solutions: supports() reasons, build, verify at edge sizes on the emulator.

usage: wsgr_verify.py SCHEDULE ARCH COUNT SEED [--reasons-only] [--types S,D,HHS,BBS]
"""
import collections, random, re, sys, tempfile, time
from pathlib import Path

from tensile_asm.benchmark.verify import Size, admitted_size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.logic import read_logic_file
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.writer.build import build_kernel, link_kernels, supports

sched, arch_name, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
reasons_only = "--reasons-only" in sys.argv
want_files = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--file=")]
arch = load_arch(arch_name)
root = Path(__file__).resolve().parents[1].parent / "shared/data/logic/rocblas-asm_full" / sched
cands, reasons, total = [], collections.Counter(), 0
for path in sorted(root.glob("*.yaml")):
    if want_files and not any(w in path.name for w in want_files):
        continue
    if "WaveSeparateGlobalRead" not in path.read_text():
        continue
    lf = read_logic_file(path)
    for e in lf.entries:
        if e.error or e.solution is None:
            continue
        p = e.solution.params
        if not (p.get("WaveSeparateGlobalReadA") or p.get("WaveSeparateGlobalReadB")):
            continue
        total += 1
        r = supports(e.solution, arch)
        if r:
            reasons[re.sub(r"\d+", "N", r)[:140]] += 1
        else:
            cands.append((path.name, e.index, e.solution))
print(f"{sched}: {total} WSGR solutions, {len(cands)} accepted by supports()")
for r, n in reasons.most_common(12):
    print(f"  {n:5d} {r}")
if reasons_only:
    sys.exit(0)


def key(c):
    s = c[2]
    p, d = s.params, s.derived
    pt = s.problem_type
    return (pt.data_type.char + pt.dest_type.char + pt.compute_type.char, tuple(p["MatrixInstruction"][:4]),
            bool(p.get("TransposeLDS")), p["PrefetchGlobalRead"], bool(p.get("1LDSBuffer")),
            bool(p["WaveSeparateGlobalReadA"]), bool(p["WaveSeparateGlobalReadB"]))


rng = random.Random(seed)
groups = collections.defaultdict(list)
for c in cands:
    groups[key(c)].append(c)
keys = sorted(groups, key=str)
rng.shuffle(keys)
picked = [rng.choice(groups[k]) for k in keys[:count]]
tmp = Path(tempfile.mkdtemp(prefix="wsgr-"))
ok = bad = 0
from tensile_asm.errors import UserError
for i, (fname, idx, sol) in enumerate(picked):
    d, p = sol.derived, sol.params
    name = f"wsgr{i}"
    t0 = time.time()
    try:
        kernel = build_kernel(sol, arch, name)
    except Exception as e:
        print(f"NOT BUILT {fname}[{idx}] {key((fname, idx, sol))}: {str(e)[:160]}", flush=True)
        continue
    co = tmp / f"{name}.co"
    link_kernels([kernel], arch, co)
    contract = GemmKernelContract.from_solution(sol, name)
    mt0, mt1, du = d.mt0, d.mt1, d.depth_u
    # sizes the solution's predicates admit
    sizes = [admitted_size(p, z) for z in (Size(1, 1, 1, 1), Size(mt0 + 3, mt1 - 1 if mt1 > 1 else 2, du + 7, 2),
                                           Size(17, mt1 + 5, 2 * du + 3, 1))]
    res = []
    for beta in (0.0, -0.5):
        if beta and not contract.use_beta:
            continue
        res += verify_sizes(co, contract, sizes, 1.5, beta, seed + i, EmulatedRuntime())
    passed = all(r.passed for r in res)
    ok += passed
    bad += not passed
    print(f"{'PASS' if passed else 'FAIL'} {fname}[{idx}] {key((fname, idx, sol))} MT {mt0}x{mt1} DU {du} "
          f"NLC/NLP A {d.num_loads_coalesced_a}/{d.num_loads_perpendicular_a} B {d.num_loads_coalesced_b}/"
          f"{d.num_loads_perpendicular_b} LSP A/B {d.lsp_a}/{d.lsp_b} sizes {len(res)} ({time.time() - t0:.0f} s)",
          flush=True)
    for r in res:
        if not r.passed:
            print(f"     {r.size} beta {r.beta}: {r.detail}")
print(f"{sched}: verified {ok} passed, {bad} failed of {len(picked)} sampled")
