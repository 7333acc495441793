"""The wait counters saturate (gfx9 vmcnt 63): a wave cannot have more than 63 vector-memory operations
outstanding, so with 70 loads issued the oldest 7 have completed — reading them needs no s_waitcnt
(LLVM relies on this and emits none), while the 8th still does, and the error says vmcnt(62)."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

LOADS = 70                                   # into v2 .. v71


def kernel(read: int) -> str:
    loads = "\n".join(f"global_load_dword v{2 + i}, v1, s[4:5] offset:{4 * (i % 16)}" for i in range(LOADS))
    return f"""
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_mov_b32 v1, 0
s_waitcnt lgkmcnt(0)
{loads}
v_add_u32 v72, v{2 + read}, 1
global_store_dword v1, v72, s[6:7]
s_endpgm
"""


@pytest.mark.parametrize("read", [0, 6])
def test_loads_older_than_the_counter_can_hold_have_completed(read):
    x = np.random.default_rng(3).integers(1, 2 ** 31, 16, dtype=np.int64).astype(np.uint32)
    out = np.zeros(1, np.uint32)
    Emulator.load(build(kernel(read), args=(("x", 8), ("out", 8)), vgprs=76)).launch(
        "k", grid=1, block=1, args=[x, out])
    assert out[0] == x[read % 16] + 1


def test_the_first_load_the_counter_still_holds_needs_a_wait():
    co = build(kernel(7), args=(("x", 8), ("out", 8)), vgprs=76)
    with pytest.raises(EmulationError, match=r"reads v9 while the load that writes it is still in flight.*"
                                              r"needs s_waitcnt vmcnt\(62\)"):
        Emulator.load(co).launch("k", grid=1, block=1, args=[np.ones(16, np.uint32), np.zeros(1, np.uint32)])
