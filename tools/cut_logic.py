"""Cut a Tensile logic file down to a few of its solutions, keeping Tensile's format.

usage: python tools/cut_logic.py IN.yaml OUT.yaml INDEX [INDEX ...]

The logic file is a YAML list; item 5 is the solution list, item 7 the exact (Matching) logic, whose
entries name a solution by its position. The kept solutions are renumbered 0..n-1 in the order given,
and only the exact-logic entries of kept solutions stay (remapped). Everything else is copied as is.
Used to make small logic directories for tensile-tcl (AMD's TensileCreateLibrary) test builds.
"""

from __future__ import annotations

import sys

import yaml


def cut(data: list, keep: list[int]) -> list:
    sols = {s["SolutionIndex"]: s for s in data[5]}
    missing = [i for i in keep if i not in sols]
    if missing:
        raise SystemExit(f"no solution with SolutionIndex {missing}")
    new_index = {old: new for new, old in enumerate(keep)}
    out = list(data)
    out[5] = [dict(sols[old], SolutionIndex=new_index[old]) for old in keep]
    if isinstance(data[7], list):
        out[7] = [[size, [new_index[entry[0]]] + list(entry[1:])] for size, entry in data[7] if entry[0] in new_index]
    return out


def main(argv: list[str]) -> int:
    src, dst, *indices = argv
    with open(src) as f:
        data = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    with open(dst, "w") as f:
        yaml.dump(cut(data, [int(i) for i in indices]), f, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                  default_flow_style=None, width=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
