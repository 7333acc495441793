"""What every writer component receives: the architecture, the kernel's derived geometry, and
factories for instructions (checked against the architecture), virtual registers and labels.
Nothing here is global; one context per kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tensile_asm.isa.arch import Arch
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.instruction_set import InstructionSet
from tensile_asm.isa.registers import Label, VReg


@dataclass(frozen=True)
class Geometry:
    """The numbers the writer needs, taken from a solution's derived values.

    wg0 x wg1 threads (Tensile's SubGroup) each own a ThreadTile of C; LocalSplitU such groups split
    the unrolled loop's K and reduce through LDS at the end.
    """

    wg0: int
    wg1: int
    tt0: int
    tt1: int
    depth_u: int
    transpose_a: bool
    transpose_b: bool
    batched: bool
    use_beta: bool
    data_type: str = "S"          # A and B in memory: S, D, H (fp16) or B (bf16)
    dest_type: str = "S"          # C and D in memory
    compute_type: str = "S"       # alpha and beta
    local_split_u: int = 1
    vector_width: int = 1
    glvw_a: int = 1
    glvw_b: int = 1
    prefetch_global_read: bool = False
    prefetch_local_read: int = 0  # K-slices whose LDS reads are issued ahead of the one being computed
    workgroup_mapping: int = 1
    stagger_u: int = 0
    stagger_stride_shift: int = 0
    lds_pad_a: int = 0            # elements added to each LDS row (of MT) of A's tile
    lds_pad_b: int = 0
    one_lds_buffer: bool = False  # 1LDSBuffer: PrefetchGlobalRead with a single LDS buffer
    lds_min_bytes: int = 0        # LDS the kernel asks for at least (Tensile's MaxOccupancy padding)
    global_split_u: int = 1       # GlobalSplitU: K split over this many work-groups
    gsu_multiple_buffer: bool = False  # GlobalSplitUAlgorithm MultipleBuffer: partial tiles to a workspace
    buffer_load: bool = True      # BufferLoad: A/B through buffer descriptors (False: global_load)
    buffer_store: bool = True     # BufferStore: C/D through buffer descriptors (False: global_store)
    coalesce_group_a: bool = True  # GlobalReadCoalesceGroupA: adjacent threads along the coalesced dimension
    coalesce_group_b: bool = True
    nlc_a: int = 0                # NumLoadsCoalescedA; 0 = the smallest that splits the loads (Tensile's 1)
    nlc_b: int = 0

    TYPE_BYTES = {"S": 4, "D": 8, "H": 2, "B": 2}

    @property
    def in_bpe(self) -> int:
        """Bytes of one A/B element in memory."""
        return self.TYPE_BYTES[self.data_type]

    @property
    def out_bpe(self) -> int:
        """Bytes of one C/D element in memory."""
        return self.TYPE_BYTES[self.dest_type]

    @property
    def acc_regs(self) -> int:
        """Registers per accumulator and per LDS element: fp64 for D, otherwise fp32 (16-bit inputs
        are widened to fp32 on their way into LDS and accumulate in fp32)."""
        return 2 if self.data_type == "D" else 1

    @property
    def lds_bpe(self) -> int:
        return 4 * self.acc_regs

    @property
    def writes_workspace(self) -> bool:
        """GlobalSplitU MultipleBuffer: the kernel writes unscaled partial sums (accumulator type) to a
        workspace the post-GSU kernel reduces into D."""
        return self.global_split_u > 1 and self.gsu_multiple_buffer

    @property
    def store_bpe(self) -> int:
        """Bytes of one element of what the kernel writes as "D"."""
        return 4 * self.acc_regs if self.writes_workspace else self.out_bpe

    @property
    def bytes_per_element(self) -> int:
        """Bytes of one element in LDS (the unit of the LDS layout)."""
        return self.lds_bpe

    @property
    def mt0(self) -> int:
        return self.wg0 * self.tt0

    @property
    def mt1(self) -> int:
        return self.wg1 * self.tt1

    @property
    def num_threads(self) -> int:
        return self.wg0 * self.wg1 * self.local_split_u

    @property
    def local_read_sets(self) -> int:
        """Register sets for the thread tile's A/B values: one per slice in flight, at most LoopUnroll."""
        return min(int(self.prefetch_local_read) + 1, self.loop_unroll)

    @property
    def loop_unroll(self) -> int:
        """K values one LocalSplitU group handles per unrolled iteration."""
        return self.depth_u // self.local_split_u

    @property
    def tlu_a(self) -> bool:
        """A's tile dimension (M) is its unit-stride dimension (A not transposed)."""
        return not self.transpose_a

    @property
    def tlu_b(self) -> bool:
        """B's tile dimension (N) is its unit-stride dimension (B transposed)."""
        return self.transpose_b

    def glvw(self, operand: str) -> int:
        return self.glvw_a if operand == "A" else self.glvw_b

    def num_loads(self, operand: str) -> int:
        """Vector loads per thread for one operand's MT x DepthU tile."""
        mt = self.mt0 if operand == "A" else self.mt1
        return (mt * self.depth_u) // (self.num_threads * self.glvw(operand))

    # LDS layout, as Tensile lays it out: A's tile as DepthU rows of MT0 + LdsPadA elements, B's after it
    # at a 256-byte boundary; with PrefetchGlobalRead the second buffer starts at the next power of two.
    LDS_ALIGN = 256

    def lds_row(self, operand: str) -> int:
        """Elements per LDS row (one K value) of an operand's tile, padding included."""
        return self.mt0 + self.lds_pad_a if operand == "A" else self.mt1 + self.lds_pad_b

    def _aligned(self, nbytes: int) -> int:
        return -(-nbytes // self.LDS_ALIGN) * self.LDS_ALIGN

    def load_extents(self, operand: str) -> tuple[int, int]:
        """(coalesced, perpendicular) extents in elements of an operand's MT x DepthU tile."""
        mt = self.mt0 if operand == "A" else self.mt1
        tlu = self.tlu_a if operand == "A" else self.tlu_b
        return (mt, self.depth_u) if tlu else (self.depth_u, mt)

    def num_loads_coalesced(self, operand: str) -> int:
        """Loads per thread along the coalesced dimension (Tensile's NumLoadsCoalesced)."""
        given = self.nlc_a if operand == "A" else self.nlc_b
        if given > 0:
            return given
        loads, (coal, perp) = self.num_loads(operand), self.load_extents(operand)
        vectors = coal // self.glvw(operand)
        for c in range(1, loads + 1):
            if loads % c == 0 and vectors % c == 0 and perp % (loads // c) == 0:
                return c
        return 1

    def load_spacing(self, operand: str) -> tuple[int, int]:
        """(LSC, LSP): elements one load instruction of all threads covers along each dimension."""
        coal, perp = self.load_extents(operand)
        nlc = self.num_loads_coalesced(operand)
        return coal // nlc, -(-perp // (self.num_loads(operand) // nlc))

    @property
    def lds_offset_b(self) -> int:
        """Byte offset of B's tile in an LDS buffer."""
        return self._aligned(self.depth_u * self.lds_row("A") * self.bytes_per_element)

    def lds_buffer_offset(self, buffer: int) -> int:
        if buffer == 0 or self.one_lds_buffer:
            return 0
        b_bytes = self._aligned(self.depth_u * self.lds_row("B") * self.bytes_per_element)
        ab = self.lds_offset_b + b_bytes
        return 1 << (ab - 1).bit_length()

    @property
    def lds_buffers(self) -> int:
        return 2 if self.prefetch_global_read and not self.one_lds_buffer else 1

    @property
    def lds_reduction_bytes(self) -> int:
        """LocalSplitU partial tiles, written after the loop (the tile buffers are dead by then)."""
        if self.local_split_u == 1:
            return 0
        return self.local_split_u * self.mt0 * self.mt1 * self.bytes_per_element

    @property
    def lds_bytes(self) -> int:
        last = self.lds_buffer_offset(self.lds_buffers - 1)
        tiles = last + self.lds_offset_b + self.depth_u * self.lds_row("B") * self.bytes_per_element
        return max(tiles, self.lds_reduction_bytes, self.lds_min_bytes)

    def element_row(self, i: int) -> tuple[int, int]:
        """Thread-tile element i along dim 0 sits at (i // VW * SG0 + tid0) * VW + i % VW: returns
        (vector index, lane in vector)."""
        return divmod(i, self.vector_width)


@dataclass
class KernelContext:
    arch: Arch
    geometry: Geometry
    name: str
    _labels: dict = field(default_factory=dict)
    # One VGPR holding the out-of-range buffer offset: v_cndmask cannot take a literal and VCC
    # together (one constant-bus read on gfx9), so edge masks select from this register.
    oob_offset: VReg = field(default_factory=lambda: VReg("v", 1, "BufferOOB"))
    isa: InstructionSet = field(init=False, repr=False)

    def __post_init__(self):
        self.isa = InstructionSet(self.arch)

    def inst(self, opcode: str, *operands, mods=(), comment: str = "") -> Instruction:
        """An instruction of this kernel's architecture, checked (``InstructionSet.inst``)."""
        return self.isa.inst(opcode, *operands, mods=mods, comment=comment)

    def waitcnt(self, vmcnt: int | None = None, lgkmcnt: int | None = None, expcnt: int | None = None,
                comment: str = "") -> Instruction:
        return self.isa.waitcnt(vmcnt=vmcnt, lgkmcnt=lgkmcnt, expcnt=expcnt, comment=comment)

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
