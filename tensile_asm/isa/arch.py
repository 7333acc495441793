"""An immutable description of one GPU architecture, loaded from ``isa/<gfx>.yaml``.

The architecture is always passed explicitly; nothing in the code generator reads a "current" ISA.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import yaml

from tensile_asm.errors import UserError

ISA_DIR = Path(__file__).resolve().parents[2] / "isa"


def known_architectures() -> list[str]:
    return sorted(p.stem for p in ISA_DIR.glob("gfx*.yaml"))


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class Arch:
    name: str
    family: str
    target_id: str
    wavefront_size: int
    simds_per_cu: int
    max_waves_per_simd: int
    lds_bytes_per_cu: int
    max_lds_bytes_per_workgroup: int
    vgpr: Mapping[str, Any]
    sgpr: Mapping[str, Any]
    memory: Mapping[str, Any]
    instructions: Mapping[str, Any]
    mfma_naming: str
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def float8_ocp(self) -> bool:
        """fp8/bf8 are the OCP formats (E4M3FN, E5M2: gfx950), not the FNUZ ones (gfx942): ``float8`` of the yaml."""
        return self.extra.get("float8") == "ocp"

    @property
    def unified_vgpr_file(self) -> bool:
        return bool(self.vgpr.get("unified"))

    def cache_modifier(self, name: str) -> str:
        """The spelling of a cache-policy bit (glc, slc, nt) on this architecture."""
        return self.memory["cache_modifiers"][name]

    def granulated_vgprs(self, arch_vgprs: int, agprs: int = 0) -> int:
        """Registers per lane the hardware allocates for a wave with these counts."""
        g = self.vgpr["granule"]
        if self.unified_vgpr_file and agprs:
            total = self.accum_offset(arch_vgprs) + agprs
        else:
            total = max(arch_vgprs, agprs)
        return max(g, -(-total // g) * g)

    def accum_offset(self, arch_vgprs: int) -> int:
        g = self.vgpr["accum_offset_granule"]
        return max(g, -(-arch_vgprs // g) * g)

    def granulated_sgprs(self, sgprs: int) -> int:
        g = self.sgpr["granule"]
        # VCC (2) is always reserved above the user SGPRs.
        return -(-(sgprs + 2) // g) * g

    def occupancy(self, vgprs: int, agprs: int, sgprs: int, lds_bytes: int, workgroup_size: int) -> dict:
        """Waves per SIMD the resources allow, and which resource limits it."""
        limits = {"waves": self.max_waves_per_simd}
        limits["vgpr"] = self.vgpr["file_per_simd"] // self.granulated_vgprs(vgprs, agprs)
        limits["sgpr"] = min(self.sgpr["max_waves_by_sgpr"], self.sgpr["file_per_simd"] // self.granulated_sgprs(sgprs))
        if lds_bytes > 0:
            waves_per_wg = -(-workgroup_size // self.wavefront_size)
            wgs_per_cu = self.lds_bytes_per_cu // lds_bytes
            limits["lds"] = (wgs_per_cu * waves_per_wg) // self.simds_per_cu
        waves = min(limits.values())
        limiter = min(limits, key=lambda k: limits[k])
        return {"waves_per_simd": waves, "limited_by": limiter, "limits": limits}


@lru_cache(maxsize=None)
def load_arch(name: str) -> Arch:
    """Load ``isa/<name>.yaml``; an unknown name is a user error naming the known ones."""
    path = ISA_DIR / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(known_architectures())
        raise UserError(f"unknown architecture '{name}': no {path.name} in {ISA_DIR}; use one of {known}")
    data = yaml.safe_load(path.read_text())
    fields = {f for f in Arch.__dataclass_fields__ if f != "extra"}
    missing = fields - set(data)
    if missing:
        raise UserError(f"{path}: missing field(s) {', '.join(sorted(missing))}; every isa/*.yaml needs them")
    extra = {k: v for k, v in data.items() if k not in fields}
    return Arch(**{k: _freeze(data[k]) for k in fields}, extra=_freeze(extra))
