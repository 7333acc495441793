"""gfx950 (CDNA4) VALU additions, assembled with -mcpu=gfx950, on random data with NaN/Inf/denormal/
rounding-tie cases, against references written here (lane by lane in Python where rounding matters)."""

import math

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import build, lane_op_kernel

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

LOAD = lane_op_kernel(settle=True)

SPECIAL_F32 = [0x7FC00001, 0xFFA00000, 0x7F800000, 0xFF800000, 0x00000001, 0x807FFFFF, 0x00000000, 0x80000000,
               0x3F808000, 0x3F818000, 0xBF808000, 0x3F808001, 0x7F7FFFFF, 0x7F7F7FFF, 0x477FF000, 0x477FEFFF,
               0xC77FF000, 0x33800000, 0x33000000, 0x387FE000, 0x38800000, 0x3F801000, 0x3F803000, 0x3F802FFF]


def f32(bits):
    return np.uint32(bits).view(np.float32).item()


def bits32(x):
    return int(np.float32(x).view(np.uint32))


def is_nan(b):
    return (b & 0x7FFFFFFF) > 0x7F800000


def bf16_ref(b):
    if is_nan(b):
        return (b >> 16) | 0x40
    x, lower = f32(b), b >> 16
    down = f32(lower << 16)
    up = f32((lower + 1) << 16) if (lower & 0x7FFF) != 0x7F7F else math.copysign(2.0 ** 128, x)  # rounds to inf
    if x == down:
        return lower
    d_down, d_up = abs(x - down), abs(up - x)
    return lower if d_down < d_up or (d_down == d_up and lower % 2 == 0) else lower + 1


def f16_ref(b):
    if is_nan(b):
        return ((b >> 16) & 0x8000) | 0x7E00 | ((b >> 13) & 0x3FF)
    with np.errstate(over="ignore"):
        return int(np.float64(f32(b)).astype(np.float16).view(np.uint16))


def bf16_to_f32(h):
    return f32((int(h) & 0xFFFF) << 16)


def words(rng, special=True):
    w = rng.standard_normal((6, 64)).astype(np.float32).view(np.uint32).copy()
    if special:
        picks = rng.choice(len(SPECIAL_F32), (6, 64))
        use = rng.random((6, 64)) < 0.5
        w[use] = np.asarray(SPECIAL_F32, np.uint32)[picks[use]]
    return w


def run(op, w):
    out = np.full((2, 64), 0xDEADBEEF, np.uint32)
    em = Emulator.load(build(LOAD.format(op=op), args=(("in", 8), ("out", 8)), vgprs=12, sgprs=16, arch="gfx950"))
    em.launch("k", grid=1, block=64, args=[w, out])
    return out


def lanes(fn, *cols):
    return np.array([fn(*(int(c[i]) for c in cols)) for i in range(64)], np.uint32)


@pytest.mark.parametrize("op,ref", [
    ("v_cvt_pk_bf16_f32 v8, v2, v3\nv_cvt_pk_bf16_f32 v9, -v4, |v5|",
     lambda r: (lanes(lambda a, b: bf16_ref(a) | bf16_ref(b) << 16, r[0], r[1]),
                lanes(lambda a, b: bf16_ref(a ^ 0x80000000) | bf16_ref(b & 0x7FFFFFFF) << 16, r[2], r[3]))),
    ("v_cvt_pk_f16_f32 v8, v2, v3\nv_cvt_pk_f16_f32 v9, v4, -v5",
     lambda r: (lanes(lambda a, b: f16_ref(a) | f16_ref(b) << 16, r[0], r[1]),
                lanes(lambda a, b: f16_ref(a) | f16_ref(b ^ 0x80000000) << 16, r[2], r[3]))),
    ("v_cvt_f32_bf16 v8, v2\nv_cvt_f32_bf16_e64 v9, -|v3|",
     lambda r: (lanes(lambda a: (a & 0xFFFF) << 16, r[0]), lanes(lambda a: ((a & 0x7FFF) | 0x8000) << 16, r[1]))),
    ("v_cvt_f32_bf16_dpp v8, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\nv_prng_b32 v9, v3",
     lambda r: (np.array([(int(r[0][i ^ 1]) & 0xFFFF) << 16 for i in range(64)], np.uint32),
                lanes(lambda a: ((a << 1) & 0xFFFFFFFF) ^ (197 if a >> 31 else 0), r[1]))),
], ids=["cvt_pk_bf16", "cvt_pk_f16", "cvt_f32_bf16", "cvt_f32_bf16_dpp+prng"])
def test_conversions(op, ref):
    w = words(np.random.default_rng(len(op)))
    out = run(op, w)
    e8, e9 = ref(w)
    np.testing.assert_array_equal(out[0], e8)
    np.testing.assert_array_equal(out[1], e9)


def test_special_values_are_drawn():
    w = words(np.random.default_rng(1))
    assert {0x3F808000, 0x7F7FFFFF, 0x477FF000} <= set(w.ravel().tolist())


def bf16_pairs(rng):
    vals = rng.standard_normal((6, 64, 2)).astype(np.float32).view(np.uint32) >> 16
    return (vals[..., 0] | (vals[..., 1] << 16)).astype(np.uint32)


def dot2_ref(a, b, c, neg_lo=(0, 0), neg_hi=(0, 0)):
    s = lambda x, n: -x if n else x
    lo = np.float32(s(bf16_to_f32(a), neg_lo[0])) * np.float32(s(bf16_to_f32(b), neg_lo[1]))
    hi = np.float32(s(bf16_to_f32(a >> 16), neg_hi[0])) * np.float32(s(bf16_to_f32(b >> 16), neg_hi[1]))
    return bits32(np.float32(np.float32(lo + hi) + np.float32(f32(c))))


def dot2c_ref(d, a, b):
    t = np.float32(np.float32(f32(d)) + np.float32(bf16_to_f32(a)) * np.float32(bf16_to_f32(b)))
    return bits32(np.float32(t + np.float32(bf16_to_f32(a >> 16)) * np.float32(bf16_to_f32(b >> 16))))


def test_bf16_dot_products():
    rng = np.random.default_rng(7)
    w = bf16_pairs(rng)
    w[2] = rng.standard_normal(64).astype(np.float32).view(np.uint32)        # v4: f32 addend
    op = ("v_dot2_f32_bf16 v8, v2, v3, v4 neg_lo:[1,0,0] neg_hi:[0,1,0]\n"
          "v_mov_b32 v9, v4\ns_nop 4\nv_dot2c_f32_bf16 v9, v2, v3")
    out = run(op, w)
    np.testing.assert_array_equal(out[0], lanes(lambda a, b, c: dot2_ref(a, b, c, (1, 0), (0, 1)), *w[:3]))
    np.testing.assert_array_equal(out[1], lanes(dot2c_ref, w[2], w[0], w[1]))
    assert len(set(out[0].tolist())) > 32                                      # not a degenerate result


def ieee_pick(x, y, smaller, quiet_bit, nan, sign_bit):
    """IEEE 754-2019 minimum/maximum on (value, bits) pairs; the first NaN wins, quieted."""
    if nan(x[1]):
        return x[1] | quiet_bit
    if nan(y[1]):
        return y[1] | quiet_bit
    if x[0] == y[0]:                               # equal, or zeros of different signs: -0 < +0
        return x[1] if bool(x[1] & sign_bit) == smaller else y[1]
    return x[1] if (x[0] < y[0]) == smaller else y[1]


def minmax3_ref(smaller, *bs):
    vals = [(f32(b), b) for b in bs]
    first = ieee_pick(vals[0], vals[1], smaller, 0x400000, is_nan, 0x80000000)
    return ieee_pick((f32(first), first), vals[2], smaller, 0x400000, is_nan, 0x80000000)


def test_minimum3_maximum3_f32():
    w = words(np.random.default_rng(11))
    w[:, :8] = np.array([[0, 0x80000000, 0x7FA00000, 1, 0xFF800000, 0x3F800000, 0x80000000, 0x7FC00000]] * 6,
                        np.uint32)
    w[1, :8] = [0x80000000, 0, 0x3F800000, 0x7F800001, 0x80000000, 0x3F800000, 0, 0xFFC00001]
    out = run("v_minimum3_f32 v8, v2, v3, v4\nv_maximum3_f32 v9, v2, -v3, |v4|", w)
    np.testing.assert_array_equal(out[0], lanes(lambda a, b, c: minmax3_ref(True, a, b, c), *w[:3]))
    np.testing.assert_array_equal(out[1], lanes(lambda a, b, c: minmax3_ref(False, a, b ^ 0x80000000,
                                                                            c & 0x7FFFFFFF), *w[:3]))


def f16_val(h):
    return float(np.uint16(h).view(np.float16))


def is_nan16(h):
    return (h & 0x7FFF) > 0x7C00


def pk_minmax3_ref(smaller, a, b, c, sel_lo, sel_hi):
    def one(sel):
        hs = [(x >> (16 * ((sel >> i) & 1))) & 0xFFFF for i, x in enumerate((a, b, c))]
        v = [(f16_val(h), h) for h in hs]
        first = ieee_pick(v[0], v[1], smaller, 0x200, is_nan16, 0x8000)
        return ieee_pick((f16_val(first), first), v[2], smaller, 0x200, is_nan16, 0x8000)
    return one(sel_lo) | one(sel_hi) << 16


def test_pk_minimum3_maximum3_f16():
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((6, 64)).astype(np.float16).view(np.uint16).astype(np.uint32)
         | (rng.standard_normal((6, 64)).astype(np.float16).view(np.uint16).astype(np.uint32) << 16))
    w[0, :6] = [0x7E01, 0x8000, 0x7C00FC00, 0x0000_8000, 0x7D00_3C00, 0x0001_8001]
    w[1, :6] = [0x3C00, 0x0000, 0x3C00_7C00, 0x8000_0000, 0x3C00_7D00, 0x8001_0001]
    out = run("v_pk_minimum3_f16 v8, v2, v3, v4\nv_pk_maximum3_f16 v9, v2, v3, v4 op_sel:[1,0,1] op_sel_hi:[0,1,1]",
              w)
    np.testing.assert_array_equal(out[0], lanes(lambda a, b, c: pk_minmax3_ref(True, a, b, c, 0, 7), *w[:3]))
    np.testing.assert_array_equal(out[1], lanes(lambda a, b, c: pk_minmax3_ref(False, a, b, c, 5, 6), *w[:3]))


def bitop3_ref(table, a, b, c, width=32):
    out = 0
    for i in range(width):
        k = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1)
        out |= ((table >> k) & 1) << i
    return out


def test_bitop3():
    w = np.random.default_rng(3).integers(1, 2 ** 32, (6, 64), dtype=np.uint64).astype(np.uint32)
    op = "v_bitop3_b32 v8, v2, v3, v4 bitop3:0xe8\nv_mov_b32 v9, v5\nv_bitop3_b16 v9, v2, v3, v4 bitop3:0x1d op_sel:[1,0,1,1]"
    out = run(op, w)
    np.testing.assert_array_equal(out[0], lanes(lambda a, b, c: bitop3_ref(0xE8, a, b, c), *w[:3]))
    np.testing.assert_array_equal(out[1], lanes(lambda a, b, c, d: (d & 0xFFFF) | bitop3_ref(
        0x1D, a >> 16, b & 0xFFFF, c >> 16, 16) << 16, *w[:4]))


def sat(x, lo, hi):
    return min(max(x, lo), hi) & 0xFF


def signed(x):
    return x - (1 << 32) if x >> 31 else x


def test_ashr_pk():
    rng = np.random.default_rng(9)
    w = rng.integers(1, 2 ** 32, (6, 64), dtype=np.uint64).astype(np.uint32)
    w[0] = (rng.integers(-2 ** 14, 2 ** 14, 64)).astype(np.int64).astype(np.uint32)   # some unsaturated
    w[2] = rng.integers(0, 64, 64).astype(np.uint32)                                  # shifts, bit 5 ignored
    op = ("v_mov_b32 v8, v5\nv_mov_b32 v9, v6\nv_ashr_pk_i8_i32 v8, v2, v3, v4\n"
          "v_ashr_pk_u8_i32 v9, v2, v3, v4 op_sel:[0,0,0,1]")
    out = run(op, w)

    def ref(lo, hi, a, b, s, keep, high):
        v = sat(signed(a) >> (s & 31), lo, hi) | sat(signed(b) >> (s & 31), lo, hi) << 8
        return (keep & 0xFFFF) | v << 16 if high else (keep & 0xFFFF0000) | v
    np.testing.assert_array_equal(out[0], lanes(lambda a, b, s, d: ref(-128, 127, a, b, s, d, False), *w[:3], w[3]))
    np.testing.assert_array_equal(out[1], lanes(lambda a, b, s, d: ref(0, 255, a, b, s, d, True), *w[:3], w[4]))
    assert len(set((out[0] & 0xFF).tolist())) > 8


@pytest.mark.parametrize("op,d_from,s_from", [
    ("v_permlane16_swap_b32 v8, v9", [0, 1, 0, 1], [1, 0, 1, 0]),
    ("v_permlane32_swap_b32 v8, v9", [0, 0, 1, 1], [1, 1, 0, 0]),
])
def test_permlane_swaps(op, d_from, s_from):
    w = np.random.default_rng(13).integers(1, 2 ** 32, (6, 64), dtype=np.uint64).astype(np.uint32)
    out = run(f"v_mov_b32 v8, v2\nv_mov_b32 v9, v3\ns_nop 1\n{op}", w)
    rows = lambda x: x.reshape(4, 16)
    d, s = rows(w[0]), rows(w[1])
    # row r of the results: D keeps its own row or takes S's matching row (and vice versa);
    # swapped pairs (D odd row <-> S even row; D rows 2,3 <-> S rows 0,1) come from the partner row
    partner16, partner32 = [1, 0, 3, 2], [2, 3, 0, 1]
    partner = partner16 if "16" in op else partner32
    exp_d = np.stack([d[r] if d_from[r] == 0 else s[partner[r]] for r in range(4)])
    exp_s = np.stack([s[r] if s_from[r] == 0 else d[partner[r]] for r in range(4)])
    np.testing.assert_array_equal(rows(out[0]), exp_d)
    np.testing.assert_array_equal(rows(out[1]), exp_s)


@pytest.mark.parametrize("op,message", [
    ("v_cvt_sr_bf16_f32 v8, v2, v3", "does not implement 'v_cvt_sr_bf16_f32'"),
    ("v_mov_b32 v8, v2\nds_read_b64_tr_b4 v[8:9], v1\ns_waitcnt lgkmcnt(0)", "does not implement 'ds_read_b64_tr_b4'"),
    ("s_mov_b64 exec, 0xffff\nv_permlane16_swap_b32 v2, v3\ns_mov_b64 exec, -1\nv_mov_b32 v8, v2", "partial EXEC"),
])
def test_refused_forms_are_errors(op, message):
    w = words(np.random.default_rng(0))
    with pytest.raises(EmulationError, match=message):
        run(op + "\nv_mov_b32 v9, v3", w)


# -- what clang-22 emits for small bf16/f16 kernels on gfx950 (HIP without headers) ----------------------

HIP = """
typedef __bf16 bf16x2 __attribute__((ext_vector_type(2)));
extern "C" __attribute__((global)) void cvt(const float* a, __bf16* o, _Float16* h) {
  int i = __builtin_amdgcn_workitem_id_x();
  o[2 * i] = (__bf16)a[2 * i];
  o[2 * i + 1] = (__bf16)a[2 * i + 1];
  h[2 * i] = (_Float16)a[2 * i + 130];
  h[2 * i + 1] = (_Float16)a[2 * i + 131];
}
extern "C" __attribute__((global)) void dot(const bf16x2* a, const bf16x2* b, float* o) {
  int i = __builtin_amdgcn_workitem_id_x();
  o[i] = __builtin_amdgcn_fdot2_f32_bf16(a[i], b[i], o[i], false);
}
extern "C" __attribute__((global)) void mx(float* o, const float* a) {
  int i = __builtin_amdgcn_workitem_id_x();
  o[i] = __builtin_elementwise_maximum(__builtin_elementwise_maximum(a[i], a[i + 64]), a[i + 128]);
}
"""


def hip_code_object():
    import hashlib
    import subprocess
    import tempfile
    from pathlib import Path
    from tensile_asm.errors import ToolchainError
    from tensile_asm.toolchain_paths import find_llvm_tool
    try:
        clang = find_llvm_tool("clang")
    except ToolchainError:
        pytest.skip("clang not installed")
    cache = Path(tempfile.gettempdir()) / "tensile-asm-emulator-tests"
    cache.mkdir(parents=True, exist_ok=True)
    out = cache / f"gfx950-{hashlib.sha1(HIP.encode()).hexdigest()[:16]}.co"
    if not out.is_file():
        src = out.with_suffix(".hip")
        src.write_text(HIP)
        cmd = [clang, "-x", "hip", "-nogpuinc", "-nogpulib", "--cuda-device-only", "--no-gpu-bundle-output",
               "--offload-arch=gfx950", "-O3", "-mcode-object-version=5", "-c", str(src), "-o", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            pytest.skip(f"{clang} cannot compile HIP for gfx950: {proc.stderr[:200]}")
    return out


def test_clang_gfx950_kernels():
    em = Emulator.load(hip_code_object())
    rng = np.random.default_rng(21)
    a = rng.standard_normal(258).astype(np.float32)
    special = [0x3F808000, 0x3F818000, 0x7F7FFFFF, 0x7FA00000, 0x807FFFFF, 0x80000000, 0x477FF000, 0x33000000]
    a[:8] = a[130:138] = [f32(b) for b in special]
    o, h = np.zeros(128, np.uint16), np.zeros(128, np.uint16)
    em.launch("cvt", grid=1, block=64, args=[a, o, h])                 # v_cvt_pk_bf16_f32, v_cvt_pk_f16_f32
    np.testing.assert_array_equal(o, [bf16_ref(int(x)) for x in a[:128].view(np.uint32)])
    np.testing.assert_array_equal(h, [f16_ref(int(x)) for x in a[130:258].view(np.uint32)])

    pa, pb = bf16_pairs(rng)[:2]
    acc = rng.standard_normal(64).astype(np.float32)
    out = acc.copy()
    em.launch("dot", grid=1, block=64, args=[pa, pb, out])              # v_dot2c_f32_bf16
    np.testing.assert_array_equal(out.view(np.uint32), lanes(dot2c_ref, acc.view(np.uint32), pa, pb))

    m = np.zeros(64, np.float32)
    src = a[:192].copy()
    em.launch("mx", grid=1, block=64, args=[m, src])                   # v_maximum3_f32
    np.testing.assert_array_equal(m.view(np.uint32), lanes(lambda x, y, z: minmax3_ref(False, x, y, z),
                                                           *src.view(np.uint32).reshape(3, 64)))
