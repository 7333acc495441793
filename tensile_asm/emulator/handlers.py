"""Importing this module registers every instruction handler (one module per family)."""

from tensile_asm.emulator import lds, mfma, salu, smem, valu, vcmp, vfloat, vhalf, vmem, vmem16, vpacked  # noqa: F401


def implemented_opcodes() -> list[str]:
    from tensile_asm.emulator.program import HANDLERS
    return sorted(HANDLERS)
