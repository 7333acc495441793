// c = a + b with a grid-stride loop (the grid covers fewer elements than n).
#include <hip/hip_runtime.h>

extern "C" __global__ void vadd_grid_stride(const float* a, const float* b, float* c, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        c[i] = a[i] + b[i];
}
