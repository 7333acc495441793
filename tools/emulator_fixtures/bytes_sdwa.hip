// 8-bit integer and fp16 arithmetic packed in 32-bit words, which LLVM compiles for gfx9 to SDWA
// (byte/word operand selection, sign extension, results written into a byte or word).
#include <hip/hip_runtime.h>

typedef unsigned char u8x4 __attribute__((ext_vector_type(4)));
typedef signed char i8x4 __attribute__((ext_vector_type(4)));
typedef _Float16 half2_t __attribute__((ext_vector_type(2)));

extern "C" __global__ void bytes_sdwa(const u8x4* a, const i8x4* b, int* dot, u8x4* pack,
                                      const half2_t* x, _Float16* hs, float* fs, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        u8x4 p = a[i];
        i8x4 s = b[i];
        dot[i] = s.x * (int)p.y + s.y * (int)p.x - s.z * s.w + (s.w >> 1);
        pack[i] = (u8x4){(unsigned char)(p.x | p.y), p.w, (unsigned char)(p.z ^ p.x), (unsigned char)s.y};
        half2_t h = x[i];
        hs[i] = h.y + h.x;
        fs[i] = (float)(h.y * (_Float16)3.0f);
    }
}
