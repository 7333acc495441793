"""CPU emulator for AMDGPU code objects: run the real linked kernel on numpy, with strict checks.

    from tensile_asm.emulator import Emulator
    result = Emulator.load("k.co").launch("kernel", grid=(gx, gy, gz), block=(256, 1, 1), args=[a, b, n])

``grid`` counts workgroups; numpy arrays in ``args`` become device buffers and receive the
kernel's writes; scalars are passed by value in the slots the kernel metadata declares; a
``PointerArray([x, y, ...])`` is passed as the address of an array of pointers to such buffers.
"""

from tensile_asm.emulator.initial import PointerArray
from tensile_asm.emulator.launch import Emulator, LaunchResult

__all__ = ["Emulator", "LaunchResult", "PointerArray"]
