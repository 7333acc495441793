"""The emulator's handler registry: which builder compiles each opcode, built once by one function.

Every handler module lists its opcodes in a ``HandlerTable`` (``TABLE``; MFMA-like families parsed from
the name list opcode prefixes in ``PREFIXES``). Importing a module registers nothing: ``build_registry``
merges the tables below, then applies the wrappers that give base handlers their other forms, in order.
``registry()`` builds it the first time the emulator needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Registry:
    handlers: dict       # canonical opcode (no _e32/_e64) -> handler builder
    prefixes: dict       # opcode prefix -> builder, for families parsed from the name (MFMA, SMFMAC)
    apertures: dict      # aperture operand (src_private_base) -> its 64-bit value


def build_registry() -> Registry:
    from tensile_asm.emulator import (dsatomic, dsatomic64, dsmisc, dsperm, ds_transpose, gds, lds, lds8, lds_dma,
                                      mfma, mfma_f8f6f4, mfma_scale, salu, salu_extra, scratch, smem, smem_store,
                                      smfmac, valu, vatomic, vcache, vcmp, vcmp16, vcvt_scale, vdiv, vdpp, vf16,
                                      vf64, vfloat, vformat, vfp8, vfp_misc, vgfx950, vhalf, vi16, vint_misc, vmem,
                                      vmem16, vmem8, vpacked, vpk16, vpk_int16, vsdwa, vtrans)
    tables = (
        # scalar
        salu.TABLE, salu_extra.TABLE, smem.TABLE, smem_store.TABLE,
        # vector ALU
        valu.TABLE, vint_misc.TABLE, vi16.TABLE, vpk_int16.TABLE,
        vfloat.TABLE, vf16.TABLE, vf64.TABLE, vhalf.TABLE, vpacked.TABLE, vfp_misc.TABLE, vdiv.TABLE, vtrans.TABLE,
        vpk16.TABLE, vfp8.TABLE, vcvt_scale.TABLE, vcmp.TABLE, vcmp16.TABLE, vgfx950.TABLE,
        # vector memory
        vmem.TABLE, vmem16.TABLE, vmem8.TABLE, vatomic.TABLE, vformat.TABLE, vcache.TABLE, scratch.TABLE,
        # LDS
        lds.TABLE, lds8.TABLE, dsatomic.TABLE, dsatomic64.TABLE, dsperm.TABLE, dsmisc.TABLE, ds_transpose.TABLE,
        gds.TABLE, lds_dma.TABLE,
        # matrix
        mfma_f8f6f4.TABLE, mfma_scale.TABLE,
    )
    handlers: dict = {}
    for table in tables:
        overlap = handlers.keys() & table.keys()
        assert not overlap, f"opcodes in two handler tables: {sorted(overlap)}"
        handlers.update(table)
    prefixes = {**mfma.PREFIXES, **smfmac.PREFIXES}
    apertures: dict = {}

    # Wrappers, in order; each builds on the handlers the steps before it left.
    lds_dma.add_lds_forms(handlers)       # buffer/global loads with ``lds``: data to LDS instead of VGPRs
    vdpp.add_dpp_forms(handlers)          # VOP1/VOP2 ops get <op>_dpp (before SDWA: no <op>_sdwa_dpp)
    vsdwa.add_sdwa_forms(handlers)        # VOP1/VOP2/VOPC ops get <op>_sdwa (after DPP: no <op>_dpp_sdwa)
    gds.add_gds_forms(handlers)           # every DS op gets its ``gds`` form (after every DS table)
    scratch.add_private_paths(handlers, apertures)   # buffer/flat loads/stores reach private memory (last:
    return Registry(handlers, prefixes, apertures)     # it wraps the LDS-DMA forms of the buffer loads too)


@cache
def registry() -> Registry:
    """The registry, built on first use."""
    return build_registry()


def implemented_opcodes() -> list[str]:
    return sorted(registry().handlers)
