// fp16 arithmetic on clang's _Float16 (the Debian HIP 5.2 hip_fp16.h does not compile with
// clang-22): packed half2 FMA, scalar half multiply/add/max, conversions to and from float.
#include <hip/hip_runtime.h>

typedef _Float16 half2_t __attribute__((ext_vector_type(2)));

extern "C" __global__ void half_math(const half2_t* x, const half2_t* y, half2_t* z,
                                     const _Float16* a, const _Float16* b, float* f, _Float16 alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        half2_t a2 = {alpha, alpha};
        z[i] = __builtin_elementwise_fma(a2, x[i], y[i]);          // packed fp16 FMA
        _Float16 p = a[i] * b[i];                                   // scalar fp16 multiply
        _Float16 q = p + __builtin_fmaxf16(a[i], b[i]);             // scalar fp16 add, max
        f[i] = (float)q + 0.25f * (float)a[i];                      // widen to fp32
    }
}
