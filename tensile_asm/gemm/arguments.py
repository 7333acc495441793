"""Kernel arguments in Tensile's order, shared by the writer (SGPR layout) and every launcher (kernarg buffer).

The order and sizes follow Tensile's KernelWriterAssembly (`numSgprToLoad`): Tensor2dSizeA/B,
AddressD/C/A/B, [OffsetD/C/A/B], Alpha, [Beta], StridesD/C/A/B, SizesFree, SizesSum, [OrigStaggerUIter],
NumWorkGroups0/1, [NumFullBlocks, WgmRemainder1, MagicNumberWgmRemainder1]. Every argument is
declared ``by_value`` in the metadata, as Tensile does; the order/size contract is the ABI.

Pointer-array ("general") batched GEMM (ProblemType StridedBatched false, Tensile's ``_GB`` logic):
AddressD/C/A/B are the addresses of arrays of per-batch pointers (8 bytes each; the kernel of batch b
uses the pointer at Address + 8*b), and OffsetD/C/A/B (u64, in ELEMENTS of that matrix's type) follow
AddressB; the kernel adds Offset * bytes-per-element to every batch's pointer.

UseInitialStridesAB / UseInitialStridesCD (Tensile's ``I``/``Ic`` problem types, e.g. rocBLAS's SBIc/SBIIc): the
stride of each tensor's first index (A's and B's for AB, C's and D's for CD) is an argument too, placed first
among that tensor's strides as Tensile's Signature/KernelWriterAssembly (numSgprStrides*) do: here
``InitialStride<X>`` then ``Strides<X>0`` (the leading dimension) and ``Strides<X>1`` (the batch stride).
Without them the kernel takes the first stride as 1. The batch strides
(Strides?1) stay in the layout as Tensile's host passes them, and the kernel ignores them. As in
Tensile 4.44, the kernel does not read C's pointer when beta is 0, nor A's and B's when alpha or K is 0
(ContractionSolution.cpp appends batchD/C/A/B then offsetD/C/A/B; KernelWriterAssembly
``loadBatchedAddress``).

PreloadKernelArguments 1 (gfx940+, Tensile 4.44's ``preloadKernargs``): the arguments A and B's loads need first
come first, in the order ContractionSolution.cpp appends them then -- Tensor2dSizeA/B, AddressA/B, Alpha,
StridesA*, StridesB*, SizesSum0 (``PRELOADED``: 56 bytes batched, 48 not) -- and the hardware puts their
dwords in the user SGPRs after the kernarg pointer (``preload_dwords``); the others follow in the usual order.

A ``KernelLanguage: Source`` kernel (the library's ``sizeMapping.sourceKernel``; ``source_kernel``) takes what
Tensile 4.44's host passes one (ContractionSolution.cpp generateSingleCall, ``isSourceKernel()``): no
Tensor2dSizeA/B, a half alpha/beta once (2 bytes, ``h16``: no alpha_2/beta_2), and nothing after
NumWorkGroups0/1 -- no PersistentKernel and no WorkGroupMapping arguments (the source kernel has its
WorkGroupMapping as a constant and computes the rest) -- nor the trailing ``pad`` of an assembly kernel.
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


# alpha/beta slot per compute type: its size (at least 4 bytes, as Tensile passes them) and kind. Complex
# scalars (C, Z) are Tensile's std::complex: real then imaginary part, aligned as one part (4 or 8 bytes)
SCALAR_KIND = {"S": (4, "f32"), "D": (8, "f64"), "H": (4, "f16"), "I": (4, "i32"), "C": (8, "c32"), "Z": (16, "c64")}


COMPLEX_KINDS = {"c32": "<ff", "c64": "<dd"}

# PreloadKernelArguments 1: the arguments that come first (in this order) and arrive in user SGPRs
PRELOADED = ("Tensor2dSizeA", "Tensor2dSizeB", "AddressA", "AddressB", "Alpha", "StridesA", "StridesB", "SizesSum0")


def argument_layout(batched: bool, use_beta: bool, compute_type: str = "S", stagger_u: bool = True,
                    workgroup_mapping: bool = True, persistent: bool = False,
                    persistent_along_batch: bool = False, pointer_array: bool = False,
                    initial_strides_ab: bool = False, initial_strides_cd: bool = False,
                    preload: bool = False, source_kernel: bool = False) -> list[Argument]:
    """The kernel arguments in Tensile's order. As Tensile's host (ContractionSolution.cpp) appends them,
    OrigStaggerUIter is there only for a kernel with StaggerU (``stagger_u``); MagicNumberProblemNumGroupTiles0,
    MagicShiftProblemNumGroupTiles0 and GridNumWorkGroups0 only for PersistentKernel (``persistent``), then
    NumWorkGroups2 and the magic pair for NumWorkGroups0*NumWorkGroups1 with PersistentKernelAlongBatch; and
    NumFullBlocks, WgmRemainder1, MagicNumberWgmRemainder1 only for |WorkGroupMapping| > 1
    (``workgroup_mapping``); OffsetD/C/A/B only for pointer-array batched GEMM (``pointer_array``, which
    needs ``batched``); InitialStrideA/B (``initial_strides_ab``) and InitialStrideD/C (``initial_strides_cd``)
    before each tensor's other strides. ``preload`` (PreloadKernelArguments 1): the ``PRELOADED`` arguments first,
    as Tensile's host passes them then; Tensile allows it only for strided batches, with beta and without
    initial strides of A/B. ``source_kernel``: the layout of a source kernel (the module's docstring), which
    takes none of the persistent, mapping or preloading arguments."""
    if source_kernel and (preload or persistent):
        raise ValueError("a source kernel takes no PersistentKernel or preloaded arguments "
                         "(Tensile's host passes them to assembly kernels only)")
    if preload and (pointer_array or not use_beta or initial_strides_ab):
        raise ValueError("kernel-argument preloading needs strided batches, beta and no initial strides of A/B")
    if pointer_array and not batched:
        raise ValueError("pointer-array (general) batched GEMM needs a batched problem type")
    strides = 2 if batched else 1          # NumIndicesC - 1 for C/D, len(A) - 1 for A/B
    free = 3 if batched else 2
    size, kind = (2, "h16") if source_kernel and compute_type == "H" else SCALAR_KIND[compute_type]
    spec: list[tuple[str, int, str]] = [] if source_kernel else [("Tensor2dSizeA", 8, "u64"),
                                                                  ("Tensor2dSizeB", 8, "u64")]
    spec += [
        ("AddressD", 8, "u64"), ("AddressC", 8, "u64"), ("AddressA", 8, "u64"), ("AddressB", 8, "u64"),
    ]
    if pointer_array:
        spec += [(f"Offset{t}", 8, "u64") for t in "DCAB"]
    spec.append(("Alpha", size, kind))
    if use_beta:
        spec.append(("Beta", size, kind))
    for t in "DCAB":
        if (initial_strides_cd if t in "CD" else initial_strides_ab):
            spec.append((f"InitialStride{t}", 4, "u32"))
        spec += [(f"Strides{t}{i}", 4, "u32") for i in range(strides)]
    spec += [(f"SizesFree{i}", 4, "u32") for i in range(free)]
    spec.append(("SizesSum0", 4, "u32"))
    if stagger_u:
        spec.append(("OrigStaggerUIter", 4, "u32"))
    spec += [("NumWorkGroups0", 4, "u32"), ("NumWorkGroups1", 4, "u32")]
    if persistent:
        spec += [("MagicNumberProblemNumGroupTiles0", 4, "u32"), ("MagicShiftProblemNumGroupTiles0", 4, "u32"),
                 ("GridNumWorkGroups0", 4, "u32")]
        if persistent_along_batch:
            spec += [("NumWorkGroups2", 4, "u32"), ("MagicNumProblemNumGroupTiles0By1", 4, "u32"),
                     ("MagicShiftProblemNumGroupTiles0By1", 4, "u32")]
    if workgroup_mapping and not source_kernel:
        spec += [("NumFullBlocks", 4, "u32"), ("WgmRemainder1", 4, "u32"), ("MagicNumberWgmRemainder1", 4, "u32")]
    if preload:
        rank = {name: i for i, name in enumerate(PRELOADED)}
        first = sorted((a for a in spec if _preloaded_name(a[0]) in rank), key=lambda a: rank[_preloaded_name(a[0])])
        spec = first + [a for a in spec if _preloaded_name(a[0]) not in rank]
    return lay_out(spec)


def _preloaded_name(name: str) -> str:
    return name.rstrip("0123456789") if name.startswith(("StridesA", "StridesB")) else name


def preload_dwords(layout: list[Argument]) -> int:
    """The dwords of a preloading kernel's layout that arrive in SGPRs: up to the end of SizesSum0, its last
    ``PRELOADED`` argument (Tensile's numPreloadSGPRs: 14 for a batched GEMM, 12 for one without batches)."""
    end = next(a.offset + a.size for a in layout if a.name == "SizesSum0")
    if any(_preloaded_name(a.name) not in PRELOADED for a in layout if a.offset < end):
        raise ValueError("the layout does not start with the preloaded arguments (argument_layout(preload=True))")
    return end // 4


def lay_out(spec: list[tuple[str, int, str]]) -> list[Argument]:
    """Offsets for (name, bytes, kind) in order, each argument aligned to its size (at most 8; a complex
    scalar to the size of one part, as C++'s alignof(std::complex<T>))."""
    out, offset = [], 0
    for name, size, kind in spec:
        align = min(size // 2 if kind in COMPLEX_KINDS else size, 8)
        offset = -(-offset // align) * align
        out.append(Argument(name, size, kind, offset))
        offset += size
    return out


def kernarg_size(layout: list[Argument]) -> int:
    end = layout[-1].offset + layout[-1].size
    return -(-end // 8) * 8


def argument_values(*, m: int, n: int, k: int, batch: int, ld: dict[str, int], batch_stride: dict[str, int],
                    tensor2d_size: dict[str, int], alpha: float, beta: float, macro_tile: tuple[int, int],
                    addresses: dict[str, int], workgroup_mapping: int = 1,
                    orig_stagger_u_iter: int = 0, offsets: dict[str, int] | None = None,
                    initial_stride: dict[str, int] | None = None) -> dict[str, int | float]:
    """Values of every argument for one launch; dicts are keyed by tensor letter (A, B, C, D).
    ``offsets``: OffsetD/C/A/B of a pointer-array launch (elements; a layout without them ignores them).
    ``initial_stride``: each tensor's first-index stride (1 where not given; a layout without InitialStride
    arguments ignores them)."""
    nwg0, nwg1 = -(-m // macro_tile[0]), -(-n // macro_tile[1])
    values: dict[str, int | float] = {
        "Tensor2dSizeA": tensor2d_size["A"], "Tensor2dSizeB": tensor2d_size["B"],
        "Alpha": alpha, "Beta": beta, "OrigStaggerUIter": orig_stagger_u_iter,
        "NumWorkGroups0": nwg0, "NumWorkGroups1": nwg1,
        **workgroup_mapping_values(nwg0, nwg1, workgroup_mapping),
    }
    for t in "DCAB":
        values[f"Address{t}"] = addresses[t]
        values[f"Strides{t}0"] = ld[t]
        values[f"Strides{t}1"] = batch_stride[t]
        values[f"Offset{t}"] = (offsets or {}).get(t, 0)
        values[f"InitialStride{t}"] = (initial_stride or {}).get(t, 1)
    for i, v in enumerate((m, n, batch)):
        values[f"SizesFree{i}"] = v
    values["SizesSum0"] = k
    return values


def magic_number_alg2(d: int) -> tuple[int, int]:
    """(magic, shift) for unsigned division by ``d`` as Tensile's host computes them
    (``ContractionSolution::magicNumberAlg2``, Hacker's Delight magicu): the kernel's quotient of x is
    ``(mulhi(x, magic) + x * abit) >> (shift & 0x7fffffff)`` with ``abit = shift >> 31`` (the "add"
    indicator in bit 31 of the shift). d = 0 gives (0, 0)."""
    if d == 0:
        return 0, 0
    m32 = 0xFFFFFFFF
    add = 0
    nc = (m32 - ((-d) % (1 << 32)) % d) & m32
    p = 31
    q1, r1 = 0x80000000 // nc, 0x80000000 - (0x80000000 // nc) * nc
    q2, r2 = 0x7FFFFFFF // d, 0x7FFFFFFF - (0x7FFFFFFF // d) * d
    while True:
        p += 1
        if r1 >= nc - r1:
            q1, r1 = (2 * q1 + 1) & m32, (2 * r1 - nc) & m32
        else:
            q1, r1 = (2 * q1) & m32, (2 * r1) & m32
        if r2 + 1 >= d - r2:
            if q2 >= 0x7FFFFFFF:
                add = 1
            q2, r2 = (2 * q2 + 1) & m32, (2 * r2 + 1 - d) & m32
        else:
            if q2 >= 0x80000000:
                add = 1
            q2, r2 = (2 * q2) & m32, (2 * r2 + 1) & m32
        delta = (d - 1 - r2) & m32
        if not (p < 64 and (q1 < delta or (q1 == delta and r1 == 0))):
            break
    return (q2 + 1) & m32, (p - 32) | (add << 31)


def persistent_values(nwg0: int, nwg1: int, batch: int, grid0: int, along_batch: bool) -> dict[str, int]:
    """PersistentKernel's arguments as Tensile's host passes them: the magic pair dividing a tile serial by
    NumWorkGroups0 (and, along the batch, by NumWorkGroups0*NumWorkGroups1) and the grid's work-groups."""
    magic, shift = magic_number_alg2(nwg0)
    out = {"MagicNumberProblemNumGroupTiles0": magic, "MagicShiftProblemNumGroupTiles0": shift,
           "GridNumWorkGroups0": grid0}
    if along_batch:
        magic, shift = magic_number_alg2(nwg0 * nwg1)
        out.update(NumWorkGroups2=batch, MagicNumProblemNumGroupTiles0By1=magic,
                   MagicShiftProblemNumGroupTiles0By1=shift)
    return out


def workgroup_mapping_values(nwg0: int, nwg1: int, wgm: int) -> dict[str, int]:
    """NumFullBlocks, WgmRemainder1 and MagicNumberWgmRemainder1, as Tensile's host computes them
    (ContractionSolution.cpp, Tensile 4.44): for W > 1 the remainder is NumWorkGroups1 % W, or W when that
    is 0, and its magic number ``smallMagicNumber(r) = 2^31 // r + 1``; the kernel takes the quotient as
    ``(x * magic) >> 31``, exact while x * r < 2^31 (x is below nwg0 * r here), and forms serials below
    nwg0 * W, which its constant divisions handle below 2^31. For W < -1 the host counts along dim 0
    (nwg0 / |W|, nwg0 % |W| or W as a u32) and Tensile 4.44's kernel reads none of them."""
    if wgm < -1:
        rem = nwg0 % -wgm or wgm
        return {"NumFullBlocks": nwg0 // -wgm, "WgmRemainder1": rem & 0xFFFFFFFF,
                "MagicNumberWgmRemainder1": (1 << 31) // (rem & 0xFFFFFFFF) + 1}
    if wgm <= 1:
        return {"NumFullBlocks": nwg1, "WgmRemainder1": 0, "MagicNumberWgmRemainder1": 0}
    rem = nwg1 % wgm or wgm
    if nwg0 * rem * rem >= 1 << 31 or nwg0 * wgm >= 1 << 31:
        raise ValueError(f"{nwg0} x {nwg1} work-groups are too many for WorkGroupMapping {wgm}")
    return {"NumFullBlocks": nwg1 // wgm, "WgmRemainder1": rem, "MagicNumberWgmRemainder1": (1 << 31) // rem + 1}


def stagger_u_iterations(k: int, depth_u: int, global_split_u: int, stagger_u: int, stride_shift: int) -> int:
    """OrigStaggerUIter as Tensile's host computes it (``ContractionSolution::staggerUIter``): the largest
    power-of-two stagger, at most StaggerU, that the unrolled iterations still cover, minus 1 (a mask)."""
    if stagger_u <= 0 or depth_u <= 0:
        return 0
    iters = k // depth_u // max(1, global_split_u)
    s = stagger_u
    while s > 1 and iters < s * (1 << stride_shift):
        s //= 2
    return s - 1 if s >= 1 else s


def pack_arguments(layout: list[Argument], values: dict[str, int | float]) -> bytes:
    buf = bytearray(kernarg_size(layout))
    for arg in layout:
        v = values[arg.name]
        if arg.kind == "f16":   # Tensile's host passes a half alpha/beta twice (alpha, alpha_2) in its slot
            struct.pack_into("<ee", buf, arg.offset, float(v), float(v))
            continue
        if arg.kind in COMPLEX_KINDS:   # (real, imaginary)
            z = complex(v)
            struct.pack_into(COMPLEX_KINDS[arg.kind], buf, arg.offset, z.real, z.imag)
            continue
        fmt = {"u64": "<Q", "u32": "<I", "i32": "<I", "f32": "<f", "f64": "<d", "h16": "<e"}[arg.kind]
        floating = arg.kind in ("f32", "f64", "h16")   # h16: a half passed once (the helper kernels' beta)
        struct.pack_into(fmt, buf, arg.offset, float(v) if floating else int(v) & ((1 << (8 * arg.size)) - 1))
    return bytes(buf)
