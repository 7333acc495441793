"""Source kernels into code-object parts: the HIP text (``writer``) compiled by clang to AMDGPU assembly
(``toolchain.compile_hip``), its metadata block taken out and kept beside the object the rest assembles to,
so that a source kernel links like an assembly one (``writer.build.link_parts``: one metadata note for the
code object). GlobalSplitU's helper kernel (beta-only or post-GSU) comes with it, as for an assembly kernel.
``writer.build`` routes ``KernelLanguage: Source`` solutions here.
"""

from __future__ import annotations

import re
import time

import yaml

from tensile_asm import toolchain
from tensile_asm.errors import ToolchainError, UserError
from tensile_asm.isa.arch import Arch
from tensile_asm.kernel_cache import CacheEntry, KernelPart
from tensile_asm.source import writer

SOURCE = "Source"
_METADATA = re.compile(r"^\s*\.amdgpu_metadata\s*$(.*?)^\s*\.end_amdgpu_metadata\s*$", re.M | re.S)


def is_source(solution) -> bool:
    return solution.params.get("KernelLanguage") == SOURCE


def supports(solution, arch: Arch) -> str | None:
    return writer.supports(solution, arch)


def split_metadata(asm: str, name: str) -> tuple[str, dict]:
    """clang's assembly without its ``.amdgpu_metadata`` block, and the metadata of kernel ``name``."""
    found = _METADATA.search(asm)
    if found is None:
        raise ToolchainError(f"the HIP compiler wrote no .amdgpu_metadata for {name}")
    doc = yaml.load(found.group(1).strip().removesuffix("...").strip().removeprefix("---"), Loader=yaml.CSafeLoader
                    if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader)
    kernels = [k for k in doc.get("amdhsa.kernels", []) if k.get(".name") == name]
    if len(kernels) != 1:
        raise ToolchainError(f"the HIP compiler's metadata has {len(kernels)} kernels named {name}")
    return asm[:found.start()] + asm[found.end():], kernels[0]


def assembly(solution, arch: Arch, name: str) -> str:
    """The AMDGPU assembly clang writes for the source kernel ``name`` of ``solution`` (metadata included)."""
    reason = supports(solution, arch)
    if reason:
        raise UserError(f"solution {name} cannot be built for {arch.name}: {reason}")
    return toolchain.compile_hip(writer.write_source(solution, name), arch, f"{name}.hip")


def helper_parts(solution, arch: Arch) -> list[KernelPart]:
    """GlobalSplitU's helper kernels the contract launches beside this kernel (none without GlobalSplitU): the
    assembly ones, every variant Tensile's generator builds (writer/build.py ``helper_writers``)."""
    from tensile_asm.gemm.contract import GemmKernelContract
    from tensile_asm.writer.build import geometry, helper_writers
    g = geometry(solution)
    if g.global_split_u == 1:
        return []
    out = []
    for _, write in helper_writers(g, GemmKernelContract.from_solution(solution, "source kernel"), arch):
        helper = write()
        out.append(KernelPart(helper.name, toolchain.assemble(helper.body_text(), arch, f"{helper.name}.s"),
                              helper.metadata()))
    return out


def compile_kernel(solution, arch: Arch, name: str, timing: dict | None = None) -> CacheEntry:
    """The source kernel's part (language Source) and its helper kernel's; a solution the source writer does
    not support gives an entry with the reason; a compiler failure raises (ToolchainError)."""
    t0 = time.perf_counter()
    reason = supports(solution, arch)
    if reason:
        return CacheEntry([], f"solution {name} cannot be built for {arch.name}: {reason}")
    text = writer.write_source(solution, name)
    t1 = time.perf_counter()
    body, metadata = split_metadata(toolchain.compile_hip(text, arch, f"{name}.hip"), name)
    obj = toolchain.assemble(body, arch, f"{name}.s", cache=False)
    parts = [KernelPart(name, obj, metadata, SOURCE)] + helper_parts(solution, arch)
    if timing is not None:
        timing["generate"] = timing.get("generate", 0.0) + t1 - t0
        timing["compile"] = timing.get("compile", 0.0) + time.perf_counter() - t1
    return CacheEntry(parts, None)


def version() -> str:
    """The HIP compiler's identity (the writer's source and templates are in ``writer.build.version``)."""
    try:
        return f"hip:{toolchain.hip_identity()}"
    except ToolchainError as e:
        return f"hip:none ({e})"


def link_source_kernel(solution, arch: Arch, name: str, out_path) -> tuple[str, str, dict]:
    """Compile the source kernel ``name`` and link it with its helper kernel into one code object at
    ``out_path`` (``emit``, ``verify``, ``inspect``); returns (HIP text, clang's assembly, its metadata)."""
    from pathlib import Path

    from tensile_asm.writer.build import link_parts
    reason = supports(solution, arch)
    if reason:
        raise UserError(f"solution {name} cannot be built for {arch.name}: {reason}")
    text = writer.write_source(solution, name)
    asm = toolchain.compile_hip(text, arch, f"{name}.hip")
    body, metadata = split_metadata(asm, name)
    parts = [KernelPart(name, toolchain.assemble(body, arch, f"{name}.s"), metadata, SOURCE)]
    link_parts(parts + helper_parts(solution, arch), arch, Path(out_path))
    return text, asm, metadata


def resources_text(name: str, metadata: dict) -> str:
    """What ``emit`` prints for a source kernel: from the compiler's metadata."""
    return (f"kernel     {name} (KernelLanguage: Source, compiled by clang)\n"
            f"registers  {metadata.get('.vgpr_count')} VGPR, {metadata.get('.agpr_count', 0)} AGPR, "
            f"{metadata.get('.sgpr_count')} SGPR\n"
            f"LDS        {metadata.get('.group_segment_fixed_size')} bytes\n"
            f"spills     {metadata.get('.vgpr_spill_count', 0)} VGPR, {metadata.get('.sgpr_spill_count', 0)} SGPR")
