"""Cut a Tensile logic file down to a few of its solutions, keeping Tensile's format.

usage: python tools/cut_logic.py IN.yaml OUT.yaml INDEX [INDEX ...]

The logic file is a YAML list; item 5 is the solution list, item 7 the exact (Matching) logic, whose
entries name a solution by its position. The kept solutions (by SolutionIndex) are renumbered 0..n-1 in the
order given, and only the exact-logic entries of kept solutions stay (remapped). Everything else is copied as
is (``tensile_asm.benchmark.sample.cut_logic``; tools/verify_logic_sample.py cuts, builds and verifies in one go).
Used to make small logic directories for tensile-tcl (AMD's TensileCreateLibrary) test builds.
"""

from __future__ import annotations

import sys

import yaml

from tensile_asm.benchmark.sample import cut_logic as cut  # noqa: F401 -- the name tests and scripts import


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
