"""Instructions created for an architecture are checked: the opcode against isa/instructions/<arch>.txt,
the operands against tensile_asm/isa/operand_table.py. The table itself is checked against LLVM's
assembler, and the writer creates instructions only through the checked factory."""

import ast
import fnmatch
import subprocess
import tempfile
from pathlib import Path

import pytest

from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.instruction_lists import LISTED_ARCHES, load_instructions
from tensile_asm.isa.instruction_set import InstructionError, InstructionSet
from tensile_asm.isa.opcodes import op_info, strip_encoding_suffix
from tensile_asm.isa.operand_table import TABLE, signature
from tensile_asm.isa.registers import EXEC, OFF, VCC, Imm, Label, Reg, VReg

from conftest import REPO, have_llvm


def isa(name="gfx90a") -> InstructionSet:
    return InstructionSet(load_arch(name))


v, s = (lambda i, n=1: Reg("v", i, n)), (lambda i, n=1: Reg("s", i, n))


def raises(message_parts, fn, *args, **kw):
    with pytest.raises(InstructionError) as e:
        fn(*args, **kw)
    for part in message_parts:
        assert part in str(e.value), str(e.value)
    return str(e.value)


def test_checked_instruction_renders_like_the_plain_one():
    i = isa().inst("buffer_load_dwordx4", v(4, 4), v(2), s(8, 4), 0, mods=["offen", ("offset", 16)])
    assert i.render() == "buffer_load_dwordx4 v[4:7], v2, s[8:11], 0 offen offset:16"
    assert isa().waitcnt(vmcnt=0, lgkmcnt=3).render() == "s_waitcnt vmcnt(0) lgkmcnt(3)"


def test_misspelled_opcodes_are_named_with_a_suggestion():
    raises(["v_fam_f32 is not an instruction of gfx90a", "did you mean v_fma_f32"],
           isa().inst, "v_fam_f32", v(0), v(1), v(2), v(3))
    # the typo that used to become an ALU op without a wait counter
    raises(["s_lod_dword is not an instruction of gfx906", "did you mean s_load_dword"],
           isa("gfx906").inst, "s_lod_dword", s(0), s(2, 2), 0)


def test_foreign_opcodes_name_the_architectures_that_have_them():
    msg = raises(["v_mfma_f32_32x32x2f32 is not an instruction of gfx906", "gfx908"],
                 isa("gfx906").inst, "v_mfma_f32_32x32x2f32", v(0, 16), v(16), v(17), v(0, 16))
    assert "gfx900" not in msg.split(";")[1]
    raises(["ds_read_b64_tr_b16 is not an instruction of gfx90a", "it is one of gfx950"],
           isa("gfx90a").inst, "ds_read_b64_tr_b16", v(0, 2), v(2))
    raises(["v_fmac_f64 is not an instruction of gfx908"], isa("gfx908").inst, "v_fmac_f64", v(0, 2), v(2, 2), v(4, 2))
    assert isa("gfx90a").inst("v_fmac_f64", v(0, 2), v(2, 2), v(4, 2)).render() == "v_fmac_f64 v[0:1], v[2:3], v[4:5]"


def test_wrong_operand_count():
    raises(["v_add_f32 on gfx90a takes 3 operands", "given 2"], isa().inst, "v_add_f32", v(0), v(1))
    raises(["s_endpgm on gfx90a takes 0 operands", "given 1"], isa().inst, "s_endpgm", 0)
    raises(["buffer_load_dword on gfx942 takes 4 operands"], isa("gfx942").inst, "buffer_load_dword", v(0), v(1), s(4, 4))


def test_wrong_operand_kind():
    # VOP2 in its 32-bit encoding: the second source is a VGPR (unsuffixed, LLVM would pick VOP3)
    raises(["v_add_f32_e32 on gfx90a: operand 2 must be VGPR", "given SGPR s2"],
           isa().inst, "v_add_f32_e32", v(0), v(1), s(2))
    assert isa().inst("v_add_f32", v(0), v(1), s(2)).render() == "v_add_f32 v0, v1, s2"
    raises(["operand 0 must be VGPR", "given SGPR s0"], isa().inst, "v_mul_f32", s(0), v(1), v(2))
    raises(["ds_read_b32 on gfx900: operand 1 must be VGPR", "given SGPR s3"],
           isa("gfx900").inst, "ds_read_b32", v(0), s(3))
    raises(["s_branch on gfx90a: operand 0 must be label", "given constant 4"], isa().inst, "s_branch", 4)
    raises(["s_add_u32 on gfx90a: operand 0 must be SGPR", "given VGPR v0"], isa().inst, "s_add_u32", v(0), s(1), 2)
    raises(["v_accvgpr_read_b32 on gfx908: operand 1 must be AGPR"], isa("gfx908").inst, "v_accvgpr_read_b32", v(0), v(1))
    raises(["buffer_store_dword on gfx90a: operand 3 must be SGPR or constant", "given off"],
           isa().inst, "buffer_store_dword", v(0), v(1), s(4, 4), OFF)


def test_wrong_register_width():
    raises(["v_fma_f64 on gfx90a: operand 0 must be VGPR x2", "given VGPR v0"],
           isa().inst, "v_fma_f64", v(0), v(2, 2), v(4, 2), v(6, 2))
    raises(["v_add_f64 on gfx90a: operand 2 must be", "x2", "given VGPR v4"],
           isa().inst, "v_add_f64", v(0, 2), v(2, 2), v(4))
    raises(["buffer_load_dwordx4 on gfx90a: operand 0 must be AGPR or VGPR x4", "given VGPR x2 v[0:1]"],
           isa().inst, "buffer_load_dwordx4", v(0, 2), v(2), s(4, 4), 0)
    raises(["s_load_dwordx16 on gfx90a: operand 0 must be SGPR x16", "given SGPR x8"],
           isa().inst, "s_load_dwordx16", s(16, 8), s(0, 2), 0)
    raises(["v_mfma_f32_32x32x2f32 on gfx90a: operand 0 must be", "x16", "given AGPR x4"],
           isa().inst, "v_mfma_f32_32x32x2f32", Reg("a", 0, 4), v(0), v(1), Reg("a", 0, 16))
    # virtual registers carry their count too; special registers have theirs (vcc is a pair)
    raises(["v_cndmask_b32 on gfx90a: operand 3 must be SGPR x2", "given SGPR %s.mask"],
           isa().inst, "v_cndmask_b32", v(0), v(1), v(2), VReg("s", 1, "mask"))
    assert isa().inst("v_cndmask_b32", v(0), v(1), v(2), VCC).render() == "v_cndmask_b32 v0, v1, v2, vcc"
    assert isa().inst("s_mov_b64", EXEC, VReg("s", 2, "saved")).operands[0] == EXEC


def test_register_placement_per_arch():
    raises(["ds_read_b32 on gfx906: operand 0", "gfx906 has no AGPRs"], isa("gfx906").inst, "ds_read_b32", Reg("a", 0), v(1))
    raises(["memory instructions on gfx908 take no AGPRs"], isa("gfx908").inst, "ds_read_b32", Reg("a", 0), v(1))
    assert isa("gfx90a").inst("ds_read_b32", Reg("a", 0), v(1)).render() == "ds_read_b32 a0, v1"
    # gfx90a and later: VGPR tuples start at an even register; gfx908 takes odd ones
    raises(["v_fma_f64 on gfx90a: operand 1 (VGPR x2 v[3:4]): a range of 2 registers must start at a multiple of 2"],
           isa().inst, "v_fma_f64", v(0, 2), v(3, 2), v(6, 2), v(8, 2))
    assert isa("gfx908").inst("v_fma_f64", v(0, 2), v(3, 2), v(6, 2), v(8, 2))
    acc = VReg("v", 4, "acc", align=2)
    raises(["operand 0", "must start at a multiple of 2 on gfx942"],
           isa("gfx942").inst, "ds_read_b64", acc.slice(1, 2), v(0))
    isa("gfx942").inst("ds_read_b64", acc.slice(2, 2), v(0))
    # SGPR pairs are even, wider ranges start at a multiple of 4 (every gfx9)
    raises(["s_load_dwordx2 on gfx900: operand 0 (SGPR x2 s[1:2])", "multiple of 2"],
           isa("gfx900").inst, "s_load_dwordx2", s(1, 2), s(4, 2), 0)
    raises(["buffer_load_dword on gfx90a: operand 2 (SGPR x4 s[2:5])", "multiple of 4"],
           isa().inst, "buffer_load_dword", v(0), v(1), s(2, 4), 0, mods=["offen"])
    # a fixed register's slice is placed from its base: checked so even after the same slice of a free one passed
    isa("gfx900").inst("s_load_dwordx2", VReg("s", 4, "free", align=4).slice(2, 2), s(4, 2), 0)
    raises(["s_load_dwordx2 on gfx900: operand 0", "multiple of 2"],
           isa("gfx900").inst, "s_load_dwordx2", VReg("s", 4, "fixed", fixed=1).slice(2, 2), s(4, 2), 0)


def test_returning_global_atomic_writes_one_more_operand():
    g = isa()
    g.inst("global_atomic_add_f32", v(0), v(1), s(2, 2))
    raises(["takes 4 operands", "given 3"], g.inst, "global_atomic_add_f32", v(0), v(1), s(2, 2), mods=["glc"])
    assert g.inst("global_atomic_add_f32", v(3), v(0), v(1), s(2, 2), mods=["glc"]).defs == (v(3),)


def test_repeated_code_is_the_same_code_in_new_objects():
    from tensile_asm.isa.module import Comment, LabelDef, Module
    g = isa()
    inner = Module("inner").add(g.inst("ds_read_b32", v(1), v(2), mods=[("offset", 8)]), Comment("note"))
    m = Module("outer").add(g.inst("v_fmac_f32", v(0), v(1), 2.0, comment="c"), inner)
    again = g.repeat(m)
    assert again.render() == m.render()
    old, new = m.code(), again.code()
    assert [id(x) for x in old] != [id(x) for x in new] and not {id(x) for x in old} & {id(x) for x in new}
    assert again.items[1] is not inner and [x.operands for x in old] == [x.operands for x in new]
    assert new[0].info == old[0].info and new[1].modifiers == (("offset", 8),)
    with pytest.raises(TypeError, match="cannot be repeated"):
        g.repeat(Module("loop").add(LabelDef(".Lx"), g.inst("s_branch", Label(".Lx"))))


def test_waitcnt_counts_within_the_arch_limits():
    raises(["s_waitcnt lgkmcnt(16) on gfx90a: the count must be 0..15"], isa().waitcnt, lgkmcnt=16)
    raises(["vmcnt(-1)"], isa().waitcnt, vmcnt=-1)
    assert isa().waitcnt(vmcnt=63).render() == "s_waitcnt vmcnt(63)"


# --- the table: no typos, and LLVM agrees with every row --------------------------------------------

def _table_names():
    for line in TABLE.splitlines():
        if line.strip() and not line.startswith("#"):
            yield from line.partition("|")[0].split()


def _listed_names() -> dict[str, set[str]]:
    return {a: {strip_encoding_suffix(n) for n in load_instructions(a) if not n.endswith(("_sdwa", "_dpp"))}
            for a in LISTED_ARCHES}


def test_every_table_name_is_an_instruction_somewhere():
    listed = set().union(*_listed_names().values())
    unknown = [n for n in _table_names() if not (fnmatch.filter(listed, n) if "*" in n else n in listed)]
    assert not unknown, f"operand_table names no architecture has: {unknown}"


def _sample(opcode: str, arch: str):
    """(operands, modifiers) for ``opcode`` from the first alternative of each operand of its row."""
    specs = signature(opcode)
    ops, next_reg = [], {"v": 0, "a": 0, "s": 8}
    mfma_agpr = arch == "gfx908" and opcode.startswith("v_mfma")     # gfx908: D and C only in AGPRs
    scalar_reads = 0                # gfx9 VALU: one SGPR or literal read (the constant bus)
    for i, spec in enumerate(specs):
        kinds, width = spec.alternatives[0]
        kind = "a" if mfma_agpr and i in (0, 3) else ("v" if "v" in kinds else kinds[0])
        if kind == "s" and opcode.startswith("v_") and i >= op_info(opcode).num_defs:
            scalar_reads += 1
            kind = "i" if scalar_reads > 1 and "i" in kinds else kind
        if kind in "vas":
            align = min(4, 1 << (width - 1).bit_length())
            idx = -(-next_reg[kind] // align) * align
            next_reg[kind] = idx + width
            ops.append(Reg(kind, idx, width))
        else:
            ops.append({"i": Imm(1), "l": Label(".Lsample"), "o": OFF}[kind])
    mods = ["offen"] if opcode.startswith("buffer_") and specs[1].alternatives[0][0] == "v" else []
    return ops, mods


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("arch", LISTED_ARCHES)
def test_llvm_assembles_every_row_of_the_table(arch):
    """Every opcode of the arch's list that the table describes, built through the checker from its
    row, is accepted by llvm-mc: the table's kinds and widths are LLVM's."""
    from tensile_asm.toolchain_paths import find_llvm_tool

    g = isa(arch)
    names = sorted(n for n in _listed_names()[arch] if signature(n) is not None and n != "s_waitcnt")
    lines = []
    for n in names:
        ops, mods = _sample(n, arch)
        lines.append(g.inst(n, *ops, mods=mods).render())
    assert len(lines) > 300
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "rows.s"
        src.write_text(".Lsample:\n" + "\n".join(lines) + "\n")
        out = subprocess.run([find_llvm_tool("llvm-mc"), "-arch=amdgcn", f"-mcpu={arch}", str(src), "-o", "/dev/null"],
                             capture_output=True, text=True)
    errors = [ln for ln in out.stderr.splitlines() if "error:" in ln]
    assert not errors, f"{len(errors)} rows llvm-mc refuses on {arch}, e.g.:\n" + "\n".join(
        f"{e}\n    {lines[int(e.split(':')[1]) - 2]}" for e in errors[:12])


# --- the writer uses only the checked factory --------------------------------------------------------

def test_writer_creates_instructions_only_through_the_checked_factory():
    unchecked = []
    for path in sorted((REPO / "tensile_asm" / "writer").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "tensile_asm.isa.instruction":
                bad = {a.name for a in node.names} & {"inst", "waitcnt"}
                if bad:
                    unchecked.append(f"{path.name}:{node.lineno} imports {', '.join(sorted(bad))}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                    "inst", "waitcnt", "Instruction"):
                unchecked.append(f"{path.name}:{node.lineno} calls {node.func.id}()")
    assert not unchecked, unchecked
