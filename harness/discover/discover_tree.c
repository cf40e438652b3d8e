/* discover_tree.c — the ordered tree over blocks that `discover` reconstructs from its gap
 * probes, and the trees of the model family it matches them against (contracts §4.4 steps 1
 * and 2; the family is contracts §4.2's, restricted to element 0 of every block).
 *
 * An ordered tree: every node's leaves form an interval of blocks and its children are
 * consecutive sub-intervals. It is determined by its gap data: for each gap t between blocks
 * t-1 and t, the two children of LCA(t-1, t) that hold them, [lo[t], t) and [t, hi[t]). A node
 * with children boundaries b_0 < b_1 < ... < b_m owns the gaps b_1 .. b_{m-1}, and gap b_i has
 * lo = b_{i-1}, hi = b_{i+1}; so consecutive gaps t < t' of one node are linked by hi[t] = t'
 * and lo[t'] = t, and the chains of linked gaps are the nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover_internal.h"
#include "grow.h"

int dc_gaps_init(dc_gaps *g, size_t n)
{
    g->n = n;
    g->lo = calloc(n + 1, sizeof *g->lo);
    g->hi = calloc(n + 1, sizeof *g->hi);
    if (!g->lo || !g->hi) {
        dc_gaps_free(g);
        return -2;
    }
    return 0;
}

void dc_gaps_free(dc_gaps *g)
{
    free(g->lo);
    free(g->hi);
    g->lo = g->hi = NULL;
}

void dc_tree_free(dc_tree *t)
{
    free(t->nodes);
    free(t->bounds);
    free(t->leaf_parent);
    memset(t, 0, sizeof *t);
    t->root = -1;
}

static int cmp_node(const void *a, const void *b)
{
    const dc_node *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* The node with interval [lo, hi) (nodes sorted by cmp_node), or -1. */
static int32_t find_node(const dc_tree *t, uint32_t lo, uint32_t hi)
{
    size_t a = 0, b = t->nnodes;
    while (a < b) {
        size_t m = (a + b) / 2;
        const dc_node *x = &t->nodes[m];
        if (x->lo < lo || (x->lo == lo && x->hi < hi))
            a = m + 1;
        else
            b = m;
    }
    return a < t->nnodes && t->nodes[a].lo == lo && t->nodes[a].hi == hi ? (int32_t)a : -1;
}

/* The nodes as chains of linked gaps (no parents yet). 0, -1 (bad data, err), -2. */
static int chain_nodes(const dc_gaps *g, dc_tree *t, char *err, size_t errlen)
{
    size_t n = g->n;
    uint8_t *pred = calloc(n + 1, 1);
    t->nodes = calloc(n, sizeof *t->nodes);
    t->bounds = calloc(3 * n + 3, sizeof *t->bounds); /* (n - 1) gaps + 2 per node */
    if (!pred || !t->nodes || !t->bounds) {
        free(pred);
        return -2;
    }
    for (size_t s = 1; s < n; s++) {
        if (g->lo[s] >= s || g->hi[s] <= s || g->hi[s] > n) {
            snprintf(err, errlen, "gap (%zu,%zu): children [%u,%zu) and [%zu,%u) are not "
                     "intervals around the gap", s - 1, s, g->lo[s], s, s, g->hi[s]);
            free(pred);
            return -1;
        }
        if (g->hi[s] < n && g->lo[g->hi[s]] == s)
            pred[g->hi[s]] = 1;
    }
    for (size_t s = 1; s < n; s++) {
        if (pred[s])
            continue;
        dc_node *v = &t->nodes[t->nnodes++];
        v->lo = g->lo[s];
        v->first = (uint32_t)t->nbounds;
        v->parent = -1;
        t->bounds[t->nbounds++] = g->lo[s];
        size_t c = s;
        for (;;) {
            t->bounds[t->nbounds++] = (uint32_t)c;
            size_t next = g->hi[c];
            if (next < n && g->lo[next] == c)
                c = next;
            else
                break;
        }
        t->bounds[t->nbounds++] = g->hi[c];
        v->hi = g->hi[c];
        v->nchild = (uint32_t)(t->nbounds - v->first - 1);
    }
    free(pred);
    return 0;
}

/* Parents: every child interval of two or more blocks must be a node, every node but the root
 * [0, n) some node's child, every leaf some node's child. */
static int link_parents(dc_tree *t, char *err, size_t errlen)
{
    size_t n = t->n;
    /* sort nodes, remapping nothing: bounds are referenced by index (first), which moves along */
    qsort(t->nodes, t->nnodes, sizeof *t->nodes, cmp_node);
    for (size_t i = 1; i < t->nnodes; i++)
        if (t->nodes[i].lo == t->nodes[i - 1].lo && t->nodes[i].hi == t->nodes[i - 1].hi) {
            snprintf(err, errlen, "two nodes claim the interval [%u,%u)", t->nodes[i].lo,
                     t->nodes[i].hi);
            return -1;
        }
    for (size_t k = 0; k < n; k++)
        t->leaf_parent[k] = -1;
    for (size_t i = 0; i < t->nnodes; i++) {
        const dc_node *v = &t->nodes[i];
        for (uint32_t c = 0; c < v->nchild; c++) {
            uint32_t a = t->bounds[v->first + c], b = t->bounds[v->first + c + 1];
            if (b - a == 1) {
                t->leaf_parent[a] = (int32_t)i;
                continue;
            }
            int32_t child = find_node(t, a, b);
            if (child < 0) {
                snprintf(err, errlen, "node [%u,%u) has a child [%u,%u) that no gap makes a "
                         "node (its gaps cross another interval)", v->lo, v->hi, a, b);
                return -1;
            }
            t->nodes[child].parent = (int32_t)i;
        }
    }
    t->root = find_node(t, 0, (uint32_t)n);
    if (t->root < 0) {
        snprintf(err, errlen, "no node spans all %zu blocks", n);
        return -1;
    }
    for (size_t i = 0; i < t->nnodes; i++)
        if ((int32_t)i != t->root && t->nodes[i].parent < 0) {
            snprintf(err, errlen, "node [%u,%u) hangs under no node", t->nodes[i].lo,
                     t->nodes[i].hi);
            return -1;
        }
    for (size_t k = 0; k < n; k++)
        if (t->leaf_parent[k] < 0) {
            snprintf(err, errlen, "block %zu hangs under no node", k);
            return -1;
        }
    return 0;
}

int dc_tree_build(const dc_gaps *g, dc_tree *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->root = -1;
    t->n = g->n;
    if (g->n < 2)
        return 0;
    t->leaf_parent = calloc(g->n, sizeof *t->leaf_parent);
    if (!t->leaf_parent)
        return -2;
    int rc = chain_nodes(g, t, err, errlen);
    if (rc == 0)
        rc = link_parents(t, err, errlen);
    if (rc)
        dc_tree_free(t);
    return rc;
}

/* Depth of node v (root 0). */
static int depth(const dc_tree *t, int32_t v)
{
    int d = 0;
    while (t->nodes[v].parent >= 0) {
        v = t->nodes[v].parent;
        d++;
    }
    return d;
}

int32_t dc_tree_lca(const dc_tree *t, size_t i, size_t j)
{
    int32_t a = t->leaf_parent[i], b = t->leaf_parent[j];
    int da = depth(t, a), db = depth(t, b);
    while (da > db) {
        a = t->nodes[a].parent;
        da--;
    }
    while (db > da) {
        b = t->nodes[b].parent;
        db--;
    }
    while (a != b) {
        a = t->nodes[a].parent;
        b = t->nodes[b].parent;
    }
    return a;
}

int dc_tree_child_of(const dc_tree *t, int32_t v, size_t k)
{
    const dc_node *x = &t->nodes[v];
    if (k < x->lo || k >= x->hi)
        return -1;
    for (uint32_t c = 0; c < x->nchild; c++)
        if (k < t->bounds[x->first + c + 1])
            return (int)c;
    return -1;
}

/* ---- the family's trees (contracts §4.2 rules 1, 3, 5, 6 over element 0 of each block) ----
 * Trees are built as node lists (children boundaries), then turned into gap data. A node with
 * one child is not a node (it is that child, contracts §4.4 step 2). */

typedef struct {
    uint32_t *b;   /* boundaries of every node, each node's list preceded by its count */
    size_t n, cap;
    int oom;
} nodelist;

static void emit(nodelist *L, const uint32_t *bounds, size_t nb)
{
    if (nb < 3) /* fewer than two children */
        return;
    if (A4W4_GROW(L->b, L->n + nb + 1, L->cap, 256)) {
        L->oom = 1;
        return;
    }
    L->b[L->n++] = (uint32_t)nb;
    memcpy(L->b + L->n, bounds, nb * sizeof *bounds);
    L->n += nb;
}

typedef struct {
    uint32_t lo, hi;
} ival;

static int cmp_ival(const void *a, const void *b)
{
    const ival *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* A node over the given child intervals (any order; they tile an interval). */
static ival node_of(nodelist *L, ival *kids, size_t nk)
{
    if (nk == 1)
        return kids[0];
    qsort(kids, nk, sizeof *kids, cmp_ival);
    uint32_t bounds[64 + 2];
    uint32_t *bp = nk + 1 <= sizeof bounds / sizeof bounds[0] ? bounds : malloc((nk + 1) * sizeof *bp);
    if (!bp) {
        L->oom = 1;
        return (ival){kids[0].lo, kids[nk - 1].hi};
    }
    for (size_t i = 0; i < nk; i++)
        bp[i] = kids[i].lo;
    bp[nk] = kids[nk - 1].hi;
    emit(L, bp, nk + 1);
    if (bp != bounds)
        free(bp);
    return (ival){kids[0].lo, kids[nk - 1].hi};
}

/* The pairwise tree over v[0..r) in consumption order (contracts §4.2 rule 5: level by level,
 * an odd last value carried up): the root's children are the tree of the first 2^(L-1)
 * values and that of the rest, L = ceil(log2 r). */
static ival pairwise(nodelist *L, const ival *v, size_t r)
{
    if (r == 1)
        return v[0];
    size_t half = 1;
    while (half * 2 < r)
        half *= 2;
    ival kids[2] = {pairwise(L, v, half), pairwise(L, v + half, r - half)};
    return node_of(L, kids, 2);
}

/* One split [a, b) (contracts §4.2 rules 3 and 5). */
static ival split_tree(nodelist *L, const dc_family *f, uint32_t a, uint32_t b)
{
    size_t nl = b - a, F = f->fuse, ng = (nl + F - 1) / F;
    ival *groups = malloc(ng * sizeof *groups), *kids = malloc((F + 1) * sizeof *kids);
    ival cur = {a, a};
    if (!groups || !kids) {
        L->oom = 1;
        free(groups);
        free(kids);
        return (ival){a, b};
    }
    for (size_t g = 0; g < ng; g++) {
        size_t m = 0;
        for (size_t i = g * F; i < nl && i < (g + 1) * F; i++) {
            uint32_t leaf = f->order == A4W4_ORDER_ASC ? a + (uint32_t)i : b - 1 - (uint32_t)i;
            kids[m++] = (ival){leaf, leaf + 1};
        }
        if (f->reduce == A4W4_REDUCE_PAIRWISE) {
            groups[g] = node_of(L, kids, m);
            continue;
        }
        if (g > 0) /* chain: node(acc, the group's leaves) */
            kids[m++] = cur;
        cur = node_of(L, kids, m);
    }
    if (f->reduce == A4W4_REDUCE_PAIRWISE)
        cur = pairwise(L, groups, ng);
    free(groups);
    free(kids);
    return cur;
}

int dc_family_gaps(const dc_family *f, size_t n, dc_gaps *g)
{
    nodelist L = {0};
    ival *splits = malloc(f->nsplits * sizeof *splits);
    if (!splits)
        return -2;
    for (size_t j = 0; j < f->nsplits; j++) {
        uint32_t a = f->start[j], b = j + 1 < f->nsplits ? f->start[j + 1] : (uint32_t)n;
        splits[j] = split_tree(&L, f, a, b);
    }
    if (f->combine == A4W4_REDUCE_PAIRWISE)
        pairwise(&L, splits, f->nsplits);
    else
        for (size_t j = 1; j < f->nsplits; j++) {
            ival kids[2] = {{0, splits[j].lo}, splits[j]};
            node_of(&L, kids, 2);
        }
    free(splits);
    if (L.oom) {
        free(L.b);
        return -2;
    }
    for (size_t i = 0; i < L.n; i += L.b[i] + 1) {
        const uint32_t *b = L.b + i + 1;
        for (uint32_t c = 1; c + 1 < L.b[i]; c++) {
            g->lo[b[c]] = b[c - 1];
            g->hi[b[c]] = b[c + 1];
        }
    }
    free(L.b);
    return 0;
}

/* ---- parsing the observed gaps as a family tree ---------------------------------------- */

typedef struct {
    const dc_gaps *obs;
    dc_family f;     /* order, fuse, reduce, combine set; splits being found */
    dc_gaps tmp;     /* scratch for one split's expected gaps */
    int oom;
} parser;

/* 1 when the observed gaps inside [a, b) are those of one split [a, b) under p->f. */
static int is_split(parser *p, uint32_t a, uint32_t b)
{
    if (b - a < 2)
        return 1;
    dc_family one = p->f;
    one.nsplits = 1;
    one.start[0] = 0;
    /* build the split as if it were [0, b-a) and compare shifted */
    size_t n = b - a;
    for (size_t t = 1; t < n; t++)
        p->tmp.lo[t] = p->tmp.hi[t] = 0;
    if (dc_family_gaps(&one, n, &p->tmp)) {
        p->oom = 1;
        return 0;
    }
    for (size_t t = 1; t < n; t++)
        if (p->obs->lo[a + t] != a + p->tmp.lo[t] || p->obs->hi[a + t] != a + p->tmp.hi[t])
            return 0;
    return 1;
}

/* The gap g in (a, b) with lo[g] == a and hi[g] == b (the only gap of a two-child node
 * [a, b)), or 0. */
static uint32_t two_child_gap(const parser *p, uint32_t a, uint32_t b)
{
    for (uint32_t g = a + 1; g < b; g++)
        if (p->obs->lo[g] == a && p->obs->hi[g] == b)
            return g;
    return 0;
}

static int add_split(parser *p, uint32_t a)
{
    if (p->f.nsplits >= A4W4_TREE_MAX_BOUNDS + 1)
        return 0;
    p->f.start[p->f.nsplits++] = a;
    return 1;
}

/* Chain combine over [0, b): one split, or node([0, g), split [g, b)). Splits are found from
 * the last one down, then reversed. */
static int parse_chain(parser *p, uint32_t b)
{
    while (!is_split(p, 0, b)) {
        uint32_t g = two_child_gap(p, 0, b);
        if (!g || !is_split(p, g, b) || !add_split(p, g))
            return 0;
        b = g;
    }
    if (!add_split(p, 0))
        return 0;
    for (size_t i = 0, j = p->f.nsplits - 1; i < j; i++, j--) {
        uint32_t x = p->f.start[i];
        p->f.start[i] = p->f.start[j];
        p->f.start[j] = x;
    }
    return 1;
}

/* Pairwise combine over [a, b) holding m splits: one split when m == 1, else a two-child node
 * whose left child holds the first 2^(L-1) of them, L = ceil(log2 m) (contracts §4.2 rule 6,
 * the shape pairwise() builds). */
static int parse_pairwise(parser *p, uint32_t a, uint32_t b, size_t m)
{
    if (m == 1)
        return is_split(p, a, b) && add_split(p, a);
    if (b - a < m)
        return 0;
    uint32_t g = two_child_gap(p, a, b);
    size_t left = 1;
    while (left * 2 < m)
        left *= 2;
    return g && parse_pairwise(p, a, g, left) && parse_pairwise(p, g, b, m - left);
}

/* 1 when the whole family tree of p->f (splits found) equals the observed gaps. */
static int whole_matches(parser *p)
{
    dc_gaps full;
    if (dc_gaps_init(&full, p->obs->n)) {
        p->oom = 1;
        return 0;
    }
    int ok = !dc_family_gaps(&p->f, p->obs->n, &full);
    for (size_t t = 1; ok && t < p->obs->n; t++)
        ok = full.lo[t] == p->obs->lo[t] && full.hi[t] == p->obs->hi[t];
    dc_gaps_free(&full);
    return ok;
}

/* Start the parser on one structure: F blocks per node and combo bits (1: desc, 2: pairwise
 * reduce, 4: pairwise combine); no splits yet. */
static void start_structure(parser *p, unsigned F, int combo)
{
    memset(&p->f, 0, sizeof p->f);
    p->f.fuse = F;
    p->f.order = (combo & 1) ? A4W4_ORDER_DESC : A4W4_ORDER_ASC;
    p->f.reduce = (combo & 2) ? A4W4_REDUCE_PAIRWISE : A4W4_REDUCE_CHAIN;
    p->f.combine = (combo & 4) ? A4W4_REDUCE_PAIRWISE : A4W4_REDUCE_CHAIN;
}

/* Order of preference of two structures (contracts §4.4: the simplest spelling first). */
static int better(const dc_family *x, const dc_family *y)
{
    if (x->nsplits != y->nsplits)
        return x->nsplits < y->nsplits;
    if (x->fuse != y->fuse)
        return x->fuse < y->fuse;
    if (x->reduce != y->reduce)
        return x->reduce < y->reduce;
    if (x->order != y->order)
        return x->order < y->order;
    return x->combine < y->combine;
}

static int same_structure(const dc_family *x, const dc_family *y)
{
    return x->nsplits == y->nsplits && x->fuse == y->fuse && x->reduce == y->reduce &&
           x->order == y->order && x->combine == y->combine &&
           !memcmp(x->start, y->start, x->nsplits * sizeof x->start[0]);
}

/* Insert f into out[0..*k) in preference order (at most max kept). */
static void keep(dc_family *out, int *k, size_t max, const dc_family *f)
{
    for (int i = 0; i < *k; i++)
        if (same_structure(&out[i], f))
            return;
    int pos = *k;
    while (pos > 0 && better(f, &out[pos - 1]))
        pos--;
    if ((size_t)pos >= max)
        return;
    int last = *k < (int)max ? *k : (int)max - 1;
    for (int i = last; i > pos; i--)
        out[i] = out[i - 1];
    out[pos] = *f;
    if (*k < (int)max)
        (*k)++;
}

static size_t widest_node(const dc_gaps *g);

int dc_family_parse(const dc_gaps *g, dc_family *out, size_t max)
{
    int k = 0;
    size_t n = g->n;
    parser p = {.obs = g};
    if (n < 2) {
        dc_family f = {A4W4_ORDER_ASC, 1, A4W4_REDUCE_CHAIN, A4W4_REDUCE_CHAIN, 1, {0}};
        if (max)
            out[k++] = f;
        return k;
    }
    if (dc_gaps_init(&p.tmp, n))
        return -2;
    /* a node of F leaves has F children (F + 1 with the accumulator): no F above the widest
     * observed node can give the tree */
    size_t widest = widest_node(g);
    for (unsigned F = 1; F <= widest && !p.oom; F++)
        for (int combo = 0; combo < 8 && !p.oom; combo++) {
            start_structure(&p, F, combo);
            if (p.f.combine == A4W4_REDUCE_CHAIN) {
                if (parse_chain(&p, (uint32_t)n) && whole_matches(&p))
                    keep(out, &k, max, &p.f);
                continue;
            }
            /* pairwise: the number of splits fixes the shape; the fewest that fits */
            for (size_t m = 1; m <= n && m <= A4W4_TREE_MAX_BOUNDS + 1 && !p.oom; m++) {
                p.f.nsplits = 0;
                if (parse_pairwise(&p, 0, (uint32_t)n, m) && whole_matches(&p)) {
                    keep(out, &k, max, &p.f);
                    break;
                }
            }
        }
    dc_gaps_free(&p.tmp);
    return p.oom ? -2 : k;
}

/* The widest node the gap data show (children count): no fuse above it can give the tree. */
static size_t widest_node(const dc_gaps *g)
{
    size_t n = g->n, widest = 2;
    for (size_t t = 1; t < n; t++) {
        size_t kids = 2, c = t;
        while (g->hi[c] < n && g->lo[g->hi[c]] == c && kids <= n) {
            c = g->hi[c];
            kids++;
        }
        widest = kids > widest ? kids : widest;
    }
    return widest;
}

int dc_family_splits(const dc_gaps *g, dc_family *out)
{
    size_t n = g->n;
    parser p = {.obs = g};
    int found = 0;
    if (n < 2 || dc_gaps_init(&p.tmp, n))
        return n < 2 ? (*out = (dc_family){A4W4_ORDER_ASC, 1, A4W4_REDUCE_CHAIN,
                                             A4W4_REDUCE_CHAIN, 1, {0}}, 1) : -2;
    size_t widest = widest_node(g);
    for (unsigned F = 1; F <= widest && !p.oom; F++)
        for (int combo = 0; combo < 4 && !p.oom; combo++) {
            start_structure(&p, F, combo);
            /* greedy: from each split start, the longest interval that is one split */
            for (uint32_t a = 0; a < n && add_split(&p, a);) {
                uint32_t b = a + 1;
                for (uint32_t e = (uint32_t)n; e > a + 1; e--)
                    if (is_split(&p, a, e)) {
                        b = e;
                        break;
                    }
                a = b;
            }
            if (!found || p.f.nsplits < out->nsplits) {
                *out = p.f;
                found = 1;
            }
        }
    dc_gaps_free(&p.tmp);
    return p.oom ? -2 : found;
}
