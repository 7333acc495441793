"""Drive the LLVM AMDGPU assembler and linker.

Assembly goes through ``llvm-mc`` (about 10 ms faster per file than the clang driver, byte-identical
objects); because ``llvm-mc`` only *warns* about an unknown ``-mcpu`` and then writes a broken object,
any diagnostic at all is treated as an error. The code object version is pinned by the
``.amdhsa_code_object_version`` directive the writer emits. Assembled objects are cached by a hash of
the tool, target and source text.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

from tensile_asm.errors import ToolchainError
from tensile_asm.isa.arch import Arch
from tensile_asm.toolchain_paths import find_llvm_tool

CODE_OBJECT_VERSION = 5


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tensile-asm" / "objects"


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write to a temporary name beside ``path`` and rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _run(cmd: list[str], what: str, source_name: str) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(cmd, capture_output=True)
    except OSError as e:
        raise ToolchainError(f"could not run {cmd[0]}: {e}") from None
    diagnostics = proc.stderr.decode(errors="replace").strip()
    if proc.returncode != 0 or diagnostics:
        first = next((l for l in diagnostics.splitlines() if "error" in l or "warning" in l), diagnostics[:300])
        first = first.replace("<stdin>", source_name)
        raise ToolchainError(f"{what} of {source_name} failed: {first.strip()}")
    return proc


def identity() -> str:
    """The assembler and linker as they are now (path, size, modification time): part of cache keys, so
    an upgraded LLVM rebuilds."""
    parts = []
    for tool in ("llvm-mc", "ld.lld"):
        path = Path(find_llvm_tool(tool)).resolve()
        st = path.stat()
        parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
    return ";".join(parts)


def assemble(text: str, arch: Arch, source_name: str = "<kernel>.s", cache: bool = True) -> bytes:
    """Assemble AMDGPU assembly text into an ELF relocatable object for ``arch`` (with ``cache``, objects
    are kept by a hash of the assembler, target and text; create-library caches whole kernels instead)."""
    mc = find_llvm_tool("llvm-mc")
    key = hashlib.sha256(f"{mc}\0{arch.name}\0{text}".encode()).hexdigest()
    cached = cache_dir() / f"{key}.o"
    if cache and cached.is_file():
        return cached.read_bytes()
    with tempfile.TemporaryDirectory(prefix="tensile-asm-") as tmp:
        out = Path(tmp) / "k.o"
        cmd = [mc, "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch.name}", "-filetype=obj", "-o", str(out), "-"]
        try:
            proc = subprocess.run(cmd, input=text.encode(), capture_output=True)
        except OSError as e:
            raise ToolchainError(f"could not run {mc}: {e}") from None
        diagnostics = proc.stderr.decode(errors="replace").strip()
        if proc.returncode != 0 or diagnostics:
            lines = diagnostics.splitlines()
            first = next((l for l in lines if "error" in l or "warning" in l), lines[0] if lines else "")
            context = ""
            idx = lines.index(first) if first in lines else -1
            if 0 <= idx < len(lines) - 1:
                context = f" (at: {lines[idx + 1].strip()})"
            raise ToolchainError(
                f"the assembler rejected {source_name}: {first.replace('<stdin>', source_name).strip()}{context}")
        obj = out.read_bytes()
    if not cache:
        return obj
    try:
        write_atomic(cached, obj)
    except OSError:
        pass  # a read-only cache is not an error
    return obj


def link(objects: list[bytes], out_path: Path, source_name: str = "kernels") -> None:
    """Link relocatable objects into one shared code object at ``out_path`` (atomically)."""
    lld = find_llvm_tool("ld.lld")
    out_path = Path(out_path)
    with tempfile.TemporaryDirectory(prefix="tensile-asm-") as tmp:
        paths = []
        for i, obj in enumerate(objects):
            p = Path(tmp) / f"k{i}.o"
            p.write_bytes(obj)
            paths.append(str(p))
        co = Path(tmp) / "out.co"
        _run([lld, "-shared", "-o", str(co), *paths], "linking", source_name)
        write_atomic(out_path, co.read_bytes())


def assemble_and_link(text: str, arch: Arch, out_path: Path, source_name: str = "<kernel>.s") -> None:
    link([assemble(text, arch, source_name)], out_path, source_name)


# ---------------------------------------------------------------------------------------------- HIP source

# -fhip-kernel-arg-name: the metadata names each argument (the runtime matches them to the contract's)
HIP_FLAGS = ("-x", "hip", "--cuda-device-only", "-O3", "-S", "-mcode-object-version=5", "-fno-gpu-rdc",
             "-fhip-kernel-arg-name", "-Wno-unused-parameter")


def hip_identity(target: str | None = None) -> str:
    """The HIP compiler for ``target`` as it is now (path, size, modification time); with no target, every
    compiler some target may get. Part of source kernels' cache keys."""
    from tensile_asm.toolchain_paths import find_hip_compiler, hip_compiler_paths
    paths = [find_hip_compiler(target).clang] if target else (hip_compiler_paths() or [find_hip_compiler().clang])
    ids = []
    for path in paths:
        clang = Path(path).resolve()
        st = clang.stat()
        ids.append(f"{clang}:{st.st_size}:{st.st_mtime_ns}")
    return ",".join(ids)


def _hip_command(arch: Arch, out: Path, source: Path, cuid: str) -> list[str]:
    from tensile_asm.toolchain_paths import device_lib_dir, find_hip_compiler
    compiler = find_hip_compiler(arch.name)
    clang, rocm = compiler.clang, compiler.rocm
    cmd = [clang, *HIP_FLAGS, f"--offload-arch={arch.name}", f"--rocm-path={rocm or '/usr'}",
           *compiler.defines(arch.wavefront_size)]
    libs = device_lib_dir(rocm)
    # the device libraries (ocml, ockl) are linked where they know the target; Debian's 5.2 ones stop at
    # gfx940, so gfx942 kernels compile without them (the GEMM kernels call none of their functions)
    version = arch.name[3:].lower()
    if libs is not None and (libs / f"oclc_isa_version_{version}.bc").is_file():
        cmd.append(f"--rocm-device-lib-path={libs}")
    else:
        cmd.append("-nogpulib")
    # a fixed compilation-unit id (clang's default hashes the temporary file's path): the same text compiles
    # to the same bytes, and kernels linked together keep distinct __hip_cuid_ symbols
    return cmd + [f"-cuid={cuid}", "-o", str(out), str(source)]


def compile_hip(text: str, arch: Arch, source_name: str = "<kernel>.hip", cache: bool = True) -> str:
    """Compile HIP C++ text for ``arch`` (device code only) and return the AMDGPU assembly clang writes for
    it (kernel code, descriptors and the ``.amdgpu_metadata`` block); kept by a hash of the compiler, target
    and text with ``cache``."""
    key = hashlib.sha256(f"hip\0{hip_identity(arch.name)}\0{arch.name}\0{text}".encode()).hexdigest()
    cached = cache_dir() / f"{key}.hip.s"
    if cache and cached.is_file():
        return cached.read_text()
    with tempfile.TemporaryDirectory(prefix="tensile-asm-") as tmp:
        src, out = Path(tmp) / "kernel.hip", Path(tmp) / "kernel.s"
        src.write_text(text)
        cmd = _hip_command(arch, out, src, key[:16])
        try:
            proc = subprocess.run(cmd, capture_output=True)
        except OSError as e:
            raise ToolchainError(f"could not run {cmd[0]}: {e}") from None
        diagnostics = proc.stderr.decode(errors="replace").strip()
        if proc.returncode != 0 or "error" in diagnostics:
            first = next((l for l in diagnostics.splitlines() if "error" in l), diagnostics[:300])
            raise ToolchainError(f"the HIP compiler rejected {source_name}: {first.replace(str(src), source_name)}")
        asm = out.read_text()
    if cache:
        try:
            write_atomic(cached, asm)
        except OSError:
            pass
    return asm
