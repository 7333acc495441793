"""Hazard rules (isa/*.yaml `hazards`, tensile_asm/isa/hazards.py): each rule on a hand-written
sequence, the wait states it needs and how s_nop / independent instructions satisfy it; the Module pass
(minimal, idempotent, loops); and the strict emulator reporting a missing wait state."""

import numpy as np
import pytest

from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.hazard_pass import nops_for
from tensile_asm.isa.hazards import hazard_model, hazards, insert_wait_states, required_wait_states
from tensile_asm.isa.instruction import inst
from tensile_asm.isa.instruction_set import InstructionSet
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.parser import parse_instruction as P
from tensile_asm.isa.registers import Label, VReg

ALL = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950"]


def need(arch, history, consumer):
    return required_wait_states([P(h) for h in history], P(consumer), load_arch(arch))


def nops(wait_states):
    return [i.render() for i in nops_for(InstructionSet(load_arch("gfx90a")), wait_states)]


def rules_hit(arch, history, consumer):
    return {v.rule.name for v in hazards([P(h) for h in history], P(consumer), load_arch(arch))}


# (archs, producer(s), consumer, wait states required right after the producer, rule)
CASES = [
    (ALL, ["v_readfirstlane_b32 s4, v1"], "buffer_load_dword v1, v2, s[4:7], 0 offen", 5, "valu_sgpr_vmem"),
    (ALL, ["v_cmp_lt_u32 s[10:11], v1, v2"], "buffer_store_dword v1, v2, s[4:7], s10 offen", 5, "valu_sgpr_vmem"),
    (ALL, ["v_cmp_lt_u32 vcc, v1, v2"], "v_div_fmas_f32 v0, v1, v2, v3", 4, "valu_vcc_div_fmas"),
    (ALL, ["v_readfirstlane_b32 s8, v1"], "v_readlane_b32 s9, v2, s8", 4, "valu_sgpr_lane_select"),
    (ALL, ["v_readfirstlane_b32 s8, v1"], "v_writelane_b32 v2, s9, s8", 4, "valu_sgpr_lane_select"),
    (ALL, ["ds_read_b32 v1, v2"], "v_mov_b32_dpp v3, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf", 2, "vgpr_dpp"),
    (ALL, ["v_cmpx_lt_u32 vcc, v1, v2"], "v_mov_b32_dpp v3, v4 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf", 5,
     "valu_exec_dpp"),
    (ALL, ["s_mov_b32 m0, s1"], "s_movrels_b32 s2, s3", 1, "salu_m0_read"),
    (ALL, ["s_mov_b32 m0, -1"], "ds_read_addtid_b32 v1", 1, "salu_m0_read"),
    (["gfx90a", "gfx942", "gfx950"], ["s_mov_b32 m0, s1"], "buffer_load_dword v1, s[8:11], s12 offen lds", 1,
     "salu_m0_read"),
    (["gfx942", "gfx950"], ["s_mov_b32 m0, s1"], "global_load_lds_dword v2, s[4:5]", 1, "salu_m0_read"),
    (["gfx900", "gfx90a"], ["buffer_store_dwordx4 v[4:7], v1, s[8:11], 0 offen"], "v_mov_b32 v6, 0", 1,
     "vmem_store_data_overwrite"),
    (["gfx942", "gfx950"], ["global_store_dwordx3 v1, v[4:6], s[8:9]"], "v_mov_b32 v5, 0", 2,
     "vmem_store_data_overwrite"),
    # gfx908: AGPR results, v_accvgpr_read/write
    (["gfx908"], ["v_mfma_f32_32x32x2f32 a[0:15], v1, v2, a[0:15]"], "v_accvgpr_read_b32 v3, a5", 18, "mfma_accvgpr_read"),
    (["gfx908"], ["v_mfma_f32_4x4x1f32 a[0:3], v1, v2, a[0:3]"], "v_accvgpr_read_b32 v3, a1", 4, "mfma_accvgpr_read"),
    (["gfx908"], ["v_mfma_f32_16x16x4f32 a[0:3], v1, v2, a[0:3]"], "v_mfma_f32_16x16x4f32 a[4:7], v1, v2, a[2:5]", 2,
     "mfma_srcc_overlapped"),
    (["gfx908"], ["v_mfma_f32_16x16x4f32 a[0:3], v1, v2, a[4:7]"], "v_accvgpr_write_b32 a5, v9", 5,
     "mfma_srcc_accvgpr_write_war"),
    (["gfx908"], ["v_accvgpr_write_b32 a2, v1"], "v_mfma_f32_4x4x1f32 a[0:3], v1, v2, a[0:3]", 1, "accvgpr_write_mfma_srcc"),
    (["gfx908"], ["v_add_f32 v1, v2, v3"], "v_mfma_f32_4x4x1f32 a[0:3], v1, v2, a[0:3]", 2, "valu_vgpr_mfma"),
    (["gfx908"], ["v_accvgpr_read_b32 v3, a0"], "global_store_dword v2, v3, s[6:7]", 2, "accvgpr_read_mem"),
    # gfx90a: results in VGPRs or AGPRs, read by VALU / memory / another MFMA
    (["gfx90a"], ["v_mfma_f32_32x32x2f32 v[0:15], v21, v22, v[0:15]"], "v_add_f32 v30, v3, v3", 19, "smfma_valu_mem_read"),
    (["gfx90a"], ["v_mfma_f32_16x16x4f32 a[0:3], v1, v2, a[0:3]"], "v_accvgpr_read_b32 v3, a1", 11, "smfma_valu_mem_read"),
    (["gfx90a"], ["v_mfma_f32_4x4x1f32 v[0:3], v8, v9, v[0:3]"], "ds_write_b32 v10, v2", 5, "smfma_valu_mem_read"),
    (["gfx90a"], ["v_mfma_f32_16x16x4f32 v[0:3], v8, v9, v[0:3]"], "v_mov_b32 v2, 0", 11, "smfma_waw"),
    (["gfx90a"], ["v_mfma_f32_32x32x2f32 v[0:15], v21, v22, v[32:47]"], "v_mov_b32 v40, 0", 15, "smfma_srcc_war"),
    (["gfx90a"], ["v_mfma_f32_16x16x4f32 v[0:3], v8, v9, v[0:3]"], "v_mfma_f32_16x16x4f32 v[4:7], v8, v9, v[2:5]", 8,
     "smfma_srcc_overlapped"),
    (["gfx90a"], ["v_mfma_f32_16x16x4f32 v[0:3], v8, v9, v[0:3]"], "v_mfma_f32_16x16x4f32 v[4:7], v0, v9, v[4:7]", 11,
     "smfma_srcab"),
    (["gfx90a"], ["v_mfma_f64_16x16x4f64 v[0:7], v[8:9], v[10:11], v[0:7]"], "v_add_f64 v[20:21], v[2:3], 0", 11,
     "dmfma16_valu_read"),
    (["gfx90a"], ["v_mfma_f64_4x4x4f64 v[0:1], v[8:9], v[10:11], v[0:1]"], "v_mfma_f64_4x4x4f64 v[0:1], v[8:9], v[10:11], v[0:1]",
     4, "dmfma4x4_srcc_same"),
    (["gfx90a"], ["v_mfma_f64_4x4x4f64 v[0:1], v[8:9], v[10:11], v[0:1]"], "v_fma_f64 v[20:21], v[22:23], v[24:25], v[26:27]",
     2, "dgemm_fma64"),
    (["gfx90a", "gfx942"], ["v_cmpx_lt_u32 vcc, v1, v2"], "v_mfma_f32_4x4x1f32 v[0:3], v8, v9, v[0:3]", 4, "valu_exec_mfma"),
    (["gfx90a", "gfx942", "gfx950"], ["v_add_f32 v8, v1, v2"], "v_mfma_f32_32x32x2f32 v[0:15], v8, v9, v[0:15]", 2,
     "valu_write_mfma_read"),
    (["gfx90a", "gfx942"], ["v_accvgpr_write_b32 a8, v1"], "v_mfma_f32_32x32x2f32 a[0:15], v8, v9, a[0:15]", 2,
     "valu_write_mfma_read"),
    # gfx942 / gfx950: pass-dependent, XDL vs SGEMM, VALU co-execution
    (["gfx942"], ["v_mfma_f32_32x32x8_f16 v[0:15], v[20:21], v[22:23], v[0:15]"], "v_add_f32 v30, v3, v3", 11,
     "xdl_valu_mem_read"),
    (["gfx950"], ["v_mfma_f32_32x32x8_f16 v[0:15], v[20:21], v[22:23], v[0:15]"], "v_add_f32 v30, v3, v3", 12,
     "xdl_valu_mem_read"),                                               # 8 passes + 3, + 1 on gfx950 (llc-22)
    (["gfx942"], ["v_mfma_f32_16x16x4_f32 v[0:3], v8, v9, v[0:3]"], "v_add_f32 v30, v3, v3", 10, "smfma_valu_mem_read"),
    (["gfx942"], ["v_mfma_f32_16x16x16_f16 v[0:3], v[8:9], v[10:11], v[0:3]"],
     "v_mfma_f32_16x16x16_f16 v[4:7], v[8:9], v[10:11], v[2:5]", 5, "xdl_srcc_overlapped"),
    (["gfx942"], ["v_mfma_f32_16x16x16_f16 v[0:3], v[8:9], v[10:11], v[0:3]"],
     "v_mfma_f32_16x16x16_f16 v[4:7], v[0:1], v[10:11], v[4:7]", 7, "xdl_srcab"),
    (["gfx942"], ["v_mfma_f32_4x4x4_16b_f16 v[0:3], v[8:9], v[10:11], v[0:3]"],
     "v_mfma_f32_4x4x4_16b_f16 v[0:3], v[8:9], v[10:11], v[0:3]", 2, "mfma2pass_srcc_same"),
    (["gfx942"], ["v_mfma_f32_16x16x16_f16 v[0:3], v[8:9], v[10:11], v[4:7]"], "v_mov_b32 v5, 0", 3,
     "xdl_srcc_war"),                                                                  # 4 passes on gfx942
    (["gfx950"], ["v_mfma_f32_16x16x16_f16 v[0:3], v[8:9], v[10:11], v[4:7]"], "v_mov_b32 v5, 0", 3,
     "xdl_srcc_war"),                                                                  # 4 passes on gfx950 too
    (["gfx942", "gfx950"], ["v_cmp_lt_u32 vcc, v1, v2"], "v_cndmask_b32 v3, v4, v5, vcc", 2, "valu_sgpr_valu_read"),
    (["gfx942", "gfx950"], ["v_cmp_lt_u32 s[10:11], v1, v2"], "v_cndmask_b32_e64 v3, v4, v5, s[10:11]", 2,
     "valu_sgpr_valu_read"),
    (["gfx942"], ["v_add_f32 v1, v2, v3"], "v_readfirstlane_b32 s4, v1", 1, "valu_vgpr_readlane"),
    (["gfx942"], ["v_cmpx_lt_u32 vcc, v1, v2"], "v_readfirstlane_b32 s4, v1", 4, "valu_exec_rwlane"),
    (["gfx942"], ["v_exp_f32 v1, v2"], "v_add_f32 v3, v1, v1", 1, "trans_forwarding"),
]


@pytest.mark.parametrize("archs,producers,consumer,wait,rule", CASES, ids=[c[4] + "-" + c[0][0] for c in CASES])
def test_rule_requires_its_wait_states(archs, producers, consumer, wait, rule):
    for arch in archs:
        assert rule in rules_hit(arch, producers, consumer), (arch, rules_hit(arch, producers, consumer))
        assert need(arch, producers, consumer) == wait, arch
        # wait - 1 wait states in between are not enough, wait are: as s_nop or as independent instructions
        assert need(arch, producers + nops(wait - 1), consumer) == 1, arch
        assert need(arch, producers + nops(wait), consumer) == 0, arch
        assert need(arch, producers + ["s_mov_b32 s99, 0"] * wait, consumer) == 0, arch


def test_rules_that_do_not_exist_on_an_architecture():
    assert need("gfx90a", ["v_cmp_lt_u32 vcc, v1, v2"], "v_cndmask_b32 v3, v4, v5, vcc") == 0   # gfx940 only
    assert need("gfx900", ["v_exp_f32 v1, v2"], "v_add_f32 v3, v1, v1") == 0
    assert need("gfx90a", ["buffer_store_dwordx2 v[4:5], v1, s[8:11], 0 offen"], "v_mov_b32 v5, 0") == 0  # 8 bytes
    assert need("gfx90a", ["buffer_store_dwordx4 v[4:7], v1, s[8:11], s3 offen"], "v_mov_b32 v5, 0") == 0  # soffset reg
    # the same register range as SrcC right after: back-to-back accumulation is free
    assert need("gfx90a", ["v_mfma_f32_16x16x4f32 v[0:3], v8, v9, v[0:3]"],
                "v_mfma_f32_16x16x4f32 v[0:3], v8, v9, v[0:3]") == 0
    # XDL result as SrcC of an SGEMM MFMA on gfx942: none; SGEMM result into XDL SrcC: none either
    assert need("gfx942", ["v_mfma_f32_16x16x4_f32 v[0:3], v8, v9, v[0:3]"],
                "v_mfma_f32_16x16x16_f16 v[4:7], v[8:9], v[10:11], v[2:5]") == 0
    # unrelated registers
    assert need("gfx90a", ["v_mfma_f32_32x32x2f32 v[0:15], v21, v22, v[0:15]"], "v_add_f32 v30, v16, v17") == 0


def test_nearest_producer_decides():
    """As GCNHazardRecognizer: the nearest MFMA overlapping the operand decides, not an older one."""
    history = ["v_mfma_f32_16x16x4f32 v[0:3], v8, v9, v[4:7]",            # partial overlap, older
               "v_mfma_f32_4x4x1f32 v[0:3], v8, v9, v[0:3]"]                # nearest: 2 passes
    assert need("gfx90a", history, "v_add_f32 v20, v1, v1") == 5


def test_messages_name_rule_instructions_and_counts():
    [v] = hazards([P("v_cmp_lt_u32 vcc, v1, v2"), P("v_mov_b32 v9, 0")], P("v_cndmask_b32 v3, v4, v5, vcc"),
                  load_arch("gfx942"))
    msg = v.message()
    assert "valu_sgpr_valu_read" in msg and "checkVALUHazards" in msg
    assert "`v_cndmask_b32 v3, v4, v5, vcc` after" in msg and "`v_cmp_lt_u32 vcc, v1, v2`" in msg
    assert "1 wait state(s) between them, 2 required" in msg


def test_every_architecture_has_rules_and_they_compile():
    for arch in ALL:
        model = hazard_model(load_arch(arch))
        assert len(model.rules) >= 9
        assert {"valu_sgpr_vmem", "salu_m0_read", "vmem_store_data_overwrite"} <= {r.name for r in model.rules}
    assert {r.name for r in hazard_model(load_arch("gfx908")).rules} >= {"mfma_accvgpr_read", "accvgpr_read_mem"}


# -- the Module pass ----------------------------------------------------------------------------------
def test_pass_inserts_minimal_nops_and_is_idempotent():
    arch = load_arch("gfx90a")
    seq = [P("v_mfma_f32_32x32x2f32 v[0:15], v21, v22, v[0:15]"), P("v_mov_b32 v30, 1.0"),
           P("v_add_f32 v30, v3, v30")]
    assert insert_wait_states(seq, arch) == 18
    assert [i.render().split()[0:2] for i in seq[1:4]] == [["v_mov_b32", "v30,"], ["s_nop", "7"], ["s_nop", "7"]]
    assert seq[4].render().startswith("s_nop 1")
    assert required_wait_states(seq[:-1], seq[-1], arch) == 0
    assert insert_wait_states(seq, arch) == 0
    assert len(seq) == 6


def test_pass_follows_loops_and_works_on_modules_with_virtual_registers():
    arch = load_arch("gfx942")
    mask, x = VReg("s", 2, "mask", align=2), VReg("v", 1, "x")
    body = Module("body").add(inst("v_cndmask_b32", x, x, x, mask))          # reads the mask at loop top
    tail = Module("tail").add(inst("v_cmp_lt_u32", mask, x, 0),              # ... written at the bottom
                              inst("s_cbranch_scc1", Label("top")))
    top = Module("k").add(inst("v_mov_b32", x, 0), inst("s_mov_b64", mask, 0), LabelDef("top"), body, tail,
                          inst("s_endpgm"))
    assignment = {mask: 4, x: 0}
    assert insert_wait_states(top, arch, assignment) == 1     # the back edge: the branch + s_nop 0
    assert body.items[0].render(assignment) .startswith("s_nop 0") and "valu_sgpr_valu_read" in body.items[0].comment
    assert insert_wait_states(top, arch, assignment) == 0


def test_generated_kernels_are_hazard_free():
    from tensile_asm.writer.kernel import write_kernel
    from gemm_geometry import gemm_geometry
    g = gemm_geometry((8, 8), (4, 4), 8, (False, True))
    for name in ("gfx90a", "gfx942"):
        arch = load_arch(name)
        k = write_kernel(g, arch, "k")
        nops = [i for i in k.module.instructions() if i.opcode == "s_nop"]
        assert bool(nops) == (name == "gfx942")          # v_cmp -> v_cndmask needs 2 wait states on gfx942 only
        assert insert_wait_states(k.module, arch, k.assignment) == 0


# -- the strict emulator --------------------------------------------------------------------------------
def test_strict_emulator_reports_a_missing_wait_state():
    from conftest import have_llvm
    if not have_llvm():
        pytest.skip("LLVM AMDGPU toolchain not installed (tools/setup)")
    from tensile_asm.emulator import Emulator
    from tensile_asm.errors import EmulationError
    from emulator_asm import build
    body = """
    s_load_dwordx2 s[4:5], s[0:1], 0x0
    v_lshlrev_b32 v1, 2, v0
    v_cmp_lt_u32 vcc, v0, 7
    {nop}
    v_cndmask_b32 v2, 0, 1.0, vcc
    s_waitcnt lgkmcnt(0)
    global_store_dword v1, v2, s[4:5]
    s_endpgm
    """
    ok = Emulator.load(build(body.format(nop="s_nop 1"), vgprs=4, sgprs=8, arch="gfx942"))
    out = np.zeros(64, np.float32)
    ok.launch("k", grid=1, block=64, args=[out])
    assert (out[:7] == 1).all() and (out[7:] == 0).all()
    for nop in ("", "s_nop 0"):
        em = Emulator.load(build(body.format(nop=nop), vgprs=4, sgprs=8, arch="gfx942"))
        address = next(i.address for i in em.instructions("k") if i.opcode == "v_cndmask_b32")
        with pytest.raises(EmulationError) as info:
            em.launch("k", grid=1, block=64, args=[out])
        msg = str(info.value)
        assert f"at 0x{address:x} `v_cndmask_b32" in msg and "valu_sgpr_valu_read" in msg
        assert f"{1 if nop else 0} wait state(s) between them, 2 required" in msg
        Emulator.load(build(body.format(nop=nop), vgprs=4, sgprs=8, arch="gfx942"), strict=False).launch(
            "k", grid=1, block=64, args=[out])                                   # not strict: runs
    # the same code is fine on gfx90a (no such rule there)
    Emulator.load(build(body.format(nop=""), vgprs=4, sgprs=8, arch="gfx90a")).launch("k", grid=1, block=64,
                                                                                       args=[out])
