/* a4w4_gpu_emu.hip — runs the GPU kernels' arithmetic and addressing on the CPU (no GPU
 * needed, so it also runs in CI): the __host__ __device__ helpers of gpu/a4w4_gpu_device.h
 * against the ref oracles and the golden bundles.
 *
 *   formats     fp16/bf16 widening, E2M1 rounding, bf16 RNE, E8M0 decode (exhaustive or
 *               dense sweeps) vs ref/a4w4_formats.h
 *   scale code  every mode over every exponent with edge mantissas + random, vs
 *               a4w4_scale_code; whole blocks vs a4w4_quantize
 *   block value RNE_fp32(d * 2^(sa+sb-256)) over every exponent sum vs the double form
 *   layouts     the kernels' granule / swizzle index maps vs a4w4_preshuffle,
 *               a4w4_scale_swizzle, a4w4_act_scale_shuffle
 *   GEMM        the kernel's per-output loop (same helpers, same index maps, same order) on
 *               the golden bundles' shuffled tensors vs y_ordered, and on random wide-range
 *               cases vs a4w4_gemm_ordered(S)
 *   MMA kernel  (gpu/a4w4_gpu_mma.h) its block scaling from per-row / per-column factors
 *               over every (sa, sb) pair vs the portable block value; its fragment maps
 *               (NVIDIA m16n8k32, AMD 16x16 i8) cover each operand and output element once;
 *               its per-output loop vs a4w4_gemm_ordered(S) on random cases whose scales
 *               reach 242..255 (the second multiply order, NaN)
 * What it cannot see: the tiling, shared memory and thread mapping (a4w4_gpu_check does).
 * Exit 0 when everything matches, 1 otherwise. Usage: a4w4_gpu_emu [GOLDEN_DIR] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gpu_device.h"
#include "a4w4_gpu_mma.h"

extern "C" {
#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"
}

#include "a4w4_st_mini.h"

#ifndef A4W4_SOURCE_DIR
#define A4W4_SOURCE_DIR "."
#endif

static long g_fail, g_pass;

static void check(bool ok, const char *what, long bad, long total)
{
    if (ok) {
        g_pass++;
        printf("PASS %s (%ld checked)\n", what, total);
    } else {
        g_fail++;
        printf("FAIL %s: %ld/%ld differ\n", what, bad, total);
    }
}

static unsigned long long g_rng = 0x853C49E6748FEA9BULL;
static unsigned long long rnd(void)
{
    unsigned long long z = (g_rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static unsigned fbits(float f)
{
    unsigned u;
    memcpy(&u, &f, 4);
    return u;
}

static float bitsf(unsigned u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- formats -------------------------------------------------------------------------- */
static void test_formats(void)
{
    long bad = 0, n = 0;
    for (unsigned h = 0; h < 65536; h++, n++) {
        unsigned a = a4w4d_fp16_bits_to_f32_bits(h), b = fbits(a4w4_fp16_to_f32((uint16_t)h));
        bool both_nan = isnan(bitsf(a)) && isnan(bitsf(b));
        bad += a != b && !both_nan;
    }
    check(bad == 0, "fp16 -> f32 widening, all 65536 patterns", bad, n);

    bad = n = 0;
    for (unsigned h = 0; h < 65536; h++, n++)
        bad += a4w4d_bf16_bits_to_f32_bits(h) != fbits(a4w4_bf16_to_f32((uint16_t)h)) &&
               !isnan(a4w4_bf16_to_f32((uint16_t)h));
    check(bad == 0, "bf16 -> f32 widening, all 65536 patterns", bad, n);

    /* E2M1 RNE and bf16 RNE over every exponent with dense mantissas */
    long bad2 = 0;
    bad = n = 0;
    for (unsigned e = 0; e < 256; e++)
        for (unsigned k = 0; k < 4096; k++) {
            unsigned m = k < 2048 ? (k << 12) | (k & 7) : (unsigned)(rnd() & 0x7FFFFF);
            for (unsigned s = 0; s < 2; s++, n++) {
                unsigned u = (s << 31) | (e << 23) | m;
                float q = bitsf(u);
                if (!isnan(q))
                    bad += a4w4d_f32_to_e2m1(q) != a4w4_f32_to_e2m1(q);
                unsigned gb = a4w4d_f32_to_bf16(q), rb = a4w4_f32_to_bf16(q);
                bad2 += gb != rb && !(isnan(q) && (rb & 0x7FFF) > 0x7F80);
            }
        }
    check(bad == 0, "f32 -> E2M1 RNE (every exponent, dense mantissas)", bad, n);
    check(bad2 == 0, "f32 -> bf16 RNE (every exponent, dense mantissas)", bad2, n);

    bad = 0;
    for (unsigned s = 0; s < 255; s++)
        bad += fbits(a4w4d_e8m0_to_f32(s)) != fbits(a4w4_e8m0_to_f32((uint8_t)s));
    bad += !isnan(a4w4d_e8m0_to_f32(255));
    check(bad == 0, "E8M0 decode, all 256 codes", bad, 256);

    bad = 0;
    for (unsigned c = 0; c < 16; c++)
        bad += a4w4d_e2m1_int2x(c) != a4w4_e2m1_to_int2x((uint8_t)c);
    check(bad == 0, "E2M1 -> 2x integer, all 16 codes", bad, 16);
}

/* ---- scale codes and blocks ----------------------------------------------------------- */
static void test_quant(void)
{
    static const unsigned mant[] = {0, 1, 2, 0x1FFFFF, 0x200000, 0x200001, 0x3FFFFF,
                                    0x400000, 0x5FFFFF, 0x600000, 0x600001, 0x7FFFFE, 0x7FFFFF};
    long bad = 0, n = 0;
    for (int mode = 0; mode < 4; mode++)
        for (unsigned e = 0; e < 255; e++)
            for (unsigned i = 0; i < sizeof mant / sizeof *mant + 64; i++, n++) {
                unsigned m = i < sizeof mant / sizeof *mant ? mant[i]
                                                            : (unsigned)(rnd() & 0x7FFFFF);
                unsigned u = (e << 23) | m;
                bad += a4w4d_scale_code(u, mode) != a4w4_scale_code(bitsf(u), (a4w4_scale_mode)mode);
            }
    check(bad == 0, "scale code, 4 modes x every exponent x edge+random mantissas", bad, n);

    /* whole blocks, f32: random kinds as in a4w4_gpu_check */
    static const float ties[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f, 7.0f};
    bad = n = 0;
    for (int it = 0; it < 200000; it++) {
        unsigned bits[32];
        float x[32];
        const unsigned kind = (unsigned)(rnd() % 6);
        const int e = (int)(rnd() % 254) + 1, p = (int)(rnd() % 240) - 120;
        for (int i = 0; i < 32; i++) {
            unsigned sign = (unsigned)(rnd() & 1) << 31;
            if (kind == 0)
                bits[i] = (unsigned)rnd(); /* anything, NaN/Inf/subnormal included */
            else if (kind == 1)
                bits[i] = sign | fbits(ldexpf(i == 0 ? 6.0f : ties[rnd() % 9], p));
            else if (kind == 2)
                bits[i] = sign | (unsigned)(rnd() & 0xFFFFFF); /* tiny / subnormal */
            else {
                int ee = e - (int)(rnd() % 11);
                bits[i] = sign | ((unsigned)(ee < 1 ? 1 : ee) << 23) | (unsigned)(rnd() & 0x7FFFFF);
            }
            memcpy(&x[i], &bits[i], 4);
        }
        for (int mode = 0; mode < 4; mode++, n++) {
            unsigned char got[16], want[16], ws;
            unsigned s = a4w4d_quant_block(bits, mode, got);
            a4w4_quantize(x, A4W4_IN_F32, 1, 32, (a4w4_scale_mode)mode, 0, want, &ws);
            bad += s != ws || (ws != 0xFF && memcmp(got, want, 16) != 0);
        }
    }
    check(bad == 0, "quantize 32-blocks (f32, 4 modes) vs a4w4_quantize", bad, n);
}

/* ---- block value ------------------------------------------------------------------------ */
static void test_block_value(void)
{
    long bad = 0, n = 0;
    for (int e = -256; e <= 252; e++)
        for (int k = 0; k < 400; k++, n++) {
            int d = k < 129 ? k - 64 : (int)(rnd() % 9217) - 4608;
            unsigned sa = (unsigned)(e + 256) / 2, sb = (unsigned)(e + 256) - sa;
            float got = a4w4d_block_value(d, sa, sb);
            float want = (float)ldexp((double)d, e);
            bad += fbits(got) != fbits(want);
        }
    bad += !isnan(a4w4d_block_value(1, 0xFF, 127)) + !isnan(a4w4d_block_value(0, 127, 0xFF));
    check(bad == 0, "block value RNE_fp32(d * 2^(sa+sb-256)), every exponent sum", bad, n + 2);
}

/* ---- layouts ------------------------------------------------------------------------------ */
static void test_layouts(void)
{
    static const size_t pre[][2] = {{16, 64}, {48, 320}, {272, 192}, {1024, 5120}};
    long bad = 0, n = 0;
    for (size_t c = 0; c < 4; c++) {
        const size_t N = pre[c][0], K = pre[c][1], nb = N * K / 2;
        unsigned char *w = (unsigned char *)malloc(nb), *a = (unsigned char *)malloc(nb),
                      *b = (unsigned char *)malloc(nb);
        for (size_t i = 0; i < nb; i++)
            w[i] = (unsigned char)rnd();
        a4w4_preshuffle(w, N, K, a);
        for (size_t r = 0; r < N; r++)
            for (size_t g = 0; g < K / 32; g++)
                memcpy(b + a4w4d_granule_index((long long)r, (long long)g, (long long)K, 1) * 16,
                       w + a4w4d_granule_index((long long)r, (long long)g, (long long)K, 0) * 16,
                       16);
        for (size_t i = 0; i < nb; i++, n++)
            bad += a[i] != b[i];
        free(w);
        free(a);
        free(b);
    }
    check(bad == 0, "preshuffle granule map vs a4w4_preshuffle", bad, n);

    bad = n = 0;
    static const size_t act[][2] = {{1, 8}, {33, 24}, {300, 10}, {257, 3}, {64, 160}};
    for (size_t c = 0; c < 5; c++) {
        const size_t M = act[c][0], C = act[c][1];
        const size_t pr = (M + 255) / 256 * 256, pc = (C + 7) / 8 * 8;
        unsigned char *s = (unsigned char *)malloc(M * C), *a = (unsigned char *)malloc(pr * pc),
                      *b = (unsigned char *)malloc(pr * pc);
        for (size_t i = 0; i < M * C; i++)
            s[i] = (unsigned char)rnd();
        a4w4_act_scale_shuffle(s, M, C, 0xFF, 0x00, a);
        for (size_t r = 0; r < pr; r++)
            for (size_t k = 0; k < pc; k++)
                b[a4w4d_swizzle_index((long long)pc, (long long)r, (long long)k)] =
                    k >= C ? 0x00 : (r >= M ? 0xFF : s[r * C + k]);
        for (size_t i = 0; i < pr * pc; i++, n++)
            bad += a[i] != b[i];
        if (M % 32 == 0 && C % 8 == 0) {
            a4w4_scale_swizzle(s, M, C, a);
            for (size_t r = 0; r < M; r++)
                for (size_t k = 0; k < C; k++, n++)
                    bad += a[a4w4d_swizzle_index((long long)C, (long long)r, (long long)k)] !=
                           s[r * C + k];
        }
        free(s);
        free(a);
        free(b);
    }
    check(bad == 0, "swizzle index map vs a4w4_act_scale_shuffle / a4w4_scale_swizzle", bad, n);
}

/* ---- GEMM: the kernel's per-output loop ------------------------------------------------- */
typedef struct {
    const unsigned char *a_fp4, *a_scale, *w_fp4, *w_scale;
    long long M, N, K;
    int a_scale_shuffled, w_preshuffled, w_scale_swizzled;
    long long a_scale_cols;
} emu_args;

static int g_emu_mma; /* 1: the block value of the MMA kernel (a4w4_gpu_mma.h) */

static float emu_split(const emu_args *p, long long m, long long n, long long k0, long long k1)
{
    const long long Ks = p->K / 32;
    float t = 0.0f;
    for (long long gb = k0 / 32; gb < k1 / 32; gb++) {
        uint4 ga, gw;
        memcpy(&ga, p->a_fp4 + a4w4d_granule_index(m, gb, p->K, 0) * 16, 16);
        memcpy(&gw, p->w_fp4 + a4w4d_granule_index(n, gb, p->K, p->w_preshuffled) * 16, 16);
        unsigned av[8], wv[8];
        a4w4d_decode_granule(ga, av);
        a4w4d_decode_granule(gw, wv);
        int d = 0;
        for (int w = 0; w < 8; w++)
            d = a4w4d_dot4((int)av[w], (int)wv[w], d);
        const unsigned sa = p->a_scale[p->a_scale_shuffled
                                           ? a4w4d_swizzle_index(p->a_scale_cols, m, gb)
                                           : m * Ks + gb];
        const unsigned sb =
            p->w_scale[p->w_scale_swizzled ? a4w4d_swizzle_index(Ks, n, gb) : n * Ks + gb];
        if (g_emu_mma) {
            float fa, fa2, fb, fb2;
            a4w4m_row_factors(sa, &fa, &fa2);
            a4w4m_col_factors(sb, &fb, &fb2);
            t = A4W4_FADD(t, a4w4m_block_value(d, fa, fa2, fb, fb2));
        } else {
            t = A4W4_FADD(t, a4w4d_block_value(d, sa, sb));
        }
    }
    return t;
}

static void emu_gemm(const emu_args *p, unsigned S, unsigned short *y)
{
    size_t kps = a4w4_split_k_per_split((size_t)p->K, S);
    for (long long m = 0; m < p->M; m++)
        for (long long n = 0; n < p->N; n++) {
            float t = 0.0f;
            for (long long k0 = 0; k0 < p->K; k0 += (long long)kps) {
                long long k1 = k0 + (long long)kps < p->K ? k0 + (long long)kps : p->K;
                t = A4W4_FADD(t, emu_split(p, m, n, k0, k1));
            }
            y[m * p->N + n] = (unsigned short)a4w4d_f32_to_bf16(t);
        }
}

static long cmp16(const unsigned short *a, const unsigned short *b, size_t n)
{
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += a[i] != b[i] && !((a[i] & 0x7FFF) > 0x7F80 && (b[i] & 0x7FFF) > 0x7F80);
    return bad;
}

static void test_gemm_golden(const char *dir)
{
    static const char *const files[] = {"g1_m1_n256_k512", "g2_m16_n1024_k5120",
                                        "g3_m33_n256_k768", "g4_m4_n128_k2048",
                                        "g5_m8_n48_k320"};
    for (size_t i = 0; i < 5; i++) {
        char path[1024], what[256];
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, files[i]);
        stfile f;
        if (st_load(path, &f)) {
            snprintf(what, sizeof what, "golden %s readable", files[i]);
            check(false, what, 1, 1);
            continue;
        }
        const long long M = (long long)st_meta_size(&f, "M"), N = (long long)st_meta_size(&f, "N"),
                        K = (long long)st_meta_size(&f, "K");
        size_t l;
        emu_args p;
        memset(&p, 0, sizeof p);
        p.M = M;
        p.N = N;
        p.K = K;
        const unsigned char *yo = st_tensor(&f, "y_ordered", &l);
        const unsigned char *wsw = st_tensor(&f, "w_scale_swizzled", &l);
        p.a_fp4 = st_tensor(&f, "a_fp4", &l);
        unsigned short *y = (unsigned short *)malloc((size_t)(M * N) * 2);
        unsigned short *want = (unsigned short *)malloc((size_t)(M * N) * 2);
        memcpy(want, yo, (size_t)(M * N) * 2);
        /* ASM layout from the bundle's own shuffled tensors, when the weight scale swizzles */
        if (wsw) {
            p.a_scale = st_tensor(&f, "a_scale_shuffled", &l);
            p.a_scale_cols = (K / 32 + 7) / 8 * 8;
            p.a_scale_shuffled = 1;
            p.w_fp4 = st_tensor(&f, "w_fp4_shuffled", &l);
            p.w_preshuffled = 1;
            p.w_scale = wsw;
            p.w_scale_swizzled = 1;
            emu_gemm(&p, 1, y);
            long bad = cmp16(y, want, (size_t)(M * N));
            snprintf(what, sizeof what, "golden %s: ASM-layout loop vs y_ordered", files[i]);
            check(bad == 0, what, bad, M * N);
        }
        p.a_scale = st_tensor(&f, "a_scale", &l);
        p.a_scale_shuffled = 0;
        p.w_fp4 = st_tensor(&f, "w_fp4", &l);
        p.w_preshuffled = 0;
        p.w_scale = st_tensor(&f, "w_scale", &l);
        p.w_scale_swizzled = 0;
        emu_gemm(&p, 1, y);
        long bad = cmp16(y, want, (size_t)(M * N));
        snprintf(what, sizeof what, "golden %s: row-major loop vs y_ordered", files[i]);
        check(bad == 0, what, bad, M * N);
        free(y);
        free(want);
        st_free(&f);
    }
}

static void test_gemm_random(void)
{
    static const long long shapes[][3] = {{3, 64, 256}, {5, 32, 768}, {2, 96, 2048}};
    static const unsigned Ss[] = {1, 2, 3, 4, 8};
    for (size_t c = 0; c < 3; c++) {
        const long long M = shapes[c][0], N = shapes[c][1], K = shapes[c][2], C = K / 32;
        unsigned char *a = (unsigned char *)malloc((size_t)(M * K / 2)),
                      *as = (unsigned char *)malloc((size_t)(M * C)),
                      *w = (unsigned char *)malloc((size_t)(N * K / 2)),
                      *ws = (unsigned char *)malloc((size_t)(N * C));
        for (long long i = 0; i < M * K / 2; i++)
            a[i] = (unsigned char)rnd();
        for (long long i = 0; i < N * K / 2; i++)
            w[i] = (unsigned char)rnd();
        /* wide scales: subnormal and overflowing block values, rare NaN */
        for (long long i = 0; i < M * C; i++)
            as[i] = (unsigned char)(rnd() % 3 ? 110 + rnd() % 30 : rnd() % 256);
        for (long long i = 0; i < N * C; i++)
            ws[i] = (unsigned char)(rnd() % 3 ? 110 + rnd() % 30 : rnd() % 255);
        const size_t pc = (size_t)(C + 7) / 8 * 8, pr = (size_t)(M + 255) / 256 * 256;
        unsigned char *ash = (unsigned char *)malloc(pr * pc),
                      *wsh = (unsigned char *)malloc((size_t)(N * K / 2)),
                      *wsw = (unsigned char *)malloc((size_t)(N * C));
        a4w4_act_scale_shuffle(as, (size_t)M, (size_t)C, 0x7F, 0x7F, ash);
        a4w4_preshuffle(w, (size_t)N, (size_t)K, wsh);
        a4w4_scale_swizzle(ws, (size_t)N, (size_t)C, wsw);
        unsigned short *y = (unsigned short *)malloc((size_t)(M * N) * 2),
                       *want = (unsigned short *)malloc((size_t)(M * N) * 2);
        emu_args p = {a, ash, wsh, wsw, M, N, K, 1, 1, 1, (long long)pc};
        for (size_t si = 0; si < 5; si++) {
            char what[160];
            a4w4_gemm_ordered(a, as, w, ws, (size_t)M, (size_t)N, (size_t)K, Ss[si], want, NULL);
            emu_gemm(&p, Ss[si], y);
            long bad = cmp16(y, want, (size_t)(M * N));
            snprintf(what, sizeof what,
                     "random wide M=%lld N=%lld K=%lld: ASM-layout loop vs ordered(%u)", M, N, K,
                     Ss[si]);
            check(bad == 0, what, bad, M * N);
        }
        free(a);
        free(as);
        free(w);
        free(ws);
        free(ash);
        free(wsh);
        free(wsw);
        free(y);
        free(want);
    }
}

/* ---- the MMA kernel (a4w4_gpu_mma.h) ------------------------------------------------------ */
static void test_mma_block_value(void)
{
    long bad = 0, n = 0;
    for (unsigned sa = 0; sa < 256; sa++)
        for (unsigned sb = 0; sb < 256; sb++) {
            float fa, fa2, fb, fb2;
            a4w4m_row_factors(sa, &fa, &fa2);
            a4w4m_col_factors(sb, &fb, &fb2);
            for (int k = 0; k < 24; k++, n++) {
                static const int edge[] = {0, 1, -1, 3, -5, 4608, -4608, 4607};
                const int d = k < 8 ? edge[k] : (int)(rnd() % 9217) - 4608;
                const float got = a4w4m_block_value(d, fa, fa2, fb, fb2);
                const float want = a4w4d_block_value(d, sa, sb);
                bad += fbits(got) != fbits(want) && !(isnan(got) && isnan(want));
            }
        }
    check(bad == 0, "MMA block value from row/column factors, every (sa, sb) x 24 dots", bad, n);
}

/* Each (row, k) of a rows x kk operand (or output) is reached exactly once. */
static long cover(int rows, int kk, const int *row, const int *k, int count)
{
    int seen[32 * 32];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < count; i++)
        if (row[i] >= 0 && row[i] < rows && k[i] >= 0 && k[i] < kk)
            seen[row[i] * kk + k[i]]++;
    long bad = 0;
    for (int i = 0; i < rows * kk; i++)
        bad += seen[i] != 1;
    return bad;
}

static void test_mma_fragments(void)
{
    int row[2048], k[2048], n;
    long bad = 0;
    n = 0; /* NVIDIA A: 32 lanes x 4 regs x 4 bytes over 16 x 32 */
    for (int l = 0; l < 32; l++)
        for (int r = 0; r < 4; r++)
            for (int j = 0; j < 4; j++, n++) {
                row[n] = a4w4m_nv_a_row(l, r);
                k[n] = a4w4m_nv_a_k(l, r) + j;
            }
    bad += cover(16, 32, row, k, n);
    n = 0; /* NVIDIA B: 32 lanes x 2 regs x 4 bytes over 8 x 32 */
    for (int l = 0; l < 32; l++)
        for (int r = 0; r < 2; r++)
            for (int j = 0; j < 4; j++, n++) {
                row[n] = a4w4m_nv_b_row(l);
                k[n] = a4w4m_nv_b_k(l, r) + j;
            }
    bad += cover(8, 32, row, k, n);
    n = 0; /* NVIDIA C: 32 lanes x 4 over 16 x 8 */
    for (int l = 0; l < 32; l++)
        for (int i = 0; i < 4; i++, n++) {
            row[n] = a4w4m_nv_c_row(l, i);
            k[n] = a4w4m_nv_c_col(l, i);
        }
    bad += cover(16, 8, row, k, n);
    n = 0; /* AMD A and B, gfx940+: 64 lanes x 8 bytes over 16 x 32 */
    for (int l = 0; l < 64; l++)
        for (int j = 0; j < 8; j++, n++) {
            row[n] = a4w4m_amd_ab_row(l);
            k[n] = a4w4m_amd_k8(l) + j;
        }
    bad += cover(16, 32, row, k, n);
    n = 0; /* AMD gfx90a: 64 lanes x 2 halves x 4 bytes */
    for (int l = 0; l < 64; l++)
        for (int h = 0; h < 2; h++)
            for (int j = 0; j < 4; j++, n++) {
                row[n] = a4w4m_amd_ab_row(l);
                k[n] = a4w4m_amd_k4(l, h) + j;
            }
    bad += cover(16, 32, row, k, n);
    n = 0; /* AMD C: 64 lanes x 4 over 16 x 16 */
    for (int l = 0; l < 64; l++)
        for (int i = 0; i < 4; i++, n++) {
            row[n] = a4w4m_amd_c_row(l, i);
            k[n] = a4w4m_amd_c_col(l);
        }
    bad += cover(16, 16, row, k, n);
    check(bad == 0, "MMA fragment maps (NVIDIA m16n8k32; AMD 16x16x32, 2x 16x16x16) each "
          "element once", bad, 6);
}

/* The MMA kernel's loop on random cases whose A scales reach 242..254 and 0xFF. */
static void test_mma_gemm_random(void)
{
    g_emu_mma = 1;
    static const long long shapes[][3] = {{3, 64, 256}, {33, 32, 768}, {2, 96, 2048}};
    for (size_t c = 0; c < 3; c++) {
        const long long M = shapes[c][0], N = shapes[c][1], K = shapes[c][2], C = K / 32;
        unsigned char *a = (unsigned char *)malloc((size_t)(M * K / 2)),
                      *as = (unsigned char *)malloc((size_t)(M * C)),
                      *w = (unsigned char *)malloc((size_t)(N * K / 2)),
                      *ws = (unsigned char *)malloc((size_t)(N * C));
        for (long long i = 0; i < M * K / 2; i++)
            a[i] = (unsigned char)rnd();
        for (long long i = 0; i < N * K / 2; i++)
            w[i] = (unsigned char)rnd();
        for (long long i = 0; i < M * C; i++) { /* high A scales facing low W scales */
            const unsigned u = (unsigned)(rnd() % 8);
            as[i] = (unsigned char)(u < 3 ? 242 + rnd() % 13 : u < 6 ? 110 + rnd() % 30
                                   : u < 7 ? rnd() % 256 : 0);
        }
        for (long long i = 0; i < N * C; i++)
            ws[i] = (unsigned char)(rnd() % 2 ? rnd() % 40 : 100 + rnd() % 40);
        unsigned short *y = (unsigned short *)malloc((size_t)(M * N) * 2),
                       *want = (unsigned short *)malloc((size_t)(M * N) * 2);
        emu_args p = {a, as, w, ws, M, N, K, 0, 0, 0, 0};
        static const unsigned Ss[] = {1, 4};
        for (size_t si = 0; si < 2; si++) {
            char what[160];
            a4w4_gemm_ordered(a, as, w, ws, (size_t)M, (size_t)N, (size_t)K, Ss[si], want, NULL);
            emu_gemm(&p, Ss[si], y);
            long bad = cmp16(y, want, (size_t)(M * N));
            snprintf(what, sizeof what, "MMA loop, high scales M=%lld N=%lld K=%lld vs ordered(%u)",
                     M, N, K, Ss[si]);
            check(bad == 0, what, bad, M * N);
        }
        free(a);
        free(as);
        free(w);
        free(ws);
        free(y);
        free(want);
    }
    g_emu_mma = 0;
}

/* q1 bundle: x_f32 / x_bf16 per mode vs a_fp4_<mode>[_from_bf16], a_scale_<mode>[...]. */
static void test_quant_golden(const char *dir)
{
    char path[1024], what[256], tn[96];
    snprintf(path, sizeof path, "%s/q1_quant_modes.safetensors", dir);
    stfile f;
    if (st_load(path, &f)) {
        check(false, "golden q1_quant_modes readable", 1, 1);
        return;
    }
    const size_t rows = st_meta_size(&f, "rows"), K = st_meta_size(&f, "K"), C = K / 32;
    size_t l;
    const unsigned char *xf = st_tensor(&f, "x_f32", &l), *xb = st_tensor(&f, "x_bf16", &l);
    static const char *const modes[4] = {"round_up", "round_down", "ceil", "even"};
    for (int mode = 0; mode < 4; mode++)
        for (int bf = 0; bf < 2; bf++) {
            snprintf(tn, sizeof tn, "a_fp4_%s%s", modes[mode], bf ? "_from_bf16" : "");
            const unsigned char *wq = st_tensor(&f, tn, &l);
            snprintf(tn, sizeof tn, "a_scale_%s%s", modes[mode], bf ? "_from_bf16" : "");
            const unsigned char *wsc = st_tensor(&f, tn, &l);
            long bad = 0;
            for (size_t r = 0; r < rows; r++)
                for (size_t c = 0; c < C; c++) {
                    unsigned bits[32];
                    unsigned char out[16];
                    for (int i = 0; i < 32; i++) {
                        const size_t e = r * K + c * 32 + (size_t)i;
                        if (bf) {
                            unsigned short h;
                            memcpy(&h, xb + e * 2, 2);
                            bits[i] = a4w4d_bf16_bits_to_f32_bits(h);
                        } else {
                            memcpy(&bits[i], xf + e * 4, 4);
                        }
                    }
                    unsigned s = a4w4d_quant_block(bits, mode, out);
                    bad += s != wsc[r * C + c] ||
                           (s != 0xFF && memcmp(out, wq + r * (K / 2) + c * 16, 16) != 0);
                }
            snprintf(what, sizeof what, "golden q1 quant %s%s blocks", modes[mode],
                     bf ? " from bf16" : "");
            check(wq && wsc && bad == 0, what, bad, (long)(rows * C));
        }
    st_free(&f);
}

int main(int argc, char **argv)
{
    const char *golden = argc > 1 ? argv[1] : A4W4_SOURCE_DIR "/cases/golden";
    test_formats();
    test_quant();
    test_block_value();
    test_layouts();
    test_quant_golden(golden);
    test_gemm_golden(golden);
    test_gemm_random();
    test_mma_block_value();
    test_mma_fragments();
    test_mma_gemm_random();
    printf("== emu summary: %ld passed, %ld failed\n%s\n", g_pass, g_fail,
           g_fail ? "RESULT: FAIL" : "RESULT: PASS");
    return g_fail ? 1 : 0;
}
