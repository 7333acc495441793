"""64-bit ("DP ALU") DPP: ``row_newbcast`` on fp64 VOP1/VOP2 operations and ``v_mov_b64`` (gfx942+),
on random data against numpy written here: the pair is read from one source lane, row/bank masks and
inactive source lanes leave both destination registers unwritten (or read 0 with bound_ctrl)."""

from fractions import Fraction

import numpy as np
import pytest

from tensile_asm.emulator import Emulator
from tensile_asm.errors import EmulationError

from conftest import have_llvm
from emulator_asm import SIX_ROWS_IN_TWO_OUT, build

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

LOAD = SIX_ROWS_IN_TWO_OUT

L = np.arange(64)
ROW = L & ~15


def pair(r, i):
    return r[i].astype(np.uint64) | (r[i + 1].astype(np.uint64) << np.uint64(32))


def f64(r, i):
    return pair(r, i).view(np.float64)


def fused(a, b, c):
    """fp64 a*b+c rounded once (exact rationals; v_fmac_f64 is a fused multiply-add)."""
    return np.array([float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in
                     zip(a.tolist(), b.tolist(), c.tolist())])


def bits(x):
    return np.asarray(x, np.float64).view(np.uint64)


def enabled(row_mask, bank_mask):
    return (((row_mask >> (L >> 4)) & 1) == 1) & (((bank_mask >> ((L >> 2) & 3)) & 1) == 1)


KEEP_OLD = "v_mov_b32 v8, v4\nv_mov_b32 v9, v5\n"      # old destination value: v[4:5]
EXEC_HOLES = "s_mov_b32 exec_lo, 0xfffbfffa\ns_nop 4\n"  # lanes 0, 2 and 18 (rows 0 and 1's source) inactive
EXEC_FULL = "\ns_mov_b32 exec_lo, -1"

# op -> (archs, expected 64-bit result per lane)
CASES = {
    KEEP_OLD + "v_ceil_f64_dpp v[8:9], v[2:3] row_newbcast:5 row_mask:0x5 bank_mask:0x3":
        (None, lambda r: np.where(enabled(0x5, 0x3), bits(np.ceil(f64(r, 2)[ROW + 5])), pair(r, 4))),
    "v_floor_f64_dpp v[8:9], v[2:3] row_newbcast:15 row_mask:0xf bank_mask:0xf":
        (None, lambda r: bits(np.floor(f64(r, 2)[ROW + 15]))),
    "v_rndne_f64_dpp v[8:9], -v[2:3] row_newbcast:0 row_mask:0xf bank_mask:0xf":
        (None, lambda r: bits(np.rint(-f64(r, 2)[ROW]))),
    "v_mov_b32 v8, v6\nv_mov_b32 v9, v7\ns_nop 1\nv_fmac_f64_dpp v[8:9], v[2:3], v[4:5] row_newbcast:7 row_mask:0xf bank_mask:0xf":
        (None, lambda r: bits(fused(f64(r, 2)[ROW + 7], f64(r, 4), f64(r, 6)))),
    "v_cvt_f64_f32_dpp v[8:9], v2 row_newbcast:3 row_mask:0xf bank_mask:0xf":
        (None, lambda r: bits(r[2].view(np.float32)[ROW + 3].astype(np.float64))),
    "v_cvt_f32_f64_dpp v8, v[2:3] row_newbcast:11 row_mask:0xf bank_mask:0xf\nv_mov_b32 v9, 0":
        (None, lambda r: f64(r, 2)[ROW + 11].astype(np.float32).view(np.uint32).astype(np.uint64)),
    "v_cvt_i32_f64_dpp v8, v[2:3] row_newbcast:2 row_mask:0xf bank_mask:0xf\nv_mov_b32 v9, 0":
        (None, lambda r: np.trunc(f64(r, 2)[ROW + 2]).astype(np.int64).astype(np.uint32).astype(np.uint64)),
    KEEP_OLD + EXEC_HOLES + "v_trunc_f64_dpp v[8:9], v[2:3] row_newbcast:2 row_mask:0xf bank_mask:0xf" + EXEC_FULL:
        (None, lambda r: np.where(L < 32, pair(r, 4), bits(np.trunc(f64(r, 2)[ROW + 2])))),
    KEEP_OLD + EXEC_HOLES + "v_trunc_f64_dpp v[8:9], v[2:3] row_newbcast:2 row_mask:0xf bank_mask:0xf bound_ctrl:0"
    + EXEC_FULL:
        (None, lambda r: np.where((L == 0) | (L == 2) | (L == 18), pair(r, 4),
                                  np.where(L < 32, 0, bits(np.trunc(f64(r, 2)[ROW + 2]))))),
    KEEP_OLD + "v_mov_b64_dpp v[8:9], v[2:3] row_newbcast:9 row_mask:0xa bank_mask:0xe":
        (("gfx942", "gfx950"), lambda r: np.where(enabled(0xA, 0xE), pair(r, 2)[ROW + 9], pair(r, 4))),
    "v_mov_b64 v[8:9], v[2:3]": (("gfx942", "gfx950"), lambda r: pair(r, 2)),
}

RUNS = [(op, arch) for op, (archs, _) in CASES.items() for arch in (archs or ("gfx90a", "gfx942", "gfx950"))]


def _run(op, words, arch):
    out = np.full((2, 64), 0xFFC00000, np.uint32)
    em = Emulator.load(build(LOAD.format(op=op), args=(("in", 8), ("out", 8)), vgprs=12, sgprs=16, arch=arch))
    em.launch("k", grid=1, block=64, args=[words, out])
    return out


@pytest.mark.parametrize("op,arch", RUNS, ids=[f"{o.split('_dpp')[0].split()[-1]}{i}-{a}" for i, (o, a) in enumerate(RUNS)])
def test_dpp64(op, arch):
    rng = np.random.default_rng(len(op))
    words = (rng.standard_normal((6, 64)) * 1000).view(np.uint32)[:, ::2].copy()     # fp64 pairs: lo, hi
    doubles = rng.standard_normal((3, 64)) * 1000
    words[[0, 2, 4]] = doubles.view(np.uint64).astype(np.uint32)
    words[[1, 3, 5]] = (doubles.view(np.uint64) >> np.uint64(32)).astype(np.uint32)
    if "v_cvt_f64_f32" in op:
        words[0] = rng.standard_normal(64).astype(np.float32).view(np.uint32)
    out = _run(op, words, arch)
    regs = [None, None] + [words[i] for i in range(6)]
    expect = CASES[op][1](regs).astype(np.uint64)
    got = out[0].astype(np.uint64) | (out[1].astype(np.uint64) << np.uint64(32))
    np.testing.assert_array_equal(got, expect)


@pytest.mark.parametrize("init,unwritten", [("", "v8"), ("v_mov_b32 v8, v4\n", "v9"), ("v_mov_b32 v9, v5\n", "v8")])
def test_partly_written_dpp64_destination_is_read(init, unwritten):
    """With lanes left unwritten, both registers of the destination pair must hold values already."""
    op = init + "v_ceil_f64_dpp v[8:9], v[2:3] row_newbcast:1 row_mask:0x5 bank_mask:0xf"
    words = np.random.default_rng(1).integers(1, 2 ** 31, (6, 64)).astype(np.uint32)
    with pytest.raises(EmulationError, match=f"reads {unwritten},"):
        _run(op, words, "gfx90a")


def test_fully_written_dpp64_destination_is_not_read():
    op = "v_ceil_f64_dpp v[8:9], v[2:3] row_newbcast:1 row_mask:0xf bank_mask:0xf"
    words = np.random.default_rng(2).standard_normal((6, 64)).astype(np.float32).view(np.uint32).copy()
    out = _run(op, words, "gfx90a")
    expect = bits(np.ceil(f64([None, None] + list(words), 2)[ROW + 1]))
    np.testing.assert_array_equal(out[0].astype(np.uint64) | (out[1].astype(np.uint64) << np.uint64(32)), expect)


def test_dpp64_other_controls_are_refused():
    """Only row_newbcast exists for DP ALU DPP (llvm-mc refuses the others), so the parsed form is compiled."""
    from types import SimpleNamespace

    from tensile_asm.emulator.program import Compiler, Unsupported
    from tensile_asm.emulator.registry import registry
    from tensile_asm.isa.parser import parse_instruction
    cx = Compiler(SimpleNamespace(wavefront_size=64), SimpleNamespace(float_denorm_mode_32=3), True, {})
    ins = parse_instruction("v_ceil_f64_dpp v[8:9], v[2:3] row_shl:1 row_mask:0xf bank_mask:0xf")
    with pytest.raises(Unsupported, match="only row_newbcast"):
        registry().handlers[ins.opcode](ins, cx)
    ok = parse_instruction("v_ceil_f64_dpp v[8:9], v[2:3] row_newbcast:1 row_mask:0xf bank_mask:0xf")
    registry().handlers[ok.opcode](ok, cx)


def test_parser_reads_negated_register_pairs_before_modifiers():
    from tensile_asm.isa.parser import parse_instruction
    ins = parse_instruction("v_rndne_f64_dpp v[8:9], -|v[2:3]| row_newbcast:0 row_mask:0xf bank_mask:0xf")
    assert [str(o) for o in ins.operands] == ["v[8:9]", "v[2:3]"]
    assert ins.modifier("neg") == 2 and ins.modifier("abs") == 2 and ins.modifier("row_newbcast") == 0
    ins = parse_instruction("v_add_f64 v[8:9], v[4:5], -v[2:3]")
    assert len(ins.operands) == 3 and ins.modifier("neg") == 4
