"""The asm parser: objdump lines and our own .s lines become canonical Instruction objects."""

import pytest

from tensile_asm.isa.parser import (AsmParseError, decode_waitcnt_gfx9, parse_asm, parse_instruction,
                                    parse_objdump)
from tensile_asm.isa.registers import Imm, Label, Reg, Special, float_bits

from conftest import have_llvm

needs_llvm = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


def test_brief_examples():
    i = parse_instruction("s_load_dwordx4 s[4:7], s[0:1], 0x0")
    assert i.opcode == "s_load_dwordx4" and i.operands == (Reg("s", 4, 4), Reg("s", 0, 2), Imm(0))
    i = parse_instruction("v_cmp_lt_u32_e64 vcc, v0, s8")
    assert i.opcode == "v_cmp_lt_u32" and i.operands == (Special("vcc"), Reg("v", 0), Reg("s", 8))
    i = parse_instruction("v_cndmask_b32_e32 v1, v2, v3, vcc")
    assert i.opcode == "v_cndmask_b32" and len(i.operands) == 4
    i = parse_instruction("v_addc_co_u32_e64 v7, vcc, v8, 0, vcc")
    assert i.opcode == "v_addc_co_u32" and i.operands[3] == Imm(0) and i.defs == (Reg("v", 7), Special("vcc"))
    i = parse_instruction("buffer_load_dwordx4 v[4:7], v2, s[4:7], s9 offen offset:16")
    assert i.operands == (Reg("v", 4, 4), Reg("v", 2), Reg("s", 4, 4), Reg("s", 9))
    assert i.has_modifier("offen") and i.modifier("offset") == 16
    i = parse_instruction("ds_read2_b32 v[4:5], v2 offset0:1 offset1:3")
    assert i.modifier("offset0") == 1 and i.modifier("offset1") == 3 and i.operands == (Reg("v", 4, 2), Reg("v", 2))
    i = parse_instruction("s_waitcnt vmcnt(0) lgkmcnt(0)")
    assert i.modifiers == (("vmcnt", 0), ("lgkmcnt", 0)) and i.operands == ()
    i = parse_instruction("global_load_dword v1, v2, s[4:5]")
    assert i.operands == (Reg("v", 1), Reg("v", 2), Reg("s", 4, 2))
    i = parse_instruction("global_load_dword v1, v[2:3], off offset:-16")
    assert i.operands[2] == Special("off") and i.modifier("offset") == -16
    i = parse_instruction("s_cbranch_scc1 L0")
    assert i.operands == (Label("L0"),)


def test_immediates_keep_the_hardware_meaning():
    assert parse_instruction("v_mul_f32_e32 v1, 1.0, v1").operands[1] == Imm(1.0)
    inv2pi = parse_instruction("v_mul_f32_e32 v1, 0.15915494, v1").operands[1]
    assert inv2pi.bits == 0x3E22F983
    # a literal for a float op is a bit pattern; an inline integer is the integer's bits
    assert parse_instruction("v_mul_f32_e32 v1, 0x3e800000, v1").operands[1].bits == float_bits(0.25)
    assert parse_instruction("v_mul_f32_e32 v1, 3, v1").operands[1].bits == 3
    assert parse_instruction("v_mul_f32_e32 v1, -3, v1").operands[1].bits == 0xFFFFFFFD
    assert parse_instruction("v_add_u32_e32 v1, 0xffffff9c, v1").operands[1].bits == (-100) & 0xFFFFFFFF
    assert parse_instruction("v_mov_b32 v0, -0.5").operands[1].bits == float_bits(-0.5)


def test_source_modifiers_and_output_modifiers():
    i = parse_instruction("v_fma_f32 v1, -v1, v2, |v3|")
    assert i.modifier("neg") == 0b0010 and i.modifier("abs") == 0b1000
    assert i.render() == "v_fma_f32 v1, -v1, v2, |v3|"
    i = parse_instruction("v_mul_f32_e64 v1, -|v1|, s2 mul:2 clamp")
    assert i.modifier("neg") == 0b10 and i.modifier("abs") == 0b10 and i.modifier("mul") == 2
    assert i.has_modifier("clamp")
    assert parse_instruction(i.render()) == i


def test_numeric_waitcnt_decodes_gfx9_fields():
    # vmcnt 5 (low bits 5, high bits 0), expcnt 7 (no wait), lgkmcnt 2
    simm = 5 | (7 << 4) | (2 << 8)
    assert decode_waitcnt_gfx9(simm) == (("vmcnt", 5), ("lgkmcnt", 2))
    assert decode_waitcnt_gfx9(0xCF7F) == ()          # every counter at its maximum: no wait
    assert parse_instruction("s_waitcnt 0").modifiers == (("vmcnt", 0), ("expcnt", 0), ("lgkmcnt", 0))


def test_objdump_labels_are_per_function_and_resolved():
    text = """
k.co:	file format elf64-amdgpu

Disassembly of section .text:

0000000000001500 <first>:
	s_branch L0                                                // 000000001500: BF820000
0000000000001504 <L0>:
	s_endpgm                                                   // 000000001504: BF810000

0000000000001600 <second>:
	s_cbranch_scc0 L0                                          // 000000001600: BF840001
	s_nop 0                                                    // 000000001604: BF800000
0000000000001608 <L0>:
	s_endpgm                                                   // 000000001608: BF810000
"""
    fns = parse_objdump(text, {"first", "second"})
    assert set(fns) == {"first", "second"}
    assert fns["first"].instructions[0].operands[0].address == 0x1504
    assert fns["second"].instructions[0].operands[0].address == 0x1608
    assert [i.address for i in fns["second"].instructions] == [0x1600, 0x1604, 0x1608]
    # without --symbolize-operands the target is a word offset from the next instruction
    raw = parse_instruction("s_branch 65534", address=0x2000)
    assert raw.operands[0].address == 0x2000 + 4 - 8


def test_unreadable_objdump_line_is_kept_as_unparsed():
    text = "0000000000001500 <k>:\n\tv_bogus v1, ???          // 000000001500: 00000000\n"
    (ins,) = parse_objdump(text, {"k"})["k"].instructions
    assert ins.opcode == "<unparsed>" and "v_bogus" in ins.comment and ins.address == 0x1500


def test_parse_asm_skips_directives_and_blocks():
    src = """
.text
k:            // the entry
  s_mov_b32 s0, 7   ; a comment
loop: s_sub_u32 s0, s0, 1
  s_cmp_lg_u32 s0, 0
  s_cbranch_scc1 loop
  s_endpgm
.amdhsa_kernel k
  .amdhsa_next_free_vgpr 1
.end_amdhsa_kernel
"""
    insts, labels = parse_asm(src)
    assert [i.opcode for i in insts] == ["s_mov_b32", "s_sub_u32", "s_cmp_lg_u32", "s_cbranch_scc1", "s_endpgm"]
    assert labels == {"k": 0, "loop": 1}
    with pytest.raises(AsmParseError, match="line 3"):
        parse_asm("s_nop 0\n\nv_add_u32 v1, v2, ???\n")


ROUND_TRIP = """
s_load_dwordx2 s[8:9], s[0:1], 0x10
s_mov_b64 s[2:3], exec
s_movk_i32 s4, 0x1234
s_bfe_u32 s5, s6, 0x40008
v_lshl_add_u32 v1, v2, 2, v3
v_add_co_u32 v4, vcc, v5, v6
v_subb_co_u32 v4, s[10:11], v5, v6, vcc
v_cmpx_gt_i32 vcc, 5, v0
v_fmac_f32 v1, v2, v3
v_fma_f32 v1, -v2, |v3|, 0.5
v_mul_f32 v1, 0x42280000, v2
v_add_u32 v1, 0x1000, v1
buffer_store_dwordx2 v[4:5], v1, s[12:15], 0 offen offset:8
buffer_atomic_add_f32 v2, v1, s[12:15], s3 offen glc
ds_write2_b64 v1, v[2:3], v[4:5] offset0:2 offset1:9
ds_read_b128 v[4:7], v1 offset:1024
global_store_dword v1, v2, s[4:5] offset:-8
s_waitcnt vmcnt(2) lgkmcnt(1)
s_endpgm
"""


@needs_llvm
def test_objdump_round_trip_matches_our_own_parse():
    from emulator_asm import build
    from tensile_asm.codeobject import kernel_instructions, read_code_object

    co = read_code_object(build(ROUND_TRIP, vgprs=8, sgprs=16))
    dumped = kernel_instructions(co, "k")
    ours, _ = parse_asm(ROUND_TRIP)
    assert len(dumped) == len(ours)
    for d, o in zip(dumped, ours):
        assert d.opcode == o.opcode
        assert d.modifiers == o.modifiers, (d, o)
        for a, b in zip(d.operands, o.operands):
            if isinstance(a, Imm):
                assert a.bits == b.bits, (d, o)
            else:
                assert a == b, (d, o)
        assert d.address is not None


SDWA_OBJDUMP = """
0000000000001a00 <k>:
\tv_add_u32_sdwa v0, sext(v1), v2 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_1 src1_sel:WORD_0// 000000001A00: 680004F9 04090901
\tv_cmp_eq_u32_sdwa s[0:1], v1, v2 src0_sel:BYTE_1 src1_sel:WORD_0// 000000001A08: 7D9404F9 04018001
\tv_cmp_lt_f32_sdwa vcc, -v1, |v2| src0_sel:WORD_1 src1_sel:DWORD// 000000001A10: 7C8204F9 26150001
\tv_add_co_u32_sdwa v1, vcc, v2, v3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD// 000000001A18: 320206F9 06000602
\tv_add_f32_sdwa v1, v2, 1.0 clamp mul:2 dst_sel:WORD_0 dst_unused:UNUSED_PAD src0_sel:BYTE_2 src1_sel:DWORD// 000000001A20: 0203E4F9 86026402
\tv_mov_b32_sdwa v1, s2 dst_sel:WORD_0 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_2// 000000001A28: 7E0202F9 00820402
"""


def test_sdwa_forms_objdump_prints():
    add, cmp_s, cmp_vcc, carry, fadd, mov = parse_objdump(SDWA_OBJDUMP)["k"].instructions
    assert add.opcode == "v_add_u32_sdwa" and add.operands == (Reg("v", 0), Reg("v", 1), Reg("v", 2))
    assert add.modifiers == (("dst_sel", 1), ("dst_unused", 1), ("src0_sel", 1), ("src1_sel", 4), ("sext", 0b10))
    assert add.render() == ("v_add_u32_sdwa v0, sext(v1), v2 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_1 "
                            "src1_sel:WORD_0")                                 # as LLVM prints it
    again = parse_instruction(add.render())
    assert (again.operands, again.modifiers) == (add.operands, add.modifiers) and add.address == 0x1A00
    assert cmp_s.defs == (Reg("s", 0, 2),) and cmp_s.modifiers == (("src0_sel", 1), ("src1_sel", 4))
    assert cmp_vcc.defs == (Special("vcc"),) and cmp_vcc.modifier("neg") == 0b10 and cmp_vcc.modifier("abs") == 0b100
    assert carry.defs == (Reg("v", 1), Special("vcc"))        # the base operation's two destinations
    assert fadd.operands[2] == Imm(1.0) and fadd.has_modifier("clamp") and fadd.modifier("mul") == 2
    assert mov.operands[1] == Reg("s", 2) and mov.modifier("dst_unused") == 2 and mov.modifier("src0_sel") == 2


SDWA_ROUND_TRIP = """
v_mov_b32 v1, 0
v_mov_b32 v2, 0
v_add_f16_sdwa v3, -v1, |v2| dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:DWORD
v_mul_i32_i24_sdwa v4, sext(v1), sext(v2) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_2 src1_sel:BYTE_3
v_cmpx_gt_u32_sdwa s[4:5], v1, s2 src0_sel:BYTE_0 src1_sel:BYTE_3
v_cndmask_b32_sdwa v5, v1, v2, vcc dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:WORD_1 src1_sel:BYTE_2
s_endpgm
"""


@needs_llvm
def test_sdwa_objdump_matches_our_own_parse():
    from emulator_asm import build
    from tensile_asm.codeobject import kernel_instructions, read_code_object

    dumped = kernel_instructions(read_code_object(build(SDWA_ROUND_TRIP, vgprs=8, sgprs=16)), "k")
    ours, _ = parse_asm(SDWA_ROUND_TRIP)
    assert [(d.opcode, d.operands, d.modifiers) for d in dumped] == [(o.opcode, o.operands, o.modifiers) for o in ours]
