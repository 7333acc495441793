"""Cache maintenance instructions leave memory alone; buffer_wbl2 counts in vmcnt, the invalidates do
not (as LLVM's waitcnt insertion assumes)."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

U = np.uint32
BODY = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_waitcnt lgkmcnt(0)
v_lshlrev_b32 v1, 2, v0
global_load_dword v2, v1, s[4:5]
global_load_dword v3, v1, s[4:5] offset:256
{cache}
s_waitcnt vmcnt(1)
v_add_u32 v4, v2, v3
global_store_dword v1, v4, s[6:7]
{cache2}
s_waitcnt vmcnt(0)
s_endpgm
"""


@pytest.mark.parametrize("arch,cache,cache2,counts", [
    ("gfx90a", "buffer_wbl2", "buffer_wbinvl1_vol", True),
    ("gfx942", "buffer_wbl2 sc1", "buffer_inv sc1", True),
    ("gfx908", "buffer_wbinvl1", "buffer_wbinvl1_vol", False),
    ("gfx90a", "buffer_invl2", "buffer_wbinvl1", False),
    ("gfx942", "buffer_inv sc0 sc1", "buffer_wbl2 sc0 sc1", False)])
def test_cache_maintenance(arch, cache, cache2, counts):
    words = np.arange(1, 129, dtype=U)
    out = np.full(64, 0xDEADBEEF, U)
    em = Emulator.load(build(BODY.format(cache=cache, cache2=cache2), args=(("in", 8), ("out", 8)), vgprs=8,
                             sgprs=8, arch=arch))
    if counts:          # vmcnt(1) leaves only the write-back outstanding: both loads are done
        em.launch("k", grid=1, block=64, args=[words, out])
        assert np.array_equal(out, words[:64] + words[64:])
    else:               # an invalidate is not counted: vmcnt(1) leaves the second load in flight
        with pytest.raises(EmulationError, match=r"reads v3 .*global_load_dword v3"):
            em.launch("k", grid=1, block=64, args=[words, out])
