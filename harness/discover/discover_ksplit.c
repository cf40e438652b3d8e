/* discover_ksplit.c — the rule of K whose split count changes with K (contracts §4.4, "The
 * split count as a function of K"): a family whose probed K show one tree but for their
 * splits, each K's splits S parts of round_up(ceil(K/S), A) elements for one A, and S not the
 * same at every K (cuBLAS's split-K on an H100). The count is read at every probed K, then
 * bisected in steps of 32 between two K of different counts, under the assumption that the
 * count never falls as K grows; the rule is one piece per count, `when K<=Kmax: ...`. */
#include <stdio.h>
#include <string.h>

#include "discover_internal.h"

/* The split counts tried at one K. */
#define KS_MAX_COUNT 64u

void dc_ksplit_contract(const dc_shape *lead, unsigned S, a4w4_contract *out)
{
    a4w4_contract d = {A4W4_CONTRACT_TREE, 1, {0}};
    out->kind = A4W4_CONTRACT_TREE;
    out->split = 1;
    out->tree = lead->ks_base;
    out->tree.split = S;
    out->tree.nbounds = 0;
    out->tree.tile = 0;
    out->tree.align = S >= 2 ? lead->ks_align : 256;
    a4w4_tree_defaults(&d.tree);
    d.tree.split = S;
    if (a4w4_contract_same(&d, out)) { /* align 256 and the rest ordered(1)'s: ordered(S) */
        d.kind = A4W4_CONTRACT_ORDERED;
        d.split = S;
        *out = d;
    }
}

/* The smallest S whose split=S,align=A cuts K as starts[0..n] does (lead's base tree); 0
 * when none does. */
static unsigned count_at(dc_shape *lead, unsigned A, size_t K, const size_t *starts, size_t n)
{
    unsigned keep = lead->ks_align;
    lead->ks_align = A;
    for (unsigned S = 1; S <= KS_MAX_COUNT && S <= K / 32; S++) {
        a4w4_contract c;
        dc_ksplit_contract(lead, S, &c);
        if (dc_cuts(&c.tree, K, starts, n)) {
            lead->ks_align = keep;
            return S;
        }
    }
    lead->ks_align = keep;
    return 0;
}

/* The split count of probed shape s under lead's base tree and A; 0 when none. */
static unsigned probed_count(dc_shape *lead, unsigned A, const dc_shape *s)
{
    size_t starts[A4W4_DISCOVER_MAX_K / 32 + 2];
    a4w4_tree t;
    if (dc_as_tree(&s->res.contract, &t))
        return 0;
    size_t n = a4w4_tree_splits(&t, s->sh.K, starts, sizeof starts / sizeof starts[0]);
    return n ? count_at(lead, A, s->sh.K, starts, n) : 0;
}

/* The smallest S whose split=S,align=A cuts bisection shape s's K as one of the structures
 * its round 1 read does; 0 when none does. */
static unsigned read_count(dc_shape *lead, unsigned A, const dc_shape *s)
{
    size_t starts[A4W4_TREE_MAX_BOUNDS + 2];
    unsigned best = 0;
    for (int j = 0; s->have_tree && j < s->nfam; j++) {
        size_t n = s->fam[j].nsplits;
        for (size_t i = 0; i < n; i++)
            starts[i] = (size_t)s->fam[j].start[i] * 32;
        starts[n] = s->sh.K;
        unsigned S = count_at(lead, A, s->sh.K, starts, n);
        best = S && (!best || S < best) ? S : best;
    }
    return best;
}

/* The split count family f's shape s reads under A (a probed shape's contract, or a finished
 * bisection K's round-1 structures); 0 when none. */
static unsigned count_of(dc_shape *lead, unsigned A, const dc_shape *s)
{
    return s->ksplit ? read_count(lead, A, s) : probed_count(lead, A, s);
}

/* 1 when every K family f has read so far (its probed shapes, its finished bisection K that
 * read a count, and extra when not NULL) is S parts aligned to A for some S. */
static int fits_all(const struct a4w4_discovery *d, size_t f, unsigned A, const dc_shape *extra)
{
    dc_shape *lead = &d->sh[f];
    for (size_t i = 0; i < d->nshapes; i++) {
        const dc_shape *s = &d->sh[i];
        int read = s->ksplit && s->family == f && s->finished &&
                   s->res.verdict == A4W4_DISCOVER_FOUND;
        if ((dc_probed_in(s, f) || read) && !count_of(lead, A, s))
            return 0;
    }
    return !extra || count_of(lead, A, extra) > 0;
}

/* The base tree (every probed K's tree but for its splits) and the largest A for which every
 * probed K's splits are S parts aligned to A (a bisection K may lower it: dc_ksplit_finish).
 * 0, or -1 with why in the leader's gen_why. */
static int ks_start(const struct a4w4_discovery *d, size_t f)
{
    dc_shape *lead = &d->sh[f];
    char t0[A4W4_CONTRACT_MAX] = "", ti[A4W4_CONTRACT_MAX];
    size_t starts[A4W4_DISCOVER_MAX_K / 32 + 2], wmax = 0, nk = 0;
    for (size_t i = 0; i < d->nshapes; i++) {
        a4w4_contract c = {A4W4_CONTRACT_TREE, 1, {0}};
        if (!dc_probed_in(&d->sh[i], f))
            continue;
        int seen = 0; /* the distinct K probed: three, as every rule of K */
        for (size_t j = 0; j < i; j++)
            seen |= dc_probed_in(&d->sh[j], f) && d->shapes[j].K == d->shapes[i].K;
        nk += !seen;
        if (d->sh[i].res.verdict != A4W4_DISCOVER_FOUND || d->sh[i].probed != i ||
            dc_as_tree(&d->sh[i].res.contract, &c.tree) || c.tree.tile || c.tree.sum_blocks)
            return -1;
        size_t n = a4w4_tree_splits(&c.tree, d->shapes[i].K, starts,
                                    sizeof starts / sizeof starts[0]);
        wmax = n > 1 && starts[1] > wmax ? starts[1] : wmax;
        c.tree.split = 2, c.tree.nbounds = 0, c.tree.align = 256;
        int first = !t0[0];
        if (a4w4_contract_format(&c, first ? t0 : ti, sizeof ti) < 0 || (!first && strcmp(t0, ti)))
            return -1;
        lead->ks_base = c.tree;
    }
    for (size_t A = wmax / 32 * 32; nk >= 3 && A >= 32; A -= 32) { /* the largest A that fits */
        if (fits_all(d, f, (unsigned)A, NULL)) {
            lead->ks_align = (unsigned)A;
            return 0;
        }
    }
    return -1;
}

/* The largest count from S0 up whose parts at K are S0's (p = round_up(ceil(K/S), A) falls
 * as S grows, so the counts of one cut are an interval; a part past K is not there). */
static unsigned count_top(dc_shape *lead, unsigned A, size_t K, unsigned S0)
{
    size_t a[A4W4_DISCOVER_MAX_K / 32 + 2], b[A4W4_DISCOVER_MAX_K / 32 + 2];
    unsigned keep = lead->ks_align, S = S0;
    a4w4_contract c;
    lead->ks_align = A;
    dc_ksplit_contract(lead, S0, &c);
    size_t n = a4w4_tree_splits(&c.tree, K, a, sizeof a / sizeof a[0]);
    while (S < KS_MAX_COUNT && S + 1 <= K / 32) {
        dc_ksplit_contract(lead, S + 1, &c);
        if (a4w4_tree_splits(&c.tree, K, b, sizeof b / sizeof b[0]) != n ||
            memcmp(a, b, (n + 1) * sizeof *a))
            break;
        S++;
    }
    lead->ks_align = keep;
    return S;
}

/* A K read: the counts that give its cuts, [lo, hi], and the one the rule takes there. */
typedef struct {
    size_t K;
    unsigned lo, hi, S;
} kpoint;

/* The K whose split count family f has read (its probed shapes and its bisection's finished
 * K), sorted by K, into p (room for d->nshapes). Returns how many; *pending 1 when a K of
 * the bisection is not finished, *bad the first one that read no count (or d->nshapes). */
static size_t points(const struct a4w4_discovery *d, size_t f, kpoint *p, int *pending,
                     size_t *bad)
{
    dc_shape *lead = &d->sh[f];
    size_t n = 0;
    *pending = 0;
    *bad = d->nshapes;
    for (size_t i = 0; i < d->nshapes; i++) {
        const dc_shape *s = &d->sh[i];
        unsigned S = 0;
        if (dc_probed_in(s, f))
            S = probed_count(lead, lead->ks_align, s);
        else if (s->ksplit && s->family == f && !s->finished)
            *pending = 1;
        else if (s->ksplit && s->family == f && s->res.verdict == A4W4_DISCOVER_FOUND)
            S = read_count(lead, lead->ks_align, s);
        else if (s->ksplit && s->family == f && *bad == d->nshapes)
            *bad = i;
        if (!S)
            continue;
        size_t j = n++;
        for (; j > 0 && p[j - 1].K > s->sh.K; j--)
            p[j] = p[j - 1];
        p[j] = (kpoint){s->sh.K, S, count_top(lead, lead->ks_align, s->sh.K, S), 0};
    }
    return n;
}

/* Add the bisection's shape at K (the family's first M and N), its count read between lo and
 * hi. 0, 1 when the discovery holds that shape already (a validated one), -1 over the bound
 * (why in gen_why), -2 out of memory. */
static int add_k(struct a4w4_discovery *d, size_t f, size_t K, unsigned lo, unsigned hi)
{
    dc_shape *lead = &d->sh[f];
    if (lead->ks_added >= DC_MAX_KSPLIT || d->nshapes >= A4W4_DISCOVER_MAX_SHAPES) {
        snprintf(lead->gen_why, sizeof lead->gen_why, "the split count's bisection needs more "
                 "than %zu K (at most %d per family, %d shapes in all)", lead->ks_added,
                 DC_MAX_KSPLIT, A4W4_DISCOVER_MAX_SHAPES);
        return -1;
    }
    a4w4_shape x = {d->shapes[f].M, d->shapes[f].N, K};
    size_t i = d->nshapes;
    for (size_t j = 0; j < d->nshapes; j++) /* a shape of its own: its calls' names */
        if (d->shapes[j].M == x.M && d->shapes[j].N == x.N && d->shapes[j].K == K)
            return 1;
    if (dc_add_shape(d, &x, f))
        return -2;
    d->sh[i].ksplit = 1;
    d->sh[i].ks_lo = lo;
    d->sh[i].ks_hi = hi;
    lead->ks_added++;
    return 0;
}

/* The pieces of the rule from the sorted points p[0..n): one per count, each up to the last
 * K read with it; then the rule held to every probed shape. 0, or -1 with why. */
static int conclude(struct a4w4_discovery *d, size_t f, const kpoint *p, size_t n)
{
    dc_shape *lead = &d->sh[f];
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && p[i].S == p[i + 1].S)
            continue;
        if (k == DC_MAX_STEPS) {
            snprintf(lead->gen_why, sizeof lead->gen_why, "the split count takes more than %d "
                     "values", DC_MAX_STEPS);
            return -1;
        }
        lead->step_kmax[k] = (uint32_t)p[i].K;
        lead->step_split[k++] = p[i].S;
    }
    lead->gen_steps = k;
    dc_ksplit_contract(lead, p[n - 1].S, &lead->gen);
    if (!dc_lead_rule_holds(d->sh, d->nshapes, f, &d->o)) {
        lead->gen_steps = 0;
        snprintf(lead->gen_why, sizeof lead->gen_why, "the split count read at each K, as a "
                 "rule of K, does not predict every probed shape");
        return -1;
    }
    return 0;
}

/* One step of the bisection of family f (state 1): adds the midpoint of every two adjacent
 * K of different counts more than 32 apart; when none is left, the rule. Returns the shapes
 * added, 0 when over (success or not), -2 out of memory. */
static int bisect(struct a4w4_discovery *d, size_t f)
{
    static kpoint p[A4W4_DISCOVER_MAX_SHAPES];
    dc_shape *lead = &d->sh[f];
    int pending, added = 0;
    size_t bad, n = points(d, f, p, &pending, &bad);
    if (bad < d->nshapes) {
        snprintf(lead->gen_why, sizeof lead->gen_why, "at K=%zu (bisected between split "
                 "counts %u and %u) no count and alignment fit the tree read there and every K "
                 "read before", d->shapes[bad].K, d->sh[bad].ks_lo, d->sh[bad].ks_hi);
        return -1;
    }
    if (pending)
        return 0;
    for (size_t i = 0; i < n; i++) { /* the smallest count that never falls as K grows */
        p[i].S = i && p[i - 1].S > p[i].lo ? p[i - 1].S : p[i].lo;
        if (p[i].S > p[i].hi) {
            snprintf(lead->gen_why, sizeof lead->gen_why, "the split count falls as K grows (%u "
                     "at K=%zu, %u at K=%zu), outside the monotone assumption", p[i - 1].S,
                     p[i - 1].K, p[i].hi, p[i].K);
            return -1;
        }
    }
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i].S == p[i + 1].S || p[i + 1].K - p[i].K <= 32)
            continue;
        /* the midpoint, or the nearest free K between when a validated shape holds it */
        size_t mid = p[i].K + (p[i + 1].K - p[i].K) / 64 * 32;
        int rc = 1;
        for (size_t t = 0, step = 0; rc == 1; t++, step = t * 32) {
            int up = mid + step < p[i + 1].K, down = t && mid - step > p[i].K;
            if (!up && !down && t)
                break;
            if (up)
                rc = add_k(d, f, mid + step, p[i].S, p[i + 1].S);
            if (rc == 1 && down)
                rc = add_k(d, f, mid - step, p[i].S, p[i + 1].S);
        }
        if (rc == 1) {
            snprintf(lead->gen_why, sizeof lead->gen_why, "every K between %zu and %zu is a "
                     "shape validated, none left to read the split count at", p[i].K,
                     p[i + 1].K);
            return -1;
        }
        if (rc)
            return rc;
        added++;
    }
    if (added)
        return added;
    return conclude(d, f, p, n) ? -1 : 0;
}

int dc_ksplit_step(struct a4w4_discovery *d, size_t f)
{
    dc_shape *lead = &d->sh[f];
    char why[sizeof lead->gen_why];
    snprintf(why, sizeof why, "%s", lead->gen_why);
    if (lead->ks_state == 0) {
        lead->ks_state = ks_start(d, f) ? -1 : 1;
        if (lead->ks_state < 0)
            return 0; /* generalize's reason stands */
    }
    if (lead->ks_state != 1)
        return 0;
    int rc = bisect(d, f);
    if (rc == -2)
        return -2;
    if (rc == -1) {
        lead->ks_state = -1;
        char mine[sizeof lead->gen_why];
        snprintf(mine, sizeof mine, "%s", lead->gen_why);
        snprintf(lead->gen_why, sizeof lead->gen_why, "%.200s; nor is the split count a "
                 "function of K: %.200s", why, mine);
        return 0;
    }
    if (rc == 0 && lead->gen_steps) {
        lead->ks_state = 2;
        lead->gen_ok = 1;
    }
    return rc;
}

/* 1 when the splits of tree t at K are those of one of the structures s's round 1 read. */
static int read_cuts(const dc_shape *s, const a4w4_tree *t)
{
    size_t starts[A4W4_DISCOVER_MAX_K / 32 + 2];
    size_t n = a4w4_tree_splits(t, s->sh.K, starts, sizeof starts / sizeof starts[0]);
    for (int j = 0; n && j < s->nfam; j++) {
        int same = s->fam[j].nsplits == n;
        for (size_t i = 0; same && i < n; i++)
            same = (size_t)s->fam[j].start[i] * 32 == starts[i];
        if (same)
            return 1;
    }
    return 0;
}

void dc_ksplit_finish(struct a4w4_discovery *d, dc_shape *s)
{
    dc_shape *lead = &d->sh[s->family];
    char txt[A4W4_CONTRACT_MAX];
    s->res.verdict = A4W4_DISCOVER_NO_FIT;
    s->res.probes = s->probes_total;
    s->res.calls = s->calls_total;
    s->res.validation_cases = s->nvcases;
    s->res.nondeterministic = s->nondet;
    /* the largest A, at most the family's so far, for which this K and every K read before
     * are S parts aligned to A; its count S then held to the probes and validation outputs */
    for (unsigned A = lead->ks_align; A >= 32 && s->have_tree && !s->nondet &&
                                      !s->position_dep; A -= 32) {
        unsigned S = fits_all(d, s->family, A, s) ? read_count(lead, A, s) : 0;
        a4w4_contract c;
        unsigned keep = lead->ks_align;
        lead->ks_align = A;
        dc_ksplit_contract(lead, S, &c);
        if (!S || !read_cuts(s, &c.tree) || !dc_check(s, &d->o, &c)) {
            lead->ks_align = keep;
            continue;
        }
        s->res.verdict = A4W4_DISCOVER_FOUND;
        s->res.contract = c;
        s->ks_split = S;
        a4w4_contract_format(&c, txt, sizeof txt);
        dc_text_add(&s->ev, "- a K of the split-count bisection (contracts §4.4): %u split%s "
                    "(%s), read from round 1's tree over blocks and held to its %zu probes and "
                    "its validation outputs\n", S, S == 1 ? "" : "s", txt, s->nhist);
        return;
    }
    dc_text_add(&s->ev, "- a K of the split-count bisection: no split count and alignment fit "
                "the tree read here and every K read before%s\n", s->nondet ? " (its outputs "
                "changed between runs)" : s->have_tree ? "" : " (no ordered tree read)");
}
