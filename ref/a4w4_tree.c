/* a4w4_tree.c — the plain oracle of tree contracts (contracts §4.2): one output at a time,
 * every node's inputs summed exactly in a wide fixed-point integer and rounded once, exactly as
 * §4.2 states. Written to be checked line by line against that section; the fast path
 * (a4w4_tree_fast.c) is held bit-equal to it. Text forms, a4w4_tree_check and
 * a4w4_gemm_contract are in a4w4_contract.c. */
#include "a4w4_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- exact values ------------------------------------------------------------------------
 * An exact value is v * 2^-EXACT_FRAC with v a signed integer held in two's complement over
 * EXACT_LIMBS 32-bit limbs, least significant first. Every number a tree meets is such a
 * value: a leaf's exact sum is an integer times 2^(sa + sb - 256) with sa + sb >= 0, and an
 * fp32 or bf16 value is an integer below 2^24 times 2^k with k >= -149 - 23. Node sums stay
 * below 2^191 (inputs below 2^128, at most 2^32 of them per node), and a fused leaf of up to
 * four blocks below 2^(13 + 252 + 2) = 2^267 (a block's isum < 2^13 times 2^(sa+sb-256),
 * sa + sb <= 508), so 576 bits hold every sum with room to spare. */
#define EXACT_FRAC 256
#define EXACT_LIMBS 18
/* A truncation exponent below every value's last bit. */
#define NO_TRUNCATION (-100000)

typedef struct {
    uint32_t d[EXACT_LIMBS];
} exact_t;

static void exact_add(exact_t *x, const exact_t *y)
{
    uint64_t carry = 0;
    for (int i = 0; i < EXACT_LIMBS; i++) {
        carry += (uint64_t)x->d[i] + y->d[i];
        x->d[i] = (uint32_t)carry;
        carry >>= 32;
    }
}

static void exact_negate(exact_t *x)
{
    uint64_t carry = 1;
    for (int i = 0; i < EXACT_LIMBS; i++) {
        carry += (uint32_t)~x->d[i];
        x->d[i] = (uint32_t)carry;
        carry >>= 32;
    }
}

static int exact_is_negative(const exact_t *x)
{
    return (x->d[EXACT_LIMBS - 1] >> 31) != 0;
}

static int exact_is_zero(const exact_t *x)
{
    for (int i = 0; i < EXACT_LIMBS; i++)
        if (x->d[i])
            return 0;
    return 1;
}

static int exact_bit(const exact_t *x, int pos)
{
    return (int)((x->d[pos / 32] >> (pos % 32)) & 1u);
}

/* The position of the highest set bit of x (x nonzero, non-negative). */
static int exact_top(const exact_t *x)
{
    int i = EXACT_LIMBS - 1;
    while (!x->d[i])
        i--;
    return i * 32 + 31 - __builtin_clz(x->d[i]);
}

/* 1 when a bit strictly below pos is set. */
static int exact_any_below(const exact_t *x, int pos)
{
    for (int i = 0; i < pos / 32; i++)
        if (x->d[i])
            return 1;
    return pos % 32 && (x->d[pos / 32] & ((1u << (pos % 32)) - 1u)) != 0;
}

/* (neg ? -m : m) * 2^(pos - EXACT_FRAC), for m < 2^32 and 0 <= pos < 32 * (EXACT_LIMBS - 2):
 * m * 2^(pos % 32) spans at most two limbs, below the sign limb. */
static exact_t exact_of(int neg, uint32_t m, int pos)
{
    exact_t x;
    memset(&x, 0, sizeof x);
    uint64_t shifted = (uint64_t)m << (pos % 32);
    x.d[pos / 32] = (uint32_t)shifted;
    x.d[pos / 32 + 1] = (uint32_t)(shifted >> 32);
    if (neg)
        exact_negate(&x);
    return x;
}

/* ---- rounding ----------------------------------------------------------------------------
 * Round the exact nonzero value x to a binary format with p significand bits (24: fp32, 8:
 * bf16) and fp32's exponent range (normal down to 2^-126, subnormal quantum 2^(-126-(p-1)),
 * overflow at 2^128), once, with mode: RNE (ties to even; overflow gives ±inf) or RZ
 * (truncation; overflow gives ±the largest finite value, as IEEE 754 says for rounding toward
 * zero). A value that rounds to zero keeps its sign (IEEE 754). Returned as float (exact: the
 * result is representable in fp32). */
static float exact_round(const exact_t *x, int p, a4w4_tree_round mode)
{
    exact_t mag = *x;
    int neg = exact_is_negative(x);
    if (neg)
        exact_negate(&mag);
    int top = exact_top(&mag);
    int e = top - EXACT_FRAC;                   /* 2^e <= |x| < 2^(e+1) */
    if (e >= 128) {                             /* past every finite value of the format */
        float r = mode == A4W4_ROUND_RNE ? INFINITY : (float)ldexp((double)((1u << p) - 1), 128 - p);
        return neg ? -r : r;
    }
    int qe = (e < -126 ? -126 : e) - (p - 1);   /* exponent of the quantum (one ulp) */
    int qb = qe + EXACT_FRAC;                   /* its bit position in mag (>= 107) */
    uint64_t m = 0;                             /* |x| truncated to the quantum, in ulps */
    for (int i = top; i >= qb; i--)
        m = (m << 1) | (uint64_t)exact_bit(&mag, i);
    if (mode == A4W4_ROUND_RNE && exact_bit(&mag, qb - 1) &&
        (exact_any_below(&mag, qb - 1) || (m & 1u)))
        m++;
    double r = ldexp((double)m, qe);            /* exact: m <= 2^p */
    if (r >= 0x1p128)
        r = mode == A4W4_ROUND_RNE ? INFINITY : ldexp((double)((1u << p) - 1), 128 - p);
    return neg ? -(float)r : (float)r;
}

/* The exact value of a finite float x, truncated toward zero to a multiple of 2^qexp when
 * qexp is above the exponent of x's last bit (NO_TRUNCATION: never). */
static exact_t exact_of_float(float x, int qexp)
{
    if (x == 0.0f)
        return exact_of(0, 0, 0);
    int ex;
    float fr = frexpf(fabsf(x), &ex);         /* |x| = fr * 2^ex, fr in [0.5, 1) */
    uint32_t m = (uint32_t)ldexpf(fr, 24);    /* |x| = m * 2^k, m < 2^24 an integer */
    int k = ex - 24;
    if (qexp > k) {                           /* trunc_toward_zero(|x| / 2^qexp) * 2^qexp */
        m = qexp - k >= 32 ? 0 : m >> (qexp - k);
        k = qexp;
    }
    return exact_of(signbit(x) != 0, m, k + EXACT_FRAC);
}

/* ---- nodes (contracts §4.2) ---------------------------------------------------------------
 * A node of inputs x[0..n) computes their sum and rounds it once to the accumulator format
 * with the tree's rounding mode. Any NaN input, or +inf with -inf, gives NaN; otherwise an
 * infinite input gives that infinity. With prec P > 0 every input is first truncated toward
 * zero to a multiple of q = 2^(e_max - P + 1), e_max the largest floor(log2|x_i|) over the
 * nonzero inputs. An exact zero sum is +0, unless every input is -0 (then -0), as IEEE 754
 * addition in round-to-nearest. */
static float node(const float *x, size_t n, const a4w4_tree *t)
{
    int nan = 0, pinf = 0, ninf = 0, all_negative_zero = 1, any_nonzero = 0, e_max = -1000;
    for (size_t i = 0; i < n; i++) {
        nan |= isnan(x[i]) != 0;
        pinf |= x[i] == INFINITY;
        ninf |= x[i] == -INFINITY;
        all_negative_zero &= x[i] == 0.0f && signbit(x[i]);
        if (x[i] != 0.0f && isfinite(x[i])) {
            int ex;
            frexpf(x[i], &ex);                /* floor(log2|x|) = ex - 1 */
            e_max = any_nonzero && e_max > ex - 1 ? e_max : ex - 1;
            any_nonzero = 1;
        }
    }
    if (nan || (pinf && ninf))
        return NAN;
    if (pinf || ninf)
        return pinf ? INFINITY : -INFINITY;
    int qexp = t->prec && any_nonzero ? e_max - (int)t->prec + 1 : NO_TRUNCATION;
    exact_t sum = exact_of(0, 0, 0);
    for (size_t i = 0; i < n; i++) {
        exact_t xi = exact_of_float(x[i], qexp);
        exact_add(&sum, &xi);
    }
    if (exact_is_zero(&sum))
        return all_negative_zero ? -0.0f : 0.0f;
    return exact_round(&sum, t->acc == A4W4_ACC_BF16 ? 8 : 24, t->round);
}

/* Reduce v[0..n) (n >= 1) pairwise, level by level: (v0, v1), (v2, v3), ... each by a
 * 2-input node, an odd last value carried up unchanged, until one remains. v is overwritten. */
static float pairwise(float *v, size_t n, const a4w4_tree *t)
{
    while (n > 1) {
        for (size_t i = 0; i < n / 2; i++)
            v[i] = node(&v[2 * i], 2, t);
        if (n % 2)
            v[n / 2] = v[n - 1];
        n = (n + 1) / 2;
    }
    return v[0];
}

/* ---- leaves (contracts §4.2) --------------------------------------------------------------
 * A leaf is G consecutive elements k0 .. k0+len-1 (len = G, or fewer for the last leaf of a
 * chunk when G > 32): inside one 32-block when G <= 32, whole blocks when G is 64 or 128 (a
 * fused matrix step). Its value is the exact sum of its products ia * ib * 2^(sa + sb - 256)
 * (ia, ib twice the E2M1 values, contracts §4; each block with its own scales), rounded once
 * to fp32 with lround (RNE or RZ) with gradual underflow; overflow to ±inf (RNE) or ±the
 * largest finite value (RZ). An exact zero sum is +0. */
static float leaf_value(const a4w4_dot_operands *op, size_t k0, size_t len, a4w4_tree_round mode)
{
    exact_t sum = exact_of(0, 0, 0);
    int nonzero = 0;
    for (size_t b0 = k0; b0 < k0 + len; b0 = (b0 / 32 + 1) * 32) {
        size_t b = b0 / 32, b1 = (b + 1) * 32 < k0 + len ? (b + 1) * 32 : k0 + len;
        int isum = 0;
        for (size_t k = b0; k < b1; k++)
            isum += a4w4_e2m1_int2x_inline(a4w4_fp4_get(op->a_fp4, k)) *
                    a4w4_e2m1_int2x_inline(a4w4_fp4_get(op->w_fp4, k));
        int e = (int)op->a_scale[b] + (int)op->w_scale[b]; /* value = isum * 2^(e - 256) */
        if (isum == 0)
            continue;
        if (len <= 32 && mode == A4W4_ROUND_RNE && e - EXACT_FRAC >= 128)
            return isum < 0 ? -INFINITY : INFINITY; /* |value| >= 2^128: overflows fp32 */
        exact_t v = exact_of(isum < 0, (uint32_t)abs(isum), e);
        exact_add(&sum, &v);
        nonzero = 1;
    }
    if (!nonzero || exact_is_zero(&sum))
        return 0.0f;
    return exact_round(&sum, 24, mode);
}

/* Reduce n leaf values (in consumption order) as a split's leaves: grouped by fuse F (the
 * last group may be shorter); chain: acc = +0, then acc = node(acc, the group's leaves) per
 * group; pairwise: each group's node value, then those reduced pairwise. work holds at least
 * n + 1 floats. */
static float reduce_leaves(const float *leaves, size_t n, const a4w4_tree *t, float *work)
{
    size_t F = t->fuse;
    if (t->reduce == A4W4_REDUCE_CHAIN) {
        float acc = 0.0f;
        for (size_t g0 = 0; g0 < n; g0 += F) {
            size_t m = n - g0 < F ? n - g0 : F;
            work[0] = acc;
            memcpy(work + 1, leaves + g0, m * sizeof *work);
            acc = node(work, m + 1, t);
        }
        return acc;
    }
    size_t groups = 0;
    for (size_t g0 = 0; g0 < n; g0 += F) {
        size_t m = n - g0 < F ? n - g0 : F;
        work[groups++] = node(leaves + g0, m, t);
    }
    return pairwise(work, groups, t);
}

/* The leaves of lane l of the split [k0, k1) into leaves[] in consumption order; their
 * count. The split is cut into chunks of t->chunk elements from k0 (one chunk of the whole
 * split when lanes = 1; the last may be shorter); chunk j belongs to lane j mod L; a chunk is
 * cut into leaves of G elements from its start (G > 32: the last may be shorter). The lane's
 * leaves in ascending K, reversed for order=desc. */
static size_t lane_leaves(const a4w4_dot_operands *op, size_t k0, size_t k1, size_t l,
                          const a4w4_tree *t, float *leaves)
{
    size_t C = t->lanes == 1 ? k1 - k0 : t->chunk, n = 0;
    for (size_t c0 = k0 + l * C; c0 < k1; c0 += (size_t)t->lanes * C) {
        size_t c1 = c0 + C < k1 ? c0 + C : k1;
        for (size_t x = c0; x < c1; x += t->leaf)
            leaves[n++] = leaf_value(op, x, c1 - x < t->leaf ? c1 - x : t->leaf, t->lround);
    }
    for (size_t i = 0; t->order == A4W4_ORDER_DESC && i < n / 2; i++) {
        float v = leaves[i];
        leaves[i] = leaves[n - 1 - i];
        leaves[n - 1 - i] = v;
    }
    return n;
}

/* ---- one split ------------------------------------------------------------------------------
 * Each lane's leaves reduced (reduce_leaves); one lane is the split's value, L > 1 lanes are
 * reduced by lanecomb: chain, acc = +0 then acc = node(acc, lane value) in lane order; or
 * pairwise. A lane that holds no chunk (L above the split's chunk count) takes no part.
 * leaves and work hold at least (k1 - k0) / min(G, 32) + 1 floats, lanes t->lanes. */
static float split_value(const a4w4_dot_operands *op, size_t k0, size_t k1, const a4w4_tree *t,
                         float *leaves, float *work, float *lanes)
{
    size_t L = t->lanes, used = 0;
    for (size_t l = 0; l < L; l++) {
        size_t n = lane_leaves(op, k0, k1, l, t, leaves);
        if (n == 0)
            break; /* lanes take chunks in turn: every later lane is empty too */
        lanes[used++] = reduce_leaves(leaves, n, t, work);
    }
    if (used == 1 && L == 1)
        return lanes[0];
    if (t->lanecomb == A4W4_REDUCE_XOR) { /* every lane, empty ones +0; lane 0 needs [0, x) */
        for (size_t l = used; l < L; l++)
            lanes[l] = 0.0f;
        for (size_t x = L / 2; x >= 1; x /= 2)
            for (size_t l = 0; l < x; l++) {
                float in[2] = {lanes[l], lanes[l + x]};
                lanes[l] = node(in, 2, t);
            }
        return lanes[0];
    }
    if (t->lanecomb == A4W4_REDUCE_PAIRWISE)
        return pairwise(lanes, used, t);
    float acc = 0.0f;
    for (size_t l = 0; l < used; l++) {
        float in[2] = {acc, lanes[l]};
        acc = node(in, 2, t);
    }
    return acc;
}

/* ---- the output ------------------------------------------------------------------------- */

void a4w4_tree_defaults(a4w4_tree *t)
{
    memset(t, 0, sizeof *t);
    t->leaf = 32;
    t->order = A4W4_ORDER_ASC;
    t->fuse = 1;
    t->reduce = A4W4_REDUCE_CHAIN;
    t->prec = 0;
    t->round = A4W4_ROUND_RNE;
    t->acc = A4W4_ACC_FP32;
    t->split = 1;
    t->nbounds = 0;
    t->combine = A4W4_REDUCE_CHAIN;
    t->final = A4W4_ROUND_RNE;
    t->lround = A4W4_ROUND_RNE;
    t->lanes = 1;
    t->chunk = 32;
    t->lanecomb = A4W4_REDUCE_CHAIN;
    t->tile = 0;
    t->align = 256;
}

/* Elements per split of split=S at K with the alignment A (contracts §4.2 rule 1):
 * round_up(ceil(K/S), A), at least A; A = 256 is §4.1's k_per_split. */
static size_t split_per(size_t K, unsigned S, unsigned A)
{
    size_t per = (K + (S ? S : 1) - 1) / (S ? S : 1);
    A = A ? A : 256;
    per = (per + A - 1) / A * A;
    return per < A ? A : per;
}

size_t a4w4_tree_splits(const a4w4_tree *t, size_t K, size_t *starts, size_t max)
{
    size_t per = t->tile ? t->tile : split_per(K, t->split, t->align);
    size_t n = t->nbounds + 1;
    if (t->tile || t->nbounds == 0)
        n = (K + per - 1) / per;
    if (!starts)
        return n;
    if (max < n + 1)
        return 0;
    for (size_t j = 0; j < n; j++)
        starts[j] = j == 0 ? 0 : t->nbounds ? t->bounds[j - 1] : j * per;
    starts[n] = K;
    return n;
}

/* 1 when a block of the output's row of A or W has the NaN scale 0xFF (contracts §4). */
static int reads_nan_scale(const a4w4_dot_operands *op)
{
    for (size_t b = 0; b < op->K / 32; b++)
        if (op->a_scale[b] == 0xFF || op->w_scale[b] == 0xFF)
            return 1;
    return 0;
}

/* The accumulator value rounded to bf16 bits with mode (contracts §4.2 final). */
static uint16_t to_bf16(float v, a4w4_tree_round mode)
{
    if (isnan(v))
        return 0x7FC0;
    if (isinf(v))
        return v > 0 ? 0x7F80 : 0xFF80;
    if (v == 0.0f)
        return signbit(v) ? 0x8000 : 0x0000;
    exact_t x = exact_of_float(v, NO_TRUNCATION);
    return (uint16_t)(a4w4_f32_bits(exact_round(&x, 8, mode)) >> 16);
}

/* The accumulator value of the general form (contracts §4.2 "The general form"): block b's
 * leaf is its exact sum rounded once to fp32 with lround; a node of a inputs is node() of
 * their values; the root node takes one more input, +0 (the accumulator's start). The
 * prefix tokens are read from the last: a block pushes its leaf, a node pops its a inputs
 * (the top of the stack is its first) and pushes its value. */
static int sum_value(const a4w4_dot_operands *op, const a4w4_tree *t, float *value)
{
    float *stack = malloc((t->nsum + 1) * sizeof *stack), *in = malloc((t->nsum + 1) * sizeof *in);
    size_t top = 0;
    for (size_t i = t->nsum; stack && in && i-- > 0;) {
        unsigned tok = t->sum[i];
        if (!(tok & A4W4_SUMTREE_NODE)) {
            stack[top++] = leaf_value(op, (size_t)tok * 32, 32, t->lround);
            continue;
        }
        size_t a = tok & ~A4W4_SUMTREE_NODE;
        for (size_t j = 0; j < a; j++)
            in[j] = stack[top - 1 - j];
        top -= a;
        if (i == 0)
            in[a++] = 0.0f; /* the root: the accumulator starts at +0 */
        stack[top++] = node(in, a, t);
    }
    int rc = stack && in ? A4W4_OK : A4W4_ENOMEM;
    if (rc == A4W4_OK)
        *value = stack[0];
    free(stack);
    free(in);
    return rc;
}

/* The accumulator value of one output (no NaN scale): every split's value, then combined:
 * chain, total = +0 then total = node(total, split value) in split order; or pairwise. */
static int tree_value(const a4w4_dot_operands *op, const a4w4_tree *t, float *value)
{
    if (t->sum_blocks)
        return sum_value(op, t, value);
    size_t n = a4w4_tree_splits(t, op->K, NULL, 0);
    size_t nleaf = op->K / (t->leaf < 32 ? t->leaf : 32) + 1;
    size_t *starts = malloc((n + 1) * sizeof *starts);
    float *splits = malloc(n * sizeof *splits);
    float *leaves = malloc(nleaf * sizeof *leaves);
    float *work = malloc(nleaf * sizeof *work);
    float *lanes = malloc(t->lanes * sizeof *lanes);
    int rc = starts && splits && leaves && work && lanes ? A4W4_OK : A4W4_ENOMEM;
    if (rc == A4W4_OK) {
        a4w4_tree_splits(t, op->K, starts, n + 1);
        for (size_t j = 0; j < n; j++)
            splits[j] = split_value(op, starts[j], starts[j + 1], t, leaves, work, lanes);
        if (t->combine == A4W4_REDUCE_PAIRWISE) {
            *value = pairwise(splits, n, t);
        } else {
            float total = 0.0f;
            for (size_t j = 0; j < n; j++) {
                float in[2] = {total, splits[j]};
                total = node(in, 2, t);
            }
            *value = total;
        }
    }
    free(starts);
    free(splits);
    free(leaves);
    free(work);
    free(lanes);
    return rc;
}

int a4w4_dot_tree(const a4w4_dot_operands *op, const a4w4_tree *t, uint16_t *bf16, float *acc)
{
    if (!op || !t || a4w4_tree_check(t, op->K, NULL, 0))
        return A4W4_EINVAL;
    float v = NAN;
    if (!reads_nan_scale(op)) {
        int rc = tree_value(op, t, &v);
        if (rc)
            return rc;
    }
    if (bf16)
        *bf16 = to_bf16(v, t->final);
    if (acc)
        *acc = isnan(v) ? a4w4_f32_from_bits(0x7FC00000u) : v;
    return A4W4_OK;
}

int a4w4_gemm_tree(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                   const uint8_t *w_scale, size_t M, size_t N, size_t K, const a4w4_tree *t,
                   uint16_t *y_bf16, float *y_f32)
{
    if (!a_fp4 || !a_scale || !w_fp4 || !w_scale || !y_bf16 || !M || !N ||
        a4w4_tree_check(t, K, NULL, 0))
        return A4W4_EINVAL;
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < N; n++) {
            a4w4_dot_operands op = {a_fp4 + m * (K / 2), a_scale + m * (K / 32),
                                    w_fp4 + n * (K / 2), w_scale + n * (K / 32), K};
            int rc = a4w4_dot_tree(&op, t, &y_bf16[m * N + n], y_f32 ? &y_f32[m * N + n] : NULL);
            if (rc)
                return rc;
        }
    return A4W4_OK;
}
