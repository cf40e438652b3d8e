/* devjudge_hip.c — the device judge of engine/devjudge.h over the GPU judge of
 * ref/gpu/a4w4_judge_gpu.h (GPU builds only). One case at a time: its row-major operands are
 * uploaded once and shared by every HIP backend of the process, into device buffers kept
 * from case to case; the ASM layouts the backends
 * read come from the host's reference (the scales, small) and from the judge's preshuffle
 * (the weight, as large as W); the judge computes the expected outputs of the contracts the
 * selected backends keep, and every backend's outputs are compared on the device. The
 * runner re-checks the judge and each verdict on its sample with the C oracles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gpu.h"
#include "a4w4_judge_gpu.h"
#include "a4w4_layout.h"
#include "fsutil.h"
#include "registry.h"

/* The device buffers, kept from case to case and grown when a larger case comes: a device
 * allocation (and the synchronising free) per case or per entry costs more than a small
 * case's kernels. */
enum { BUF_A, BUF_AS, BUF_W, BUF_WS, BUF_WSH, BUF_WSW, BUF_X, BUF_Y, BUF_Y2, BUF_WORK,
       BUF_OUT0, BUF_OUT1, BUF_OUT2, BUF_ASH, NBUFS = BUF_ASH + 5 };

/* a_scale_shuffled is held on the device once per pad fill the case meets (the default and
 * the four pad variants the runner makes, contracts §3.3), each uploaded once per case: the
 * runner's refills then select a copy instead of uploading for every backend and variant. */
#define NFILLS (NBUFS - BUF_ASH)

typedef struct {
    void *p;
    size_t cap;
} dev_buf;

static dev_buf g_bufs[NBUFS];

/* Buffer i with at least n bytes (its contents undefined), or NULL (out of device memory). */
static void *buf_get(int i, size_t n, int *rc)
{
    dev_buf *b = &g_bufs[i];
    n = n ? n : 1;
    if (b->p && b->cap >= n)
        return b->p;
    a4w4_gpu_free(b->p);
    b->p = NULL;
    b->cap = 0;
    size_t cap = n < 4096 ? 4096 : n + n / 4; /* a little room: shapes vary by a few rows */
    if ((*rc = a4w4_gpu_malloc(&b->p, cap)) != A4W4_GPU_OK) {
        b->p = NULL;
        return NULL;
    }
    b->cap = cap;
    return b->p;
}

/* Device buffers of the open case (views of g_bufs). */
typedef struct {
    const a4w4_case_data *d;
    void *a, *as, *w, *ws, *ash, *wsh, *wsw, *x;
    uint16_t *y, *y2;
    void *work; /* fp32: a deterministic split-K kernel's accumulator or partials */
    size_t work_bytes;
    a4w4j_case *jc;
    a4w4_devneeds need;
    struct {
        void *p;
        uint8_t row_fill, col_fill;
        int valid;
    } ashc[NFILLS];          /* a_scale_shuffled under the fills met so far in this case */
    size_t base_mismatches;  /* the current backend's baseline (bounded variants) */
    double judge_ms;
    char describe[256];
} dj_state;

static dj_state g_dj;

static int dj_err(char *why, size_t whylen, const char *what, int rc)
{
    snprintf(why, whylen, "%s: %s", what, a4w4_gpu_last_error()[0] ? a4w4_gpu_last_error()
                                                                   : a4w4j_last_error());
    return rc ? rc : 1;
}

/* Host bytes src[0, n) into buffer i; *dst its device address. */
static int upload(int i, void **dst, const void *src, size_t n)
{
    int rc = A4W4_GPU_OK;
    *dst = buf_get(i, n, &rc);
    if (rc == A4W4_GPU_OK && n)
        rc = a4w4_gpu_memcpy_h2d(*dst, src, n);
    return rc;
}

static void dj_close(void *self)
{
    dj_state *s = self;
    a4w4j_close(s->jc); /* the buffers stay in g_bufs for the next case */
    char keep[256];
    memcpy(keep, s->describe, sizeof keep);
    memset(s, 0, sizeof *s);
    memcpy(s->describe, keep, sizeof keep);
}

/* a_scale_shuffled on the device as the host has it now (the runner refills the pads, a fill
 * at a time): the copy of the current fills, uploaded the first time they come in the case. */
static int sync_ash(dj_state *s)
{
    const a4w4_case_data *d = s->d;
    if (!d->a_scale_shuffled.data)
        return A4W4_GPU_OK;
    int i = 0, rc = A4W4_GPU_OK;
    while (i < NFILLS && s->ashc[i].valid &&
           (s->ashc[i].row_fill != d->row_fill || s->ashc[i].col_fill != d->col_fill))
        i++;
    if (i < NFILLS && s->ashc[i].valid) {
        s->ash = s->ashc[i].p;
        return A4W4_GPU_OK;
    }
    i = i < NFILLS ? i : NFILLS - 1; /* more fills than copies: the last one is replaced */
    s->ashc[i].valid = 0;
    if ((rc = upload(BUF_ASH + i, &s->ashc[i].p, d->a_scale_shuffled.data,
                     d->a_scale_shuffled.len)))
        return rc;
    s->ashc[i].row_fill = d->row_fill;
    s->ashc[i].col_fill = d->col_fill;
    s->ashc[i].valid = 1;
    s->ash = s->ashc[i].p;
    return A4W4_GPU_OK;
}

/* The operands and layouts on the device, the judge's passes. */
static int dj_open(void *self, const a4w4_case *c, const a4w4_case_data *d,
                   const a4w4_devneeds *need, char *why, size_t whylen)
{
    dj_state *s = self;
    (void)c;
    dj_close(s);
    s->d = d;
    s->need = *need;
    const size_t M = d->M, N = d->N, K = d->K;
    int rc = upload(BUF_A, &s->a, d->a_fp4.data, M * K / 2);
    if (!rc)
        rc = upload(BUF_AS, &s->as, d->a_scale.data, M * K / 32);
    if (!rc)
        rc = upload(BUF_W, &s->w, d->w_fp4.data, N * K / 2);
    if (!rc)
        rc = upload(BUF_WS, &s->ws, d->w_scale.data, N * K / 32);
    if (!rc)
        rc = sync_ash(s);
    if (!rc && d->w_scale_swizzled.data)
        rc = upload(BUF_WSW, &s->wsw, d->w_scale_swizzled.data, d->w_scale_swizzled.len);
    if (!rc && d->w_fp4_shuffled.data) { /* the judge's §3.1 preshuffle of the whole W */
        s->wsh = buf_get(BUF_WSH, N * K / 2, &rc);
        if (!rc && a4w4j_preshuffle(s->w, N, K, s->wsh))
            return dj_err(why, whylen, "GPU judge preshuffle", 1);
    }
    if (rc)
        return dj_err(why, whylen, "GPU judge upload", rc);
    a4w4j_operands op = {s->a, s->as, s->w, s->ws, d->a_fp4.data, d->a_scale.data,
                         d->w_fp4.data, d->w_scale.data, M, N, K};
    double t0 = a4w4_now();
    if ((rc = a4w4j_open(&op, &s->jc)) ||
        (rc = a4w4j_prepare(s->jc, need->ordered_s, 1, need->bounded_s)))
        return dj_err(why, whylen, "GPU judge", rc);
    const uint16_t *q;
    unsigned ns;
    if (need->atomic_s && (rc = a4w4j_atomic(s->jc, need->atomic_s, &q, &ns)))
        return dj_err(why, whylen, "GPU judge atomic(S)", rc);
    s->judge_ms = (a4w4_now() - t0) * 1e3;
    return 0;
}

/* The judge's atomic(S) split values (S = need.atomic_s) at the sample into q [count * S]
 * (a4w4_devsample.atomic_q), gathered split by split. */
static int atomic_sample(dj_state *s, const size_t *rows, const size_t *cols,
                         const a4w4_sample *smp, uint16_t *q)
{
    const unsigned S = s->need.atomic_s;
    const size_t N = s->d->N, n = s->d->M * N, count = smp->nrows * smp->ncols;
    const uint16_t *dq;
    unsigned ns;
    int rc = S ? a4w4j_atomic(s->jc, S, &dq, &ns) : A4W4J_EARG;
    uint16_t *one = rc ? NULL : malloc(count * 2 + 2);
    if (!rc && !one)
        rc = A4W4J_ENOMEM;
    if (!rc)
        memset(q, 0, count * S * 2);
    for (unsigned j = 0; !rc && j < ns; j++) {
        rc = a4w4j_gather(dq + j * n, 2, N, rows, smp->nrows, cols, smp->ncols, one);
        for (size_t i = 0; !rc && i < count; i++)
            q[i * S + j] = one[i];
    }
    free(one);
    return rc;
}

static int dj_sample(void *self, const a4w4_sample *smp, const a4w4_devsample *out, char *why,
                     size_t whylen)
{
    dj_state *s = self;
    const uint16_t *o1, *oS = NULL, *ex;
    const float *exf;
    const double *B = NULL, *E = NULL;
    const uint8_t *inf = NULL;
    int rc = a4w4j_ordered(s->jc, 1, &o1);
    if (!rc)
        rc = a4w4j_exact(s->jc, &ex, &exf, NULL, NULL);
    if (!rc && out->ordered_s)
        rc = a4w4j_ordered(s->jc, s->need.ordered_s, &oS);
    if (!rc && (out->bound || out->exact_f64 || out->infs))
        rc = s->need.bounded_s ? a4w4j_bound_limits(s->jc, s->need.bounded_s, &B, &E, &inf)
                               : A4W4J_EARG;
    const size_t N = s->d->N;
    const size_t *rows = smp->full ? NULL : smp->rows, *cols = smp->full ? NULL : smp->cols;
    if (!rc && out->ordered1)
        rc = a4w4j_gather(o1, 2, N, rows, smp->nrows, cols, smp->ncols, out->ordered1);
    if (!rc && out->exact)
        rc = a4w4j_gather(ex, 2, N, rows, smp->nrows, cols, smp->ncols, out->exact);
    if (!rc && out->exact_f32)
        rc = a4w4j_gather(exf, 4, N, rows, smp->nrows, cols, smp->ncols, out->exact_f32);
    if (!rc && oS)
        rc = a4w4j_gather(oS, 2, N, rows, smp->nrows, cols, smp->ncols, out->ordered_s);
    if (!rc && out->bound)
        rc = a4w4j_gather(B, 8, N, rows, smp->nrows, cols, smp->ncols, out->bound);
    if (!rc && out->exact_f64)
        rc = a4w4j_gather(E, 8, N, rows, smp->nrows, cols, smp->ncols, out->exact_f64);
    if (!rc && out->infs)
        rc = a4w4j_gather(inf, 1, N, rows, smp->nrows, cols, smp->ncols, out->infs);
    if (!rc && out->atomic_q)
        rc = atomic_sample(s, rows, cols, smp, out->atomic_q);
    return rc ? dj_err(why, whylen, "GPU judge sample", rc) : 0;
}

/* a4w4j_cmp -> the comparison record (engine/judge.h; first mismatches at their row and
 * column). */
static void to_comparison(const a4w4j_cmp *j, size_t N, a4w4_comparison *out)
{
    memset(out, 0, sizeof *out);
    out->checked = j->checked;
    out->mismatches = j->mismatches;
    out->unwritten = j->unwritten;
    out->max_ulp = j->max_ulp;
    out->bound_use = j->bound_use;
    out->bound_ulp_max = j->bound_ulp_max;
    out->bound_ulp_median = j->bound_ulp_median;
    out->bound_weighed = j->weighed;
    out->bound_vacuous = j->vacuous;
    out->nrec = j->nfirst < A4W4_ENTRY_MAX_FIRST ? j->nfirst : A4W4_ENTRY_MAX_FIRST;
    for (size_t i = 0; i < out->nrec; i++) {
        out->rec[i].row = j->first[i].index / N;
        out->rec[i].col = j->first[i].index % N;
        out->rec[i].got = j->first[i].got;
        out->rec[i].expected = j->first[i].expected;
    }
}

static int dj_oracle(void *self, const a4w4_case_data *d, int special, a4w4_devoracle *out,
                     char *why, size_t whylen)
{
    dj_state *s = self;
    const uint16_t *o1, *ex;
    const uint8_t *proven;
    size_t uncertain = 0;
    a4w4j_cmp cmp;
    memset(out, 0, sizeof *out);
    out->outputs = d->M * d->N;
    int rc = a4w4j_ordered(s->jc, 1, &o1);
    if (!rc)
        rc = a4w4j_exact(s->jc, &ex, NULL, &proven, &uncertain);
    if (!rc)
        rc = a4w4j_count_flags(proven, out->outputs, &out->proven);
    if (!rc)
        rc = a4w4j_compare_exact(o1, ex, proven, out->outputs, A4W4_POISON_BF16, &cmp);
    if (!rc && special)
        rc = a4w4j_nan_set(o1, ex, d->M, d->N, d->nan_a_row, d->nan_w_row, &out->nan_wrong,
                           &out->nans);
    if (rc)
        return dj_err(why, whylen, "GPU judge oracle", rc);
    to_comparison(&cmp, d->N, &out->ord_vs_exact);
    out->uncertain = uncertain;
    out->judge_ms = s->judge_ms;
    return 0;
}


static int is_bounded(const a4w4_backend *b);

static void tensors_of(const dj_state *s, uint16_t *y, a4w4_dev_tensors *t)
{
    memset(t, 0, sizeof *t);
    t->a_fp4 = s->a;
    t->a_scale = s->as;
    t->w_fp4 = s->w;
    t->w_scale = s->ws;
    t->a_scale_shuffled = s->ash;
    t->w_fp4_shuffled = s->wsh;
    t->w_scale_swizzled = s->wsw;
    t->x = s->x;
    t->y = y;
}

static int is_bounded(const a4w4_backend *b) { return !strncmp(b->contract, "bounded", 7); }
static int is_atomic(const a4w4_backend *b) { return !strncmp(b->contract, "atomic(", 7); }

/* The S of a bounded(S) backend (engine's run_device_needs: 0 reads as 1). */
static unsigned bounded_s(const a4w4_backend *b) { return b->split ? (unsigned)b->split : 1u; }

/* Compare y (every output) with b's contract. */
static int compare_contract(dj_state *s, const a4w4_backend *b, const uint16_t *y, a4w4j_cmp *c)
{
    const size_t n = s->d->M * s->d->N;
    const uint16_t *exp;
    const float *ef;
    const double *B;
    int rc;
    if (is_bounded(b)) { /* the runner's rule against the judge's limits (its S only) */
        const double *E;
        const uint8_t *inf;
        if ((rc = a4w4j_exact(s->jc, &exp, &ef, NULL, NULL)) ||
            (rc = a4w4j_bound_limits(s->jc, bounded_s(b), &B, &E, &inf)))
            return rc;
        return a4w4j_compare_limits(y, exp, B, E, inf, n, A4W4_POISON_BF16, c);
    }
    if (is_atomic(b)) { /* membership in the set of orders of its split values */
        const uint16_t *q;
        unsigned ns;
        if ((rc = a4w4j_atomic(s->jc, b->split, &q, &ns)))
            return rc;
        return a4w4j_compare_atomic(y, q, ns, n, A4W4_POISON_BF16, c);
    }
    if (!strcmp(b->contract, "exact"))
        rc = a4w4j_exact(s->jc, &exp, NULL, NULL, NULL);
    else
        rc = a4w4j_ordered(s->jc, b->split ? b->split : 1, &exp);
    return rc ? rc : a4w4j_compare_exact(y, exp, NULL, n, A4W4_POISON_BF16, c);
}

static int dj_run(void *self, const a4w4_backend *b, const a4w4_run_args *a, int variant,
                  int *brc, a4w4_comparison *out, a4w4_devcall *call, char *why,
                  size_t whylen)
{
    dj_state *s = self;
    const size_t n = s->d->M * s->d->N;
    uint16_t **yp = variant ? &s->y2 : &s->y;
    int rc = A4W4_GPU_OK;
    if (!*yp)
        *yp = buf_get(variant ? BUF_Y2 : BUF_Y, n * 2, &rc);
    if (!rc)
        rc = sync_ash(s);
    if (rc)
        return dj_err(why, whylen, "GPU output buffer", rc);
    if (a4w4j_fill16(*yp, n, A4W4_POISON_BF16))
        return dj_err(why, whylen, "GPU output poison", 1);
    if (b->split > 1 && !is_bounded(b) && !is_atomic(b)) { /* as either kernel family wants */
        size_t need = a4w4_gpu_gemm_workspace_bytes(s->d->M, s->d->N, s->d->K, b->split,
                                                    A4W4_GPU_SPLIT_ORDERED);
        need = need > n * 4 ? need : n * 4;
        if (s->work_bytes < need && (s->work = buf_get(BUF_WORK, need, &rc)))
            s->work_bytes = need;
    }
    if (rc)
        return dj_err(why, whylen, "GPU split-K workspace", rc);
    a4w4_dev_tensors t;
    tensors_of(s, *yp, &t);
    t.workspace = s->work;
    t.workspace_bytes = s->work ? s->work_bytes : 0;
    double t0 = a4w4_now();
    *brc = b->type->run_device(b->ctx, a, &t);
    const double run_ms = (a4w4_now() - t0) * 1e3;
    memset(out, 0, sizeof *out);
    memset(call, 0, sizeof *call);
    call->run_ms = run_ms;
    if (*brc != A4W4_OK) { /* the backend's reason is in a->why (the runner's buffer) */
        if (why != a->why)
            snprintf(why, whylen, "%s", a->why);
        return 0;
    }
    if (is_bounded(b) && bounded_s(b) != s->need.bounded_s && a->s && a->s->full && a->y) {
        /* a bounded(S) of an S the judge does not hold: every output back, the runner
         * judges them on the host against the C oracles' limits (run_bounded_dev) */
        if (a4w4j_gather(*yp, 2, s->d->N, NULL, s->d->M, NULL, s->d->N, a->y))
            return dj_err(why, whylen, "GPU gather", 1);
        return 0;
    }
    a4w4j_cmp c;
    if (!variant) {
        if ((rc = compare_contract(s, b, s->y, &c)))
            return dj_err(why, whylen, "GPU judge compare", rc);
        to_comparison(&c, s->d->N, out);
        call->has_y_hash = 1;
        call->y_hash = c.hash;
        out->has_bound = is_bounded(b);
        s->base_mismatches = c.mismatches;
        /* the outputs at the runner's sample, for the C oracles' re-check */
        const a4w4_sample *smp = a->s;
        if (a->y && a4w4j_gather(s->y, 2, s->d->N, smp->full ? NULL : smp->rows, smp->nrows,
                                 smp->full ? NULL : smp->cols, smp->ncols, a->y))
            return dj_err(why, whylen, "GPU gather", 1);
        return 0;
    }
    size_t changed = 0;
    if (is_bounded(b) || is_atomic(b)) { /* the order varies run to run: outputs newly
                                            * outside the bound or the set of orders */
        if ((rc = compare_contract(s, b, s->y2, &c)))
            return dj_err(why, whylen, "GPU judge compare", rc);
        changed = c.mismatches > s->base_mismatches ? c.mismatches - s->base_mismatches : 0;
    } else if ((rc = a4w4j_count_diff(s->y2, s->y, n, &changed))) {
        return dj_err(why, whylen, "GPU judge compare", rc);
    }
    out->checked = n;
    out->mismatches = changed;
    return 0;
}

/* Bytes of a device buffer against the reference; the first mismatch's tensor in rec.col. */
static int bytes_into(const void *got, const void *exp, size_t n, const void *scale,
                      size_t row_bytes, size_t which, a4w4_comparison *out)
{
    a4w4j_cmp c;
    int rc = a4w4j_compare_bytes(got, exp, n, scale, row_bytes, &c);
    if (rc)
        return rc;
    out->checked += n;
    if (c.mismatches && !out->mismatches && c.nfirst) {
        out->nrec = 1;
        out->rec[0].row = c.first[0].index;
        out->rec[0].col = which;
        out->rec[0].got = c.first[0].got;
        out->rec[0].expected = c.first[0].expected;
    }
    out->mismatches += c.mismatches;
    return 0;
}

static int dj_layouts(void *self, const a4w4_backend *b, const a4w4_case_data *d, int *brc,
                      a4w4_comparison *out, char *why, size_t whylen)
{
    dj_state *s = self;
    memset(out, 0, sizeof *out);
    int rc = sync_ash(s); /* first: the copy of the current fills is the reference */
    const void *ref[3] = {s->wsh, s->wsw, s->ash};
    const size_t len[3] = {d->w_fp4_shuffled.data ? d->w_fp4_shuffled.len : 0,
                           d->w_scale_swizzled.data ? d->w_scale_swizzled.len : 0,
                           d->a_scale_shuffled.data ? d->a_scale_shuffled.len : 0};
    a4w4_dev_tensors t;
    tensors_of(s, NULL, &t);
    for (int i = 0; i < 3 && !rc; i++)
        if (ref[i])
            t.out[i] = buf_get(BUF_OUT0 + i, len[i], &rc);
    if (!rc) {
        *brc = b->type->layouts_device(b->ctx, d, &t, why, whylen);
        for (int i = 0; i < 3 && !rc && *brc == A4W4_OK; i++)
            if (ref[i])
                rc = bytes_into(t.out[i], ref[i], len[i], NULL, 0, (size_t)i, out);
    }
    return rc ? dj_err(why, whylen, "GPU layouts", rc) : 0;
}

static int dj_quantize(void *self, const a4w4_backend *b, const a4w4_case *c,
                       const a4w4_case_data *d, int *brc, a4w4_comparison *out, char *why,
                       size_t whylen)
{
    dj_state *s = self;
    const size_t M = d->M, K = d->K;
    a4w4_dev_tensors t;
    memset(out, 0, sizeof *out);
    int rc = s->x ? A4W4_GPU_OK : upload(BUF_X, &s->x, d->x, M * K * 2);
    tensors_of(s, NULL, &t);
    if (!rc)
        t.out[0] = buf_get(BUF_OUT0, M * K / 2, &rc);
    if (!rc)
        t.out[1] = buf_get(BUF_OUT1, M * K / 32, &rc);
    if (!rc) {
        *brc = b->type->quantize_device(b->ctx, d, (int)c->mode, &t, why, whylen);
        /* codes of a NaN block are unspecified (contracts §2 step 4): skipped */
        if (*brc == A4W4_OK)
            rc = bytes_into(t.out[0], s->a, M * K / 2, s->as, K / 2, 0, out);
        if (!rc && *brc == A4W4_OK)
            rc = bytes_into(t.out[1], s->as, M * K / 32, NULL, 0, 1, out);
    }
    return rc ? dj_err(why, whylen, "GPU quantizer", rc) : 0;
}

static const char *dj_describe(void *self) { return ((dj_state *)self)->describe; }

static void dj_set_fault(void *self, int fault)
{
    (void)self;
    a4w4j_set_fault(fault);
}

static const a4w4_devjudge g_judge = {&g_dj,       dj_open,     dj_sample, dj_oracle,
                                      dj_run,      dj_layouts,  dj_quantize, dj_close,
                                      dj_describe, dj_set_fault};

const a4w4_devjudge *a4w4_hip_devjudge(char *why, size_t whylen)
{
    char name[128];
    if (a4w4_gpu_available(name, sizeof name) < 1 || a4w4j_device_count() < 1) {
        snprintf(why, whylen, "host (no GPU for the judge)");
        return NULL;
    }
    snprintf(g_dj.describe, sizeof g_dj.describe, "%s (%s), every output of the GPU backends "
             "compared on the device", name, a4w4_gpu_platform());
    return &g_judge;
}
