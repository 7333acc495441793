"""Build and verify, on the emulator, a random sample of REAL rocBLAS solutions that use a feature.

    .venv/bin/python tools/verify_feature_sample.py SCHEDULE FEATURE [COUNT] [SEED] [FILE_GLOB]

SCHEDULE: vega10, vega20, arcturus, aldebaran or aquavanjaram942 (../shared/data/logic/rocblas-asm_full/<schedule>);
FEATURE: wgm (WorkGroupMapping not a power of two), wgm-negative, stagger-mapping (StaggerUMapping other than 0
with StaggerU > 1), lsu-mfma (LocalSplitU > 1 with MatrixInstruction), iu-mfma (InnerUnroll > 1 with
MatrixInstruction), mfma-pgr (MFMA with PrefetchGlobalRead 1 or 2: the main loops writer/mfma_schedule.py
interleaves), mfma-mt-side (an MFMA MacroTile side outside Tensile's tuning list: 80, 144, 160, ...),
gb-persistent, gb-no-buffer-load (pointer-array batches with PersistentKernel / BufferLoad false),
no-buffer-load-wide (BufferLoad false, GlobalReadVectorWidth > 1), mfma-blocks-remap, mfma-blocks-swap
(StoreRemapVectorWidth / SourceSwap with MFMAs of several blocks); integer types run alpha -3, beta 5 and 0.
Among the solutions of that schedule that use the feature and that the writer accepts, COUNT (default 6) are
drawn with SEED (default 1) and each is written, assembled, linked and run on the emulator at edge sizes against
the float64 reference (``sizes_for``): M one past a tile, N giving more rows of tiles than WorkGroupMapping and
not a multiple of it (wgm features), K a prime past a few DepthU steps (past the StaggerU mask's steps for
stagger-mapping); a one-element problem; 13x11xK with batch 2; beta 0.5, and beta 0 on the batched one; each
size rounded up to the multiples the solution asserts (AssertFree0/Free1/SummationElementMultiple, its size
predicates). Prints one line per solution. FILE_GLOB (e.g. '*_SB.yaml') reads only the schedule's logic files
it matches.
"""
import random
import sys
import tempfile
import time
from pathlib import Path

from tensile_asm.benchmark.verify import Size, admitted_size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.create import _collect
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution.derive import VALID_MT_SIDES
from tensile_asm.writer.build import build_kernel, link_kernels, supports

SCHEDULES = {"vega10": "gfx900", "vega20": "gfx906", "arcturus": "gfx908", "aldebaran": "gfx90a",
             "aquavanjaram942": "gfx942"}
FEATURES = {
    "wgm": lambda s: abs(s.params["WorkGroupMapping"]) > 1 and s.params["WorkGroupMapping"] > 0
                     and s.params["WorkGroupMapping"] & (s.params["WorkGroupMapping"] - 1) != 0,
    "wgm-negative": lambda s: s.params["WorkGroupMapping"] < -1,
    "stagger-mapping": lambda s: s.params["StaggerUMapping"] != 0 and s.params["StaggerU"] > 1,
    "lsu-mfma": lambda s: s.params["WorkGroup"][2] > 1 and bool(s.params.get("MatrixInstruction")),
    "iu-mfma": lambda s: s.params.get("InnerUnroll", 1) > 1 and bool(s.params.get("MatrixInstruction")),
    # the main loops writer/mfma_schedule.py interleaves: MFMA with PrefetchGlobalRead 1 or 2
    "mfma-pgr": lambda s: bool(s.params.get("MatrixInstruction")) and s.params["PrefetchGlobalRead"] > 0,
    # MFMA macro tiles with a side outside Tensile's tuning list (80, 144, 160, 288, ...)
    "mfma-mt-side": lambda s: s.derived.is_mfma and (s.derived.mt0 not in VALID_MT_SIDES
                                                     or s.derived.mt1 not in VALID_MT_SIDES),
    # pointer-array (_GB) batches with PersistentKernel; with BufferLoad false
    "gb-persistent": lambda s: s.problem_type.batched and not s.problem_type.strided_batched
                               and s.derived.persistent_kernel != 0,
    "gb-no-buffer-load": lambda s: s.problem_type.batched and not s.problem_type.strided_batched
                                   and not s.derived.buffer_load and s.params["KernelLanguage"] == "Assembly",
    # BufferLoad false with GlobalReadVectorWidth > 1
    "no-buffer-load-wide": lambda s: not s.derived.buffer_load and s.params["GlobalReadVectorWidth"] > 1
                                     and s.params["KernelLanguage"] == "Assembly",
    # StoreRemapVectorWidth or SourceSwap with MFMAs of several blocks
    "mfma-blocks-remap": lambda s: s.derived.is_mfma and s.derived.mi_blocks != (1, 1)
                                   and bool(s.derived.store_remap),
    "mfma-blocks-swap": lambda s: s.derived.is_mfma and s.derived.mi_blocks != (1, 1)
                                  and bool(s.params["SourceSwap"]),
}


def _next_prime(n: int) -> int:
    while any(n % d == 0 for d in range(2, int(n ** 0.5) + 1)):
        n += 1
    return n


def sizes_for(sol, feature: str) -> list[Size]:
    """[M one past a tile x N with more tile rows than WorkGroupMapping, not a multiple of it (for the
    wgm features), batch 1; a one-element problem; a small prime-sized problem with batch 2], each size
    rounded up to the multiple the solution's AssertFree0/Free1/SummationElementMultiple asks for."""
    d = sol.derived
    wgm = abs(d.workgroup_mapping)
    rows = 2
    if feature.startswith("wgm"):
        rows = wgm + 2          # NumFullBlocks full blocks and a remainder block
        if rows % wgm == 0:
            rows += 1
    k = _next_prime(d.depth_u * 3 + 1)
    if d.stagger_u > 1:                         # enough unrolled steps for a stagger mask of 1 or more
        k = _next_prime(d.depth_u * 2 * (1 << d.stagger_stride_shift) * max(1, d.global_split_u) + 1)
    batch = 2 if sol.problem_type.batched else 1
    return [admitted_size(sol.params, s) for s in (Size(d.mt0 + 1, d.mt1 * (rows - 1) + 3, k, 1), Size(1, 1, 1),
                                       Size(13, 11, k, batch))]


def main(argv: list[str]) -> int:
    schedule, feature = argv[0], argv[1]
    count = int(argv[2]) if len(argv) > 2 else 6
    seed = int(argv[3]) if len(argv) > 3 else 1
    arch_name = SCHEDULES[schedule]
    arch = load_arch(arch_name)
    root = Path(__file__).resolve().parents[1].parent / "shared/data/logic/rocblas-asm_full" / schedule
    if len(argv) > 4:      # only the logic files matching a glob (a directory of links to them)
        files = sorted(root.glob(argv[4]))
        root = Path(tempfile.mkdtemp(prefix="feature-logic-"))
        for f in files:
            (root / f.name).symlink_to(f)
    items, _ = _collect(root, [arch_name])
    uses = [it for it in items if it.solution is not None and it.solution.valid
            and FEATURES[feature](it.solution)]
    accepted = [it for it in uses if supports(it.solution, arch) is None]
    print(f"{schedule} ({arch_name}) {feature}: {len(uses)} solutions use it, {len(accepted)} accepted; "
          f"sampling {min(count, len(accepted))} (seed {seed})", flush=True)
    rng = random.Random(seed)
    sample = rng.sample(accepted, min(count, len(accepted)))
    tmp = Path(tempfile.mkdtemp(prefix="feature-sample-"))
    failed = 0
    for i, it in enumerate(sample):
        sol, p = it.solution, it.solution.params
        name = f"k{i}"
        what = (f"{it.logic.path.name}#{it.index} "
                f"{'MFMA' if sol.derived.is_mfma else 'VALU'} {sol.problem_type.name} MT{sol.derived.mt0}x{sol.derived.mt1} "
                f"WGM {p['WorkGroupMapping']} SU {p['StaggerU']} SUM {p['StaggerUMapping']} GSU {p['GlobalSplitU']}")
        t0 = time.time()
        try:
            kernel = build_kernel(sol, arch, name)
        except Exception as e:   # registers that do not fit: reported, not verified
            print(f"  NOT BUILT {what}: {e}", flush=True)
            continue
        co = tmp / f"{name}.co"
        link_kernels([kernel], arch, co)
        contract = GemmKernelContract.from_solution(sol, name)
        sizes = sizes_for(sol, feature)
        results = []
        integer = sol.problem_type.compute_type.char == "I"
        for beta, these in ((5 if integer else 0.5, sizes), (0, sizes[2:])):
            results += verify_sizes(co, contract, these, -3 if integer else -1.25, beta, 3, EmulatedRuntime())
        ok = all(r.passed for r in results)
        failed += not ok
        print(f"  {'PASS' if ok else 'FAIL'} {what} sizes {', '.join(str(s) for s in sizes)} "
              f"({time.time() - t0:.0f} s)", flush=True)
        if not ok:
            print("     " + "; ".join(f"{r.size} beta {r.beta}: {r.detail}" for r in results if not r.passed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
