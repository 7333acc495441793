"""Run a block of VALU code on one 64-lane wave: input words go to v10.. (one row per register),
the block leaves its results in v30.., which are returned (poisoned before the run)."""

from __future__ import annotations

import numpy as np

from tensile_asm.emulator import Emulator

from emulator_asm import build

IN, OUT = 10, 30
POISON = 0xDEADBEEF


def run_block(body: str, inputs, n_out: int, arch: str = "gfx90a", vgprs: int = 64) -> np.ndarray:
    """``inputs``: (n_in, 64) uint32 array (at most 16 rows); returns (n_out, 64) uint32."""
    inputs = np.ascontiguousarray(inputs, np.uint32)
    n_in = inputs.shape[0]
    loads = "\n".join(f"global_load_dword v{IN + i}, v1, s[4:5] offset:{256 * i}" for i in range(n_in))
    stores = "\n".join(f"global_store_dword v1, v{OUT + k}, s[6:7]\ns_add_u32 s6, s6, 256\ns_addc_u32 s7, s7, 0"
                       for k in range(n_out))
    src = f"""
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32 v1, 2, v0
s_waitcnt lgkmcnt(0)
{loads}
s_waitcnt vmcnt(0)
{body}
s_mov_b64 exec, -1
s_nop 4
{stores}
s_endpgm
"""
    out = np.full((n_out, 64), POISON, np.uint32)
    em = Emulator.load(build(src, args=(("in", 8), ("out", 8)), vgprs=vgprs, sgprs=32, arch=arch))
    em.launch("k", grid=1, block=64, args=[inputs, out])
    return out
