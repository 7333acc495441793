"""A one-line progress bar on stderr, drawn only when stderr is a terminal (create-library, tune)."""

from __future__ import annotations

import sys
import time


class ProgressBar:
    WIDTH = 30

    def __init__(self, total: int, what: str, enabled: bool | None = None):
        self.total, self.what, self.done, self.last = total, what, 0, 0.0
        self.enabled = (sys.stderr.isatty() if enabled is None else enabled) and total > 0

    def step(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and (now - self.last > 0.1 or self.done == self.total):   # at most 10 redraws a second
            self.last = now
            filled = self.WIDTH * self.done // self.total
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total} {self.what}")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
