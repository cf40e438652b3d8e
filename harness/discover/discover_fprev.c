/* discover_fprev.c — FPRev's pairwise probes (Xie et al., USENIX ATC 2025; contracts §4.4
 * "Any tree: FPRev's pairwise probes"): when the interval model reads no tree, every pair of its n blocks is probed with +2^32 at block i, -2^32 at block j and a unit at every
 * other block. In a binary tree the output is n - |LCA(i, j)|, the units added after i and j
 * meet; from all pairs the tree is rebuilt top-down and written as tree(sum=(...)), which
 * dc_fit then validates like every candidate (probes and random real-regime cases). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover_internal.h"

int dc_fprev_start(dc_shape *s, size_t index, const a4w4_discover_opts *o)
{
    (void)o;
    if (s->fprev_tried || s->validate_only || s->check_only || s->ksplit || s->probed != index || s->nondet ||
        s->n < 2 || (s->have_tree && s->nfam > 0))
        return 0;
    s->fprev_tried = 1;
    if (s->n > A4W4_SUMTREE_MAX_BLOCKS) { /* said, never silent: contracts §4.4 "Not read" */
        dc_text_add(&s->ev, "- no interval tree, and FPRev's pairwise probes are not run: they "
                    "take at most %u blocks (K <= %u, the general form's limit), this shape has "
                    "%zu; only the keys' trees are tried\n", A4W4_SUMTREE_MAX_BLOCKS,
                    32 * A4W4_SUMTREE_MAX_BLOCKS, s->n);
        return 0;
    }
    dc_plist L = {0};
    for (size_t i = 0; i < s->n; i++)
        for (size_t j = i + 1; j < s->n; j++)
            dc_plist_add(&L, DC_FPREV_PAIR, (int32_t)i, (int32_t)j, 0, 0, 0, 0);
    if (dc_install_probes(s, &L))
        return -2;
    dc_text_add(&s->ev, "- no interval tree: FPRev's pairwise probes, %zu pairs of the %zu "
                "blocks (+2^%d at one, -2^%d at the other, a unit at every other block); every "
                "candidate is held to them\n", s->nprobes, s->n, DC_E_FPREV, DC_E_FPREV);
    s->phase = DC_PHASE_FPREV;
    return 1;
}

/* The rebuild: D(i, j) = n - output, |LCA(i, j)| in a binary tree. */
typedef struct {
    const dc_shape *s;
    const uint16_t *d; /* [n * n] */
    uint16_t *tok;     /* prefix tokens out */
    size_t ntok;
    char why[160];
} rebuild;

static unsigned D(const rebuild *r, size_t i, size_t j)
{
    return r->d[i * r->s->n + j];
}

/* The subtree over set[0..m) (ascending blocks): the root's children are the block set[0]
 * with every block whose LCA with it is smaller than m, and the blocks whose LCA with it is
 * m; every pair across them must have LCA m (a binary node). 0, or -1 with why. work holds
 * m entries. */
static int build(rebuild *r, uint32_t *set, size_t m, uint32_t *work)
{
    if (m == 1) {
        r->tok[r->ntok++] = (uint16_t)set[0];
        return 0;
    }
    size_t na = 0, nb = 0;
    for (size_t k = 0; k < m; k++) {
        unsigned v = k ? D(r, set[0], set[k]) : 0;
        if (v > m) {
            snprintf(r->why, sizeof r->why, "blocks %u and %u meet above a subtree of %zu blocks",
                     set[0], set[k], m);
            return -1;
        }
        if (v == m)
            work[nb++] = set[k];
        else
            set[na++] = set[k];
    }
    memcpy(set + na, work, nb * sizeof *set);
    if (nb == 0) {
        snprintf(r->why, sizeof r->why, "no block meets %u at the root of a subtree of %zu "
                 "blocks (a node of three or more inputs?)", set[0], m);
        return -1;
    }
    for (size_t a = 0; a < na; a++)
        for (size_t b = na; b < m; b++)
            if (D(r, set[a], set[b]) != m) {
                snprintf(r->why, sizeof r->why, "blocks %u and %u: LCA of %u blocks, %zu in a "
                         "binary tree", set[a], set[b], D(r, set[a], set[b]), m);
                return -1;
            }
    r->tok[r->ntok++] = (uint16_t)(A4W4_SUMTREE_NODE | 2u);
    return build(r, set, na, work) || build(r, set + na, nb, work) ? -1 : 0;
}

/* The LCA sizes from the probes into d[n * n] (symmetric). 0, or -1 with why. */
static int read_counts(const dc_shape *s, uint16_t *d, char *why, size_t len)
{
    for (size_t p = 0; p < s->nprobes; p++) {
        size_t i = (size_t)s->probes[p].p[0], j = (size_t)s->probes[p].p[1];
        float v = s->value[p];
        if (!(v >= 0 && v <= (float)s->n - 2 && v == (float)(int)v)) {
            snprintf(why, len, "blocks %zu and %zu gave %g, not a count of 0..%zu units", i, j,
                     (double)v, s->n - 2);
            return -1;
        }
        d[i * s->n + j] = d[j * s->n + i] = (uint16_t)(s->n - (size_t)v);
    }
    return 0;
}

void dc_fprev_read(dc_shape *s)
{
    size_t n = s->n;
    rebuild r = {s, NULL, NULL, 0, ""};
    uint16_t *d = calloc(n * n, sizeof *d);
    uint32_t *set = malloc(n * sizeof *set), *work = malloc(n * sizeof *work);
    r.d = d;
    r.tok = malloc(2 * n * sizeof *r.tok);
    int rc = d && set && work && r.tok ? 0 : -1;
    if (rc)
        snprintf(r.why, sizeof r.why, "out of memory");
    rc = rc ? rc : read_counts(s, d, r.why, sizeof r.why);
    for (size_t i = 0; !rc && i < n; i++)
        set[i] = (uint32_t)i;
    rc = rc ? rc : build(&r, set, n, work);
    a4w4_contract c = {A4W4_CONTRACT_TREE, 1, {0}};
    a4w4_tree_defaults(&c.tree);
    if (!rc) {
        memcpy(c.tree.sum, r.tok, r.ntok * sizeof *r.tok);
        c.tree.nsum = r.ntok;
        c.tree.sum_blocks = (unsigned)n;
        rc = a4w4_tree_check(&c.tree, s->sh.K, r.why, sizeof r.why) ? -1 : 0;
    }
    char text[A4W4_CONTRACT_MAX];
    if (!rc && a4w4_contract_format(&c, text, sizeof text) >= 0) {
        s->fprev = c;
        s->have_fprev = 1;
        dc_text_add(&s->ev, "- FPRev rebuilt a binary tree over the %zu blocks from |LCA(i, j)| "
                    "= %zu - the units that survived: %.300s%s\n", n, n, text,
                    strlen(text) > 300 ? "..." : "");
    } else {
        dc_text_add(&s->ev, "- FPRev's pairwise probes give no binary tree: %s\n", r.why);
    }
    free(d);
    free(set);
    free(work);
    free(r.tok);
}
