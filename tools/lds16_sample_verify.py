"""Build and verify, on the emulator, a random sample of REAL rocBLAS MFMA solutions with 16-bit A/B (fp16,
bf16) whose LDS held at fp32 (as the MFMA writer held it before it kept 16-bit values 16-bit) would exceed the
architecture's LDS: the solutions the "needs N bytes of LDS" refusal kept out.

    .venv/bin/python tools/lds16_sample_verify.py SCHEDULE [COUNT] [SEED] [GLOB]

SCHEDULE: arcturus, aldebaran or aquavanjaram942 (../shared/data/logic/rocblas-asm_full/<schedule>); GLOB (default
``*.yaml``) narrows the logic files read. COUNT (default 6) solutions the writer accepts are drawn with SEED
(default 1); each is written, assembled, linked and run on the emulator against the float64 reference at
verify_feature_sample's edge sizes (M one past a tile, a prime K past three DepthU steps; a one-element problem;
13x11xK with batch 2 where batched; beta 0.5, and beta 0 on the last), each rounded up to the multiples the
solution asserts (AssertFree0/Free1/SummationElementMultiple). Prints one line per solution and the
kernel's LDS bytes next to Tensile's LdsNumElements x A/B bytes.
"""
import random
import sys
import tempfile
import time
from pathlib import Path

from tensile_asm.benchmark.verify import admitted_size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.create import _collect
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.writer.build import build_kernel, link_kernels, supports

sys.path.insert(0, str(Path(__file__).resolve().parent))
from verify_feature_sample import SCHEDULES, sizes_for  # noqa: E402


def wide_lds_bytes(sol) -> int:
    """The LDS the kernel would take with its 16-bit A/B widened to fp32 (and accumulators, remap at fp32)."""
    return sol.derived.lds.layout(4).bytes


def main(argv: list[str]) -> int:
    schedule = argv[0]
    count = int(argv[1]) if len(argv) > 1 else 6
    seed = int(argv[2]) if len(argv) > 2 else 1
    glob = argv[3] if len(argv) > 3 else "*.yaml"
    arch_name = SCHEDULES[schedule]
    arch = load_arch(arch_name)
    root = Path(__file__).resolve().parents[1].parent / "shared/data/logic/rocblas-asm_full" / schedule
    with tempfile.TemporaryDirectory(prefix="lds16-logic-") as sub:
        for f in sorted(root.glob(glob)):
            (Path(sub) / f.name).symlink_to(f)
        items, _ = _collect(Path(sub), [arch_name])
    uses = [it for it in items if it.solution is not None and it.solution.valid and it.solution.derived.is_mfma
            and it.solution.problem_type.data_type.bytes == 2
            and wide_lds_bytes(it.solution) > arch.max_lds_bytes_per_workgroup]
    accepted = [it for it in uses if supports(it.solution, arch) is None]
    print(f"{schedule} ({arch_name}) {glob}: {len(uses)} 16-bit MFMA solutions need more than "
          f"{arch.max_lds_bytes_per_workgroup} bytes of LDS at fp32, {len(accepted)} accepted; sampling "
          f"{min(count, len(accepted))} (seed {seed})", flush=True)
    rng = random.Random(seed)
    sample = rng.sample(accepted, min(count, len(accepted)))
    tmp = Path(tempfile.mkdtemp(prefix="lds16-sample-"))
    failed = 0
    for i, it in enumerate(sample):
        sol, p = it.solution, it.solution.params
        name = f"k{i}"
        what = (f"{it.logic.path.name}#{it.index} {sol.problem_type.name} MT{sol.derived.mt0}x{sol.derived.mt1} "
                f"MI {p['MatrixInstruction']} DU {p['DepthU']} PGR {p['PrefetchGlobalRead']} 1LDS {p['1LDSBuffer']} "
                f"TLDS {p['TransposeLDS']} pad {p['LdsPadA']}/{p['LdsPadB']} blk {p['LdsBlockSizePerPadA']}/"
                f"{p['LdsBlockSizePerPadB']} SRVW {p['StoreRemapVectorWidth']}")
        t0 = time.time()
        try:
            kernel = build_kernel(sol, arch, name)
        except Exception as e:   # registers that do not fit: reported, not verified
            print(f"  NOT BUILT {what}: {e}", flush=True)
            continue
        co = tmp / f"{name}.co"
        link_kernels([kernel], arch, co)
        contract = GemmKernelContract.from_solution(sol, name)
        sizes = [admitted_size(sol.params, z) for z in sizes_for(sol, "lds16")]
        results = []
        for beta, these in ((0.5, sizes), (0.0, sizes[2:])):
            results += verify_sizes(co, contract, these, -1.25, beta, 3, EmulatedRuntime())
        ok = all(r.passed for r in results)
        failed += not ok
        tensile = sol.derived_keys["LdsNumElements"] * 2
        print(f"  {'PASS' if ok else 'FAIL'} {what} LDS {kernel.resources.lds_bytes} (Tensile {tensile}, at fp32 "
              f"{wide_lds_bytes(sol)}) sizes {', '.join(str(s) for s in sizes)} ({time.time() - t0:.0f} s)",
              flush=True)
        if not ok:
            print("     " + "; ".join(f"{r.size} beta {r.beta}: {r.detail}" for r in results if not r.passed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
