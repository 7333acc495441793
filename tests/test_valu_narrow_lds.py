"""16-bit A/B kept 16-bit in LDS by the VALU writer (Geometry.valu_narrow_lds: where their fp32 layout would
not fit the LDS, as Tensile's kernels hold them): LDS writes of the loaded 16-bit values, local reads of
2 x VectorWidth bytes, widened to fp32 before the FMAs (writer/local_memory.py ``widen_reads``).

The CI cases lower the fp32 limit (``layout.VALU_WIDE_LDS_LIMIT``) so small kernels take the 16-bit path and
run on the emulator at edge sizes (1, primes, tile +- 1, batch > 1, beta 0) for H, B, HHS and pure half, every
VectorWidth, PrefetchLocalRead 0 and 1, LocalSplitU and both transposes; --slow builds and verifies the four rocBLAS
vega10/vega20 solutions that need it (refused before: "needs more LDS than the chip has")."""

from __future__ import annotations

import pytest

from tensile_asm.benchmark.verify import Size, admitted_size, verify_sizes
from tensile_asm.isa.arch import load_arch
from tensile_asm.library.logic import read_logic_file
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution, layout
from tensile_asm.writer.build import geometry, supports

from conftest import have_llvm
from kernel_build import build_linked

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")

# (arch, types, transposes, parameters)
CASES = [
    ("gfx906", "hhs", (False, True), dict(WorkGroup=[8, 8, 1], ThreadTile=[4, 2], DepthU=16, VectorWidth=2,
                                          PrefetchGlobalRead=1, PrefetchLocalRead=1)),
    ("gfx900", "bbs", (True, False), dict(WorkGroup=[8, 8, 1], ThreadTile=[4, 4], DepthU=8, VectorWidth=4,
                                          GlobalReadVectorWidth=4, PrefetchGlobalRead=1, PrefetchLocalRead=1)),
    ("gfx90a", "hhh", (False, False), dict(WorkGroup=[4, 8, 1], ThreadTile=[8, 8], DepthU=8, VectorWidth=8,
                                           PrefetchGlobalRead=0, PrefetchLocalRead=0)),
    ("gfx906", "hss", (True, True), dict(WorkGroup=[8, 4, 2], ThreadTile=[2, 4], DepthU=8, VectorWidth=1,
                                         PrefetchGlobalRead=1, PrefetchLocalRead=1)),
]


def _solution(types, trans, params):
    a, c, comp = types
    problem = {"OperationType": "GEMM", "DataType": a, "DestDataType": c, "ComputeDataType": comp,
               "HighPrecisionAccumulate": comp == "s", "TransposeA": trans[0], "TransposeB": trans[1],
               "Batched": True, "UseBeta": True}
    return Solution.from_dict({"ProblemType": problem, **params}, where="test")


@pytest.mark.parametrize("arch_name, types, trans, params", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_narrow_lds_kernels_match_reference(tmp_path, monkeypatch, arch_name, types, trans, params):
    arch = load_arch(arch_name)
    sol = _solution(types, trans, params)
    wide = geometry(sol)
    assert not wide.valu_narrow_lds and wide.lds_bpe == 4            # the fp32 layout fits: as before
    monkeypatch.setattr(layout, "VALU_WIDE_LDS_LIMIT", wide.lds_bytes - 1)
    g = geometry(sol)
    assert g.valu_narrow_lds and g.lds_bpe == 2 and g.lds_bytes <= wide.lds_bytes
    kernel, co, contract = build_linked(sol, arch, tmp_path)
    text = kernel.text()
    assert "v_cvt_f32_f16" in text or "v_lshlrev_b32" in text
    assert any(f"ds_read_{w}" in text for w in ("u16", "b32", "b64", "b128"))
    assert contract.lds_bytes == g.lds_bytes
    d = sol.derived
    sizes = [Size(1, 1, 1, 1), Size(d.mt0 + 1, d.mt1 - 1, 2 * d.depth_u + 3, 2)]
    for r in verify_sizes(co, contract, sizes, 1.5, 0.5, 5, EmulatedRuntime()):
        assert r.passed, (r.size, r.detail, r.max_rel_error)
    [r] = verify_sizes(co, contract, [Size(13, 7, 5, 3)], -0.75, 0.0, 6, EmulatedRuntime())
    assert r.passed, (r.size, r.detail)


# rocBLAS's VALU solutions whose fp32 LDS layout does not fit (vega10 / vega20, file, index in the file)
ROCBLAS = [("vega10", "gfx900", "vega10_Cijk_Alik_Bljk_HB.yaml", 29),
           ("vega20", "gfx906", "vega20_Cijk_Ailk_Bljk_HHS_BH.yaml", 78),
           ("vega20", "gfx906", "vega20_Cijk_Alik_Bljk_HB.yaml", 11),
           ("vega20", "gfx906", "vega20_Cijk_Alik_Bljk_HB.yaml", 50)]


@pytest.mark.parametrize("schedule, arch_name, file, index", ROCBLAS, ids=[f"{r[2]}#{r[3]}" for r in ROCBLAS])
def test_rocblas_solutions_that_need_16bit_lds(tmp_path, shared_dir, request, schedule, arch_name, file, index):
    if not request.config.getoption("--slow"):
        pytest.skip("MacroTile 256 kernels: emulated runs of minutes (--slow)")
    arch = load_arch(arch_name)
    sol = read_logic_file(shared_dir / "data" / "logic" / "rocblas-asm_full" / schedule / file).solutions[index]
    assert supports(sol, arch) is None
    assert geometry(sol).valu_narrow_lds
    kernel, co, contract = build_linked(sol, arch, tmp_path)
    d = sol.derived
    sizes = [admitted_size(sol.params, s) for s in (Size(1, 1, 1, 1), Size(d.mt0 + 1, d.mt1 - 1, d.depth_u + 3, 2),
                                                    Size(37, 53, 2 * d.depth_u + 7, 1))]   # the asserted multiples
    for r in verify_sizes(co, contract, sizes, 1.5, 0.5, 11, EmulatedRuntime()):
        assert r.passed, (r.size, r.detail)
    [r] = verify_sizes(co, contract, [admitted_size(sol.params, Size(7, d.mt1 + 3, 13, 3))], -0.75, 0.0, 12, EmulatedRuntime())
    assert r.passed, (r.size, r.detail)


def test_local_split_u_partial_sums_must_fit_the_16bit_layout():
    """The --slow random run's shard-1 draw (gfx900 HHH, WorkGroup [16, 4, 4], ThreadTile 8x8, DepthU 64): its
    16-bit layout (53248 bytes, Tensile counting LocalSplitU's partial sums at fp16's size) cannot hold the fp32
    partial sums our reduction writes (an LDS write past the end on the emulator), so it stays refused."""
    problem = {"OperationType": "GEMM", "DataType": "h", "DestDataType": "h", "ComputeDataType": "h",
               "HighPrecisionAccumulate": False, "TransposeA": False, "TransposeB": False, "Batched": True,
               "UseBeta": True}
    sol = Solution.from_dict({"ProblemType": problem, "WorkGroup": [16, 4, 4], "ThreadTile": [8, 8], "DepthU": 64,
                              "VectorWidth": 8, "InnerUnroll": 2, "PrefetchGlobalRead": 1, "PrefetchLocalRead": 0},
                             where="test")
    assert not geometry(sol).valu_narrow_lds
    assert supports(sol, load_arch("gfx900")) == "needs 106496 bytes of LDS, more than gfx900's 65536"
