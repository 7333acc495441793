"""Where the LLVM AMDGPU tools are.

Order: ``$TENSILE_ASM_LLVM`` (a bin directory), ``$ROCM_PATH/llvm/bin``, ``/opt/rocm/llvm/bin``,
then Debian's versioned tools (``-22``, then ``-19``) on PATH.
"""

from __future__ import annotations

import os
import shutil
from functools import lru_cache
from pathlib import Path

from tensile_asm.errors import ToolchainError

DEBIAN_VERSIONS = ("22", "19")
INSTALL_HINT = "install it with 'apt-get install -y llvm-22 lld-22 clang-22' (or run tools/setup), or set TENSILE_ASM_LLVM to an LLVM bin directory"


def _bin_dirs() -> list[tuple[str, Path]]:
    dirs = []
    if os.environ.get("TENSILE_ASM_LLVM"):
        dirs.append(("TENSILE_ASM_LLVM", Path(os.environ["TENSILE_ASM_LLVM"])))
    if os.environ.get("ROCM_PATH"):
        dirs.append(("ROCM_PATH", Path(os.environ["ROCM_PATH"]) / "llvm" / "bin"))
    dirs.append(("/opt/rocm", Path("/opt/rocm/llvm/bin")))
    return dirs


@lru_cache(maxsize=None)
def find_llvm_tool(name: str) -> str:
    """Path of an LLVM tool such as ``llvm-mc``, ``ld.lld``, ``llvm-objdump`` or ``clang``."""
    for source, d in _bin_dirs():
        candidate = d / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
        if source == "TENSILE_ASM_LLVM":
            raise ToolchainError(f"TENSILE_ASM_LLVM={d} has no executable '{name}'; point it at an LLVM bin directory with the AMDGPU target")
    for version in DEBIAN_VERSIONS:
        found = shutil.which(f"{name}-{version}")
        if found:
            return found
    raise ToolchainError(f"the LLVM tool '{name}' was not found; {INSTALL_HINT}")
