/* a4w4_gpu_cpu.hip — a CPU stand-in for the C ABI of gpu/a4w4_gpu.h, for testing the test:
 * linked with a4w4_gpu_check it runs the whole check program on a machine without a GPU
 * ("device" pointers are host memory). It computes with the kernels' own __host__ __device__
 * helpers (gpu/a4w4_gpu_device.h), index maps and accumulation order, so a check program
 * that passes against it has working comparisons, guards, oracles and bounds; it says
 * nothing about the GPU's tiling, shared memory or launches (only the real device does).
 * Its argument checks mirror gpu/a4w4_gpu_api.hip. Not part of the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gpu.h"
#include "a4w4_gpu_device.h"
#include "a4w4_gpu_table.h"

static char g_last[256];

/* Fault injection, to prove the checker fails when it should (CTest WILL_FAIL tests):
 * A4W4_GPU_CPU_FAULT=gemm   flip the last bit of every ASM GEMM output (device form)
 *                   =guard  also write one element past the end of y (device form)
 *                   =quant  flip bit 0 of the first scale byte of every quantization
 *                   =atomic-one  the bf16-atomic split-K writes 2^16 at output (M/2, N/2 + 1)
 *                                (one output off a run's sample on most shapes)
 * The bf16-atomic split-K's wrong kernels (contracts §4.1 "atomic(S)": each fails it):
 *                   =atomic-rz    each split total rounded to bf16 toward zero
 *                   =atomic-drop  the last non-empty split never added
 *                   =atomic-fp32  the split totals added in fp32, rounded to bf16 once
 *                   =atomic-zero  every output +0 (the zeroed output, no add)
 * and =atomic-fixed, a right one: every output's splits added in split order (one order). */
static int fault(const char *what)
{
    const char *f = getenv("A4W4_GPU_CPU_FAULT");
    return f && !strcmp(f, what);
}

extern "C" const char *a4w4_gpu_last_error(void) { return g_last; }
extern "C" const char *a4w4_gpu_platform(void) { return "cpu-emulation"; }

extern "C" int a4w4_gpu_available(char *name, size_t len)
{
    if (name && len) {
        strncpy(name, "CPU stand-in (tests/gpu/a4w4_gpu_cpu.hip)", len - 1);
        name[len - 1] = 0;
    }
    return 1;
}

static int aligned16(const void *p) { return ((unsigned long long)p & 15ULL) == 0; }

/* ---- quantizer -------------------------------------------------------------------------- */
static int quant_impl(const void *x, int dtype, size_t M, size_t K, int mode, int shuffle,
                      uint8_t row_fill, uint8_t col_fill, uint8_t *q, uint8_t *s)
{
    size_t t;
    if (!x || !q || !s || dtype < 0 || dtype > 2 || mode < 0 || mode > 3)
        return A4W4_GPU_EARG;
    if (M == 0 || K == 0 || K % 32 || !a4w4g_mul_ok(M, K, &t))
        return A4W4_GPU_ESHAPE;
    const long long cols = (long long)K / 32;
    const long long gr = shuffle ? ((long long)M + 255) / 256 * 256 : (long long)M;
    const long long gc = shuffle ? (cols + 7) / 8 * 8 : cols;
    for (long long r = 0; r < gr; r++)
        for (long long c = 0; c < gc; c++) {
            unsigned v;
            if (r < (long long)M && c < cols) {
                unsigned bits[32];
                for (int i = 0; i < 32; i++) {
                    const long long e = r * (long long)K + c * 32 + i;
                    if (dtype == 0) {
                        memcpy(&bits[i], (const char *)x + e * 4, 4);
                    } else {
                        unsigned short h;
                        memcpy(&h, (const char *)x + e * 2, 2);
                        bits[i] = dtype == 1 ? a4w4d_bf16_bits_to_f32_bits(h)
                                             : a4w4d_fp16_bits_to_f32_bits(h);
                    }
                }
                v = a4w4d_quant_block(bits, mode, q + r * ((long long)K / 2) + c * 16);
            } else {
                v = c >= cols ? col_fill : row_fill;
            }
            s[shuffle ? a4w4d_swizzle_index(gc, r, c) : r * cols + c] = (uint8_t)v;
        }
    if (fault("quant"))
        s[0] ^= 1;
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_quantize(const void *x, int dtype, size_t M, size_t K, int mode,
                                 int shuffle, uint8_t row_fill, uint8_t col_fill, uint8_t *q,
                                 uint8_t *s)
{
    return quant_impl(x, dtype, M, K, mode, shuffle, row_fill, col_fill, q, s);
}

extern "C" int a4w4_gpu_quantize_dev(const void *x, int dtype, size_t M, size_t K, int mode,
                                     int shuffle, uint8_t row_fill, uint8_t col_fill,
                                     uint8_t *q, uint8_t *s, void *stream)
{
    (void)stream;
    return quant_impl(x, dtype, M, K, mode, shuffle, row_fill, col_fill, q, s);
}

/* ---- layouts ------------------------------------------------------------------------------ */
extern "C" int a4w4_gpu_preshuffle(const uint8_t *w, size_t N, size_t K, uint8_t *dst)
{
    size_t t;
    if (!w || !dst)
        return A4W4_GPU_EARG;
    if (!N || !K || !a4w4g_mul_ok(N, K, &t))
        return A4W4_GPU_ESHAPE;
    if (N % 16 || K % 64)
        return A4W4_GPU_ELAYOUT;
    for (long long r = 0; r < (long long)N; r++)
        for (long long g = 0; g < (long long)K / 32; g++)
            memcpy(dst + a4w4d_granule_index(r, g, (long long)K, 1) * 16,
                   w + a4w4d_granule_index(r, g, (long long)K, 0) * 16, 16);
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_preshuffle_dev(const uint8_t *w, size_t N, size_t K, uint8_t *dst,
                                       void *stream)
{
    (void)stream;
    return a4w4_gpu_preshuffle(w, N, K, dst);
}

extern "C" int a4w4_gpu_scale_swizzle(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst)
{
    size_t t;
    if (!src || !dst)
        return A4W4_GPU_EARG;
    if (!rows || !cols || !a4w4g_mul_ok(rows, cols, &t))
        return A4W4_GPU_ESHAPE;
    if (rows % 32 || cols % 8)
        return A4W4_GPU_ELAYOUT;
    for (long long r = 0; r < (long long)rows; r++)
        for (long long c = 0; c < (long long)cols; c++)
            dst[a4w4d_swizzle_index((long long)cols, r, c)] = src[r * (long long)cols + c];
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_scale_swizzle_dev(const uint8_t *src, size_t rows, size_t cols,
                                          uint8_t *dst, void *stream)
{
    (void)stream;
    return a4w4_gpu_scale_swizzle(src, rows, cols, dst);
}

extern "C" int a4w4_gpu_act_scale_shuffle(const uint8_t *src, size_t M, size_t cols,
                                          uint8_t row_fill, uint8_t col_fill, uint8_t *dst)
{
    if (!src || !dst)
        return A4W4_GPU_EARG;
    if (!a4w4_gpu_act_scale_shuffled_bytes(M, cols))
        return A4W4_GPU_ESHAPE;
    const long long pr = ((long long)M + 255) / 256 * 256, pc = ((long long)cols + 7) / 8 * 8;
    for (long long r = 0; r < pr; r++)
        for (long long c = 0; c < pc; c++)
            dst[a4w4d_swizzle_index(pc, r, c)] =
                c >= (long long)cols ? col_fill
                                     : (r >= (long long)M ? row_fill : src[r * (long long)cols + c]);
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_act_scale_shuffle_dev(const uint8_t *src, size_t M, size_t cols,
                                              uint8_t row_fill, uint8_t col_fill, uint8_t *dst,
                                              void *stream)
{
    (void)stream;
    return a4w4_gpu_act_scale_shuffle(src, M, cols, row_fill, col_fill, dst);
}

/* ---- GEMMs ---------------------------------------------------------------------------------- */
typedef struct {
    const uint8_t *a, *as, *w, *ws;
    long long M, N, K, pcol;
    int a_shuf, w_pre, w_swz;
} gargs;

/* Row r's granules decoded (a4w4d_decode_granule: 8 words of packed int8 each, granule gb at
 * dst[gb * 8]) and its K/32 scales read through the layout's index map: what the kernel reads
 * for every block of the row. Decoded once per row of A and of W per call, not once per
 * output (the same words: split_total's sums are unchanged). */
static void decode_row(const uint8_t *fp4, const uint8_t *sc, long long r, long long K,
                       int pre, int swz, long long pcol, unsigned *dst, unsigned *scales)
{
    const long long Ks = K / 32;
    for (long long gb = 0; gb < Ks; gb++) {
        uint4 g;
        memcpy(&g, fp4 + a4w4d_granule_index(r, gb, K, pre) * 16, 16);
        a4w4d_decode_granule(g, dst + gb * 8);
        scales[gb] = sc[swz ? a4w4d_swizzle_index(pcol, r, gb) : r * Ks + gb];
    }
}

/* One split's total of output (m, n): blocks k0/32 .. k1/32 - 1 of the decoded rows, each
 * block's value RNE_fp32(d * 2^(sa+sb-256)) added in fp32 in K order (the kernel's order). */
static float split_total(const unsigned *ad, const unsigned *as, const unsigned *wd,
                         const unsigned *ws, long long k0, long long k1)
{
    float t = 0.0f;
    for (long long gb = k0 / 32; gb < k1 / 32; gb++) {
        int d = 0;
        for (int i = 0; i < 8; i++)
            d = a4w4d_dot4((int)ad[gb * 8 + i], (int)wd[gb * 8 + i], d);
        t = A4W4_FADD(t, a4w4d_block_value(d, as[gb], ws[gb]));
    }
    return t;
}

static unsigned g_order_seed = 12345;

static int gemm_impl(const gargs *p, unsigned splits, int atomic, uint16_t *y)
{
    const long long kps = (long long)a4w4_gpu_split_k_per_split((size_t)p->K, splits);
    const int ns = (int)a4w4_gpu_split_count((size_t)p->K, splits);
    const long long Ks = p->K / 32;
    float part[4096];
    /* W decoded whole (N * K bytes of words, N * K/32 scales), A one row at a time */
    unsigned *wd = (unsigned *)malloc((size_t)(p->N * Ks) * 8 * sizeof(unsigned));
    unsigned *ws = (unsigned *)malloc((size_t)(p->N * Ks) * sizeof(unsigned));
    unsigned *ad = (unsigned *)malloc((size_t)Ks * 9 * sizeof(unsigned)), *as = ad + Ks * 8;
    if (!wd || !ws || !ad) {
        free(wd);
        free(ws);
        free(ad);
        snprintf(g_last, sizeof g_last, "CPU stand-in GEMM: out of memory decoding W");
        return A4W4_GPU_ENOMEM;
    }
    for (long long n = 0; n < p->N; n++)
        decode_row(p->w, p->ws, n, p->K, p->w_pre, p->w_swz, Ks, wd + n * Ks * 8, ws + n * Ks);
    for (long long m = 0; m < p->M; m++) {
        decode_row(p->a, p->as, m, p->K, 0, p->a_shuf, p->pcol, ad, as);
        for (long long n = 0; n < p->N; n++) {
            for (int s = 0; s < ns; s++) {
                long long k0 = s * kps, k1 = k0 + kps < p->K ? k0 + kps : p->K;
                part[s] = split_total(ad, as, wd + n * Ks * 8, ws + n * Ks, k0, k1);
            }
            if (!atomic) {
                float t = 0.0f;
                for (int s = 0; s < ns; s++)
                    t = A4W4_FADD(t, part[s]);
                y[m * p->N + n] = (uint16_t)a4w4d_f32_to_bf16(t);
            } else { /* bf16 atomics in a pseudo-random split order */
                unsigned cur = 0;
                int start = (int)((g_order_seed = g_order_seed * 1103515245u + 12345u) >> 16) % ns;
                start = fault("atomic-fixed") ? 0 : start;
                const int adds = fault("atomic-drop") && ns > 1 ? ns - 1 : ns;
                float f32 = 0.0f;
                for (int i = 0; i < adds; i++) {
                    const int s = fault("atomic-drop") ? i : (start + i) % ns;
                    unsigned qb = a4w4d_f32_to_bf16(part[s]);
                    if (fault("atomic-rz")) /* truncation, NaN left alone */
                        qb = (a4w4d_u(part[s]) & 0x7FFFFFFFu) > 0x7F800000u
                                 ? qb : a4w4d_u(part[s]) >> 16;
                    f32 = A4W4_FADD(f32, part[s]);
                    cur = a4w4d_f32_to_bf16(A4W4_FADD(a4w4d_bf16_to_f32(cur), a4w4d_bf16_to_f32(qb)));
                }
                if (fault("atomic-fp32"))
                    cur = a4w4d_f32_to_bf16(f32);
                if (fault("atomic-zero"))
                    cur = 0;
                y[m * p->N + n] = (uint16_t)cur;
                if (m == p->M / 2 && n == p->N / 2 + 1 && fault("atomic-one"))
                    y[m * p->N + n] = 0x4780; /* 65536: far outside any bound here */
            }
        }
    }
    free(wd);
    free(ws);
    free(ad);
    return A4W4_GPU_OK;
}

static int check_shape(size_t M, size_t N, size_t K)
{
    size_t t;
    if (!M || !N || !K || K % 32 || !a4w4g_mul_ok(M, K, &t) || !a4w4g_mul_ok(N, K, &t) ||
        !a4w4g_mul_ok(M, N, &t))
        return A4W4_GPU_ESHAPE;
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_gemm_asm_dev(int tile, unsigned splits, int split_mode,
                                     const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                                     const uint8_t *w_fp4, const uint8_t *w_scale_swizzled,
                                     size_t M, size_t N, size_t K, uint16_t *y, void *workspace,
                                     size_t workspace_bytes, void *stream)
{
    (void)stream;
    if (!a_fp4 || !a_scale_shuffled || !w_fp4 || !w_scale_swizzled || !y)
        return A4W4_GPU_EARG;
    const a4w4_gpu_tile *tl = a4w4_gpu_tile_get(tile);
    if (!tl || !splits || (split_mode != 0 && split_mode != 1))
        return A4W4_GPU_EARG;
    int rc = check_shape(M, N, K);
    if (rc)
        return rc;
    if (N % 32 || (K / 32) % 8)
        return A4W4_GPU_ELAYOUT;
    if (!aligned16(a_fp4) || !aligned16(w_fp4) || !aligned16(y))
        return A4W4_GPU_EARG;
    if (workspace &&
        workspace_bytes < a4w4_gpu_gemm_workspace_bytes(M, N, K, splits, split_mode))
        return A4W4_GPU_EARG;
    if (a4w4_gpu_split_count(K, splits) > 4096)
        return A4W4_GPU_ESHAPE;
    gargs p = {a_fp4, a_scale_shuffled, w_fp4, w_scale_swizzled, (long long)M, (long long)N,
               (long long)K, (long long)((K / 32 + 7) / 8 * 8), 1, tl->bpreshuffle, 1};
    if ((rc = gemm_impl(&p, splits, split_mode, y)) != A4W4_GPU_OK)
        return rc;
    if (fault("gemm") || fault("guard"))
        y[M * N - 1] ^= 1;
    if (fault("guard"))
        y[M * N] = 0;
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_gemm_asm(int tile, unsigned splits, int split_mode, const uint8_t *a_fp4,
                                 const uint8_t *a_scale_shuffled, const uint8_t *w_fp4,
                                 const uint8_t *w_scale_swizzled, size_t M, size_t N, size_t K,
                                 uint16_t *y)
{
    /* host form: the caller's buffers need not be aligned */
    if (!a_fp4 || !a_scale_shuffled || !w_fp4 || !w_scale_swizzled || !y)
        return A4W4_GPU_EARG;
    const a4w4_gpu_tile *tl = a4w4_gpu_tile_get(tile);
    if (!tl || !splits || (split_mode != 0 && split_mode != 1))
        return A4W4_GPU_EARG;
    int rc = check_shape(M, N, K);
    if (rc)
        return rc;
    if (N % 32 || (K / 32) % 8)
        return A4W4_GPU_ELAYOUT;
    gargs p = {a_fp4, a_scale_shuffled, w_fp4, w_scale_swizzled, (long long)M, (long long)N,
               (long long)K, (long long)((K / 32 + 7) / 8 * 8), 1, tl->bpreshuffle, 1};
    return gemm_impl(&p, splits, split_mode, y);
}

extern "C" int a4w4_gpu_gemm_rowmajor(const uint8_t *a_fp4, const uint8_t *a_scale,
                                      const uint8_t *w_fp4, const uint8_t *w_scale, size_t M,
                                      size_t N, size_t K, uint16_t *y)
{
    if (!a_fp4 || !a_scale || !w_fp4 || !w_scale || !y)
        return A4W4_GPU_EARG;
    int rc = check_shape(M, N, K);
    if (rc)
        return rc;
    gargs p = {a_fp4, a_scale, w_fp4, w_scale, (long long)M, (long long)N, (long long)K, 0,
               0, 0, 0};
    return gemm_impl(&p, 1, 0, y);
}

extern "C" int a4w4_gpu_gemm_rowmajor_dev(const uint8_t *a_fp4, const uint8_t *a_scale,
                                          const uint8_t *w_fp4, const uint8_t *w_scale,
                                          size_t M, size_t N, size_t K, uint16_t *y,
                                          void *stream)
{
    (void)stream;
    if (a_fp4 && w_fp4 && (!aligned16(a_fp4) || !aligned16(w_fp4)))
        return A4W4_GPU_EARG;
    return a4w4_gpu_gemm_rowmajor(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y);
}

/* The engine forms: the stand-in has one arithmetic (the ordered(S) loop) for both kernels. */
static int engine_ok(int engine)
{
    return engine == A4W4_GPU_ENGINE_PORTABLE || engine == A4W4_GPU_ENGINE_MMA;
}

extern "C" int a4w4_gpu_gemm_asm_engine(int engine, int tile, unsigned splits, int split_mode,
                                        const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                                        const uint8_t *w_fp4, const uint8_t *w_scale_swizzled,
                                        size_t M, size_t N, size_t K, uint16_t *y)
{
    return engine_ok(engine) ? a4w4_gpu_gemm_asm(tile, splits, split_mode, a_fp4,
                                                 a_scale_shuffled, w_fp4, w_scale_swizzled, M, N,
                                                 K, y)
                             : A4W4_GPU_EARG;
}

extern "C" int a4w4_gpu_gemm_asm_engine_dev(int engine, int tile, unsigned splits,
                                            int split_mode, const uint8_t *a_fp4,
                                            const uint8_t *a_scale_shuffled,
                                            const uint8_t *w_fp4,
                                            const uint8_t *w_scale_swizzled, size_t M, size_t N,
                                            size_t K, uint16_t *y, void *workspace,
                                            size_t workspace_bytes, void *stream)
{
    /* the matrix-unit kernel's split-K needs only an fp32 [M, N] accumulator (a4w4_gpu.h) */
    if (engine == A4W4_GPU_ENGINE_MMA && workspace &&
        (workspace_bytes < M * N * 4 || ((unsigned long long)workspace & 3ULL)))
        return A4W4_GPU_EARG;
    return engine_ok(engine)
               ? a4w4_gpu_gemm_asm_dev(tile, splits, split_mode, a_fp4, a_scale_shuffled, w_fp4,
                                       w_scale_swizzled, M, N, K, y,
                                       engine == A4W4_GPU_ENGINE_MMA ? NULL : workspace,
                                       engine == A4W4_GPU_ENGINE_MMA ? 0 : workspace_bytes,
                                       stream)
               : A4W4_GPU_EARG;
}

extern "C" int a4w4_gpu_gemm_rowmajor_engine(int engine, const uint8_t *a_fp4,
                                             const uint8_t *a_scale, const uint8_t *w_fp4,
                                             const uint8_t *w_scale, size_t M, size_t N,
                                             size_t K, uint16_t *y)
{
    return engine_ok(engine)
               ? a4w4_gpu_gemm_rowmajor(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y)
               : A4W4_GPU_EARG;
}

extern "C" int a4w4_gpu_gemm_rowmajor_engine_dev(int engine, const uint8_t *a_fp4,
                                                 const uint8_t *a_scale, const uint8_t *w_fp4,
                                                 const uint8_t *w_scale, size_t M, size_t N,
                                                 size_t K, uint16_t *y, void *stream)
{
    return engine_ok(engine) ? a4w4_gpu_gemm_rowmajor_dev(a_fp4, a_scale, w_fp4, w_scale, M, N,
                                                          K, y, stream)
                             : A4W4_GPU_EARG;
}

/* ---- memory and timers ------------------------------------------------------------------------ */
/* Device allocations made so far; with A4W4_GPU_CPU_COUNT=FILE set, written to FILE at exit
 * (tests/gpu/cpu_stages.sh holds the harness to keeping its device buffers across cases). */
static unsigned long g_allocs;

static void write_alloc_count(void)
{
    const char *path = getenv("A4W4_GPU_CPU_COUNT");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "%lu\n", g_allocs);
        fclose(f);
    }
}

extern "C" int a4w4_gpu_malloc(void **ptr, size_t bytes)
{
    if (!ptr)
        return A4W4_GPU_EARG;
    if (!g_allocs++)
        atexit(write_alloc_count);
    *ptr = aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
    return *ptr ? A4W4_GPU_OK : A4W4_GPU_ENOMEM;
}

extern "C" int a4w4_gpu_free(void *ptr)
{
    free(ptr);
    return A4W4_GPU_OK;
}

/* Host-to-device copies made so far; with A4W4_GPU_CPU_UPLOADS=FILE set, written to FILE at
 * exit (tests/gpu/cpu_pad_uploads.sh holds the harness to uploading a case's operands once,
 * not once per backend or pad variant). */
static unsigned long g_uploads;

static void write_upload_count(void)
{
    const char *path = getenv("A4W4_GPU_CPU_UPLOADS");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "%lu\n", g_uploads);
        fclose(f);
    }
}

extern "C" int a4w4_gpu_memcpy_h2d(void *d, const void *s, size_t n)
{
    if (!g_uploads++)
        atexit(write_upload_count);
    if (n)
        memcpy(d, s, n);
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_memcpy_d2h(void *d, const void *s, size_t n)
{
    if (n)
        memcpy(d, s, n);
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_memcpy_d2d(void *d, const void *s, size_t n, void *stream)
{
    (void)stream;
    if (n)
        memcpy(d, s, n);
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_memset(void *d, int v, size_t n)
{
    if (n)
        memset(d, v, n);
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_synchronize(void) { return A4W4_GPU_OK; }

struct a4w4_gpu_timer {
    int dummy;
};

extern "C" int a4w4_gpu_timer_create(a4w4_gpu_timer **t)
{
    *t = (a4w4_gpu_timer *)calloc(1, sizeof **t);
    return *t ? A4W4_GPU_OK : A4W4_GPU_ENOMEM;
}

extern "C" int a4w4_gpu_timer_start(a4w4_gpu_timer *t, void *s)
{
    (void)t;
    (void)s;
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_timer_stop(a4w4_gpu_timer *t, void *s)
{
    (void)t;
    (void)s;
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_timer_elapsed_ms(a4w4_gpu_timer *t, float *ms)
{
    (void)t;
    *ms = 0.0f;
    return A4W4_GPU_OK;
}

extern "C" void a4w4_gpu_timer_destroy(a4w4_gpu_timer *t) { free(t); }

/* The test-only faults are the device kernels' (the GPU mutants); the stand-in records the
 * setting and computes correctly whatever it is. */
static int g_cpu_fault;

extern "C" int a4w4_gpu_set_fault(int fault)
{
    if (fault < A4W4_GPU_FAULT_NONE || fault >= A4W4_GPU_FAULT_COUNT)
        return A4W4_GPU_EARG;
    g_cpu_fault = fault;
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_get_fault(void) { return g_cpu_fault; }
