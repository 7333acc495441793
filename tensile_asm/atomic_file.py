"""Writing a file atomically: a temporary name beside it, then a rename, so that a reader (or a build
killed half-way) never sees half a file.

A low-level module importing nothing of the package, so that both the library writers
(``library/fileio.py``) and the kernel cache (``kernel_cache.py``, imported by ``library/create.py``)
share it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def publish(tmp: str | Path, path: str | Path) -> None:
    """Give a temporary file normal permissions and rename it over ``path``."""
    os.chmod(tmp, 0o666 & ~_umask())
    os.replace(tmp, path)


def write_atomic(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` to a temporary file beside ``path`` and rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        publish(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


__all__ = ["publish", "write_atomic"]
