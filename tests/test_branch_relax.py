"""Branch relaxation (tensile_asm/isa/branch_relax.py) and the encoding sizes it measures with
(tensile_asm/isa/encoding.py): a synthetic stream whose branches are out of the 16-bit reach gets Tensile's
long form (short branches untouched, a branch pushed out by another's long form relaxed too); the size
estimate equals llvm-mc's encoding of real kernels; a real kernel with long branches runs right on the
emulator (long forms forced by a smaller reach, so the kernel stays small), and (--slow) the random run's
complex-float kernel whose loop branch is beyond 128 KiB builds, assembles and verifies at edge sizes."""

from __future__ import annotations

import pytest

from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.codeobject import kernel_instructions, read_code_object
from tensile_asm.isa import branch_relax
from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.branch_relax import far_branches, relax_branches
from tensile_asm.isa.encoding import encoded_bytes
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.instruction_set import InstructionSet
from tensile_asm.isa.module import LabelDef, Module
from tensile_asm.isa.registers import VCC, Label, Reg
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution

from conftest import have_llvm
from kernel_build import build_linked

ARCH = load_arch("gfx900")
ISA = InstructionSet(ARCH)
PAIR = Reg("s", 40, 2)
NOP = ISA.inst("s_nop", 0)
needs_llvm = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


def nops(n):
    return [NOP] * n      # 4 bytes each (one object: only the branches' identities matter)


def texts(items):
    """Rendered items without their comments."""
    return [x.render().split("//")[0].strip() if isinstance(x, Instruction) else f"{x.name}:" for x in items]


def test_far_branches_get_the_long_form_and_short_ones_stay():
    near = ISA.inst("s_cbranch_vccz", Label("near"))
    back = ISA.inst("s_branch", Label("top"))
    items = [LabelDef("top"), ISA.inst("s_cmp_eq_u32", Reg("s", 2), 0), ISA.inst("s_cbranch_scc1", Label("far")),
             near, *nops(3), LabelDef("near"),
             *[ISA.inst("v_fma_f32", Reg("v", 1), Reg("v", 2), Reg("v", 3), Reg("v", 1))] * 17000,
             LabelDef("far"), ISA.inst("s_add_u32", Reg("s", 3), Reg("s", 3), 1), back, ISA.inst("s_endpgm")]
    asked = []
    assert relax_branches(items, ARCH, lambda: asked.append(1) or PAIR) == 2
    assert asked == [1]
    text = texts(items)
    i = text.index("s_cbranch_scc0 .LLongBranch0_skip")
    assert text[i:i + 7] == [
        "s_cbranch_scc0 .LLongBranch0_skip", "s_getpc_b64 s[40:41]", ".LLongBranch0:",
        "s_add_u32 s40, s40, far-.LLongBranch0", "s_addc_u32 s41, s41, 0", "s_setpc_b64 s[40:41]",
        ".LLongBranch0_skip:"]
    assert "s_cbranch_scc1 far" not in text and near in items          # the short branch is the same object
    j = text.index(".LLongBranch1:")
    assert text[j - 1:j + 4] == [
        "s_getpc_b64 s[40:41]", ".LLongBranch1:", "s_add_u32 s40, s40, top-.LLongBranch1",
        "s_addc_u32 s41, s41, -1", "s_setpc_b64 s[40:41]"]         # backwards: the offset's sign extension
    assert back not in items and text[-1] == "s_endpgm"
    assert relax_branches(items, ARCH, lambda: pytest.fail("nothing left to relax")) == 0


def test_relaxing_one_branch_can_push_another_out():
    # A jumps 1 + 32766 dwords forward (fits) over B, which jumps far back; B's long form (5 dwords) pushes A out.
    a = ISA.inst("s_cbranch_scc0", Label("end"))
    b = ISA.inst("s_branch", Label("top"))
    items = [LabelDef("top"), *nops(32768), a, b, *nops(32766), LabelDef("end"), ISA.inst("s_endpgm")]
    ia, ib = items.index(a), items.index(b)
    assert far_branches(items, ARCH.name, {ib}) == {ia, ib}
    assert far_branches(items, ARCH.name) == {ia, ib}
    # one nop fewer: A still fits beside B's long form
    items2 = [LabelDef("top"), *nops(32768), a, b, *nops(32761), LabelDef("end"), ISA.inst("s_endpgm")]
    assert far_branches(items2, ARCH.name) == {items2.index(b)}


def test_a_fitting_module_is_untouched():
    m = Module("k", [LabelDef("top"), *nops(10), Module("loop", [ISA.inst("s_cbranch_scc1", Label("top"))]),
                     ISA.inst("s_endpgm")])
    before = m.render()
    assert relax_branches(m, ARCH, lambda: pytest.fail("no pair needed")) == 0
    assert m.render() == before


def _sol(types="sss", **params):
    a, c, comp = types
    problem = {"OperationType": "GEMM", "DataType": a, "DestDataType": c, "ComputeDataType": comp,
               "TransposeA": False, "TransposeB": False, "Batched": True, "UseBeta": True}
    return Solution.from_dict({"ProblemType": problem, **params}, where="test")


@needs_llvm
def test_encoded_sizes_equal_llvm_mc(tmp_path):
    for arch_name, sol in (("gfx900", _sol(WorkGroup=[8, 16, 1], ThreadTile=[6, 4], DepthU=16, VectorWidth=2,
                                          PrefetchGlobalRead=1, StaggerU=32, GlobalSplitU=2)),
                           ("gfx90a", _sol("hhs", WorkGroup=[16, 16, 1], MatrixInstruction=[32, 32, 8, 1],
                                           ThreadTile=[1, 32], DepthU=16, PrefetchGlobalRead=2))):
        arch = load_arch(arch_name)
        kernel, co, _ = build_linked(sol, arch, tmp_path)
        ours = kernel.module.instructions()
        real = kernel_instructions(read_code_object(co), kernel.name)
        assert len(real) >= len(ours)
        for k in range(len(ours) - 1):
            size = real[k + 1].address - real[k].address
            assert encoded_bytes(ours[k], arch_name) == size, (ours[k].render(kernel.assignment), real[k].opcode)


@needs_llvm
def test_long_branches_run_right(tmp_path, monkeypatch):
    """With the reach cut to 64 dwords, the loop branches of a small kernel take the long form, and the kernel
    still computes the right result (the emulator runs s_getpc_b64/s_setpc_b64 from the code object)."""
    monkeypatch.setattr(branch_relax, "SIMM16_MIN", -64)
    monkeypatch.setattr(branch_relax, "SIMM16_MAX", 63)
    sol = _sol(WorkGroup=[8, 8, 1], ThreadTile=[2, 4], DepthU=8, PrefetchGlobalRead=1, VectorWidth=2)
    kernel, co, contract = build_linked(sol, ARCH, tmp_path)
    text = kernel.text()
    assert text.count("s_setpc_b64") >= 2 and "s_cbranch_scc0 .LLongBranch" in text
    assert kernel.resources.sgprs % 2 == 0
    sizes = [Size(1, 1, 1, 1), Size(13, 29, 17, 2), Size(16, 32, 8, 1)]
    for r in verify_sizes(co, contract, sizes, 1.5, 0.5, 3, EmulatedRuntime()):
        assert r.passed, (r.size, r.detail)
    [r] = verify_sizes(co, contract, [Size(7, 5, 3, 1)], -0.75, 0.0, 4, EmulatedRuntime())
    assert r.passed, r.detail


@needs_llvm
def test_random_run_complex_kernel_beyond_simm16(tmp_path, request):
    """The --slow random run's shard-1 case that did not assemble ("branch size exceeds simm16
    (s_cbranch_scc1 .LLoopEndL)"): complex float, WG 8x16, TT 6x6, DepthU 24, VW 2, PGR 2, PLR 0,
    FractionalLoad, on gfx900 (about 150 KiB of code)."""
    if not request.config.getoption("--slow"):
        pytest.skip("a 20,000-instruction kernel: seconds to write, minutes to run (--slow)")
    sol = _sol("ccc", WorkGroup=[8, 16, 1], ThreadTile=[6, 6], DepthU=24, VectorWidth=2, PrefetchGlobalRead=2,
               PrefetchLocalRead=0, FractionalLoad=1)
    kernel, co, contract = build_linked(sol, ARCH, tmp_path)
    assert "s_cbranch_scc0 .LLongBranch" in kernel.text()
    sizes = [Size(1, 1, 1, 1), Size(49, 95, 71, 2), Size(48, 96, 24, 1)]
    for r in verify_sizes(co, contract, sizes, 1.5, 0.5, 7, EmulatedRuntime()):
        assert r.passed, (r.size, r.detail)
    [r] = verify_sizes(co, contract, [Size(13, 17, 25, 3)], 1.0, 0.0, 8, EmulatedRuntime())
    assert r.passed, r.detail
