// What NVRTC defines before a kernel (CUDA's attributes, built-in variables and the intrinsics the CUDA
// prelude uses), for compiling the CUDA rendering with clang where no CUDA toolkit is installed
// (tests/test_cuda_backend.py). Declarations only: the test checks the rendering compiles to PTX.
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __launch_bounds__(n) __attribute__((launch_bounds(n)))
#include "__clang_cuda_builtin_vars.h"
__device__ void __syncthreads();
__device__ float __fmaf_rn(float, float, float);
__device__ double __fma_rn(double, double, double);
__device__ float __uint_as_float(unsigned);
__device__ unsigned __float_as_uint(float);
__device__ float atomicAdd(float*, float);
__device__ int atomicAdd(int*, int);
