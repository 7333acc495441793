"""Our launches of GlobalSplitU solutions are Tensile 4.44's host's, byte for byte.

tests/data/gsu_helper_abi/<gfx>.json were recorded from Tensile's own C++ host (tools/tensile_host/
record_launches.py, over tensile-host-solve: findBestSolution, then ContractionSolution::solve with fake
pointers; the command is in each file) for real rocBLAS solutions (cut from ../shared/data/logic/rocblas-asm_full:
aldebaran SB, BBS_BH, HHS_BH, BBS_BH_GB, HSS_BH_GB; arcturus DB; aquavanjaram942 HHS_BH) built by our
create-library: beta-only (Cijk_S, Cijk_D, Cijk_B_GA), conversion kernels of every kind the host picked
(PostGSU, PostGSU<n>, _GB, _VW2, PostGSU16_mod16) and the GEMM. Every launch ``GemmKernelContract.launches``
makes -- the one function every launcher of ours uses -- must have the recorded kernel name, block, grid and
argument bytes. (Our old helper ABI -- its own names, a (ceil(M/64), ceil(N/4), batch) grid, its own argument
order -- fails here.)

tests/data/gsu_helper_abi/gfx906_source.json (``--every-solution``): the same for real ``KernelLanguage: Source``
solutions (hip_Cijk_Ailk_Bljk_HB #2 and #4: HHH, WorkGroupMapping 8), whose GEMM arguments Tensile's host lays out
its own way -- no Tensor2dSizeA/B, a half alpha/beta once, no WorkGroupMapping arguments, no trailing pad
(gemm/arguments.py, ``source_kernel``); the source GEMMs of the other fixtures (BBS, HHS) are checked too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tensile_asm.gemm.contract import GemmKernelContract

from conftest import have_llvm

DATA = Path(__file__).parent / "data" / "gsu_helper_abi"
# tools/tensile_host/solve_main.cpp's fake addresses
FAKE = {"A": 0x100000000, "B": 0x200000000, "C": 0x300000000, "D": 0x400000000}
FAKE_BATCH = {"A": 0x110000000, "B": 0x210000000, "C": 0x310000000, "D": 0x410000000}
FAKE_WS = 0x500000000
CASES = [(f.stem, i, c) for f in sorted(DATA.glob("*.json")) for i, c in enumerate(json.loads(f.read_text())["cases"])]


def test_the_fixtures_cover_every_helper_kind():
    kernels = {x["kernel"] for _, _, c in CASES for x in c["tensile"]}
    for pattern in ("Cijk_S", "Cijk_D", "Cijk_B_GA", "Cijk_B_PostGSU", "Cijk_B_PostGSU_VW2", "Cijk_S_PostGSU8_VW2",
                    "Cijk_S_GB_PostGSU2", "Cijk_H_PostGSU16_mod16", "Cijk_D_PostGSU16_mod16"):
        assert pattern in kernels, pattern
    assert len(CASES) >= 50


def test_the_fixtures_have_source_kernels_with_mapping_and_half_scalars():
    """Source GEMMs whose assembly layout would differ most: WorkGroupMapping > 1 and a half alpha/beta."""
    source = [c["entry"] for _, _, c in CASES if c["entry"]["sizeMapping"].get("sourceKernel")]
    contracts = [GemmKernelContract.from_library_entry(e) for e in source]
    assert any(c.workgroup_mapping > 1 and c.compute_type == "H" for c in contracts)
    assert any(c.global_split_u > 1 for c in contracts)


@pytest.mark.parametrize("gfx,index,case", CASES, ids=[f"{g}-{i}" for g, i, _ in CASES])
def test_our_launches_are_tensiles(gfx, index, case):
    entry = case["entry"]
    contract = GemmKernelContract.from_library_entry(entry)
    s = case["strides"]
    addresses = dict(FAKE if case["strided_batched"] else FAKE_BATCH, WS=FAKE_WS)
    if case["c_equals_d"]:
        addresses["C"] = addresses["D"]
    launches = contract.launches(m=case["m"], n=case["n"], k=case["k"], batch=case["batch"],
                                 ld={t: s[t][1] for t in "ABCD"}, batch_stride={t: s[t][2] for t in "ABCD"},
                                 alpha=case["alpha"], beta=case["beta"], addresses=addresses,
                                 cu_count=case["cu_count"])
    theirs = case["tensile"]
    assert [x.kernel for x in launches] == [x["kernel"] for x in theirs]
    source = bool(entry["sizeMapping"].get("sourceKernel"))
    for ours, t in zip(launches, theirs):
        assert (list(ours.block), list(ours.grid)) == (t["block"], t["grid"]), ours.kernel
        data = ours.kernarg()[:ours.layout[-1].offset + ours.layout[-1].size]
        if ours.kernel == entry["name"] and not source:
            data += bytes(4)    # the host's trailing ``pad`` after an assembly GEMM kernel's arguments
        assert data.hex() == t["args"], ours.kernel


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("data", ["s", "d"])
def test_reduction_variants_on_the_emulator(data):
    """No real rocBLAS solution makes Tensile build an ``_R<r>`` conversion (MultipleBuffer with a power-of-two
    GlobalSplitU >= 128 for fp32, >= 64 for fp64): this one does (GSU 128). On the emulator's 1-CU device the host
    takes _R4 for a small D (fp32 never _R2), VW1 for an odd M, VW2 for a large even M; each is verified
    against the reference, the workspace poisoned."""
    from tensile_asm.benchmark.verify import Size
    from tensile_asm.gemm import helpers
    from tensile_asm.solution import Solution

    from kernel_build import verify_cut_solution

    pt = {"OperationType": "GEMM", "DataType": data, "DestDataType": data, "ComputeDataType": data,
          "TransposeA": False, "TransposeB": True, "Batched": True, "UseBeta": True}
    sol = Solution.from_dict({"ProblemType": pt, "WorkGroup": [8, 8, 1], "ThreadTile": [1, 1], "DepthU": 8,
                              "VectorWidth": 1, "GlobalReadVectorWidth": 1, "PrefetchGlobalRead": 0,
                              "PrefetchLocalRead": 0, "WorkGroupMapping": 1, "StaggerU": 0, "GlobalSplitU": 128,
                              "GlobalSplitUAlgorithm": "MultipleBuffer"}, where="test")
    assert sol.valid, sol.rejection
    compute = data.upper()
    picks = {size: helpers.conversion_choice(compute, helpers.MULTIPLE_BUFFER, 128, size.m, size.n, size.batch, 1)
             for size in (Size(7, 5, 19, 1), Size(5, 3, 9, 2), Size(34, 17, 11, 1))}
    assert [(v.vw, v.reduction) for v in picks.values()] == [(1, 4), (1, 4), (2, 1)]
    assert picks[Size(7, 5, 19, 1)].name(True, compute) == f"Cijk_{compute}_PostGSU64_mod64_R4"
    _, _, contract = verify_cut_solution(sol, "gfx90a", [(size, 0.5) for size in picks], name="r")
    names = contract.helper_names()
    assert f"Cijk_{compute}_PostGSU64_mod64_R4" in names and (f"Cijk_{compute}_PostGSU32_mod32_R2" in names) == (data == "d")


def test_tensiles_unnamed_helper_arguments_take_the_contract_layout():
    """Tensile's HIP helper kernels declare their arguments without names: where each sits at the offset and size
    of the contract's (gemm/helpers.py), the launch is laid onto them; anything else is still a named mismatch."""
    from types import SimpleNamespace

    from tensile_asm.errors import UserError
    from tensile_asm.gemm import helpers
    from tensile_asm.runtime.emulated import kernel_arguments

    layout = helpers.conversion_layout("S")
    values = {a.name: 1 for a in layout}
    hidden = [{".offset": 96, ".size": 4, ".value_kind": "hidden_block_count_x"}]
    ko = SimpleNamespace(name="Cijk_S_PostGSU8", args=[{".offset": a.offset, ".size": a.size, ".value_kind": "by_value"}
                                                       for a in layout] + hidden)
    assert len(kernel_arguments(ko, layout, values)) == len(layout)
    old = helpers.beta_only_layout("S")      # a different layout: refused, naming the argument
    with pytest.raises(UserError, match="does not match the GEMM contract"):
        kernel_arguments(ko, old, {a.name: 1 for a in old})
