// DPP lane shuffles (__builtin_amdgcn_update_dpp): an inclusive prefix sum over each wave of 64
// (row_shr within rows of 16, then row_bcast:15 and row_bcast:31 across rows), plus a quad_perm
// reversal and a row_mirror of the input.
#include <hip/hip_runtime.h>

#define dpp(old, v, ctrl, row_mask)                                                              \
    __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(__builtin_bit_cast(int, (float)(old)),  \
                              __builtin_bit_cast(int, (float)(v)), ctrl, row_mask, 0xf, false))

extern "C" __global__ void wave_scan_dpp(const float* x, float* scan, float* quad_rev, float* mirror) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    float s = v;
    s += dpp(0.0f, s, 0x111, 0xf);     // row_shr:1
    s += dpp(0.0f, s, 0x112, 0xf);     // row_shr:2
    s += dpp(0.0f, s, 0x114, 0xf);     // row_shr:4
    s += dpp(0.0f, s, 0x118, 0xf);     // row_shr:8
    s += dpp(0.0f, s, 0x142, 0xa);     // row_bcast:15 into rows 1 and 3
    s += dpp(0.0f, s, 0x143, 0xc);     // row_bcast:31 into rows 2 and 3
    scan[i] = s;
    quad_rev[i] = dpp(v, v, 0x1b, 0xf);  // quad_perm:[3,2,1,0]
    mirror[i] = dpp(v, v, 0x140, 0xf);   // row_mirror
}
