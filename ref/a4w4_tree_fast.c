/* a4w4_tree_fast.c — the fast path of tree contracts with leaf=32, prec=0, acc=fp32 (contracts
 * §4.2 "The fast path"): one tile of outputs (mr rows x 16 lanes) at a time, its block values
 * from the kernel table's blocks(), reduced by the tree with every output of the tile in step
 * (the tree's shape depends only on K). Held bit-equal to the plain oracle (a4w4_tree.c) by
 * tests/test_tree.c.
 *
 * Nodes: a 2-input RNE node is the fp32 addition itself. Any other node (a fused group, or RZ)
 * sums its fp32 inputs in double with TwoSum, keeping the errors in a second double, also by
 * TwoSum; when every error of that second sum is zero the pair (s, c) holds the exact sum, and
 * one TwoSum renormalizes it so that |c| <= ulp(s)/2. The exact sum rounded once to fp32 is
 * then RNE or RZ of round-to-odd(s + c) at 53 bits (round-to-odd then rounding to p <= 51
 * bits equals rounding directly). An output where a second-level error is nonzero is flagged
 * for the caller to recompute with the plain oracle. The sum starts at -0.0, so a node of
 * all -0 inputs gives -0 and an exact cancellation +0 (IEEE 754 addition); infinities and
 * NaN propagate through the double sum as contracts §4.2 rule 4 says. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm_fast_kernels.h"

/* The node loops run once per leaf over every output of a tile: vectorized across outputs
 * (`omp simd`, honoured with -fopenmp-simd, no OpenMP runtime), and on x86 with GCC built for
 * AVX-512 and AVX2 besides the baseline, the CPU picking at load time (target_clones). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define NODE_LOOP __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NODE_LOOP
#endif

/* Blocks whose values are computed per kernel call (a chunk of the split's leaves). */
#define CHUNK 64
/* Pairwise stacks: one entry per bit of a count of at most 2^63 values. */
#define STACK 64

/* A stack of perfect pairwise subtrees: val[d][0..n) with size[d] values under it. */
typedef struct {
    float *val;
    uint64_t size[STACK];
    size_t depth;
} pw_stack;

struct a4w4_fast_tree_scratch {
    size_t n;          /* outputs of a tile */
    float *v;          /* [CHUNK][n] block values */
    float *acc;        /* [n] the split's chain accumulator */
    float *split;      /* [n] the split's value */
    float *total;      /* [n] the combine chain's total */
    float *tmp;        /* [n] a node result */
    double *s, *c;     /* [n] the open node's sum and error sum */
    uint8_t *bad;      /* [n] the open node's error sum was inexact */
    pw_stack reduce, combine;
};

void a4w4_fast_tree_scratch_free(a4w4_fast_tree_scratch *s)
{
    if (!s)
        return;
    free(s->v);
    free(s->acc);
    free(s->split);
    free(s->total);
    free(s->tmp);
    free(s->s);
    free(s->c);
    free(s->bad);
    free(s->reduce.val);
    free(s->combine.val);
    free(s);
}

a4w4_fast_tree_scratch *a4w4_fast_tree_scratch_new(unsigned mr)
{
    a4w4_fast_tree_scratch *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    size_t n = s->n = (size_t)mr * A4W4_FAST_NR;
    s->v = malloc(CHUNK * n * sizeof *s->v);
    s->acc = malloc(n * sizeof *s->acc);
    s->split = malloc(n * sizeof *s->split);
    s->total = malloc(n * sizeof *s->total);
    s->tmp = malloc(n * sizeof *s->tmp);
    s->s = malloc(n * sizeof *s->s);
    s->c = malloc(n * sizeof *s->c);
    s->bad = malloc(n);
    s->reduce.val = malloc(STACK * n * sizeof(float));
    s->combine.val = malloc(STACK * n * sizeof(float));
    if (!s->v || !s->acc || !s->split || !s->total || !s->tmp || !s->s || !s->c || !s->bad ||
        !s->reduce.val || !s->combine.val) {
        a4w4_fast_tree_scratch_free(s);
        return NULL;
    }
    return s;
}

int a4w4_tree_fast_eligible(const a4w4_tree *t)
{
    return t && t->leaf == 32 && t->prec == 0 && t->acc == A4W4_ACC_FP32;
}

/* ---- one node over every output of the tile -------------------------------------------- */

NODE_LOOP static void node_begin(a4w4_fast_tree_scratch *sc)
{
    double *restrict s = sc->s, *restrict c = sc->c;
    uint8_t *restrict bad = sc->bad;
#pragma omp simd
    for (size_t i = 0; i < sc->n; i++) {
        s[i] = -0.0; /* IEEE: -0 + x = x, -0 + -0 = -0 */
        c[i] = 0.0;
        bad[i] = 0;
    }
}

/* One input per output: s += x exactly as s + e (TwoSum), c += e, flagged when c's own
 * rounding error is nonzero. */
NODE_LOOP static void node_add(a4w4_fast_tree_scratch *sc, const float *x)
{
    double *restrict s = sc->s, *restrict c = sc->c;
    uint8_t *restrict bad = sc->bad;
#pragma omp simd
    for (size_t i = 0; i < sc->n; i++) {
        double a = s[i], b = x[i];
        double sum = a + b, bb = sum - a, e = (a - (sum - bb)) + (b - bb);
        double c0 = c[i], c1 = c0 + e, cb = c1 - c0, e2 = (c0 - (c1 - cb)) + (e - cb);
        s[i] = sum;
        c[i] = c1;
        bad[i] |= e2 != 0.0;
    }
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double dfrom(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float ffrom(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The exact sum s + c (s finite, |c| arbitrary) rounded once to fp32 with rz (0: RNE, 1: RZ),
 * without branches: (s2, c2) = TwoSum(s, c) is exact with |c2| <= ulp(s2)/2; round to odd at
 * 53 bits (truncate toward zero: one step down when c2 has the other sign; then set the last
 * bit when c2 is nonzero); then RNE to fp32, or RZ (RNE, then one step toward zero when that
 * went away from zero; inf from a finite value becomes the largest finite). c = 0 keeps s as
 * it is (a -0 sum stays -0). Tests on bits, not floating-point compares, so that the loop
 * has no branch (a compare may trap and cannot be if-converted). */
static inline __attribute__((always_inline)) float round_pair(double s, double c, uint32_t rz)
{
    double s2 = s + c, bb = s2 - s, c2 = (s - (s2 - bb)) + (c - bb);
    uint64_t u = dbits(s2), inexact = (dbits(c2) << 1) != 0;
    uint64_t other_sign = ((u ^ dbits(c2)) >> 63) & inexact;
    uint64_t odd = (u - other_sign) | inexact;
    double d = dfrom((dbits(c) << 1) != 0 ? odd : dbits(s));
    float r = (float)d; /* RNE, gradual underflow, overflow to ±inf */
    uint64_t mag = ~(uint64_t)0 >> 1;
    uint32_t away = rz & ((dbits((double)r) & mag) > (dbits(d) & mag));
    return ffrom(fbits(r) - away);
}

/* Close the node into out[]; outputs whose error sum was inexact are marked in redo. */
NODE_LOOP static void node_end(a4w4_fast_tree_scratch *sc, a4w4_tree_round mode,
                               float *restrict out, uint8_t *restrict redo)
{
    const double *restrict s = sc->s, *restrict c = sc->c;
    const uint8_t *restrict bad = sc->bad;
    uint32_t rz = mode == A4W4_ROUND_RZ;
    const uint64_t exp_mask = 0x7FF0000000000000ull;
#pragma omp simd
    for (size_t i = 0; i < sc->n; i++) {
        uint64_t finite = (dbits(s[i]) & exp_mask) != exp_mask, keep = 0 - finite;
        float r = round_pair(dfrom(dbits(s[i]) & keep), dfrom(dbits(c[i]) & keep), rz);
        float special = (float)s[i]; /* an inf input, or +inf with -inf: NaN */
        out[i] = ffrom(finite ? fbits(r) : fbits(special));
        redo[i] |= (uint8_t)(bad[i] & finite);
    }
}

/* out = node(a, b) for every output (out may alias a). RNE: the fp32 addition, which is the
 * exact sum rounded once (IEEE 754). RZ: r = RNE(a + b) and its exact error e (TwoSum in fp32:
 * exact for finite r, subnormals included); r is one step away from zero exactly when e is
 * nonzero with the other sign, and then the next float toward zero is RZ(a + b). A finite sum
 * that overflowed to ±inf gives ±the largest finite value. The exact sum of two fp32 values
 * is zero or at least 2^-149 in magnitude, so r is never a zero with e nonzero. */
NODE_LOOP static void node2(a4w4_fast_tree_scratch *sc, const float *a, const float *b, a4w4_tree_round mode,
                  float *out)
{
    if (mode == A4W4_ROUND_RNE) {
#pragma omp simd
        for (size_t i = 0; i < sc->n; i++)
            out[i] = a[i] + b[i];
        return;
    }
    const uint32_t mag = 0x7FFFFFFFu, inf = 0x7F800000u;
#pragma omp simd
    for (size_t i = 0; i < sc->n; i++) {
        float x = a[i], y = b[i];
        float r = x + y, bb = r - x, e = (x - (r - bb)) + (y - bb);
        uint32_t ur = fbits(r), ue = fbits(e);
        uint32_t finite_r = (ur & mag) < inf;
        uint32_t finite_xy = ((fbits(x) & inf) != inf) & ((fbits(y) & inf) != inf);
        uint32_t away = ((ur ^ ue) >> 31) & ((ue & mag) != 0) & finite_r;
        uint32_t overflow = (ur & mag) == inf && finite_xy;
        out[i] = ffrom(ur - (away | overflow)); /* the next float toward zero */
    }
}

/* ---- pairwise reduction as a stack -------------------------------------------------------
 * Level-by-level pairing with the odd last value carried up builds, for n values with binary
 * digits n = 2^a1 + 2^a2 + ... (a1 > a2 > ...), the perfect trees over the first 2^a1 values,
 * the next 2^a2, ..., joined right to left: node(P1, node(P2, ...)) (contracts §4.2 rule 5).
 * Pushing each value and merging the top two while their sizes are equal builds the same
 * perfect trees; pw_finish then joins them from the top. */
static void pw_push(a4w4_fast_tree_scratch *sc, pw_stack *st, const float *v, a4w4_tree_round mode)
{
    size_t n = sc->n;
    memcpy(st->val + st->depth * n, v, n * sizeof *v);
    st->size[st->depth++] = 1;
    while (st->depth >= 2 && st->size[st->depth - 1] == st->size[st->depth - 2]) {
        float *l = st->val + (st->depth - 2) * n, *r = st->val + (st->depth - 1) * n;
        node2(sc, l, r, mode, l);
        st->size[st->depth - 2] *= 2;
        st->depth--;
    }
}

static void pw_finish(a4w4_fast_tree_scratch *sc, pw_stack *st, a4w4_tree_round mode, float *out)
{
    size_t n = sc->n;
    while (st->depth >= 2) {
        float *l = st->val + (st->depth - 2) * n, *r = st->val + (st->depth - 1) * n;
        node2(sc, l, r, mode, l);
        st->depth--;
    }
    memcpy(out, st->val, n * sizeof *out);
    st->depth = 0;
}

/* ---- one split --------------------------------------------------------------------------- */

/* What the leaves of a split feed: the chain accumulator or the pairwise stack, through
 * groups of F leaves. */
typedef struct {
    const a4w4_tree *t;
    a4w4_fast_tree_scratch *sc;
    uint8_t *redo;
    uint64_t in_group; /* leaves in the open group */
} leaf_sink;

/* Close the open group: its node value goes to acc (chain) or the stack (pairwise). */
static void group_end(leaf_sink *k)
{
    a4w4_fast_tree_scratch *sc = k->sc;
    if (k->t->reduce == A4W4_REDUCE_CHAIN) {
        node_end(sc, k->t->round, sc->acc, k->redo);
    } else {
        node_end(sc, k->t->round, sc->tmp, k->redo);
        pw_push(sc, &sc->reduce, sc->tmp, k->t->round);
    }
    k->in_group = 0;
}

static void leaf(leaf_sink *k, const float *x)
{
    const a4w4_tree *t = k->t;
    a4w4_fast_tree_scratch *sc = k->sc;
    if (t->fuse == 1 && t->reduce == A4W4_REDUCE_PAIRWISE) {
        pw_push(sc, &sc->reduce, x, t->round); /* node(x) = x: one fp32 input */
        return;
    }
    if (t->fuse == 1) {
        node2(sc, sc->acc, x, t->round, sc->acc);
        return;
    }
    if (k->in_group == 0) {
        node_begin(sc);
        if (t->reduce == A4W4_REDUCE_CHAIN)
            node_add(sc, sc->acc);
    }
    node_add(sc, x);
    if (++k->in_group == t->fuse)
        group_end(k);
}

/* The value of the split over blocks [b0, b1) into sc->split. */
static void split_value(const a4w4_fast_kernels *kt, const a4w4_fast_tile *tile,
                        const a4w4_tree *t, size_t b0, size_t b1, a4w4_fast_tree_scratch *sc,
                        uint8_t *redo)
{
    size_t n = sc->n, nl = b1 - b0;
    int asc = t->order == A4W4_ORDER_ASC;
    leaf_sink k = {t, sc, redo, 0};
    for (size_t i = 0; i < n; i++)
        sc->acc[i] = 0.0f;
    sc->reduce.depth = 0;
    for (size_t done = 0; done < nl;) {
        size_t m = nl - done < CHUNK ? nl - done : CHUNK;
        size_t c0 = asc ? b0 + done : b1 - done - m;
        kt->blocks(tile, c0, c0 + m, sc->v);
        for (size_t i = 0; i < m; i++)
            leaf(&k, sc->v + (asc ? i : m - 1 - i) * n);
        done += m;
    }
    if (k.in_group)
        group_end(&k);
    if (t->reduce == A4W4_REDUCE_CHAIN)
        memcpy(sc->split, sc->acc, n * sizeof *sc->split);
    else
        pw_finish(sc, &sc->reduce, t->round, sc->split);
}

void a4w4_fast_tree_tile(const a4w4_fast_kernels *kt, const a4w4_fast_tile *tile,
                         const a4w4_fast_tree_plan *plan, a4w4_fast_tree_scratch *sc, float *acc,
                         uint8_t *redo)
{
    const a4w4_tree *t = plan->t;
    size_t n = sc->n;
    memset(redo, 0, n);
    for (size_t i = 0; i < n; i++)
        sc->total[i] = 0.0f;
    sc->combine.depth = 0;
    for (size_t j = 0; j < plan->nsplits; j++) {
        split_value(kt, tile, t, plan->starts[j] / 32, plan->starts[j + 1] / 32, sc, redo);
        if (t->combine == A4W4_REDUCE_CHAIN)
            node2(sc, sc->total, sc->split, t->round, sc->total);
        else
            pw_push(sc, &sc->combine, sc->split, t->round);
    }
    if (t->combine == A4W4_REDUCE_CHAIN)
        memcpy(acc, sc->total, n * sizeof *acc);
    else
        pw_finish(sc, &sc->combine, t->round, acc);
}
