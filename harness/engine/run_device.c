/* run_device.c — the device judge's use (engine/devjudge.h, runner_internal.h): a GEMM
 * baseline on the device, a layout or quantizer backend's bytes on the device, and a case's
 * device oracle entry with the C oracles' re-check of the judge on the sample. */
#include "runner_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

/* The device path's baseline: the backend on every output, compared on the device into
 * g->cmp; its outputs at the sample come back in g->y. The device buffers are the judge's:
 * the host's guard zones and operand digests (engine/integrity.h) do not see them. */
int run_baseline_dev(gemm_run *g, a4w4_entry_result *e)
{
    a4w4_comparison dc;
    a4w4_devcall call;
    int brc = A4W4_OK;
    a4w4_out_poison(&g->y);
    g->args.y = g->y.y;
    if (g->dev->run(g->dev->self, g->b, &g->args, 0, &brc, &dc, &call, g->why, sizeof g->why))
        return brc == A4W4_OK ? A4W4_EINVAL : brc;
    e->run_ms = call.run_ms;
    e->has_run = 1;
    if (brc == A4W4_OK) {
        g->cmp = dc;
        if (call.has_y_hash)
            run_note_repeat(g, e, call.y_hash);
    }
    return brc;
}

/* Outputs at sample s of the row-major [M, N] all into y (s's grid). */
static void take_sample(const a4w4_sample *s, const uint16_t *all, size_t N, uint16_t *y)
{
    if (s->full) {
        memcpy(y, all, s->nrows * N * 2);
        return;
    }
    for (size_t i = 0; i < s->nrows; i++)
        for (size_t j = 0; j < s->ncols; j++)
            y[i * s->ncols + j] = all[s->rows[i] * N + s->cols[j]];
}

/* The backend on every output into yall, gathered back whole (variant: after a refill). */
static int run_gather_all(gemm_run *g, int variant, uint16_t *yall, a4w4_comparison *dc,
                          a4w4_devcall *call, int *brc)
{
    const a4w4_sample all = {NULL, g->d->M, NULL, g->d->N, 1};
    g->args.s = &all;
    g->args.y = yall;
    int bad = g->dev->run(g->dev->self, g->b, &g->args, variant, brc, dc, call, g->why,
                          sizeof g->why);
    g->args.s = g->s;
    g->args.y = g->y.y;
    return bad;
}

/* FNV-1a 64 of n outputs: the baseline's hash for the stale-result check. */
static unsigned long long hash_of(const uint16_t *y, size_t n)
{
    unsigned long long h = 0xCBF29CE484222325ull;
    for (size_t k = 0; k < n; k++) {
        h = (h ^ (y[k] & 0xFFu)) * 0x100000001B3ull;
        h = (h ^ (y[k] >> 8)) * 0x100000001B3ull;
    }
    return h;
}

/* The device judge's bounded(S) limits of every output (computed on the device, held equal
 * to the C oracles' by recheck on the sample) into L, from the arrays js gathered. */
static void limits_from(const a4w4_devsample *js, size_t n, a4w4_bounded_limits *L)
{
    for (size_t k = 0; k < n; k++) {
        L[k].bound = js->bound[k];
        L[k].exact = js->exact_f64[k];
        L[k].inf_pos = js->infs[k] & 1;
        L[k].inf_neg = (js->infs[k] >> 1) & 1;
    }
}

/* The exact outputs (bf16, from the device judge) and the bounded(S) limits of every output
 * of g's case into g->exact_all and g->limits_all: the device judge's when it holds this S
 * (g->j->bounded_s; run_bounded_dev compares on the device then, so only a caller of another
 * S reaches here today), else the C oracles' fast form on the host. 0, or nonzero with
 * g->why. */
static int limits_of_all(gemm_run *g)
{
    const size_t M = g->d->M, N = g->d->N, n = M * N;
    const unsigned S = g->k->split < 1 ? 1 : g->k->split;
    const int on_dev = S == g->j->bounded_s;
    const a4w4_sample all = {NULL, M, NULL, N, 1};
    double *B = on_dev ? malloc(n * 8) : NULL, *E = on_dev ? malloc(n * 8) : NULL;
    uint8_t *inf = on_dev ? malloc(n) : NULL;
    g->exact_all = malloc(n * 2);
    g->limits_all = malloc(n * sizeof *g->limits_all);
    a4w4_devsample js = {NULL, g->exact_all, NULL, NULL, B, E, inf, NULL};
    int bad = !g->exact_all || !g->limits_all || (on_dev && (!B || !E || !inf));
    if (!bad)
        bad = g->dev->sample(g->dev->self, &all, &js, g->why, sizeof g->why);
    if (!bad && !on_dev)
        a4w4_case_w_complete(g->d); /* the host's limits read every row of W */
    if (!bad && on_dev)
        limits_from(&js, n, g->limits_all);
    else if (!bad && a4w4_gemm_bounded_limits_fast(g->d->a_fp4.data, g->d->a_scale.data,
                                                   g->d->w_fp4.data, g->d->w_scale.data, M, N,
                                                   g->d->K, S, g->limits_all,
                                                   (double)n * (double)g->d->K < 0x1p22 ? 1u
                                                                                        : 0u))
        bad = 1;
    if (bad && !g->why[0])
        snprintf(g->why, sizeof g->why, "out of memory for the limits of %zu outputs", n);
    free(B);
    free(E);
    free(inf);
    return bad;
}

int run_bounded_dev(gemm_run *g, a4w4_entry_result *e)
{
    const size_t N = g->d->N, n = g->d->M * N;
    if ((g->k->split < 1 ? 1 : g->k->split) == g->j->bounded_s)
        return run_baseline_dev(g, e); /* judged on the device against the judge's limits */
    a4w4_comparison dc;
    a4w4_devcall call;
    int brc = A4W4_OK;
    a4w4_out_poison(&g->y);
    if (!(g->y_all = malloc(n * 2))) {
        snprintf(g->why, sizeof g->why, "out of memory for %zu outputs", n);
        return A4W4_ENOMEM;
    }
    if (run_gather_all(g, 0, g->y_all, &dc, &call, &brc))
        return brc == A4W4_OK ? A4W4_EINVAL : brc;
    e->run_ms = call.run_ms;
    e->has_run = 1;
    if (brc != A4W4_OK)
        return brc;
    if (limits_of_all(g)) {
        free(g->limits_all); /* no limits: the variants do not use them */
        g->limits_all = NULL;
        return A4W4_ENOMEM;
    }
    run_note_repeat(g, e, hash_of(g->y_all, n));
    take_sample(g->s, g->y_all, N, g->y.y);
    const a4w4_judge_grid grid = {N, NULL, NULL};
    a4w4_judge_bounded(&g->cmp, &grid, g->y_all, g->exact_all, g->limits_all, n, NULL);
    return A4W4_OK;
}

void run_bounded_dev_free(gemm_run *g)
{
    free(g->y_all);
    free(g->y2_all);
    free(g->exact_all);
    free(g->limits_all);
}

/* A bounded variant: every output back, those newly outside the bound (the baseline's
 * limits) counted. */
static size_t bounded_variant(gemm_run *g, const char *what, a4w4_entry_result *e)
{
    const size_t n = g->d->M * g->d->N;
    a4w4_comparison dc, c2;
    a4w4_devcall call;
    int brc = A4W4_OK;
    if (!g->y2_all && !(g->y2_all = malloc(n * 2))) {
        run_note(e->note, sizeof e->note, "out of memory (variant %s); ", what);
        return n;
    }
    int bad = run_gather_all(g, 1, g->y2_all, &dc, &call, &brc);
    g->variants_ms += call.run_ms;
    if (bad || brc != A4W4_OK) {
        run_note(e->note, sizeof e->note, "%s (variant %s, on the device); ",
                 g->why[0] ? g->why : a4w4_status_str(brc), what);
        return n;
    }
    const a4w4_judge_grid grid = {g->d->N, NULL, NULL};
    a4w4_judge_bounded(&c2, &grid, g->y2_all, g->exact_all, g->limits_all, n, NULL);
    return c2.mismatches > g->cmp.mismatches ? c2.mismatches - g->cmp.mismatches : 0;
}

/* 1 when bf16 bits a and b are equal or both NaN (the judge's and the C oracles' values). */
static int same_bits(uint16_t a, uint16_t b)
{
    return a == b || (a4w4_bf16_is_nan(a) && a4w4_bf16_is_nan(b));
}

/* A pad variant on the device (the runner refilled the pads): the backend's outputs that
 * change against its baseline, counted on the device (every output when the call failed,
 * which e's note names). */
size_t run_variant_dev(gemm_run *g, const char *what, a4w4_entry_result *e)
{
    if (g->limits_all)
        return bounded_variant(g, what, e);
    a4w4_comparison dc;
    a4w4_devcall call;
    int brc = A4W4_OK;
    a4w4_out_poison(&g->y2);
    g->args.y = g->y2.y;
    int bad = g->dev->run(g->dev->self, g->b, &g->args, 1, &brc, &dc, &call, g->why,
                          sizeof g->why);
    g->args.y = g->y.y;
    g->variants_ms += call.run_ms;
    if (bad || brc != A4W4_OK)
        run_note(e->note, sizeof e->note, "%s (variant %s, on the device); ",
                 g->why[0] ? g->why : a4w4_status_str(brc), what);
    else if (dc.mismatches && !g->cmp.mismatches)
        run_note(e->note, sizeof e->note, "variant %s judged on the device: its outputs "
                 "are not gathered back, so no failure map is built of them; ", what);
    return bad || brc != A4W4_OK ? g->d->M * g->d->N : dc.mismatches;
}

/* A layout or quantizer backend judged on the device: its bytes over the whole case. */
int run_bytes_dev(const a4w4_devjudge *dev, a4w4_backend *b, const a4w4_case *c,
                  const a4w4_case_data *d, a4w4_entry_result *e)
{
    static const char *const lay[3] = {"w_fp4_shuffled", "w_scale_swizzled", "a_scale_shuffled"};
    static const char *const qnt[2] = {"a_fp4", "a_scale"};
    static const a4w4_sample all = {.full = 1};
    a4w4_comparison dc;
    char why[512] = "";
    int brc = A4W4_OK, quant = b->type->quantize_device != NULL;
    size_t which = 0; /* the first mismatching tensor (dc.rec[0].col) */
    double t0 = a4w4_now() * 1e3;
    int bad = quant ? dev->quantize(dev->self, b, c, d, &brc, &dc, why, sizeof why)
                    : dev->layouts(dev->self, b, d, &brc, &dc, why, sizeof why);
    double ms = a4w4_now() * 1e3 - t0;
    a4w4_check chk;
    memset(&chk, 0, sizeof chk);
    chk.elem_bytes = 1;
    which = !bad && dc.nrec ? dc.rec[0].col : 0;
    if (brc == A4W4_EUNSUPPORTED)
        return run_byte_entry(c, b, &all, NULL, 0, ms, why[0] ? why : "not applicable", e);
    if (bad || brc != A4W4_OK) {
        a4w4_check_na(&chk, quant ? "quantize" : "layouts", why[0] ? why : a4w4_status_str(brc));
        chk.verdict = A4W4_CHECK_FAIL;
    } else {
        snprintf(chk.subject, sizeof chk.subject, "%s", quant ? qnt[which % 2] : lay[which % 3]);
        chk.checked = dc.checked;
        chk.mismatches = dc.mismatches;
        chk.verdict = dc.mismatches ? A4W4_CHECK_FAIL : A4W4_CHECK_PASS;
        chk.first_row = dc.nrec ? dc.rec[0].row : 0;
        chk.got = dc.nrec ? dc.rec[0].got : 0;
        chk.expected = dc.nrec ? dc.rec[0].expected : 0;
    }
    int fail = run_byte_entry(c, b, &all, &chk, 1, ms, NULL, e);
    if (fail && chk.mismatches && !e->signature[0]) { /* no map: the bytes stay on the device */
        snprintf(e->signature, sizeof e->signature, "%s: %zu of %zu bytes differ (compared on "
                 "the device: the bytes are not gathered back, so whether they are a "
                 "permutation is not known)", chk.subject, chk.mismatches, chk.checked);
        snprintf(e->signature_class, sizeof e->signature_class, "%s",
                 quant ? (which % 2 ? "scales" : "codes") : "layout-bytes");
    }
    return fail;
}

/* ---- the device judge's case ------------------------------------------------------------- */

/* 1 when some selected backend has a device form. */
int run_wants_device(const a4w4_runner *r)
{
    for (size_t i = 0; r->dev && i < r->nbackends; i++) {
        const a4w4_backend_type *t = r->backends[i].type;
        if (t->run_device || t->layouts_device || t->quantize_device)
            return 1;
    }
    return 0;
}

/* What the case d's device backends need of the judge: the S of an ordered(S) one (S > 1)
 * and the largest split-K workspace of those (SIZE_MAX for one that does not say: the judge
 * then reserves what the largest kernel family wants), the S of a bounded(S) one (the last
 * selected, if several S; a bounded backend of another S gets its limits on the host) and of
 * an atomic(S) one (the last selected: the judge computes any S on request, the sample
 * re-checks this one); the others are judged on the host (on_device). */
a4w4_devneeds run_device_needs(const a4w4_runner *r, const a4w4_case_data *d)
{
    a4w4_devneeds n = {0, 0, 0, 0};
    for (size_t i = 0; i < r->nbackends; i++) {
        const a4w4_backend *b = &r->backends[i];
        if (b->type->run_device && !strncmp(b->contract, "ordered(", 8) && b->split > 1) {
            n.ordered_s = b->split;
            const size_t w = b->type->device_workspace
                                 ? b->type->device_workspace(b->ctx, d->M, d->N, d->K)
                                 : SIZE_MAX;
            n.work_bytes = w > n.work_bytes ? w : n.work_bytes;
        }
        if (b->type->run_device && !strncmp(b->contract, "bounded", 7))
            n.bounded_s = b->split ? b->split : 1;
        if (b->type->run_device && !strncmp(b->contract, "atomic(", 7))
            n.atomic_s = b->split;
    }
    return n;
}

/* 1 when doubles a and b differ in a bit and are not both NaN. */
static int other_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) && !(isnan(a) && isnan(b));
}

/* 1 when the judge's atomic(S) split values jq[0..n) and the C oracles' cq name the same set
 * of orders: equal bits, or a NaN in both (every order NaN; the C oracle puts NaN in every
 * split of such an output, the judge in the splits that read the 0xFF scale). */
static int same_splits(const uint16_t *jq, const uint16_t *cq, unsigned n)
{
    int jn = 0, cn = 0, eq = 1;
    for (unsigned j = 0; j < n; j++) {
        jn |= a4w4_bf16_is_nan(jq[j]);
        cn |= a4w4_bf16_is_nan(cq[j]);
        eq &= jq[j] == cq[j];
    }
    return eq || (jn && cn);
}

/* What the judge's value k of js differs from the C oracles' in (o; cs its ordered(S), L its
 * bounded(S) limits, cq its atomic(Sa) split values (n' = na), NULL when not needed), or
 * NULL. */
static const char *judge_differs(const a4w4_devsample *js, a4w4_oracles *o, const uint16_t *cs,
                                 const a4w4_bounded_limits *L, const uint16_t *cq, unsigned Sa,
                                 unsigned na, size_t k)
{
    uint32_t jf, cf;
    memcpy(&jf, &js->exact_f32[k], 4);
    memcpy(&cf, &o->exact_f32[k], 4);
    if (!same_bits(js->ordered1[k], o->ordered1[k]))
        return "ordered(1)";
    if (!same_bits(js->exact[k], o->exact[k]))
        return "exact";
    if (!(jf == cf || (isnan(js->exact_f32[k]) && isnan(o->exact_f32[k]))))
        return "exact fp32";
    if (cs && !same_bits(js->ordered_s[k], cs[k]))
        return "ordered(S)";
    if (L && (other_double(js->bound[k], L[k].bound) ||
              other_double(js->exact_f64[k], L[k].exact) ||
              js->infs[k] != ((L[k].inf_pos ? 1 : 0) | (L[k].inf_neg ? 2 : 0))))
        return "bounded(S) limits";
    if (cq && !same_splits(js->atomic_q + k * Sa, cq + k * Sa, na))
        return "atomic(S) split values";
    return NULL;
}

/* Values of the judge at the sample against the C oracles, bit for bit: the judge judged.
 * ordered(1), exact (bf16 and fp32), ordered(S), the bounded(S) limits (the bound, the
 * exact value in double, where ±Inf is allowed) and atomic(S)'s split values on every sampled
 * output. Appends to note;
 * returns the mismatches. */
static size_t recheck(const a4w4_devjudge *dev, const a4w4_devneeds *need, const a4w4_sample *s,
                      a4w4_oracles *o, char *note, size_t notelen)
{
    const size_t n = o->count, Sb = need->bounded_s, Sa = need->atomic_s;
    a4w4_devsample js = {malloc(n * 2), malloc(n * 2), need->ordered_s ? malloc(n * 2) : NULL,
                         malloc(n * 4), Sb ? malloc(n * 8) : NULL, Sb ? malloc(n * 8) : NULL,
                         Sb ? malloc(n) : NULL, Sa ? malloc(n * Sa * 2 + 2) : NULL};
    const uint16_t *cs = need->ordered_s ? a4w4_oracles_ordered(o, need->ordered_s) : NULL;
    const a4w4_bounded_limits *L = Sb ? a4w4_oracles_bound(o, (unsigned)Sb) : NULL;
    unsigned na = 0;
    const uint16_t *cq = Sa ? a4w4_oracles_atomic(o, (unsigned)Sa, &na, NULL) : NULL;
    char why[256] = "";
    size_t bad = 0, first = SIZE_MAX;
    const char *what = "";
    if (!js.ordered1 || !js.exact || !js.exact_f32 || (need->ordered_s && (!js.ordered_s || !cs)) ||
        (Sb && (!js.bound || !js.exact_f64 || !js.infs || !L)) || (Sa && (!js.atomic_q || !cq)) ||
        dev->sample(dev->self, s, &js, why, sizeof why)) {
        run_note(note, notelen, "%sthe C oracles' re-check of the GPU judge failed to run: %s",
                 note[0] ? "; " : "", why[0] ? why : "out of memory");
        bad = 1;
    } else {
        for (size_t k = 0; k < n; k++) {
            const char *w = judge_differs(&js, o, cs, L, cq, (unsigned)Sa, na, k);
            if (w && first == SIZE_MAX) {
                first = k;
                what = w;
            }
            bad += w != NULL;
        }
        if (bad)
            run_note(note, notelen, "%sTHE GPU JUDGE DISAGREES WITH THE C ORACLES on %zu of %zu "
                     "sampled outputs (first: %s at (%zu, %zu))", note[0] ? "; " : "", bad, n,
                     what, row_at(s, first / s->ncols), col_at(s, first % s->ncols));
    }
    free(js.ordered1);
    free(js.exact);
    free(js.ordered_s);
    free(js.exact_f32);
    free(js.bound);
    free(js.exact_f64);
    free(js.infs);
    free(js.atomic_q);
    return bad;
}

/* The oracle's entry on the device: ordered(1) == exact on every output the prover holds for,
 * the special regime's NaN set over every output, and the C oracles' re-check of the judge on
 * the sample. *dor receives the judge's facts. Returns 1 when it fails. */
int run_oracle_entry_dev(const a4w4_devjudge *dev, const a4w4_devneeds *need,
                         const a4w4_case *c, const a4w4_case_data *d, const a4w4_sample *s,
                         a4w4_oracles *o, a4w4_devoracle *dor, a4w4_entry_result *e)
{
    static const a4w4_sample all = {.full = 1};
    char note[768] = "", why[256] = "";
    a4w4_comparison cmp;
    memset(&cmp, 0, sizeof cmp);
    int fail = 0, na = 0;
    if (dev->oracle(dev->self, d, c->regime == A4W4_REGIME_SPECIAL, dor, why, sizeof why)) {
        snprintf(note, sizeof note, "the GPU judge failed: %s", why);
        fail = 1;
    } else {
        cmp = dor->ord_vs_exact;
        cmp.checked = dor->outputs;
        fail = cmp.mismatches != 0;
        na = dor->proven != dor->outputs;
        if (na)
            snprintf(note, sizeof note, "%zu of %zu outputs outside the exact regime: exact is a "
                     "reference there, not a verdict", dor->outputs - dor->proven, dor->outputs);
        if (c->regime == A4W4_REGIME_SPECIAL) {
            run_note(note, sizeof note, "%sspecial blocks: %zu NaN outputs, %zu outside the "
                     "dependent set", note[0] ? "; " : "", dor->nans, dor->nan_wrong);
            fail |= dor->nan_wrong != 0;
            na = 0;
        }
        run_note(note, sizeof note, "%sGPU judge: every output; %zu sampled outputs re-checked "
                 "by the C oracles%s", note[0] ? "; " : "", o->count,
                 dor->uncertain ? "" : "");
        if (dor->uncertain)
            run_note(note, sizeof note, "; %zu outputs rounded by the plain C oracle",
                     dor->uncertain);
        if (dor->blocks > 1)
            run_note(note, sizeof note, "; judged in %zu blocks of up to %zu rows (the judge's "
                     "memory ceiling)", dor->blocks, dor->block_rows);
        if (recheck(dev, need, s, o, note, sizeof note))
            fail = 1, na = 0;
    }
    run_case_identity(e, c, A4W4_ENTRY_OUTPUTS, "oracle", "ordered(1) == exact");
    run_put_comparison(e, &cmp, &all, dor->judge_ms, dor->proven,
                   a4w4_judge_verdict(fail, na && !fail ? A4W4_VERDICT_NA : A4W4_VERDICT_PASS,
                                      0, 0));
    snprintf(e->note, sizeof e->note, "%s", note);
    return fail;
}

/* The device judge of case c (data d) opened for need, or NULL with why: the case is one the
 * judge does not rule on as the C oracles do (the range regime's overflow rules, contracts
 * §4.3; E8M0 code 0 unless the run states the judge's reading 2^-127, contracts §1), or it
 * could not take it. */
const a4w4_devjudge *run_device_for(const a4w4_runner *r, const a4w4_case *c,
                                    const a4w4_case_data *d, const a4w4_devneeds *need,
                                    char *why, size_t whylen, int *nofit)
{
    *nofit = 0;
    if (c->regime == A4W4_REGIME_RANGE) {
        snprintf(why, whylen, "the range regime's limits (contracts §4.3) are the C oracles'");
        return NULL;
    }
    if (d->code0 && r->code0_reading != A4W4_CODE0_OCP) {
        snprintf(why, whylen, "E8M0 code 0 present, judged under %s (contracts §1) by the C "
                 "oracles", r->code0_reading ? "2^-126" : "both readings");
        return NULL;
    }
    const int rc = r->dev->open(r->dev->self, c, d, need, why, whylen);
    *nofit = rc == A4W4_DEVJUDGE_NOFIT;
    return rc ? NULL : r->dev;
}
