/* run_fixture.h — what the runner's unit tests share (test_runner.c, test_run_gemm.c,
 * test_run_golden.c): a GEMM backend computing ordered(1) from the oracle with one fault
 * applied per test (g_fault), run through a4w4_run_case on one generated case (run_one), and
 * the lookups of its entry. Header only; include it after <criterion/criterion.h>. */
#ifndef A4W4_RUN_FIXTURE_H
#define A4W4_RUN_FIXTURE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "a4w4_bound.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "a4w4_tree.h"
#include "backend.h"
#include "gen.h"
#include "runner.h"
#include "test_util.h"

/* A correct ordered(1) GEMM from the oracle, then a per-test fault applied to its output. */
typedef enum { F_NONE, F_UNWRITTEN, F_FLIP_ONE, F_NAN_EVERYWHERE, F_OOB_WRITE, F_READ_ROW_PAD,
               F_BF16_NEIGHBOUR, F_SPLIT4, F_ATOMIC, F_TREE, F_CODE0_126, F_Y_PAST_END,
               F_Y_BEFORE, F_WRITE_INPUT, F_TIMEOUT, F_ZERO_OFF_EXACT, F_NA_ALWAYS,
               F_NA_ON_VALUES } fault;
/* F_NA_ALWAYS: n/a on every call (a shape it does not support); F_NA_ON_VALUES: n/a unless
 * A's first scale is 0x7F (an answer about the values, not the shape) */
/* F_ZERO_OFF_EXACT: +0 wherever ordered(1) and exact differ (outputs outside the exact regime
 * necessarily), ordered(1) elsewhere: wrong under every contract */
/* F_TREE: the order the backend keeps (its plain oracle) */
static a4w4_tree g_tree __attribute__((unused));
static fault g_fault __attribute__((unused));
/* the runner's reading of E8M0 code 0 in run_one */
static int g_code0 __attribute__((unused)) = A4W4_CODE0_BOTH;
/* the backend reads E8M0 code 0 as 2^-126 whatever its fault */
static int g_as126 __attribute__((unused));
static unsigned g_atomic_S __attribute__((unused)) = 4;   /* F_ATOMIC: the split count */
static uint64_t g_order_seed __attribute__((unused)) = 1; /* F_ATOMIC: the orders' random stream */

static inline uint64_t next_rand(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

/* Shuffle v[0..n) (Fisher-Yates on the stream x). */
static inline void shuffle(float *v, size_t n, uint64_t *x)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(next_rand(x) % i);
        float t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

/* One bf16-atomic split-K result (contracts §4.1 "bounded", the kernel model exactly): the
 * ordered(S) split ranges; each block value rounded once to fp32; a split's values summed in
 * fp32 in a random order; each split total rounded to bf16; the totals added in a random
 * order into a bf16 output from +0, each add in fp32 then rounded to bf16. */
static inline uint16_t atomic_splitk(const a4w4_dot_operands *op, unsigned S, uint64_t *x)
{
    size_t per = a4w4_split_k_per_split(op->K, S), ns = a4w4_split_count(op->K, S);
    float vals[512], parts[64];
    cr_assert(per / 32 <= 512 && ns <= 64);
    for (size_t j = 0; j < ns; j++) {
        size_t k0 = j * per, k1 = k0 + per < op->K ? k0 + per : op->K, n = 0;
        for (size_t k = k0; k < k1; k += 32) {
            a4w4_dot_operands b = {op->a_fp4 + k / 2, op->a_scale + k / 32, op->w_fp4 + k / 2,
                                   op->w_scale + k / 32, 32};
            a4w4_dot_exact(&b, NULL, &vals[n++]);
        }
        shuffle(vals, n, x);
        volatile float acc = 0.0f; /* one fp32 rounding per add */
        for (size_t i = 0; i < n; i++)
            acc = acc + vals[i];
        parts[j] = a4w4_bf16_to_f32(a4w4_f32_to_bf16(acc));
    }
    shuffle(parts, ns, x);
    uint16_t y = 0x0000;
    for (size_t j = 0; j < ns; j++) {
        volatile float t = a4w4_bf16_to_f32(y) + parts[j];
        y = a4w4_f32_to_bf16(t);
    }
    return y;
}

static inline int run_fault(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    const a4w4_case_data *d = a->d;
    const a4w4_sample *s = a->s;
    size_t nb = d->K / 32;
    if (g_fault == F_NA_ALWAYS || (g_fault == F_NA_ON_VALUES && d->a_scale.data[0] != 0x7F)) {
        snprintf(a->why, a->whylen, "shape not supported");
        return A4W4_EUNSUPPORTED;
    }
    if (g_fault == F_TIMEOUT) {
        snprintf(a->why, a->whylen, "timed out after 1 s");
        return A4W4_RUN_TIMEOUT;
    }
    for (size_t i = 0; i < s->nrows; i++)
        for (size_t j = 0; j < s->ncols; j++) {
            size_t m = s->full ? i : s->rows[i], n = s->full ? j : s->cols[j];
            a4w4_dot_operands op = {d->a_fp4.data + m * d->K / 2, d->a_scale.data + m * nb,
                                    d->w_fp4.data + n * d->K / 2, d->w_scale.data + n * nb, d->K};
            uint8_t as[1024], ws[1024]; /* F_CODE0_126: the scales with code 0 read as 2^-126 */
            if (g_fault == F_CODE0_126 || g_as126) {
                cr_assert(nb <= 1024);
                for (size_t k = 0; k < nb; k++) {
                    as[k] = op.a_scale[k] ? op.a_scale[k] : 0x01;
                    ws[k] = op.w_scale[k] ? op.w_scale[k] : 0x01;
                }
                op.a_scale = as;
                op.w_scale = ws;
            }
            if (g_fault == F_TREE) {
                cr_assert_eq(a4w4_dot_tree(&op, &g_tree, &a->y[i * s->ncols + j], NULL), A4W4_OK);
                continue;
            }
            if (g_fault == F_ATOMIC) {
                uint64_t x = g_order_seed * 0x9E3779B97F4A7C15ull + m * 7919 + n;
                a->y[i * s->ncols + j] = atomic_splitk(&op, g_atomic_S, &x);
                continue;
            }
            float v = a4w4_dot_ordered(&op, g_fault == F_SPLIT4 ? 4 : 1);
            if (g_fault == F_ZERO_OFF_EXACT) {
                uint16_t ex;
                a4w4_dot_exact(&op, &ex, NULL);
                v = ex == a4w4_f32_to_bf16(v) ? v : 0.0f;
            }
            if (g_fault == F_READ_ROW_PAD && m == d->M - 1) {
                /* mixes in the first activation-scale pad row (row M), as a kernel that reads
                 * its tile's pad rows would: 0x7F is 1.0, the variants change it */
                uint8_t pad = d->a_scale_shuffled.data[a4w4_act_scale_shuffle_index(d->M, nb, d->M, 0)];
                v += (float)pad;
            }
            a->y[i * s->ncols + j] = a4w4_f32_to_bf16(v);
        }
    size_t n = s->nrows * s->ncols;
    if (g_fault == F_UNWRITTEN)
        a->y[n - 1] = A4W4_POISON_BF16; /* as if never written */
    if (g_fault == F_FLIP_ONE)
        a->y[1] ^= 0x0001;
    if (g_fault == F_BF16_NEIGHBOUR)
        for (size_t k = 0; k < n; k++)
            if ((a->y[k] & 0x7FFF) && (a->y[k] & 0x7FFF) < 0x7F80)
                a->y[k] += 1; /* one ULP away from exact everywhere */
    if (g_fault == F_NAN_EVERYWHERE)
        for (size_t k = 0; k < n; k++)
            a->y[k] = 0x7FC0;
    if (g_fault == F_OOB_WRITE)
        ((uint8_t *)d->w_fp4.data)[d->w_fp4.len + 7] ^= 0xFF;
    if (g_fault == F_Y_PAST_END)
        for (size_t k = 0; k < 64; k++)
            a->y[n + k] = 0x3F80;
    if (g_fault == F_Y_BEFORE)
        a->y[-1] = 0x3F80;
    if (g_fault == F_WRITE_INPUT)
        ((uint8_t *)d->a_scale.data)[0] ^= 0x01;
    return A4W4_OK;
}

static a4w4_backend_type fault_type __attribute__((unused)) = {
    .name = "fault", .what = "test backend", .contract = "ordered(1)", .run = run_fault};

static uint64_t g_seed __attribute__((unused)) = 17;

/* The fault backend as an instance named "fault" keeping contract. */
static inline void fault_backend(a4w4_backend *b, const char *contract, unsigned split,
                                 int asm_layout)
{
    memset(b, 0, sizeof *b);
    b->type = &fault_type;
    snprintf(b->name, sizeof b->name, "fault");
    snprintf(b->contract, sizeof b->contract, "%s", contract);
    b->split = split;
    b->asm_layout = asm_layout;
}

static inline a4w4_entry_list run_one(const char *contract, unsigned split, int asm_layout,
                                      a4w4_regime regime, size_t M, size_t N, size_t K, int *fails)
{
    a4w4_backend b;
    fault_backend(&b, contract, split, asm_layout);
    a4w4_runner r = {.backends = &b, .nbackends = 1, .code0_reading = g_code0};
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "rt");
    c.M = M;
    c.N = N;
    c.K = K;
    c.regime = regime;
    snprintf(c.regime_text, sizeof c.regime_text, "x");
    c.seed = g_seed;
    a4w4_entry_list entries = {0};
    char err[256];
    cr_assert_eq(a4w4_run_case(&r, &c, &entries, err, sizeof err), A4W4_ST_OK, "%s", err);
    *fails = (int)a4w4_entry_list_failures(&entries);
    return entries;
}

static inline const a4w4_entry_result *entry_of(const a4w4_entry_list *entries, const char *backend)
{
    for (size_t i = 0; i < entries->n; i++)
        if (!strcmp(entries->items[i].backend, backend))
            return &entries->items[i];
    cr_assert_fail("no entry for %s", backend);
    return NULL;
}

static inline const char *verdict(const a4w4_entry_result *e)
{
    return a4w4_verdict_name(e->verdict);
}
static inline const char *note(const a4w4_entry_result *e) { return e->note; }

/* Outputs of the case (name, M, N, K, regime, g_seed; run_one's name is "rt") where ordered(1)
 * and exact differ: each oracle over the case's whole operands. */
static inline size_t ordered1_not_exact(const char *name, a4w4_regime regime, size_t M, size_t N,
                                        size_t K)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.M = M, c.N = N, c.K = K, c.regime = regime, c.seed = g_seed;
    a4w4_sample s;
    a4w4_case_data d;
    cr_assert_eq(a4w4_sample_make(M, N, K, c.seed, c.name, 1, &s), A4W4_OK);
    cr_assert_eq(a4w4_case_generate(&c, &s, &d), A4W4_OK);
    uint16_t *yo = malloc(M * N * 2), *ye = malloc(M * N * 2);
    cr_assert(yo && ye);
    a4w4_gemm_ordered(d.a_fp4.data, d.a_scale.data, d.w_fp4.data, d.w_scale.data, M, N, K, 1,
                      yo, NULL);
    a4w4_gemm_exact(d.a_fp4.data, d.a_scale.data, d.w_fp4.data, d.w_scale.data, M, N, K, ye,
                    NULL);
    size_t diff = 0;
    for (size_t k = 0; k < M * N; k++)
        diff += yo[k] != ye[k];
    free(yo);
    free(ye);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return diff;
}

#endif
