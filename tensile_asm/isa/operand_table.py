"""The operands of each instruction, in assembly order: what kind each may be and how many registers.

One table for every opcode the writers emit (and the common ones the MFMA writer needs next);
``instruction_set.InstructionSet`` checks each instruction it creates against it. Which opcodes an
architecture has is not here: that is ``isa/instructions/<arch>.txt``.

Each row is ``opcodes  |  operands``. Opcodes are mnemonics without the ``_e32``/``_e64`` suffix, or
``fnmatch`` patterns (``v_cmp_*_u32``); the first row that names an opcode wins, exact names before
patterns. An operand is ``KINDS[WIDTH]``, alternatives joined by ``/``:

    v  VGPR    a  AGPR    s  SGPR, or a scalar special register (vcc, exec, m0, ...)
    i  constant (inline or literal)    l  label    o  the ``off`` placeholder

WIDTH is the register count (1 when left out); constants and labels have none. VALU rows describe
the mnemonic as written without a suffix, where LLVM picks the 32-bit encoding (VOP1/VOP2/VOPC) or
VOP3; a forced ``_e32`` form takes only a VGPR as its second source. Where a register range may
sit (AGPRs at all, AGPRs in memory instructions, tuple alignment) is the arch's, from
``isa/<arch>.yaml``'s ``vgpr`` table; tests/test_checked_instructions.py assembles every row with llvm-mc.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import lru_cache

TABLE = """
# --- scalar ALU -----------------------------------------------------------------------------------
s_mov_b32 s_not_b32 s_brev_b32 s_abs_i32 s_sext_i32_i8 s_sext_i32_i16 s_ff1_i32_b32 s_flbit_i32_b32 | s si
s_mov_b64 s_not_b64 s_and_saveexec_b64 s_or_saveexec_b64 s_andn2_saveexec_b64 s_xor_saveexec_b64  | s2 si2
s_movk_i32 s_cmovk_i32                                                                          | s i
s_add_u32 s_sub_u32 s_add_i32 s_sub_i32 s_addc_u32 s_subb_u32 s_mul_i32 s_mul_hi_u32 s_mul_hi_i32  | s si si
s_and_b32 s_or_b32 s_xor_b32 s_andn2_b32 s_orn2_b32 s_nand_b32 s_nor_b32 s_xnor_b32               | s si si
s_lshl_b32 s_lshr_b32 s_ashr_i32 s_bfm_b32 s_bfe_u32 s_bfe_i32 s_absdiff_i32                      | s si si
s_min_u32 s_max_u32 s_min_i32 s_max_i32 s_cselect_b32 s_lshl1_add_u32 s_lshl2_add_u32             | s si si
s_lshl3_add_u32 s_lshl4_add_u32 s_pack_ll_b32_b16 s_pack_lh_b32_b16 s_pack_hh_b32_b16             | s si si
s_and_b64 s_or_b64 s_xor_b64 s_andn2_b64 s_orn2_b64 s_nand_b64 s_nor_b64 s_xnor_b64 s_cselect_b64 | s2 si2 si2
s_lshl_b64 s_lshr_b64 s_ashr_i64 s_bfe_u64 s_bfe_i64                                              | s2 si2 si
s_addk_i32 s_mulk_i32                                                                           | s i
s_cmp_*_u32 s_cmp_*_i32 s_bitcmp0_b32 s_bitcmp1_b32                                             | si si
s_cmp_eq_u64 s_cmp_lg_u64                                                                       | si2 si2
s_cmpk_*                                                                                        | s i
s_getpc_b64                                                                                     | s2
s_setpc_b64                                                                                     | s2
# --- scalar program control -----------------------------------------------------------------------
s_branch s_cbranch_scc0 s_cbranch_scc1 s_cbranch_vcc* s_cbranch_exec* s_cbranch_cdbg*              | l
s_nop s_sleep s_setprio                                                                         | i
s_barrier s_endpgm s_waitcnt s_dcache_wb s_dcache_inv s_icache_inv                              |
# --- scalar memory: data, base address, offset ----------------------------------------------------
s_load_dword s_store_dword                                                                      | s s2 si
s_load_dwordx2 s_store_dwordx2                                                                  | s2 s2 si
s_load_dwordx4 s_store_dwordx4                                                                  | s4 s2 si
s_load_dwordx8                                                                                  | s8 s2 si
s_load_dwordx16                                                                                 | s16 s2 si
s_buffer_load_dword                                                                             | s s4 si
s_buffer_load_dwordx2                                                                           | s2 s4 si
s_buffer_load_dwordx4                                                                           | s4 s4 si
s_memtime s_memrealtime                                                                         | s2
# --- vector ALU, 32-bit: destination, sources -----------------------------------------------------
v_mov_b32 v_not_b32 v_bfrev_b32 v_ffbh_u32 v_ffbl_b32 v_rcp_f32 v_rcp_iflag_f32 v_rsq_f32        | v vsi
v_sqrt_f32 v_exp_f32 v_log_f32 v_trunc_f32 v_floor_f32 v_ceil_f32 v_rndne_f32 v_fract_f32         | v vsi
v_cvt_f32_u32 v_cvt_u32_f32 v_cvt_f32_i32 v_cvt_i32_f32 v_cvt_f16_f32 v_cvt_f32_f16               | v vsi
v_cvt_f32_fp8 v_cvt_f32_bf8                                                                     | v vsi
v_cvt_f32_ubyte0 v_cvt_f32_ubyte1 v_cvt_f32_ubyte2 v_cvt_f32_ubyte3 v_cvt_rpi_i32_f32             | v vsi
v_cvt_f16_u16 v_cvt_f16_i16 v_cvt_u16_f16 v_cvt_i16_f16 v_rcp_f16 v_sqrt_f16                      | v vsi
v_add_f32 v_sub_f32 v_subrev_f32 v_mul_f32 v_min_f32 v_max_f32 v_fmac_f32 v_mac_f32 v_ldexp_f32   | v vsi vsi
v_add_u32 v_sub_u32 v_subrev_u32 v_mul_u32_u24 v_mul_hi_u32_u24 v_mul_i32_i24 v_mul_hi_i32_i24    | v vsi vsi
v_and_b32 v_or_b32 v_xor_b32 v_lshlrev_b32 v_lshrrev_b32 v_ashrrev_i32 v_min_u32 v_max_u32        | v vsi vsi
v_min_i32 v_max_i32 v_add_f16 v_sub_f16 v_mul_f16 v_mac_f16 v_max_f16 v_min_f16 v_dot2c_f32_f16 | v vsi vsi
v_add_u16 v_sub_u16 v_mul_lo_u16 v_lshlrev_b16 v_lshrrev_b16 v_xnor_b32                           | v vsi vsi
v_mul_lo_u32 v_mul_hi_u32 v_mul_hi_i32 v_bfm_b32 v_pack_b32_f16 v_cvt_pkrtz_f16_f32 v_bcnt_u32_b32 | v vsi vsi
v_cvt_pk_fp8_f32 v_cvt_pk_bf8_f32                                                               | v vsi vsi
v_mbcnt_lo_u32_b32 v_mbcnt_hi_u32_b32 v_cvt_pknorm_i16_f32 v_cvt_pk_u16_u32 v_add_i32 v_sub_i32   | v vsi vsi
v_fma_f32 v_mad_f32 v_mad_u32_u24 v_mad_i32_i24 v_add3_u32 v_lshl_add_u32 v_add_lshl_u32          | v vsi vsi vsi
v_lshl_or_b32 v_and_or_b32 v_or3_b32 v_xad_u32 v_bfe_u32 v_bfe_i32 v_bfi_b32 v_alignbit_b32       | v vsi vsi vsi
v_alignbyte_b32 v_med3_f32 v_min3_f32 v_max3_f32 v_med3_u32 v_min3_u32 v_max3_u32 v_perm_b32      | v vsi vsi vsi
v_div_fixup_f32 v_div_fmas_f32 v_fma_f16 v_mad_mixlo_f16 v_mad_mixhi_f16 v_mad_mix_f32 v_fma_mix_f32 | v vsi vsi vsi
v_cndmask_b32                                                                                   | v vsi vsi s2
v_add_co_u32 v_sub_co_u32 v_subrev_co_u32                                                       | v s2 vsi vsi
v_addc_co_u32 v_subb_co_u32 v_subbrev_co_u32                                                    | v s2 vsi vsi s2
v_readfirstlane_b32                                                                             | s v
v_readlane_b32                                                                                  | s v si
v_writelane_b32                                                                                 | v si si
# --- vector ALU, 64-bit -----------------------------------------------------------------------------
v_mov_b64 v_rcp_f64 v_rsq_f64 v_sqrt_f64 v_trunc_f64 v_floor_f64 v_ceil_f64 v_fract_f64 v_frexp_mant_f64 | v2 vsi2
v_cvt_f64_f32 v_cvt_f64_i32 v_cvt_f64_u32                                                       | v2 vsi
v_cvt_f32_f64 v_cvt_i32_f64 v_cvt_u32_f64                                                       | v vsi2
v_add_f64 v_mul_f64 v_min_f64 v_max_f64 v_fmac_f64                                              | v2 vsi2 vsi2
v_lshlrev_b64 v_lshrrev_b64 v_ashrrev_i64                                                       | v2 vsi vsi2
v_ldexp_f64                                                                                     | v2 vsi2 vsi
v_fma_f64 v_div_fixup_f64 v_div_fmas_f64                                                        | v2 vsi2 vsi2 vsi2
v_mad_u64_u32 v_mad_i64_i32                                                                     | v2 s2 vsi vsi vsi2
# --- vector compares: the lane mask (vcc or an SGPR pair), sources ---------------------------------
v_cmp_class_f32 v_cmpx_class_f32                                                                | s2 vsi vsi
v_cmp_class_f64 v_cmpx_class_f64                                                                | s2 vsi2 vsi
v_cmp_*_f64 v_cmp_*_u64 v_cmp_*_i64 v_cmpx_*_f64 v_cmpx_*_u64 v_cmpx_*_i64                      | s2 vsi2 vsi2
v_cmp_* v_cmpx_*                                                                                | s2 vsi vsi
# --- packed math ------------------------------------------------------------------------------------
v_pk_fma_f32                                                                                    | v2 vsi2 vsi2 vsi2
v_pk_mul_f32 v_pk_add_f32 v_pk_mov_b32                                                          | v2 vsi2 vsi2
v_pk_fma_f16 v_pk_mad_u16 v_dot2_f32_f16 v_dot4_i32_i8                                          | v vsi vsi vsi
v_pk_add_f16 v_pk_mul_f16 v_pk_max_f16 v_pk_min_f16 v_pk_add_u16 v_pk_mul_lo_u16                | v vsi vsi
# --- accumulation registers and MFMA: D, A, B, C (D and C in AGPRs, or VGPRs from gfx90a) ---------
v_accvgpr_read_b32                                                                              | v a
v_accvgpr_write_b32                                                                             | a vi
v_accvgpr_mov_b32                                                                               | a a
v_mfma_f32_32x32x1f32 v_mfma_f32_32x32x1_2b_f32                                                 | av32 av av av32/i
v_mfma_f32_32x32x2f32 v_mfma_f32_32x32x2_f32 v_mfma_f32_16x16x1f32 v_mfma_f32_16x16x1_4b_f32                         | av16 av av av16/i
v_mfma_f32_16x16x4f32 v_mfma_f32_16x16x4_f32 v_mfma_f32_4x4x1f32 v_mfma_f32_4x4x1_16b_f32                           | av4 av av av4/i
v_mfma_f32_32x32x4f16 v_mfma_f32_32x32x4_2b_f16 v_mfma_f32_32x32x4bf16_1k v_mfma_f32_32x32x4_2b_bf16 | av32 av2 av2 av32/i
v_mfma_f32_32x32x8f16 v_mfma_f32_32x32x8_f16 v_mfma_f32_16x16x4f16 v_mfma_f32_16x16x4_4b_f16                         | av16 av2 av2 av16/i
v_mfma_f32_32x32x8bf16_1k v_mfma_f32_32x32x8_bf16 v_mfma_f32_16x16x4bf16_1k v_mfma_f32_16x16x4_4b_bf16 | av16 av2 av2 av16/i
v_mfma_f32_16x16x16f16 v_mfma_f32_16x16x16_f16 v_mfma_f32_4x4x4f16 v_mfma_f32_4x4x4_16b_f16                           | av4 av2 av2 av4/i
v_mfma_f32_16x16x16bf16_1k v_mfma_f32_16x16x16_bf16 v_mfma_f32_4x4x4bf16_1k v_mfma_f32_4x4x4_16b_bf16 | av4 av2 av2 av4/i
v_mfma_f32_32x32x2bf16                                                                          | av32 av av av32/i
v_mfma_f32_32x32x4bf16 v_mfma_f32_16x16x2bf16                                                   | av16 av av av16/i
v_mfma_f32_16x16x8bf16 v_mfma_f32_4x4x2bf16                                                     | av4 av av av4/i
v_mfma_f32_32x32x16_f16 v_mfma_f32_32x32x16_bf16                                                | av16 av4 av4 av16/i
v_mfma_f32_16x16x32_f16 v_mfma_f32_16x16x32_bf16                                                | av4 av4 av4 av4/i
v_mfma_f32_32x32x4_xf32                                                                         | av16 av2 av2 av16/i
v_mfma_f32_16x16x8_xf32                                                                         | av4 av2 av2 av4/i
v_mfma_f64_16x16x4f64 v_mfma_f64_16x16x4_f64                                                    | av8 av2 av2 av8/i
v_mfma_f64_4x4x4f64 v_mfma_f64_4x4x4_4b_f64                                                     | av2 av2 av2 av2/i
v_mfma_i32_32x32x4i8 v_mfma_i32_32x32x4_2b_i8                                                   | av32 av av av32/i
v_mfma_i32_32x32x8i8 v_mfma_i32_16x16x4i8 v_mfma_i32_16x16x4_4b_i8                              | av16 av av av16/i
v_mfma_i32_16x16x16i8 v_mfma_i32_4x4x4i8 v_mfma_i32_4x4x4_16b_i8                                | av4 av av av4/i
v_mfma_i32_32x32x16_i8 v_mfma_f32_32x32x16_*8_*8                                                | av16 av2 av2 av16/i
v_mfma_i32_16x16x32_i8 v_mfma_f32_16x16x32_*8_*8                                                | av4 av2 av2 av4/i
v_mfma_i32_32x32x32_i8                                                                          | av16 av4 av4 av16/i
v_mfma_i32_16x16x64_i8                                                                          | av4 av4 av4 av4/i
# gfx950's f8f6f4: A/B as the 8-bit formats have them (cbsz/blgp 0, 1); FP6 takes 6 registers, FP4 4
v_mfma_f32_32x32x64_f8f6f4                                                                      | av16 av8 av8 av16/i
v_mfma_f32_16x16x128_f8f6f4                                                                     | av4 av8 av8 av4/i
# --- LDS: data first for reads, address first for writes -------------------------------------------
ds_read_b32 ds_read_u8 ds_read_i8 ds_read_u16 ds_read_i16 ds_read_u16_d16 ds_read_u16_d16_hi     | av v
ds_read_u8_d16 ds_read_u8_d16_hi ds_read_i8_d16 ds_read_i8_d16_hi                               | av v
ds_read_b64 ds_read2_b32 ds_read2st64_b32 ds_read_b64_tr_b4 ds_read_b64_tr_b8 ds_read_b64_tr_b16 | av2 v
ds_read_b96 ds_read_b96_tr_b6                                                                   | av3 v
ds_read_b128 ds_read2_b64 ds_read2st64_b64                                                      | av4 v
ds_write_b32 ds_write_b8 ds_write_b16 ds_write_b8_d16_hi ds_write_b16_d16_hi                    | v av
ds_write_b64                                                                                    | v av2
ds_write_b96                                                                                    | v av3
ds_write_b128                                                                                   | v av4
ds_write2_b32 ds_write2st64_b32                                                                 | v av av
ds_write2_b64 ds_write2st64_b64                                                                 | v av2 av2
ds_bpermute_b32 ds_permute_b32                                                                  | v v v
ds_swizzle_b32                                                                                  | v v
ds_add_u32 ds_sub_u32 ds_min_u32 ds_max_u32 ds_and_b32 ds_or_b32 ds_xor_b32 ds_add_f32 ds_min_f32 ds_max_f32 | v v
ds_add_rtn_u32 ds_add_rtn_f32 ds_max_rtn_f32 ds_min_rtn_f32                                     | v v v
# --- buffer memory: data, address (or off), descriptor, soffset ------------------------------------
buffer_load_dword buffer_load_ubyte buffer_load_sbyte buffer_load_ushort buffer_load_sshort       | av v/v2/o s4 si
buffer_load_short_d16 buffer_load_short_d16_hi buffer_load_ubyte_d16 buffer_load_ubyte_d16_hi     | av v/v2/o s4 si
buffer_store_dword buffer_store_byte buffer_store_short buffer_store_byte_d16_hi buffer_store_short_d16_hi | av v/v2/o s4 si
buffer_load_dwordx2 buffer_store_dwordx2                                                        | av2 v/v2/o s4 si
buffer_load_dwordx3 buffer_store_dwordx3                                                        | av3 v/v2/o s4 si
buffer_load_dwordx4 buffer_store_dwordx4                                                        | av4 v/v2/o s4 si
buffer_atomic_add_f32 buffer_atomic_pk_add_f16 buffer_atomic_add buffer_atomic_umax buffer_atomic_smax | v v/v2/o s4 si
buffer_atomic_add_f64 buffer_atomic_max_f64 buffer_atomic_min_f64 buffer_atomic_cmpswap          | v2 v/v2/o s4 si
buffer_atomic_cmpswap_x2                                                                        | v4 v/v2/o s4 si
# --- global memory: (loads) data, address, base (SGPR pair, or off with a 64-bit address) -----------
global_load_dword global_load_ubyte global_load_sbyte global_load_ushort global_load_sshort       | av v/v2 s2/o
global_load_short_d16 global_load_short_d16_hi                                                  | av v/v2 s2/o
global_load_dwordx2                                                                             | av2 v/v2 s2/o
global_load_dwordx3                                                                             | av3 v/v2 s2/o
global_load_dwordx4                                                                             | av4 v/v2 s2/o
global_store_dword global_store_byte global_store_short global_store_short_d16_hi               | v/v2 av s2/o
global_store_dwordx2                                                                            | v/v2 av2 s2/o
global_store_dwordx3                                                                            | v/v2 av3 s2/o
global_store_dwordx4                                                                            | v/v2 av4 s2/o
global_atomic_add_f32 global_atomic_pk_add_f16 global_atomic_add global_atomic_smax global_atomic_umax | v/v2 v s2/o
global_atomic_add_f64 global_atomic_cmpswap                                                     | v/v2 v2 s2/o
global_atomic_cmpswap_x2                                                                        | v/v2 v4 s2/o
"""

KIND_LETTERS = "vasilo"


@dataclass(frozen=True)
class OperandSpec:
    """What one operand may be: alternatives of (kinds, register count); the count does not apply
    to constants, labels and ``off``."""

    alternatives: tuple[tuple[str, int | None], ...]
    text: str

    def __str__(self) -> str:
        return self.text


def _parse_operand(token: str) -> OperandSpec:
    alts = []
    for alt in token.split("/"):
        kinds = alt.rstrip("0123456789")
        if not kinds or set(kinds) - set(KIND_LETTERS):
            raise ValueError(f"operand_table: bad operand {token!r} (kinds are {KIND_LETTERS})")
        width = alt[len(kinds):]
        alts.append((kinds, int(width) if width else 1))
    return OperandSpec(tuple(alts), token)


@lru_cache(maxsize=1)
def _rows() -> tuple[dict, list]:
    """(exact name -> specs, [(pattern, specs)] in table order)."""
    exact, patterns = {}, []
    for line in TABLE.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        names, _, operands = line.partition("|")
        specs = tuple(_parse_operand(t) for t in operands.split())
        for name in names.split():
            if any(c in name for c in "*?["):
                patterns.append((name, specs))
            else:
                exact.setdefault(name, specs)
    return exact, patterns


def signature(opcode: str) -> tuple[OperandSpec, ...] | None:
    """The operand specs of ``opcode`` (encoding suffix stripped), or None if the table lacks it."""
    exact, patterns = _rows()
    if opcode in exact:
        return exact[opcode]
    for pattern, specs in patterns:
        if fnmatch.fnmatchcase(opcode, pattern):
            return specs
    return None


__all__ = ["OperandSpec", "TABLE", "signature"]
