// out[blockIdx.x] = sum of x over the block's 256-element slice: each wave reduces its 64 values
// with __shfl_down, wave sums meet in shared memory, wave 0 reduces them again.
#include <hip/hip_runtime.h>

__device__ float wave_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down(v, offset);
    return v;
}

extern "C" __global__ void block_reduce_shfl(const float* x, float* out, int n) {
    __shared__ float partial[16];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = wave_sum(v);
    int lane = threadIdx.x % warpSize, wave = threadIdx.x / warpSize;
    if (lane == 0)
        partial[wave] = v;
    __syncthreads();
    if (wave == 0) {
        v = lane < (int)(blockDim.x / warpSize) ? partial[lane] : 0.0f;
        v = wave_sum(v);
        if (lane == 0)
            out[blockIdx.x] = v;
    }
}
