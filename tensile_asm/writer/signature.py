"""The kernel's header, kernel descriptor (``.amdhsa_kernel``) and ``.amdgpu_metadata``, computed
from the register allocation and the argument layout. Code object v5 is pinned here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import yaml

from tensile_asm.isa.arch import Arch
from tensile_asm.gemm.arguments import Argument, kernarg_size

CODE_OBJECT_VERSION = 5
METADATA_VERSION = {4: [1, 1], 5: [1, 2]}


@dataclass(frozen=True)
class Resources:
    vgprs: int             # ArchVGPRs used (next free)
    agprs: int
    sgprs: int             # user SGPRs used (next free), VCC excluded
    lds_bytes: int
    workgroup_size: int
    workgroup_id_z: bool
    preload_dwords: int = 0  # kernarg dwords preloaded into the user SGPRs after the kernarg pointer


def header(arch: Arch) -> str:
    return (f'.amdgcn_target "{arch.target_id}"\n'
            f".amdhsa_code_object_version {CODE_OBJECT_VERSION}\n")


def function_open(name: str) -> str:
    return f".text\n.protected {name}\n.globl {name}\n.p2align 8\n.type {name},@function\n{name}:\n"


def function_close(name: str) -> str:
    return f".L{name}_end:\n.size {name}, .L{name}_end-{name}\n"


def descriptor(arch: Arch, name: str, res: Resources, layout: list[Argument]) -> str:
    lines = [".rodata", ".p2align 6", f".amdhsa_kernel {name}",
             "  .amdhsa_user_sgpr_kernarg_segment_ptr 1",
             *([f"  .amdhsa_user_sgpr_kernarg_preload_length {res.preload_dwords}",
                "  .amdhsa_user_sgpr_kernarg_preload_offset 0"] if res.preload_dwords else []),
             f"  .amdhsa_kernarg_size {kernarg_size(layout)}",
             f"  .amdhsa_group_segment_fixed_size {res.lds_bytes}",
             "  .amdhsa_private_segment_fixed_size 0"]
    if arch.unified_vgpr_file:
        accum = arch.accum_offset(res.vgprs)
        lines += [f"  .amdhsa_next_free_vgpr {accum + res.agprs if res.agprs else max(res.vgprs, 1)}",
                  f"  .amdhsa_accum_offset {accum}"]
    else:   # a separate AGPR file (gfx908): the wave gets as many of each as the larger count
        lines.append(f"  .amdhsa_next_free_vgpr {max(res.vgprs, res.agprs, 1)}")
    lines += [f"  .amdhsa_next_free_sgpr {max(res.sgprs, 1)}",
              "  .amdhsa_system_sgpr_workgroup_id_x 1",
              "  .amdhsa_system_sgpr_workgroup_id_y 1",
              f"  .amdhsa_system_sgpr_workgroup_id_z {int(res.workgroup_id_z)}",
              "  .amdhsa_system_vgpr_workitem_id 0",
              "  .amdhsa_float_denorm_mode_32 3",
              "  .amdhsa_float_denorm_mode_16_64 3",
              ".end_amdhsa_kernel"]
    return "\n".join(lines) + "\n"


def _vgpr_count(arch: Arch, res: Resources) -> int:
    """Registers per lane of the VGPR file(s): arch VGPRs then AGPRs (unified file), else the larger count."""
    if not res.agprs:
        return res.vgprs
    return arch.accum_offset(res.vgprs) + res.agprs if arch.unified_vgpr_file else max(res.vgprs, res.agprs)


def kernel_metadata(arch: Arch, name: str, res: Resources, layout: list[Argument]) -> dict:
    return {
        ".name": name,
        ".symbol": f"{name}.kd",
        ".language": "OpenCL C",
        ".language_version": [2, 0],
        ".args": [{".name": a.name, ".size": a.size, ".offset": a.offset, ".value_kind": "by_value"} for a in layout],
        ".group_segment_fixed_size": res.lds_bytes,
        ".kernarg_segment_align": 8,
        ".kernarg_segment_size": kernarg_size(layout),
        ".max_flat_workgroup_size": res.workgroup_size,
        ".private_segment_fixed_size": 0,
        ".sgpr_count": arch.granulated_sgprs(res.sgprs),
        ".sgpr_spill_count": 0,
        ".vgpr_count": _vgpr_count(arch, res),
        ".agpr_count": res.agprs,
        ".vgpr_spill_count": 0,
        ".wavefront_size": arch.wavefront_size,
    }


def metadata_block(arch: Arch, kernels: list[dict], compact: bool = False) -> str:
    """The ``.amdgpu_metadata`` directive. ``compact``: the document as one line of JSON (JSON is YAML; the
    assembler encodes the same msgpack note, so the object is byte-identical) -- for linking many kernels,
    where PyYAML's block dump took about 5 ms per kernel."""
    doc = {"amdhsa.version": METADATA_VERSION[CODE_OBJECT_VERSION],
           "amdhsa.target": arch.target_id,
           "amdhsa.kernels": kernels}
    if compact:
        return f".amdgpu_metadata\n---\n{json.dumps(doc, separators=(',', ':'))}\n...\n.end_amdgpu_metadata\n"
    body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None)
    return f".amdgpu_metadata\n---\n{body}...\n.end_amdgpu_metadata\n"
