"""Where the LLVM AMDGPU tools are.

Order: ``$TENSILE_ASM_LLVM`` (a bin directory), ``$ROCM_PATH/llvm/bin``, ``/opt/rocm/llvm/bin``,
then Debian's versioned tools (``-22``, then ``-19``) on PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
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


# Debian's HIP headers (libamdhip64-dev 5.2) are written for its clang 19. clang 20 and later no longer predefine
# __AMDGCN_WAVEFRONT_SIZE, which those headers read, so a newer clang gets it on its command line; it compiles the
# targets clang 19 does not know (gfx950). ROCm's own clang comes with its own headers.
HIP_INSTALL_HINT = ("install 'apt-get install -y clang-19 clang-22 hipcc libamdhip64-dev rocm-device-libs' (or run "
                    "tools/setup), or set TENSILE_ASM_HIP_CLANG to a clang++ that compiles HIP")
DEVICE_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "/opt/rocm/amdgcn/bitcode")
DEBIAN_HIP_CLANGS = ("19", "22", "21", "20")   # 19 first: the one Debian's HIP headers are written for
WAVEFRONT_MACRO_DROPPED_IN = 20                # the clang major version that stopped predefining it


@dataclass(frozen=True)
class HipCompiler:
    """A clang++ that compiles HIP for a target: its path, its ROCm path (None for Debian's /usr layout) and
    the macros the headers need that this clang does not predefine."""
    clang: str
    rocm: str | None
    needs_wavefront_macro: bool = False

    def defines(self, wavefront_size: int) -> list[str]:
        return [f"-D__AMDGCN_WAVEFRONT_SIZE={wavefront_size}"] if self.needs_wavefront_macro else []


@lru_cache(maxsize=None)
def clang_major(clang: str) -> int:
    """The major version ``clang --version`` reports (0 when it cannot be read)."""
    try:
        out = subprocess.run([clang, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    m = re.search(r"clang version (\d+)", out)
    return int(m.group(1)) if m else 0


@lru_cache(maxsize=None)
def amdgpu_targets(clang: str) -> frozenset[str]:
    """The AMDGPU processors ``clang`` knows (``-print-supported-cpus``)."""
    try:
        proc = subprocess.run([clang, "-print-supported-cpus", "--target=amdgcn-amd-amdhsa", "-nogpulib", "-x", "c",
                               os.devnull], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(w for w in (proc.stdout + proc.stderr).split() if w.startswith("gfx"))


def _rocm_compiler() -> tuple[str, str] | None:
    """(ROCm's clang++, its ROCm path) under $ROCM_PATH or /opt/rocm, where its HIP headers are too."""
    for rocm in filter(None, (os.environ.get("ROCM_PATH"), "/opt/rocm")):
        candidate = Path(rocm) / "llvm" / "bin" / "clang++"
        if candidate.is_file() and (Path(rocm) / "include" / "hip" / "hip_runtime.h").is_file():
            return str(candidate), rocm
    return None


def _debian_clangs() -> list[str]:
    """Debian's versioned clang++ on PATH, in the order find_hip_compiler tries them."""
    return [p for p in (shutil.which(f"clang++-{v}") for v in DEBIAN_HIP_CLANGS) if p]


def hip_compiler_paths() -> list[str]:
    """Every clang++ ``find_hip_compiler`` may pick for some target (for cache keys)."""
    if os.environ.get("TENSILE_ASM_HIP_CLANG"):
        return [os.environ["TENSILE_ASM_HIP_CLANG"]]
    rocm = _rocm_compiler()
    return [rocm[0]] if rocm else _debian_clangs()


@lru_cache(maxsize=None)
def find_hip_compiler(target: str | None = None) -> HipCompiler:
    """The clang++ that compiles HIP for ``target`` (any target when None): ``$TENSILE_ASM_HIP_CLANG``, then
    ROCm's, then Debian's clang++-19 with /usr's HIP headers, then a newer Debian clang++ for targets 19 lacks."""
    if os.environ.get("TENSILE_ASM_HIP_CLANG"):
        path = os.environ["TENSILE_ASM_HIP_CLANG"]
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise ToolchainError(f"TENSILE_ASM_HIP_CLANG={path} is not an executable clang++")
        rocm = os.environ.get("ROCM_PATH")
        return HipCompiler(path, rocm, rocm is None and clang_major(path) >= WAVEFRONT_MACRO_DROPPED_IN)
    rocm = _rocm_compiler()
    if rocm:
        return HipCompiler(*rocm)
    if not Path("/usr/include/hip/hip_runtime.h").is_file():
        raise ToolchainError(f"no clang++ that compiles HIP with the HIP headers was found; {HIP_INSTALL_HINT}")
    found = _debian_clangs()
    for clang in found:
        if target is None or target in amdgpu_targets(clang):
            return HipCompiler(clang, None, clang_major(clang) >= WAVEFRONT_MACRO_DROPPED_IN)
    if found:
        names = ", ".join(Path(p).name for p in found)
        raise ToolchainError(f"no installed clang++ compiles HIP for {target} ({names} "
                             f"{'does' if len(found) == 1 else 'do'} not know it); install a "
                             f"newer one ('apt-get install -y clang-22') or set TENSILE_ASM_HIP_CLANG")
    raise ToolchainError(f"no clang++ that compiles HIP with the HIP headers was found; {HIP_INSTALL_HINT}")


def device_lib_dir(rocm_path: str | None) -> Path | None:
    """The ROCm device libraries' bitcode directory (ocml, ockl, oclc_*), or None."""
    dirs = [Path(rocm_path) / "amdgcn" / "bitcode"] if rocm_path else []
    for d in dirs + [Path(p) for p in DEVICE_LIB_DIRS]:
        if (d / "ocml.bc").is_file():
            return d
    return None
