"""gfx942's fp8/bf8 GEMMs (Tensile's F8/B8 data types and the hybrids F8B8/B8F8, FNUZ formats): fp8 MFMAs,
bytes in LDS, fp32 accumulation, and C/D in fp32, fp16 or fp8/bf8 (clipped to the largest finite value and
rounded to nearest even, as Tensile's Fp32toFp8SWClip kernels). Built by the KernelWriter, run on the strict
emulator against the float64 reference, which decodes the stored codes exactly (benchmark/float8.py): random
data, D poisoned, C NaN when beta is 0, sizes 1, primes, not multiples of the tile, batch > 1."""

from __future__ import annotations

import numpy as np
import pytest

from tensile_asm.benchmark import float8
from tensile_asm.benchmark.reference import compare, make_instance
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.writer.build import supports

from conftest import have_llvm
from test_mfma_kernels import built, make

pytestmark = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


def problem(data: str, dest: str, ta: bool, tb: bool, stochastic: bool = False) -> dict:
    return {"OperationType": "GEMM", "DataType": data, "DestDataType": dest, "ComputeDataType": "s",
            "HighPrecisionAccumulate": True, "TransposeA": ta, "TransposeB": tb, "Batched": True,
            "StochasticRounding": stochastic}


def test_fnuz_tables_and_rounding():
    """The reference's decoder against the CDNA3 formats' defining values, and round-to-nearest-even encoding."""
    f8, b8 = float8.TABLES["F8"], float8.TABLES["B8"]
    assert (f8[0x7F], f8[0x01], f8[0x08], f8[0x40], f8[0xC0]) == (240.0, 2.0 ** -10, 2.0 ** -7, 1.0, -1.0)
    assert (b8[0x7F], b8[0x01], b8[0x04], b8[0x40], b8[0xBC]) == (57344.0, 2.0 ** -17, 2.0 ** -15, 1.0, -0.5)
    assert np.isnan(f8[0x80]) and np.isnan(b8[0x80]) and np.isfinite(np.delete(f8, 0x80)).all()
    codes = np.delete(np.arange(256), 0x80)
    for fmt in ("F8", "B8"):
        assert (float8.encode(float8.decode(codes, fmt), fmt) == codes).all()
    # ties to even: 1 + 1/16 lies between 1 (0x40) and 1.125 (0x41); 1 + 3/16 between 0x41 and 0x42
    assert list(float8.encode([1.0625, 1.1875, 1e6, -1e6, -1e-9, np.nan], "F8")) == [0x40, 0x42, 0x7F, 0xFF, 0, 0x80]


# (data, dest, A transposed, B transposed, MatrixInstruction (9 values), extra parameters)
CASES = [
    ("f8b8", "b8", False, True, [16, 16, 32, 1, 1, 1, 2, 2, 1], {"SourceSwap": True, "VectorWidth": 1}),
    ("b8f8", "s", True, True, [32, 32, 16, 1, 1, 1, 1, 2, 1], {"MIArchVgpr": True}),
]
SLOW_CASES = [   # with --slow
    ("f8", "f8", False, False, [16, 16, 32, 1, 1, 1, 1, 2, 2], {}),
    ("f8", "s", False, False, [16, 16, 32, 1, 1, 2, 1, 1, 2], {}),
    ("b8", "h", True, False, [32, 32, 16, 1, 1, 1, 1, 1, 2], {}),
    ("b8", "b8", False, False, [32, 32, 16, 1, 1, 2, 1, 1, 2], {"StoreRemapVectorWidth": 0}),
    ("f8b8", "h", True, False, [16, 16, 32, 1, 1, 1, 1, 2, 2], {"SourceSwap": True, "VectorWidth": 1}),
]


def build(data, dest, ta, tb, mi, extra):
    params = {"MatrixInstruction": mi, "DepthU": 64, "GlobalReadVectorWidth": 16, "LocalReadVectorWidth": 8,
              "TransposeLDS": 1, "PrefetchGlobalRead": 2, "PrefetchLocalRead": 1, "LdsPadA": 16, "LdsPadB": 4,
              **extra}
    return built("gfx942", problem(data, dest, ta, tb), params)


def check(data, dest, ta, tb, mi, extra):
    co, contract, kernel = build(data, dest, ta, tb, mi, extra)
    a_t, b_t = (("bf8", "fp8") if extra.get("SourceSwap") else ("fp8", "bf8")) if data == "f8b8" else \
        ("bf8", "fp8") if data == "b8f8" else (("fp8",) * 2 if data == "f8" else ("bf8",) * 2)
    text = kernel.text()
    assert f"v_mfma_f32_{mi[0]}x{mi[1]}x{mi[2]}_{a_t}_{b_t}" in text
    if dest in ("f8", "b8"):
        assert f"v_cvt_pk_{'fp8' if dest == 'f8' else 'bf8'}_f32" in text and "buffer_store_byte" in text
    for alpha, beta, sizes in ((-1.25, 0.5, [Size(1, 1, 1, 1), Size(37, 29, 67, 2)]), (1.5, 0.0, [Size(17, 41, 64, 1)])):
        results = verify_sizes(co, contract, sizes, alpha, beta, 7, EmulatedRuntime())
        assert all(r.passed for r in results), [(r.size, r.detail, r.max_rel_error) for r in results if not r.passed]


@pytest.mark.parametrize("data,dest,ta,tb,mi,extra", CASES)
def test_float8_gemm_gfx942(data, dest, ta, tb, mi, extra):
    check(data, dest, ta, tb, mi, extra)


@pytest.mark.parametrize("data,dest,ta,tb,mi,extra", SLOW_CASES)
def test_float8_gemm_gfx942_slow(request, data, dest, ta, tb, mi, extra):
    if not request.config.getoption("--slow"):
        pytest.skip("the --slow run")
    check(data, dest, ta, tb, mi, extra)


def test_float8_reference_reads_each_operand_in_its_format():
    """A hybrid kernel's D checked against a reference that reads B in A's format must fail: the test can fail."""
    co, contract, _ = build(*CASES[1])
    inst = make_instance(19, 23, 70, 1, True, True, data_type="B8F8", dest_type="S", seed=3)
    d = EmulatedRuntime().run_gemm(co, contract, inst, 1.0, 0.5).d
    assert compare(inst, d, 1.0, 0.5).passed
    inst.data_type = "B8"        # B's fp8 codes read as bf8
    assert not compare(inst, d, 1.0, 0.5).passed


def test_stochastic_rounding_is_refused():
    sol = make(problem("f8", "f8", False, False, stochastic=True),
               {"MatrixInstruction": [16, 16, 32, 1, 1, 1, 1, 2, 2], "DepthU": 64, "PrefetchGlobalRead": 1})
    assert sol.valid, sol.rejection
    reason = supports(sol, load_arch("gfx942"))
    assert reason is not None and reason.startswith("StochasticRounding=True"), reason
