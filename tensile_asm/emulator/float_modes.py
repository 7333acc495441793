"""The floating-point modes a kernel descriptor sets, and which of them the emulator models.

Modelled: round to nearest even everywhere; fp32 denormals either kept (``float_denorm_mode_32`` 3)
or flushed on input and output (0); fp16/fp64 denormals kept (``float_denorm_mode_16_64`` 3). The
other settings (round toward zero/infinity, flushing only inputs or only outputs, flushing fp16/fp64
denormals) change results in ways the handlers do not reproduce, so a kernel that sets them is
refused when its program is compiled instead of being emulated wrongly. fp16/fp64 settings matter
only when the kernel has fp16/fp64 (or packed fp16) instructions.
"""

from __future__ import annotations

import re

from tensile_asm.errors import EmulationError

_DENORM = {0: "flush inputs and outputs", 1: "flush outputs only", 2: "flush inputs only", 3: "keep denormals"}
_ROUND = {0: "nearest even", 1: "toward +infinity", 2: "toward -infinity", 3: "toward zero"}
_HALF_OR_DOUBLE = re.compile(r"f16|f64|_pk_(add|mul|fma|max|min)")


def check(kernel: str, descriptor, instructions) -> None:
    """Raise ``EmulationError`` naming the descriptor field and value the emulator does not model."""
    problems = []
    mode32 = descriptor.float_denorm_mode_32
    if mode32 in (1, 2):
        problems.append(f".amdhsa_float_denorm_mode_32 {mode32} ({_DENORM[mode32]})")
    if descriptor.float_round_mode_32 != 0:
        problems.append(f".amdhsa_float_round_mode_32 {descriptor.float_round_mode_32} "
                        f"(round {_ROUND[descriptor.float_round_mode_32]})")
    uses_16_64 = any(_HALF_OR_DOUBLE.search(ins.opcode) for ins in instructions)
    if uses_16_64 and descriptor.float_denorm_mode_16_64 != 3:
        mode = descriptor.float_denorm_mode_16_64
        problems.append(f".amdhsa_float_denorm_mode_16_64 {mode} ({_DENORM[mode]}) with fp16/fp64 instructions")
    if uses_16_64 and descriptor.float_round_mode_16_64 != 0:
        problems.append(f".amdhsa_float_round_mode_16_64 {descriptor.float_round_mode_16_64} "
                        f"(round {_ROUND[descriptor.float_round_mode_16_64]}) with fp16/fp64 instructions")
    if problems:
        raise EmulationError(f"kernel '{kernel}' sets {'; '.join(problems)}, which the emulator does not model "
                             f"(it models round to nearest even, fp32 denormals kept or flushed both ways, and "
                             f"fp16/fp64 denormals kept); build the kernel with those modes")


__all__ = ["check"]
