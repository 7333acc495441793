"""Solution parameters (catalogue), derived values and validity, and Tensile-style names."""

from tensile_asm.solution.catalogue import PARAMS, Param
from tensile_asm.solution.derive import Derived
from tensile_asm.solution.naming import min_names, name_full
from tensile_asm.solution.solution import Solution, load_solution_file

__all__ = ["PARAMS", "Param", "Derived", "Solution", "load_solution_file", "min_names", "name_full"]
