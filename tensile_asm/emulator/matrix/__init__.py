"""Matrix instructions with the exact lane layouts of AMD's Matrix Instruction Calculator.

    mfma.py     v_mfma_* (a prefix builder: the shape and types are parsed from the name)
    f8f6f4.py   gfx950 v_mfma_f32_*_f8f6f4 (formats from cbsz/blgp)
    scaled.py   gfx950 block-scaled v_mfma_scale_f32_*_f8f6f4
    sparse.py   v_smfmac_* (4:2 structured-sparse A; a prefix builder)
"""
