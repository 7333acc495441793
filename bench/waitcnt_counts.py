"""Count the ``s_waitcnt`` of every kernel the writer builds from the lite_configs logic files: in the
whole kernel and in its main loop (from the ``LoopBeginL`` label to the branch back to it: with
PrefetchGlobalRead both unrolled copies of the body). Counts come from the kernel's text, so the script
runs unchanged on any checkout of this repository (the before/after of bench/waitcnt_counts.md):

    PYTHONPATH=TREE python3 TREE/bench/waitcnt_counts.py [--shared DIR]

Prints one row per kernel (logic file, solution index, main-loop waits, all waits) and the totals.
"""
import argparse
import re
import sys
from pathlib import Path

from tensile_asm.isa.arch import load_arch
from tensile_asm.library.logic import read_logic_file
from tensile_asm.writer.build import build_kernel, supports

_BEGIN = re.compile(r"^\s*(\.LLoopBeginL\S*):")


def counts(text: str) -> tuple[int, int]:
    """(waits in the main loop, waits in the kernel) of one kernel's assembly text."""
    lines = [ln.split("//")[0].strip() for ln in text.splitlines()]
    total = sum(ln.startswith("s_waitcnt") for ln in lines)
    start = next((i for i, ln in enumerate(lines) if _BEGIN.match(ln)), None)
    if start is None:
        return 0, total
    label = _BEGIN.match(lines[start]).group(1)
    back = max(i for i, ln in enumerate(lines) if ln.startswith(("s_branch", "s_cbranch_"))
               and ln.split()[-1] == label)
    return sum(ln.startswith("s_waitcnt") for ln in lines[start:back]), total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared")
    args = ap.parse_args()
    files = sorted((args.shared / "data" / "logic" / "lite_configs").glob("*.yaml"))
    if not files:
        print(f"no lite_configs logic files under {args.shared}", file=sys.stderr)
        return 1
    print(f"| logic file | solution | main-loop s_waitcnt | kernel s_waitcnt |\n|---|---|---|---|")
    loop_sum = all_sum = kernels = 0
    for path in files:
        logic = read_logic_file(path)
        arch_name = logic.architecture if isinstance(logic.architecture, str) else logic.architecture["Architecture"]
        arch = load_arch(arch_name)
        for index, entry in enumerate(logic.solutions):
            sol = getattr(entry, "solution", entry)
            reason = supports(sol, arch)
            if reason:
                print(f"| {path.stem} | {index} | not built: {reason} | |")
                continue
            loop, total = counts(build_kernel(sol, arch, f"lite{index}").text())
            print(f"| {path.stem} | {index} | {loop} | {total} |", flush=True)
            loop_sum, all_sum, kernels = loop_sum + loop, all_sum + total, kernels + 1
    print(f"| **{kernels} kernels** | | **{loop_sum}** | **{all_sum}** |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
