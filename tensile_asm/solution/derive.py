"""Derived values of a solution, as Tensile's ``Solution.assignDerivedParameters`` computes them, and the
first reason a solution is invalid (Tensile's ``PrintSolutionRejectionReason``).

``derive(params, problem_type)`` resolves the automatic parameter values in ``params`` (VectorWidth -1,
GlobalReadVectorWidth -1, LdsPad -1, ...) in place and returns a ``Derivation``: the typed ``Derived``
values our writer reads, the derived keys under Tensile's names (to compare with, and to write into, logic
files) and the rejection reason (``None`` for a valid solution). The VALU derivation follows Tensile 4.x;
for MFMA solutions the tile math of the 4-entry MatrixInstruction form is reproduced (4x4 shapes included).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from tensile_asm.problem import ProblemType
from tensile_asm.solution.layout import LayoutMixin, LdsLayout, LdsTiles, OperandLds, Reject
from tensile_asm.solution.writer_rules import SIA2_KEEPS_1LDSBUFFER

VALID_LSU = (1, 2, 4, 8, 16, 32, 64, 96, 128, 256)
VALID_TT_SIDES = frozenset(list(range(1, 17)) + list(range(20, 256, 4)))
VALID_MT_SIDES = frozenset([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 6, 12, 24, 48, 96, 192, 384, 768])
_MFMA_S = ((32, 32, 1, 2), (32, 32, 2, 1), (16, 16, 1, 4), (16, 16, 4, 1), (4, 4, 1, 16))
_MFMA_H = ((32, 32, 4, 2), (32, 32, 8, 1), (16, 16, 4, 4), (16, 16, 16, 1), (4, 4, 4, 16))
_MFMA_B = ((32, 32, 2, 2), (32, 32, 4, 1), (16, 16, 2, 4), (16, 16, 8, 1), (4, 4, 2, 16))
_MFMA_D = ((16, 16, 4, 1), (4, 4, 4, 4))
_MFMA_F8 = ((32, 32, 16, 1), (16, 16, 32, 1))
# gfx950's shapes, as hipBLASLt's TensileLite lists them (validMFMA): K doubled for f16/bf16 (the H and B lists)
# and int8; the f8f6f4 shapes for fp8/bf8. Which arch has which is the writer's lookup (isa/mfma_shapes.py).
_MFMA_H_950 = ((32, 32, 16, 1), (16, 16, 32, 1))
_MFMA_I8_950 = ((32, 32, 32, 1), (16, 16, 64, 1))
_MFMA_F8_950 = ((32, 32, 64, 1), (16, 16, 128, 1))
# Tensile 4.44's validMFMA; B also takes the "1k" bf16 shapes (the H shapes: MFMA_BF16_1K, gfx90a and later)
VALID_MFMA = {"S": _MFMA_S, "C": _MFMA_S, "H": _MFMA_H + _MFMA_H_950, "B": _MFMA_B + _MFMA_H + _MFMA_H_950,
              "D": _MFMA_D, "Z": _MFMA_D, "X": ((32, 32, 4, 1), (16, 16, 8, 1)),
              "I8": _MFMA_H + _MFMA_F8 + _MFMA_I8_950, "F8": _MFMA_F8 + _MFMA_F8_950,
              "B8": _MFMA_F8 + _MFMA_F8_950, "F8B8": _MFMA_F8 + _MFMA_F8_950, "B8F8": _MFMA_F8 + _MFMA_F8_950}


@dataclass(frozen=True)
class Derived:
    """What the kernel writer reads: the derived values and the parameters it needs, resolved (automatic
    values replaced, flags as Tensile's derivation leaves them). LDS quantities are in elements."""

    wg0: int = 0
    wg1: int = 0
    local_split_u: int = 1
    tt0: int = 0  # C elements per thread along dim 0 (Tensile ThreadTile0; for MFMA not the parameter)
    tt1: int = 0
    sg0: int = 0  # threads along dim 0 (Tensile SubGroup0)
    sg1: int = 0
    mt0: int = 0
    mt1: int = 0
    depth_u: int = 0
    num_threads: int = 0
    vector_width: int = 1
    vector_width_b: int = 1  # MFMA: B's VectorWidth (VectorWidthB); VALU kernels use vector_width for both
    glvw_a: int = 1  # elements per global load of A (GlobalLoadVectorWidthA)
    glvw_b: int = 1
    loop_unroll: int = 0  # DepthU / LocalSplitU / InnerUnroll
    loop_iters: int = 0  # LoopUnroll (VALU) or LoopUnroll / MatrixInstK (MFMA)
    inner_unroll: int = 1  # InnerUnroll: K values one LoopUnroll step reads and computes
    fused_mac: bool = True  # MACInstruction FMA (one rounding); MAD/MAC: v_mac_f32, the product rounded first
    num_loads_a: int = 0  # vector loads per thread for A's tile
    num_loads_b: int = 0
    num_loads_coalesced_a: int = 0
    num_loads_coalesced_b: int = 0
    num_loads_perpendicular_a: int = 0
    num_loads_perpendicular_b: int = 0
    lsc_a: int = 0  # elements one load instruction covers along the coalesced / perpendicular dimension
    lsp_a: int = 0
    lsc_b: int = 0
    lsp_b: int = 0
    lds_pad_a: int = 0  # elements added to each LDS row of A's tile
    lds_pad_b: int = 0
    lds: LdsTiles = LdsTiles()  # what LDS holds; lds.layout(bytes) places it (lds_layout: at A/B's size)
    lds_a: OperandLds = OperandLds(0, 0, 0)  # A's tile in LDS: K-major or unroll-major, pads (in elements)
    lds_b: OperandLds = OperandLds(0, 0, 0)
    bytes_per_element: int = 4
    num_elements_per_thread: int = 0
    global_write_vector_width: int = 1
    num_global_write_vectors_per_thread: int = 0
    stagger_u: int = 0  # StaggerU: work-groups start K at this many different offsets (0: none)
    stagger_stride_shift: int = 0
    stagger_u_mapping: int = 0  # StaggerUMapping: the coordinate picking the stagger (0 wg0, 1 wg1, 2 wg2, 3 serial, 4 max)
    workgroup_mapping: int = 1  # WorkGroupMapping, 0 and 1 both meaning none
    prefetch_global_read: int = 0  # tiles loaded ahead into VGPRs (PrefetchGlobalRead)
    prefetch_local_read: int = 0  # K-slices whose LDS reads are issued ahead (PrefetchLocalRead)
    global_split_u: int = 1
    persistent_kernel: int = 0  # PersistentKernel: work-groups per CU in the grid (-1: the host picks); 0: none
    persistent_kernel_along_batch: bool = False  # the persistent tile walk spans the batch too
    global_accumulation: str | None = None  # Tensile's _GlobalAccumulation: None, SingleBuffer, MultipleBuffer
    buffer_load: bool = True  # A/B through buffer descriptors (False: global loads; always False for HIP source)
    buffer_store: bool = True  # C/D through buffer descriptors
    coalesce_group_a: bool = True  # GlobalReadCoalesceGroupA: adjacent threads along the coalesced dimension
    coalesce_group_b: bool = True
    wave_separate_a: bool = False  # WaveSeparateGlobalReadA: each wave loads its own share of A's perpendicular dimension
    wave_separate_b: bool = False
    thread_separate_a: int = 0     # ThreadSeparateGlobalReadA: each wave's lanes split its rows in 2 x this groups
    thread_separate_b: int = 0
    direct_to_lds_a: bool = False  # DirectToLdsA: A's global reads write LDS directly (buffer_load ... lds)
    direct_to_lds_b: bool = False
    wavefront_size: int = 64
    guarantee_no_partial_a: bool = True
    guarantee_no_partial_b: bool = True
    assert_summation_multiple: int = 1  # AssertSummationElementMultiple: K is a multiple of it (library predicate)
    use_sgpr_for_gro: bool = False
    matrix_instruction: tuple[int, ...] = ()  # (M, N, K, B) or () for VALU
    mi_wave_group: tuple[int, ...] = ()
    mi_wave_tile: tuple[int, ...] = ()
    mi_blocks: tuple[int, int] = (1, 1)  # MatrixInstBM, MatrixInstBN: the MFMA's blocks along dims 0 and 1
    store_remap: int = 0  # MFMA StoreRemapVectorWidth (0: none): C goes to D through LDS in vectors of this width
    source_swap: bool = False  # MFMA SourceSwap: B is the MFMA's first operand, so lanes hold rows of C
    mi_arch_vgpr: bool = False  # MFMA MIArchVgpr: the accumulators are arch VGPRs, not AGPRs
    direct_to_vgpr: tuple[bool, bool] = (False, False)  # DirectToVgprA, B: global reads straight into MFMA operands
    local_read_vector_width: int = 1  # MFMA LocalReadVectorWidth: K values a lane reads at once from an unroll-major tile
    preload_kernargs: bool = False  # PreloadKernelArguments 1: the first arguments arrive in SGPRs (gemm.arguments)

    @property
    def lds_layout(self) -> LdsLayout:
        """Tensile's LDS layout, in elements of the A/B type."""
        return self.lds.layout(self.bytes_per_element)

    @property
    def lds_offset_b(self) -> int:
        return self.lds_layout.offset_b

    @property
    def lds_offset_a_blk(self) -> int | None:
        return self.lds_layout.offset_a_blk

    @property
    def lds_offset_b_blk(self) -> int | None:
        return self.lds_layout.offset_b_blk

    @property
    def lds_num_elements(self) -> int:
        return self.lds_layout.num_elements

    @property
    def lds_bytes(self) -> int:
        return self.lds_layout.bytes

    @property
    def is_mfma(self) -> bool:
        return bool(self.matrix_instruction)


@dataclass
class Derivation:
    derived: Derived
    keys: dict[str, Any]  # Tensile's derived keys, for logic files
    reason: str | None  # why the solution is invalid (Tensile rejects it), or None
    underived: str | None = None  # what this derivation cannot derive yet (not a Tensile rejection), or None


def isa_from_arch(arch_name: str) -> list[int]:
    """``gfx90a`` -> [9, 0, 10]; ``gfx1030`` -> [10, 3, 0]."""
    digits = arch_name.removeprefix("gfx").split(":")[0]
    return [int(digits[:-2]), int(digits[-2], 16), int(digits[-1], 16)]


def derive(params: dict[str, Any], problem_type: ProblemType, from_logic: bool = False,
           file_keys: dict[str, Any] | None = None, older_rules: frozenset[str] = frozenset()) -> Derivation:
    """``from_logic``: the parameters come from a logic file, where Tensile does not check them against its
    tuning-config value lists (validParameters: MacroTile sides) but only derives (assignDerivedParameters).
    ``file_keys``: the derived keys the file stores; Tensile 4.44 reads GlobalLoadVectorWidthA/B among them as
    parameters of MFMA solutions whose GlobalReadVectorWidth is -1 (``_load_widths``).
    ``older_rules``: rules of an older Tensile version that the file's stored values show its writer used
    (``writer_rules``), applied in place of 4.44's."""
    d = _Deriver(params, problem_type, from_logic, file_keys or {}, older_rules)
    reason = underived = None
    try:
        d.run()
    except Underived as u:
        underived = str(u)
    except Reject as r:
        reason = str(r)
    known = {f.name for f in fields(Derived)}
    return Derivation(Derived(**{k: v for k, v in d.out.items() if k in known}), d.k, reason, underived)


class Underived(Reject):
    """A solution this derivation cannot derive yet, though Tensile accepts it: a limit of ours (reported by the
    builder as a kernel reason), not an invalid solution."""


class _Deriver(LayoutMixin):
    def __init__(self, params: dict[str, Any], pt: ProblemType, from_logic: bool = False,
                 file_keys: dict[str, Any] | None = None, older_rules: frozenset[str] = frozenset()):
        self.p, self.pt, self.from_logic, self.file_keys = params, pt, from_logic, file_keys or {}
        self.older_rules = older_rules
        self.k: dict[str, Any] = {}  # Tensile-named derived keys
        self.out: dict[str, Any] = {"bytes_per_element": pt.data_type.bytes}

    def reject(self, msg: str) -> None:
        raise Reject(msg)

    def run(self) -> None:
        p, k, out, pt = self.p, self.k, self.out, self.pt
        bpe = pt.data_type.bytes
        mi = list(p["MatrixInstruction"])
        if len(mi) == 9:  # [M, N, K, B, MIBlockM, WaveTileM, WaveTileN, WaveM, WaveN] -> TT/WG + 4-entry MI
            m, n, kk, b, bm, wt0, wt1, wm, wn = mi
            p["ThreadTile"] = [wt0, wt1 * n]
            wg0 = bm * m * wm
            p["WorkGroup"] = [wg0, wm * wn * p["WavefrontSize"] // wg0, 1]
            p["MatrixInstruction"] = mi = [m, n, kk, b]
        wg0, wg1, lsu = p["WorkGroup"]
        nt = wg0 * wg1 * lsu
        out.update(wg0=wg0, wg1=wg1, local_split_u=lsu, num_threads=nt)
        k.update(LocalSplitU=lsu, NumThreads=nt)
        if not (32 <= nt <= 1024 and nt % 32 == 0):
            self.reject(f"WorkGroup {p['WorkGroup']} has {nt} threads; a work-group needs 32..1024 threads, "
                        f"a multiple of 32")
        if lsu not in VALID_LSU:
            self.reject(f"LocalSplitU (WorkGroup[2]) {lsu} is not one of {', '.join(map(str, VALID_LSU))}")
        self.mfma = bool(mi)
        if self.mfma and lsu > 4:
            self.reject(f"LocalSplitU {lsu} is more than 4, the most Tensile allows with MatrixInstruction")
        if self.mfma:
            self._mfma_tiles(mi, wg0, wg1)
        else:
            tt0, tt1 = p["ThreadTile"]
            for side in (tt0, tt1):
                if side not in VALID_TT_SIDES:
                    self.reject(f"ThreadTile {p['ThreadTile']}: side {side} is not 1..16 or 20..252 in steps of 4")
            self._tiles(wg0, wg1, tt0, tt1)
        mt0, mt1 = out["mt0"], out["mt1"]
        if p.get("MacroTile") is not None and list(p["MacroTile"]) != [mt0, mt1]:
            self.reject(f"MacroTile {p['MacroTile']} does not match the derived [{mt0}, {mt1}] "
                        f"(WorkGroup x ThreadTile); fix or remove MacroTile")
        for side in (mt0, mt1):
            if side not in VALID_MT_SIDES and not self.from_logic:
                self.reject(f"MacroTile {mt0}x{mt1} is not allowed: side {side} is not a power of two up to 1024 "
                            f"or one of 6, 12, 24, 48, 96, 192, 384, 768")
        shape = max(mt0 // mt1, mt1 // mt0)
        if not p["MacroTileShapeMin"] <= shape <= p["MacroTileShapeMax"]:
            self.reject(f"MacroTile {mt0}x{mt1} has shape ratio {shape}, outside MacroTileShapeMin.."
                        f"MacroTileShapeMax = {p['MacroTileShapeMin']}..{p['MacroTileShapeMax']}")
        if p["WorkGroupMappingType"] == "Z" and abs(p["WorkGroupMapping"]) > 2:
            self.reject("WorkGroupMappingType Z only supports WorkGroupMapping 1 or 2")
        self._vector_widths(bpe)
        self._flags()
        self._write_shape(nt, mt0, mt1, lsu)
        self._wave_separate(nt)
        self._depth_u(nt, bpe)
        self._lds(bpe, mt0, mt1, lsu)
        self._loop(lsu)
        self._late()

    # ---- tiles
    def _tiles(self, sg0: int, sg1: int, tt0: int, tt1: int) -> None:
        mt0, mt1 = sg0 * tt0, sg1 * tt1
        self.out.update(tt0=tt0, tt1=tt1, sg0=sg0, sg1=sg1, mt0=mt0, mt1=mt1)
        a_is_0 = self.pt.tensor0 == 0
        self.k.update(ThreadTile0=tt0, ThreadTile1=tt1, SubGroup0=sg0, SubGroup1=sg1, MacroTile0=mt0, MacroTile1=mt1,
                      ThreadTileA=tt0 if a_is_0 else tt1, ThreadTileB=tt1 if a_is_0 else tt0,
                      SubGroupA=sg0 if a_is_0 else sg1, SubGroupB=sg1 if a_is_0 else sg0,
                      MacroTileA=mt0 if a_is_0 else mt1, MacroTileB=mt1 if a_is_0 else mt0)

    def _mfma_tiles(self, mi: list[int], wg0: int, wg1: int) -> None:
        p, k = self.p, self.k
        m, n, kk, b = mi
        # bf16 also has the _1k instructions (gfx90a on) with the f16 shapes (Tensile's validMFMA["B1k"], in
        # VALID_MFMA["B"]); which instruction computes the shape is the writer's lookup (isa/mfma_shapes.py).
        # An S problem with F32XdlMathOp uses the xf32 shapes.
        xdl = self.pt.f32_xdl_math_op
        mi_type = xdl.char if xdl is not None and self.pt.data_type.char == "S" else self.pt.data_type.char
        if tuple(mi) not in VALID_MFMA.get(mi_type, ()):
            self.reject(f"MatrixInstruction {mi} is not an MFMA shape for data type {mi_type}")
        wave = p["WavefrontSize"]
        if (wg0 * wg1) % wave:
            self.reject(f"MatrixInstruction needs whole waves: WorkGroup {wg0}x{wg1} is not a multiple of {wave} threads")
        if p["ThreadTile"][1] % n:
            self.reject(f"ThreadTile {p['ThreadTile']}: with MatrixInstruction {mi} its second entry must be a "
                        f"multiple of {n}")
        miwg0 = max(wg0, m)
        bm = min(miwg0 // m, b)
        bn = b // bm
        waves = wg0 * wg1 // wave
        wgrp0 = min(miwg0 // m // bm, waves)
        wave_group = [wgrp0, waves // wgrp0]
        wave_tile = [p["ThreadTile"][0], p["ThreadTile"][1] // n]
        out_vw = 1 if self.pt.data_type.char in ("D", "Z") else 4   # Tensile's getMIOutputInfo
        if m == 4:   # 4x4 shapes (16 blocks): Tensile 4.44 counts a thread's outputs in MIOutputVectorWidth rows
            tt0, tt1 = wave_tile[0] * out_vw, wave_tile[1]
            sg0, sg1 = wave_group[0] * m * bm // out_vw, wave_group[1] * n * bn
        else:
            tt0, tt1 = bm * wave_tile[0] * (m * n // wave), bn * wave_tile[1]
            sg0, sg1 = wave_group[0] * (wave // n), wave_group[1] * n
        self._tiles(sg0, sg1, tt0, tt1)
        a_is_0 = self.pt.tensor0 == 0
        mipt = m * kk * b // wave
        k.update(EnableMatrixInstruction=True, MatrixInstM=m, MatrixInstN=n, MatrixInstK=kk, MatrixInstB=b,
                 MatrixInstBM=bm, MatrixInstBN=bn, MIBlock=[m, n, kk, b, bm, bn], MIWaveGroup=wave_group,
                 MIWaveTile=wave_tile, MIWaveTileA=wave_tile[0 if a_is_0 else 1],
                 MIWaveTileB=wave_tile[1 if a_is_0 else 0], MIInputPerThread=mipt,
                 # Tensile's getMIOutputInfo: f64 MFMA output (D and Z inputs) is 1 x 2 registers, else 4 x 1
                 MIRegPerOut=2 if self.pt.data_type.char in ("D", "Z") else 1, MIOutputVectorWidth=out_vw)
        self.out.update(matrix_instruction=(m, n, kk, b), mi_wave_group=tuple(wave_group), mi_blocks=(bm, bn),
                        mi_wave_tile=tuple(wave_tile), source_swap=bool(p["SourceSwap"]),
                        mi_arch_vgpr=bool(p["MIArchVgpr"]),
                        direct_to_vgpr=(bool(p["DirectToVgprA"]), bool(p["DirectToVgprB"])))

    # ---- vector widths and flags
    def _vector_widths(self, bpe: int) -> None:
        p, out = self.p, self.out
        tt0, tt1 = out["tt0"], out["tt1"]
        vw = p["VectorWidth"]
        if vw < 1:
            if self.mfma:
                vw = max(1, 4 // bpe) if bpe < 4 else 1
            else:
                vw = max(1, 16 // bpe)
                while tt0 % vw or tt1 % vw:
                    vw //= 2
            p["VectorWidth"] = vw
        if self.mfma:
            vw = self._mfma_vector_widths(bpe, vw)
        if not self.mfma and (tt0 % vw or tt1 % vw):
            self.reject(f"ThreadTile0 {tt0} or ThreadTile1 {tt1} is not a multiple of VectorWidth {vw}")
        if vw * bpe > 16:
            self.reject(f"VectorWidth {vw} x {bpe} bytes is more than 16 bytes")
        self.load_widths = self._load_widths(bpe, vw)
        if p["GlobalReadVectorWidth"] == -1:
            p["GlobalReadVectorWidth"] = vw
        if p["GlobalReadVectorWidth"] * bpe > 16:
            self.reject(f"GlobalReadVectorWidth {p['GlobalReadVectorWidth']} x {bpe} bytes is more than 16 bytes")
        if p["LocalReadVectorWidth"] == -1:
            p["LocalReadVectorWidth"] = self.k["MIInputPerThread"] if self.mfma else vw
            if self.mfma and self.k["MIInputPerThread"] * bpe > 16:   # (hipBLASLt: gfx950's f8f6f4 shapes, 32 bytes)
                p["LocalReadVectorWidth"] = 16 // bpe
        out["local_read_vector_width"] = p["LocalReadVectorWidth"]
        if p["VectorWidthB"] == -1:
            p["VectorWidthB"] = vw
        out["vector_width_b"] = p["VectorWidthB"]
        # Tensile 4.44: GLC where the ISA's assembler has the glc modifier (not gfx94x/gfx95x, not a source
        # kernel's ISA 0.0.0), else SC0; ForceStoreSC1 Auto becomes the ISA's ArchCaps value (False on every ISA)
        if p["MemoryModifierFormat"] not in ("GLC", "SC0"):
            isa = list(p["ISA"])
            source = isa == [0, 0, 0] and p["KernelLanguage"] == "Source"
            p["MemoryModifierFormat"] = "SC0" if source or isa[:2] in ([9, 4], [9, 5]) else "GLC"
        if p["ForceStoreSC1"] not in (False, True) or p["ForceStoreSC1"] == "Auto":
            p["ForceStoreSC1"] = False
        out["vector_width"] = vw
        # Tensile overwrites this assumption: kernels with VW > 1 need sizes > 1 (3 for assembly, 2 for source)
        p["AssertMinApproxSize"] = (3 if p["KernelLanguage"] == "Assembly" else 2) if vw > 1 else 0

    def _load_widths(self, bpe: int, vw: int) -> dict[str, int]:
        """Each operand's global load width before the DepthU search may reduce it. VALU: GlobalReadVectorWidth,
        -1 meaning VectorWidth. MFMA, as Tensile 4.44: GlobalReadVectorWidth sets both unless -1; then
        GlobalLoadVectorWidthA/B, which 4.44 reads as parameters (a logic file's stored value), -1 or absent
        meaning VectorWidth, at least one register of elements (assembly)."""
        grvw = self.p["GlobalReadVectorWidth"]
        if not self.mfma or grvw != -1:
            return {"A": vw if grvw == -1 else grvw, "B": vw if grvw == -1 else grvw}
        per_reg = max(1, 4 // bpe) if self.p["KernelLanguage"] == "Assembly" else 1
        out = {}
        for tc in "AB":
            stored = self.file_keys.get("GlobalLoadVectorWidth" + tc, -1)
            out[tc] = stored if isinstance(stored, int) and stored > 0 else max(vw, per_reg)
            if out[tc] * bpe > 16:
                self.reject(f"GlobalLoadVectorWidth{tc} {out[tc]} x {bpe} bytes is more than 16 bytes")
        return out

    def _mfma_vector_widths(self, bpe: int, vw: int) -> int:
        """Tensile's MFMA VectorWidth/VectorWidthB rules: VectorWidthB -1 is 2 for 16-bit types (4 for
        8-bit), else 1; a width that does not divide its MIWaveTile side falls back to 1 (VectorWidth with
        SourceSwap is rejected instead); StoreRemapVectorWidth sets both to 1."""
        p = self.p
        wt0, wt1 = self.k["MIWaveTile"]
        if p["VectorWidthB"] < 1:
            p["VectorWidthB"] = max(1, 4 // bpe) if bpe < 4 else 1
        if wt0 % vw:
            if p["SourceSwap"]:
                self.reject(f"MIWaveTile0 {wt0} should be a multiple of VectorWidth {vw} (with SourceSwap)")
            vw = p["VectorWidth"] = 1
        if wt1 % p["VectorWidthB"]:
            p["VectorWidthB"] = 1
        if p["StoreRemapVectorWidth"]:
            vw = p["VectorWidth"] = p["VectorWidthB"] = 1
        return vw

    def _flags(self) -> None:
        p = self.p
        # Tensile 4.44 keeps a source kernel's BufferLoad parameter (named BL1, and the library's
        # BufferLoadOffsetLimitCheck); only assembly kernels load through buffers
        self.buffer_load = bool(p["BufferLoad"]) and p["KernelLanguage"] == "Assembly"
        if p["KernelLanguage"] == "Assembly" and not p["BufferLoad"]:
            p["StaggerU"] = 0   # Tensile 4.44: StaggerU needs BufferLoad in assembly kernels
        if p["ScheduleIterAlg"] == 2:   # Tensile 4.44 forces these with ScheduleIterAlg 2
            p["PrefetchLocalRead"], p["ExpandPointerSwap"] = 1, 1
            if SIA2_KEEPS_1LDSBUFFER not in self.older_rules:   # writers before 4.25 kept two LDS buffers
                p["1LDSBuffer"] = 1
        pgr = bool(p["PrefetchGlobalRead"])
        p["SuppressNoLoadLoop"] = bool(p["SuppressNoLoadLoop"] and self.buffer_load and pgr and p["GlobalSplitU"] == 1)
        p["ExpandPointerSwap"] = bool(p["ExpandPointerSwap"] and self.buffer_load and pgr)
        if p["VectorAtomicWidth"] == -1:
            p["VectorAtomicWidth"] = 2 if self.pt.data_type.char == "H" else 1
        if p["StaggerU"] == 0:   # Tensile 4.44 clears both (named SUM0/SUS0; staggerStrideShift 0)
            p["StaggerUMapping"] = 0
            p["StaggerUStride"] = 0
        wgm = p["WorkGroupMapping"]
        if p["KernelLanguage"] != "Assembly" or p["WorkGroupMappingType"] == "Z":
            wgm = abs(wgm)      # Tensile 4.44: a negative WorkGroupMapping is for assembly block mapping only
        # Tensile 4.44 (SolutionStructs.assignDerivedParameters): assembly kernels drop PersistentKernel with
        # GlobalSplitU or a negative WorkGroupMapping, and PersistentKernelAlongBatch without PersistentKernel
        if p["PersistentKernel"] and p["KernelLanguage"] == "Assembly" and (p["GlobalSplitU"] != 1 or wgm < 0):
            p["PersistentKernel"] = 0
        if p["PersistentKernelAlongBatch"] and (not p["PersistentKernel"] or
                                                (p["KernelLanguage"] == "Source" and p["GlobalSplitU"] != 1)):
            p["PersistentKernelAlongBatch"] = False
        self.out.update(fused_mac=p["MACInstruction"] in ("FMA", ""), persistent_kernel=int(p["PersistentKernel"]),
                        persistent_kernel_along_batch=bool(p["PersistentKernelAlongBatch"]))
        self.out.update(buffer_load=self.buffer_load, buffer_store=bool(p["BufferStore"]),
                        prefetch_global_read=int(p["PrefetchGlobalRead"]),
                        prefetch_local_read=int(p["PrefetchLocalRead"]), stagger_u=p["StaggerU"],
                        stagger_u_mapping=int(p["StaggerUMapping"]),
                        workgroup_mapping=wgm if abs(wgm) > 1 else 1, global_split_u=p["GlobalSplitU"],
                        coalesce_group_a=bool(p["GlobalReadCoalesceGroupA"]),
                        coalesce_group_b=bool(p["GlobalReadCoalesceGroupB"]),
                        wave_separate_a=bool(p["WaveSeparateGlobalReadA"]),
                        wave_separate_b=bool(p["WaveSeparateGlobalReadB"]), wavefront_size=p["WavefrontSize"],
                        direct_to_lds_a=bool(p["DirectToLdsA"]), direct_to_lds_b=bool(p["DirectToLdsB"]))
        self._preload_kernel_arguments()

    def _preload_kernel_arguments(self) -> None:
        """Tensile 4.44's PreloadKernelArguments rules (SolutionStructs.supportsPreloadKernelArguments), but the
        architecture's (gfx940+; the builder's supports() says so): 1 must meet them, -1 is kept for the
        builder to refuse (it would need the architecture), and DelayRemainingArguments needs 1."""
        p, pt = self.p, self.pt
        pka = int(p["PreloadKernelArguments"])
        if pka == 1:
            why = None
            if not pt.strided_batched:
                why = "only with strided batches (StridedBatched true)"
            elif pt.data_type.char not in ("S", "H", "B"):
                why = f"not for data type {pt.data_type.char} (S, H or B only)"
            elif not pt.use_beta:
                why = "only with UseBeta"
            elif pt.use_initial_strides_ab:
                why = "not with UseInitialStridesAB"
            elif abs(p["WorkGroupMapping"]) > 1:
                why = f"not with WorkGroupMapping {p['WorkGroupMapping']}"
            elif not p["PrefetchGlobalRead"]:
                why = "only with PrefetchGlobalRead"
            elif p["EdgeType"] == "ShiftPtr":
                why = "not with EdgeType ShiftPtr"
            elif p["StaggerU"] != 0:
                why = f"not with StaggerU {p['StaggerU']}"
            if why:
                self.reject(f"PreloadKernelArguments 1 is allowed {why}; use PreloadKernelArguments 0")
        if p.get("DelayRemainingArguments") and pka != 1:
            self.reject("DelayRemainingArguments needs PreloadKernelArguments 1")
        self.out.update(preload_kernargs=pka == 1)

    def _write_shape(self, nt: int, mt0: int, mt1: int, lsu: int) -> None:
        p, pt = self.p, self.pt
        if mt0 * mt1 < nt:
            self.reject(f"MacroTile {mt0}x{mt1} has fewer elements than NumThreads {nt}; reduce LocalSplitU")
        nept = mt0 * mt1 // nt
        gwvw = min(p["VectorWidth"], nept)
        if nept % gwvw:
            self.reject(f"NumElementsPerThread {nept} is not a multiple of GlobalWriteVectorWidth {gwvw}")
        self.k.update(NumElementsPerThread=nept, GlobalWriteVectorWidth=gwvw, NumGlobalWriteVectorsPerThread=nept // gwvw)
        self.out.update(num_elements_per_thread=nept, global_write_vector_width=gwvw,
                        num_global_write_vectors_per_thread=nept // gwvw)
        if lsu > 1 and (nt % mt0 or (mt0 * mt1) % nt):
            self.reject(f"LocalSplitU {lsu} needs NumThreads {nt} divisible by MacroTile0 {mt0} and "
                        f"MacroTile0*MacroTile1 {mt0 * mt1} divisible by NumThreads")
        if p["GlobalSplitU"] > 1:
            if not p["GlobalSplitUSummationAssignmentRoundRobin"] and p["LoopTail"]:
                self.reject("GlobalSplitU > 1 with LoopTail needs GlobalSplitUSummationAssignmentRoundRobin true")
            # Tensile 4.44's list: single, 8-bit float, double with BufferStore, int32 C/D, half compute in
            # assembly, any type with a workspace (_GlobalAccumulation), any MFMA kernel
            ok = (pt.data_type.char in ("S", "F8", "B8", "F8B8", "B8F8") or pt.dest_type.char == "I"
                  or (pt.data_type.char == "D" and p["BufferStore"])
                  or (p["KernelLanguage"] == "Assembly" and pt.compute_type.char == "H")
                  or self._accumulation()[0] is not None or self.mfma)
            if not ok:
                self.reject(f"GlobalSplitU > 1 does not support data type {pt.data_type.char} without a workspace "
                            f"(Tensile: single, double, half compute, int32 C/D or MFMA only); use "
                            f"GlobalSplitUAlgorithm MultipleBuffer")

    def _accumulation(self) -> tuple[str | None, int]:
        """Tensile 4.44's _GlobalAccumulation and _WorkspaceSizePerElemC: MultipleBuffer keeps GSU partial tiles
        in a workspace; SingleBuffer needs one only to convert the compute type to a different C/D type (HHS,
        BBS; not int8's I/I); Stream-K with StreamKAtomic 0 keeps partial tiles (PartialsBuffer)."""
        p, pt = self.p, self.pt
        gsu, tc_bytes = p["GlobalSplitU"], pt.compute_type.bytes
        if p["StreamK"] > 0 and p["StreamKAtomic"] == 0:
            return "PartialsBuffer", tc_bytes
        if gsu > 1 and p["GlobalSplitUAlgorithm"] == "MultipleBuffer":
            return "MultipleBuffer", tc_bytes * gsu
        if gsu > 1 and pt.compute_type.char != pt.dest_type.char:
            return "SingleBuffer", tc_bytes
        return None, 0

    def _loop(self, lsu: int) -> None:
        p, k = self.p, self.k
        du = p["DepthU"]
        if du % lsu:
            self.reject(f"DepthU {du} is not divisible by LocalSplitU {lsu}")
        lu = du // lsu // p["InnerUnroll"]
        iters = lu // k["MatrixInstK"] if self.mfma else lu
        k.update(LoopUnroll=lu, LoopIters=iters, _DepthULds=du // p["DepthULdsDivisor"])
        self.out.update(loop_unroll=lu, loop_iters=iters, inner_unroll=p["InnerUnroll"])
        # Tensile rejected LoopUnroll < 2 from 2017 (97e91e79a) until 4.17 (cf8d62936, March 2020); 4.44 only
        # rejects LoopIters < 1 (below). The assembly VALU writer's own limit is a kernel reason (writer/limits.py)
        self._prefetch_local_read(iters)

    def _prefetch_local_read(self, iters: int) -> None:
        """Tensile 4.44's PrefetchLocalRead rules against LoopIters (SolutionStructs.py assignDerivedParameters,
        right after LoopIters is set), in its order. Tensile never benchmarks such a fork, and a logic file naming
        one may make TensileCreateLibrary's kernel writer fail. From a logic file (``from_logic``) Tensile only
        warns about them (``reject`` in TensileCreateLibrary prints "Any rejection of a LibraryLogic is not
        expected") and builds the kernel: rocBLAS ships such solutions (arcturus: PrefetchLocalRead 2 with
        LoopIters 2), so they are read as valid here too."""
        p, k = self.p, self.k
        plr = int(p["PrefetchLocalRead"])
        if iters < 1:
            self.reject(f"LoopIters {iters} is less than 1 (DepthU {p['DepthU']} too small for MatrixInstK "
                        f"{k.get('MatrixInstK', 1)})")
        if self.from_logic:
            return
        if plr >= 2 * iters:
            self.reject(f"PrefetchLocalRead {plr} >= 2x LoopIters {iters}; use PrefetchLocalRead < {2 * iters}")
        if plr % iters > 1:
            self.reject(f"PrefetchLocalRead {plr} % LoopIters {iters} > 1 (Tensile rejects it as low performance); "
                        f"use PrefetchLocalRead 0, 1, {iters} or {iters + 1}")
        if self.mfma and plr > 0:
            mipt = int(k["MIInputPerThread"])
            wlr = int(p["LocalReadVectorWidth"]) // mipt
            if wlr == 0 and mipt * self.pt.data_type.bytes > 16:   # 32-byte operands: 16-byte reads (layout.py)
                wlr = 1
            if wlr == 0:
                self.reject(f"LocalReadVectorWidth {p['LocalReadVectorWidth']} is less than MIInputPerThread {mipt}")
            if iters % wlr:
                self.reject(f"LocalReadVectorWidth {p['LocalReadVectorWidth']} cannot be distributed evenly: LoopIters "
                            f"{iters} is not divisible by LocalReadVectorWidth / MIInputPerThread = {wlr}")
            rest = plr % iters
            if rest and iters - rest * wlr <= 0:
                self.reject(f"PrefetchLocalRead {plr} with LoopIters {iters} and LocalReadVectorWidth "
                            f"{p['LocalReadVectorWidth']}: not enough LoopIters to prefetch {rest}x{wlr} iterations")
            if plr > 1 and rest == 0:
                self.reject(f"PrefetchLocalRead {plr} with LoopIters {iters} (a multiple): Tensile rejects it as "
                            f"low performance")

    def _late(self) -> None:
        p, k, pt = self.p, self.k, self.pt
        gnp = {}
        for tc, tlu, af in (("A", pt.tlu_a, "AssertFree0ElementMultiple"), ("B", pt.tlu_b, "AssertFree1ElementMultiple")):
            gnp[tc] = (p[af] % k["GlobalLoadVectorWidth" + tc] == 0) if tlu else True
            k["GuaranteeNoPartial" + tc] = gnp[tc]
        usf = p["UseSgprForGRO"]
        if not self.buffer_load or (usf and p["EdgeType"] == "ShiftPtr" and not (gnp["A"] and gnp["B"])):
            usf = 0
        if usf == -1:
            loads = sum(k["NumLoadsCoalesced" + tc] * k["NumLoadsPerpendicular" + tc] for tc in "AB")
            usf = 0 if loads > 35 or p["DirectToVgprA"] or p["DirectToVgprB"] else 1   # 4.44: none with DirectToVgpr
        k["_UseSgprForGRO"] = int(usf)
        if not self.mfma:
            for tc in "AB":
                g = k["GlobalLoadVectorWidth" + tc]
                if (not self.buffer_load or not gnp[tc]) and g > 1 and g != p["VectorWidth"]:
                    self.reject(f"GlobalLoadVectorWidth{tc} {g} must equal VectorWidth {p['VectorWidth']} or be 1 "
                                f"(edge shifting)")
        # Tensile 4.44 (assignDerivedParameters): without initial strides the kernel assumes unit stride in the
        # first dimension, set into the solution itself (it shows in kernel names as ASAE01.. where other solutions
        # of the set differ, and becomes the library's StrideXEqual predicates)
        for tc, initial in (("A", pt.use_initial_strides_ab), ("B", pt.use_initial_strides_ab),
                            ("C", pt.use_initial_strides_cd), ("D", pt.use_initial_strides_cd)):
            if not initial:
                p[f"AssertStride{tc}Equal"] = {**p[f"AssertStride{tc}Equal"], 0: 1}
        # Tensile 4.44: the default StoreVectorWidth (named SVW), and GlobalSplitU 1 forced to one spelling
        # ("to eliminate identical/duplicate kernels when GSU=1")
        if p["StoreVectorWidth"] == -1:
            regs = pt.data_type.bytes / 4
            p["StoreVectorWidth"] = p["VectorWidth"] if p["SourceSwap"] else (4 if regs <= 1 else int(4 // regs))
        if p["GlobalSplitU"] == 1:
            p["MinKForGSU"], p["GlobalSplitUAlgorithm"] = 256, "SingleBuffer"
        vs = p["VectorStore"]
        k["_VectorStore"] = (0 if pt.use_initial_strides_cd else 1) if vs == -1 else int(vs)
        ic = "IJKLMNOPQRSTUVWXYZ"
        k.update(PackedC0IdxChars=[ic[pt.index01_a]], PackedC0IndicesX=[pt.index01_a],
                 PackedC1IdxChars=[ic[pt.index01_b]], PackedC1IndicesX=[pt.index01_b])
        acc, ws = self._accumulation()
        k.update(_GlobalAccumulation=acc, _WorkspaceSizePerElemC=ws,
                 LocalWriteUseSgprA=bool(p["DirectToLdsA"]), LocalWriteUseSgprB=bool(p["DirectToLdsB"]))
        self.out.update(guarantee_no_partial_a=gnp["A"], guarantee_no_partial_b=gnp["B"], use_sgpr_for_gro=bool(usf),
                        global_accumulation=acc, assert_summation_multiple=p["AssertSummationElementMultiple"])
