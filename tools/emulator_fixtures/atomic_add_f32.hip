// sums[j] += x[i] for every i with i % nsums == j, across all workgroups: each lane adds its element
// with a float atomicAdd, which clang compiles (without -munsafe-fp-atomics) to a load of the address
// and a global_atomic_cmpswap retry loop.
#include <hip/hip_runtime.h>

extern "C" __global__ void atomic_add_f32(const float* x, float* sums, int n, int nsums) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&sums[i % nsums], x[i]);
}
