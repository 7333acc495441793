"""Operands: physical register ranges, virtual registers, special registers, immediates and labels.

Virtual registers (``VReg``) are what the writer asks for; the allocation pass maps each to a
physical range. An operand may name a slice of a virtual register (``VRegRef``), so a 16-dword
kernel-argument block can be loaded with one ``s_load_dwordx16`` and read one dword at a time.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import ClassVar, Mapping, Union

REG_KINDS = ("v", "s", "a")

# ``_shape`` of a register operand, what instruction_set's check reads of it, as one int (its hash is itself, so the
# check's key of an instruction hashes fast): register count, kind, start of the range modulo 4 (every alignment
# rule divides 4); physical registers (``Reg``) negative, slices of virtual registers (``VRegRef``) non-negative.
_KIND_CODE = {"v": 0, "s": 4, "a": 8}


def _register_shape(kind: str, count: int, start: int) -> int:
    return count << 4 | _KIND_CODE[kind] | start & 3


@dataclass(frozen=True)
class Reg:
    """A physical register range: kind 'v' (VGPR), 's' (SGPR) or 'a' (AGPR)."""

    kind: str
    index: int
    count: int = 1

    def __post_init__(self):
        if self.kind not in REG_KINDS:
            raise ValueError(f"bad register kind {self.kind!r}")
        if self.index < 0 or self.count < 1:
            raise ValueError(f"bad register range {self.kind}{self.index}x{self.count}")
        object.__setattr__(self, "_shape", -1 - _register_shape(self.kind, self.count, self.index))

    def __str__(self) -> str:
        if self.count == 1:
            return f"{self.kind}{self.index}"
        return f"{self.kind}[{self.index}:{self.index + self.count - 1}]"

    def sub(self, offset: int, count: int = 1) -> "Reg":
        if offset + count > self.count:
            raise ValueError(f"{self}: slice {offset}+{count} out of range")
        return Reg(self.kind, self.index + offset, count)

    def units(self) -> list[tuple[str, int]]:
        """The individual 32-bit registers this range covers."""
        return [(self.kind, self.index + i) for i in range(self.count)]


class VReg:
    """A virtual register range the allocator will place. Identity is the object itself."""

    __slots__ = ("kind", "count", "align", "name", "fixed", "_all", "_code", "_slices")

    def __init__(self, kind: str, count: int = 1, name: str = "", align: int = 1, fixed: int | None = None):
        if kind not in REG_KINDS:
            raise ValueError(f"bad register kind {kind!r}")
        self.kind, self.count, self.align, self.name, self.fixed = kind, count, align, name, fixed
        self._all = self._slices = None
        self._code = _KIND_CODE[kind] | (fixed or 0) & 3    # its slices' ``_shape`` less count and offset

    def __repr__(self) -> str:
        return f"VReg({self.kind}{self.count}:{self.name or id(self)})"

    def __getitem__(self, i: int) -> "VRegRef":
        return self.slice(i, 1)

    def slice(self, offset: int, count: int = 1) -> "VRegRef":
        """Registers ``offset`` .. ``offset + count - 1`` as an operand: one object per slice (a ``VRegRef`` is a
        value: the instructions naming the same slice share it, and the passes' per-operand memos meet it once)."""
        refs = self._slices
        if refs is None:
            refs = self._slices = {}
        ref = refs.get((offset, count))
        if ref is None:
            if offset < 0 or offset + count > self.count:
                raise ValueError(f"{self!r}: slice {offset}+{count} out of range")
            ref = refs[(offset, count)] = VRegRef(self, offset, count)
        return ref

    def all(self) -> "VRegRef":
        """The whole register as an operand: one object per register (a ``VRegRef`` is a value, so the
        instructions naming the whole register share it, and the passes' per-operand memos meet it once)."""
        ref = self._all
        if ref is None:
            ref = self._all = VRegRef(self, 0, self.count)
        return ref


class VRegRef:
    """A slice of a virtual register, resolved to a ``Reg`` once allocation has run. A value: equal (and
    hashed) by (vreg, offset, count), never changed after creation. (A plain slotted class rather than a
    frozen dataclass: the writer creates hundreds of thousands, and a frozen dataclass's ``__init__``
    costs several times more.)"""

    __slots__ = ("vreg", "offset", "count", "_shape")

    def __init__(self, vreg: VReg, offset: int, count: int):
        self.vreg, self.offset, self.count = vreg, offset, count
        # what instruction_set's check reads of it (kind, count, start modulo 4: from a fixed register's base, else
        # from the allocated base, which the allocator aligns): ``_register_shape`` without a call
        code = vreg._code
        self._shape = count << 4 | code & 12 | (code + offset) & 3

    def __eq__(self, other):
        if other.__class__ is not VRegRef:
            return NotImplemented
        return self.vreg is other.vreg and self.offset == other.offset and self.count == other.count

    def __hash__(self):
        return hash((self.vreg, self.offset, self.count))

    def __repr__(self) -> str:
        return f"VRegRef(vreg={self.vreg!r}, offset={self.offset!r}, count={self.count!r})"

    def __reduce__(self):
        return VRegRef, (self.vreg, self.offset, self.count)

    @property
    def kind(self) -> str:
        return self.vreg.kind

    def __getitem__(self, i: int) -> "VRegRef":
        return self.sub(i, 1)

    def sub(self, offset: int, count: int = 1) -> "VRegRef":
        if offset < 0 or offset + count > self.count:
            raise ValueError(f"{self}: slice {offset}+{count} out of range")
        return self.vreg.slice(self.offset + offset, count)

    slice = sub     # as VReg.slice: a slice of a slice is a slice of the register

    def resolve(self, assignment: Mapping[VReg, int]) -> Reg:
        return Reg(self.vreg.kind, assignment[self.vreg] + self.offset, self.count)

    def __str__(self) -> str:
        name = self.vreg.name or "tmp"
        return f"%{self.kind}.{name}[{self.offset}:{self.offset + self.count - 1}]"


SPECIAL_WIDTH = {
    "vcc": 2, "vcc_lo": 1, "vcc_hi": 1, "exec": 2, "exec_lo": 1, "exec_hi": 1,
    "m0": 1, "scc": 1, "off": 0, "flat_scratch": 2, "flat_scratch_lo": 1, "flat_scratch_hi": 1,
    "src_private_base": 2,
}


@dataclass(frozen=True)
class Special:
    """A named special register (vcc, exec, m0, scc) or the ``off`` placeholder."""

    name: str

    def __post_init__(self):
        if self.name not in SPECIAL_WIDTH:
            raise ValueError(f"unknown special register {self.name!r}")
        object.__setattr__(self, "_shape", "s:" + self.name)

    def __str__(self) -> str:
        return self.name


VCC, EXEC, SCC, M0, OFF = Special("vcc"), Special("exec"), Special("scc"), Special("m0"), Special("off")

# Floats the hardware encodes inline (no literal dword), as LLVM prints them.
INLINE_FLOATS = {0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0}


def float_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


@dataclass(frozen=True)
class Imm:
    """An immediate: an int (32-bit pattern or small signed inline constant) or an fp32 value."""

    value: Union[int, float]
    # What instruction_set's check reads of an operand (``Instruction`` shapes): of a constant, its kind only
    # (a LabelOffset is a constant there too). Reg, VRegRef and Special set theirs per object.
    _shape: ClassVar[str] = "i"

    def __str__(self) -> str:
        v = self.value
        if isinstance(v, float):
            if v in INLINE_FLOATS:
                return repr(v)
            return f"0x{float_bits(v):08x}"
        if -16 <= v <= 64:
            return str(v)
        return f"0x{v & 0xFFFFFFFF:x}"

    @property
    def bits(self) -> int:
        v = self.value
        return float_bits(v) if isinstance(v, float) else v & 0xFFFFFFFF


@dataclass(frozen=True)
class LabelOffset(Imm):
    """A 32-bit literal the assembler computes: the bytes from label ``base`` to label ``target``
    (``target-base``; the long branches of isa/branch_relax.py). ``value`` is unused (0)."""

    target: str = ""
    base: str = ""

    def __str__(self) -> str:
        return f"{self.target}-{self.base}"


@dataclass(frozen=True)
class Label:
    """A branch target. ``address`` is filled in when parsed back from a code object."""

    name: str
    address: int | None = field(default=None, compare=False)
    _shape: ClassVar[str] = "l"

    def __str__(self) -> str:
        return self.name


Operand = Union[Reg, VRegRef, Special, Imm, Label]
_OPERAND_TYPES = frozenset((Reg, VRegRef, Special, Imm, Label))


# int -> its Imm: an immediate is a value, so the instructions naming one share it (fewer objects per kernel, and
# the passes' and the rendering's per-operand memos meet it once); cleared when it grows past _IMM_CACHE_SIZE
_IMMS: dict[int, Imm] = {}
_IMM_CACHE_SIZE = 1 << 14


def as_operand(x) -> Operand:
    """Accept VReg (whole), ints and floats where an operand is expected."""
    t = type(x)
    if t in _OPERAND_TYPES:           # the common case, answered by one set lookup
        return x
    if t is VReg:
        ref = x._all
        return x.all() if ref is None else ref
    if t is int:
        imm = _IMMS.get(x)
        if imm is None:
            if len(_IMMS) >= _IMM_CACHE_SIZE:
                _IMMS.clear()
            imm = _IMMS[x] = Imm(x)
        return imm
    if isinstance(x, VReg):
        return x.all()
    if isinstance(x, bool):
        raise TypeError("booleans are not operands")
    if isinstance(x, (int, float)):
        return Imm(x)
    if isinstance(x, (Reg, VRegRef, Special, Imm, Label)):
        return x
    raise TypeError(f"not an operand: {x!r}")
