"""PersistentKernel with Tensile 4.44's meaning: the host launches min(P * CUs, tiles) work-groups
(ContractionSolution.cpp), each loops over the tiles serial, serial + grid, ... (KernelWriterAssembly), with
the magic-number division of the host's magicNumberAlg2. Kernels run on the strict emulator against the
float64 reference with D poisoned and C NaN when beta is 0, on grids smaller than the tiles so every
work-group computes several."""

from __future__ import annotations

import random

import pytest

from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.gemm.arguments import argument_layout, magic_number_alg2
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution
from tensile_asm.writer.build import supports

from conftest import have_llvm
from kernel_build import build_linked


def _quotient(x: int, d: int) -> int:
    """The kernel's sequence (s_mul_hi_u32, abit multiply, s_add_u32, s_lshr_b32) in 32-bit arithmetic."""
    magic, shift = magic_number_alg2(d)
    q = (((x * magic) >> 32) + x * (shift >> 31)) & 0xFFFFFFFF
    return q >> (shift & 0x7FFFFFFF)


def test_magic_numbers_divide_tile_serials_exactly():
    rng = random.Random(5)
    divisors = list(range(1, 600)) + [rng.randrange(1, 1 << 20) for _ in range(300)]
    for d in divisors:
        for x in (0, 1, d - 1, d, d + 1, 7 * d + 3, rng.randrange(1 << 22)):
            assert _quotient(x, d) == x // d, (x, d)
    # values Tensile's host gives (magicNumberAlg2: M, and s | abit << 31)
    assert magic_number_alg2(1) == (0, 0x80000000)
    assert magic_number_alg2(7) == (0x24924925, 0x80000003)
    assert magic_number_alg2(3) == (0xAAAAAAAB, 1)
    assert magic_number_alg2(0) == (0, 0)


def _contract(pk: int, along: bool = False, gsu: int = 1) -> GemmKernelContract:
    return GemmKernelContract(name="k", transpose_a=False, transpose_b=False, batched=True, use_beta=True,
                              data_type="D", dest_type="D", compute_type="D", macro_tile=(64, 32), threads=64,
                              global_split_u=gsu, persistent_kernel=pk, persistent_kernel_along_batch=along)


def test_grid_is_tensile_hosts():
    # 300 x 100: 5 x 4 = 20 tiles per batch
    assert _contract(2).grid(300, 100, 3, cu_count=4) == (8, 1, 3)
    assert _contract(2).grid(300, 100, 3, cu_count=60) == (20, 1, 3)
    assert _contract(2, along=True).grid(300, 100, 3, cu_count=16) == (32, 1, 1)
    assert _contract(2, along=True).grid(300, 100, 3, cu_count=60) == (60, 1, 1)
    # -1: max(1, 5 * (tiles / CUs) / 8) work-groups per CU
    assert _contract(-1).grid(300, 100, 1, cu_count=4) == (12, 1, 1)      # 5*5//8 = 3
    assert _contract(-1).grid(300, 100, 1, cu_count=30) == (20, 1, 1)     # at least 1 per CU, at most the tiles
    assert _contract(0).grid(300, 100, 3) == (5, 4, 3)
    with pytest.raises(Exception, match="compute-unit count"):
        _contract(2).grid(300, 100, 1)


def test_arguments_follow_numworkgroups_as_tensiles():
    names = [a.name for a in argument_layout(True, True, "S", stagger_u=True, workgroup_mapping=True,
                                             persistent=True, persistent_along_batch=True)]
    i = names.index("NumWorkGroups1")
    assert names[i + 1:] == ["MagicNumberProblemNumGroupTiles0", "MagicShiftProblemNumGroupTiles0",
                             "GridNumWorkGroups0", "NumWorkGroups2", "MagicNumProblemNumGroupTiles0By1",
                             "MagicShiftProblemNumGroupTiles0By1", "NumFullBlocks", "WgmRemainder1",
                             "MagicNumberWgmRemainder1"]
    c = _contract(2)
    [launch] = c.launches(m=300, n=100, k=8, batch=2, ld={t: 300 for t in "ABCD"},
                          batch_stride={t: 30000 for t in "ABCD"}, alpha=1.0, beta=0.0,
                          addresses={t: 0 for t in "ABCD"}, cu_count=3)
    assert launch.grid == (6, 1, 2)
    assert launch.values["GridNumWorkGroups0"] == 6 and launch.values["NumWorkGroups0"] == 5


def _problem(dt="d", batched=True):
    return {"OperationType": "GEMM", "DataType": dt, "TransposeA": False, "TransposeB": True, "Batched": batched,
            "UseBeta": True}


def test_derivation_drops_persistent_kernel_as_tensile():
    base = {"WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8, "PersistentKernelAlongBatch": True}
    sol = Solution.from_dict({"ProblemType": _problem("s"), **base, "PersistentKernel": 2, "GlobalSplitU": 2})
    assert sol.derived.persistent_kernel == 0 and not sol.derived.persistent_kernel_along_batch
    sol = Solution.from_dict({"ProblemType": _problem("s"), **base, "PersistentKernel": 0})
    assert not sol.derived.persistent_kernel_along_batch
    sol = Solution.from_dict({"ProblemType": _problem("s"), **base, "PersistentKernel": 4})
    assert (sol.derived.persistent_kernel, sol.derived.persistent_kernel_along_batch) == (4, True)
    lib = GemmKernelContract.from_library_entry({
        "name": "x", "problemType": {"aType": "Float", "bType": "Float", "dType": "Float",
                                     "highPrecisionAccumulate": False, "useBeta": True,
                                     "operationIdentifier": "Contraction_l_Alik_Bljk_Cijk_Dijk"},
        "sizeMapping": {"workGroup": [8, 8, 1], "macroTile": [16, 16, 1], "globalSplitU": 1,
                        "persistentKernel": 4, "persistentKernelAlongBatch": True}})
    assert (lib.persistent_kernel, lib.persistent_kernel_along_batch) == (4, True)


CASES = [  # (arch, data type, params, (size, beta)s, CUs)
    ("gfx906", "d", {"PersistentKernel": 2, "PrefetchGlobalRead": 1, "StaggerU": 4},
     [(Size(37, 41, 19, 2), 0.0), (Size(1, 1, 1, 1), 0.5)], 1),
    ("gfx906", "d", {"PersistentKernel": 4, "PersistentKernelAlongBatch": True, "PrefetchGlobalRead": 0,
                     "WorkGroupMapping": 8}, [(Size(53, 29, 23, 2), 0.5)], 1),
    ("gfx900", "s", {"PersistentKernel": 3, "PrefetchGlobalRead": 2, "WorkGroupMapping": 2, "LocalSplitU": 2},
     [(Size(37, 41, 19, 3), 0.0)], 1),
    ("gfx90a", "s", {"PersistentKernel": -1, "PersistentKernelAlongBatch": True}, [(Size(41, 37, 13, 3), -1.25)], 2),
    # pointer-array batches (rocBLAS's I8II _GB logic has PersistentKernel -1): each work-group stays in its batch
    ("gfx906", "s", {"PersistentKernel": 2, "StridedBatched": False, "PrefetchGlobalRead": 2},
     [(Size(37, 41, 19, 3), 0.0), (Size(1, 1, 1, 2), 0.5)], 1),
]


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("arch,dt,extra,sizes,cus", CASES)
def test_persistent_kernels_match_reference(tmp_path, arch, dt, extra, sizes, cus):
    extra = dict(extra)
    strided = {"StridedBatched": extra.pop("StridedBatched")} if "StridedBatched" in extra else {}
    params = {"WorkGroup": [8, 8, extra.pop("LocalSplitU", 1)], "ThreadTile": [2, 2], "DepthU": 8, **extra}
    sol = Solution.from_dict({"ProblemType": {**_problem(dt), **strided}, **params}, where="test")
    _, co, contract = build_linked(sol, load_arch(arch), tmp_path, file="k")
    for size, beta in sizes:
        grid = contract.grid(size.m, size.n, size.batch, cus)
        tiles = -(-size.m // 16) * -(-size.n // 16) * (size.batch if contract.persistent_kernel_along_batch else 1)
        assert grid[1] == 1 and (grid[0] < tiles or tiles == 1)    # the work-groups loop over several tiles
        [r] = verify_sizes(co, contract, [size], 1.5, beta, 11, EmulatedRuntime(cu_count=cus))
        assert r.passed, (size, beta, r.detail, r.max_rel_error)


def test_persistent_along_batch_with_pointer_arrays_is_refused():
    """Along the batch a work-group's tiles change batch, but the batch's pointers are loaded once."""
    sol = Solution.from_dict({"ProblemType": {**_problem("s"), "StridedBatched": False}, "WorkGroup": [8, 8, 1],
                              "ThreadTile": [2, 2], "DepthU": 8, "PersistentKernel": 2,
                              "PersistentKernelAlongBatch": True}, where="test")
    assert sol.valid and "PersistentKernelAlongBatch" in supports(sol, load_arch("gfx906"))
