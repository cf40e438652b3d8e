/* a4w4_judge_api.hip — the host side of a4w4_judge_gpu.h: the case's device arrays, the passes,
 * the plain-oracle fallback for uncertain outputs, and the comparisons' bookkeeping. Never
 * prints; failures leave a message for a4w4j_last_error(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_judge_gpu.h"
#include "a4w4_judge_internal.h"
#include "a4w4_judge_math.h"
#include "a4w4_judge_wgen.h"

extern "C" {
#include "a4w4_bound.h"
#include "a4w4_gemm.h"
}

static thread_local char g_err[256];
static int g_fault;

extern "C" const char *a4w4j_last_error(void) { return g_err; }
extern "C" void a4w4j_set_fault(int fault) { g_fault = fault; }

static int fail(int rc, const char *what, hipError_t e)
{
    snprintf(g_err, sizeof g_err, "%s: %s", what, e == hipSuccess ? "failed" : hipGetErrorString(e));
    (void)hipGetLastError();
    return rc;
}

static int chk(hipError_t e, const char *what)
{
    if (e == hipSuccess)
        return A4W4J_OK;
    return fail(e == hipErrorMemoryAllocation ? A4W4J_ENOMEM : A4W4J_ELAUNCH, what, e);
}

extern "C" int a4w4j_device_count(void)
{
    int n = 0;
    if (hipGetDeviceCount(&n) != hipSuccess) {
        (void)hipGetLastError();
        return 0;
    }
    return n < 0 ? 0 : n;
}

static int dalloc(void **p, size_t bytes)
{
    *p = NULL;
    hipError_t e = hipMalloc(p, bytes ? bytes : 1);
    if (e != hipSuccess) {
        *p = NULL;
        return fail(A4W4J_ENOMEM, "device allocation", e);
    }
    return A4W4J_OK;
}

/* Device arrays of closed cases, kept for the next case (a device allocation and its
 * synchronising free per case cost more than a small case's passes): a4w4j_close returns a
 * case's arrays here, pool_alloc takes the smallest that fits. The judge is used from one
 * thread at a time (the runner serializes GPU work). */
enum { POOL_SLOTS = 24, LIVE_SLOTS = 64 };
static struct {
    void *p;
    size_t cap;
} g_pool[POOL_SLOTS], g_live[LIVE_SLOTS];

static int pool_alloc(void **p, size_t bytes)
{
    bytes = bytes ? bytes : 1;
    int best = -1;
    for (int i = 0; i < POOL_SLOTS; i++)
        if (g_pool[i].p && g_pool[i].cap >= bytes && (best < 0 || g_pool[i].cap < g_pool[best].cap))
            best = i;
    size_t cap = bytes;
    if (best >= 0) {
        *p = g_pool[best].p;
        cap = g_pool[best].cap;
        g_pool[best].p = NULL;
    } else {
        int rc = dalloc(p, bytes);
        if (rc)
            return rc;
    }
    for (int i = 0; i < LIVE_SLOTS; i++)
        if (!g_live[i].p) {
            g_live[i].p = *p;
            g_live[i].cap = cap;
            break; /* a full table: the array is freed at close, not kept */
        }
    return A4W4J_OK;
}

/* Back into the pool (its smallest array freed when full), or freed. */
static void pool_free(void *p)
{
    size_t cap = 0;
    for (int i = 0; p && i < LIVE_SLOTS && !cap; i++)
        if (g_live[i].p == p) {
            cap = g_live[i].cap;
            g_live[i].p = NULL;
        }
    if (!p)
        return;
    int slot = -1;
    for (int i = 0; cap && i < POOL_SLOTS && slot < 0; i++)
        if (!g_pool[i].p)
            slot = i;
    for (int i = 0; cap && slot < 0 && i < POOL_SLOTS; i++)
        if (g_pool[i].cap < cap && (slot < 0 || g_pool[i].cap < g_pool[slot].cap))
            slot = i;
    if (slot < 0) {
        (void)hipFree(p);
        return;
    }
    if (g_pool[slot].p)
        (void)hipFree(g_pool[slot].p);
    g_pool[slot].p = p;
    g_pool[slot].cap = cap;
}

struct a4w4j_case {
    a4w4j_operands op;
    uint16_t *atom;      /* atomic(Sa) split values [natom][M * N] */
    unsigned Sa, natom;  /* the S of atom (0: none), its non-empty splits */
    uint16_t *ord1, *ordS;
    unsigned S;          /* the S of ordS (0: none) */
    int have_ord1;
    uint16_t *ex_bf16;
    float *ex_f32;
    uint8_t *proven, *uncertain, *facts_a, *facts_w;
    uint8_t *lo_a, *lo_w, *span_a, *span_w; /* a4w4j_row_span per row */
    double *bound, *ex_f64; /* with Sb: the bound, the exact value rounded to double */
    uint8_t *infs;          /* with Sb: where ±Inf is allowed (A4W4J_INF_* bits) */
    unsigned Sb;         /* the S of bound (0: none) */
    int have_exact;
    size_t n_uncertain;
};

static size_t split_blocks(size_t K, unsigned S) { return a4w4_split_k_per_split(K, S) / 32; }

extern "C" int a4w4j_open(const a4w4j_operands *op, a4w4j_case **out)
{
    *out = NULL;
    if (!op || !op->a_fp4 || !op->a_scale || !op->w_fp4 || !op->w_scale || !op->h_a_fp4 ||
        !op->h_a_scale || !op->h_w_fp4 != !op->h_w_scale)
        return A4W4J_EARG;
    if (!op->M || !op->N || !op->K || op->K % 32 || op->K / 32 > (size_t)A4W4J_MAX_BLOCKS ||
        op->M > (1ull << 31) || op->N > (1ull << 31)) {
        snprintf(g_err, sizeof g_err, "M=%zu N=%zu K=%zu outside the judge's range (K %% 32 == 0, "
                 "K <= 2^21)", op->M, op->N, op->K);
        return A4W4J_ESHAPE;
    }
    if (a4w4j_device_count() < 1) {
        snprintf(g_err, sizeof g_err, "no GPU device");
        return A4W4J_ENODEV;
    }
    a4w4j_case *c = (a4w4j_case *)calloc(1, sizeof *c);
    if (!c)
        return A4W4J_ENOMEM;
    c->op = *op;
    *out = c;
    return A4W4J_OK;
}

extern "C" void a4w4j_close(a4w4j_case *c)
{
    if (!c)
        return;
    void *bufs[] = {c->atom, c->ord1, c->ordS, c->ex_bf16, c->ex_f32, c->proven, c->uncertain,
                    c->facts_a, c->facts_w, c->bound, c->ex_f64, c->infs,
                    c->lo_a, c->lo_w, c->span_a, c->span_w};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        pool_free(bufs[i]);
    free(c);
}

static a4w4j_pass pass_of(const a4w4j_case *c)
{
    a4w4j_pass p;
    memset(&p, 0, sizeof p);
    p.a_fp4 = c->op.a_fp4;
    p.a_scale = c->op.a_scale;
    p.w_fp4 = c->op.w_fp4;
    p.w_scale = c->op.w_scale;
    p.M = (long long)c->op.M;
    p.N = (long long)c->op.N;
    p.K = (long long)c->op.K;
    p.fault = g_fault;
    return p;
}

/* ordered(1) and, for S > 1, ordered(S) in one pass. */
static int run_ordered(a4w4j_case *c, unsigned S)
{
    const size_t n = c->op.M * c->op.N;
    int rc;
    if (!c->ord1 && (rc = pool_alloc((void **)&c->ord1, n * 2)))
        return rc;
    if (S > 1 && !c->ordS && (rc = pool_alloc((void **)&c->ordS, n * 2)))
        return rc;
    a4w4j_pass p = pass_of(c);
    p.ord1 = c->ord1;
    if (S > 1) {
        p.ordS = c->ordS;
        p.ordS_blocks = (long long)split_blocks(c->op.K, S);
    }
    rc = chk(a4w4j_launch_ordered(&p), "ordered pass launch");
    if (!rc)
        rc = chk(hipDeviceSynchronize(), "ordered pass");
    if (rc)
        return rc;
    c->have_ord1 = 1;
    c->S = S > 1 ? S : c->S;
    return A4W4J_OK;
}

/* Row j of the case's W from the device into row (K/2 code bytes, then K/32 scales): the
 * host holds no copy of a W made on the device (a4w4j_gen_w, h_w_fp4 NULL). */
static int w_row_down(const a4w4j_case *c, size_t j, uint8_t *row)
{
    const size_t K = c->op.K;
    int rc = chk(hipMemcpy(row, c->op.w_fp4 + j * (K / 2), K / 2, hipMemcpyDeviceToHost), "copy");
    if (!rc)
        rc = chk(hipMemcpy(row + K / 2, c->op.w_scale + j * (K / 32), K / 32,
                           hipMemcpyDeviceToHost), "copy");
    return rc;
}

/* The uncertain outputs through the plain C oracle (a4w4_dot_exact, a4w4_dot_bounded_limits),
 * written back to the device arrays. */
static int fix_uncertain(a4w4j_case *c, unsigned Sb)
{
    const size_t n = c->op.M * c->op.N, chunks = (n + A4W4J_CHUNK - 1) / A4W4J_CHUNK;
    unsigned *cnt = NULL, *list_n = NULL;
    unsigned long long *list = NULL;
    int rc = pool_alloc((void **)&cnt, chunks * sizeof *cnt);
    if (!rc)
        rc = chk(a4w4j_launch_count(c->uncertain, (long long)n, cnt), "uncertain count");
    unsigned *host = (unsigned *)malloc(chunks * sizeof *host);
    size_t total = 0;
    if (!rc && !host)
        rc = A4W4J_ENOMEM;
    if (!rc)
        rc = chk(hipMemcpy(host, cnt, chunks * sizeof *cnt, hipMemcpyDeviceToHost), "copy");
    for (size_t i = 0; !rc && i < chunks; i++)
        total += host[i];
    free(host);
    pool_free(cnt);
    c->n_uncertain = total;
    if (rc || !total)
        return rc;
    rc = dalloc((void **)&list, total * sizeof *list);
    if (!rc)
        rc = dalloc((void **)&list_n, sizeof *list_n);
    if (!rc)
        rc = chk(hipMemset(list_n, 0, sizeof *list_n), "memset");
    if (!rc)
        rc = chk(a4w4j_launch_uncertain_list(c->uncertain, (long long)n, list, list_n,
                                             (unsigned)total),
                 "uncertain list");
    unsigned long long *idx = (unsigned long long *)malloc(total * sizeof *idx);
    if (!rc && !idx)
        rc = A4W4J_ENOMEM;
    if (!rc)
        rc = chk(hipMemcpy(idx, list, total * sizeof *idx, hipMemcpyDeviceToHost), "copy");
    const size_t K = c->op.K, nb = K / 32;
    uint8_t *wrow = NULL; /* W on the device only: the row an output reads, downloaded */
    if (!rc && !c->op.h_w_fp4 && !(wrow = (uint8_t *)malloc(K / 2 + nb)))
        rc = A4W4J_ENOMEM;
    for (size_t i = 0; !rc && i < total; i++) {
        const size_t m = (size_t)idx[i] / c->op.N, j = (size_t)idx[i] % c->op.N;
        if (wrow)
            rc = w_row_down(c, j, wrow);
        if (rc)
            break;
        a4w4_dot_operands d = {c->op.h_a_fp4 + m * (K / 2), c->op.h_a_scale + m * nb,
                               wrow ? wrow : c->op.h_w_fp4 + j * (K / 2),
                               wrow ? wrow + K / 2 : c->op.h_w_scale + j * nb, K};
        uint16_t hb;
        float f;
        a4w4_dot_exact(&d, &hb, &f);
        rc = chk(hipMemcpy(c->ex_bf16 + idx[i], &hb, 2, hipMemcpyHostToDevice), "copy");
        if (!rc)
            rc = chk(hipMemcpy(c->ex_f32 + idx[i], &f, 4, hipMemcpyHostToDevice), "copy");
        if (!rc && Sb) {
            a4w4_bounded_limits L;
            a4w4_dot_bounded_limits(&d, Sb, &L);
            const uint8_t inf = (uint8_t)((L.inf_pos ? A4W4J_INF_POS : 0u) |
                                          (L.inf_neg ? A4W4J_INF_NEG : 0u));
            rc = chk(hipMemcpy(c->bound + idx[i], &L.bound, 8, hipMemcpyHostToDevice), "copy");
            if (!rc)
                rc = chk(hipMemcpy(c->ex_f64 + idx[i], &L.exact, 8, hipMemcpyHostToDevice),
                         "copy");
            if (!rc)
                rc = chk(hipMemcpy(c->infs + idx[i], &inf, 1, hipMemcpyHostToDevice), "copy");
        }
    }
    free(idx);
    free(wrow);
    (void)hipFree(list);
    (void)hipFree(list_n);
    return rc;
}

/* The row span facts of both operands (the exact pass's fixed base, a4w4_judge_math.h). */
static int row_spans(a4w4j_case *c)
{
    const size_t M = c->op.M, N = c->op.N, K = c->op.K;
    int rc = pool_alloc((void **)&c->lo_a, M);
    if (!rc)
        rc = pool_alloc((void **)&c->span_a, M);
    if (!rc)
        rc = pool_alloc((void **)&c->lo_w, N);
    if (!rc)
        rc = pool_alloc((void **)&c->span_w, N);
    if (!rc)
        rc = chk(a4w4j_launch_row_span(c->op.a_fp4, c->op.a_scale, (long long)M, (long long)K,
                                       c->lo_a, c->span_a),
                 "row spans");
    if (!rc)
        rc = chk(a4w4j_launch_row_span(c->op.w_fp4, c->op.w_scale, (long long)N, (long long)K,
                                       c->lo_w, c->span_w),
                 "row spans");
    return rc;
}

/* A4W4_JUDGE_EXACT=window keeps the exact pass on the window for every output (the fixed base
 * off): the path before the fixed base, for timing it beside the new one and for holding the
 * two equal (a4w4_judge_check). Read at every exact pass. */
static int window_only(void)
{
    const char *v = getenv("A4W4_JUDGE_EXACT");
    return v && !strcmp(v, "window");
}

/* exact, prover flags and, for Sb > 0, the bounded(Sb) bound, in one pass. */
static int run_exact(a4w4j_case *c, unsigned Sb)
{
    const size_t n = c->op.M * c->op.N, M = c->op.M, N = c->op.N;
    int rc = A4W4J_OK;
    if (!c->ex_bf16)
        rc = pool_alloc((void **)&c->ex_bf16, n * 2);
    if (!rc && !c->ex_f32)
        rc = pool_alloc((void **)&c->ex_f32, n * 4);
    if (!rc && !c->proven)
        rc = pool_alloc((void **)&c->proven, n);
    if (!rc && !c->uncertain)
        rc = pool_alloc((void **)&c->uncertain, n);
    if (!rc && Sb && !c->bound)
        rc = pool_alloc((void **)&c->bound, n * 8);
    if (!rc && Sb && !c->ex_f64)
        rc = pool_alloc((void **)&c->ex_f64, n * 8);
    if (!rc && Sb && !c->infs)
        rc = pool_alloc((void **)&c->infs, n);
    if (!rc && !c->facts_a) {
        rc = pool_alloc((void **)&c->facts_a, M);
        if (!rc)
            rc = pool_alloc((void **)&c->facts_w, N);
        if (!rc)
            rc = chk(a4w4j_launch_row_facts(c->op.a_fp4, c->op.a_scale, (long long)M,
                                            (long long)c->op.K, c->facts_a),
                     "row facts");
        if (!rc)
            rc = chk(a4w4j_launch_row_facts(c->op.w_fp4, c->op.w_scale, (long long)N,
                                            (long long)c->op.K, c->facts_w),
                     "row facts");
    }
    if (!rc && !c->span_a)
        rc = row_spans(c);
    if (rc)
        return rc;
    a4w4j_pass p = pass_of(c);
    p.ex_bf16 = c->ex_bf16;
    p.ex_f32 = c->ex_f32;
    p.proven = c->proven;
    p.uncertain = c->uncertain;
    p.facts_a = c->facts_a;
    p.facts_w = c->facts_w;
    if (Sb) {
        p.bound = c->bound;
        p.ex_f64 = c->ex_f64;
        p.infs = c->infs;
        p.bound_blocks = (long long)split_blocks(c->op.K, Sb);
    }
    if (!window_only()) {
        p.lo_a = c->lo_a;
        p.lo_w = c->lo_w;
        p.span_a = c->span_a;
        p.span_w = c->span_w;
        p.fix_limit = a4w4j_fix_limit((long long)c->op.K / 32);
    }
    rc = chk(a4w4j_launch_exact(&p), "exact pass launch");
    if (!rc)
        rc = chk(hipDeviceSynchronize(), "exact pass");
    if (!rc)
        rc = fix_uncertain(c, Sb);
    if (rc)
        return rc;
    c->have_exact = 1;
    c->Sb = Sb ? Sb : c->Sb;
    return A4W4J_OK;
}

extern "C" int a4w4j_prepare(a4w4j_case *c, unsigned S1, int exact, unsigned Sb)
{
    if (!c)
        return A4W4J_EARG;
    int rc = A4W4J_OK;
    if (!c->have_ord1 || (S1 > 1 && c->S != S1))
        rc = run_ordered(c, S1);
    if (!rc && (exact || Sb) && (!c->have_exact || (Sb && c->Sb != Sb)))
        rc = run_exact(c, Sb);
    return rc;
}

extern "C" int a4w4j_ordered(a4w4j_case *c, unsigned S, const uint16_t **y)
{
    if (!c || !y || S < 1)
        return A4W4J_EARG;
    int rc = A4W4J_OK;
    if (S == 1 && !c->have_ord1)
        rc = run_ordered(c, 1);
    else if (S > 1 && c->S != S)
        rc = run_ordered(c, S);
    *y = rc ? NULL : S == 1 ? c->ord1 : c->ordS;
    return rc;
}

extern "C" int a4w4j_atomic(a4w4j_case *c, unsigned S, const uint16_t **q, unsigned *nsplit)
{
    if (!c || !q || !nsplit || S < 1 || S > A4W4J_ATOMIC_MAX)
        return A4W4J_EARG;
    if (c->Sa != S) { /* the ordered pass with one split size: the split totals in bf16 */
        const size_t n = c->op.M * c->op.N, per = split_blocks(c->op.K, S);
        const size_t ns = (c->op.K / 32 + per - 1) / per;
        pool_free(c->atom);
        c->atom = NULL;
        c->Sa = 0;
        int rc = pool_alloc((void **)&c->atom, ns * n * 2);
        if (rc)
            return rc;
        a4w4j_pass p = pass_of(c);
        p.atom = c->atom;
        p.ordS_blocks = (long long)per;
        rc = chk(a4w4j_launch_ordered(&p), "atomic split pass launch");
        if (!rc)
            rc = chk(hipDeviceSynchronize(), "atomic split pass");
        if (rc)
            return rc;
        c->Sa = S;
        c->natom = (unsigned)ns;
    }
    *q = c->atom;
    *nsplit = c->natom;
    return A4W4J_OK;
}

extern "C" int a4w4j_exact(a4w4j_case *c, const uint16_t **bf16, const float **f32,
                           const uint8_t **proven, size_t *uncertain)
{
    if (!c)
        return A4W4J_EARG;
    int rc = c->have_exact ? A4W4J_OK : run_exact(c, 0);
    if (bf16)
        *bf16 = rc ? NULL : c->ex_bf16;
    if (f32)
        *f32 = rc ? NULL : c->ex_f32;
    if (proven)
        *proven = rc ? NULL : c->proven;
    if (uncertain)
        *uncertain = c->n_uncertain;
    return rc;
}

extern "C" int a4w4j_bound(a4w4j_case *c, unsigned S, const double **B)
{
    if (!c || !B || S < 1)
        return A4W4J_EARG;
    int rc = c->Sb == S ? A4W4J_OK : run_exact(c, S);
    *B = rc ? NULL : c->bound;
    return rc;
}

extern "C" int a4w4j_bound_limits(a4w4j_case *c, unsigned S, const double **B,
                                  const double **exact, const uint8_t **infs)
{
    if (!c || !B || !exact || !infs || S < 1)
        return A4W4J_EARG;
    int rc = c->Sb == S ? A4W4J_OK : run_exact(c, S);
    *B = rc ? NULL : c->bound;
    *exact = rc ? NULL : c->ex_f64;
    *infs = rc ? NULL : c->infs;
    return rc;
}

extern "C" int a4w4j_preshuffle(const uint8_t *w_fp4, size_t N, size_t K, uint8_t *dst)
{
    if (!w_fp4 || !dst)
        return A4W4J_EARG;
    if (!N || N % 16 || !K || K % 64)
        return A4W4J_ESHAPE;
    return chk(a4w4j_launch_preshuffle(w_fp4, (long long)N, (long long)K, dst), "preshuffle");
}

static int g_wgen_fault;
extern "C" void a4w4j_set_wgen_fault(int fault) { g_wgen_fault = fault; }

extern "C" int a4w4j_gen_w(const a4w4j_wgen *g, uint8_t *w_fp4, uint8_t *w_scale,
                           uint8_t *w_scale_swizzled)
{
    if (!g || !g->name || !w_fp4 || !w_scale || g->regime < A4W4J_WGEN_EXACT ||
        g->regime > A4W4J_WGEN_TINY)
        return A4W4J_EARG;
    if (!g->N || !g->K || g->K % 32 || g->K / 32 > (size_t)A4W4J_MAX_BLOCKS ||
        (w_scale_swizzled && (g->N % 32 || (g->K / 32) % 8))) {
        snprintf(g_err, sizeof g_err, "W of N=%zu K=%zu outside a4w4j_gen_w's range", g->N, g->K);
        return A4W4J_ESHAPE;
    }
    a4w4j_wgen_plan p;
    a4w4j_wgen_plan_of(g->seed, g->name, (long long)g->N, (long long)g->K, g->regime, &p);
    p.fault = g_wgen_fault;
    int rc = chk(a4w4j_launch_gen_w(&p, w_fp4, w_scale, w_scale_swizzled), "W generation launch");
    return rc ? rc : chk(hipDeviceSynchronize(), "W generation");
}

/* ---- comparisons --------------------------------------------------------------------------- */

/* Per-chunk counters and the global record of one comparison, in one allocation (glob, then
 * miss[cap], then unw[cap]) so that one copy brings them back. */
typedef struct {
    unsigned *miss, *unw;
    a4w4j_glob *glob;
    size_t chunks, cap;
} cmp_bufs;

/* The counters are kept from one comparison to the next (grown when a larger one comes):
 * allocating and freeing device memory per comparison costs more than many comparisons.
 * The judge is used from one thread at a time (the runner serializes GPU work). */
static cmp_bufs g_bufs;

static int bufs_open(cmp_bufs *b, size_t n)
{
    const size_t chunks = (n + A4W4J_CHUNK - 1) / A4W4J_CHUNK;
    int rc = A4W4J_OK;
    if (chunks > g_bufs.cap || !g_bufs.glob) {
        (void)hipFree(g_bufs.glob);
        memset(&g_bufs, 0, sizeof g_bufs);
        const size_t cap = chunks < 64 ? 64 : chunks;
        rc = dalloc((void **)&g_bufs.glob, sizeof *g_bufs.glob + 2 * cap * sizeof(unsigned));
        if (!rc) {
            g_bufs.miss = (unsigned *)(g_bufs.glob + 1);
            g_bufs.unw = g_bufs.miss + cap;
            g_bufs.cap = cap;
        }
    }
    *b = g_bufs;
    b->chunks = chunks;
    if (!rc)
        rc = chk(hipMemset(b->glob, 0, sizeof *b->glob), "memset");
    return rc;
}

static void bufs_close(cmp_bufs *b) { (void)b; /* kept for the next comparison */ }

/* Reads the counters into out (the copy waits for the comparison kernel before it, on the
 * same stream, and reports its failure: no synchronisation of its own); the first mismatches
 * of the first chunks that have any are found on the host: scan(ctx, k0, k1, out) copies
 * outputs [k0, k1) back and records them. */
typedef int (*scan_fn)(const void *ctx, size_t k0, size_t k1, a4w4j_cmp *out);

static int bufs_read(const cmp_bufs *b, size_t n, int with_glob, a4w4j_cmp *out, scan_fn scan,
                     const void *ctx)
{
    /* one copy: glob, miss[cap] and unw's first chunks */
    const size_t bytes = sizeof(a4w4j_glob) + (b->cap + b->chunks) * sizeof(unsigned);
    uint8_t *all = (uint8_t *)malloc(bytes);
    int rc = all ? A4W4J_OK : A4W4J_ENOMEM;
    if (!rc)
        rc = chk(hipMemcpy(all, b->glob, bytes, hipMemcpyDeviceToHost), "copy");
    const unsigned *miss = all ? (const unsigned *)(all + sizeof(a4w4j_glob)) : NULL;
    const unsigned *unw = miss ? miss + b->cap : NULL;
    a4w4j_glob g;
    memset(&g, 0, sizeof g);
    if (!rc && with_glob)
        memcpy(&g, all, sizeof g);
    memset(out, 0, sizeof *out);
    for (size_t i = 0; !rc && i < b->chunks; i++) {
        out->mismatches += miss[i];
        out->unwritten += b->unw ? unw[i] : 0;
    }
    if (!rc && with_glob) {
        out->checked = (size_t)g.checked;
        out->hash = g.hash;
        out->max_ulp = (unsigned)g.max_ulp;
        memcpy(&out->bound_use, &g.use_bits, 8);
        memcpy(&out->bound_ulp_max, &g.ulp_bits, 8);
    } else {
        out->checked = n;
    }
    for (size_t i = 0; !rc && scan && i < b->chunks && out->nfirst < A4W4J_MAX_FIRST; i++)
        if (miss[i])
            rc = scan(ctx, i * A4W4J_CHUNK, (i + 1) * A4W4J_CHUNK < n ? (i + 1) * A4W4J_CHUNK : n,
                      out);
    free(all);
    return rc;
}

static int hbf16_nan(uint16_t h) { return (h & 0x7FFF) > 0x7F80; }

/* A host copy of [k0, k1) of a device array of elem-byte elements (NULL src: NULL). */
static void *stage(const void *src, size_t elem, size_t k0, size_t k1, int *rc)
{
    if (!src || *rc)
        return NULL;
    void *h = malloc((k1 - k0) * elem);
    if (!h) {
        *rc = A4W4J_ENOMEM;
        return NULL;
    }
    *rc = chk(hipMemcpy(h, (const uint8_t *)src + k0 * elem, (k1 - k0) * elem,
                        hipMemcpyDeviceToHost),
              "copy back");
    return h;
}

static void record(a4w4j_cmp *out, size_t k, uint16_t got, uint16_t exp)
{
    if (out->nfirst >= A4W4J_MAX_FIRST)
        return;
    out->first[out->nfirst].index = k;
    out->first[out->nfirst].got = got;
    out->first[out->nfirst++].expected = exp;
}

typedef struct {
    const uint16_t *got, *exp;
    const uint8_t *mask;
    uint16_t poison;
    const float *ef;
    const double *B;
} exact_ctx;

static int scan_exact(const void *vctx, size_t k0, size_t k1, a4w4j_cmp *out)
{
    const exact_ctx *c = (const exact_ctx *)vctx;
    int rc = A4W4J_OK;
    uint16_t *g = (uint16_t *)stage(c->got, 2, k0, k1, &rc);
    uint16_t *e = (uint16_t *)stage(c->exp, 2, k0, k1, &rc);
    uint8_t *m = (uint8_t *)stage(c->mask, 1, k0, k1, &rc);
    for (size_t k = 0; !rc && k < k1 - k0; k++) {
        if (m && !m[k])
            continue;
        if (g[k] == c->poison || !(g[k] == e[k] || (hbf16_nan(g[k]) && hbf16_nan(e[k]))))
            record(out, k0 + k, g[k], e[k]);
    }
    free(g);
    free(e);
    free(m);
    return rc;
}

extern "C" int a4w4j_compare_exact(const uint16_t *got, const uint16_t *expected,
                                   const uint8_t *mask, size_t n, uint16_t poison, a4w4j_cmp *out)
{
    if (!got || !expected || !out)
        return A4W4J_EARG;
    cmp_bufs b;
    int rc = bufs_open(&b, n);
    if (!rc)
        rc = chk(a4w4j_launch_cmp_exact(got, expected, mask, (long long)n, poison, b.miss, b.unw,
                                        b.glob),
                 "compare");
    exact_ctx ctx = {got, expected, mask, poison, NULL, NULL};
    if (!rc)
        rc = bufs_read(&b, n, 1, out, scan_exact, &ctx);
    bufs_close(&b);
    return rc;
}

typedef struct {
    const uint16_t *got, *q;
    unsigned nsplit;
    size_t n;
    uint16_t poison;
} atomic_ctx;

/* The first atomic(S) mismatches of [k0, k1) found on the host (a4w4_judge_math.h's rule). */
static int scan_atomic(const void *vctx, size_t k0, size_t k1, a4w4j_cmp *out)
{
    const atomic_ctx *c = (const atomic_ctx *)vctx;
    int rc = A4W4J_OK;
    uint16_t *g = (uint16_t *)stage(c->got, 2, k0, k1, &rc);
    uint16_t *q[A4W4J_ATOMIC_MAX] = {NULL};
    for (unsigned j = 0; j < c->nsplit; j++)
        q[j] = (uint16_t *)stage(c->q + j * c->n, 2, k0, k1, &rc);
    for (size_t k = 0; !rc && k < k1 - k0; k++) {
        uint32_t v[A4W4J_ATOMIC_MAX];
        for (unsigned j = 0; j < c->nsplit; j++)
            v[j] = q[j][k];
        if (g[k] == c->poison || !a4w4j_atomic_member(v, (int)c->nsplit, g[k]))
            record(out, k0 + k, g[k], (uint16_t)a4w4j_atomic_fold(v, (int)c->nsplit));
    }
    free(g);
    for (unsigned j = 0; j < c->nsplit; j++)
        free(q[j]);
    return rc;
}

extern "C" int a4w4j_compare_atomic(const uint16_t *got, const uint16_t *q, unsigned nsplit,
                                    size_t n, uint16_t poison, a4w4j_cmp *out)
{
    if (!got || !q || !out || nsplit > A4W4J_ATOMIC_MAX)
        return A4W4J_EARG;
    cmp_bufs b;
    int rc = bufs_open(&b, n);
    if (!rc)
        rc = chk(a4w4j_launch_cmp_atomic(got, q, (int)nsplit, (long long)n, poison, b.miss,
                                         b.unw, b.glob),
                 "compare");
    atomic_ctx ctx = {got, q, nsplit, n, poison};
    if (!rc)
        rc = bufs_read(&b, n, 1, out, scan_atomic, &ctx);
    bufs_close(&b);
    return rc;
}

/* The runner's bounded rule on the host, for the first mismatches. */
static int bounded_bad(uint16_t got, float e, double B, uint16_t poison)
{
    if (got == poison)
        return 1;
    const int gn = hbf16_nan(got), en = e != e;
    if (gn || en)
        return !(gn && en);
    uint32_t gb = (uint32_t)got << 16;
    float gf;
    memcpy(&gf, &gb, 4);
    const double g = gf, ev = e, inf = 1.0 / 0.0;
    if (ev == inf || ev == -inf || g == inf || g == -inf || B != B)
        return g != ev;
    const double tol = B + 0x1p-24 * (ev < 0 ? -ev : ev) + 0x1p-149;
    return (g > ev ? g - ev : ev - g) / tol > 1.0;
}

static int scan_bounded(const void *vctx, size_t k0, size_t k1, a4w4j_cmp *out)
{
    const exact_ctx *c = (const exact_ctx *)vctx;
    int rc = A4W4J_OK;
    uint16_t *g = (uint16_t *)stage(c->got, 2, k0, k1, &rc);
    uint16_t *e = (uint16_t *)stage(c->exp, 2, k0, k1, &rc);
    float *f = (float *)stage(c->ef, 4, k0, k1, &rc);
    double *B = (double *)stage(c->B, 8, k0, k1, &rc);
    for (size_t k = 0; !rc && k < k1 - k0; k++)
        if (bounded_bad(g[k], f[k], B[k], c->poison))
            record(out, k0 + k, g[k], e[k]);
    free(g);
    free(e);
    free(f);
    free(B);
    return rc;
}

extern "C" int a4w4j_compare_bounded(const uint16_t *got, const uint16_t *exact,
                                     const float *exact_f32, const double *B, size_t n,
                                     uint16_t poison, a4w4j_cmp *out)
{
    if (!got || !exact || !exact_f32 || !B || !out)
        return A4W4J_EARG;
    cmp_bufs b;
    int rc = bufs_open(&b, n);
    if (!rc)
        rc = chk(a4w4j_launch_cmp_bounded(got, exact, exact_f32, B, (long long)n, poison, b.miss,
                                          b.unw, b.glob),
                 "compare");
    exact_ctx ctx = {got, exact, NULL, poison, exact_f32, B};
    if (!rc)
        rc = bufs_read(&b, n, 1, out, scan_bounded, &ctx);
    bufs_close(&b);
    return rc;
}

/* The runner's bounded rule on the host, for the first mismatches of a4w4j_compare_limits. */
static int limits_bad(uint16_t got, double B, double e, uint8_t inf, uint16_t poison)
{
    if (got == poison)
        return 1;
    if (B != B)
        return !hbf16_nan(got);
    if (hbf16_nan(got))
        return !((inf & 1) && (inf & 2));
    uint32_t gb = (uint32_t)got << 16;
    float gf;
    memcpy(&gf, &gb, 4);
    const double g = gf, dinf = 1.0 / 0.0;
    if (g == dinf || g == -dinf)
        return g > 0 ? !(inf & 1) : !(inf & 2);
    const double tol = B + 0x1p-24 * (e < 0 ? -e : e) + 0x1p-149;
    return (g > e ? g - e : e - g) / tol > 1.0;
}

typedef struct {
    const uint16_t *got, *exp;
    const double *B, *E;
    const uint8_t *infs;
    uint16_t poison;
} limits_ctx;

static int scan_limits(const void *vctx, size_t k0, size_t k1, a4w4j_cmp *out)
{
    const limits_ctx *c = (const limits_ctx *)vctx;
    int rc = A4W4J_OK;
    uint16_t *g = (uint16_t *)stage(c->got, 2, k0, k1, &rc);
    uint16_t *e = (uint16_t *)stage(c->exp, 2, k0, k1, &rc);
    double *B = (double *)stage(c->B, 8, k0, k1, &rc);
    double *E = (double *)stage(c->E, 8, k0, k1, &rc);
    uint8_t *inf = (uint8_t *)stage(c->infs, 1, k0, k1, &rc);
    for (size_t k = 0; !rc && k < k1 - k0; k++)
        if (limits_bad(g[k], B[k], E[k], inf[k], c->poison))
            record(out, k0 + k, g[k], e[k]);
    free(g);
    free(e);
    free(B);
    free(E);
    free(inf);
    return rc;
}

/* What a4w4j_compare_limits reads back, in one copy: the counts and the two selections. */
typedef struct {
    a4w4j_lim lim;
    a4w4j_sel sel[2];
} lim_state;

/* Scratch of a4w4j_compare_limits, kept and grown like the counters. */
static struct {
    unsigned long long *ulps;
    size_t cap;
    unsigned *hist; /* [2][256], zeroed per comparison and by each pick after its pass */
    lim_state *st;
} g_lim;

static int lim_open(size_t n)
{
    int rc = A4W4J_OK;
    if (!g_lim.hist) {
        rc = dalloc((void **)&g_lim.hist, 512 * sizeof *g_lim.hist);
        if (!rc)
            rc = chk(hipMemset(g_lim.hist, 0, 512 * sizeof *g_lim.hist), "memset");
        if (!rc)
            rc = dalloc((void **)&g_lim.st, sizeof *g_lim.st);
        if (rc) {
            (void)hipFree(g_lim.hist);
            g_lim.hist = NULL;
            return rc;
        }
    }
    if (g_lim.cap < n) {
        (void)hipFree(g_lim.ulps);
        g_lim.ulps = NULL;
        g_lim.cap = 0;
        if (!(rc = dalloc((void **)&g_lim.ulps, (n + n / 4) * sizeof *g_lim.ulps)))
            g_lim.cap = n + n / 4;
    }
    if (!rc) /* the histograms too: a select cut short by a failure leaves its counts */
        rc = chk(hipMemset(g_lim.hist, 0, 512 * sizeof *g_lim.hist), "memset");
    if (!rc)
        rc = chk(hipMemset(&g_lim.st->lim, 0, sizeof g_lim.st->lim), "memset");
    return rc;
}

/* The tolerance's median in ULPs: both middle values of the measured ones selected on the
 * device (a byte per pass from the top, no copy back between passes), read back with the
 * counts in one copy. */
static int limits_launch(const uint16_t *got, const uint16_t *exact, const double *B,
                         const double *E, const uint8_t *infs, size_t n, uint16_t poison,
                         const cmp_bufs *b)
{
    int rc = chk(a4w4j_launch_cmp_limits(got, exact, B, E, infs, (long long)n, poison, b->miss,
                                         b->unw, b->glob, &g_lim.st->lim, g_lim.ulps),
                 "compare");
    if (!rc)
        rc = chk(a4w4j_launch_sel_init(&g_lim.st->lim, g_lim.st->sel), "select");
    for (int shift = 56; !rc && shift >= 0; shift -= 8)
        rc = chk(a4w4j_launch_sel_pass(g_lim.ulps, (long long)n, g_lim.st->sel, shift,
                                       g_lim.hist),
                 "select");
    return rc;
}

static double bits_d(unsigned long long u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* The median of the selection st holds (both middle values, or one when the count is odd). */
static double sel_median(const lim_state *st)
{
    const unsigned long long m = st->lim.measured;
    return !m ? 0 : m % 2 ? bits_d(st->sel[0].prefix)
                          : 0.5 * (bits_d(st->sel[1].prefix) + bits_d(st->sel[0].prefix));
}

extern "C" int a4w4j_compare_limits(const uint16_t *got, const uint16_t *exact, const double *B,
                                    const double *E, const uint8_t *infs, size_t n,
                                    uint16_t poison, a4w4j_cmp *out)
{
    if (!got || !exact || !B || !E || !infs || !out)
        return A4W4J_EARG;
    cmp_bufs b;
    lim_state st;
    int rc = bufs_open(&b, n);
    if (!rc)
        rc = lim_open(n);
    if (!rc)
        rc = limits_launch(got, exact, B, E, infs, n, poison, &b);
    limits_ctx ctx = {got, exact, B, E, infs, poison};
    if (!rc)
        rc = chk(hipMemcpy(&st, g_lim.st, sizeof st, hipMemcpyDeviceToHost), "copy");
    if (!rc)
        rc = bufs_read(&b, n, 1, out, scan_limits, &ctx);
    bufs_close(&b);
    if (!rc) {
        out->weighed = (size_t)st.lim.weighed;
        out->vacuous = (size_t)st.lim.vacuous;
        out->bound_ulp_median = sel_median(&st);
    }
    return rc;
}

extern "C" int a4w4j_compare_limits_part(const uint16_t *got, const uint16_t *exact,
                                         const double *B, const double *E, const uint8_t *infs,
                                         size_t n, uint16_t poison, unsigned long long *ulps,
                                         size_t *measured, a4w4j_cmp *out)
{
    if (!got || !exact || !B || !E || !infs || !ulps || !measured || !out)
        return A4W4J_EARG;
    cmp_bufs b;
    a4w4j_lim lim;
    int rc = bufs_open(&b, n);
    if (!rc)
        rc = lim_open(0); /* the counts only: the caller's ulps, no select */
    if (!rc)
        rc = chk(a4w4j_launch_cmp_limits(got, exact, B, E, infs, (long long)n, poison, b.miss,
                                         b.unw, b.glob, &g_lim.st->lim, ulps),
                 "compare");
    limits_ctx ctx = {got, exact, B, E, infs, poison};
    if (!rc)
        rc = chk(hipMemcpy(&lim, &g_lim.st->lim, sizeof lim, hipMemcpyDeviceToHost), "copy");
    if (!rc)
        rc = bufs_read(&b, n, 1, out, scan_limits, &ctx);
    bufs_close(&b);
    if (!rc) {
        out->weighed = (size_t)lim.weighed;
        out->vacuous = (size_t)lim.vacuous;
        *measured = (size_t)lim.measured;
    }
    return rc;
}

extern "C" int a4w4j_ulps_median(const unsigned long long *ulps, size_t n, size_t measured,
                                 double *median)
{
    if (!ulps || !median)
        return A4W4J_EARG;
    const a4w4j_lim lim = {0, 0, (unsigned long long)measured};
    lim_state st;
    int rc = lim_open(0);
    if (!rc)
        rc = chk(hipMemcpy(&g_lim.st->lim, &lim, sizeof lim, hipMemcpyHostToDevice), "copy");
    if (!rc)
        rc = chk(a4w4j_launch_sel_init(&g_lim.st->lim, g_lim.st->sel), "select");
    for (int shift = 56; !rc && shift >= 0; shift -= 8)
        rc = chk(a4w4j_launch_sel_pass(ulps, (long long)n, g_lim.st->sel, shift, g_lim.hist),
                 "select");
    if (!rc)
        rc = chk(hipMemcpy(&st, g_lim.st, sizeof st, hipMemcpyDeviceToHost), "copy");
    *median = rc ? 0 : sel_median(&st);
    return rc;
}

extern "C" int a4w4j_count_diff(const uint16_t *a, const uint16_t *b_, size_t n, size_t *count)
{
    if (!a || !b_ || !count)
        return A4W4J_EARG;
    cmp_bufs b;
    a4w4j_cmp out;
    int rc = bufs_open(&b, n);
    if (!rc)
        rc = chk(a4w4j_launch_diff(a, b_, (long long)n, b.miss), "diff");
    b.unw = NULL;
    if (!rc)
        rc = bufs_read(&b, n, 0, &out, NULL, NULL);
    bufs_close(&b);
    *count = rc ? n : out.mismatches;
    return rc;
}

typedef struct {
    const uint8_t *got, *exp, *scale;
    size_t row_bytes;
} bytes_ctx;

static int scan_bytes(const void *vctx, size_t k0, size_t k1, a4w4j_cmp *out)
{
    const bytes_ctx *c = (const bytes_ctx *)vctx;
    int rc = A4W4J_OK;
    uint8_t *g = (uint8_t *)stage(c->got, 1, k0, k1, &rc);
    uint8_t *e = (uint8_t *)stage(c->exp, 1, k0, k1, &rc);
    for (size_t k = 0; !rc && k < k1 - k0; k++) {
        if (c->scale) {
            uint8_t s = 0;
            const size_t at = k0 + k;
            rc = chk(hipMemcpy(&s, c->scale + (at / c->row_bytes) * (c->row_bytes / 16) +
                                       (at % c->row_bytes) / 16,
                               1, hipMemcpyDeviceToHost),
                     "copy back");
            if (s == 0xFF)
                continue;
        }
        if (g[k] != e[k])
            record(out, k0 + k, g[k], e[k]);
        if (out->nfirst >= A4W4J_MAX_FIRST)
            break;
    }
    free(g);
    free(e);
    return rc;
}

extern "C" int a4w4j_compare_bytes(const uint8_t *got, const uint8_t *expected, size_t n,
                                   const uint8_t *scale, size_t row_bytes, a4w4j_cmp *out)
{
    if (!got || !expected || !out || (scale && (!row_bytes || row_bytes % 16)))
        return A4W4J_EARG;
    cmp_bufs b;
    int rc = bufs_open(&b, n);
    if (!rc)
        rc = chk(a4w4j_launch_cmp_bytes(got, expected, (long long)n, scale, (long long)row_bytes,
                                        b.miss),
                 "compare");
    b.unw = NULL;
    bytes_ctx ctx = {got, expected, scale, row_bytes};
    if (!rc)
        rc = bufs_read(&b, n, 0, out, scan_bytes, &ctx);
    bufs_close(&b);
    return rc;
}

extern "C" int a4w4j_fill16(uint16_t *dev, size_t n, uint16_t value)
{
    if (!dev)
        return A4W4J_EARG;
    return chk(a4w4j_launch_fill16(dev, (long long)n, value), "fill"); /* no sync: ordered */
}

extern "C" int a4w4j_nan_set(const uint16_t *y, const uint16_t *y2, size_t M, size_t N,
                             size_t nan_a_row, size_t nan_w_row, size_t *wrong, size_t *nans)
{
    if (!y || !wrong || !nans)
        return A4W4J_EARG;
    cmp_bufs b;
    a4w4j_cmp out;
    int rc = bufs_open(&b, M * N);
    const long long ra = nan_a_row == (size_t)-1 ? -1 : (long long)nan_a_row;
    const long long cw = nan_w_row == (size_t)-1 ? -1 : (long long)nan_w_row;
    if (!rc)
        rc = chk(a4w4j_launch_nan_set(y, y2, (long long)M, (long long)N, ra, cw, b.miss, b.unw),
                 "nan set");
    if (!rc)
        rc = bufs_read(&b, M * N, 0, &out, NULL, NULL);
    bufs_close(&b);
    *wrong = rc ? M * N : out.mismatches;
    *nans = rc ? 0 : out.unwritten;
    return rc;
}

extern "C" int a4w4j_count_flags(const uint8_t *flags, size_t n, size_t *count)
{
    if (!flags || !count)
        return A4W4J_EARG;
    cmp_bufs b;
    a4w4j_cmp out;
    int rc = bufs_open(&b, n);
    if (!rc)
        rc = chk(a4w4j_launch_count(flags, (long long)n, b.miss), "count");
    b.unw = NULL;
    if (!rc)
        rc = bufs_read(&b, n, 0, &out, NULL, NULL);
    bufs_close(&b);
    *count = rc ? 0 : out.mismatches;
    return rc;
}

/* Index lists of the last gather, kept on the device (reused while they fit). */
static unsigned long long *g_gidx;
static size_t g_gidx_cap;

extern "C" int a4w4j_gather(const void *dev, size_t elem, size_t N, const size_t *rows,
                            size_t nrows, const size_t *cols, size_t ncols, void *host)
{
    if (!dev || !host || (elem != 1 && elem != 2 && elem != 4 && elem != 8))
        return A4W4J_EARG;
    const size_t n = nrows * ncols;
    if (!n)
        return A4W4J_OK;
    if (!rows && !cols && ncols == N) /* every row: one copy */
        return chk(hipMemcpy(host, dev, n * elem, hipMemcpyDeviceToHost), "gather");
    unsigned long long *idx = (unsigned long long *)malloc(n * sizeof *idx);
    if (!idx)
        return A4W4J_ENOMEM;
    for (size_t i = 0; i < nrows; i++)
        for (size_t j = 0; j < ncols; j++)
            idx[i * ncols + j] = (rows ? rows[i] : i) * N + (cols ? cols[j] : j);
    int rc = A4W4J_OK;
    if (n > g_gidx_cap) {
        (void)hipFree(g_gidx);
        g_gidx = NULL;
        g_gidx_cap = 0;
        rc = dalloc((void **)&g_gidx, n * sizeof *g_gidx + n * 8); /* indices, then values */
        if (!rc)
            g_gidx_cap = n;
    }
    uint8_t *vals = (uint8_t *)(g_gidx + g_gidx_cap);
    if (!rc)
        rc = chk(hipMemcpy(g_gidx, idx, n * sizeof *idx, hipMemcpyHostToDevice), "gather");
    if (!rc)
        rc = chk(a4w4j_launch_gather(dev, elem, g_gidx, (long long)n, vals), "gather");
    if (!rc)
        rc = chk(hipMemcpy(host, vals, n * elem, hipMemcpyDeviceToHost), "gather");
    free(idx);
    return rc;
}

extern "C" int a4w4j_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes)
        return A4W4J_EARG;
    *free_bytes = *total_bytes = 0;
    return chk(hipMemGetInfo(free_bytes, total_bytes), "memory info");
}

extern "C" void a4w4j_trim(void)
{
    for (int i = 0; i < POOL_SLOTS; i++) {
        (void)hipFree(g_pool[i].p);
        g_pool[i].p = NULL;
        g_pool[i].cap = 0;
    }
    (void)hipFree(g_lim.ulps);
    g_lim.ulps = NULL;
    g_lim.cap = 0;
    (void)hipFree(g_gidx);
    g_gidx = NULL;
    g_gidx_cap = 0;
}

extern "C" int a4w4j_alloc(void **dev, size_t bytes) { return dalloc(dev, bytes); }

extern "C" void a4w4j_free(void *dev)
{
    if (dev)
        (void)hipFree(dev);
}

extern "C" int a4w4j_upload(void *dev, const void *host, size_t bytes)
{
    return chk(hipMemcpy(dev, host, bytes, hipMemcpyHostToDevice), "upload");
}

extern "C" int a4w4j_download(void *host, const void *dev, size_t bytes)
{
    return chk(hipMemcpy(host, dev, bytes, hipMemcpyDeviceToHost), "download");
}
