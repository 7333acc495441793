"""Importing this module registers every instruction handler (one module per family)."""

from tensile_asm.emulator import lds, mfma, salu, smem, valu, vcmp, vfloat, vhalf, vmem, vmem16, vpacked  # noqa: F401
from tensile_asm.emulator import salu_extra  # noqa: F401,E402  (rarer SOP1/SOP2/SOPK/SOPP)
from tensile_asm.emulator import smem_store  # noqa: F401,E402  (SMEM stores and atomics)
from tensile_asm.emulator import dsatomic, dsperm, vdiv, vf16, vf64, vi16, vpk16  # noqa: F401,E402  (third-party code: fixtures)
from tensile_asm.emulator import vgfx950  # noqa: F401,E402  (gfx950 additions)
from tensile_asm.emulator import mfma_scale, vcvt_scale  # noqa: F401,E402  (gfx950 block-scaled MFMAs, scaled conversions)
from tensile_asm.emulator import smfmac  # noqa: F401,E402  (sparse MFMAs, v_smfmac_*)
from tensile_asm.emulator import ds_transpose, lds8  # noqa: F401,E402  (gfx950 LDS transpose loads; 8-bit LDS)
from tensile_asm.emulator import vcmp16  # noqa: F401,E402  (fp16/fp64/16-bit integer compares, class tests)
from tensile_asm.emulator import vfp_misc, vint_misc  # noqa: F401,E402  (remaining float and integer VALU)
from tensile_asm.emulator import vpk_int16  # noqa: F401,E402  (packed 16-bit integer VOP3P)
from tensile_asm.emulator import vfp8  # noqa: F401,E402  (fp8/bf8 conversions)
from tensile_asm.emulator import vtrans  # noqa: F401,E402  (fp16/fp64 transcendental approximations)
from tensile_asm.emulator import vdpp  # noqa: F401,E402  (last: wraps the VOP1/VOP2 handlers above)
from tensile_asm.emulator import vsdwa  # noqa: F401,E402  (after vdpp: wraps the VOP1/VOP2/VOPC handlers above)
from tensile_asm.emulator import vatomic  # noqa: F401,E402  (buffer/global/flat atomics beyond vmem.py's)
from tensile_asm.emulator import dsmisc  # noqa: F401,E402  (ds_swizzle, addtid, 8-bit d16 LDS, ds_nop)
from tensile_asm.emulator import dsatomic64  # noqa: F401,E402  (64-bit/fp64/packed LDS atomics, mskor, wrxchg, wrap)
from tensile_asm.emulator import vmem8  # noqa: F401,E402  (byte d16 global/flat/buffer loads and stores)
from tensile_asm.emulator import vformat  # noqa: F401,E402  (buffer_*_format, tbuffer_*: 32-bit raw formats only)
from tensile_asm.emulator import vcache  # noqa: F401,E402  (buffer_wbl2, buffer_inv*: no caches to maintain)
from tensile_asm.emulator import gds  # noqa: E402
gds.register()     # after every DS handler: gives them their gds form
from tensile_asm.emulator import scratch  # noqa: E402
scratch.register()  # after every buffer load/store handler: gives them the private segment buffer path


def implemented_opcodes() -> list[str]:
    from tensile_asm.emulator.program import HANDLERS
    return sorted(HANDLERS)
