"""writer/mfma_schedule.py: the merge keeps every stream's order and every register dependency on an MFMA,
fills the MFMAs' runs (the global reads after the first MFMA, the LDS writes in the last runs), and leaves a
part with a branch as written. Whole kernels with the schedule verify in test_mfma_kernels.py."""

from __future__ import annotations

import random

import pytest

from tensile_asm.inspect.issue_model import overlap
from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.module import LabelDef
from tensile_asm.isa.parser import parse_instruction
from tensile_asm.writer.mfma_schedule import _conflict, _Access, interleave

ARCH = load_arch("gfx90a")


def ins(text):
    return parse_instruction(text)


def k_steps(steps: int, tiles: int, opcode="v_mfma_f32_32x32x2f32", acc=16):
    """PrefetchLocalRead-1 style MAC steps: the reads of step u, then its MFMAs (one per output)."""
    out = []
    for u in range(steps):
        base = 40 + u * 2 * tiles
        out += [ins(f"ds_read_b32 v{base + t}, v7 offset:{512 * (u * tiles + t)}") for t in range(tiles)]
        out += [ins(f"ds_read_b32 v{base + tiles + t}, v2 offset:{8 * (u * tiles + t)}") for t in range(tiles)]
        out += [ins(f"{opcode} a[{t * acc}:{t * acc + acc - 1}], v{base + t}, v{base + tiles + t}, "
                    f"a[{t * acc}:{t * acc + acc - 1}]") for t in range(tiles)]
    return out


def loads(n):
    return [ins(f"buffer_load_dword v{10 + i}, v{3 + i % 4}, s[36:39], 0 offen") for i in range(n)] + \
           [ins(f"v_add_u32 v{3 + i}, s3, v{3 + i}") for i in range(4)]


def writes(n):
    return [ins(f"ds_write_b32 v6, v{10 + i} offset:{4 * i + 16384}") for i in range(n)] + [ins("s_barrier")]


def check_merge(early, region, late, out):
    written = early + region + late
    assert sorted(map(str, out)) == sorted(map(str, written))          # the same instructions, once each
    where = {id(i): n for n, i in enumerate(out)}
    for stream in (early, [i for i in region if not i.opcode.startswith("v_mfma")], late,
                   [i for i in region if i.opcode.startswith("v_mfma")]):
        assert [where[id(i)] for i in stream] == sorted(where[id(i)] for i in stream)   # stream order kept
    mfmas = [i for i in written if i.opcode.startswith("v_mfma")]
    for a in written:
        for m in mfmas:
            if a is not m and not a.opcode.startswith("v_mfma") and _conflict(_Access(a), _Access(m)):
                before = written.index(a) < written.index(m)
                assert (where[id(a)] < where[id(m)]) == before, f"{a} crossed {m}"
    return where


def test_runs_are_filled_and_dependencies_kept():
    early, region, late = loads(8), k_steps(4, 2), writes(8)
    m = interleave(region, ARCH, late, early)
    out = m.instructions()
    where = check_merge(early, region, late, out)
    first_mfma = min(where[id(i)] for i in region if i.opcode.startswith("v_mfma"))
    last_mfma = max(where[id(i)] for i in region if i.opcode.startswith("v_mfma"))
    assert all(where[id(i)] > first_mfma for i in early)               # in the first runs, not in front
    assert all(where[id(i)] > last_mfma - 1 for i in late[:4])          # the writes at the end
    assert overlap(out, ARCH).mfma_busy > overlap(early + region + late, ARCH).mfma_busy
    assert overlap(out, ARCH).mfma_busy == pytest.approx(1.0, abs=0.06)


@pytest.mark.parametrize("seed", range(6))
def test_random_regions_keep_order_and_dependencies(seed):
    rng = random.Random(seed)
    steps, tiles = rng.randint(1, 4), rng.randint(1, 3)
    opcode, acc = rng.choice([("v_mfma_f32_32x32x2f32", 16), ("v_mfma_f32_16x16x4f32", 4)])
    region = k_steps(steps, tiles, opcode, acc)
    # a VALU that writes an MFMA operand between its reads and the MFMA, and one that reads an accumulator
    pick = rng.randrange(len(region))
    if region[pick].opcode.startswith("v_mfma"):
        region.insert(pick, ins(f"v_mov_b32 {region[pick].uses[0]}, 0"))
    region.insert(rng.randrange(len(region) + 1), ins("v_accvgpr_read_b32 v90, a1"))
    early, late = loads(rng.randint(0, 12)), writes(rng.randint(0, 6))
    out = interleave(region, ARCH, late, early).instructions()
    check_merge(early, region, late, out)


def test_global_reads_sharing_a_register_stay_in_front():
    region = k_steps(2, 1)
    early = [ins("buffer_load_dword v40, v3, s[36:39], 0 offen")]      # writes the first step's A operand
    out = interleave(region, ARCH, [], early).instructions()
    assert out[0] is early[0]
    check_merge(early, region, [], out)


def test_branching_part_is_left_as_written():
    region = k_steps(2, 2)
    early = [ins("s_cmp_eq_u32 s4, 0"), ins("s_cbranch_scc1 .Lskip"), ins("buffer_load_dword v10, v3, s[36:39], 0 offen"),
             LabelDef(".Lskip")]
    items = interleave(region, ARCH, writes(2), early).flatten()
    assert items[:4] == early


def test_packing_is_kept_two_instructions_from_its_mfma():
    """A VALU write an MFMA reads needs two wait states (isa/gfx90a.yaml valu_write_mfma_read): where the packing of
    an operand would sit right before its MFMA, ready instructions that the MFMA does not touch go between (the
    next tile's global reads), so the hazard pass needs no s_nop."""
    region = [ins("v_lshl_or_b32 v50, v41, 16, v40"), ins("v_lshl_or_b32 v51, v43, 16, v42"),
              ins("v_mfma_f32_32x32x8f16 a[0:15], v[50:51], v[60:61], a[0:15]"),
              ins("v_mfma_f32_32x32x8f16 a[16:31], v[50:51], v[62:63], a[16:31]")]
    early = loads(3)
    out = interleave(region, ARCH, [], early).instructions()
    where = check_merge(early, region, [], out)
    assert where[id(region[2])] - where[id(region[1])] >= 3, [str(i) for i in out]
    # with nothing else to issue the order stays as written (the hazard pass adds the s_nop)
    alone = interleave(region, ARCH).instructions()
    assert [str(i) for i in alone] == [str(i) for i in region]
