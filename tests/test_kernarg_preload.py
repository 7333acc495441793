"""PreloadKernelArguments 1 (gfx942): Tensile 4.44's argument order, the descriptor's preload fields, and real
rocBLAS solutions verified on the strict emulator dispatched both ways: as firmware that preloads (the first
arguments in s2.., the waves starting 256 bytes past the entry) and as firmware that does not (the waves start
at the entry, whose header loads them).

Cut from ``../shared/data/logic/rocblas-asm_full/aquavanjaram942`` with tools/cut_logic.py (original SolutionIndex in
the file names): BBS_BH #63 (MT16x64x128, GlobalSplitU 8 MultipleBuffer) and HHS_BH #98 (MT64x16x128, DirectToVgprA,
AssertSummationElementMultiple 128); both assert K > 256 and M (N) < 17.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from tensile_asm.benchmark.reference import make_instance
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.codeobject import read_code_object
from tensile_asm.gemm.arguments import argument_layout, preload_dwords
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.logic import read_logic_file
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution
from tensile_asm.writer.build import supports

from conftest import have_llvm
from kernel_build import build_linked

DATA = Path(__file__).parent / "data" / "small_features"

# The arguments of Tensile 4.44's own kernel for BBS_BH #63 (tensile-tcl --keep-build-tmp, its .s metadata):
# name, offset; StridesA/B/D/C and SizesFree are one entry there, several dwords here.
TENSILE_BATCHED = [("Tensor2dSizeA", 0), ("Tensor2dSizeB", 8), ("AddressA", 16), ("AddressB", 24), ("Alpha", 32),
                   ("StridesA0", 36), ("StridesB0", 44), ("SizesSum0", 52), ("AddressD", 56), ("AddressC", 64),
                   ("Beta", 72), ("StridesD0", 76), ("StridesC0", 84), ("SizesFree0", 92), ("NumWorkGroups0", 104),
                   ("NumWorkGroups1", 108)]


def test_preloading_layout_is_tensiles():
    layout = argument_layout(True, True, "S", stagger_u=False, workgroup_mapping=False, preload=True)
    offsets = {a.name: a.offset for a in layout}
    assert [(n, offsets[n]) for n, _ in TENSILE_BATCHED] == TENSILE_BATCHED
    assert preload_dwords(layout) == 14 and layout[-1].offset + layout[-1].size == 112
    flat = argument_layout(False, True, "S", stagger_u=False, workgroup_mapping=False, preload=True)
    assert preload_dwords(flat) == 12 and [a.name for a in flat[:8]] == [
        "Tensor2dSizeA", "Tensor2dSizeB", "AddressA", "AddressB", "Alpha", "StridesA0", "StridesB0", "SizesSum0"]
    with pytest.raises(ValueError):
        preload_dwords(argument_layout(True, True, "S"))       # not a preloading layout
    with pytest.raises(ValueError):
        argument_layout(True, True, "S", pointer_array=True, preload=True)   # Tensile: strided batches only


def _solution(fname):
    return read_logic_file(DATA / fname).entries[0].solution


def test_tensile_rules_and_architectures():
    sol = _solution("aquavanjaram942_Ailk_Bljk_BBS_BH_pka63.yaml")
    assert sol.derived.preload_kernargs and supports(sol, load_arch("gfx942")) is None
    assert "cannot preload kernel arguments" in supports(sol, load_arch("gfx90a"))
    params = dict(sol.params, StaggerU=32)
    bad = Solution.from_dict(params, problem_type=sol.problem_type)
    assert "PreloadKernelArguments 1 is allowed not with StaggerU 32" in bad.rejection


SIZES = {   # (size, beta) inside each solution's asserts: K > 256 (and a multiple of 128 for #98), M / N < 17
    "aquavanjaram942_Ailk_Bljk_BBS_BH_pka63.yaml": [(Size(8, 8, 257, 1), 0.0), (Size(16, 72, 389, 2), 0.5)],
    "aquavanjaram942_Ailk_Bljk_HHS_BH_pka98.yaml": [(Size(8, 8, 384, 1), 0.0), (Size(72, 16, 384, 2), 0.5)],
}


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("fname", sorted(SIZES))
def test_real_solutions_verify_with_and_without_preloading_firmware(fname):
    sol = _solution(fname)
    kernel, co, contract = build_linked(sol, load_arch("gfx942"), tempfile.mkdtemp(prefix="pka-"), "pka")
    kd = read_code_object(co).kernels["pka"].descriptor
    assert (kd.kernarg_preload_length, kd.kernarg_preload_offset, kd.user_sgpr_count) == (14, 0, 16)
    assert contract.preload_kernargs
    for preload in (True, False):
        runtime = EmulatedRuntime(kernarg_preload=preload)
        for size, beta in SIZES[fname][: 2 if preload else 1]:
            results = verify_sizes(co, contract, [size], 1.5, beta, 29, runtime)
            assert all(r.passed for r in results), (preload, [(str(r.size), r.detail) for r in results])
    # the two dispatches compute the same bits; the one without preloading runs the header (its s_loads and
    # s_nop padding) in every wave, the preloading one none of it
    size = SIZES[fname][0][0]
    inst = make_instance(size.m, size.n, size.k, size.batch, contract.transpose_a, contract.transpose_b, seed=5,
                         data_type=contract.data_type, dest_type=contract.dest_type)
    runs = [EmulatedRuntime(kernarg_preload=p).run_gemm(co, contract, inst, 1.0, 0.0) for p in (True, False)]
    assert np.array_equal(runs[0].d.view(np.uint16), runs[1].d.view(np.uint16))
    header = [i for i in kernel.module.items[0].code()]
    waves = runs[0].stats.waves
    assert runs[1].stats.instructions - runs[0].stats.instructions == len(header) * waves
