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
    from tensile_asm.emulator.lds import (atomics32, atomics64, byte, dma, gds, permute, read_write, swizzle_addtid,
                                          transpose)
    from tensile_asm.emulator.matrix import f8f6f4, mfma, scaled, sparse
    from tensile_asm.emulator.memory import atomics, buffer_flat, byte_d16, cache, scratch, short_d16, typed_buffer
    from tensile_asm.emulator.scalar import alu, bits, control, loads, stores
    from tensile_asm.emulator.vector import (compare16_64, compare_lanes, convert_fp8, convert_pack16, convert_scaled,
                                             division, dpp, float16, float32, float64, float64_packed16,
                                             float_packed32, float_parts_madak, gfx950, integer, integer16,
                                             integer_media, integer_packed16, sdwa, transcendental)
    tables = (
        # scalar/: SALU, program control, scalar memory
        alu.TABLE, bits.TABLE, control.TABLE, loads.TABLE, stores.TABLE,
        # vector/: VALU by data type, conversions, compares, gfx950 additions
        integer.TABLE, integer16.TABLE, integer_packed16.TABLE, integer_media.TABLE,
        float32.TABLE, float16.TABLE, float64.TABLE, float64_packed16.TABLE, float_packed32.TABLE,
        float_parts_madak.TABLE, division.TABLE, transcendental.TABLE,
        convert_pack16.TABLE, convert_fp8.TABLE, convert_scaled.TABLE, compare_lanes.TABLE, compare16_64.TABLE,
        gfx950.TABLE,
        # memory/: buffer/global/flat/scratch loads, stores, atomics
        buffer_flat.TABLE, short_d16.TABLE, byte_d16.TABLE, atomics.TABLE, typed_buffer.TABLE, cache.TABLE,
        scratch.TABLE,
        # lds/: DS instructions, GDS-only ones, global_load_lds_*
        read_write.TABLE, byte.TABLE, atomics32.TABLE, atomics64.TABLE, permute.TABLE, swizzle_addtid.TABLE,
        transpose.TABLE, gds.TABLE, dma.TABLE,
        # matrix/: the gfx950 f8f6f4 MFMAs (the other MFMAs and SMFMACs are prefix builders)
        f8f6f4.TABLE, scaled.TABLE,
    )
    handlers: dict = {}
    for table in tables:
        overlap = handlers.keys() & table.keys()
        assert not overlap, f"opcodes in two handler tables: {sorted(overlap)}"
        handlers.update(table)
    prefixes = {**mfma.PREFIXES, **sparse.PREFIXES}
    apertures: dict = {}

    # Wrappers, in order; each builds on the handlers the steps before it left.
    dma.add_lds_forms(handlers)           # buffer/global loads with ``lds``: data to LDS instead of VGPRs
    dpp.add_dpp_forms(handlers)           # VOP1/VOP2 ops get <op>_dpp (before SDWA: no <op>_sdwa_dpp)
    sdwa.add_sdwa_forms(handlers)         # VOP1/VOP2/VOPC ops get <op>_sdwa (after DPP: no <op>_dpp_sdwa)
    gds.add_gds_forms(handlers)           # every DS op gets its ``gds`` form (after every DS table)
    scratch.add_private_paths(handlers, apertures)   # buffer/flat loads, stores reach private memory (last:
    #                                                  it wraps the LDS-DMA forms of the buffer loads too)
    return Registry(handlers, prefixes, apertures)


@cache
def registry() -> Registry:
    """The registry, built on first use (compile_ops, coverage)."""
    return build_registry()


def implemented_opcodes() -> list[str]:
    return sorted(registry().handlers)
