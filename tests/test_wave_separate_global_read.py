"""WaveSeparateGlobalReadA/B with Tensile 4.44's meaning: each wave loads its own contiguous block of the
operand's perpendicular dimension (LSP x NumLoadsPerpendicular of it, LSP divided among the waves), its lanes
forming the LSC x LSP load tile; LDS holds the tile as without it.

Real rocBLAS solutions (cut from ``../shared/data/logic/rocblas-asm_full`` with tools/cut_logic.py) derive the
load tile Tensile wrote into their files and verify on the emulator at edge sizes (sizes their
AssertFree0/1ElementMultiple / AssertSummationElementMultiple predicates admit, beta 0 with C all NaN); a VALU
kernel too (Tensile allows it there); Tensile's rejections are ours.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tensile_asm.benchmark.verify import Size
from tensile_asm.library.logic import read_logic_file
from tensile_asm.solution import Solution

from conftest import have_llvm
from kernel_build import verify_cut_solution

DATA = Path(__file__).parent / "data" / "wsgr"
# (file, solution index in the cut file, architecture): cut from rocblas-asm_full/<schedule>/<file> with
# tools/cut_logic.py (original SolutionIndex in the comment)
REAL = [
    ("aldebaran_Cijk_Alik_Bljk_SB.yaml", 0, "gfx90a"),       # 83: 16x16x4, MT 64x32, PGR 2, 1LDSBuffer, TransposeLDS
    ("aldebaran_Cijk_Alik_Bljk_SB.yaml", 1, "gfx90a"),       # 30: 32x32x2, MT 64x64, PGR 1
    ("aldebaran_Cijk_Ailk_Bljk_HHS_BH.yaml", 0, "gfx90a"),   # 138: 16x16x16, A along M (GLVW 2), StoreRemap 4
]
LOAD_KEYS = [f"{k}{t}" for k in ("GlobalLoadVectorWidth", "NumLoads", "NumLoadsCoalesced", "NumLoadsPerpendicular",
                                  "LSC", "LSP", "LVC", "LVP") for t in "AB"]


def _entries(fname: str):
    return read_logic_file(DATA / fname).entries


def test_real_load_tiles_are_tensiles():
    """The load-tile keys Tensile wrote for these WSGR solutions are what we derive, and each wave's block
    (LSP x NumLoadsPerpendicular) times the waves covers the perpendicular dimension exactly."""
    checked = 0
    for fname in sorted({f for f, _, _ in REAL}):
        raw = yaml.load((DATA / fname).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))[5]
        for e, stored in zip(_entries(fname), raw):
            sol = e.solution
            assert sol.valid, sol.rejection
            assert stored["WaveSeparateGlobalReadA"] or stored["WaveSeparateGlobalReadB"]
            for key in LOAD_KEYS:
                assert sol.derived_keys[key] == stored[key], (fname, e.index, key)
            d, pt = sol.derived, sol.problem_type
            waves = d.num_threads // 64
            for tc, mt, tlu in (("A", d.mt0, pt.tlu_a), ("B", d.mt1, pt.tlu_b)):
                if stored["WaveSeparateGlobalRead" + tc]:
                    perp = d.depth_u if tlu else mt
                    lsp, nlp = getattr(d, f"lsp_{tc.lower()}"), getattr(d, f"num_loads_perpendicular_{tc.lower()}")
                    assert lsp * nlp * waves == perp
            checked += 1
    assert checked == 3


def _sizes(sol) -> list[Size]:
    p, d = sol.params, sol.derived
    f0, f1, fk = (max(1, p.get(k, 1)) for k in ("AssertFree0ElementMultiple", "AssertFree1ElementMultiple",
                                                 "AssertSummationElementMultiple"))

    def up(v, q):
        return -(-v // q) * q
    return [Size(up(1, f0), up(1, f1), up(1, fk), 1),
            Size(up(d.mt0 + 3, f0), up(d.mt1 - 1, f1), up(d.depth_u + 7, fk), 2),
            Size(up(17, f0), up(d.mt1 + 5, f1), up(2 * d.depth_u + 3, fk), 1)]


def _verify(sol, arch_name: str, sizes: list[Size], betas=(0.0, -0.5)) -> None:
    verify_cut_solution(sol, arch_name, [(size, beta) for beta in betas for size in sizes], seed=17, name="wsgr")


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("fname,index,arch", REAL)
def test_real_solutions_verify(fname, index, arch):
    sol = _entries(fname)[index].solution
    _verify(sol, arch, _sizes(sol))


def _valu(extra: dict, ta=False, tb=False, **params) -> Solution:
    prob = {"OperationType": "GEMM", "DataType": "s", "DestDataType": "s", "ComputeDataType": "s",
            "TransposeA": ta, "TransposeB": tb, "Batched": True, "UseBeta": True}
    base = {"WorkGroup": [16, 16, 1], "ThreadTile": [4, 4], "DepthU": 16, "VectorWidth": 4,
            "GlobalReadVectorWidth": 4, "PrefetchGlobalRead": 1, **params, **extra}
    return Solution.from_dict({"ProblemType": prob, **base}, where="wsgr test")


@pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")
@pytest.mark.parametrize("ta,tb", [(False, False), (True, True)])
def test_valu_kernel_verifies(ta, tb):
    """A VALU kernel (4 waves) with both operands wave-separated: along K (A along M) or along the tile."""
    sol = _valu({"WaveSeparateGlobalReadA": 1, "WaveSeparateGlobalReadB": 1}, ta, tb)
    assert sol.valid, sol.rejection
    d = sol.derived
    # each of the 4 waves loads a quarter of the perpendicular side: DepthU 16 (along M/N) or the 64-wide tile
    assert (d.lsp_a, d.lsp_b) == ((4, 16) if not ta else (16, 4))
    _verify(sol, "gfx906", [Size(1, 1, 1, 1), Size(67, 61, 37, 2)], betas=(0.0,))


@pytest.mark.parametrize("extra,ta,params,why", [
    ({"WaveSeparateGlobalReadA": 1, "FractionalLoad": 1}, False, {}, "FractionalLoad"),
    ({"WaveSeparateGlobalReadA": 1}, False, {"DepthU": 2, "GlobalReadVectorWidth": 1},
     "DepthU 2 to be a multiple of the 4 waves"),
    ({"WaveSeparateGlobalReadA": 1}, True, {"WorkGroup": [2, 128, 1], "ThreadTile": [3, 2], "VectorWidth": 1,
                                            "GlobalReadVectorWidth": 1}, "MacroTileA 6 to be a multiple"),
    ({"WaveSeparateGlobalReadB": 1}, False, {"WorkGroup": [4, 8, 1]}, "at least one whole wave"),
])
def test_rejections_are_tensiles(extra, ta, params, why):
    sol = _valu(extra, ta, **params)
    assert not sol.valid and why in sol.rejection, sol.rejection
