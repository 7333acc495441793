"""MACInstruction MAD (``MAC`` in older logic files) with Tensile's meaning: ``v_mac_f32``, the product rounded
to fp32 before the add, in the main loop's fp32 MACs and the store's beta*C (Tensile's ``_v_mac_f32`` macro).
The emulator's v_mac_f32 is the unfused multiply-add that never keeps fp32 denormals; the kernel's D is
compared bit for bit with numpy replaying the same unfused operations in the kernel's order, and differs
from the fused (FMA) kernel's D, which the float64 reference's tolerance also accepts."""

from __future__ import annotations

import numpy as np
import pytest

from tensile_asm.benchmark.reference import make_instance
from tensile_asm.benchmark.verify import Size, verify_sizes
from tensile_asm.gemm import GemmKernelContract
from tensile_asm.isa.arch import load_arch
from tensile_asm.runtime.emulated import EmulatedRuntime
from tensile_asm.solution import Solution, min_names
from tensile_asm.writer.build import build_kernel, link_kernels, supports

from conftest import have_llvm

F32 = np.float32
needs_llvm = pytest.mark.skipif(not have_llvm(), reason="LLVM AMDGPU toolchain not installed (tools/setup)")


@needs_llvm
def test_v_mac_f32_rounds_the_product_and_flushes_denormals():
    from valu_kernel import run_block
    rng = np.random.default_rng(2)
    x = rng.uniform(-2, 2, 64).astype(F32)
    y = rng.uniform(-2, 2, 64).astype(F32)
    z = rng.uniform(-2, 2, 64).astype(F32)
    x[:4] = [1e-39, 3.0, 1e-20, 1.5e-38]      # denormal input; a product and a sum in the denormal range
    y[:4] = [1.0, -2e-39, 1e-20, 1.0]
    z[:4] = [0.5, 0.25, 0.0, -1.4e-38]
    out = run_block("v_mov_b32 v30, v12\nv_mac_f32 v30, v10, v11\nv_mov_b32 v31, v12\nv_fmac_f32 v31, v10, v11",
                    np.stack([x.view(np.uint32), y.view(np.uint32), z.view(np.uint32)]), 2, arch="gfx906")
    mac, fmac = out[0].view(F32), out[1].view(F32)
    ftz = lambda v: np.where(np.abs(v) < F32(2.0 ** -126), F32(0) * np.sign(v), v).astype(F32)  # noqa: E731
    want = ftz(ftz(ftz(x) * ftz(y)) + ftz(z))
    assert np.array_equal(mac.view(np.uint32)[4:], want.view(np.uint32)[4:])
    assert list(mac[:4]) == [0.5, 0.25, 0.0, 0.0]          # 1e-39 flushed; 3*-2e-39 flushed; 1e-40 flushed; sum flushed
    assert fmac[0] != 0.5 or fmac[2] != 0.0                # the fused one keeps denormals (fp32 denorm mode)
    assert not np.array_equal(mac[4:], fmac[4:])           # and rounds once: some lanes differ


def _solution(mac: str, arch: str, beta: bool = True):
    problem = {"OperationType": "GEMM", "DataType": "s", "TransposeA": False, "TransposeB": True,
               "Batched": True, "UseBeta": beta}
    return Solution.from_dict({"ProblemType": problem, "WorkGroup": [8, 8, 1], "ThreadTile": [2, 2], "DepthU": 8,
                               "PrefetchGlobalRead": 1, "MACInstruction": mac}, where="test")


def _unfused_d(inst, alpha, beta):
    """D as the MAD kernel computes it: acc = mac(acc, a, b) over K ascending, then v = alpha*acc and
    v = mac(v, C, beta), every step rounded to fp32 (denormals cannot occur with this data)."""
    a, b, c = inst.view("A").astype(F32), inst.view("B").astype(F32), inst.view("C").astype(F32)
    acc = np.zeros((inst.batch, inst.m, inst.n), F32)
    for k in range(inst.k):
        acc = (a[:, :, k, None] * b[:, None, k, :]).astype(F32) + acc
    v = (F32(alpha) * acc).astype(F32)
    return ((c * F32(beta)).astype(F32) + v).astype(F32)


@needs_llvm
@pytest.mark.parametrize("arch", ["gfx906", "gfx90a"])
def test_mad_kernel_is_the_unfused_sum_bit_for_bit(tmp_path, arch, request):
    if arch != "gfx906" and not request.config.getoption("--slow"):
        pytest.skip("gfx90a's MAD kernel runs with --slow")
    a = load_arch(arch)
    runtime = EmulatedRuntime()
    ds = {}
    for mac in ("MAD", "FMA"):
        sol = _solution(mac, arch)
        assert sol.valid and supports(sol, a) is None
        name = min_names([sol])[0] + mac
        kernel = build_kernel(sol, a, name)
        text = kernel.text()
        assert ("v_mac_f32" in text) == (mac == "MAD") and ("v_fmac_f32" in text) == (mac == "FMA")
        co = tmp_path / f"{mac}.co"
        link_kernels([kernel], a, co)
        contract = GemmKernelContract.from_solution(sol, name)
        inst = make_instance(19, 23, 37, 2, False, True, seed=4)
        ds[mac] = runtime.run_gemm(co, contract, inst, 1.25, -0.75).d
        # the float64 reference accepts both, at edge sizes, beta 0 (C NaN) and not
        results = verify_sizes(co, contract, [Size(1, 1, 1), Size(17, 5, 9)], 1.25, 0.0, 5,
                               runtime)
        assert all(r.passed for r in results), [(r.size, r.detail) for r in results]
    got = inst.view("D", ds["MAD"])
    want = _unfused_d(inst, 1.25, -0.75)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert not np.array_equal(ds["MAD"], ds["FMA"])          # the fused kernel rounds differently


def test_mad_refused_where_the_architecture_has_no_v_mac_f32():
    sol = _solution("MAC", "gfx942")
    assert sol.derived.fused_mac is False
    assert "gfx942 has no v_mac_f32" in supports(sol, load_arch("gfx942"))
    assert supports(sol, load_arch("gfx908")) is None
    assert _solution("FMA", "gfx942").derived.fused_mac
