"""Runtimes that launch a GEMM code object: the CPU emulator now, hip-python on AMD GPUs later."""
