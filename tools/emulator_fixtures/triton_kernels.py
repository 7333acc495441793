"""Triton kernels compiled for gfx942 and gfx950 by tools/make_emulator_fixtures.py (needs `pip install triton`).

Each kernel is written the way Triton's tutorials write them; the fixture script compiles them with
``triton.compile(ASTSource(...), target=GPUTarget("hip", arch, 64))`` and keeps Triton's hsaco.
"""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  PRECISION: tl.constexpr):
    """C = A @ B with masked edges; fp16 or fp32 inputs, fp32 accumulation (tl.dot -> MFMA)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    """Row-wise softmax, one program per row."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + cols, y, mask=cols < n_cols)


@triton.jit
def row_sum_kernel(out_ptr, in_ptr, in_stride, n_cols, BLOCK: tl.constexpr):
    """out[row] = sum of the row (a cross-wave reduction through LDS)."""
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc += tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def matmul_at_kernel(at_ptr, b_ptr, c_ptr, M, N, K, stride_ak, stride_am, stride_bk, stride_bn, stride_cm, stride_cn,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C = A @ B with A given transposed (K x M, M contiguous): both operands M/N-contiguous in LDS."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    at_ptrs = at_ptr + offs_k[:, None] * stride_ak + offs_m[None, :] * stride_am
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        at = tl.load(at_ptrs, mask=(offs_k[:, None] < k_left) & (offs_m[None, :] < M), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(tl.trans(at), b, acc)
        at_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def dot_scaled_kernel(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, FORMAT_A: tl.constexpr, FORMAT_B: tl.constexpr,
                      PACK_A: tl.constexpr, PACK_B: tl.constexpr):
    """C = (A * 2^(SA-127)) @ (B * 2^(SB-127)), one tile, microscaled operands (tl.dot_scaled -> scaled MFMA).

    A is BLOCK_M x BLOCK_K/PACK_A codes (PACK 2: two e2m1 per byte along k), B is BLOCK_K/PACK_B x BLOCK_N,
    SA is BLOCK_M x BLOCK_K/32 and SB BLOCK_N x BLOCK_K/32 E8M0 scales."""
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_s = tl.arange(0, BLOCK_K // 32)
    offs_ka = tl.arange(0, BLOCK_K // PACK_A)
    offs_kb = tl.arange(0, BLOCK_K // PACK_B)
    a = tl.load(a_ptr + offs_m[:, None] * (BLOCK_K // PACK_A) + offs_ka[None, :])
    b = tl.load(b_ptr + offs_kb[:, None] * BLOCK_N + offs_n[None, :])
    a_scale = tl.load(a_scale_ptr + offs_m[:, None] * (BLOCK_K // 32) + offs_s[None, :])
    b_scale = tl.load(b_scale_ptr + offs_n[:, None] * (BLOCK_K // 32) + offs_s[None, :])
    c = tl.dot_scaled(a, a_scale, FORMAT_A, b, b_scale, FORMAT_B)
    tl.store(c_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], c)
