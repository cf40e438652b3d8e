/* criteria.c — the peers' tolerance criteria (criteria.h); sources cited in docs/criteria.md.
 *
 * The table lives here, in C, rather than in a data file under cases/: each row is only
 * meaningful together with the measure that evaluates it (allclose, cosine, SQNR, norm, ULP),
 * which is code, and a file would add a parser to fuzz for eight fixed rows whose values come
 * from other projects' source, not from a user. */
#include "criteria.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "check.h"

static const a4w4_criterion table[] = {
    {"aiter-checkallclose", "AITER checkAllclose", "aiter", A4W4_CRIT_ALLCLOSE, A4W4_REF_DEQUANT, 1,
     1e-2, 1e-2, 0.05, 0, A4W4_NAN_NOT_CLOSE,
     "ROCm/aiter aiter/test_common.py (checkAllclose), op_tests/test_gemm_a4w4.py (run_torch)"},
    {"torch-assert-close-bf16", "torch assert_close (bf16 defaults)", "torch", A4W4_CRIT_ALLCLOSE,
     A4W4_REF_DEQUANT, 1, 1.6e-2, 1e-5, 0, 0, A4W4_NAN_NOT_CLOSE,
     "pytorch/pytorch torch/testing/_comparison.py (_DTYPE_PRECISIONS)"},
    {"te-nvfp4-gemm", "TransformerEngine NVFP4 GEMM", "te", A4W4_CRIT_ALLCLOSE, A4W4_REF_DEQUANT, 1,
     8e-3, 8e-3, 0, 0, A4W4_NAN_ZEROED,
     "NVIDIA/TransformerEngine tests/pytorch/nvfp4/test_nvfp4_gemm_exact.py"},
    {"flashinfer-cosine", "FlashInfer mm_fp4 cosine", "fi-cos", A4W4_CRIT_COSINE, A4W4_REF_UNQUANT, 1, 0,
     0, 0, 0.97, A4W4_NAN_POISONS, "flashinfer-ai/flashinfer tests/GEMM/test_mm_fp4.py"},
    {"cosine-dequant", "cosine > 0.97 vs dequantized", "cos-dq", A4W4_CRIT_COSINE, A4W4_REF_DEQUANT, 1, 0,
     0, 0, 0.97, A4W4_NAN_POISONS,
     "FlashInfer's threshold (tests/GEMM/test_mm_fp4.py) on the dequantized reference"},
    {"torchao-mx-sqnr", "torchao MX SQNR", "sqnr", A4W4_CRIT_SQNR, A4W4_REF_DEQUANT, 1, 0, 0, 0, 80.0,
     A4W4_NAN_POISONS,
     "pytorch/ao test/prototype/mx_formats/test_mx_mm.py, torchao/float8/float8_utils.py "
     "(compute_error)"},
    {"hipblaslt-unit-check", "hipBLASLt unit_check", "unit", A4W4_CRIT_ULP, A4W4_REF_DEQUANT, 1, 0, 0,
     0, 4, A4W4_NAN_MUST_MATCH, "ROCm/hipBLASLt clients/include/unit.hpp (ASSERT_BF16_EQ)"},
    {"hipblaslt-norm-check", "hipBLASLt norm_check", "norm", A4W4_CRIT_NORM, A4W4_REF_DEQUANT, 1, 0, 0,
     0, 0.1, A4W4_NAN_POISONS, "ROCm/hipBLASLt clients/include/norm.hpp (norm_check)"},
    {"onednn-benchdnn-matmul", "oneDNN benchdnn matmul", "benchdnn", A4W4_CRIT_EQUAL, A4W4_REF_DEQUANT, 1,
     0, 0, 0, 0.90, A4W4_NAN_MUST_MATCH,
     "uxlfoundation/oneDNN tests/benchdnn/matmul/matmul.cpp (setup_cmp), "
     "tests/benchdnn/utils/compare.cpp"},
};

const a4w4_criterion *a4w4_criteria(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}

const a4w4_criterion *a4w4_criterion_find(const char *id)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].id, id))
            return &table[i];
    return NULL;
}

const char *a4w4_crit_verdict_name(a4w4_crit_verdict v)
{
    switch (v) {
    case A4W4_CRIT_PASS: return "PASS";
    case A4W4_CRIT_FAIL: return "FAIL";
    case A4W4_CRIT_MISTRUSTED: return "MISTRUSTED";
    default: return "n/a";
    }
}

/* The reference value of element k as criterion c reads it. */
static double ref_at(const a4w4_criterion *c, const float *ref, size_t k)
{
    float r = ref[k];
    return c->ref_bf16 ? a4w4_bf16_to_f32(a4w4_f32_to_bf16(r)) : r;
}

/* fp32 bits on a line where the order of values is the order of integers (gtest's
 * AlmostEquals: sign-magnitude to biased), so +0 and -0 are both at 2^31. */
static uint64_t biased_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? (uint64_t)(~u + 1u) & 0xFFFFFFFFu : (uint64_t)u | 0x80000000u;
}

/* Element k out of tolerance under c (ALLCLOSE, ULP, EQUAL). */
static int elem_over(const a4w4_criterion *c, double g, double r)
{
    if (c->nan == A4W4_NAN_ZEROED) {
        g = isnan(g) ? 0 : g;
        r = isnan(r) ? 0 : r;
    }
    if (isnan(g) || isnan(r))
        return c->nan == A4W4_NAN_MUST_MATCH ? !(isnan(g) && isnan(r)) : 1;
    switch (c->kind) {
    case A4W4_CRIT_ALLCLOSE:
        if (isinf(g) || isinf(r))
            return g != r;
        return fabs(g - r) > c->atol + c->rtol * fabs(r);
    case A4W4_CRIT_ULP: {
        uint64_t a = biased_f32((float)g), b = biased_f32((float)r);
        return (a > b ? a - b : b - a) > (uint64_t)c->threshold;
    }
    default: return g != r;
    }
}

/* Sums over the elements for the whole-output measures (NaN poisons them). */
typedef struct {
    double gg, rr, gr, dd;
    size_t zeros;
} sums;

static void add_sums(sums *s, double g, double r)
{
    s->gg += g * g;
    s->rr += r * r;
    s->gr += g * r;
    s->dd += (g - r) * (g - r);
    s->zeros += r == 0;
}

static double measure(const a4w4_criterion *c, const sums *s, size_t n, size_t over)
{
    switch (c->kind) {
    case A4W4_CRIT_COSINE: return s->gr / (fmax(sqrt(s->gg), 1e-8) * fmax(sqrt(s->rr), 1e-8));
    case A4W4_CRIT_SQNR: return 20.0 * log10(sqrt(s->rr) / sqrt(s->dd));
    case A4W4_CRIT_NORM: return sqrt(s->dd) / sqrt(s->rr);
    default: return (double)over / (double)n;
    }
}

static a4w4_crit_verdict judge(const a4w4_criterion *c, double v, const sums *s, size_t n,
                               size_t over)
{
    switch (c->kind) {
    case A4W4_CRIT_ALLCLOSE: return v <= c->share ? A4W4_CRIT_PASS : A4W4_CRIT_FAIL;
    case A4W4_CRIT_COSINE: return v > c->threshold ? A4W4_CRIT_PASS : A4W4_CRIT_FAIL;
    case A4W4_CRIT_SQNR: return v >= c->threshold ? A4W4_CRIT_PASS : A4W4_CRIT_FAIL;
    case A4W4_CRIT_NORM: return v < c->threshold ? A4W4_CRIT_PASS : A4W4_CRIT_FAIL;
    case A4W4_CRIT_EQUAL:
        if ((double)s->zeros > c->threshold * (double)n)
            return A4W4_CRIT_MISTRUSTED;
        return over ? A4W4_CRIT_FAIL : A4W4_CRIT_PASS;
    default: return over ? A4W4_CRIT_FAIL : A4W4_CRIT_PASS;
    }
}

/* The report line of r. */
static void format_result(a4w4_crit_result *r)
{
    const a4w4_criterion *c = r->c;
    const char *v = a4w4_crit_verdict_name(r->verdict);
    char *t = r->text;
    size_t L = sizeof r->text;
    switch (c->kind) {
    case A4W4_CRIT_COSINE:
        snprintf(t, L, "%s %.5f: %s (passes above %.2f)", c->label, r->value, v, c->threshold);
        break;
    case A4W4_CRIT_SQNR:
        snprintf(t, L, "%s %.1f dB: %s (passes at %.0f dB or more)", c->label, r->value, v,
                 c->threshold);
        break;
    case A4W4_CRIT_NORM:
        snprintf(t, L, "%s %.3g: %s (passes below %.2g)", c->label, r->value, v, c->threshold);
        break;
    case A4W4_CRIT_ALLCLOSE:
        snprintf(t, L, "%s: %s (max rel %.3g %%, %.3g %% of elements over, %zu of %zu)", c->label,
                 v, 100.0 * r->max_rel, 100.0 * r->value, r->over, r->n);
        break;
    default:
        snprintf(t, L, "%s: %s (%zu of %zu elements differ)", c->label, v, r->over, r->n);
    }
}

void a4w4_criterion_eval(const a4w4_criterion *c, const uint16_t *got, const float *ref,
                         size_t n, const char *why_na, a4w4_crit_result *r)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    r->n = n;
    if (!ref || !n) {
        r->verdict = A4W4_CRIT_NA;
        snprintf(r->text, sizeof r->text, "%s: n/a (%s)", c->label,
                 !n ? "no outputs" : why_na ? why_na : "its reference is not in this run");
        return;
    }
    sums s = {0, 0, 0, 0, 0};
    for (size_t k = 0; k < n; k++) {
        double g = a4w4_bf16_to_f32(got[k]), rv = ref_at(c, ref, k);
        r->over += elem_over(c, g, rv);
        if (isfinite(g) && isfinite(rv) && rv != 0)
            r->max_rel = fmax(r->max_rel, fabs(g - rv) / fabs(rv));
        add_sums(&s, g, rv);
    }
    r->value = measure(c, &s, n, r->over);
    r->verdict = judge(c, r->value, &s, n, r->over);
    format_result(r);
}

size_t a4w4_criteria_eval_all(const uint16_t *got, const float *dequant, const float *unquant,
                              size_t n, const char *why_no_unquant, a4w4_crit_result *r)
{
    size_t nc;
    const a4w4_criterion *c = a4w4_criteria(&nc);
    for (size_t i = 0; i < nc && i < A4W4_CRITERIA_MAX; i++)
        a4w4_criterion_eval(&c[i], got, c[i].ref == A4W4_REF_UNQUANT ? unquant : dequant, n,
                            c[i].ref == A4W4_REF_UNQUANT ? why_no_unquant : NULL, &r[i]);
    return nc < A4W4_CRITERIA_MAX ? nc : A4W4_CRITERIA_MAX;
}

void a4w4_criteria_mark(a4w4_crit_result *r, const a4w4_crit_result *base, size_t nr)
{
    for (size_t i = 0; i < nr; i++) {
        if (base[i].verdict == A4W4_CRIT_PASS || base[i].verdict == A4W4_CRIT_NA)
            continue;
        r[i].fails_correct = 1;
        size_t L = strlen(r[i].text);
        snprintf(r[i].text + L, sizeof r[i].text - L, "; also fails the correct outputs");
    }
}

int a4w4_criteria_would_ship(const a4w4_crit_result *r, size_t nr)
{
    for (size_t i = 0; i < nr; i++)
        if (r[i].verdict == A4W4_CRIT_PASS)
            return 1;
    return 0;
}

size_t a4w4_criteria_on_pair(const uint16_t *ref, const uint16_t *got, size_t n,
                             a4w4_crit_result *r)
{
    float *rf = malloc((n ? n : 1) * sizeof *rf);
    if (!rf)
        return 0;
    for (size_t k = 0; k < n; k++)
        rf[k] = a4w4_bf16_to_f32(ref[k]);
    size_t nr = a4w4_criteria_eval_all(got, rf, NULL, n, "no unquantized operands here", r);
    free(rf);
    return nr;
}

void a4w4_criteria_brief(const a4w4_crit_result *r, size_t nr, char *buf, size_t len)
{
    size_t u = 0;
    buf[0] = 0;
    for (size_t i = 0; i < nr && u < len; i++)
        u += (size_t)snprintf(buf + u, len - u, "%s%s %s", i ? ", " : "", r[i].c->column,
                              a4w4_crit_verdict_name(r[i].verdict));
}

cJSON *a4w4_criteria_json(const a4w4_crit_result *r, size_t nr)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < nr; i++) {
        cJSON *c = cJSON_CreateObject();
        if (!c || !cJSON_AddItemToArray(a, c)) {
            cJSON_Delete(c);
            cJSON_Delete(a);
            return NULL;
        }
        cJSON_AddStringToObject(c, "id", r[i].c->id);
        cJSON_AddStringToObject(c, "outcome", a4w4_crit_verdict_name(r[i].verdict));
        if (r[i].verdict != A4W4_CRIT_NA && isfinite(r[i].value))
            cJSON_AddNumberToObject(c, "value", r[i].value);
        cJSON_AddStringToObject(c, "text", r[i].text);
    }
    return a;
}

int a4w4_parity_diff_of(const uint16_t *a, const uint16_t *b, size_t n, a4w4_parity_diff *d)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    for (size_t k = 0; k < n; k++) {
        unsigned u = a4w4_bf16_ulp_distance(a[k], b[k]);
        d->equal += a[k] == b[k];
        if (u == (unsigned)-1)
            d->nan_vs_number += !(a4w4_bf16_is_nan(a[k]) && a4w4_bf16_is_nan(b[k]));
        else if (u > d->max_ulp)
            d->max_ulp = u;
    }
    d->ntol = a4w4_criteria_on_pair(a, b, n, d->tol);
    return n && !d->ntol ? -1 : 0;
}

void a4w4_parity_diff_format(const a4w4_parity_diff *d, char *buf, size_t len)
{
    char peers[512];
    a4w4_criteria_brief(d->tol, d->ntol, peers, sizeof peers);
    snprintf(buf, len, "bit-equal %zu of %zu, %zu differ, max %u ULP%s; peers on the "
             "difference: %s", d->equal, d->n, d->n - d->equal, d->max_ulp,
             d->nan_vs_number ? " (and NaN against a number)" : "", peers);
}

cJSON *a4w4_parity_diff_json(const a4w4_parity_diff *d)
{
    cJSON *j = cJSON_CreateObject(), *t = a4w4_criteria_json(d->tol, d->ntol);
    if (!j || !t) {
        cJSON_Delete(j);
        cJSON_Delete(t);
        return NULL;
    }
    cJSON_AddNumberToObject(j, "outputs", (double)d->n);
    cJSON_AddNumberToObject(j, "bit_equal", (double)d->equal);
    cJSON_AddNumberToObject(j, "differ", (double)(d->n - d->equal));
    cJSON_AddNumberToObject(j, "max_ulp", d->max_ulp);
    cJSON_AddNumberToObject(j, "nan_vs_number", (double)d->nan_vs_number);
    cJSON_AddItemToObject(j, "tolerance_on_difference", t);
    return j;
}
