// ---- prelude (HIP): the names the kernel body uses beyond C++
#include <hip/hip_runtime.h>

// work-item and work-group ids straight from the hardware registers (HIP 5.2's threadIdx calls the device
// library's __ockl_get_local_id, and Debian's device libraries stop at gfx940)
__device__ inline unsigned work_item_id() { return __builtin_amdgcn_workitem_id_x(); }
__device__ inline unsigned work_group_id_x() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ inline unsigned work_group_id_y() { return __builtin_amdgcn_workgroup_id_y(); }
__device__ inline unsigned work_group_id_z() { return __builtin_amdgcn_workgroup_id_z(); }
// the work-group barrier, LDS writes before it visible after it (HIP 5.2's __syncthreads calls the device
// library's __atomic_work_item_fence, likewise)
__device__ inline void barrier() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

typedef _Float16 half_t;
__device__ inline float multiply_add(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__device__ inline unsigned multiply_add(unsigned a, unsigned b, unsigned c) { return a * b + c; }  // int32, wrapping
// Int8x4: the four int8 products of two packs (byte q with byte q) added to c, modulo 2^32
__device__ inline unsigned dot4(unsigned a, unsigned b, unsigned c) {
    for (unsigned q = 0; q < 32; q += 8)
        c += (unsigned)((int)(signed char)(a >> q) * (int)(signed char)(b >> q));
    return c;
}
__device__ inline double multiply_add(double a, double b, double c) { return __builtin_fma(a, b, c); }
__device__ inline float half_to_float(half_t x) { return (float)x; }
__device__ inline half_t float_to_half(float x) { return (half_t)x; }
__device__ inline float half_from_bits(unsigned bits) { return (float)__builtin_bit_cast(_Float16, (unsigned short)bits); }
__device__ inline float bf16_to_float(unsigned short x) { return __uint_as_float((unsigned)x << 16); }
__device__ inline unsigned short float_to_bf16(float x) {   // round to nearest even
    const unsigned bits = __float_as_uint(x);
    return (unsigned short)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
