"""Runtimes that launch (or model) a GEMM code object through its kernel contract: the Runtime interface
and its backends (``runtime.base``; ``get_runtime("emulator")``)."""

from tensile_asm.runtime.base import (EMULATED, MEASURED, MODELLED, GemmRun, GemmSize, GemmTiming, Runtime,
                                      TimingProtocol, Validation, get_runtime)

__all__ = ["EMULATED", "MEASURED", "MODELLED", "GemmRun", "GemmSize", "GemmTiming", "Runtime", "TimingProtocol",
           "Validation", "get_runtime"]
