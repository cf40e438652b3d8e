/* discover_rule.c — the rule of K of `discover` (contracts §4.4, "Rules of the shape"): the
 * contracts found at several K of one family (one N and padded-M bucket) made into one
 * contract that names the tree at every K, or the reason none does. */
#include <stdio.h>
#include <string.h>

#include "discover_internal.h"

int dc_as_tree(const a4w4_contract *c, a4w4_tree *t)
{
    if (c->kind == A4W4_CONTRACT_TREE) {
        *t = c->tree;
        return 0;
    }
    if (c->kind != A4W4_CONTRACT_ORDERED)
        return -1;
    a4w4_tree_defaults(t);
    t->split = c->split;
    return 0;
}

/* The tile width T whose splits [0, T), [T, 2T), ... are t's at K: 0 when t has one split
 * (any T >= K fits), -1 when its splits are not such tiles. */
static long tile_of(const a4w4_tree *t, size_t K)
{
    size_t starts[A4W4_DISCOVER_MAX_K / 32 + 2]; /* a split holds at least one block */
    size_t n = a4w4_tree_splits(t, K, starts, sizeof starts / sizeof starts[0]);
    if (n == 0)
        return -1;
    if (n == 1)
        return 0;
    size_t T = starts[1];
    for (size_t i = 0; i < n; i++)
        if (starts[i] != i * T)
            return -1;
    return (long)T;
}

/* The family's probed shapes' trees all one tree but for their splits, each tiles of one T:
 * the rule tree(..., tile=T). 0 with *gen, or -1 with why. */
static int tile_rule(const dc_shape *sh, size_t nshapes, size_t f, a4w4_contract *gen, char *why,
                     size_t whylen)
{
    long T = 0;
    for (size_t i = 0; i < nshapes; i++) {
        a4w4_tree t;
        if (!dc_probed_in(&sh[i], f))
            continue;
        long ti = dc_as_tree(&sh[i].res.contract, &t) ? -1 : tile_of(&t, sh[i].sh.K);
        if (ti < 0 || (ti > 0 && T > 0 && ti != T)) {
            snprintf(why, whylen, "the contracts differ between K and their splits are not "
                     "tiles of one width (at K=%zu)", sh[i].sh.K);
            return -1;
        }
        T = ti > 0 ? ti : T;
    }
    if (T <= 0) {
        snprintf(why, whylen, "the contracts differ between K in more than their splits");
        return -1;
    }
    int have = 0;
    for (size_t i = 0; i < nshapes; i++) {
        a4w4_contract c = {A4W4_CONTRACT_TREE, 1, {0}};
        if (!dc_probed_in(&sh[i], f))
            continue;
        dc_as_tree(&sh[i].res.contract, &c.tree);
        c.tree.split = 1;
        c.tree.nbounds = 0;
        c.tree.tile = (unsigned)T;
        if (tile_of(&c.tree, sh[i].sh.K) < 0 || (have && !a4w4_contract_same(&c, gen)) ||
            a4w4_tree_check(&c.tree, sh[i].sh.K, NULL, 0)) {
            snprintf(why, whylen, "the contracts differ between K in more than their splits "
                     "(at K=%zu)", sh[i].sh.K);
            return -1;
        }
        if (!have)
            *gen = c;
        have = 1;
    }
    return 0;
}

int dc_cuts(const a4w4_tree *t, size_t K, const size_t *starts, size_t n)
{
    size_t got[A4W4_DISCOVER_MAX_K / 32 + 2];
    if (a4w4_tree_check(t, K, NULL, 0) ||
        a4w4_tree_splits(t, K, got, sizeof got / sizeof got[0]) != n)
        return 0;
    return !memcmp(got, starts, (n + 1) * sizeof *got);
}

/* The family's probed shapes' trees all one tree but for their splits, each K's splits those
 * of split=S (S the most splits any K shows) in parts aligned to A elements (contracts §4.2
 * rule 1: round_up(ceil(K/S), A)), for one A, the largest that fits every K: the rule
 * tree(..., split=S, align=A); ordered(S) when that is the tree. 0 with *gen, or -1. */
static int align_rule(const dc_shape *sh, size_t nshapes, size_t f, a4w4_contract *gen)
{
    size_t starts[A4W4_DISCOVER_MAX_K / 32 + 2], S = 0, wmax = 0;
    char t0[A4W4_CONTRACT_MAX] = "", ti[A4W4_CONTRACT_MAX];
    a4w4_contract base = {A4W4_CONTRACT_TREE, 1, {0}};
    for (size_t i = 0; i < nshapes; i++) { /* S, and the rest of the tree one tree */
        a4w4_contract c = {A4W4_CONTRACT_TREE, 1, {0}};
        if (!dc_probed_in(&sh[i], f))
            continue;
        if (dc_as_tree(&sh[i].res.contract, &c.tree) || c.tree.tile || c.tree.sum_blocks)
            return -1;
        size_t n = a4w4_tree_splits(&c.tree, sh[i].sh.K, starts, sizeof starts / sizeof starts[0]);
        S = n > S ? n : S;
        wmax = n > 1 && starts[1] > wmax ? starts[1] : wmax;
        c.tree.split = 2, c.tree.nbounds = 0, c.tree.align = 256;
        int first = !t0[0];
        if (a4w4_contract_format(&c, first ? t0 : ti, sizeof ti) < 0 || (!first && strcmp(t0, ti)))
            return -1;
        base = c;
    }
    if (S < 2 || S > A4W4_SPLIT_MAX)
        return -1;
    base.tree.split = (unsigned)S;
    for (size_t A = wmax / 32 * 32; A >= 32; A -= 32) { /* the largest A that fits */
        int all = 1;
        base.tree.align = (unsigned)A;
        for (size_t i = 0; all && i < nshapes; i++) {
            a4w4_tree t;
            if (!dc_probed_in(&sh[i], f))
                continue;
            dc_as_tree(&sh[i].res.contract, &t);
            size_t n = a4w4_tree_splits(&t, sh[i].sh.K, starts, sizeof starts / sizeof starts[0]);
            all = dc_cuts(&base.tree, sh[i].sh.K, starts, n);
        }
        if (!all)
            continue;
        a4w4_tree d;
        a4w4_tree_defaults(&d);
        d.split = (unsigned)S;
        *gen = base;
        if (!memcmp(&d, &base.tree, sizeof d)) /* align 256: §4.1's split-K */
            *gen = (a4w4_contract){A4W4_CONTRACT_ORDERED, (unsigned)S, d};
        return 0;
    }
    return -1;
}

int dc_probed_in(const dc_shape *s, size_t f)
{
    return s->family == f && !s->validate_only && !s->check_only && !s->ksplit;
}

/* The rule gen (fixed: its boundaries fixed in K) at K into *out. */
static void rule_at(const a4w4_contract *gen, int fixed, size_t K, a4w4_contract *out)
{
    *out = *gen;
    if (!fixed)
        return;
    size_t n = 0;
    while (n < out->tree.nbounds && out->tree.bounds[n] < K)
        n++;
    out->tree.nbounds = n;
    out->tree.split = 1;
}

void dc_rule_at(const dc_shape *lead, size_t K, a4w4_contract *out)
{
    if (lead->gen_steps) { /* the first piece whose K range holds K, else the last */
        int i = 0;
        while (i + 1 < lead->gen_steps && K > lead->step_kmax[i])
            i++;
        dc_ksplit_contract(lead, lead->step_split[i], out);
        return;
    }
    rule_at(&lead->gen, lead->gen_fixed, K, out);
}

/* The splits of the contract found at the family's largest K as fixed boundaries (every
 * split start but 0), the rest of its tree kept: the rule that cuts each K at those below it.
 * 0 with *gen, when a probed K of the family has fewer of them (else the rule is the largest
 * K's contract itself); -1 otherwise. */
static int fixed_rule(const dc_shape *sh, size_t nshapes, size_t f, size_t big, a4w4_contract *gen)
{
    size_t starts[A4W4_DISCOVER_MAX_K / 32 + 2];
    a4w4_tree t;
    if (dc_as_tree(&sh[big].res.contract, &t) || t.tile || t.sum_blocks)
        return -1;
    size_t n = a4w4_tree_splits(&t, sh[big].sh.K, starts, sizeof starts / sizeof starts[0]);
    if (n < 2 || n - 1 > A4W4_TREE_MAX_BOUNDS)
        return -1;
    t.split = 1;
    t.nbounds = n - 1;
    for (size_t i = 1; i < n; i++)
        t.bounds[i - 1] = (uint32_t)starts[i];
    gen->kind = A4W4_CONTRACT_TREE;
    gen->split = 1;
    gen->tree = t;
    for (size_t i = 0; i < nshapes; i++)
        if (dc_probed_in(&sh[i], f) && t.bounds[n - 2] >= sh[i].sh.K)
            return 0;
    return -1;
}

/* 1 when the rule gen (fixed: rule_at) holds on every probed shape of family f: the shape's
 * own contract is the rule's at its K, or that predicts its probes and validation outputs
 * (dc_check). */
static int holds_on_family(dc_shape *sh, size_t nshapes, size_t f, const a4w4_contract *gen,
                           int fixed, const a4w4_discover_opts *o)
{
    for (size_t i = 0; i < nshapes; i++) {
        a4w4_contract c;
        if (!dc_probed_in(&sh[i], f))
            continue;
        rule_at(gen, fixed, sh[i].sh.K, &c);
        if (!a4w4_contract_same(&sh[i].res.contract, &c) && !dc_check(&sh[i], o, &c))
            return 0;
    }
    return 1;
}

int dc_lead_rule_holds(dc_shape *sh, size_t nshapes, size_t f, const a4w4_discover_opts *o)
{
    for (size_t i = 0; i < nshapes; i++) {
        a4w4_contract c;
        if (!dc_probed_in(&sh[i], f))
            continue;
        dc_rule_at(&sh[f], sh[i].sh.K, &c);
        if (!a4w4_contract_same(&sh[i].res.contract, &c) && !dc_check(&sh[i], o, &c))
            return 0;
    }
    return 1;
}

int dc_same_rule(const dc_shape *a, const dc_shape *b)
{
    if (a == b)
        return 1;
    if (a->gen_fixed != b->gen_fixed || a->gen_steps != b->gen_steps ||
        !a4w4_contract_same(&a->gen, &b->gen))
        return 0;
    for (int i = 0; i < a->gen_steps; i++) {
        a4w4_contract ca, cb;
        dc_ksplit_contract(a, a->step_split[i], &ca);
        dc_ksplit_contract(b, b->step_split[i], &cb);
        if (a->step_kmax[i] != b->step_kmax[i] || !a4w4_contract_same(&ca, &cb))
            return 0;
    }
    return 1;
}

void dc_generalize(dc_shape *sh, size_t nshapes, size_t f, const a4w4_discover_opts *o)
{
    dc_shape *lead = &sh[f];
    size_t ks[3] = {0}, nk = 0, big = f;
    lead->gen_ok = lead->gen_fixed = lead->gen_steps = 0;
    lead->gen_tried = 1;
    for (size_t i = 0; i < nshapes; i++) {
        const dc_shape *s = &sh[i];
        if (!dc_probed_in(s, f))
            continue;
        if (s->res.verdict != A4W4_DISCOVER_FOUND) {
            snprintf(lead->gen_why, sizeof lead->gen_why, "no contract fits at %zux%zux%zu",
                     s->sh.M, s->sh.N, s->sh.K);
            return;
        }
        if (nk < 3 && (nk < 1 || ks[0] != s->sh.K) && (nk < 2 || ks[1] != s->sh.K))
            ks[nk++] = s->sh.K;
        big = s->sh.K > sh[big].sh.K ? i : big;
    }
    if (nk < 3) {
        snprintf(lead->gen_why, sizeof lead->gen_why, "probed at %zu K only (a rule of K needs "
                 "three)", nk);
        return;
    }
    /* the candidates, each held to every probed shape: the splits as tiles of one width,
     * then the contract found at the largest K (it shows most of the tree: lanes dealt past
     * their first chunk), then the others, then the splits as S parts aligned to A, then the
     * largest K's splits as fixed boundaries */
    a4w4_contract gen;
    if (!tile_rule(sh, nshapes, f, &gen, lead->gen_why, sizeof lead->gen_why) &&
        holds_on_family(sh, nshapes, f, &gen, 0, o)) {
        lead->gen = gen;
        lead->gen_ok = 1;
        return;
    }
    for (size_t t = 0; t <= nshapes; t++) {
        size_t i = t == 0 ? big : t - 1;
        if (i >= nshapes || !dc_probed_in(&sh[i], f) || (t && i == big))
            continue;
        if (holds_on_family(sh, nshapes, f, &sh[i].res.contract, 0, o)) {
            lead->gen = sh[i].res.contract;
            lead->gen_ok = 1;
            return;
        }
    }
    if (!align_rule(sh, nshapes, f, &gen) && holds_on_family(sh, nshapes, f, &gen, 0, o)) {
        lead->gen = gen;
        lead->gen_ok = 1;
        return;
    }
    if (!fixed_rule(sh, nshapes, f, big, &gen) && holds_on_family(sh, nshapes, f, &gen, 1, o)) {
        lead->gen = gen;
        lead->gen_fixed = lead->gen_ok = 1;
        return;
    }
    snprintf(lead->gen_why, sizeof lead->gen_why, "no contract found at one K holds at every K "
             "probed, nor do their splits make tiles of one width, S parts aligned to one A or "
             "boundaries fixed in K");
}
