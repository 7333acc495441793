"""tensile-asm: generate, verify, tune and ship GEMM kernels in AMDGPU assembly."""

__version__ = "0.1.0"
