"""A hand-written SGEMM (64x64 macro tile, 256 threads, 4x4 per thread, depth 8 through LDS) runs on
the emulator, matches a float64 reference, and is fast enough for a test suite of GEMM kernels."""


import numpy as np
import pytest

from tensile_asm.emulator import Emulator

from conftest import have_llvm
from emulator_asm import build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


def gemm_source() -> str:
    """C[M,N] = A[M,K] B[K,N], row-major; M, N multiples of 64, K a multiple of 8."""
    acc = [f"v{32 + i}" for i in range(16)]
    lines = """
    s_load_dwordx4 s[4:7], s[0:1], 0x0          // A, B
    s_load_dwordx2 s[8:9], s[0:1], 0x10         // C
    s_load_dwordx2 s[10:11], s[0:1], 0x18       // M, N
    s_load_dword s12, s[0:1], 0x20              // K
    s_lshl_b32 s13, s3, 6                       // m0
    s_lshl_b32 s14, s2, 6                       // n0
    v_and_b32 v1, 15, v0
    v_lshrrev_b32 v2, 4, v0
    v_lshlrev_b32 v1, 4, v1                     // tx * 16: B columns in LDS
    v_lshlrev_b32 v2, 4, v2                     // ty * 16: A rows in LDS
    s_waitcnt lgkmcnt(0)
    v_lshrrev_b32 v3, 3, v0
    v_add_u32 v3, s13, v3
    v_mul_lo_u32 v3, v3, s12
    v_and_b32 v12, 7, v0
    v_add_u32 v3, v3, v12
    v_lshlrev_b32 v12, 2, v3                    // A element (m0 + tid/8, tid%8)
    s_lshl_b32 s15, s12, 7
    v_add_u32 v13, s15, v12                     // ... and 32 rows further
    v_and_b32 v3, 7, v0
    v_lshlrev_b32 v3, 6, v3
    v_lshrrev_b32 v14, 3, v0
    v_add_u32 v3, v3, v14
    v_lshlrev_b32 v14, 2, v3                    // As[k][m] (transposed)
    v_lshrrev_b32 v3, 6, v0
    v_mul_lo_u32 v3, v3, s11
    v_and_b32 v15, 63, v0
    v_add_u32 v3, v3, v15
    v_add_u32 v3, s14, v3
    v_lshlrev_b32 v15, 2, v3                    // B element (tid/64, n0 + tid%64)
    s_lshl_b32 s16, s11, 4
    v_add_u32 v16, s16, v15                     // ... and 4 rows further
    v_lshlrev_b32 v17, 2, v0                    // Bs[k][n]
    s_lshl_b32 s17, s11, 5                      // 8 rows of B
    s_mov_b32 s18, 0
    """.strip().splitlines()
    lines += [f"v_mov_b32 {r}, 0" for r in acc]
    lines += """
    .Lloop:
    global_load_dword v18, v12, s[4:5]
    global_load_dword v19, v13, s[4:5]
    global_load_dword v20, v15, s[6:7]
    global_load_dword v21, v16, s[6:7]
    s_waitcnt vmcnt(0)
    ds_write_b32 v14, v18
    ds_write_b32 v14, v19 offset:128
    ds_write_b32 v17, v20 offset:2048
    ds_write_b32 v17, v21 offset:3072
    s_waitcnt lgkmcnt(0)
    s_barrier
    """.strip().splitlines()
    for k in range(8):
        lines += [f"ds_read_b128 v[4:7], v2 offset:{k * 256}", f"ds_read_b128 v[8:11], v1 offset:{2048 + k * 256}",
                  "s_waitcnt lgkmcnt(0)"]
        lines += [f"v_fmac_f32 {acc[4 * i + j]}, v{4 + i}, v{8 + j}" for i in range(4) for j in range(4)]
    lines += """
    s_barrier
    v_add_u32 v12, 32, v12
    v_add_u32 v13, 32, v13
    v_add_u32 v15, s17, v15
    v_add_u32 v16, s17, v16
    s_add_u32 s18, s18, 8
    s_cmp_lt_u32 s18, s12
    s_cbranch_scc1 .Lloop
    v_lshrrev_b32 v3, 4, v0
    v_lshlrev_b32 v3, 2, v3
    v_add_u32 v3, s13, v3
    v_mul_lo_u32 v3, v3, s11
    v_and_b32 v22, 15, v0
    v_lshlrev_b32 v22, 2, v22
    v_add_u32 v3, v3, v22
    v_add_u32 v3, s14, v3
    v_lshlrev_b32 v3, 2, v3
    s_lshl_b32 s19, s11, 2
    """.strip().splitlines()
    for i in range(4):
        lines += [f"global_store_dwordx4 v3, v[{32 + 4 * i}:{35 + 4 * i}], s[8:9]", "v_add_u32 v3, s19, v3"]
    lines.append("s_endpgm")
    return "\n".join(lines)


def _build():
    return build(gemm_source(), name="sgemm", args=(("A", 8), ("B", 8), ("C", 8), ("M", 4), ("N", 4), ("K", 4)),
                 vgprs=48, sgprs=24, lds=4096, wg_ids="xy", max_wg=256)


@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (128, 192, 24)])
def test_sgemm_matches_float64_reference(m, n, k):
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    em = Emulator.load(_build())
    res = em.launch("sgemm", grid=(n // 64, m // 64, 1), block=(256, 1, 1), args=[a, b, c, m, n, k])
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5 * np.sqrt(k))
    assert res.workgroups == (m // 64) * (n // 64) and res.waves == 4 * res.workgroups
    assert res.opcode_counts["v_fmac_f32"] == res.waves * 64 * (k // 8) * 2
