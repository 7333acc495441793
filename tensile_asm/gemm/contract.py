"""What a caller needs to launch one generated GEMM kernel, and nothing about how it was written.

``GemmKernelContract.from_solution(solution, name)`` reads a solution's derived values;
``GemmKernelContract.from_library_entry(entry)`` reads a solution entry of ``TensileLibrary.yaml``/``.dat``
(its ``problemType`` and ``sizeMapping``), so a kernel of a library built earlier launches from the
library files alone, as rocBLAS launches Tensile's. ``launches(...)`` gives the ordered kernel launches
for one problem: the GEMM and the GlobalSplitU helper it needs (beta-only first for SingleBuffer,
post-GSU after it for MultipleBuffer), each with its grid, block and argument values.

A pointer-array batched kernel (``pointer_array``: ProblemType StridedBatched false, ``_GB`` logic) takes
the addresses of per-batch pointer arrays and element offsets (``tensile_asm.gemm.arguments``); such a
kernel with GlobalSplitU > 1 or PersistentKernel is not launched (its helper kernels and tile walk take
strided batches).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Mapping

from tensile_asm.errors import UserError
from tensile_asm.gemm import helpers
from tensile_asm.gemm.arguments import (Argument, argument_layout, argument_values, pack_arguments,
                                        persistent_values, stagger_u_iterations)
from tensile_asm.gemm.helpers import Workspace
from tensile_asm.problem import HPA_TYPES, HYBRID_TYPES, ProblemType, data_type
from tensile_asm.solution.layout import writer_lds_element_bytes

SINGLE_BUFFER, MULTIPLE_BUFFER = "SingleBuffer", "MultipleBuffer"
# sizeMapping.globalAccumulation as Tensile's Contractions.SizeMapping writes it (3, PartialsBuffer, is not ours)
_ACCUMULATION = {0: SINGLE_BUFFER, 1: SINGLE_BUFFER, 2: MULTIPLE_BUFFER}


@dataclass(frozen=True)
class Launch:
    """One kernel launch: ``grid`` in work-groups, ``block`` in work-items, ``values`` by argument name
    (addresses are whatever the caller passed: device pointers, or buffers an emulator places)."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    layout: tuple[Argument, ...]
    values: Mapping[str, Any] = field(repr=False)

    def arguments(self) -> list:
        """The argument values in kernarg order."""
        return [self.values[a.name] for a in self.layout]

    def kernarg(self) -> bytes:
        """The kernarg segment, for integer addresses."""
        return pack_arguments(list(self.layout), dict(self.values))


def _workgroup_mapping(value: int) -> int:
    """A library's workGroupMapping as the kernel takes it: 0, 1 and -1 all mean none (Tensile 4.44 turns -1
    into 1); any other value, negative ones included, gives the kernel its three mapping arguments."""
    return value if abs(value) > 1 else 1


def accumulator_bytes(data_type_char: str) -> int:
    """Bytes of one accumulator: fp64 for D inputs, a complex pair for C (fp32) and Z (fp64), otherwise fp32
    (16-bit inputs accumulate in fp32)."""
    return {"D": 8, "C": 8, "Z": 16}.get(data_type_char, 4)


@dataclass(frozen=True)
class GemmKernelContract:
    name: str
    transpose_a: bool
    transpose_b: bool
    batched: bool
    use_beta: bool
    data_type: str            # A and B: S, D, H or B
    dest_type: str            # C and D
    compute_type: str         # alpha and beta
    macro_tile: tuple[int, int]
    threads: int              # work-items per work-group (WorkGroup0 * WorkGroup1 * LocalSplitU)
    global_split_u: int = 1
    global_split_u_algorithm: str = SINGLE_BUFFER
    workgroup_mapping: int = 1    # WorkGroupMapping W: blocks of W tiles along dim 1 (W > 1); W < -1 as Tensile 4.44
    lds_bytes: int | None = None   # None: not in a library entry (the code object's descriptor has it)
    # StaggerU, DepthU, StaggerStrideShift: for OrigStaggerUIter as Tensile's host computes it (our kernels
    # stagger by their built-in StaggerU and ignore it; 0 passes 0)
    stagger_u: int = 0
    depth_u: int = 0
    stagger_stride_shift: int = 0
    # PersistentKernel P: a grid of min(P * CUs, tiles) work-groups, each looping over tiles (P -1: the host
    # picks P from the tiles per CU, as Tensile's); along_batch: the batch joins the tile walk
    persistent_kernel: int = 0
    persistent_kernel_along_batch: bool = False
    pointer_array: bool = False    # StridedBatched false: Address* point to arrays of per-batch pointers
    # complex types: A / B enter the product conjugated (ComplexConjugateA/B, the ``AlikC``/``BjlkC`` forms)
    conjugate_a: bool = False
    conjugate_b: bool = False
    # UseInitialStridesAB / CD: the first index's stride of A and B / of C and D is an argument (InitialStride<X>)
    initial_strides_ab: bool = False
    initial_strides_cd: bool = False
    # GlobalSplitU SingleBuffer into a compute-type workspace (sizeMapping.globalAccumulation 1, Tensile's
    # _GlobalAccumulation SingleBuffer: C/D other than the compute type)
    global_accumulation: bool = False
    # PreloadKernelArguments 1 (sizeMapping.preloadKernargs): the arguments in their preloading order
    # (gemm.arguments.PRELOADED first)
    preload_kernargs: bool = False
    # F32XdlMathOp XFloat32 (gfx942's xf32 MFMAs, S problems only): the MFMA rounds the fp32 A/B values to xf32
    # before multiplying (results are compared with reference.XF32_ROUNDOFF allowed on each input)
    xf32: bool = False
    # KernelLanguage: Source (sizeMapping.sourceKernel): the arguments Tensile's host passes a source kernel
    # (gemm.arguments: no Tensor2dSizeA/B, a half alpha/beta once, no WorkGroupMapping arguments)
    source_kernel: bool = False

    # ---- constructors
    @classmethod
    def from_solution(cls, solution, name: str) -> "GemmKernelContract":
        d, pt = solution.derived, solution.problem_type
        algorithm = MULTIPLE_BUFFER if d.global_accumulation == MULTIPLE_BUFFER else SINGLE_BUFFER
        # LDS holds A/B-size elements with MFMA, else accumulator-size ones (VALU widens 16-bit inputs to fp32
        # where that fits)
        lds = d.lds.layout(writer_lds_element_bytes(pt.data_type.bytes, accumulator_bytes(pt.data_type.char),
                                                    d.is_mfma, d.lds)).bytes
        return cls(name=name, transpose_a=pt.transpose_a, transpose_b=pt.transpose_b, batched=pt.batched,
                   use_beta=pt.use_beta, data_type=pt.data_type.char, dest_type=pt.dest_type.char,
                   compute_type=pt.compute_type.char, macro_tile=(d.mt0, d.mt1), threads=d.num_threads,
                   global_split_u=d.global_split_u, global_split_u_algorithm=algorithm,
                   workgroup_mapping=d.workgroup_mapping, lds_bytes=lds, stagger_u=d.stagger_u,
                   depth_u=d.depth_u, stagger_stride_shift=d.stagger_stride_shift,
                   persistent_kernel=d.persistent_kernel,
                   persistent_kernel_along_batch=d.persistent_kernel_along_batch,
                   pointer_array=pt.batched and not pt.strided_batched,
                   conjugate_a=pt.complex_conjugate_a, conjugate_b=pt.complex_conjugate_b,
                   initial_strides_ab=pt.use_initial_strides_ab, initial_strides_cd=pt.use_initial_strides_cd,
                   preload_kernargs=d.preload_kernargs,
                   xf32=pt.data_type.char == "S" and getattr(pt.f32_xdl_math_op, "char", None) == "X",
                   global_accumulation=d.global_split_u > 1 and d.global_accumulation == SINGLE_BUFFER,
                   source_kernel=solution.params.get("KernelLanguage") == "Source")

    @classmethod
    def from_library_entry(cls, entry: Mapping[str, Any]) -> "GemmKernelContract":
        """From one ``solutions`` entry of a master library (``tensile_asm.library.master.solution_entry``)."""
        name = entry.get("name", "?")
        try:
            pt, sm = entry["problemType"], entry["sizeMapping"]
            a, b, dest = (data_type(pt[k]).char for k in ("aType", "bType", "dType"))
            a = next((h for h, halves in HYBRID_TYPES.items() if halves == (a, b)), a)  # F8 A, B8 B: F8B8
            # Tensile's library has no compute type: with high-precision accumulation it is the one Tensile
            # pairs with these A/B and D types (fp32 for 16-bit and 8-bit float inputs, int32 for int8)
            hpa = [c for ab, d, c in HPA_TYPES if (ab, d) == (a, dest)] if pt["highPrecisionAccumulate"] else []
            compute = hpa[0] if hpa else dest
            ta, tb, batched, conj_a, conj_b = _transposes(pt["operationIdentifier"], name)
            wg, mt = sm["workGroup"], sm["macroTile"]
            gsu = int(sm["globalSplitU"])
            accumulation = _ACCUMULATION.get(int(sm.get("globalAccumulation", 0)))
            # a source kernel (sourceKernel) takes fewer arguments (source_kernel); Tensile's host passes it no
            # PersistentKernel arguments, which ours would need
            unsupported = [k for k in ("streamK",) if sm.get(k)]
            if sm.get("sourceKernel") and int(sm.get("persistentKernel", 0) or 0):
                unsupported.append("persistentKernel with sourceKernel")
            persistent = int(sm.get("persistentKernel", 0) or 0)
            along_batch = bool(sm.get("persistentKernelAlongBatch", False)) and persistent != 0
            pointer_array = not bool(pt.get("stridedBatched", True))
            xdl = data_type(pt.get("f32XdlMathOp", "Float")).char
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise UserError(f"library solution {name}: its problemType/sizeMapping lack or garble {e}; "
                            f"rebuild the library with tensile-create-library") from None
        if pointer_array and not batched:
            raise UserError(f"library solution {name}: stridedBatched is false but {pt['operationIdentifier']} "
                            f"has no batch index; rebuild the library with tensile-create-library")
        if pointer_array and along_batch:
            unsupported.append("persistentKernelAlongBatch with pointer-array batches (stridedBatched false)")
        if accumulation is None or unsupported:
            what = ", ".join(unsupported) or f"globalAccumulation {sm.get('globalAccumulation')}"
            raise UserError(f"library solution {name}: {what} is not launched by this runtime")
        return cls(name=name, transpose_a=ta, transpose_b=tb, batched=batched, use_beta=bool(pt["useBeta"]),
                   data_type=a, dest_type=dest, compute_type=compute, macro_tile=(int(mt[0]), int(mt[1])),
                   threads=int(wg[0]) * int(wg[1]) * int(wg[2]), global_split_u=gsu,
                   global_split_u_algorithm=accumulation if gsu > 1 else SINGLE_BUFFER,
                   workgroup_mapping=_workgroup_mapping(int(sm.get("workGroupMapping", 1))),
                   stagger_u=int(sm.get("staggerU", 0)), depth_u=int(sm.get("depthU", 0)),
                   stagger_stride_shift=int(sm.get("staggerStrideShift", 0)), persistent_kernel=persistent,
                   persistent_kernel_along_batch=along_batch, pointer_array=pointer_array,
                   conjugate_a=conj_a, conjugate_b=conj_b,
                   initial_strides_ab=bool(pt.get("useInitialStridesAB", False)),
                   initial_strides_cd=bool(pt.get("useInitialStridesCD", False)),
                   preload_kernargs=bool(sm.get("preloadKernargs", 0)),
                   xf32=a == "S" and xdl == "X",
                   global_accumulation=gsu > 1 and int(sm.get("globalAccumulation", 0) or 0) == 1,
                   source_kernel=bool(sm.get("sourceKernel", False)))

    # ---- facts
    @property
    def accumulator_bytes(self) -> int:
        return accumulator_bytes(self.data_type)

    @property
    def writes_workspace(self) -> bool:
        """GlobalSplitU MultipleBuffer: the GEMM writes partial tiles to a workspace, not to D."""
        return self.global_split_u > 1 and self.global_split_u_algorithm == MULTIPLE_BUFFER

    @property
    def workspace_single(self) -> bool:
        """GlobalSplitU SingleBuffer into a compute-type workspace: beta-only into it, the GEMM's atomics, then
        the conversion to D (``helpers``)."""
        return self.global_split_u > 1 and self.global_accumulation and not self.writes_workspace

    @property
    def block(self) -> tuple[int, int, int]:
        return (self.threads, 1, 1)

    def layout(self) -> list[Argument]:
        return argument_layout(self.batched, self.use_beta, self.compute_type, stagger_u=self.stagger_u > 0,
                               workgroup_mapping=abs(self.workgroup_mapping) > 1, persistent=self.persistent_kernel != 0,
                               persistent_along_batch=self.persistent_kernel_along_batch,
                               pointer_array=self.pointer_array, initial_strides_ab=self.initial_strides_ab,
                               initial_strides_cd=self.initial_strides_cd, preload=self.preload_kernargs,
                               source_kernel=self.source_kernel)

    @property
    def accumulation(self) -> int:
        """Tensile's sizeMapping.globalAccumulation: 0, 1 (SingleBuffer into a compute-type workspace) or 2
        (MultipleBuffer)."""
        return (helpers.MULTIPLE_BUFFER if self.writes_workspace else
                helpers.SINGLE_BUFFER if self.workspace_single else 0)

    def helper_kernels(self) -> list[helpers.Helper]:
        """Every helper kernel Tensile's generator builds beside this one (so the library holds the one its host
        asks for): the beta-only kernel (SingleBuffer, _GA) and the conversion variants (_GA, MultipleBuffer)."""
        if self.global_split_u == 1:
            return []
        out = []
        if not self.writes_workspace:
            ga = self.workspace_single
            out.append(helpers.Helper(helpers.beta_only_name(self.batched, self.dest_type, self.pointer_array,
                                                             workspace=ga), workspace=ga))
        if self.accumulation:
            out += [helpers.Helper(v.name(self.batched, self.dest_type, self.pointer_array), v)
                    for v in helpers.conversion_variants(self.compute_type, self.accumulation, self.global_split_u)]
        return out

    def helper_names(self) -> list[str]:
        """The names of ``helper_kernels``."""
        return [h.name for h in self.helper_kernels()]

    def helper_name(self) -> str | None:
        """The first of ``helper_names`` (None for GlobalSplitU 1)."""
        names = self.helper_names()
        return names[0] if names else None

    def batch_count(self, batch: int) -> int:
        """The batch the kernel runs: ``batch``, or 1 for a kernel of a non-batched problem type."""
        if not self.batched and batch != 1:
            raise UserError(f"kernel {self.name} is not batched, so batch must be 1, not {batch}")
        return batch

    def grid(self, m: int, n: int, batch: int = 1, cu_count: int | None = None) -> tuple[int, int, int]:
        """The GEMM's work-groups: macro tiles of D, times GlobalSplitU along dimension 1. A persistent
        kernel's grid is Tensile's host's (ContractionSolution.cpp): min(P * CUs, tiles) work-groups along x
        (tiles: of one batch, or of all with PersistentKernelAlongBatch), the batch along z or 1; P -1 is
        max(1, 5 * (tiles / CUs) / 8). ``cu_count``: the device's compute units (needed then)."""
        tiles0, tiles1 = -(-m // self.macro_tile[0]), -(-n // self.macro_tile[1])
        batch = self.batch_count(batch)
        if not self.persistent_kernel:
            return tiles0, tiles1 * self.global_split_u, batch
        if not cu_count or cu_count < 1:
            raise UserError(f"kernel {self.name} is a persistent kernel (PersistentKernel "
                            f"{self.persistent_kernel}): its grid needs the device's compute-unit count")
        groups = tiles0 * tiles1 * self.global_split_u
        z = batch
        if self.persistent_kernel_along_batch:
            groups, z = groups * batch, 1
        per_cu = self.persistent_kernel if self.persistent_kernel > 0 else max(1, 5 * (groups // cu_count) // 8)
        return min(cu_count * per_cu, groups), 1, z

    def workspace(self, m: int, n: int, batch: int = 1) -> Workspace | None:
        if self.workspace_single:       # one packed fp32 (compute-type) tile
            return Workspace(1, m, n, self.batch_count(batch), accumulator_bytes(self.compute_type))
        if not self.writes_workspace:
            return None
        return Workspace(self.global_split_u, m, n, self.batch_count(batch), self.accumulator_bytes)

    # ---- launches
    def launches(self, *, m: int, n: int, k: int, batch: int, ld: Mapping[str, int],
                 batch_stride: Mapping[str, int], alpha: float, beta: float,
                 addresses: Mapping[str, Any], cu_count: int | None = None,
                 offsets: Mapping[str, int] | None = None,
                 initial_stride: Mapping[str, int] | None = None) -> list[Launch]:
        """The ordered launches computing D = alpha*A*B + beta*C. ``ld``/``batch_stride`` (elements) and
        ``addresses`` are keyed by A, B, C, D; ``addresses`` also needs WS when ``workspace()`` is not None.
        ``cu_count``: the device's compute units, which a persistent kernel's grid needs.
        A pointer-array kernel takes each tensor's pointer-array address in ``addresses`` and the element
        offset added to every batch's pointer in ``offsets`` (0 where not given); ``batch_stride`` is passed
        through as Tensile's host passes its descriptors' strides (the kernel does not use it).
        ``initial_stride``: the stride of each tensor's first index (1 where not given); other than 1 only for
        the tensors whose first stride this kernel takes (``initial_strides_ab``/``_cd``)."""
        batch = self.batch_count(batch)
        given = dict(offsets or {})
        if offsets and not self.pointer_array:
            raise ValueError(f"kernel {self.name} is strided-batched: it takes no offsets (add them to the addresses)")
        if self.pointer_array and self.persistent_kernel_along_batch:
            raise UserError(f"kernel {self.name}: PersistentKernelAlongBatch with pointer-array batches "
                            f"is not launched by this runtime")
        first = {t: int((initial_stride or {}).get(t, 1)) for t in "ABCD"}
        for t, v in first.items():
            if v != 1 and not (self.initial_strides_ab if t in "AB" else self.initial_strides_cd):
                raise ValueError(f"kernel {self.name} takes {t}'s first stride as 1 (no UseInitialStrides"
                                 f"{'AB' if t in 'AB' else 'CD'}), not {v}")
        if self.global_split_u > 1 and (first["C"] != 1 or first["D"] != 1):
            raise UserError(f"kernel {self.name}: GlobalSplitU with first strides of C/D other than 1 is not "
                            f"launched by this runtime (its helper kernels take them as 1)")
        ws = self.workspace(m, n, batch)
        gemm_ld, gemm_stride, gemm_addr = dict(ld), dict(batch_stride), dict(addresses)
        if ws is not None:
            if "WS" not in addresses:
                raise ValueError(f"kernel {self.name} writes a workspace: pass its address as addresses['WS']")
            # the workspace is strided, also for a pointer-array kernel, which then ignores OffsetD (Tensile's host
            # passes d.offset() all the same)
            gemm_ld["D"], gemm_stride["D"], gemm_addr["D"] = ws.ld, ws.batch_stride, addresses["WS"]
        cols = {"A": m if self.transpose_a else k, "B": k if self.transpose_b else n}
        rows = {"A": k if self.transpose_a else m, "B": n if self.transpose_b else k}
        # elements one batch's A/B spans, as Tensile's host passes them (allocatedElementsNonBatchA/B): the offset
        # of its last element plus one, 1 + (rows - 1) * first stride + (columns - 1) * ld (a padded leading
        # dimension's last column ends at row M, not at ld); an empty A/B (a size 0) spans ld * columns
        t2d = {t: (rows[t] - 1) * first[t] + (cols[t] - 1) * ld[t] + 1 if rows[t] and cols[t] else ld[t] * cols[t]
               for t in "AB"}
        values = argument_values(
            m=m, n=n, k=k, batch=batch, ld=gemm_ld, batch_stride=gemm_stride,
            tensor2d_size=t2d, alpha=alpha, beta=beta, initial_stride=first,
            macro_tile=self.macro_tile, addresses=gemm_addr, workgroup_mapping=self.workgroup_mapping,
            orig_stagger_u_iter=stagger_u_iterations(k, self.depth_u, self.global_split_u, self.stagger_u,
                                                     self.stagger_stride_shift), offsets=dict(offsets or {}))
        grid = self.grid(m, n, batch, cu_count)
        if self.persistent_kernel:
            values.update(persistent_values(-(-m // self.macro_tile[0]), -(-n // self.macro_tile[1]), batch,
                                            grid[0], self.persistent_kernel_along_batch))
        if ws is not None:      # as Tensile's host: C is the workspace too (ws_c), both with the packed strides
            values.update(AddressC=addresses["WS"], StridesC0=ws.ld, StridesC1=ws.batch_stride)
        gemm = Launch(self.name, grid, self.block, tuple(self.layout()), values)
        if self.global_split_u == 1:
            return [gemm]
        return self._helper_launches(gemm, m=m, n=n, batch=batch, ld=ld, batch_stride=batch_stride, alpha=alpha,
                                     beta=beta, addresses=addresses, offsets=given, cu_count=cu_count)

    def _helper_launches(self, gemm: Launch, *, m: int, n: int, batch: int, ld, batch_stride, alpha, beta,
                         addresses, offsets, cu_count) -> list[Launch]:
        """The GEMM with its GlobalSplitU helpers as Tensile 4.44's host launches them (``solveTyped``: beta-only,
        GEMM, conversion; gemm/helpers.py)."""
        pa = self.pointer_array
        sizes = {"SizesFree0": m, "SizesFree1": n, "SizesFree2": batch}
        pointers = {"OffsetD": offsets.get("D", 0), "OffsetC": offsets.get("C", 0)} if pa else {}
        out = []
        if not self.writes_workspace:       # beta-only: D (or the packed workspace) = beta*C
            if self.workspace_single:
                strides_d = {"StridesD1": m if n != 1 else 0, "StridesD2": m * n if batch != 1 else 0}
            else:
                strides_d = {"StridesD1": ld["D"] if n != 1 else 0,
                             "StridesD2": batch_stride["D"] if batch != 1 else 0}
            values = {"AddressD": addresses["WS"] if self.workspace_single else addresses["D"],
                      "AddressC": addresses["C"], **pointers, **strides_d,
                      "StridesC1": ld["C"] if n != 1 else 0, "StridesC2": batch_stride["C"] if batch != 1 else 0,
                      **sizes, "Beta": beta}
            name = helpers.beta_only_name(self.batched, self.dest_type, pa, workspace=self.workspace_single)
            out.append(Launch(name, helpers.grid(m, n, batch), helpers.BLOCK,
                              tuple(helpers.beta_only_layout(self.compute_type, pa, self.batched)), values))
        out.append(gemm)
        if self.accumulation:
            if not cu_count or cu_count < 1:
                raise UserError(f"kernel {self.name}: its GlobalSplitU conversion kernel is chosen from the device's "
                                f"compute-unit count (as Tensile's host chooses it); pass cu_count")
            v = helpers.conversion_choice(self.compute_type, self.accumulation, self.global_split_u, m, n, batch,
                                          cu_count)
            multiple = self.accumulation == helpers.MULTIPLE_BUFFER
            values = {"AddressD": addresses["D"], "AddressWS": addresses["WS"], "AddressC": addresses["C"],
                      **pointers, "Alpha": alpha if multiple else 1.0,
                      "Beta": beta if multiple and self.use_beta else 0.0,
                      "StridesD1": ld["D"], "StridesD2": batch_stride["D"], "StridesWS1": m, "StridesWS2": m * n,
                      "StridesC1": ld["C"], "StridesC2": batch_stride["C"], **sizes, "GSU": v.gsu}
            out.append(Launch(v.name(self.batched, self.dest_type, pa),
                              helpers.grid(m, n, batch, v.vw, v.reduction), helpers.BLOCK,
                              tuple(helpers.conversion_layout(self.compute_type, pa, self.batched)), values))
        return out


def _transposes(operation_identifier: str, name: str) -> tuple[bool, bool, bool, bool, bool]:
    """(TransposeA, TransposeB, Batched, ComplexConjugateA, ComplexConjugateB) of the GEMM whose operation
    identifier this is."""
    s = data_type("S")
    for ta, tb, batched, ca, cb in itertools.product((False, True), repeat=5):
        pt = ProblemType(s, s, s, transpose_a=ta, transpose_b=tb, batched=batched, complex_conjugate_a=ca,
                         complex_conjugate_b=cb)
        if pt.operation_identifier == operation_identifier:
            return ta, tb, batched, ca, cb
    raise UserError(f"library solution {name}: operationIdentifier {operation_identifier} is not a GEMM "
                    f"(e.g. Contraction_l_Alik_Bljk_Cijk_Dijk)")
