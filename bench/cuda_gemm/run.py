"""Tensile's central experiment on an NVIDIA GPU with the HIP source kernels rendered for CUDA: one
single-tuned kernel (the fork-space winner at one size) against size-tuned kernels (the winner at each size),
DeepBench-style sizes (square, skinny, large-K), beside cuBLAS fp32 (torch, TF32 off) on the same card.

Run on the GPU machine from the repository root (needs numpy, CuPy; torch for cuBLAS):

    PYTHONPATH=. python bench/cuda_gemm/run.py --out "$OUT"

Every kernel is first validated by the cuda backend (tensile_asm.runtime.cuda: NVRTC, CUDA events) against the
float64 reference at edge sizes (1, primes, not tile multiples; beta 0 with C NaN); a kernel that fails is
left out of the timing. Timing: Tensile's protocol through CudaRuntime.time_gemm (2 warm-ups, 3 data points
of 3 enqueues). Writes OUT/results.json and OUT/results.md (sizes, single-tuned vs size-tuned GFLOPS and
speedup, cuBLAS, the winner per size, card, date, command). Kernels come from bench/cuda_gemm/manifest.json
(bench/cuda_gemm/make_sources.py renders them with the package; nothing here needs jinja2).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = [  # (M, N, K): square, skinny (DeepBench's small N), large-K
    ("square", 1024, 1024, 1024), ("square", 2048, 2048, 2048), ("square", 4096, 4096, 4096),
    ("skinny", 1760, 16, 1760), ("skinny", 2560, 32, 2560), ("skinny", 4096, 64, 4096), ("skinny", 35, 8457, 2560),
    ("large-K", 256, 256, 65536), ("large-K", 512, 512, 32768), ("large-K", 64, 64, 262144),
]
SINGLE_TUNED_AT = (4096, 4096, 4096)       # the one size the single-tuned kernel is picked at
VALIDATE = [(1, 1, 1), (7, 5, 3), (67, 69, 33), (257, 263, 129)]


def cublas_seconds(m, n, k, protocol) -> float:
    """cuBLAS fp32 (torch.matmul, TF32 off) in column-major terms D = A*B, timed by CUDA events as the kernels."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(k, m, device="cuda").t()     # column-major m x k
    b = torch.randn(n, k, device="cuda").t()
    for _ in range(protocol.num_warmups):
        torch.matmul(a, b)
    total, count = 0.0, 0
    for _ in range(protocol.num_benchmarks * protocol.syncs_per_benchmark):
        events = []
        for _ in range(protocol.enqueues_per_sync):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            torch.matmul(a, b)
            e.record()
            events.append((s, e))
        events[-1][1].synchronize()
        total += sum(s.elapsed_time(e) for s, e in events)
        count += len(events)
    return total / 1000.0 / count


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--budget", type=float, default=500.0, help="seconds; stop timing after this (partial results)")
    p.add_argument("--limit", type=int, default=0, help="only the first N kernels (0: all)")
    p.add_argument("--size", action="append", default=[], metavar="MxNxK",
                   help="time only these sizes of the list (repeatable; the single-tuning size is always timed)")
    args = p.parse_args()
    t0 = time.time()
    from tensile_asm.benchmark.verify import Size
    from tensile_asm.gemm import GemmKernelContract
    from tensile_asm.runtime.base import GemmSize, TimingProtocol
    from tensile_asm.runtime.cuda import CudaRuntime

    reason = CudaRuntime.unavailable()
    if reason:
        print(f"cannot run: {reason}")
        return 2
    rt = CudaRuntime()
    card = rt.api.device_name()
    manifest = json.loads((HERE / "manifest.json").read_text())[:args.limit or None]
    args.out.mkdir(parents=True, exist_ok=True)
    kernels, failed = [], {}
    for entry in manifest:
        c = dict(entry["contract"])
        c["macro_tile"] = tuple(c["macro_tile"])
        contract = GemmKernelContract(**c)
        code = HERE / entry["source"]
        try:
            v1 = rt.validate(code, contract, [GemmSize(*s) for s in VALIDATE], 1.5, 0.5, seed=1)
            v0 = rt.validate(code, contract, [GemmSize(13, 11, 17)], -0.75, 0.0, seed=2)   # C is NaN
            bad = [f"{r.size}: {r.detail or r.max_rel_error}" for r in v1.results + v0.results if not r.passed]
        except Exception as e:                                   # a compile or launch failure is recorded
            bad = [f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"]
        if bad:
            failed[entry["name"]] = bad
        else:
            kernels.append((entry, contract, code))
    print(f"{card}: {len(kernels)} kernels validated, {len(failed)} failed ({time.time() - t0:.0f} s)", flush=True)
    for name, why in failed.items():
        print(f"  FAILED {name}: {why[0]}")
    if not kernels:
        print("no kernel validated: nothing to time")
        return 1
    protocol = TimingProtocol(num_warmups=2, enqueues_per_sync=3, syncs_per_benchmark=1, num_benchmarks=3,
                              sleep_percent=0, num_elements_to_validate=0)
    gflops: dict = {}
    cublas: dict = {}
    sizes = sorted(SIZES, key=lambda s: (s[1:] != SINGLE_TUNED_AT,))   # the single-tuning size first
    if args.size:
        wanted = set(args.size) | {"x".join(map(str, SINGLE_TUNED_AT))}
        unknown = wanted - {f"{m}x{n}x{k}" for _, m, n, k in SIZES}
        if unknown:
            print(f"--size {sorted(unknown)[0]} is not in the size list: use one of "
                  f"{', '.join(f'{m}x{n}x{k}' for _, m, n, k in SIZES)}")
            return 2
        sizes = [s for s in sizes if f"{s[1]}x{s[2]}x{s[3]}" in wanted]
    for kind, m, n, k in sizes:
        if time.time() - t0 > args.budget:
            print(f"budget of {args.budget:.0f} s reached: sizes from {m}x{n}x{k} on are not timed")
            break
        key = f"{m}x{n}x{k}"
        size = GemmSize(m, n, k)
        row = {}
        for entry, contract, code in kernels:
            row[entry["name"]] = rt.time_gemm(code, contract, size, protocol, 1.0, 0.0).gflops
        gflops[key] = row
        try:
            cublas[key] = size.flops / cublas_seconds(m, n, k, protocol) / 1e9
        except Exception as e:
            cublas[key] = None
            print(f"cuBLAS at {key}: {e}")
        best = max(row, key=row.get)
        print(f"{kind:8s} {key:>16s}  best {row[best]:9.1f} GFLOPS ({best})  cuBLAS {cublas[key] or 0:9.1f}",
              flush=True)
    ref = "x".join(map(str, SINGLE_TUNED_AT))
    single = max(gflops[ref], key=gflops[ref].get) if ref in gflops else None
    lines = [f"# Source kernels on {card} (cuda backend: NVRTC, CUDA events; measured)", "",
             f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}. Command: "
             f"`PYTHONPATH=. python {' '.join(sys.argv)}`. {len(kernels)} kernels of the fork space "
             f"(bench/cuda_gemm/make_sources.py) validated against the float64 reference; single-tuned = the "
             f"winner at {ref}: {single}.", "",
             "| kind | M x N x K | single-tuned GFLOPS | size-tuned GFLOPS | speedup | size-tuned winner | cuBLAS fp32 GFLOPS |",
             "|---|---|---:|---:|---:|---|---:|"]
    table = []
    for kind, m, n, k in SIZES:
        key = f"{m}x{n}x{k}"
        if key not in gflops:
            continue
        row = gflops[key]
        best = max(row, key=row.get)
        s = row.get(single, 0.0)
        table.append({"kind": kind, "size": [m, n, k], "single_tuned": s, "size_tuned": row[best],
                      "winner": best, "speedup": row[best] / s if s else None, "cublas": cublas.get(key)})
        cb = f"{cublas[key]:.1f}" if cublas.get(key) else "-"
        lines.append(f"| {kind} | {key} | {s:.1f} | {row[best]:.1f} | {row[best] / s:.2f} | {best} | {cb} |")
    (args.out / "results.md").write_text("\n".join(lines) + "\n")
    (args.out / "results.json").write_text(json.dumps({"card": card, "single_tuned": single, "table": table,
                                                       "gflops": gflops, "cublas": cublas, "failed": failed},
                                                      indent=1))
    print("\n".join(lines))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
