/* a4w4_gpu_api.hip — the C ABI of gpu/a4w4_gpu.h that touches the GPU runtime: argument
 * checks, host convenience forms (allocate, copy, launch, copy back), device forms, memory and
 * timers (the tile table and pure helpers are in a4w4_gpu_table.hip). Never prints, never
 * exits; the runtime's last message is kept per thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include "a4w4_gpu.h"
#include "a4w4_gpu_internal.h"
#include "a4w4_gpu_table.h"

/* ---- errors -------------------------------------------------------------------------- */
static thread_local char g_last_error[256];

static void set_last(const char *what, hipError_t e)
{
    snprintf(g_last_error, sizeof g_last_error, "%s: %s", what, hipGetErrorString(e));
}

static void set_last_msg(const char *msg)
{
    snprintf(g_last_error, sizeof g_last_error, "%s", msg);
}

/* Map a runtime error; `dflt` is the class when the error is neither OOM nor no-device. */
static int map_err(hipError_t e, const char *what, int dflt)
{
    if (e == hipSuccess)
        return A4W4_GPU_OK;
    set_last(what, e);
    (void)hipGetLastError(); /* clear a non-sticky error so later calls start clean */
    if (e == hipErrorMemoryAllocation)
        return A4W4_GPU_ENOMEM;
    if (e == hipErrorNoDevice || e == hipErrorInsufficientDriver)
        return A4W4_GPU_ENODEV;
    return dflt;
}

extern "C" const char *a4w4_gpu_last_error(void) { return g_last_error; }

/* ---- fault injection (test only; a4w4_gpu.h) ------------------------------------------- */
static std::atomic<int> g_fault{A4W4_GPU_FAULT_NONE};

int a4w4g_fault(void) { return g_fault.load(std::memory_order_relaxed); }

extern "C" int a4w4_gpu_set_fault(int fault)
{
    if (fault < A4W4_GPU_FAULT_NONE || fault >= A4W4_GPU_FAULT_COUNT)
        return A4W4_GPU_EARG;
    g_fault.store(fault, std::memory_order_relaxed);
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_get_fault(void) { return a4w4g_fault(); }

extern "C" const char *a4w4_gpu_platform(void) { return A4W4_PLATFORM_NAME; }

extern "C" int a4w4_gpu_available(char *name, size_t len)
{
    int n = 0;
    hipError_t e = hipGetDeviceCount(&n);
    if (e != hipSuccess || n < 0) {
        set_last("hipGetDeviceCount", e);
        (void)hipGetLastError();
        n = 0;
    }
    if (name && len > 0) {
        name[0] = '\0';
        if (n > 0) {
            hipDeviceProp_t prop;
            if (hipGetDeviceProperties(&prop, 0) == hipSuccess) {
                strncpy(name, prop.name, len - 1);
                name[len - 1] = '\0';
            } else {
                (void)hipGetLastError();
            }
        }
    }
    return n;
}

static int need_device(void)
{
    if (a4w4_gpu_available(NULL, 0) > 0)
        return A4W4_GPU_OK;
    if (!g_last_error[0])
        set_last_msg("no GPU device");
    return A4W4_GPU_ENODEV;
}

/* ---- shape helpers ------------------------------------------------------------------- */
static int aligned16(const void *p) { return ((unsigned long long)p & 15ULL) == 0; }

/* Common GEMM shape check: M, N, K >= 1, K % 32 == 0, products in range. */
static int check_gemm_shape(size_t M, size_t N, size_t K)
{
    size_t t;
    if (M == 0 || N == 0 || K == 0 || K % 32 != 0)
        return A4W4_GPU_ESHAPE;
    if (!a4w4g_mul_ok(M, K, &t) || !a4w4g_mul_ok(N, K, &t) || !a4w4g_mul_ok(M, N, &t))
        return A4W4_GPU_ESHAPE;
    return A4W4_GPU_OK;
}

/* ---- device buffer set for the host forms --------------------------------------------- */
typedef struct {
    void *p[8];
    int n;
} bufset;

static int bs_alloc(bufset *b, void **out, size_t bytes)
{
    *out = NULL;
    hipError_t e = hipMalloc(out, bytes ? bytes : 1);
    if (e != hipSuccess) {
        *out = NULL;
        return map_err(e, "hipMalloc", A4W4_GPU_ENOMEM);
    }
    b->p[b->n++] = *out;
    return A4W4_GPU_OK;
}

static int bs_upload(bufset *b, void **out, const void *host, size_t bytes)
{
    int rc = bs_alloc(b, out, bytes);
    if (rc)
        return rc;
    return map_err(hipMemcpy(*out, host, bytes, hipMemcpyHostToDevice), "hipMemcpy H2D",
                   A4W4_GPU_ERUNTIME);
}

static void bs_free(bufset *b)
{
    for (int i = 0; i < b->n; i++)
        (void)hipFree(b->p[i]);
    b->n = 0;
}

/* Synchronise and fold any kernel fault into ELAUNCH. */
static int sync_status(void)
{
    return map_err(hipDeviceSynchronize(), "kernel execution", A4W4_GPU_ELAUNCH);
}

static int download(void *host, const void *dev, size_t bytes)
{
    return map_err(hipMemcpy(host, dev, bytes, hipMemcpyDeviceToHost), "hipMemcpy D2H",
                   A4W4_GPU_ERUNTIME);
}

/* ---- quantizer ------------------------------------------------------------------------ */
static int check_quant(const void *x, int dtype, size_t M, size_t K, int mode, int shuffle,
                       const uint8_t *x_fp4, const uint8_t *x_scale, size_t *x_bytes,
                       size_t *s_bytes)
{
    size_t t;
    if (!x || !x_fp4 || !x_scale)
        return A4W4_GPU_EARG;
    if (dtype < A4W4_GPU_IN_F32 || dtype > A4W4_GPU_IN_FP16 || mode < 0 || mode > 3)
        return A4W4_GPU_EARG;
    if (M == 0 || K == 0 || K % 32 != 0 || !a4w4g_mul_ok(M, K, &t))
        return A4W4_GPU_ESHAPE;
    *x_bytes = t * (dtype == A4W4_GPU_IN_F32 ? 4 : 2);
    *s_bytes = shuffle ? a4w4_gpu_act_scale_shuffled_bytes(M, K / 32) : M * (K / 32);
    return *s_bytes ? A4W4_GPU_OK : A4W4_GPU_ESHAPE;
}

extern "C" int a4w4_gpu_quantize_dev(const void *x, int dtype, size_t M, size_t K, int mode,
                                     int shuffle, uint8_t row_fill, uint8_t col_fill,
                                     uint8_t *x_fp4, uint8_t *x_scale, void *stream)
{
    size_t xb, sb;
    int rc = check_quant(x, dtype, M, K, mode, shuffle, x_fp4, x_scale, &xb, &sb);
    if (rc)
        return rc;
    if (((unsigned long long)x & (dtype == A4W4_GPU_IN_F32 ? 3ULL : 1ULL)) != 0)
        return A4W4_GPU_EARG;
    return map_err(a4w4g_launch_quantize(x, dtype, (long long)M, (long long)K, mode,
                                         shuffle ? 1 : 0, row_fill, col_fill, x_fp4, x_scale,
                                         (hipStream_t)stream),
                   "quantize launch", A4W4_GPU_ELAUNCH);
}

extern "C" int a4w4_gpu_quantize(const void *x, int dtype, size_t M, size_t K, int mode,
                                 int shuffle, uint8_t row_fill, uint8_t col_fill,
                                 uint8_t *x_fp4, uint8_t *x_scale)
{
    size_t xb, sb;
    int rc = check_quant(x, dtype, M, K, mode, shuffle, x_fp4, x_scale, &xb, &sb);
    if (rc)
        return rc;
    if ((rc = need_device()))
        return rc;
    bufset b = {{0}, 0};
    void *dx, *dq, *ds;
    if (!(rc = bs_upload(&b, &dx, x, xb)) && !(rc = bs_alloc(&b, &dq, M * K / 2)) &&
        !(rc = bs_alloc(&b, &ds, sb)) &&
        !(rc = a4w4_gpu_quantize_dev(dx, dtype, M, K, mode, shuffle, row_fill, col_fill,
                                     (uint8_t *)dq, (uint8_t *)ds, NULL)) &&
        !(rc = sync_status()) && !(rc = download(x_fp4, dq, M * K / 2)))
        rc = download(x_scale, ds, sb);
    bs_free(&b);
    return rc;
}

/* ---- layouts -------------------------------------------------------------------------- */
static int check_preshuffle(const uint8_t *w, size_t N, size_t K, const uint8_t *dst)
{
    size_t t;
    if (!w || !dst)
        return A4W4_GPU_EARG;
    if (N == 0 || K == 0 || !a4w4g_mul_ok(N, K, &t))
        return A4W4_GPU_ESHAPE;
    if (N % 16 != 0 || K % 64 != 0)
        return A4W4_GPU_ELAYOUT;
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_preshuffle_dev(const uint8_t *w, size_t N, size_t K, uint8_t *dst,
                                       void *stream)
{
    int rc = check_preshuffle(w, N, K, dst);
    if (rc)
        return rc;
    if (!aligned16(w) || !aligned16(dst))
        return A4W4_GPU_EARG;
    return map_err(a4w4g_launch_preshuffle(w, (long long)N, (long long)K, dst,
                                           (hipStream_t)stream),
                   "preshuffle launch", A4W4_GPU_ELAUNCH);
}

extern "C" int a4w4_gpu_preshuffle(const uint8_t *w, size_t N, size_t K, uint8_t *dst)
{
    int rc = check_preshuffle(w, N, K, dst);
    if (rc || (rc = need_device()))
        return rc;
    bufset b = {{0}, 0};
    void *dw, *dd;
    const size_t bytes = N * K / 2;
    if (!(rc = bs_upload(&b, &dw, w, bytes)) && !(rc = bs_alloc(&b, &dd, bytes)) &&
        !(rc = a4w4_gpu_preshuffle_dev((const uint8_t *)dw, N, K, (uint8_t *)dd, NULL)) &&
        !(rc = sync_status()))
        rc = download(dst, dd, bytes);
    bs_free(&b);
    return rc;
}

static int check_swizzle(const uint8_t *src, size_t rows, size_t cols, const uint8_t *dst)
{
    size_t t;
    if (!src || !dst)
        return A4W4_GPU_EARG;
    if (rows == 0 || cols == 0 || !a4w4g_mul_ok(rows, cols, &t))
        return A4W4_GPU_ESHAPE;
    if (rows % 32 != 0 || cols % 8 != 0)
        return A4W4_GPU_ELAYOUT;
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_scale_swizzle_dev(const uint8_t *src, size_t rows, size_t cols,
                                          uint8_t *dst, void *stream)
{
    int rc = check_swizzle(src, rows, cols, dst);
    if (rc)
        return rc;
    return map_err(a4w4g_launch_scale_swizzle(src, (long long)rows, (long long)cols, dst,
                                              (hipStream_t)stream),
                   "scale swizzle launch", A4W4_GPU_ELAUNCH);
}

extern "C" int a4w4_gpu_scale_swizzle(const uint8_t *src, size_t rows, size_t cols,
                                      uint8_t *dst)
{
    int rc = check_swizzle(src, rows, cols, dst);
    if (rc || (rc = need_device()))
        return rc;
    bufset b = {{0}, 0};
    void *ds, *dd;
    const size_t bytes = rows * cols;
    if (!(rc = bs_upload(&b, &ds, src, bytes)) && !(rc = bs_alloc(&b, &dd, bytes)) &&
        !(rc = a4w4_gpu_scale_swizzle_dev((const uint8_t *)ds, rows, cols, (uint8_t *)dd,
                                          NULL)) &&
        !(rc = sync_status()))
        rc = download(dst, dd, bytes);
    bs_free(&b);
    return rc;
}

static int check_act_shuffle(const uint8_t *src, size_t M, size_t cols, const uint8_t *dst)
{
    if (!src || !dst)
        return A4W4_GPU_EARG;
    if (a4w4_gpu_act_scale_shuffled_bytes(M, cols) == 0)
        return A4W4_GPU_ESHAPE;
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_act_scale_shuffle_dev(const uint8_t *src, size_t M, size_t cols,
                                              uint8_t row_fill, uint8_t col_fill, uint8_t *dst,
                                              void *stream)
{
    int rc = check_act_shuffle(src, M, cols, dst);
    if (rc)
        return rc;
    return map_err(a4w4g_launch_act_scale_shuffle(src, (long long)M, (long long)cols, row_fill,
                                                  col_fill, dst, (hipStream_t)stream),
                   "act scale shuffle launch", A4W4_GPU_ELAUNCH);
}

extern "C" int a4w4_gpu_act_scale_shuffle(const uint8_t *src, size_t M, size_t cols,
                                          uint8_t row_fill, uint8_t col_fill, uint8_t *dst)
{
    int rc = check_act_shuffle(src, M, cols, dst);
    if (rc || (rc = need_device()))
        return rc;
    bufset b = {{0}, 0};
    void *ds, *dd;
    const size_t out = a4w4_gpu_act_scale_shuffled_bytes(M, cols);
    if (!(rc = bs_upload(&b, &ds, src, M * cols)) && !(rc = bs_alloc(&b, &dd, out)) &&
        !(rc = a4w4_gpu_act_scale_shuffle_dev((const uint8_t *)ds, M, cols, row_fill, col_fill,
                                              (uint8_t *)dd, NULL)) &&
        !(rc = sync_status()))
        rc = download(dst, dd, out);
    bs_free(&b);
    return rc;
}

/* ---- GEMMs ---------------------------------------------------------------------------- */
static int check_grid(size_t M, size_t N, int tile_m, int tile_n, unsigned nsplit)
{
    const size_t mt = (M + tile_m - 1) / tile_m, nt = (N + tile_n - 1) / tile_n;
    size_t blocks;
    if (!a4w4g_mul_ok(mt, nt, &blocks) || blocks > (1ULL << 24) || nsplit > 65535)
        return A4W4_GPU_ESHAPE;
    return A4W4_GPU_OK;
}

static int check_asm(int tile, unsigned splits, int split_mode, const uint8_t *a_fp4,
                     const uint8_t *a_scale, const uint8_t *w_fp4, const uint8_t *w_scale,
                     size_t M, size_t N, size_t K, const uint16_t *y)
{
    if (!a_fp4 || !a_scale || !w_fp4 || !w_scale || !y)
        return A4W4_GPU_EARG;
    if (tile < 0 || tile >= a4w4_gpu_tile_count() || splits == 0 ||
        (split_mode != A4W4_GPU_SPLIT_ORDERED && split_mode != A4W4_GPU_SPLIT_ATOMIC))
        return A4W4_GPU_EARG;
    int rc = check_gemm_shape(M, N, K);
    if (rc)
        return rc;
    /* w_scale [N, K/32] must be swizzle-supported (§3.2); that implies the preshuffle rule. */
    if (N % 32 != 0 || (K / 32) % 8 != 0)
        return A4W4_GPU_ELAYOUT;
    if (a4w4_gpu_act_scale_shuffled_bytes(M, K / 32) == 0)
        return A4W4_GPU_ESHAPE;
    return check_grid(M, N, (*a4w4_gpu_tile_get(tile)).tile_m, (*a4w4_gpu_tile_get(tile)).tile_n,
                      a4w4_gpu_split_count(K, splits));
}

/* The kernel of a->engine (the portable one reads the test-only fault in force). */
static hipError_t launch_engine(const a4w4g_gemm_args *a, hipStream_t stream)
{
    return a->engine == A4W4_GPU_ENGINE_MMA ? a4w4g_launch_gemm_mma(a, stream)
                                            : a4w4g_launch_gemm(a, stream);
}

/* Enqueue one GEMM given checked arguments. */
static int run_gemm(a4w4g_gemm_args *a, unsigned splits, int split_mode, void *workspace,
                    size_t workspace_bytes, hipStream_t stream)
{
    const size_t M = (size_t)a->M, N = (size_t)a->N, K = (size_t)a->K;
    const unsigned ns = a4w4_gpu_split_count(K, splits);
    a->k_per_split = (long long)a4w4_gpu_split_k_per_split(K, splits);
    a->splits = (int)ns;
    a->partial = NULL;
    if (split_mode == A4W4_GPU_SPLIT_ATOMIC) {
        int rc = map_err(hipMemsetAsync(a->y, 0, M * N * 2, stream), "hipMemsetAsync",
                         A4W4_GPU_ERUNTIME);
        if (rc)
            return rc;
        a->out_mode = A4W4G_OUT_ATOMIC;
        return map_err(launch_engine(a, stream), "gemm launch", A4W4_GPU_ELAUNCH);
    }
    if (ns <= 1) {
        a->out_mode = A4W4G_OUT_BF16;
        return map_err(launch_engine(a, stream), "gemm launch", A4W4_GPU_ELAUNCH);
    }
    const int mma = a->engine == A4W4_GPU_ENGINE_MMA;
    const size_t need = mma ? M * N * 4 /* one fp32 accumulator, splits in order */
                            : a4w4_gpu_gemm_workspace_bytes(M, N, K, splits, split_mode);
    void *own = NULL;
    if (!workspace) {
        hipError_t e = hipMalloc(&own, need);
        if (e != hipSuccess)
            return map_err(e, "hipMalloc workspace", A4W4_GPU_ENOMEM);
        workspace = own;
    } else if (workspace_bytes < need || ((unsigned long long)workspace & 3ULL)) {
        return A4W4_GPU_EARG;
    }
    a->partial = (float *)workspace;
    int rc = A4W4_GPU_OK;
    if (mma) { /* one launch per split, in split order, into the accumulator */
        a->out_mode = A4W4G_OUT_ACCUM;
        a->splits = 1;
        for (unsigned z = 0; z < ns && !rc; z++) {
            a->split0 = (int)z;
            rc = map_err(launch_engine(a, stream), "gemm launch", A4W4_GPU_ELAUNCH);
        }
    } else {
        a->out_mode = A4W4G_OUT_PARTIAL;
        rc = map_err(launch_engine(a, stream), "gemm launch", A4W4_GPU_ELAUNCH);
    }
    const int fault = mma ? A4W4_GPU_FAULT_NONE : a4w4g_fault();
    if (!rc) /* y = RNE_bf16(+0 + partial[0] + ...): the accumulator is one partial */
        rc = map_err(a4w4g_launch_split_reduce(a->partial, mma ? 1 : (int)ns, a->M, a->N, a->y,
                                               fault, stream),
                     "split reduce launch", A4W4_GPU_ELAUNCH);
    if (own) {
        int rs = map_err(hipStreamSynchronize(stream), "kernel execution", A4W4_GPU_ELAUNCH);
        (void)hipFree(own);
        if (!rc)
            rc = rs;
    }
    return rc;
}

static int check_engine(int engine)
{
    return engine == A4W4_GPU_ENGINE_PORTABLE || engine == A4W4_GPU_ENGINE_MMA
               ? A4W4_GPU_OK
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
    int rc = check_engine(engine);
    if (rc)
        return rc;
    rc = check_asm(tile, splits, split_mode, a_fp4, a_scale_shuffled, w_fp4,
                       w_scale_swizzled, M, N, K, y);
    if (rc)
        return rc;
    if (!aligned16(a_fp4) || !aligned16(w_fp4) || !aligned16(y))
        return A4W4_GPU_EARG;
    a4w4g_gemm_args a;
    memset(&a, 0, sizeof a);
    a.a_fp4 = a_fp4;
    a.a_scale = a_scale_shuffled;
    a.w_fp4 = w_fp4;
    a.w_scale = w_scale_swizzled;
    a.M = (long long)M;
    a.N = (long long)N;
    a.K = (long long)K;
    a.tile_m = (*a4w4_gpu_tile_get(tile)).tile_m;
    a.tile_n = (*a4w4_gpu_tile_get(tile)).tile_n;
    a.a_scale_shuffled = 1;
    a.a_scale_cols = (long long)((K / 32 + 7) / 8 * 8);
    a.w_preshuffled = (*a4w4_gpu_tile_get(tile)).bpreshuffle;
    a.w_scale_swizzled = 1;
    a.y = y;
    a.engine = engine;
    return run_gemm(&a, splits, split_mode, workspace, workspace_bytes, (hipStream_t)stream);
}

extern "C" int a4w4_gpu_gemm_asm_dev(int tile, unsigned splits, int split_mode,
                                     const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                                     const uint8_t *w_fp4, const uint8_t *w_scale_swizzled,
                                     size_t M, size_t N, size_t K, uint16_t *y,
                                     void *workspace, size_t workspace_bytes, void *stream)
{
    return a4w4_gpu_gemm_asm_engine_dev(A4W4_GPU_ENGINE_PORTABLE, tile, splits, split_mode,
                                        a_fp4, a_scale_shuffled, w_fp4, w_scale_swizzled, M,
                                        N, K, y, workspace, workspace_bytes, stream);
}

extern "C" int a4w4_gpu_gemm_asm_engine(int engine, int tile, unsigned splits, int split_mode,
                                        const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                                        const uint8_t *w_fp4, const uint8_t *w_scale_swizzled,
                                        size_t M, size_t N, size_t K, uint16_t *y)
{
    int rc = check_engine(engine);
    if (rc)
        return rc;
    rc = check_asm(tile, splits, split_mode, a_fp4, a_scale_shuffled, w_fp4,
                   w_scale_swizzled, M, N, K, y);
    if (rc || (rc = need_device()))
        return rc;
    bufset b = {{0}, 0};
    void *da, *das, *dw, *dws, *dy, *dwk = NULL;
    const size_t wk = a4w4_gpu_gemm_workspace_bytes(M, N, K, splits, split_mode);
    if (!(rc = bs_upload(&b, &da, a_fp4, M * K / 2)) &&
        !(rc = bs_upload(&b, &das, a_scale_shuffled,
                         a4w4_gpu_act_scale_shuffled_bytes(M, K / 32))) &&
        !(rc = bs_upload(&b, &dw, w_fp4, N * K / 2)) &&
        !(rc = bs_upload(&b, &dws, w_scale_swizzled, N * K / 32)) &&
        !(rc = bs_alloc(&b, &dy, M * N * 2)) && !(rc = wk ? bs_alloc(&b, &dwk, wk) : 0) &&
        !(rc = a4w4_gpu_gemm_asm_engine_dev(engine, tile, splits, split_mode,
                                            (const uint8_t *)da, (const uint8_t *)das,
                                            (const uint8_t *)dw, (const uint8_t *)dws, M, N, K,
                                            (uint16_t *)dy, dwk, wk, NULL)) &&
        !(rc = sync_status()))
        rc = download(y, dy, M * N * 2);
    bs_free(&b);
    return rc;
}

extern "C" int a4w4_gpu_gemm_asm(int tile, unsigned splits, int split_mode,
                                 const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                                 const uint8_t *w_fp4, const uint8_t *w_scale_swizzled,
                                 size_t M, size_t N, size_t K, uint16_t *y)
{
    return a4w4_gpu_gemm_asm_engine(A4W4_GPU_ENGINE_PORTABLE, tile, splits, split_mode, a_fp4,
                                    a_scale_shuffled, w_fp4, w_scale_swizzled, M, N, K, y);
}

static int check_rowmajor(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                          const uint8_t *w_scale, size_t M, size_t N, size_t K,
                          const uint16_t *y)
{
    if (!a_fp4 || !a_scale || !w_fp4 || !w_scale || !y)
        return A4W4_GPU_EARG;
    int rc = check_gemm_shape(M, N, K);
    return rc ? rc : check_grid(M, N, 64, 64, 1);
}

extern "C" int a4w4_gpu_gemm_rowmajor_engine_dev(int engine, const uint8_t *a_fp4,
                                                 const uint8_t *a_scale, const uint8_t *w_fp4,
                                                 const uint8_t *w_scale, size_t M, size_t N,
                                                 size_t K, uint16_t *y, void *stream)
{
    int rc = check_engine(engine);
    if (rc)
        return rc;
    rc = check_rowmajor(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y);
    if (rc)
        return rc;
    if (!aligned16(a_fp4) || !aligned16(w_fp4) || ((unsigned long long)y & 1ULL))
        return A4W4_GPU_EARG;
    a4w4g_gemm_args a;
    memset(&a, 0, sizeof a);
    a.a_fp4 = a_fp4;
    a.a_scale = a_scale;
    a.w_fp4 = w_fp4;
    a.w_scale = w_scale;
    a.M = (long long)M;
    a.N = (long long)N;
    a.K = (long long)K;
    a.tile_m = 64;
    a.tile_n = engine == A4W4_GPU_ENGINE_MMA ? 128 : 64; /* the MMA kernel's sub-tile */
    a.y = y;
    a.engine = engine;
    return run_gemm(&a, 1, A4W4_GPU_SPLIT_ORDERED, NULL, 0, (hipStream_t)stream);
}

extern "C" int a4w4_gpu_gemm_rowmajor_dev(const uint8_t *a_fp4, const uint8_t *a_scale,
                                          const uint8_t *w_fp4, const uint8_t *w_scale,
                                          size_t M, size_t N, size_t K, uint16_t *y,
                                          void *stream)
{
    return a4w4_gpu_gemm_rowmajor_engine_dev(A4W4_GPU_ENGINE_PORTABLE, a_fp4, a_scale, w_fp4,
                                             w_scale, M, N, K, y, stream);
}

extern "C" int a4w4_gpu_gemm_rowmajor_engine(int engine, const uint8_t *a_fp4,
                                             const uint8_t *a_scale, const uint8_t *w_fp4,
                                             const uint8_t *w_scale, size_t M, size_t N,
                                             size_t K, uint16_t *y)
{
    int rc = check_engine(engine);
    if (rc)
        return rc;
    rc = check_rowmajor(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y);
    if (rc || (rc = need_device()))
        return rc;
    bufset b = {{0}, 0};
    void *da, *das, *dw, *dws, *dy;
    if (!(rc = bs_upload(&b, &da, a_fp4, M * K / 2)) &&
        !(rc = bs_upload(&b, &das, a_scale, M * K / 32)) &&
        !(rc = bs_upload(&b, &dw, w_fp4, N * K / 2)) &&
        !(rc = bs_upload(&b, &dws, w_scale, N * K / 32)) &&
        !(rc = bs_alloc(&b, &dy, M * N * 2)) &&
        !(rc = a4w4_gpu_gemm_rowmajor_engine_dev(engine, (const uint8_t *)da,
                                                 (const uint8_t *)das, (const uint8_t *)dw,
                                                 (const uint8_t *)dws, M, N, K, (uint16_t *)dy,
                                                 NULL)) &&
        !(rc = sync_status()))
        rc = download(y, dy, M * N * 2);
    bs_free(&b);
    return rc;
}

extern "C" int a4w4_gpu_gemm_rowmajor(const uint8_t *a_fp4, const uint8_t *a_scale,
                                      const uint8_t *w_fp4, const uint8_t *w_scale, size_t M,
                                      size_t N, size_t K, uint16_t *y)
{
    return a4w4_gpu_gemm_rowmajor_engine(A4W4_GPU_ENGINE_PORTABLE, a_fp4, a_scale, w_fp4,
                                         w_scale, M, N, K, y);
}

/* ---- memory, sync, timers ------------------------------------------------------------- */
extern "C" int a4w4_gpu_malloc(void **ptr, size_t bytes)
{
    if (!ptr)
        return A4W4_GPU_EARG;
    *ptr = NULL;
    int rc = need_device();
    if (rc)
        return rc;
    hipError_t e = hipMalloc(ptr, bytes ? bytes : 1);
    if (e != hipSuccess)
        *ptr = NULL;
    return map_err(e, "hipMalloc", A4W4_GPU_ENOMEM);
}

extern "C" int a4w4_gpu_free(void *ptr)
{
    if (!ptr)
        return A4W4_GPU_OK;
    return map_err(hipFree(ptr), "hipFree", A4W4_GPU_ERUNTIME);
}

extern "C" int a4w4_gpu_memcpy_h2d(void *dst, const void *src, size_t bytes)
{
    if ((!dst || !src) && bytes)
        return A4W4_GPU_EARG;
    return bytes ? map_err(hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice), "hipMemcpy H2D",
                           A4W4_GPU_ERUNTIME)
                 : A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_memcpy_d2h(void *dst, const void *src, size_t bytes)
{
    if ((!dst || !src) && bytes)
        return A4W4_GPU_EARG;
    return bytes ? download(dst, src, bytes) : A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_memcpy_d2d(void *dst, const void *src, size_t bytes, void *stream)
{
    if ((!dst || !src) && bytes)
        return A4W4_GPU_EARG;
    return bytes ? map_err(hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice,
                                          (hipStream_t)stream),
                           "hipMemcpyAsync D2D", A4W4_GPU_ERUNTIME)
                 : A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_memset(void *dst, int value, size_t bytes)
{
    if (!dst && bytes)
        return A4W4_GPU_EARG;
    return bytes ? map_err(hipMemset(dst, value, bytes), "hipMemset", A4W4_GPU_ERUNTIME)
                 : A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_synchronize(void) { return sync_status(); }

struct a4w4_gpu_timer {
    hipEvent_t start, stop;
};

extern "C" int a4w4_gpu_timer_create(a4w4_gpu_timer **timer)
{
    if (!timer)
        return A4W4_GPU_EARG;
    *timer = NULL;
    int rc = need_device();
    if (rc)
        return rc;
    a4w4_gpu_timer *t = (a4w4_gpu_timer *)calloc(1, sizeof *t);
    if (!t)
        return A4W4_GPU_ENOMEM;
    if ((rc = map_err(hipEventCreate(&t->start), "hipEventCreate", A4W4_GPU_ERUNTIME))) {
        free(t);
        return rc;
    }
    if ((rc = map_err(hipEventCreate(&t->stop), "hipEventCreate", A4W4_GPU_ERUNTIME))) {
        (void)hipEventDestroy(t->start);
        free(t);
        return rc;
    }
    *timer = t;
    return A4W4_GPU_OK;
}

extern "C" int a4w4_gpu_timer_start(a4w4_gpu_timer *timer, void *stream)
{
    if (!timer)
        return A4W4_GPU_EARG;
    return map_err(hipEventRecord(timer->start, (hipStream_t)stream), "hipEventRecord",
                   A4W4_GPU_ERUNTIME);
}

extern "C" int a4w4_gpu_timer_stop(a4w4_gpu_timer *timer, void *stream)
{
    if (!timer)
        return A4W4_GPU_EARG;
    return map_err(hipEventRecord(timer->stop, (hipStream_t)stream), "hipEventRecord",
                   A4W4_GPU_ERUNTIME);
}

extern "C" int a4w4_gpu_timer_elapsed_ms(a4w4_gpu_timer *timer, float *ms)
{
    if (!timer || !ms)
        return A4W4_GPU_EARG;
    int rc = map_err(hipEventSynchronize(timer->stop), "hipEventSynchronize",
                     A4W4_GPU_ELAUNCH);
    if (rc)
        return rc;
    return map_err(hipEventElapsedTime(ms, timer->start, timer->stop), "hipEventElapsedTime",
                   A4W4_GPU_ERUNTIME);
}

extern "C" void a4w4_gpu_timer_destroy(a4w4_gpu_timer *timer)
{
    if (!timer)
        return;
    (void)hipEventDestroy(timer->start);
    (void)hipEventDestroy(timer->stop);
    free(timer);
}
