// mx[0] = max(mx[0], every x[i]): each lane takes part with a float atomicMax, which HIP implements as a
// relaxed atomic load and an atomicCAS loop (global_load + global_atomic_cmpswap).
#include <hip/hip_runtime.h>

extern "C" __global__ void atomic_max_f32(const float* x, float* mx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicMax(mx, x[i]);
}
