/* run_bytes.c — the layout and quantizer backends' entries (runner.h, runner_internal.h): their
 * bytes against the reference layouts (contracts §3) and quantizers (contracts §2). */
#include "runner_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_layout.h"
#include "check.h"
#include "fsutil.h"

/* Finish a byte-comparison entry (layout and quantizer backends) from its checks. */
int run_byte_entry(const a4w4_case *c, const a4w4_backend *b, const a4w4_sample *s,
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
    run_case_identity(e, c, A4W4_ENTRY_BYTES, b->name, b->contract);
    a4w4_entry_set_check(e, &total);
    e->sampled = !s->full;
    e->time_ms = ms;
    return total.verdict == A4W4_CHECK_FAIL;
}

/* A layout backend: its contracts §3 layouts of d against ref's, byte for byte. */
int run_layout_backend(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
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
    run_enter(b);
    int rc = fail ? A4W4_ENOMEM
                  : b->type->layouts(b->ctx, d, got[0], got[1], got[2], why, sizeof why);
    run_leave(b);
    double ms = a4w4_now() * 1e3 - t0;
    if (rc == A4W4_OK)
        for (int i = 0; i < 3; i++)
            if (got[i])
                a4w4_check_bytes(&chk[n++], names[i], got[i], ref[i]->data, 1, ref[i]->len, NULL);
    if (rc != A4W4_OK && rc != A4W4_EUNSUPPORTED) {
        a4w4_check_na(&chk[n], "layouts", why[0] ? why : a4w4_status_str(rc));
        chk[n++].verdict = A4W4_CHECK_FAIL;
    }
    fail = run_byte_entry(c, b, s, chk, n, ms, rc == A4W4_EUNSUPPORTED ? why : NULL, e);
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
    run_enter(b);
    int rc = b->type->quantize(b->ctx, qb->x, rows, K, (int)c->mode, qb->q, qb->sc, why,
                               sizeof why);
    run_leave(b);
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
int run_quant_backend(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                      const a4w4_sample *s, a4w4_entry_result *e)
{
    if (!d->x)
        return run_byte_entry(c, b, s, NULL, 0, 0,
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
    int fail = run_byte_entry(c, b, s, chk, n, ms, NULL, e);
    quant_bufs_free(&qb);
    return fail;
}
