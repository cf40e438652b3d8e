/* runner.c — see runner.h: a4w4_run_case and the backends loop of one case, the oracle's own
 * entry, the oracles a case is judged against, the full-check estimate. The stages are
 * run_gemm.c, run_bytes.c, run_device.c and run_golden.c (runner_internal.h). */
#include "runner.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm_fast.h"
#include "a4w4_layout.h"
#include "annotate.h"
#include "fsutil.h"
#include "runner_internal.h"

/* Backends whose type is not thread_safe (GPU backends: one device, the HIP backends' per-case
 * device cache) are entered one call at a time, whatever the callers' threading (hazards
 * --jobs runs cases on several threads). Thread-safe backends and the oracles stay parallel. */
static pthread_mutex_t serial_mu = PTHREAD_MUTEX_INITIALIZER;

void run_enter(const a4w4_backend *b)
{
    if (!b->type->thread_safe)
        pthread_mutex_lock(&serial_mu);
}

void run_leave(const a4w4_backend *b)
{
    if (!b->type->thread_safe)
        pthread_mutex_unlock(&serial_mu);
}

int run_call(const a4w4_backend *b, const a4w4_run_args *a)
{
    run_enter(b);
    int rc = b->type->run(b->ctx, a);
    run_leave(b);
    return rc;
}

/* The grid of sample s's outputs (judge.h): row-major nrows x ncols, at s's rows and columns. */
a4w4_judge_grid run_grid_of(const a4w4_sample *s)
{
    a4w4_judge_grid g = {s->ncols, s->full ? NULL : s->rows, s->full ? NULL : s->cols};
    return g;
}

/* Append printf-style text to a note buffer (truncating at its end). */
void run_note(char *note, size_t size, const char *fmt, ...)
{
    size_t L = strlen(note);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + L, size - L, fmt, ap);
    va_end(ap);
}

void run_case_identity(a4w4_entry_result *e, const a4w4_case *c, a4w4_entry_kind kind,
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
void run_put_judged(a4w4_entry_result *e, const a4w4_comparison *cmp, size_t n)
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

void run_put_comparison(a4w4_entry_result *e, const a4w4_comparison *cmp, const a4w4_sample *s,
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
    a4w4_judge_grid grid = run_grid_of(s);
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
        run_note(note, sizeof note, "%sspecial blocks: %zu NaN outputs, %zu outside the "
                 "dependent set", note[0] ? "; " : "", nans, wrong);
        fail |= wrong != 0;
        na = 0;
    }
    run_case_identity(e, c, A4W4_ENTRY_OUTPUTS, "oracle", "ordered(1) == exact");
    run_put_comparison(e, &cmp, s, 0, o->proven,
                   a4w4_judge_verdict(fail, na && !fail ? A4W4_VERDICT_NA : A4W4_VERDICT_PASS,
                                      0, 0));
    snprintf(e->note, sizeof e->note, "%s", note);
    return fail;
}

/* Open co for case data d over sample s, judged under E8M0 code-0 policy A4W4_CODE0_*, a
 * backend stopped after max_timeouts timeouts in a row. 0, or -1 when out of memory; co is
 * valid for case_oracles_close either way. */
int run_case_oracles_open(case_oracles *co, const a4w4_case_data *d, const a4w4_sample *s,
                          int policy, int max_timeouts)
{
    memset(co, 0, sizeof *co);
    co->j = (judging){&co->o, d->code0 ? &co->alt : NULL, policy, max_timeouts, NULL, NULL, 0};
    if (a4w4_oracles_compute(d, s, &co->o) != 0)
        return -1;
    return d->code0 && a4w4_oracles_compute_code0_alt(d, s, &co->alt) ? -1 : 0;
}

void run_case_oracles_close(case_oracles *co)
{
    a4w4_oracles_free(&co->alt);
    a4w4_oracles_free(&co->o);
}

/* W of d completed on the host for a host reader (a4w4_case_w_complete), its bytes counted in
 * r's stages.w_host_bytes when it was deferred (docs/gpu.md, "W made on the device"). */
void run_w_complete(const a4w4_runner *r, a4w4_case_data *d)
{
    if (d->w_deferred && r->stages)
        r->stages->w_host_bytes += (double)(d->w_fp4.len + d->w_scale.len) +
                                   (d->w_scale_swizzled.data ? (double)d->w_scale_swizzled.len
                                                             : 0);
    a4w4_case_w_complete(d);
}

/* Entries for every backend of r on case c (after the oracle's), judged against j on sample
 * s; j->dev: the device judge of this case (NULL: everything on the host sample), j->dor: its
 * oracle facts. A GEMM entry on the device is re-checked on the device path's sample ds
 * against jd (case_prep's ds, dco: s and j unless the host checks every output). */
static a4w4_hstatus run_backends(const a4w4_runner *r, const a4w4_case *c, a4w4_case_data *d,
                                 const a4w4_sample *s, const judging *j, const a4w4_sample *ds,
                                 const judging *jd, const case_source *src,
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
        int on_dev = b->type->run && run_on_device(j, b, run_case_contract(b, c, &own, NULL, 0));
        int dev_bytes = dev && ((b->type->layouts && b->type->layouts_device) ||
                                (b->type->quantize && b->type->quantize_device && d->x));
        /* a host reader of W and the ASM layouts, perhaps; a quantizer reads only the
         * activations (run_quant_backend; n/a outside the normal regime), never W */
        if (!on_dev && !dev_bytes && (b->type->run || b->type->layouts)) {
            /* a deferred preshuffle is of a case whose every row of W the host then holds: the
             * preshuffle of every row, as a host layout backend makes it from them (the
             * sample's rows alone would fail it on a sampled case) */
            const a4w4_sample every = {.full = 1};
            run_w_complete(r, d);
            a4w4_case_wsh_complete(d, &every);
        }
        if (b->type->run)
            run_gemm_backend(r, b, c, d, on_dev ? ds : s, on_dev ? jd : j, src, e);
        else if (dev_bytes)
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
        if (r->stages)
            r->stages->variant_runs_s += e->variants_ms / 1e3;
    }
    return A4W4_ST_OK;
}

/* 1 when backend b holds case c (a4w4_backend_type.holds; why: the reason it does not). */
static int holds(const a4w4_backend *b, const a4w4_case *c, char *why, size_t whylen)
{
    return !b->type->holds || b->type->holds(b->ctx, c, why, whylen);
}

/* 1 when a selected backend judges every output of c (a4w4_backend_type.full_outputs) and
 * holds a result for it: a case it has no output of is sampled as without it. */
static int wants_full(const a4w4_runner *r, const a4w4_case *c)
{
    char why[8];
    for (size_t i = 0; i < r->nbackends; i++)
        if (r->backends[i].type->full_outputs && holds(&r->backends[i], c, why, sizeof why))
            return 1;
    return 0;
}

/* 1 when no backend of r holds case c: every one reads results made elsewhere
 * (full_outputs) and has none for c, and none runs a call sequence. Such a case needs no
 * operands and no oracle: nothing of it is judged. */
static int held_by_none(const a4w4_runner *r, const a4w4_case *c)
{
    char why[8];
    for (size_t i = 0; i < r->nbackends; i++) {
        const a4w4_backend *b = &r->backends[i];
        if (!b->type->full_outputs || !b->type->holds || b->type->run_sequence ||
            holds(b, c, why, sizeof why))
            return 0;
    }
    return r->nbackends > 0;
}

/* The entries of a case held by no backend (held_by_none): the oracle's n/a, each
 * backend's skipped (the run INCOMPLETE), each note saying why; nothing generated or
 * computed. */
static a4w4_hstatus unheld_entries(const a4w4_runner *r, const a4w4_case *c,
                                   a4w4_entry_list *out, char *err, size_t errlen)
{
    for (size_t i = 0; i <= r->nbackends; i++) {
        a4w4_entry_result *e = a4w4_entry_list_add(out);
        if (!e) {
            snprintf(err, errlen, "case %s: out of memory for the results", c->name);
            return A4W4_ST_NOMEM;
        }
        const a4w4_backend *b = i ? &r->backends[i - 1] : NULL;
        run_case_identity(e, c, A4W4_ENTRY_OUTPUTS, b ? b->name : "oracle",
                          b ? b->contract : "ordered(1) == exact");
        e->verdict = b ? A4W4_VERDICT_SKIP : A4W4_VERDICT_NA;
        e->has_judged = 1;
        e->not_judged = c->M * c->N;
        char why[600] = "";
        if (b)
            holds(b, c, why, sizeof why);
        snprintf(e->note, sizeof e->note, "%s%s", b ? "skipped: " : "", b ? why
                 : "no backend of this run holds an output of this case: nothing to judge "
                   "(no operands generated, no oracle computed)");
    }
    return A4W4_ST_OK;
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
        const a4w4_contract *k = run_case_contract(b, c, &own, NULL, 0);
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
long a4w4_budget_plan_index(const a4w4_budget_plan *p, const a4w4_case *c)
{
    return p && p->full && c && c >= p->cases && c < p->cases + p->ncases
               ? (long)(c - p->cases) : -1;
}

int a4w4_judged_on_device(const a4w4_runner *r, const a4w4_case *c)
{
    const judging j = {.dev = r->dev};
    if (!r->dev || c->regime == A4W4_REGIME_RANGE)
        return 0;
    for (size_t i = 0; i < r->nbackends; i++) {
        const a4w4_backend *b = &r->backends[i];
        a4w4_contract own;
        /* a quantizer reads nothing of a case outside the normal regime (its entry is n/a:
         * run_quant_backend), so it keeps no such case on the host */
        if (b->type->run ? !run_on_device(&j, b, run_case_contract(b, c, &own, NULL, 0))
            : b->type->layouts ? !b->type->layouts_device
            : b->type->quantize && c->regime != A4W4_REGIME_NORMAL ? 0
            : !b->type->quantize_device || c->regime != A4W4_REGIME_NORMAL)
            return 0;
    }
    return r->nbackends > 0;
}

/* 1 when every output of c is to be checked on the host: --full, a backend that judges every
 * output (a4w4_backend_type.full_outputs), or a full check the budget buys, unless every
 * entry of c is judged on the device, which checks every output itself: the host's sample
 * then re-checks it, and a full one would only compute oracles nothing reads. */
static int check_all(const a4w4_runner *r, const a4w4_case *c)
{
    if (r->full || wants_full(r, c))
        return 1;
    if (a4w4_judged_on_device(r, c))
        return 0;
    long k = a4w4_budget_plan_index(r->plan, c);
    if (k >= 0)
        return r->plan->full[k];
    return r->budget_s > 0 && a4w4_full_check_seconds(r, c) <= r->budget_s;
}

/* The oracle entry's note on a case sampled under a budget: what was sampled and why. */
static void note_sampled(const a4w4_runner *r, const a4w4_case *c, const a4w4_sample *s,
                         a4w4_entry_result *e)
{
    long k = a4w4_budget_plan_index(r->plan, c);
    if (s->full || (k < 0 && r->budget_s <= 0) || a4w4_judged_on_device(r, c))
        return;
    if (k >= 0 && r->plan->held && r->plan->held[k] == A4W4_HELD_BACK)
        run_note(e->note, sizeof e->note, "%ssampled on the host: %zu of %zu outputs (the "
                 "budget's plan had it in full, estimated at %.3g s at the calibration's rates; "
                 "the cases checked in full before it took %.3g s, %.3g times their estimates, "
                 "so that its full check would pass the run's budget of %g s)",
                 e->note[0] ? "; " : "", s->nrows * s->ncols, c->M * c->N, r->plan->est_s[k],
                 r->plan->spent_s, r->plan->spent_est_s > 0 ? r->plan->spent_s /
                 r->plan->spent_est_s : 1.0, r->plan->budget_s);
    else if (k >= 0)
        run_note(e->note, sizeof e->note, "%ssampled on the host: %zu of %zu outputs (a full "
                 "host check is estimated at %.1f s at this run's measured rates; the run's "
                 "budget of %g s went to the %zu cheaper cases checked in full)",
                 e->note[0] ? "; " : "", s->nrows * s->ncols, c->M * c->N, r->plan->est_s[k],
                 r->plan->budget_s, r->plan->nfull);
    else
        run_note(e->note, sizeof e->note, "%ssampled: %zu of %zu outputs checked (a full check "
                 "is estimated at %.1f s, above the budget of %g s)", e->note[0] ? "; " : "",
                 s->nrows * s->ncols, c->M * c->N, a4w4_full_check_seconds(r, c), r->budget_s);
}

/* A4W4_ST_BADINPUT with err = the first refusal's note when an entry of first.. refused its
 * result (another matrix's outputs), else A4W4_ST_OK. */
a4w4_hstatus run_refusals(const a4w4_entry_list *out, size_t first, char *err, size_t errlen)
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
/* Host bytes of case c's activation side: A's codes and scales, their shuffled scales and, in
 * the normal regime, the bf16 activations. */
static double a_side_bytes(const a4w4_case *c)
{
    const double M = (double)c->M, K = (double)c->K;
    const double b = M * (K / 2 + K / 32) + (double)a4w4_act_scale_padded_rows(c->M) *
                                                (double)a4w4_act_scale_padded_cols(c->K / 32);
    return c->regime == A4W4_REGIME_NORMAL ? b + 2 * M * K : b;
}

static double case_bytes(const a4w4_case *c)
{
    double N = (double)c->N, K = (double)c->K, nb = K / 32;
    double b = a_side_bytes(c) + N * (K / 2 + nb);
    if (a4w4_preshuffle_supported(c->N, c->K))
        b += N * K / 2;
    if (a4w4_scale_swizzle_supported(2, c->N, c->K / 32))
        b += N * nb;
    return b;
}

static int host_w(void);

double run_prep_bytes(const a4w4_runner *r, const a4w4_case *c)
{
    if (!run_wants_device(r) || !a4w4_judged_on_device(r, c) || host_w())
        return case_bytes(c);
    return a_side_bytes(c);
}

double a4w4_stage_sum(const a4w4_stage_times *t)
{
    return t->setup_s + t->generate_s + t->judge_s + t->kernels_s + t->host_oracle_s +
           t->record_s + t->bundles_s + t->write_s + t->finish_s;
}

/* The device path's own sample of a case the host checks in full (case_prep's ds, dco): the
 * case's sample as without the full check, with its oracles, when the device judge may take
 * the case and that sample is not everything. 0, or -1 when out of memory. */
static int prep_device_sample(const a4w4_runner *r, const a4w4_case *c, case_prep *p)
{
    if (!p->s.full || !run_wants_device(r))
        return 0;
    if (a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, 0, &p->ds) != A4W4_OK)
        return -1;
    p->have_ds = 1;
    if (p->ds.full) { /* a small case: its sample is every output, as the host's */
        a4w4_sample_free(&p->ds);
        p->have_ds = 0;
        return 0;
    }
    p->have_dco = 1;
    return run_case_oracles_open(&p->dco, &p->d, &p->ds, r->code0_reading, r->max_timeouts);
}

/* 1 when A4W4_HOST_W is set (not "0"): W of a case the device judges whole is generated on
 * the host and uploaded as before the device made it (docs/gpu.md, "W made on the device":
 * the reference its tests and measurements compare with). */
static int host_w(void)
{
    const char *v = getenv("A4W4_HOST_W");
    return v && *v && strcmp(v, "0") != 0;
}

void run_prep_case(const a4w4_runner *r, const a4w4_case *c, case_prep *p)
{
    memset(p, 0, sizeof *p);
    p->c = c;
    p->st = A4W4_ST_NOMEM;
    if (held_by_none(r, c)) { /* nothing to prepare (a4w4_run_case says so) */
        snprintf(p->err, sizeof p->err, "case %s: held by no backend", c->name);
        return;
    }
    double t0 = a4w4_now();
    p->have_s = a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, check_all(r, c), &p->s) ==
                A4W4_OK;
    if (!p->have_s) {
        snprintf(p->err, sizeof p->err, "case %s: out of memory sampling", c->name);
        return;
    }
    /* a device judge checks every output: every row exists on the host too; when it judges
     * every entry, the preshuffled weight is deferred (the judge makes its own; run_backends
     * the host's should a host reader come), else made here, beside the device's work */
    int grc = !run_wants_device(r) ? a4w4_case_generate(c, &p->s, &p->d)
            : !a4w4_judged_on_device(r, c) ? a4w4_case_generate_all(c, &p->s, &p->d)
            : host_w() ? a4w4_case_generate_dev(c, &p->s, &p->d)
                       : a4w4_case_generate_devw(c, &p->s, &p->d);
    double t1 = a4w4_now();
    p->gen_s = t1 - t0;
    p->have_d = 1; /* freed whatever the outcome */
    if (grc != A4W4_OK) {
        snprintf(p->err, sizeof p->err, "case %s: M=%zu N=%zu K=%zu is too large for this "
                 "machine: needs %.1f GB for its operands and their layouts (cannot allocate "
                 "them)", c->name, c->M, c->N, c->K, case_bytes(c) / 1e9);
        p->st = A4W4_ST_BADINPUT;
        return;
    }
    p->have_co = 1;
    int orc = run_case_oracles_open(&p->co, &p->d, &p->s, r->code0_reading, r->max_timeouts) ||
              prep_device_sample(r, c, p);
    p->oracle_s = a4w4_now() - t1;
    if (orc)
        snprintf(p->err, sizeof p->err, "case %s: out of memory for the oracles", c->name);
    else
        p->st = A4W4_ST_OK;
}

void run_prep_free(case_prep *p)
{
    if (p->have_dco)
        run_case_oracles_close(&p->dco);
    if (p->have_ds)
        a4w4_sample_free(&p->ds);
    if (p->have_co)
        run_case_oracles_close(&p->co);
    if (p->have_d)
        a4w4_case_data_free(&p->d);
    if (p->have_s)
        a4w4_sample_free(&p->s);
    p->have_s = p->have_d = p->have_co = p->have_ds = p->have_dco = 0;
}

/* The prepared case c: the prefetch's (the wait for it in the stage table, split between
 * generate and host oracles as its thread's seconds were) or prepared now into *own. */
static case_prep *prepared(const a4w4_runner *r, const a4w4_case *c, case_prep *own)
{
    a4w4_stage_times *T = r->stages;
    const double t0 = a4w4_now();
    case_prep *P = run_prefetch_take(r, c);
    const double waited = a4w4_now() - t0, both = P ? P->gen_s + P->oracle_s : 0;
    if (!P)
        run_prep_case(r, c, P = own);
    if (T && P == own) {
        T->generate_s += P->gen_s + waited; /* waited: a failed or stray prefetch */
        T->host_oracle_s += P->oracle_s;
    } else if (T) {
        T->prefetch_s += both;
        T->generate_s += both > 0 ? waited * P->gen_s / both : waited;
        T->host_oracle_s += both > 0 ? waited * P->oracle_s / both : 0;
    }
    if (T && P->have_co && P->st == A4W4_ST_OK)
        T->oracle_outputs += (double)P->co.o.count + (P->have_dco ? (double)P->dco.o.count : 0);
    return P;
}

/* The case's entries from its prepared operands and oracles P: the device judge opened, the
 * oracle's entry, every backend's. */
static a4w4_hstatus run_prepared(const a4w4_runner *r, const a4w4_case *c, case_prep *P,
                                 double shared_s, a4w4_entry_list *out, char *err,
                                 size_t errlen)
{
    a4w4_stage_times *T = r->stages;
    a4w4_case_data *d = &P->d;
    a4w4_sample *s = &P->s, *ds = P->have_ds ? &P->ds : s;
    case_oracles *co = &P->co, *dco = P->have_dco ? &P->dco : co;
    const int use_dev = run_wants_device(r);
    a4w4_hstatus st = A4W4_ST_NOMEM;
    case_source src = {c, s, NULL, use_dev};
    a4w4_devneeds need = run_device_needs(r, d);
    a4w4_devoracle dor;
    char dwhy[512] = "";
    int nofit = 0;
    memset(&dor, 0, sizeof dor);
    double t0 = a4w4_now();
    const a4w4_devjudge *dev =
        use_dev ? run_device_for(r, c, d, &need, dwhy, sizeof dwhy, &nofit) : NULL;
    if (!dev) /* every entry on the host: W's every row there (a device W never made) */
        run_w_complete(r, d);
    else if (T && d->w_deferred) /* the judge made W (devjudge_hip.c make_w) */
        T->w_device_bytes += (double)(d->w_fp4.len + d->w_scale.len) +
                             (d->w_scale_swizzled.data ? (double)d->w_scale_swizzled.len : 0);
    co->j.dev = dco->j.dev = dev;
    co->j.dor = dco->j.dor = &dor;
    co->j.bounded_s = dco->j.bounded_s = need.bounded_s;
    a4w4_entry_result *e = a4w4_entry_list_add(out);
    if (!e)
        snprintf(err, errlen, "case %s: out of memory for the results", c->name);
    else {
        size_t first = out->n - 1;
        if (dev)
            run_oracle_entry_dev(dev, &need, c, d, ds, &dco->o, &dor, e);
        else
            oracle_entry(c, d, s, &co->o, e);
        double t1 = a4w4_now();
        if (T)
            T->judge_s += t1 - t0;
        if (use_dev && !dev) /* the GPU judge does not take the case: all on the host */
            run_note(e->note, sizeof e->note, "%sjudged on the host: %s", e->note[0] ? "; " : "",
                     dwhy);
        if (nofit) /* not every output judged on the device as the run asked: a failure */
            e->verdict = A4W4_VERDICT_FAIL;
        note_sampled(r, c, s, e);
        e->has_cost = 1; /* the case's shared work (before e can move: the list grows) */
        e->cost_ms = (shared_s + a4w4_now() - t0) * 1e3;
        e->has_prep = 1;
        e->prep_generate_ms = P->gen_s * 1e3;
        e->prep_oracles_ms = P->oracle_s * 1e3;
        t0 = a4w4_now();
        st = run_backends(r, c, d, s, &co->j, ds, &dco->j, &src, out);
        if (st == A4W4_ST_OK)
            st = run_statecheck(r, c, out);
        if (T)
            T->kernels_s += a4w4_now() - t0;
        annotate_entries(c, out, first);
        if (st != A4W4_ST_OK)
            snprintf(err, errlen, "case %s: out of memory for the results", c->name);
        else
            st = run_refusals(out, first, err, errlen);
    }
    if (dev)
        dev->close(dev->self);
    return st;
}

a4w4_hstatus a4w4_run_case(const a4w4_runner *r, const a4w4_case *c, a4w4_entry_list *out,
                           char *err, size_t errlen)
{
    if (held_by_none(r, c)) {
        case_prep *stray = run_prefetch_take(r, c); /* the next case's turn follows */
        if (stray)
            run_prep_free(stray);
        run_prefetch_start(r);
        return unheld_entries(r, c, out, err, errlen);
    }
    case_prep own, *P = prepared(r, c, &own);
    /* the next case's operands and oracles on a host thread while this one runs */
    run_prefetch_start(r);
    a4w4_hstatus st = P->st;
    if (st != A4W4_ST_OK)
        snprintf(err, errlen, "%s", P->err);
    else
        st = run_prepared(r, c, P, P->gen_s + P->oracle_s, out, err, errlen);
    run_prep_free(P);
    return st;
}
