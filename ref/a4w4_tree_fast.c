/* a4w4_tree_fast.c — the fast path of tree contracts (contracts §4.2 "The fast path"): one tile
 * of outputs (mr rows x 16 lanes) at a time, its leaf values from the kernel table's blocks()
 * (leaf=32, lround=rne) or from the tile's decoded operands (other leaves; a fused leaf of 64
 * or 128 elements is a fused node over its blocks' exact values), each lane's leaves taken
 * chunk by chunk (rule 1a), reduced by the tree with every output of the tile in step (the
 * tree's shape depends only on K). Held bit-equal to the plain oracle (a4w4_tree.c) by
 * tests/ref/test_tree.c.
 *
 * Nodes: a 2-input RNE node is the fp32 addition itself, a 2-input RZ node the fp32 addition
 * corrected by its exact error (node2). A fused node sums its fp32 inputs in double with
 * TwoSum, keeping the errors in a second double, also by TwoSum, and a bound of that second
 * sum's own errors; the sum rounded once to fp32 is then RNE or RZ of round-to-odd at 53 bits
 * of the renormalized pair (round_sum says when that is the exact sum's rounding). An output
 * where it cannot be shown is flagged for the caller to recompute with the plain oracle. The
 * sum starts at -0.0, so a node of all -0 inputs gives -0 and an exact cancellation +0 (IEEE
 * 754 addition); infinities and NaN propagate through the double sum as contracts §4.2 rule 4
 * says. With acc=bf16 the same pair is rounded to bf16 instead (round_odd53, round_mag).
 *
 * Nodes of finite precision (prec=P > 0, pnode) are computed in integers: every fp32 or bf16
 * input is m * 2^k (m < 2^24), e_max is found first over the node's inputs, then each input is
 * truncated to t = |x| / 2^(e_max - P + 1) < 2^P (a shift of m) and the signed t are summed
 * exactly (two int64 halves), the sum rounded once. A group's inputs must all be at hand: the
 * leaves are made in chunks of whole groups, so fuse is at most A4W4_TREE_FAST_PREC_FUSE_MAX. */
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
/* Rows of the leaf buffer: a chunk, or whole groups of a node of finite precision. */
#define VROWS (CHUNK > A4W4_TREE_FAST_PREC_FUSE_MAX ? CHUNK : A4W4_TREE_FAST_PREC_FUSE_MAX)
/* The exponent pnode gives a zero or non-finite input: below every finite value's. */
#define NO_EXP (-100000)
/* pnode's per-output flags: a NaN input, +inf, -inf, every input so far -0. */
#define PF_NAN 1u
#define PF_PINF 2u
#define PF_NINF 4u
#define PF_ALLNZ 8u
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
    double *eb;        /* [n] a bound of how far c is from the exact sum of the errors */
    double *ls, *lc;   /* [n] a fused leaf's (G > 32) sum and error sum, as s and c */
    double *leb;       /* [n] its error bound, as eb */
    double *bval;      /* [n] one block's exact value (a fused leaf's input) */
    float *lanev;      /* [A4W4_TREE_FAST_LANES_MAX][n] the lanes' values of a split */
    int32_t *emax;     /* [n] pnode: the largest floor(log2|x|) of the nonzero finite inputs */
    uint32_t *flags;   /* [n] pnode: PF_* */
    int64_t *hi, *lo;  /* [n] pnode: the truncated inputs' sum, as hi * 2^32 + lo */
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
    free(s->eb);
    free(s->ls);
    free(s->lc);
    free(s->leb);
    free(s->bval);
    free(s->lanev);
    free(s->emax);
    free(s->flags);
    free(s->hi);
    free(s->lo);
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
    s->v = malloc(VROWS * n * sizeof *s->v);
    s->acc = malloc(n * sizeof *s->acc);
    s->split = malloc(n * sizeof *s->split);
    s->total = malloc(n * sizeof *s->total);
    s->tmp = malloc(n * sizeof *s->tmp);
    s->s = malloc(n * sizeof *s->s);
    s->c = malloc(n * sizeof *s->c);
    s->eb = malloc(n * sizeof *s->eb);
    s->ls = malloc(n * sizeof *s->ls);
    s->lc = malloc(n * sizeof *s->lc);
    s->leb = malloc(n * sizeof *s->leb);
    s->bval = malloc(n * sizeof *s->bval);
    s->lanev = malloc(A4W4_TREE_FAST_LANES_MAX * n * sizeof *s->lanev);
    s->emax = malloc(n * sizeof *s->emax);
    s->flags = malloc(n * sizeof *s->flags);
    s->hi = malloc(n * sizeof *s->hi);
    s->lo = malloc(n * sizeof *s->lo);
    s->reduce.val = malloc(STACK * n * sizeof(float));
    s->combine.val = malloc(STACK * n * sizeof(float));
    if (!s->v || !s->acc || !s->split || !s->total || !s->tmp || !s->s || !s->c || !s->eb ||
        !s->ls || !s->lc || !s->leb || !s->bval || !s->lanev || !s->emax || !s->flags || !s->hi || !s->lo || !s->reduce.val || !s->combine.val) {
        a4w4_fast_tree_scratch_free(s);
        return NULL;
    }
    return s;
}

int a4w4_tree_fast_eligible(const a4w4_tree *t)
{
    /* a node of finite precision needs its group's leaves at hand: one lane only (a lane's
     * leaves come in runs of chunk elements, groups would straddle them) */
    return t && (t->prec == 0 || (t->fuse <= A4W4_TREE_FAST_PREC_FUSE_MAX && t->lanes == 1)) &&
           t->lanes <= A4W4_TREE_FAST_LANES_MAX && !t->sum_blocks;
}

/* ---- one node over every output of the tile -------------------------------------------- */

/* A fused sum over every output of the tile: the open node's (s, c, eb) or a fused leaf's. */
typedef struct {
    double *s, *c, *eb;
    size_t n;
} fsum;

static fsum node_sum(a4w4_fast_tree_scratch *sc) { return (fsum){sc->s, sc->c, sc->eb, sc->n}; }
static fsum leaf_sum(a4w4_fast_tree_scratch *sc) { return (fsum){sc->ls, sc->lc, sc->leb, sc->n}; }

NODE_LOOP static void sum_begin(fsum f)
{
    double *restrict s = f.s, *restrict c = f.c, *restrict eb = f.eb;
#pragma omp simd
    for (size_t i = 0; i < f.n; i++) {
        s[i] = -0.0; /* IEEE: -0 + x = x, -0 + -0 = -0 */
        c[i] = 0.0;
        eb[i] = 0.0;
    }
}

static void node_begin(a4w4_fast_tree_scratch *sc) { sum_begin(node_sum(sc)); }

/* One input per output: s += x exactly as s + e (TwoSum), c += e with its own rounding error
 * e2 (TwoSum again) added in magnitude to eb: the exact sum of the inputs is s + c + d with
 * |d| <= sum |e2| (eb up to its own roundings). */
static inline __attribute__((always_inline)) void sum_step(double *restrict s, double *restrict c,
                                                           double *restrict eb, double b)
{
    double a = *s;
    double sum = a + b, bb = sum - a, e = (a - (sum - bb)) + (b - bb);
    double c0 = *c, c1 = c0 + e, cb = c1 - c0, e2 = (c0 - (c1 - cb)) + (e - cb);
    *s = sum;
    *c = c1;
    *eb += fabs(e2);
}

/* sum_step of fp32 inputs x[0..n) */
NODE_LOOP static void sum_add(fsum f, const float *x)
{
    double *restrict s = f.s, *restrict c = f.c, *restrict eb = f.eb;
#pragma omp simd
    for (size_t i = 0; i < f.n; i++)
        sum_step(&s[i], &c[i], &eb[i], x[i]);
}

/* sum_step of double inputs x[0..n) */
NODE_LOOP static void sum_add_d(fsum f, const double *x)
{
    double *restrict s = f.s, *restrict c = f.c, *restrict eb = f.eb;
#pragma omp simd
    for (size_t i = 0; i < f.n; i++)
        sum_step(&s[i], &c[i], &eb[i], x[i]);
}

static void node_add(a4w4_fast_tree_scratch *sc, const float *x) { sum_add(node_sum(sc), x); }

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

/* 2^e as a double, -1022 <= e <= 1023. */
static double pow2d(int e)
{
    return dfrom((uint64_t)(e + 1023) << 52);
}

/* The node's sum V = s + c + d (s finite, |d| <= eb) rounded to odd at 53 bits, without
 * branches. (s2, c2) = TwoSum(s, c), so V = s2 + c2 + d with |c2| <= ulp(s2)/2. Round to odd
 * (truncate toward zero: one step down when c2 has the other sign; then set the last bit when
 * c2 is nonzero). When |d| < |c2| the exact V lies strictly between the same two doubles as
 * s2 + c2 and on the same side of s2, so its round-to-odd is the same: the result is V's.
 * *undecided is set when that cannot be shown (eb nonzero and not below |c2|, with room for
 * eb's own roundings). c = 0 keeps s as it is (a -0 sum stays -0). Rounding the result to
 * fp32 or bf16 (RNE or RZ) rounds V once (contracts §4.2 "The fast path"). */
static inline __attribute__((always_inline)) double round_odd53(double s, double c, double eb,
                                                                uint32_t *undecided)
{
    double s2 = s + c, bb = s2 - s, c2 = (s - (s2 - bb)) + (c - bb);
    uint64_t u = dbits(s2), inexact = (dbits(c2) << 1) != 0;
    uint64_t other_sign = ((u ^ dbits(c2)) >> 63) & inexact;
    uint64_t odd = (u - other_sign) | inexact;
    *undecided = eb != 0.0 && !(eb * (1.0 + 0x1p-16) < fabs(c2));
    return dfrom((dbits(c) << 1) != 0 ? odd : dbits(s));
}

/* round_odd53's value rounded once to fp32 with rz (0: RNE, 1: RZ): RNE by the conversion,
 * RZ one step toward zero when that went away from zero (inf from a finite value becomes the
 * largest finite). */
static inline __attribute__((always_inline)) float round_sum(double s, double c, double eb,
                                                             uint32_t rz, uint32_t *undecided)
{
    double d = round_odd53(s, c, eb, undecided);
    float r = (float)d; /* RNE, gradual underflow, overflow to ±inf */
    uint64_t mag = ~(uint64_t)0 >> 1;
    uint32_t away = rz & ((dbits((double)r) & mag) > (dbits(d) & mag));
    return ffrom(fbits(r) - away);
}

/* |v| = mag * 2^exp (mag nonzero) rounded once to p significand bits (24: fp32, 8: bf16) with
 * fp32's exponent range (quantum 2^(max(e, -126) - p + 1), e = floor(log2 |v|)): RNE (ties to
 * even, overflow to inf) or RZ (truncation, overflow to the largest finite value). Returned as
 * a non-negative float (exact: the result is an fp32 value); 0 when it underflows. */
static float round_mag(uint64_t mag, int exp, unsigned p, int rz)
{
    int top = 63 - __builtin_clzll(mag), e = top + exp;
    int qe = (e < -126 ? -126 : e) - ((int)p - 1), sh = qe - exp;
    uint64_t m;
    if (sh <= 0) {
        m = mag << -sh; /* exact: m < 2^p */
    } else {
        m = sh >= 64 ? 0 : mag >> sh;
        uint64_t half = sh - 1 >= 64 ? 0 : (mag >> (sh - 1)) & 1u;
        uint64_t sticky = sh - 1 >= 64 ? 1 : (mag & ((((uint64_t)1) << (sh - 1)) - 1u)) != 0;
        if (!rz && half && (sticky || (m & 1u)))
            m++;
    }
    double r = (double)m * pow2d(qe); /* exact: m <= 2^p, qe >= -149 */
    if (r >= 0x1p128)
        return rz ? (float)((double)(((uint64_t)1 << p) - 1) * pow2d(128 - (int)p)) : INFINITY;
    return (float)r;
}

/* Close the sum f into out[] rounded to fp32 with mode; outputs whose sum could not be decided
 * are marked in redo. */
NODE_LOOP static void sum_end_fp32(fsum f, a4w4_tree_round mode, float *restrict out,
                                   uint8_t *restrict redo)
{
    const double *restrict s = f.s, *restrict c = f.c, *restrict eb = f.eb;
    uint32_t rz = mode == A4W4_ROUND_RZ;
    const uint64_t exp_mask = 0x7FF0000000000000ull;
#pragma omp simd
    for (size_t i = 0; i < f.n; i++) {
        uint64_t finite = (dbits(s[i]) & exp_mask) != exp_mask, keep = 0 - finite;
        uint32_t undecided;
        float r = round_sum(dfrom(dbits(s[i]) & keep), dfrom(dbits(c[i]) & keep),
                            dfrom(dbits(eb[i]) & keep), rz, &undecided);
        float special = (float)s[i]; /* an inf input, or +inf with -inf: NaN */
        out[i] = ffrom(finite ? fbits(r) : fbits(special));
        redo[i] |= (uint8_t)(undecided & finite);
    }
}

/* The same rounding to bf16 (acc=bf16): the round-to-odd double rounded by round_mag, 53 bits
 * being at least 8 + 2 (contracts §4.2 "The fast path"). A zero keeps its sign. */
static void node_end_bf16(a4w4_fast_tree_scratch *sc, a4w4_tree_round mode, float *out,
                          uint8_t *redo)
{
    for (size_t i = 0; i < sc->n; i++) {
        double s = sc->s[i];
        if (!isfinite(s)) {
            out[i] = (float)s; /* an inf input, or +inf with -inf: NaN */
            continue;
        }
        uint32_t undecided;
        double d = round_odd53(s, sc->c[i], sc->eb[i], &undecided);
        redo[i] |= (uint8_t)undecided;
        if (d == 0.0) {
            out[i] = (float)d;
            continue;
        }
        uint64_t u = dbits(d);
        uint64_t mag = (u & ((((uint64_t)1) << 52) - 1u)) | ((uint64_t)1 << 52);
        float r = round_mag(mag, (int)((u >> 52) & 0x7FFu) - 1075, 8, mode == A4W4_ROUND_RZ);
        out[i] = u >> 63 ? -r : r;
    }
}

static void node_end(a4w4_fast_tree_scratch *sc, const a4w4_tree *t, float *out, uint8_t *redo)
{
    if (t->acc == A4W4_ACC_BF16)
        node_end_bf16(sc, t->round, out, redo);
    else
        sum_end_fp32(node_sum(sc), t->round, out, redo);
}

/* ---- nodes of finite precision (contracts §4.2 rule 4, prec = P > 0) -------------------- */

__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

/* floor(log2|x|) of the fp32 bits u, NO_EXP for a zero, an infinity or a NaN. A subnormal's
 * is its integer significand's (exact as float) less 149. */
static inline __attribute__((always_inline)) int32_t flog2(uint32_t u)
{
    uint32_t a = u & 0x7FFFFFFFu, E = a >> 23;
    int32_t sub = (int32_t)(fbits((float)(int32_t)a) >> 23) - 127 - 149;
    int32_t e = E ? (int32_t)E - 127 : sub;
    return a == 0 || E == 255 ? NO_EXP : e;
}

/* Pass 1: e_max and the special-value flags over the inputs. */
NODE_LOOP static void pnode_scan(a4w4_fast_tree_scratch *sc, const float *const *in, size_t cnt)
{
    int32_t *restrict emax = sc->emax;
    uint32_t *restrict fl = sc->flags;
#pragma omp simd
    for (size_t i = 0; i < sc->n; i++) {
        emax[i] = NO_EXP;
        fl[i] = PF_ALLNZ;
    }
    for (size_t j = 0; j < cnt; j++) {
        const float *restrict x = in[j];
#pragma omp simd
        for (size_t i = 0; i < sc->n; i++) {
            uint32_t u = fbits(x[i]);
            int32_t e = flog2(u);
            emax[i] = e > emax[i] ? e : emax[i];
            uint32_t f = ((u & 0x7FFFFFFFu) > 0x7F800000u ? PF_NAN : 0u) |
                         (u == 0x7F800000u ? PF_PINF : 0u) | (u == 0xFF800000u ? PF_NINF : 0u);
            fl[i] = (fl[i] | f) & (u == 0x80000000u ? ~0u : ~PF_ALLNZ);
        }
    }
}

/* Pass 2: hi * 2^32 + lo = the sum of the inputs truncated toward zero to multiples of
 * q = 2^(e_max - P + 1), in units of q. A finite x is m * 2^k (m < 2^24), so trunc(|x| / q) is
 * m shifted by k - log2 q; it is below 2^P <= 2^64 (|x| < 2^(e_max + 1)), so the shift left
 * is at most 63. Zeros and non-finite inputs add 0 (m = 0). */
NODE_LOOP static void pnode_sum(a4w4_fast_tree_scratch *sc, const float *const *in, size_t cnt,
                                unsigned P)
{
    const int32_t *restrict emax = sc->emax;
    int64_t *restrict hi = sc->hi, *restrict lo = sc->lo;
#pragma omp simd
    for (size_t i = 0; i < sc->n; i++)
        hi[i] = lo[i] = 0;
    for (size_t j = 0; j < cnt; j++) {
        const float *restrict x = in[j];
#pragma omp simd
        for (size_t i = 0; i < sc->n; i++) {
            uint32_t u = fbits(x[i]), a = u & 0x7FFFFFFFu, E = a >> 23;
            uint64_t m = E == 255 ? 0 : E ? (a & 0x7FFFFFu) | 0x800000u : a;
            int32_t k = E ? (int32_t)E - 150 : -149;
            int32_t d = k - (emax[i] - (int32_t)P + 1);
            int32_t l = d > 63 ? 63 : d, r = -d > 63 ? 63 : -d;
            uint64_t t = d >= 0 ? m << l : m >> r;
            int64_t th = (int64_t)(t >> 32), tl = (int64_t)(t & 0xFFFFFFFFu);
            hi[i] += u >> 31 ? -th : th;
            lo[i] += u >> 31 ? -tl : tl;
        }
    }
}

/* out[i] = node(in[0][i], ..., in[cnt - 1][i]) with prec = t->prec > 0 (contracts §4.2 rule 4):
 * special values first, then the aligned, truncated inputs' exact sum rounded once to the
 * accumulator format with the tree's mode; an exact zero sum is +0 unless every input is -0.
 * cnt <= A4W4_TREE_FAST_PREC_FUSE_MAX + 1; out may alias an input (written last). */
static void pnode(a4w4_fast_tree_scratch *sc, const a4w4_tree *t, const float *const *in,
                  size_t cnt, float *out)
{
    pnode_scan(sc, in, cnt);
    pnode_sum(sc, in, cnt, t->prec);
    unsigned p = t->acc == A4W4_ACC_BF16 ? 8 : 24;
    int rz = t->round == A4W4_ROUND_RZ;
    for (size_t i = 0; i < sc->n; i++) {
        uint32_t f = sc->flags[i];
        if ((f & PF_NAN) || ((f & PF_PINF) && (f & PF_NINF))) {
            out[i] = NAN;
            continue;
        }
        if (f & (PF_PINF | PF_NINF)) {
            out[i] = f & PF_PINF ? INFINITY : -INFINITY;
            continue;
        }
        i128 v = (i128)sc->hi[i] * ((i128)1 << 32) + sc->lo[i];
        if (v == 0) {
            out[i] = f & PF_ALLNZ ? -0.0f : 0.0f;
            continue;
        }
        u128 mag = v < 0 ? (u128)(-v) : (u128)v;
        int exp = sc->emax[i] - (int)t->prec + 1;
        uint64_t h = (uint64_t)(mag >> 64);
        if (h) { /* keep 63 bits and a sticky bit: enough for any rounding to 24 bits */
            int sh = 65 - __builtin_clzll(h);
            u128 sticky = (mag & (((u128)1 << sh) - 1u)) != 0;
            mag = (mag >> sh) | sticky;
            exp += sh;
        }
        float r = round_mag((uint64_t)mag, exp, p, rz);
        out[i] = v < 0 ? -r : r;
    }
}

/* out = node(a, b) for every output (out may alias a). prec > 0: pnode. acc=bf16: the fused
 * node (node_begin, node_add, node_end). Otherwise, RNE: the fp32 addition, which is the
 * exact sum rounded once (IEEE 754). RZ: r = RNE(a + b) and its exact error e (TwoSum in fp32:
 * exact for finite r, subnormals included); r is one step away from zero exactly when e is
 * nonzero with the other sign, and then the next float toward zero is RZ(a + b). A finite sum
 * that overflowed to ±inf gives ±the largest finite value. The exact sum of two fp32 values
 * is zero or at least 2^-149 in magnitude, so r is never a zero with e nonzero. redo: as
 * node_end's (NULL: the fp32 paths, which never need it). */
static void node2_fp32(a4w4_fast_tree_scratch *sc, const float *a, const float *b,
                       a4w4_tree_round mode, float *out);

static void node2(a4w4_fast_tree_scratch *sc, const a4w4_tree *t, const float *a, const float *b,
                  float *out, uint8_t *redo)
{
    if (t->prec) {
        const float *in[2] = {a, b};
        pnode(sc, t, in, 2, out);
    } else if (t->acc == A4W4_ACC_BF16) {
        node_begin(sc);
        node_add(sc, a);
        node_add(sc, b);
        node_end(sc, t, out, redo);
    } else {
        node2_fp32(sc, a, b, t->round, out);
    }
}

NODE_LOOP static void node2_fp32(a4w4_fast_tree_scratch *sc, const float *a, const float *b,
                                 a4w4_tree_round mode, float *out)
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
        uint32_t finite_xy = (uint32_t)((fbits(x) & inf) != inf) & (uint32_t)((fbits(y) & inf) != inf);
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
static void pw_push(a4w4_fast_tree_scratch *sc, const a4w4_tree *t, pw_stack *st,
                    const float *v, uint8_t *redo)
{
    size_t n = sc->n;
    memcpy(st->val + st->depth * n, v, n * sizeof *v);
    st->size[st->depth++] = 1;
    while (st->depth >= 2 && st->size[st->depth - 1] == st->size[st->depth - 2]) {
        float *l = st->val + (st->depth - 2) * n, *r = st->val + (st->depth - 1) * n;
        node2(sc, t, l, r, l, redo);
        st->size[st->depth - 2] *= 2;
        st->depth--;
    }
}

static void pw_finish(a4w4_fast_tree_scratch *sc, const a4w4_tree *t, pw_stack *st, float *out,
                      uint8_t *redo)
{
    size_t n = sc->n;
    while (st->depth >= 2) {
        float *l = st->val + (st->depth - 2) * n, *r = st->val + (st->depth - 1) * n;
        node2(sc, t, l, r, l, redo);
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
        node_end(sc, k->t, sc->acc, k->redo);
    } else {
        node_end(sc, k->t, sc->tmp, k->redo);
        pw_push(sc, k->t, &sc->reduce, sc->tmp, k->redo);
    }
    k->in_group = 0;
}

/* One leaf of a tree with prec = 0. With acc=fp32 a one-input node is its fp32 input and a
 * two-input node node2's; otherwise (acc=bf16) every node is a fused one. */
static void leaf(leaf_sink *k, const float *x)
{
    const a4w4_tree *t = k->t;
    a4w4_fast_tree_scratch *sc = k->sc;
    int fp32 = t->acc == A4W4_ACC_FP32;
    if (fp32 && t->fuse == 1 && t->reduce == A4W4_REDUCE_PAIRWISE) {
        pw_push(sc, t, &sc->reduce, x, k->redo); /* node(x) = x: one fp32 input */
        return;
    }
    if (fp32 && t->fuse == 1) {
        node2(sc, t, sc->acc, x, sc->acc, k->redo);
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

/* The leaves of a tree with prec > 0, m of them at v in consumption order when asc, reversed
 * when not, starting a group (m a multiple of F but at the split's end): each group of F (the
 * last may be shorter) is one pnode, with acc as an input (chain) or pushed (pairwise). The
 * order of a node's inputs does not change its value. */
static void prec_groups(leaf_sink *k, const float *v, size_t m, int asc)
{
    const a4w4_tree *t = k->t;
    a4w4_fast_tree_scratch *sc = k->sc;
    const float *in[A4W4_TREE_FAST_PREC_FUSE_MAX + 1];
    int chain = t->reduce == A4W4_REDUCE_CHAIN;
    for (size_t g0 = 0; g0 < m; g0 += t->fuse) {
        size_t cnt = m - g0 < t->fuse ? m - g0 : t->fuse, nin = 0;
        if (chain)
            in[nin++] = sc->acc;
        for (size_t i = g0; i < g0 + cnt; i++)
            in[nin++] = v + (asc ? i : m - 1 - i) * sc->n;
        pnode(sc, t, in, nin, chain ? sc->acc : sc->tmp);
        if (!chain)
            pw_push(sc, t, &sc->reduce, sc->tmp, k->redo);
    }
}

/* Leaf sums of G <= 32 elements k0 .. k0 + G - 1 (inside one block) for every output of the
 * tile, from its decoded X rows and packed Y panel (layouts of a4w4_gemm_fast_kernels.h: X
 * holds 2 * e2m1 + x_zero, or the signed 2 * e2m1 when x_zero is 0; Y element k of a block at
 * byte ((k / 4) * 16 + lane) * 4 + k % 4): the exact integer sum of the G products times
 * 2^(ex + ey - 256), exact in double (|sum| <= 12 * 12 * 32, the exponent in -256 .. 254).
 * d[r * 16 + l] as blocks() lays out a value. */
NODE_LOOP static void leaf_exact(const a4w4_fast_kernels *kt, const a4w4_fast_tile *t,
                                 unsigned G, size_t k0, size_t n, double *d)
{
    size_t b = k0 / 32;
    const uint8_t *rec = t->panel + b * A4W4_FAST_BLOCK_BYTES;
    const int8_t *y = (const int8_t *)rec;
    int32_t ey[A4W4_FAST_NR];
    memcpy(ey, rec + A4W4_FAST_EY_OFF, sizeof ey);
    for (size_t r = 0; r < n / A4W4_FAST_NR; r++) {
        const uint8_t *x = t->x + r * t->ldx + b * 32;
        int32_t isum[A4W4_FAST_NR] = {0}, er = t->ex[r * t->lde + b] - 256;
        for (size_t k = k0 % 32; k < k0 % 32 + G; k++) {
            int32_t xv = kt->x_zero ? (int32_t)x[k] - kt->x_zero : (int32_t)(int8_t)x[k];
            /* the 16 lanes' bytes of elements k - k % 4 .. +3, one int32 per lane: byte
             * k % 4 of lane l, sign-extended by shifting it to the top and back */
            uint32_t w[A4W4_FAST_NR];
            memcpy(w, y + (k / 4) * 4 * A4W4_FAST_NR, sizeof w);
            unsigned up = 24 - 8 * (unsigned)(k % 4);
#pragma omp simd
            for (int l = 0; l < A4W4_FAST_NR; l++)
                isum[l] += xv * ((int32_t)(w[l] << up) >> 24);
        }
        for (int l = 0; l < A4W4_FAST_NR; l++)
            d[r * A4W4_FAST_NR + l] = (double)isum[l] * pow2d(er + ey[l]);
    }
}

/* The exact double d rounded once to fp32 (contracts §4.2 rule 2, lround): RNE by the
 * conversion (gradual underflow, overflow to ±inf); RZ one step toward zero where the
 * conversion went away from zero (±inf from a finite value becomes the largest finite; a
 * value below the smallest subnormal a zero of its sign). */
static inline __attribute__((always_inline)) float round_leaf(double d, uint32_t rz)
{
    float r = (float)d;
    uint64_t mag = ~(uint64_t)0 >> 1;
    uint32_t away = rz & ((dbits((double)r) & mag) > (dbits(d) & mag));
    return ffrom(fbits(r) - away);
}

/* Leaves i0 .. i0 + m - 1 of G < 32 elements, or of 32 with lround=rz, of the run starting at
 * element c0 (leaf i at c0 + i * G; contracts §4.2 rule 2): each leaf_exact rounded once with
 * lround, into v[i * n + r * 16 + l] as blocks() lays it. */
static void sub_leaves(const a4w4_fast_kernels *kt, const a4w4_fast_tile *tile,
                       const a4w4_tree *t, a4w4_fast_tree_scratch *sc, size_t c0, size_t i0,
                       size_t m)
{
    size_t n = sc->n;
    uint32_t rz = t->lround == A4W4_ROUND_RZ;
    for (size_t i = 0; i < m; i++) {
        leaf_exact(kt, tile, t->leaf, c0 + (i0 + i) * t->leaf, n, sc->bval);
        float *restrict v = sc->v + i * n;
        const double *restrict d = sc->bval;
        for (size_t j = 0; j < n; j++)
            v[j] = round_leaf(d[j], rz);
    }
}

/* Fused leaves (G = 64 or 128, contracts §4.2 rule 2) i0 .. i0 + m - 1 of the run [c0, c1)
 * (leaf i at c0 + i * G, the last one ending at c1): the exact block values summed as a fused
 * node's inputs (sum_add_d) and rounded once with lround; a leaf whose rounding the doubles
 * cannot decide marks its output in redo. */
static void fused_leaves(const a4w4_fast_kernels *kt, const a4w4_fast_tile *tile,
                         const a4w4_tree *t, a4w4_fast_tree_scratch *sc, size_t c0, size_t c1,
                         size_t i0, size_t m, uint8_t *redo)
{
    fsum f = leaf_sum(sc);
    for (size_t i = 0; i < m; i++) {
        size_t x0 = c0 + (i0 + i) * t->leaf, x1 = x0 + t->leaf < c1 ? x0 + t->leaf : c1;
        sum_begin(f);
        for (size_t k = x0; k < x1; k += 32) {
            leaf_exact(kt, tile, 32, k, sc->n, sc->bval);
            sum_add_d(f, sc->bval);
        }
        sum_end_fp32(f, t->lround, sc->v + i * sc->n, redo);
    }
}

/* Leaves i0 .. i0 + m - 1 of the run [c0, c1) into sc->v, each row a leaf's value for every
 * output of the tile: from kt->blocks for leaf=32 with lround=rne. */
static void run_leaves(const a4w4_fast_kernels *kt, const a4w4_fast_tile *tile,
                       const a4w4_tree *t, a4w4_fast_tree_scratch *sc, size_t c0, size_t c1,
                       size_t i0, size_t m, uint8_t *redo)
{
    size_t x0 = c0 + i0 * t->leaf;
    if (t->leaf == 32 && t->lround == A4W4_ROUND_RNE)
        kt->blocks(tile, x0 / 32, x0 / 32 + m, sc->v);
    else if (t->leaf <= 32)
        sub_leaves(kt, tile, t, sc, c0, i0, m);
    else
        fused_leaves(kt, tile, t, sc, c0, c1, i0, m, redo);
}

/* Feed the leaves of the run [c0, c1) to k: in K order (asc), or reversed. Chunks of CHUNK
 * leaves, or for prec > 0 of as many whole groups as VROWS holds (prec > 0: one run per split,
 * so a chunk starts a group). */
static void feed_run(const a4w4_fast_kernels *kt, const a4w4_fast_tile *tile, leaf_sink *k,
                     size_t c0, size_t c1)
{
    const a4w4_tree *t = k->t;
    a4w4_fast_tree_scratch *sc = k->sc;
    size_t n = sc->n, nl = (c1 - c0 + t->leaf - 1) / t->leaf;
    size_t chunk = t->prec ? VROWS / t->fuse * t->fuse : CHUNK;
    int asc = t->order == A4W4_ORDER_ASC;
    for (size_t done = 0; done < nl;) {
        size_t m = nl - done < chunk ? nl - done : chunk;
        size_t i0 = asc ? done : nl - done - m;
        run_leaves(kt, tile, t, sc, c0, c1, i0, m, k->redo);
        if (t->prec)
            prec_groups(k, sc->v, m, asc);
        for (size_t i = 0; !t->prec && i < m; i++)
            leaf(k, sc->v + (asc ? i : m - 1 - i) * n);
        done += m;
    }
}

/* The value of lane l of the split [k0, k1) into out (contracts §4.2 rule 1a): its chunks
 * c0 = k0 + l * C, stepping L * C (C = chunk; the whole split when L = 1), in K order or
 * reversed, their leaves reduced as one list (reduce_leaves of a4w4_tree.c). 0 when the lane
 * holds no chunk (out untouched). */
static int lane_value(const a4w4_fast_kernels *kt, const a4w4_fast_tile *tile,
                      const a4w4_tree *t, size_t k0, size_t k1, size_t l,
                      a4w4_fast_tree_scratch *sc, uint8_t *redo, float *out)
{
    size_t n = sc->n, L = t->lanes, C = L == 1 ? k1 - k0 : t->chunk;
    if (k0 + l * C >= k1)
        return 0;
    size_t runs = (k1 - (k0 + l * C) + L * C - 1) / (L * C);
    leaf_sink k = {t, sc, redo, 0};
    for (size_t i = 0; i < n; i++)
        sc->acc[i] = 0.0f;
    sc->reduce.depth = 0;
    for (size_t j = 0; j < runs; j++) {
        size_t c0 = k0 + l * C + (t->order == A4W4_ORDER_ASC ? j : runs - 1 - j) * L * C;
        feed_run(kt, tile, &k, c0, c0 + C < k1 ? c0 + C : k1);
    }
    if (k.in_group)
        group_end(&k);
    if (t->reduce == A4W4_REDUCE_CHAIN)
        memcpy(out, sc->acc, n * sizeof *out);
    else
        pw_finish(sc, t, &sc->reduce, out, redo);
    return 1;
}

/* The value of the split [k0, k1) into sc->split: one lane's value, or L lanes' reduced by
 * lanecomb as split_value of a4w4_tree.c does (chain from +0 or pairwise over the lanes that
 * hold a chunk; xor over all L, empty ones +0). */
static void split_value(const a4w4_fast_kernels *kt, const a4w4_fast_tile *tile,
                        const a4w4_tree *t, size_t k0, size_t k1, a4w4_fast_tree_scratch *sc,
                        uint8_t *redo)
{
    size_t n = sc->n, L = t->lanes, used = 0;
    if (L == 1) {
        lane_value(kt, tile, t, k0, k1, 0, sc, redo, sc->split);
        return;
    }
    float *lv = sc->lanev;
    while (used < L && lane_value(kt, tile, t, k0, k1, used, sc, redo, lv + used * n))
        used++;
    if (t->lanecomb == A4W4_REDUCE_XOR) {
        memset(lv + used * n, 0, (L - used) * n * sizeof *lv); /* +0 */
        for (size_t x = L / 2; x >= 1; x /= 2)
            for (size_t l = 0; l < x; l++)
                node2(sc, t, lv + l * n, lv + (l + x) * n, lv + l * n, redo);
        memcpy(sc->split, lv, n * sizeof *lv);
    } else if (t->lanecomb == A4W4_REDUCE_PAIRWISE) {
        for (size_t cnt = used; cnt > 1; cnt = (cnt + 1) / 2) {
            for (size_t i = 0; i < cnt / 2; i++)
                node2(sc, t, lv + 2 * i * n, lv + (2 * i + 1) * n, lv + i * n, redo);
            if (cnt % 2)
                memcpy(lv + cnt / 2 * n, lv + (cnt - 1) * n, n * sizeof *lv);
        }
        memcpy(sc->split, lv, n * sizeof *lv);
    } else {
        for (size_t i = 0; i < n; i++)
            sc->split[i] = 0.0f;
        for (size_t l = 0; l < used; l++)
            node2(sc, t, sc->split, lv + l * n, sc->split, redo);
    }
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
        split_value(kt, tile, t, plan->starts[j], plan->starts[j + 1], sc, redo);
        if (t->combine == A4W4_REDUCE_CHAIN)
            node2(sc, t, sc->total, sc->split, sc->total, redo);
        else
            pw_push(sc, t, &sc->combine, sc->split, redo);
    }
    if (t->combine == A4W4_REDUCE_CHAIN)
        memcpy(acc, sc->total, n * sizeof *acc);
    else
        pw_finish(sc, t, &sc->combine, acc, redo);
}
