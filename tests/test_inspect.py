"""`tensile-asm inspect`: resources, the main loop's mix and modelled static efficiency, LDS bank
conflicts from an emulated iteration, the JSON contract and the one-line errors."""

from __future__ import annotations

import dataclasses
import json
from types import MappingProxyType

import numpy as np
import pytest

from tensile_asm import toolchain
from tensile_asm.cli.main import main
from tensile_asm.errors import UserError
from tensile_asm.inspect import inspect_file
from tensile_asm.inspect.bank_conflicts import access_cycles, ds_access
from tensile_asm.inspect.issue_model import IssueTable, classify
from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.parser import parse_instruction
from tensile_asm.writer.kernel import write_kernel

from conftest import have_llvm
from gemm_geometry import gemm_geometry

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

JSON_KEYS = {"vgpr", "agpr", "sgpr", "lds_bytes", "occupancy", "loop", "bank_conflicts"}
LOOP_KEYS = {"mix", "static_efficiency", "instructions", "fma_instructions", "count_ratio"}


def gemm_kernel(tmp_path, arch_name="gfx90a", shape=(16, 16, 4, 4, 16), trans=(False, False), name="gemm",
                batched=True, use_beta=True):
    wg0, wg1, tt0, tt1, du = shape
    g = gemm_geometry((wg0, wg1), (tt0, tt1), du, trans, batched=batched, use_beta=use_beta)
    k = write_kernel(g, load_arch(arch_name), name)
    path = tmp_path / f"{name}.s"
    path.write_text(k.text())
    return path, k


def handwritten(body: str, name: str = "k", lds: int = 8192, arch: str = "gfx90a", threads: int = 64) -> str:
    """A standalone kernel without arguments (so ``inspect`` may launch it)."""
    return f""".amdgcn_target "amdgcn-amd-amdhsa--{arch}"
.amdhsa_code_object_version 5
.text
.globl {name}
.p2align 8
.type {name},@function
{name}:
{body}
.L{name}_end:
.size {name}, .L{name}_end-{name}
.rodata
.p2align 6
.amdhsa_kernel {name}
  .amdhsa_group_segment_fixed_size {lds}
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 8
  .amdhsa_system_vgpr_workitem_id 0
.end_amdhsa_kernel
.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--{arch}
amdhsa.kernels:
  - .name: {name}
    .symbol: {name}.kd
    .kernarg_segment_size: 0
    .group_segment_fixed_size: {lds}
    .private_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .wavefront_size: 64
    .sgpr_count: 10
    .vgpr_count: 8
    .max_flat_workgroup_size: {threads}
    .args: []
...
.end_amdgpu_metadata
"""


def lds_loop(shift: int) -> str:
    """Four iterations of: write, read, two FMAs, ... with the LDS address lane << ``shift``."""
    return f"""
  s_mov_b32 s2, 4
  v_mov_b32 v1, 1.0
.Lloop:
  v_lshlrev_b32 v2, {shift}, v0
  ds_write_b32 v2, v1
  s_waitcnt lgkmcnt(0)
  ds_read_b32 v3, v2
  s_waitcnt lgkmcnt(0)
  v_fmac_f32 v1, v3, v3
  v_fmac_f32 v1, v3, v3
  v_exp_f32 v4, v3
  s_nop 3
  s_sub_u32 s2, s2, 1
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc0 .Lloop
  s_endpgm
"""


HAND_MIX = {"valu": 1, "ds_write": 1, "waitcnt": 2, "ds_read": 1, "valu_fma": 2, "valu_quarter": 1, "nop": 1,
            "salu": 2, "branch": 1}


@pytest.mark.parametrize("arch_name,shape,trans", [
    ("gfx90a", (16, 16, 4, 4, 16), (False, False)),
    ("gfx90a", (8, 8, 4, 4, 8), (True, True)),
    ("gfx90a", (16, 8, 2, 4, 8), (False, True)),
    ("gfx942", (8, 8, 2, 2, 16), (True, False)),
    ("gfx942", (4, 16, 1, 2, 32), (False, False)),
])
def test_generated_loop_fma_count(tmp_path, arch_name, shape, trans):
    path, k = gemm_kernel(tmp_path, arch_name, shape, trans)
    (r,) = inspect_file(path, emulate=False)
    wg0, wg1, tt0, tt1, du = shape
    assert r.issue.fma_instructions == tt0 * tt1 * du
    assert r.issue.mix["valu_fma"] == tt0 * tt1 * du
    assert r.issue.mix["barrier"] == 2 and r.issue.mix["branch"] == 1
    assert r.resources.lds_bytes == k.resources.lds_bytes
    assert r.resources.vgpr == k.resources.vgprs and r.resources.used_sgpr == k.resources.sgprs
    assert r.resources.workgroup_size == wg0 * wg1
    assert r.resources.occupancy == k.occupancy()
    assert 0 < r.issue.static_efficiency < 1 and 0 < r.issue.count_ratio < 1


def test_handwritten_mix_and_cycles(tmp_path):
    src = tmp_path / "hand.s"
    src.write_text(handwritten(lds_loop(2)))
    (r,) = inspect_file(src, emulate=False)
    assert r.issue.mix == HAND_MIX
    assert r.issue.instructions == sum(HAND_MIX.values()) == 12
    assert r.issue.fma_instructions == 2
    # gfx90a table: 4 clocks per slot, quarter rate 16, s_nop 3 = 4 wait states.
    expected = {"valu": 4, "ds_write": 4, "waitcnt": 8, "ds_read": 4, "valu_fma": 8, "valu_quarter": 16,
                "nop": 16, "salu": 8, "branch": 4}
    assert r.issue.clocks == {c: expected[c] for c in r.issue.mix}
    assert r.issue.static_efficiency == pytest.approx(8 / 72)
    assert r.issue.count_ratio == pytest.approx(2 / 12)


def test_efficiency_follows_the_table(tmp_path):
    src = tmp_path / "hand.s"
    src.write_text(handwritten(lds_loop(2)))
    arch = load_arch("gfx90a")
    table = dict(arch.extra["issue_cycles"])
    table["valu_fma"] = 16
    table["nop"] = 1
    extra = dict(arch.extra)
    extra["issue_cycles"] = MappingProxyType(table)
    slow_fma = dataclasses.replace(arch, extra=MappingProxyType(extra))
    (base,) = inspect_file(src, emulate=False)
    (moved,) = inspect_file(src, emulate=False, arch=slow_fma)
    assert moved.issue.fma_clocks == 32 and moved.issue.total_clocks == 72 - 8 + 32 - 16 + 4
    assert moved.issue.static_efficiency == pytest.approx(32 / 84)
    assert moved.issue.static_efficiency > base.issue.static_efficiency
    assert moved.issue.count_ratio == base.issue.count_ratio


def test_missing_table_is_a_user_error():
    arch = load_arch("gfx90a")
    bare = dataclasses.replace(arch, extra=MappingProxyType({}))
    with pytest.raises(UserError, match="issue_cycles"):
        IssueTable.of(bare)


@pytest.mark.parametrize("arch_name,text,cls,clocks", [
    ("gfx90a", "v_mfma_f32_32x32x2f32 a[0:15], v0, v1, a[0:15]", "mfma", 64),
    ("gfx90a", "v_mfma_f32_16x16x16f16 a[0:3], v[0:1], v[2:3], a[0:3]", "mfma", 32),
    ("gfx90a", "v_mfma_f32_4x4x1f32 a[0:3], v0, v1, a[0:3]", "mfma", 8),
    ("gfx90a", "v_mfma_f64_16x16x4f64 v[0:7], v[8:9], v[10:11], v[0:7]", "mfma", 32),
    ("gfx942", "v_mfma_f32_32x32x2_f32 a[0:15], v0, v1, a[0:15]", "mfma", 64),
    ("gfx942", "v_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], a[0:3]", "mfma", 16),
    ("gfx942", "v_mfma_f32_32x32x4_xf32 a[0:15], v[0:1], v[2:3], a[0:15]", "mfma", 32),
    ("gfx942", "v_mfma_f32_16x16x1_4b_f32 a[0:15], v0, v1, a[0:15]", "mfma", 32),
    ("gfx90a", "v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[0:1]", "valu_fma", 4),
    ("gfx90a", "v_fma_f32 v0, v1, v2, v0", "valu_fma", 4),
    ("gfx90a", "v_mad_u32_u24 v0, v1, v2, v3", "valu", 4),
    ("gfx90a", "v_mul_lo_u32 v0, v1, v2", "valu_quarter", 16),
    ("gfx90a", "s_load_dwordx4 s[4:7], s[0:1], 0x0", "smem", 4),
    ("gfx90a", "buffer_load_dword v1, v2, s[4:7], 0 offen", "vmem_load", 4),
    ("gfx90a", "global_store_dword v[0:1], v2, off", "vmem_store", 4),
    ("gfx90a", "s_setprio 3", "misc", 4),
    ("gfx90a", "s_nop 0", "nop", 4),
])
def test_classes_and_clocks(arch_name, text, cls, clocks):
    ins = parse_instruction(text)
    assert classify(ins) == cls
    assert IssueTable.of(load_arch(arch_name)).clocks(ins) == clocks


# -- LDS bank conflicts -------------------------------------------------------------------------------

def _cycles(text, lane_bytes, active=None):
    acc = ds_access(parse_instruction(text))
    dwords = acc.dword_indices(np.asarray(lane_bytes, np.uint32))
    active = np.ones(len(lane_bytes), bool) if active is None else active
    return access_cycles(dwords, active, acc.bytes_per_lane, 32, 4)


def test_bank_model():
    lanes = np.arange(64)
    assert _cycles("ds_read_b32 v1, v0", lanes * 4) == (2, 2)                   # linear: conflict free
    assert _cycles("ds_read_b32 v1, v0", lanes * 128) == (64, 2)                # stride 32 dwords: 32-way
    assert _cycles("ds_read_b32 v1, v0", lanes * 8) == (4, 2)                   # stride 2 dwords: 2-way
    assert _cycles("ds_read_b32 v1, v0", lanes * 0) == (2, 2)                   # broadcast
    assert _cycles("ds_read_b64 v[2:3], v0", lanes * 8) == (4, 4)               # 16 lanes per phase
    assert _cycles("ds_read_b128 v[4:7], v0", lanes * 16) == (8, 8)             # 8 lanes per phase
    assert _cycles("ds_read_b128 v[4:7], v0", lanes * 32) == (16, 8)            # 2-way in every phase
    assert _cycles("ds_read2_b32 v[2:3], v0 offset1:32", lanes * 4) == (8, 4)   # the two halves 128 B apart
    half = np.arange(64) < 32
    assert _cycles("ds_write_b32 v0, v1", lanes * 128, half) == (32, 1)          # inactive phase not counted


@pytest.mark.parametrize("shift,conflicts", [(7, 2 * 2 * 31), (2, 0)])
def test_emulated_bank_conflicts(tmp_path, shift, conflicts):
    src = tmp_path / "lds.s"
    src.write_text(handwritten(lds_loop(shift)))
    (r,) = inspect_file(src)
    b = r.banks
    assert b is not None, r.banks_reason
    assert b.waves == 1 and len(b.instructions) == 2
    assert b.conflict_cycles == conflicts
    if conflicts:
        assert all(i.cycles == 64 and i.ideal_cycles == 2 for i in b.instructions)


def test_gemm_bank_conflicts_are_computed(tmp_path):
    path, k = gemm_kernel(tmp_path, shape=(8, 8, 4, 4, 8))
    (r,) = inspect_file(path)
    assert r.banks is not None, r.banks_reason
    assert r.banks.waves == 1
    ds = r.issue.mix["ds_read"] + r.issue.mix["ds_write"]
    assert len(r.banks.instructions) == ds and not r.banks.not_executed
    assert r.banks.conflict_cycles >= 0


def test_bank_conflicts_not_computed_without_launch_arguments(tmp_path):
    body = lds_loop(2)
    text = handwritten(body).replace(".args: []", ".args:\n      - { .name: x, .size: 4, .offset: 0, "
                                     ".value_kind: by_value }").replace(".kernarg_segment_size: 0",
                                                                        ".kernarg_segment_size: 4")
    src = tmp_path / "args.s"
    src.write_text(text)
    (r,) = inspect_file(src)
    assert r.banks is None and "not computed" in r.banks_reason and "arguments" in r.banks_reason
    d = r.as_dict()
    assert d["bank_conflicts"] is None and d["bank_conflicts_reason"].startswith("not computed")


def test_no_loop(tmp_path):
    src = tmp_path / "flat.s"
    src.write_text(handwritten("  v_mov_b32 v1, 0\n  s_endpgm\n"))
    (r,) = inspect_file(src)
    d = r.as_dict()
    assert d["loop"] is None and "no loop" in d["loop_reason"] and d["bank_conflicts"] is None


def test_trace_hook_sees_registers_before_the_instruction(tmp_path):
    from tensile_asm.emulator import Emulator

    co = tmp_path / "k.co"
    toolchain.assemble_and_link(handwritten(lds_loop(2)), load_arch("gfx90a"), co)
    seen = []
    Emulator.load(co, strict=False).launch("k", block=(64, 1, 1), trace=lambda w, i: seen.append(int(w.s[2])),
                                           trace_if=lambda i: i.opcode == "s_sub_u32")
    assert seen == [4, 3, 2, 1]


# -- CLI -------------------------------------------------------------------------------------------------

def test_cli_json_keys(tmp_path, capsys):
    path, _ = gemm_kernel(tmp_path, shape=(8, 8, 2, 2, 8))
    assert main(["inspect", str(path), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert JSON_KEYS <= set(d) and LOOP_KEYS <= set(d["loop"])
    assert 0 < d["loop"]["static_efficiency"] <= 1
    assert d["loop"]["fma_instructions"] == 2 * 2 * 8
    assert d["occupancy"]["waves_per_simd"] >= 1
    assert d["bank_conflicts"]["banks"] == 32


def test_cli_text_on_co_and_several_kernels(tmp_path, capsys):
    arch = load_arch("gfx90a")
    kernels = [write_kernel(gemm_geometry((8, 8), (2, 2), 8), arch, "first"),
               write_kernel(gemm_geometry((8, 8), (4, 2), 8, (True, False)), arch, "second")]
    from tensile_asm.writer.build import link_kernels

    co = tmp_path / "two.co"
    link_kernels(kernels, arch, co)
    assert main(["inspect", str(co), "--no-emulate"]) == 0
    out = capsys.readouterr().out
    assert "kernel       first" in out and "kernel       second" in out and "static efficiency" in out
    assert main(["inspect", str(co), "--json", "--no-emulate"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [k["kernel"] for k in d["kernels"]] == ["first", "second"]
    assert [k["loop"]["fma_instructions"] for k in d["kernels"]] == [32, 64]
    assert main(["inspect", str(co), "--json", "--no-emulate", "--kernel", "second"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["kernel"] == "second" and JSON_KEYS <= set(d)


@pytest.mark.parametrize("case", ["missing", "not_elf", "unknown_arch", "no_target", "bad_kernel", "wrong_arch"])
def test_cli_errors(tmp_path, capsys, case):
    if case == "missing":
        argv = ["inspect", str(tmp_path / "nope.co")]
    elif case == "not_elf":
        (tmp_path / "x.co").write_text("hello\n")
        argv = ["inspect", str(tmp_path / "x.co")]
    elif case in ("unknown_arch", "no_target"):
        src = tmp_path / "k.s"
        src.write_text(handwritten(lds_loop(2)).split("\n", 1)[1])       # drop .amdgcn_target
        argv = ["inspect", str(src)] + (["--arch", "gfx1234"] if case == "unknown_arch" else [])
    else:
        co = tmp_path / "k.co"
        toolchain.assemble_and_link(handwritten(lds_loop(2)), load_arch("gfx90a"), co)
        argv = ["inspect", str(co)] + (["--kernel", "nope"] if case == "bad_kernel" else ["--arch", "gfx942"])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tensile-asm: error:") and "Traceback" not in err


def test_main_loop_is_innermost_and_prefers_the_loading_loop(tmp_path):
    """Tensile's kernels: the tail loop can hold as many FMAs as the main loop in a longer body (its guards),
    and a persistent kernel's loop over tiles holds both; the main loop is the innermost one that loads."""
    fmas = "  v_fmac_f32 v1, v3, v3\n" * 4
    body = f"""
  s_mov_b32 s2, 2
.Ltiles:
  s_mov_b32 s3, 2
.Lmain:
  buffer_load_dword v3, v0, s[4:7], 0 offen
  s_waitcnt vmcnt(0)
{fmas}  s_sub_u32 s3, s3, 1
  s_cmp_eq_u32 s3, 0
  s_cbranch_scc0 .Lmain
  s_mov_b32 s3, 2
.Ltail:
  v_cmp_lt_u32 vcc, v0, v2
  v_cndmask_b32 v3, 0, v3, vcc
{fmas}  v_add_u32 v2, 1, v2
  s_sub_u32 s3, s3, 1
  s_cmp_eq_u32 s3, 0
  s_cbranch_scc0 .Ltail
  s_sub_u32 s2, s2, 1
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc0 .Ltiles
  s_endpgm
"""
    src = tmp_path / "loops.s"
    src.write_text(handwritten(body))
    (r,) = inspect_file(src, emulate=False)
    assert r.issue.fma_instructions == 4 and r.issue.mix["vmem_load"] == 1
    assert r.issue.instructions == 9 and "valu" not in r.issue.mix


def test_tensile_style_agprs_counted_from_the_descriptor(tmp_path):
    """Tensile's gfx90a metadata: .vgpr_count = the arch VGPRs (accum_offset), no .agpr_count; the AGPRs are
    the descriptor's registers past accum_offset."""
    text = handwritten("  v_accvgpr_write_b32 a3, 0\n  s_endpgm\n")
    text = text.replace(".amdhsa_next_free_vgpr 8", ".amdhsa_next_free_vgpr 16")
    src = tmp_path / "agpr.s"
    src.write_text(text)
    (r,) = inspect_file(src, emulate=False)
    assert (r.resources.vgpr, r.resources.agpr) == (8, 8) and r.resources.used_agpr == 4


@pytest.mark.parametrize("order,period", [
    # an MFMA (32x32x2: 16 passes, 64 clocks) with 15 others after it: all issue in its run
    (["m"] + ["v"] * 15 + ["m"] + ["v"] * 15, 128),
    # the same instructions clustered: the second MFMA waits for the pipe, the 30 others do not overlap
    (["m", "m"] + ["v"] * 30, 4 + 64 + 30 * 4),
])
def test_overlap_model_follows_the_order(tmp_path, order, period):
    lines = ["v_mfma_f32_32x32x2f32 a[0:15], v1, v2, a[0:15]" if o == "m" else "v_mov_b32 v3, v4" for o in order]
    body = "  s_mov_b32 s2, 4\n.Lloop:\n" + "".join(f"  {t}\n" for t in lines) + \
           "  s_sub_u32 s2, s2, 1\n  s_cmp_eq_u32 s2, 0\n  s_cbranch_scc0 .Lloop\n  s_endpgm\n"
    src = tmp_path / "mfma.s"
    src.write_text(handwritten(body).replace(".amdhsa_next_free_vgpr 8", ".amdhsa_next_free_vgpr 32"))
    (r,) = inspect_file(src, emulate=False)
    extra = 3 * 4                                                       # s_sub, s_cmp, the branch
    assert r.overlap.mfma_clocks == 128
    assert r.overlap.period == period + extra
    loop = r.as_dict()["loop"]
    assert loop["overlap"]["mfma_busy"] == pytest.approx(128 / r.overlap.period)
    assert loop["static_efficiency"] == pytest.approx(128 / (128 + 4 * (len(order) - 2) + extra))   # either order


def test_no_overlap_section_without_mfma(tmp_path):
    src = tmp_path / "hand.s"
    src.write_text(handwritten(lds_loop(2)))
    (r,) = inspect_file(src, emulate=False)
    assert r.overlap is None and "overlap" not in r.as_dict()["loop"]
