"""What each opcode does with its operands: encoding family, how many leading operands it writes,
implicit registers, and which wait counter tracks it.

One table serves the writer (to know defs and uses), the passes, the asm parser and the emulator's
strict checker. Families are inferred from the mnemonic; the exceptions are listed explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class OpInfo:
    family: str                     # SOP1 SOP2 SOPC SOPK SOPP SMEM VOP VOPC DS MUBUF GLOBAL FLAT MFMA
    num_defs: int                   # leading operands written
    implicit_defs: tuple[str, ...] = ()
    implicit_uses: tuple[str, ...] = ()
    counter: str | None = None      # 'vm', 'lgkm' (LDS, in order), 'smem' (lgkm, out of order)
    memory: str | None = None       # 'load', 'store', 'atomic'


# SALU instructions that write SCC as a side effect.
_SCC_WRITERS = (
    "s_add_", "s_sub_", "s_addc_", "s_subb_", "s_and_", "s_or_", "s_xor_", "s_andn2_", "s_orn2_",
    "s_nand_", "s_nor_", "s_xnor_", "s_not_", "s_lshl", "s_lshr_", "s_ashr_", "s_min_", "s_max_",
    "s_bfe_", "s_abs_", "s_cmp", "s_bitcmp", "s_absdiff_", "s_addk_",
)
_SCC_READERS = ("s_addc_", "s_subb_", "s_cselect_", "s_cbranch_scc", "s_cmovk_", "s_cmov_")

# VALU instructions with two destinations (result, carry/flag SGPRs).
_TWO_DEFS = ("v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_addc_co_u32", "v_subb_co_u32",
             "v_subbrev_co_u32", "v_div_scale_f32", "v_div_scale_f64", "v_mad_u64_u32", "v_mad_i64_i32",
             "v_swap_b32", "v_permlane16_swap_b32", "v_permlane32_swap_b32")   # swaps: both operands

_SOPP = ("s_nop", "s_endpgm", "s_branch", "s_cbranch_", "s_waitcnt", "s_barrier", "s_setprio",
         "s_sleep", "s_trap", "s_sethalt", "s_icache_inv", "s_dcache_wb", "s_dcache_inv",
         "s_endpgm_saved", "s_sendmsg", "s_ttracedata", "s_incperflevel", "s_decperflevel")
_SOP_NO_DEF = ("s_setpc_b64", "s_cmpk_", "s_bitcmp", "s_setreg")


def strip_encoding_suffix(opcode: str) -> str:
    """LLVM prints forced encodings (``_e32``, ``_e64``); the operation is the same."""
    for suffix in ("_e32", "_e64", "_vop3"):
        if opcode.endswith(suffix):
            return opcode[: -len(suffix)]
    return opcode


@lru_cache(maxsize=None)
def op_info(opcode: str, returns: bool = False, lds: bool = False) -> OpInfo:
    """Describe ``opcode``. ``returns`` marks an atomic with ``glc`` (it writes its first operand);
    ``lds`` a load with the ``lds`` modifier (LDS DMA: no VGPR written, the first operand is an address)."""
    op = strip_encoding_suffix(opcode).removesuffix("_sdwa").removesuffix("_dpp")   # the base operation's operands
    if op.startswith("s_"):
        scc_defs = ("scc",) if op.startswith(_SCC_WRITERS) else ()
        scc_uses = ("scc",) if op.startswith(_SCC_READERS) else ()
        if op.startswith(("s_load_", "s_buffer_load_", "s_scratch_load_", "s_memtime", "s_memrealtime")):
            return OpInfo("SMEM", 1, counter="smem", memory="load")
        if op.startswith(("s_store_", "s_buffer_store_")):
            return OpInfo("SMEM", 0, counter="smem", memory="store")
        if op.startswith(_SOPP):
            uses = scc_uses
            if op.startswith(("s_cbranch_vcc",)):
                uses = ("vcc",)
            elif op.startswith("s_cbranch_exec"):
                uses = ("exec",)
            return OpInfo("SOPP", 0, implicit_uses=uses)
        if op.startswith("s_cmp"):
            return OpInfo("SOPC", 0, implicit_defs=("scc",))
        if op.startswith(_SOP_NO_DEF):
            return OpInfo("SOPK" if op.startswith("s_cmpk") else "SOP1", 0, implicit_defs=scc_defs)
        if op.endswith("_saveexec_b64") or op.endswith("_saveexec_b32"):
            return OpInfo("SOP1", 1, implicit_defs=("exec", "scc"), implicit_uses=("exec",))
        if op.startswith(("s_movk_", "s_addk_", "s_mulk_", "s_cmovk_")):
            return OpInfo("SOPK", 1, implicit_defs=scc_defs, implicit_uses=scc_uses)
        return OpInfo("SOP", 1, implicit_defs=scc_defs, implicit_uses=scc_uses)
    if op.startswith("v_"):
        if op.startswith("v_mfma_") or op.startswith("v_smfmac_"):
            return OpInfo("MFMA", 1)
        if op.startswith("v_cmpx_"):
            return OpInfo("VOPC", 1, implicit_defs=("exec",))
        if op.startswith("v_cmp_") or op.startswith("v_cmp_class"):
            return OpInfo("VOPC", 1)
        if op in _TWO_DEFS:
            return OpInfo("VOP", 2)
        if op.startswith("v_readlane") or op.startswith("v_readfirstlane") or op.startswith("v_writelane"):
            return OpInfo("VOP", 1)
        if op in ("v_nop",):
            return OpInfo("VOP", 0)
        return OpInfo("VOP", 1)
    if op.startswith("ds_"):
        if op.startswith(("ds_read", "ds_load")):
            return OpInfo("DS", 1, counter="lgkm", memory="load")
        if op.startswith(("ds_write", "ds_store")):
            return OpInfo("DS", 0, counter="lgkm", memory="store")
        if op in ("ds_bpermute_b32", "ds_permute_b32", "ds_swizzle_b32"):     # lane shuffles: write vdst
            return OpInfo("DS", 1, counter="lgkm")
        return OpInfo("DS", 1 if returns or "_rtn_" in op else 0, counter="lgkm", memory="atomic")
    for prefix, family in (("buffer_", "MUBUF"), ("tbuffer_", "MUBUF"),    # MTBUF: MUBUF's operands and hazards
                           ("global_", "GLOBAL"), ("flat_", "FLAT"), ("scratch_", "GLOBAL")):
        if op.startswith(prefix):
            counter = "vm"
            if op.startswith(prefix + "load"):
                to_lds = lds or op.startswith(prefix + "load_lds_")
                return OpInfo(family, 0 if to_lds else 1, counter=counter, memory="load")
            if op.startswith(prefix + "store"):
                return OpInfo(family, 0, counter=counter, memory="store")
            if op.startswith(prefix + "atomic"):
                return OpInfo(family, 1 if returns else 0, counter=counter, memory="atomic")
            return OpInfo(family, 0, counter=counter)
    raise KeyError(opcode)
