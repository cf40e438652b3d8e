/* discover_fit.c — the candidate contracts consistent with `discover`'s probes, and their
 * validation on fresh random cases of every regime (contracts §4.4 step 7): a contract is
 * accepted only when the tree oracle (ref/a4w4_tree.h) predicts every checked output of every
 * validation case bit for bit (bounded(S): every output within its bound, contracts §4.1). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_bound.h"
#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "discover_fit.h"

/* ---- validation --------------------------------------------------------------------------- */

typedef struct {
    size_t *rows, nrows, *cols, ncols;
} grid;

/* The outputs checked per validation case: every one when max is 0 or M * N <= max; else a
 * grid of rows 0..3, 5, M-2, M-1 and columns 0, 1, 5, N-1 (the generator's special and
 * zero-sign rows, contracts §4.1) filled up with seeded random ones, about max outputs. */
static void pick(size_t len, size_t want, const size_t *fixed, size_t nfixed, a4w4_rng *r,
                 size_t *out, size_t *n, uint8_t *used)
{
    for (size_t i = 0; i < nfixed && *n < want; i++)
        if (fixed[i] < len && !used[fixed[i]])
            used[out[(*n)++] = fixed[i]] = 1;
    for (size_t k = 0; *n < want && k < 64 * len; k++) {
        size_t x = (size_t)(a4w4_rng_next(r) % len);
        if (!used[x])
            used[out[(*n)++] = x] = 1;
    }
    for (size_t x = 0; *n < want && x < len; x++)
        if (!used[x])
            used[out[(*n)++] = x] = 1;
}

static int make_grid(size_t M, size_t N, size_t max, uint64_t seed, grid *g)
{
    memset(g, 0, sizeof *g);
    size_t nr = M, nc = N;
    if (max && M * N > max) {
        size_t side = 1;
        while ((side + 1) * (side + 1) <= max)
            side++;
        nr = M < side ? M : side;
        nc = max / nr < N ? max / nr : N;
    }
    g->rows = malloc(nr * sizeof *g->rows);
    g->cols = malloc(nc * sizeof *g->cols);
    uint8_t *used_r = calloc(M, 1), *used_c = calloc(N, 1);
    int rc = -1;
    if (g->rows && g->cols && used_r && used_c) {
        size_t fr[7] = {0, 1, 2, 3, 5, M - 2, M - 1}, fc[4] = {0, 1, 5, N - 1};
        a4w4_rng r;
        a4w4_rng_init(&r, seed, "discover-grid", 0);
        pick(M, nr, fr, M >= 2 ? 7 : 1, &r, g->rows, &g->nrows, used_r);
        pick(N, nc, fc, N >= 2 ? 4 : 1, &r, g->cols, &g->ncols, used_c);
        rc = 0;
    }
    free(used_r);
    free(used_c);
    return rc;
}

static void grid_free(grid *g)
{
    free(g->rows);
    free(g->cols);
}

static int bf16_nan(uint16_t h) { return (h & 0x7FFF) > 0x7F80; }

/* The bf16 output contract c gives for op into *e (bounded: the exact value's). 0, or -1 when
 * the contract does not apply to op's K. */
static int expect_of(const a4w4_contract *c, const a4w4_dot_operands *op, uint16_t *e)
{
    if (c->kind == A4W4_CONTRACT_EXACT || c->kind == A4W4_CONTRACT_BOUNDED) {
        a4w4_dot_exact(op, e, NULL);
        return 0;
    }
    a4w4_tree t = c->tree;
    if (c->kind == A4W4_CONTRACT_ORDERED) {
        a4w4_tree_defaults(&t);
        t.split = c->split;
    }
    return a4w4_dot_tree(op, &t, e, NULL) == A4W4_OK ? 0 : -1;
}

/* One output against contract c: 1 when it is predicted (bounded: within its bound). */
static int predicted(const a4w4_contract *c, const a4w4_dot_operands *op, uint16_t got,
                     uint16_t *expected)
{
    if (c->kind == A4W4_CONTRACT_BOUNDED) {
        float e;
        a4w4_dot_exact(op, expected, &e);
        if (bf16_nan(got) || isnan(e))
            return bf16_nan(got) && isnan(e);
        double g = a4w4_bf16_to_f32(got);
        if (isinf(e) || isinf(g))
            return g == e;
        double B = a4w4_dot_bounded_bound(op, c->split);
        return !isnan(B) && fabs(g - e) <= B + 0x1p-24 * fabs(e) + 0x1p-149;
    }
    if (expect_of(c, op, expected))
        return 0;
    return got == *expected || (bf16_nan(got) && bf16_nan(*expected));
}

/* ---- defects (contracts §4.4 step 7) -------------------------------------------------------
 * An output no order can give is a defect of the kernel, not evidence about its order. What
 * every order gives, by the reason found: */
enum {
    DEFECT_NONE = 0,
    DEFECT_FINITE,   /* NaN or +-inf where every candidate left open gives a finite value */
    DEFECT_NAN_IN,   /* not NaN where a scale 0xFF makes every order NaN */
    DEFECT_ZERO,     /* nonzero where every product is zero: every order gives +-0 */
    DEFECT_NONNEG,   /* negative where no product is negative: every order gives >= 0 */
    DEFECT_NONPOS    /* positive where no product is positive: every order gives <= 0 */
};

static const char *defect_text(int why)
{
    switch (why) {
    case DEFECT_FINITE:
        return "a finite value";
    case DEFECT_NAN_IN:
        return "NaN (a scale is 0xFF)";
    case DEFECT_ZERO:
        return "+-0 (every product is zero)";
    case DEFECT_NONNEG:
        return "a value >= 0 (no product is negative)";
    case DEFECT_NONPOS:
        return "a value <= 0 (no product is positive)";
    }
    return "?";
}

static int bf16_nonfinite(uint16_t h) { return (h & 0x7FFF) >= 0x7F80; }

/* 1 when contract c gives a finite output for op (bounded(S): every value within the bound
 * of the exact one is a finite bf16; 0x1.fep127 is the largest). */
static int finite_under(const a4w4_contract *c, const a4w4_dot_operands *op)
{
    uint16_t e = 0;
    if (c->kind == A4W4_CONTRACT_BOUNDED) {
        float x;
        a4w4_dot_exact(op, &e, &x);
        double B = a4w4_dot_bounded_bound(op, c->split);
        return isfinite(x) && !isnan(B) && fabs((double)x) + B <= 0x1.fep127;
    }
    return expect_of(c, op, &e) == 0 && !bf16_nonfinite(e);
}

/* T = the sum of the magnitudes of op's K products (no scale is 0xFF), in double: each block's
 * sum is an integer below 2^13 times 2^(sa+sb-256), exact; the sum over at most 8192 blocks
 * is within a relative 2^-40 of T. */
static double sum_of_magnitudes(const a4w4_dot_operands *op)
{
    double T = 0;
    for (size_t b = 0; b < op->K / 32; b++) {
        long dot = 0;
        for (size_t k = b * 32; k < b * 32 + 32; k++)
            dot += labs((long)a4w4_e2m1_to_int2x(a4w4_fp4_get(op->a_fp4, k)) *
                        a4w4_e2m1_to_int2x(a4w4_fp4_get(op->w_fp4, k)));
        T += ldexp((double)dot, (int)op->a_scale[b] + (int)op->w_scale[b] - 256);
    }
    return T;
}

/* 1 for a contract whose every node result is an fp32 value: exact, ordered(S), a tree with
 * acc=fp32 (contracts §4.4 step 7: none of them overflows while T <= 2^126). */
static int fp32_accumulator(const a4w4_contract *c)
{
    return c->kind == A4W4_CONTRACT_EXACT || c->kind == A4W4_CONTRACT_ORDERED ||
           (c->kind == A4W4_CONTRACT_TREE && c->tree.acc == A4W4_ACC_FP32);
}

/* What the products' signs alone fix under every order (rounding is monotone and odd in every
 * node, the alignment truncates toward zero): DEFECT_NAN_IN, DEFECT_ZERO, DEFECT_NONNEG,
 * DEFECT_NONPOS, or DEFECT_NONE when the products have both signs. */
static int sign_rule(const a4w4_dot_operands *op)
{
    for (size_t b = 0; b < op->K / 32; b++)
        if (op->a_scale[b] == 0xFF || op->w_scale[b] == 0xFF)
            return DEFECT_NAN_IN;
    int pos = 0, neg = 0;
    for (size_t k = 0; k < op->K && !(pos && neg); k++) {
        int p = a4w4_e2m1_to_int2x(a4w4_fp4_get(op->a_fp4, k)) *
                a4w4_e2m1_to_int2x(a4w4_fp4_get(op->w_fp4, k));
        pos |= p > 0;
        neg |= p < 0;
    }
    return !pos && !neg ? DEFECT_ZERO : !neg ? DEFECT_NONNEG : !pos ? DEFECT_NONPOS : DEFECT_NONE;
}

/* Is output got of op, which the checked contract does not predict, a defect? Its DEFECT_*
 * reason, or DEFECT_NONE (a miss: evidence against the contract). n candidates cand[] are
 * every order the probes leave open. */
static int classify(const a4w4_contract *cand, size_t n, const a4w4_dot_operands *op,
                    uint16_t got)
{
    int sg = sign_rule(op);
    if (sg == DEFECT_NAN_IN)
        return bf16_nan(got) ? DEFECT_NONE : DEFECT_NAN_IN;
    if (bf16_nonfinite(got)) {
        int small = sum_of_magnitudes(op) <= 0x1p126;
        for (size_t i = 0; i < n; i++)
            if (fp32_accumulator(&cand[i]) ? !small : !finite_under(&cand[i], op))
                return DEFECT_NONE;
        return n ? DEFECT_FINITE : DEFECT_NONE;
    }
    int neg = (got & 0x8000) != 0, nonzero = (got & 0x7FFF) != 0;
    if (nonzero && (sg == DEFECT_ZERO || (sg == DEFECT_NONNEG && neg) ||
                    (sg == DEFECT_NONPOS && !neg)))
        return sg;
    return DEFECT_NONE;
}


/* One validation output: item k of grid g over case d's outputs y; ncand candidates cand[]
 * (every order left open) decide which misses are defects. */
typedef struct {
    const a4w4_contract *c;
    const a4w4_case_data *d;
    const uint16_t *y;
    const grid *g;
    const a4w4_contract *cand;
    size_t ncand;
} vctx;

static int check_output(const void *ctx, size_t k, size_t *row, size_t *col, uint16_t *got,
                        uint16_t *expected, int *why)
{
    const vctx *v = ctx;
    size_t K = v->d->K, N = v->d->N;
    size_t m = v->g->rows[k / v->g->ncols], n = v->g->cols[k % v->g->ncols];
    a4w4_dot_operands op = {v->d->a_fp4.data + m * (K / 2), v->d->a_scale.data + m * (K / 32),
                            v->d->w_fp4.data + n * (K / 2), v->d->w_scale.data + n * (K / 32), K};
    *row = m;
    *col = n;
    *got = v->y[m * N + n];
    if (predicted(v->c, &op, *got, expected))
        return CHECK_PREDICTED;
    *why = classify(v->cand, v->ncand, &op, *got);
    return *why ? CHECK_DEFECT : CHECK_MISS;
}

/* ---- the probes ------------------------------------------------------------------------- */

/* How many window and two-unit probes the check takes at most (evenly spaced); every other
 * probe is checked. */
#define MAX_STRUCTURE_CHECKS 256

/* The probes of a history to check against contract c. */
typedef struct {
    const dc_shape *s;
    const a4w4_contract *c;
    const size_t *pick; /* history indices */
} pctx;

/* Probe pick[k]: its row is the pattern against 1.0 at scale 2^0, as the kernel saw it. */
static int check_probe(const void *ctx, size_t k, size_t *row, size_t *col, uint16_t *got,
                       uint16_t *expected, int *why)
{
    const pctx *p = ctx;
    size_t i = p->pick[k], K = p->s->sh.K;
    *why = DEFECT_NONE; /* a probe's output is never a defect: it decided the order */
    uint8_t *buf = malloc(K + K / 16);
    *row = i; /* the first failure reported is the earliest probe */
    *col = 0;
    *got = p->s->hist_bits[i];
    if (!buf)
        return 0;
    uint8_t *pf = buf, *ps = buf + K / 2, *of = ps + K / 32, *os = of + K / 2;
    memset(of, 0x22, K / 2); /* 1.0 in both nibbles (contracts §1) */
    memset(os, 127, K / 32);
    dc_probe_write(&p->s->hist[i], K, pf, ps);
    a4w4_dot_operands op = {pf, ps, of, os, K};
    int ok = predicted(p->c, &op, *got, expected);
    free(buf);
    return ok;
}

/* The first probe of s's history that contract c does not predict (its index), or -1. */
static long probe_mismatch(const dc_shape *s, const a4w4_contract *c, int threads,
                           uint16_t *expected)
{
    size_t nstruct = 0, n = 0, k = 0;
    for (size_t i = 0; i < s->nhist; i++)
        nstruct += s->hist[i].kind == DC_GAP_COUNT || s->hist[i].kind == DC_GAP_PAIR;
    size_t stride = nstruct > MAX_STRUCTURE_CHECKS ? nstruct / MAX_STRUCTURE_CHECKS : 1;
    size_t *pick = malloc((s->nhist ? s->nhist : 1) * sizeof *pick);
    if (!pick)
        return -1;
    for (size_t i = 0; i < s->nhist; i++) {
        const dc_probe *pr = &s->hist[i];
        if ((pr->kind == DC_GAP_COUNT || pr->kind == DC_GAP_PAIR) && k++ % stride)
            continue;
        pick[n++] = i;
    }
    pctx p = {s, c, pick};
    miss first;
    size_t first_k = 0;
    int has = 0;
    dc_par_check(check_probe, &p, n, threads, 1, &first, &first_k, &has, NULL, SIZE_MAX, NULL,
              0);
    long bad = has ? (long)pick[first_k] : -1;
    if (has)
        *expected = first.expected;
    free(pick);
    return bad;
}

/* The validation of one candidate over every case and repeat. */
typedef struct {
    size_t checked, bad, defects, total; /* total: the outputs to check */
    char where[400]; /* the first miss: case, regime, output, bits */
    size_t bad_regime[6], defect_regime[6];
    defect_list dl;  /* the defects (at most MAX_DEFECTS_LISTED kept) */
} vresult;

/* Validate c on every case; the candidates L (every order left open) decide which misses are
 * defects. stop_early: stop at the first miss, or once the defects are more than half of all
 * the outputs to check (r->checked then counts the outputs checked so far). */
static void validate(const dc_shape *s, const a4w4_discover_opts *o, const a4w4_contract *c,
                     const cand_list *L, a4w4_case_data *data, const grid *grids,
                     int stop_early, vresult *r)
{
    free(r->dl.v);
    memset(r, 0, sizeof *r);
    size_t total = 0;
    for (size_t i = 0; i < s->nvcases; i++)
        for (unsigned rep = 0; rep < o->repeats; rep++)
            total += s->vy[i * o->repeats + rep] ? grids[i].nrows * grids[i].ncols : 0;
    for (size_t i = 0; i < s->nvcases; i++)
        for (unsigned rep = 0; rep < o->repeats; rep++) {
            const uint16_t *y = s->vy[i * o->repeats + rep];
            if (!y)
                continue;
            miss first;
            int has = 0;
            size_t nd = 0;
            vctx v = {c, &data[i], y, &grids[i], L->c, L->n};
            size_t bad = dc_par_check(check_output, &v, grids[i].nrows * grids[i].ncols,
                                   o->threads, stop_early, &first, NULL, &has, &nd,
                                   total / 2 - r->defects, &r->dl, i * o->repeats + rep);
            r->checked += grids[i].nrows * grids[i].ncols;
            r->bad += bad;
            r->defects += nd;
            r->bad_regime[s->vcases[i].regime] += bad;
            r->defect_regime[s->vcases[i].regime] += nd;
            if (has && !r->where[0])
                snprintf(r->where, sizeof r->where, "case %s (regime %s%s), output (%zu, %zu): "
                         "got 0x%04x, expected 0x%04x", s->vcases[i].name,
                         s->vcases[i].regime_text, rep ? ", a repeat" : "", first.row,
                         first.col, first.got, first.expected);
            if ((bad || r->defects > total / 2) && stop_early)
                goto out;
        }
out:
    r->total = total;
}

/* 1 when the defects are too many to accept an order beside them: more than half of the
 * checked outputs (contracts §4.4 step 7). */
static int defects_dominate(const vresult *r)
{
    return r->defects > r->total / 2;
}

static int defect_order(const void *x, const void *y)
{
    const defect *a = x, *b = y;
    if (a->vcase != b->vcase)
        return a->vcase < b->vcase ? -1 : 1;
    if (a->row != b->row)
        return a->row < b->row ? -1 : 1;
    return a->col < b->col ? -1 : a->col > b->col;
}

/* "case NAME (regime R), row r, col c, got 0x..., every order gives ..." of defect x. */
static void defect_line(const dc_shape *s, const a4w4_discover_opts *o, const defect *x,
                        char *buf, size_t len)
{
    const a4w4_case *c = &s->vcases[x->vcase / o->repeats];
    int rep = x->vcase % o->repeats != 0;
    if (x->why == DEFECT_FINITE)
        snprintf(buf, len, "case %s (regime %s%s), row %zu, col %zu: got 0x%04x, every order "
                 "left open gives a finite value (0x%04x under the accepted one)", c->name,
                 c->regime_text, rep ? ", a repeat" : "", x->row, x->col, x->got, x->expected);
    else
        snprintf(buf, len, "case %s (regime %s%s), row %zu, col %zu: got 0x%04x, every order "
                 "gives %s (0x%04x under the accepted one)", c->name, c->regime_text,
                 rep ? ", a repeat" : "", x->row, x->col, x->got, defect_text(x->why),
                 x->expected);
}

/* The defects of the accepted contract into the result and the evidence: the count by regime,
 * the first in res.defect_first, every kept one in s->defects_ev. */
static void record_defects(dc_shape *s, const a4w4_discover_opts *o, vresult *r)
{
    static const char *names[6] = {"exact", "normal", "wide", "special", "code0", "tiny"};
    char line[600], reg[200] = "";
    size_t off = 0;
    s->res.defects = r->defects;
    if (!r->defects)
        return;
    qsort(r->dl.v, r->dl.n, sizeof *r->dl.v, defect_order);
    for (int k = 0; k < 6 && off < sizeof reg; k++)
        if (r->defect_regime[k])
            off += (size_t)snprintf(reg + off, sizeof reg - off, "%s%s %zu", off ? ", " : "",
                                    names[k], r->defect_regime[k]);
    if (r->dl.n)
        defect_line(s, o, &r->dl.v[0], s->res.defect_first, sizeof s->res.defect_first);
    dc_text_add(&s->ev, "- defects: %zu of %zu checked outputs (%s) are outputs no order can "
                "give; they are the kernel's defects, not evidence about its order, and fail "
                "any judgement by this contract; first: %s\n", r->defects, r->checked, reg,
                s->res.defect_first);
    if (r->dl.n < r->defects)
        dc_text_add(&s->defects_ev, "%zu defects (%s), %d of them listed:\n\n", r->defects, reg,
                    MAX_DEFECTS_LISTED);
    else
        dc_text_add(&s->defects_ev, "%zu defects (%s):\n\n", r->defects, reg);
    for (size_t i = 0; i < r->dl.n; i++) {
        defect_line(s, o, &r->dl.v[i], line, sizeof line);
        dc_text_add(&s->defects_ev, "- %s\n", line);
    }
}

static void describe(const a4w4_contract *c, char *buf, size_t len)
{
    if (a4w4_contract_format(c, buf, len) < 0)
        snprintf(buf, len, "(unprintable)");
}

/* The regime breakdown of a failing validation. */
static void regimes(const vresult *r, char *buf, size_t len)
{
    static const char *names[6] = {"exact", "normal", "wide", "special", "code0", "tiny"};
    size_t o = 0;
    buf[0] = 0;
    for (int k = 0; k < 6 && o < len; k++)
        if (r->bad_regime[k])
            o += (size_t)snprintf(buf + o, len - o, "%s%s %zu", o ? ", " : "", names[k],
                                  r->bad_regime[k]);
}

/* The bounded(S) answer of a nondeterministic kernel: S = the splits its deterministic
 * structure shows (the splits' own gaps; the combine's may change run to run), at least one
 * more than the gaps whose probes changed. */
static unsigned bounded_splits(dc_shape *s)
{
    unsigned S = (unsigned)s->nvaried_gaps + 1;
    dc_family f;
    if (s->n >= 2 && dc_family_splits(&s->gaps, &f) == 1) {
        char b[256];
        size_t o = 0;
        for (size_t j = 0; j < f.nsplits && o < sizeof b; j++)
            o += (size_t)snprintf(b + o, sizeof b - o, " [%u,%zu)", f.start[j],
                                  j + 1 < f.nsplits ? (size_t)f.start[j + 1] : s->n);
        dc_text_add(&s->ev, "- splits (each one split of the family, the combine ignored):%s\n",
                    b);
        if (f.nsplits > S)
            S = (unsigned)f.nsplits;
    }
    return S;
}

static int load_cases(const dc_shape *s, a4w4_case_data *data, grid *grids,
                      const a4w4_discover_opts *o)
{
    a4w4_sample full = {.full = 1};
    for (size_t i = 0; i < s->nvcases; i++) {
        if (a4w4_case_generate(&s->vcases[i], &full, &data[i]) != A4W4_OK ||
            make_grid(s->sh.M, s->sh.N, o->validate_outputs, s->vcases[i].seed, &grids[i]))
            return -1;
    }
    return 0;
}

/* 1 when a probe contradicts contract c (bounded contracts are not checked on probes: their
 * kernel's order changes run to run). Writes "rejected TXT: ..." to the evidence when txt is
 * given, and the probe's description into why. */
static int probe_rejects(dc_shape *s, const a4w4_contract *c, int threads, const char *txt,
                         char *why, size_t whylen)
{
    uint16_t exp = 0;
    long bad = c->kind == A4W4_CONTRACT_BOUNDED ? -1 : probe_mismatch(s, c, threads, &exp);
    if (bad < 0)
        return 0;
    char d[160], line[300];
    dc_probe_describe(&s->hist[bad], d, sizeof d);
    snprintf(line, sizeof line, "probe %s gave 0x%04x, the contract predicts 0x%04x", d,
             s->hist_bits[bad], exp);
    if (txt)
        dc_text_add(&s->ev, "- rejected %s: %s\n", txt, line);
    if (why)
        snprintf(why, whylen, "%s", line);
    return 1;
}

static void accept(dc_shape *s, const a4w4_discover_opts *o, const a4w4_contract *c,
                   const char *txt, vresult *r)
{
    s->res.verdict = A4W4_DISCOVER_FOUND;
    s->res.contract = *c;
    s->res.validated = r->checked - r->defects;
    dc_text_add(&s->ev, "- validation: %s predicted %s%zu checked outputs of %zu cases x %u runs "
                "(regimes exact, normal, wide, special, code0, tiny) bit for bit%s\n", txt,
                r->defects ? "every other one of the " : "all ", r->checked, s->nvcases,
                o->repeats, c->kind == A4W4_CONTRACT_BOUNDED ? " (within the bound)" : "");
    record_defects(s, o, r);
    if (s->have_fprev && c->kind == A4W4_CONTRACT_TREE && c->tree.lanecomb == A4W4_REDUCE_XOR)
        dc_text_add(&s->ev, "- %s gives every one of FPRev's pair probes the output FPRev's "
                    "tree gives (the same LCA for every pair of blocks): the same tree at this "
                    "K, written in the spelling that holds at every K\n", txt);
}

/* Where the closest candidate c fails (no candidate was accepted) into res.closest_fails. */
static void closest(dc_shape *s, const a4w4_discover_opts *o, const cand_list *L,
                    const a4w4_contract *c, a4w4_case_data *data, grid *grids, vresult *r)
{
    char probe[300] = "", reg[160];
    validate(s, o, c, L, data, grids, 0, r);
    probe_rejects(s, c, o->threads, NULL, probe, sizeof probe);
    regimes(r, reg, sizeof reg);
    s->res.has_closest = 1;
    s->res.contract = *c;
    s->res.validated = r->checked - r->bad - r->defects;
    s->res.defects = r->defects;
    char *f = s->res.closest_fails;
    size_t len = sizeof s->res.closest_fails;
    if (r->bad)
        snprintf(f, len, "%zu of %zu checked outputs differ (%.100s); first: %.300s%s%.300s",
                 r->bad, r->checked, reg, r->where, probe[0] ? "; " : "", probe);
    else if (probe[0])
        snprintf(f, len, "it predicts all %zu checked validation outputs%s, but not the %.300s",
                 r->checked, r->defects ? " (its defects aside)" : "", probe);
    else
        snprintf(f, len, "it predicts every other checked output, but %zu of the %zu are "
                 "defects (outputs no order can give), more than half", r->defects, r->total);
}

/* Accept the first candidate that predicts every probe and every checked validation output
 * but its defects, when those are not the majority; else the closest (the first candidate
 * that failed by defects alone, or the simplest). */
static void choose(dc_shape *s, const a4w4_discover_opts *o, cand_list *L, a4w4_case_data *data,
                   grid *grids)
{
    char txt[A4W4_CONTRACT_MAX];
    vresult r = {0};
    long near = -1;
    for (size_t i = 0; i < L->n; i++) {
        describe(&L->c[i], txt, sizeof txt);
        if (probe_rejects(s, &L->c[i], o->threads, txt, NULL, 0))
            continue;
        validate(s, o, &L->c[i], L, data, grids, 1, &r);
        if (!r.bad && !defects_dominate(&r)) {
            accept(s, o, &L->c[i], txt, &r);
            free(r.dl.v);
            return;
        }
        if (r.bad)
            dc_text_add(&s->ev, "- rejected %s: %s\n", txt, r.where);
        else
            dc_text_add(&s->ev, "- rejected %s: it predicts every other output, but more than "
                        "half of the %zu to check are defects (outputs no order can give)\n",
                        txt, r.total);
        if (!r.bad && near < 0)
            near = (long)i;
        /* the defects are the same for every candidate (no order gives them, so none predicts
         * them; L is trees only, or one bounded(S)): past half, none can be accepted */
        if (defects_dominate(&r))
            break;
    }
    s->res.verdict = A4W4_DISCOVER_NO_FIT;
    if (L->n)
        closest(s, o, L, &L->c[near < 0 ? 0 : near], data, grids, &r);
    free(r.dl.v);
}

int dc_check(dc_shape *s, const a4w4_discover_opts *o, const a4w4_contract *c)
{
    static cand_list L; /* large; runs on one thread at a time, as dc_fit */
    L.n = 0;
    dc_cand_push(&L, c);
    if (probe_rejects(s, c, o->threads, NULL, NULL, 0))
        return 0;
    a4w4_case_data *data = calloc(s->nvcases ? s->nvcases : 1, sizeof *data);
    grid *grids = calloc(s->nvcases ? s->nvcases : 1, sizeof *grids);
    vresult r = {0};
    int ok = data && grids && !load_cases(s, data, grids, o);
    if (ok) {
        validate(s, o, c, &L, data, grids, 1, &r);
        ok = !r.bad && !defects_dominate(&r);
    }
    for (size_t i = 0; data && grids && i < s->nvcases; i++) {
        a4w4_case_data_free(&data[i]);
        grid_free(&grids[i]);
    }
    free(r.dl.v);
    free(data);
    free(grids);
    return ok;
}

void dc_fit(dc_shape *s, const a4w4_discover_opts *o)
{
    static cand_list L; /* large; dc_fit runs on one thread at a time */
    L.n = 0;
    if (s->forced) {
        char txt[A4W4_CONTRACT_MAX];
        describe(s->forced, txt, sizeof txt);
        if (s->validate_only)
            dc_text_add(&s->ev, "- not probed: the rule of K its family's probed shapes gave, "
                        "%s, is validated here (contracts §4.4)\n", txt);
        else
            dc_text_add(&s->ev, "- this shape is probed through the first shape of its group; "
                        "its contract %s is validated here\n", txt);
        dc_cand_push(&L, s->forced);
    } else if (s->nondet && !s->nondet_cases) {
        /* no bounded(S) for a kernel whose real answers never varied: only its probes did, as
         * a kernel that recognises them answers (contracts §4.4, nondeterminism) */
        dc_text_add(&s->ev, "- the probes' outputs changed between runs (%zu gaps varied), the "
                    "random validation cases' never did: bounded(S) is accepted only for "
                    "nondeterminism seen on random cases, and no fixed tree reads from probes "
                    "that change; the kernel answers probes unlike real data\n",
                    s->nvaried_gaps);
    } else if (s->nondet) {
        a4w4_contract b = {A4W4_CONTRACT_BOUNDED, bounded_splits(s), {0}};
        dc_text_add(&s->ev, "- nondeterministic: repeated runs of the same operands differed "
                    "(%zu gaps varied); the answer is bounded(S) with S = %u splits found\n",
                    s->nvaried_gaps, b.split);
        dc_cand_push(&L, &b);
    } else {
        /* an order the interval model could not read, or read only as boundaries fitted to
         * this K: the trees beyond the model come first (fewer parameters than boundaries) */
        static cand_list fitted;
        fitted.n = 0;
        dc_candidates(s, &fitted);
        int bounds = fitted.n && fitted.c[0].kind == A4W4_CONTRACT_TREE &&
                     fitted.c[0].tree.nbounds >= 2;
        if (s->nfam == 0 || bounds) {
            dc_family_candidates(s, bounds, &L);
            dc_text_add(&s->ev, "- %s: %zu trees beyond the interval model (fused 64/128-K "
                        "leaves, interleaved lanes%s) are tried first\n",
                        s->nfam == 0 ? "no interval tree fits the probes"
                                     : "the interval tree cuts K at fitted boundaries",
                        L.n, bounds ? ", tile=256" : "");
        }
        for (size_t i = 0; i < fitted.n; i++)
            dc_cand_push(&L, &fitted.c[i]);
        dc_element_lane_candidates(s, &fitted, &L);
        if (s->have_fprev) /* the short spellings FPRev's tree may have, before it */
            dc_xor_candidates(s, &L);
        for (int rz = 0; s->have_fprev && rz < 2; rz++) { /* FPRev's tree: the last resort */
            a4w4_contract c = s->fprev;
            c.tree.final = rz ? A4W4_ROUND_RZ : A4W4_ROUND_RNE;
            dc_cand_push(&L, &c);
        }
    }
    dc_text_add(&s->ev, "- candidates the decisions leave open: %zu (each checked on the probes, "
                "then on the validation cases, simplest first)\n", L.n);
    a4w4_case_data *data = calloc(s->nvcases ? s->nvcases : 1, sizeof *data);
    grid *grids = calloc(s->nvcases ? s->nvcases : 1, sizeof *grids);
    if (!data || !grids || load_cases(s, data, grids, o)) {
        s->res.verdict = A4W4_DISCOVER_FAILED;
        dc_text_add(&s->ev, "- out of memory generating the validation cases\n");
    } else {
        choose(s, o, &L, data, grids);
    }
    for (size_t i = 0; data && grids && i < s->nvcases; i++) {
        a4w4_case_data_free(&data[i]);
        grid_free(&grids[i]);
    }
    free(data);
    free(grids);
    s->res.validation_cases = s->nvcases;
}
