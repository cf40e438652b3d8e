/* run_gemm.c — a GEMM backend's entry (runner.h, runner_internal.h): the guarded call and its
 * integrity checks, the baseline against the contract's oracle (engine/judge.h) with the
 * two readings of E8M0 code 0, the pad variants (contracts §3.3), the failure map and the
 * failing entry's saved operands. */
#include "runner_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_layout.h"
#include "failing.h"
#include "fsutil.h"
#include "kept_outputs.h"

/* One pad-dependence variant: the fills under test. */
typedef struct {
    uint8_t row_fill, col_fill, guard;
    const char *what;
} variant;

static int is_bounded(const gemm_run *g) { return g->k->kind == A4W4_CONTRACT_BOUNDED; }

/* The contract backend b holds case c to (contracts §4.1, §4.2): the first of its rules that
 * matches c's shape; a backend built without rules, its contract text parsed into *own. NULL
 * when none applies, with why ("contract FILE has no rule for M=.. N=.. K=.."). */
const a4w4_contract *run_case_contract(const a4w4_backend *b, const a4w4_case *c,
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
    int rc = run_call(b, &g->args);
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
        run_note(e->note, sizeof e->note, "%s; ", what);
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
void run_note_repeat(gemm_run *g, a4w4_entry_result *e, unsigned long long hash)
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

/* Run the backend once (guarded_call; on the device, run_baseline_dev) and record run_ms,
 * the outputs' hash when it ran, and whether they repeat its previous call's on another case
 * bit for bit. */
static int run_baseline(gemm_run *g, a4w4_entry_result *e, int *breached)
{
    if (g->dev)
        return is_bounded(g) ? run_bounded_dev(g, e) : run_baseline_dev(g, e);
    double t0 = (a4w4_now() * 1e3);
    int rc = guarded_call(g, &g->y, e, breached);
    e->run_ms = (a4w4_now() * 1e3) - t0;
    e->has_run = rc != RUN_NOT_RUN;
    if (rc != A4W4_OK)
        return rc;
    run_note_repeat(g, e, outputs_hash(g->y.y, g->n));
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
    a4w4_judge_grid grid = run_grid_of(g->s);
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
        run_note(e->note, sizeof e->note, "E8M0 code 0 present: both readings (2^-127, "
                 "2^-126) expect the same bits on every checked output (contracts §1); ");
        break;
    case A4W4_CODE0_JUDGED_AS_STATED:
        if (policy == A4W4_CODE0_DRIVER) {
            g->cmp = alt;
            g->judged_by = g->j->alt;
        }
        run_note(e->note, sizeof e->note, "E8M0 code 0 present: judged as %s, the reading %s; "
                 "the two readings expect other bits on %zu of %zu outputs (contracts §1); ",
                 stated[policy], g->j->policy ? "this run states (--e8m0-code0)"
                                              : "the backend declares", differ, g->n);
        break;
    case A4W4_CODE0_JUDGED_AMBIGUOUS:
        g->ambiguous = 1;
        run_note(e->note, sizeof e->note, "ambiguous: every checked output matches E8M0 code "
                 "0 read as %s (%s), %zu differ from it read as %s (%s); the sources disagree, "
                 "so this is not judged (contracts §1: the backend declares no reading; a "
                 "run may state one with --e8m0-code0); ", pa ? "2^-127" : "2^-126",
                 pa ? OCP_READING : DRIVER_READING, pa ? alt.mismatches : g->cmp.mismatches,
                 pa ? "2^-126" : "2^-127", pa ? DRIVER_READING : OCP_READING);
        break;
    case A4W4_CODE0_MATCHES_BOTH:
    case A4W4_CODE0_MATCHES_NEITHER:
        run_note(e->note, sizeof e->note, "E8M0 code 0 present: the two readings expect other "
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
        run_note(e->note, sizeof e->note, "%zu outputs NaN or Inf where every summation order "
                 "gives a finite value (wrong under any contract); ", g->cmp.not_finite);
    if (g->cmp.not_judged)
        run_note(e->note, sizeof e->note, "%zu of %zu outputs outside the exact regime: not "
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
            run_note(e->note, sizeof e->note, "the device judge counted %zu mismatches, the C "
                     "oracles %zu on the %zu sampled outputs alone; ", g->cmp.mismatches,
                     g->host_cmp.mismatches, g->n);
        else if (g->cmp.mismatches && !g->host_cmp.mismatches)
            run_note(e->note, sizeof e->note, "judged on every output: none of its %zu "
                     "mismatches lies on the host sample of %zu outputs, which is all the "
                     "failure map and --save-failing cover; ", g->cmp.mismatches, g->n);
    }
    if (g->j->alt && judge_code0(g, e))
        return -1;
    if (g->cmp.mismatches && g->cmp.has_bound)
        run_note(e->note, sizeof e->note, "outside the %s bound: largest distance %.3g "
                 "times the bound; ", e->contract, g->cmp.bound_use);
    if (g->k->kind == A4W4_CONTRACT_EXACT)
        note_not_judged(g, e);
    if (g->cmp.unwritten)
        run_note(e->note, sizeof e->note, "%zu outputs never written (poison 0x%04x left); ",
                 g->cmp.unwritten, A4W4_POISON_BF16);
    if (g->cmp.mismatches && g->stale_of[0] && !g->ambiguous)
        run_note(e->note, sizeof e->note, "stale result: its outputs repeat bit for bit those "
                 "of its previous call (case %s); ", g->stale_of);
    return (g->cmp.mismatches != 0 || disagree) && !g->ambiguous;
}

/* Outputs of variant v that change against the baseline (all when the run fails; a crash or
 * a timeout is also named in e's note and aborted; a breach sets *breached). */
static size_t variant_changes(gemm_run *g, const variant *v, a4w4_entry_result *e,
                              int *breached)
{
    a4w4_case_refill(g->d, v->row_fill, v->col_fill, v->guard);
    if (g->dev) /* every output, compared with the baseline on the device */
        return run_variant_dev(g, v->what, e);
    const double t0 = a4w4_now() * 1e3;
    int rc2 = guarded_call(g, &g->y2, e, breached);
    g->variants_ms += a4w4_now() * 1e3 - t0;
    g->args.y = g->y.y;
    if (rc2 == RUN_NOT_RUN) /* stopped after its timeouts: the entry says so already */
        return 0;
    if (rc2 == A4W4_RUN_CRASHED || rc2 == A4W4_RUN_TIMEOUT) {
        snprintf(e->aborted, sizeof e->aborted, "%s",
                 rc2 == A4W4_RUN_CRASHED ? "crashed" : "timed out");
        run_note(e->note, sizeof e->note, "%s (variant %s); ", g->why, v->what);
    }
    if (rc2 != A4W4_OK)
        return g->n;
    size_t diff = 0;
    if (!g->cmp.mismatches && !g->vfail && (g->vfail = malloc(g->n * 2 + 2))) {
        memcpy(g->vfail, g->y2.y, g->n * 2); /* kept when this variant proves to change outputs */
        g->variant = v->what;
    }
    if (is_bounded(g) || g->k->kind == A4W4_CONTRACT_ATOMIC) {
        /* the reduction order of a bounded or atomic(S) kernel varies run to run: a variant
         * only counts when it leaves the bound (the set of orders) the baseline kept */
        a4w4_comparison c2;
        if (compare_with(g, g->j->o, g->y2.y, &c2, NULL))
            return g->n;
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
        run_note(e->note, sizeof e->note, "pad variants not run: M %% 256 == 0 and (K/32) %% 8 "
                 "== 0, so no pad row or column exists and every fill gives the same bytes "
                 "(contracts §3.3); ");
        return 0;
    }
    if (g->dev && nv == 5) { /* device buffers have no guard zones to fill */
        nv = 4;
        run_note(e->note, sizeof e->note, "the garbage-past-the-buffers variant is not run on "
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
            run_note(dep, sizeof e->pad_dependent, "%s%s (%zu outputs change)",
                     dep[0] ? ", " : "", vs[v].what, diff);
    }
    a4w4_case_refill(g->d, A4W4_ACT_SCALE_FILL_DEFAULT, A4W4_ACT_SCALE_FILL_DEFAULT,
                     A4W4_GUARD_FILL);
    e->pad_variants = nv;
    e->variants_ms = g->variants_ms;
    if (!dep[0])
        return breached;
    run_note(e->note, sizeof e->note, "pad-dependent: valid outputs change with %s; it needs "
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
        run_note(e->note, sizeof e->note, "skipped: %s; ", why ? why : "no result");
        return 0;
    }
    if (rc == A4W4_EUNSUPPORTED) {
        *unjudged = A4W4_VERDICT_NA;
        run_note(e->note, sizeof e->note, "%s; ", why ? why : "not applicable to this shape");
        return 0;
    }
    if (rc == A4W4_RUN_REFUSED)
        e->refused = 1;
    if (rc == A4W4_RUN_CRASHED || rc == A4W4_RUN_TIMEOUT || rc == RUN_NOT_RUN)
        snprintf(e->aborted, sizeof e->aborted, "%s", rc == A4W4_RUN_CRASHED ? "crashed"
                                                      : rc == RUN_NOT_RUN    ? "not run"
                                                                             : "timed out");
    run_note(e->note, sizeof e->note, "%s%s; ",
             rc == A4W4_RUN_REFUSED ? "refused: "
             : e->aborted[0]        ? ""
                                    : "backend error: ",
             why ? why : a4w4_status_str(rc));
    if (rc == A4W4_RUN_CRASHED && g->s && !g->s->full) /* a kernel writing all of [M, N] */
        run_note(e->note, sizeof e->note, "a sampled call: y held the %zu x %zu outputs of "
                 "rows[] x cols[], not [%zu, %zu] (harness/backends/a4w4_plugin.h \"Outputs\"); ",
                 g->s->nrows, g->s->ncols, g->d->M, g->d->N);
    return 1;
}

/* Not applicable is a property of the shape (a4w4_plugin.h "Return codes": a shape the kernel
 * does not support, a layout it needs is NULL), never of the values. A backend that answered
 * n/a on g's operands is called once more on the same shape and outputs with constant
 * operands (every E2M1 code 0, every scale 0x7F: the same bytes in every layout, contracts
 * §3); when it computes those, its n/a hid outputs it can compute: 1, with e's note (a kernel
 * that answered n/a on wide or NaN-scale data passed every run). The operands are put back. */
static int na_of_values(gemm_run *g, a4w4_entry_result *e, int *breached)
{
    a4w4_case_data *d = g->d;
    if (g->dev)
        return 0;
    a4w4_case_w_complete(d);
    a4w4_case_wsh_complete(d, g->src->s);
    a4w4_guarded *codes[] = {&d->a_fp4, &d->w_fp4, &d->w_fp4_shuffled};
    a4w4_guarded *scales[] = {&d->a_scale, &d->w_scale, &d->a_scale_shuffled,
                              &d->w_scale_swizzled};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i]->data)
            memset(codes[i]->data, 0x00, codes[i]->len);
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++)
        if (scales[i]->data)
            memset(scales[i]->data, 0x7F, scales[i]->len);
    char why[sizeof g->why];
    memcpy(why, g->why, sizeof why);
    int rc = guarded_call(g, &g->y2, e, breached);
    memcpy(g->why, why, sizeof why); /* the entry keeps the backend's own reason */
    g->args.y = g->y.y;
    restore_operands(d, g->src);
    if (rc != A4W4_OK)
        return 0;
    run_note(e->note, sizeof e->note, "n/a on these operands, yet the backend computed the "
             "same shape and outputs with constant ones (codes 0, scales 0x7F): not applicable "
             "is a property of the shape, so this n/a hides outputs it never computed; ");
    return 1;
}

/* 1 when comparison c is a bounded(S) one whose bound admits 0 on more than
 * A4W4_BOUND_VACUOUS_SHARE of the outputs it weighs (contracts §4.1 "The strength of a
 * bound"): its outputs are then not judged, and e's note says so. */
int run_bound_vacuous(const a4w4_comparison *c, a4w4_entry_result *e)
{
    if (!c->has_bound || !c->bound_weighed ||
        (double)c->bound_vacuous <= A4W4_BOUND_VACUOUS_SHARE * (double)c->bound_weighed)
        return 0;
    run_note(e->note, sizeof e->note, "not judged: the %s bound admits 0 (a kernel writing "
             "zeros passes) on %zu of the %zu outputs with a nonzero exact value, more than "
             "%.0f%% (contracts §4.1, the strength of a bound); ", e->contract, c->bound_vacuous,
             c->bound_weighed, 100 * A4W4_BOUND_VACUOUS_SHARE);
    return 1;
}

/* 1 when g judged under exact left outputs outside the exact regime not judged (contracts
 * §4.1, exact): a kernel writing anything there would pass, so the entry is not judged (skip,
 * the run INCOMPLETE), never a PASS, nor n/a when it judged none; e's note says so. */
static int exact_left_unjudged(const gemm_run *g, a4w4_entry_result *e)
{
    if (g->k->kind != A4W4_CONTRACT_EXACT || !g->cmp.not_judged)
        return 0;
    run_note(e->note, sizeof e->note, "so the entry is not judged: any value would pass "
             "there; declare the order the kernel keeps (ordered(S), a tree: `discover` finds "
             "it) to judge every output; ");
    return 1;
}

/* Run the backend, check its outputs, fill the entry. Returns 1 when it fails. */
static int gemm_checks(gemm_run *g, a4w4_entry_result *e, a4w4_verdict *unjudged)
{
    int breached = 0;
    int rc = run_baseline(g, e, &breached);
    if (rc != A4W4_OK) {
        int fail = no_outputs(g, rc, e, unjudged);
        if (rc == A4W4_EUNSUPPORTED && na_of_values(g, e, &breached))
            *unjudged = A4W4_VERDICT_PASS, fail = 1;
        if (breached) /* a skip or n/a that also wrote out of bounds still fails */
            *unjudged = A4W4_VERDICT_PASS;
        return fail || breached;
    }
    int fail = check_baseline(g, e);
    if (fail < 0) {
        run_note(e->note, sizeof e->note, "the oracle of this contract could not be computed "
                 "(out of memory, or more than %d tree contracts in one run): nothing judged; ",
                 A4W4_ORACLES_MAX_TREES);
        return 1;
    }
    if (g->b->asm_layout && g->d->a_scale_shuffled.data)
        fail |= check_pad_variants(g, e);
    if (!fail && !breached && !g->ambiguous && exact_left_unjudged(g, e))
        *unjudged = A4W4_VERDICT_SKIP;
    return fail | breached;
}

/* note without the "; " separators run_note left at its end. */
static void note_trim(char *note)
{
    size_t L = strlen(note);
    while (L && (note[L - 1] == ' ' || note[L - 1] == ';'))
        note[--L] = 0;
}

/* The map's code-0 hint ("code 0 decoded other than 2^-127?", engine/signature.h) only where
 * the other reading of E8M0 code 0 (contracts §1) could explain the failure: cleared when that
 * reading's oracle is at hand and matches none of the mismatching outputs. */
static void code0_hint_check(gemm_run *g, a4w4_entry_result *e)
{
    a4w4_oracles *other = g->judged_by == g->j->o ? g->j->alt : g->j->o;
    const uint16_t *x = e->map.code0 && other ? expected_of(g, other) : NULL;
    if (!x)
        return;
    for (size_t i = 0; i < g->n; i++)
        if (g->mism[i] && g->yfail[i] == x[i])
            return;
    e->map.code0 = 0;
}

/* The mismatch map and signature of a failing entry (engine/signature.h): of its outputs, or,
 * when only a pad variant changed them, of the first such variant's outputs. */
static void map_failure(gemm_run *g, a4w4_entry_result *e)
{
    const a4w4_case_data *d = g->d;
    if (e->refused) /* bad input, not a failure of the kernel's: no signature */
        return;
    if (e->aborted[0]) { /* "timed out: NOTE", once, even where the note starts so */
        size_t la = strlen(e->aborted);
        int prefixed = !strncmp(e->note, e->aborted, la) && e->note[la] == ':';
        snprintf(e->signature, sizeof e->signature, "%s%s%.360s", prefixed ? "" : e->aborted,
                 prefixed ? "" : ": ", e->note);
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
    code0_hint_check(g, e);
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
    a4w4_case_w_complete(g->d); /* the bundle holds every row of W */
    a4w4_case_wsh_complete(g->d, g->src->s); /* and the ASM layouts */
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
        run_note(e->note, sizeof e->note, "%s--save-failing: %s", e->note[0] ? "; " : "", err);
    }
}

/* --keep-outputs: the baseline outputs when every one of them is on the host. */
static void keep_outputs(const char *dir, const gemm_run *g, const a4w4_case *c,
                         a4w4_entry_result *e)
{
    char why[160];
    const uint16_t *y = NULL;
    if (!e->has_y_hash)
        snprintf(why, sizeof why, "no outputs: the backend returned none for this case");
    else if (g->dev)
        snprintf(why, sizeof why, "judged on the device: the outputs stay there");
    else if (!g->s->full)
        snprintf(why, sizeof why, "sampled: %zu of %zu outputs computed (run --full keeps "
                 "all)", g->n, c->M * c->N);
    else
        y = g->y.y;
    a4w4_kept_entry(dir, g->b->name, c, y, why, e);
}

/* 1 when GEMM backend b with contract k (NULL: none) runs on the device path in j: it has a
 * device form and keeps a single ordered(S) contract, which the device judge computes over
 * every output bit for bit as the C oracles do, or a bounded(S) contract, whose every output
 * comes back to be judged on the host against the judge's limits of every output
 * (run_bounded_dev: the bound, the exact value in double and the overflow rule, contracts
 * §4.1, §4.3, re-checked by the C oracles on the sample), or a single atomic(S) contract,
 * which the device judge computes over every output as the C oracles do (each output's split
 * values, then membership in its set of orders, contracts §4.1 "atomic(S)"). exact (judged
 * inside the exact regime only), tree contracts and other shape rules stay on the host
 * sample. */
int run_on_device(const judging *j, const a4w4_backend *b, const a4w4_contract *k)
{
    if (!j->dev || !b->type->run_device || !k)
        return 0;
    if (k->kind == A4W4_CONTRACT_BOUNDED)
        return !strncmp(b->contract, "bounded", 7);
    if (k->kind == A4W4_CONTRACT_ATOMIC) /* membership in its set of orders, on the device */
        return !strncmp(b->contract, "atomic(", 7) && k->split == b->split;
    return k->kind == A4W4_CONTRACT_ORDERED && !strncmp(b->contract, "ordered(", 8) &&
           k->split == b->split;
}

int run_gemm_backend(const a4w4_runner *r, a4w4_backend *b, const a4w4_case *c,
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
    g.k = run_case_contract(b, c, &own, kwhy, sizeof kwhy);
    if (!g.k || a4w4_contract_format(g.k, ktext, sizeof ktext) < 0)
        snprintf(ktext, sizeof ktext, "%s", b->contract);
    run_case_identity(e, c, A4W4_ENTRY_OUTPUTS, b->name, ktext);
    g.dev = run_on_device(j, b, g.k) ? j->dev : NULL;
    if (j->dev && b->type->run_device && g.k && !g.dev)
        run_note(e->note, sizeof e->note, "judged on the host sample: the device path takes "
                 "single ordered(S), bounded(S) and atomic(S) contracts only; ");
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
    int vacuous = !fail && judged && !g.ambiguous && run_bound_vacuous(&g.cmp, e);
    run_put_comparison(e, &g.cmp, g.dev ? &all : s, e->has_run ? e->run_ms : NAN,
                   g.dev ? j->dor->proven : j->o->proven,
                   a4w4_judge_verdict(fail, unjudged, g.ambiguous, vacuous));
    e->ambiguous = e->verdict == A4W4_VERDICT_AMBIGUOUS;
    e->vacuous = vacuous;
    run_put_judged(e, &g.cmp, g.dev ? c->M * c->N : g.n);
    note_trim(e->note); /* before the signature, which may quote the note */
    if (fail)
        map_failure(&g, e);
    tolerance_of(&g, e);
    record_failing(r, &g, c, e);
    if (r && r->keep_dir)
        keep_outputs(r->keep_dir, &g, c, e);
    a4w4_out_free(&g.y);
    a4w4_out_free(&g.y2);
    free(g.mism);
    free(g.vfail);
    run_bounded_dev_free(&g);
    return fail;
}
