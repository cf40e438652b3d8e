/* a4w4_judge_gemm.hip — the judge's GEMM passes on the device (contracts §4, §4.1): one pass
 * for ordered(1) and ordered(S) (or atomic(S)'s split values), one for exact, the exact-regime
 * prover and the bounded(S) bound. The per-output arithmetic is a4w4_judge_math.h's; this file
 * only tiles it.
 *
 * Block dots come from the matrix units: per 32-element block, one instruction per 16 x 8
 * (NVIDIA mma.sync m16n8k32 s8) or 16 x 16 (AMD MFMA i8) patch of outputs, from an int32 zero,
 * gives every output's exact integer dot (|d| <= 4608). The exact pass issues a second one on
 * the codes' magnitudes: iabs, the block's sum of |products| (the prover's and the bound's sum
 * of |terms|). Then each output walks its blocks in ascending K on the vector units.
 *
 * Tiles: a block of 256 threads owns a JM x JN patch of outputs (64 x 64 for the ordered pass,
 * 32 x 32 for the exact pass, whose per-output state is large) and walks K in chunks of 128
 * elements decoded into shared memory (twice the E2M1 values as int8; magnitudes too for the
 * exact pass). Operands are the row-major tensors only. */
#include "a4w4_judge_internal.h"
#include "a4w4_judge_math.h"

#define JKC 128
#define JKB (JKC / 32)
#define JROW (JKC + 16) /* bytes per decoded row: 36 words apart, conflict-free fragments */
#define JTHREADS 256

#ifdef A4W4J_AMD
#define JWAVE 64
#define JUNIT_N 16
#else
#define JWAVE 32
#define JUNIT_N 8
#endif

/* ---- one matrix instruction: the exact dots of a 16 x JUNIT_N patch -------------------------
 * a: the patch's first A row in shared memory at the block's K offset, w: its first W row.
 * Output i of the lane: row j_row(lane, i), column j_col(lane, i) of the patch. */
#ifdef A4W4J_AMD
typedef int j_i32x4 __attribute__((ext_vector_type(4)));
static __device__ __forceinline__ void j_dot(const uint8_t *a, const uint8_t *w, int lane, int c[4])
{
    const int row = lane % 16, grp = lane / 16;
    j_i32x4 acc = {0, 0, 0, 0};
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__)
    acc = __builtin_amdgcn_mfma_i32_16x16x32_i8(*(const long *)(a + row * JROW + 8 * grp),
                                                *(const long *)(w + row * JROW + 8 * grp), acc,
                                                0, 0, 0);
#elif defined(__HIP_DEVICE_COMPILE__)
    acc = __builtin_amdgcn_mfma_i32_16x16x16i8(*(const int *)(a + row * JROW + 4 * grp),
                                               *(const int *)(w + row * JROW + 4 * grp), acc, 0,
                                               0, 0);
    acc = __builtin_amdgcn_mfma_i32_16x16x16i8(*(const int *)(a + row * JROW + 16 + 4 * grp),
                                               *(const int *)(w + row * JROW + 16 + 4 * grp),
                                               acc, 0, 0, 0);
#else
    (void)a; (void)w; (void)row; (void)grp;
#endif
    c[0] = acc[0];
    c[1] = acc[1];
    c[2] = acc[2];
    c[3] = acc[3];
}
static __device__ __forceinline__ int j_row(int lane, int i) { return 4 * (lane / 16) + i; }
static __device__ __forceinline__ int j_col(int lane, int i) { (void)i; return lane % 16; }
#else
static __device__ __forceinline__ void j_dot(const uint8_t *a, const uint8_t *w, int lane, int c[4])
{
    const int g = lane / 4, t = lane % 4;
    /* PTX ISA, mma.m16n8k32 .s8: A regs {row g, k 4t..}, {row g+8, k 4t..}, {row g, k 16+4t..},
     * {row g+8, k 16+4t..}; B regs {col g, k 4t..}, {col g, k 16+4t..} */
    const unsigned a0 = *(const unsigned *)(a + g * JROW + 4 * t);
    const unsigned a1 = *(const unsigned *)(a + (g + 8) * JROW + 4 * t);
    const unsigned a2 = *(const unsigned *)(a + g * JROW + 16 + 4 * t);
    const unsigned a3 = *(const unsigned *)(a + (g + 8) * JROW + 16 + 4 * t);
    const unsigned b0 = *(const unsigned *)(w + g * JROW + 4 * t);
    const unsigned b1 = *(const unsigned *)(w + g * JROW + 16 + 4 * t);
    int d0 = 0, d1 = 0, d2 = 0, d3 = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    (void)a0; (void)a1; (void)a2; (void)a3; (void)b0; (void)b1;
#endif
    c[0] = d0;
    c[1] = d1;
    c[2] = d2;
    c[3] = d3;
}
/* D regs: {row g, col 2t}, {row g, col 2t+1}, {row g+8, col 2t}, {row g+8, col 2t+1} */
static __device__ __forceinline__ int j_row(int lane, int i) { return lane / 4 + 8 * (i / 2); }
static __device__ __forceinline__ int j_col(int lane, int i) { return 2 * (lane % 4) + i % 2; }
#endif

/* ---- chunk loading ------------------------------------------------------------------------- */
/* Decode rows [r0, r0+rows) of a row-major fp4 tensor (rows < nrows valid), blocks gb0 ..
 * gb0+nblk-1, into dst (and |codes| into dabs when not NULL); scales into sc[b][row]. */
static __device__ void j_load(const uint8_t *fp4, const uint8_t *scale, long long r0, int rows,
                              long long nrows, long long K, long long gb0, int nblk, uint8_t *dst,
                              uint8_t *dabs, uint8_t *sc, int sc_stride)
{
    const long long nb = K / 32;
    for (int item = threadIdx.x; item < rows * JKB; item += JTHREADS) {
        const int row = item / JKB, b = item % JKB;
        const long long r = r0 + row;
        uint32_t words[8], wabs[8];
        uint8_t s = 0x7F;
        if (b < nblk && r < nrows) {
            const uint8_t *src = fp4 + r * (K / 2) + (gb0 + b) * 16;
            const uint4 raw = *(const uint4 *)src;
#if defined(__CUDA_ARCH__)
            const uint32_t in[4] = {raw.x, raw.y, raw.z, raw.w};
            a4w4j_decode16_perm(in, words, wabs);
#else
            uint8_t bytes[16];
            memcpy(bytes, &raw, 16);
            a4w4j_decode16(bytes, words, 0);
            if (dabs)
                a4w4j_decode16(bytes, wabs, 1);
#endif
            s = scale[r * nb + gb0 + b];
        } else {
            for (int i = 0; i < 8; i++)
                words[i] = wabs[i] = 0;
        }
        uint4 *o = (uint4 *)(dst + row * JROW + b * 32);
        o[0] = make_uint4(words[0], words[1], words[2], words[3]);
        o[1] = make_uint4(words[4], words[5], words[6], words[7]);
        if (dabs) {
            uint4 *oa = (uint4 *)(dabs + row * JROW + b * 32);
            oa[0] = make_uint4(wabs[0], wabs[1], wabs[2], wabs[3]);
            oa[1] = make_uint4(wabs[4], wabs[5], wabs[6], wabs[7]);
        }
        sc[b * sc_stride + row] = s;
    }
}

/* ---- the ordered pass --------------------------------------------------------------------- */
#define OJM 64
#define OJN 64
#ifdef A4W4J_AMD
#define OWARPS_N 2 /* 4 waves: 2 x 2, warp tile 32 x 32 */
#else
#define OWARPS_N 4 /* 8 warps: 2 x 4, warp tile 32 x 16 */
#endif
#define OWM (OJM / 2)
#define OWN (OJN / OWARPS_N)
#define OMI (OWM / 16)
#define ONI (OWN / JUNIT_N)

/* 2^(s - 128) as a double (so that 2^(sa-128) * 2^(sb-128) = 2^(sa+sb-256) exactly); NaN for
 * the scale 0xFF. */
static __device__ __forceinline__ double j_half_factor(unsigned s)
{
    return s == 0xFFu ? a4w4j_d(0x7FF8000000000000ull) : a4w4j_pow2d((int)s - 128);
}

__global__ void __launch_bounds__(JTHREADS) a4w4j_ordered_kernel(a4w4j_pass p)
{
    __shared__ uint4 sa4[OJM * JROW / 16], sw4[OJN * JROW / 16];
    __shared__ uint8_t ssa[JKB * OJM], ssw[JKB * OJN];
    uint8_t *sa = (uint8_t *)sa4, *sw = (uint8_t *)sw4;
    const long long ntn = (p.N + OJN - 1) / OJN;
    const long long m0 = (blockIdx.x / ntn) * OJM, n0 = (blockIdx.x % ntn) * OJN;
    const int warp = threadIdx.x / JWAVE, lane = threadIdx.x % JWAVE;
    const int wr = (warp / OWARPS_N) * OWM, wc = (warp % OWARPS_N) * OWN;
    const long long nb = p.K / 32;
    float t1[OMI][ONI][4], ts[OMI][ONI][4], to[OMI][ONI][4];
#pragma unroll
    for (int i = 0; i < OMI; i++)
#pragma unroll
        for (int j = 0; j < ONI; j++)
#pragma unroll
            for (int k = 0; k < 4; k++)
                t1[i][j][k] = ts[i][j][k] = to[i][j][k] = 0.0f; /* +0.0 */

    long long in_split = 0; /* blocks of the current ordered(S) split so far */
    long long split_no = 0; /* splits closed so far (atom's index) */
    const bool splits = p.ordS || p.atom;
    for (long long gb0 = 0; gb0 < nb; gb0 += JKB) {
        const int nblk = nb - gb0 < JKB ? (int)(nb - gb0) : JKB;
        __syncthreads();
        j_load(p.a_fp4, p.a_scale, m0, OJM, p.M, p.K, gb0, nblk, sa, NULL, ssa, OJM);
        j_load(p.w_fp4, p.w_scale, n0, OJN, p.N, p.K, gb0, nblk, sw, NULL, ssw, OJN);
        __syncthreads();
        for (int b = 0; b < nblk; b++) {
            const bool split_end = splits && ++in_split == p.ordS_blocks;
            if (split_end)
                in_split = 0;
#pragma unroll
            for (int mi = 0; mi < OMI; mi++)
#pragma unroll
                for (int ni = 0; ni < ONI; ni++) {
                    const int pr = wr + mi * 16, pc = wc + ni * JUNIT_N;
                    int d[4];
                    j_dot(sa + pr * JROW + b * 32, sw + pc * JROW + b * 32, lane, d);
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const int r = pr + j_row(lane, i), c = pc + j_col(lane, i);
                        const double f = J_DMUL(j_half_factor(ssa[b * OJM + r]),
                                                j_half_factor(ssw[b * OJN + c]));
                        const float v = J_D2F(J_DMUL((double)d[i], f)); /* one rounding */
                        t1[mi][ni][i] = J_FADD(t1[mi][ni][i], v);
                        if (splits) {
                            ts[mi][ni][i] = J_FADD(ts[mi][ni][i], v);
                            if (split_end && p.atom && m0 + r < p.M && n0 + c < p.N)
                                p.atom[split_no * p.M * p.N + (m0 + r) * p.N + n0 + c] =
                                    (uint16_t)a4w4j_bf16_of_f32(ts[mi][ni][i]);
                            if (split_end) { /* split totals in split order, from +0 */
                                to[mi][ni][i] = J_FADD(to[mi][ni][i], ts[mi][ni][i]);
                                ts[mi][ni][i] = 0.0f;
                            }
                        }
                    }
                }
            split_no += split_end;
        }
    }
    const bool open_split = splits && (nb % p.ordS_blocks != 0);
#pragma unroll
    for (int mi = 0; mi < OMI; mi++)
#pragma unroll
        for (int ni = 0; ni < ONI; ni++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const long long m = m0 + wr + mi * 16 + j_row(lane, i);
                const long long n = n0 + wc + ni * JUNIT_N + j_col(lane, i);
                if (m >= p.M || n >= p.N)
                    continue;
                uint32_t h = a4w4j_bf16_of_f32(t1[mi][ni][i]);
                if (p.fault == 1 && n % 16 == 15 && (h & 0x7FFFu) <= 0x7F80u)
                    h += 1; /* test only: a wrong judge (a4w4j_set_fault) */
                if (p.ord1)
                    p.ord1[m * p.N + n] = (uint16_t)h;
                if (p.ordS) {
                    const float o = open_split ? J_FADD(to[mi][ni][i], ts[mi][ni][i])
                                               : to[mi][ni][i];
                    p.ordS[m * p.N + n] = (uint16_t)a4w4j_bf16_of_f32(o);
                }
                if (p.atom && open_split) /* the last split, shorter than the others */
                    p.atom[split_no * p.M * p.N + m * p.N + n] =
                        (uint16_t)a4w4j_bf16_of_f32(ts[mi][ni][i]);
            }
}

/* ---- the exact pass ------------------------------------------------------------------------ */
#define EJM 32
#define EJN 32
#ifdef A4W4J_AMD
#define EWARPS_N 2 /* 4 waves: 2 x 2, one 16 x 16 unit each */
#else
#define EWARPS_N 4 /* 8 warps: 2 x 4, one 16 x 8 unit each */
#endif

/* What one output carries through the exact pass. */
typedef struct {
    a4w4j_win total, split;
    a4w4j_prove prove;
    double tpos, tneg; /* the split's sums of its positive and negative terms (the bound's T_s) */
    a4w4j_bound_acc bound;
    int uncertain, split_nan;
} j_exact_state;

static __device__ __forceinline__ void j_exact_init(j_exact_state *s)
{
    a4w4j_win_init(&s->total);
    a4w4j_win_init(&s->split);
    a4w4j_prove_init(&s->prove);
    s->tpos = s->tneg = 0.0;
    a4w4j_bound_init(&s->bound);
    s->uncertain = 0;
    s->split_nan = 0;
}

/* Close a split of `blocks` blocks: its facts into the bound (contracts §4.1 bounded). */
static __device__ __forceinline__ void j_split_close(j_exact_state *s, long long blocks)
{
    double pd;
    if (s->split.nan)
        s->split_nan = 1;
    else if (!a4w4j_win_round_d(&s->split, &pd))
        s->uncertain = 1;
    else
        a4w4j_bound_add(&s->bound, pd, s->tpos, s->tneg, blocks);
    a4w4j_win_init(&s->split);
    s->tpos = s->tneg = 0.0;
}

/* Which path the tile [m0, m0 + EJM) x [n0, n0 + EJN) takes (a4w4_judge_math.h): 2 the fixed
 * base's narrow form (every output's spans within A4W4J_NARROW_SPAN), 1 the fixed base, 0 the
 * window (some output outside a4w4j_fix_limit, or the fixed base off). The same answer in
 * every thread of the block (barriers). */
static __device__ int j_tile_path(const a4w4j_pass &p, long long m0, long long n0)
{
    if (!p.span_a)
        return 0;
    const int narrow = p.fix_limit < A4W4J_NARROW_SPAN ? p.fix_limit : A4W4J_NARROW_SPAN;
    int out = 0, wide = 0;
    for (int k = threadIdx.x; k < EJM * EJN; k += JTHREADS) {
        const long long m = m0 + k / EJN, n = n0 + k % EJN;
        if (m < p.M && n < p.N) {
            out |= !a4w4j_fix_takes(p.span_a[m], p.span_w[n], p.fix_limit);
            wide |= !a4w4j_fix_takes(p.span_a[m], p.span_w[n], narrow);
        }
    }
    out = __syncthreads_or(out);
    wide = __syncthreads_or(wide);
    return out ? 0 : wide ? 1 : 2;
}

/* One tile of the exact pass on the fixed base: per block and output, after the matrix
 * instructions, two shifts and two adds (32-bit ones flushed every 4 blocks when NARROW,
 * 64-bit ones otherwise); per split, the bound's facts from the sums' differences. */
template <bool BOUND, bool NARROW>
static __device__ void j_fixed_tile(const a4w4j_pass &p, long long m0, long long n0,
                                    uint8_t *sa, uint8_t *sw, uint8_t *saa, uint8_t *swa,
                                    uint8_t *ssa, uint8_t *ssw)
{
    const int warp = threadIdx.x / JWAVE, lane = threadIdx.x % JWAVE;
    const int pr = (warp / EWARPS_N) * 16, pc = (warp % EWARPS_N) * JUNIT_N;
    const long long nb = p.K / 32;
    a4w4j_fix f[4], f0[4];
    a4w4j_fix32 l[4];
    a4w4j_bound_acc bd[4];
    int base[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const long long m = m0 + pr + j_row(lane, i), n = n0 + pc + j_col(lane, i);
        base[i] = (m < p.M ? p.lo_a[m] : 0) + (n < p.N ? p.lo_w[n] : 0);
        a4w4j_fix_init(&f[i]);
        f0[i] = f[i];
        l[i].acc = l[i].tacc = 0;
        a4w4j_bound_init(&bd[i]);
    }
    long long in_split = 0; /* blocks of the current bound split so far */
    for (long long gb0 = 0; gb0 < nb; gb0 += JKB) {
        const int nblk = nb - gb0 < JKB ? (int)(nb - gb0) : JKB;
        __syncthreads();
        j_load(p.a_fp4, p.a_scale, m0, EJM, p.M, p.K, gb0, nblk, sa, saa, ssa, EJM);
        j_load(p.w_fp4, p.w_scale, n0, EJN, p.N, p.K, gb0, nblk, sw, swa, ssw, EJN);
        __syncthreads();
#pragma unroll
        for (int b = 0; b < JKB; b++) {
            if (b >= nblk)
                continue; /* the last chunk's missing blocks (no break: clang unrolls) */
            int d[4], da[4];
            j_dot(sa + pr * JROW + b * 32, sw + pc * JROW + b * 32, lane, d);
            j_dot(saa + pr * JROW + b * 32, swa + pc * JROW + b * 32, lane, da);
            const bool close = BOUND && (++in_split == p.bound_blocks || gb0 + b + 1 == nb);
            /* NARROW: JKB == A4W4J_NARROW_BLOCKS, so the chunk's end flushes */
            const bool flush = NARROW && (close || b == nblk - 1);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int e = ssa[b * EJM + pr + j_row(lane, i)] + ssw[b * EJN + pc + j_col(lane, i)];
                if (NARROW)
                    a4w4j_fix32_add(&f[i], &l[i], d[i], da[i], e, base[i]);
                else
                    a4w4j_fix_add(&f[i], d[i], da[i], e, base[i]);
                if (flush)
                    a4w4j_fix_flush(&f[i], &l[i]);
                if (close) {
                    a4w4j_fix_split(&bd[i], &f[i], &f0[i], base[i], in_split);
                    f0[i] = f[i];
                }
            }
            if (close)
                in_split = 0;
        }
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const long long m = m0 + pr + j_row(lane, i), n = n0 + pc + j_col(lane, i);
        if (m >= p.M || n >= p.N)
            continue;
        const long long o = m * p.N + n;
        const int nan = p.span_a[m] == A4W4J_SPAN_NAN || p.span_w[n] == A4W4J_SPAN_NAN;
        uint32_t hb = 0x7FC0u;
        float f32 = a4w4j_f(0x7FC00000u);
        if (!nan)
            a4w4j_fix_round(&f[i], base[i], &hb, &f32);
        p.ex_bf16[o] = (uint16_t)hb;
        p.ex_f32[o] = f32;
        p.proven[o] = (uint8_t)a4w4j_fix_proven(p.facts_a[m], p.facts_w[n], &f[i], base[i]);
        if (BOUND) {
            p.bound[o] = nan ? a4w4j_d(0x7FF8000000000000ull) : a4w4j_bound_final(&bd[i]);
            p.infs[o] = (uint8_t)(nan ? 0u : a4w4j_bound_infs(&bd[i]));
            p.ex_f64[o] = nan ? a4w4j_d(0x7FF8000000000000ull) : a4w4j_fix_round_d(&f[i], base[i]);
        }
        p.uncertain[o] = 0;
    }
}

/* The exact pass on the fixed base, its narrow form where the tile allows; tiles that some
 * output keeps off the fixed base are left to a4w4j_exact_kernel. */
template <bool BOUND>
__global__ void __launch_bounds__(JTHREADS, BOUND ? 2 : 3) a4w4j_fixed_kernel(a4w4j_pass p)
{
    static_assert(JKB == A4W4J_NARROW_BLOCKS, "the narrow form flushes once per chunk");
    __shared__ uint4 sa4[EJM * JROW / 16], sw4[EJN * JROW / 16];
    __shared__ uint4 saa4[EJM * JROW / 16], swa4[EJN * JROW / 16];
    __shared__ uint8_t ssa[JKB * EJM], ssw[JKB * EJN];
    const long long ntn = (p.N + EJN - 1) / EJN;
    const long long m0 = (blockIdx.x / ntn) * EJM, n0 = (blockIdx.x % ntn) * EJN;
    const int path = j_tile_path(p, m0, n0);
    if (path == 2)
        j_fixed_tile<BOUND, true>(p, m0, n0, (uint8_t *)sa4, (uint8_t *)sw4, (uint8_t *)saa4,
                                  (uint8_t *)swa4, ssa, ssw);
    else if (path == 1)
        j_fixed_tile<BOUND, false>(p, m0, n0, (uint8_t *)sa4, (uint8_t *)sw4, (uint8_t *)saa4,
                                   (uint8_t *)swa4, ssa, ssw);
}

template <bool BOUND>
__global__ void __launch_bounds__(JTHREADS) a4w4j_exact_kernel(a4w4j_pass p)
{
    __shared__ uint4 sa4[EJM * JROW / 16], sw4[EJN * JROW / 16];
    __shared__ uint4 saa4[EJM * JROW / 16], swa4[EJN * JROW / 16];
    __shared__ uint8_t ssa[JKB * EJM], ssw[JKB * EJN];
    uint8_t *sa = (uint8_t *)sa4, *sw = (uint8_t *)sw4;
    uint8_t *saa = (uint8_t *)saa4, *swa = (uint8_t *)swa4;
    const long long ntn = (p.N + EJN - 1) / EJN;
    const long long m0 = (blockIdx.x / ntn) * EJM, n0 = (blockIdx.x % ntn) * EJN;
    if (j_tile_path(p, m0, n0))
        return; /* a4w4j_fixed_kernel's */
    const int warp = threadIdx.x / JWAVE, lane = threadIdx.x % JWAVE;
    const int pr = (warp / EWARPS_N) * 16, pc = (warp % EWARPS_N) * JUNIT_N;
    const long long nb = p.K / 32;
    j_exact_state st[4];
#pragma unroll
    for (int i = 0; i < 4; i++)
        j_exact_init(&st[i]);
    long long in_split = 0; /* blocks of the current bound split so far */

    for (long long gb0 = 0; gb0 < nb; gb0 += JKB) {
        const int nblk = nb - gb0 < JKB ? (int)(nb - gb0) : JKB;
        __syncthreads();
        j_load(p.a_fp4, p.a_scale, m0, EJM, p.M, p.K, gb0, nblk, sa, saa, ssa, EJM);
        j_load(p.w_fp4, p.w_scale, n0, EJN, p.N, p.K, gb0, nblk, sw, swa, ssw, EJN);
        __syncthreads();
        for (int b = 0; b < nblk; b++) {
            int d[4], da[4];
            j_dot(sa + pr * JROW + b * 32, sw + pc * JROW + b * 32, lane, d);
            j_dot(saa + pr * JROW + b * 32, swa + pc * JROW + b * 32, lane, da);
            /* the bound's split ends here: a full split, or the last (shorter) one */
            const bool close = BOUND && (++in_split == p.bound_blocks || gb0 + b + 1 == nb);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const unsigned s_a = ssa[b * EJM + pr + j_row(lane, i)];
                const unsigned s_w = ssw[b * EJN + pc + j_col(lane, i)];
                a4w4j_win_add(&st[i].total, d[i], s_a, s_w);
                a4w4j_prove_add(&st[i].prove, da[i], s_a, s_w);
                if (BOUND) {
                    a4w4j_win_add(&st[i].split, d[i], s_a, s_w);
                    if (s_a != 0xFFu && s_w != 0xFFu && da[i]) {
                        /* d = ipos - ineg and da = ipos + ineg, both exact integers */
                        const double q = a4w4j_pow2d((int)(s_a + s_w) - 256);
                        st[i].tpos = J_DADD(st[i].tpos, (double)((da[i] + d[i]) / 2) * q);
                        st[i].tneg = J_DADD(st[i].tneg, (double)((da[i] - d[i]) / 2) * q);
                    }
                    if (close)
                        j_split_close(&st[i], in_split);
                }
            }
            if (close)
                in_split = 0;
        }
    }
    for (int i = 0; i < 4; i++) {
        const long long m = m0 + pr + j_row(lane, i), n = n0 + pc + j_col(lane, i);
        if (m >= p.M || n >= p.N)
            continue;
        const long long o = m * p.N + n;
        uint32_t hb;
        float f;
        int sure = a4w4j_win_round(&st[i].total, &hb, &f);
        p.ex_bf16[o] = sure ? (uint16_t)hb : (uint16_t)0x7FC0u;
        p.ex_f32[o] = sure ? f : a4w4j_f(0x7FC00000u);
        p.proven[o] = (uint8_t)a4w4j_proven(p.facts_a[m], p.facts_w[n], &st[i].prove);
        if (BOUND) {
            const int nan = st[i].split_nan || st[i].total.nan;
            double e64 = a4w4j_d(0x7FF8000000000000ull);
            p.bound[o] = nan ? e64 : a4w4j_bound_final(&st[i].bound);
            p.infs[o] = (uint8_t)(nan ? 0u : a4w4j_bound_infs(&st[i].bound));
            sure = sure && !st[i].uncertain && (nan || a4w4j_win_round_d(&st[i].total, &e64));
            p.ex_f64[o] = e64;
        }
        p.uncertain[o] = (uint8_t)!sure;
    }
}

hipError_t a4w4j_launch_ordered(const a4w4j_pass *p)
{
    const long long tiles = ((p->M + OJM - 1) / OJM) * ((p->N + OJN - 1) / OJN);
    hipLaunchKernelGGL(a4w4j_ordered_kernel, dim3((unsigned)tiles), dim3(JTHREADS), 0, 0, *p);
    return hipGetLastError();
}

hipError_t a4w4j_launch_exact(const a4w4j_pass *p)
{
    const long long tiles = ((p->M + EJM - 1) / EJM) * ((p->N + EJN - 1) / EJN);
    if (p->span_a) { /* the fixed base's tiles, then the window's (each skips the other's) */
        if (p->bound)
            hipLaunchKernelGGL(a4w4j_fixed_kernel<true>, dim3((unsigned)tiles), dim3(JTHREADS),
                               0, 0, *p);
        else
            hipLaunchKernelGGL(a4w4j_fixed_kernel<false>, dim3((unsigned)tiles),
                               dim3(JTHREADS), 0, 0, *p);
        const hipError_t e = hipGetLastError();
        if (e != hipSuccess)
            return e;
    }
    if (p->bound)
        hipLaunchKernelGGL(a4w4j_exact_kernel<true>, dim3((unsigned)tiles), dim3(JTHREADS), 0, 0,
                           *p);
    else
        hipLaunchKernelGGL(a4w4j_exact_kernel<false>, dim3((unsigned)tiles), dim3(JTHREADS), 0,
                           0, *p);
    return hipGetLastError();
}
