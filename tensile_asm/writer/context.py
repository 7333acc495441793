"""What every writer component receives: the architecture, the kernel's derived geometry, and
factories for virtual registers and labels. Nothing here is global; one context per kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tensile_asm.isa.arch import Arch
from tensile_asm.isa.registers import Label, VReg


@dataclass(frozen=True)
class Geometry:
    """The numbers the writer needs, taken from a solution's derived values."""

    wg0: int
    wg1: int
    tt0: int
    tt1: int
    depth_u: int
    transpose_a: bool
    transpose_b: bool
    batched: bool
    use_beta: bool
    bytes_per_element: int = 4

    @property
    def mt0(self) -> int:
        return self.wg0 * self.tt0

    @property
    def mt1(self) -> int:
        return self.wg1 * self.tt1

    @property
    def num_threads(self) -> int:
        return self.wg0 * self.wg1

    @property
    def tlu_a(self) -> bool:
        """A's tile dimension (M) is its unit-stride dimension (A not transposed)."""
        return not self.transpose_a

    @property
    def tlu_b(self) -> bool:
        """B's tile dimension (N) is its unit-stride dimension (B transposed)."""
        return self.transpose_b

    def num_loads(self, operand: str) -> int:
        mt = self.mt0 if operand == "A" else self.mt1
        return (mt * self.depth_u) // self.num_threads

    @property
    def lds_offset_b(self) -> int:
        """Byte offset of B's tile in LDS (A's tile first: DepthU rows of MT0 elements)."""
        return self.mt0 * self.depth_u * self.bytes_per_element

    @property
    def lds_bytes(self) -> int:
        return (self.mt0 + self.mt1) * self.depth_u * self.bytes_per_element


@dataclass
class KernelContext:
    arch: Arch
    geometry: Geometry
    name: str
    _labels: dict = field(default_factory=dict)
    # One VGPR holding the out-of-range buffer offset: v_cndmask cannot take a literal and VCC
    # together (one constant-bus read on gfx9), so edge masks select from this register.
    oob_offset: VReg = field(default_factory=lambda: VReg("v", 1, "BufferOOB"))

    def vgpr(self, name: str, count: int = 1, align: int = 1) -> VReg:
        if count > 1:
            align = max(align, self.arch.vgpr["tuple_alignment"])
        return VReg("v", count, name, align)

    def sgpr(self, name: str, count: int = 1, align: int | None = None) -> VReg:
        if align is None:
            align = 1 if count == 1 else (2 if count == 2 else 4)
        return VReg("s", count, name, align)

    def label(self, name: str) -> Label:
        """A local label (``.L`` prefix keeps it out of the symbol table), unique in this kernel."""
        n = self._labels.get(name, 0)
        self._labels[name] = n + 1
        suffix = f"_{n}" if n else ""
        return Label(f".L{name}{suffix}")
