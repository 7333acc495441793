"""The analytical model (``tensile-asm predict``) against per-size GEMM measurements published on the web.
MODELLED numbers beside MEASURED ones; each measurement with its source URL.

    PYTHONPATH=. python bench/model_vs_measured.py > bench/model_vs_measured.md

For each measurement the model predicts, at the same size, every solution of the matching rocBLAS logic file
(``../shared/data/logic/rocblas-asm_full/<schedule>/``: the kernels rocBLAS itself ships for that device and type)
that this project's writer builds, and reports the best (the kernel the model would pick) and the worst. The
kernel rocBLAS dispatched in the measurement is named where the source names it; whether the writer builds it is
said.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tensile_asm.gemm import GemmKernelContract  # noqa: E402
from tensile_asm.isa.arch import load_arch  # noqa: E402
from tensile_asm.library.logic import read_logic_file  # noqa: E402
from tensile_asm.runtime.base import GemmSize  # noqa: E402
from tensile_asm.runtime.devices import devices  # noqa: E402
from tensile_asm.runtime.model import ModelRuntime, estimate  # noqa: E402
from tensile_asm.writer.build import build_kernel, link_kernels, supports  # noqa: E402

LOGIC = ROOT.parent / "shared" / "data" / "logic" / "rocblas-asm_full"

# (device, what, logic file, [(M, N, K, measured TFLOPS)], dispatched kernel or None, source URL, note)
MEASURED = [
    ("mi210", "SGEMM NN (rocblas-bench, f32, steady -i 20 -j 5)", "aldebaran/aldebaran_Cijk_Ailk_Bljk_SB.yaml",
     [(1024, 1024, 1024, 30.1), (2048, 2048, 2048, 34.6), (4096, 4096, 4096, 32.3), (8192, 8192, 8192, 37.9)],
     "Cijk_..._MT256x128x16_MI16x16x4x1_..._ISA90a", "https://github.com/ROCm/rocm-libraries/issues/9453",
     "AMD engineer's bare-metal MI210 sweep, 299 W, 1635-1700 MHz"),
    ("mi210", "DGEMM NN (rocblas-bench, f64)", "aldebaran/aldebaran_Cijk_Ailk_Bljk_DB.yaml",
     [(8192, 8192, 8192, 27.1)], None, "https://github.com/ROCm/rocm-libraries/issues/9453",
     "same machine and thread"),
    ("mi100", "HGEMM NN, f16 in/out, f16 compute (rocblas-bench gemm -r h)", "arcturus/arcturus_Cijk_Ailk_Bljk_HB.yaml",
     [(8192, 8192, 8192, 33.0)], None, "https://github.com/ROCm/rocBLAS/issues/1235",
     "user report: 'only get 33 tflops'"),
    ("mi100", "GEMM_EX TN, f16 in, f32 out, f32 compute (HSS)", "arcturus/arcturus_Cijk_Alik_Bljk_HSS_BH.yaml",
     [(4096, 512, 4096, 91.0)], None, "https://github.com/ROCm/Tensile/issues/2087",
     "user ~90, AMD reproduction 92 TFLOPS (ROCm 6.3)"),
]
MAX_KERNELS = 12  # buildable solutions per logic file (the first ones in file order)


def main() -> None:
    t0 = time.time()
    print("# The analytical model against published per-size measurements (modelled vs measured)\n")
    print("Command: `PYTHONPATH=. python bench/model_vs_measured.py > bench/model_vs_measured.md`\n")
    print("Measured: public rocblas-bench results, each with its source. Modelled: `tensile_asm/runtime/model.py`")
    print("for the solutions of the matching rocBLAS logic file that this project's writer builds (at most "
          f"{MAX_KERNELS}, file order); 'best' is the model's pick among them, 'worst' its lowest. The model is a")
    print("model: the ratio column says how far it is from the measurement for the kernels it can see.\n")
    dev_table = devices()
    with tempfile.TemporaryDirectory() as tmp:
        for dev_name, what, logic, points, dispatched, url, note in MEASURED:
            dev = dev_table[dev_name]
            arch = load_arch(dev.arch)
            lf = read_logic_file(LOGIC / logic)
            built, refused = [], {}
            for e in lf.entries:
                if e.solution is None or len(built) >= MAX_KERNELS:
                    continue
                why = supports(e.solution, arch)
                if why:
                    refused[why.split(":")[0]] = refused.get(why.split(":")[0], 0) + 1
                    continue
                name = f"k{e.index}"
                co = Path(tmp) / f"{dev_name}_{Path(logic).stem}_{name}.co"
                try:
                    link_kernels([build_kernel(e.solution, arch, name)], arch, co)
                except Exception as exc:  # a kernel the writer accepted but could not write: listed, not hidden
                    refused[f"build error {type(exc).__name__}"] = refused.get(f"build error {type(exc).__name__}", 0) + 1
                    continue
                built.append((e.index, e.stored_name or name, co, GemmKernelContract.from_solution(e.solution, name)))
            rt = ModelRuntime(device=dev.name)
            print(f"## {dev.name}: {what}\n")
            print(f"Source: {url} ({note}). Logic file `{logic}`: {len(lf.entries)} solutions; model sees "
                  f"{len(built)} that the writer builds" + (f" (dispatched kernel: `{dispatched}`)" if dispatched else "")
                  + ".\n")
            if not built:
                top = "; ".join(f"{n} x {r}" for r, n in sorted(refused.items(), key=lambda x: -x[1])[:3])
                print(f"No solution of this file is built by the writer ({top}): no prediction.\n")
                continue
            print("| size | measured TFLOPS | model best TFLOPS (kernel) | model/measured | model worst TFLOPS |")
            print("|---|---:|---:|---:|---:|")
            for m, n, k, meas in points:
                size = GemmSize(m, n, k)
                preds = []
                for idx, label, co, c in built:
                    est = estimate(c, rt.facts(co, c.name), size, dev)
                    preds.append((size.flops / est.seconds / 1e12, idx, label, est.bound))
                best, worst = max(preds), min(preds)
                short = best[2].split("_", 4)[-1][:60] if best[2] else f"index {best[1]}"
                print(f"| {m}x{n}x{k} | {meas:g} | {best[0]:.1f} (#{best[1]} {short}, {best[3]}) | "
                      f"{best[0] / meas:.2f} | {worst[0]:.1f} |")
            print()
    print(f"({time.time() - t0:.0f} s to run on the shared 2-core machine)")


if __name__ == "__main__":
    main()
