#!/usr/bin/env python3
"""Build the emulator's third-party fixtures: kernels that compilers other than ours produced.

  python3 tools/make_emulator_fixtures.py [--only NAME ...] [--clang clang-22] [--triton-python PY]

(a) HIP C++ (tools/emulator_fixtures/*.hip) compiled by clang-22 for gfx90a against Debian's HIP
    5.2 headers and device libraries (apt-get install hipcc libamdhip64-dev rocm-device-libs; see
    toolchain-probe §5: code object v5 and ``-D__AMDGCN_WAVEFRONT_SIZE=64``; hip.bc is linked for
    ``__syncthreads``' fence).
(b) Triton kernels (tools/emulator_fixtures/triton_kernels.py) compiled by Triton's AMD backend for
    gfx942, and for gfx950 (triton_gfx950_*: its GEMMs read B through the LDS transpose loads), without
    a GPU (toolchain-probe §8); Triton's own hsaco is kept. Triton is not a project dependency: install
    it in a throwaway venv (python3 -m venv /tmp/tv && /tmp/tv/bin/pip install triton==3.9.0) and pass
    --triton-python /tmp/tv/bin/python.

Each fixture is tests/data/fixtures/NAME.co (or .hsaco) plus NAME.json: the kernel, grid, block,
LDS, the arguments (arrays with dtype/shape/initialisation, scalars), and numpy expressions the
outputs must match (tests/test_emulator_fixtures.py runs them on the emulator, strict).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "tools" / "emulator_fixtures"
OUT = ROOT / "tests" / "data" / "fixtures"
BITCODE = Path("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode")


def arr(name, dtype, shape, init="uniform", lo=-1.0, hi=1.0, encoding=None):
    """An array argument; with an encoding (bfloat16, float8_e4m3) dtype is the codes' storage type."""
    spec = {"name": name, "array": {"dtype": dtype, "shape": list(shape)}, "init": init}
    if init in ("uniform", "randint"):
        spec["range"] = [lo, hi]
    if encoding:
        spec["encoding"] = encoding
    return spec


def out(name, dtype, shape):
    return arr(name, dtype, shape, init="poison")


def scalar(name, dtype, value):
    return {"name": name, "scalar": dtype, "value": value}


def scratch(name):
    """Triton's trailing global/profile scratch pointers: a small buffer nothing checks."""
    return arr(name, "uint8", [256], init="randint", lo=1, hi=255)


def check(output, expect, rtol, atol):
    return {"output": output, "expect": expect, "rtol": rtol, "atol": atol}


# -- HIP C++ for gfx90a ------------------------------------------------------------------------------
M, N, K = 40, 36, 50
HIP = {
    "hip_vadd_grid_stride": dict(
        grid=[3, 1, 1], block=[128, 1, 1],
        args=[arr("a", "float32", [1000]), arr("b", "float32", [1000]), out("c", "float32", [1000]),
              scalar("n", "int32", 1000)],
        checks=[check("c", "a + b", 0, 0)]),
    "hip_sgemm_tiled": dict(
        grid=[3, 3, 1], block=[16, 16, 1],
        args=[arr("A", "float32", [M * K]), arr("B", "float32", [K * N]), out("C", "float32", [M * N]),
              scalar("M", "int32", M), scalar("N", "int32", N), scalar("K", "int32", K)],
        checks=[check("C", f"(A.astype(np.float64).reshape({M}, {K}) @ B.astype(np.float64).reshape({K}, {N}))"
                           ".ravel()", 1e-5, 1e-5)]),
    "hip_block_reduce_shfl": dict(
        grid=[4, 1, 1], block=[256, 1, 1],
        args=[arr("x", "float32", [1000]), out("out", "float32", [4]), scalar("n", "int32", 1000)],
        checks=[check("out", "np.pad(x.astype(np.float64), (0, 24)).reshape(4, 256).sum(1)", 1e-5, 1e-5)]),
    "hip_half_math": dict(
        grid=[4, 1, 1], block=[64, 1, 1],
        args=[arr("x", "float16", [400]), arr("y", "float16", [400]), out("z", "float16", [400]),
              arr("a", "float16", [200], lo=-2, hi=2), arr("b", "float16", [200], lo=-2, hi=2),
              out("f", "float32", [200]), scalar("alpha", "float16", 1.375), scalar("n", "int32", 200)],
        checks=[check("z", "(np.float64(alpha) * x.astype(np.float64) + y).astype(np.float16)", 1e-3, 1e-3),
                check("f", "((a.astype(np.float64) * b).astype(np.float16).astype(np.float64)"
                           " + np.maximum(a, b)).astype(np.float16) + 0.25 * a.astype(np.float64)", 1e-3, 1e-3)]),
    "hip_dmath": dict(
        grid=[4, 1, 1], block=[64, 1, 1],
        args=[arr("a", "float64", [200]), arr("b", "float64", [200]), arr("c", "float64", [200]),
              out("out", "float64", [200]), out("dot", "float64", [50]), scalar("alpha", "float64", 0.75),
              scalar("n", "int32", 200)],
        checks=[check("out", "np.fmax(a * b + c - alpha * a, c) * 0.5", 1e-14, 1e-14),
                check("dot", "(a.reshape(50, 4) * b.reshape(50, 4)).sum(1)", 1e-14, 1e-14)]),
    "hip_wave_scan_dpp": dict(
        grid=[2, 1, 1], block=[128, 1, 1],
        args=[arr("x", "float32", [256]), out("scan", "float32", [256]), out("quad_rev", "float32", [256]),
              out("mirror", "float32", [256])],
        checks=[check("scan", "np.cumsum(x.astype(np.float64).reshape(-1, 64), 1).ravel()", 1e-5, 1e-5),
                check("quad_rev", "x.reshape(-1, 4)[:, ::-1].ravel()", 0, 0),
                check("mirror", "x.reshape(-1, 16)[:, ::-1].ravel()", 0, 0)]),
    "hip_bytes_sdwa": dict(
        grid=[2, 1, 1], block=[128, 1, 1],
        args=[arr("a", "uint8", [200, 4], init="randint", lo=0, hi=255),
              arr("b", "int8", [200, 4], init="randint", lo=-128, hi=127), out("dot", "int32", [200]),
              out("pack", "uint8", [200, 4]), arr("x", "float16", [200, 2], lo=-4, hi=4), out("hs", "float16", [200]),
              out("fs", "float32", [200]), scalar("n", "int32", 200)],
        checks=[check("dot", "b[:, 0].astype(np.int64) * a[:, 1] + b[:, 1].astype(np.int64) * a[:, 0]"
                             " - b[:, 2].astype(np.int64) * b[:, 3] + (b[:, 3].astype(np.int64) >> 1)", 0, 0),
                check("pack", "np.stack([a[:, 0] | a[:, 1], a[:, 3], a[:, 2] ^ a[:, 0], b[:, 1].view(np.uint8)], 1)",
                      0, 0),
                check("hs", "(x[:, 1].astype(np.float64) + x[:, 0]).astype(np.float16)", 0, 0),
                check("fs", "(x[:, 1].astype(np.float64) * 3).astype(np.float16).astype(np.float32)", 0, 0)]),
    # float atomics across workgroups, which clang compiles to a load of the address and a
    # global_atomic_cmpswap retry loop (no -munsafe-fp-atomics: no native global_atomic_add_f32). The
    # accumulators start at random values; a sum's rounding depends on the order the atomics land in, so
    # atol bounds it (200 terms, partial sums below 25: 200 * 25 * 2**-24 = 3e-4) while a lost update
    # (|x| >= 1e-3, never zero) still fails; the max is exact
    "hip_atomic_add_f32": dict(
        grid=[6, 1, 1], block=[64, 1, 1],
        args=[arr("x", "float32", [997]), arr("sums", "float32", [5]), scalar("n", "int32", 997),
              scalar("nsums", "int32", 5)],
        checks=[check("sums", "sums + np.bincount(np.arange(997) % 5, weights=x.astype(np.float64), minlength=5)",
                      0, 3e-4)]),
    "hip_atomic_max_f32": dict(
        grid=[5, 1, 1], block=[64, 1, 1],
        args=[arr("x", "float32", [300]), arr("mx", "float32", [1]), scalar("n", "int32", 300)],
        checks=[check("mx", "np.maximum(mx, x.max())", 0, 0)]),
    "hip_atomic_add_uniform": dict(          # the address is wave-uniform: the load is s_load_dword
        grid=[7, 1, 1], block=[128, 1, 1],
        args=[arr("x", "float32", [850]), arr("total", "float32", [2]), scalar("n", "int32", 850)],
        checks=[check("total", "total + np.bincount(np.arange(850) // 128 % 2, weights=x.astype(np.float64), "
                               "minlength=2)", 0, 3e-4)]),
}


def compile_hip(name: str, clang: str) -> tuple[Path, str]:
    src = SRC / f"{name[len('hip_'):]}.hip"
    co = OUT / f"{name}.co"
    tmp = co.with_suffix(".tmp")
    cmd = [clang, "-x", "hip", "--rocm-path=/usr", f"--hip-device-lib-path={BITCODE}", "--offload-arch=gfx90a",
           "--cuda-device-only", "--no-gpu-bundle-output", "-O3", "-mcode-object-version=5",
           "-D__AMDGCN_WAVEFRONT_SIZE=64", "-Xclang", "-mlink-builtin-bitcode", "-Xclang", str(BITCODE / "hip.bc"),
           "-c", str(src), "-o", str(tmp)]
    subprocess.run(cmd, check=True)
    tmp.replace(co)
    version = subprocess.run([clang, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    shown = " ".join(cmd[:-3] + [src.relative_to(ROOT).as_posix(), "-o", co.name])
    return co, f"{version}; {shown}"


# -- Triton for gfx942 and gfx950 ----------------------------------------------------------------------
TM, TN, TK = 50, 40, 70
# element type: (Triton pointer type, array storage dtype, encoding of the codes)
_ELEM = {"float16": ("*fp16", "float16", None), "float32": ("*fp32", "float32", None),
         "bfloat16": ("*bf16", "uint16", "bfloat16"), "float8_e4m3": ("*fp8e4nv", "uint8", "float8_e4m3")}
_MM_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", **{k: "i32" for k in (
    "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")},
    **{k: "constexpr" for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "PRECISION")}}


def _mm(dtype, block_k, arch="gfx942"):
    ptr, storage, encoding = _ELEM[dtype]
    return dict(
        grid=[2, 2, 1], block=[256, 1, 1], num_warps=4, fn="matmul_kernel", arch=arch,
        signature=dict(_MM_SIG, a_ptr=ptr, b_ptr=ptr),
        constexprs={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": block_k, "PRECISION": "ieee"},
        args=[arr("A", storage, [TM, TK], encoding=encoding), arr("B", storage, [TK, TN], encoding=encoding),
              out("C", "float32", [TM, TN]),
              scalar("M", "int32", TM), scalar("N", "int32", TN), scalar("K", "int32", TK),
              scalar("stride_am", "int32", TK), scalar("stride_ak", "int32", 1),
              scalar("stride_bk", "int32", TN), scalar("stride_bn", "int32", 1),
              scalar("stride_cm", "int32", TN), scalar("stride_cn", "int32", 1), scratch("global_scratch"),
              scratch("profile_scratch")],
        checks=[check("C", "A.astype(np.float64) @ B.astype(np.float64)", 1e-4, 1e-4)])


TRITON = {
    "triton_matmul_f16": _mm("float16", 32),
    "triton_matmul_f32": _mm("float32", 16),
    "triton_softmax": dict(
        grid=[6, 1, 1], block=[128, 1, 1], num_warps=2, fn="softmax_kernel",
        signature={"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32", "out_stride": "i32",
                   "n_cols": "i32", "BLOCK": "constexpr"}, constexprs={"BLOCK": 128},
        args=[out("y", "float32", [6, 100]), arr("x", "float32", [6, 100], lo=-4, hi=4),
              scalar("in_stride", "int32", 100), scalar("out_stride", "int32", 100), scalar("n_cols", "int32", 100),
              scratch("global_scratch"), scratch("profile_scratch")],
        checks=[check("y", "np.exp(x - x.max(1, keepdims=True)) / np.exp(x - x.max(1, keepdims=True))"
                           ".sum(1, keepdims=True)", 1e-5, 1e-6)]),
    "triton_row_sum": dict(
        grid=[5, 1, 1], block=[256, 1, 1], num_warps=4, fn="row_sum_kernel",
        signature={"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32", "n_cols": "i32",
                   "BLOCK": "constexpr"}, constexprs={"BLOCK": 256},
        args=[out("s", "float32", [5]), arr("x", "float32", [5, 700]), scalar("in_stride", "int32", 700),
              scalar("n_cols", "int32", 700), scratch("global_scratch"), scratch("profile_scratch")],
        checks=[check("s", "x.astype(np.float64).sum(1)", 1e-5, 1e-5)]),
}
_MM_AT_SIG = {"at_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", **{k: "i32" for k in (
    "M", "N", "K", "stride_ak", "stride_am", "stride_bk", "stride_bn", "stride_cm", "stride_cn")},
    **{k: "constexpr" for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")}}


def _mm_at(dtype, block_k, arch):
    """A given transposed, 16 x 16 tiles on one wave (16x16 MFMAs; both operands through LDS transposes)."""
    ptr, storage, encoding = _ELEM[dtype]
    return dict(
        grid=[-(-TM // 16), -(-TN // 16), 1], block=[64, 1, 1], num_warps=1, fn="matmul_at_kernel", arch=arch,
        signature=dict(_MM_AT_SIG, at_ptr=ptr, b_ptr=ptr), constexprs={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": block_k},
        args=[arr("AT", storage, [TK, TM], encoding=encoding), arr("B", storage, [TK, TN], encoding=encoding),
              out("C", "float32", [TM, TN]),
              scalar("M", "int32", TM), scalar("N", "int32", TN), scalar("K", "int32", TK),
              scalar("stride_ak", "int32", TM), scalar("stride_am", "int32", 1),
              scalar("stride_bk", "int32", TN), scalar("stride_bn", "int32", 1),
              scalar("stride_cm", "int32", TN), scalar("stride_cn", "int32", 1), scratch("global_scratch"),
              scratch("profile_scratch")],
        checks=[check("C", "AT.astype(np.float64).T @ B.astype(np.float64)", 1e-4, 1e-4)])


TRITON.update({
    "triton_gfx950_matmul_f16": _mm("float16", 32, "gfx950"),
    "triton_gfx950_matmul_at_f16": _mm_at("float16", 64, "gfx950"),
    "triton_gfx950_matmul_at_fp8": _mm_at("float8_e4m3", 128, "gfx950"),
    "triton_gfx950_matmul_bf16": _mm("bfloat16", 64, "gfx950"),
    "triton_gfx950_matmul_fp8": _mm("float8_e4m3", 64, "gfx950"),
    "triton_gfx950_row_sum": dict(TRITON["triton_row_sum"], arch="gfx950"),
})

# tl.dot_scaled (OCP MX): one 64 x 64 x 256 tile on 2 waves, Triton's scaled MFMAs (v_mfma_scale_*: 32x32x64, or
# 16x16x128 with matrix_instr_nonkdim 16; every byte of the scale VGPRs in use). Scales are random E8M0 codes around 127; e2m1 codes come two per byte
# along k, low nibble first, and the checks decode them with this table.
_E2M1 = "np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])"
_DS_SIG = {"a_ptr": "*u8", "a_scale_ptr": "*u8", "b_ptr": "*u8", "b_scale_ptr": "*u8", "c_ptr": "*fp32",
           **{k: "constexpr" for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "FORMAT_A", "FORMAT_B", "PACK_A", "PACK_B")}}


def _dot_scaled(format_a, format_b, bm=64, bn=64, bk=256, warps=2, nonk=32):
    def operand(name, fmt, shape, k_axis):
        if fmt in ("e4m3", "e5m2"):
            encoding = {"e4m3": "float8_e4m3", "e5m2": "float8_e5m2"}[fmt]
            return arr(name, "uint8", shape, lo=-4, hi=4, encoding=encoding), name
        packed = list(shape)
        packed[k_axis] //= 2
        lo, hi = f"{_E2M1}[{name} & 15]", f"{_E2M1}[{name} >> 4]"
        return (arr(name, "uint8", packed, init="randint", lo=0, hi=255),
                f"np.stack([{lo}, {hi}], {k_axis + 1}).reshape({shape[0]}, {shape[1]})")
    (a, a_val), (b, b_val) = operand("A", format_a, [bm, bk], 1), operand("B", format_b, [bk, bn], 0)
    scaled_a = f"({a_val} * np.repeat(2.0 ** (SA - 127.0), 32, 1))"
    scaled_b = f"({b_val} * np.repeat(2.0 ** (SB - 127.0), 32, 1).T)"
    return dict(
        grid=[1, 1, 1], block=[64 * warps, 1, 1], num_warps=warps, fn="dot_scaled_kernel", arch="gfx950", signature=_DS_SIG,
        options={"matrix_instr_nonkdim": nonk},
        # one wave: pointers 16-byte aligned (vector loads); Triton then upcasts with v_cvt_scalef32_pk_bf16_*
        attrs={(i,): [["tt.divisibility", 16]] for i in range(5)} if warps == 1 else None,
        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "FORMAT_A": format_a, "FORMAT_B": format_b,
                    "PACK_A": 2 if format_a == "e2m1" else 1, "PACK_B": 2 if format_b == "e2m1" else 1},
        args=[a, arr("SA", "uint8", [bm, bk // 32], init="randint", lo=118, hi=136), b,
              arr("SB", "uint8", [bn, bk // 32], init="randint", lo=118, hi=136), out("C", "float32", [bm, bn]),
              scratch("global_scratch"), scratch("profile_scratch")],
        # |C| reaches ~3e7 (scales up to 2^9 each); f32 sums of cancelling terms err by a few units there
        checks=[check("C", f"{scaled_a} @ {scaled_b}", 1e-5, 64.0)])


TRITON.update({
    "triton_gfx950_dot_scaled_mxfp8": _dot_scaled("e4m3", "e4m3"),
    "triton_gfx950_dot_scaled_mxfp4": _dot_scaled("e2m1", "e2m1"),
    "triton_gfx950_dot_scaled_mxfp8_mxfp4": _dot_scaled("e4m3", "e2m1"),
    "triton_gfx950_dot_scaled16_mxfp8": _dot_scaled("e4m3", "e4m3", nonk=16),       # v_mfma_scale_f32_16x16x128
    "triton_gfx950_dot_scaled16_mxfp4": _dot_scaled("e2m1", "e2m1", nonk=16),
    "triton_gfx950_dot_scaled16_mxfp8_mxfp4": _dot_scaled("e4m3", "e2m1", nonk=16),
    "triton_gfx950_dot_scaled_mxbf8": _dot_scaled("e5m2", "e5m2"),
    "triton_gfx950_dot_scaled16_mxbf8": _dot_scaled("e5m2", "e5m2", nonk=16),
    "triton_gfx950_dot_scaled_mxbf8_mxfp4": _dot_scaled("e5m2", "e2m1"),
    # on one wave Triton 3.9 upcasts to bf16 instead (v_cvt_scalef32_pk_bf16_fp8/fp4 + bf16 MFMAs)
    "triton_gfx950_dot_scaled_upcast_mxfp8": _dot_scaled("e4m3", "e4m3", warps=1),
    "triton_gfx950_dot_scaled_upcast_mxfp4": _dot_scaled("e2m1", "e2m1", warps=1),
    "triton_gfx950_dot_scaled_upcast_mxfp8_mxfp4": _dot_scaled("e4m3", "e2m1", warps=1),
})


def _arch(spec: dict) -> str:
    return spec.get("arch", "gfx942")


def triton_worker(name: str) -> None:
    """Runs inside the Python that has triton: compile one kernel, write its hsaco, print metadata."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.path.insert(0, str(SRC))
    import triton
    import triton_kernels
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    spec = TRITON[name]
    fn = getattr(triton_kernels, spec["fn"])
    k = triton.compile(ASTSource(fn, signature=spec["signature"], constexprs=spec["constexprs"],
                                 attrs=spec.get("attrs")),
                       target=GPUTarget("hip", _arch(spec), 64), options={"num_warps": spec["num_warps"], **spec.get("options", {})})
    co = OUT / f"{name}.hsaco"
    tmp = co.with_suffix(".tmp")
    tmp.write_bytes(k.asm["hsaco"])
    tmp.replace(co)
    print(json.dumps({"kernel": k.metadata.name, "shared": k.metadata.shared, "version": triton.__version__}))


def compile_triton(name: str, python: str) -> tuple[Path, str, dict]:
    proc = subprocess.run([python, str(Path(__file__).resolve()), "--triton-worker", name],
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"triton compile of {name} failed:\n{proc.stderr[-3000:]}")
    meta = json.loads(proc.stdout.strip().splitlines()[-1])
    spec = TRITON[name]
    how = (f"triton {meta['version']} ({spec['fn']} in tools/emulator_fixtures/triton_kernels.py, constexprs "
           f"{spec['constexprs']}, num_warps {spec['num_warps']}, options {spec.get('options', {})}"
           f"{', pointers tt.divisibility 16' if spec.get('attrs') else ''}, GPUTarget('hip', '{_arch(spec)}', 64)); "
           f"Triton's hsaco")
    return OUT / f"{name}.hsaco", how, meta


def write_json(name: str, co: Path, kernel: str, arch: str, how: str, spec: dict, lds_bytes=None) -> None:
    doc = {"name": name, "code_object": co.name, "kernel": kernel, "arch": arch, "compiled_by": how,
           "regenerate": f"python3 tools/make_emulator_fixtures.py --only {name}",
           "grid": spec["grid"], "block": spec["block"], "lds_bytes": lds_bytes,
           "args": spec["args"], "checks": spec["checks"]}
    path = OUT / f"{name}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", default=None, help="fixture names (default: all)")
    p.add_argument("--clang", default=os.environ.get("CLANG", "clang-22"))
    p.add_argument("--triton-python", default=sys.executable, help="a Python with triton==3.9.0 installed")
    p.add_argument("--triton-worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.triton_worker:
        triton_worker(args.triton_worker)
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    names = args.only or [*HIP, *TRITON]
    for name in names:
        if name in HIP:
            if shutil.which(args.clang) is None or not (BITCODE / "hip.bc").is_file():
                raise SystemExit(f"{name}: needs {args.clang} and Debian's HIP device libraries; "
                                 f"apt-get install clang-22 hipcc libamdhip64-dev rocm-device-libs")
            co, how = compile_hip(name, args.clang)
            write_json(name, co, name[len("hip_"):], "gfx90a", how, HIP[name])
        elif name in TRITON:
            co, how, meta = compile_triton(name, args.triton_python)
            # Triton's shared memory is dynamic: the launch passes metadata.shared bytes of LDS
            write_json(name, co, meta["kernel"], _arch(TRITON[name]), how, TRITON[name], lds_bytes=meta["shared"])
        else:
            raise SystemExit(f"unknown fixture {name}; known: {', '.join([*HIP, *TRITON])}")
        print(f"wrote {co.relative_to(ROOT)} ({co.stat().st_size} bytes) and {name}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
