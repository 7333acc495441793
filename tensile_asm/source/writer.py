"""A solution's GEMM kernel as HIP C++ (``KernelLanguage: Source``), rendered from ``templates/gemm.hip.j2``.

The kernel takes what Tensile 4.44's host passes a source kernel (``tensile_asm.gemm.arguments``,
``source_kernel``: no Tensor2dSizeA/B, a half alpha/beta once, no WorkGroupMapping arguments -- its
WorkGroupMapping is a constant): its parameter list is generated from the contract's layout (what runtimes
launch by), one parameter per argument, named as the contract names it. The numbers it is written from are the
solution's derived values (``solution.derived``), the ones the assembly writer reads. ``supports`` gives the
one reason a solution cannot be written, or None. The same template renders for CUDA with another
prelude (``language="cuda"``; ``templates/prelude_cuda.h``): the kernel body uses only names both define.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tensile_asm.gemm.arguments import Argument, argument_layout
from tensile_asm.isa.arch import Arch

TEMPLATE_DIR = Path(__file__).resolve().parent.parent.parent / "templates"
LANGUAGES = ("hip", "cuda")

# (A/B, C/D, compute) the source writer builds
SUPPORTED_TYPES = {("S", "S", "S"), ("D", "D", "D"), ("H", "H", "H"), ("H", "H", "S"), ("H", "S", "S"),
                   ("B", "B", "S"), ("B", "S", "S"), ("I8", "I", "I"), ("4xi8", "I", "I"),
                   ("C", "C", "C"), ("Z", "Z", "Z")}
COMPLEX = {"C": "complex_f", "Z": "complex_d"}     # Tensile's complex types: (real, imaginary), interleaved
# memory type of each data type, and how it becomes / is made from the accumulator (fp32, fp64 for D, and
# for the integer types int32 arithmetic modulo 2^32, held as unsigned so that C++ wraps as the hardware does)
_CTYPE = {"S": "float", "D": "double", "H": "half_t", "B": "unsigned short", "I8": "signed char",
          "4xi8": "unsigned", "I": "int", **COMPLEX}
_WIDEN = {"S": "x", "D": "x", "H": "half_to_float(x)", "B": "bf16_to_float(x)", "I8": "(unsigned)(int)x",
          "4xi8": "x", "I": "(unsigned)x", "C": "x",
          "Z": "x"}
_NARROW = {"S": "x", "D": "x", "H": "float_to_half(x)", "B": "float_to_bf16(x)", "I": "(int)x", "C": "x", "Z": "x"}
# the accumulator (and alpha/beta arithmetic) per A/B type
_ACC = {"D": "double", "I8": "unsigned", "4xi8": "unsigned", **COMPLEX}
# one multiply-add of two LDS elements into the accumulator: Int8x4 packs add four int8 products (dot4)
_MAC = {"4xi8": "dot4"}
# an alpha/beta slot of the contract as a C parameter, and its value as the accumulator type
_SCALAR_CTYPE = {"f32": "float", "f64": "double", "f16": "unsigned", "h16": "unsigned short", "i32": "int",
                 "c32": "complex_f", "c64": "complex_d"}



@lru_cache(maxsize=None)
def _environment():
    import jinja2
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, autoescape=False)


def template_text() -> str:
    """Every template file's text: part of what decides a source kernel's bytes (cache keys)."""
    return "\0".join(p.name + "\0" + p.read_text() for p in sorted(TEMPLATE_DIR.iterdir()) if p.is_file())


def supports(solution, arch: Arch | None = None) -> str | None:
    """None if the source writer can write ``solution`` (for ``arch``, when given), else the reason."""
    if not solution.valid:
        return f"invalid solution: {solution.rejection}"
    if getattr(solution, "underived", None):
        return f"not derived by this project yet: {solution.underived}"
    pt, d, params = solution.problem_type, solution.derived, solution.params
    types = (pt.data_type.char, pt.dest_type.char, pt.compute_type.char)
    if types not in SUPPORTED_TYPES:
        names = ", ".join("".join(t) for t in sorted(SUPPORTED_TYPES))
        return (f"data types {''.join(types)} (A/B, C/D, compute) are not written by the source writer; "
                f"it writes {names}")
    if getattr(pt, "use_initial_strides_ab", False) or getattr(pt, "use_initial_strides_cd", False):
        return "UseInitialStrides is not implemented"
    if not getattr(pt, "is_gemm_shaped", True):
        return f"TensorContraction {pt.name} is not GEMM-shaped (2 free, 0..1 batch, 1 summation index)"
    if d.matrix_instruction:
        return "MatrixInstruction (MFMA) in a source kernel is not implemented"
    for key in ("PersistentKernel", "StreamK"):
        if params.get(key):
            return f"{key}={params[key]}: not implemented in the source writer"
    if d.tt0 % d.vector_width or d.tt1 % d.vector_width:
        return f"ThreadTile {d.tt0}x{d.tt1} is not a multiple of VectorWidth {d.vector_width}"
    if d.depth_u % d.local_split_u:
        return f"DepthU {d.depth_u} is not a multiple of LocalSplitU {d.local_split_u}"
    if d.global_split_u > 1 and pt.dest_type.char in COMPLEX:
        return (f"GlobalSplitU={d.global_split_u} with complex C/D is not implemented (its beta-only and post-GSU "
                f"helper kernels take real types)")
    if d.global_split_u > 1 and d.global_accumulation != "MultipleBuffer" and pt.dest_type.char not in ("S", "I"):
        return (f"GlobalSplitU={d.global_split_u} SingleBuffer adds into D with fp32 or int32 atomics (after the "
                f"beta-only kernel); for {pt.dest_type.char} C/D use GlobalSplitUAlgorithm MultipleBuffer")
    if d.global_split_u > 1 and d.global_accumulation == "MultipleBuffer" and pt.dest_type.char == "I":
        return (f"GlobalSplitU={d.global_split_u} MultipleBuffer with int32 C/D: the post-GSU kernel sums "
                f"floating-point partials; use GlobalSplitUAlgorithm SingleBuffer")
    if arch is not None:
        need = lds_bytes(solution)
        if need > arch.max_lds_bytes_per_workgroup:
            return f"needs {need} bytes of LDS, more than {arch.name}'s {arch.max_lds_bytes_per_workgroup}"
    return None


def lds_bytes(solution) -> int:
    """The kernel's LDS: A's and B's DepthU tiles (padded) or the LocalSplitU reduction, at the accumulator size."""
    from tensile_asm.gemm.contract import accumulator_bytes
    d = solution.derived
    acc = accumulator_bytes(solution.problem_type.data_type.char)   # an Int8x4 pack is 4 bytes too
    tiles = d.depth_u * (d.mt0 + d.lds_pad_a) + d.depth_u * (d.mt1 + d.lds_pad_b)
    return acc * max(tiles, (d.local_split_u - 1) * d.mt0 * d.mt1)


def layout(solution) -> list[Argument]:
    """The kernel's arguments: the contract's layout for this solution (a ``KernelLanguage: Source`` one's is
    the source-kernel layout; the template reads the same names from either)."""
    from tensile_asm.gemm.contract import GemmKernelContract
    return GemmKernelContract.from_solution(solution, "?").layout()


@dataclass(frozen=True)
class KernelSource:
    """What the template reads: the solution's derived values under the template's names."""

    name: str
    language: str
    transpose_a: bool
    transpose_b: bool
    batched: bool
    pointer_array: bool         # StridedBatched false: Address* are arrays of per-batch pointers, plus Offset*
    conjugate_a: bool           # complex: A enters the product conjugated (ComplexConjugateA, AlikC)
    conjugate_b: bool
    use_beta: bool
    data_type: str
    dest_type: str
    compute_type: str
    mt0: int
    mt1: int
    sg0: int
    sg1: int
    local_split_u: int
    tt0: int
    tt1: int
    vector_width: int
    depth_u: int
    glvw_a: int
    glvw_b: int
    lds_pad_a: int
    lds_pad_b: int
    global_split_u: int
    workgroup_mapping: int
    stagger_u: int
    stagger_stride_shift: int
    prefetch_global_read: int
    store: str                  # direct, atomic (GSU SingleBuffer) or workspace (GSU MultipleBuffer)
    arguments: tuple[Argument, ...]

    @property
    def acc_ctype(self) -> str:
        return _ACC.get(self.data_type, "float")

    @property
    def lds_ctype(self) -> str:
        """An LDS element: the accumulator type, or an Int8x4 pack as it is."""
        return "unsigned" if self.data_type == "4xi8" else self.acc_ctype

    @property
    def mac(self) -> str:
        return _MAC.get(self.data_type, "multiply_add")

    @property
    def integer(self) -> bool:
        return self.dest_type == "I"

    @property
    def complex(self) -> bool:
        return self.data_type in COMPLEX

    @property
    def a_ctype(self) -> str:
        return _CTYPE[self.data_type]

    @property
    def d_ctype(self) -> str:
        return _CTYPE[self.dest_type]

    @property
    def widen_ab(self) -> str:
        return _WIDEN[self.data_type]

    @property
    def widen_cd(self) -> str:
        return _WIDEN[self.dest_type]

    @property
    def narrow_cd(self) -> str:
        return _NARROW[self.dest_type]

    def scalar_value(self, name: str) -> str:
        return scalar_value(self.arguments, name)

    @property
    def parameters(self) -> list[str]:
        array = "* const* __restrict__" if self.pointer_array else "* __restrict__"
        return parameter_list(self.arguments, {
            "AddressD": "Acc* __restrict__" if self.store == "workspace" else "TypeCD" + array,
            "AddressC": "const TypeCD" + array, "AddressA": "const TypeAB" + array, "AddressB": "const TypeAB" + array})


def scalar_value(arguments, name: str) -> str:
    """Alpha or Beta as the accumulator type (a half compute type arrives as its bits: once, 2 bytes, to a source
    kernel and a helper kernel; twice in 4 bytes to an assembly-layout kernel)."""
    kind = next(a.kind for a in arguments if a.name == name)
    return f"half_from_bits({name} & 0xFFFFu)" if kind in ("f16", "h16") else name


def parameter_list(arguments, tensors: dict[str, str]) -> list[str]:
    """One C parameter per contract argument, named as the contract names it: the tensors' C types from
    ``tensors`` (argument name -> type), scalars and sizes by their kind."""
    out = []
    for a in arguments:
        if a.name in tensors:
            ctype = tensors[a.name]
        elif a.kind in _SCALAR_CTYPE:
            ctype = _SCALAR_CTYPE[a.kind]
        else:
            ctype = {"u64": "unsigned long long", "u32": "unsigned"}[a.kind]
        out.append(f"{ctype} {a.name}")
    return out


def kernel_source(solution, name: str, language: str = "hip") -> KernelSource:
    d, pt = solution.derived, solution.problem_type
    gsu = d.global_split_u
    store = "direct" if gsu == 1 else "workspace" if d.global_accumulation == "MultipleBuffer" else "atomic"
    return KernelSource(
        name=name, language=language, transpose_a=pt.transpose_a, transpose_b=pt.transpose_b, batched=pt.batched,
        pointer_array=pt.batched and not getattr(pt, "strided_batched", True),
        conjugate_a=getattr(pt, "complex_conjugate_a", False), conjugate_b=getattr(pt, "complex_conjugate_b", False),
        use_beta=pt.use_beta, data_type=pt.data_type.char, dest_type=pt.dest_type.char,
        compute_type=pt.compute_type.char, mt0=d.mt0, mt1=d.mt1, sg0=d.sg0 or d.wg0, sg1=d.sg1 or d.wg1,
        local_split_u=d.local_split_u, tt0=d.tt0, tt1=d.tt1, vector_width=d.vector_width, depth_u=d.depth_u,
        glvw_a=d.glvw_a, glvw_b=d.glvw_b, lds_pad_a=d.lds_pad_a, lds_pad_b=d.lds_pad_b, global_split_u=gsu,
        workgroup_mapping=max(1, d.workgroup_mapping), stagger_u=d.stagger_u,
        stagger_stride_shift=d.stagger_stride_shift, prefetch_global_read=int(bool(d.prefetch_global_read)),
        store=store, arguments=tuple(layout(solution)))


def write_source(solution, name: str, language: str = "hip", helper: bool = False) -> str:
    """The kernel ``name`` of ``solution`` as HIP (or CUDA) C++ text; raises UserError if not supported.
    ``helper``: its GlobalSplitU helper kernel follows it in the same text (``source/helpers.py``; the cuda
    backend's way to the helpers, which AMD libraries link as assembly)."""
    from tensile_asm.errors import UserError
    if language not in LANGUAGES:
        raise UserError(f"source language {language!r}: use one of {', '.join(LANGUAGES)}")
    reason = supports(solution)
    if reason:
        raise UserError(f"solution {name} cannot be written as a source kernel: {reason}")
    env = _environment()
    prelude = env.get_template(f"prelude_{language}.h").render()
    text = env.get_template("gemm.hip.j2").render(k=kernel_source(solution, name, language), prelude=prelude)
    if helper:
        from tensile_asm.gemm.contract import GemmKernelContract
        from tensile_asm.source.helpers import write_helper_source
        text += write_helper_source(GemmKernelContract.from_solution(solution, name))
    return text
