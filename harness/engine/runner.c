/* runner.c — see runner.h. */
#include "runner.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_bound.h"
#include "a4w4_gemm.h"
#include "a4w4_gemm_fast.h"
#include "a4w4_layout.h"
#include "a4w4_quote.h"
#include "annotate.h"
#include "check.h"
#include "devjudge.h"
#include "failing.h"
#include "fsutil.h"
#include "gen.h"
#include "integrity.h"
#include "judge.h"
#include "matrix.h"
#include "safetensors.h"
#include "sample_oracles.h"
#include "signature.h"

#define MAX_RECORDED A4W4_ENTRY_MAX_FIRST

/* Backends whose type is not thread_safe (GPU backends: one device, the HIP backends' per-case
 * device cache) are entered one call at a time, whatever the callers' threading (hazards
 * --jobs runs cases on several threads). Thread-safe backends and the oracles stay parallel. */
static pthread_mutex_t serial_mu = PTHREAD_MUTEX_INITIALIZER;

static void enter(const a4w4_backend *b)
{
    if (!b->type->thread_safe)
        pthread_mutex_lock(&serial_mu);
}

static void leave(const a4w4_backend *b)
{
    if (!b->type->thread_safe)
        pthread_mutex_unlock(&serial_mu);
}

static int call_run(const a4w4_backend *b, const a4w4_run_args *a)
{
    enter(b);
    int rc = b->type->run(b->ctx, a);
    leave(b);
    return rc;
}

static size_t row_at(const a4w4_sample *s, size_t i) { return s->full ? i : s->rows[i]; }
static size_t col_at(const a4w4_sample *s, size_t j) { return s->full ? j : s->cols[j]; }

/* The grid of sample s's outputs (judge.h): row-major nrows x ncols, at s's rows and columns. */
static a4w4_judge_grid grid_of(const a4w4_sample *s)
{
    a4w4_judge_grid g = {s->ncols, s->full ? NULL : s->rows, s->full ? NULL : s->cols};
    return g;
}

/* Append printf-style text to a note buffer (truncating at its end). */
static void note_add(char *note, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_add(char *note, size_t size, const char *fmt, ...)
{
    size_t L = strlen(note);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + L, size - L, fmt, ap);
    va_end(ap);
}

static void case_identity(a4w4_entry_result *e, const a4w4_case *c, a4w4_entry_kind kind,
                          const char *backend, const char *contract)
{
    a4w4_entry_identity(e, kind, c->name, c->M, c->N, c->K, c->regime_text,
                        (unsigned long long)c->seed, backend, contract);
    e->has_tags = 1;
    snprintf(e->tags, sizeof e->tags, "%s", c->tags);
}

/* What the n outputs of an entry were judged by: the compared ones bit for bit or within the
 * bound, the rest not judged (an entry that compared nothing, or an ambiguous one, matching
 * one reading of E8M0 code 0 only (contracts §1): all of them). After put_comparison. */
static void put_judged(a4w4_entry_result *e, const a4w4_comparison *cmp, size_t n)
{
    e->has_judged = 1;
    if (e->verdict == A4W4_VERDICT_AMBIGUOUS || e->vacuous) {
        e->judged_bit_exact = e->judged_in_bound = 0;
        e->not_judged = n;
        return;
    }
    e->judged_bit_exact = cmp->has_bound ? 0 : cmp->checked - cmp->not_finite;
    e->judged_in_bound = cmp->has_bound ? cmp->checked : 0;
    e->not_judged = n - e->judged_bit_exact - e->judged_in_bound;
}

static void put_comparison(a4w4_entry_result *e, const a4w4_comparison *cmp, const a4w4_sample *s,
                           double ms, size_t proven, a4w4_verdict verdict)
{
    e->checked = cmp->checked;
    e->sampled = !s->full;
    e->verdict = verdict;
    e->mismatches = cmp->mismatches;
    e->unwritten = cmp->unwritten;
    e->max_ulp = cmp->max_ulp;
    e->has_bound = cmp->has_bound;
    e->bound_use = cmp->bound_use;
    e->bound_ulp_median = cmp->bound_ulp_median;
    e->bound_ulp_max = cmp->bound_ulp_max;
    e->bound_weighed = cmp->bound_weighed;
    e->bound_vacuous = cmp->bound_vacuous;
    e->nfirst = cmp->nrec;
    for (size_t i = 0; i < cmp->nrec; i++) {
        a4w4_mismatch *m = &e->first[i];
        snprintf(m->tensor, sizeof m->tensor, "y");
        m->row = cmp->rec[i].row;
        m->col = cmp->rec[i].col;
        m->got = cmp->rec[i].got;
        m->expected = cmp->rec[i].expected;
        m->elem_bytes = 2;
    }
    e->time_ms = ms;
    e->exact_regime_outputs = proven;
}

/* The NaN set of a special or range case: exact is NaN exactly in the outputs reading a NaN
 * block, and ordered(1) there too; ordered(1) may be NaN elsewhere only in the range regime
 * (+Inf + -Inf of two block values past fp32, contracts §4.3). Counts the NaN outputs and the
 * outputs breaking that rule. */
static void nan_set(const a4w4_case *c, const a4w4_case_data *d, const a4w4_sample *s,
                    const a4w4_oracles *o, size_t *nans, size_t *wrong)
{
    *nans = *wrong = 0;
    for (size_t i = 0; i < s->nrows; i++)
        for (size_t j = 0; j < s->ncols; j++) {
            int dep = row_at(s, i) == d->nan_a_row || col_at(s, j) == d->nan_w_row;
            int en = a4w4_bf16_is_nan(o->exact[i * s->ncols + j]);
            int on = a4w4_bf16_is_nan(o->ordered1[i * s->ncols + j]);
            int extra = c->regime == A4W4_REGIME_RANGE ? 0 : on;
            *nans += (size_t)(en && on);
            *wrong += (size_t)(dep ? !(en && on) : en || extra);
        }
}

/* The oracle's own entry: ordered(1) == exact wherever the prover holds for the whole
 * sample, and in the special and range regimes NaN exactly in the outputs reading a NaN
 * block (nan_set). */
static int oracle_entry(const a4w4_case *c, const a4w4_case_data *d, const a4w4_sample *s,
                        const a4w4_oracles *o, a4w4_entry_result *e)
{
    a4w4_comparison cmp;
    int na = o->proven != o->count;
    char note[256] = "";
    a4w4_judge_grid grid = grid_of(s);
    if (!na)
        a4w4_judge_exact(&cmp, &grid, o->ordered1, o->exact, o->count, A4W4_POISON_UNWRITTEN,
                         NULL);
    else {
        memset(&cmp, 0, sizeof cmp);
        cmp.checked = o->count;
        snprintf(note, sizeof note, "%zu of %zu outputs outside the exact regime: exact is a "
                 "reference there, not a verdict", o->count - o->proven, o->count);
    }
    int fail = cmp.mismatches != 0;
    if (c->regime == A4W4_REGIME_SPECIAL || c->regime == A4W4_REGIME_RANGE) {
        size_t wrong, nans;
        nan_set(c, d, s, o, &nans, &wrong);
        note_add(note, sizeof note, "%sspecial blocks: %zu NaN outputs, %zu outside the "
                 "dependent set", note[0] ? "; " : "", nans, wrong);
        fail |= wrong != 0;
        na = 0;
    }
    case_identity(e, c, A4W4_ENTRY_OUTPUTS, "oracle", "ordered(1) == exact");
    put_comparison(e, &cmp, s, 0, o->proven,
                   a4w4_judge_verdict(fail, na && !fail ? A4W4_VERDICT_NA : A4W4_VERDICT_PASS,
                                      0, 0));
    snprintf(e->note, sizeof e->note, "%s", note);
    return fail;
}

/* One pad-dependence variant: the fills under test. */
typedef struct {
    uint8_t row_fill, col_fill, guard;
    const char *what;
} variant;

/* Where a case's operands come from, to rebuild them after a backend wrote into them: a
 * generated case (c over sample s) or given row-major operands op = {a_fp4, a_scale, w_fp4,
 * w_scale} of c's shape (a golden bundle's tensors, a capture's). */
typedef struct {
    const a4w4_case *c;
    const a4w4_sample *s;
    const uint8_t *const *op; /* NULL: generated */
    int all_rows;             /* generated: every row (a4w4_case_generate_all), not s's only */
} case_source;

/* What a case's GEMM entries are judged against: the oracles (E8M0 code 0 read as 2^-127,
 * contracts §1) and, when code 0 occurs, the same oracles on the operands with code 0 read
 * as 2^-126 (alt; NULL else), under the run's A4W4_CODE0_* policy; the run's timeout limit. */
typedef struct {
    a4w4_oracles *o, *alt;
    int policy, max_timeouts;
    const a4w4_devjudge *dev;   /* the case's device judge (NULL: everything on the host) */
    const a4w4_devoracle *dor;  /* its oracle facts over every output */
} judging;

/* What run_backend carries between its steps. */
typedef struct {
    a4w4_backend *b;
    const a4w4_contract *k; /* the contract b keeps on this case (its rule for the shape) */
    a4w4_case_data *d;
    const a4w4_sample *s;
    const judging *j;
    const case_source *src;
    a4w4_out_buf y, y2; /* the baseline outputs and a variant's, between poisoned guards */
    size_t n;           /* outputs in the sample */
    a4w4_run_args args;
    a4w4_case_digest dig;
    char why[512], breach[256];
    char stale_of[160]; /* the case whose outputs the baseline repeated bit for bit ("" none) */
    a4w4_comparison cmp;     /* the baseline against the contract's oracle */
    int ambiguous;      /* the baseline matches one reading of E8M0 code 0 only */
    uint8_t *mism;      /* [n] the mismatches of the mapped comparison (a failing entry) */
    const uint16_t *yfail; /* the outputs the map is of: y's, or a variant's copy (vfail) */
    uint16_t *vfail;    /* the first changing pad variant's outputs when the baseline passed */
    const char *variant; /* which variant vfail holds (NULL none) */
    a4w4_oracles *judged_by; /* the oracles g->cmp was judged against (o, or alt under a stated
                                2^-126 reading) */
    /* device path (engine/devjudge.h, device_judges): every output judged on the device; y
     * holds the backend's outputs at the sample, re-judged by the C oracles into host_cmp */
    const a4w4_devjudge *dev;
    a4w4_comparison host_cmp;
} gemm_run;

static int is_bounded(const gemm_run *g) { return g->k->kind == A4W4_CONTRACT_BOUNDED; }

/* The contract backend b holds case c to (contracts §4.1, §4.2): the first of its rules that
 * matches c's shape; a backend built without rules, its contract text parsed into *own. NULL
 * when none applies, with why ("contract FILE has no rule for M=.. N=.. K=.."). */
static const a4w4_contract *case_contract(const a4w4_backend *b, const a4w4_case *c,
                                          a4w4_contract *own, char *why, size_t whylen)
{
    if (b->contracts.n == 0)
        return a4w4_contract_parse(b->contract, own, why, whylen) ? NULL : own;
    const a4w4_contract *k = a4w4_contract_set_find(&b->contracts, c->M, c->N, c->K);
    if (!k && why)
        snprintf(why, whylen, "contract %.300s has no rule for M=%zu N=%zu K=%zu",
                 b->contract_source[0] ? b->contract_source : b->contract, c->M, c->N, c->K);
    return k;
}

/* An internal status: the backend hung too often and is not called (judging.max_timeouts). */
#define RUN_NOT_RUN (-199)

/* The per-instance record of a4w4_backend (timeouts in a row, last outputs), shared by the
 * threads that run cases. */
static pthread_mutex_t state_mu = PTHREAD_MUTEX_INITIALIZER;

/* call_run, unless the backend hung max_timeouts times in a row already (RUN_NOT_RUN, why
 * says so); counts its timeouts. */
static int counted_run(gemm_run *g)
{
    a4w4_backend *b = g->b;
    int limit = g->j->max_timeouts > 0 ? g->j->max_timeouts : A4W4_MAX_TIMEOUTS_DEFAULT;
    pthread_mutex_lock(&state_mu);
    int hung = b->hung;
    pthread_mutex_unlock(&state_mu);
    if (hung) {
        snprintf(g->why, sizeof g->why, "not run: backend hung %d time%s in a row (--timeout); "
                 "its remaining entries are not run (--max-timeouts %d)", limit,
                 limit == 1 ? "" : "s", limit);
        return RUN_NOT_RUN;
    }
    int rc = call_run(b, &g->args);
    pthread_mutex_lock(&state_mu);
    b->timeouts_in_row = rc == A4W4_RUN_TIMEOUT ? b->timeouts_in_row + 1 : 0;
    b->hung |= b->timeouts_in_row >= limit;
    pthread_mutex_unlock(&state_mu);
    return rc;
}

/* Put d's operands back as they were generated or loaded (a backend wrote into them), in
 * place: the oracles of a full sample point into these buffers. The current fills stay. */
static void restore_operands(a4w4_case_data *d, const case_source *src)
{
    a4w4_case_data fresh;
    const a4w4_case *c = src->c;
    if ((src->op         ? a4w4_case_data_load(src->op[0], src->op[1], src->op[2], src->op[3],
                                               c->M, c->N, c->K, &fresh)
         : src->all_rows ? a4w4_case_generate_all(c, src->s, &fresh)
                         : a4w4_case_generate(c, src->s, &fresh)) != A4W4_OK)
        return; /* out of memory: later calls see the damaged operands and say so */
    a4w4_guarded *to[] = {&d->a_fp4, &d->a_scale, &d->w_fp4, &d->w_scale,
                          &d->a_scale_shuffled, &d->w_fp4_shuffled, &d->w_scale_swizzled};
    const a4w4_guarded *from[] = {&fresh.a_fp4, &fresh.a_scale, &fresh.w_fp4, &fresh.w_scale,
                                  &fresh.a_scale_shuffled, &fresh.w_fp4_shuffled,
                                  &fresh.w_scale_swizzled};
    for (size_t i = 0; i < sizeof to / sizeof to[0]; i++)
        if (to[i]->data && from[i]->data && to[i]->len == from[i]->len)
            memcpy(to[i]->data - A4W4_GUARD_BYTES, from[i]->data - A4W4_GUARD_BYTES,
                   to[i]->len + 2 * A4W4_GUARD_BYTES);
    a4w4_case_refill(d, d->row_fill, d->col_fill, d->guard_after);
    a4w4_case_data_free(&fresh);
}

/* A breach found by a call: into e's note once (the pad variants repeat the calls), the
 * first one as e's signature (class out-of-bounds-write), and *breached set. */
static void note_once(a4w4_entry_result *e, const char *what, int *breached)
{
    *breached = 1;
    if (!e->signature[0]) { /* the first breach is the failure's signature */
        snprintf(e->signature, sizeof e->signature, "%.380s", what);
        snprintf(e->signature_class, sizeof e->signature_class, "out-of-bounds-write");
    }
    if (!strstr(e->note, what))
        note_add(e->note, sizeof e->note, "%s; ", what);
}

/* One call into the backend, outputs into out (poisoned, guards included), with the checks
 * of engine/integrity.h around it: a write outside y, into the operands or their guards, or
 * (reported by the backend's sandbox) after it returned goes into e's note and sets
 * *breached; damaged operands are restored for the next call. The backend's status. */
static int guarded_call(gemm_run *g, a4w4_out_buf *out, a4w4_entry_result *e, int *breached)
{
    char why[256];
    a4w4_out_poison(out);
    a4w4_case_digest_of(g->d, g->s, &g->dig);
    g->breach[0] = '\0';
    g->args.y = out->y;
    g->args.y_before = out->before;
    g->args.y_after = out->after;
    g->args.inputs = &g->dig;
    g->args.breach = g->breach;
    g->args.breachlen = sizeof g->breach;
    int rc = counted_run(g);
    if (rc == RUN_NOT_RUN)
        return rc;
    if (a4w4_out_breached(out, why, sizeof why))
        note_once(e, why, breached);
    if (a4w4_case_tampered(g->d, g->s, &g->dig, why, sizeof why)) {
        note_once(e, why, breached);
        restore_operands(g->d, g->src);
    }
    if (g->breach[0])
        note_once(e, g->breach, breached);
    return rc;
}

/* FNV-1a 64 of n outputs (for `compare`: changed bits; for the stale-result check). */
static unsigned long long outputs_hash(const uint16_t *y, size_t n)
{
    unsigned long long h = 0xCBF29CE484222325ull;
    for (size_t k = 0; k < n; k++) {
        h = (h ^ (y[k] & 0xFFu)) * 0x100000001B3ull;
        h = (h ^ (y[k] >> 8)) * 0x100000001B3ull;
    }
    return h;
}

/* Record the outputs' hash e->y_hash and whether it repeats the backend's previous call's
 * on another case bit for bit (g->stale_of). */
static void note_repeat(gemm_run *g, a4w4_entry_result *e, unsigned long long hash)
{
    e->has_y_hash = 1;
    e->y_hash = hash;
    pthread_mutex_lock(&state_mu);
    if (g->b->has_last && g->b->last_y_hash == e->y_hash && strcmp(g->b->last_case, e->name))
        snprintf(g->stale_of, sizeof g->stale_of, "%s", g->b->last_case);
    g->b->has_last = 1;
    g->b->last_y_hash = e->y_hash;
    snprintf(g->b->last_case, sizeof g->b->last_case, "%s", e->name);
    pthread_mutex_unlock(&state_mu);
}

/* The device path's baseline: the backend on every output, compared on the device into
 * g->cmp; its outputs at the sample come back in g->y. The device buffers are the judge's:
 * the host's guard zones and operand digests (engine/integrity.h) do not see them. */
static int run_baseline_dev(gemm_run *g, a4w4_entry_result *e)
{
    a4w4_comparison dc;
    a4w4_devcall call;
    int brc = A4W4_OK;
    a4w4_out_poison(&g->y);
    g->args.y = g->y.y;
    if (g->dev->run(g->dev->self, g->b, &g->args, 0, &brc, &dc, &call, g->why, sizeof g->why))
        return brc == A4W4_OK ? A4W4_EINVAL : brc;
    e->run_ms = call.run_ms;
    e->has_run = 1;
    if (brc == A4W4_OK) {
        g->cmp = dc;
        if (call.has_y_hash)
            note_repeat(g, e, call.y_hash);
    }
    return brc;
}

/* Run the backend once (guarded_call; on the device, run_baseline_dev) and record run_ms,
 * the outputs' hash when it ran, and whether they repeat its previous call's on another case
 * bit for bit. */
static int run_baseline(gemm_run *g, a4w4_entry_result *e, int *breached)
{
    if (g->dev)
        return run_baseline_dev(g, e);
    double t0 = (a4w4_now() * 1e3);
    int rc = guarded_call(g, &g->y, e, breached);
    e->run_ms = (a4w4_now() * 1e3) - t0;
    e->has_run = rc != RUN_NOT_RUN;
    if (rc != A4W4_OK)
        return rc;
    note_repeat(g, e, outputs_hash(g->y.y, g->n));
    return rc;
}

/* The bits contract g->k expects of o's outputs (a4w4_judge_expected). */
static const uint16_t *expected_of(const gemm_run *g, a4w4_oracles *o)
{
    return a4w4_judge_expected(g->k, o);
}

/* got against oracles o per contract g->k into cmp (a4w4_judge_contract), mismatches marked
 * in mism ([n], NULL: not marked). 0, or -1 when the oracle's outputs could not be computed. */
static int compare_with(const gemm_run *g, a4w4_oracles *o, const uint16_t *got,
                        a4w4_comparison *cmp, uint8_t *mism)
{
    a4w4_judge_grid grid = grid_of(g->s);
    return a4w4_judge_contract(cmp, &grid, g->k, o, got, mism);
}

#define OCP_READING "OCP, AITER torch, the oracles"
#define DRIVER_READING "one host driver"

/* The E8M0 code-0 reading g's entry is judged under (A4W4_CODE0_*, contracts §1): the one the
 * run states, else the one its backend declares (BOTH: none). */
static int code0_policy(const gemm_run *g)
{
    return g->j->policy ? g->j->policy : g->b->code0_reading;
}

/* contracts §1, E8M0 code 0 in the operands: judge the baseline under code0_policy.
 * g->cmp holds the comparison under the oracles' reading (2^-127). Under a stated reading
 * the entry is judged under it (2^-126: g->cmp replaced); under both, where the readings
 * expect other bits, an entry matching exactly one of them is ambiguous (g->ambiguous) and
 * g->cmp stays the oracles' comparison. 0, or -1 when out of memory. */
static int judge_code0(gemm_run *g, a4w4_entry_result *e)
{
    size_t differ = a4w4_judge_readings_differ(g->k, g->j->o, g->j->alt);
    a4w4_comparison alt;
    if (differ == SIZE_MAX || compare_with(g, g->j->alt, g->y.y, &alt, NULL))
        return -1;
    int policy = code0_policy(g), pa = !g->cmp.mismatches;
    static const char *const stated[3] = {"", "2^-127", "2^-126"};
    switch (a4w4_judge_code0(differ, policy, g->cmp.mismatches, alt.mismatches)) {
    case A4W4_CODE0_READINGS_AGREE:
        note_add(e->note, sizeof e->note, "E8M0 code 0 present: both readings (2^-127, "
                 "2^-126) expect the same bits on every checked output (contracts §1); ");
        break;
    case A4W4_CODE0_JUDGED_AS_STATED:
        if (policy == A4W4_CODE0_DRIVER) {
            g->cmp = alt;
            g->judged_by = g->j->alt;
        }
        note_add(e->note, sizeof e->note, "E8M0 code 0 present: judged as %s, the reading %s; "
                 "the two readings expect other bits on %zu of %zu outputs (contracts §1); ",
                 stated[policy], g->j->policy ? "this run states (--e8m0-code0)"
                                              : "the backend declares", differ, g->n);
        break;
    case A4W4_CODE0_JUDGED_AMBIGUOUS:
        g->ambiguous = 1;
        note_add(e->note, sizeof e->note, "ambiguous: every checked output matches E8M0 code "
                 "0 read as %s (%s), %zu differ from it read as %s (%s); the sources disagree, "
                 "so this is not judged (contracts §1: the backend declares no reading; a "
                 "run may state one with --e8m0-code0); ", pa ? "2^-127" : "2^-126",
                 pa ? OCP_READING : DRIVER_READING, pa ? alt.mismatches : g->cmp.mismatches,
                 pa ? "2^-126" : "2^-127", pa ? DRIVER_READING : OCP_READING);
        break;
    case A4W4_CODE0_MATCHES_BOTH:
    case A4W4_CODE0_MATCHES_NEITHER:
        note_add(e->note, sizeof e->note, "E8M0 code 0 present: the two readings expect other "
                 "bits on %zu outputs; %s (contracts §1); ", differ,
                 pa ? "the outputs pass under both" : "the outputs match neither reading");
        break;
    }
    return 0;
}

/* The note of an entry judged inside the exact regime only: what was left out, and why. */
static void note_not_judged(const gemm_run *g, a4w4_entry_result *e)
{
    if (g->cmp.not_finite)
        note_add(e->note, sizeof e->note, "%zu outputs NaN or Inf where every summation order "
                 "gives a finite value (wrong under any contract); ", g->cmp.not_finite);
    if (g->cmp.not_judged)
        note_add(e->note, sizeof e->note, "%zu of %zu outputs outside the exact regime: not "
                 "judged (exact is a reference there, contracts §4.1); ", g->cmp.not_judged,
                 g->n);
}

/* The baseline against the oracle of the backend's contract into g->cmp (E8M0 code 0:
 * judge_code0). On the device path g->cmp arrives as the device's comparison over every
 * output and stays it; the sample, re-judged by the C oracles into g->host_cmp, must not
 * find more mismatches than the device did. Returns 1 when the entry fails, 0 when it passes
 * so far, -1 when the oracle's outputs could not be computed (out of memory: it fails). */
static int check_baseline(gemm_run *g, a4w4_entry_result *e)
{
    a4w4_comparison devc = g->cmp;
    int disagree = 0;
    g->judged_by = g->j->o;
    if (compare_with(g, g->j->o, g->y.y, &g->cmp, NULL))
        return -1;
    if (g->dev) {
        g->host_cmp = g->cmp;
        g->cmp = devc;
        disagree = g->host_cmp.mismatches > g->cmp.mismatches;
        if (disagree)
            note_add(e->note, sizeof e->note, "the device judge counted %zu mismatches, the C "
                     "oracles %zu on the %zu sampled outputs alone; ", g->cmp.mismatches,
                     g->host_cmp.mismatches, g->n);
        else if (g->cmp.mismatches && !g->host_cmp.mismatches)
            note_add(e->note, sizeof e->note, "judged on the device: none of its %zu "
                     "mismatches lies on the host sample of %zu outputs, which is all the "
                     "failure map and --save-failing cover; ", g->cmp.mismatches, g->n);
    }
    if (g->j->alt && judge_code0(g, e))
        return -1;
    if (g->cmp.mismatches && g->cmp.has_bound)
        note_add(e->note, sizeof e->note, "outside the %s bound: largest distance %.3g "
                 "times the bound; ", e->contract, g->cmp.bound_use);
    if (g->k->kind == A4W4_CONTRACT_EXACT)
        note_not_judged(g, e);
    if (g->cmp.unwritten)
        note_add(e->note, sizeof e->note, "%zu outputs never written (poison 0x%04x left); ",
                 g->cmp.unwritten, A4W4_POISON_BF16);
    if (g->cmp.mismatches && g->stale_of[0] && !g->ambiguous)
        note_add(e->note, sizeof e->note, "stale result: its outputs repeat bit for bit those "
                 "of its previous call (case %s); ", g->stale_of);
    return (g->cmp.mismatches != 0 || disagree) && !g->ambiguous;
}

/* Outputs of variant v that change against the baseline (all when the run fails; a crash or
 * a timeout is also named in e's note and aborted; a breach sets *breached). */
static size_t variant_changes(gemm_run *g, const variant *v, a4w4_entry_result *e,
                              int *breached)
{
    a4w4_case_refill(g->d, v->row_fill, v->col_fill, v->guard);
    if (g->dev) { /* every output, compared with the baseline on the device */
        a4w4_comparison dc;
        a4w4_devcall call;
        int brc = A4W4_OK;
        a4w4_out_poison(&g->y2);
        g->args.y = g->y2.y;
        int bad = g->dev->run(g->dev->self, g->b, &g->args, 1, &brc, &dc, &call, g->why,
                              sizeof g->why);
        g->args.y = g->y.y;
        if (bad || brc != A4W4_OK)
            note_add(e->note, sizeof e->note, "%s (variant %s, on the device); ",
                     g->why[0] ? g->why : a4w4_status_str(brc), v->what);
        else if (dc.mismatches && !g->cmp.mismatches)
            note_add(e->note, sizeof e->note, "variant %s judged on the device: its outputs "
                     "are not gathered back, so no failure map is built of them; ", v->what);
        return bad || brc != A4W4_OK ? g->d->M * g->d->N : dc.mismatches;
    }
    int rc2 = guarded_call(g, &g->y2, e, breached);
    g->args.y = g->y.y;
    if (rc2 == RUN_NOT_RUN) /* stopped after its timeouts: the entry says so already */
        return 0;
    if (rc2 == A4W4_RUN_CRASHED || rc2 == A4W4_RUN_TIMEOUT) {
        snprintf(e->aborted, sizeof e->aborted, "%s",
                 rc2 == A4W4_RUN_CRASHED ? "crashed" : "timed out");
        note_add(e->note, sizeof e->note, "%s (variant %s); ", g->why, v->what);
    }
    if (rc2 != A4W4_OK)
        return g->n;
    size_t diff = 0;
    if (!g->cmp.mismatches && !g->vfail && (g->vfail = malloc(g->n * 2 + 2))) {
        memcpy(g->vfail, g->y2.y, g->n * 2); /* kept when this variant proves to change outputs */
        g->variant = v->what;
    }
    if (is_bounded(g)) {
        /* the reduction order of a bounded kernel varies run to run: a variant only
         * counts when it leaves the bound the baseline kept */
        a4w4_comparison c2;
        a4w4_judge_grid grid = grid_of(g->s);
        a4w4_judge_bounded(&c2, &grid, g->y2.y, g->j->o->exact,
                           a4w4_oracles_bound(g->j->o, g->k->split), g->n, NULL);
        diff = c2.mismatches > g->cmp.mismatches ? c2.mismatches - g->cmp.mismatches : 0;
    } else {
        for (size_t k = 0; k < g->n; k++)
            diff += g->y2.y[k] != g->y.y[k];
    }
    return diff;
}

size_t a4w4_pad_variant_count(size_t M, size_t K)
{
    const size_t nb = K / 32;
    if (a4w4_act_scale_padded_cols(nb) != nb || K % 256)
        return 5;
    return a4w4_act_scale_padded_rows(M) != M ? 2 : 0;
}

/* contracts §3.3: valid outputs must not depend on the pad fills or on bytes past K. Runs the
 * variants (a4w4_pad_variant_count: 2 with row pads, 5 with column pads or K % 256 != 0, none
 * when no pad exists: the fills would give byte-identical inputs, and the entry's note says
 * so) and restores the default fills. On the device there are no guard zones past the
 * buffers: the garbage variant is left out there with a note. Returns 1 when some variant
 * changed outputs (pad_dependent names them) or breached. */
static int check_pad_variants(gemm_run *g, a4w4_entry_result *e)
{
    static const variant vs[] = {{0xFF, 0x7F, A4W4_GUARD_FILL, "row pad 0xFF"},
                                 {0x00, 0x7F, A4W4_GUARD_FILL, "row pad 0x00"},
                                 {0x7F, 0x00, A4W4_GUARD_FILL, "column pad 0x00"},
                                 {0x7F, 0xFF, A4W4_GUARD_FILL, "column pad 0xFF"},
                                 {0x7F, 0x7F, 0x5A, "garbage 0x5A past the buffers' ends"}};
    size_t nv = a4w4_pad_variant_count(g->d->M, g->d->K);
    int breached = 0;
    if (!nv) {
        note_add(e->note, sizeof e->note, "pad variants not run: M %% 256 == 0 and (K/32) %% 8 "
                 "== 0, so no pad row or column exists and every fill gives the same bytes "
                 "(contracts §3.3); ");
        return 0;
    }
    if (g->dev && nv == 5) { /* device buffers have no guard zones to fill */
        nv = 4;
        note_add(e->note, sizeof e->note, "the garbage-past-the-buffers variant is not run on "
                 "the device (no guard zones there); ");
    }
    char *dep = e->pad_dependent;
    for (size_t v = 0; v < nv; v++) {
        size_t diff = variant_changes(g, &vs[v], e, &breached);
        if (g->vfail && !diff && g->variant == vs[v].what) { /* not this one */
            free(g->vfail);
            g->vfail = NULL;
            g->variant = NULL;
        }
        if (diff)
            note_add(dep, sizeof e->pad_dependent, "%s%s (%zu outputs change)",
                     dep[0] ? ", " : "", vs[v].what, diff);
    }
    a4w4_case_refill(g->d, A4W4_ACT_SCALE_FILL_DEFAULT, A4W4_ACT_SCALE_FILL_DEFAULT,
                     A4W4_GUARD_FILL);
    e->pad_variants = nv;
    if (!dep[0])
        return breached;
    note_add(e->note, sizeof e->note, "pad-dependent: valid outputs change with %s; it needs "
             "row fill 0x7F, column fill 0x7F and nothing past K; ", dep);
    return 1;
}

/* The entry of a baseline call that returned no outputs (rc != A4W4_OK). Returns 1 when the
 * entry fails; *unjudged: A4W4_VERDICT_NA not applicable, A4W4_VERDICT_SKIP skipped. */
static int no_outputs(gemm_run *g, int rc, a4w4_entry_result *e, a4w4_verdict *unjudged)
{
    const char *why = g->why[0] ? g->why : NULL;
    if (rc == A4W4_RUN_SKIP) {
        *unjudged = A4W4_VERDICT_SKIP;
        note_add(e->note, sizeof e->note, "skipped: %s; ", why ? why : "no result");
        return 0;
    }
    if (rc == A4W4_EUNSUPPORTED) {
        *unjudged = A4W4_VERDICT_NA;
        note_add(e->note, sizeof e->note, "%s; ", why ? why : "not applicable to this shape");
        return 0;
    }
    if (rc == A4W4_RUN_REFUSED)
        e->refused = 1;
    if (rc == A4W4_RUN_CRASHED || rc == A4W4_RUN_TIMEOUT || rc == RUN_NOT_RUN)
        snprintf(e->aborted, sizeof e->aborted, "%s", rc == A4W4_RUN_CRASHED ? "crashed"
                                                      : rc == RUN_NOT_RUN    ? "not run"
                                                                             : "timed out");
    note_add(e->note, sizeof e->note, "%s%s; ",
             rc == A4W4_RUN_REFUSED ? "refused: "
             : e->aborted[0]        ? ""
                                    : "backend error: ",
             why ? why : a4w4_status_str(rc));
    return 1;
}

/* 1 when comparison c is a bounded(S) one whose bound admits 0 on more than
 * A4W4_BOUND_VACUOUS_SHARE of the outputs it weighs (contracts §4.1 "The strength of a
 * bound"): its outputs are then not judged, and e's note says so. */
static int bound_vacuous(const a4w4_comparison *c, a4w4_entry_result *e)
{
    if (!c->has_bound || !c->bound_weighed ||
        (double)c->bound_vacuous <= A4W4_BOUND_VACUOUS_SHARE * (double)c->bound_weighed)
        return 0;
    note_add(e->note, sizeof e->note, "not judged: the %s bound admits 0 (a kernel writing "
             "zeros passes) on %zu of the %zu outputs with a nonzero exact value, more than "
             "%.0f%% (contracts §4.1, the strength of a bound); ", e->contract, c->bound_vacuous,
             c->bound_weighed, 100 * A4W4_BOUND_VACUOUS_SHARE);
    return 1;
}

/* Run the backend, check its outputs, fill the entry. Returns 1 when it fails. */
static int gemm_checks(gemm_run *g, a4w4_entry_result *e, a4w4_verdict *unjudged)
{
    int breached = 0;
    int rc = run_baseline(g, e, &breached);
    if (rc != A4W4_OK) {
        int fail = no_outputs(g, rc, e, unjudged);
        if (breached) /* a skip or n/a that also wrote out of bounds still fails */
            *unjudged = A4W4_VERDICT_PASS;
        return fail || breached;
    }
    int fail = check_baseline(g, e);
    if (fail < 0) {
        note_add(e->note, sizeof e->note, "the oracle of this contract could not be computed "
                 "(out of memory, or more than %d tree contracts in one run): nothing judged; ",
                 A4W4_ORACLES_MAX_TREES);
        return 1;
    }
    if (g->b->asm_layout && g->d->a_scale_shuffled.data)
        fail |= check_pad_variants(g, e);
    if (!fail && !breached && !g->cmp.checked) /* every output outside the exact regime */
        *unjudged = A4W4_VERDICT_NA;
    return fail | breached;
}

/* The mismatch map and signature of a failing entry (engine/signature.h): of its outputs, or,
 * when only a pad variant changed them, of the first such variant's outputs. */
static void map_failure(gemm_run *g, a4w4_entry_result *e)
{
    const a4w4_case_data *d = g->d;
    if (e->refused) /* bad input, not a failure of the kernel's: no signature */
        return;
    if (e->aborted[0]) {
        snprintf(e->signature, sizeof e->signature, "%s: %.360s", e->aborted, e->note);
        snprintf(e->signature_class, sizeof e->signature_class, "%s",
                 e->aborted[0] == 'c' ? "crashed" : "timed-out");
        return;
    }
    if (!g->mism || !e->has_y_hash || !g->judged_by || (!g->cmp.mismatches && !g->vfail))
        goto other;
    a4w4_comparison cv; /* again, marking the mismatches, against the oracles that judged it */
    g->yfail = g->cmp.mismatches ? g->y.y : g->vfail;
    if (compare_with(g, g->judged_by, g->yfail, &cv, g->mism) || !cv.mismatches)
        goto other;
    a4w4_map_input in = {g->s, d->M, d->N, d, g->yfail, expected_of(g, g->judged_by),
                         g->judged_by->exact_f32, g->mism};
    if (!in.expected || a4w4_map_build(&in, &e->map))
        goto other;
    if (g->yfail == g->vfail)
        snprintf(e->map.variant, sizeof e->map.variant, "%s", g->variant);
    a4w4_map_signature(&e->map, d->M, d->N, d->K, e->signature, sizeof e->signature,
                       e->signature_class, sizeof e->signature_class);
    return;
other: /* a backend error, a guard zone, out of memory: the note says what */
    if (!e->signature[0]) {
        snprintf(e->signature, sizeof e->signature, "%.380s", e->note);
        snprintf(e->signature_class, sizeof e->signature_class, "error");
    }
}

/* A failing entry's outputs under the peers' tolerance criteria (engine/criteria.h), against
 * the exact value, rounded to fp32, of the oracles that judged it (the dequantized operands'
 * product) over the checked outputs, each marked where it also fails the contract oracle's
 * own outputs; the unquantized reference needs a float weight, which no generated case has,
 * so the criteria that need it are n/a. */
static void tolerance_of(gemm_run *g, a4w4_entry_result *e)
{
    if (e->verdict != A4W4_VERDICT_FAIL || !e->has_y_hash || !g->judged_by || e->aborted[0] ||
        e->refused)
        return;
    static const char no_unquant[] = "no unquantized operands in this run: the weight is "
                                     "generated as fp4 codes";
    const uint16_t *exp = expected_of(g, g->judged_by);
    if (!exp)
        return;
    a4w4_crit_result base[A4W4_CRITERIA_MAX];
    e->tol_outputs = g->n;
    e->ntol = a4w4_criteria_eval_all(g->yfail ? g->yfail : g->y.y, g->judged_by->exact_f32,
                                     NULL, g->n, no_unquant, e->tol);
    a4w4_criteria_eval_all(exp, g->judged_by->exact_f32, NULL, g->n, no_unquant, base);
    a4w4_criteria_mark(e->tol, base, e->ntol);
}

/* A failing entry's repro command and, with --save-failing, its bundle (engine/failing.h). */
static void record_failing(const a4w4_runner *r, gemm_run *g, const a4w4_case *c,
                           a4w4_entry_result *e)
{
    if (!r || e->verdict != A4W4_VERDICT_FAIL || e->refused)
        return;
    if (r->repro)
        r->repro(r->repro_ctx, c->name, g->b->name, e->repro, sizeof e->repro);
    const uint16_t *exp = r->save_dir && g->judged_by ? expected_of(g, g->judged_by) : NULL;
    if (!exp)
        return;
    int qualify = 0; /* two backends of one file name (different folders): each its own file */
    for (size_t i = 0; i < r->nbackends; i++)
        qualify |= a4w4_failing_names_collide(g->b->name, r->backends[i].name);
    a4w4_failing f = {c, g->d, g->s, g->yfail ? g->yfail : g->y.y, exp, g->b->name,
                      e->contract, e->mismatches, g->yfail == g->vfail ? g->variant : "",
                      e->signature, e->repro, r->id, qualify};
    char err[512];
    if (a4w4_failing_save(&f, r->save_dir, e->saved, sizeof e->saved, err, sizeof err)) {
        e->saved[0] = 0;
        e->save_failed = 1;
        note_add(e->note, sizeof e->note, "%s--save-failing: %s", e->note[0] ? "; " : "", err);
    }
}

/* 1 when GEMM backend b with contract k (NULL: none) is judged on the device in j: it has a
 * device form and keeps a single ordered(S) contract, which the device judge computes over
 * every output bit for bit as the C oracles do. exact (judged inside the exact regime only),
 * bounded(S) (limits in double with their overflow rule, contracts §4.1), tree contracts and
 * shape rules stay on the host sample. */
static int on_device(const judging *j, const a4w4_backend *b, const a4w4_contract *k)
{
    return j->dev && b->type->run_device && k && k->kind == A4W4_CONTRACT_ORDERED &&
           !strncmp(b->contract, "ordered(", 8) && k->split == b->split;
}

static int run_backend(const a4w4_runner *r, a4w4_backend *b, const a4w4_case *c,
                       a4w4_case_data *d, const a4w4_sample *s, const judging *j,
                       const case_source *src, a4w4_entry_result *e)
{
    const a4w4_run_identity *id = r ? r->id : NULL;
    gemm_run g;
    memset(&g, 0, sizeof g);
    g.b = b;
    g.d = d;
    g.s = s;
    g.j = j;
    g.src = src;
    g.n = j->o->count;
    int oom = a4w4_out_alloc(&g.y, s->full ? c->M : s->nrows, s->full ? c->N : s->ncols) |
              a4w4_out_alloc(&g.y2, s->full ? c->M : s->nrows, s->full ? c->N : s->ncols) |
              !(g.mism = malloc(g.n + 1));
    g.args = (a4w4_run_args){c, d, s, g.y.y, g.why, sizeof g.why, id, 0, 0, NULL, NULL, 0};
    a4w4_contract own;
    char ktext[A4W4_CONTRACT_MAX], kwhy[512] = "";
    g.k = case_contract(b, c, &own, kwhy, sizeof kwhy);
    if (!g.k || a4w4_contract_format(g.k, ktext, sizeof ktext) < 0)
        snprintf(ktext, sizeof ktext, "%s", b->contract);
    case_identity(e, c, A4W4_ENTRY_OUTPUTS, b->name, ktext);
    g.dev = on_device(j, b, g.k) ? j->dev : NULL;
    if (j->dev && b->type->run_device && g.k && !g.dev)
        note_add(e->note, sizeof e->note, "judged on the host sample: the device judge takes "
                 "single ordered(S) contracts only; ");
    int fail = 1;
    a4w4_verdict unjudged = A4W4_VERDICT_PASS; /* NA, SKIP: the outputs have no judgement */
    if (!g.k) { /* no contract applies to this shape: its outputs are unjudged, so the entry is
                 * skipped (the run INCOMPLETE), never n/a (contracts §4.2) */
        fail = 0;
        unjudged = A4W4_VERDICT_SKIP;
        snprintf(e->note, sizeof e->note, "%s", kwhy);
    } else if (g.k->kind == A4W4_CONTRACT_TREE &&
               a4w4_tree_check(&g.k->tree, c->K, kwhy, sizeof kwhy)) {
        /* a tree that does not apply at this K (a split boundary at or past it): nothing
         * judges the outputs, so the entry is skipped (the run INCOMPLETE), never a FAIL of
         * "0 of 0 checked" that reads as the kernel's mismatch */
        fail = 0;
        unjudged = A4W4_VERDICT_SKIP;
        snprintf(e->note, sizeof e->note, "not judged: the contract does not apply to this "
                 "case: %s (contracts §4.2)", kwhy);
    } else if (oom) {
        snprintf(e->note, sizeof e->note, "out of memory for %zu outputs", g.n);
    } else {
        fail = gemm_checks(&g, e, &unjudged);
    }
    static const a4w4_sample all = {.full = 1};
    int judged = unjudged == A4W4_VERDICT_PASS;
    int vacuous = !fail && judged && !g.ambiguous && bound_vacuous(&g.cmp, e);
    put_comparison(e, &g.cmp, g.dev ? &all : s, e->has_run ? e->run_ms : NAN,
                   g.dev ? j->dor->proven : j->o->proven,
                   a4w4_judge_verdict(fail, unjudged, g.ambiguous, vacuous));
    e->ambiguous = e->verdict == A4W4_VERDICT_AMBIGUOUS;
    e->vacuous = vacuous;
    put_judged(e, &g.cmp, g.dev ? c->M * c->N : g.n);
    if (fail)
        map_failure(&g, e);
    tolerance_of(&g, e);
    size_t L = strlen(e->note);
    while (L && (e->note[L - 1] == ' ' || e->note[L - 1] == ';'))
        e->note[--L] = 0;
    record_failing(r, &g, c, e);
    a4w4_out_free(&g.y);
    a4w4_out_free(&g.y2);
    free(g.mism);
    free(g.vfail);
    return fail;
}

/* Finish a byte-comparison entry (layout and quantizer backends) from its checks. */
static int byte_entry(const a4w4_case *c, const a4w4_backend *b, const a4w4_sample *s,
                      const a4w4_check *chk, int nchk, double ms, const char *na_why,
                      a4w4_entry_result *e)
{
    a4w4_check total;
    memset(&total, 0, sizeof total);
    total.elem_bytes = 1;
    snprintf(total.subject, sizeof total.subject, "bytes");
    total.verdict = na_why ? A4W4_CHECK_NA : A4W4_CHECK_PASS;
    for (int i = 0; i < nchk; i++) {
        total.checked += chk[i].checked;
        if (chk[i].verdict == A4W4_CHECK_FAIL) {
            if (total.verdict != A4W4_CHECK_FAIL) {
                size_t checked = total.checked;
                total = chk[i];
                total.checked = checked;
            } else
                total.mismatches += chk[i].mismatches;
        }
    }
    if (na_why)
        snprintf(total.note, sizeof total.note, "%s", na_why);
    case_identity(e, c, A4W4_ENTRY_BYTES, b->name, b->contract);
    a4w4_entry_set_check(e, &total);
    e->sampled = !s->full;
    e->time_ms = ms;
    return total.verdict == A4W4_CHECK_FAIL;
}

/* A layout backend: its contracts §3 layouts of d against ref's, byte for byte. */
static int run_layout_backend(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                              const a4w4_sample *s, a4w4_entry_result *e)
{
    const a4w4_guarded *ref[3] = {&d->w_fp4_shuffled, &d->w_scale_swizzled, &d->a_scale_shuffled};
    static const char *const names[3] = {"w_fp4_shuffled", "w_scale_swizzled", "a_scale_shuffled"};
    uint8_t *got[3] = {NULL, NULL, NULL};
    a4w4_check chk[3];
    int n = 0, fail = 0;
    char why[512] = "";
    for (int i = 0; i < 3; i++)
        if (ref[i]->data && !(got[i] = malloc(ref[i]->len))) {
            fail = 1;
            snprintf(why, sizeof why, "out of memory");
        } else if (got[i])
            memset(got[i], 0xA5, ref[i]->len);
    double t0 = a4w4_now() * 1e3;
    enter(b);
    int rc = fail ? A4W4_ENOMEM
                  : b->type->layouts(b->ctx, d, got[0], got[1], got[2], why, sizeof why);
    leave(b);
    double ms = a4w4_now() * 1e3 - t0;
    if (rc == A4W4_OK)
        for (int i = 0; i < 3; i++)
            if (got[i])
                a4w4_check_bytes(&chk[n++], names[i], got[i], ref[i]->data, 1, ref[i]->len, NULL);
    if (rc != A4W4_OK && rc != A4W4_EUNSUPPORTED) {
        a4w4_check_na(&chk[n], "layouts", why[0] ? why : a4w4_status_str(rc));
        chk[n++].verdict = A4W4_CHECK_FAIL;
    }
    fail = byte_entry(c, b, s, chk, n, ms, rc == A4W4_EUNSUPPORTED ? why : NULL, e);
    size_t pcol = a4w4_act_scale_padded_cols(d->K / 32);
    for (int i = 0; i < 3 && rc == A4W4_OK && !e->signature[0]; i++)
        if (got[i])
            a4w4_bytes_signature(names[i], got[i], ref[i]->data, ref[i]->len,
                                 i == 2 ? 32 * pcol : 0, e->signature, sizeof e->signature,
                                 e->signature_class, sizeof e->signature_class);
    for (int i = 0; i < 3; i++)
        free(got[i]);
    return fail;
}

/* The buffers of a quantizer check: the sampled activation rows and ref's codes and scales. */
typedef struct {
    uint16_t *x;
    uint8_t *q, *sc, *rq, *rs, *skip;
} quant_bufs;

static int quant_bufs_alloc(quant_bufs *qb, size_t rows, size_t K)
{
    size_t nb = K / 32;
    qb->x = malloc(rows * K * 2);
    qb->q = malloc(rows * K / 2);
    qb->sc = malloc(rows * nb);
    qb->rq = malloc(rows * K / 2);
    qb->rs = malloc(rows * nb);
    qb->skip = calloc(rows * K / 2, 1);
    return qb->x && qb->q && qb->sc && qb->rq && qb->rs && qb->skip;
}

static void quant_bufs_free(quant_bufs *qb)
{
    free(qb->x);
    free(qb->q);
    free(qb->sc);
    free(qb->rq);
    free(qb->rs);
    free(qb->skip);
}

/* Copy the sampled rows of d's activations and of ref's quantization (NaN blocks' codes
 * skipped); poison the backend's output buffers. */
static void quant_inputs(quant_bufs *qb, const a4w4_case_data *d, const a4w4_sample *s)
{
    size_t K = d->K, nb = K / 32, rows = s->nrows;
    for (size_t i = 0; i < rows; i++) {
        size_t m = row_at(s, i);
        memcpy(qb->x + i * K, d->x + m * K, K * 2);
        memcpy(qb->rq + i * K / 2, d->a_fp4.data + m * K / 2, K / 2);
        memcpy(qb->rs + i * nb, d->a_scale.data + m * nb, nb);
        for (size_t kb = 0; kb < K / 2; kb++)
            qb->skip[i * K / 2 + kb] = qb->rs[i * nb + kb / 16] == 0xFF;
    }
    memset(qb->q, 0xA5, rows * K / 2);
    memset(qb->sc, 0xA5, rows * nb);
}

/* Quantize through the backend and compare; fills chk, returns their count; the signature
 * of a mismatch (the scales', else the codes') goes to e. */
static int quant_compare(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                         const a4w4_sample *s, quant_bufs *qb, a4w4_check *chk, double *ms,
                         a4w4_entry_result *e)
{
    size_t K = d->K, nb = K / 32, rows = s->nrows;
    char why[512] = "";
    int n = 0;
    quant_inputs(qb, d, s);
    double t0 = a4w4_now() * 1e3;
    enter(b);
    int rc = b->type->quantize(b->ctx, qb->x, rows, K, (int)c->mode, qb->q, qb->sc, why,
                               sizeof why);
    leave(b);
    *ms = a4w4_now() * 1e3 - t0;
    if (rc != A4W4_OK) {
        a4w4_check_na(&chk[n], "quantize", why[0] ? why : a4w4_status_str(rc));
        chk[n++].verdict = rc == A4W4_EUNSUPPORTED ? A4W4_CHECK_NA : A4W4_CHECK_FAIL;
        return n;
    }
    a4w4_check_bytes(&chk[n++], "a_fp4", qb->q, qb->rq, rows, K / 2, qb->skip);
    a4w4_check_bytes(&chk[n++], "a_scale", qb->sc, qb->rs, rows, nb, NULL);
    for (size_t k = 0; k < rows * K / 2; k++) /* NaN blocks' codes are unspecified */
        if (qb->skip[k])
            qb->q[k] = qb->rq[k];
    if (!a4w4_bytes_signature("a_scale", qb->sc, qb->rs, rows * nb, 0, e->signature,
                              sizeof e->signature, e->signature_class,
                              sizeof e->signature_class))
        a4w4_bytes_signature("a_fp4", qb->q, qb->rq, rows * K / 2, 0, e->signature,
                             sizeof e->signature, e->signature_class, sizeof e->signature_class);
    if (!s->full) /* report real row numbers */
        for (int i = 0; i < n; i++)
            if (chk[i].mismatches)
                chk[i].first_row = s->rows[chk[i].first_row];
    return n;
}

/* A quantizer backend: the activation rows of a normal-regime case, quantized in the case's
 * mode, against ref's codes (NaN blocks' codes skipped) and scales. */
static int run_quant_backend(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                             const a4w4_sample *s, a4w4_entry_result *e)
{
    if (!d->x)
        return byte_entry(c, b, s, NULL, 0, 0,
                          "quantizer backends run on normal-regime cases (bf16 activations)", e);
    quant_bufs qb;
    a4w4_check chk[2];
    int n = 0;
    double ms = 0;
    if (!quant_bufs_alloc(&qb, s->nrows, d->K)) {
        a4w4_check_na(&chk[n], "quantize", "out of memory");
        chk[n++].verdict = A4W4_CHECK_FAIL;
    } else {
        n = quant_compare(b, c, d, s, &qb, chk, &ms, e);
    }
    int fail = byte_entry(c, b, s, chk, n, ms, NULL, e);
    quant_bufs_free(&qb);
    return fail;
}

/* The oracles of d's outputs with E8M0 code 0 read as 2^-126 (contracts §1): the same
 * oracles on d's operands with every scale byte 0x00 set to 0x01 (2^-126), over sample s,
 * into *alt, the operands into *ad (free both). 0, or A4W4_ENOMEM. */
static int alt_oracles(const a4w4_case_data *d, const a4w4_sample *s, a4w4_case_data *ad,
                       a4w4_oracles *alt)
{
    size_t na = d->M * (d->K / 32), nw = d->N * (d->K / 32);
    uint8_t *as = malloc(na ? na : 1), *ws = malloc(nw ? nw : 1);
    int rc = A4W4_ENOMEM;
    memset(alt, 0, sizeof *alt);
    memset(ad, 0, sizeof *ad);
    if (as && ws) {
        for (size_t i = 0; i < na; i++)
            as[i] = d->a_scale.data[i] ? d->a_scale.data[i] : 0x01;
        for (size_t i = 0; i < nw; i++)
            ws[i] = d->w_scale.data[i] ? d->w_scale.data[i] : 0x01;
        rc = a4w4_case_data_load(d->a_fp4.data, as, d->w_fp4.data, ws, d->M, d->N, d->K, ad);
        if (rc == A4W4_OK)
            rc = a4w4_oracles_compute(ad, s, alt) ? A4W4_ENOMEM : A4W4_OK;
    }
    free(as);
    free(ws);
    return rc;
}

/* The oracles a case's GEMM entries are judged against (judging j): o over the case's
 * operands and, when E8M0 code 0 occurs, alt over them with code 0 read as 2^-126 (ad). j
 * points into the struct: it stays where case_oracles_open put it. */
typedef struct {
    a4w4_oracles o, alt;
    a4w4_case_data ad;
    judging j;
} case_oracles;

/* Open co for case data d over sample s, judged under E8M0 code-0 policy A4W4_CODE0_*, a
 * backend stopped after max_timeouts timeouts in a row. 0, or -1 when out of memory; co is
 * valid for case_oracles_close either way. */
static int case_oracles_open(case_oracles *co, const a4w4_case_data *d, const a4w4_sample *s,
                             int policy, int max_timeouts)
{
    memset(co, 0, sizeof *co);
    co->j = (judging){&co->o, d->code0 ? &co->alt : NULL, policy, max_timeouts, NULL, NULL};
    if (a4w4_oracles_compute(d, s, &co->o) != 0)
        return -1;
    return d->code0 && alt_oracles(d, s, &co->ad, &co->alt) ? -1 : 0;
}

static void case_oracles_close(case_oracles *co)
{
    a4w4_oracles_free(&co->alt);
    a4w4_case_data_free(&co->ad);
    a4w4_oracles_free(&co->o);
}

/* A layout or quantizer backend judged on the device: its bytes over the whole case. */
static int run_bytes_dev(const a4w4_devjudge *dev, a4w4_backend *b, const a4w4_case *c,
                         const a4w4_case_data *d, a4w4_entry_result *e)
{
    static const char *const lay[3] = {"w_fp4_shuffled", "w_scale_swizzled", "a_scale_shuffled"};
    static const char *const qnt[2] = {"a_fp4", "a_scale"};
    static const a4w4_sample all = {.full = 1};
    a4w4_comparison dc;
    char why[512] = "";
    int brc = A4W4_OK, quant = b->type->quantize_device != NULL;
    size_t which = 0; /* the first mismatching tensor (dc.rec[0].col) */
    double t0 = a4w4_now() * 1e3;
    int bad = quant ? dev->quantize(dev->self, b, c, d, &brc, &dc, why, sizeof why)
                    : dev->layouts(dev->self, b, d, &brc, &dc, why, sizeof why);
    double ms = a4w4_now() * 1e3 - t0;
    a4w4_check chk;
    memset(&chk, 0, sizeof chk);
    chk.elem_bytes = 1;
    which = !bad && dc.nrec ? dc.rec[0].col : 0;
    if (brc == A4W4_EUNSUPPORTED)
        return byte_entry(c, b, &all, NULL, 0, ms, why[0] ? why : "not applicable", e);
    if (bad || brc != A4W4_OK) {
        a4w4_check_na(&chk, quant ? "quantize" : "layouts", why[0] ? why : a4w4_status_str(brc));
        chk.verdict = A4W4_CHECK_FAIL;
    } else {
        snprintf(chk.subject, sizeof chk.subject, "%s", quant ? qnt[which % 2] : lay[which % 3]);
        chk.checked = dc.checked;
        chk.mismatches = dc.mismatches;
        chk.verdict = dc.mismatches ? A4W4_CHECK_FAIL : A4W4_CHECK_PASS;
        chk.first_row = dc.nrec ? dc.rec[0].row : 0;
        chk.got = dc.nrec ? dc.rec[0].got : 0;
        chk.expected = dc.nrec ? dc.rec[0].expected : 0;
    }
    int fail = byte_entry(c, b, &all, &chk, 1, ms, NULL, e);
    if (fail && chk.mismatches && !e->signature[0]) { /* no map: the bytes stay on the device */
        snprintf(e->signature, sizeof e->signature, "%s: %zu of %zu bytes differ (compared on "
                 "the device: the bytes are not gathered back, so whether they are a "
                 "permutation is not known)", chk.subject, chk.mismatches, chk.checked);
        snprintf(e->signature_class, sizeof e->signature_class, "%s",
                 quant ? (which % 2 ? "scales" : "codes") : "layout-bytes");
    }
    return fail;
}

/* Entries for every backend of r on case c (after the oracle's). dev: the device judge of
 * this case (NULL: everything on the host sample), dor: its oracle facts. */
static a4w4_hstatus run_backends(const a4w4_runner *r, const a4w4_case *c, a4w4_case_data *d,
                                 const a4w4_sample *s, const judging *j, const case_source *src,
                                 a4w4_entry_list *out)
{
    for (size_t i = 0; i < r->nbackends; i++) {
        a4w4_backend *b = &r->backends[i];
        if (!b->type->run && !b->type->layouts && !b->type->quantize)
            continue;
        a4w4_entry_result *e = a4w4_entry_list_add(out);
        if (!e)
            return A4W4_ST_NOMEM;
        const double t0 = a4w4_now();
        const a4w4_devjudge *dev = j->dev;
        a4w4_contract own;
        int on_dev = b->type->run && on_device(j, b, case_contract(b, c, &own, NULL, 0));
        if (b->type->run)
            run_backend(r, b, c, d, s, j, src, e);
        else if (dev && ((b->type->layouts && b->type->layouts_device) ||
                         (b->type->quantize && b->type->quantize_device && d->x)))
            run_bytes_dev(dev, b, c, d, e), on_dev = 1;
        else if (b->type->layouts)
            run_layout_backend(b, c, d, s, e);
        else
            run_quant_backend(b, c, d, s, e);
        if (r->stages && e->verdict != A4W4_VERDICT_NA && e->verdict != A4W4_VERDICT_SKIP) {
            if (on_dev)
                r->stages->outputs_device += (double)e->checked;
            else
                r->stages->outputs_host += (double)e->checked;
        }
        e->has_cost = 1;
        e->cost_ms = (a4w4_now() - t0) * 1e3;
        if (r->stages && e->has_run && e->run_ms == e->run_ms)
            r->stages->backend_runs_s += e->run_ms / 1e3;
    }
    return A4W4_ST_OK;
}

/* ---- the device judge's case ------------------------------------------------------------- */

/* 1 when some selected backend has a device form. */
static int wants_device(const a4w4_runner *r)
{
    for (size_t i = 0; r->dev && i < r->nbackends; i++) {
        const a4w4_backend_type *t = r->backends[i].type;
        if (t->run_device || t->layouts_device || t->quantize_device)
            return 1;
    }
    return 0;
}

/* What the case's device backends need of the judge: the S of an ordered(S) one (S > 1);
 * the others are judged on the host (on_device). */
static a4w4_devneeds needs_of(const a4w4_runner *r)
{
    a4w4_devneeds n = {0, 0};
    for (size_t i = 0; i < r->nbackends; i++) {
        const a4w4_backend *b = &r->backends[i];
        if (b->type->run_device && !strncmp(b->contract, "ordered(", 8) && b->split > 1)
            n.ordered_s = b->split;
    }
    return n;
}

/* Values of the judge at the sample against the C oracles, bit for bit: the judge judged.
 * ordered(1), exact (bf16 and fp32) and ordered(S) on every sampled output (bounded(S)
 * backends are judged on the host: on_device). Appends to note; returns the mismatches. */
static size_t recheck(const a4w4_devjudge *dev, const a4w4_devneeds *need, const a4w4_sample *s,
                      a4w4_oracles *o, char *note, size_t notelen)
{
    const size_t n = o->count;
    a4w4_devsample js = {malloc(n * 2), malloc(n * 2), need->ordered_s ? malloc(n * 2) : NULL,
                         malloc(n * 4), NULL};
    const uint16_t *cs = need->ordered_s ? a4w4_oracles_ordered(o, need->ordered_s) : NULL;
    char why[256] = "";
    size_t bad = 0, first = SIZE_MAX;
    const char *what = "";
    if (!js.ordered1 || !js.exact || !js.exact_f32 || (need->ordered_s && (!js.ordered_s || !cs)) ||
        dev->sample(dev->self, s, &js, why, sizeof why)) {
        note_add(note, notelen, "%sthe C oracles' re-check of the GPU judge failed to run: %s",
                 note[0] ? "; " : "", why[0] ? why : "out of memory");
        bad = 1;
    } else {
        for (size_t k = 0; k < n; k++) {
            uint32_t jf, cf;
            memcpy(&jf, &js.exact_f32[k], 4);
            memcpy(&cf, &o->exact_f32[k], 4);
            const char *w = !(js.ordered1[k] == o->ordered1[k] ||
                              (a4w4_bf16_is_nan(js.ordered1[k]) && a4w4_bf16_is_nan(o->ordered1[k])))
                                ? "ordered(1)"
                            : !(js.exact[k] == o->exact[k] ||
                                (a4w4_bf16_is_nan(js.exact[k]) && a4w4_bf16_is_nan(o->exact[k])))
                                ? "exact"
                            : !(jf == cf || (isnan(js.exact_f32[k]) && isnan(o->exact_f32[k])))
                                ? "exact fp32"
                            : cs && !(js.ordered_s[k] == cs[k] ||
                                      (a4w4_bf16_is_nan(js.ordered_s[k]) && a4w4_bf16_is_nan(cs[k])))
                                ? "ordered(S)"
                                : NULL;
            if (w && first == SIZE_MAX) {
                first = k;
                what = w;
            }
            bad += w != NULL;
        }
        if (bad)
            note_add(note, notelen, "%sTHE GPU JUDGE DISAGREES WITH THE C ORACLES on %zu of %zu "
                     "sampled outputs (first: %s at (%zu, %zu))", note[0] ? "; " : "", bad, n,
                     what, row_at(s, first / s->ncols), col_at(s, first % s->ncols));
    }
    free(js.ordered1);
    free(js.exact);
    free(js.ordered_s);
    free(js.exact_f32);
    return bad;
}

/* The oracle's entry on the device: ordered(1) == exact on every output the prover holds for,
 * the special regime's NaN set over every output, and the C oracles' re-check of the judge on
 * the sample. *dor receives the judge's facts. Returns 1 when it fails. */
static int oracle_entry_dev(const a4w4_devjudge *dev, const a4w4_devneeds *need,
                            const a4w4_case *c, const a4w4_case_data *d, const a4w4_sample *s,
                            a4w4_oracles *o, a4w4_devoracle *dor, a4w4_entry_result *e)
{
    static const a4w4_sample all = {.full = 1};
    char note[512] = "", why[256] = "";
    a4w4_comparison cmp;
    memset(&cmp, 0, sizeof cmp);
    int fail = 0, na = 0;
    if (dev->oracle(dev->self, d, c->regime == A4W4_REGIME_SPECIAL, dor, why, sizeof why)) {
        snprintf(note, sizeof note, "the GPU judge failed: %s", why);
        fail = 1;
    } else {
        cmp = dor->ord_vs_exact;
        cmp.checked = dor->outputs;
        fail = cmp.mismatches != 0;
        na = dor->proven != dor->outputs;
        if (na)
            snprintf(note, sizeof note, "%zu of %zu outputs outside the exact regime: exact is a "
                     "reference there, not a verdict", dor->outputs - dor->proven, dor->outputs);
        if (c->regime == A4W4_REGIME_SPECIAL) {
            note_add(note, sizeof note, "%sspecial blocks: %zu NaN outputs, %zu outside the "
                     "dependent set", note[0] ? "; " : "", dor->nans, dor->nan_wrong);
            fail |= dor->nan_wrong != 0;
            na = 0;
        }
        note_add(note, sizeof note, "%sGPU judge: every output; %zu sampled outputs re-checked "
                 "by the C oracles%s", note[0] ? "; " : "", o->count,
                 dor->uncertain ? "" : "");
        if (dor->uncertain)
            note_add(note, sizeof note, "; %zu outputs rounded by the plain C oracle",
                     dor->uncertain);
        if (recheck(dev, need, s, o, note, sizeof note))
            fail = 1, na = 0;
    }
    case_identity(e, c, A4W4_ENTRY_OUTPUTS, "oracle", "ordered(1) == exact");
    put_comparison(e, &cmp, &all, dor->judge_ms, dor->proven,
                   a4w4_judge_verdict(fail, na && !fail ? A4W4_VERDICT_NA : A4W4_VERDICT_PASS,
                                      0, 0));
    snprintf(e->note, sizeof e->note, "%s", note);
    return fail;
}

/* 1 when a selected backend judges every output (a4w4_backend_type.full_outputs). */
static int wants_full(const a4w4_runner *r)
{
    for (size_t i = 0; i < r->nbackends; i++)
        if (r->backends[i].type->full_outputs)
            return 1;
    return 0;
}

double a4w4_full_check_seconds(const a4w4_runner *r, const a4w4_case *c)
{
    const a4w4_rates *rt = r->rates;
    double macs = (double)c->M * (double)c->N * (double)c->K;
    double per_mac = rt ? rt->oracle_s_per_mac : A4W4_COST_ORACLE_S_PER_MAC;
    for (size_t i = 0; i < r->nbackends; i++) {
        const a4w4_backend *b = &r->backends[i];
        if (!b->type || !b->type->run || (r->dev && b->type->run_device))
            continue; /* judged on the device: no host work beyond the sample */
        double runs = 1 + (b->asm_layout ? (double)a4w4_pad_variant_count(c->M, c->K) : 0);
        per_mac += runs * (rt && i < 64 ? rt->run_s_per_mac[i]
                           : b->type->gpu ? A4W4_COST_GPU_RUN_S_PER_MAC
                                          : A4W4_COST_CPU_RUN_S_PER_MAC);
        a4w4_contract own;
        const a4w4_contract *k = case_contract(b, c, &own, NULL, 0);
        if (k && k->kind == A4W4_CONTRACT_TREE)
            per_mac += !a4w4_tree_fast_eligible(&k->tree)
                           ? A4W4_COST_TREE_PLAIN_S_PER_LEAF / (double)k->tree.leaf
                       : k->tree.prec || k->tree.acc != A4W4_ACC_FP32
                           ? A4W4_COST_TREE_PREC_S_PER_LEAF / (double)k->tree.leaf
                           : A4W4_COST_TREE_FAST_S_PER_MAC * 32.0 / (double)k->tree.leaf;
    }
    return macs * per_mac + ((double)c->M + (double)c->N) * (double)c->K *
                                (rt ? rt->gen_s_per_element : A4W4_COST_GEN_S_PER_ELEMENT);
}

/* The plan's index of case c, or -1 (not one of its cases). */
static long plan_index(const a4w4_budget_plan *p, const a4w4_case *c)
{
    return p && c >= p->cases && c < p->cases + p->ncases ? (long)(c - p->cases) : -1;
}

/* 1 when every output of c is to be checked on the host: --full, a backend that judges every
 * output (a4w4_backend_type.full_outputs), or a full check the budget buys. */
static int check_all(const a4w4_runner *r, const a4w4_case *c)
{
    if (r->full || wants_full(r))
        return 1;
    long k = plan_index(r->plan, c);
    if (k >= 0)
        return r->plan->full[k];
    return r->budget_s > 0 && a4w4_full_check_seconds(r, c) <= r->budget_s;
}

/* The oracle entry's note on a case sampled under a budget: what was sampled and why. */
static void note_sampled(const a4w4_runner *r, const a4w4_case *c, const a4w4_sample *s,
                         a4w4_entry_result *e)
{
    long k = plan_index(r->plan, c);
    if (s->full || (k < 0 && r->budget_s <= 0))
        return;
    if (k >= 0)
        note_add(e->note, sizeof e->note, "%ssampled on the host: %zu of %zu outputs (a full "
                 "host check is estimated at %.1f s at this run's measured rates; the run's "
                 "budget of %g s went to the %zu cheaper cases checked in full)",
                 e->note[0] ? "; " : "", s->nrows * s->ncols, c->M * c->N, r->plan->est_s[k],
                 r->plan->budget_s, r->plan->nfull);
    else
        note_add(e->note, sizeof e->note, "%ssampled: %zu of %zu outputs checked (a full check "
                 "is estimated at %.1f s, above the budget of %g s)", e->note[0] ? "; " : "",
                 s->nrows * s->ncols, c->M * c->N, a4w4_full_check_seconds(r, c), r->budget_s);
}

/* A4W4_ST_BADINPUT with err = the first refusal's note when an entry of first.. refused its
 * result (another matrix's outputs), else A4W4_ST_OK. */
static a4w4_hstatus refusals(const a4w4_entry_list *out, size_t first, char *err, size_t errlen)
{
    for (size_t i = first; i < out->n; i++)
        if (out->items[i].refused) {
            snprintf(err, errlen, "%s: %s", out->items[i].backend, out->items[i].note);
            return A4W4_ST_BADINPUT;
        }
    return A4W4_ST_OK;
}

/* The static dispatch facts of c on entries first.. of out (contracts §5, §6; optional). */
static void annotate_entries(const a4w4_case *c, a4w4_entry_list *out, size_t first)
{
    a4w4_dispatch_facts f;
    if (a4w4_dispatch_facts_of(c, &f))
        return;
    for (size_t i = first; i < out->n; i++)
        out->items[i].dispatch = f;
}

/* Bytes a4w4_case_generate allocates for c: the operands, their scales, the ASM layouts the
 * shape allows and, in the normal regime, the bf16 activations. */
static double case_bytes(const a4w4_case *c)
{
    double M = (double)c->M, N = (double)c->N, K = (double)c->K, nb = K / 32;
    double b = (M + N) * (K / 2 + nb) + (double)a4w4_act_scale_padded_rows(c->M) *
                                             (double)a4w4_act_scale_padded_cols(c->K / 32);
    if (a4w4_preshuffle_supported(c->N, c->K))
        b += N * K / 2;
    if (a4w4_scale_swizzle_supported(2, c->N, c->K / 32))
        b += N * nb;
    return c->regime == A4W4_REGIME_NORMAL ? b + 2 * M * K : b;
}

/* The device judge of case c (data d) opened for need, or NULL with why: the case is one the
 * judge does not rule on as the C oracles do (the range regime's overflow rules, contracts
 * §4.3; E8M0 code 0 unless the run states the judge's reading 2^-127, contracts §1), or it
 * could not take it. */
static const a4w4_devjudge *device_for(const a4w4_runner *r, const a4w4_case *c,
                                       const a4w4_case_data *d, const a4w4_devneeds *need,
                                       char *why, size_t whylen)
{
    if (c->regime == A4W4_REGIME_RANGE) {
        snprintf(why, whylen, "the range regime's limits (contracts §4.3) are the C oracles'");
        return NULL;
    }
    if (d->code0 && r->code0_reading != A4W4_CODE0_OCP) {
        snprintf(why, whylen, "E8M0 code 0 present, judged under %s (contracts §1) by the C "
                 "oracles", r->code0_reading ? "2^-126" : "both readings");
        return NULL;
    }
    return r->dev->open(r->dev->self, c, d, need, why, whylen) ? NULL : r->dev;
}

double a4w4_stage_sum(const a4w4_stage_times *t)
{
    return t->setup_s + t->generate_s + t->judge_s + t->kernels_s + t->host_oracle_s +
           t->record_s + t->bundles_s + t->write_s + t->finish_s;
}

a4w4_hstatus a4w4_run_case(const a4w4_runner *r, const a4w4_case *c, a4w4_entry_list *out,
                           char *err, size_t errlen)
{
    a4w4_sample s;
    a4w4_case_data d;
    if (a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, check_all(r, c), &s) != A4W4_OK) {
        snprintf(err, errlen, "case %s: out of memory sampling", c->name);
        return A4W4_ST_NOMEM;
    }
    /* a device judge checks every output: every row exists on the host too */
    const int use_dev = wants_device(r);
    a4w4_stage_times *T = r->stages;
    const double t_case = a4w4_now();
    double t0 = t_case;
    int grc = use_dev ? a4w4_case_generate_all(c, &s, &d) : a4w4_case_generate(c, &s, &d);
    if (T)
        T->generate_s += a4w4_now() - t0;
    if (grc != A4W4_OK) {
        snprintf(err, errlen, "case %s: M=%zu N=%zu K=%zu is too large for this machine: needs "
                 "%.1f GB for its operands and their layouts (cannot allocate them)", c->name,
                 c->M, c->N, c->K, case_bytes(c) / 1e9);
        a4w4_sample_free(&s);
        return A4W4_ST_BADINPUT;
    }
    a4w4_hstatus st = A4W4_ST_NOMEM;
    a4w4_entry_result *e = NULL;
    case_oracles co;
    case_source src = {c, &s, NULL, use_dev};
    a4w4_devneeds need = needs_of(r);
    a4w4_devoracle dor;
    char dwhy[256] = "";
    memset(&dor, 0, sizeof dor);
    t0 = a4w4_now();
    const a4w4_devjudge *dev = use_dev ? device_for(r, c, &d, &need, dwhy, sizeof dwhy) : NULL;
    double t1 = a4w4_now();
    int orc = case_oracles_open(&co, &d, &s, r->code0_reading, r->max_timeouts);
    co.j.dev = dev;
    co.j.dor = &dor;
    if (T) {
        T->judge_s += t1 - t0;
        T->host_oracle_s += a4w4_now() - t1;
    }
    if (orc)
        snprintf(err, errlen, "case %s: out of memory for the oracles", c->name);
    else if (!(e = a4w4_entry_list_add(out)))
        snprintf(err, errlen, "case %s: out of memory for the results", c->name);
    else {
        size_t first = out->n - 1;
        t0 = a4w4_now();
        if (dev)
            oracle_entry_dev(dev, &need, c, &d, &s, &co.o, &dor, e);
        else
            oracle_entry(c, &d, &s, &co.o, e);
        if (T)
            T->judge_s += a4w4_now() - t0;
        if (use_dev && !dev) /* the GPU judge does not take the case: all on the host */
            note_add(e->note, sizeof e->note, "%sjudged on the host: %s", e->note[0] ? "; " : "",
                     dwhy);
        note_sampled(r, c, &s, e);
        t0 = a4w4_now();
        e->has_cost = 1; /* the case's shared work (before e can move: the list grows) */
        e->cost_ms = (t0 - t_case) * 1e3;
        st = run_backends(r, c, &d, &s, &co.j, &src, out);
        if (T)
            T->kernels_s += a4w4_now() - t0;
        annotate_entries(c, out, first);
        if (st != A4W4_ST_OK)
            snprintf(err, errlen, "case %s: out of memory for the results", c->name);
        else
            st = refusals(out, first, err, errlen);
    }
    if (dev)
        dev->close(dev->self);
    case_oracles_close(&co);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return st;
}

/* ---- cases made of given operands (golden bundles, captures) -------------------------- */

/* A case whose row-major operands are given rather than generated: every output in the
 * sample, the operands loaded as case data, the oracles over them (both readings of E8M0
 * code 0 where it occurs), where to reload them from. */
typedef struct {
    a4w4_sample s;
    a4w4_case_data d;
    case_oracles co;
    case_source src;
    int loaded; /* d holds data */
} given_case;

/* Open g for case c (M, N, K, name) on operands op = {a_fp4, a_scale, w_fp4, w_scale} (kept
 * by the caller until given_case_close), judged under E8M0 code-0 policy A4W4_CODE0_* and
 * max_timeouts. 0, or -1 when out of memory; g is valid for given_case_close either way. */
static int given_case_open(given_case *g, const a4w4_case *c, const uint8_t *const op[4],
                           int policy, int max_timeouts)
{
    memset(g, 0, sizeof *g);
    g->src = (case_source){c, &g->s, op, 0};
    if (a4w4_sample_make(c->M, c->N, c->K, 0, c->name, 1, &g->s) != A4W4_OK ||
        a4w4_case_data_load(op[0], op[1], op[2], op[3], c->M, c->N, c->K, &g->d) != A4W4_OK)
        return -1;
    g->loaded = 1;
    return case_oracles_open(&g->co, &g->d, &g->s, policy, max_timeouts);
}

static void given_case_close(given_case *g)
{
    case_oracles_close(&g->co);
    if (g->loaded)
        a4w4_case_data_free(&g->d);
    a4w4_sample_free(&g->s);
}

/* ---- outputs computed elsewhere (captures) ------------------------------------------ */

/* The "backend" of a4w4_judge_outputs: hands back the outputs it was given. */
static int run_given(void *ctx, const a4w4_run_args *a)
{
    const uint16_t *y = ctx;
    memcpy(a->y, y, a->s->nrows * a->s->ncols * sizeof *y); /* a full sample: y as given */
    return A4W4_OK;
}

static const a4w4_backend_type given_type = {.name = "given",
                                             .what = "outputs computed elsewhere",
                                             .contract = "exact",
                                             .thread_safe = 1,
                                             .full_outputs = 1,
                                             .run = run_given};

/* S of "ordered(S)" or "bounded(S)" (plain "bounded": 1); 1 for the others. */
static unsigned split_of(const char *contract)
{
    unsigned S = 1;
    if (sscanf(contract, "ordered(%u)", &S) != 1 && sscanf(contract, "bounded(%u)", &S) != 1)
        S = 1;
    return S;
}

/* An entry judged as exact because its kernel declared no contract says so. */
static void label_undeclared(a4w4_entry_result *e)
{
    char note[sizeof e->note];
    snprintf(e->contract, sizeof e->contract, "%s", A4W4_CONTRACT_UNDECLARED);
    snprintf(note, sizeof note, "no contract declared: judged as exact, inside the exact regime "
             "only (contracts §4.1)%s%.640s", e->note[0] ? "; " : "", e->note);
    memcpy(e->note, note, sizeof note);
}

a4w4_hstatus a4w4_judge_outputs(const a4w4_judge_input *in, a4w4_entry_result *e)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", in->name);
    snprintf(c.regime_text, sizeof c.regime_text, "%s", in->regime);
    c.M = in->M, c.N = in->N, c.K = in->K;
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = &given_type;
    b.ctx = (void *)in->y;
    snprintf(b.name, sizeof b.name, "%s", in->backend);
    snprintf(b.contract, sizeof b.contract, "%s",
             !in->contract                   ? "exact" /* none declared: judged as exact */
             : strcmp(in->contract, "bounded") ? in->contract
                                             : "bounded(1)");
    b.split = split_of(b.contract);
    const uint8_t *op[4] = {in->a_fp4, in->a_scale, in->w_fp4, in->w_scale};
    given_case g;
    a4w4_hstatus st = A4W4_ST_NOMEM;
    if (given_case_open(&g, &c, op, in->code0_reading, 0) == 0) {
        run_backend(NULL, &b, &c, &g.d, &g.s, &g.co.j, &g.src, e);
        e->has_tags = 0;
        if (!in->contract)
            label_undeclared(e);
        st = A4W4_ST_OK;
    }
    given_case_close(&g);
    return st;
}

/* The system under test whose check this is ("<name> vs y_ordered"), or NULL. */
static const a4w4_bundle_sut *sut_of(const a4w4_check *c, const a4w4_bundle_sut *suts,
                                     size_t nsuts)
{
    for (size_t i = 0; i < nsuts; i++) {
        size_t L = strlen(suts[i].name);
        if (!strncmp(c->subject, suts[i].name, L) && c->subject[L] == ' ')
            return &suts[i];
    }
    return NULL;
}

/* 1 when backend name is selected and keeps its declared contract: a system under test judged
 * by another contract (`run --contract`) is not checked against the bundle's y_ordered but
 * through golden_backends, by the oracle of its contract. */
static int selected(const a4w4_runner *r, const char *name)
{
    for (size_t j = 0; j < r->nbackends; j++)
        if (!strcmp(r->backends[j].name, name))
            return !r->backends[j].declared[0];
    return 0;
}

/* Identity of a golden entry: "golden/<file name without .safetensors>". */
static void golden_identity(a4w4_entry_result *e, const char *path, const size_t dims[3],
                            const char *backend, const char *contract, double ms)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char name[128];
    size_t L = strlen(base);
    snprintf(name, sizeof name, "golden/%.*s", (int)(L > 12 ? L - 12 : L), base);
    a4w4_entry_identity(e, A4W4_ENTRY_BYTES, name, dims[0], dims[1], dims[2], "golden", 0,
                        backend, contract);
    e->sampled = 0;
    e->time_ms = ms;
}

/* The oracle's golden check: every tensor check that is no system under test's, folded
 * (first failure kept, checked summed), or the bad-input error. */
static void golden_oracle(const a4w4_check_list *checks, const a4w4_bundle_sut *suts,
                          size_t nsuts, a4w4_hstatus rc, const char *err, const char *path,
                          a4w4_check *oracle)
{
    memset(oracle, 0, sizeof *oracle);
    snprintf(oracle->subject, sizeof oracle->subject, "bundle tensors");
    oracle->verdict = rc == A4W4_ST_BADINPUT ? A4W4_CHECK_FAIL : A4W4_CHECK_PASS;
    if (rc == A4W4_ST_BADINPUT) /* no kernel's mismatch: a refusal (the run is bad input) */
        snprintf(oracle->note, sizeof oracle->note, "refused: bad input: %.130s", err);
    size_t ntensor = 0;
    for (size_t i = 0; i < checks->n; i++) {
        const a4w4_check *c = &checks->items[i];
        if (sut_of(c, suts, nsuts) ||
            !strncmp(c->subject, A4W4_RECORDED_SUBJECT, strlen(A4W4_RECORDED_SUBJECT)))
            continue; /* a system under test's, or outputs recorded by another run */
        ntensor++;
        oracle->checked += c->checked;
        if (c->verdict == A4W4_CHECK_FAIL && oracle->verdict != A4W4_CHECK_FAIL) {
            size_t checked = oracle->checked;
            *oracle = *c;
            oracle->checked = checked;
        }
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (!oracle->note[0])
        snprintf(oracle->note, sizeof oracle->note, "%zu tensor checks (a4w4check verify %s)",
                 ntensor, base);
}

a4w4_hstatus a4w4_run_captures_none(const char *dir, a4w4_entry_list *out, char *err,
                                    size_t errlen)
{
    a4w4_entry_result *e = a4w4_entry_list_add(out);
    if (!e) {
        snprintf(err, errlen, "--captures %s: out of memory for the results", dir);
        return A4W4_ST_NOMEM;
    }
    a4w4_entry_identity(e, A4W4_ENTRY_BYTES, A4W4_CAPTURES_NONE, 0, 0, 0, "capture", 0,
                        "capture", "n/a");
    e->verdict = A4W4_VERDICT_SKIP;
    e->time_ms = 0;
    snprintf(e->note, sizeof e->note, "--captures %s holds no capture bundle (*.safetensors, "
             "subdirectories included): nothing was judged", dir);
    return A4W4_ST_OK;
}

/* 1 when backend b is one of the systems under test bundle verification already ran (with
 * its declared contract, ordered(1): y_ordered). */
static int is_sut(const a4w4_backend *b, const a4w4_bundle_sut *suts, size_t nsuts)
{
    if (b->declared[0])
        return 0;
    for (size_t i = 0; i < nsuts; i++)
        if (!strcmp(suts[i].name, b->name))
            return 1;
    return 0;
}

/* The row-major operands of a loaded case bundle into op. 0, or -1 (a tensor missing or of
 * the wrong shape: bundle verification has reported it). */
static int golden_operands(const a4w4_st_file *f, const size_t dims[3], const uint8_t *op[4])
{
    static const char *const names[4] = {"a_fp4", "a_scale", "w_fp4", "w_scale"};
    size_t M = dims[0], N = dims[1], K = dims[2];
    const size_t want[4][2] = {{M, K / 2}, {M, K / 32}, {N, K / 2}, {N, K / 32}};
    for (int i = 0; i < 4; i++) {
        const a4w4_st_tensor *x = a4w4_st_find(f, names[i]);
        size_t rows, cols;
        if (!x || a4w4_st_packed_2d(x, &rows, &cols) || rows != want[i][0] || cols != want[i][1])
            return -1;
        op[i] = x->data;
    }
    return 0;
}

/* Every output of case c on row-major operands op = {a_fp4, a_scale, w_fp4, w_scale} through
 * each backend of r with a GEMM but the systems under test suts[0..nsuts) (entries appended
 * to out), judged as a given case (both readings of E8M0 code 0 where it occurs). NOMEM,
 * else OK. */
static a4w4_hstatus data_backends(const a4w4_runner *r, const a4w4_bundle_sut *suts,
                                  size_t nsuts, const a4w4_case *c, const uint8_t *const op[4],
                                  int layouts, a4w4_entry_list *out)
{
    given_case g;
    a4w4_hstatus st = given_case_open(&g, c, op, r->code0_reading, r->max_timeouts)
                          ? A4W4_ST_NOMEM
                          : A4W4_ST_OK;
    for (size_t i = 0; i < r->nbackends && st == A4W4_ST_OK; i++) {
        a4w4_backend *b = &r->backends[i];
        a4w4_entry_result *e;
        const int lay = layouts && b->type && !b->type->run && b->type->layouts;
        if (!b->type || (!b->type->run && !lay) || is_sut(b, suts, nsuts))
            continue;
        if (!(e = a4w4_entry_list_add(out)))
            st = A4W4_ST_NOMEM;
        else if (lay) { /* ref's layouts of the bundle's operands, which the bundle's oracle
                         * entry holds equal to the bundle's own (AITER's) layout tensors */
            run_layout_backend(b, c, &g.d, &g.s, e);
            note_add(e->note, sizeof e->note, "%sagainst ref's layouts of the bundle's "
                     "operands (the oracle entry holds them equal to the bundle's)",
                     e->note[0] ? "; " : "");
        } else
            run_backend(r, b, c, &g.d, &g.s, &g.co.j, &g.src, e);
    }
    given_case_close(&g);
    return st;
}

a4w4_hstatus a4w4_run_data(const a4w4_runner *r, const a4w4_case *c, a4w4_case_data *d,
                           a4w4_entry_list *out, char *err, size_t errlen)
{
    const uint8_t *op[4] = {d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data};
    a4w4_hstatus st = data_backends(r, NULL, 0, c, op, 0, out);
    if (st != A4W4_ST_OK)
        snprintf(err, errlen, "case %s: out of memory", c->name);
    return st;
}

/* Golden bundle path through every selected backend with a GEMM (plugins, bundles, HIP)
 * other than the systems under test bundle verification ran: its operands as a case, every
 * output compared with the oracle of the backend's contract. NOMEM, else OK. */
static a4w4_hstatus golden_backends(const a4w4_runner *r, const a4w4_bundle_sut *suts,
                                    size_t nsuts, const char *path, const size_t dims[3],
                                    a4w4_entry_list *out)
{
    size_t want = 0;
    for (size_t i = 0; i < r->nbackends; i++)
        want += r->backends[i].type &&
                (r->backends[i].type->run || r->backends[i].type->layouts) &&
                !is_sut(&r->backends[i], suts, nsuts);
    a4w4_st_file f;
    if (!want || !dims[0] || a4w4_st_load(path, &f, NULL, 0))
        return A4W4_ST_OK;
    a4w4_case c = {.M = dims[0], .N = dims[1], .K = dims[2], .regime = A4W4_REGIME_EXACT};
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(c.name, sizeof c.name, "golden/%.*s", (int)(strlen(base) - 12), base);
    snprintf(c.regime_text, sizeof c.regime_text, "golden");
    snprintf(c.tags, sizeof c.tags, "golden");
    const uint8_t *op[4];
    a4w4_hstatus st = A4W4_ST_OK;
    if (golden_operands(&f, dims, op) == 0)
        st = data_backends(r, suts, nsuts, &c, op, 1, out);
    a4w4_st_free(&f);
    return st;
}

/* Quantizer backend b on a quantization bundle's x_bf16 [rows, K] in every scale mode whose
 * expected codes and scales (a_fp4_<mode>_from_bf16, a_scale_<mode>_from_bf16: AITER's) the
 * bundle holds, byte for byte (codes of NaN blocks, scale 0xFF, skipped: contracts §2). */
static void golden_quant_entry(a4w4_backend *b, const a4w4_case *c, const a4w4_st_file *f,
                               const a4w4_st_tensor *x, a4w4_entry_result *e)
{
    const size_t rows = x->shape[0], K = x->shape[1], nb = K / 32;
    static const a4w4_sample all = {.full = 1};
    uint8_t *q = malloc(rows * K / 2 + 1), *sc = malloc(rows * nb + 1),
            *skip = malloc(rows * K / 2 + 1);
    a4w4_check chk[2 * A4W4_SCALE_MODE_COUNT];
    int n = 0, na = 1;
    char why[512] = "";
    double ms = 0;
    for (int m = 0; m < A4W4_SCALE_MODE_COUNT && q && sc && skip; m++) {
        char tq[64], ts[64];
        snprintf(tq, sizeof tq, "a_fp4_%s_from_bf16", a4w4_scale_mode_name((a4w4_scale_mode)m));
        snprintf(ts, sizeof ts, "a_scale_%s_from_bf16", a4w4_scale_mode_name((a4w4_scale_mode)m));
        const a4w4_st_tensor *rq = a4w4_st_find(f, tq), *rs = a4w4_st_find(f, ts);
        if (!rq || !rs || rq->nbytes != rows * K / 2 || rs->nbytes != rows * nb)
            continue;
        double t0 = a4w4_now() * 1e3;
        enter(b);
        int rc = b->type->quantize(b->ctx, (const uint16_t *)x->data, rows, K, m, q, sc, why,
                                   sizeof why);
        leave(b);
        ms += a4w4_now() * 1e3 - t0;
        if (rc == A4W4_EUNSUPPORTED)
            continue;
        na = 0;
        if (rc != A4W4_OK) {
            a4w4_check_na(&chk[n], "quantize", why[0] ? why : a4w4_status_str(rc));
            chk[n++].verdict = A4W4_CHECK_FAIL;
            break;
        }
        for (size_t k = 0; k < rows * K / 2; k++) /* a NaN block's codes are unspecified */
            skip[k] = rs->data[(k / (K / 2)) * nb + (k % (K / 2)) / 16] == 0xFF;
        a4w4_check_bytes(&chk[n++], tq, q, rq->data, rows, K / 2, skip);
        a4w4_check_bytes(&chk[n++], ts, sc, rs->data, rows, nb, NULL);
    }
    if (!q || !sc || !skip) {
        a4w4_check_na(&chk[n], "quantize", "out of memory");
        chk[n++].verdict = A4W4_CHECK_FAIL;
        na = 0;
    }
    byte_entry(c, b, &all, chk, n, ms,
               na ? (why[0] ? why : "the bundle holds no mode's codes and scales from bf16") : NULL,
               e);
    free(q);
    free(sc);
    free(skip);
}

/* Every quantizer backend of r on a quantization bundle (x_bf16 and each mode's expected
 * codes and scales). NOMEM, else OK. */
static a4w4_hstatus golden_quantizers(const a4w4_runner *r, const char *path,
                                      a4w4_entry_list *out)
{
    size_t want = 0;
    for (size_t i = 0; i < r->nbackends; i++)
        want += r->backends[i].type && r->backends[i].type->quantize != NULL;
    a4w4_st_file f;
    if (!want || a4w4_st_load(path, &f, NULL, 0))
        return A4W4_ST_OK;
    const a4w4_st_tensor *x = a4w4_st_find(&f, "x_bf16");
    a4w4_hstatus st = A4W4_ST_OK;
    if (x && x->dtype == A4W4_DT_BF16 && x->ndim == 2 && x->shape[0] && x->shape[1] &&
        x->shape[1] % 32 == 0) {
        a4w4_case c = {.M = x->shape[0], .N = 0, .K = x->shape[1]};
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        snprintf(c.name, sizeof c.name, "golden/%.*s", (int)(strlen(base) - 12), base);
        snprintf(c.regime_text, sizeof c.regime_text, "golden");
        snprintf(c.tags, sizeof c.tags, "golden");
        for (size_t i = 0; i < r->nbackends && st == A4W4_ST_OK; i++) {
            a4w4_backend *b = &r->backends[i];
            a4w4_entry_result *e;
            if (!b->type || !b->type->quantize)
                continue;
            if (!(e = a4w4_entry_list_add(out)))
                st = A4W4_ST_NOMEM;
            else
                golden_quant_entry(b, &c, &f, x, e);
        }
    }
    a4w4_st_free(&f);
    return st;
}

a4w4_hstatus a4w4_run_golden(const a4w4_runner *r, const a4w4_bundle_sut *suts, size_t nsuts,
                             const char *path, a4w4_entry_list *out, char *err, size_t errlen)
{
    a4w4_check_list checks = {0};
    double t0 = (a4w4_now() * 1e3);
    size_t dims[3] = {0, 0, 0};
    a4w4_hstatus rc = a4w4_verify_bundle(path, suts, nsuts, &checks, dims, err, errlen);
    double ms = (a4w4_now() * 1e3) - t0;
    a4w4_hstatus st = rc == A4W4_ST_BADINPUT ? A4W4_ST_BADINPUT : A4W4_ST_OK;
    a4w4_entry_result *e;
    for (size_t i = 0; i < checks.n && st != A4W4_ST_NOMEM; i++) {
        const a4w4_bundle_sut *sut = sut_of(&checks.items[i], suts, nsuts);
        if (!sut || !selected(r, sut->name))
            continue;
        if (!(e = a4w4_entry_list_add(out))) {
            st = A4W4_ST_NOMEM;
            break;
        }
        golden_identity(e, path, dims, sut->name, "ordered(1)", ms);
        a4w4_entry_set_check(e, &checks.items[i]);
        e->has_judged = 1; /* the system under test's y against y_ordered, bit for bit */
        e->judged_bit_exact = e->verdict == A4W4_VERDICT_NA ? 0 : e->checked;
        e->not_judged = dims[0] * dims[1] - e->judged_bit_exact;
    }
    if (st != A4W4_ST_NOMEM && (e = a4w4_entry_list_add(out))) {
        a4w4_check oracle;
        golden_oracle(&checks, suts, nsuts, rc, err, path, &oracle);
        golden_identity(e, path, dims, "oracle", "bit-exact tensors", ms);
        a4w4_entry_set_check(e, &oracle);
    } else {
        st = A4W4_ST_NOMEM;
    }
    if (st == A4W4_ST_OK && rc != A4W4_ST_BADINPUT) {
        size_t first = out->n;
        st = dims[1] ? golden_backends(r, suts, nsuts, path, dims, out) /* a GEMM's bundle */
                     : golden_quantizers(r, path, out);
        if (st == A4W4_ST_OK) /* a backend refusing the bundle is bad input, as for a case */
            st = refusals(out, first, err, errlen);
    }
    if (st == A4W4_ST_NOMEM)
        snprintf(err, errlen, "%s: out of memory for the results", path);
    a4w4_check_list_free(&checks);
    return st;
}
