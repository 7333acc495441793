"""The global-load tile (DepthU search, NumLoads, LSC/LSP) and the LDS layout of a solution.

Part of the derivation in ``derive.py`` (Tensile's ``Solution.assignDerivedParameters``): a mixin of its
``_Deriver``, working on the same state (``p`` parameters, ``k`` Tensile-named derived keys, ``out`` the
fields of ``Derived``) and raising ``Reject`` with the one reason a solution is invalid.

The LDS layout is kept as what LDS holds (``LdsTiles``, in elements) and placed for an element size by
``LdsTiles.layout``: at the A/B type's size it gives Tensile's LdsOffset*/LdsNumElements* keys; a writer
that keeps LDS elements wider than A/B's (our VALU writer widens 16-bit inputs to fp32 where that fits) places
it at its own size (``writer_lds_element_bytes``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_LDS_BYTES = 65536
# The most LDS a VALU kernel's fp32 layout of 16-bit A/B may take (``writer_lds_element_bytes``): beyond it they
# stay 16-bit in LDS. The LDS of every architecture Tensile targets (tests lower it to exercise the 16-bit path).
VALU_WIDE_LDS_LIMIT = MAX_LDS_BYTES
MAX_DEPTH_U = 1024


class Reject(Exception):
    pass


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def writer_lds_element_bytes(in_bytes: int, accumulator_bytes: int, mfma: bool, tiles: "LdsTiles | None" = None) -> int:
    """Bytes of one LDS element in our kernels: with MFMA, 8- and 16-bit A/B stay their own size (as in
    Tensile's kernels, so the LDS is Tensile's LdsNumElements x A/B bytes); otherwise (VALU, or 32-bit and wider
    inputs) the accumulator's size (the VALU writer widens 16-bit inputs to fp32 on their way into LDS), except
    where that layout of ``tiles`` would not fit the 64 KiB of LDS: then the VALU writer keeps 16-bit A/B
    16-bit in LDS too (Tensile's size) and widens them after its local reads (writer/local_memory.py)."""
    if mfma and in_bytes < 4:
        return in_bytes
    if (in_bytes == 2 and accumulator_bytes == 4 and tiles is not None
            and tiles.layout(accumulator_bytes).bytes > VALU_WIDE_LDS_LIMIT
            # LocalSplitU's partial sums are fp32 in LDS: the 16-bit layout must still hold them (for HHH Tensile
            # counts them at fp16's size)
            and tiles.layout(in_bytes).bytes >= tiles.reduction_elements * accumulator_bytes):
        return in_bytes
    return accumulator_bytes


LDS_ALIGN_BYTES = 256  # B's tile starts at a 256-byte boundary (Tensile: 64 registers / registers per element)


@dataclass(frozen=True)
class OperandLds:
    """One operand's tile in LDS, as Tensile 4.44 lays it out (KernelWriterAssembly lwaFirstOffset, LocalRead,
    SolutionStructs.getLdsNumElements), in elements: K-major (each K value a row of MacroTile elements) or
    unroll-major (UnrollMajorLDS, TransposeLDS: each tile index a row of DepthU elements). Without
    LdsBlockSizePerPad each row is followed by LdsPad elements; with it the rows are not padded, but the
    element index e of the unpadded tile gets LdsPad more elements every ``interval`` (LdsBlockSizePerPad /
    bytes of A/B): ``e + (e // interval) * pad``."""

    macro_tile: int
    depth: int  # _DepthULds: K values of the tile
    pad: int
    interval: int = 0  # elements between pads; 0: a pad after every row
    unroll_major: bool = False

    @property
    def row_pad(self) -> int:
        return 0 if self.interval else self.pad

    @property
    def stride_tile(self) -> int:
        """Elements between neighbouring tile indices (same K), before the block pads."""
        return self.depth + self.row_pad if self.unroll_major else 1

    @property
    def stride_k(self) -> int:
        """Elements between neighbouring K values (same tile index), before the block pads."""
        return 1 if self.unroll_major else self.macro_tile + self.row_pad

    def unpadded(self, t: int, k: int) -> int:
        return t * self.stride_tile + k * self.stride_k

    def padded(self, e: int) -> int:
        """Element ``e`` of the row-padded tile with the block pads added."""
        return e + (e // self.interval) * self.pad if self.interval and self.pad else e

    def index(self, t: int, k: int) -> int:
        """Element (tile index t, K value k) of the tile."""
        return self.padded(self.unpadded(t, k))

    @property
    def block_padded(self) -> bool:
        return bool(self.interval and self.pad)

    def elements_aligned(self, bpe: int) -> int:
        """``elements`` rounded up to the 256-byte alignment (Tensile's getLdsNumElementsAligned)."""
        align = LDS_ALIGN_BYTES // bpe
        return ceil_div(self.elements, align) * align

    @property
    def elements(self) -> int:
        """The tile's elements, pads included (Tensile's getLdsNumElements)."""
        n = self.macro_tile * self.depth
        per = self.interval or (self.depth if self.unroll_major else self.macro_tile)
        return n + n // per * self.pad

    def splits(self, bases, offsets) -> bool:
        """True if some access at unpadded element base + offset (every pair; numpy arrays or sequences)
        crosses a pad that the base alone and the offset alone do not account for: then
        ``padded(b + o) != padded(b) + padded(o)`` and the offset cannot be an instruction offset."""
        if not self.block_padded:
            return False
        import numpy as np
        b = np.unique(np.asarray(bases, dtype=np.int64) % self.interval)
        o = np.unique(np.asarray(offsets, dtype=np.int64) % self.interval)
        return bool(b.max(initial=0) + o.max(initial=0) >= self.interval)


@dataclass(frozen=True)
class LdsLayout:
    """Where A's and B's tiles sit in LDS when each element takes ``element_bytes``; offsets and sizes are
    in elements of that size. At the A/B type's size these are Tensile's LdsOffset* / LdsNumElements*."""

    element_bytes: int
    aligned_a: int  # A's tile, rounded up to the alignment (B follows it)
    aligned_b: int
    offset_b: int
    offset_a_blk: int | None  # the second (prefetch) buffer, at the next power of two; None without it
    offset_b_blk: int | None
    num_elements: int  # the whole allocation: tiles, the post-loop reduction, the occupancy floor
    buffers: int  # tile buffers the kernel uses: 2 with PrefetchGlobalRead, unless 1LDSBuffer

    @property
    def bytes(self) -> int:
        return self.num_elements * self.element_bytes

    def buffer_offset(self, buffer: int) -> int:
        """First element of tile buffer 0 or 1 (1 is the prefetch buffer; 0 again with a single buffer)."""
        return self.offset_a_blk if buffer and self.buffers == 2 else 0


@dataclass(frozen=True)
class LdsTiles:
    """What LDS holds, in elements (A's and B's tiles per buffer, padding included) and bytes; ``layout``
    places it for an element size: the A/B type's for Tensile's keys, or the writer's own."""

    tile_a: int = 0
    tile_b: int = 0
    double_buffer: bool = False  # PrefetchGlobalRead: a second buffer for the next tile
    one_buffer: bool = False  # 1LDSBuffer: ... but the kernel allocates only one
    reduction_elements: int = 0  # LocalSplitU's partial tiles after the loop (the tiles are dead by then)
    remap_bytes: int = 0  # MFMA StoreRemapVectorWidth: C through LDS
    occupancy_bytes: int = 0  # the least the kernel allocates (MaxOccupancy), in bytes at the A/B type's size
    reduction_bytes: int = 0  # the partial tiles in the compute type's bytes (Tensile's count; the larger wins)

    def layout(self, element_bytes: int) -> LdsLayout:
        """A's tile, B's at the next 256-byte boundary; with PrefetchGlobalRead the second buffer at the next
        power of two (unused with 1LDSBuffer); the whole at least the reduction, remap and occupancy floor."""
        align = LDS_ALIGN_BYTES // element_bytes
        aligned_a, aligned_b = ceil_div(self.tile_a, align) * align, ceil_div(self.tile_b, align) * align
        blk = next_pow2(aligned_a + aligned_b) if self.double_buffer else None
        tiles = aligned_a + self.tile_b if blk is None or self.one_buffer else blk + aligned_a + self.tile_b
        num = max(tiles, self.reduction_elements, ceil_div(self.reduction_bytes, element_bytes),
                  ceil_div(self.remap_bytes, element_bytes),
                  self.occupancy_bytes // element_bytes)
        return LdsLayout(element_bytes, aligned_a, aligned_b, aligned_a, blk, None if blk is None else blk + aligned_a,
                         num, 1 if blk is None or self.one_buffer else 2)


class LayoutMixin:
    """DepthU, global-load tile and LDS layout steps of ``_Deriver``."""

    # ---- DepthU and the global-load tile
    def _wave_separate(self, nt: int) -> None:
        """Tensile 4.44's checks for WaveSeparateGlobalReadA/B (SolutionStructs.checkAndAssignWaveSeparateGlobalRead):
        each wave loads its own contiguous share of the operand's perpendicular dimension (the tile's K values when
        the tile dimension is the unit-stride one, else its tile indices), so that share must split evenly."""
        p, waves = self.p, nt // self.p["WavefrontSize"]
        for tc in "AB":
            if not p["WaveSeparateGlobalRead" + tc]:
                continue
            tlu, mt = (self.pt.tlu_a if tc == "A" else self.pt.tlu_b), self.k["MacroTile" + tc]
            if not waves:   # Tensile 4.44 divides by the number of whole waves (and fails on 0)
                self.reject(f"WaveSeparateGlobalRead{tc} needs at least one whole wave: NumThreads {nt} is less "
                            f"than WavefrontSize {p['WavefrontSize']}")
            if p["FractionalLoad"]:
                self.reject(f"WaveSeparateGlobalRead{tc} is not supported with FractionalLoad {p['FractionalLoad']}")
            if p["LocalDotLayout"] > 1:
                self.reject(f"WaveSeparateGlobalRead{tc} is not supported with LocalDotLayout {p['LocalDotLayout']} > 1")
            if tlu and p["DepthU"] > 0 and p["DepthU"] % waves:
                self.reject(f"WaveSeparateGlobalRead{tc} needs DepthU {p['DepthU']} to be a multiple of the "
                            f"{waves} waves ({tc}'s K values are split among them)")
            if not tlu and mt % waves:
                self.reject(f"WaveSeparateGlobalRead{tc} needs MacroTile{tc} {mt} to be a multiple of the "
                            f"{waves} waves ({tc}'s tile indices are split among them)")

    def _depth_u(self, nt: int, bpe: int) -> None:
        p = self.p
        user = p["DepthU"]
        if user < 0:
            du, last = 2, MAX_DEPTH_U
            waves = nt // p["WavefrontSize"]   # Tensile 4.44 starts the search at the waves for a WSGR K split
            if any(p["WaveSeparateGlobalRead" + tc] and (self.pt.tlu_a if tc == "A" else self.pt.tlu_b)
                   for tc in "AB"):
                du = max(du, waves)
        else:
            du, last = user, user
        while True:
            reason = self._try_depth_u(du, user, nt)
            if reason is None:
                if user < -3:
                    user += 1
                    du *= 2
                    continue
                break
            if du >= last:
                if p["DepthU"] > 0:
                    self.reject(reason)
                rule = {-1: "global reads of width 1 on A and B", -2: "a full GlobalReadVectorWidth read on A or B"}
                self.reject(f"no valid DepthU found for DepthU {p['DepthU']} (the automatic search wants "
                            f"{rule.get(p['DepthU'], 'full GlobalReadVectorWidth reads on A and B')}); "
                            f"set DepthU, e.g. DepthU: 16")
            du += 2
        p["DepthU"] = du
        self.out["depth_u"] = du
        for tc in "AB":
            self._tile_dims(tc, du)
        sus = p["StaggerUStride"]
        shift = max(0, math.ceil(math.log2(sus / (du * bpe)))) if sus > 0 else 0
        self.k["_staggerStrideShift"] = shift
        self.out["stagger_stride_shift"] = shift

    def _operand(self, tc: str, du: int) -> tuple[int, int, int, bool]:
        tlu = self.pt.tlu_a if tc == "A" else self.pt.tlu_b
        mt = self.k["MacroTile" + tc]
        coal, perp = (mt, du) if tlu else (du, mt)
        return mt, coal, perp, tlu

    def _try_depth_u(self, du: int, user: int, nt: int) -> str | None:
        p = self.p
        # Tensile 4.44: the prefetch VGPR index plr[x] must line up at each loop start
        du_lds = du // p["DepthULdsDivisor"]
        iters = du_lds // self.out["local_split_u"] // p["InnerUnroll"] // (self.k["MatrixInstK"] if self.mfma else 1)
        if iters < 1:
            return f"LoopIters is less than 1 at DepthU {du}"
        plr_iters = p["PrefetchLocalRead"] % iters
        if du_lds % (plr_iters + 1):
            return (f"DepthU {du} (per LDS pass {du_lds}) is not a multiple of PrefetchLocalRead % LoopIters + 1 = "
                    f"{plr_iters + 1}")
        for tc in "AB":
            grvw = self.load_widths[tc]
            mt, coal, perp, tlu = self._operand(tc, du)
            total = coal * perp
            if p["FractionalLoad"]:
                if not self._fractional(tc, coal, perp, nt):
                    return f"FractionalLoad found no load tile for {tc} (DepthU {du})"
                continue
            what = (f"NumLoads{tc} is not integral: MacroTile{tc} {mt} x DepthU {du} = {total} elements "
                    f"are not a multiple of NumThreads {nt} x GlobalReadVectorWidth {grvw}")
            if total % grvw:
                return what
            vectors = total // grvw
            if vectors < nt:
                pv = nt // vectors
                if nt % vectors or grvw % pv:
                    return what
            else:
                pv = 1
                if vectors % nt:
                    return what
            self.k["GlobalLoadVectorWidth" + tc] = grvw // pv
            self.k["NumLoads" + tc] = vectors * pv // nt
        glvw = (self.k["GlobalLoadVectorWidthA"], self.k["GlobalLoadVectorWidthB"])
        orig = (self.load_widths["A"], self.load_widths["B"])
        if not p["FractionalLoad"]:
            if user == -1 and glvw != (1, 1):
                return "DepthU -1 needs GlobalLoadVectorWidth 1 for A and B"
            if user == -2 and glvw[0] < orig[0] and glvw[1] < orig[1]:
                return "DepthU -2 needs a full GlobalReadVectorWidth load on A or B"
            if user <= -3 and (glvw[0] < orig[0] or glvw[1] < orig[1]):
                return f"DepthU {user} needs full GlobalReadVectorWidth loads on A and B"
        for tc, g in zip("AB", glvw):
            if not (self.pt.tlu_a if tc == "A" else self.pt.tlu_b) and du < g:
                return f"DepthU {du} is smaller than GlobalLoadVectorWidth{tc} {g}"
        return None

    def _fractional(self, tc: str, par: int, perp: int, nt: int) -> bool:
        """Tensile's fractional load tile: rows of LSC elements, the last load may be partial."""
        grvw = self.load_widths[tc]
        min_grvw = 2 if self.pt.data_type.bytes == 2 else 1
        best, lsc, lsp = -1, 0, 0
        while grvw >= min_grvw:
            per_inst = nt * grvw
            lsc, lsp = (per_inst, 1) if par >= per_inst else (par, min(perp, per_inst // par))
            if lsc % grvw == 0:
                best, valid = grvw, lsc * lsp
                grvw //= 2
                while grvw >= min_grvw and nt * grvw >= valid:
                    if lsc % grvw == 0:
                        best = grvw
                    grvw //= 2
                break
            grvw //= 2
        if best == -1:
            return False
        self.k.update({"GlobalLoadVectorWidth" + tc: best, "LSC" + tc: lsc, "LSP" + tc: lsp,
                       "NumLoadsCoalesced" + tc: ceil_div(par, lsc), "NumLoadsPerpendicular" + tc: ceil_div(perp, lsp),
                       "fractionalPerpOverhang" + tc: perp % lsp})
        self.k["NumLoads" + tc] = self.k["NumLoadsCoalesced" + tc] * self.k["NumLoadsPerpendicular" + tc]
        return True

    def _tile_dims(self, tc: str, du: int) -> None:
        p, k = self.p, self.k
        mt, coal, perp, tlu = self._operand(tc, du)
        if not p["FractionalLoad"]:
            nl = k["NumLoads" + tc]
            # Tensile 4.44: totalVectorsCoalesced at the (possibly reduced) load width (MFMA; VALU as before)
            tvc = coal // (k["GlobalLoadVectorWidth" + tc] if self.mfma else p["GlobalReadVectorWidth"])
            want = p["NumLoadsCoalesced" + tc]
            waves = max(1, self.out["num_threads"] // p["WavefrontSize"])
            if p["WaveSeparateGlobalRead" + tc]:   # each wave splits its own perpendicular share (Tensile 4.44)
                perp = ceil_div(perp, waves)
            if want in (1, -1):
                order = range(1, nl + 1) if want == 1 else range(nl, 0, -1)
                found = [c for c in order if nl % c == 0 and tvc % c == 0 and perp % (nl // c) == 0]
                if not found:
                    self.reject(f"{tc}: no NumLoadsCoalesced{tc} splits its {nl} loads per thread")
                nlc = found[0]
            else:
                nlc = want
                if nlc > nl or nl % nlc or tvc % nlc or perp % (nl // nlc):
                    self.reject(f"NumLoadsCoalesced{tc} {nlc} does not split {tc}'s {nl} loads per thread "
                                f"({tvc} vectors along the coalesced dimension, {perp} elements across)")
            nlp = nl // nlc
            lsc, lsp = (mt // nlc, ceil_div(du, nlp)) if tlu else (ceil_div(du, nlc), mt // nlp)
            if p["WaveSeparateGlobalRead" + tc]:
                lsp = ceil_div(lsp, waves)
            k.update({"NumLoadsCoalesced" + tc: nlc, "NumLoadsPerpendicular" + tc: nlp, "LSC" + tc: lsc, "LSP" + tc: lsp})
        g = k["GlobalLoadVectorWidth" + tc]
        k["LVC" + tc] = ceil_div(k["LSC" + tc], g)
        k["LVP" + tc] = ceil_div(k["LSP" + tc], g)
        low = tc.lower()
        self._thread_separate(tc)
        self.out.update({f"glvw_{low}": g, f"num_loads_{low}": k["NumLoads" + tc],
                         f"num_loads_coalesced_{low}": k["NumLoadsCoalesced" + tc],
                         f"num_loads_perpendicular_{low}": k["NumLoadsPerpendicular" + tc],
                         f"lsc_{low}": k["LSC" + tc], f"lsp_{low}": k["LSP" + tc]})

    def _thread_separate(self, tc: str) -> None:
        """Tensile 4.44's checks for ThreadSeparateGlobalReadA/B without DirectToLds (SolutionStructs, "equivalent
        to previous SplitGlobalRead"): 2 x it groups of lanes split a row of LVC vectors (GlobalReadCoalesceGroup,
        GlobalReadCoalesceVector: the divisor LVC), so 2 x it must be less than LVC and LVC at most a wave;
        DirectToVgpr sets it to 0."""
        p, k = self.p, self.k
        tsgr = p["ThreadSeparateGlobalRead" + tc]
        self.out[f"thread_separate_{tc.lower()}"] = tsgr
        if not tsgr or (p["DirectToLds" + tc] and not (self.pt.tlu_a if tc == "A" else self.pt.tlu_b)):
            return
        divisor = k["LVC" + tc] if p["GlobalReadCoalesceGroup" + tc] else k["LVP" + tc]
        if 2 * tsgr >= divisor:
            self.reject(f"ThreadSeparateGlobalRead{tc} {tsgr}: 2 x it must be less than the {divisor} vectors a row of "
                        f"threads loads (LVC{tc})")
        if divisor > p["WavefrontSize"]:
            self.reject(f"ThreadSeparateGlobalRead{tc} needs a row of threads within a wave: LVC{tc} {divisor} is more "
                        f"than WavefrontSize {p['WavefrontSize']}")
        if p["DirectToVgpr" + tc]:
            p["ThreadSeparateGlobalRead" + tc] = 0
        self.out[f"thread_separate_{tc.lower()}"] = int(p["ThreadSeparateGlobalRead" + tc])

    # ---- StoreRemapVectorWidth (MFMA: C remapped through LDS for wider stores)
    def _store_remap(self, bpe: int, mt0: int) -> int:
        """Tensile 4.44's StoreRemapVectorWidth rules (SolutionStructs): -1 picks 8 bytes per store (at least
        MT0 / wavefront) unless MT0 is not a power of two, the remap does not fit LDS, SourceSwap, GlobalSplitU
        without MultipleBuffer or MFMA 4x4 blocks along N; an explicit value is checked the same way. Returns the
        bytes of LDS the remap needs: (MT0 + pad) x MatrixInstN x MIWaveGroup[1] values, counted as Tensile
        does in A/B elements scaled by the written type (the workspace's compute type with GlobalSplitU
        MultipleBuffer, else C/D's when wider than A/B)."""
        p, k, pt = self.p, self.k, self.pt
        n, wg0, wg1 = k["MatrixInstN"], k["MIWaveGroup"][0], k["MIWaveGroup"][1]
        wave, dest = p["WavefrontSize"], pt.dest_type.bytes
        acc = self._accumulation()[0]
        atomic_gsu = p["GlobalSplitU"] > 1 and acc != "MultipleBuffer"
        mi4_bn = k["MatrixInstBN"] > 1 and n == 4
        pow2 = mt0 & (mt0 - 1) == 0
        if p["StoreRemapVectorWidth"] == -1:
            vw = max(8 // dest, mt0 // wave)
            elems = (mt0 + max(vw, k["MIOutputVectorWidth"])) * n * wg1
            size = elems * (pt.compute_type.bytes / dest if acc else 1) * dest
            fits = size <= MAX_LDS_BYTES
            p["StoreRemapVectorWidth"] = 0 if (not pow2 or not fits or p["SourceSwap"] or atomic_gsu or mi4_bn) else vw
        srvw = self.out["store_remap"] = p["StoreRemapVectorWidth"]
        if not srvw:
            return 0
        if p["SourceSwap"]:
            self.reject("SourceSwap is not compatible with StoreRemapVectorWidth")
        if not p["BufferStore"]:
            self.reject("StoreRemapVectorWidth needs BufferStore")
        if atomic_gsu:
            self.reject("StoreRemapVectorWidth does not support GlobalSplitU > 1 except with GlobalSplitUAlgorithm "
                        "MultipleBuffer")
        if mi4_bn:
            self.reject("StoreRemapVectorWidth does not support MFMA 4x4 blocks along N (MatrixInstBN > 1)")
        if not pow2:
            self.reject(f"StoreRemapVectorWidth needs a power-of-two MacroTile0, not {mt0}")
        regs = (pt.compute_type.bytes if acc else dest) / 4
        lo, hi = max(1, int(1 / (dest / 4))), int(4 / regs)
        if not lo <= srvw <= hi:
            self.reject(f"StoreRemapVectorWidth {srvw} is not allowed for this data type ({lo}..{hi})")
        if srvw * wave < mt0:
            self.reject(f"StoreRemapVectorWidth {srvw}: one store per wave does not cover a column of MacroTile0 "
                        f"{mt0}; use a larger StoreRemapVectorWidth")
        if mt0 * n // wg0 < srvw * wave:
            self.reject(f"StoreRemapVectorWidth {srvw}: the remapped block has fewer elements than one read of "
                        f"each lane of a wave; use a smaller StoreRemapVectorWidth")
        if acc:
            scale = pt.compute_type.bytes // bpe
        elif dest > bpe:
            scale = dest // bpe
        else:
            scale = 1
        return (mt0 + max(srvw, k["MIOutputVectorWidth"])) * n * wg1 * scale * bpe

    # ---- LDS layout
    def _unroll_major(self) -> None:
        """Tensile 4.44: TransposeLDS (any non-zero value, -1 included) makes the operand whose unit-stride
        dimension is K (not TLU) unroll-major in LDS; VALU kernels have no unroll-major LDS."""
        p = self.p
        for tc in "AB":
            tlu = self.pt.tlu_a if tc == "A" else self.pt.tlu_b
            p["UnrollMajorLDS" + tc] = bool((p["TransposeLDS"] and not tlu) or p["UnrollMajorLDS" + tc])
        if self.mfma:
            mipt = self.k["MIInputPerThread"]
            lrvw = p["LocalReadVectorWidth"]
            # (hipBLASLt: an operand of more than 16 bytes, gfx950's 8-bit f8f6f4 shapes, is read 16 bytes at a time)
            if lrvw < mipt and not (mipt * self.pt.data_type.bytes > 16 and lrvw * self.pt.data_type.bytes == 16):
                self.reject(f"LocalReadVectorWidth {lrvw} is less than MIInputPerThread {mipt}")
            if lrvw > mipt and not (p["UnrollMajorLDSA"] or p["UnrollMajorLDSB"]):
                self.reject(f"LocalReadVectorWidth {lrvw} > MIInputPerThread {mipt} needs an unroll-major LDS "
                            f"operand (TransposeLDS or UnrollMajorLDSA/B)")
            if lrvw * self.pt.data_type.bytes > 16:
                self.reject(f"LocalReadVectorWidth {lrvw} reads more than 16 bytes per LDS read")

    def _lds_padding(self, bpe: int, du_lds: int) -> dict[str, bool]:
        """Tensile 4.44's ldsPaddingAuto: resolve LdsPad -1 and LdsBlockSizePerPad -1, clear a block size
        that the tile cannot use (row length not a power of two, no pad), reject a block shorter than a row."""
        p, k = self.p, self.k
        auto = {}
        for tc in "AB":
            tlu = self.pt.tlu_a if tc == "A" else self.pt.tlu_b
            um = p["UnrollMajorLDS" + tc]
            vw = p["VectorWidth"] if tc == "A" else p["VectorWidthB"]
            auto_block = p["LdsBlockSizePerPad" + tc] == -1
            if auto_block:
                p["LdsBlockSizePerPad" + tc] = 0
            auto[tc] = auto_pad = p["LdsPad" + tc] == -1
            if auto_pad:
                p["LdsPad" + tc] = 0 if tlu and not um else vw
            if not self.mfma:
                if um:
                    self.reject(f"UnrollMajorLDS{tc} (or TransposeLDS) needs MatrixInstruction (Tensile has no "
                                f"unroll-major LDS for VALU kernels)")
                if p["LdsBlockSizePerPad" + tc]:
                    self.reject(f"LdsBlockSizePerPad{tc} needs MatrixInstruction (Tensile has no block padding for "
                                f"VALU kernels)")
            else:
                line = du_lds if um else k["MacroTile" + tc]
                stride = line * vw if um else (line * p["LocalReadVectorWidth"] if k["MIInputPerThread"] > 1 else 0)
                if line <= 0 or line & (line - 1):
                    stride = 0
                    p["LdsBlockSizePerPad" + tc] = 0
                if auto_block and stride > 0:
                    p["LdsBlockSizePerPad" + tc] = max(next_pow2(stride * bpe), 128)
                block = p["LdsBlockSizePerPad" + tc]
                if block and block < line:
                    self.reject(f"LdsBlockSizePerPad{tc} {block} is less than the LDS row of {tc}, "
                                f"{'DepthU' if um else 'MacroTile'} {line}")
                if auto_pad:
                    p["LdsPad" + tc] = self._auto_pad(tc, um, vw, stride, du_lds, bpe)
            if p["DirectToVgpr" + tc]:
                p["LdsPad" + tc] = 0
            if p["LdsPad" + tc] == 0:
                p["LdsBlockSizePerPad" + tc] = 0
        return auto

    def _auto_pad(self, tc: str, um: bool, vw: int, stride: int, du_lds: int, bpe: int) -> int:
        """Tensile 4.44's automatic MFMA LdsPad: keep the local reads of neighbouring rows off each other's
        banks (32 banks of 4 bytes)."""
        p, k = self.p, self.k
        banks, line_elems = 32, 128 // bpe
        mi_width = k["MatrixInstM"] * k["MatrixInstBM"] if tc == "A" else k["MatrixInstN"] * k["MatrixInstBN"]
        if tc == "B" and k["MatrixInstBM"] > 1:
            mi_width = k["MatrixInstN"]
        pad = p["LdsPad" + tc]
        if not um:
            extra = (mi_width * vw) % line_elems if mi_width < banks and mi_width * vw < line_elems else 0
            if extra:
                pad = (line_elems + extra - stride % line_elems) % line_elems
            return 0 if p["DirectToLds" + tc] else pad
        lrvw = p["LocalReadVectorWidth"]
        read_regs = lrvw * bpe // 4
        opt = lrvw * (banks // mi_width) if mi_width < banks and read_regs in (1, 4) else lrvw
        opt = max(k["GlobalLoadVectorWidth" + tc], opt)
        if du_lds > 0 and du_lds & (du_lds - 1):
            extra_du = (ceil_div(line_elems, du_lds) * du_lds) % line_elems
            opt = min((extra_du + opt) % line_elems, (extra_du - opt) % line_elems)
        return 0 if p["DirectToLds" + tc] else opt

    def _operand_tiles(self, bpe: int, du_lds: int) -> dict[str, "OperandLds"]:
        p, k = self.p, self.k
        return {tc: OperandLds(k["MacroTile" + tc], du_lds, p["LdsPad" + tc],
                               p["LdsBlockSizePerPad" + tc] // bpe if p["LdsBlockSizePerPad" + tc] else 0,
                               bool(p["UnrollMajorLDS" + tc])) for tc in "AB"}

    def _lds(self, bpe: int, mt0: int, mt1: int, lsu: int) -> None:
        p, k, out = self.p, self.k, self.out
        du_lds = p["DepthU"] // p["DepthULdsDivisor"]
        self._unroll_major()
        auto = self._lds_padding(bpe, du_lds)
        tiles = self._operand_tiles(bpe, du_lds)
        # Tensile 4.44: an automatic pad that makes both buffers overflow LDS is dropped, K-major operands first
        for um in (False, True):
            for tc in "AB":
                ab = tiles["A"].elements_aligned(bpe) + tiles["B"].elements
                if p["1LDSBuffer"] != 1:
                    ab *= 2
                if auto[tc] and ab * bpe > MAX_LDS_BYTES and bool(p["UnrollMajorLDS" + tc]) == um:
                    p["LdsPad" + tc] = p["LdsBlockSizePerPad" + tc] = 0
                    tiles = self._operand_tiles(bpe, du_lds)
        for tc in "AB":
            out["lds_pad_" + tc.lower()] = p["LdsPad" + tc]
            out["lds_" + tc.lower()] = tiles[tc]
        sizes = {tc: 0 if p["DirectToVgpr" + tc] else tiles[tc].elements for tc in "AB"}
        if not self.mfma and p["SourceSwap"]:
            self.reject("SourceSwap only applies to MatrixInstruction kernels")
        if not self.mfma and p["StoreRemapVectorWidth"] > 0:
            self.reject("StoreRemapVectorWidth only applies to MatrixInstruction kernels")
        remap = self._store_remap(bpe, mt0) if self.mfma else 0
        # Tensile counts the occupancy floor, 64 KiB / MaxOccupancy, in elements of the C/D type, then uses that
        # count as A/B elements (SolutionStructs: ldsNumElementsOccupancy = ldsSizeOccupancy // DestDataType bytes)
        occupancy = MAX_LDS_BYTES // p["MaxOccupancy"] // self.pt.dest_type.bytes * bpe
        # LocalSplitU's partial tiles: one element each, and compute-type values (Tensile counts compute bytes //
        # A/B bytes A/B elements each: 2 for BBS/HHS, 4 for int8)
        reduction = lsu * mt0 * mt1 if lsu > 1 else 0
        out["lds"] = tiles = LdsTiles(sizes["A"], sizes["B"], bool(p["PrefetchGlobalRead"]), p["1LDSBuffer"] == 1,
                                      reduction, remap, occupancy, reduction * self.pt.compute_type.bytes)
        lay = tiles.layout(bpe)
        k.update(LdsOffsetA=0, LdsOffsetB=lay.offset_b)
        if lay.offset_a_blk is not None:
            k.update(LdsNumElementsAlignedA=lay.aligned_a, LdsNumElementsAlignedB=lay.aligned_b,
                     LdsOffsetA_Blk=lay.offset_a_blk, LdsOffsetB_Blk=lay.offset_b_blk)
        k["LdsNumElements"] = lay.num_elements
        if lay.bytes > MAX_LDS_BYTES:
            self.reject(f"the kernel needs {lay.bytes} bytes of LDS, more than {MAX_LDS_BYTES} (64 KiB); "
                        f"reduce MacroTile or DepthU")
