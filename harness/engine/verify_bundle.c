/* verify_bundle.c — bundle verification (see verify_bundle.h; contracts §7). */
#include "verify_bundle.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "a4w4_quote.h"
#include "a4w4_quant.h"
#include "casefile.h"
#include "errmsg.h"
#include "export.h"
#include "failing.h"
#include "safetensors.h"

typedef struct {
    const char *path;
    a4w4_st_file f;
    char *err;
    size_t errlen;
} bundle;

/* Record a one-line bad-input error "<path>: <message>" and return A4W4_ST_BADINPUT. */
static a4w4_hstatus bad(bundle *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static a4w4_hstatus bad(bundle *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    a4w4_verrmsg(b->err, b->errlen, A4W4_ST_BADINPUT, b->path, fmt, ap);
    va_end(ap);
    return A4W4_ST_BADINPUT;
}

/* Parse a metadata integer, strict decimal (digits only: no sign, no space); 0 when absent
 * or not a positive integer. */
static size_t meta_size(const bundle *b, const char *key)
{
    const char *v = a4w4_st_meta(&b->f, key);
    if (!v || *v < '0' || *v > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    return (*end || errno) ? 0 : (size_t)x;
}

/* The tensor `name` with dtype and 2-D shape [rows, cols]; NULL and err set otherwise.
 * optional: absence is not an error (returns NULL, err untouched). */
static const a4w4_st_tensor *need(bundle *b, const char *name, a4w4_st_dtype dt, size_t rows,
                                  size_t cols, int optional, a4w4_hstatus *rc)
{
    const a4w4_st_tensor *t = a4w4_st_find(&b->f, name);
    if (!t) {
        if (!optional)
            *rc = bad(b, "tensor '%s' promised by the format is missing", name);
        return NULL;
    }
    /* packed bytes (dt U8): U8 or F8_E8M0 [rows, cols], or F4 [rows, 2 * cols] elements */
    size_t r = t->shape[0], c = t->shape[1];
    int ok = dt == A4W4_DT_U8 ? !a4w4_st_packed_2d(t, &r, &c) : t->dtype == dt && t->ndim == 2;
    if (!ok || r != rows || c != cols) {
        char msg[160];
        snprintf(msg, sizeof msg, "tensor '%s' must be %s [%zu, %zu]%s", name,
                 a4w4_st_dtype_name(dt), rows, cols,
                 dt == A4W4_DT_U8 ? " (or F8_E8M0 of that shape, or F4 of twice the columns)" : "");
        *rc = bad(b, "%s", msg);
        return NULL;
    }
    return t;
}

/* The add_* helpers append one check and return 1 when it failed (or could not be recorded:
 * out of memory never passes), else 0. */
static int add_bytes(a4w4_check_list *out, const char *subject, const uint8_t *got,
                     const uint8_t *exp, size_t rows, size_t cols, const uint8_t *skip)
{
    a4w4_check *c = a4w4_check_list_add(out);
    if (!c)
        return 1;
    a4w4_check_bytes(c, subject, got, exp, rows, cols, skip);
    return c->verdict == A4W4_CHECK_FAIL;
}

static int add_bf16(a4w4_check_list *out, const char *subject, const uint16_t *got,
                    const a4w4_st_tensor *exp, size_t rows, size_t cols)
{
    a4w4_check *c = a4w4_check_list_add(out);
    if (!c)
        return 1;
    uint16_t *e = malloc(rows * cols * sizeof *e);
    if (!e) {
        a4w4_check_na(c, subject, "out of memory");
        c->verdict = A4W4_CHECK_FAIL;
        return 1;
    }
    memcpy(e, exp->data, rows * cols * 2); /* unaligned-safe copy of little-endian bf16 */
    a4w4_check_bf16(c, subject, got, e, rows, cols);
    free(e);
    return c->verdict == A4W4_CHECK_FAIL;
}

static void add_na(a4w4_check_list *out, const char *subject, const char *why)
{
    a4w4_check *c = a4w4_check_list_add(out);
    if (c)
        a4w4_check_na(c, subject, why);
}

/* A tensor the bundle holds although its layout rule fails: a FAIL with the reason. */
static int add_unexpected(a4w4_check_list *out, const char *subject, const char *why)
{
    a4w4_check *c = a4w4_check_list_add(out);
    if (c) {
        a4w4_check_na(c, subject, why);
        c->verdict = A4W4_CHECK_FAIL;
    }
    return 1;
}

/* Skip mask for element codes of blocks whose scale is 0xFF (contracts §2 step 4). */
static uint8_t *nan_block_mask(const uint8_t *scale, size_t rows, size_t K)
{
    uint8_t *mask = calloc(rows * (K / 2), 1);
    if (!mask)
        return NULL;
    for (size_t r = 0; r < rows; r++)
        for (size_t kb = 0; kb < K / 2; kb++)
            mask[r * (K / 2) + kb] = scale[r * (K / 32) + kb / 16] == 0xFF;
    return mask;
}

/* One quantization to check: x (dtype dt) [rows, K] in mode against the bundle's codes
 * fp4_name, scales scale_name and, when shuf_name is not NULL, the shuffled scales. */
typedef struct {
    const void *x;
    a4w4_in_dtype dt;
    size_t rows, K;
    a4w4_scale_mode mode;
    const char *fp4_name, *scale_name, *shuf_name;
} quant_job;

/* Quantize and compare (NaN blocks' codes skipped). A4W4_ST_OK (*fails += failing checks) or
 * A4W4_ST_BADINPUT with err set (a tensor missing or misshapen; out of memory). */
static a4w4_hstatus check_quant(bundle *b, a4w4_check_list *out, const quant_job *j,
                                int *fails)
{
    a4w4_hstatus rc = A4W4_ST_OK;
    size_t rows = j->rows, K = j->K;
    const a4w4_st_tensor *tq = need(b, j->fp4_name, A4W4_DT_U8, rows, K / 2, 0, &rc);
    const a4w4_st_tensor *ts = tq ? need(b, j->scale_name, A4W4_DT_U8, rows, K / 32, 0, &rc)
                                  : NULL;
    if (!ts)
        return rc;
    size_t prow = a4w4_act_scale_padded_rows(rows), pcol = a4w4_act_scale_padded_cols(K / 32);
    uint8_t *q = malloc(rows * K / 2), *s = malloc(rows * K / 32), *sh = malloc(prow * pcol);
    uint8_t *mask = NULL;
    const char *mn = a4w4_scale_mode_name(j->mode);
    char subj[96];
    if (!q || !s || !sh || a4w4_quantize(j->x, j->dt, rows, K, j->mode, 0, q, s) != A4W4_OK ||
        !(mask = nan_block_mask(s, rows, K))) {
        rc = bad(b, "out of memory");
        goto done;
    }
    snprintf(subj, sizeof subj, "%s (%s)", j->fp4_name, mn);
    *fails += add_bytes(out, subj, q, tq->data, rows, K / 2, mask);
    snprintf(subj, sizeof subj, "%s (%s)", j->scale_name, mn);
    *fails += add_bytes(out, subj, s, ts->data, rows, K / 32, NULL);
    if (!j->shuf_name)
        goto done;
    const a4w4_st_tensor *tsh = need(b, j->shuf_name, A4W4_DT_U8, prow, pcol, 0, &rc);
    if (!tsh)
        goto done;
    if (a4w4_quantize(j->x, j->dt, rows, K, j->mode, 1, q, sh) != A4W4_OK) {
        rc = bad(b, "out of memory");
        goto done;
    }
    snprintf(subj, sizeof subj, "%s (%s, shuffle=True)", j->shuf_name, mn);
    *fails += add_bytes(out, subj, sh, tsh->data, prow, pcol, NULL);
done:
    free(mask);
    free(q);
    free(s);
    free(sh);
    return rc;
}

/* Every scale mode: from x_f32 (codes, scales, shuffled scales) and from x_bf16. */
static a4w4_hstatus quant_modes(bundle *b, a4w4_check_list *out, const float *x32,
                                const uint16_t *x16, size_t rows, size_t K, int *fails)
{
    a4w4_hstatus rc = A4W4_ST_OK;
    for (int m = 0; m < A4W4_SCALE_MODE_COUNT && !rc; m++) {
        const char *mn = a4w4_scale_mode_name((a4w4_scale_mode)m);
        char q[64], s[64], qb[64], sb[64], sh[64];
        snprintf(q, sizeof q, "a_fp4_%s", mn);
        snprintf(s, sizeof s, "a_scale_%s", mn);
        snprintf(qb, sizeof qb, "a_fp4_%s_from_bf16", mn);
        snprintf(sb, sizeof sb, "a_scale_%s_from_bf16", mn);
        snprintf(sh, sizeof sh, "a_scale_%s_shuffled", mn);
        quant_job f32 = {x32, A4W4_IN_F32, rows, K, (a4w4_scale_mode)m, q, s, sh};
        quant_job bf16 = {x16, A4W4_IN_BF16, rows, K, (a4w4_scale_mode)m, qb, sb, NULL};
        rc = check_quant(b, out, &f32, fails);
        if (!rc)
            rc = check_quant(b, out, &bf16, fails);
    }
    return rc;
}

static a4w4_hstatus verify_quant_bundle(bundle *b, a4w4_check_list *out)
{
    a4w4_hstatus rc = A4W4_ST_OK;
    size_t rows = meta_size(b, "rows"), K = meta_size(b, "K");
    if (!rows || !K || K % 32)
        return bad(b, "metadata rows=%zu K=%zu: need rows >= 1 and K a positive multiple of 32",
                   rows, K);
    const a4w4_st_tensor *xf = need(b, "x_f32", A4W4_DT_F32, rows, K, 0, &rc);
    const a4w4_st_tensor *xb = xf ? need(b, "x_bf16", A4W4_DT_BF16, rows, K, 0, &rc) : NULL;
    if (!xb)
        return rc;
    /* copies: the file's data section need not be aligned for float/uint16 access */
    float *x32 = malloc(rows * K * 4);
    uint16_t *x16 = malloc(rows * K * 2);
    int fails = 0;
    if (!x32 || !x16)
        rc = bad(b, "out of memory");
    else {
        memcpy(x32, xf->data, rows * K * 4);
        memcpy(x16, xb->data, rows * K * 2);
        rc = quant_modes(b, out, x32, x16, rows, K, &fails);
    }
    free(x32);
    free(x16);
    if (rc)
        return rc;
    return fails ? A4W4_ST_MISMATCH : A4W4_ST_OK;
}

/* The tensors of a case bundle (contracts §7); the optional ones NULL when absent. */
typedef struct {
    int operands; /* a4w4-operands/1 (gen/export.h): y_exact, y_ordered optional */
    size_t M, N, K, nb, prow, pcol;
    const a4w4_st_tensor *a, *as, *w, *ws, *ye, *yo; /* required (a case bundle) */
    const a4w4_st_tensor *ash, *wsh, *wsw, *x;       /* optional */
} case_tensors;

/* Look up and shape-check every tensor the format and the metadata promise. */
static a4w4_hstatus case_tensors_find(bundle *b, case_tensors *t, int operands)
{
    a4w4_hstatus rc = A4W4_ST_OK;
    memset(t, 0, sizeof *t);
    t->operands = operands;
    size_t M = t->M = meta_size(b, "M"), N = t->N = meta_size(b, "N"), K = t->K = meta_size(b, "K");
    if (!M || !N || !K)
        return bad(b, "metadata M, N and K must be positive integers");
    if (K % 32)
        return bad(b, "metadata K=%zu breaks the rule K %% 32 == 0 (contracts §1)", K);
    size_t nb = t->nb = K / 32;
    const char *swz = a4w4_st_meta(&b->f, "scale_swizzle_supported");
    const char *act = a4w4_st_meta(&b->f, "activation");
    t->a = need(b, "a_fp4", A4W4_DT_U8, M, K / 2, 0, &rc);
    t->as = t->a ? need(b, "a_scale", A4W4_DT_U8, M, nb, 0, &rc) : NULL;
    t->w = t->as ? need(b, "w_fp4", A4W4_DT_U8, N, K / 2, 0, &rc) : NULL;
    t->ws = t->w ? need(b, "w_scale", A4W4_DT_U8, N, nb, 0, &rc) : NULL;
    t->ye = t->ws ? need(b, "y_exact", A4W4_DT_BF16, M, N, operands, &rc) : NULL;
    t->yo = t->ye || (operands && t->ws) ? need(b, "y_ordered", A4W4_DT_BF16, M, N, operands, &rc)
                                         : NULL;
    if (rc || !t->ws)
        return rc;
    t->prow = a4w4_act_scale_padded_rows(M);
    t->pcol = a4w4_act_scale_padded_cols(nb);
    t->ash = need(b, "a_scale_shuffled", A4W4_DT_U8, t->prow, t->pcol, 1, &rc);
    t->wsh = need(b, "w_fp4_shuffled", A4W4_DT_U8, N, K / 2, 1, &rc);
    t->wsw = need(b, "w_scale_swizzled", A4W4_DT_U8, N, nb, 1, &rc);
    t->x = need(b, "x", A4W4_DT_BF16, M, K, 1, &rc);
    if (rc)
        return rc;
    if (swz && !strcmp(swz, "true") && !t->wsw)
        return bad(b, "tensor '%s' promised by scale_swizzle_supported=true is missing",
                   "w_scale_swizzled");
    char shown[64];
    if (act && strcmp(act, "codes") && !t->x)
        return bad(b, "tensor 'x' promised by activation=%s is missing",
                   a4w4_quote(act, shown, sizeof shown));
    return A4W4_ST_OK;
}

/* 1. quantization from x in the bundle's mode (when x is there). */
static a4w4_hstatus case_check_quant(bundle *b, const case_tensors *t, a4w4_check_list *out,
                                     int *fails)
{
    if (!t->x)
        return A4W4_ST_OK;
    const char *mode_name = a4w4_st_meta(&b->f, "round_mode");
    const char *regime = a4w4_st_meta(&b->f, "regime");
    a4w4_regime rg;
    a4w4_scale_mode rm = A4W4_ROUND_UP;
    if (!mode_name && t->operands && regime && !a4w4_regime_parse(regime, &rg, &rm))
        mode_name = a4w4_scale_mode_name(rm); /* an operand bundle: its regime's mode */
    int mode = mode_name ? a4w4_scale_mode_parse(mode_name) : A4W4_ROUND_UP;
    char shown[64];
    if (mode < 0)
        return bad(b, "metadata round_mode='%s' is not one of round_up, round_down, ceil, even",
                   a4w4_quote(mode_name, shown, sizeof shown));
    uint16_t *xc = malloc(t->M * t->K * 2);
    if (!xc)
        return bad(b, "out of memory");
    memcpy(xc, t->x->data, t->M * t->K * 2);
    quant_job j = {xc, A4W4_IN_BF16, t->M, t->K, (a4w4_scale_mode)mode, "a_fp4", "a_scale",
                   t->ash ? "a_scale_shuffled" : NULL};
    a4w4_hstatus rc = check_quant(b, out, &j, fails);
    free(xc);
    return rc;
}

/* 2. the three layouts of contracts §3 against the bundle's (N/A when absent). */
static a4w4_hstatus case_check_layouts(bundle *b, const case_tensors *t, a4w4_check_list *out,
                                       int *fails)
{
    size_t M = t->M, N = t->N, K = t->K, nb = t->nb, prow = t->prow, pcol = t->pcol;
    uint8_t *buf = malloc(N * K / 2 > prow * pcol ? N * K / 2 : prow * pcol);
    if (!buf)
        return bad(b, "out of memory");
    if (t->ash) {
        a4w4_act_scale_shuffle(t->as->data, M, nb, A4W4_ACT_SCALE_FILL_DEFAULT,
                               A4W4_ACT_SCALE_FILL_DEFAULT, buf);
        *fails += add_bytes(out, "a_scale_shuffled (pad 0x7F/0x7F)", buf, t->ash->data, prow,
                            pcol, NULL);
    } else {
        add_na(out, "a_scale_shuffled", "not in the bundle");
    }
    if (t->wsh) {
        if (a4w4_preshuffle(t->w->data, N, K, buf) == A4W4_OK)
            *fails += add_bytes(out, "w_fp4_shuffled", buf, t->wsh->data, N, K / 2, NULL);
        else
            *fails += add_unexpected(out, "w_fp4_shuffled",
                                     "present although preshuffle is unsupported (N % 16, K % 64)");
    } else {
        add_na(out, "w_fp4_shuffled", a4w4_preshuffle_supported(N, K) ? "not in the bundle"
                                                                      : "preshuffle needs N % 16 == 0 and K % 64 == 0");
    }
    if (t->wsw) {
        if (a4w4_scale_swizzle(t->ws->data, N, nb, buf) == A4W4_OK)
            *fails += add_bytes(out, "w_scale_swizzled", buf, t->wsw->data, N, nb, NULL);
        else
            *fails += add_unexpected(out, "w_scale_swizzled",
                                     "present although the swizzle is unsupported (N % 32, (K/32) % 8)");
    } else {
        add_na(out, "w_scale_swizzled", a4w4_scale_swizzle_supported(2, N, nb) ? "not in the bundle"
                                                                               : "swizzle needs N % 32 == 0 and (K/32) % 8 == 0");
    }
    free(buf);
    return A4W4_ST_OK;
}

/* exact_any_order=true: the exact-regime prover must cover every output. */
static void case_check_exact_any_order(const case_tensors *t, a4w4_check_list *out, int *fails)
{
    size_t M = t->M, N = t->N, K = t->K, nb = t->nb, proven = 0;
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < N; n++) {
            a4w4_dot_operands op = {t->a->data + m * K / 2, t->as->data + m * nb,
                                    t->w->data + n * K / 2, t->ws->data + n * nb, K};
            proven += (size_t)a4w4_exact_regime(&op);
        }
    a4w4_check *c = a4w4_check_list_add(out);
    if (!c)
        return;
    memset(c, 0, sizeof *c);
    snprintf(c->subject, sizeof c->subject, "exact_any_order=true (exact-regime prover)");
    c->checked = M * N;
    c->mismatches = M * N - proven;
    c->verdict = proven == M * N ? A4W4_CHECK_PASS : A4W4_CHECK_FAIL;
    c->elem_bytes = 1;
    snprintf(c->note, sizeof c->note, "%zu of %zu outputs proven in the exact regime", proven,
             M * N);
    *fails += c->verdict == A4W4_CHECK_FAIL;
}

/* One system under test against y_ordered (the bundle's, or yord computed from the
 * operands when the bundle has none) into y (scratch [M, N]). */
static void case_check_sut(const case_tensors *t, const a4w4_bundle_sut *sut,
                           const uint16_t *yord, a4w4_check_list *out, uint16_t *y, int *fails)
{
    char subj[96];
    snprintf(subj, sizeof subj, "%s vs y_ordered", sut->name);
    if (sut->asm_layout && !(t->wsh && t->wsw && t->ash)) {
        add_na(out, subj, "ASM layouts not applicable (needs w_fp4_shuffled, w_scale_swizzled, "
                          "a_scale_shuffled)");
        return;
    }
    int r = sut->asm_layout ? sut->gemm(sut->ctx, t->a->data, t->ash->data, t->wsh->data,
                                        t->wsw->data, t->M, t->N, t->K, y)
                            : sut->gemm(sut->ctx, t->a->data, t->as->data, t->w->data,
                                        t->ws->data, t->M, t->N, t->K, y);
    if (r != A4W4_OK)
        add_na(out, subj, a4w4_status_str(r));
    else if (t->yo)
        *fails += add_bf16(out, subj, y, t->yo, t->M, t->N);
    else {
        a4w4_check *c = a4w4_check_list_add(out);
        if (c)
            a4w4_check_bf16(c, subj, y, yord, t->M, t->N);
        *fails += !c || c->verdict == A4W4_CHECK_FAIL;
    }
}

/* 3. the GEMM oracles, the prover's promise, then every system under test. */
static a4w4_hstatus case_check_gemms(bundle *b, const case_tensors *t,
                                     const a4w4_bundle_sut *suts, size_t nsuts,
                                     a4w4_check_list *out, int *fails)
{
    size_t M = t->M, N = t->N, K = t->K;
    uint16_t *y = malloc(M * N * 2), *yord = malloc(M * N * 2);
    if (!y || !yord) {
        free(y);
        free(yord);
        return bad(b, "out of memory");
    }
    a4w4_gemm_exact(t->a->data, t->as->data, t->w->data, t->ws->data, M, N, K, y, NULL);
    if (t->ye)
        *fails += add_bf16(out, "y_exact (exact oracle)", y, t->ye, M, N);
    a4w4_gemm_ordered(t->a->data, t->as->data, t->w->data, t->ws->data, M, N, K, 1, yord, NULL);
    if (t->yo)
        *fails += add_bf16(out, "y_ordered (ordered(1) oracle)", yord, t->yo, M, N);
    const char *eao = a4w4_st_meta(&b->f, "exact_any_order");
    if (eao && !strcmp(eao, "true"))
        case_check_exact_any_order(t, out, fails);
    for (size_t i = 0; i < nsuts; i++)
        case_check_sut(t, &suts[i], yord, out, y, fails);
    free(y);
    free(yord);
    return A4W4_ST_OK;
}

static a4w4_hstatus verify_case_bundle(bundle *b, const a4w4_bundle_sut *suts, size_t nsuts,
                                       int operands, a4w4_check_list *out)
{
    case_tensors t;
    int fails = 0;
    a4w4_hstatus rc = case_tensors_find(b, &t, operands);
    if (!rc)
        rc = case_check_quant(b, &t, out, &fails);
    if (!rc)
        rc = case_check_layouts(b, &t, out, &fails);
    if (!rc)
        rc = case_check_gemms(b, &t, suts, nsuts, out, &fails);
    if (!rc) /* a failure recorded with the operands (engine/failing.h) */
        rc = a4w4_verify_recorded(&b->f, b->path, t.a->data, t.as->data, t.w->data, t.ws->data,
                                  t.M, t.N, t.K, out, &fails, b->err, b->errlen);
    if (rc)
        return rc;
    return fails ? A4W4_ST_MISMATCH : A4W4_ST_OK;
}

void a4w4_capture_layer(const a4w4_st_file *f, char *layer, size_t llen, char *site,
                        size_t slen)
{
    const char *l = a4w4_st_meta(f, "layer"), *ls = a4w4_st_meta(f, "layer_call_site");
    const char *cs = a4w4_st_meta(f, "call_site");
    snprintf(layer, llen, "%s", l ? l : "");
    snprintf(site, slen, "%s", ls && *ls ? ls : cs ? cs : "");
}

a4w4_hstatus a4w4_verify_bundle(const char *path, const a4w4_bundle_sut *suts, size_t nsuts,
                                a4w4_check_list *out, size_t *dims, char *err, size_t errlen)
{
    bundle b = {path, {0}, err, errlen};
    char lerr[256];
    if (a4w4_st_load(path, &b.f, lerr, sizeof lerr) != A4W4_ST_OK) {
        snprintf(err, errlen, "%s", lerr);
        return A4W4_ST_BADINPUT;
    }
    const char *fmt = a4w4_st_meta(&b.f, "format");
    int quant = fmt && !strcmp(fmt, "a4w4-quant/1");
    if (dims) {
        dims[0] = meta_size(&b, quant ? "rows" : "M");
        dims[1] = quant ? 0 : meta_size(&b, "N");
        dims[2] = meta_size(&b, "K");
    }
    a4w4_hstatus rc;
    if (fmt && !strcmp(fmt, "a4w4-case/1"))
        rc = verify_case_bundle(&b, suts, nsuts, 0, out);
    else if (fmt && !strcmp(fmt, A4W4_OPERANDS_FORMAT))
        rc = verify_case_bundle(&b, suts, nsuts, 1, out);
    else if (fmt && !strcmp(fmt, "a4w4-quant/1"))
        rc = verify_quant_bundle(&b, out);
    else if (fmt && !strcmp(fmt, A4W4_CAPTURE_FORMAT))
        rc = bad(&b, "a capture bundle (a4w4-capture/1): `verify` and `run --captures` judge "
                 "those (commands/verify_capture.h), not as a case bundle");
    else if (fmt && (!strcmp(fmt, "a4w4-output/1") || !strcmp(fmt, "a4w4-outputs/1")))
        rc = bad(&b, "an output bundle (%s: a kernel's y, no operands): `run "
                 "--backend bundle:DIR` judges the directory holding it, on the matrix it was "
                 "computed from (docs/backends.md), not `verify`", fmt);
    else {
        char shown[64];
        rc = bad(&b, "metadata format='%s' is not a4w4-case/1, a4w4-operands/1, a4w4-quant/1 "
                 "or a4w4-capture/1 (contracts §7)",
                 fmt ? a4w4_quote(fmt, shown, sizeof shown) : "(missing)");
    }
    a4w4_st_free(&b.f);
    return rc;
}
