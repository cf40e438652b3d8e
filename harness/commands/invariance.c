/* invariance.c — batch invariance predicted from the tables (invariance.h). */
#include "invariance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"

const char *a4w4_inv_verdict_name(a4w4_inv_verdict v)
{
    static const char *const names[] = {"invariant", "unknown", "nondeterministic", "variant"};
    return (unsigned)v < 4 ? names[v] : "?";
}

static int name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 63)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '.' || ch == '-'))
            return 0;
    }
    return 1;
}

/* Insert w into s->sw, sorted by m_max. */
static int switch_insert(a4w4_inv_setup *s, const a4w4_inv_switch *w, const char *text,
                         char *err, size_t errlen)
{
    size_t at = 0;
    while (at < s->nsw && s->sw[at].m_max < w->m_max)
        at++;
    if (at < s->nsw && s->sw[at].m_max == w->m_max) {
        a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL, "switch '%s': a switch at M %d is already given", text, w->m_max);
        return A4W4_EINVAL;
    }
    if (s->nsw == A4W4_INV_MAX_SWITCH) {
        a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL, "switch '%s': at most %d switches", text, A4W4_INV_MAX_SWITCH);
        return A4W4_EINVAL;
    }
    memmove(&s->sw[at + 1], &s->sw[at], (s->nsw - at) * sizeof *s->sw);
    s->sw[at] = *w;
    s->nsw++;
    return A4W4_OK;
}

int a4w4_inv_switch_parse(a4w4_inv_setup *s, const char *text, char *err, size_t errlen)
{
    a4w4_inv_switch w;
    memset(&w, 0, sizeof w);
    const char *c1 = strchr(text, ':');
    long m = 0;
    const char *p = text;
    for (; p < (c1 ? c1 : text) && *p >= '0' && *p <= '9' && m <= A4W4_INV_M_MAX; p++)
        m = m * 10 + (*p - '0');
    if (!c1 || p != c1 || c1 == text || text[0] == '0' || m < 1 || m > A4W4_INV_M_MAX) {
        a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL, "switch '%s': not M:NAME or M:NAME:CONTRACT with M in 1..%d",
                  text, A4W4_INV_M_MAX);
        return A4W4_EINVAL;
    }
    const char *c2 = strchr(c1 + 1, ':');
    size_t nlen = c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1);
    if (!name_ok(c1 + 1, nlen)) {
        a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL, "switch '%s': NAME is 1..63 characters of A-Z a-z 0-9 _ . -",
                  text);
        return A4W4_EINVAL;
    }
    w.m_max = (int)m;
    memcpy(w.name, c1 + 1, nlen);
    if (c2) {
        char why[256];
        if (a4w4_contract_parse(c2 + 1, &w.contract.c, why, sizeof why)) {
            a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL, "switch '%s': %s", text, why);
            return A4W4_EINVAL;
        }
        w.contract.declared = 1;
    }
    return switch_insert(s, &w, text, err, errlen);
}

/* AITER's route at (M, N, K) into p, with its contract (contracts §5.2, §5.3). */
static int route_path(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                      const a4w4_inv_setup *s, int M, int N, int K, a4w4_inv_path *p,
                      char *err, size_t errlen)
{
    int src = 0, m_hit = 0;
    const a4w4_tuned_row *row = a4w4_tuned_lookup(tuned, s->setup.hp.gfx, s->setup.hp.num_cu,
                                                  M, N, K, &src, &m_hit);
    if (row && !a4w4_kernel_name_is_asm(row->kernel_name)) {
        p->kind = A4W4_PATH_CK;
        p->kernel = row->kernel_name;
        p->split = row->split_k;
        p->source = (a4w4_route_source)src;
        p->tuned_m = m_hit;
        p->contract = s->ck;
        return A4W4_OK;
    }
    p->kind = A4W4_PATH_ASM;
    if (row) {
        int ki = a4w4_kernels_find(kt, row->kernel_name);
        p->kernel = row->kernel_name;
        p->tile_m = ki >= 0 ? kt->rows[ki].tile_m : 0;
        p->tile_n = ki >= 0 ? kt->rows[ki].tile_n : 0;
        p->split = 1 << (row->split_k > 4 ? 4 : row->split_k);
        p->source = (a4w4_route_source)src;
        p->tuned_m = m_hit;
    } else {
        a4w4_heur_choice ch;
        int rc = a4w4_heuristic(kt, &s->setup.hp, M, N, NULL, 0, &ch, err, errlen);
        if (rc != A4W4_OK)
            return rc;
        p->kernel = kt->rows[ch.kernel].name;
        p->tile_m = kt->rows[ch.kernel].tile_m;
        p->tile_n = kt->rows[ch.kernel].tile_n;
        p->split = ch.split;
        p->source = A4W4_SRC_HEURISTIC;
    }
    /* One split stores its bf16 result (ordered(1)); more add bf16 partials atomically. */
    p->contract.declared = 1;
    p->contract.c = (a4w4_contract){.kind = p->split > 1 ? A4W4_CONTRACT_BOUNDED
                                                         : A4W4_CONTRACT_ORDERED,
                                    .split = (unsigned)p->split};
    return A4W4_OK;
}

/* The layer policy's decision for (N, K): 1 ASM, 0 Triton, or a negative status with err. */
static int policy_asm(const a4w4_inv_setup *s, int N, int K, char *err, size_t errlen)
{
    a4w4_policy_result pr;
    int rc = a4w4_layer_policy(&s->setup, N, K, &pr);
    if (rc != A4W4_OK)
        return a4w4_errmsg(err, errlen, rc < 0 ? rc : A4W4_EINVAL, NULL,
                           "the layer policy refused N %d K %d (status %d)", N, K, rc);
    return pr.decision == A4W4_DECIDE_ASM;
}

/* The path at M with the layer's policy decision asm_layer (policy_asm's 1 or 0). */
static int path_at(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                   const a4w4_inv_setup *s, int M, int N, int K, int asm_layer,
                   a4w4_inv_path *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->sw = -1;
    p->split = 1;
    for (size_t i = 0; i < s->nsw; i++)
        if (M <= s->sw[i].m_max) {
            p->kind = A4W4_PATH_SWITCH;
            p->sw = (int)i;
            p->contract = s->sw[i].contract;
            return A4W4_OK;
        }
    if (!asm_layer) {
        p->kind = A4W4_PATH_TRITON;
        p->contract = s->triton;
        return A4W4_OK;
    }
    return route_path(tuned, kt, s, M, N, K, p, err, errlen);
}

int a4w4_inv_path_of(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                     const a4w4_inv_setup *s, int M, int N, int K, a4w4_inv_path *p,
                     char *err, size_t errlen)
{
    int asm_layer = policy_asm(s, N, K, err, errlen);
    if (asm_layer < 0)
        return asm_layer;
    return path_at(tuned, kt, s, M, N, K, asm_layer, p, err, errlen);
}

int a4w4_inv_path_same(const a4w4_inv_path *a, const a4w4_inv_path *b)
{
    if (a->kind != b->kind || a->sw != b->sw || a->split != b->split)
        return 0;
    if (a->kernel != b->kernel && (!a->kernel || !b->kernel || strcmp(a->kernel, b->kernel)))
        return 0;
    return 1;
}

/* 1 when c is declared and adds bf16 partials in no fixed order: bounded(S), atomic(S)
 * (contracts §4.1). */
static int nondet(const a4w4_inv_contract *c)
{
    return c->declared &&
           (c->c.kind == A4W4_CONTRACT_BOUNDED || c->c.kind == A4W4_CONTRACT_ATOMIC);
}

static int deterministic(const a4w4_inv_contract *c)
{
    return c->declared && !nondet(c);
}

a4w4_inv_verdict a4w4_inv_compare(const a4w4_inv_path *p1, const a4w4_inv_path *p)
{
    if (nondet(&p1->contract) || nondet(&p->contract))
        return A4W4_INV_NONDET;
    if (deterministic(&p1->contract) && deterministic(&p->contract))
        return a4w4_contract_same(&p1->contract.c, &p->contract.c) ? A4W4_INV_INVARIANT
                                                                   : A4W4_INV_VARIANT;
    /* A contract nobody declared: the same table kernel at the same split is the same code;
     * a Triton or framework path may retune itself with M. */
    if ((p->kind == A4W4_PATH_ASM || p->kind == A4W4_PATH_CK) && a4w4_inv_path_same(p1, p))
        return A4W4_INV_INVARIANT;
    return A4W4_INV_UNKNOWN;
}

/* ---- the scan ------------------------------------------------------------------------- */

/* Append run lo..hi on path p to q (runs grow by doubling). */
static int run_push(a4w4_inv_pair *q, size_t *cap, int lo, const a4w4_inv_path *p,
                    const a4w4_inv_path *p1)
{
    if (q->nruns == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        a4w4_inv_run *r = realloc(q->runs, nc * sizeof *r);
        if (!r)
            return A4W4_ENOMEM;
        q->runs = r;
        *cap = nc;
    }
    a4w4_inv_run *r = &q->runs[q->nruns++];
    r->lo = r->hi = lo;
    r->path = *p;
    r->verdict = a4w4_inv_compare(p1, p);
    if (r->verdict != A4W4_INV_INVARIANT && q->first_break < 0)
        q->first_break = (long)q->nruns - 1;
    if (r->verdict > q->worst)
        q->worst = r->verdict;
    return A4W4_OK;
}

/* A growable list of M values. */
typedef struct {
    int *v;
    size_t n, cap;
} m_list;

static int m_add(m_list *l, long m, int m_max)
{
    if (m < 1 || m > m_max)
        return A4W4_OK;
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 1024;
        int *v = realloc(l->v, nc * sizeof *v);
        if (!v)
            return A4W4_ENOMEM;
        l->v = v;
        l->cap = nc;
    }
    l->v[l->n++] = (int)m;
    return A4W4_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The tuned M values of (N, K) in t (any gfx, cu_num: a superset is harmless). */
static int tuned_ms(const a4w4_tuned_table *t, int N, int K, m_list *out)
{
    for (size_t i = 0; t && i < t->n; i++)
        if (t->rows[i].N == N && t->rows[i].K == K && m_add(out, t->rows[i].M, A4W4_DIM_MAX))
            return A4W4_ENOMEM;
    return A4W4_OK;
}

/* Every M at which the path of (N, K) may differ from the path at M - 1, sorted, unique,
 * within 1..m_max: 1; each switch m and m + 1; each tuned M v, v + 1 and each padded-M
 * bucket's lo and hi + 1 (contracts §5.1: the lookup is constant inside a bucket and
 * between buckets); each j * tile_M + 1 (the heuristic reads M only through
 * ceil(M / tile_M), contracts §5.3). Between two of them the path stays the same. */
static int breakpoints(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                       const a4w4_inv_setup *s, int N, int K, m_list *out)
{
    m_list tm = {0};
    int rc = tuned_ms(tuned, N, K, &tm) || m_add(out, 1, s->m_max);
    for (size_t i = 0; !rc && i < s->nsw; i++)
        rc = m_add(out, s->sw[i].m_max, s->m_max) || m_add(out, s->sw[i].m_max + 1L, s->m_max);
    size_t nb = rc ? 0 : a4w4_m_buckets(tm.v, tm.n, NULL, 0);
    a4w4_m_bucket *b = malloc((nb ? nb : 1) * sizeof *b);
    rc = rc || !b;
    if (!rc)
        a4w4_m_buckets(tm.v, tm.n, b, nb);
    for (size_t i = 0; !rc && i < nb; i++)
        rc = m_add(out, b[i].lo, s->m_max) || m_add(out, b[i].hi + 1L, s->m_max);
    for (size_t i = 0; !rc && i < tm.n; i++)
        rc = m_add(out, tm.v[i], s->m_max) || m_add(out, tm.v[i] + 1L, s->m_max);
    for (size_t k = 0; !rc && k < kt->n; k++) {
        int t = kt->rows[k].tile_m, seen = 0;
        for (size_t j = 0; j < k; j++)
            seen |= kt->rows[j].tile_m == t;
        for (long m = (long)t + 1; !rc && !seen && m <= s->m_max; m += t)
            rc = m_add(out, m, s->m_max);
    }
    free(b);
    free(tm.v);
    if (rc)
        return A4W4_ENOMEM;
    qsort(out->v, out->n, sizeof *out->v, cmp_int);
    size_t u = 0;
    for (size_t i = 0; i < out->n; i++)
        if (!u || out->v[u - 1] != out->v[i])
            out->v[u++] = out->v[i];
    out->n = u;
    return A4W4_OK;
}

/* The runs of one (N, K) over M 1..s->m_max: the path at each breakpoint holds up to the
 * next one. */
static int predict_pair(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                        const a4w4_inv_setup *s, a4w4_inv_pair *q, char *err, size_t errlen)
{
    a4w4_inv_path p1, p;
    size_t cap = 0;
    q->first_break = -1;
    q->worst = A4W4_INV_INVARIANT;
    m_list bp = {0};
    if (breakpoints(tuned, kt, s, q->N, q->K, &bp)) {
        free(bp.v);
        return a4w4_errmsg(err, errlen, A4W4_ENOMEM, NULL, "out of memory");
    }
    char why[512];
    int asm_layer = policy_asm(s, q->N, q->K, why, sizeof why);
    int rc = asm_layer < 0 ? asm_layer : A4W4_OK;
    if (rc != A4W4_OK)
        a4w4_errmsg(err, errlen, rc, NULL, "%s", why);
    for (size_t i = 0; rc == A4W4_OK && i < bp.n; i++) {
        int M = bp.v[i], last = i + 1 < bp.n ? bp.v[i + 1] - 1 : s->m_max;
        rc = path_at(tuned, kt, s, M, q->N, q->K, asm_layer, &p, why, sizeof why);
        if (rc != A4W4_OK) {
            a4w4_errmsg(err, errlen, rc, NULL, "M %d N %d K %d: %s", M, q->N, q->K, why);
            break;
        }
        if (M == 1)
            p1 = p;
        if (!q->nruns || !a4w4_inv_path_same(&q->runs[q->nruns - 1].path, &p))
            rc = run_push(q, &cap, M, &p, &p1);
        if (rc != A4W4_OK)
            a4w4_errmsg(err, errlen, rc, NULL, "out of memory");
        else
            q->runs[q->nruns - 1].hi = last;
    }
    free(bp.v);
    return rc;
}

int a4w4_inv_predict(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                     const a4w4_inv_setup *s, const int *nk, size_t n,
                     a4w4_inv_prediction *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (s->m_max < 1 || s->m_max > A4W4_INV_M_MAX)
        return a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL, "m_max %d is not in 1..%d",
                           s->m_max, A4W4_INV_M_MAX);
    out->pairs = calloc(n ? n : 1, sizeof *out->pairs);
    if (!out->pairs)
        return a4w4_errmsg(err, errlen, A4W4_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        a4w4_inv_pair *q = &out->pairs[i];
        q->N = nk[2 * i];
        q->K = nk[2 * i + 1];
        if (q->N < 1 || q->N > A4W4_DIM_MAX || q->K < 32 || q->K > A4W4_DIM_MAX || q->K % 32)
            return a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL,
                               "N %d K %d: N must be in 1..%d and K a positive multiple of 32 "
                               "(one E8M0 scale per 32 elements, contracts §1)",
                               q->N, q->K, A4W4_DIM_MAX);
        out->npairs = i + 1;
        int rc = predict_pair(tuned, kt, s, q, err, errlen);
        if (rc != A4W4_OK)
            return rc;
        out->count[q->worst]++;
    }
    return A4W4_OK;
}

void a4w4_inv_prediction_free(a4w4_inv_prediction *p)
{
    for (size_t i = 0; p && i < p->npairs; i++)
        free(p->pairs[i].runs);
    if (p) {
        free(p->pairs);
        memset(p, 0, sizeof *p);
    }
}

/* ---- pairs ---------------------------------------------------------------------------- */

static int has_pair(const int *nk, size_t n, int N, int K)
{
    for (size_t i = 0; i < n; i++)
        if (nk[2 * i] == N && nk[2 * i + 1] == K)
            return 1;
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Distinct pairs of the n (N, K) given by get(ctx, i, &N, &K). */
static int distinct_pairs(size_t n, void (*get)(const void *, size_t, int *, int *),
                          const void *ctx, int **nk, size_t *count)
{
    *nk = malloc((n ? n : 1) * 2 * sizeof **nk);
    *count = 0;
    if (!*nk)
        return A4W4_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int N, K;
        get(ctx, i, &N, &K);
        if (!has_pair(*nk, *count, N, K)) {
            (*nk)[2 * *count] = N;
            (*nk)[2 * *count + 1] = K;
            (*count)++;
        }
    }
    return A4W4_OK;
}

static void get_row(const void *ctx, size_t i, int *N, int *K)
{
    const a4w4_tuned_table *t = ctx;
    *N = t->rows[i].N;
    *K = t->rows[i].K;
}

static void get_shape(const void *ctx, size_t i, int *N, int *K)
{
    const int *sh = ctx;
    *N = sh[3 * i + 1];
    *K = sh[3 * i + 2];
}

int a4w4_inv_pairs_of_table(const a4w4_tuned_table *t, int **nk, size_t *n)
{
    int rc = distinct_pairs(t->n, get_row, t, nk, n);
    if (rc == A4W4_OK && *n > 1)
        qsort(*nk, *n, 2 * sizeof **nk, cmp_pair);
    return rc;
}

int a4w4_inv_pairs_of_shapes(const int *shapes, size_t nshapes, int **nk, size_t *n)
{
    return distinct_pairs(nshapes, get_shape, shapes, nk, n);
}

/* ---- text ----------------------------------------------------------------------------- */

void a4w4_inv_contract_text(const a4w4_inv_contract *c, char *buf, size_t len)
{
    if (!c->declared || a4w4_contract_format(&c->c, buf, len) < 0)
        snprintf(buf, len, "undeclared");
}

void a4w4_inv_path_label(const a4w4_inv_path *p, const a4w4_inv_setup *s, char *buf,
                         size_t len)
{
    switch (p->kind) {
    case A4W4_PATH_SWITCH:
        snprintf(buf, len, "%s (M <= %d)", s->sw[p->sw].name, s->sw[p->sw].m_max);
        break;
    case A4W4_PATH_TRITON:
        snprintf(buf, len, "Triton (layer policy)");
        break;
    case A4W4_PATH_CK:
        snprintf(buf, len, "CK %s splitK %d", p->kernel, p->split);
        break;
    default:
        if (p->tile_m)
            snprintf(buf, len, "ASM %dx%d split-K %d", p->tile_m, p->tile_n, p->split);
        else
            snprintf(buf, len, "ASM %s split-K %d", p->kernel, p->split);
    }
}

void a4w4_inv_cause(const a4w4_inv_pair *q, size_t r, const a4w4_inv_setup *s, char *buf,
                    size_t len)
{
    char from[160], to[160], c1[A4W4_CONTRACT_MAX], c2[A4W4_CONTRACT_MAX], at[64];
    const a4w4_inv_run *run = &q->runs[r], *prev = &q->runs[r ? r - 1 : 0];
    a4w4_inv_path_label(&prev->path, s, from, sizeof from);
    a4w4_inv_path_label(&run->path, s, to, sizeof to);
    a4w4_inv_contract_text(&q->runs[0].path.contract, c1, sizeof c1);
    a4w4_inv_contract_text(&run->path.contract, c2, sizeof c2);
    if (r)
        snprintf(at, sizeof at, "M %d -> %d: ", prev->hi, run->lo);
    else
        snprintf(at, sizeof at, "M 1..%d: ", run->hi);
    int n = snprintf(buf, len, "%s%s%s%s: ", at, r ? from : "", r ? " -> " : "", to);
    if (n < 0 || (size_t)n >= len)
        return;
    buf += n;
    len -= (size_t)n;
    switch (run->verdict) {
    case A4W4_INV_VARIANT:
        snprintf(buf, len, "the contract changes from %s (M = 1) to %s", c1, c2);
        break;
    case A4W4_INV_NONDET:
        snprintf(buf, len, "%s adds bf16 partials with atomics in no fixed order (M = 1: %s)",
                 nondet(&run->path.contract) ? c2 : c1, c1);
        break;
    case A4W4_INV_UNKNOWN:
        snprintf(buf, len, "no declared contract decides (M = 1: %s, here: %s)", c1, c2);
        break;
    default:
        snprintf(buf, len, "the contract stays %s", c2);
    }
}
