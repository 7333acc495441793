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
