#!/usr/bin/env python3
"""Re-validate isa/instructions/<arch>.txt against the installed llvm-mc: every listed name must be a
mnemonic llvm-mc accepts for its arch. Exit 1 naming the ones it rejects.

  .venv/bin/python tools/check_isa_instructions.py [--arch gfx90a ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tensile_asm.isa.instruction_lists import LISTED_ARCHES, load_instructions, rejected_mnemonics  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", action="append", choices=LISTED_ARCHES, help="default: all")
    args = p.parse_args()
    bad = 0
    for arch in args.arch or LISTED_ARCHES:
        names = sorted(load_instructions(arch))
        rejected = rejected_mnemonics(arch, names)
        for name, why in sorted(rejected.items()):
            print(f"{arch}: {name}: {why}")
        print(f"{arch}: {len(names) - len(rejected)} of {len(names)} accepted by llvm-mc")
        bad += len(rejected)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
