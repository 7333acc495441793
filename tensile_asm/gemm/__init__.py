"""The GEMM kernel contract: what a caller needs to launch a generated kernel — its argument layout
and values, grid and work-group size, LDS bytes, and the GlobalSplitU helper kernels with their names,
layouts and grids — computed from a solution's derived values (or a library entry) and the problem.
The writer, the runtimes, benchmark and inspect import it; it imports neither of them.
"""

from tensile_asm.gemm.arguments import (SCALAR_KIND, Argument, argument_layout, argument_values, kernarg_size,
                                        pack_arguments, workgroup_mapping_values)
from tensile_asm.gemm.contract import GemmKernelContract, Launch
from tensile_asm.gemm.helpers import Workspace

__all__ = ["Argument", "SCALAR_KIND", "argument_layout", "argument_values", "kernarg_size", "pack_arguments",
           "workgroup_mapping_values", "GemmKernelContract", "Launch", "Workspace"]
