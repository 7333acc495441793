"""Memory instructions with AGPR data (gfx90a and later): loads into, stores from, and LDS reads/writes of
the AGPR file reach the AGPRs, not the VGPRs of the same number; memory handlers that do not handle AGPR
operands are refused instead of silently using VGPRs."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import assemble, kernel_source

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

VGPRS, AGPRS = 12, 12

# Each lane: x[lane] (16 bytes) -> a[0:3] by global_load; a[0:3] -> LDS; LDS of lane+1 -> a[4:7];
# a[4:7] -> out by global_store; y[lane] -> a[8:11] by buffer_load (offen); a[8:11] -> out2 by buffer_store.
# v2..v11 hold poison the whole time: a handler that used VGPRs would move poison.
BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_load_dwordx4 s[8:11], s[0:1], 0x10
v_lshlrev_b32 v1, 4, v0
v_add_u32 v2, 1, v0
v_and_b32 v2, 63, v2
v_lshlrev_b32 v2, 4, v2
v_mov_b32 v3, 0x7fc00bad
v_mov_b32 v4, v3
v_mov_b32 v5, v3
v_mov_b32 v6, v3
v_mov_b32 v7, v3
v_mov_b32 v8, v3
v_mov_b32 v9, v3
v_mov_b32 v10, v3
v_mov_b32 v11, v3
s_waitcnt lgkmcnt(0)
global_load_dwordx4 a[0:3], v1, s[4:5]
s_mov_b32 s12, s8
s_mov_b32 s13, s9
s_mov_b32 s14, 1024
s_mov_b32 s15, 0x27000
buffer_load_dwordx4 a[8:11], v1, s[12:15], 0 offen
s_waitcnt vmcnt(0)
ds_write_b128 v1, a[0:3]
s_waitcnt lgkmcnt(0)
s_barrier
ds_read_b128 a[4:7], v2
s_waitcnt lgkmcnt(0)
global_store_dwordx4 v1, a[4:7], s[6:7]
s_mov_b32 s12, s10
s_mov_b32 s13, s11
buffer_store_dwordx4 a[8:11], v1, s[12:15], 0 offen
s_endpgm
"""


def build(body, arch):
    src = kernel_source(body, arch=arch, args=(("x", 8), ("out", 8), ("y", 8), ("out2", 8)), vgprs=VGPRS,
                        lds=1024)
    return assemble(src.replace(f".amdhsa_next_free_vgpr {VGPRS}\n", f".amdhsa_next_free_vgpr {VGPRS + AGPRS}\n"),
                    arch)


BUFFER_LINES = ("buffer_load_dwordx4 a[8:11]", "buffer_store_dwordx4 a[8:11]")


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
@pytest.mark.parametrize("with_buffer", [False, True])
def test_agpr_data_of_loads_stores_and_lds(arch, with_buffer):
    body = BODY if with_buffer else "\n".join(l for l in BODY.splitlines() if not l.startswith(BUFFER_LINES))
    rng = np.random.default_rng(5)
    x = rng.integers(0, 2 ** 32, (64, 4), dtype=np.uint64).astype(np.uint32)
    y = rng.integers(0, 2 ** 32, (64, 4), dtype=np.uint64).astype(np.uint32)
    out, out2 = np.full((64, 4), 0xDEADBEEF, np.uint32), np.full((64, 4), 0xDEADBEEF, np.uint32)
    Emulator.load(build(body, arch)).launch("k", grid=1, block=64, args=[x, out, y, out2])
    np.testing.assert_array_equal(out, np.roll(x, -1, axis=0))       # lane reads lane+1's LDS slot
    if with_buffer:
        np.testing.assert_array_equal(out2, y)


def test_memory_handler_without_agpr_support_is_refused():
    body = """
s_load_dwordx2 s[4:5], s[0:1], 0x0
v_lshlrev_b32 v1, 2, v0
v_accvgpr_write_b32 a0, v0
s_waitcnt lgkmcnt(0)
global_atomic_add v1, a0, s[4:5]
s_endpgm
"""
    src = kernel_source(body, arch="gfx90a", args=(("x", 8),), vgprs=4)
    co = assemble(src.replace(".amdhsa_next_free_vgpr 4\n", ".amdhsa_next_free_vgpr 8\n"), "gfx90a")
    with pytest.raises(EmulationError, match="AGPR data operands of this memory instruction are not implemented"):
        Emulator.load(co).launch("k", grid=1, block=64, args=[np.ones(64, np.uint32)])
