"""The helper kernels GlobalSplitU needs beside the GEMM, exactly as Tensile 4.44's host launches them
(Tensile/Source/lib/source/ContractionSolution.cpp: ``generateBetaOnlyCall``/``betaOnlyKernelName``,
``generateOutputConversionCall``/``outputConversionKernelName``), and the variants Tensile's generator builds
for a solution (SolutionStructs.py ``initBetaOnlyKernelObjects``/``initConversionKernelObjects``,
KernelWriterConversion.getKernelName), so that a library of ours holds every kernel rocBLAS asks for. One place
for the contract: names, argument layouts and values, block and grid; the writer builds its SGPR layout from
the same lists and every launcher of ours launches ``GemmKernelContract.launches``, which uses these.

- SingleBuffer (no global accumulation): the beta-only kernel ``C<cNames>_<D>[_GB]`` (``Cijk_S``) runs first,
  D = beta*C (0 when beta is 0, so NaNs in C never reach D); the GEMM's slices then add alpha*A*B into D.
- _GlobalAccumulation SingleBuffer (globalAccumulation 1: C/D other than the compute type, BBS, HHS): the
  beta-only kernel ``C<cNames>_<D>[_GB]_GA`` sets a packed compute-type workspace to beta*C, the GEMM's slices
  add alpha*A*B into it, and the conversion kernel ``C<cNames>_<D>[_GB]_PostGSU[_VW2]`` (gsu 1, alpha 1,
  beta 0) converts it into D.
- MultipleBuffer (globalAccumulation 2): the GEMM writes each slice's unscaled partial tile to the workspace
  (slice s: a packed M x N x batch tile at element s*M*N*batch); the conversion kernel
  ``C<cNames>_<D>[_GB]_PostGSU<mod>[_mod<unit>][_VW2][_R<r>]`` computes D = alpha * sum + beta*C.

Both are elementwise over a 1-D grid of 256-thread work-groups: beta-only ceil(M*N*batch / 256) work-groups,
one element each thread; conversion ceil(M*N*batch * R / (256 * VW)), VW elements per R threads.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.gemm.arguments import SCALAR_KIND, Argument, lay_out

THREADS = 256
BLOCK = (THREADS, 1, 1)
SINGLE_BUFFER, MULTIPLE_BUFFER = 1, 2       # sizeMapping.globalAccumulation

# alpha/beta as the helpers take them: Tensile's AlphaType/BetaType appended once (a half is 2 bytes here,
# not the GEMM's doubled slot)
_HELPER_SCALAR = {**SCALAR_KIND, "H": (2, "h16")}


def _c_names(batched: bool) -> str:
    return "Cijk" if batched else "Cij"


def beta_only_name(batched: bool, dest_char: str = "S", pointer_array: bool = False, workspace: bool = False) -> str:
    """``betaOnlyKernelName``: ``Cijk_S``, ``Cijk_S_GB`` for pointer-array batches, ``Cijk_B_GA`` for the one setting
    a compute-type workspace (``workspace``: globalAccumulation), ``Cijk_B_GB_GA``."""
    return f"{_c_names(batched)}_{dest_char}{'_GB' if pointer_array else ''}{'_GA' if workspace else ''}"


@dataclass(frozen=True)
class Conversion:
    """One conversion (post-GSU) kernel variant: ``gsu`` the GlobalSplitU it is launched with (1 for
    globalAccumulation 1), ``vw`` elements per thread, ``reduction`` threads per element group, ``unroll``
    Tensile's GSUUnrollUnit (only in the name here: our kernel loops over the ``gsu`` argument)."""

    gsu: int
    vw: int = 1
    reduction: int = 1
    unroll: int = 1

    def name(self, batched: bool, dest: str, pointer_array: bool = False) -> str:
        """``outputConversionKernelName`` (= KernelWriterConversion.getKernelName)."""
        name = f"{_c_names(batched)}_{dest}{'_GB' if pointer_array else ''}_PostGSU"
        if self.unroll > 1:
            mod = self.gsu % self.unroll or self.unroll
            name += f"{mod}{f'_mod{self.unroll}' if self.gsu > self.unroll else ''}"
        if self.vw >= 2:
            name += f"_VW{self.vw}"
        if self.reduction >= 2:
            name += f"_R{self.reduction}"
        return name


@dataclass(frozen=True)
class Helper:
    """One helper kernel beside a GEMM: the beta-only kernel (``conversion`` None; ``workspace``: the _GA one, into
    the compute-type workspace) or a conversion variant. ``GemmKernelContract.helper_kernels`` lists them; the
    assembly writer, the HIP source writer and the library all take the list from there."""

    name: str
    conversion: Conversion | None = None
    workspace: bool = False


def _wide_compute(compute: str) -> bool:
    """Tensile's supportedTypeFor{VW,Reduction,Unroll}Opt: compute (alpha) type Float or Double."""
    return compute in ("S", "D")


def conversion_choice(compute: str, accumulation: int, gsu: int, m: int, n: int, batch: int,
                      cu_count: int) -> Conversion:
    """The variant Tensile's host launches (``generateOutputConversionCall``) for an M x N x batch D on a device of
    ``cu_count`` compute units."""
    if accumulation == SINGLE_BUFFER:
        gsu = 1
    wide = _wide_compute(compute)
    total = m * n * batch
    vw = 2 if wide and total > cu_count * THREADS * 2 and m % 2 == 0 else 1
    max_reduction = min(4, gsu // 32)
    reduction = 1
    if wide and gsu & (gsu - 1) == 0 and max_reduction > 1:
        reduction = max_reduction
        while reduction > 1:
            if gsu % reduction == 0 and total * reduction // vw <= cu_count * THREADS:
                break
            reduction //= 2
        if reduction == 2 and compute == "S":
            reduction = 1
    unroll = 1 if not wide or accumulation == SINGLE_BUFFER else 16 * reduction
    return Conversion(gsu, vw, reduction, unroll)


def conversion_variants(compute: str, accumulation: int, gsu: int) -> list[Conversion]:
    """Every variant Tensile's generator builds for a solution (``initConversionKernelObjects``)."""
    wide = _wide_compute(compute)
    multiple = accumulation == MULTIPLE_BUFFER
    max_reduction = min(max(1, gsu // 32), 4) if wide and gsu & (gsu - 1) == 0 and multiple else 1
    kernel_gsu = gsu if multiple else 1
    out = []
    for vw in (1, 2) if wide else (1,):
        reduction = 1
        while reduction <= max_reduction:
            if not (reduction == 2 and compute == "S"):
                out.append(Conversion(kernel_gsu, vw, reduction, 16 * reduction if wide and multiple else 1))
            reduction *= 2
    return out


def _offsets(pointer_array: bool) -> list:
    """Pointer-array launches (``_GB``) pass offsetD/offsetC (u64, elements) after the addresses."""
    return [("OffsetD", 8, "u64"), ("OffsetC", 8, "u64")] if pointer_array else []


def _strides(letter: str, batched: bool) -> list:
    """D's (C's, the workspace's) strides past the first, one per index of D: ij, or ijk when batched."""
    return [(f"Strides{letter}1", 4, "u32")] + ([(f"Strides{letter}2", 4, "u32")] if batched else [])


def _sizes(batched: bool) -> list:
    return [("SizesFree0", 4, "u32"), ("SizesFree1", 4, "u32")] + ([("SizesFree2", 4, "u32")] if batched else [])


def beta_only_layout(compute: str = "S", pointer_array: bool = False, batched: bool = True) -> list[Argument]:
    """``generateBetaOnlyCall``'s arguments: D (the workspace for _GA), C (or their pointer arrays), [offsetD,
    offsetC], strideD1/2 (strideW for _GA), strideC1/2, the three sizes, beta (the compute type)."""
    size, kind = _HELPER_SCALAR[compute]
    return lay_out([("AddressD", 8, "u64"), ("AddressC", 8, "u64"), *_offsets(pointer_array),
                    *_strides("D", batched), *_strides("C", batched), *_sizes(batched), ("Beta", size, kind)])


def conversion_layout(compute: str, pointer_array: bool = False, batched: bool = True) -> list[Argument]:
    """``generateOutputConversionCall``'s arguments: D, WS, C (D and C as pointer arrays for _GB), [offsetD,
    offsetC], alpha, beta (compute type), strideD1/2, strideW1/2, strideC1/2, the three sizes, gsu."""
    size, kind = _HELPER_SCALAR[compute]
    return lay_out([("AddressD", 8, "u64"), ("AddressWS", 8, "u64"), ("AddressC", 8, "u64"),
                    *_offsets(pointer_array), ("Alpha", size, kind), ("Beta", size, kind), *_strides("D", batched),
                    *_strides("WS", batched), *_strides("C", batched), *_sizes(batched), ("GSU", 4, "u32")])


def grid(m: int, n: int, batch: int, vw: int = 1, reduction: int = 1) -> tuple[int, int, int]:
    """Work-groups of a helper over an M x N x batch D (``numWorkGroups``)."""
    return (-(-(m * n * batch * reduction) // (THREADS * vw)), 1, 1)


@dataclass(frozen=True)
class Workspace:
    """MultipleBuffer's workspace (our ABI with the GEMM kernel, which receives it as its D): slice s
    holds a packed M x N x batch tile of the accumulator type starting at element s * M * N * batch."""

    slices: int
    m: int
    n: int
    batch: int
    element_bytes: int      # the accumulator: 4 (fp32) or 8 (fp64)

    @property
    def elements(self) -> int:
        return self.slices * self.m * self.n * self.batch

    @property
    def bytes(self) -> int:
        return self.elements * self.element_bytes

    @property
    def ld(self) -> int:
        """The GEMM's StridesD0 when it writes here."""
        return self.m

    @property
    def batch_stride(self) -> int:
        """The GEMM's StridesD1 when it writes here."""
        return self.m * self.n
