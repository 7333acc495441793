"""The hazard tables (isa/*.yaml) against LLVM 22's own GCNHazardRecognizer, and the strict emulator
against the wait states LLVM inserts.

* Every probe of tests/llvm_hazards.py (MFMA results read / overwritten / accumulated by VALU, memory
  and MFMAs of every pass count, XDL / SGEMM / DGEMM / SMFMAC, gfx950's new shapes, permlane swaps,
  VOP3P and FP8 converts forwarding, ...): our required wait states equal the s_nops that
  ``llc -run-pass=post-RA-hazard-rec`` puts between the same two instructions.
* For a selection per target, a kernel with exactly LLVM's wait states runs under the strict emulator,
  and with one fewer the emulator names the rule.
* LLVM compiling MFMA intrinsics (clang-22 on LLVM IR): the kernels it emits, s_nops included, are
  accepted by our checker (``insert_wait_states`` has nothing to add).
"""

import re
import subprocess

import numpy as np
import pytest

from conftest import have_llvm

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


def _llc_available() -> bool:
    from tensile_asm.errors import ToolchainError
    from tensile_asm.toolchain_paths import find_llvm_tool
    try:
        find_llvm_tool("llc")
        return True
    except ToolchainError:
        return False


needs_llc = pytest.mark.skipif(not _llc_available(), reason="llc (LLVM 22) not installed")


@needs_llc
@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx90a", "gfx908"])
def test_required_wait_states_equal_llvm(arch):
    from llvm_hazards import compare
    rows = compare((arch,))
    assert len(rows) >= 15
    differ = [f"{name}: ours {ours}, LLVM {llvm}" for name, _, ours, llvm in rows if ours != llvm]
    assert not differ, "\n".join(differ)
    assert sum(llvm > 0 for *_, llvm in rows) >= 0.7 * len(rows)     # the probes do probe something


@needs_llc
@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_mfma_passes_equal_llvm(arch):
    """issue_cycles.mfma_passes of every (non-DGEMM) MFMA / SMFMAC, f8f6f4 in FP8 and FP4/FP6 formats,
    against the passes LLVM's hazard recognizer uses for it."""
    from llvm_hazards import llvm_passes, mfma_lines
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.isa.hazards import hazard_model
    lines = [line for line in mfma_lines(arch) if not line.startswith("v_mfma_f64")]
    model = hazard_model(load_arch(arch))
    from tensile_asm.isa.parser import parse_instruction
    ours = [model.passes(parse_instruction(line)) for line in lines]
    differ = [f"{line.split()[0]}: ours {o}, LLVM {t}" for line, o, t in zip(lines, ours, llvm_passes(arch, lines))
              if o != t]
    assert not differ, "\n".join(differ)
    assert len(lines) >= 40 and set(ours) == {2, 4, 8, 16}


# -- the strict emulator at LLVM's count and one fewer ---------------------------------------------------------
STRICT = {
    "gfx942": ["xdl4 -> VALU read", "xdl16 SrcC -> VALU write (WAR)", "xdl2 -> xdl4 SrcC overlapped",
               "sgemm8 -> xdl4 SrcA", "dgemm16 -> dgemm16 SrcA", "XDL result -> v_smfmac index",
               "v_pk_fma_f16 -> VALU read", "v_cvt_pk_fp8_f32 op_sel dst -> VALU read", "VALU write exec -> MFMA"],
    "gfx950": ["xdl4 -> VALU read", "xdl8 -> VALU write (WAW)", "xdl2 -> xdl4 SrcC overlapped",
               "dgemm16 -> sgemm8 SrcC overlapped", "dgemm16 -> xdl4 SrcA",
               "v_mfma_f32_32x32x16_bf16 -> VALU read", "v_mfma_f32_16x16x128_f8f6f4 -> xdl4 SrcA",
               "VALU write -> v_permlane32_swap", "v_cmpx (exec) -> v_permlane32_swap"],
    "gfx90a": ["mfma16 -> VALU read", "mfma8 -> mfma8 SrcC overlapped", "dgemm4 -> VALU read",
               "DGEMM between VALU write and DS read"],
}


def _vgprs(lines):
    from tensile_asm.isa.hazards import KEY_A, KEY_V, operand_keys
    from tensile_asm.isa.parser import parse_instruction as P
    keys = {k for line in lines for op in P(line).operands for k in operand_keys(op)}
    return sorted(k - KEY_V for k in keys if KEY_V <= k < KEY_A)


def _kernel(arch, producers, consumer, wait_states):
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.isa.hazard_pass import nops_for
    from tensile_asm.isa.instruction_set import InstructionSet
    init = [f"v_mov_b32 v{r}, {r}" for r in _vgprs([*producers, consumer])]     # v_cmpx_lt v7, v8: all lanes
    nops = [i.render() for i in nops_for(InstructionSet(load_arch(arch)), wait_states)]
    return "\n".join(["s_mov_b64 exec, -1", *init, "s_nop 7", "s_nop 7", "s_nop 7", *producers, *nops, consumer,
                      "s_endpgm"])


@needs_llc
@pytest.mark.parametrize("arch,probe", [(a, p) for a, names in STRICT.items() for p in names],
                         ids=[f"{a}-{p}" for a, names in STRICT.items() for p in names])
def test_strict_emulator_at_llvm_count_and_one_fewer(arch, probe):
    from emulator_asm import build
    from llvm_hazards import llvm_need, probes
    from tensile_asm.emulator import Emulator
    from tensile_asm.errors import EmulationError
    [(producers, consumer)] = [(p, c) for name, on, p, c in probes() if name == probe and arch in on]
    need = llvm_need(arch, producers, consumer)
    assert need > 0
    vgprs = (max(_vgprs([*producers, consumer])) + 8) // 8 * 8
    out = np.zeros(1, np.float32)
    Emulator.load(build(_kernel(arch, producers, consumer, need), vgprs=vgprs, sgprs=16, arch=arch, lds=256)).launch(
        "k", grid=1, block=64, args=[out])
    em = Emulator.load(build(_kernel(arch, producers, consumer, need - 1), vgprs=vgprs, sgprs=16, arch=arch, lds=256))
    with pytest.raises(EmulationError) as info:
        em.launch("k", grid=1, block=64, args=[out])
    assert "strict: hazard '" in str(info.value) and "(1 more: s_nop" in str(info.value)


# -- LLVM's own code generation ---------------------------------------------------------------------------------
_IR = """
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>, <4 x half>, <4 x float>, i32, i32, i32)
declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half>, <4 x half>, <16 x float>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x4f32(float, float, <4 x float>, i32, i32, i32)
declare <4 x double> @llvm.amdgcn.mfma.f64.16x16x4f64(double, double, <4 x double>, i32, i32, i32)
{extra_decl}
define amdgpu_kernel void @k(ptr addrspace(1) %p, <4 x half> %a, <4 x half> %b, float %x, double %d) {{
  %c = load <4 x float>, ptr addrspace(1) %p
  %c16 = load <16 x float>, ptr addrspace(1) %p
  %cd = load <4 x double>, ptr addrspace(1) %p
  %r1 = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %a, <4 x half> %b, <4 x float> %c, i32 0, i32 0, i32 0)
  %r2 = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x4f32(float %x, float %x, <4 x float> %r1, i32 0, i32 0, i32 0)
  %e = extractelement <4 x float> %r2, i32 1
  %f = fmul float %e, %x
  %r3 = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %a, <4 x half> %b, <4 x float> %r2, i32 0, i32 0, i32 0)
  %r4 = insertelement <4 x float> %r3, float %f, i32 2
  %r5 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %a, <4 x half> %b, <16 x float> %c16, i32 0, i32 0, i32 0)
  %g = extractelement <16 x float> %r5, i32 7
  %h = fadd float %g, %f
  %r6 = insertelement <4 x float> %r4, float %h, i32 0
  %dd = call <4 x double> @llvm.amdgcn.mfma.f64.16x16x4f64(double %d, double %d, <4 x double> %cd, i32 0, i32 0, i32 0)
  %de = extractelement <4 x double> %dd, i32 3
  %dt = fptrunc double %de to float
  %r7 = insertelement <4 x float> %r6, float %dt, i32 3
  {extra}
  store <4 x float> %r8, ptr addrspace(1) %p
  ret void
}}
"""
_EXTRA = {  # gfx950's new shapes
    "gfx942": ("", "%r8 = fadd <4 x float> %r7, %r7"),
    "gfx950": ("declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half>, <8 x half>, <4 x float>, i32, i32, i32)",
               "%a8 = shufflevector <4 x half> %a, <4 x half> %b, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, "
               "i32 6, i32 7>\n  %r9 = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half> %a8, <8 x half> %a8, "
               "<4 x float> %r7, i32 0, i32 0, i32 0)\n  %s = extractelement <4 x float> %r9, i32 0\n"
               "  %r8 = insertelement <4 x float> %r9, float %s, i32 1"),
}


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_llvm_compiled_mfma_code_passes_our_checker(arch, tmp_path):
    """clang-22 -O2 compiles MFMA chains (XDL -> SGEMM SrcC, result -> VALU, DGEMM -> VALU); the s_nops
    it emits satisfy our rules, and where LLVM waits, we require a wait too."""
    from tensile_asm.isa.arch import load_arch
    from tensile_asm.isa.hazards import insert_wait_states, wait_states_of
    from tensile_asm.isa.parser import parse_instruction as P
    from tensile_asm.toolchain_paths import find_llvm_tool
    decl, extra = _EXTRA[arch]
    src = tmp_path / "k.ll"
    src.write_text(_IR.format(extra_decl=decl, extra=extra))
    asm = subprocess.run([find_llvm_tool("clang"), "-x", "ir", "-target", "amdgcn-amd-amdhsa", f"-mcpu={arch}",
                          "-nogpulib", "-O2", "-S", "-o", "-", str(src)], capture_output=True, text=True, check=True).stdout
    body = asm.split("; %bb.0:", 1)[1].split("s_endpgm", 1)[0]
    lines = [re.sub(r"_e(32|64)\b", "", line.split(";")[0].strip()) for line in body.splitlines()]
    seq = [P(line) for line in lines if line and not line.startswith(".") and not line.endswith(":")]
    assert sum(i.opcode.startswith("v_mfma") for i in seq) >= 4
    llvm_nops = sum(wait_states_of(i) for i in seq if i.opcode == "s_nop")
    assert llvm_nops > 0                                       # LLVM did have to wait somewhere
    assert insert_wait_states(seq, load_arch(arch)) == 0       # ... and we ask for nothing more
    # without LLVM's s_nops, our checker asks for wait states again (at most as many as LLVM put)
    bare = [i for i in seq if i.opcode != "s_nop"]
    added = insert_wait_states(bare, load_arch(arch))
    assert 0 < added <= llvm_nops
