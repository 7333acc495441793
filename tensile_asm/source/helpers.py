"""GlobalSplitU's helper kernels as HIP (or CUDA) C++, rendered from ``templates/gsu_helper.hip.j2``.

Tensile writes these helpers in HIP; our libraries link the assembly ones (``writer/beta_only.py``,
``writer/post_gsu.py``). The source ones serve where no assembly runs: the ``cuda`` backend appends the
helper of a GlobalSplitU > 1 kernel to the kernel's ``.cu`` text (``write_source(..., helper=True)``). Names,
argument layouts, block and grid are the contract's (``gemm/helpers.py``), so a launcher cannot tell them
from the assembly ones; the arithmetic is theirs too (beta-only: D = beta*C in C/D's type arithmetic, 0 where
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
    dest_type: str
    acc_ctype: str
    global_split_u: int
    arguments: tuple[Argument, ...]
    rows: int = contract_helpers.ROWS
    cols: int = contract_helpers.COLS

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
            "AddressD": self.d_ctype + array, "AddressC": f"const {self.d_ctype}{array}",
            "AddressWS": f"const {self.acc_ctype}* __restrict__"})


def helper_source(contract) -> HelperSource | None:
    """The helper the GEMM kernel of ``contract`` needs (None for GlobalSplitU 1)."""
    name = contract.helper_name()
    if name is None:
        return None
    pa = contract.pointer_array
    if not contract.writes_workspace:
        return HelperSource(name, "beta_only", pa, contract.dest_type, _ACC[contract.dest_type],
                            contract.global_split_u,
                            tuple(contract_helpers.beta_only_layout(contract.dest_type, pa)))
    return HelperSource(name, "post_gsu", pa, contract.dest_type, _ACC[contract.compute_type],
                        contract.global_split_u, tuple(contract_helpers.post_gsu_layout(contract.compute_type, pa)))


def write_helper_source(contract) -> str:
    """The helper kernel's text, without a prelude (it follows the GEMM kernel's); '' for GlobalSplitU 1."""
    h = helper_source(contract)
    return "" if h is None else writer._environment().get_template("gsu_helper.hip.j2").render(h=h)
