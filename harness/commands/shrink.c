/* shrink.c — a failing case reduced to a minimal one that fails the same way (shrink.h). */
#include "shrink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failing.h"
#include "runner.h"

#define MAX_CANDIDATES 128

typedef struct {
    const a4w4_shrink_opts *o;
    a4w4_shrink_result *r;
    char fam[48]; /* the failure's family (failure_family) to keep */
    char *err;
    size_t errlen;
    int error;    /* a trial could not run (out of memory, a refused result) */
} shrinker;

/* The family of a failing entry: its kind of wrongness, with "pad:" when only a pad variant
 * shows it. Wrong values of any size (values, mixed, one ULP, zero, sign) are one family:
 * shrinking changes how much a missing term weighs, not that it is missing. */
static void failure_family(const a4w4_entry_result *e, char *buf, size_t len)
{
    static const char *const own[] = {"unwritten", "nan", "inf", "nan-missing", "crashed",
                                      "timed-out", "out-of-bounds-write", "error"};
    const char *c = e->signature_class, *fam = "values";
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (!strcmp(c, own[i]))
            fam = !strcmp(c, "inf") ? "nan" : own[i];
    snprintf(buf, len, "%s%s", e->map.variant[0] ? "pad:" : "", fam);
}

/* Classify a trial's entry list: 1 when the backend's entry fails in the family kept (the
 * entry copied to keep), 0 when not. The first trial (no family yet) keeps the entry in
 * any case: a case that does not fail says how (pass, n/a and why). */
static int judge(shrinker *k, const a4w4_entry_list *el, a4w4_entry_result *keep)
{
    const a4w4_entry_result *e = NULL;
    for (size_t i = 0; i < el->n; i++)
        if (!strcmp(el->items[i].backend, k->o->b->name))
            e = &el->items[i];
    if (e && keep && !k->fam[0])
        *keep = *e;
    if (!e || e->verdict != A4W4_VERDICT_FAIL)
        return 0;
    char fam[48];
    failure_family(e, fam, sizeof fam);
    if (k->fam[0] && strcmp(fam, k->fam))
        return 0;
    if (keep)
        *keep = *e;
    return 1;
}

/* One trial budget unit; 0 when the budget is spent. */
static int take_call(shrinker *k)
{
    if (k->r->calls >= k->o->max_calls) {
        k->r->budget_hit = 1;
        return 0;
    }
    k->r->calls++;
    return 1;
}

/* Generated case c: 1 when it fails the same way (entry to keep), else 0. */
static int trial_case(shrinker *k, const a4w4_case *c, a4w4_entry_result *keep)
{
    if (k->error || !take_call(k))
        return 0;
    a4w4_runner run = {.backends = k->o->b, .nbackends = 1, .full = k->o->full,
                       .code0_reading = k->o->code0_reading};
    a4w4_entry_list el = {0};
    char err[512];
    a4w4_hstatus st = a4w4_run_case(&run, c, &el, err, sizeof err);
    int f = st == A4W4_ST_OK && judge(k, &el, keep);
    if (st == A4W4_ST_NOMEM || (st == A4W4_ST_BADINPUT && el.n)) { /* refused, or no memory */
        k->error = 1;
        snprintf(k->err, k->errlen, "%s", err);
    }
    a4w4_entry_list_free(&el);
    return f;
}

/* The current operands of r: 1 when they fail the same way (entry to keep), else 0. */
static int trial_data(shrinker *k, a4w4_entry_result *keep)
{
    if (k->error || !take_call(k))
        return 0;
    a4w4_case_data d;
    if (a4w4_shrink_data(k->r, &d)) {
        k->error = 1;
        snprintf(k->err, k->errlen, "case %s: out of memory", k->r->shape.name);
        return 0;
    }
    a4w4_runner run = {.backends = k->o->b, .nbackends = 1, .full = 1,
                       .code0_reading = k->o->code0_reading};
    a4w4_entry_list el = {0};
    char err[512];
    int f = a4w4_run_data(&run, &k->r->shape, &d, &el, err, sizeof err) == A4W4_ST_OK &&
            judge(k, &el, keep);
    a4w4_entry_list_free(&el);
    a4w4_case_data_free(&d);
    return f;
}

/* ---- phase 1: the shape -------------------------------------------------------------------- */

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static size_t add_candidate(size_t *v, size_t n, size_t x, size_t below, size_t step)
{
    if (x >= 1 && x < below && x % step == 0 && n < MAX_CANDIDATES)
        v[n++] = x;
    return n;
}

/* The tile-grid values below cur for dimension dim (0 M, 1 N, 2 K), ascending, distinct. */
static size_t candidates(int dim, size_t cur, size_t *v)
{
    size_t n = 0;
    if (dim < 2) {
        static const size_t small[] = {1, 2, 3, 4, 8};
        for (size_t i = 0; i < 5; i++)
            n = add_candidate(v, n, small[i], cur, 1);
        for (size_t t = 16; t <= cur + 1 && t <= A4W4_CASE_DIM_MAX; t *= 2)
            for (size_t d = 0; d < 3; d++)
                n = add_candidate(v, n, t - 1 + d, cur, 1);
    } else {
        for (size_t k = 32; k <= 256; k += 32)
            n = add_candidate(v, n, k, cur, 32);
        for (size_t p = 512; p <= cur + 32 && p <= A4W4_CASE_DIM_MAX; p *= 2)
            for (size_t d = 0; d < 3; d++)
                n = add_candidate(v, n, p - 32 + 32 * d, cur, 32);
        for (size_t j = 0; cur % 256 && j < 8; j++)
            n = add_candidate(v, n, cur % 256 + 256 * j, cur, 32);
    }
    qsort(v, n, sizeof *v, cmp_size);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || v[i] != v[u - 1])
            v[u++] = v[i];
    return u;
}

static size_t *dim_of(a4w4_case *c, int dim)
{
    return dim == 0 ? &c->M : dim == 1 ? &c->N : &c->K;
}

/* The smallest failing tile-grid value of each dimension in turn; twice round when the first
 * round changed something. */
static void shrink_shape(shrinker *k)
{
    a4w4_shrink_result *r = k->r;
    for (int round = 0; round < 2; round++) {
        int changed = 0;
        for (int dim = 0; dim < 3; dim++) {
            size_t v[MAX_CANDIDATES], n = candidates(dim, *dim_of(&r->shape, dim), v);
            for (size_t i = 0; i < n && !r->budget_hit && !k->error; i++) {
                a4w4_case c = r->shape;
                *dim_of(&c, dim) = v[i];
                if (trial_case(k, &c, &r->last)) {
                    r->shape = c;
                    changed = 1;
                    break;
                }
            }
        }
        if (!changed)
            break;
    }
}

/* ---- phase 2: the operands ----------------------------------------------------------------- */

enum { U_KBLOCK, U_AROW, U_WROW, U_ASCALE, U_WSCALE };

/* Clear unit i of kind: zero codes, or scales set to 127 (1.0). */
static void clear_unit(a4w4_shrink_result *r, int kind, size_t i)
{
    size_t M = r->shape.M, N = r->shape.N, K = r->shape.K, nb = K / 32;
    switch (kind) {
    case U_KBLOCK:
        for (size_t m = 0; m < M; m++)
            memset(r->a_fp4 + m * K / 2 + i * 16, 0, 16);
        for (size_t n = 0; n < N; n++)
            memset(r->w_fp4 + n * K / 2 + i * 16, 0, 16);
        break;
    case U_AROW: memset(r->a_fp4 + i * K / 2, 0, K / 2); break;
    case U_WROW: memset(r->w_fp4 + i * K / 2, 0, K / 2); break;
    case U_ASCALE: memset(r->a_scale + i * nb, 127, nb); break;
    default: memset(r->w_scale + i * nb, 127, nb); break;
    }
}

/* A copy of the four operand arrays (for undoing a trial). */
typedef struct {
    uint8_t *buf;
    size_t sizes[4];
} snapshot;

static int snap(const a4w4_shrink_result *r, snapshot *s, int restore)
{
    size_t M = r->shape.M, N = r->shape.N, K = r->shape.K;
    uint8_t *const arr[4] = {r->a_fp4, r->a_scale, r->w_fp4, r->w_scale};
    size_t sz[4] = {M * K / 2, M * K / 32, N * K / 2, N * K / 32}, off = 0;
    if (!restore && !(s->buf = malloc(sz[0] + sz[1] + sz[2] + sz[3])))
        return -1;
    for (int i = 0; i < 4; i++) {
        if (restore)
            memcpy(arr[i], s->buf + off, sz[i]);
        else
            memcpy(s->buf + off, arr[i], sz[i]);
        off += sz[i];
    }
    return 0;
}

/* Clear the live units of u in halving chunks, keeping each clearing that still fails. */
static void reduce(shrinker *k, int kind, a4w4_shrink_units *u)
{
    a4w4_shrink_result *r = k->r;
    for (size_t sz = u->n; sz >= 1 && !r->budget_hit && !k->error; sz = sz == 1 ? 0 : (sz + 1) / 2)
        for (size_t st = 0; st < u->n && !r->budget_hit && !k->error; st += sz) {
            size_t end = st + sz < u->n ? st + sz : u->n, live = 0;
            for (size_t i = st; i < end; i++)
                live += u->live[i];
            if (!live)
                continue;
            snapshot s;
            if (snap(r, &s, 0)) {
                k->error = 1;
                snprintf(k->err, k->errlen, "out of memory");
                return;
            }
            for (size_t i = st; i < end; i++)
                if (u->live[i])
                    clear_unit(r, kind, i);
            if (trial_data(k, &r->last))
                memset(u->live + st, 0, end - st);
            else
                snap(r, &s, 1);
            free(s.buf);
        }
}

static int units_init(a4w4_shrink_units *u, size_t n)
{
    u->n = n;
    u->live = malloc(n ? n : 1);
    if (u->live)
        memset(u->live, 1, n);
    return u->live ? 0 : -1;
}

/* The generated operands of r->shape, every row, into r's arrays. */
static int shape_operands(a4w4_shrink_result *r)
{
    a4w4_sample s = {.full = 1};
    a4w4_case_data d;
    size_t M = r->shape.M, N = r->shape.N, K = r->shape.K;
    if (a4w4_case_generate(&r->shape, &s, &d) != A4W4_OK)
        return -1;
    r->a_fp4 = malloc(M * K / 2);
    r->a_scale = malloc(M * K / 32);
    r->w_fp4 = malloc(N * K / 2);
    r->w_scale = malloc(N * K / 32);
    int ok = r->a_fp4 && r->a_scale && r->w_fp4 && r->w_scale;
    if (ok) {
        memcpy(r->a_fp4, d.a_fp4.data, M * K / 2);
        memcpy(r->a_scale, d.a_scale.data, M * K / 32);
        memcpy(r->w_fp4, d.w_fp4.data, N * K / 2);
        memcpy(r->w_scale, d.w_scale.data, N * K / 32);
    }
    a4w4_case_data_free(&d);
    ok = ok && !units_init(&r->kblocks, K / 32) && !units_init(&r->a_rows, M) &&
         !units_init(&r->w_rows, N) && !units_init(&r->a_scales, M) &&
         !units_init(&r->w_scales, N);
    return ok ? 0 : -1;
}

int a4w4_shrink_data(const a4w4_shrink_result *r, a4w4_case_data *d)
{
    return a4w4_case_data_load(r->a_fp4, r->a_scale, r->w_fp4, r->w_scale, r->shape.M,
                               r->shape.N, r->shape.K, d);
}

a4w4_hstatus a4w4_shrink(const a4w4_shrink_opts *o, const a4w4_case *c, a4w4_shrink_result *r,
                         char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->original = r->shape = *c;
    shrinker k = {o, r, "", err, errlen, 0};
    if (!trial_case(&k, c, &r->first)) {
        if (k.error)
            return A4W4_ST_BADINPUT;
        return A4W4_ST_NA;
    }
    r->last = r->first;
    failure_family(&r->first, k.fam, sizeof k.fam);
    snprintf(r->cls, sizeof r->cls, "%s", r->first.signature_class);
    shrink_shape(&k);
    if (!k.error && shape_operands(r)) {
        snprintf(err, errlen, "case %s: out of memory generating the operands", c->name);
        return A4W4_ST_NOMEM;
    }
    a4w4_shrink_units *u[5] = {&r->kblocks, &r->a_rows, &r->w_rows, &r->a_scales, &r->w_scales};
    for (int kind = 0; kind < 5 && !k.error; kind++)
        reduce(&k, kind, u[kind]);
    return k.error ? A4W4_ST_BADINPUT : A4W4_ST_OK;
}

void a4w4_shrink_units_text(const a4w4_shrink_units *u, int want, char *buf, size_t len)
{
    size_t *idx = malloc((u->n ? u->n : 1) * sizeof *idx), n = 0;
    if (!idx) {
        snprintf(buf, len, "?");
        return;
    }
    for (size_t i = 0; i < u->n; i++)
        if (u->live[i] == want)
            idx[n++] = i;
    if (!n)
        snprintf(buf, len, "none");
    else if (a4w4_ranges_format(idx, n, 0, buf, len))
        snprintf(buf, len, "%zu of %zu", n, u->n);
    free(idx);
}

void a4w4_shrink_free(a4w4_shrink_result *r)
{
    free(r->a_fp4);
    free(r->a_scale);
    free(r->w_fp4);
    free(r->w_scale);
    a4w4_shrink_units *u[5] = {&r->kblocks, &r->a_rows, &r->w_rows, &r->a_scales, &r->w_scales};
    for (int i = 0; i < 5; i++)
        free(u[i]->live);
    memset(r, 0, sizeof *r);
}
