/* devjudge_hip.c — the device judge of engine/devjudge.h over the GPU judge of
 * ref/gpu/a4w4_judge_gpu.h (GPU builds only). One case at a time: its row-major operands are
 * uploaded once and shared by every HIP backend of the process, into device buffers kept
 * from case to case; the ASM layouts the backends
 * read come from the host's reference (the scales, small) and from the judge's preshuffle
 * (the weight, as large as W); the judge computes the expected outputs of the contracts the
 * selected backends keep, and every backend's outputs are compared on the device. The
 * runner re-checks the judge and each verdict on its sample with the C oracles. A case whose
 * judge arrays exceed the judge's memory ceiling is judged in blocks of rows, with the same
 * records (plan_blocks; docs/gpu.md, "The device judge's memory"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gpu.h"
#include "a4w4_judge_gpu.h"
#include "a4w4_layout.h"
#include "fsutil.h"
#include "registry.h"
#include "runner.h"

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

/* The room buf_get adds to a buffer of n bytes (shapes vary by a few rows): a quarter, at
 * most 64 MiB (a split-K workspace of a 2e9-output case is 36 GB: a quarter more would not
 * fit beside it on an 80 GB device). */
static size_t buf_room(size_t n) { return n / 4 < ((size_t)64 << 20) ? n / 4 : (size_t)64 << 20; }

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
    size_t cap = n < 4096 ? 4096 : n + buf_room(n);
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
    a4w4j_case *jc; /* the judge on the whole case, or NULL: judged in blocks of rows */
    a4w4_devneeds need;
    int blocked;                /* the judge's arrays in blocks of rows (plan_blocks) */
    size_t block_rows;          /* rows of a judge block: M when the whole case fits */
    a4w4j_case *bjc;            /* in blocks: the judge on rows [bm0, bm0 + block_rows) */
    size_t bm0;
    unsigned long long *ulps;   /* in blocks, with bounded(S): every output's ULPs, the median */
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
    a4w4j_close(s->bjc);
    a4w4_gpu_free(s->ulps);
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

/* ---- the judge's memory (docs/gpu.md, "The device judge's memory") ------------------------ */

/* Bytes the judge keeps per output for need (ref/gpu/a4w4_judge_api.hip's arrays): ordered(1)
 * and ordered(S) bf16, exact bf16 and fp32, the prover's and the uncertain flags, with
 * bounded(S) the bound, the exact value in double and the ±Inf flags, and with atomic(S) its
 * split values in bf16 (at most S of them). */
static size_t judge_per_output(const a4w4_devneeds *need)
{
    return 2 + (need->ordered_s > 1 ? 2u : 0u) + 2 + 4 + 1 + 1 + (need->bounded_s ? 17u : 0u) +
           2u * need->atomic_s;
}

/* The split-K workspace bytes of an ordered(S) run on M x N x K, S > 1, for a backend that
 * does not say what it uses: the most either kernel family wants (gpu/a4w4_gpu.h: the portable
 * kernel's partial sums, M*N*4 a split; the matrix units' one accumulator, M*N*4). */
static size_t family_workspace(size_t M, size_t N, size_t K, unsigned S)
{
    const size_t w = a4w4_gpu_gemm_workspace_bytes(M, N, K, S, A4W4_GPU_SPLIT_ORDERED);
    return w > M * N * 4 ? w : M * N * 4;
}

/* Device bytes the case's GEMM runs still allocate beyond what g_bufs holds: the outputs, a
 * pad variant's outputs (when the case has pads: a4w4_pad_variant_count) and, with an
 * ordered(S) backend, its split-K workspace (buf_get's room included), less the buffers they
 * replace (buf_get frees a buffer before growing it). */
static size_t runs_still_need(const a4w4_case_data *d, const a4w4_devneeds *need)
{
    const size_t n = d->M * d->N;
    const size_t work = need->work_bytes != SIZE_MAX
                            ? need->work_bytes
                            : family_workspace(d->M, d->N, d->K, need->ordered_s);
    const size_t want[3] = {n * 2, a4w4_pad_variant_count(d->M, d->K) ? n * 2 : 0, work};
    const int buf[3] = {BUF_Y, BUF_Y2, BUF_WORK};
    size_t sum = 0;
    for (int i = 0; i < 3; i++)
        if (want[i] && g_bufs[buf[i]].cap < want[i])
            sum += want[i] + buf_room(want[i]) - g_bufs[buf[i]].cap;
    return sum;
}

/* The ceiling of the judge's arrays in bytes: A4W4_JUDGE_MEM_BYTES when set (a byte count;
 * tests force blocks with it), else the device's free memory less what the GEMM runs still
 * take (runs_still_need) and a headroom of 1/16 of the device's memory (the runtime's own
 * allocations, fragmentation). 0, or nonzero with why (a bad A4W4_JUDGE_MEM_BYTES). */
static int judge_ceiling(const a4w4_case_data *d, const a4w4_devneeds *need, size_t *ceiling,
                         int *forced, char *why, size_t whylen)
{
    const char *v = getenv("A4W4_JUDGE_MEM_BYTES");
    *forced = v && *v;
    if (*forced) {
        char *end = NULL;
        errno = 0;
        const unsigned long long x = strtoull(v, &end, 10);
        if (errno || *end || *v < '0' || *v > '9') {
            snprintf(why, whylen, "A4W4_JUDGE_MEM_BYTES=%s: not a byte count (digits only)", v);
            return 1;
        }
        *ceiling = (size_t)x;
        return 0;
    }
    size_t free_b = 0, total = 0;
    if (a4w4j_mem_info(&free_b, &total))
        return dj_err(why, whylen, "GPU memory info", 1);
    const size_t taken = runs_still_need(d, need) + total / 16;
    *ceiling = free_b > taken ? free_b - taken : 0;
    return 0;
}

/* Whole case or blocks of rows: the judge's arrays of the whole case when they fit its ceiling
 * (with bounded(S) also the comparison's ULPs, 8 bytes an output, and its select's room),
 * else blocks of as many rows as fit beside the ULPs of every output (the median's, s->ulps).
 * A case whose ULPs and one row do not fit: 2 with why naming the case and the bytes. */
static int plan_blocks(dj_state *s, const a4w4_case *c, char *why, size_t whylen)
{
    const a4w4_case_data *d = s->d;
    const size_t M = d->M, N = d->N, n = M * N, per = judge_per_output(&s->need);
    const size_t keep = s->need.bounded_s ? n * 8 : 0; /* the ULPs of every output */
    const size_t whole = n * per + keep + keep / 4;
    size_t ceiling = 0;
    int forced = 0;
    if (judge_ceiling(d, &s->need, &ceiling, &forced, why, whylen))
        return A4W4_DEVJUDGE_NOFIT; /* the case failed, not judged on the host instead */
    if (whole > ceiling && !forced) { /* what the judge keeps between cases first */
        a4w4j_trim();
        if (judge_ceiling(d, &s->need, &ceiling, &forced, why, whylen))
            return A4W4_DEVJUDGE_NOFIT;
    }
    s->block_rows = M;
    s->blocked = 0;
    if (whole <= ceiling)
        return 0;
    const size_t rows = ceiling > keep ? (ceiling - keep) / (N * per) : 0;
    if (!rows) {
        snprintf(why, whylen, "case %s does not fit the device: the judge needs at least %zu "
                 "bytes (%zu outputs: %zu for a block of one row at %zu bytes an output, %zu for "
                 "every output's ULPs; %zu for the whole case), its ceiling is %zu bytes (%s)",
                 c->name, N * per + keep, n, N * per, per, keep, whole, ceiling,
                 forced ? "A4W4_JUDGE_MEM_BYTES" : "free device memory less the outputs and "
                 "1/16 of the device");
        return A4W4_DEVJUDGE_NOFIT;
    }
    s->blocked = 1;
    s->block_rows = rows < M ? rows : M;
    if (keep && a4w4_gpu_malloc((void **)&s->ulps, keep) != A4W4_GPU_OK) {
        s->ulps = NULL;
        snprintf(why, whylen, "case %s does not fit the device: the ULPs of its %zu outputs "
                 "(%zu bytes): %s", c->name, n, keep, a4w4_gpu_last_error());
        return A4W4_DEVJUDGE_NOFIT;
    }
    return 0;
}

/* a4w4j_gen_w's number of regime r (the range regime is never deferred:
 * a4w4_case_generate_devw; -1 makes a4w4j_gen_w refuse it). */
static int wgen_regime(a4w4_regime r)
{
    switch (r) {
    case A4W4_REGIME_EXACT: return A4W4J_WGEN_EXACT;
    case A4W4_REGIME_NORMAL: return A4W4J_WGEN_NORMAL;
    case A4W4_REGIME_WIDE: return A4W4J_WGEN_WIDE;
    case A4W4_REGIME_SPECIAL: return A4W4J_WGEN_SPECIAL;
    case A4W4_REGIME_CODE0: return A4W4J_WGEN_CODE0;
    case A4W4_REGIME_TINY: return A4W4J_WGEN_TINY;
    default: return -1;
    }
}

/* The host's copy of W for the judge's plain-oracle fallback: codes (scales when scales),
 * or NULL when W was made on the device (the judge downloads the rows it needs). */
static const uint8_t *host_w(const a4w4_case_data *d, int scales)
{
    return d->w_deferred ? NULL : scales ? d->w_scale.data : d->w_fp4.data;
}

/* W of case c made on the device (ref/gpu's a4w4j_gen_w; docs/gpu.md, "W made on the device")
 * into the device buffers the upload would fill: codes, scales and, where the shape has them,
 * the swizzled scales; nothing of W crosses the bus. The runner's d->w_deferred says the host
 * holds only its sample's rows. 0, a4w4_gpu's code (allocation), or -1 (the generator). */
static int make_w(dj_state *s, const a4w4_case *c)
{
    const a4w4_case_data *d = s->d;
    const size_t N = d->N, K = d->K;
    int rc = A4W4_GPU_OK;
    s->w = buf_get(BUF_W, N * K / 2, &rc);
    if (!rc)
        s->ws = buf_get(BUF_WS, N * K / 32, &rc);
    if (!rc && d->w_scale_swizzled.data)
        s->wsw = buf_get(BUF_WSW, d->w_scale_swizzled.len, &rc);
    if (rc)
        return rc;
    const a4w4j_wgen g = {c->seed, c->name, N, K, wgen_regime(c->regime)};
    return a4w4j_gen_w(&g, s->w, s->ws, d->w_scale_swizzled.data ? s->wsw : NULL) ? -1 : 0;
}

/* The operands and layouts on the device, the judge's passes. */
static int dj_open(void *self, const a4w4_case *c, const a4w4_case_data *d,
                   const a4w4_devneeds *need, char *why, size_t whylen)
{
    dj_state *s = self;
    dj_close(s);
    s->d = d;
    s->need = *need;
    const size_t M = d->M, N = d->N, K = d->K;
    int rc = upload(BUF_A, &s->a, d->a_fp4.data, M * K / 2);
    if (!rc)
        rc = upload(BUF_AS, &s->as, d->a_scale.data, M * K / 32);
    if (!rc && d->w_deferred) {
        if ((rc = make_w(s, c)))
            return rc == -1 ? dj_err(why, whylen, "GPU judge: W on the device", 1) : rc;
    } else {
        if (!rc)
            rc = upload(BUF_W, &s->w, d->w_fp4.data, N * K / 2);
        if (!rc)
            rc = upload(BUF_WS, &s->ws, d->w_scale.data, N * K / 32);
        if (!rc && d->w_scale_swizzled.data)
            rc = upload(BUF_WSW, &s->wsw, d->w_scale_swizzled.data, d->w_scale_swizzled.len);
    }
    if (!rc)
        rc = sync_ash(s);
    if (!rc && d->w_fp4_shuffled.data) { /* the judge's §3.1 preshuffle of the whole W */
        s->wsh = buf_get(BUF_WSH, N * K / 2, &rc);
        if (!rc && a4w4j_preshuffle(s->w, N, K, s->wsh))
            return dj_err(why, whylen, "GPU judge preshuffle", 1);
    }
    if (rc)
        return dj_err(why, whylen, "GPU judge upload", rc);
    if ((rc = plan_blocks(s, c, why, whylen)))
        return rc;
    if (s->blocked) /* each use opens the judge on its block (judge_at) */
        return 0;
    a4w4j_operands op = {s->a, s->as, s->w, s->ws, d->a_fp4.data, d->a_scale.data,
                         host_w(d, 0), host_w(d, 1), M, N, K};
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

/* Rows [m0, m0 + block_len) are one judge block. */
static size_t block_len(const dj_state *s, size_t m0)
{
    const size_t left = s->d->M - m0;
    return left < s->block_rows ? left : s->block_rows;
}

/* The judge on the block of rows from m0 (the whole case's when it fits): a block's judge
 * case is opened on the operands' rows [m0, m0 + block_len) and kept until another block is
 * asked for; its passes run when first needed (a4w4_judge_gpu.h). */
static int judge_at(dj_state *s, size_t m0, a4w4j_case **jc)
{
    *jc = s->jc;
    if (s->jc)
        return A4W4J_OK;
    if (!s->bjc || s->bm0 != m0) {
        const a4w4_case_data *d = s->d;
        const size_t K = d->K;
        a4w4j_close(s->bjc);
        s->bjc = NULL;
        a4w4j_operands op = {(const uint8_t *)s->a + m0 * K / 2,
                             (const uint8_t *)s->as + m0 * K / 32, s->w, s->ws,
                             d->a_fp4.data + m0 * K / 2, d->a_scale.data + m0 * K / 32,
                             host_w(d, 0), host_w(d, 1), block_len(s, m0), d->N, K};
        int rc = a4w4j_open(&op, &s->bjc);
        if (rc)
            return rc;
        s->bm0 = m0;
    }
    *jc = s->bjc;
    return A4W4J_OK;
}

/* dev, the values of a block of rows [m0, m0 + rows) of the case (elem bytes each, row length
 * N), at the sample's outputs in that block into host (the sample's grid [nrows, ncols];
 * NULL: not wanted). */
static int gather_block(const void *dev, size_t elem, size_t N, size_t m0, size_t rows,
                        size_t M, const a4w4_sample *smp, void *host)
{
    uint8_t *h = host;
    if (!host)
        return A4W4J_OK;
    if (smp->full)
        return a4w4j_gather(dev, elem, N, NULL, rows, NULL, smp->ncols, h + m0 * N * elem);
    if (m0 == 0 && rows == M) /* the whole case */
        return a4w4j_gather(dev, elem, N, smp->rows, smp->nrows, smp->cols, smp->ncols, h);
    size_t nl = 0, *lr = calloc(smp->nrows + 1, sizeof *lr);
    size_t *at = malloc((smp->nrows + 1) * sizeof *at);
    for (size_t i = 0; lr && at && i < smp->nrows; i++)
        if (smp->rows[i] >= m0 && smp->rows[i] < m0 + rows) {
            lr[nl] = smp->rows[i] - m0;
            at[nl++] = i;
        }
    const size_t row_bytes = smp->ncols * elem;
    uint8_t *tmp = lr && at ? malloc(nl * row_bytes + 1) : NULL;
    int rc = tmp ? a4w4j_gather(dev, elem, N, lr, nl, smp->cols, smp->ncols, tmp) : A4W4J_ENOMEM;
    for (size_t r = 0; !rc && r < nl; r++)
        memcpy(h + at[r] * row_bytes, tmp + r * row_bytes, row_bytes);
    free(lr);
    free(at);
    free(tmp);
    return rc;
}

/* The judge's atomic(S) split values (S = need.atomic_s) of one block (its judge jc, rows
 * from m0) at the sample's outputs in that block into q (a4w4_devsample.atomic_q: output i's
 * values at q[i * S ..]), gathered split by split. */
static int atomic_block(dj_state *s, a4w4j_case *jc, size_t m0, const a4w4_sample *smp,
                        uint16_t *q)
{
    const unsigned S = s->need.atomic_s;
    const size_t N = s->d->N, M = s->d->M, rows = block_len(s, m0), nb = rows * N;
    const size_t count = smp->nrows * smp->ncols;
    const uint16_t *dq;
    unsigned ns;
    int rc = S ? a4w4j_atomic(jc, S, &dq, &ns) : A4W4J_EARG;
    uint16_t *one = rc ? NULL : malloc(count * 2 + 2);
    if (!rc && !one)
        rc = A4W4J_ENOMEM;
    for (unsigned j = 0; !rc && j < ns; j++) {
        rc = gather_block(dq + j * nb, 2, N, m0, rows, M, smp, one);
        for (size_t i = 0; !rc && i < smp->nrows; i++) {
            const size_t r = smp->full ? i : smp->rows[i];
            for (size_t c = 0; r >= m0 && r < m0 + rows && c < smp->ncols; c++)
                q[(i * smp->ncols + c) * S + j] = one[i * smp->ncols + c];
        }
    }
    free(one);
    return rc;
}

/* The judge's values of one block (its judge jc, rows from m0) at the sample. */
static int sample_block(dj_state *s, a4w4j_case *jc, size_t m0, const a4w4_sample *smp,
                        const a4w4_devsample *out)
{
    const uint16_t *o1, *oS = NULL, *ex;
    const float *exf;
    const double *B = NULL, *E = NULL;
    const uint8_t *inf = NULL;
    int rc = a4w4j_prepare(jc, s->need.ordered_s, 1, s->need.bounded_s);
    if (!rc)
        rc = a4w4j_ordered(jc, 1, &o1);
    if (!rc)
        rc = a4w4j_exact(jc, &ex, &exf, NULL, NULL);
    if (!rc && out->ordered_s)
        rc = a4w4j_ordered(jc, s->need.ordered_s, &oS);
    if (!rc && (out->bound || out->exact_f64 || out->infs))
        rc = s->need.bounded_s ? a4w4j_bound_limits(jc, s->need.bounded_s, &B, &E, &inf)
                               : A4W4J_EARG;
    const size_t N = s->d->N, M = s->d->M, rows = block_len(s, m0);
    if (!rc)
        rc = gather_block(o1, 2, N, m0, rows, M, smp, out->ordered1);
    if (!rc)
        rc = gather_block(ex, 2, N, m0, rows, M, smp, out->exact);
    if (!rc)
        rc = gather_block(exf, 4, N, m0, rows, M, smp, out->exact_f32);
    if (!rc && oS)
        rc = gather_block(oS, 2, N, m0, rows, M, smp, out->ordered_s);
    if (!rc)
        rc = gather_block(B, 8, N, m0, rows, M, smp, out->bound);
    if (!rc)
        rc = gather_block(E, 8, N, m0, rows, M, smp, out->exact_f64);
    if (!rc)
        rc = gather_block(inf, 1, N, m0, rows, M, smp, out->infs);
    if (!rc && out->atomic_q)
        rc = atomic_block(s, jc, m0, smp, out->atomic_q);
    return rc;
}

static int dj_sample(void *self, const a4w4_sample *smp, const a4w4_devsample *out, char *why,
                     size_t whylen)
{
    dj_state *s = self;
    a4w4j_case *jc;
    int rc = A4W4J_OK;
    if (out->atomic_q) /* the tail past the non-empty splits: 0 */
        memset(out->atomic_q, 0, smp->nrows * smp->ncols * s->need.atomic_s * 2);
    for (size_t m0 = 0; !rc && m0 < s->d->M; m0 += s->block_rows)
        if (!(rc = judge_at(s, m0, &jc)))
            rc = sample_block(s, jc, m0, smp, out);
    return rc ? dj_err(why, whylen, "GPU judge sample", rc) : 0;
}

/* Block comparison b (its outputs from k0 on in the case) added to the case's t: counts
 * summed, maxima kept, first mismatches appended in row-major order (blocks come in order).
 * t->hash is the sum of the blocks' (each over its own indices): the caller rehashes. */
static void cmp_merge(a4w4j_cmp *t, const a4w4j_cmp *b, size_t k0)
{
    t->checked += b->checked;
    t->mismatches += b->mismatches;
    t->unwritten += b->unwritten;
    t->max_ulp = b->max_ulp > t->max_ulp ? b->max_ulp : t->max_ulp;
    t->hash += b->hash;
    t->bound_use = b->bound_use > t->bound_use ? b->bound_use : t->bound_use;
    t->bound_ulp_max = b->bound_ulp_max > t->bound_ulp_max ? b->bound_ulp_max : t->bound_ulp_max;
    t->bound_ulp_median = b->bound_ulp_median; /* one block's: the caller's when several */
    t->weighed += b->weighed;
    t->vacuous += b->vacuous;
    for (size_t i = 0; i < b->nfirst && t->nfirst < A4W4J_MAX_FIRST; i++) {
        t->first[t->nfirst] = b->first[i];
        t->first[t->nfirst++].index += k0;
    }
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

/* The oracle's facts of one block (its judge jc, rows from m0) added to out and cmp. */
static int oracle_block(dj_state *s, a4w4j_case *jc, size_t m0, int special,
                        a4w4_devoracle *out, a4w4j_cmp *cmp)
{
    const a4w4_case_data *d = s->d;
    const uint16_t *o1, *ex;
    const uint8_t *proven;
    const size_t rows = block_len(s, m0), n = rows * d->N;
    size_t uncertain = 0, proven_n = 0, wrong = 0, nans = 0;
    a4w4j_cmp bc;
    double t0 = a4w4_now();
    int rc = a4w4j_prepare(jc, s->need.ordered_s, 1, s->need.bounded_s);
    if (!s->jc) /* in blocks: the passes run here */
        s->judge_ms += (a4w4_now() - t0) * 1e3;
    if (!rc)
        rc = a4w4j_ordered(jc, 1, &o1);
    if (!rc)
        rc = a4w4j_exact(jc, &ex, NULL, &proven, &uncertain);
    if (!rc)
        rc = a4w4j_count_flags(proven, n, &proven_n);
    if (!rc)
        rc = a4w4j_compare_exact(o1, ex, proven, n, A4W4_POISON_BF16, &bc);
    const size_t ra = d->nan_a_row >= m0 && d->nan_a_row < m0 + rows ? d->nan_a_row - m0
                                                                       : (size_t)-1;
    if (!rc && special)
        rc = a4w4j_nan_set(o1, ex, rows, d->N, ra, d->nan_w_row, &wrong, &nans);
    if (rc)
        return rc;
    cmp_merge(cmp, &bc, m0 * d->N);
    out->proven += proven_n;
    out->uncertain += uncertain;
    out->nan_wrong += wrong;
    out->nans += nans;
    return A4W4J_OK;
}

static int dj_oracle(void *self, const a4w4_case_data *d, int special, a4w4_devoracle *out,
                     char *why, size_t whylen)
{
    dj_state *s = self;
    a4w4j_case *jc;
    a4w4j_cmp cmp;
    memset(out, 0, sizeof *out);
    memset(&cmp, 0, sizeof cmp);
    out->outputs = d->M * d->N;
    int rc = A4W4J_OK;
    for (size_t m0 = 0; !rc && m0 < d->M; m0 += s->block_rows)
        if (!(rc = judge_at(s, m0, &jc)))
            rc = oracle_block(s, jc, m0, special, out, &cmp);
    if (rc)
        return dj_err(why, whylen, "GPU judge oracle", rc);
    to_comparison(&cmp, d->N, &out->ord_vs_exact);
    out->judge_ms = s->judge_ms;
    out->block_rows = s->block_rows;
    out->blocks = (d->M + s->block_rows - 1) / s->block_rows;
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

/* Compare y, the n outputs of one judge block, with b's contract (jc the block's judge);
 * ulps: in blocks, where a bounded(S) comparison leaves the block's ULPs (*measured counts
 * them), else NULL. */
static int compare_block(a4w4j_case *jc, const a4w4_backend *b, const uint16_t *y, size_t n,
                         unsigned long long *ulps, size_t *measured, a4w4j_cmp *c)
{
    const uint16_t *exp;
    const float *ef;
    const double *B;
    int rc;
    if (is_bounded(b)) { /* the runner's rule against the judge's limits (its S only) */
        const double *E;
        const uint8_t *inf;
        size_t m = 0;
        if ((rc = a4w4j_bound_limits(jc, bounded_s(b), &B, &E, &inf)) || /* one pass: */
            (rc = a4w4j_exact(jc, &exp, &ef, NULL, NULL)))             /* exact with it */
            return rc;
        if (!ulps)
            return a4w4j_compare_limits(y, exp, B, E, inf, n, A4W4_POISON_BF16, c);
        rc = a4w4j_compare_limits_part(y, exp, B, E, inf, n, A4W4_POISON_BF16, ulps, &m, c);
        *measured += m;
        return rc;
    }
    if (is_atomic(b)) { /* membership in the set of orders of its split values */
        const uint16_t *q;
        unsigned ns;
        if ((rc = a4w4j_atomic(jc, b->split, &q, &ns)))
            return rc;
        return a4w4j_compare_atomic(y, q, ns, n, A4W4_POISON_BF16, c);
    }
    if (!strcmp(b->contract, "exact"))
        rc = a4w4j_exact(jc, &exp, NULL, NULL, NULL);
    else
        rc = a4w4j_ordered(jc, b->split ? b->split : 1, &exp);
    return rc ? rc : a4w4j_compare_exact(y, exp, NULL, n, A4W4_POISON_BF16, c);
}

/* Compare y (every output) with b's contract, a judge block at a time. In blocks, the
 * bounded(S) median is selected over every output's ULPs and the hash taken over every
 * output at its own index (a4w4j_compare_exact of y with itself), as the whole case's. */
static int compare_contract(dj_state *s, const a4w4_backend *b, const uint16_t *y, a4w4j_cmp *c)
{
    const size_t M = s->d->M, N = s->d->N;
    size_t measured = 0;
    a4w4j_case *jc;
    a4w4j_cmp bc, h;
    int rc = A4W4J_OK;
    memset(c, 0, sizeof *c);
    if (!s->jc && is_bounded(b) && !s->ulps && /* a bounded(S) of another S than planned */
        a4w4_gpu_malloc((void **)&s->ulps, M * N * 8) != A4W4_GPU_OK) {
        s->ulps = NULL;
        return A4W4J_ENOMEM;
    }
    for (size_t m0 = 0; !rc && m0 < M; m0 += s->block_rows) {
        if (!(rc = judge_at(s, m0, &jc)))
            rc = compare_block(jc, b, y + m0 * N, block_len(s, m0) * N,
                               s->jc || !s->ulps ? NULL : s->ulps + m0 * N, &measured, &bc);
        if (!rc)
            cmp_merge(c, &bc, m0 * N);
    }
    if (rc || s->jc)
        return rc;
    if (is_bounded(b) && s->ulps)
        rc = a4w4j_ulps_median(s->ulps, M * N, measured, &c->bound_ulp_median);
    if (!rc)
        rc = a4w4j_compare_exact(y, y, NULL, M * N, A4W4_POISON_BF16, &h);
    if (!rc)
        c->hash = h.hash;
    return rc;
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
    if (b->split > 1 && !is_bounded(b) && !is_atomic(b)) { /* what this backend uses */
        const size_t need = b->type->device_workspace
                                ? b->type->device_workspace(b->ctx, s->d->M, s->d->N, s->d->K)
                                : family_workspace(s->d->M, s->d->N, s->d->K, b->split);
        if (need && s->work_bytes < need && (s->work = buf_get(BUF_WORK, need, &rc)))
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
