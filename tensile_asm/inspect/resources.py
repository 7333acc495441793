"""A kernel's resources as the code object declares them, the registers its code names, and the
occupancy the architecture grants.

Declared counts come from the metadata (``.vgpr_count``, ``.agpr_count``, ``.sgpr_count``,
``.group_segment_fixed_size``, ``.max_flat_workgroup_size`` / ``.reqd_workgroup_size``) and, where the
metadata lacks one, from the kernel descriptor. On a unified register file (gfx90a+) ``.vgpr_count``
covers both kinds, the AGPRs starting at the accumulator offset; ``vgpr`` here means the
architectural VGPRs (the total less the AGPRs). ``.sgpr_count`` includes VCC (and any other reserved
SGPRs), as LLVM reports it. Tensile's own gfx90a kernels (hand-written metadata) declare only the
architectural VGPRs in ``.vgpr_count`` and no ``.agpr_count``; their AGPRs are then the registers the
descriptor grants past ``accum_offset``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.codeobject import KernelObject
from tensile_asm.isa.arch import Arch
from tensile_asm.isa.registers import Reg

VCC_SGPRS = 2      # Arch.granulated_sgprs adds VCC back to the count it is given


@dataclass
class Resources:
    vgpr: int
    agpr: int
    sgpr: int                 # as declared (VCC included)
    lds_bytes: int
    workgroup_size: int
    used_vgpr: int            # next free register of each kind named by the code
    used_agpr: int
    used_sgpr: int
    occupancy: dict           # Arch.occupancy's answer

    def as_dict(self) -> dict:
        return {"vgpr": self.vgpr, "agpr": self.agpr, "sgpr": self.sgpr, "lds_bytes": self.lds_bytes,
                "workgroup_size": self.workgroup_size,
                "used": {"vgpr": self.used_vgpr, "agpr": self.used_agpr, "sgpr": self.used_sgpr},
                "occupancy": self.occupancy}


def registers_named(instructions: list) -> dict:
    """Next free register of each kind ('v', 'a', 's') the instructions name."""
    top = {"v": 0, "a": 0, "s": 0}
    for ins in instructions:
        for op in ins.operands:
            if isinstance(op, Reg) and op.kind in top:
                top[op.kind] = max(top[op.kind], op.index + op.count)
    return top


def workgroup_size(md: dict) -> int:
    reqd = md.get(".reqd_workgroup_size")
    if reqd:
        size = 1
        for d in reqd:
            size *= int(d)
        return size
    return int(md.get(".max_flat_workgroup_size", 1024))


def kernel_resources(ko: KernelObject, arch: Arch, instructions: list) -> Resources:
    md, kd = ko.metadata, ko.descriptor
    used = registers_named(instructions)
    total = int(md[".vgpr_count"]) if ".vgpr_count" in md else kd.vgprs(arch.vgpr["granule"])
    if ".agpr_count" in md:
        agpr = int(md[".agpr_count"])
        vgpr = total - agpr if arch.unified_vgpr_file and agpr else total
    elif arch.unified_vgpr_file and used["a"] and total <= kd.accum_offset:
        # Tensile's hand-written metadata: .vgpr_count counts the arch VGPRs only and there is no
        # .agpr_count; the AGPRs are the registers the descriptor grants past accum_offset
        vgpr, agpr = total, max(0, kd.vgprs(arch.vgpr["granule"]) - kd.accum_offset)
    elif arch.unified_vgpr_file:
        agpr = max(0, total - kd.accum_offset)
        vgpr = total - agpr if agpr else total
    else:
        vgpr, agpr = total, 0
    sgpr = int(md[".sgpr_count"]) if ".sgpr_count" in md else kd.sgprs()
    lds = int(md.get(".group_segment_fixed_size", kd.group_segment_fixed_size))
    wg = workgroup_size(md)
    occ = arch.occupancy(vgpr, agpr, max(sgpr - VCC_SGPRS, used["s"]), lds, wg)
    return Resources(vgpr, agpr, sgpr, lds, wg, used["v"], used["a"], used["s"], occ)
