"""The analytical model (``tensile-asm predict``) on every device of devices/devices.yaml, for a few VALU sgemm
kernels this project builds, next to the device's published fp32 peak. MODELLED, not measured.

    PYTHONPATH=. python bench/model_vs_published.py > bench/model_vs_published.md

Per device: each kernel's modelled GFLOPS at a few sizes, its fraction of the published vector fp32 peak,
and which kernel the model ranks first per size.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tensile_asm.gemm import GemmKernelContract  # noqa: E402
from tensile_asm.isa.arch import load_arch  # noqa: E402
from tensile_asm.runtime.base import GemmSize  # noqa: E402
from tensile_asm.runtime.devices import devices  # noqa: E402
from tensile_asm.runtime.model import ModelRuntime, estimate  # noqa: E402
from tensile_asm.solution import Solution  # noqa: E402
from tensile_asm.writer.build import build_kernel, link_kernels  # noqa: E402

PT = {"OperationType": "GEMM", "DataType": "s", "TransposeA": False, "TransposeB": True, "Batched": True,
      "UseBeta": True}
KERNELS = {  # label: parameters
    "MT64x64x16 (WG16x16 TT4x4)": {"WorkGroup": [16, 16, 1], "ThreadTile": [4, 4], "DepthU": 16},
    "MT128x128x8 (WG16x16 TT8x8)": {"WorkGroup": [16, 16, 1], "ThreadTile": [8, 8], "DepthU": 8},
    "MT32x32x16 (WG16x16 TT2x2)": {"WorkGroup": [16, 16, 1], "ThreadTile": [2, 2], "DepthU": 16},
    "MT64x64x16 GSU4": {"WorkGroup": [16, 16, 1], "ThreadTile": [4, 4], "DepthU": 16, "GlobalSplitU": 4,
                        "GlobalSplitUAlgorithm": "MultipleBuffer"},
}
SIZES = [GemmSize(128, 128, 128), GemmSize(1024, 1024, 1024), GemmSize(4096, 4096, 4096), GemmSize(256, 256, 16384),
         GemmSize(5760, 5760, 5760)]


def main() -> None:
    t0 = time.time()
    print("# The analytical model against published peaks (modelled, not measured)\n")
    print("Command: `PYTHONPATH=. python bench/model_vs_published.py > bench/model_vs_published.md`\n")
    print("Every number below except the peaks is the model's (`tensile_asm/runtime/model.py`), for kernels this")
    print("project builds (VALU sgemm, NT). The peaks are the vendors' published vector fp32 figures from")
    print("`devices/devices.yaml` (each with its source there). The comparison with published per-size measurements")
    print("(rocblas-bench results on MI210 and MI100, each with its source) is in `bench/model_vs_measured.md`: there the model")
    print("is 0.5-0.7x the measured MFMA fp32/fp64 throughput. This table shows that the model stays below the published")
    print("peaks, where it puts each kernel, and which kernel it ranks first per size.\n")
    built: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for dev in devices().values():
            arch = load_arch(dev.arch)
            if dev.arch not in built:
                built[dev.arch] = {}
                for label, params in KERNELS.items():
                    sol = Solution.from_dict({"ProblemType": PT, **params}, where=label)
                    name = "k" + str(len(built[dev.arch]))
                    co = Path(tmp) / f"{dev.arch}_{name}.co"
                    link_kernels([build_kernel(sol, arch, name)], arch, co)
                    built[dev.arch][label] = (co, GemmKernelContract.from_solution(sol, name))
            rt = ModelRuntime(device=dev.name)
            peak = dev.peak_tflops.get("f32")
            print(f"## {dev.name} ({dev.arch}, {dev.cus} CUs, {dev.clock_mhz:g} MHz, {dev.memory_gbs:g} GB/s; "
                  f"published fp32 vector peak {peak:g} TFLOPS)\n")
            print("| kernel | " + " | ".join(str(s) for s in SIZES) + " |")
            print("|---|" + "---:|" * len(SIZES))
            best = {}
            for label, (co, c) in built[dev.arch].items():
                facts = rt.facts(co, c.name)
                cells = []
                for s in SIZES:
                    est = estimate(c, facts, s, dev)
                    g = s.flops / est.seconds / 1e9
                    best.setdefault(str(s), []).append((g, label))
                    cells.append(f"{g:,.0f} ({100 * g / (peak * 1000):.0f}%, {est.bound})")
                print(f"| {label} | " + " | ".join(cells) + " |")
            print("\nmodel's first choice: " + "; ".join(f"{s}: {max(v)[1]}" for s, v in best.items()) + "\n")
    print(f"(GFLOPS, % of the published fp32 peak, what bounds the estimate; {time.time() - t0:.0f} s to run, "
          f"kernels built once per architecture)")


if __name__ == "__main__":
    main()
