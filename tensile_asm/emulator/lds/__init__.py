"""LDS and the DS instructions (lgkmcnt), the GDS, and LDS DMA (their race checker: strict/lds_races.py).

    read_write.py      ds_read/ds_write (and read2/write2/st64), byte helpers shared by the DS modules
    byte.py            8-bit ds_write_b8 / ds_read_u8 / ds_read_i8
    atomics32.py       ds_add_u32 ... ds_max_f32, ds_cmpst_b32 (and _rtn_)
    atomics64.py       64-bit, fp64 and packed LDS atomics, cmpst f32/b64/f64, mskor, wrxchg, wrap
    permute.py         ds_bpermute_b32 / ds_permute_b32
    swizzle_addtid.py  ds_swizzle_b32, ds_read/write_addtid_b32, 8-bit d16 forms, ds_nop
    transpose.py       gfx950 ds_read_b64_tr_b16/b8
    gds.py             the gds form of every DS instruction (registry.py), GDS memory
    dma.py             buffer/global loads to LDS (``lds``, global_load_lds_*) (registry.py)
"""
