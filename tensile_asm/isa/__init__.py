"""Architecture data, typed instructions, registers, Module trees and the passes over them."""

from tensile_asm.isa.arch import Arch, load_arch, known_architectures

__all__ = ["Arch", "load_arch", "known_architectures"]
