"""Delete, one at a time, every s_waitcnt (all placed by the waitcnt pass) and every s_nop the hazard rules
say matters from the kernels of tests/test_mutations.py (generated: a VectorWidth 4 + PrefetchGlobalRead +
PrefetchLocalRead kernel, a LocalSplitU kernel, a GlobalSplitU kernel and a MultipleBuffer one, and the
beta-only and post-GSU helper kernels they launch; hand-written: an MFMA kernel for gfx90a and gfx942 with
the waits and s_nop the passes placed), run each mutant strict on the emulator with random data on sizes
that take every path, and print CAUGHT/MISSED per deletion and the detection rate. The test suite runs a
fixed-seed sample of these.

    PYTHONPATH=. python3 bench/waitcnt_mutations.py [KERNEL ...]

Recorded results: bench/waitcnt_mutations.md.
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_mutations import KERNELS, mutations, run_mutant  # noqa: E402


def main(names) -> int:
    total = caught_total = 0
    for name in names:
        t0, caught, muts = time.perf_counter(), 0, mutations(name)
        for what, site in muts:
            ok, detail = run_mutant(name, site)
            caught += ok
            print(f"{'CAUGHT' if ok else 'MISSED'} {name}: {what} | {detail[:150]}", flush=True)
        print(f"== {name}: {caught}/{len(muts)} deletions detected ({time.perf_counter() - t0:.0f} s)", flush=True)
        total, caught_total = total + len(muts), caught_total + caught
    print(f"== all: {caught_total}/{total} deletions detected")
    return 0 if caught_total == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or KERNELS))
