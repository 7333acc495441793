// total[blockIdx.x % 2] += the sum of the workgroup's slice of x: every wave reduces its 64 values with
// __shfl_down and lane 0 adds the wave's sum with a float atomicAdd at a wave-uniform address, whose
// initial load clang makes scalar (s_load_dword) before the global_atomic_cmpswap retry loop.
#include <hip/hip_runtime.h>

extern "C" __global__ void atomic_add_uniform(const float* x, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down(v, offset);
    if (threadIdx.x % warpSize == 0)
        atomicAdd(&total[blockIdx.x % 2], v);
}
