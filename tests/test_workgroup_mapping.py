"""WorkGroupMapping of any width (Tensile 4.44's graWorkGroup: blocks of W tiles along dim 1, the last block
WgmRemainder1 high) and negative (4.44's assembly meaning: hardware order, the three arguments still
passed), with the constant divisions proved exact (writer/divide.py)."""

import random

import numpy as np
import pytest

from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm.arguments import workgroup_mapping_values
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution
from tensile_asm.writer.build import supports
from tensile_asm.writer.divide import WORKGROUP_MAX, magic_for

from conftest import have_llvm
from kernel_build import build_linked


def test_magic_numbers_are_exact_at_the_edges_of_their_range():
    rng = random.Random(7)
    for divisor in [3, 5, 6, 7, 9, 11, 12, 24, 36, 42, 100, 641, 1023] + [rng.randrange(3, 1 << 16) for _ in range(40)]:
        for top in (1023, (1 << 24) - 1, WORKGROUP_MAX):
            magic, shift = magic_for(divisor, top)
            assert magic < 1 << 32
            edges = {0, 1, top, top - 1, divisor - 1, divisor, top - top % divisor, top - top % divisor - 1}
            xs = np.array(sorted({x for x in edges if 0 <= x <= top} | {rng.randrange(top) for _ in range(2000)}),
                          dtype=np.uint64)
            got = ((xs * np.uint64(magic)) >> np.uint64(32)) >> np.uint64(shift)
            assert np.array_equal(got, xs // np.uint64(divisor)), (divisor, top)


def test_host_values_follow_tensile():
    # W > 1: blocks along dim 1; remainder nwg1 % W, or W when that is 0
    assert workgroup_mapping_values(3, 8, 3) == {"NumFullBlocks": 2, "WgmRemainder1": 2,
                                                 "MagicNumberWgmRemainder1": (1 << 31) // 2 + 1}
    assert workgroup_mapping_values(3, 14, 7)["WgmRemainder1"] == 7
    # W < -1: counted along dim 0; a zero remainder becomes W itself as a u32 (ContractionSolution.cpp)
    assert workgroup_mapping_values(17, 2, -8) == {"NumFullBlocks": 2, "WgmRemainder1": 1,
                                                   "MagicNumberWgmRemainder1": (1 << 31) + 1}
    assert workgroup_mapping_values(16, 2, -8)["WgmRemainder1"] == (1 << 32) - 8
    with pytest.raises(ValueError):
        workgroup_mapping_values(1 << 28, 9, 12)


def tensile_mapping(wg0, wg1, nwg0, nwg1, wgm):
    """Tensile 4.44 KernelWriterAssembly.graWorkGroup with the host's NumFullBlocks/WgmRemainder1."""
    if wgm <= 1:
        return wg0, wg1
    block, serial = wg1 // wgm, wg0 + (wg1 % wgm) * nwg0
    height = wgm if block < nwg1 // wgm else (nwg1 % wgm or wgm)
    return serial // height, serial % height + block * wgm


def _run_scalar(module, values):
    """Run a straight-line/branching module of the scalar instructions the mapping uses (registers keyed by
    virtual register and offset), from ``values``; returns them."""
    from tensile_asm.isa.module import Comment, LabelDef
    from tensile_asm.isa.registers import Imm, VRegRef
    items = [i for i in module.flatten() if not isinstance(i, Comment)]
    labels = {it.name: n for n, it in enumerate(items) if isinstance(it, LabelDef)}
    key = lambda o: (o.vreg, o.offset) if isinstance(o, VRegRef) else (o, 0)
    val = lambda o: (o if isinstance(o, int) else o.value if isinstance(o, Imm) else values[key(o)]) & 0xFFFFFFFF
    ops = {"s_mov_b32": lambda a: a, "s_mul_i32": lambda a, b: a * b, "s_mul_hi_u32": lambda a, b: (a * b) >> 32,
           "s_lshr_b32": lambda a, b: a >> (b & 31), "s_lshl_b32": lambda a, b: a << (b & 31),
           "s_and_b32": lambda a, b: a & b, "s_or_b32": lambda a, b: a | b, "s_add_u32": lambda a, b: a + b,
           "s_sub_u32": lambda a, b: a - b}
    pc, scc = 0, 0
    while pc < len(items):
        it = items[pc]
        pc += 1
        if isinstance(it, LabelDef):
            continue
        o = it.operands
        if it.opcode in ops:
            values[key(o[0])] = ops[it.opcode](*(val(x) for x in o[1:])) & 0xFFFFFFFF
        elif it.opcode == "s_cmp_lt_u32":
            scc = val(o[0]) < val(o[1])
        elif it.opcode in ("s_branch", "s_cbranch_scc1"):
            if it.opcode == "s_branch" or scc:
                pc = labels[o[0].name]
        else:
            raise AssertionError(f"unexpected {it.opcode} in the mapping")
    return values


@pytest.mark.parametrize("wgm,gsu", [(3, 1), (5, 2), (6, 1), (7, 3), (12, 1), (8, 1), (-4, 1)])
def test_kernel_mapping_is_tensiles(wgm, gsu):
    """The writer's mapping code, run on every work-group of several grids, gives each the tile Tensile's
    kernel gives it (and the GlobalSplitU slice wg1 % GSU)."""
    from tensile_asm.gemm.arguments import argument_layout
    from tensile_asm.writer.build import geometry
    from tensile_asm.writer.context import KernelContext
    from tensile_asm.writer.prologue import entry_registers, workgroup_mapping
    pt = {"OperationType": "GEMM", "DataType": "s", "TransposeA": False, "TransposeB": True, "Batched": True}
    sol = Solution.from_dict({"ProblemType": pt, "WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8,
                              "WorkGroupMapping": wgm, "GlobalSplitU": gsu,
                              "GlobalSplitUAlgorithm": "MultipleBuffer"}, where="test")
    ctx = KernelContext(load_arch("gfx90a"), geometry(sol), "mapping")
    layout = argument_layout(True, True, workgroup_mapping=abs(wgm) > 1)
    regs, _ = entry_registers(ctx, layout, True)
    module = workgroup_mapping(ctx, regs)
    for nwg0, nwg1 in ((1, 1), (3, 8), (2, abs(wgm) + 1), (5, 2 * abs(wgm) + 3), (4, abs(wgm))):
        args = {"NumWorkGroups0": nwg0, "NumWorkGroups1": nwg1, **workgroup_mapping_values(nwg0, nwg1, wgm)}
        seen = set()
        for wg0 in range(nwg0):
            for wg1 in range(nwg1 * gsu):
                values = {(regs.workgroup[0], 0): wg0, (regs.workgroup[1], 0): wg1}
                values.update({(regs.args[n].vreg, regs.args[n].offset): v for n, v in args.items() if n in regs.args})
                out = _run_scalar(module, values)
                tile = (out[(regs.tile0, 0)], out[(regs.tile1, 0)])
                assert tile == tensile_mapping(wg0, wg1 // gsu, nwg0, nwg1, wgm), (nwg0, nwg1, wg0, wg1)
                if gsu > 1:
                    assert out[(regs.gsu_index, 0)] == wg1 % gsu
                seen.add((tile, wg1 % gsu))
        assert len(seen) == nwg0 * nwg1 * gsu       # every tile and slice once


# MacroTile 16x16 (DepthU 8). WorkGroupMapping: 3 x 8 tiles (8 rows of tiles: no multiple of 3, 5, 6 or 7),
# one tile. StaggerUMapping: K of 10 DepthU steps plus a tail, so the starts (masks 3 and 7) wrap.
WGM_SIZES = (Size(35, 117, 13, 2), Size(1, 1, 1))
STAGGER_SIZES = (Size(35, 37, 83, 3), Size(1, 1, 1))
CASES = [  # (arch, data type, extra parameters, sizes)
    ("gfx906", "s", {"WorkGroupMapping": 3}, WGM_SIZES),
    ("gfx90a", "s", {"WorkGroupMapping": 5, "GlobalSplitU": 2}, WGM_SIZES),
    ("gfx942", "h", {"WorkGroupMapping": 7}, WGM_SIZES),
    ("gfx90a", "s", {"WorkGroupMapping": 6, "PersistentKernel": 2}, WGM_SIZES),
    ("gfx942", "s", {"WorkGroupMapping": -4}, WGM_SIZES),
    ("gfx906", "s", {"WorkGroupMapping": 3, "StaggerU": 4, "StaggerUMapping": 3}, STAGGER_SIZES),
    ("gfx90a", "h", {"StaggerU": 8, "StaggerUMapping": 1, "GlobalSplitU": 2,
                     "GlobalSplitUAlgorithm": "MultipleBuffer"}, STAGGER_SIZES),
    ("gfx942", "s", {"StaggerU": 4, "StaggerUMapping": 2, "StaggerUStride": 64}, STAGGER_SIZES),
    ("gfx908", "s", {"StaggerU": 8, "StaggerUMapping": 4}, STAGGER_SIZES),
]


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("arch_name,dtype,extra,sizes", CASES, ids=lambda c: str(c) if isinstance(c, dict) else None)
def test_mapping_kernels_match_reference(arch_name, dtype, extra, sizes, tmp_path):
    pt = {"OperationType": "GEMM", "DataType": dtype, "TransposeA": False, "TransposeB": True, "Batched": True,
          "UseBeta": True, "HighPrecisionAccumulate": dtype == "h", "DestDataType": dtype}
    sol = Solution.from_dict({"ProblemType": pt, "WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8,
                              "VectorWidth": 1, "GlobalReadVectorWidth": 1, "PrefetchGlobalRead": 1,
                              "StaggerU": 0, "WorkGroupMapping": 1, **extra}, where="test")
    _, co, contract = build_linked(sol, load_arch(arch_name), tmp_path, "mapping")
    wgm = extra.get("WorkGroupMapping", 1)
    assert contract.workgroup_mapping == wgm
    assert ("NumFullBlocks" in {a.name for a in contract.layout()}) == (abs(wgm) > 1)
    for beta, batch_sizes in ((0.5, sizes), (0.0, sizes[:1])):
        results = verify_sizes(co, contract, list(batch_sizes), -1.25, beta, 5, EmulatedRuntime())
        assert all(r.passed for r in results), results


def test_batch_stagger_needs_a_batch():
    pt = {"OperationType": "GEMM", "DataType": "s", "TransposeA": False, "TransposeB": True, "Batched": False}
    sol = Solution.from_dict({"ProblemType": pt, "WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8,
                              "StaggerU": 4, "StaggerUMapping": 3}, where="test")
    assert "StaggerUMapping=3" in supports(sol, load_arch("gfx90a"))
