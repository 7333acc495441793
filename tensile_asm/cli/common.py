"""Shared CLI plumbing: user errors become one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import sys
from typing import Callable

from tensile_asm.errors import UserError

EXIT_USAGE = 2


def run_main(prog: str, body: Callable[[], int]) -> int:
    try:
        return body()
    except UserError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


def parse_size(text: str) -> tuple[int, ...]:
    """M,N,K[,BATCH] with every entry a positive integer."""
    parts = text.split(",")
    if len(parts) not in (3, 4):
        raise UserError(f"--size {text!r}: expected M,N,K or M,N,K,BATCH, e.g. --size 127,64,33")
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        raise UserError(f"--size {text!r}: every entry must be an integer, e.g. --size 127,64,33") from None
    if min(values) < 1:
        raise UserError(f"--size {text!r}: sizes must be at least 1")
    return values
