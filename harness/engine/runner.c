/* runner.c — see runner.h. */
#include "runner.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "annotate.h"
#include "fsutil.h"
#include "check.h"
#include "gen.h"
#include "entry.h"
#include "results.h"
#include "verify_bundle.h"

#define MAX_RECORDED 5

/* GPU backends share one device and the HIP backends' per-case device cache: callers that
 * run cases on several threads (hazards --jobs) go through one GPU call at a time. CPU
 * backends and the oracles stay parallel. */
static pthread_mutex_t gpu_mu = PTHREAD_MUTEX_INITIALIZER;

static int call_run(const a4w4_backend *b, const a4w4_run_args *a)
{
    if (!b->type->gpu)
        return b->type->run(b->ctx, a);
    pthread_mutex_lock(&gpu_mu);
    int rc = b->type->run(b->ctx, a);
    pthread_mutex_unlock(&gpu_mu);
    return rc;
}

/* Oracle values over the sample. */
typedef struct {
    size_t count;
    uint16_t *ordered1, *exact;
    float *exact_f32;
    double *sum_abs; /* sum |terms| per output (for bounded backends), NULL until needed */
    size_t proven;
    struct {
        unsigned S;
        uint16_t *y;
    } split[8];
    size_t nsplit;
} oracles;

static a4w4_dot_operands op_at(const a4w4_case_data *d, size_t m, size_t n)
{
    size_t nb = d->K / 32;
    a4w4_dot_operands op = {d->a_fp4.data + m * (d->K / 2), d->a_scale.data + m * nb,
                            d->w_fp4.data + n * (d->K / 2), d->w_scale.data + n * nb, d->K};
    return op;
}

static size_t row_at(const a4w4_sample *s, size_t i) { return s->full ? i : s->rows[i]; }
static size_t col_at(const a4w4_sample *s, size_t j) { return s->full ? j : s->cols[j]; }

static int oracles_compute(const a4w4_case_data *d, const a4w4_sample *s, oracles *o)
{
    memset(o, 0, sizeof *o);
    o->count = s->nrows * s->ncols;
    o->ordered1 = malloc(o->count * 2);
    o->exact = malloc(o->count * 2);
    o->exact_f32 = malloc(o->count * 4);
    if (!o->ordered1 || !o->exact || !o->exact_f32)
        return -1;
    for (size_t i = 0; i < s->nrows; i++)
        for (size_t j = 0; j < s->ncols; j++) {
            a4w4_dot_operands op = op_at(d, row_at(s, i), col_at(s, j));
            size_t k = i * s->ncols + j;
            o->ordered1[k] = a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 1));
            a4w4_dot_exact(&op, &o->exact[k], &o->exact_f32[k]);
            o->proven += (size_t)a4w4_exact_regime(&op);
        }
    return 0;
}

/* ordered(S) over the sample, computed once per S. */
static const uint16_t *oracles_ordered(const a4w4_case_data *d, const a4w4_sample *s,
                                       oracles *o, unsigned S)
{
    if (S <= 1)
        return o->ordered1;
    for (size_t i = 0; i < o->nsplit; i++)
        if (o->split[i].S == S)
            return o->split[i].y;
    if (o->nsplit == 8)
        return NULL;
    uint16_t *y = malloc(o->count * 2);
    if (!y)
        return NULL;
    for (size_t i = 0; i < s->nrows; i++)
        for (size_t j = 0; j < s->ncols; j++) {
            a4w4_dot_operands op = op_at(d, row_at(s, i), col_at(s, j));
            y[i * s->ncols + j] = a4w4_f32_to_bf16(a4w4_dot_ordered(&op, S));
        }
    o->split[o->nsplit].S = S;
    o->split[o->nsplit++].y = y;
    return y;
}

/* sum over blocks of |isum| * 2^(sa+sb-256): the T of the bounded contract. */
static const double *oracles_sum_abs(const a4w4_case_data *d, const a4w4_sample *s, oracles *o)
{
    if (o->sum_abs)
        return o->sum_abs;
    o->sum_abs = malloc(o->count * sizeof *o->sum_abs);
    if (!o->sum_abs)
        return NULL;
    size_t nb = d->K / 32;
    for (size_t i = 0; i < s->nrows; i++)
        for (size_t j = 0; j < s->ncols; j++) {
            a4w4_dot_operands op = op_at(d, row_at(s, i), col_at(s, j));
            double t = 0;
            for (size_t b = 0; b < nb; b++) {
                double e = ldexp(1.0, (int)op.a_scale[b] + (int)op.w_scale[b] - 256);
                for (size_t k = 0; k < 32; k++)
                    t += fabs((double)a4w4_e2m1_to_int2x(a4w4_fp4_get(op.a_fp4, b * 32 + k)) *
                              a4w4_e2m1_to_int2x(a4w4_fp4_get(op.w_fp4, b * 32 + k))) * e;
            }
            o->sum_abs[i * s->ncols + j] = t;
        }
    return o->sum_abs;
}

static void oracles_free(oracles *o)
{
    free(o->ordered1);
    free(o->exact);
    free(o->exact_f32);
    free(o->sum_abs);
    for (size_t i = 0; i < o->nsplit; i++)
        free(o->split[i].y);
    memset(o, 0, sizeof *o);
}

/* Bounded contract (AITER's bf16-atomic split-K, contracts §4.1/§5). With S splits, each split
 * sums its blocks in fp32 (each block value rounded once: relative error <= u32 = 2^-24;
 * recursive fp32 summation of at most nb values: <= (nb-1) u32 times the sum of their
 * magnitudes), its partial is rounded to bf16 (<= u16 = 2^-8 relative) and added to a bf16
 * output that starts at zero, each of the S atomic adds rounding once (<= u16 times the
 * magnitude of the running sum, itself <= T (1 + small)). With T = sum |terms|:
 *   |got - exact| <= (2 nb u32 + (2 S + 1) u16) T (1 + 2^-6) + (S + 2) 2^-133
 * (the last term covers underflow: half the bf16 subnormal spacing 2^-133 per rounding).
 * The runner compares against the exact fp32 value, so it adds 2^-24 |exact| as well. */
double a4w4_bounded_tolerance(double T, size_t nb, unsigned S)
{
    const double u32 = 0x1p-24, u16 = 0x1p-8;
    return (2.0 * (double)nb * u32 + (2.0 * S + 1.0) * u16) * T * (1.0 + 0x1p-6) +
           (S + 2.0) * 0x1p-133;
}

static int bf16_nan(uint16_t h) { return (h & 0x7FFF) > 0x7F80; }

typedef struct {
    size_t checked, mismatches, unwritten;
    unsigned max_ulp;
    size_t nrec;
    struct {
        size_t row, col;
        uint16_t got, expected;
    } rec[MAX_RECORDED];
} comparison;

static void record(comparison *c, const a4w4_sample *s, size_t k, uint16_t got, uint16_t exp)
{
    unsigned d = a4w4_bf16_ulp_distance(got, exp);
    if (d > c->max_ulp)
        c->max_ulp = d;
    if (c->nrec < MAX_RECORDED) {
        c->rec[c->nrec].row = row_at(s, k / s->ncols);
        c->rec[c->nrec].col = col_at(s, k % s->ncols);
        c->rec[c->nrec].got = got;
        c->rec[c->nrec].expected = exp;
        c->nrec++;
    }
    c->mismatches++;
}

/* Bit-exact comparison (NaN == NaN; the poison counts as unwritten, not as NaN). */
static void compare_exact(comparison *c, const a4w4_sample *s, const uint16_t *got,
                          const uint16_t *exp, size_t n)
{
    memset(c, 0, sizeof *c);
    for (size_t k = 0; k < n; k++) {
        c->checked++;
        if (got[k] == A4W4_POISON_BF16) {
            c->unwritten++;
            record(c, s, k, got[k], exp[k]);
            continue;
        }
        if (got[k] == exp[k] || (bf16_nan(got[k]) && bf16_nan(exp[k])))
            continue;
        record(c, s, k, got[k], exp[k]);
    }
}

static void compare_bounded(comparison *c, const a4w4_sample *s, const uint16_t *got,
                            const uint16_t *exact, const float *exact_f32, const double *T,
                            size_t nb, unsigned S, size_t n)
{
    memset(c, 0, sizeof *c);
    for (size_t k = 0; k < n; k++) {
        c->checked++;
        if (got[k] == A4W4_POISON_BF16) {
            c->unwritten++;
            record(c, s, k, got[k], exact[k]);
            continue;
        }
        int gn = bf16_nan(got[k]), en = isnan(exact_f32[k]);
        if (gn || en) {
            if (!(gn && en))
                record(c, s, k, got[k], exact[k]);
            continue;
        }
        double g = a4w4_bf16_to_f32(got[k]), e = exact_f32[k];
        double tol = a4w4_bounded_tolerance(T[k], nb, S) + 0x1p-24 * fabs(e);
        if (isinf(e) || isinf(g) ? g != e : fabs(g - e) > tol)
            record(c, s, k, got[k], exact[k]);
        else if (got[k] != exact[k]) { /* within the bound: report the distance only */
            unsigned d = a4w4_bf16_ulp_distance(got[k], exact[k]);
            if (d > c->max_ulp)
                c->max_ulp = d;
        }
    }
}

static const char *verdict_of(int fail, int na)
{
    return na ? "n/a" : fail ? "fail" : "pass";
}

static cJSON *new_entry(const a4w4_case *c, const char *backend, const char *contract)
{
    cJSON *e = a4w4_entry_new(c->name, c->M, c->N, c->K, c->regime_text,
                              (unsigned long long)c->seed, backend, contract);
    cJSON_AddStringToObject(e, "tags", c->tags);
    return e;
}

static void put_comparison(cJSON *e, const comparison *cmp, const a4w4_sample *s, double ms,
                           size_t proven, const char *verdict)
{
    cJSON_AddNumberToObject(e, "checked_outputs", (double)cmp->checked);
    cJSON_AddBoolToObject(e, "sampled", !s->full);
    cJSON_AddStringToObject(e, "verdict", verdict);
    cJSON_AddNumberToObject(e, "mismatches", (double)cmp->mismatches);
    cJSON_AddNumberToObject(e, "unwritten", (double)cmp->unwritten);
    cJSON_AddNumberToObject(e, "max_ulp", cmp->max_ulp == (unsigned)-1 ? -1.0 : (double)cmp->max_ulp);
    cJSON *fm = cJSON_AddArrayToObject(e, "first_mismatches");
    for (size_t i = 0; i < cmp->nrec; i++) {
        cJSON *m = cJSON_CreateObject();
        char h[16];
        cJSON_AddStringToObject(m, "tensor", "y");
        cJSON_AddNumberToObject(m, "row", (double)cmp->rec[i].row);
        cJSON_AddNumberToObject(m, "col", (double)cmp->rec[i].col);
        snprintf(h, sizeof h, "0x%04x", cmp->rec[i].got);
        cJSON_AddStringToObject(m, "got", h);
        snprintf(h, sizeof h, "0x%04x", cmp->rec[i].expected);
        cJSON_AddStringToObject(m, "expected", h);
        cJSON_AddItemToArray(fm, m);
    }
    cJSON_AddNumberToObject(e, "time_ms", ms);
    cJSON_AddNumberToObject(e, "exact_regime_outputs", (double)proven);
}

/* The oracle's own entry: ordered(1) == exact wherever the prover holds for the whole
 * sample, and in the special regime NaN exactly in the outputs reading a NaN block. */
static int oracle_entry(const a4w4_case *c, const a4w4_case_data *d, const a4w4_sample *s,
                        const oracles *o, cJSON *entries)
{
    comparison cmp;
    int na = o->proven != o->count;
    char note[256] = "";
    if (!na)
        compare_exact(&cmp, s, o->ordered1, o->exact, o->count);
    else {
        memset(&cmp, 0, sizeof cmp);
        cmp.checked = o->count;
        snprintf(note, sizeof note, "%zu of %zu outputs outside the exact regime: exact is a "
                 "reference there, not a verdict", o->count - o->proven, o->count);
    }
    int fail = cmp.mismatches != 0;
    if (c->regime == A4W4_REGIME_SPECIAL) {
        size_t wrong = 0, nans = 0;
        for (size_t i = 0; i < s->nrows; i++)
            for (size_t j = 0; j < s->ncols; j++) {
                int dep = row_at(s, i) == d->nan_a_row || col_at(s, j) == d->nan_w_row;
                int isnan_ = bf16_nan(o->ordered1[i * s->ncols + j]) &&
                             bf16_nan(o->exact[i * s->ncols + j]);
                nans += (size_t)isnan_;
                wrong += (size_t)(dep != isnan_);
            }
        snprintf(note + strlen(note), sizeof note - strlen(note),
                 "%sspecial blocks: %zu NaN outputs, %zu outside the dependent set", note[0] ? "; " : "",
                 nans, wrong);
        fail |= wrong != 0;
        na = 0;
    }
    cJSON *e = new_entry(c, "oracle", "ordered(1) == exact");
    put_comparison(e, &cmp, s, 0, o->proven, verdict_of(fail, na && !fail));
    if (note[0])
        cJSON_AddStringToObject(e, "note", note);
    cJSON_AddItemToArray(entries, e);
    return fail;
}

/* One pad-dependence variant: the fills under test. */
typedef struct {
    uint8_t row_fill, col_fill, guard;
    const char *what;
} variant;

static int run_backend(a4w4_backend *b, const a4w4_case *c,
                       a4w4_case_data *d, const a4w4_sample *s, oracles *o, cJSON *entries)
{
    size_t n = o->count;
    uint16_t *y = malloc(n * 2), *y2 = malloc(n * 2);
    char why[512] = "";
    cJSON *e = new_entry(c, b->name, b->contract);
    int fail = 0, na = 0;
    comparison cmp;
    memset(&cmp, 0, sizeof cmp);
    char note[768] = "";
    if (!y || !y2) {
        snprintf(note, sizeof note, "out of memory for %zu outputs", n);
        fail = 1;
        goto done;
    }
    for (size_t k = 0; k < n; k++)
        y[k] = A4W4_POISON_BF16;
    a4w4_run_args args = {c, d, s, y, why, sizeof why};
    double t0 = (a4w4_now() * 1e3);
    int rc = call_run(b, &args);
    double ms = (a4w4_now() * 1e3) - t0;
    cJSON_AddNumberToObject(e, "run_ms", ms);
    if (rc == A4W4_OK) { /* FNV-1a 64 of the checked outputs, for `compare` (changed bits) */
        unsigned long long h = 0xCBF29CE484222325ull;
        for (size_t k = 0; k < n; k++) {
            h = (h ^ (y[k] & 0xFFu)) * 0x100000001B3ull;
            h = (h ^ (y[k] >> 8)) * 0x100000001B3ull;
        }
        char hex[24];
        snprintf(hex, sizeof hex, "%016llx", h);
        cJSON_AddStringToObject(e, "y_hash", hex);
    }
    if (rc == A4W4_EUNSUPPORTED) {
        na = 1;
        snprintf(note, sizeof note, "%s", why[0] ? why : "not applicable to this shape");
        goto done;
    }
    if (rc != A4W4_OK) {
        fail = 1;
        snprintf(note, sizeof note, "backend error: %s", why[0] ? why : a4w4_status_str(rc));
        goto done;
    }
    const char *which;
    if (!a4w4_case_guards_intact(d, &which)) {
        fail = 1;
        snprintf(note, sizeof note, "wrote out of bounds: the guard zone after %s changed; ", which);
    }
    if (!strncmp(b->contract, "bounded", 7)) {
        const double *T = oracles_sum_abs(d, s, o);
        if (!T) {
            fail = 1;
            goto done;
        }
        compare_bounded(&cmp, s, y, o->exact, o->exact_f32, T, d->K / 32, b->split, n);
    } else if (!strcmp(b->contract, "exact")) {
        compare_exact(&cmp, s, y, o->exact, n);
    } else {
        const uint16_t *exp = oracles_ordered(d, s, o, b->split);
        if (!exp) {
            fail = 1;
            goto done;
        }
        compare_exact(&cmp, s, y, exp, n);
    }
    fail |= cmp.mismatches != 0;
    if (cmp.unwritten)
        snprintf(note + strlen(note), sizeof note - strlen(note),
                 "%zu outputs never written (poison 0x%04x left); ", cmp.unwritten, A4W4_POISON_BF16);

    /* contracts §3.3: valid outputs must not depend on the pad fills or on bytes past K */
    if (b->asm_layout && d->a_scale_shuffled.data) {
        size_t nb = d->K / 32;
        int colpad = a4w4_act_scale_padded_cols(nb) != nb;
        variant vs[] = {{0xFF, 0x7F, A4W4_GUARD_FILL, "row pad 0xFF"},
                        {0x00, 0x7F, A4W4_GUARD_FILL, "row pad 0x00"},
                        {0x7F, 0x00, A4W4_GUARD_FILL, "column pad 0x00"},
                        {0x7F, 0xFF, A4W4_GUARD_FILL, "column pad 0xFF"},
                        {0x7F, 0x7F, 0x5A, "garbage 0x5A past the buffers' ends"}};
        size_t nv = (colpad || d->K % 256) ? 5 : 2;
        char dep[256] = "";
        for (size_t v = 0; v < nv; v++) {
            a4w4_case_refill(d, vs[v].row_fill, vs[v].col_fill, vs[v].guard);
            for (size_t k = 0; k < n; k++)
                y2[k] = A4W4_POISON_BF16;
            args.y = y2;
            int rc2 = call_run(b, &args);
            size_t diff = 0;
            if (!strncmp(b->contract, "bounded", 7)) {
                /* the reduction order of a bounded kernel varies run to run: a variant only
                 * counts when it leaves the bound the baseline kept */
                comparison c2;
                compare_bounded(&c2, s, y2, o->exact, o->exact_f32, o->sum_abs, d->K / 32,
                                b->split, n);
                diff = c2.mismatches > cmp.mismatches ? c2.mismatches - cmp.mismatches : 0;
            } else {
                for (size_t k = 0; k < n; k++)
                    diff += y2[k] != y[k];
            }
            if (rc2 != A4W4_OK || diff)
                snprintf(dep + strlen(dep), sizeof dep - strlen(dep), "%s%s (%zu outputs change)",
                         dep[0] ? ", " : "", vs[v].what, rc2 != A4W4_OK ? n : diff);
        }
        a4w4_case_refill(d, A4W4_ACT_SCALE_FILL_DEFAULT, A4W4_ACT_SCALE_FILL_DEFAULT,
                         A4W4_GUARD_FILL);
        cJSON_AddNumberToObject(e, "pad_variants", (double)nv);
        if (dep[0]) {
            fail = 1;
            cJSON_AddStringToObject(e, "pad_dependent", dep);
            snprintf(note + strlen(note), sizeof note - strlen(note),
                     "pad-dependent: valid outputs change with %s; it needs row fill 0x7F, "
                     "column fill 0x7F and nothing past K; ", dep);
        }
    }
done:
    put_comparison(e, &cmp, s, cJSON_GetNumberValue(cJSON_GetObjectItem(e, "run_ms")), o->proven,
                   verdict_of(fail, na));
    if (d->code0) {
        cJSON_AddBoolToObject(e, "ambiguous", 1);
        snprintf(note + strlen(note), sizeof note - strlen(note),
                 "E8M0 code 0 present: read as 2^-127 (OCP, AITER torch); one host driver "
                 "documents 2^-126 (contracts §1)");
    }
    size_t L = strlen(note);
    while (L && (note[L - 1] == ' ' || note[L - 1] == ';'))
        note[--L] = 0;
    if (note[0])
        cJSON_AddStringToObject(e, "note", note);
    cJSON_AddItemToArray(entries, e);
    free(y);
    free(y2);
    return fail;
}

/* Finish a byte-comparison entry (layout and quantizer backends). */
static int byte_entry(const a4w4_case *c, const a4w4_backend *b, const a4w4_sample *s,
                      const a4w4_check *chk, int nchk, double ms, const char *na_why,
                      cJSON *entries)
{
    cJSON *e = new_entry(c, b->name, b->contract);
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
    a4w4_entry_set_check(e, &total);
    cJSON_AddBoolToObject(e, "sampled", !s->full);
    cJSON_AddNumberToObject(e, "time_ms", ms);
    cJSON_AddItemToArray(entries, e);
    return total.verdict == A4W4_CHECK_FAIL;
}

/* A layout backend: its contracts §3 layouts of d against ref's, byte for byte. */
static int run_layout_backend(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                              const a4w4_sample *s, cJSON *entries)
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
    if (b->type->gpu)
        pthread_mutex_lock(&gpu_mu);
    int rc = fail ? A4W4_ENOMEM
                  : b->type->layouts(b->ctx, d, got[0], got[1], got[2], why, sizeof why);
    if (b->type->gpu)
        pthread_mutex_unlock(&gpu_mu);
    double ms = a4w4_now() * 1e3 - t0;
    if (rc == A4W4_OK)
        for (int i = 0; i < 3; i++)
            if (got[i])
                a4w4_check_bytes(&chk[n++], names[i], got[i], ref[i]->data, 1, ref[i]->len, NULL);
    if (rc != A4W4_OK && rc != A4W4_EUNSUPPORTED) {
        a4w4_check_na(&chk[n], "layouts", why[0] ? why : a4w4_status_str(rc));
        chk[n++].verdict = A4W4_CHECK_FAIL;
    }
    fail = byte_entry(c, b, s, chk, n, ms, rc == A4W4_EUNSUPPORTED ? why : NULL, entries);
    for (int i = 0; i < 3; i++)
        free(got[i]);
    return fail;
}

/* A quantizer backend: the activation rows of a normal-regime case, quantized in the case's
 * mode, against ref's codes (NaN blocks' codes skipped) and scales. */
static int run_quant_backend(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                             const a4w4_sample *s, cJSON *entries)
{
    if (!d->x)
        return byte_entry(c, b, s, NULL, 0, 0,
                          "quantizer backends run on normal-regime cases (bf16 activations)",
                          entries);
    size_t K = d->K, nb = K / 32, rows = s->nrows;
    uint16_t *x = malloc(rows * K * 2);
    uint8_t *q = malloc(rows * K / 2), *sc = malloc(rows * nb), *rq = malloc(rows * K / 2),
            *rs = malloc(rows * nb), *skip = calloc(rows * K / 2, 1);
    a4w4_check chk[2];
    int n = 0, fail;
    char why[512] = "";
    double ms = 0;
    if (!x || !q || !sc || !rq || !rs || !skip) {
        a4w4_check_na(&chk[n], "quantize", "out of memory");
        chk[n++].verdict = A4W4_CHECK_FAIL;
    } else {
        for (size_t i = 0; i < rows; i++) {
            size_t m = row_at(s, i);
            memcpy(x + i * K, d->x + m * K, K * 2);
            memcpy(rq + i * K / 2, d->a_fp4.data + m * K / 2, K / 2);
            memcpy(rs + i * nb, d->a_scale.data + m * nb, nb);
            for (size_t kb = 0; kb < K / 2; kb++)
                skip[i * K / 2 + kb] = rs[i * nb + kb / 16] == 0xFF;
        }
        memset(q, 0xA5, rows * K / 2);
        memset(sc, 0xA5, rows * nb);
        double t0 = a4w4_now() * 1e3;
        if (b->type->gpu)
            pthread_mutex_lock(&gpu_mu);
        int rc = b->type->quantize(b->ctx, x, rows, K, (int)c->mode, q, sc, why, sizeof why);
        if (b->type->gpu)
            pthread_mutex_unlock(&gpu_mu);
        ms = a4w4_now() * 1e3 - t0;
        if (rc == A4W4_OK) {
            a4w4_check_bytes(&chk[n++], "a_fp4", q, rq, rows, K / 2, skip);
            a4w4_check_bytes(&chk[n++], "a_scale", sc, rs, rows, nb, NULL);
            if (!s->full) /* report real row numbers */
                for (int i = 0; i < n; i++)
                    if (chk[i].mismatches)
                        chk[i].first_row = s->rows[chk[i].first_row];
        } else {
            a4w4_check_na(&chk[n], "quantize", why[0] ? why : a4w4_status_str(rc));
            chk[n++].verdict = rc == A4W4_EUNSUPPORTED ? A4W4_CHECK_NA : A4W4_CHECK_FAIL;
        }
    }
    fail = byte_entry(c, b, s, chk, n, ms, NULL, entries);
    free(x);
    free(q);
    free(sc);
    free(rq);
    free(rs);
    free(skip);
    return fail;
}

int a4w4_run_case(const a4w4_runner *r, const a4w4_case *c, cJSON *entries, char *err,
                  size_t errlen)
{
    a4w4_sample s;
    a4w4_case_data d;
    oracles o;
    memset(&o, 0, sizeof o);
    if (a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, r->full, &s) != A4W4_OK) {
        snprintf(err, errlen, "case %s: out of memory sampling", c->name);
        return -1;
    }
    if (a4w4_case_generate(c, &s, &d) != A4W4_OK) {
        snprintf(err, errlen, "case %s: out of memory generating M=%zu N=%zu K=%zu", c->name,
                 c->M, c->N, c->K);
        a4w4_sample_free(&s);
        return -1;
    }
    int fails = -1, first = cJSON_GetArraySize(entries);
    if (oracles_compute(&d, &s, &o) != 0) {
        snprintf(err, errlen, "case %s: out of memory for the oracles", c->name);
        goto out;
    }
    fails = oracle_entry(c, &d, &s, &o, entries);
    for (size_t i = 0; i < r->nbackends; i++) {
        a4w4_backend *b = &r->backends[i];
        if (b->type->run)
            fails += run_backend(b, c, &d, &s, &o, entries);
        else if (b->type->layouts)
            fails += run_layout_backend(b, c, &d, &s, entries);
        else if (b->type->quantize)
            fails += run_quant_backend(b, c, &d, &s, entries);
    }
    a4w4_annotate_case(c, entries, first); /* route, policy, hazard; optional fields */
out:
    oracles_free(&o);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return fails;
}

int a4w4_run_golden(const a4w4_runner *r, const char *path, cJSON *entries, char *err,
                    size_t errlen)
{
    a4w4_check_list checks = {0};
    double t0 = (a4w4_now() * 1e3);
    size_t dims[3] = {0, 0, 0};
    int rc = a4w4_verify_bundle(path, &checks, dims, err, errlen);
    double ms = (a4w4_now() * 1e3) - t0;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char name[128];
    size_t L = strlen(base);
    snprintf(name, sizeof name, "golden/%.*s", (int)(L > 12 ? L - 12 : L), base);
    int fails = 0;
    a4w4_check oracle;
    memset(&oracle, 0, sizeof oracle);
    snprintf(oracle.subject, sizeof oracle.subject, "bundle tensors");
    oracle.verdict = rc == 2 ? A4W4_CHECK_FAIL : A4W4_CHECK_PASS;
    if (rc == 2)
        snprintf(oracle.note, sizeof oracle.note, "bad input: %.140s", err);
    size_t ntensor = 0;
    for (size_t i = 0; i < checks.n; i++) {
        a4w4_check *c = &checks.items[i];
        const char *bk = !strncmp(c->subject, "cpu-asm ", 8) ? "cpu-asm"
                       : !strncmp(c->subject, "cpu-fallback ", 13) ? "cpu-fallback" : NULL;
        if (bk) {
            int selected = 0;
            for (size_t j = 0; j < r->nbackends; j++)
                selected |= !strcmp(r->backends[j].name, bk);
            if (selected) {
                cJSON *e = a4w4_entry_new(name, dims[0], dims[1], dims[2], "golden", 0, bk,
                                          "ordered(1)");
                a4w4_entry_set_check(e, c);
                cJSON_AddBoolToObject(e, "sampled", 0);
                cJSON_AddNumberToObject(e, "time_ms", ms);
                cJSON_AddItemToArray(entries, e);
                fails += c->verdict == A4W4_CHECK_FAIL;
            }
            continue;
        }
        ntensor++;
        oracle.checked += c->checked;
        if (c->verdict == A4W4_CHECK_FAIL && oracle.verdict != A4W4_CHECK_FAIL) {
            size_t checked = oracle.checked;
            oracle = *c;
            oracle.checked = checked;
        }
    }
    if (!oracle.note[0])
        snprintf(oracle.note, sizeof oracle.note, "%zu tensor checks (a4w4check verify %s)",
                 ntensor, base);
    cJSON *e = a4w4_entry_new(name, dims[0], dims[1], dims[2], "golden", 0, "oracle",
                              "bit-exact tensors");
    a4w4_entry_set_check(e, &oracle);
    cJSON_AddBoolToObject(e, "sampled", 0);
    cJSON_AddNumberToObject(e, "time_ms", ms);
    cJSON_AddItemToArray(entries, e);
    fails += oracle.verdict == A4W4_CHECK_FAIL;
    a4w4_check_list_free(&checks);
    return rc == 2 ? -2 : fails;
}
