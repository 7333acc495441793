// ---- prelude (CUDA, NVRTC): the names the kernel body uses beyond C++, mapped onto CUDA's. No header is
// included (NVRTC compiles without the CUDA include directory); fp16 conversions are single PTX instructions.
__device__ inline unsigned work_item_id() { return threadIdx.x; }
__device__ inline unsigned work_group_id_x() { return blockIdx.x; }
__device__ inline unsigned work_group_id_y() { return blockIdx.y; }
__device__ inline unsigned work_group_id_z() { return blockIdx.z; }
__device__ inline void barrier() { __syncthreads(); }

struct half_t {                 // an fp16 value as its bits
    unsigned short bits;
    __device__ half_t() = default;
    __device__ explicit half_t(int zero) : bits(0) { (void)zero; }
};
__device__ inline float half_to_float(half_t x) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
    return f;
}
__device__ inline half_t float_to_half(float f) {   // round to nearest even
    half_t x;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(x.bits) : "f"(f));
    return x;
}
__device__ inline float half_from_bits(unsigned bits) { half_t x; x.bits = (unsigned short)bits; return half_to_float(x); }
__device__ inline float multiply_add(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ inline unsigned multiply_add(unsigned a, unsigned b, unsigned c) { return a * b + c; }  // int32, wrapping
// Int8x4: the four int8 products of two packs (byte q with byte q) added to c, modulo 2^32
__device__ inline unsigned dot4(unsigned a, unsigned b, unsigned c) {
    for (unsigned q = 0; q < 32; q += 8)
        c += (unsigned)((int)(signed char)(a >> q) * (int)(signed char)(b >> q));
    return c;
}
__device__ inline double multiply_add(double a, double b, double c) { return __fma_rn(a, b, c); }
__device__ inline float bf16_to_float(unsigned short x) { return __uint_as_float((unsigned)x << 16); }
__device__ inline unsigned short float_to_bf16(float x) {   // round to nearest even
    const unsigned bits = __float_as_uint(x);
    return (unsigned short)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
