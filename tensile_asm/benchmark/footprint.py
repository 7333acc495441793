"""How much host memory verifying one size takes, checked before anything is allocated.

The estimate adds what ``verify_sizes`` holds for one size: the A, B, C, D buffers (padding included);
the float64 reference (the random draws that fill A, B, C, the float64 copies of A, B, C, the product,
its error scale and the comparison's temporaries); the MultipleBuffer workspace; and the emulator's
copies (the runtime's copy of every buffer, the emulator's device memory, and in strict mode the race
tracker's owner and reader per 4-byte cell, or per byte for 16-bit data). It errs on the high side:
a size it refuses would not fit, or only just.
"""

from __future__ import annotations

from pathlib import Path

from tensile_asm.benchmark.reference import GemmInstance
from tensile_asm.errors import UserError
from tensile_asm.gemm import GemmKernelContract

MEMINFO = Path("/proc/meminfo")


def footprint(contract: GemmKernelContract, inst: GemmInstance, strict: bool = True) -> dict[str, int]:
    """Bytes by what holds them, for ``inst`` (an instance whose arrays need not exist)."""
    m, n, k, b = inst.m, inst.n, inst.k, inst.batch
    out = {t: inst.elements(t) * inst.element_bytes(t) for t in "ABCD"}
    draws = 3 * 8 * max(inst.elements(t) for t in "ABC")
    compare = 8 * (2 * (m * k + k * n) * b + 8 * m * n * b) + inst.elements("D")
    out["float64 reference"] = max(draws, compare)
    ws = contract.workspace(m, n, b)
    out["workspace"] = ws.bytes if ws is not None else 0
    buffers = sum(out[t] for t in ("A", "B", "C", "D", "workspace"))
    per_byte = any(inst.element_bytes(t) < 4 for t in "ABCD")
    races = 2 * 4 * buffers if per_byte else 2 * buffers
    out["the emulator's copies"] = 2 * buffers + (races if strict else 0)
    return out


def available_bytes(meminfo: Path = MEMINFO) -> int | None:
    """MemAvailable of /proc/meminfo, or None where there is none to read."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def human(nbytes: int) -> str:
    value = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{nbytes} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def check_fits(contract: GemmKernelContract, size_text: str, inst: GemmInstance, strict: bool = True,
               available: int | None = None) -> None:
    """A UserError, in one sentence, when verifying ``inst`` needs more than the available host memory."""
    available = available_bytes() if available is None else available
    if available is None:
        return
    parts = footprint(contract, inst, strict)
    total = sum(parts.values())
    if total <= available:
        return
    items = ", ".join(f"{what} {human(v)}" for what, v in parts.items() if v)
    raise UserError(f"size {size_text} needs about {human(total)} of host memory to verify ({items}) but "
                    f"{human(available)} is available (MemAvailable in {MEMINFO}); verify smaller sizes")
