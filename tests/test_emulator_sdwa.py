"""SDWA (``<op>_sdwa``, gfx9) on the emulator: every source selector with and without sext, every
dst_sel with every dst_unused, fp16/fp32 operations with neg/abs, clamp and omod, VOPC writing an
SGPR pair or VCC, SGPR and inline-constant sources, partial EXEC; hand-written kernels on random
32-bit data (4 waves, so lockstep batching runs too) against numpy written here from byte views."""

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError
from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.hazards import hazards
from tensile_asm.isa.parser import parse_instruction as P

from conftest import have_llvm
from emulator_asm import build

needs_llvm = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

N = 256                                  # work-items: 4 waves
SELS = ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"]
UNUSED = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE"]
_BYTES = {"BYTE_0": (0, 1), "BYTE_1": (1, 1), "BYTE_2": (2, 1), "BYTE_3": (3, 1), "WORD_0": (0, 2),
          "WORD_1": (2, 2), "DWORD": (0, 4)}
SIGNED = {1: np.int8, 2: np.int16, 4: np.int32}
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32}

# v2..v6 are the five inputs; each case writes v8+j, which first holds input v5 (the "old" value).
HEAD = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32 v1, 2, v0
s_waitcnt lgkmcnt(0)
global_load_dword v2, v1, s[4:5]
global_load_dword v3, v1, s[4:5] offset:1024
global_load_dword v4, v1, s[4:5] offset:2048
global_load_dword v5, v1, s[4:5] offset:3072
s_add_u32 s4, s4, 4096
s_addc_u32 s5, s5, 0
global_load_dword v6, v1, s[4:5]
s_waitcnt vmcnt(0)
v_readfirstlane_b32 s8, v6
"""


def sel(x, name, sext=False):
    """Source selection, from a little-endian byte view: the field, zero- or sign-extended."""
    start, width = _BYTES[name]
    field = x.astype("<u4").view(np.uint8).reshape(-1, 4)[:, start:start + width].copy().view(UNSIGNED[width]).ravel()
    return (field.view(SIGNED[width]).astype(np.int64) if sext else field.astype(np.int64)).astype(np.uint32)


def put(result, old, name, unused):
    """Destination write: the result's low bytes into the field, the other bytes by dst_unused."""
    start, width = _BYTES[name]
    res = np.asarray(result, np.uint32).astype("<u4").view(np.uint8).reshape(-1, 4)
    out = (np.asarray(old, np.uint32).astype("<u4").view(np.uint8).reshape(-1, 4).copy() if unused == "UNUSED_PRESERVE"
           else np.zeros_like(res))
    if unused == "UNUSED_SEXT":
        out[:, :start] = 0
        out[:, start + width:] = np.where(res[:, width - 1:width] & 0x80, 0xFF, 0)
    out[:, start:start + width] = res[:, :width]
    return out.view("<u4").ravel().astype(np.uint32)


def f16(bits):
    return (np.asarray(bits, np.uint32) & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)


def bits16(x):
    return np.asarray(x).astype(np.float16).view(np.uint16).astype(np.uint32)


def f32(bits):
    return np.asarray(bits, np.uint32).view(np.float32)


def bits32(x):
    return np.asarray(x, np.float32).view(np.uint32)


def s8(r):
    """s8 = v_readfirstlane_b32 of v6: each wave's first lane."""
    return np.repeat(r[6][::64], 64)


def mask(lanes):
    return lanes.astype(np.uint32)


def sx(reg, on):
    return f"sext({reg})" if on else reg


def run_cases(cases, inputs, arch="gfx90a", prologue="", lockstep=True):
    """Each case: (asm with {d} for its result register, reference(r) with r[2..6] the inputs)."""
    body = [HEAD, prologue]
    for j, (text, _) in enumerate(cases):
        d = f"v{8 + j}"
        body.append(f"v_mov_b32 {d}, v5\n" + text.format(d=d) + "\ns_mov_b64 exec, -1")
    for j in range(len(cases)):
        body.append(f"global_store_dword v1, v{8 + j}, s[6:7]\ns_add_u32 s6, s6, {N * 4}\ns_addc_u32 s7, s7, 0")
    body.append("s_endpgm")
    co = build("\n".join(body), args=(("in", 8), ("out", 8)), vgprs=8 + len(cases), sgprs=24, arch=arch)
    out = np.full((len(cases), N), 0xDEADBEEF, np.uint32)
    Emulator.load(co).launch("k", grid=1, block=N, args=[inputs.copy(), out], lockstep=lockstep)
    regs = [None, None] + [inputs[k] for k in range(5)]
    for j, (text, ref) in enumerate(cases):
        np.testing.assert_array_equal(out[j], np.asarray(ref(regs), np.uint32), err_msg=text)


def random_words(seed, rows=5):
    return np.random.default_rng(seed).integers(1, 2 ** 32, (rows, N), dtype=np.uint64).astype(np.uint32)


def int_source_cases():
    cases = []
    for s in SELS:
        for e in (False, True):
            cases.append((f"v_add_u32_sdwa {{d}}, {sx('v2', e)}, v3 dst_sel:DWORD dst_unused:UNUSED_PAD "
                          f"src0_sel:{s} src1_sel:DWORD", lambda r, s=s, e=e: sel(r[2], s, e) + r[3]))
            cases.append((f"v_sub_u32_sdwa {{d}}, v2, {sx('v3', e)} dst_sel:DWORD dst_unused:UNUSED_PAD "
                          f"src0_sel:DWORD src1_sel:{s}", lambda r, s=s, e=e: r[2] - sel(r[3], s, e)))
    return cases


@needs_llvm
@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx908", "gfx950"])
def test_every_source_selector_with_and_without_sext(arch):
    run_cases(int_source_cases(), random_words(1), arch)


def _i24(x):
    return ((x.astype(np.int64) & 0xFFFFFF) ^ 0x800000) - 0x800000


EXEC_LO, EXEC_HI = 0x5A0FF0A5, 0x3C66C399
ACTIVE = np.array([(EXEC_LO | EXEC_HI << 32) >> (i % 64) & 1 for i in range(N)], bool)


def dst_cases():
    cases = [(f"v_xor_b32_sdwa {{d}}, v2, v3 dst_sel:{s} dst_unused:{u} src0_sel:DWORD src1_sel:DWORD",
              lambda r, s=s, u=u: put(r[2] ^ r[3], r[5], s, u)) for s in SELS for u in UNUSED]
    cases += [
        ("v_mul_i32_i24_sdwa {d}, sext(v2), sext(v3) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_2 "
         "src1_sel:BYTE_3", lambda r: (_i24(sel(r[2], "BYTE_2", True)) * _i24(sel(r[3], "BYTE_3", True)))),
        ("v_mul_u32_u24_sdwa {d}, -7, v2 dst_sel:WORD_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_1 src1_sel:WORD_1",
         lambda r: put(0xFF * sel(r[2], "WORD_1"), r[5], "WORD_1", "UNUSED_SEXT")),
        ("v_and_b32_sdwa {d}, s8, v3 dst_sel:BYTE_3 dst_unused:UNUSED_SEXT src0_sel:BYTE_2 src1_sel:WORD_1",
         lambda r: put(sel(s8(r), "BYTE_2") & sel(r[3], "WORD_1"), r[5], "BYTE_3", "UNUSED_SEXT")),
        ("v_max_i32_sdwa {d}, sext(v2), v3 dst_sel:WORD_0 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_3 "
         "src1_sel:BYTE_0", lambda r: put(np.maximum(sel(r[2], "BYTE_3", True).view(np.int32),
                                                      sel(r[3], "BYTE_0").view(np.int32)), r[5], "WORD_0",
                                           "UNUSED_PRESERVE")),
        ("v_lshrrev_b32_sdwa {d}, v2, v3 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD",
         lambda r: put(r[3] >> (r[2] & 31), r[5], "BYTE_1", "UNUSED_PAD")),
        ("v_mov_b32_sdwa {d}, sext(v2) dst_sel:BYTE_2 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1",
         lambda r: put(sel(r[2], "WORD_1", True), r[5], "BYTE_2", "UNUSED_PRESERVE")),
        ("v_add_co_u32_sdwa {d}, vcc, v2, v3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD",
         lambda r: sel(r[2], "WORD_1") + r[3]),
        ("v_cndmask_b32 {d}, 0, 1, vcc", lambda r: mask(sel(r[2], "WORD_1").astype(np.uint64) + r[3] >= 2 ** 32)),
        ("v_cndmask_b32_sdwa {d}, v2, v3, vcc dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:WORD_1 src1_sel:BYTE_2",
         lambda r: put(np.where(sel(r[2], "WORD_1").astype(np.uint64) + r[3] >= 2 ** 32, sel(r[3], "BYTE_2"),
                                sel(r[2], "WORD_1")), r[5], "BYTE_1", "UNUSED_SEXT")),
        # partial EXEC: lanes outside it keep the old value whatever dst_unused says
        (f"s_mov_b32 exec_lo, {EXEC_LO:#x}\ns_mov_b32 exec_hi, {EXEC_HI:#x}\n"
         "v_or_b32_sdwa {d}, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:BYTE_2",
         lambda r: np.where(ACTIVE, put(sel(r[2], "BYTE_1") | sel(r[3], "BYTE_2"), 0, "WORD_1", "UNUSED_PAD"), r[5])),
        (f"s_mov_b32 exec_lo, {EXEC_LO:#x}\ns_mov_b32 exec_hi, {EXEC_HI:#x}\n"
         "v_sub_u32_sdwa {d}, v2, v3 dst_sel:BYTE_2 dst_unused:UNUSED_PRESERVE src0_sel:WORD_0 src1_sel:BYTE_3",
         lambda r: np.where(ACTIVE, put(sel(r[2], "WORD_0") - sel(r[3], "BYTE_3"), r[5], "BYTE_2", "UNUSED_PRESERVE"),
                            r[5])),
    ]
    return cases


@needs_llvm
@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_every_dst_sel_with_every_dst_unused(arch):
    run_cases(dst_cases(), random_words(2), arch, lockstep=arch == "gfx90a")      # batched and wave by wave


def float_inputs(seed):
    rng = np.random.default_rng(seed)
    words = random_words(seed)
    for k in (0, 1):                                        # v2, v3: pairs of fp16
        words[k] = bits16(rng.standard_normal(N) * 3) | bits16(rng.standard_normal(N) * 3) << 16
    for k in (2, 4):                                        # v4, v6: fp32
        words[k] = bits32(rng.standard_normal(N).astype(np.float32))
    return words


def hi(x):
    return f16(x >> 16)


def float_cases():
    return [
        ("v_add_f16_sdwa {d}, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0",
         lambda r: put(bits16(hi(r[2]) + f16(r[3])), r[5], "WORD_1", "UNUSED_PRESERVE")),
        ("v_mul_f16_sdwa {d}, -|v2|, v3 dst_sel:WORD_0 dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:WORD_1",
         lambda r: bits16(-np.abs(f16(r[2])) * hi(r[3]))),
        ("v_sub_f16_sdwa {d}, v2, -v3 dst_sel:WORD_0 dst_unused:UNUSED_SEXT src0_sel:WORD_1 src1_sel:WORD_1",
         lambda r: put(bits16(hi(r[2]) + hi(r[3])), r[5], "WORD_0", "UNUSED_SEXT")),
        ("v_max_f16_sdwa {d}, v2, v3 clamp dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:WORD_0",
         lambda r: put(bits16(np.clip(np.fmax(hi(r[2]), f16(r[3])), 0, 1)), 0, "WORD_1", "UNUSED_PAD")),
        ("v_add_f16_sdwa {d}, v2, 1.0 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0",
         lambda r: put(bits16(hi(r[2]) + 1.0), r[5], "WORD_1", "UNUSED_PRESERVE")),
        ("v_mul_f16_sdwa {d}, -2.0, v3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:WORD_1",
         lambda r: bits16(-2.0 * hi(r[3]))),
        ("v_mul_f16_sdwa {d}, v2, 64 dst_sel:WORD_0 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:BYTE_0",
         lambda r: put(bits16(hi(r[2]) * f16(0x40)), r[5], "WORD_0", "UNUSED_PRESERVE")),
        ("v_add_f16_sdwa {d}, 0.15915494, v3 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:WORD_1",
         lambda r: put(bits16(f16(0x3118) + hi(r[3])), 0, "WORD_1", "UNUSED_PAD")),          # fp16 1/(2*pi)
        ("v_cvt_f32_f16_sdwa {d}, -v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1",
         lambda r: bits32(-hi(r[2]))),
        ("v_cvt_f16_f32_sdwa {d}, |v4| dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:DWORD",
         lambda r: put(bits16(np.abs(f32(r[4]))), r[5], "WORD_1", "UNUSED_PRESERVE")),
        ("v_add_f32_sdwa {d}, -v4, |v6| dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD",
         lambda r: bits32(-f32(r[4]) + np.abs(f32(r[6])))),
        ("v_mul_f32_sdwa {d}, v4, v6 clamp mul:2 dst_sel:WORD_1 dst_unused:UNUSED_SEXT src0_sel:DWORD src1_sel:DWORD",
         lambda r: put(bits32(np.clip(f32(r[4]) * f32(r[6]) * np.float32(2), 0, 1)), r[5], "WORD_1", "UNUSED_SEXT")),
        ("v_sub_f32_sdwa {d}, v4, s8 div:2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD",
         lambda r: bits32((f32(r[4]) - f32(s8(r))) * np.float32(0.5))),
        ("v_mul_f32_sdwa {d}, v2, v4 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD",
         lambda r: bits32(f32(sel(r[2], "WORD_1")) * f32(r[4]))),          # the raw bits, no conversion
        ("v_cmp_lt_f32_sdwa s[10:11], -v4, |v6| src0_sel:DWORD src1_sel:DWORD\nv_cndmask_b32 {d}, 0, 1, s[10:11]",
         lambda r: mask(-f32(r[4]) < np.abs(f32(r[6])))),
        ("v_cmp_lt_u32_sdwa s[10:11], v2, v3 src0_sel:BYTE_1 src1_sel:BYTE_2\nv_cndmask_b32 {d}, 0, 1, s[10:11]",
         lambda r: mask(sel(r[2], "BYTE_1") < sel(r[3], "BYTE_2"))),
        ("v_cmp_gt_i32_sdwa vcc, sext(v2), sext(v5) src0_sel:WORD_1 src1_sel:BYTE_0\nv_cndmask_b32 {d}, 0, 1, vcc",
         lambda r: mask(sel(r[2], "WORD_1", True).view(np.int32) > sel(r[5], "BYTE_0", True).view(np.int32))),
        ("v_cmp_le_u32_sdwa vcc, s8, v3 src0_sel:BYTE_3 src1_sel:BYTE_1\nv_cndmask_b32 {d}, 0, 1, vcc",
         lambda r: mask(sel(s8(r), "BYTE_3") <= sel(r[3], "BYTE_1"))),
        ("v_cmpx_gt_u32_sdwa s[12:13], v2, v3 src0_sel:BYTE_0 src1_sel:BYTE_3\ns_mov_b64 s[14:15], exec\n"
         "s_mov_b64 exec, -1\nv_cndmask_b32 {d}, 0, 1, s[14:15]",
         lambda r: mask(sel(r[2], "BYTE_0") > sel(r[3], "BYTE_3"))),
    ]


@needs_llvm
def test_float_operations_with_selection_modifiers_and_output_modifiers():
    run_cases(float_cases(), float_inputs(3))


def int16_cases():
    u16 = lambda x: np.asarray(x, np.uint32) & 0xFFFF                                          # noqa: E731
    i16 = lambda x: u16(x).astype(np.uint16).view(np.int16).astype(np.int64)                   # noqa: E731
    return [
        ("v_add_u16_sdwa {d}, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_1 src1_sel:BYTE_2",
         lambda r: put(sel(r[2], "BYTE_1") + sel(r[3], "BYTE_2"), r[5], "WORD_1", "UNUSED_PRESERVE")),
        ("v_add_u16_sdwa {d}, v2, v3 clamp dst_sel:WORD_0 dst_unused:UNUSED_SEXT src0_sel:WORD_1 src1_sel:WORD_0",
         lambda r: put(np.minimum(sel(r[2], "WORD_1") + sel(r[3], "WORD_0"), 0xFFFF), r[5], "WORD_0", "UNUSED_SEXT")),
        ("v_mul_lo_u16_sdwa {d}, v2, v3 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:BYTE_0",
         lambda r: put(sel(r[2], "WORD_1") * sel(r[3], "BYTE_0"), 0, "BYTE_1", "UNUSED_PAD")),
        ("v_lshlrev_b16_sdwa {d}, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD",
         lambda r: put(u16(r[3]) << (r[2] & 15), 0, "WORD_1", "UNUSED_PAD")),
        ("v_ashrrev_i16_sdwa {d}, v2, sext(v3) dst_sel:WORD_0 dst_unused:UNUSED_PRESERVE src0_sel:DWORD "
         "src1_sel:BYTE_3",
         lambda r: put((i16(sel(r[3], "BYTE_3", True)) >> (r[2] & 15)).astype(np.uint32), r[5], "WORD_0",
                       "UNUSED_PRESERVE")),
        ("v_max_i16_sdwa {d}, sext(v2), v3 dst_sel:WORD_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_0 src1_sel:WORD_1",
         lambda r: put(np.maximum(i16(sel(r[2], "BYTE_0", True)), i16(sel(r[3], "WORD_1"))).astype(np.uint32), r[5],
                       "WORD_1", "UNUSED_SEXT")),
        ("v_sub_u16_sdwa {d}, 9, v2 dst_sel:BYTE_2 dst_unused:UNUSED_PRESERVE src0_sel:DWORD src1_sel:BYTE_2",
         lambda r: put(9 - sel(r[2], "BYTE_2"), r[5], "BYTE_2", "UNUSED_PRESERVE")),
    ]


@needs_llvm
def test_16_bit_integer_operations():
    run_cases(int16_cases(), random_words(6))


def _fails(body, match, arch="gfx90a"):
    co = build(HEAD + body + "\ns_endpgm", args=(("in", 8), ("out", 8)), vgprs=12, sgprs=24, arch=arch)
    with pytest.raises(EmulationError, match=match):
        Emulator.load(co).launch("k", grid=1, block=64, args=[random_words(4), np.zeros(64, np.uint32)])


@needs_llvm
@pytest.mark.parametrize("body, match", [
    ("v_cvt_f16_f32_sdwa v8, v2 clamp dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:DWORD",
     "clamp on v_cvt_f16_f32"),
    ("v_add_u32_sdwa v8, v2, v3 clamp dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD",
     "clamp on an integer operation"),
    ("v_add_f16_sdwa v8, v2, v3 mul:2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD",
     "modifier mul on v_add_f16"),
    ("v_add_f16_sdwa v8, v2, 1.0 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:WORD_1",
     "float inline constant selected"),
])
def test_forms_the_emulator_refuses_name_themselves(body, match):
    _fails(body, match)


@needs_llvm
def test_preserved_destination_is_a_source_in_strict_mode():
    _fails("v_add_u32_sdwa v9, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_0 src1_sel:DWORD",
           "v9")
    co = build(HEAD + "v_add_u32_sdwa v9, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD\n"
               "global_store_dword v1, v9, s[6:7]\ns_endpgm", args=(("in", 8), ("out", 8)), vgprs=12, sgprs=24)
    out = np.zeros(64, np.uint32)
    words = random_words(5)
    Emulator.load(co).launch("k", grid=1, block=64, args=[words, out])
    np.testing.assert_array_equal(out, ((words[0, :64] & 0xFF) + words[1, :64]) << 16 & 0xFFFFFFFF)


def test_dst_sel_hazard_still_applies():
    """gfx942/gfx950: a VALU reading the result of an SDWA write with dst_sel other than DWORD
    needs one wait state (LLVM GCNHazardRecognizer::checkVALUHazards, Shift16DefWaitstates)."""
    word1 = P("v_add_f16_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:DWORD")
    dword = P("v_add_f16_sdwa v0, v1, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD")
    reader = P("v_add_f32 v3, v0, v1")
    for arch in ("gfx942", "gfx950"):
        assert {v.rule.name for v in hazards([word1], reader, load_arch(arch))} == {"dst_sel_forwarding"}
        assert not hazards([dword], reader, load_arch(arch))
    assert not hazards([word1], reader, load_arch("gfx90a"))
