/* a4w4_gpu_mma.hip — MXFP4 GEMM y = A * W^T with the block dots from the matrix units, keeping
 * contracts §4.1 ordered(S) bit for bit (or, in atomic mode, the bounded(S) model).
 *
 * The same work split and operand addressing as the portable kernel (a4w4_gpu_gemm.hip):
 * grid x = (M tiles) x (N tiles) of the tile's tile_m x tile_n, grid z = split; a block walks
 * its output tile in SUB_M x 128 sub-tiles (SUB_M = 64 when tile_m % 64 == 0, else 32) and
 * its K range in chunks of 128 elements (4 scale blocks). A chunk's fp4 bytes are decoded to
 * int8 ("twice the E2M1 value") into shared memory, the scales into per-row and per-column
 * fp32 factors (a4w4_gpu_mma.h); the next chunk's bytes are loaded into registers while this
 * one computes.
 *
 * Per block (32 elements of K) each warp issues one matrix instruction per 16 x 8 (NVIDIA) or
 * 16 x 16 (AMD) unit of its warp tile, starting from an int32 zero: the result is that
 * block's exact integer dot for every output of the unit (|dot| <= 4608 < 2^31). Each output
 * then takes value = RNE_fp32(dot * 2^(sa+sb-256)) (a4w4m_block_value: one rounding) and
 * total = total + value in fp32 RNE from +0.0 on the vector units: blocks in ascending K, as
 * ordered(S) says. Warps: 8 (NVIDIA, 2 x 4, warp tile SUB_M/2 x 32) or 4 waves (AMD, 2 x 2,
 * warp tile SUB_M/2 x 64).
 *
 * Split z covers [z*k_per_split, min(K, (z+1)*k_per_split)) and its total is written as bf16
 * (one split), rounded to bf16 and added with a bf16 atomic (bounded contract only), or, for
 * deterministic split-K, added in split order into one fp32 accumulator (A4W4G_OUT_ACCUM: one
 * launch per split, +0 + split 0, then + split 1, ...; the portable kernel keeps S partials
 * instead). No test-only faults here: the GPU mutants are the portable kernel's. */
#include "a4w4_gpu.h"
#include "a4w4_gpu_device.h"
#include "a4w4_gpu_internal.h"
#include "a4w4_gpu_mma.h"

#define MKC 128              /* K elements per chunk */
#define MKB (MKC / 32)       /* scale blocks (= granules per row) per chunk */
#define MROWB (MKC + 16)     /* bytes per decoded shared row: 36 words, so 8 rows x 4
                                lanes hit 32 different banks */
#define MSUBN 128            /* sub-tile columns */

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__) || defined(__HIP__)
#define A4W4M_AMD 1
#define A4W4M_WAVE 64
#define A4W4M_UNIT_N 16
#define A4W4M_WARPS_N 2
#else
#define A4W4M_WAVE 32
#define A4W4M_UNIT_N 8
#define A4W4M_WARPS_N 4
#endif
#define A4W4M_WARPS (A4W4G_THREADS / A4W4M_WAVE)
#define A4W4M_WARPS_M (A4W4M_WARPS / A4W4M_WARPS_N) /* 2 on both */
#define A4W4M_WARP_N (MSUBN / A4W4M_WARPS_N)       /* 32 (NVIDIA) or 64 (AMD) */
#define A4W4M_NI (A4W4M_WARP_N / A4W4M_UNIT_N)     /* 4 units across */

/* The bf16 atomic of the portable kernel's atomic mode (the same read-modify-write). */
static __device__ void a4w4m_atomic_add_bf16(unsigned short *addr, float v)
{
    unsigned long long a = (unsigned long long)addr;
    unsigned *word = (unsigned *)(a & ~3ULL);
    const unsigned shift = (a & 2ULL) ? 16u : 0u;
    unsigned old = *word, assumed;
    do {
        assumed = old;
        float cur = a4w4d_bf16_to_f32((assumed >> shift) & 0xFFFFu);
        unsigned nb = a4w4d_f32_to_bf16(A4W4_FADD(cur, v));
        unsigned nw = (assumed & ~(0xFFFFu << shift)) | (nb << shift);
        old = atomicCAS(word, assumed, nw);
    } while (old != assumed);
}

/* ---- one unit: the exact int32 block dots of a 16 x UNIT_N output patch ------------------- */
#ifdef A4W4M_AMD
typedef int a4w4m_i32x4 __attribute__((ext_vector_type(4)));

/* sa/sb: the unit's first A row / W row in shared memory at this block's K offset. */
static __device__ __forceinline__ void a4w4m_unit(const unsigned char *sa,
                                                  const unsigned char *sb, int lane, int out[4])
{
    const int r = a4w4m_amd_ab_row(lane);
    a4w4m_i32x4 c = {0, 0, 0, 0};
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__)
    const long a = *(const long *)(sa + r * MROWB + a4w4m_amd_k8(lane));
    const long b = *(const long *)(sb + r * MROWB + a4w4m_amd_k8(lane));
    c = __builtin_amdgcn_mfma_i32_16x16x32_i8(a, b, c, 0, 0, 0);
#elif defined(__HIP_DEVICE_COMPILE__)
    for (int h = 0; h < 2; h++) {
        const int a = *(const int *)(sa + r * MROWB + a4w4m_amd_k4(lane, h));
        const int b = *(const int *)(sb + r * MROWB + a4w4m_amd_k4(lane, h));
        c = __builtin_amdgcn_mfma_i32_16x16x16i8(a, b, c, 0, 0, 0);
    }
#else
    (void)sa; (void)sb; (void)r; /* host pass: never executed */
#endif
    for (int i = 0; i < 4; i++)
        out[i] = c[i];
}
#else
static __device__ __forceinline__ void a4w4m_unit(const unsigned char *sa,
                                                  const unsigned char *sb, int lane, int out[4])
{
    unsigned a[4], b[2];
#pragma unroll
    for (int r = 0; r < 4; r++)
        a[r] = *(const unsigned *)(sa + a4w4m_nv_a_row(lane, r) * MROWB + a4w4m_nv_a_k(lane, r));
#pragma unroll
    for (int r = 0; r < 2; r++)
        b[r] = *(const unsigned *)(sb + a4w4m_nv_b_row(lane) * MROWB + a4w4m_nv_b_k(lane, r));
    int c0 = 0, c1 = 0, c2 = 0, c3 = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}
#endif

/* Output i of a unit held by `lane`: row and column inside the unit. */
static __device__ __forceinline__ int a4w4m_out_row(int lane, int i)
{
#ifdef A4W4M_AMD
    return a4w4m_amd_c_row(lane, i);
#else
    return a4w4m_nv_c_row(lane, i);
#endif
}

static __device__ __forceinline__ int a4w4m_out_col(int lane, int i)
{
#ifdef A4W4M_AMD
    (void)i;
    return a4w4m_amd_c_col(lane);
#else
    return a4w4m_nv_c_col(lane, i);
#endif
}

/* ---- the chunk pipeline --------------------------------------------------------------- */
template <int SUB_M>
struct a4w4m_smem {
    uint4 a[SUB_M * MROWB / 16];  /* decoded A rows (16-byte aligned rows) */
    uint4 w[MSUBN * MROWB / 16];  /* decoded W rows */
    float fa[MKB][SUB_M], fa2[MKB][SUB_M];
    float fb[MKB][MSUBN], fb2[MKB][MSUBN];
};

/* Raw bytes of one chunk, held in registers between the loads and the decode. */
template <int SUB_M>
struct a4w4m_stage {
    uint4 a[(SUB_M * MKB + A4W4G_THREADS - 1) / A4W4G_THREADS];
    uint4 w[MSUBN * MKB / A4W4G_THREADS];
    unsigned char sa[(SUB_M * MKB + A4W4G_THREADS - 1) / A4W4G_THREADS];
    unsigned char sb[MSUBN * MKB / A4W4G_THREADS];
};

/* Where the sub-tile is. */
typedef struct {
    long long sm0, sn0, m_end, n_end;
} a4w4m_where;

template <int SUB_M>
static __device__ __forceinline__ void a4w4m_load(const a4w4g_gemm_args &p, const a4w4m_where &at,
                                                 long long kc, int nblk, a4w4m_stage<SUB_M> &st)
{
    const int tid = threadIdx.x;
    const long long gb0 = kc / 32, Ks = p.K / 32;
    const uint4 *a4 = (const uint4 *)p.a_fp4;
    const uint4 *w4 = (const uint4 *)p.w_fp4;
    const uint4 zero = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < (int)(sizeof st.a / sizeof st.a[0]); i++) {
        const int item = tid + i * A4W4G_THREADS;
        const int row = item / MKB, g = item % MKB;
        const long long m = at.sm0 + row;
        const bool ok = item < SUB_M * MKB && g < nblk && m < at.m_end;
        st.a[i] = ok ? a4[a4w4d_granule_index(m, gb0 + g, p.K, 0)] : zero;
        st.sa[i] = ok ? p.a_scale[p.a_scale_shuffled ? a4w4d_swizzle_index(p.a_scale_cols, m, gb0 + g)
                                                     : m * Ks + gb0 + g]
                      : (unsigned char)0x7F;
    }
#pragma unroll
    for (int i = 0; i < (int)(sizeof st.w / sizeof st.w[0]); i++) {
        const int item = tid + i * A4W4G_THREADS;
        /* 16-row groups, n1 fastest (a preshuffled group's granules are contiguous) */
        const int n1 = item & 15, g = (item >> 4) % MKB, grp = (item >> 4) / MKB;
        const long long n = at.sn0 + grp * 16 + n1;
        const bool ok = g < nblk && n < at.n_end;
        st.w[i] = ok ? w4[a4w4d_granule_index(n, gb0 + g, p.K, p.w_preshuffled)] : zero;
        st.sb[i] = ok ? p.w_scale[p.w_scale_swizzled ? a4w4d_swizzle_index(Ks, n, gb0 + g)
                                                     : n * Ks + gb0 + g]
                      : (unsigned char)0x7F;
    }
}

template <int SUB_M>
static __device__ __forceinline__ void a4w4m_store(const a4w4m_stage<SUB_M> &st, a4w4m_smem<SUB_M> &sm)
{
    const int tid = threadIdx.x;
    unsigned words[8];
#pragma unroll
    for (int i = 0; i < (int)(sizeof st.a / sizeof st.a[0]); i++) {
        const int item = tid + i * A4W4G_THREADS;
        if (item >= SUB_M * MKB)
            break;
        const int row = item / MKB, g = item % MKB;
        a4w4d_decode_granule(st.a[i], words);
        uint4 *dst = (uint4 *)((unsigned char *)sm.a + row * MROWB + g * 32);
        dst[0] = make_uint4(words[0], words[1], words[2], words[3]);
        dst[1] = make_uint4(words[4], words[5], words[6], words[7]);
        a4w4m_row_factors(st.sa[i], &sm.fa[g][row], &sm.fa2[g][row]);
    }
#pragma unroll
    for (int i = 0; i < (int)(sizeof st.w / sizeof st.w[0]); i++) {
        const int item = tid + i * A4W4G_THREADS;
        const int n1 = item & 15, g = (item >> 4) % MKB, grp = (item >> 4) / MKB;
        const int row = grp * 16 + n1;
        a4w4d_decode_granule(st.w[i], words);
        uint4 *dst = (uint4 *)((unsigned char *)sm.w + row * MROWB + g * 32);
        dst[0] = make_uint4(words[0], words[1], words[2], words[3]);
        dst[1] = make_uint4(words[4], words[5], words[6], words[7]);
        a4w4m_col_factors(st.sb[i], &sm.fb[g][row], &sm.fb2[g][row]);
    }
}

/* The warp's units over the chunk's first nblk blocks, added into acc. The factors of the
 * lane's rows and columns are read once per block; a unit whose rows all have fa2 == 0 (no
 * scale >= 242, the common case) takes the one-order form without a per-output select. */
template <int SUB_M>
static __device__ __forceinline__ void a4w4m_compute(const a4w4m_smem<SUB_M> &sm, int nblk,
                                                    float (&acc)[SUB_M / A4W4M_WARPS_M / 16][A4W4M_NI][4])
{
    constexpr int MI = SUB_M / A4W4M_WARPS_M / 16;
    const int warp = threadIdx.x / A4W4M_WAVE, lane = threadIdx.x % A4W4M_WAVE;
    const int wr0 = (warp / A4W4M_WARPS_N) * (SUB_M / A4W4M_WARPS_M);
    const int wc0 = (warp % A4W4M_WARPS_N) * A4W4M_WARP_N;
    const unsigned char *sa = (const unsigned char *)sm.a;
    const unsigned char *sw = (const unsigned char *)sm.w;
    for (int b = 0; b < nblk; b++) {
        float fa[MI][4], fa2[MI][4];
        bool hi[MI];
#pragma unroll
        for (int mi = 0; mi < MI; mi++) {
            hi[mi] = false;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int r = wr0 + mi * 16 + a4w4m_out_row(lane, i);
                fa[mi][i] = sm.fa[b][r];
                fa2[mi][i] = sm.fa2[b][r];
                hi[mi] |= fa2[mi][i] != 0.0f; /* NaN too */
            }
        }
#pragma unroll
        for (int ni = 0; ni < A4W4M_NI; ni++) {
            const int c0 = wc0 + ni * A4W4M_UNIT_N;
            float fb[4], fb2[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                fb[i] = sm.fb[b][c0 + a4w4m_out_col(lane, i)];
                fb2[i] = sm.fb2[b][c0 + a4w4m_out_col(lane, i)];
            }
#pragma unroll
            for (int mi = 0; mi < MI; mi++) {
                int d[4];
                a4w4m_unit(sa + (wr0 + mi * 16) * MROWB + b * 32, sw + c0 * MROWB + b * 32,
                           lane, d);
                if (!hi[mi]) {
#pragma unroll
                    for (int i = 0; i < 4; i++)
                        acc[mi][ni][i] = A4W4_FADD(
                            acc[mi][ni][i], A4W4_FMUL(A4W4_FMUL((float)d[i], fa[mi][i]), fb[i]));
                } else {
#pragma unroll
                    for (int i = 0; i < 4; i++)
                        acc[mi][ni][i] = A4W4_FADD(
                            acc[mi][ni][i],
                            a4w4m_block_value(d[i], fa[mi][i], fa2[mi][i], fb[i], fb2[i]));
                }
            }
        }
    }
}

template <int SUB_M>
static __device__ __forceinline__ void a4w4m_write(const a4w4g_gemm_args &p, const a4w4m_where &at,
                                                  const float (&acc)[SUB_M / A4W4M_WARPS_M / 16][A4W4M_NI][4])
{
    constexpr int MI = SUB_M / A4W4M_WARPS_M / 16;
    const int warp = threadIdx.x / A4W4M_WAVE, lane = threadIdx.x % A4W4M_WAVE;
    const int wr0 = (warp / A4W4M_WARPS_N) * (SUB_M / A4W4M_WARPS_M);
    const int wc0 = (warp % A4W4M_WARPS_N) * A4W4M_WARP_N;
#pragma unroll
    for (int mi = 0; mi < MI; mi++)
#pragma unroll
        for (int ni = 0; ni < A4W4M_NI; ni++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const long long m = at.sm0 + wr0 + mi * 16 + a4w4m_out_row(lane, i);
                const long long n = at.sn0 + wc0 + ni * A4W4M_UNIT_N + a4w4m_out_col(lane, i);
                if (m >= at.m_end || n >= at.n_end)
                    continue;
                const float t = acc[mi][ni][i];
                if (p.out_mode == A4W4G_OUT_BF16)
                    p.y[m * p.N + n] = (unsigned short)a4w4d_f32_to_bf16(t);
                else if (p.out_mode == A4W4G_OUT_PARTIAL)
                    p.partial[((long long)blockIdx.z * p.M + m) * p.N + n] = t;
                else if (p.out_mode == A4W4G_OUT_ACCUM) /* split totals in split order */
                    p.partial[m * p.N + n] =
                        A4W4_FADD(p.split0 + blockIdx.z == 0 ? 0.0f : p.partial[m * p.N + n], t);
                else
                    a4w4m_atomic_add_bf16(&p.y[m * p.N + n],
                                          a4w4d_bf16_to_f32(a4w4d_f32_to_bf16(t)));
            }
}

template <int SUB_M>
__global__ void __launch_bounds__(A4W4G_THREADS, 2) a4w4g_mma_kernel(a4w4g_gemm_args p)
{
    constexpr int MI = SUB_M / A4W4M_WARPS_M / 16;
    __shared__ a4w4m_smem<SUB_M> sm;
    const long long ntiles = (p.N + p.tile_n - 1) / p.tile_n;
    const long long mt = blockIdx.x / ntiles, nt = blockIdx.x % ntiles;
    const long long tm0 = mt * p.tile_m, tn0 = nt * p.tile_n;
    a4w4m_where at;
    at.m_end = tm0 + p.tile_m < p.M ? tm0 + p.tile_m : p.M;
    at.n_end = tn0 + p.tile_n < p.N ? tn0 + p.tile_n : p.N;
    const long long k_begin = (long long)(p.split0 + blockIdx.z) * p.k_per_split;
    const long long k_end = k_begin + p.k_per_split < p.K ? k_begin + p.k_per_split : p.K;

    for (at.sm0 = tm0; at.sm0 < at.m_end; at.sm0 += SUB_M) {
        for (at.sn0 = tn0; at.sn0 < at.n_end; at.sn0 += MSUBN) {
            float acc[MI][A4W4M_NI][4];
#pragma unroll
            for (int mi = 0; mi < MI; mi++)
#pragma unroll
                for (int ni = 0; ni < A4W4M_NI; ni++)
#pragma unroll
                    for (int i = 0; i < 4; i++)
                        acc[mi][ni][i] = 0.0f; /* +0.0 */
            a4w4m_stage<SUB_M> st;
            int nblk = (int)((k_end - k_begin) / 32 < MKB ? (k_end - k_begin) / 32 : MKB);
            if (k_begin < k_end)
                a4w4m_load<SUB_M>(p, at, k_begin, nblk, st);
            for (long long kc = k_begin; kc < k_end; kc += MKC) {
                const int cur = nblk;
                __syncthreads(); /* the previous chunk's readers are done */
                a4w4m_store<SUB_M>(st, sm);
                __syncthreads();
                if (kc + MKC < k_end) { /* the next chunk's loads fly during this compute */
                    const long long left = (k_end - kc - MKC) / 32;
                    nblk = left < MKB ? (int)left : MKB;
                    a4w4m_load<SUB_M>(p, at, kc + MKC, nblk, st);
                }
                a4w4m_compute<SUB_M>(sm, cur, acc);
            }
            a4w4m_write<SUB_M>(p, at, acc);
        }
    }
}

hipError_t a4w4g_launch_gemm_mma(const a4w4g_gemm_args *args, hipStream_t stream)
{
    a4w4g_gemm_args p = *args;
    p.fault = A4W4_GPU_FAULT_NONE;
    const long long mtiles = (p.M + p.tile_m - 1) / p.tile_m;
    const long long ntiles = (p.N + p.tile_n - 1) / p.tile_n;
    if (p.tile_n % MSUBN != 0 || p.tile_m % 32 != 0)
        return hipErrorInvalidValue;
    dim3 grid((unsigned)(mtiles * ntiles), 1, (unsigned)p.splits);
    if (p.tile_m % 64 == 0)
        hipLaunchKernelGGL(a4w4g_mma_kernel<64>, grid, dim3(A4W4G_THREADS), 0, stream, p);
    else
        hipLaunchKernelGGL(a4w4g_mma_kernel<32>, grid, dim3(A4W4G_THREADS), 0, stream, p);
    return hipGetLastError();
}
