/* selftest.c — the mutation self-test's bookkeeping (selftest.h). */
#include "selftest.h"

#include <stdio.h>
#include <string.h>

#include "runner.h"

void a4w4_selftest_entry_reason(const a4w4_entry_result *e, char *buf, size_t len)
{
    const a4w4_mismatch *fm = e->nfirst ? &e->first[0] : NULL;
    size_t u = 0;
    buf[0] = 0;
    if (e->mismatches > 0 && fm) {
        int outputs = !strcmp(fm->tensor, "y");
        char got[16], exp[16];
        a4w4_mismatch_hex(fm->got, fm->elem_bytes, got);
        a4w4_mismatch_hex(fm->expected, fm->elem_bytes, exp);
        u += (size_t)snprintf(buf, len, "%zu of %zu %s differ, first%s%s at (%zu, %zu): "
                              "got %s expected %s",
                              e->mismatches, e->checked, outputs ? "outputs" : "bytes",
                              outputs ? "" : " in ", outputs ? "" : fm->tensor, fm->row, fm->col,
                              got, exp);
    }
    if (e->note[0] && u < len)
        snprintf(buf + u, len - u, "%s%.*s", u ? "; " : "", (int)(len - u), e->note);
    if (!buf[0])
        snprintf(buf, len, "verdict fail");
}

/* A correct backend's entry: counted, the first failure kept. */
static void tally_correct(a4w4_selftest_correct *cs, const a4w4_case *c,
                          const a4w4_entry_result *e, const char *why)
{
    if (e->verdict == A4W4_VERDICT_FAIL) {
        if (!cs->fail)
            snprintf(cs->first_fail, sizeof cs->first_fail, "%s: %s", c->name, why);
        cs->fail++;
    } else if (e->verdict == A4W4_VERDICT_PASS) {
        cs->pass++;
    } else {
        cs->na++;
    }
}

/* One entry of case c: the oracle's, a mutant's (the first failure kills it) or a correct
 * backend's verdict. */
static void tally_entry(a4w4_selftest *t, const a4w4_case *c, const a4w4_entry_result *e,
                        const char *why)
{
    const char *bn = e->backend;
    int failed = e->verdict == A4W4_VERDICT_FAIL;
    if (!strcmp(bn, "oracle")) {
        if (failed && !t->oracle_fail) {
            t->oracle_fail = 1;
            snprintf(t->oracle_note, sizeof t->oracle_note, "%s: %s", c->name, why);
        }
        return;
    }
    for (size_t i = 0; i < t->nm + t->nfr; i++) {
        a4w4_selftest_mutant *m = i < t->nm ? &t->ms[i] : &t->fr[i - t->nm];
        if (!m->killed && !strcmp(m->b.name, bn) && failed) {
            m->killed = 1;
            snprintf(m->kcase, sizeof m->kcase, "%s", c->name);
            snprintf(m->reason, sizeof m->reason, "%s", why);
            snprintf(m->signature, sizeof m->signature, "%s", e->signature);
            m->ntol = e->ntol;
            memcpy(m->tol, e->tol, sizeof m->tol);
        }
    }
    for (size_t i = 0; i < t->nc; i++)
        if (!strcmp(t->cs[i].b.name, bn))
            tally_correct(&t->cs[i], c, e, why);
}

a4w4_hstatus a4w4_selftest_run_case(a4w4_selftest *t, const a4w4_case *c,
                                    a4w4_selftest_entry_fn on_entry, void *user, char *err,
                                    size_t errlen)
{
    a4w4_backend run[A4W4_SELFTEST_MAX_CORRECT + A4W4_SELFTEST_MAX_MUTANTS + 8];
    size_t nr = 0;
    for (size_t i = 0; i < t->nc; i++)
        run[nr++] = t->cs[i].b;
    for (size_t i = 0; i < t->nm; i++)
        if (!t->ms[i].killed)
            run[nr++] = t->ms[i].b;
    for (size_t i = 0; i < t->nfr && nr < sizeof run / sizeof run[0]; i++)
        if (!t->fr[i].killed)
            run[nr++] = t->fr[i].b;
    /* the mutants are judged by the project's contract, E8M0 code 0 read as 2^-127 (contracts §1):
     * mut-e8m0-code0 reads 2^-126 and must die */
    a4w4_runner runner = {.backends = run, .nbackends = nr, .code0_reading = A4W4_CODE0_OCP};
    a4w4_entry_list el = {0};
    a4w4_hstatus st = a4w4_run_case(&runner, c, &el, err, errlen);
    for (size_t ei = 0; st == A4W4_ST_OK && ei < el.n; ei++) {
        const a4w4_entry_result *e = &el.items[ei];
        char why[640] = "";
        if (e->verdict == A4W4_VERDICT_FAIL)
            a4w4_selftest_entry_reason(e, why, sizeof why);
        if (on_entry)
            on_entry(user, c, e, why);
        tally_entry(t, c, e, why);
    }
    a4w4_entry_list_free(&el);
    return st;
}

const char *a4w4_selftest_criterion_cell(const a4w4_selftest_mutant *m, size_t j)
{
    if (!m->killed)
        return "-";
    if ((!m->ntol || j >= m->ntol) && m->inv_done && !strncmp(m->kcase, "invariance_", 11))
        return "invar";
    if (!m->ntol || j >= m->ntol)
        return "bytes";
    switch (m->tol[j].verdict) {
    case A4W4_CRIT_FAIL: return m->tol[j].fails_correct ? "alarm" : "caught";
    case A4W4_CRIT_PASS: return "missed";
    case A4W4_CRIT_MISTRUSTED: return m->tol[j].fails_correct ? "alarm" : "mistrust";
    default: return "n/a";
    }
}

size_t a4w4_selftest_killed(const a4w4_selftest *t)
{
    size_t k = 0;
    for (size_t i = 0; i < t->nm; i++)
        k += (size_t)t->ms[i].killed;
    return k;
}

int a4w4_selftest_correct_ok(const a4w4_selftest_correct *c)
{
    return !c->fail && c->pass > 0;
}

size_t a4w4_selftest_correct_passing(const a4w4_selftest *t)
{
    size_t g = 0;
    for (size_t i = 0; i < t->nc; i++)
        g += (size_t)a4w4_selftest_correct_ok(&t->cs[i]);
    return g;
}

const a4w4_selftest_mutant *a4w4_selftest_find(const a4w4_selftest *t, const char *name)
{
    for (size_t i = 0; i < t->nm + t->nfr; i++) {
        const a4w4_selftest_mutant *m = i < t->nm ? &t->ms[i] : &t->fr[i - t->nm];
        if (!strcmp(m->b.name, name))
            return m;
    }
    return NULL;
}

int a4w4_selftest_passed(const a4w4_selftest *t)
{
    for (size_t i = 0; i < t->nfr; i++)
        if (!t->fr[i].killed)
            return 0;
    return a4w4_selftest_killed(t) == t->nm && a4w4_selftest_correct_passing(t) == t->nc &&
           !t->oracle_fail;
}

int a4w4_selftest_judge_mutant(const a4w4_devjudge *dev, a4w4_backend *b,
                               const a4w4_case *cases, size_t ncases, char *why, size_t whylen)
{
    char err[1024];
    a4w4_runner r = {.backends = b, .nbackends = 1, .dev = dev};
    int killed = 0;
    dev->set_fault(dev->self, 1);
    for (size_t k = 0; k < ncases && !killed; k++) {
        a4w4_entry_list el = {0};
        if (a4w4_run_case(&r, &cases[k], &el, err, sizeof err) == A4W4_ST_OK && el.n &&
            el.items[0].verdict == A4W4_VERDICT_FAIL && strstr(el.items[0].note, "DISAGREES")) {
            killed = 1;
            snprintf(why, whylen, "%s: %s", cases[k].name, el.items[0].note);
        }
        a4w4_entry_list_free(&el);
    }
    dev->set_fault(dev->self, 0);
    if (!killed)
        snprintf(why, whylen, "no case's re-check by the C oracles failed it");
    return killed;
}

/* Mutant m, just killed by the batch-invariance stage at (M, N, K): the generated case of that
 * shape (normal regime, round_up) through the runner against m's declared contract, so the
 * criteria table has the peers' verdicts on the outputs a tolerance test at that batch size
 * would see. ntol stays 0 when that entry does not fail (the fault shows only between calls). */
static void inv_kill_criteria(a4w4_selftest_mutant *m, size_t M, size_t N, size_t K)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "invariance_m%zu_n%zu_k%zu", M, N, K);
    c.M = M, c.N = N, c.K = K, c.seed = 0x1a7u;
    c.regime = A4W4_REGIME_NORMAL;
    c.mode = A4W4_ROUND_UP;
    snprintf(c.regime_text, sizeof c.regime_text, "normal");
    a4w4_runner r = {.backends = &m->b, .nbackends = 1, .code0_reading = A4W4_CODE0_OCP};
    a4w4_entry_list el = {0};
    char err[256];
    if (a4w4_run_case(&r, &c, &el, err, sizeof err) == A4W4_ST_OK)
        for (size_t i = 0; i < el.n; i++)
            if (!strcmp(el.items[i].backend, m->b.name) &&
                el.items[i].verdict == A4W4_VERDICT_FAIL && el.items[i].ntol) {
                m->ntol = el.items[i].ntol;
                memcpy(m->tol, el.items[i].tol, sizeof m->tol);
            }
    a4w4_entry_list_free(&el);
}

/* Measure b into *m; 1 when it disagrees with its prediction (why then says so). */
static int inv_disagrees(a4w4_backend *b, size_t M, size_t N, size_t K, a4w4_inv_measured *m,
                         char *why, size_t whylen, a4w4_hstatus *st, char *err, size_t errlen)
{
    int rc = a4w4_inv_measure(b, M, N, K, 0x1a7u, m, err, errlen);
    if (rc != A4W4_OK) {
        *st = rc == A4W4_ENOMEM ? A4W4_ST_NOMEM : A4W4_ST_BADINPUT;
        return 0;
    }
    char text[600];
    a4w4_inv_measured_text(m, text, sizeof text);
    snprintf(why, whylen, "batch invariance: %s", text);
    return !m->agrees;
}

a4w4_hstatus a4w4_selftest_invariance(a4w4_selftest *t, size_t M, size_t N, size_t K,
                                      char *err, size_t errlen)
{
    a4w4_hstatus st = A4W4_ST_OK;
    char why[640], kcase[96];
    snprintf(kcase, sizeof kcase, "invariance_m%zu_n%zu_k%zu", M, N, K);
    for (size_t i = 0; st == A4W4_ST_OK && i < t->nc; i++) {
        a4w4_selftest_correct *c = &t->cs[i];
        if (!c->b.type->run || c->b.type->gpu)
            continue;
        int bad = inv_disagrees(&c->b, M, N, K, &c->inv, why, sizeof why, &st, err, errlen);
        c->inv_done = st == A4W4_ST_OK;
        if (bad && !c->fail++)
            snprintf(c->first_fail, sizeof c->first_fail, "%s: %s", kcase, why);
    }
    for (size_t i = 0; st == A4W4_ST_OK && i < t->nm; i++) {
        a4w4_selftest_mutant *m = &t->ms[i];
        if (m->killed || !m->b.type->run || m->b.type->gpu)
            continue;
        int bad = inv_disagrees(&m->b, M, N, K, &m->inv, why, sizeof why, &st, err, errlen);
        m->inv_done = st == A4W4_ST_OK;
        if (bad) {
            m->killed = 1;
            snprintf(m->kcase, sizeof m->kcase, "%s", kcase);
            snprintf(m->reason, sizeof m->reason, "%s", why);
            inv_kill_criteria(m, M, N, K);
        }
    }
    return st;
}
