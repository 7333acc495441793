"""GFLOPS and winner maps on an NVIDIA GPU (issue #13 item 5; the Tensile paper's map figures): every
kernel of bench/cuda_gemm/manifest.json timed over a 2-D M x N grid at fixed K by the cuda backend (measured,
CUDA events), then drawn here with the tuning driver's map code (tensile_asm.tuning.maps, matplotlib).

On the GPU machine (repository root; numpy, CuPy):
    PYTHONPATH=. python bench/cuda_gemm/maps.py run --out "$OUT"          # writes OUT/maps.json
Here (matplotlib, the plots extra):
    PYTHONPATH=. python bench/cuda_gemm/maps.py draw bench/cuda_gemm/maps-h200.json bench/cuda_gemm/maps
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIDES = [128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096]
K = 1024


def run(out: Path, budget: float) -> int:
    from tensile_asm.gemm import GemmKernelContract
    from tensile_asm.runtime.base import GemmSize, TimingProtocol
    from tensile_asm.runtime.cuda import CudaRuntime

    reason = CudaRuntime.unavailable()
    if reason:
        print(f"cannot run: {reason}")
        return 2
    rt = CudaRuntime()
    t0 = time.time()
    protocol = TimingProtocol(num_warmups=2, enqueues_per_sync=3, syncs_per_benchmark=1, num_benchmarks=3,
                              sleep_percent=0, num_elements_to_validate=0)
    kernels = []
    for entry in json.loads((HERE / "manifest.json").read_text()):
        c = dict(entry["contract"])
        c["macro_tile"] = tuple(c["macro_tile"])
        contract = GemmKernelContract(**c)
        code = HERE / entry["source"]
        v = rt.validate(code, contract, [GemmSize(67, 69, 33)], 1.5, 0.5, seed=1)
        if v.passed:
            kernels.append((entry["name"], contract, code))
    gflops = {}
    for m in SIDES:
        for n in SIDES:
            if time.time() - t0 > budget:
                break
            size = GemmSize(m, n, K)
            gflops[f"{m}x{n}x{K}"] = {name: rt.time_gemm(code, c, size, protocol, 1.0, 0.0).gflops
                                      for name, c, code in kernels}
        print(f"M={m} done ({time.time() - t0:.0f} s)", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "maps.json").write_text(json.dumps({
        "card": rt.api.device_name(), "date": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        "command": "PYTHONPATH=. python " + " ".join(sys.argv), "k": K, "kernels": [k[0] for k in kernels],
        "gflops": gflops}, indent=1))
    return 0


@dataclass
class _Size:
    m: int
    n: int
    k: int
    batch: int = 1

    @property
    def sizes(self):
        return (self.m, self.n, self.k, self.batch)


@dataclass
class _Candidate:
    name: str


@dataclass
class _Winner:
    sizes: tuple
    candidate: _Candidate
    gflops: float


def draw(results: Path, out_dir: Path) -> int:
    from tensile_asm.tuning.maps import write_maps
    data = json.loads(results.read_text())
    sizes, winners = [], []
    for key, row in data["gflops"].items():
        s = _Size(*map(int, key.split("x")))
        best = max(row, key=row.get)
        sizes.append(s)
        winners.append(_Winner(s.sizes, _Candidate(best), row[best]))
    label = f"measured, {data['card']}"
    paths = write_maps(f"sgemm_NN_K{data['k']}", sizes, winners, out_dir, label)
    for p in paths:
        print(p)
    return 0


def main() -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--budget", type=float, default=420.0)
    d = sub.add_parser("draw")
    d.add_argument("results", type=Path)
    d.add_argument("out_dir", type=Path)
    a = p.parse_args()
    return run(a.out, a.budget) if a.cmd == "run" else draw(a.results, a.out_dir)


if __name__ == "__main__":
    sys.exit(main())
