/* a4w4_gpu_gemm.hip — MXFP4 GEMM y = A * W^T keeping contracts §4.1 ordered(S).
 *
 * One kernel serves the ASM layout (w_fp4 preshuffled §3.1, w_scale swizzled §3.2, a_scale
 * shuffled §3.3) and the row-major fallback; only the operand addressing differs.
 *
 * Work split: grid x = (M tiles) * (N tiles) of tile_m x tile_n (the AITER kernel's output
 * tile), grid z = split. A block owns its output tile and walks it in 64 x 64 sub-tiles; for
 * each sub-tile it walks its K range in chunks of 256 elements (8 scale blocks): the chunk's
 * fp4 bytes of 64 A rows and 64 W rows are decoded to int8 ("twice the E2M1 value") in shared
 * memory with their scales, and each thread keeps a 4 x 4 patch of fp32 totals.
 *
 * Per output (contracts §4.1 ordered): for each 32-block in ascending K, d = exact integer dot of
 * the 32 int8 pairs (|d| <= 32*144); value = RNE_fp32(d * 2^(sa+sb-256)) rounded once
 * (a4w4d_block_value); total = total + value in fp32 RNE starting from +0.0 (A4W4_FADD, no
 * FMA). Split z covers [z*k_per_split, min(K, (z+1)*k_per_split)) the same way; its total is
 * either written as bf16 (one split), stored as fp32 for the in-order reduction, or rounded to
 * bf16 and added with a bf16 atomic (bounded contract only).
 *
 * A 16-byte granule = 32 elements = one scale block. Addresses of granule gb of row r:
 *   row-major:      base + r*(K/2) + gb*16
 *   preshuffled:    ((r/16)*(K/32) + gb)*16 + r%16, in granules (contracts §3.1)
 * Rows >= M of A and rows >= N of W are never read; fp4 pointers are 16-byte aligned.
 *
 * Test-only faults (a4w4_gpu_set_fault, a4w4_gpu.h): the launcher passes the fault in force in
 * the kernel arguments and launches a4w4g_gemm_kernel<true> only when it is not NONE; the
 * fault-free instantiation <false> compiles every fault branch away. GEMM faults: E8M0_CODE0,
 * DROP_KBLOCK, DROP_KCHUNK, ROWS_SMALL_N, READ_PAST_A, PAD_FF, PAD_00 (kernel);
 * TAIL_UNWRITTEN (launch grid); SPLITK_BF16 (split reduce). */
#include "a4w4_gpu.h"
#include "a4w4_gpu_device.h"
#include "a4w4_gpu_internal.h"

#define SUB 64           /* sub-tile rows and columns */
#define KC 256           /* K elements per chunk */
#define KG (KC / 32)     /* granules (= scale blocks) per chunk row */
#define ROWW (KC / 4 + 4) /* 32-bit words per decoded smem row (+4: bank spread) */

/* bf16 atomic add: fp32 add of the current bf16 value and v, RNE to bf16, compare-and-swap on
 * the aligned 32-bit word holding the element (its neighbour in the word is another output
 * of the same row: N is even on this path). */
static __device__ void a4w4d_atomic_add_bf16(unsigned short *addr, float v)
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

template <bool FAULTS>
__global__ void __launch_bounds__(A4W4G_THREADS) a4w4g_gemm_kernel(a4w4g_gemm_args p)
{
    const int fault = FAULTS ? p.fault : A4W4_GPU_FAULT_NONE;
    /* ROWS_SMALL_N: the small-N configuration takes the activation row stride from a field
     * only the large-N path sets: every row reads activation row 0 */
    const bool rows0 = FAULTS && fault == A4W4_GPU_FAULT_ROWS_SMALL_N && p.N <= 128 &&
                       p.M >= 2 && p.M <= 64;
    /* PAD_FF / PAD_00: 32-row group tests over the shuffled scale, pad rows included */
    const bool group_test = FAULTS && p.a_scale_shuffled &&
                            (fault == A4W4_GPU_FAULT_PAD_FF || fault == A4W4_GPU_FAULT_PAD_00);
    const long long prow = (p.M + 255) / 256 * 256; /* rows of the shuffled activation scale */
    __shared__ uint4 sA4[SUB * ROWW / 4]; /* uint4: 16-byte aligned rows for vector reads */
    __shared__ uint4 sB4[SUB * ROWW / 4];
    unsigned *sA = (unsigned *)sA4;
    unsigned *sB = (unsigned *)sB4;
    __shared__ unsigned char sSA[SUB * KG];
    __shared__ unsigned char sSB[SUB * KG];

    const int tid = threadIdx.x;
    const int ty = tid / 16, tx = tid % 16;
    const long long ntiles = (p.N + p.tile_n - 1) / p.tile_n;
    const long long mt = blockIdx.x / ntiles, nt = blockIdx.x % ntiles;
    const long long tm0 = mt * p.tile_m, tn0 = nt * p.tile_n;
    const long long m_end = tm0 + p.tile_m < p.M ? tm0 + p.tile_m : p.M;
    const long long n_end = tn0 + p.tile_n < p.N ? tn0 + p.tile_n : p.N;
    const long long k_begin = (long long)blockIdx.z * p.k_per_split;
    const long long k_end = k_begin + p.k_per_split < p.K ? k_begin + p.k_per_split : p.K;
    long long k_stop = k_end;
    if (FAULTS && fault == A4W4_GPU_FAULT_DROP_KCHUNK && k_end - k_begin > KC)
        k_stop = k_begin + (k_end - k_begin - 1) / KC * KC; /* the last chunk never runs */
    /* READ_PAST_A: scales loaded for the whole 2-row micro-tile, unclamped (row M when M is
     * odd); without the fault only rows < m_end */
    const long long Ks = p.K / 32;
    const uint4 *a4 = (const uint4 *)p.a_fp4;
    const uint4 *w4 = (const uint4 *)p.w_fp4;

    for (long long sm0 = tm0; sm0 < m_end; sm0 += SUB) {
        for (long long sn0 = tn0; sn0 < n_end; sn0 += SUB) {
            float acc[4][4];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] = 0.0f; /* +0.0 */

            for (long long kc = k_begin; kc < k_stop; kc += KC) {
                const long long left = (k_end - kc) / 32;
                int nblk = left < KG ? (int)left : KG;
                if (FAULTS && fault == A4W4_GPU_FAULT_DROP_KBLOCK && nblk < KG)
                    nblk--; /* the tail loop's bound off by one: K % 256 != 0 only */
                const long long gb0 = kc / 32;
                __syncthreads(); /* previous chunk's readers are done */

                /* A: 64 rows x KG granules, granule fastest (rows are contiguous). */
                for (int item = tid; item < SUB * KG; item += A4W4G_THREADS) {
                    const int row = item / KG, g = item % KG;
                    const long long m = sm0 + row;
                    unsigned *dst = &sA[row * ROWW + g * 8];
                    if (g < nblk && m < m_end) {
                        a4w4d_decode_granule(
                            a4[a4w4d_granule_index(rows0 ? 0 : m, gb0 + g, p.K, 0)], dst);
                    } else {
#pragma unroll
                        for (int i = 0; i < 8; i++)
                            dst[i] = 0;
                    }
                }
                /* W: 4 groups of 16 rows x KG granules, n1 fastest (preshuffled runs). */
                for (int item = tid; item < SUB * KG; item += A4W4G_THREADS) {
                    const int n1 = item & 15, g = (item >> 4) % KG, grp = (item >> 4) / KG;
                    const int row = grp * 16 + n1;
                    const long long n = sn0 + row;
                    unsigned *dst = &sB[row * ROWW + g * 8];
                    if (g < nblk && n < n_end) {
                        a4w4d_decode_granule(
                            w4[a4w4d_granule_index(n, gb0 + g, p.K, p.w_preshuffled)], dst);
                    } else {
#pragma unroll
                        for (int i = 0; i < 8; i++)
                            dst[i] = 0;
                    }
                }
                /* Scales: 64 rows x KG blocks each side. */
                for (int item = tid; item < SUB * KG; item += A4W4G_THREADS) {
                    const int row = item / KG, b = item % KG;
                    const long long m = sm0 + row, n = sn0 + row, blk = gb0 + b;
                    unsigned char sa = 0, sb = 0;
                    bool load_a = m < m_end;
                    if (FAULTS && fault == A4W4_GPU_FAULT_READ_PAST_A)
                        load_a = m < ((m_end + 1) & ~1LL); /* the fault: row M when M is odd */
                    if (group_test)
                        load_a = load_a || (m >= p.M && m < prow); /* the pad rows too */
                    const long long am = rows0 ? 0 : m;
                    if (b < nblk && load_a)
                        sa = p.a_scale[p.a_scale_shuffled
                                           ? a4w4d_swizzle_index(p.a_scale_cols, am, blk)
                                           : am * Ks + blk];
                    if (b < nblk && n < n_end)
                        sb = p.w_scale[p.w_scale_swizzled ? a4w4d_swizzle_index(Ks, n, blk)
                                                          : n * Ks + blk];
                    if (FAULTS && fault == A4W4_GPU_FAULT_E8M0_CODE0) {
                        /* the decode never makes a subnormal: code 0 read as code 1 */
                        sa = sa ? sa : (unsigned char)1;
                        sb = sb ? sb : (unsigned char)1;
                    }
                    sSA[item] = sa;
                    sSB[item] = sb;
                }
                __syncthreads();

                for (int b = 0; b < nblk; b++) {
                    unsigned av[4][8], bv[4][8];
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const uint4 *pa = (const uint4 *)&sA[(ty + 16 * i) * ROWW + b * 8];
                        const uint4 *pb = (const uint4 *)&sB[(tx + 16 * i) * ROWW + b * 8];
                        uint4 x0 = pa[0], x1 = pa[1], y0 = pb[0], y1 = pb[1];
                        av[i][0] = x0.x; av[i][1] = x0.y; av[i][2] = x0.z; av[i][3] = x0.w;
                        av[i][4] = x1.x; av[i][5] = x1.y; av[i][6] = x1.z; av[i][7] = x1.w;
                        bv[i][0] = y0.x; bv[i][1] = y0.y; bv[i][2] = y0.z; bv[i][3] = y0.w;
                        bv[i][4] = y1.x; bv[i][5] = y1.y; bv[i][6] = y1.z; bv[i][7] = y1.w;
                    }
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const int r = ty + 16 * i;
                        unsigned sa = sSA[r * KG + b];
                        bool skip = false;
                        if (FAULTS && fault == A4W4_GPU_FAULT_READ_PAST_A &&
                            sSA[(r ^ 1) * KG + b] == 0xFFu)
                            sa = 0xFFu; /* the micro-tile's NaN flag */
                        if (group_test) {
                            unsigned mx = 0, mn = 0xFFu;
                            for (int q = r & ~31; q < (r & ~31) + 32; q++) {
                                const unsigned v = sSA[q * KG + b];
                                mx = v > mx ? v : mx;
                                mn = v < mn ? v : mn;
                            }
                            if (fault == A4W4_GPU_FAULT_PAD_FF && mx == 0xFFu)
                                sa = 0xFFu; /* one vector compare for the whole group */
                            if (fault == A4W4_GPU_FAULT_PAD_00 && mn == 0)
                                skip = true; /* "empty block" tested on the minimum */
                        }
                        if (skip)
                            continue;
#pragma unroll
                        for (int j = 0; j < 4; j++) {
                            int d = 0;
#pragma unroll
                            for (int w = 0; w < 8; w++)
                                d = a4w4d_dot4((int)av[i][w], (int)bv[j][w], d);
                            const float v =
                                a4w4d_block_value(d, sa, sSB[(tx + 16 * j) * KG + b]);
                            acc[i][j] = A4W4_FADD(acc[i][j], v);
                        }
                    }
                }
            }

            /* Write the patch: only rows < m_end and columns < n_end (inside [M, N]). */
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const long long m = sm0 + ty + 16 * i;
                if (m >= m_end)
                    continue;
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const long long n = sn0 + tx + 16 * j;
                    if (n >= n_end)
                        continue;
                    const float t = acc[i][j];
                    if (p.out_mode == A4W4G_OUT_BF16)
                        p.y[m * p.N + n] = (unsigned short)a4w4d_f32_to_bf16(t);
                    else if (p.out_mode == A4W4G_OUT_PARTIAL)
                        p.partial[((long long)blockIdx.z * p.M + m) * p.N + n] = t;
                    else /* AITER-like: the split total goes out as bf16, added atomically */
                        a4w4d_atomic_add_bf16(&p.y[m * p.N + n],
                                              a4w4d_bf16_to_f32(a4w4d_f32_to_bf16(t)));
                }
            }
        }
    }
}

__global__ void a4w4g_split_reduce_kernel(const float *partial, int splits, long long M,
                                          long long N, unsigned short *y, int fault)
{
    const long long total = M * N;
    const bool bf16_adds = fault == A4W4_GPU_FAULT_SPLITK_BF16;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        if (bf16_adds) { /* the fault: a bf16 accumulator, each partial rounded to bf16 */
            unsigned h = 0; /* +0.0 */
            for (int s = 0; s < splits; s++) {
                const float part = a4w4d_bf16_to_f32(
                    a4w4d_f32_to_bf16(partial[(long long)s * total + idx]));
                h = a4w4d_f32_to_bf16(A4W4_FADD(a4w4d_bf16_to_f32(h), part));
            }
            y[idx] = (unsigned short)h;
            continue;
        }
        float t = 0.0f; /* +0.0, then split totals in split order */
        for (int s = 0; s < splits; s++)
            t = A4W4_FADD(t, partial[(long long)s * total + idx]);
        y[idx] = (unsigned short)a4w4d_f32_to_bf16(t);
    }
}

hipError_t a4w4g_launch_gemm(const a4w4g_gemm_args *args, hipStream_t stream)
{
    a4w4g_gemm_args p = *args;
    p.fault = a4w4g_fault();
    long long mtiles = (p.M + p.tile_m - 1) / p.tile_m;
    if (p.fault == A4W4_GPU_FAULT_TAIL_UNWRITTEN)
        mtiles = p.M / p.tile_m; /* the fault: floor, the partial last tile is never run */
    const long long ntiles = (p.N + p.tile_n - 1) / p.tile_n;
    if (mtiles == 0)
        return hipSuccess; /* (TAIL_UNWRITTEN with M < tile_m: nothing to launch) */
    dim3 grid((unsigned)(mtiles * ntiles), 1, (unsigned)p.splits);
    if (p.fault == A4W4_GPU_FAULT_NONE)
        hipLaunchKernelGGL(a4w4g_gemm_kernel<false>, grid, dim3(A4W4G_THREADS), 0, stream, p);
    else
        hipLaunchKernelGGL(a4w4g_gemm_kernel<true>, grid, dim3(A4W4G_THREADS), 0, stream, p);
    return hipGetLastError();
}

hipError_t a4w4g_launch_split_reduce(const float *partial, int splits, long long M,
                                     long long N, unsigned short *y, int fault,
                                     hipStream_t stream)
{
    hipLaunchKernelGGL(a4w4g_split_reduce_kernel, dim3(a4w4g_grid(M * N)), dim3(A4W4G_THREADS),
                       0, stream, partial, splits, M, N, y, fault);
    return hipGetLastError();
}
