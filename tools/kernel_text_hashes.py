"""Hash the assembly text of a fixed set of kernels and time their code generation (CPU seconds).

A before/after check for changes that must not change any kernel (speed work on isa/ and writer/):

    python tools/kernel_text_hashes.py --out /tmp/before.json           # at the old commit
    python tools/kernel_text_hashes.py --out /tmp/after.json --compare /tmp/before.json

The kernels: every solution of ../shared/data/logic/lite_configs (each for its file's architecture) and a
sample of MFMA and VALU solutions of rocblas-asm_full (every STEP-th solution of a few files per schedule).
Each kernel is written as create-library writes it (``writer.build.build_kernel``) with the helper kernels it
needs, and ``Kernel.text()`` of each is hashed (SHA-256). A solution the writer refuses is recorded with its
reason (a change in refusals is a difference too).

Timing: CPU time of this process (``time.process_time``) spent writing and rendering the lite kernels, their
helper kernels and metadata as create-library's workers do (``writer.build.written``), summed over the lite
kernels, repeated ``--repeat`` times; the minimum per-kernel mean is printed (CPU time, so it is less
disturbed by other processes on a shared machine than wall time, but not free of it).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import sys
import time
from pathlib import Path

from tensile_asm.errors import UserError
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.logic import read_logic_file
from tensile_asm.writer.build import build_kernel, supports, with_helpers

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "logic"
LITE = SHARED / "lite_configs"
FULL = SHARED / "rocblas-asm_full"
SAMPLE_FILES = [   # (schedule dir, file, step): small files of several types, MFMA and VALU
    ("arcturus", "arcturus_Cijk_Ailk_Bljk_SB.yaml", 13),
    ("arcturus", "arcturus_Cijk_Ailk_Bljk_HHS_BH.yaml", 31),
    ("arcturus", "arcturus_Cijk_Alik_Bljk_BBS_BH.yaml", 31),
    ("aldebaran", "aldebaran_Cijk_Ailk_Bljk_DB.yaml", 9),
    ("aldebaran", "aldebaran_Cijk_Alik_Bljk_HB.yaml", 9),
    ("aldebaran", "aldebaran_Cijk_Ailk_Bljk_I8II_BH_GB.yaml", 9),
    ("aldebaran", "aldebaran_Cijk_Ailk_Bljk_SB.yaml", 31),
    ("aquavanjaram942", "aquavanjaram942_Cijk_Ailk_Bljk_SB.yaml", 21),
    ("vega20", "vega20_Cijk_Ailk_Bljk_HB.yaml", 21),
]


def arch_of(logic):
    a = logic.architecture
    return load_arch(a if isinstance(a, str) else a["Architecture"])


def solutions(paths_steps):
    for path, step in paths_steps:
        logic = read_logic_file(path)
        arch = arch_of(logic)
        for entry in logic.entries[::step]:
            if entry.solution is not None:
                yield f"{path.parent.name}/{path.name}#{entry.index}", entry.solution, arch


def generate(sol, arch, name):
    """(the texts of the kernel and its helpers, None) or (None, reason)."""
    reason = supports(sol, arch)
    if reason:
        return None, reason
    try:
        kernel = build_kernel(sol, arch, name)
    except UserError as e:       # registers do not fit
        return None, str(e)
    return [k.text() for k in with_helpers([kernel], arch)], None


def timed_generation(items) -> float:
    """CPU seconds of writing the items' kernels as create-library's workers do: under its build stage's
    collector settings (``create._few_collections``), each kernel written and rendered with its metadata
    (``writer.build.written``, where it exists; before it: build_kernel, body_text, metadata)."""
    from tensile_asm.library.create import _few_collections
    from tensile_asm.writer import build
    written = getattr(build, "written", None)
    gc.collect()
    with _few_collections():
        t0 = time.process_time()
        for _, sol, arch in items:
            if supports(sol, arch):
                continue
            try:
                if written is not None:
                    written(sol, arch, "k")
                else:
                    for k in with_helpers([build_kernel(sol, arch, "k")], arch):
                        k.body_text()
                        k.metadata()
            except UserError:
                continue
        return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="write {kernel: hash or refusal} here (JSON)")
    ap.add_argument("--compare", type=Path, help="a JSON written earlier: report every difference")
    ap.add_argument("--repeat", type=int, default=3, help="timing repeats over the lite kernels (0: no timing)")
    ap.add_argument("--no-sample", action="store_true", help="lite kernels only (--compare: only those)")
    ap.add_argument("--time-only", action="store_true", help="no hashes: only the timing of the lite kernels")
    ap.add_argument("--profile", type=Path, help="cProfile the lite kernels' generation into this file")
    args = ap.parse_args()

    lite = list(solutions([(p, 1) for p in sorted(LITE.glob("*.yaml"))]))
    items = lite + ([] if args.no_sample else
                    list(solutions([(FULL / d / f, s) for d, f, s in SAMPLE_FILES])))
    hashes = {}
    for key, sol, arch in ([] if args.time_only else items):
        texts, reason = generate(sol, arch, "k")
        hashes[key] = ("refused: " + reason) if texts is None else [hashlib.sha256(t.encode()).hexdigest()
                                                                    for t in texts]
    built = sum(1 for v in hashes.values() if isinstance(v, list))
    if not args.time_only:
        print(f"kernels: {len(lite)} lite + {len(items) - len(lite)} sampled; {built} written, "
              f"{len(items) - built} refused")
    if args.out:
        args.out.write_text(json.dumps(hashes, indent=1, sort_keys=True))
    if args.compare:
        old = json.loads(args.compare.read_text())
        keys = set(hashes) if args.no_sample else set(old) | set(hashes)
        diff = sorted(k for k in keys if old.get(k) != hashes.get(k))
        for k in diff[:20]:
            print(f"DIFFERS: {k}: {str(old.get(k))[:80]} -> {str(hashes.get(k))[:80]}")
        print(f"compared with {args.compare}: {len(diff)} of {len(keys)} kernels differ")
        if diff:
            sys.exit(1)
    n = sum(1 for _, sol, arch in lite if not supports(sol, arch))
    if args.profile:
        import cProfile
        cProfile.runctx("timed_generation(lite)", globals(), {"lite": lite, "timed_generation": timed_generation},
                        str(args.profile))
    times = [timed_generation(lite) for _ in range(args.repeat)]
    if times:
        print(f"generation CPU time over {n} lite kernels: " + ", ".join(f"{t:.2f} s" for t in times)
              + f"; best {1e3 * min(times) / n:.1f} ms per kernel")


if __name__ == "__main__":
    main()
