/* hip.c — the HIP systems under test (gpu/a4w4_gpu.h) as backends.
 * Built only when A4W4_GPU != off. Every type needs a usable GPU: without one, asking for it
 * exits 3 and the default run skips it with a notice.
 *
 *   hip-asm-32x128, -64x256, -128x128, -256x256  ASM-layout GEMM on that tile, ordered(1)
 *   hip-asm:TILE | hip-asm:dispatch   any tile of the kernel table ("96x640", a mangled
 *                                     name), or the tile AITER's dispatch picks per case
 *                                     (ref/a4w4_dispatch, gfx950, 256 CUs)
 *   hip-asm-splitk                    deterministic split-K, S = 4: ordered(4)
 *   hip-asm-atomic                    bf16-atomic split-K, S = 4: bounded(4)
 *   hip-fallback                      row-major GEMM, ordered(1)
 *   hip-mma-32x128, -64x256, -128x128, -256x256, hip-mma:TILE | hip-mma:dispatch,
 *   hip-mma-splitk, hip-mma-atomic, hip-mma-fallback
 *                                     the same on the matrix-unit kernel
 *                                     (A4W4_GPU_ENGINE_MMA, gpu/a4w4_gpu_mma.hip);
 *                                     hip-mma-atomic declares atomic(4), judged bit for bit
 *                                     against every order of its 4 bf16 adds (contracts
 *                                     §4.1 "atomic(S)")
 *   hip-layout                        the three contracts §3 layouts on the device
 *   hip-quant                         the per-1x32 quantizer on the device (normal regimes)
 * The GEMMs compute every output of the case on the device (device-pointer ABI, operands
 * uploaded once per case) and the sampled rows are copied back and compared. With the
 * device judge (devjudge_hip.c) every type runs its device form on the judge's tensors
 * instead, and every output is compared on the device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "a4w4_formats.h"
#include "a4w4_gpu.h"
#include "fsutil.h"
#include "registry.h"
#include "backend_hip.h"

static int hip_available(char *why, size_t whylen)
{
    char name[128];
    if (a4w4_gpu_available(name, sizeof name) > 0)
        return 0;
    snprintf(why, whylen, "no GPU usable by the %s build (%s)", a4w4_gpu_platform(),
             a4w4_gpu_last_error()[0] ? a4w4_gpu_last_error() : "no device");
    return 1;
}

static int status_of(int gpu_rc, char *why, size_t whylen)
{
    if (gpu_rc == A4W4_GPU_OK)
        return A4W4_OK;
    snprintf(why, whylen, "%s%s%s", a4w4_gpu_strerror(gpu_rc),
             a4w4_gpu_last_error()[0] ? ": " : "", a4w4_gpu_last_error());
    return gpu_rc == A4W4_GPU_ELAYOUT ? A4W4_EUNSUPPORTED
         : gpu_rc == A4W4_GPU_ENOMEM ? A4W4_ENOMEM : A4W4_EINVAL;
}

/* ---- device copies of a case's operands ------------------------------------------------
 * One case runs through many HIP backends and pad variants: each operand is uploaded once
 * per case (and a_scale_shuffled again after each refill), keyed by (host pointer, length,
 * case serial, data version). The device buffers are kept from case to case (grown when a
 * larger one comes): an allocation and its synchronising free per case cost more than a
 * small case's kernels. The runner is single-threaded. */
enum { SLOT_A, SLOT_AS, SLOT_W, SLOT_WS, SLOT_ASH, SLOT_WSH, SLOT_WSW, SLOT_Y, NSLOTS };

static struct {
    const void *host;
    size_t len, cap;
    unsigned long serial;
    unsigned version;
    int valid; /* holds host's bytes of that serial and version */
    void *dev;
} cache[NSLOTS];

static void *dev_get(int slot, const void *host, size_t len, const a4w4_case_data *d, int upload,
                     int *rc)
{
    if (cache[slot].valid && cache[slot].host == host && cache[slot].len == len &&
        cache[slot].serial == d->serial && cache[slot].version == d->version)
        return cache[slot].dev;
    cache[slot].valid = 0;
    if (!cache[slot].dev || cache[slot].cap < len) {
        a4w4_gpu_free(cache[slot].dev);
        cache[slot].dev = NULL;
        cache[slot].cap = 0;
        size_t cap = len < 4096 ? 4096 : len + len / 4;
        if ((*rc = a4w4_gpu_malloc(&cache[slot].dev, cap)) != A4W4_GPU_OK) {
            cache[slot].dev = NULL;
            return NULL;
        }
        cache[slot].cap = cap;
    }
    void *p = cache[slot].dev;
    if (upload && len && (*rc = a4w4_gpu_memcpy_h2d(p, host, len)) != A4W4_GPU_OK)
        return NULL;
    cache[slot].host = host;
    cache[slot].len = len;
    cache[slot].serial = d->serial;
    cache[slot].version = d->version;
    cache[slot].valid = 1;
    return p;
}

/* Poison the device output, then after the kernel copy the sampled outputs back: whole rows
 * of the sampled rows only (a sampled huge case never moves its full [M, N] output). */
static int gather(const a4w4_run_args *a, const uint16_t *ydev)
{
    const a4w4_case_data *d = a->d;
    const a4w4_sample *s = a->s;
    int rc = a4w4_gpu_synchronize();
    if (rc != A4W4_GPU_OK)
        return rc;
    if (s->full)
        return a4w4_gpu_memcpy_d2h(a->y, ydev, d->M * d->N * sizeof *a->y);
    uint16_t *row = malloc(d->N * sizeof *row);
    if (!row)
        return A4W4_GPU_ENOMEM;
    for (size_t i = 0; i < s->nrows && rc == A4W4_GPU_OK; i++) {
        rc = a4w4_gpu_memcpy_d2h(row, ydev + s->rows[i] * d->N, d->N * sizeof *row);
        for (size_t j = 0; j < s->ncols; j++)
            a->y[i * s->ncols + j] = row[s->cols[j]];
    }
    free(row);
    return rc;
}

/* Device output buffer of case d, poisoned with the runner's pattern (A4W4_POISON_BF16) on
 * every output the runner will read (all of them, or the sampled rows), so an output the
 * kernel never writes reaches the runner as unwritten. */
static uint16_t *dev_output(const a4w4_case_data *d, const a4w4_sample *s, int *rc)
{
    uint16_t *y = dev_get(SLOT_Y, NULL, d->M * d->N * sizeof *y, d, 0, rc);
    size_t rowlen = s->full ? d->M * d->N : d->N;
    uint16_t *poison = y ? malloc(rowlen * sizeof *poison) : NULL;
    if (y && !poison)
        *rc = A4W4_GPU_ENOMEM;
    if (!poison)
        return NULL;
    for (size_t i = 0; i < rowlen; i++)
        poison[i] = A4W4_POISON_BF16;
    if (s->full)
        *rc = a4w4_gpu_memcpy_h2d(y, poison, rowlen * sizeof *poison);
    else
        for (size_t i = 0; i < s->nrows && *rc == A4W4_GPU_OK; i++)
            *rc = a4w4_gpu_memcpy_h2d(y + s->rows[i] * d->N, poison, rowlen * sizeof *poison);
    free(poison);
    return *rc == A4W4_GPU_OK ? y : NULL;
}

/* ---- ASM-layout GEMM ------------------------------------------------------------------- */

typedef struct {
    int tile;          /* a4w4_gpu_tile index, or -1 for dispatch */
    unsigned splits;
    int split_mode;
    int engine;        /* A4W4_GPU_ENGINE_PORTABLE or _MMA */
    a4w4_tuned_table tuned;
    a4w4_kernel_table kernels;
    int have_tables;
    /* dispatch: the last shape's pick (the pad variants and the next cases of one shape ask
     * again; the route's heuristic costs more than a small case's kernel) */
    size_t memo_mnk[3];
    int memo_rc, memo_tile, memo_mode;
    unsigned memo_splits;
    char memo_why[512];
} asm_ctx;

static int asm_open(const char *tile_name, unsigned splits, int mode, int engine, void **ctx,
                    char *err, size_t errlen)
{
    asm_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    c->splits = splits;
    c->split_mode = mode;
    c->engine = engine;
    if (!strcmp(tile_name, "dispatch")) {
        char p1[4096], p2[4096];
        c->tile = -1;
        if (a4w4_tuned_load(&c->tuned, a4w4_data_path("cases/aiter/a4w4_blockscale_tuned_gemm.csv", p1, sizeof p1), err, errlen) ||
            a4w4_kernels_load(&c->kernels, a4w4_data_path("cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv", p2, sizeof p2), "gfx950", err, errlen)) {
            free(c);
            return 1;
        }
        c->have_tables = 1;
    } else if ((c->tile = a4w4_gpu_tile_find(tile_name)) < 0) {
        snprintf(err, errlen, "hip-asm: unknown tile '%s' (a name, symbol or MxN of cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv, or 'dispatch')", tile_name);
        free(c);
        return 1;
    }
    *ctx = c;
    return 0;
}

static void asm_release(void *ctx)
{
    asm_ctx *c = ctx;
    if (c && c->have_tables) {
        a4w4_tuned_free(&c->tuned);
        a4w4_kernels_free(&c->kernels);
    }
    free(c);
}

static int asm_route(const asm_ctx *c, const a4w4_run_args *a, int *tile, unsigned *splits,
                     int *mode);

/* The tile, splits and split mode of this case: the context's, or AITER's dispatch pick
 * (asm_route, remembered for the last shape). A4W4_OK, or A4W4_EUNSUPPORTED with a->why. */
static int asm_pick(asm_ctx *c, const a4w4_run_args *a, int *tile, unsigned *splits, int *mode)
{
    const a4w4_case_data *d = a->d;
    *tile = c->tile;
    *splits = c->splits;
    *mode = c->split_mode;
    if (c->tile >= 0)
        return A4W4_OK;
    if (c->memo_mnk[0] != d->M || c->memo_mnk[1] != d->N || c->memo_mnk[2] != d->K) {
        char why[512] = "";
        a4w4_run_args b = *a;
        b.why = why;
        b.whylen = sizeof why;
        c->memo_rc = asm_route(c, &b, &c->memo_tile, &c->memo_splits, &c->memo_mode);
        memcpy(c->memo_why, why, sizeof why);
        c->memo_mnk[0] = d->M, c->memo_mnk[1] = d->N, c->memo_mnk[2] = d->K;
    }
    *tile = c->memo_tile;
    *splits = c->memo_splits;
    *mode = c->memo_mode;
    if (c->memo_rc != A4W4_OK)
        snprintf(a->why, a->whylen, "%s", c->memo_why);
    return c->memo_rc;
}

/* AITER's dispatch pick for the case's shape (contracts §5). */
static int asm_route(const asm_ctx *c, const a4w4_run_args *a, int *tile, unsigned *splits,
                     int *mode)
{
    const a4w4_case_data *d = a->d;
    a4w4_heur_params p = {"gfx950", 256, 0, 1};
    a4w4_route r;
    char err[256];
    if (a4w4_route_shape(&c->tuned, &c->kernels, &p, (int)d->M, (int)d->N, (int)d->K, &r, err,
                         sizeof err) || !r.is_asm || r.kernel_index < 0) {
        snprintf(a->why, a->whylen, "dispatch picks no ASM tile here: %s",
                 r.is_asm ? err : "a CK kernel");
        return A4W4_EUNSUPPORTED;
    }
    *tile = a4w4_gpu_tile_find(r.kernel);
    if (*tile < 0) {
        snprintf(a->why, a->whylen, "dispatch picks %s, which gpu/ does not implement", r.kernel);
        return A4W4_EUNSUPPORTED;
    }
    *splits = (unsigned)r.split;
    /* AITER zeroes the output and adds partials atomically only when log2_k_split > 0
     * (contracts §5.3); with one split the kernel stores its bf16 result, so an output that
     * rounds to -0 stays -0 (an atomic add onto the zeroed +0 would make it +0). */
    *mode = *splits > 1 ? A4W4_GPU_SPLIT_ATOMIC : A4W4_GPU_SPLIT_ORDERED;
    if (*splits > 1) {
        snprintf(a->why, a->whylen, "dispatch picks split-K (%u splits): only bounded; run "
                 "hip-asm-atomic for that contract", *splits);
        return A4W4_EUNSUPPORTED;
    }
    return A4W4_OK;
}

static int asm_run(void *ctx, const a4w4_run_args *a)
{
    asm_ctx *c = ctx;
    const a4w4_case_data *d = a->d;
    int tile, mode;
    unsigned splits;
    if (!d->w_fp4_shuffled.data || !d->w_scale_swizzled.data || d->K % 256)
        return a4w4_hip_asm_gemm(c->engine, c->tile, c->splits, c->split_mode, a); /* n/a */
    int rc = asm_pick(c, a, &tile, &splits, &mode);
    return rc != A4W4_OK ? rc : a4w4_hip_asm_gemm(c->engine, tile, splits, mode, a);
}

/* The split-K workspace asm_run_device uses (engine/backend.h device_workspace): the
 * deterministic split-K's, M*N*4 bytes on the matrix units, the partial sums of every split on
 * the portable kernel (gpu/a4w4_gpu.h); none with one split, atomics or dispatch (which never
 * picks an ordered split: asm_route). */
static size_t asm_device_workspace(void *ctx, size_t M, size_t N, size_t K)
{
    const asm_ctx *c = ctx;
    if (c->tile < 0 || c->splits <= 1 || c->split_mode != A4W4_GPU_SPLIT_ORDERED)
        return 0;
    return c->engine == A4W4_GPU_ENGINE_MMA
               ? M * N * 4
               : a4w4_gpu_gemm_workspace_bytes(M, N, K, c->splits, c->split_mode);
}

/* The device form (engine/devjudge.h): every output into t->y. */
static int asm_run_device(void *ctx, const a4w4_run_args *a, const a4w4_dev_tensors *t)
{
    asm_ctx *c = ctx;
    const a4w4_case_data *d = a->d;
    int tile, mode;
    unsigned splits;
    if (!t->w_fp4_shuffled || !t->w_scale_swizzled || !t->a_scale_shuffled || d->K % 256) {
        snprintf(a->why, a->whylen, "the ASM GEMM needs N %% 32 == 0 and K %% 256 == 0 "
                 "(preshuffle and scale swizzle); N=%zu K=%zu", d->N, d->K);
        return A4W4_EUNSUPPORTED;
    }
    int rc = asm_pick(c, a, &tile, &splits, &mode);
    if (rc != A4W4_OK)
        return rc;
    /* the judge's workspace when it is large enough for this kernel, else the library's */
    const size_t need = a4w4_gpu_gemm_workspace_bytes(d->M, d->N, d->K, splits, mode);
    const int mine = c->engine == A4W4_GPU_ENGINE_MMA ? t->workspace_bytes >= d->M * d->N * 4
                                                      : t->workspace_bytes >= need;
    int g = a4w4_gpu_gemm_asm_engine_dev(c->engine, tile, splits, mode, t->a_fp4,
                                         t->a_scale_shuffled, t->w_fp4_shuffled,
                                         t->w_scale_swizzled, d->M, d->N, d->K, t->y,
                                         mine ? t->workspace : NULL,
                                         mine ? t->workspace_bytes : 0, NULL);
    if (g == A4W4_GPU_OK)
        g = a4w4_gpu_synchronize();
    return status_of(g, a->why, a->whylen);
}

int a4w4_hip_asm_gemm(int engine, int tile, unsigned splits, int mode, const a4w4_run_args *a)
{
    const a4w4_case_data *d = a->d;
    if (!d->w_fp4_shuffled.data || !d->w_scale_swizzled.data || d->K % 256) {
        snprintf(a->why, a->whylen, "the ASM GEMM needs N %% 32 == 0 and K %% 256 == 0 "
                 "(preshuffle and scale swizzle); N=%zu K=%zu", d->N, d->K);
        return A4W4_EUNSUPPORTED;
    }
    int rc = A4W4_GPU_OK;
    const void *A = dev_get(SLOT_A, d->a_fp4.data, d->a_fp4.len, d, 1, &rc);
    const void *ASH = A ? dev_get(SLOT_ASH, d->a_scale_shuffled.data, d->a_scale_shuffled.len, d, 1, &rc) : NULL;
    const void *WSH = ASH ? dev_get(SLOT_WSH, d->w_fp4_shuffled.data, d->w_fp4_shuffled.len, d, 1, &rc) : NULL;
    const void *WSW = WSH ? dev_get(SLOT_WSW, d->w_scale_swizzled.data, d->w_scale_swizzled.len, d, 1, &rc) : NULL;
    uint16_t *Y = WSW ? dev_output(d, a->s, &rc) : NULL;
    if (Y && rc == A4W4_GPU_OK)
        rc = a4w4_gpu_gemm_asm_engine_dev(engine, tile, splits, mode, A, ASH, WSH, WSW, d->M,
                                          d->N, d->K, Y, NULL, 0, NULL);
    if (rc == A4W4_GPU_OK)
        rc = gather(a, Y);
    return status_of(rc, a->why, a->whylen);
}

/* ---- device-event timing for bench --------------------------------------------------- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

typedef int (*launch_fn)(void *ctx, const a4w4_case_data *d, const void *const *ops, uint16_t *y);

/* Upload ops once (slots given), warm up, time reps launches with events. */
static int time_launches(void *ctx, const a4w4_case_data *d, launch_fn launch, const int *slots,
                         const a4w4_guarded *const *bufs, int nops, int reps, double *median_ms,
                         double *min_ms, double *bytes, char *why, size_t whylen)
{
    const void *ops[4];
    int rc = A4W4_GPU_OK;
    *bytes = (double)d->M * d->N * 2;
    for (int i = 0; i < nops && rc == A4W4_GPU_OK; i++) {
        ops[i] = dev_get(slots[i], bufs[i]->data, bufs[i]->len, d, 1, &rc);
        *bytes += (double)bufs[i]->len;
    }
    uint16_t *y = NULL;
    if (rc == A4W4_GPU_OK)
        y = dev_get(SLOT_Y, NULL, d->M * d->N * 2, d, 0, &rc);
    a4w4_gpu_timer *t = NULL;
    double *ms = malloc((size_t)reps * sizeof *ms);
    if (!ms)
        rc = A4W4_GPU_ENOMEM;
    if (rc == A4W4_GPU_OK)
        rc = a4w4_gpu_timer_create(&t);
    if (rc == A4W4_GPU_OK)
        rc = launch(ctx, d, ops, y); /* warm-up */
    if (rc == A4W4_GPU_OK)
        rc = a4w4_gpu_synchronize();
    for (int i = 0; i < reps && rc == A4W4_GPU_OK; i++) {
        float e = 0;
        rc = a4w4_gpu_timer_start(t, NULL);
        if (rc == A4W4_GPU_OK)
            rc = launch(ctx, d, ops, y);
        if (rc == A4W4_GPU_OK)
            rc = a4w4_gpu_timer_stop(t, NULL);
        if (rc == A4W4_GPU_OK)
            rc = a4w4_gpu_timer_elapsed_ms(t, &e);
        ms[i] = e;
    }
    if (rc == A4W4_GPU_OK) {
        qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
        *median_ms = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
        *min_ms = ms[0];
    }
    if (t)
        a4w4_gpu_timer_destroy(t);
    free(ms);
    return status_of(rc, why, whylen);
}

/* Workspace for the timed split-K launches, kept across reps (freed at exit). */
static void *bench_ws;
static size_t bench_ws_len;

static int launch_asm(void *ctx, const a4w4_case_data *d, const void *const *ops, uint16_t *y)
{
    asm_ctx *c = ctx;
    size_t need = a4w4_gpu_gemm_workspace_bytes(d->M, d->N, d->K, c->splits, c->split_mode);
    if (need > bench_ws_len) {
        a4w4_gpu_free(bench_ws);
        bench_ws = NULL;
        bench_ws_len = 0;
        int rc = a4w4_gpu_malloc(&bench_ws, need);
        if (rc != A4W4_GPU_OK)
            return rc;
        bench_ws_len = need;
    }
    return a4w4_gpu_gemm_asm_engine_dev(c->engine, c->tile < 0 ? 0 : c->tile, c->splits,
                                        c->split_mode, ops[0], ops[1], ops[2], ops[3], d->M,
                                        d->N, d->K, y, bench_ws, bench_ws_len, NULL);
}

static int asm_bench(void *ctx, const a4w4_case_data *d, int reps, double *median_ms,
                     double *min_ms, double *bytes, char *why, size_t whylen)
{
    asm_ctx *c = ctx;
    if (c->tile < 0) {
        snprintf(why, whylen, "bench the tile dispatch picks by name (a4w4check route)");
        return A4W4_EUNSUPPORTED;
    }
    if (!d->w_fp4_shuffled.data || !d->w_scale_swizzled.data || d->K % 256) {
        snprintf(why, whylen, "the ASM GEMM needs N %% 32 == 0 and K %% 256 == 0");
        return A4W4_EUNSUPPORTED;
    }
    const int slots[4] = {SLOT_A, SLOT_ASH, SLOT_WSH, SLOT_WSW};
    const a4w4_guarded *bufs[4] = {&d->a_fp4, &d->a_scale_shuffled, &d->w_fp4_shuffled,
                                   &d->w_scale_swizzled};
    return time_launches(ctx, d, launch_asm, slots, bufs, 4, reps, median_ms, min_ms, bytes, why,
                         whylen);
}

static int launch_fallback(void *ctx, const a4w4_case_data *d, const void *const *ops, uint16_t *y)
{
    return a4w4_gpu_gemm_rowmajor_engine_dev(ctx ? A4W4_GPU_ENGINE_MMA : A4W4_GPU_ENGINE_PORTABLE,
                                             ops[0], ops[1], ops[2], ops[3], d->M, d->N, d->K, y,
                                             NULL);
}

static int fallback_bench(void *ctx, const a4w4_case_data *d, int reps, double *median_ms,
                          double *min_ms, double *bytes, char *why, size_t whylen)
{
    const int slots[4] = {SLOT_A, SLOT_AS, SLOT_W, SLOT_WS};
    const a4w4_guarded *bufs[4] = {&d->a_fp4, &d->a_scale, &d->w_fp4, &d->w_scale};
    return time_launches(ctx, d, launch_fallback, slots, bufs, 4, reps, median_ms, min_ms, bytes,
                         why, whylen);
}

double a4w4_hip_copy_bandwidth_gbs(int reps)
{
    const size_t len = (size_t)1 << 30;
    void *src = NULL, *dst = NULL;
    a4w4_gpu_timer *t = NULL;
    double best = 0;
    if (a4w4_gpu_malloc(&src, len) || a4w4_gpu_malloc(&dst, len) || a4w4_gpu_timer_create(&t) ||
        a4w4_gpu_memset(src, 1, len))
        goto out;
    double *ms = malloc((size_t)(reps + 1) * sizeof *ms);
    if (!ms)
        goto out;
    int n = 0;
    for (int i = 0; i <= reps; i++) { /* the first is a warm-up */
        float e = 0;
        if (a4w4_gpu_timer_start(t, NULL) || a4w4_gpu_memcpy_d2d(dst, src, len, NULL) ||
            a4w4_gpu_timer_stop(t, NULL) || a4w4_gpu_timer_elapsed_ms(t, &e))
            break;
        if (i)
            ms[n++] = e;
    }
    if (n) {
        qsort(ms, (size_t)n, sizeof *ms, cmp_double);
        best = 2.0 * (double)len / (ms[n / 2] * 1e-3) / 1e9;
    }
    free(ms);
out:
    if (t)
        a4w4_gpu_timer_destroy(t);
    a4w4_gpu_free(src);
    a4w4_gpu_free(dst);
    return best;
}

/* prepare: a fixed tile / split / kernel, or the argument's tile (tilename NULL) */
#define PREP(fn, tilename, splits, mode, engine)                                              \
    static int fn(const char *arg, void **ctx, char *contract, size_t clen, int *asm_layout, \
                  char *err, size_t errlen)                                                   \
    {                                                                                         \
        (void)contract; (void)clen; (void)asm_layout;                                         \
        const char *t = tilename;                                                             \
        return asm_open(t ? t : arg, splits, mode, engine, ctx, err, errlen);                 \
    }
#define P A4W4_GPU_ENGINE_PORTABLE
#define X A4W4_GPU_ENGINE_MMA
#define O A4W4_GPU_SPLIT_ORDERED
PREP(prep_32x128, "32x128", 1, O, P)
PREP(prep_64x256, "64x256", 1, O, P)
PREP(prep_128x128, "128x128", 1, O, P)
PREP(prep_256x256, "256x256", 1, O, P)
PREP(prep_any, NULL, 1, O, P)
PREP(prep_splitk, "256x256", 4, O, P)
PREP(prep_atomic, "256x256", 4, A4W4_GPU_SPLIT_ATOMIC, P)
PREP(mprep_32x128, "32x128", 1, O, X)
PREP(mprep_64x256, "64x256", 1, O, X)
PREP(mprep_128x128, "128x128", 1, O, X)
PREP(mprep_256x256, "256x256", 1, O, X)
PREP(mprep_any, NULL, 1, O, X)
PREP(mprep_splitk, "256x256", 4, O, X)
PREP(mprep_atomic, "256x256", 4, A4W4_GPU_SPLIT_ATOMIC, X)
#undef P
#undef X
#undef O

/* ---- fallback, layouts, quantizer --------------------------------------------------------- */

/* hip-fallback's context is NULL (the portable kernel); hip-mma-fallback's is non-NULL. */
static int fallback_run(void *ctx, const a4w4_run_args *a)
{
    return a4w4_hip_rowmajor_gemm(ctx ? A4W4_GPU_ENGINE_MMA : A4W4_GPU_ENGINE_PORTABLE, a, NULL);
}

static int fallback_run_device(void *ctx, const a4w4_run_args *a, const a4w4_dev_tensors *t)
{
    const a4w4_case_data *d = a->d;
    int g = a4w4_gpu_gemm_rowmajor_engine_dev(ctx ? A4W4_GPU_ENGINE_MMA
                                                  : A4W4_GPU_ENGINE_PORTABLE,
                                              t->a_fp4, t->a_scale, t->w_fp4, t->w_scale, d->M,
                                              d->N, d->K, t->y, NULL);
    if (g == A4W4_GPU_OK)
        g = a4w4_gpu_synchronize();
    return status_of(g, a->why, a->whylen);
}

static int mma_ctx(const char *arg, void **ctx, char *contract, size_t clen, int *asm_layout,
                   char *err, size_t errlen)
{
    static int marker;
    (void)arg; (void)contract; (void)clen; (void)asm_layout; (void)err; (void)errlen;
    *ctx = &marker;
    return 0;
}

int a4w4_hip_rowmajor_gemm(int engine, const a4w4_run_args *a, const void *a_scale_dev)
{
    const a4w4_case_data *d = a->d;
    int rc = A4W4_GPU_OK;
    const void *A = dev_get(SLOT_A, d->a_fp4.data, d->a_fp4.len, d, 1, &rc);
    const void *AS = !A ? NULL : a_scale_dev ? a_scale_dev
                                             : dev_get(SLOT_AS, d->a_scale.data, d->a_scale.len,
                                                       d, 1, &rc);
    const void *W = AS ? dev_get(SLOT_W, d->w_fp4.data, d->w_fp4.len, d, 1, &rc) : NULL;
    const void *WS = W ? dev_get(SLOT_WS, d->w_scale.data, d->w_scale.len, d, 1, &rc) : NULL;
    uint16_t *Y = WS ? dev_output(d, a->s, &rc) : NULL;
    if (Y && rc == A4W4_GPU_OK)
        rc = a4w4_gpu_gemm_rowmajor_engine_dev(engine, A, AS, W, WS, d->M, d->N, d->K, Y, NULL);
    if (rc == A4W4_GPU_OK)
        rc = gather(a, Y);
    return status_of(rc, a->why, a->whylen);
}

static int layout_run(void *ctx, const a4w4_case_data *d, uint8_t *wsh, uint8_t *wsw,
                      uint8_t *ash, char *why, size_t whylen)
{
    (void)ctx;
    int rc = A4W4_GPU_OK;
    if (wsh)
        rc = a4w4_gpu_preshuffle(d->w_fp4.data, d->N, d->K, wsh);
    if (rc == A4W4_GPU_OK && wsw)
        rc = a4w4_gpu_scale_swizzle(d->w_scale.data, d->N, d->K / 32, wsw);
    if (rc == A4W4_GPU_OK && ash)
        rc = a4w4_gpu_act_scale_shuffle(d->a_scale.data, d->M, d->K / 32, d->row_fill,
                                        d->col_fill, ash);
    return status_of(rc, why, whylen);
}

static int quant_run(void *ctx, const uint16_t *x, size_t rows, size_t K, int mode, uint8_t *fp4,
                     uint8_t *scale, char *why, size_t whylen)
{
    (void)ctx;
    int rc = a4w4_gpu_quantize(x, A4W4_GPU_IN_BF16, rows, K, mode, 0, 0x7F, 0x7F, fp4, scale);
    return status_of(rc, why, whylen);
}

/* Device forms: the three layouts from t's row-major tensors into t->out, and the activation
 * rows t->x quantized into t->out[0..1] (engine/devjudge.h). */
static int layout_run_device(void *ctx, const a4w4_case_data *d, const a4w4_dev_tensors *t,
                             char *why, size_t whylen)
{
    (void)ctx;
    int rc = A4W4_GPU_OK;
    if (t->out[0])
        rc = a4w4_gpu_preshuffle_dev(t->w_fp4, d->N, d->K, t->out[0], NULL);
    if (rc == A4W4_GPU_OK && t->out[1])
        rc = a4w4_gpu_scale_swizzle_dev(t->w_scale, d->N, d->K / 32, t->out[1], NULL);
    if (rc == A4W4_GPU_OK && t->out[2])
        rc = a4w4_gpu_act_scale_shuffle_dev(t->a_scale, d->M, d->K / 32, d->row_fill,
                                            d->col_fill, t->out[2], NULL);
    if (rc == A4W4_GPU_OK)
        rc = a4w4_gpu_synchronize();
    return status_of(rc, why, whylen);
}

static int quant_run_device(void *ctx, const a4w4_case_data *d, int mode,
                            const a4w4_dev_tensors *t, char *why, size_t whylen)
{
    (void)ctx;
    int rc = a4w4_gpu_quantize_dev(t->x, A4W4_GPU_IN_BF16, d->M, d->K, mode, 0, 0x7F, 0x7F,
                                   t->out[0], t->out[1], NULL);
    if (rc == A4W4_GPU_OK)
        rc = a4w4_gpu_synchronize();
    return status_of(rc, why, whylen);
}

/* ---- for the GPU mutants (backend_hip.h) ------------------------------------------------- */

int a4w4_hip_available(char *why, size_t whylen) { return hip_available(why, whylen); }

int a4w4_hip_status(int gpu_rc, char *why, size_t whylen)
{
    return status_of(gpu_rc, why, whylen);
}

int a4w4_hip_layouts(const a4w4_case_data *d, uint8_t *wsh, uint8_t *wsw, uint8_t *ash,
                     char *why, size_t whylen)
{
    return layout_run(NULL, d, wsh, wsw, ash, why, whylen);
}

int a4w4_hip_quantize(const uint16_t *x, size_t rows, size_t K, int mode, uint8_t *fp4,
                      uint8_t *scale, char *why, size_t whylen)
{
    return quant_run(NULL, x, rows, K, mode, fp4, scale, why, whylen);
}

static int no_ctx(const char *arg, void **ctx, char *contract, size_t clen, int *asm_layout,
                  char *err, size_t errlen)
{
    (void)arg; (void)contract; (void)clen; (void)asm_layout; (void)err; (void)errlen;
    *ctx = NULL;
    return 0;
}

#define ASM_TYPE(var, nm, desc, contr, prep)                                                  \
    static const a4w4_backend_type var = {.name = nm, .what = desc, .contract = contr,        \
                                          .asm_layout = 1, .gpu = 1, .thread_safe = 0,        \
                                          .available = hip_available, .prepare = prep,        \
                                          .run = asm_run, .release = asm_release,             \
                                          .bench = asm_bench, .run_device = asm_run_device,   \
                                          .device_workspace = asm_device_workspace,           \
                                          /* gpu/a4w4_gpu_device.h: code 0 is 2^-127 */     \
                                          .code0_reading = A4W4_CODE0_OCP}

ASM_TYPE(t32x128, "hip-asm-32x128", "HIP ASM-layout GEMM, tile 32x128", "ordered(1)", prep_32x128);
ASM_TYPE(t64x256, "hip-asm-64x256", "HIP ASM-layout GEMM, tile 64x256", "ordered(1)", prep_64x256);
ASM_TYPE(t128x128, "hip-asm-128x128", "HIP ASM-layout GEMM, tile 128x128", "ordered(1)", prep_128x128);
ASM_TYPE(t256x256, "hip-asm-256x256", "HIP ASM-layout GEMM, tile 256x256", "ordered(1)", prep_256x256);
ASM_TYPE(tsplitk, "hip-asm-splitk", "HIP ASM-layout GEMM, 256x256, deterministic 4-way split-K", "ordered(4)", prep_splitk);
ASM_TYPE(tatomic, "hip-asm-atomic", "HIP ASM-layout GEMM, 256x256, 4-way split-K with bf16 atomics", "bounded(4)", prep_atomic);
ASM_TYPE(m32x128, "hip-mma-32x128", "HIP ASM-layout GEMM on the matrix units, tile 32x128", "ordered(1)", mprep_32x128);
ASM_TYPE(m64x256, "hip-mma-64x256", "HIP ASM-layout GEMM on the matrix units, tile 64x256", "ordered(1)", mprep_64x256);
ASM_TYPE(m128x128, "hip-mma-128x128", "HIP ASM-layout GEMM on the matrix units, tile 128x128", "ordered(1)", mprep_128x128);
ASM_TYPE(m256x256, "hip-mma-256x256", "HIP ASM-layout GEMM on the matrix units, tile 256x256", "ordered(1)", mprep_256x256);
ASM_TYPE(msplitk, "hip-mma-splitk", "HIP ASM-layout GEMM on the matrix units, 256x256, deterministic 4-way split-K", "ordered(4)", mprep_splitk);
ASM_TYPE(matomic, "hip-mma-atomic", "HIP ASM-layout GEMM on the matrix units, 256x256, 4-way split-K with bf16 atomics", "atomic(4)", mprep_atomic);

static const a4w4_backend_type tany = {
    .name = "hip-asm", .what = "HIP ASM-layout GEMM on hip-asm:TILE or hip-asm:dispatch",
    .contract = "ordered(1)", .asm_layout = 1, .needs_arg = 1, .gpu = 1,
    .thread_safe = 0, /* one device, one per-case device cache: the runner serializes */
    .available = hip_available, .prepare = prep_any, .run = asm_run, .release = asm_release,
    .bench = asm_bench, .run_device = asm_run_device, .device_workspace = asm_device_workspace,
    .code0_reading = A4W4_CODE0_OCP};

static const a4w4_backend_type many = {
    .name = "hip-mma", .what = "HIP ASM-layout GEMM on the matrix units, hip-mma:TILE or hip-mma:dispatch",
    .contract = "ordered(1)", .asm_layout = 1, .needs_arg = 1, .gpu = 1,
    .thread_safe = 0, .available = hip_available, .prepare = mprep_any, .run = asm_run,
    .release = asm_release, .bench = asm_bench, .run_device = asm_run_device,
    .device_workspace = asm_device_workspace, .code0_reading = A4W4_CODE0_OCP};

static const a4w4_backend_type tfallback = {
    .name = "hip-fallback", .what = "HIP row-major GEMM (Triton gemm_afp4wfp4's role)",
    .contract = "ordered(1)", .gpu = 1, .thread_safe = 0,
    .available = hip_available, .prepare = no_ctx,
    .run = fallback_run, .bench = fallback_bench, .run_device = fallback_run_device,
    .code0_reading = A4W4_CODE0_OCP};

static const a4w4_backend_type mfallback = {
    .name = "hip-mma-fallback", .what = "HIP row-major GEMM on the matrix units",
    .contract = "ordered(1)", .gpu = 1, .thread_safe = 0,
    .available = hip_available, .prepare = mma_ctx,
    .run = fallback_run, .bench = fallback_bench, .run_device = fallback_run_device,
    .code0_reading = A4W4_CODE0_OCP};

static const a4w4_backend_type tlayout = {
    .name = "hip-layout", .what = "HIP weight preshuffle, scale swizzle, activation-scale shuffle",
    .contract = "bytes", .gpu = 1, .thread_safe = 0,
    .available = hip_available, .prepare = no_ctx,
    .layouts = layout_run, .layouts_device = layout_run_device};

static const a4w4_backend_type tquant = {
    .name = "hip-quant", .what = "HIP per-1x32 quantizer (bf16 input, the case's scale mode)",
    .contract = "bytes", .gpu = 1, .thread_safe = 0,
    .available = hip_available, .prepare = no_ctx,
    .quantize = quant_run, .quantize_device = quant_run_device};

const a4w4_backend_type *const a4w4_backend_hip_types[] = {
    &t32x128, &t64x256, &t128x128, &t256x256, &tany, &tsplitk, &tatomic,
    &tfallback, &m32x128, &m64x256, &m128x128, &m256x256, &many, &msplitk, &matomic,
    &mfallback, &tlayout, &tquant, NULL};
