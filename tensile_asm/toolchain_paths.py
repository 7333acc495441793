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


# Debian's HIP headers (libamdhip64-dev 5.2) compile with its clang 19, not with clang 22 (which no longer
# defines __AMDGCN_WAVEFRONT_SIZE); ROCm's own clang comes with its own headers.
HIP_INSTALL_HINT = ("install 'apt-get install -y clang-19 hipcc libamdhip64-dev rocm-device-libs' (or run tools/setup), "
                    "or set TENSILE_ASM_HIP_CLANG to a clang++ that compiles HIP")
DEVICE_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "/opt/rocm/amdgcn/bitcode")


@lru_cache(maxsize=None)
def find_hip_compiler() -> tuple[str, str | None]:
    """(clang++ that compiles HIP, its ROCm path or None for Debian's /usr layout)."""
    if os.environ.get("TENSILE_ASM_HIP_CLANG"):
        path = os.environ["TENSILE_ASM_HIP_CLANG"]
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise ToolchainError(f"TENSILE_ASM_HIP_CLANG={path} is not an executable clang++")
        return path, os.environ.get("ROCM_PATH")
    for rocm in filter(None, (os.environ.get("ROCM_PATH"), "/opt/rocm")):
        candidate = Path(rocm) / "llvm" / "bin" / "clang++"
        if candidate.is_file() and (Path(rocm) / "include" / "hip" / "hip_runtime.h").is_file():
            return str(candidate), rocm
    found = shutil.which("clang++-19")
    if found and Path("/usr/include/hip/hip_runtime.h").is_file():
        return found, None
    raise ToolchainError(f"no clang++ that compiles HIP with the HIP headers was found; {HIP_INSTALL_HINT}")


def device_lib_dir(rocm_path: str | None) -> Path | None:
    """The ROCm device libraries' bitcode directory (ocml, ockl, oclc_*), or None."""
    dirs = [Path(rocm_path) / "amdgcn" / "bitcode"] if rocm_path else []
    for d in dirs + [Path(p) for p in DEVICE_LIB_DIRS]:
        if (d / "ocml.bc").is_file():
            return d
    return None
