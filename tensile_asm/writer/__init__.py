"""The KernelWriter: parameter-driven GEMM kernels as typed instruction streams.

Each module is one concern (arguments, work-group mapping, global read, LDS, MAC, loop, store) that
emits a Module from the solution's derived values, the architecture and a register allocator.
"""
