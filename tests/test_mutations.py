"""Mutation test of the strict emulator: delete one ``s_waitcnt`` (every one the waitcnt pass inserted) or
one ``s_nop`` that the hazard rules say matters from a generated kernel (a GEMM kernel or a helper kernel
it launches; or a hand-written MFMA kernel, its waits and nops placed by the passes), assemble, run strict
on random data: the emulator must report it (a strict error) or the result must be wrong. A fixed-seed sample of the
mutations runs here (``SAMPLE`` per kernel); ``bench/waitcnt_mutations.py`` runs all of them and prints
the detection rate."""

from __future__ import annotations

import random
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from tensile_asm.isa.arch import load_arch
from tensile_asm.isa.hazards import insert_wait_states
from tensile_asm.isa.instruction import Instruction
from tensile_asm.isa.module import Module

from conftest import have_llvm

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

SAMPLE = 6          # mutations per kernel in the test suite (the bench runs every one)


def _geometries():
    from tensile_asm.benchmark.verify import Size
    from gemm_geometry import gemm_geometry
    # name: (arch, geometry, [(size, beta)]); every workgroup has two or more waves (barriers matter). The
    # cases together run every path: each exit of the summation loop (K < DepthU: no iteration; K/DepthU
    # = 1: straight to the first last-iteration copy; even and odd iteration counts: out of either
    # unrolled copy into the other last-iteration buffer), the tail loop and none, the beta and the
    # beta-zero stores. A mutant runs the next case only when the ones before noticed nothing.
    return {
        "valu_vw4_pgr_plr": ("gfx942", gemm_geometry((16, 8), (8, 8), 8, VectorWidth=4, GlobalReadVectorWidth=4,
                                                     PrefetchGlobalRead=1, PrefetchLocalRead=1),
                             [(Size(67, 35, 35, 1), 0.5), (Size(67, 35, 40, 1), 0.0), (Size(67, 35, 5, 1), 0.5),
                              (Size(67, 35, 11, 1), 0.0)]),
        "local_split_u": ("gfx90a", gemm_geometry((8, 8, 2), (4, 4), 16, trans=(True, False)),
                          [(Size(35, 37, 37, 1), 0.5), (Size(35, 37, 32, 1), 0.0), (Size(35, 37, 5, 1), 0.5)]),
        "global_split_u": ("gfx942", gemm_geometry((16, 8), (2, 2), 8, GlobalSplitU=2),
                           [(Size(37, 19, 27, 1), 0.5), (Size(37, 19, 16, 1), 0.0), (Size(37, 19, 3, 1), 0.5)]),
        "gsu_multiple_buffer": ("gfx90a", gemm_geometry((16, 8), (2, 2), 8, GlobalSplitU=3,
                                                        GlobalSplitUAlgorithm="MultipleBuffer"),
                                [(Size(37, 19, 27, 1), 0.5), (Size(37, 19, 16, 1), 0.0)]),
    }


# The helper kernels, mutated while linked with the GEMM kernel that launches them.
HELPERS = {"beta_only": "global_split_u", "post_gsu": "gsu_multiple_buffer"}
KERNELS = ["valu_vw4_pgr_plr", "local_split_u", "global_split_u", "gsu_multiple_buffer", "beta_only", "post_gsu",
           "mfma_gfx90a", "mfma_gfx942"]


# -- generated kernels --------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def generated(name):
    """(arch, geometry, cases, the kernel to mutate, the kernels to link) of a generated kernel's name."""
    from tensile_asm.writer.build import with_helpers
    from tensile_asm.writer.kernel import write_kernel
    main = HELPERS.get(name, name)
    arch_name, g, cases = _geometries()[main]
    arch = load_arch(arch_name)
    kernels = with_helpers([write_kernel(g, arch, f"mut_{main}")], arch)
    if name in HELPERS:     # the helper the cases launch: the first variant (VW1; the cases' D is small)
        from tensile_asm.writer.contract import kernel_contract
        first = kernel_contract(kernels[0]).helper_names()[0]
        return arch, g, cases, next(k for k in kernels if k.name == first), tuple(kernels)
    return arch, g, cases, kernels[0], tuple(kernels)


def _sites(module: Module):
    """(parent module, index) of every s_waitcnt and s_nop, in program order."""
    out = []
    for item in module.items:
        if isinstance(item, Module):
            out += _sites(item)
    out += [(module, i) for i, x in enumerate(module.items)
            if isinstance(x, Instruction) and x.opcode in ("s_waitcnt", "s_nop")]
    return out


def _nop_matters(flat, nop, arch, assignment) -> bool:
    """Removing ``nop`` leaves a wait-state deficit the hazard rules see."""
    items = [x for x in flat if x is not nop]
    return insert_wait_states(items, arch, assignment) > 0


@lru_cache(maxsize=None)
def mutations(name):
    """[(description, site)]: every s_waitcnt, and every s_nop whose removal a rule would flag."""
    if name.startswith("mfma_"):
        text, _ = mfma_kernel(name.split("_")[1])
        return [(t.strip(), i) for i, t in enumerate(text) if t.strip().startswith(("s_waitcnt", "s_nop"))]
    arch, _, _, kernel, _ = generated(name)
    flat = list(kernel.module.flatten())
    out = []
    for parent, i in _sites(kernel.module):
        ins = parent.items[i]
        if ins.opcode == "s_nop" and not _nop_matters(flat, ins, arch, kernel.assignment):
            continue
        out.append((ins.render(kernel.assignment).split("//")[0].strip() + f" ({parent.name})", (parent, i)))
    return out


def run_mutant(name, site) -> tuple[bool, str]:
    """(caught, detail) for the kernel with the instruction at ``site`` deleted."""
    if name.startswith("mfma_"):
        return _run_mfma_mutant(name.split("_")[1], site)
    from tensile_asm.benchmark.verify import verify_sizes
    from tensile_asm.runtime.emulated import EmulatedRuntime
    from tensile_asm.writer.build import link_kernels
    from tensile_asm.writer.contract import kernel_contract
    arch, g, cases, _, kernels = generated(name)
    parent, i = site
    removed = parent.items.pop(i)
    try:
        co = Path(tempfile.mkdtemp(prefix="mut-")) / "m.co"
        link_kernels(list(kernels), arch, co)
    finally:
        parent.items.insert(i, removed)
    for size, beta in cases:          # the next case only when the ones before noticed nothing
        [r] = verify_sizes(co, kernel_contract(kernels[0]), [size], 1.5, beta, 3, EmulatedRuntime())
        if not r.passed:
            return True, r.detail
    return False, f"max rel err {r.max_rel_error}"


# -- a hand-written MFMA kernel (the writer has no MFMA yet), its waits and s_nop placed by the passes -----
MFMA = {"gfx90a": "v_mfma_f32_32x32x2f32", "gfx942": "v_mfma_f32_32x32x2_f32"}


@lru_cache(maxsize=None)
def mfma_kernel(arch_name):
    """D(32x32) = A0 B0 + 2 A1 B1 with two 32x32x2 fp32 MFMAs accumulating in AGPRs; each lane loads its
    A/B element of each K step (host-side lane order). Returns (body lines with the passes' waits and nops, arch)."""
    from tensile_asm.isa.parser import parse_instruction
    from tensile_asm.isa.waitcnt_pass import insert_waitcnt
    op = MFMA[arch_name]
    body = ["s_load_dwordx4 s[4:7], s[0:1], 0x0", "v_lshlrev_b32 v1, 2, v0"]
    body += [f"global_load_dword v{2 + t}, v1, s[4:5] offset:{256 * t}" for t in range(4)]
    body += ["v_mov_b32 v6, 0"] + [f"v_accvgpr_write_b32 a{r}, v6" for r in range(16)]
    body += [f"{op} a[0:15], v2, v3, a[0:15]", "v_mul_f32 v4, 2.0, v4", f"{op} a[0:15], v4, v5, a[0:15]"]
    body += [f"v_accvgpr_read_b32 v{8 + r}, a{r}" for r in range(16)]
    body += [f"global_store_dword v1, v{8 + r}, s[6:7] offset:{256 * r}" for r in range(16)]
    body.append("s_endpgm")
    insts = [parse_instruction(t) for t in body]
    arch = load_arch(arch_name)
    assert insert_waitcnt(insts, arch) > 0 and insert_wait_states(insts, arch) > 0
    return tuple(i.render().split("//")[0].strip() for i in insts), arch


def _d_place(i, j):
    """Register and lane of D[i][j] for a 32x32 fp32 MFMA with one block (Matrix Instruction Calculator)."""
    return 4 * (i // 8) + i % 4, 32 * ((i // 4) % 2) + j


def _run_mfma_mutant(arch_name, site):
    text, arch = mfma_kernel(arch_name)
    ok, detail = mfma_verify(mfma_code_object([t for k, t in enumerate(text) if k != site], arch_name))
    return (not ok), detail


def mfma_code_object(lines, arch_name):
    """Assemble the body with 24 VGPRs and 16 AGPRs (after them in the unified file of gfx90a+)."""
    import re
    from emulator_asm import assemble, kernel_source
    src = kernel_source("\n".join(lines), args=(("in", 8), ("out", 8)), vgprs=24, sgprs=16, arch=arch_name)
    src = re.sub(r"  \.amdhsa_accum_offset \d+\n", "", src)
    src = src.replace(".amdhsa_next_free_vgpr 24\n", ".amdhsa_next_free_vgpr 40\n  .amdhsa_accum_offset 24\n")
    return assemble(src, arch_name)


def mfma_verify(co) -> tuple[bool, str]:
    from tensile_asm.emulator import Emulator
    from tensile_asm.errors import EmulationError
    rng = np.random.default_rng(5)
    A = rng.standard_normal((2, 32, 2)).astype(np.float32)      # [step, i, k]
    B = rng.standard_normal((2, 2, 32)).astype(np.float32)      # [step, k, j]
    data = np.zeros((4, 64), np.float32)
    for s in range(2):
        for k in range(2):
            data[2 * s, 32 * k:32 * k + 32] = A[s, :, k]        # lane i + 32k holds A[i][k]
            data[2 * s + 1, 32 * k:32 * k + 32] = B[s, k, :]    # lane j + 32k holds B[k][j]
    out = np.full((16, 64), np.nan, np.float32)
    try:
        Emulator.load(co).launch("k", grid=1, block=64, args=[data, out])
    except EmulationError as e:
        return False, f"emulator: {e}"
    expect = A[0].astype(np.float64) @ B[0] + 2 * (A[1].astype(np.float64) @ B[1])
    got = np.array([[out[_d_place(i, j)] for j in range(32)] for i in range(32)])
    err = float(np.max(np.abs(got - expect)))
    return err < 1e-4, f"max abs err {err:.3g}"


def test_unmutated_kernels_pass():
    """The baseline: every kernel verifies as generated (so a failing mutant is the mutation's doing)."""
    from tensile_asm.benchmark.verify import verify_sizes
    from tensile_asm.runtime.emulated import EmulatedRuntime
    from tensile_asm.writer.build import link_kernels
    from tensile_asm.writer.contract import kernel_contract
    for name in _geometries():
        arch, g, cases, _, kernels = generated(name)
        co = Path(tempfile.mkdtemp(prefix="mut-")) / "m.co"
        link_kernels(list(kernels), arch, co)
        for size, beta in cases:
            [r] = verify_sizes(co, kernel_contract(kernels[0]), [size], 1.5, beta, 3, EmulatedRuntime())
            assert r.passed, (name, size, beta, r.detail)
    for arch_name in MFMA:
        text, _ = mfma_kernel(arch_name)
        assert sum(t.startswith("s_nop") for t in text) >= 3
        ok, detail = mfma_verify(mfma_code_object(text, arch_name))
        assert ok, (arch_name, detail)


def test_every_kernel_has_nops_and_waitcnts_to_remove():
    for name in KERNELS:
        kinds = {d.split()[0] for d, _ in mutations(name)}
        assert "s_waitcnt" in kinds, name
        if name not in ("local_split_u", "gsu_multiple_buffer", "post_gsu"):   # gfx90a VALU: no s_nop needed
            assert "s_nop" in kinds, name


def _sample(name):
    muts = mutations(name)
    rng = random.Random(f"mutations-{name}")
    nops = [m for m in muts if m[0].startswith("s_nop")]
    picked = rng.sample(nops, min(len(nops), SAMPLE // 2))          # at least half s_nop where there are some
    rest = [m for m in muts if m not in picked]
    return picked + rng.sample(rest, min(len(rest), SAMPLE - len(picked)))


@pytest.mark.parametrize("name,k", [(n, k) for n in KERNELS for k in range(SAMPLE)])
def test_mutation_is_caught(name, k):
    sample = _sample(name)
    if k >= len(sample):
        pytest.skip(f"{name} has only {len(sample)} mutations")
    what, site = sample[k]
    caught, detail = run_mutant(name, site)
    assert caught, f"{name}: deleting `{what}` went unnoticed ({detail})"
