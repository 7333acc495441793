"""The launch contract of a kernel this writer wrote (for kernels written from a Geometry without a
solution: tests, benchmarks). From a solution or a library entry, use ``tensile_asm.gemm`` directly;
``tests/test_gemm_contract.py`` checks that both ways agree.
"""

from __future__ import annotations

from tensile_asm.gemm.contract import MULTIPLE_BUFFER, SINGLE_BUFFER, GemmKernelContract


def kernel_contract(kernel) -> GemmKernelContract:
    g = kernel.geometry
    return GemmKernelContract(
        name=kernel.name, transpose_a=g.transpose_a, transpose_b=g.transpose_b, batched=g.batched,
        use_beta=g.use_beta, data_type=g.data_type, compute_type=g.compute_type,
        # a SingleBuffer workspace kernel's own C/D (its geometry's are the workspace's)
        dest_type=g.workspace_for.dest_type.char if g.workspace_for is not None else g.dest_type,
        global_accumulation=g.workspace_for is not None,
        macro_tile=(g.mt0, g.mt1), threads=g.num_threads, global_split_u=g.global_split_u,
        global_split_u_algorithm=MULTIPLE_BUFFER if g.writes_workspace else SINGLE_BUFFER,
        workgroup_mapping=g.workgroup_mapping, lds_bytes=kernel.resources.lds_bytes, stagger_u=g.stagger_u,
        depth_u=g.depth_u, stagger_stride_shift=g.stagger_stride_shift, pointer_array=g.pointer_array,
        preload_kernargs=g.preload_kernargs)
