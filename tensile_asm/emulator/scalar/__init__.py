"""The scalar unit: SALU arithmetic, bit operations and program control on Python ints, and scalar memory.

    alu.py       SOP1/SOP2/SOPK/SOPC and the SOPP branches, barrier, waitcnt, endpgm
    bits.py      bit scans and counts, quad/WQM masks, bitset, bitreplicate, 64-bit BFE/BFM
    control.py   M0-relative SGPR moves, calls, MODE through s_getreg/s_setreg, traps and messages
    loads.py     s_load_dword*, s_buffer_load_dword* (SMEM; lgkmcnt, out of order)
    stores.py    s_store_dword*, s_buffer_store_dword*, s_atomic_*, s_buffer_atomic_*
"""
