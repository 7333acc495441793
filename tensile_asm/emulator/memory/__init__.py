"""Device memory and the vector-memory instructions that reach it.

    device.py        the launch's buffers at fake addresses; ``Fault``
    buffer_flat.py   MUBUF with buffer-resource semantics, GLOBAL/FLAT addressing, basic atomics
    short_d16.py     16-bit d16 loads/stores (buffer/global), and the 16-bit DS forms
    byte_d16.py      byte d16 loads/stores (buffer/global/flat)
    atomics.py       buffer/global/flat atomics beyond buffer_flat.py's
    typed_buffer.py  buffer_*_format and tbuffer_* with plain 32-bit formats
    cache.py         buffer_wbl2 / buffer_inv*: no caches to maintain
    scratch.py       private memory: scratch_*, and the private paths of MUBUF/FLAT (registry.py)
"""
