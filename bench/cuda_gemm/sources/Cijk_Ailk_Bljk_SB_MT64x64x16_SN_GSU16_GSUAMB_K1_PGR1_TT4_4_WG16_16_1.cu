// Cijk_Ailk_Bljk_SB_MT64x64x16_SN_GSU16_GSUAMB_K1_PGR1_TT4_4_WG16_16_1
// A KernelLanguage: Source GEMM kernel written by tensile-asm from the solution's derived values.
// D[b, m, n] = alpha * sum_l A[m, l] * B[l, n] + beta * C[m, n]
// A is not transposed (Ailk): A[m + l*StridesA0];
// B is not transposed (Bljk): B[l + n*StridesB0].
// Types: A/B S, C/D S, compute S, accumulated in float.
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


namespace {

// ---- the solution
constexpr unsigned MT0 = 64, MT1 = 64;          // macro tile
constexpr unsigned SG0 = 16, SG1 = 16;          // threads per dimension (WorkGroup0, WorkGroup1)
constexpr unsigned LSU = 1;                    // LocalSplitU: thread groups splitting each DepthU
constexpr unsigned TT0 = 4, TT1 = 4;          // ThreadTile
constexpr unsigned VW = 4;                      // VectorWidth: contiguous C elements per thread
constexpr unsigned DEPTH_U = 16;                      // K elements per unrolled iteration
constexpr unsigned LOOP_UNROLL = DEPTH_U / LSU;                    // ... of which each LSU group takes
constexpr unsigned GRVW_A = 4, GRVW_B = 4;  // elements per global read
constexpr unsigned PAD_A = 0, PAD_B = 0;  // LdsPad: elements after each LDS row
constexpr unsigned GSU = 16;                   // GlobalSplitU
constexpr unsigned WGM = 8;                // WorkGroupMapping
constexpr unsigned STAGGER_STRIDE_SHIFT = 0;
constexpr unsigned THREADS = SG0 * SG1 * LSU;

// ---- LDS: A's tile [DEPTH_U][MT0 + PAD_A], then B's [DEPTH_U][MT1 + PAD_B] (Lds: 4 or 8 bytes); the
// LocalSplitU reduction reuses it for (LSU - 1) partial macro tiles
constexpr unsigned LDS_A = DEPTH_U * (MT0 + PAD_A), LDS_B = DEPTH_U * (MT1 + PAD_B);
constexpr unsigned LDS_REDUCE = (LSU - 1) * MT0 * MT1;
constexpr unsigned LDS_ELEMENTS = LDS_A + LDS_B > LDS_REDUCE ? LDS_A + LDS_B : LDS_REDUCE;

// ---- global reads: each thread reads GRVW consecutive elements along the contiguous dimension
constexpr unsigned A_COALESCED = MT0, A_PERPENDICULAR = DEPTH_U;
constexpr unsigned B_COALESCED = DEPTH_U, B_PERPENDICULAR = MT1;
constexpr unsigned A_VECTORS = (A_COALESCED + GRVW_A - 1) / GRVW_A * A_PERPENDICULAR;
constexpr unsigned B_VECTORS = (B_COALESCED + GRVW_B - 1) / GRVW_B * B_PERPENDICULAR;
constexpr unsigned A_READS = (A_VECTORS + THREADS - 1) / THREADS;  // per thread
constexpr unsigned B_READS = (B_VECTORS + THREADS - 1) / THREADS;

typedef float TypeAB;     // A and B in memory
typedef float TypeCD;     // C and D in memory
typedef float Acc;      // accumulator and alpha/beta arithmetic
typedef float Lds;      // an LDS element

__device__ inline Lds widen(TypeAB x) { return x; }
__device__ inline Lds widen_a(TypeAB x) { return widen(x); }
__device__ inline Lds widen_b(TypeAB x) { return widen(x); }
// value + beta * c (for complex types in Tensile's order: beta's real part first, each part skipped when 0)
__device__ inline Acc add_beta_c(Acc value, Acc beta, Acc c) { return value + beta * c; }
__device__ inline Acc widen_c(TypeCD x) { return x; }
__device__ inline TypeCD narrow(Acc x) { return x; }

// Row of C (within the macro tile) of this thread's micro-tile element i: VectorWidth elements in a row,
// then the next SG0 * VW block (Tensile's thread tile layout); likewise columns.
__device__ inline unsigned tile_row(unsigned tid0, unsigned i) { return (i / VW) * SG0 * VW + tid0 * VW + i % VW; }
__device__ inline unsigned tile_col(unsigned tid1, unsigned j) { return (j / VW) * SG1 * VW + tid1 * VW + j % VW; }

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS) Cijk_Ailk_Bljk_SB_MT64x64x16_SN_GSU16_GSUAMB_K1_PGR1_TT4_4_WG16_16_1(
    unsigned long long Tensor2dSizeA,
    unsigned long long Tensor2dSizeB,
    Acc* __restrict__ AddressD,
    const TypeCD* __restrict__ AddressC,
    const TypeAB* __restrict__ AddressA,
    const TypeAB* __restrict__ AddressB,
    float Alpha,
    float Beta,
    unsigned StridesD0,
    unsigned StridesD1,
    unsigned StridesC0,
    unsigned StridesC1,
    unsigned StridesA0,
    unsigned StridesA1,
    unsigned StridesB0,
    unsigned StridesB1,
    unsigned SizesFree0,
    unsigned SizesFree1,
    unsigned SizesFree2,
    unsigned SizesSum0,
    unsigned NumWorkGroups0,
    unsigned NumWorkGroups1,
    unsigned NumFullBlocks,
    unsigned WgmRemainder1,
    unsigned MagicNumberWgmRemainder1)
{
    __shared__ Lds lds[LDS_ELEMENTS];
    Lds* const ldsA = lds;
    Lds* const ldsB = lds + LDS_A;

    const unsigned tid = work_item_id();
    const unsigned lsu = tid / (SG0 * SG1);                 // which LocalSplitU group
    const unsigned tid0 = tid % SG0, tid1 = tid / SG0 % SG1;
    const unsigned M = SizesFree0, N = SizesFree1;
    const unsigned batch = work_group_id_z();
    const Acc alpha = Alpha;
    const Acc beta = Beta;
    const unsigned K = alpha == Acc(0) ? 0 : SizesSum0;     // alpha 0: A*B is not computed (A and B not read)

    // ---- which macro tile: GlobalSplitU slices dimension 1 of the grid, then WorkGroupMapping regroups
    unsigned wg0 = work_group_id_x(), wg1 = work_group_id_y();
    const unsigned slice = wg1 % GSU;                       // this work-group's share of the summation
    wg1 /= GSU;
    {   // WorkGroupMapping: blocks of WGM tile rows (fewer in the last block) walked column by column
        const unsigned block = wg1 / WGM;
        const unsigned rows = block < NumFullBlocks ? WGM : WgmRemainder1;
        const unsigned serial = wg0 + (wg1 - block * WGM) * NumWorkGroups0;
        const unsigned q = rows == WGM ? serial / WGM
                                       : (unsigned)(((unsigned long long)serial * MagicNumberWgmRemainder1) >> 31);
        wg0 = q;
        wg1 = block * WGM + (serial - q * rows);
    }

    // ---- this slice's DepthU chunks of K (the last chunk may be partial)
    const unsigned chunks = (K + DEPTH_U - 1) / DEPTH_U;
    const unsigned per_slice = chunks / GSU, extra = chunks % GSU;
    const unsigned first = slice * per_slice + (slice < extra ? slice : extra);
    const unsigned count = per_slice + (slice < extra ? 1 : 0);
    const unsigned full = count - (count > 0 && first + count == chunks && K % DEPTH_U != 0 ? 1 : 0);
    const unsigned stagger = 0;
    const TypeAB* const a = AddressA + (unsigned long long)batch * StridesA1;
    const TypeAB* const b = AddressB + (unsigned long long)batch * StridesB1;
    const unsigned row0 = wg0 * MT0, col0 = wg1 * MT1;

    TypeAB nextA[A_READS][GRVW_A], nextB[B_READS][GRVW_B];   // the global reads of one chunk
    // read chunk c of A and B into registers; elements outside the matrices are zero
    auto global_read = [&](unsigned c) {
        const unsigned l0 = (first + (c < full ? (c + stagger) % full : c)) * DEPTH_U;
        for (unsigned r = 0; r < A_READS; ++r) {
            const unsigned v = tid + r * THREADS;
            const unsigned coal = v % ((A_COALESCED + GRVW_A - 1) / GRVW_A) * GRVW_A;
            const unsigned perp = v / ((A_COALESCED + GRVW_A - 1) / GRVW_A);
            for (unsigned e = 0; e < GRVW_A; ++e) {
                const unsigned m = row0 + coal + e, l = l0 + perp;
                const bool in = v < A_VECTORS && coal + e < A_COALESCED && l < K && m < M;
                nextA[r][e] = in ? a[m + (unsigned long long)l * StridesA0] : TypeAB(0);
            }
        }
        for (unsigned r = 0; r < B_READS; ++r) {
            const unsigned v = tid + r * THREADS;
            const unsigned coal = v % ((B_COALESCED + GRVW_B - 1) / GRVW_B) * GRVW_B;
            const unsigned perp = v / ((B_COALESCED + GRVW_B - 1) / GRVW_B);
            for (unsigned e = 0; e < GRVW_B; ++e) {
                const unsigned l = l0 + coal + e, n = col0 + perp;
                const bool in = v < B_VECTORS && coal + e < B_COALESCED && l < K && n < N;
                nextB[r][e] = in ? b[l + (unsigned long long)n * StridesB0] : TypeAB(0);
            }
        }
    };
    // write the registers read by global_read into LDS, widened to the accumulator type
    auto local_write = [&]() {
        for (unsigned r = 0; r < A_READS; ++r) {
            const unsigned v = tid + r * THREADS;
            const unsigned coal = v % ((A_COALESCED + GRVW_A - 1) / GRVW_A) * GRVW_A;
            const unsigned perp = v / ((A_COALESCED + GRVW_A - 1) / GRVW_A);
            for (unsigned e = 0; e < GRVW_A; ++e)
                if (v < A_VECTORS && coal + e < A_COALESCED)
                    ldsA[perp * (MT0 + PAD_A) + coal + e] = widen_a(nextA[r][e]);
        }
        for (unsigned r = 0; r < B_READS; ++r) {
            const unsigned v = tid + r * THREADS;
            const unsigned coal = v % ((B_COALESCED + GRVW_B - 1) / GRVW_B) * GRVW_B;
            const unsigned perp = v / ((B_COALESCED + GRVW_B - 1) / GRVW_B);
            for (unsigned e = 0; e < GRVW_B; ++e)
                if (v < B_VECTORS && coal + e < B_COALESCED)
                    ldsB[(coal + e) * (MT1 + PAD_B) + perp] = widen_b(nextB[r][e]);
        }
    };

    // ---- the summation: one DepthU chunk at a time through LDS; this LSU group takes LOOP_UNROLL of it
    Acc acc[TT0][TT1];
    for (unsigned i = 0; i < TT0; ++i)
        for (unsigned j = 0; j < TT1; ++j)
            acc[i][j] = Acc(0);
    // PrefetchGlobalRead: the next chunk's global reads are in flight while this one is multiplied
    if (count > 0)
        global_read(0);
    for (unsigned c = 0; c < count; ++c) {
        local_write();
        barrier();
        if (c + 1 < count)
            global_read(c + 1);
        for (unsigned u = 0; u < LOOP_UNROLL; ++u) {
            const unsigned l = lsu * LOOP_UNROLL + u;
            Lds ra[TT0], rb[TT1];
            for (unsigned i = 0; i < TT0; ++i)
                ra[i] = ldsA[l * (MT0 + PAD_A) + tile_row(tid0, i)];
            for (unsigned j = 0; j < TT1; ++j)
                rb[j] = ldsB[l * (MT1 + PAD_B) + tile_col(tid1, j)];
            for (unsigned i = 0; i < TT0; ++i)
                for (unsigned j = 0; j < TT1; ++j)
                    acc[i][j] = multiply_add(ra[i], rb[j], acc[i][j]);
        }
        barrier();
    }

    // ---- store the thread tile, inside M x N only
    for (unsigned i = 0; i < TT0; ++i)
        for (unsigned j = 0; j < TT1; ++j) {
            const unsigned m = row0 + tile_row(tid0, i), n = col0 + tile_col(tid1, j);
            if (m >= M || n >= N)
                continue;
            const unsigned long long d = m + (unsigned long long)n * StridesD0;
            // GlobalSplitU MultipleBuffer: AddressD is the workspace; slice s owns its M x N x batch part,
            // which the post-GSU kernel sums (and scales by alpha, adds beta*C)
            AddressD[(unsigned long long)slice * M * N * SizesFree2 + d + (unsigned long long)batch * StridesD1] = acc[i][j];
        }
}
// Cijk_S_PostGSU16: D = alpha * (the sum of the GlobalSplitU partial tiles in the workspace) + beta * C (C is not read where beta is 0)
extern "C" __global__ void __launch_bounds__(256) Cijk_S_PostGSU16(
    float* __restrict__ AddressD,
    const float* __restrict__ AddressC,
    const float* __restrict__ AddressWS,
    unsigned StridesD0,
    unsigned StridesD1,
    unsigned StridesC0,
    unsigned StridesC1,
    unsigned SizesFree0,
    unsigned SizesFree1,
    unsigned SizesFree2,
    float Alpha,
    float Beta)
{
    typedef float TypeCD;     // block-scope names: the GEMM kernel before this one has its own
    typedef float Acc;
    auto widen_c = [](TypeCD x) -> Acc { return x; };
    auto narrow = [](Acc x) -> TypeCD { return x; };
    const unsigned tid = work_item_id();
    const unsigned row = work_group_id_x() * 64 + tid % 64;
    const unsigned col = work_group_id_y() * 4 + tid / 64;
    const unsigned batch = work_group_id_z();
    if (row >= SizesFree0 || col >= SizesFree1)
        return;
    const Acc beta = Beta;
    TypeCD* const d = AddressD + (unsigned long long)batch * StridesD1;
    const TypeCD* const c = AddressC + (unsigned long long)batch * StridesC1;
    const unsigned long long at_d = row + (unsigned long long)col * StridesD0;
    const unsigned long long at_c = row + (unsigned long long)col * StridesC0;
    // slice s of the workspace: a packed M x N x batch tile of the accumulator type
    const unsigned long long slice = (unsigned long long)SizesFree0 * SizesFree1 * SizesFree2;
    const unsigned long long at_ws = row + (unsigned long long)col * SizesFree0
                                     + (unsigned long long)batch * SizesFree0 * SizesFree1;
    Acc total = AddressWS[at_ws];
    for (unsigned s = 1; s < 16; ++s)
        total = total + AddressWS[at_ws + s * slice];
    total = total * (Alpha);
    if (beta != Acc(0))
        total = multiply_add(beta, widen_c(c[at_c]), total);
    d[at_d] = narrow(total);
}
