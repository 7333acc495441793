"""Build and verify, on the emulator, solutions of ONE real logic file: all of them, some by position, or a seeded
random sample of those the writer accepts.

    PYTHONPATH=$PWD .venv/bin/python tools/verify_logic_file.py LOGIC.yaml all|I,J,..|rand:COUNT:SEED [--small]

The architecture comes from the file name's schedule (arcturus gfx908, aldebaran gfx90a, aquavanjaram942 gfx942).
Each solution is written (``build_kernel``), linked, and run at edge sizes against the float64 reference (random
A/B/C, D poisoned, C NaN with beta 0): a one-element problem and MT0+3 x MT1+5 x 2*DepthU+7 with batch 2 (``--small``:
13 x 11 x 29 with batch 2 instead, for large tiles), alpha -1.25 and beta 0.5; and 13 x 11 x 29 with batch 2,
alpha 1.5, beta 0. Every size is rounded up to the multiples the solution asserts (AssertFree0/Free1/Summation-
ElementMultiple: its Free0/Free1SizeMultiple and BoundSizeMultiple predicates keep other sizes away). Prints one
line per solution (PASS, FAIL with the failing sizes, REFUSED with supports()' reason, NOTBUILT with the reason
the kernel could not be written) and a total; exits 1 if any failed.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from tensile_asm.benchmark.verify import Size, admitted_size, verify_sizes
from tensile_asm.errors import UserError
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.logic import read_logic_file
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.writer.build import build_kernel, link_kernels, supports

ARCH = {"arcturus": "gfx908", "aldebaran": "gfx90a", "aquavanjaram942": "gfx942"}


def main(argv: list[str]) -> int:
    path, which, small = Path(argv[0]), argv[1], "--small" in argv
    arch = load_arch(ARCH[path.name.split("_")[0]])
    entries = read_logic_file(path).entries
    if which.startswith("rand:"):
        _, count, seed = which.split(":")
        ok = [e for e in entries if e.solution is not None and supports(e.solution, arch) is None]
        entries = random.Random(int(seed)).sample(ok, min(int(count), len(ok)))
        print(f"{path.name}: {len(ok)}/{len(read_logic_file(path).entries)} accepted; sampling "
              f"{[e.index for e in entries]} (seed {seed})", flush=True)
    elif which != "all":
        wanted = {int(x) for x in which.split(",")}
        entries = [e for e in entries if e.index in wanted]
    tmp = Path(tempfile.mkdtemp(prefix="verify-logic-"))
    verified = failed = 0
    for e in entries:
        sol = e.solution
        reason = e.error or supports(sol, arch)
        if reason:
            print(f"{e.index} REFUSED {reason}", flush=True)
            continue
        d, t0 = sol.derived, time.time()
        try:
            kernel = build_kernel(sol, arch, f"k{e.index}")
        except UserError as err:
            print(f"{e.index} NOTBUILT {err}", flush=True)
            continue
        co = tmp / f"k{e.index}.co"
        link_kernels([kernel], arch, co)
        contract = GemmKernelContract.from_solution(sol, f"k{e.index}")
        batch = 2 if sol.problem_type.batched else 1
        edge = admitted_size(sol.params, Size(13, 11, 29, batch)) if small else \
            admitted_size(sol.params, Size(d.mt0 + 3, d.mt1 + 5, 2 * d.depth_u + 7, batch))
        sizes = [admitted_size(sol.params, Size(1, 1, 1)), edge]
        results = verify_sizes(co, contract, sizes, -1.25, 0.5, 3, EmulatedRuntime()) + \
            verify_sizes(co, contract, [admitted_size(sol.params, Size(13, 11, 29, batch))], 1.5, 0.0, 5, EmulatedRuntime())
        ok = all(r.passed for r in results)
        verified += 1
        failed += not ok
        detail = "" if ok else " " + "; ".join(f"{r.size} beta {r.beta}: {r.detail}" for r in results if not r.passed)
        print(f"{e.index} {'PASS' if ok else 'FAIL'} {sol.problem_type.name} MT{d.mt0}x{d.mt1} DU{d.depth_u} "
              f"MI{list(d.matrix_instruction)} sizes {', '.join(str(s) for s in sizes)} + "
              f"{admitted_size(sol.params, Size(13, 11, 29, batch))} beta 0 ({time.time() - t0:.0f} s){detail}", flush=True)
    print(f"{verified} verified, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
