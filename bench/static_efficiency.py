#!/usr/bin/env python3
"""Static efficiency of the writer's main loops, as `tensile-asm inspect` models it (issue cycles from
isa/*.yaml; modelled, not measured), for the quality-bar kernel and every lite_configs solution.

  .venv/bin/python bench/static_efficiency.py > bench/static_efficiency.md
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tensile_asm.inspect.core import inspect_file  # noqa: E402
from tensile_asm.isa.arch import load_arch  # noqa: E402
from tensile_asm.library.logic import read_logic_file  # noqa: E402
from tensile_asm.solution.solution import Solution  # noqa: E402
from tensile_asm.writer.build import build_kernel, supports  # noqa: E402

LITE = REPO.parent / "shared" / "data" / "logic" / "lite_configs"


def measure(kernel, tmp: Path) -> dict:
    path = tmp / f"{kernel.name}.s"
    path.write_text(kernel.text())
    [report] = inspect_file(path, emulate=False)
    d = report.as_dict()
    return {"vgpr": d["vgpr"], "occupancy": d["occupancy"]["waves_per_simd"], **d["loop"]}


def row(label, m) -> str:
    mix = m["mix"]
    others = m["instructions"] - m["fma_instructions"]
    return (f"| {label} | {m['vgpr']} | {m['occupancy']} | {m['fma_instructions']} | {others} | "
            f"{100 * m['static_efficiency']:.1f}% | {100 * m['count_ratio']:.1f}% | "
            f"{', '.join(f'{k} {v}' for k, v in mix.items() if k != 'valu_fma')} |")


def main() -> int:
    out = ["# Static efficiency of the main loop (modelled)", "",
           "Produced by `.venv/bin/python bench/static_efficiency.py > bench/static_efficiency.md`.",
           "Static efficiency = FMA issue cycles / all issue cycles of one pass through the main loop body,",
           "from the `issue_cycles` table of `isa/<arch>.yaml` (a model, not a measurement); count ratio =",
           "FMA instructions / all instructions, the Tensile paper's 512/(512+52) estimate. With",
           "PrefetchGlobalRead the loop body holds two unrolled iterations.", "",
           "| kernel | VGPR | waves/SIMD | FMA | other | static efficiency | count ratio | other instructions |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        arch = load_arch("gfx90a")
        for vw in (4, 2, 1):
            # GlobalReadVectorWidth 4 with a smaller VectorWidth is a valid Tensile solution only where M and N
            # are asserted multiples of 4 (the writer's edge handling does not need it)
            sol = Solution.from_dict({
                "ProblemType": {"DataType": "s", "TransposeA": False, "TransposeB": True, "Batched": True},
                "WorkGroup": [16, 16, 1], "ThreadTile": [8, 8], "DepthU": 8, "VectorWidth": vw,
                "GlobalReadVectorWidth": 4, "PrefetchGlobalRead": 1, "PrefetchLocalRead": 1, "StaggerU": 0,
                "WorkGroupMapping": 1, "AssertFree0ElementMultiple": 4, "AssertFree1ElementMultiple": 4},
                where="quality bar").validate()
            out.append(row(f"quality bar: gfx90a NT MT128x128x8 TT8x8 WG16x16 PGR PLR GRVW4 VW{vw}",
                           measure(build_kernel(sol, arch, f"q128_vw{vw}"), tmp)))
        if LITE.is_dir():
            # issue 10's bar: the 128x128 TT8x8 kernel of the vega lite logic on gfx906 at >= 0.90
            sol = read_logic_file(LITE / "vega10_Cijk_Ailk_Bjlk_SB.yaml").solutions[4]
            out.append(row("quality bar: gfx906, vega10_Cijk_Ailk_Bjlk_SB #4 (MT128x128x8 TT8x8 StaggerU 32) built "
                           "for gfx906", measure(build_kernel(sol, load_arch("gfx906"), "q906"), tmp)))
            for path in sorted(LITE.glob("*.yaml")):
                logic = read_logic_file(path)
                arch = load_arch(logic.architecture)
                for i, sol in enumerate(logic.solutions):
                    if supports(sol, arch):
                        out.append(f"| {path.stem} #{i} | not built: {supports(sol, arch)} |")
                        continue
                    label = f"{path.stem} #{i} ({sol.stored_name if hasattr(sol, 'stored_name') else ''})".replace(" ()", "")
                    out.append(row(label, measure(build_kernel(sol, arch, f"lite{i}"), tmp)))
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
