"""Kernel arguments in Tensile's order, shared by the writer (SGPR layout) and every launcher (kernarg buffer).

The order and sizes follow Tensile's KernelWriterAssembly (`numSgprToLoad`): Tensor2dSizeA/B,
AddressD/C/A/B, Alpha, [Beta], StridesD/C/A/B, SizesFree, SizesSum, OrigStaggerUIter,
NumWorkGroups0/1, NumFullBlocks, WgmRemainder1, MagicNumberWgmRemainder1. Every argument is
declared ``by_value`` in the metadata, as Tensile does; the order/size contract is the ABI.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class Argument:
    name: str
    size: int       # bytes
    kind: str       # 'u64' address/size, 'u32', 'f32'
    offset: int


# alpha/beta slot per compute type: its size (at least 4 bytes, as Tensile passes them) and kind
SCALAR_KIND = {"S": (4, "f32"), "D": (8, "f64"), "H": (4, "f16")}


def argument_layout(batched: bool, use_beta: bool, compute_type: str = "S") -> list[Argument]:
    strides = 2 if batched else 1          # NumIndicesC - 1 for C/D, len(A) - 1 for A/B
    free = 3 if batched else 2
    size, kind = SCALAR_KIND[compute_type]
    spec: list[tuple[str, int, str]] = [
        ("Tensor2dSizeA", 8, "u64"), ("Tensor2dSizeB", 8, "u64"),
        ("AddressD", 8, "u64"), ("AddressC", 8, "u64"), ("AddressA", 8, "u64"), ("AddressB", 8, "u64"),
        ("Alpha", size, kind),
    ]
    if use_beta:
        spec.append(("Beta", size, kind))
    for t in "DCAB":
        spec += [(f"Strides{t}{i}", 4, "u32") for i in range(strides)]
    spec += [(f"SizesFree{i}", 4, "u32") for i in range(free)]
    spec.append(("SizesSum0", 4, "u32"))
    spec += [("OrigStaggerUIter", 4, "u32"), ("NumWorkGroups0", 4, "u32"), ("NumWorkGroups1", 4, "u32"),
             ("NumFullBlocks", 4, "u32"), ("WgmRemainder1", 4, "u32"), ("MagicNumberWgmRemainder1", 4, "u32")]
    return lay_out(spec)


def lay_out(spec: list[tuple[str, int, str]]) -> list[Argument]:
    """Offsets for (name, bytes, kind) in order, each argument aligned to its size (at most 8)."""
    out, offset = [], 0
    for name, size, kind in spec:
        align = min(size, 8)
        offset = -(-offset // align) * align
        out.append(Argument(name, size, kind, offset))
        offset += size
    return out


def kernarg_size(layout: list[Argument]) -> int:
    end = layout[-1].offset + layout[-1].size
    return -(-end // 8) * 8


def argument_values(*, m: int, n: int, k: int, batch: int, ld: dict[str, int], batch_stride: dict[str, int],
                    tensor2d_size: dict[str, int], alpha: float, beta: float, macro_tile: tuple[int, int],
                    addresses: dict[str, int], workgroup_mapping: int = 1) -> dict[str, int | float]:
    """Values of every argument for one launch; dicts are keyed by tensor letter (A, B, C, D)."""
    nwg0, nwg1 = -(-m // macro_tile[0]), -(-n // macro_tile[1])
    values: dict[str, int | float] = {
        "Tensor2dSizeA": tensor2d_size["A"], "Tensor2dSizeB": tensor2d_size["B"],
        "Alpha": alpha, "Beta": beta, "OrigStaggerUIter": 0,
        "NumWorkGroups0": nwg0, "NumWorkGroups1": nwg1,
        **workgroup_mapping_values(nwg0, nwg1, workgroup_mapping),
    }
    for t in "DCAB":
        values[f"Address{t}"] = addresses[t]
        values[f"Strides{t}0"] = ld[t]
        values[f"Strides{t}1"] = batch_stride[t]
    for i, v in enumerate((m, n, batch)):
        values[f"SizesFree{i}"] = v
    values["SizesSum0"] = k
    return values


def workgroup_mapping_values(nwg0: int, nwg1: int, wgm: int) -> dict[str, int]:
    """NumFullBlocks, WgmRemainder1 and the magic number the kernel divides by WgmRemainder1 with.

    Our convention (we own both sides of this ABI): magic = floor(2^32 / r) + 1, so that
    mul_hi(x, magic) == x // r for every x with x * r < 2^32; x is at most nwg0 * r here.
    r = 1 has no 32-bit magic number (0 is passed); the kernel special-cases it.
    """
    if wgm <= 1:
        return {"NumFullBlocks": 0, "WgmRemainder1": 0, "MagicNumberWgmRemainder1": 0}
    rem = nwg1 % wgm
    magic = ((1 << 32) // rem + 1) if rem > 1 else 0
    if rem and nwg0 * rem * rem >= 1 << 32:
        raise ValueError(f"{nwg0} x {nwg1} work-groups are too many for WorkGroupMapping {wgm}")
    return {"NumFullBlocks": nwg1 // wgm, "WgmRemainder1": rem, "MagicNumberWgmRemainder1": magic}


def pack_arguments(layout: list[Argument], values: dict[str, int | float]) -> bytes:
    buf = bytearray(kernarg_size(layout))
    for arg in layout:
        v = values[arg.name]
        fmt = {"u64": "<Q", "u32": "<I", "f32": "<f", "f64": "<d", "f16": "<e"}[arg.kind]
        floating = arg.kind in ("f32", "f64", "f16")
        struct.pack_into(fmt, buf, arg.offset, float(v) if floating else int(v) & ((1 << (8 * arg.size)) - 1))
    return bytes(buf)
