"""GlobalSplitU's helper kernels as HIP (or CUDA) C++, rendered from ``templates/gsu_helper.hip.j2``.

Tensile writes these helpers in HIP; our libraries link the assembly ones (``writer/beta_only.py``,
``writer/post_gsu.py``). The source ones serve where no assembly runs: the ``cuda`` backend appends the
helpers of a GlobalSplitU > 1 kernel to the kernel's ``.cu`` text (``write_source(..., helper=True)``): every
variant the contract lists. Names, argument layouts, block and grid are the contract's (``gemm/helpers.py``,
Tensile 4.44's host launch), so a launcher cannot tell them from the assembly ones; the arithmetic is theirs too (beta-only: D = beta*C in C/D's type arithmetic, 0 where
beta is 0; post-GSU: the slices summed in order, times alpha, then one fused multiply-add of beta*C).
"""

from __future__ import annotations

from dataclasses import dataclass

from tensile_asm.gemm import helpers as contract_helpers
from tensile_asm.gemm.arguments import Argument
from tensile_asm.source import writer

# the helper's arithmetic type per C/D type (beta-only) or compute type (post-GSU's accumulator)
_ACC = {"S": "float", "H": "float", "B": "float", "D": "double", "I": "unsigned"}


@dataclass(frozen=True)
class HelperSource:
    """What the template reads."""

    name: str
    kind: str                   # beta_only or post_gsu
    pointer_array: bool
    batched: bool
    dest_type: str
    acc_ctype: str
    workspace: bool             # beta-only into the compute-type workspace (_GA)
    arguments: tuple[Argument, ...]
    vw: int = 1
    reduction: int = 1
    threads: int = contract_helpers.THREADS

    @property
    def d_ctype(self) -> str:
        return writer._CTYPE[self.dest_type]

    @property
    def widen_cd(self) -> str:
        return writer._WIDEN[self.dest_type]

    @property
    def narrow_cd(self) -> str:
        return writer._NARROW[self.dest_type]

    def scalar_value(self, name: str) -> str:
        return writer.scalar_value(self.arguments, name)

    @property
    def parameters(self) -> list[str]:
        array = "* const* __restrict__" if self.pointer_array else "* __restrict__"
        return writer.parameter_list(self.arguments, {
            "AddressD": "Acc* __restrict__" if self.workspace else self.d_ctype + array,
            "AddressC": f"const {self.d_ctype}{array}", "AddressWS": f"const {self.acc_ctype}* __restrict__"})


def helper_sources(contract) -> list[HelperSource]:
    """Every helper kernel the GEMM kernel of ``contract`` may be launched with (``contract.helper_kernels()``)."""
    pa, batched, acc = contract.pointer_array, contract.batched, _ACC[contract.compute_type]
    out = []
    for h in contract.helper_kernels():
        if h.conversion is None:
            layout = contract_helpers.beta_only_layout(contract.compute_type, pa, batched)
            out.append(HelperSource(h.name, "beta_only", pa, batched, contract.dest_type, acc, h.workspace,
                                    tuple(layout)))
        else:
            layout = contract_helpers.conversion_layout(contract.compute_type, pa, batched)
            out.append(HelperSource(h.name, "post_gsu", pa, batched, contract.dest_type, acc, False, tuple(layout),
                                    h.conversion.vw, h.conversion.reduction))
    return out


def write_helper_source(contract) -> str:
    """The helper kernels' text, without a prelude (it follows the GEMM kernel's); '' for GlobalSplitU 1."""
    template = writer._environment().get_template("gsu_helper.hip.j2")
    return "".join(template.render(h=h) for h in helper_sources(contract))
