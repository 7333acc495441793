"""The helper kernels GlobalSplitU needs beside the GEMM, as a launcher sees them: names, argument
layouts (our ABI; the writer builds its SGPR layout from the same lists), block and grid, and the
MultipleBuffer workspace.

- SingleBuffer: the beta-only kernel ``C<indices>_<D>`` (Tensile's name, e.g. ``Cijk_S``) runs first,
  D = beta*C (0 when beta is 0, so NaNs in C never reach D); the GEMM's slices then add alpha*A*B into D
  with atomics.
- SingleBuffer with C/D other than the compute type (Tensile's _GlobalAccumulation SingleBuffer: BBS, HHS):
  the beta-only kernel ``C<indices>_<D>_GA`` (Tensile's name) sets a packed compute-type workspace to beta*C,
  the GEMM's slices add alpha*A*B into it with fp32 atomics, and the conversion kernel
  ``C<indices>_<D>_PostGSU`` (Tensile's name for it: GlobalSplitU 1, alpha 1, beta 0) converts it into D.
- MultipleBuffer: the GEMM writes each slice's unscaled partial tile (accumulator type) to a workspace;
  the post-GSU kernel ``C<indices>_<types>_PostGSU<n>`` then computes D = alpha * sum + beta*C.

Both are elementwise: one thread per element of a ROWS x COLS block of D, grid (ceil(M/ROWS),
ceil(N/COLS), batch).
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.gemm.arguments import SCALAR_KIND, Argument, lay_out

ROWS, COLS = 64, 4
BLOCK = (ROWS * COLS, 1, 1)


def grid(m: int, n: int, batch: int) -> tuple[int, int, int]:
    """Work-groups of an elementwise helper over an M x N x batch D."""
    return (-(-m // ROWS), -(-n // COLS), batch)


def _c_indices(batched: bool) -> str:
    return "Cijk" if batched else "Cij"


def beta_only_name(batched: bool, dest_char: str = "S", pointer_array: bool = False, workspace: bool = False) -> str:
    """Tensile's name: ``Cijk_S``, ``Cijk_S_GB`` for pointer-array batches, ``Cijk_B_GA`` for the one setting a
    compute-type workspace (``workspace``)."""
    return f"{_c_indices(batched)}_{dest_char}{'_GB' if pointer_array else ''}{'_GA' if workspace else ''}"


def _offsets(pointer_array: bool) -> list:
    """Pointer-array helpers (Tensile's ``_GB`` ones) take AddressD/AddressC as arrays of per-batch pointers and
    the element offsets added to each, offsetD and offsetC, as Tensile 4.44's beta-only and conversion kernels."""
    return [("OffsetD", 8, "u64"), ("OffsetC", 8, "u64")] if pointer_array else []


def beta_only_layout(dest_char: str = "S", pointer_array: bool = False) -> list[Argument]:
    """Beta in C/D's type, as the GEMM's compute type for the C/D types that use this helper: int32 for
    int32 C/D (4xi8II), fp16 for HHH, fp64 for DDD, otherwise fp32."""
    size, kind = SCALAR_KIND[dest_char if dest_char in SCALAR_KIND else "S"]
    return lay_out([("AddressD", 8, "u64"), ("AddressC", 8, "u64"), *_offsets(pointer_array),
                    ("StridesD0", 4, "u32"), ("StridesD1", 4, "u32"), ("StridesC0", 4, "u32"),
                    ("StridesC1", 4, "u32"), ("SizesFree0", 4, "u32"), ("SizesFree1", 4, "u32"),
                    ("SizesFree2", 4, "u32"), ("Beta", size, kind)])


def post_gsu_name(batched: bool, dest: str, compute: str, gsu: int, pointer_array: bool = False) -> str:
    types = dest if dest == compute else dest + compute
    return f"{_c_indices(batched)}_{types}{'_GB' if pointer_array else ''}_PostGSU{gsu}"


def conversion_name(batched: bool, dest: str, pointer_array: bool = False) -> str:
    """The SingleBuffer workspace's conversion kernel, Tensile's ``outputConversionKernelName`` for
    _GlobalAccumulation SingleBuffer (GlobalSplitU 1, no unroll suffix): ``Cijk_B_PostGSU``."""
    return f"{_c_indices(batched)}_{dest}{'_GB' if pointer_array else ''}_PostGSU"


def post_gsu_layout(compute: str, pointer_array: bool = False) -> list[Argument]:
    """The workspace is strided (packed slices) also for pointer-array D and C, as Tensile's."""
    size, kind = SCALAR_KIND[compute]
    return lay_out([("AddressD", 8, "u64"), ("AddressC", 8, "u64"), ("AddressWS", 8, "u64"), *_offsets(pointer_array),
                    ("StridesD0", 4, "u32"), ("StridesD1", 4, "u32"), ("StridesC0", 4, "u32"),
                    ("StridesC1", 4, "u32"), ("SizesFree0", 4, "u32"), ("SizesFree1", 4, "u32"),
                    ("SizesFree2", 4, "u32"), ("Alpha", size, kind), ("Beta", size, kind)])


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
