/* invariance_measure.c — batch invariance measured on a backend (invariance_measure.h). */
#include "invariance_measure.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "check.h"
#include "errmsg.h"

const char *a4w4_meas_verdict_name(a4w4_meas_verdict v)
{
    static const char *const names[] = {"invariant", "variant", "nondeterministic", "n/a"};
    return (unsigned)v < 4 ? names[v] : "?";
}

/* One call of b on d (every output) into y [d->M, d->N], as case "<c's name>_<call>"
 * (a4w4_inv_call_names). A4W4_OK; A4W4_EUNSUPPORTED or A4W4_RUN_SKIP with why (no result
 * here); else an error with err. */
static int call(a4w4_backend *b, const a4w4_case *c0, const char *name, const a4w4_case_data *d,
                uint16_t *y, const a4w4_run_identity *id, char *why, size_t whylen, char *err,
                size_t errlen)
{
    a4w4_case cc = *c0, *c = &cc;
    if (snprintf(cc.name, sizeof cc.name, "%s_%s", c0->name, name) >= (int)sizeof cc.name)
        return a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL, "%s_%s: case name too long",
                           c0->name, name);
    a4w4_out_buf out;
    if (a4w4_out_alloc(&out, d->M, d->N))
        return a4w4_errmsg(err, errlen, A4W4_ENOMEM, NULL, "out of memory for the outputs");
    a4w4_out_poison(&out);
    a4w4_sample full = {.full = 1, .nrows = d->M, .ncols = d->N};
    char breach[256] = "";
    why[0] = 0;
    a4w4_run_args args = {.c = c, .d = d, .s = &full, .y = out.y, .why = why,
                          .whylen = whylen, .id = id, .y_before = out.before,
                          .y_after = out.after};
    int rc = b->type->run(b->ctx, &args);
    size_t n = d->M * d->N;
    if (a4w4_out_breached(&out, breach, sizeof breach))
        rc = a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL, "backend %s %s", b->name, breach);
    else if (rc != A4W4_OK && rc != A4W4_EUNSUPPORTED && rc != A4W4_RUN_SKIP)
        a4w4_errmsg(err, errlen, rc, NULL, "backend %s failed on %s (M %zu N %zu K %zu)%s%s",
                    b->name, cc.name, d->M, d->N, d->K, why[0] ? ": " : "", why);
    for (size_t k = 0; rc == A4W4_OK && k < n; k++)
        if (out.y[k] == A4W4_POISON_BF16)
            rc = a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL,
                             "backend %s left output (%zu, %zu) unwritten at M %zu", b->name,
                             k / d->N, k % d->N, d->M);
    if (rc == A4W4_OK)
        memcpy(y, out.y, n * sizeof *y);
    a4w4_out_free(&out);
    return rc;
}

/* Compare got[0..N) with want[0..N) (one row): counts into m. Returns the differences. */
static size_t compare_row(const uint16_t *got, const uint16_t *want, size_t N, size_t row,
                          a4w4_inv_measured *m)
{
    size_t d = 0;
    for (size_t j = 0; j < N; j++)
        if (got[j] != want[j]) {
            unsigned u = a4w4_bf16_ulp_distance(got[j], want[j]);
            d++;
            if (u > m->max_ulp)
                m->max_ulp = u;
        }
    m->outputs += N;
    m->diffs += d;
    if (d) {
        m->rows++;
        if (m->first_row < 0 || (size_t)m->first_row > row)
            m->first_row = (int)row;
    }
    return d;
}

/* Case data of rows order[0..rows) of d's A (and all of W). */
static int rows_of(const a4w4_case_data *d, const size_t *order, size_t rows,
                   a4w4_case_data *out)
{
    size_t ab = d->K / 2, sb = d->K / 32;
    uint8_t *a = calloc(rows, ab), *s = calloc(rows, sb);
    int rc = a && s ? A4W4_OK : A4W4_ENOMEM;
    for (size_t i = 0; rc == A4W4_OK && i < rows; i++) {
        memcpy(a + i * ab, d->a_fp4.data + order[i] * ab, ab);
        memcpy(s + i * sb, d->a_scale.data + order[i] * sb, sb);
    }
    if (rc == A4W4_OK && a4w4_case_data_load(a, s, d->w_fp4.data, d->w_scale.data, rows, d->N,
                                             d->K, out))
        rc = A4W4_ENOMEM;
    free(a);
    free(s);
    return rc;
}

/* Run b on rows order[0..rows) of d and compare each result row i with batch row order[i].
 * Returns as call(); *na set when the backend has no result (why). */
static int subset(a4w4_backend *b, const a4w4_case *c0, const char *name,
                  const a4w4_case_data *d, const size_t *order, size_t rows,
                  const uint16_t *batch, const a4w4_run_identity *id, a4w4_inv_measured *m,
                  char *err, size_t errlen)
{
    a4w4_case_data sd;
    memset(&sd, 0, sizeof sd);
    uint16_t *y = malloc(rows * d->N * sizeof *y);
    if (!y || rows_of(d, order, rows, &sd)) {
        free(y);
        a4w4_case_data_free(&sd);
        return a4w4_errmsg(err, errlen, A4W4_ENOMEM, NULL, "out of memory");
    }
    a4w4_case c = *c0;
    c.M = rows;
    int rc = call(b, &c, name, &sd, y, id, m->why, sizeof m->why, err, errlen);
    for (size_t i = 0; rc == A4W4_OK && i < rows; i++)
        compare_row(y + i * d->N, batch + order[i] * d->N, d->N, order[i], m);
    free(y);
    a4w4_case_data_free(&sd);
    return rc;
}

/* The batch twice (the repeat), each position alone, the batch reversed: the calls named
 * as a4w4_inv_call_names says. */
static int measure_calls(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                         const a4w4_run_identity *id, a4w4_inv_measured *m, char *err,
                         size_t errlen)
{
    size_t n = d->M * d->N;
    uint16_t *y0 = malloc(n * sizeof *y0), *y1 = malloc(n * sizeof *y1);
    size_t *rev = malloc(d->M * sizeof *rev);
    char row[32];
    int rc = y0 && y1 && rev ? A4W4_OK : a4w4_errmsg(err, errlen, A4W4_ENOMEM, NULL,
                                                     "out of memory");
    if (rc == A4W4_OK)
        rc = call(b, c, "batch", d, y0, id, m->why, sizeof m->why, err, errlen);
    if (rc == A4W4_OK)
        rc = call(b, c, "repeat", d, y1, id, m->why, sizeof m->why, err, errlen);
    for (size_t k = 0; rc == A4W4_OK && k < n; k++)
        m->repeat_diffs += y0[k] != y1[k];
    for (size_t i = 0; rc == A4W4_OK && i < m->npositions; i++) {
        snprintf(row, sizeof row, "row%zu", m->positions[i]);
        rc = subset(b, c, row, d, &m->positions[i], 1, y0, id, m, err, errlen);
    }
    for (size_t i = 0; rc == A4W4_OK && i < d->M; i++)
        rev[i] = d->M - 1 - i;
    if (rc == A4W4_OK && d->M > 1)
        rc = subset(b, c, "reversed", d, rev, d->M, y0, id, m, err, errlen);
    free(y0);
    free(y1);
    free(rev);
    return rc;
}

/* The measurement's operands: the normal regime's (contracts §2), then blocks h..2h-1 of K
 * (h = (K/32 - 1) / 2) made the mirror of blocks 0..h-1 (W copied, A negated: fp4x2 XOR
 * 0x88 flips both signs, contracts §1) so their exact sum cancels, and the blocks past 2h
 * scaled 2^-20 in A. An output is then that small rest plus whatever the order's roundings
 * of the large partial sums leave: any change of accumulation order shows in its bf16 bits,
 * where on plain random data it would change one output in thousands. */
static int cancelling_case(const a4w4_case *c, a4w4_case_data *d)
{
    a4w4_sample full = {.full = 1, .nrows = c->M, .ncols = c->N};
    a4w4_case_data g;
    memset(&g, 0, sizeof g);
    if (a4w4_case_generate(c, &full, &g)) {
        a4w4_case_data_free(&g);
        return A4W4_ENOMEM;
    }
    size_t nb = c->K / 32, h = (nb - 1) / 2;
    for (size_t r = 0; r < c->M; r++) {
        uint8_t *a = g.a_fp4.data + r * (c->K / 2), *sa = g.a_scale.data + r * nb;
        for (size_t j = 0; j < h; j++) {
            for (size_t i = 0; i < 16; i++)
                a[(h + j) * 16 + i] = a[j * 16 + i] ^ 0x88u;
            sa[h + j] = sa[j];
        }
        for (size_t j = 2 * h; j < nb; j++)
            sa[j] = sa[j] > 21 && sa[j] != 0xFF ? (uint8_t)(sa[j] - 20) : sa[j];
    }
    for (size_t n = 0; n < c->N; n++) {
        uint8_t *w = g.w_fp4.data + n * (c->K / 2), *sw = g.w_scale.data + n * nb;
        memcpy(w + h * 16, w, h * 16);
        memcpy(sw + h, sw, h);
    }
    int rc = a4w4_case_data_load(g.a_fp4.data, g.a_scale.data, g.w_fp4.data, g.w_scale.data,
                                 c->M, c->N, c->K, d) ? A4W4_ENOMEM : A4W4_OK;
    a4w4_case_data_free(&g);
    return rc;
}

/* The rows computed alone at M: 0, M/2, M-1, each once. Returns how many. */
static size_t positions_of(size_t M, size_t pos[A4W4_INV_MAX_ALONE])
{
    size_t cand[3] = {0, M / 2, M - 1}, n = 0;
    for (size_t i = 0; i < 3; i++)
        if (!n || pos[n - 1] != cand[i])
            pos[n++] = cand[i];
    return n;
}

size_t a4w4_inv_call_names(size_t M, size_t N, size_t K,
                           char names[A4W4_INV_MAX_CALLS][A4W4_INV_CALL_NAME_MAX])
{
    size_t pos[A4W4_INV_MAX_ALONE], np = positions_of(M, pos), n = 0;
    char base[64];
    snprintf(base, sizeof base, "invariance_m%zu_n%zu_k%zu", M, N, K);
    snprintf(names[n++], A4W4_INV_CALL_NAME_MAX, "%s_batch", base);
    snprintf(names[n++], A4W4_INV_CALL_NAME_MAX, "%s_repeat", base);
    for (size_t i = 0; i < np; i++)
        snprintf(names[n++], A4W4_INV_CALL_NAME_MAX, "%s_row%zu", base, pos[i]);
    if (M > 1)
        snprintf(names[n++], A4W4_INV_CALL_NAME_MAX, "%s_reversed", base);
    return n;
}

int a4w4_inv_measure(a4w4_backend *b, size_t M, size_t N, size_t K, uint64_t seed,
                     a4w4_inv_measured *out, char *err, size_t errlen)
{
    return a4w4_inv_measure_id(b, NULL, M, N, K, seed, out, err, errlen);
}

int a4w4_inv_measure_id(a4w4_backend *b, const a4w4_run_identity *id, size_t M, size_t N,
                        size_t K, uint64_t seed, a4w4_inv_measured *out, char *err,
                        size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->M = M, out->N = N, out->K = K;
    out->first_row = -1;
    if (M < 1 || N < 1 || K < 32 || K % 32)
        return a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL,
                           "M %zu N %zu K %zu: M, N >= 1 and K a positive multiple of 32", M, N,
                           K);
    out->npositions = positions_of(M, out->positions);
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "invariance_m%zu_n%zu_k%zu", M, N, K);
    c.M = M, c.N = N, c.K = K, c.seed = seed;
    c.regime = A4W4_REGIME_NORMAL;
    c.mode = A4W4_ROUND_UP;
    snprintf(c.regime_text, sizeof c.regime_text, "normal");
    a4w4_case_data d;
    memset(&d, 0, sizeof d);
    if (cancelling_case(&c, &d))
        return a4w4_errmsg(err, errlen, A4W4_ENOMEM, NULL, "out of memory for %s", c.name);
    int rc = measure_calls(b, &c, &d, id, out, err, errlen);
    a4w4_case_data_free(&d);
    if (rc == A4W4_EUNSUPPORTED || rc == A4W4_RUN_SKIP) {
        out->verdict = A4W4_MEAS_NA;
        rc = A4W4_OK;
    } else if (rc == A4W4_OK) {
        out->verdict = out->repeat_diffs ? A4W4_MEAS_NONDET
                       : out->diffs      ? A4W4_MEAS_VARIANT
                                         : A4W4_MEAS_INVARIANT;
    }
    out->prediction = a4w4_inv_declared(b, M, N, K);
    out->predicted = out->prediction != A4W4_INV_UNKNOWN;
    out->agrees = a4w4_inv_agrees(out->prediction, out->verdict);
    return rc;
}

/* b's contract at (M, N, K): its set's rule, or its text parsed (a backend built by hand). */
static int declared_at(const a4w4_backend *b, size_t M, size_t N, size_t K, a4w4_contract *c)
{
    const a4w4_contract *r = a4w4_contract_set_find(&b->contracts, M, N, K);
    if (r) {
        *c = *r;
        return 1;
    }
    return !b->contracts.n && a4w4_contract_parse(b->contract, c, NULL, 0) == A4W4_OK;
}

a4w4_inv_verdict a4w4_inv_declared(const a4w4_backend *b, size_t M, size_t N, size_t K)
{
    a4w4_inv_path p1, p;
    memset(&p1, 0, sizeof p1);
    memset(&p, 0, sizeof p);
    p1.kind = p.kind = A4W4_PATH_SWITCH; /* a declared contract, not a table kernel */
    p1.contract.declared = declared_at(b, 1, N, K, &p1.contract.c);
    p.contract.declared = declared_at(b, M, N, K, &p.contract.c);
    return a4w4_inv_compare(&p1, &p);
}

int a4w4_inv_agrees(a4w4_inv_verdict p, a4w4_meas_verdict m)
{
    if (m == A4W4_MEAS_NA || p == A4W4_INV_NONDET || p == A4W4_INV_UNKNOWN)
        return 1;
    return p == A4W4_INV_INVARIANT ? m == A4W4_MEAS_INVARIANT : m == A4W4_MEAS_VARIANT;
}

void a4w4_inv_measured_text(const a4w4_inv_measured *m, char *buf, size_t len)
{
    int n;
    if (m->verdict == A4W4_MEAS_VARIANT && m->max_ulp == UINT_MAX)
        n = snprintf(buf, len, "variant at M %zu (%zu rows, %zu of %zu outputs, a NaN against "
                     "a number)", m->M, m->rows, m->diffs, m->outputs);
    else if (m->verdict == A4W4_MEAS_VARIANT)
        n = snprintf(buf, len, "variant at M %zu (%zu rows, %zu of %zu outputs, max %u ULP)",
                     m->M, m->rows, m->diffs, m->outputs, m->max_ulp);
    else if (m->verdict == A4W4_MEAS_NONDET)
        n = snprintf(buf, len, "nondeterministic at M %zu (a repeat changed %zu outputs)", m->M,
                     m->repeat_diffs);
    else if (m->verdict == A4W4_MEAS_NA)
        n = snprintf(buf, len, "n/a at M %zu: %s", m->M, m->why);
    else
        n = snprintf(buf, len, "invariant at M %zu (%zu outputs compared)", m->M, m->outputs);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; declared contract predicts %s%s",
                 a4w4_inv_verdict_name(m->prediction), m->agrees ? "" : ": DISAGREES");
}

/* ---- the calls as operand bundles (for a kernel outside the process) ------------------- */

typedef struct {
    const a4w4_export_opts *o;
    const char *dir;
    double bytes;
} recorder;

/* A backend that writes each call's operands as an operand bundle named as the call, and
 * answers zeros: the measurement walks every call, its verdict is discarded. */
static int record_run(void *ctx, const a4w4_run_args *a)
{
    recorder *r = ctx;
    double bytes = 0;
    if (a4w4_export_case_data(a->c->name, a->c, a->d, r->o, NULL, r->dir, &bytes, a->why,
                              a->whylen))
        return A4W4_EINVAL;
    r->bytes += bytes;
    memset(a->y, 0, a->d->M * a->d->N * sizeof *a->y);
    return A4W4_OK;
}

int a4w4_inv_export(size_t M, size_t N, size_t K, uint64_t seed, const a4w4_export_opts *o,
                    const char *dir, double *bytes, char *err, size_t errlen)
{
    static const a4w4_backend_type rec_type = {.name = "export", .contract = "exact",
                                               .full_outputs = 1, .run = record_run};
    recorder r = {o, dir, 0};
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = &rec_type;
    b.ctx = &r;
    snprintf(b.name, sizeof b.name, "export %s", dir);
    a4w4_inv_measured m;
    int rc = a4w4_inv_measure(&b, M, N, K, seed, &m, err, errlen);
    if (rc == A4W4_OK && m.verdict == A4W4_MEAS_NA)
        rc = a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL, "%s", m.why);
    if (bytes)
        *bytes += r.bytes;
    return rc;
}

void a4w4_inv_calls_hash(const char (*names)[A4W4_INV_CALL_NAME_MAX], size_t n, uint64_t seed,
                         char out[17])
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < n; i++)
        for (const char *p = names[i]; ; p++) {
            h = (h ^ (uint8_t)*p) * 0x100000001B3ull; /* the NUL too: names stay apart */
            if (!*p)
                break;
        }
    for (int i = 0; i < 8; i++)
        h = (h ^ (uint8_t)(seed >> (8 * i))) * 0x100000001B3ull;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}
