"""What every writer component receives: the architecture, the kernel's derived geometry, and
factories for instructions (checked against the architecture), virtual registers and labels.
Nothing here is global; one context per kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from operator import attrgetter

from tensile_asm.isa.arch import Arch
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.instruction_set import InstructionSet
from tensile_asm.isa.registers import Label, VReg
from tensile_asm.problem import ProblemType
from tensile_asm.solution.derive import Derived
from tensile_asm.solution.layout import LdsLayout, OperandLds, writer_lds_element_bytes


def _derived(name: str, doc: str = "") -> property:
    """A value of the solution's ``Derived``, under the name the writer's components read."""
    return property(attrgetter(f"derived.{name}"), doc=doc or f"Derived.{name}")   # (no Python call: read often)


@dataclass(frozen=True)
class Geometry:
    """The numbers the writer needs: a solution's problem type and derived values (``Derived``, computed once
    by solution/derive.py), read under the names the components use. Build it with ``build.geometry``.

    wg0 x wg1 threads (Tensile's SubGroup) each own a ThreadTile of C; LocalSplitU such groups split
    the unrolled loop's K and reduce through LDS at the end.

    The one thing decided here is the LDS element: for VALU kernels 16-bit inputs are widened to fp32 on
    their way into LDS (and accumulate in fp32), so LDS holds 4-byte elements (8 for fp64) where Tensile's
    keys count A/B elements; the derivation's LDS tiles are placed at that size (``lds``). Where that layout
    would not fit the 64 KiB of LDS, they stay 16-bit in LDS and are widened after the local reads. With MFMA, 8- and
    16-bit inputs (I8, the fp8/bf8 types, H, B) stay their own size in LDS, as in Tensile's kernels (widened they would need
    two or four times Tensile's LDS): the MFMA reads its operands from LDS as they are (mfma_local_read.py).
    """

    problem_type: ProblemType
    derived: Derived
    # GlobalSplitU SingleBuffer with C/D other than the compute type (Tensile's _GlobalAccumulation SingleBuffer,
    # e.g. BBS): the GEMM adds into a packed compute-type workspace, so ``problem_type`` has C/D of the compute
    # type and this is the solution's own problem type (its helper kernels convert to and from its C/D)
    workspace_for: ProblemType | None = None

    # 4xi8: four int8 values in 32 bits; I8: one int8 (LDS holds it as a byte, as Tensile's: ``lds_bpe``);
    # C and Z: complex fp32 / fp64, real part then imaginary part
    # F8/B8: gfx942's fp8 / bf8 (FNUZ), F8B8/B8F8 the hybrids (A fp8 and B bf8, or the reverse)
    TYPE_BYTES = {"S": 4, "D": 8, "H": 2, "B": 2, "4xi8": 4, "I": 4, "I8": 1, "C": 8, "Z": 16,
                  "F8": 1, "B8": 1, "F8B8": 1, "B8F8": 1}

    wg0 = _derived("wg0")
    wg1 = _derived("wg1")
    tt0 = _derived("tt0")
    tt1 = _derived("tt1")
    mt0 = _derived("mt0")
    mt1 = _derived("mt1")
    depth_u = _derived("depth_u")
    num_threads = _derived("num_threads")
    local_split_u = _derived("local_split_u")
    vector_width = _derived("vector_width")
    vector_width_b = _derived("vector_width_b")
    glvw_a = _derived("glvw_a")
    glvw_b = _derived("glvw_b")
    prefetch_local_read = _derived("prefetch_local_read")
    workgroup_mapping = _derived("workgroup_mapping")
    stagger_u = _derived("stagger_u")
    stagger_stride_shift = _derived("stagger_stride_shift")
    stagger_u_mapping = _derived("stagger_u_mapping")
    lds_pad_a = _derived("lds_pad_a")
    lds_pad_b = _derived("lds_pad_b")
    global_split_u = _derived("global_split_u")
    persistent_kernel = _derived("persistent_kernel")
    persistent_kernel_along_batch = _derived("persistent_kernel_along_batch")
    buffer_load = _derived("buffer_load")
    buffer_store = _derived("buffer_store")
    coalesce_group_a = _derived("coalesce_group_a")
    coalesce_group_b = _derived("coalesce_group_b")
    wavefront_size = _derived("wavefront_size")
    assert_summation_multiple = _derived("assert_summation_multiple")
    store_remap = _derived("store_remap", "MFMA StoreRemapVectorWidth (0: none)")
    source_swap = _derived("source_swap", "MFMA SourceSwap: B is the first MFMA operand")
    mi_arch_vgpr = _derived("mi_arch_vgpr", "MFMA MIArchVgpr: accumulators in arch VGPRs")
    mi_blocks = _derived("mi_blocks", "MFMA blocks along dims 0 and 1 (MatrixInstBM, MatrixInstBN)")
    local_read_vector_width = _derived("local_read_vector_width")
    preload_kernargs = _derived("preload_kernargs", "PreloadKernelArguments 1: the first arguments arrive in SGPRs")
    direct_to_vgpr = _derived("direct_to_vgpr", "MFMA DirectToVgprA, B: the operand's global reads are its MFMA "
                                                "operands (writer/direct_to_vgpr.py), it has no LDS tile")

    @property
    def transpose_a(self) -> bool:
        return self.problem_type.transpose_a

    @property
    def transpose_b(self) -> bool:
        return self.problem_type.transpose_b

    @property
    def batched(self) -> bool:
        return self.problem_type.batched

    @property
    def pointer_array(self) -> bool:
        """Pointer-array ("general") batched GEMM (StridedBatched false): per-batch pointers, not strides."""
        return self.problem_type.batched and not self.problem_type.strided_batched

    @property
    def initial_strides_ab(self) -> bool:
        """UseInitialStridesAB: the stride of A's and B's first index is an argument (InitialStrideA/B)."""
        return self.problem_type.use_initial_strides_ab

    @property
    def initial_strides_cd(self) -> bool:
        """UseInitialStridesCD: the stride of C's and D's first index is an argument (InitialStrideC/D)."""
        return self.problem_type.use_initial_strides_cd

    @property
    def use_beta(self) -> bool:
        return self.problem_type.use_beta

    @property
    def data_type(self) -> str:
        """A and B in memory: S, D, H (fp16) or B (bf16)."""
        return self.problem_type.data_type.char

    @property
    def dest_type(self) -> str:
        """C and D in memory."""
        return self.problem_type.dest_type.char

    @property
    def compute_type(self) -> str:
        """alpha and beta."""
        return self.problem_type.compute_type.char

    @property
    def prefetch_global_read(self) -> bool:
        return bool(self.derived.prefetch_global_read)

    @property
    def prefetch_global_read_depth(self) -> int:
        """Tiles loaded ahead into VGPRs: 0, 1 or 2 (PrefetchGlobalRead)."""
        return int(self.derived.prefetch_global_read)

    @property
    def gsu_multiple_buffer(self) -> bool:
        """GlobalSplitUAlgorithm MultipleBuffer (with GlobalSplitU > 1): partial tiles to a workspace."""
        return self.derived.global_accumulation == "MultipleBuffer"

    @property
    def integer(self) -> bool:
        """Integer GEMM, int32 C/D and compute (4xi8II: v_dot4_i32_i8 MACs; I8II: int8 MFMAs), integer
        alpha/beta."""
        return self.compute_type == "I"

    @property
    def in_bpe(self) -> int:
        """Bytes of one A/B element in memory."""
        return self.TYPE_BYTES[self.data_type]

    @property
    def out_bpe(self) -> int:
        """Bytes of one C/D element in memory."""
        return self.TYPE_BYTES[self.dest_type]

    @property
    def complex(self) -> bool:
        """Complex A/B/C/D and alpha/beta (C: fp32 parts, Z: fp64 parts), real part first."""
        return self.data_type in ("C", "Z")

    @property
    def part_regs(self) -> int:
        """Registers of one real number of the arithmetic: 2 for fp64 (D, and the parts of Z), else 1."""
        return 2 if self.data_type in ("D", "Z") else 1

    @property
    def acc_regs(self) -> int:
        """Registers per accumulator and per LDS element: fp64 for D, a complex pair for C (2) and Z (4),
        otherwise fp32 (16-bit inputs are widened to fp32 on their way into LDS and accumulate in fp32)."""
        return self.part_regs * (2 if self.complex else 1)

    @cached_property
    def lds_bpe(self) -> int:
        return writer_lds_element_bytes(self.in_bpe, 4 * self.acc_regs, self.is_mfma, self.derived.lds)

    @property
    def narrow_lds(self) -> bool:
        """A/B keep their own size in LDS, as in Tensile's kernels (whose LdsNumElements count A/B elements):
        8- and 16-bit inputs (I8, fp8/bf8, H, B) with MFMA, which read them from LDS as they are. The VALU writer
        widens 16-bit inputs to fp32 on their way into LDS where that layout fits the LDS, else keeps them 16-bit
        and widens them after its local reads (``valu_narrow_lds``)."""
        return self.in_bpe < 4 and self.lds_bpe == self.in_bpe

    @property
    def valu_narrow_lds(self) -> bool:
        """VALU kernel with 16-bit A/B kept 16-bit in LDS (their fp32 layout would not fit): the local reads
        fetch 16-bit values and widen them to fp32 before the FMAs (writer/local_memory.py)."""
        return not self.is_mfma and self.narrow_lds

    @property
    def float8(self) -> bool:
        """A/B are fp8/bf8 (F8, B8 or a hybrid): fp8 MFMAs accumulating in fp32."""
        return self.data_type in ("F8", "B8", "F8B8", "B8F8")

    @property
    def writes_workspace(self) -> bool:
        """GlobalSplitU MultipleBuffer: the kernel writes unscaled partial sums (accumulator type) to a
        workspace the post-GSU kernel reduces into D."""
        return self.global_split_u > 1 and self.gsu_multiple_buffer

    @property
    def strided_d(self) -> bool:
        """D is a packed workspace (MultipleBuffer's slices, or the SingleBuffer accumulation workspace): strided,
        also for a pointer-array kernel."""
        return self.writes_workspace or self.workspace_for is not None

    @property
    def store_bpe(self) -> int:
        """Bytes of one element of what the kernel writes as "D"."""
        return 4 * self.acc_regs if self.writes_workspace else self.out_bpe

    @property
    def bytes_per_element(self) -> int:
        """Bytes of one element in LDS (the unit of the LDS layout)."""
        return self.lds_bpe

    @property
    def local_read_sets(self) -> int:
        """Register sets for the A/B values of one step: one per step in flight, at most the steps."""
        return min(int(self.prefetch_local_read) + 1, self.math_steps)

    @property
    def is_mfma(self) -> bool:
        """MatrixInstruction: the tile is computed by MFMAs (writer/mfma.py), not VALU FMAs."""
        return self.derived.is_mfma

    @property
    def matrix_instruction(self) -> tuple[int, int, int, int]:
        """(M, N, K, B) of the MFMA."""
        return self.derived.matrix_instruction

    @property
    def mi_wave_group(self) -> tuple[int, int]:
        """Waves along dims 0 and 1 of the macro tile (MIWaveGroup)."""
        return self.derived.mi_wave_group

    @property
    def mi_wave_tile(self) -> tuple[int, int]:
        """MFMA outputs one wave computes along dims 0 and 1 (MIWaveTile)."""
        return self.derived.mi_wave_tile

    @property
    def math_steps(self) -> int:
        """Steps of one unrolled iteration: K values (VALU) or MFMA K-steps of MatrixInstK (LoopIters times
        InnerUnroll: Tensile's InnerUnroll K-steps of one loop iteration are computed as consecutive steps, K in
        the same order)."""
        return self.derived.loop_iters * self.derived.inner_unroll if self.is_mfma else self.loop_unroll

    @property
    def loop_unroll(self) -> int:
        """K values one LocalSplitU group handles per unrolled iteration: DepthU / LocalSplitU (Tensile's
        LoopUnroll steps of InnerUnroll K values each; the VALU writer computes them as consecutive steps,
        K in the same ascending order)."""
        return self.derived.loop_unroll * self.derived.inner_unroll

    @property
    def tlu_a(self) -> bool:
        """A's tile dimension (M) is its unit-stride dimension (A not transposed)."""
        return self.problem_type.tlu_a

    @property
    def tlu_b(self) -> bool:
        """B's tile dimension (N) is its unit-stride dimension (B transposed)."""
        return self.problem_type.tlu_b

    def _operand(self, name: str, operand: str):
        return getattr(self.derived, f"{name}_{operand.lower()}")

    def glvw(self, operand: str) -> int:
        return self._operand("glvw", operand)

    def guarantee_no_partial(self, operand: str) -> bool:
        """Tensile's GuaranteeNoPartialA/B: no global read vector of this operand is partly past the free
        size (its vectors run along K, or AssertFree0/1ElementMultiple is a multiple of the width)."""
        return self._operand("guarantee_no_partial", operand)

    def num_loads(self, operand: str) -> int:
        """Vector loads per thread for one operand's MT x DepthU tile."""
        return self._operand("num_loads", operand)

    def num_loads_coalesced(self, operand: str) -> int:
        """Loads per thread along the coalesced dimension (Tensile's NumLoadsCoalesced)."""
        return self._operand("num_loads_coalesced", operand)

    def wave_separate(self, operand: str) -> bool:
        """WaveSeparateGlobalReadA/B: each wave loads a contiguous share of the operand's perpendicular
        dimension (LSP x NumLoadsPerpendicular of it), its lanes forming the LSC x LSP load tile."""
        return self._operand("wave_separate", operand)

    def thread_separate(self, operand: str) -> int:
        """ThreadSeparateGlobalReadA/B: each wave's lanes split a row of the load tile into 2 x it groups
        (``global_read.tile_coordinates``); 0: none."""
        return self._operand("thread_separate", operand)

    def direct_to_lds(self, operand: str) -> bool:
        """DirectToLdsA/B: the operand's global reads write LDS directly (writer/direct_to_lds.py)."""
        return self._operand("direct_to_lds", operand)

    def load_threads(self, operand: str) -> int:
        """Threads that together form one LSC x LSP load tile: a wave with WaveSeparateGlobalRead, else all."""
        return self.wavefront_size if self.wave_separate(operand) else self.num_threads

    def load_spacing(self, operand: str) -> tuple[int, int]:
        """(LSC, LSP): elements one load instruction of all threads covers along each dimension."""
        return self._operand("lsc", operand), self._operand("lsp", operand)

    # LDS: each operand's tile K-major, DepthU rows of MT + LdsPad elements (the derivation's tile sizes),
    # placed at the writer's LDS element size.
    @cached_property        # (Geometry and its Derived are frozen; the writer asks thousands of times per kernel)
    def lds(self) -> LdsLayout:
        """The kernel's LDS. LocalSplitU's partial tiles are written as accumulators (fp32 for 16-bit
        types without HighPrecisionAccumulate, whose compute type Tensile counts at 2 bytes): at least that."""
        tiles = self.derived.lds
        need = tiles.reduction_elements * 4 * self.acc_regs
        if need > tiles.reduction_bytes:
            tiles = replace(tiles, reduction_bytes=need)
        return tiles.layout(self.lds_bpe)

    def lds_tile(self, operand: str) -> OperandLds:
        """An operand's tile in LDS: K-major or unroll-major, row and block pads (writer/lds_address.py)."""
        return self.derived.lds_a if operand == "A" else self.derived.lds_b

    def lds_row(self, operand: str) -> int:
        """Elements per LDS row (one K value) of an operand's tile, padding included."""
        return self.mt0 + self.lds_pad_a if operand == "A" else self.mt1 + self.lds_pad_b

    @property
    def lds_offset_b(self) -> int:
        """Byte offset of B's tile in an LDS buffer."""
        return self.lds.offset_b * self.lds_bpe

    def lds_buffer_offset(self, buffer: int) -> int:
        """Byte offset of tile buffer 0 or 1."""
        return self.lds.buffer_offset(buffer) * self.lds_bpe

    @property
    def lds_buffers(self) -> int:
        return self.lds.buffers

    @property
    def one_lds_buffer(self) -> bool:
        """1LDSBuffer: PrefetchGlobalRead with a single LDS buffer."""
        return self.prefetch_global_read and self.lds.buffers == 1

    @property
    def lds_bytes(self) -> int:
        return self.lds.bytes

    def element_row(self, i: int) -> tuple[int, int]:
        """Thread-tile element i along dim 0 sits at (i // VW * SG0 + tid0) * VW + i % VW: returns
        (vector index, lane in vector)."""
        return divmod(i, self.vector_width)


@dataclass
class KernelContext:
    arch: Arch
    geometry: Geometry | None  # None for the elementwise helper kernels (beta-only, post-GSU)
    name: str
    _labels: dict = field(default_factory=dict)
    # One VGPR holding the out-of-range buffer offset: v_cndmask cannot take a literal and VCC
    # together (one constant-bus read on gfx9), so edge masks select from this register.
    oob_offset: VReg = field(default_factory=lambda: VReg("v", 1, "BufferOOB"))
    isa: InstructionSet = field(init=False, repr=False)
    # register run -> its elements' slices (mac.elements): one slice object per element for the whole
    # kernel, so the passes and the rendering, which memoise per operand object, meet each once
    elements: dict = field(default_factory=dict, repr=False)
    # what a component wrote the first time, to repeat (``InstructionSet.repeat``; mac.mac_step: per register set)
    written: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.isa = InstructionSet(self.arch)
        self.inst = self.isa.inst       # the method below, without a call in between (the writer's hottest call)

    def inst(self, opcode: str, *operands, mods=(), comment: str = "") -> Instruction:
        """An instruction of this kernel's architecture, checked (``InstructionSet.inst``)."""
        return self.isa.inst(opcode, *operands, mods=mods, comment=comment)

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
