"""The vector ALU: numpy over the lanes of a wave, written under EXEC, grouped by data type.

    integer.py, integer16.py, integer_packed16.py   32/64-bit, 16-bit and packed 16-bit integer ops
    integer_media.py       byte/nibble conversions, SAD, lerp, alignbyte, integer dot products, v_swap, v_nop
    float32.py, float16.py fp32 arithmetic and conversions; non-packed fp16
    float64.py             64-bit VOP1: v_mov_b64, fp64 rounding, fp64 <-> fp32/int32 conversions
    float64_packed16.py    fp64 FMA/add/mul, packed fp16, mixed precision (fma_mix), fp16 dot, pack/perm
    float_packed32.py      packed fp32 (VOP3P v_pk_*_f32)
    float_parts_madak.py   frexp/ldexp/fract/trig_preop, floor/round conversions, literal multiply-adds
    division.py            v_div_scale/fmas/fixup (and v_lshl_add_u64)
    transcendental.py      fp16/fp64 rcp/rsq/sqrt/exp/log/sin/cos
    convert_pack16.py, convert_fp8.py, convert_scaled.py   packing, fp8/bf8 and gfx950 scaled conversions
    compare_lanes.py       VOPC compares of fp32/32-bit ints, v_cndmask, readlane/writelane, mbcnt, bcnt
    compare16_64.py        fp16/fp64/16-bit integer compares and the class tests
    gfx950.py              the CDNA4 VALU additions
    dpp.py, sdwa.py        the DPP and SDWA forms, wrapping the handlers above (registry.py)
    operands16.py, fma_f64.py   shared 16-bit operand plumbing; the single-rounding fp64 FMA
"""
