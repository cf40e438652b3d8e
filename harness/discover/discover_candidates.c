/* discover_candidates.c — the candidate contracts consistent with `discover`'s structure and
 * numeric probes (discover_fit.h; contracts §4.4): interval trees with their splits, fused
 * leaves, interleaved lanes and per-tile partials. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover_fit.h"

/* ---- candidates --------------------------------------------------------------------------- */


void dc_cand_push(cand_list *L, const a4w4_contract *c)
{
    char a[A4W4_CONTRACT_MAX], b[A4W4_CONTRACT_MAX];
    if (L->n >= MAX_CANDIDATES || a4w4_contract_format(c, a, sizeof a) < 0)
        return;
    for (size_t i = 0; i < L->n; i++)
        if (a4w4_contract_format(&L->c[i], b, sizeof b) >= 0 && !strcmp(a, b))
            return;
    L->c[L->n++] = *c;
}

/* The splits of f as a tree's split key: split=S when a contracts §4.1 split rule gives the
 * same starts at this K (smallest S), else explicit boundaries. 0, or -1 (too many). */
static int set_splits(a4w4_tree *t, const dc_family *f, size_t K)
{
    size_t starts[A4W4_TREE_MAX_BOUNDS + 2];
    t->nbounds = 0;
    t->split = 1;
    for (unsigned S = 1; S <= 64; S++) {
        a4w4_tree probe = *t;
        probe.split = S;
        size_t n = a4w4_tree_splits(&probe, K, starts, sizeof starts / sizeof starts[0]);
        if (n != f->nsplits)
            continue;
        int same = 1;
        for (size_t j = 0; j < n && same; j++)
            same = starts[j] == (size_t)f->start[j] * 32;
        if (same) {
            t->split = S;
            return 0;
        }
    }
    if (f->nsplits - 1 > A4W4_TREE_MAX_BOUNDS)
        return -1;
    for (size_t j = 1; j < f->nsplits; j++)
        t->bounds[j - 1] = f->start[j] * 32;
    t->nbounds = f->nsplits - 1;
    return 0;
}

/* A tree contract from a structure and numeric choices; ordered(S) when it is that tree. */
static a4w4_contract contract_of(const a4w4_tree *t)
{
    a4w4_contract c = {A4W4_CONTRACT_TREE, 1, *t};
    a4w4_tree d;
    a4w4_tree_defaults(&d);
    d.split = t->split;
    if (t->nbounds == 0 && !memcmp(&d, t, sizeof d)) {
        c.kind = A4W4_CONTRACT_ORDERED;
        c.split = t->split;
    }
    return c;
}

/* Leaf width G and leaves per node F for elements-per-node E and precision P. */
static void leaf_fuse(const dc_shape *s, const dc_family *f, unsigned P, unsigned *G,
                      unsigned *F)
{
    unsigned long long E = s->num.elem_span > 0 && s->num.elem_span < 32 && f->fuse == 1
                               ? (unsigned long long)s->num.elem_span
                               : 32ull * f->fuse;
    unsigned g = E < 32 ? (unsigned)E : 32;
    if (P > 0 && s->num.leaf > 0 && (unsigned)s->num.leaf <= g)
        g = (unsigned)s->num.leaf;
    unsigned long long fuse = E / g;
    *G = g;
    *F = fuse > A4W4_TREE_FUSE_MAX ? A4W4_TREE_FUSE_MAX : (unsigned)fuse;
}

/* Every contract the probes leave open, best first. */
void dc_candidates(const dc_shape *s, cand_list *L)
{
    const dc_numeric *m = &s->num;
    int precs[70], np = 0;
    if (m->prec_lo == m->prec_hi && m->prec_lo >= 0)
        precs[np++] = m->prec_lo;
    else {
        if (m->prec_hi >= 65)
            precs[np++] = 0;
        for (int p = m->prec_lo < 8 ? 8 : m->prec_lo; p <= 64 && p <= m->prec_hi; p++)
            precs[np++] = p;
    }
    int rounds[2] = {A4W4_ROUND_RNE, A4W4_ROUND_RZ}, nr = 2, r0 = 0;
    if (m->round >= 0)
        r0 = m->round == A4W4_ROUND_RZ, nr = 1;
    for (int fi = 0; fi < s->nfam; fi++) {
        const dc_family *f = &s->fam[fi];
        if (f->fuse >= s->n && fi == 0 && m->prec_lo == 0) {
            a4w4_contract ex = {A4W4_CONTRACT_EXACT, 1, {0}};
            dc_cand_push(L, &ex);
        }
        for (int pi = 0; pi < np; pi++)
            for (int ai = 0; ai < 2; ai++) {
                int acc = m->acc >= 0 ? m->acc : ai;
                if (m->acc >= 0 && ai)
                    break;
                for (int ri = 0; ri < nr; ri++)
                    for (int fr = 0; fr < 2; fr++) {
                        a4w4_tree t;
                        a4w4_tree_defaults(&t);
                        t.order = f->order;
                        t.reduce = f->reduce;
                        t.combine = f->combine;
                        t.prec = (unsigned)precs[pi];
                        t.round = (a4w4_tree_round)rounds[r0 + ri];
                        t.acc = (a4w4_tree_acc)acc;
                        if (acc == A4W4_ACC_BF16)
                            t.final = A4W4_ROUND_RNE; /* a bf16 value: final is exact */
                        else if (m->round1 >= 0)
                            t.final = (a4w4_tree_round)m->round1;
                        else
                            t.final = fr ? A4W4_ROUND_RZ : A4W4_ROUND_RNE;
                        if ((acc == A4W4_ACC_BF16 || m->round1 >= 0) && fr)
                            continue;
                        leaf_fuse(s, f, t.prec, &t.leaf, &t.fuse);
                        if (set_splits(&t, f, s->sh.K))
                            continue;
                        a4w4_contract c = contract_of(&t);
                        dc_cand_push(L, &c);
                    }
            }
    }
}

/* The trees beyond the interval model (contracts §4.2 rules 1a and 2): fused 64/128-K leaves
 * (RNE or truncated), L interleaved lanes dealt blocks or chunks (chained or pairwise), and,
 * when the fitted order cut K at explicit boundaries, tile=256 (per-tile partials). Every
 * other key at ordered(1)'s value, final RNE (and RZ when the first rounding to bf16 was read
 * as RZ or not read). Each is checked on the probes and the validation cases like any other
 * candidate, so one is accepted only when it predicts every output checked at this shape. */
void dc_family_candidates(const dc_shape *s, int tiles, cand_list *L)
{
    static const unsigned lanes[] = {2, 4, 8, 16}, chunks[] = {32, 64, 128, 256, 512};
    int finals = s->nfam > 0 && s->num.round1 == A4W4_ROUND_RNE ? 1 : 2;
    for (int fr = 0; fr < finals; fr++) {
        a4w4_tree t;
        a4w4_tree_defaults(&t);
        t.final = fr ? A4W4_ROUND_RZ : A4W4_ROUND_RNE;
        for (unsigned G = 64; G <= 128; G *= 2)
            for (int lr = 0; lr < 2 && G < s->sh.K + 64; lr++) {
                a4w4_tree f = t;
                f.leaf = G;
                f.lround = lr ? A4W4_ROUND_RZ : A4W4_ROUND_RNE;
                dc_cand_push(L, &(a4w4_contract){A4W4_CONTRACT_TREE, 1, f});
            }
        for (size_t li = 0; li < sizeof lanes / sizeof lanes[0]; li++)
            for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++)
                for (int comb = 0; comb < 2; comb++) {
                    a4w4_tree f = t;
                    f.lanes = lanes[li];
                    f.chunk = chunks[ci];
                    f.lanecomb = comb ? A4W4_REDUCE_PAIRWISE : A4W4_REDUCE_CHAIN;
                    if ((size_t)f.chunk < s->sh.K) /* else one lane: ordered(1) */
                        dc_cand_push(L, &(a4w4_contract){A4W4_CONTRACT_TREE, 1, f});
                }
        if (tiles) {
            a4w4_tree f = t;
            f.tile = 256;
            dc_cand_push(L, &(a4w4_contract){A4W4_CONTRACT_TREE, 1, f});
        }
    }
}

/* The xor-shuffle trees (contracts §4.2 rule 1a: L lanes, chunks dealt by index mod L, lane
 * values reduced by v[l] = node(v[l], v[l ^ x]), x = L/2 .. 1): a butterfly reduction that
 * FPRev's pairwise probes read as a general tree at one K. Pushed before FPRev's tree, each is
 * held to every pair probe like any candidate: one accepted gives the same LCA for every pair
 * (i, j), so it is FPRev's tree at this K, in a spelling that holds at every K. */
void dc_xor_candidates(const dc_shape *s, cand_list *L)
{
    static const unsigned lanes[] = {4, 8, 16, 32, 64}, chunks[] = {32, 64, 128, 256};
    for (int fr = 0; fr < 2; fr++)
        for (size_t li = 0; li < sizeof lanes / sizeof lanes[0]; li++)
            for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++) {
                a4w4_tree f;
                a4w4_tree_defaults(&f);
                f.final = fr ? A4W4_ROUND_RZ : A4W4_ROUND_RNE;
                f.lanes = lanes[li];
                f.chunk = chunks[ci];
                f.lanecomb = A4W4_REDUCE_XOR;
                if ((size_t)f.chunk * 2 <= s->sh.K) /* two lanes at least hold blocks */
                    dc_cand_push(L, &(a4w4_contract){A4W4_CONTRACT_TREE, 1, f});
            }
}

void dc_element_lane_candidates(const dc_shape *s, const cand_list *fitted, cand_list *L)
{
    static const unsigned lanes[] = {2, 4, 8, 16};
    for (size_t i = 0; s->num.elem_span == 1 && i < fitted->n; i++)
        for (size_t li = 0; li < sizeof lanes / sizeof lanes[0]; li++)
            for (int comb = 0; comb < 2; comb++) {
                a4w4_contract c = fitted->c[i];
                if (c.kind != A4W4_CONTRACT_TREE || c.tree.leaf != 1 || c.tree.prec != 0 ||
                    c.tree.lanes != 1 || c.tree.sum_blocks)
                    continue;
                c.tree.lanes = lanes[li];
                c.tree.chunk = 1;
                c.tree.lanecomb = comb ? A4W4_REDUCE_PAIRWISE : A4W4_REDUCE_CHAIN;
                dc_cand_push(L, &c);
            }
}
