"""The --slow randomized MFMA run (tests/test_mfma_kernels.py::test_random_mfma_kernels_slow), case by case, so a
run on a shared machine can be resumed and a run cut short still says which cases ran: the same case list
(``slow_cases()``) and the same ``check`` as the test. One JSON line per case goes to LOG (index, arch, types,
MatrixInstruction, size, alpha, beta, seed, result, seconds, the failure's message with its reproducer); cases
already in LOG are not run again. The summary (cases run/passed/failed, failures with their draw) is printed.

    PYTHONPATH=$PWD:$PWD/tests .venv/bin/python bench/random_mfma_slow_run.py LOG [--summary] [--cases 121,506]

``--cases`` runs only the given indices of the list (a rerun of failures, into a fresh LOG).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path


def _describe(case: dict) -> dict:
    p, prob, s = case["params"], case["problem"], case["size"]
    return {"arch": case["arch"], "types": "".join(str(prob.get(k, "")) for k in ("DataType", "DestDataType",
                                                                                   "ComputeDataType")),
            "transposes": ("T" if prob.get("TransposeA") else "N") + ("T" if prob.get("TransposeB") else "N"),
            "mi": p.get("MatrixInstruction"), "size": f"{s.m}x{s.n}x{s.k}x{s.batch}", "alpha": case["alpha"],
            "beta": case["beta"], "seed": case["seed"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("--summary", action="store_true", help="run nothing: summarize LOG")
    ap.add_argument("--cases", help="comma-separated case indices: run only these")
    a = ap.parse_args(argv)
    import test_mfma_kernels as t
    from verify_case import reproducer

    all_cases = t.slow_cases()
    wanted = None if a.cases is None else {int(i) for i in a.cases.split(",")}
    done = {}
    if a.log.exists():
        for line in a.log.read_text().splitlines():
            rec = json.loads(line)
            done[rec["index"]] = rec
    if not a.summary:
        with a.log.open("a") as log:
            for i, case in enumerate(all_cases):
                if i in done or (wanted is not None and i not in wanted):
                    continue
                t0 = time.perf_counter()
                try:
                    t.check(case)
                    result, message = "ok", ""
                except AssertionError as e:
                    result, message = "FAIL", str(e)
                except Exception as e:      # a crash is a finding too (the test would stop at it)
                    result, message = "FAIL", f"{type(e).__name__}: {e}\nreproduce with:\n{reproducer(case)}"
                rec = {"index": i, **_describe(case), "result": result, "seconds": round(time.perf_counter() - t0, 1),
                       "message": message[-4000:]}
                done[i] = rec
                log.write(json.dumps(rec) + "\n")
                log.flush()
                print(f"{i}/{len(all_cases)} {rec['arch']} {rec['types']} {rec['mi']} {rec['size']}: {result} "
                      f"{rec['seconds']} s", flush=True)
    recs = [done[i] for i in sorted(done)]
    fails = [r for r in recs if r["result"] != "ok"]
    by_arch = collections.Counter(r["arch"] for r in recs)
    total = len(all_cases) if wanted is None else len(wanted)
    print(f"{len(recs)}/{total} cases run (seed {t.SEED}+1/3/5/7/9/11, SLOW_CASES {t.SLOW_CASES}): "
          f"{len(recs) - len(fails)} passed, {len(fails)} failed; {sum(r['seconds'] for r in recs):.0f} s of case "
          f"time; per arch {dict(sorted(by_arch.items()))}")
    for r in fails:
        print(f"FAIL case {r['index']}: {r['arch']} {r['types']} MI {r['mi']} {r['size']} alpha {r['alpha']} "
              f"beta {r['beta']} seed {r['seed']}\n{r['message']}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
