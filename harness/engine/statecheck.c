/* statecheck.c — the call sequence (statecheck.h): the pick of its cases from the matrix, the
 * calls into one process (a4w4_backend_type.run_sequence), every call judged as a capture is
 * (a4w4_judge_outputs), one entry per backend. */
#include "statecheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "failing.h"
#include "fsutil.h"
#include "runner_internal.h"
#include "stream.h"

static double macs_of(const a4w4_case *c)
{
    return (double)c->M * (double)c->N * (double)c->K;
}

/* 1 when c may be in the sequence: small, and of a regime without NaN or code-0 blocks (every
 * call judged without the E8M0 code-0 question, contracts §1). */
static int eligible(const a4w4_case *c)
{
    return macs_of(c) <= (double)A4W4_SEQ_MAX_MACS &&
           (c->regime == A4W4_REGIME_EXACT || c->regime == A4W4_REGIME_NORMAL ||
            c->regime == A4W4_REGIME_WIDE);
}

void a4w4_statecheck_pick(const a4w4_case *cases, size_t n, a4w4_statecheck *sc)
{
    memset(sc, 0, sizeof *sc);
    const a4w4_case *a = NULL, *b = NULL;
    for (size_t i = 0; i < n; i++)
        if (eligible(&cases[i]) && (!a || macs_of(&cases[i]) < macs_of(a)))
            a = &cases[i];
    if (!a) {
        snprintf(sc->why, sizeof sc->why, "not run: no case of the run has at most %llu "
                 "multiply-adds in an exact, normal or wide regime", (unsigned long long)A4W4_SEQ_MAX_MACS);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const a4w4_case *c = &cases[i];
        if (!eligible(c) || (c->M == a->M && c->N == a->N && c->K == a->K))
            continue;
        int same_n = c->N == a->N, b_same_n = b && b->N == a->N;
        if (!b || same_n > b_same_n || (same_n == b_same_n && macs_of(c) < macs_of(b)))
            b = c;
    }
    sc->have = 1;
    sc->a = *a;
    if (b)
        sc->b = *b;
}

void a4w4_statecheck_describe(const a4w4_statecheck *sc, char *buf, size_t len)
{
    const a4w4_case *a = &sc->a, *b = &sc->b;
    if (!sc->have)
        snprintf(buf, len, "%s", sc->why[0] ? sc->why : "none");
    else if (b->M)
        snprintf(buf, len, "on: %s (%zux%zux%zu), %s again, %s with other operands, %s "
                 "(%zux%zux%zu), %s again, in one process per plugin, every call judged",
                 a->name, a->M, a->N, a->K, a->name, a->name, b->name, b->M, b->N, b->K,
                 a->name);
    else
        snprintf(buf, len, "on: %s (%zux%zux%zu), %s again, %s with other operands, %s "
                 "again, in one process per plugin, every call judged (no case of another "
                 "shape)", a->name, a->M, a->N, a->K, a->name, a->name, a->name);
}

/* One call of the sequence: its case, data, outputs, status and judgement. */
typedef struct {
    const a4w4_case *c;
    const char *label; /* "" or " with other operands" */
    a4w4_case_data *d;
    a4w4_sample *s;
    a4w4_out_buf y;
    const a4w4_case_digest *digest; /* its operands before the sequence */
    char why[512];
    char breach[384]; /* what it wrote outside y or into its operands ("" nothing) */
    int rc;
    a4w4_entry_result *e;
} seq_call;

/* The sequence's cases: A, A again, A' (A reseeded), B (when the matrix has one), A again
 * (their data is set by seq_backend). */
static size_t seq_plan(const a4w4_statecheck *sc, const a4w4_case *a2, seq_call *calls)
{
    const a4w4_case *cs[A4W4_SEQ_CALLS] = {&sc->a, &sc->a, a2, &sc->b, &sc->a};
    size_t n = 0;
    for (size_t i = 0; i < A4W4_SEQ_CALLS; i++) {
        if (cs[i] == &sc->b && !sc->b.M)
            continue;
        calls[n] = (seq_call){.c = cs[i], .label = i == 2 ? " with other operands" : ""};
        n++;
    }
    return n;
}

/* 1 when call i failed and its outputs repeat call i-1's bit for bit (a stale result). */
static int repeats_previous(const seq_call *calls, size_t i)
{
    if (!i || calls[i].e->verdict != A4W4_VERDICT_FAIL || calls[i].c->M != calls[i - 1].c->M ||
        calls[i].c->N != calls[i - 1].c->N)
        return 0;
    return !memcmp(calls[i].y.y, calls[i - 1].y.y, calls[i].c->M * calls[i].c->N * 2);
}

/* Judge call k's outputs under the contract b holds its case to, into k->e. */
static int seq_judge(const a4w4_runner *r, const a4w4_backend *b, seq_call *k)
{
    a4w4_contract own;
    char text[A4W4_CONTRACT_MAX], why[256] = "";
    const a4w4_contract *ct = run_case_contract(b, k->c, &own, why, sizeof why);
    if (ct && a4w4_contract_format(ct, text, sizeof text) < 0)
        ct = NULL;
    const a4w4_case_data *d = k->d;
    a4w4_judge_input in = {k->c->name, k->c->regime_text, b->name, ct ? text : NULL,
                           d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data,
                           k->c->M, k->c->N, k->c->K, k->y.y,
                           r->code0_reading ? r->code0_reading : b->code0_reading};
    if (k->rc != A4W4_OK || !ct) {
        memset(k->e, 0, sizeof *k->e);
        k->e->verdict = k->rc == A4W4_EUNSUPPORTED ? A4W4_VERDICT_NA
                        : k->rc == A4W4_OK         ? A4W4_VERDICT_SKIP
                                                   : A4W4_VERDICT_FAIL;
        snprintf(k->e->aborted, sizeof k->e->aborted, "%s",
                 k->rc == A4W4_RUN_CRASHED ? "crashed" : k->rc == A4W4_RUN_TIMEOUT ? "timed out"
                                                                                  : "");
        k->e->has_judged = 1;
        k->e->not_judged = k->c->M * k->c->N;
        snprintf(k->e->note, sizeof k->e->note, "%s", ct ? k->why : why);
        return A4W4_ST_OK;
    }
    if (a4w4_judge_outputs(&in, k->e) != A4W4_ST_OK)
        return A4W4_ST_NOMEM;
    if (k->breach[0]) { /* outputs as judged, but the call broke the rules around them */
        char note[sizeof k->e->note];
        snprintf(note, sizeof note, "%.380s%s%.380s", k->breach, k->e->note[0] ? "; " : "",
                 k->e->note);
        memcpy(k->e->note, note, sizeof note);
        k->e->verdict = A4W4_VERDICT_FAIL;
    }
    return A4W4_ST_OK;
}

static const char *ordinal(size_t k)
{
    static const char *const w[] = {"first", "second", "third", "fourth", "fifth", "sixth"};
    return k < sizeof w / sizeof w[0] ? w[k] : "next";
}

static int same_shape(const a4w4_case *x, const a4w4_case *y)
{
    return x->M == y->M && x->N == y->N && x->K == y->K;
}

/* Which call i of calls[0..n) was, in words, and what went wrong with it (its entry). */
static void describe(const seq_call *calls, size_t n, size_t i, char *buf, size_t len)
{
    const a4w4_case *c = calls[i].c;
    size_t k = 0;
    for (size_t j = 0; j < i; j++)
        k += same_shape(calls[j].c, c);
    int L = snprintf(buf, len, "%s call of %zux%zux%zu%s", ordinal(k), c->M, c->N, c->K,
                     calls[i].label);
    if (i > 0 && L > 0 && (size_t)L < len)
        L += snprintf(buf + L, len - (size_t)L, " after %zux%zux%zu%s", calls[i - 1].c->M,
                      calls[i - 1].c->N, calls[i - 1].c->K, calls[i - 1].label);
    const a4w4_entry_result *e = calls[i].e;
    if (L > 0 && (size_t)L < len && calls[i].breach[0])
        L += snprintf(buf + L, len - (size_t)L, " in one process (call %zu of %zu): %s", i + 1,
                      n, calls[i].breach);
    else if (L > 0 && (size_t)L < len && e->mismatches)
        L += snprintf(buf + L, len - (size_t)L, " in one process (call %zu of %zu): %zu of %zu "
                      "outputs differ", i + 1, n, e->mismatches, e->checked);
    else if (L > 0 && (size_t)L < len)
        L += snprintf(buf + L, len - (size_t)L, " in one process (call %zu of %zu): %.300s",
                      i + 1, n, e->note[0] ? e->note : "failed");
    if (L > 0 && (size_t)L < len && repeats_previous(calls, i))
        snprintf(buf + L, len - (size_t)L, "; stale result: its outputs repeat bit for bit "
                 "those of its previous call (call %zu of %zu)", i, n);
}

/* The calibration call's judgement for backend bi (runner.h a4w4_rates) folded into e's
 * counts and verdict; its phrase into cal, and into lead when it failed and lead is empty. */
static void fold_calibration(const a4w4_runner *r, size_t bi, a4w4_entry_result *e, char *lead,
                             char *cal, size_t len)
{
    const a4w4_rates *rt = r->rates;
    if (!rt || bi >= 64 || !rt->cal_judged[bi]) {
        snprintf(cal, len, "the run's calibration call was not judged here (none in this "
                 "process, or no contract for its shape)");
        return;
    }
    e->checked += rt->cal_checked[bi];
    e->mismatches += rt->cal_mismatches[bi];
    *(rt->cal_bound[bi] ? &e->judged_in_bound : &e->judged_bit_exact) += rt->cal_checked[bi];
    snprintf(cal, len, "the run's calibration call (%s, %zu outputs) judged too: %zu differ",
             A4W4_CALIBRATION_SHAPE, rt->cal_checked[bi], rt->cal_mismatches[bi]);
    if (rt->cal_mismatches[bi]) {
        e->verdict = A4W4_VERDICT_FAIL;
        if (!lead[0])
            snprintf(lead, len, "the run's calibration call (%s, %s): %zu of %zu outputs "
                     "differ", A4W4_CALIBRATION_SHAPE, r->seq->isolated ? "in its own "
                     "process" : "the process's first call", rt->cal_mismatches[bi], rt->cal_checked[bi]);
    }
}

/* The sequence entry of backend r->backends[bi] on first case a from its judged calls. */
static void fold(const a4w4_runner *r, size_t bi, const a4w4_case *a, const seq_call *calls,
                 size_t n, a4w4_entry_result *e)
{
    const a4w4_backend *b = &r->backends[bi];
    size_t bad = n, na = 0, unjudged = 0, nfail = 0;
    for (size_t i = 0; i < n; i++) {
        a4w4_verdict v = calls[i].e->verdict;
        bad = bad == n && v == A4W4_VERDICT_FAIL ? i : bad;
        nfail += v == A4W4_VERDICT_FAIL;
        na += v == A4W4_VERDICT_NA;
        unjudged += v == A4W4_VERDICT_SKIP || v == A4W4_VERDICT_AMBIGUOUS;
    }
    *e = *calls[bad < n ? bad : 0].e; /* first mismatches, signature, contract of that call */
    char contract[A4W4_CONTRACT_MAX], lead[512] = "", cal[512] = "";
    snprintf(contract, sizeof contract, "%s", e->contract[0] ? e->contract : b->contract);
    /* the shape (and operands' seed) of the first failing call, A's when none fails: what a
     * ledger entry's shape predicate and a signature describe (the name stays A's) */
    run_case_identity(e, bad < n ? calls[bad].c : a, A4W4_ENTRY_OUTPUTS, b->name, contract);
    snprintf(e->name, sizeof e->name, "%.140s" A4W4_SEQ_SUFFIX, a->name);
    e->sampled = 0;
    e->checked = e->mismatches = e->unwritten = e->judged_bit_exact = e->judged_in_bound = 0;
    e->not_judged = 0;
    e->time_ms = 0;
    for (size_t i = 0; i < n; i++) {
        const a4w4_entry_result *c = calls[i].e;
        e->checked += c->checked, e->mismatches += c->mismatches, e->unwritten += c->unwritten;
        e->judged_bit_exact += c->judged_bit_exact, e->judged_in_bound += c->judged_in_bound;
        e->not_judged += c->not_judged;
        e->max_ulp = c->max_ulp > e->max_ulp ? c->max_ulp : e->max_ulp;
        e->time_ms += c->time_ms == c->time_ms ? c->time_ms : 0;
    }
    e->has_judged = 1;
    e->verdict = bad < n ? A4W4_VERDICT_FAIL : na == n ? A4W4_VERDICT_NA
                 : unjudged ? A4W4_VERDICT_SKIP : A4W4_VERDICT_PASS;
    if (bad < n)
        describe(calls, n, bad, lead, sizeof lead);
    fold_calibration(r, bi, e, lead, cal, sizeof cal);
    e->note[0] = '\0';
    if (lead[0])
        run_note(e->note, sizeof e->note, "%s; ", lead);
    run_note(e->note, sizeof e->note, "%zu calls in one %s: ", n,
             r->seq->isolated ? "child process (init once)" : "process (this one)");
    for (size_t i = 0; i < n; i++)
        run_note(e->note, sizeof e->note, "%s%zux%zux%zu%s", i ? ", " : "", calls[i].c->M,
                 calls[i].c->N, calls[i].c->K, calls[i].label);
    run_note(e->note, sizeof e->note, " (%zu failed); %s", nfail, cal);
    for (size_t i = 0; i < n; i++) /* a call not judged is named, never silent */
        if (calls[i].e->verdict == A4W4_VERDICT_SKIP ||
            calls[i].e->verdict == A4W4_VERDICT_AMBIGUOUS) {
            run_note(e->note, sizeof e->note, "; call %zu of %zu (%zux%zux%zu%s) not judged: "
                     "%.300s", i + 1, n, calls[i].c->M, calls[i].c->N, calls[i].c->K,
                     calls[i].label, calls[i].e->note[0] ? calls[i].e->note : "no judgement");
            break;
        }
}

/* The failing call's expected outputs [M, N] under the contract b holds its case to
 * (bounded(S): the exact ones, as failing.h records them), malloc'ed; NULL when there is none. */
static uint16_t *seq_expected(const a4w4_backend *b, const seq_call *k)
{
    a4w4_contract own, exact;
    char why[256];
    const a4w4_contract *ct = run_case_contract(b, k->c, &own, why, sizeof why);
    if (!ct || a4w4_contract_parse("exact", &exact, why, sizeof why))
        return NULL;
    if (ct->kind == A4W4_CONTRACT_BOUNDED)
        ct = &exact;
    const a4w4_case_data *d = k->d;
    uint16_t *y = malloc(k->c->M * k->c->N * sizeof *y);
    if (y && a4w4_gemm_contract(ct, d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                d->w_scale.data, k->c->M, k->c->N, k->c->K, y, NULL)) {
        free(y);
        y = NULL;
    }
    return y;
}

/* A failing sequence entry's repro command (the run narrowed to the sequence's cases: A, and
 * B when it has one, so the same sequence is made) and, with --save-failing, the bundle of
 * its first failing call whose outputs differ (item "<A>-call-sequence-<call>@<backend>",
 * engine/failing.h), named in e->saved. */
static void seq_record(const a4w4_runner *r, const a4w4_backend *b, const seq_call *calls,
                       size_t n, a4w4_entry_result *e)
{
    if (e->verdict != A4W4_VERDICT_FAIL)
        return;
    const a4w4_statecheck *sc = r->seq;
    if (r->repro) {
        r->repro(r->repro_ctx, sc->a.name, b->name, e->repro, sizeof e->repro);
        size_t L = strlen(e->repro);
        if (sc->b.M && L)
            snprintf(e->repro + L, sizeof e->repro - L, " --case %s", sc->b.name);
    }
    size_t k = 0;
    while (k < n && !(calls[k].e->verdict == A4W4_VERDICT_FAIL && calls[k].e->mismatches))
        k++;
    uint16_t *exp = r->save_dir && k < n ? seq_expected(b, &calls[k]) : NULL;
    if (!exp)
        return;
    a4w4_case c = *calls[k].c;
    snprintf(c.name, sizeof c.name, "%.64s-call-sequence-%u", sc->a.name, (unsigned)(k + 1) % 10u);
    int qualify = 0;
    for (size_t i = 0; i < r->nbackends; i++)
        qualify |= a4w4_failing_names_collide(b->name, r->backends[i].name);
    const a4w4_entry_result *x = calls[k].e;
    a4w4_failing f = {&c, calls[k].d, calls[k].s, calls[k].y.y, exp, b->name, x->contract,
                      x->mismatches, "", x->signature, e->repro, r->id, qualify};
    char err[512];
    if (a4w4_failing_save(&f, r->save_dir, e->saved, sizeof e->saved, err, sizeof err)) {
        e->saved[0] = 0;
        e->save_failed = 1;
        run_note(e->note, sizeof e->note, "; --save-failing: %s", err);
    }
    free(exp);
}

/* Free what seq_run set up. */
static void seq_free(seq_call *calls, size_t n, a4w4_case_data *d, a4w4_sample *s)
{
    for (size_t i = 0; i < n; i++) {
        a4w4_out_free(&calls[i].y);
        free(calls[i].e);
    }
    for (int i = 0; i < 3; i++) {
        if (d[i].a_fp4.data)
            a4w4_case_data_free(&d[i]);
        a4w4_sample_free(&s[i]);
    }
}

/* Generate the three cases' data (every output) and the calls' output buffers. 0 or -1. */
static int seq_setup(const a4w4_case *cs[3], a4w4_case_data *d, a4w4_sample *s, seq_call *calls,
                     size_t n)
{
    for (int i = 0; i < 3; i++) {
        if (!cs[i]->M)
            continue;
        if (a4w4_sample_make(cs[i]->M, cs[i]->N, cs[i]->K, cs[i]->seed, cs[i]->name, 1, &s[i]) ||
            a4w4_case_generate(cs[i], &s[i], &d[i]))
            return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (a4w4_out_alloc(&calls[i].y, calls[i].c->M, calls[i].c->N) ||
            !(calls[i].e = calloc(1, sizeof *calls[i].e)))
            return -1;
        a4w4_out_poison(&calls[i].y);
    }
    return 0;
}

/* The sequence on backend bi into e, its calls' data generated anew (a plugin that wrote into
 * its operands in-process leaves nothing to the next). A4W4_ST_OK or A4W4_ST_NOMEM. */
static a4w4_hstatus seq_backend(const a4w4_runner *r, size_t bi, const a4w4_case *cs[3],
                                seq_call *calls, size_t n, a4w4_entry_result *e)
{
    const a4w4_backend *b = &r->backends[bi];
    a4w4_case_data d[3];
    a4w4_sample s[3];
    a4w4_case_digest dg[3];
    a4w4_run_args args[A4W4_SEQ_CALLS];
    int rcs[A4W4_SEQ_CALLS];
    memset(d, 0, sizeof d);
    memset(s, 0, sizeof s);
    a4w4_hstatus st = seq_setup(cs, d, s, calls, n) ? A4W4_ST_NOMEM : A4W4_ST_OK;
    for (int i = 0; i < 3 && st == A4W4_ST_OK; i++)
        if (cs[i]->M)
            a4w4_case_digest_of(&d[i], &s[i], &dg[i]);
    for (size_t i = 0; i < n && st == A4W4_ST_OK; i++) {
        int k = calls[i].c == cs[0] ? 0 : calls[i].c == cs[1] ? 1 : 2;
        calls[i].d = &d[k], calls[i].s = &s[k], calls[i].digest = &dg[k];
        calls[i].why[0] = calls[i].breach[0] = '\0';
        args[i] = (a4w4_run_args){.c = calls[i].c, .d = &d[k], .s = &s[k], .y = calls[i].y.y,
                                  .why = calls[i].why, .whylen = sizeof calls[i].why,
                                  .id = r->id, .y_before = calls[i].y.before,
                                  .y_after = calls[i].y.after, .inputs = &dg[k],
                                  .breach = calls[i].breach,
                                  .breachlen = sizeof calls[i].breach};
    }
    if (st == A4W4_ST_OK) {
        run_enter(b);
        int rs = b->type->run_sequence(b->ctx, args, n, rcs);
        run_leave(b);
        for (size_t i = 0; i < n && st == A4W4_ST_OK; i++) {
            char out[256];
            calls[i].rc = rs == A4W4_OK ? rcs[i] : rs;
            if (a4w4_out_breached(&calls[i].y, out, sizeof out))
                run_note(calls[i].breach, sizeof calls[i].breach, "%s%s",
                         calls[i].breach[0] ? "; " : "", out);
            st = seq_judge(r, b, &calls[i]);
        }
    }
    if (st == A4W4_ST_OK) {
        fold(r, bi, cs[0], calls, n, e);
        seq_record(r, b, calls, n, e);
    }
    seq_free(calls, n, d, s);
    return st;
}

/* The sequence entry of a backend the runner no longer calls (it hung --max-timeouts times in
 * a row): failing, "not run", like its other remaining entries. */
static void seq_not_run(const a4w4_runner *r, size_t bi, const a4w4_case *a, a4w4_entry_result *e)
{
    const a4w4_backend *b = &r->backends[bi];
    run_case_identity(e, a, A4W4_ENTRY_OUTPUTS, b->name, b->contract);
    snprintf(e->name, sizeof e->name, "%.140s" A4W4_SEQ_SUFFIX, a->name);
    e->verdict = A4W4_VERDICT_FAIL;
    e->has_judged = 1;
    snprintf(e->aborted, sizeof e->aborted, "not run");
    snprintf(e->note, sizeof e->note, "not run: backend hung %d times in a row (the call "
             "sequence is not made)", r->max_timeouts ? r->max_timeouts : A4W4_MAX_TIMEOUTS_DEFAULT);
    e->time_ms = NAN; /* never ran: written null */
}

a4w4_hstatus run_statecheck(const a4w4_runner *r, const a4w4_case *c, a4w4_entry_list *out)
{
    const a4w4_statecheck *sc = r->seq;
    if (!sc || !sc->have || strcmp(c->name, sc->a.name))
        return A4W4_ST_OK;
    a4w4_case a2 = sc->a; /* A's shape, other operands */
    a2.seed = sc->a.seed ^ 0x5eedu;
    const a4w4_case *cs[3] = {&sc->a, &a2, &sc->b};
    a4w4_hstatus st = A4W4_ST_OK;
    for (size_t i = 0; i < r->nbackends && st == A4W4_ST_OK; i++) {
        if (!r->backends[i].type->run_sequence)
            continue;
        seq_call calls[A4W4_SEQ_CALLS];
        memset(calls, 0, sizeof calls);
        size_t n = seq_plan(sc, &a2, calls);
        a4w4_entry_result *e = a4w4_entry_list_add(out);
        if (e && r->backends[i].hung) /* the runner stopped calling it: so does the sequence */
            seq_not_run(r, i, &sc->a, e);
        else
            st = e ? seq_backend(r, i, cs, calls, n, e) : A4W4_ST_NOMEM;
    }
    return st;
}
