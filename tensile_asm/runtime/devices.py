"""The devices table (``devices/devices.yaml``): CU count, clocks, bandwidth, caches and peaks of each
device the model knows, each number with its source. Read once; ``device(name)`` and ``for_arch(gfx)``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tensile_asm.errors import UserError

DEVICES_FILE = Path(__file__).resolve().parents[2] / "devices" / "devices.yaml"
_NUMBERS = ("cus", "clock_mhz", "memory_gbs", "l2_bytes", "l2_domains", "mall_bytes", "peak_tflops")


@dataclass(frozen=True)
class Device:
    name: str
    arch: str
    cus: int
    clock_mhz: float
    memory_gbs: float
    l2_bytes: int
    l2_domains: int
    mall_bytes: int
    peak_tflops: dict
    sources: dict           # field -> the source's text
    note: str = ""

    @property
    def clock_hz(self) -> float:
        return self.clock_mhz * 1e6

    def as_dict(self) -> dict:
        return {"name": self.name, "arch": self.arch, "cus": self.cus, "clock_mhz": self.clock_mhz,
                "memory_gbs": self.memory_gbs, "l2_bytes": self.l2_bytes, "l2_domains": self.l2_domains,
                "mall_bytes": self.mall_bytes, "peak_tflops": dict(self.peak_tflops), "note": self.note,
                "sources": dict(self.sources)}


@lru_cache(maxsize=None)
def devices() -> dict[str, Device]:
    from tensile_asm.library.fileio import load_yaml

    data = load_yaml(DEVICES_FILE)
    sources = data["sources"]
    out = {}
    for name, row in data["devices"].items():
        missing = [k for k in _NUMBERS if k not in row]
        if missing:
            raise UserError(f"{DEVICES_FILE}: device {name} lacks {', '.join(missing)}; give each a value and source")
        values, cited = {}, {}
        for k in _NUMBERS:
            cell = row[k]
            if not isinstance(cell, dict) or cell.get("source") not in sources:
                raise UserError(f"{DEVICES_FILE}: device {name} field {k} needs {{value: ..., source: KEY}} with "
                                f"KEY one of the file's sources")
            values[k], cited[k] = cell["value"], sources[cell["source"]]
        out[name] = Device(name=name, arch=str(row["arch"]), sources=cited, note=str(row.get("note", "")), **values)
    return out


def device(name: str) -> Device:
    from tensile_asm.problem import nearest

    table = devices()
    if name not in table:
        raise UserError(f"unknown device {name!r}{nearest(name, table)}; the devices are {', '.join(table)} "
                        f"(tensile-asm predict --list-devices)")
    return table[name]


def for_arch(arch: str) -> Device:
    """The device assumed for an architecture when none is named."""
    from tensile_asm.library.fileio import load_yaml

    default = load_yaml(DEVICES_FILE).get("default_for_arch", {})
    if arch not in default:
        raise UserError(f"no device of architecture {arch} in {DEVICES_FILE.name}; name one with --device "
                        f"({', '.join(devices())})")
    return device(default[arch])
