/* verify_bundle.c — bundle verification (see verify_bundle.h; contracts §7). */
#include "verify_bundle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"
#include "cpu_sut.h"
#include "safetensors.h"

a4w4_check *a4w4_check_list_add(a4w4_check_list *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        a4w4_check *p = realloc(l->items, cap * sizeof *p);
        if (!p)
            return NULL;
        l->items = p;
        l->cap = cap;
    }
    memset(&l->items[l->n], 0, sizeof l->items[0]);
    return &l->items[l->n++];
}

void a4w4_check_list_free(a4w4_check_list *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}

typedef struct {
    const char *path;
    a4w4_st_file f;
    char *err;
    size_t errlen;
} bundle;

/* Record a one-line bad-input error "<path>: <message>" and return exit code 2. */
static int bad(bundle *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(bundle *b, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(b->err, b->errlen, "%s: %s", b->path, msg);
    return 2;
}

/* Parse a metadata integer; 0 when absent or not a positive integer. */
static size_t meta_size(const bundle *b, const char *key)
{
    const char *v = a4w4_st_meta(&b->f, key);
    if (!v || !*v)
        return 0;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    return (*end || v[0] == '-') ? 0 : (size_t)x;
}

/* The tensor `name` with dtype and 2-D shape [rows, cols]; NULL and err set otherwise.
 * optional: absence is not an error (returns NULL, err untouched). */
static const a4w4_st_tensor *need(bundle *b, const char *name, a4w4_st_dtype dt, size_t rows,
                                  size_t cols, int optional, int *rc)
{
    const a4w4_st_tensor *t = a4w4_st_find(&b->f, name);
    if (!t) {
        if (!optional)
            *rc = bad(b, "tensor '%s' promised by the format is missing", name);
        return NULL;
    }
    if (t->dtype != dt || t->ndim != 2 || t->shape[0] != rows || t->shape[1] != cols) {
        char msg[128];
        snprintf(msg, sizeof msg, "tensor '%s' must be %s [%zu, %zu]", name,
                 a4w4_st_dtype_name(dt), rows, cols);
        *rc = bad(b, "%s", msg);
        return NULL;
    }
    return t;
}

static int add_bytes(a4w4_check_list *out, const char *subject, const uint8_t *got,
                     const uint8_t *exp, size_t rows, size_t cols, const uint8_t *skip)
{
    a4w4_check *c = a4w4_check_list_add(out);
    if (!c)
        return -1;
    a4w4_check_bytes(c, subject, got, exp, rows, cols, skip);
    return c->verdict == A4W4_CHECK_FAIL;
}

static int add_bf16(a4w4_check_list *out, const char *subject, const uint16_t *got,
                    const a4w4_st_tensor *exp, size_t rows, size_t cols)
{
    a4w4_check *c = a4w4_check_list_add(out);
    if (!c)
        return -1;
    uint16_t *e = malloc(rows * cols * sizeof *e);
    if (!e)
        return -1;
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

/* Quantize `x` (dtype) in `mode` and compare codes and scales; optionally the shuffled scale. */
static int check_quant(bundle *b, a4w4_check_list *out, const void *x, a4w4_in_dtype dt,
                       size_t rows, size_t K, a4w4_scale_mode mode, const char *fp4_name,
                       const char *scale_name, const char *shuf_name, int *rc)
{
    const a4w4_st_tensor *tq = need(b, fp4_name, A4W4_ST_U8, rows, K / 2, 0, rc);
    const a4w4_st_tensor *ts = tq ? need(b, scale_name, A4W4_ST_U8, rows, K / 32, 0, rc) : NULL;
    if (!ts)
        return -2;
    size_t prow = a4w4_act_scale_padded_rows(rows), pcol = a4w4_act_scale_padded_cols(K / 32);
    uint8_t *q = malloc(rows * K / 2), *s = malloc(rows * K / 32), *sh = malloc(prow * pcol);
    int fails = 0;
    if (!q || !s || !sh || a4w4_quantize(x, dt, rows, K, mode, 0, q, s) != A4W4_OK) {
        fails = -1;
        goto done;
    }
    uint8_t *mask = nan_block_mask(s, rows, K);
    char subj[96];
    snprintf(subj, sizeof subj, "%s (%s)", fp4_name, a4w4_scale_mode_name(mode));
    fails += add_bytes(out, subj, q, tq->data, rows, K / 2, mask);
    free(mask);
    snprintf(subj, sizeof subj, "%s (%s)", scale_name, a4w4_scale_mode_name(mode));
    fails += add_bytes(out, subj, s, ts->data, rows, K / 32, NULL);
    if (shuf_name) {
        const a4w4_st_tensor *tsh = need(b, shuf_name, A4W4_ST_U8, prow, pcol, 0, rc);
        if (!tsh) {
            fails = -2;
            goto done;
        }
        if (a4w4_quantize(x, dt, rows, K, mode, 1, q, sh) != A4W4_OK) {
            fails = -1;
            goto done;
        }
        snprintf(subj, sizeof subj, "%s (%s, shuffle=True)", shuf_name, a4w4_scale_mode_name(mode));
        fails += add_bytes(out, subj, sh, tsh->data, prow, pcol, NULL);
    }
done:
    free(q);
    free(s);
    free(sh);
    return fails;
}

static int verify_quant_bundle(bundle *b, a4w4_check_list *out)
{
    int rc = 0;
    size_t rows = meta_size(b, "rows"), K = meta_size(b, "K");
    if (!rows || !K || K % 32)
        return bad(b, "metadata rows=%zu K=%zu: need rows >= 1 and K a positive multiple of 32",
                   rows, K);
    const a4w4_st_tensor *xf = need(b, "x_f32", A4W4_ST_F32, rows, K, 0, &rc);
    const a4w4_st_tensor *xb = xf ? need(b, "x_bf16", A4W4_ST_BF16, rows, K, 0, &rc) : NULL;
    if (!xb)
        return rc;
    /* copies: the file's data section need not be aligned for float/uint16 access */
    float *x32 = malloc(rows * K * 4);
    uint16_t *x16 = malloc(rows * K * 2);
    int fails = 0;
    if (!x32 || !x16) {
        free(x32);
        free(x16);
        return bad(b, "out of memory");
    }
    memcpy(x32, xf->data, rows * K * 4);
    memcpy(x16, xb->data, rows * K * 2);
    for (int m = 0; m < A4W4_SCALE_MODE_COUNT && rc == 0; m++) {
        const char *mn = a4w4_scale_mode_name((a4w4_scale_mode)m);
        char q[64], s[64], qb[64], sb[64], sh[64];
        snprintf(q, sizeof q, "a_fp4_%s", mn);
        snprintf(s, sizeof s, "a_scale_%s", mn);
        snprintf(qb, sizeof qb, "a_fp4_%s_from_bf16", mn);
        snprintf(sb, sizeof sb, "a_scale_%s_from_bf16", mn);
        snprintf(sh, sizeof sh, "a_scale_%s_shuffled", mn);
        int f = check_quant(b, out, x32, A4W4_IN_F32, rows, K, (a4w4_scale_mode)m, q, s, sh, &rc);
        if (f > 0)
            fails += f;
        if (rc)
            break;
        f = check_quant(b, out, x16, A4W4_IN_BF16, rows, K, (a4w4_scale_mode)m, qb, sb, NULL, &rc);
        if (f > 0)
            fails += f;
    }
    free(x32);
    free(x16);
    if (rc)
        return rc;
    return fails ? 1 : 0;
}

static int verify_case_bundle(bundle *b, a4w4_check_list *out)
{
    int rc = 0, fails = 0;
    size_t M = meta_size(b, "M"), N = meta_size(b, "N"), K = meta_size(b, "K");
    if (!M || !N || !K)
        return bad(b, "metadata M, N and K must be positive integers");
    if (K % 32)
        return bad(b, "metadata K=%zu breaks the rule K %% 32 == 0 (contracts §1)", K);
    size_t nb = K / 32;
    const char *swz = a4w4_st_meta(&b->f, "scale_swizzle_supported");
    const char *act = a4w4_st_meta(&b->f, "activation");
    int swz_promised = swz && !strcmp(swz, "true");
    const a4w4_st_tensor *a = need(b, "a_fp4", A4W4_ST_U8, M, K / 2, 0, &rc);
    const a4w4_st_tensor *as = a ? need(b, "a_scale", A4W4_ST_U8, M, nb, 0, &rc) : NULL;
    const a4w4_st_tensor *w = as ? need(b, "w_fp4", A4W4_ST_U8, N, K / 2, 0, &rc) : NULL;
    const a4w4_st_tensor *ws = w ? need(b, "w_scale", A4W4_ST_U8, N, nb, 0, &rc) : NULL;
    const a4w4_st_tensor *ye = ws ? need(b, "y_exact", A4W4_ST_BF16, M, N, 0, &rc) : NULL;
    const a4w4_st_tensor *yo = ye ? need(b, "y_ordered", A4W4_ST_BF16, M, N, 0, &rc) : NULL;
    if (!yo)
        return rc;
    size_t prow = a4w4_act_scale_padded_rows(M), pcol = a4w4_act_scale_padded_cols(nb);
    const a4w4_st_tensor *ash = need(b, "a_scale_shuffled", A4W4_ST_U8, prow, pcol, 1, &rc);
    const a4w4_st_tensor *wsh = need(b, "w_fp4_shuffled", A4W4_ST_U8, N, K / 2, 1, &rc);
    const a4w4_st_tensor *wsw = need(b, "w_scale_swizzled", A4W4_ST_U8, N, nb, 1, &rc);
    const a4w4_st_tensor *x = need(b, "x", A4W4_ST_BF16, M, K, 1, &rc);
    if (rc)
        return rc;
    if (swz_promised && !wsw)
        return bad(b, "tensor '%s' promised by scale_swizzle_supported=true is missing",
                   "w_scale_swizzled");
    if (act && strcmp(act, "codes") && !x)
        return bad(b, "tensor 'x' promised by activation=%s is missing", act);

    /* 1. quantization from x in the bundle's mode */
    if (x) {
        const char *mode_name = a4w4_st_meta(&b->f, "round_mode");
        int mode = mode_name ? a4w4_scale_mode_parse(mode_name) : A4W4_ROUND_UP;
        if (mode < 0)
            return bad(b, "metadata round_mode='%s' is not one of round_up, round_down, ceil, even",
                       mode_name);
        uint16_t *xc = malloc(M * K * 2);
        if (!xc)
            return bad(b, "out of memory");
        memcpy(xc, x->data, M * K * 2);
        int f = check_quant(b, out, xc, A4W4_IN_BF16, M, K, (a4w4_scale_mode)mode, "a_fp4",
                            "a_scale", ash ? "a_scale_shuffled" : NULL, &rc);
        free(xc);
        if (rc)
            return rc;
        if (f > 0)
            fails += f;
    }

    /* 2. layouts */
    uint8_t *buf = malloc(N * K / 2 > prow * pcol ? N * K / 2 : prow * pcol);
    if (!buf)
        return bad(b, "out of memory");
    if (ash) {
        a4w4_act_scale_shuffle(as->data, M, nb, A4W4_ACT_SCALE_FILL_DEFAULT,
                               A4W4_ACT_SCALE_FILL_DEFAULT, buf);
        fails += add_bytes(out, "a_scale_shuffled (pad 0x7F/0x7F)", buf, ash->data, prow, pcol, NULL);
    } else {
        add_na(out, "a_scale_shuffled", "not in the bundle");
    }
    if (wsh) {
        if (a4w4_preshuffle(w->data, N, K, buf) == A4W4_OK)
            fails += add_bytes(out, "w_fp4_shuffled", buf, wsh->data, N, K / 2, NULL);
        else
            fails += add_unexpected(out, "w_fp4_shuffled",
                                    "present although preshuffle is unsupported (N % 16, K % 64)");
    } else {
        add_na(out, "w_fp4_shuffled", a4w4_preshuffle_supported(N, K) ? "not in the bundle"
                                                                      : "preshuffle needs N % 16 == 0 and K % 64 == 0");
    }
    if (wsw) {
        if (a4w4_scale_swizzle(ws->data, N, nb, buf) == A4W4_OK)
            fails += add_bytes(out, "w_scale_swizzled", buf, wsw->data, N, nb, NULL);
        else
            fails += add_unexpected(out, "w_scale_swizzled",
                                    "present although the swizzle is unsupported (N % 32, (K/32) % 8)");
    } else {
        add_na(out, "w_scale_swizzled", a4w4_scale_swizzle_supported(2, N, nb) ? "not in the bundle"
                                                                               : "swizzle needs N % 32 == 0 and (K/32) % 8 == 0");
    }
    free(buf);

    /* 3. GEMM oracles and the CPU systems under test */
    uint16_t *y = malloc(M * N * 2);
    if (!y)
        return bad(b, "out of memory");
    a4w4_gemm_exact(a->data, as->data, w->data, ws->data, M, N, K, y, NULL);
    fails += add_bf16(out, "y_exact (exact oracle)", y, ye, M, N);
    a4w4_gemm_ordered(a->data, as->data, w->data, ws->data, M, N, K, 1, y, NULL);
    fails += add_bf16(out, "y_ordered (ordered(1) oracle)", y, yo, M, N);

    const char *eao = a4w4_st_meta(&b->f, "exact_any_order");
    if (eao && !strcmp(eao, "true")) {
        size_t proven = 0;
        for (size_t m = 0; m < M; m++)
            for (size_t n = 0; n < N; n++) {
                a4w4_dot_operands op = {a->data + m * K / 2, as->data + m * nb,
                                        w->data + n * K / 2, ws->data + n * nb, K};
                proven += (size_t)a4w4_exact_regime(&op);
            }
        a4w4_check *c = a4w4_check_list_add(out);
        if (c) {
            memset(c, 0, sizeof *c);
            snprintf(c->subject, sizeof c->subject, "exact_any_order=true (exact-regime prover)");
            c->checked = M * N;
            c->mismatches = M * N - proven;
            c->verdict = proven == M * N ? A4W4_CHECK_PASS : A4W4_CHECK_FAIL;
            c->elem_bytes = 1;
            snprintf(c->note, sizeof c->note, "%zu of %zu outputs proven in the exact regime", proven, M * N);
            fails += c->verdict == A4W4_CHECK_FAIL;
        }
    }

    if (wsh && wsw && ash) {
        int r = a4w4_cpu_asm_gemm(a->data, ash->data, wsh->data, wsw->data, M, N, K, NULL, 0,
                                  NULL, 0, y);
        if (r == A4W4_OK)
            fails += add_bf16(out, "cpu-asm vs y_ordered", y, yo, M, N);
        else
            add_na(out, "cpu-asm vs y_ordered", a4w4_status_str(r));
    } else {
        add_na(out, "cpu-asm vs y_ordered",
               "ASM layouts not applicable (needs w_fp4_shuffled, w_scale_swizzled, a_scale_shuffled)");
    }
    a4w4_cpu_fallback_gemm(a->data, as->data, w->data, ws->data, M, N, K, NULL, 0, NULL, 0, y);
    fails += add_bf16(out, "cpu-fallback vs y_ordered", y, yo, M, N);
    free(y);
    return fails ? 1 : 0;
}

int a4w4_verify_bundle(const char *path, a4w4_check_list *out, size_t *dims, char *err,
                       size_t errlen)
{
    bundle b = {path, {0}, err, errlen};
    char lerr[256];
    if (a4w4_st_load(path, &b.f, lerr, sizeof lerr) != 0) {
        snprintf(err, errlen, "%s", lerr);
        return 2;
    }
    const char *fmt = a4w4_st_meta(&b.f, "format");
    int quant = fmt && !strcmp(fmt, "a4w4-quant/1");
    if (dims) {
        dims[0] = meta_size(&b, quant ? "rows" : "M");
        dims[1] = quant ? 0 : meta_size(&b, "N");
        dims[2] = meta_size(&b, "K");
    }
    int rc;
    if (fmt && !strcmp(fmt, "a4w4-case/1"))
        rc = verify_case_bundle(&b, out);
    else if (fmt && !strcmp(fmt, "a4w4-quant/1"))
        rc = verify_quant_bundle(&b, out);
    else
        rc = bad(&b, "metadata format='%s' is not a4w4-case/1 or a4w4-quant/1 (contracts §7)",
                 fmt ? fmt : "(missing)");
    a4w4_st_free(&b.f);
    return rc;
}
