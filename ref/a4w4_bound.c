/* a4w4_bound.c — see a4w4_bound.h.
 *
 * The model (contracts §4.1 "bounded"): output y of (m, n) with the S-way split of ordered(S)
 * into n' <= S non-empty splits; split s holds n_s 32-blocks, its exact partial is P_s and its
 * sum of |terms| is T_s, so exact = sum_s P_s. Constants: u = 2^-24 (fp32 unit roundoff),
 * v = 2^-8 + 2^-23 (a bf16 rounding, also one taken through fp32 first: (1+u)(1+2^-8) - 1 <=
 * v), h = 2^-126 (the absolute error of one rounding near zero, gradual underflow or flush to
 * zero, fp32 or bf16), g(k) = k u / (1 - k u).
 *
 * 1. Split total in fp32. Each block's dot is exact (contracts §4), and its value is rounded at
 *    most once to fp32 (or fused into the add that takes it); the split adds its n_s values in
 *    any order or tree. Recursive summation in any order gives, for the computed total p_s,
 *      |p_s - P_s| <= g(n_s) T_s + 4 n_s h =: E_s
 *    (the n_s value roundings and n_s - 1 adds together are within (1+u)(1+g(n_s-1)) - 1 <=
 *    g(n_s) of the sum of |block values| <= T_s; each rounding adds at most h near zero).
 * 2. Rounded to bf16: q_s = bf16(p_s), |q_s - p_s| <= v |p_s| + h <= v (|P_s| + E_s) + h, so
 *      |q_s - P_s| <= E_s + v (|P_s| + E_s) + h =: D_s.
 * 3. Atomic adds into y_0 = +0 in any order pi: y_k = bf16(y_{k-1} + q_pi(k)). The first add
 *    is exact (0 + a bf16). With R_k = q_pi(1) + ... + q_pi(k) and e_k = y_k - R_k,
 *      |e_k| <= |e_{k-1}| (1 + v) + v |R_k| + h.
 *    R_k is a sum over a subset of the q_s, so R_k lies in [-Q-, Q+] with
 *      Q+ = sum_s max(0, P_s + D_s) >= sum of the positive q_s,
 *      Q- = sum_s max(0, D_s - P_s) >= sum of |negative q_s|,
 *    whatever the order; with W = max(Q+, Q-): |e_n'| <= sum_{i=0}^{n'-2} (1+v)^i (v W + h).
 * Hence |y - exact| <= |y - sum q_s| + sum_s |q_s - P_s| <= |e_n'| + sum_s D_s = B.
 *
 * The facts carry P_s only as p~, P_s rounded once to double: |P_s - p~| <= 2^-53 |p~| <= u |p~|
 * + 2^-149, so every |P_s| above is taken as |p~| (1 + u) + 2^-149 and P_s + D_s as p~ + u |p~|
 * + 2^-149 + D_s (and D_s - P_s likewise). T_s is summed in double from exact terms and
 * enlarged by its own rounding (32 n_s 2^-52 relative); the bound's own double arithmetic is
 * covered by a final factor 1 + 2^-40.
 *
 * Overflow (contracts §4.3). The steps above hold for every execution in which no rounding
 * overflows; one that overflows ends at +-Inf (and at NaN once both signs have overflowed). An
 * fp32 rounding inside split s sees the exact value of a partial sum plus its error: at most
 * T+_s + g(n_s) T_s + 4 n_s h above zero (T+_s the sum of the positive terms) and T-_s + ...
 * below, so it can reach fp32's overflow threshold 2^128 - 2^103 upward only when that reaches
 * it. The bf16 rounding of p_s sees at most P_s + E_s upward (E_s - P_s downward); an atomic
 * add (there are some only with n' >= 2 splits) at most Q+ + |e_n'| upward (Q- + |e_n'|
 * downward); either can reach bf16's threshold 2^128 - 2^119 only when that does. The tests
 * take a margin of 2^-20 relative for the roundings on the way. */
#include "a4w4_bound.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"

#define U32 0x1p-24
#define V16 (0x1p-8 + 0x1p-23)
#define H_UNDER 0x1p-126

/* Overflow thresholds: the smallest magnitudes fp32 and bf16 round (RNE) to Inf, and the
 * margin the overflow tests take for the roundings on the way. */
#define OVER_F32 (0x1p128 - 0x1p103)
#define OVER_BF16 (0x1p128 - 0x1p119)
#define OVER_MARGIN (1.0 + 0x1p-20)

int a4w4_dot_split_facts(const a4w4_dot_operands *op, unsigned S, unsigned j,
                         a4w4_split_facts *f)
{
    size_t per = a4w4_split_k_per_split(op->K, S), k0 = (size_t)j * per;
    size_t k1 = k0 + per < op->K ? k0 + per : op->K;
    size_t b0 = k0 / 32, b1 = k1 / 32;
    memset(f, 0, sizeof *f);
    double tpos = 0, tneg = 0;
    for (size_t b = b0; b < b1; b++) {
        unsigned sa = op->a_scale[b], sb = op->w_scale[b];
        if (sa == 0xFF || sb == 0xFF)
            return 1;
        long ipos = 0, ineg = 0;
        for (size_t k = b * 32; k < b * 32 + 32; k++) {
            long t = (long)a4w4_e2m1_to_int2x(a4w4_fp4_get(op->a_fp4, k)) *
                     a4w4_e2m1_to_int2x(a4w4_fp4_get(op->w_fp4, k));
            ipos += t > 0 ? t : 0;
            ineg += t < 0 ? -t : 0;
        }
        tpos += ldexp((double)ipos, (int)(sa + sb) - 256); /* twice x twice x 2^(sa+sb-254)/4 */
        tneg += ldexp((double)ineg, (int)(sa + sb) - 256);
    }
    f->blocks = b1 - b0;
    double grow = 1.0 + 32.0 * (double)f->blocks * 0x1p-52;
    f->tpos = tpos * grow;
    f->tneg = tneg * grow;
    f->t = f->tpos + f->tneg;
    a4w4_dot_operands sub = {op->a_fp4 + k0 / 2, op->a_scale + b0, op->w_fp4 + k0 / 2,
                             op->w_scale + b0, k1 - k0};
    f->p = a4w4_dot_exact_f64(&sub);
    return 0;
}

void a4w4_bound_acc_add(a4w4_bound_acc *a, const a4w4_split_facts *f)
{
    double n = (double)f->blocks;
    double g = n * U32 / (1.0 - n * U32);
    double e = g * f->t + 4.0 * n * H_UNDER;
    double pabs = fabs(f->p) * (1.0 + U32) + 0x1p-149;
    double d = e + V16 * (pabs + e) + H_UNDER;
    double slack = U32 * fabs(f->p) + 0x1p-149 + d;
    a->dsum += d;
    a->qpos += fmax(0.0, f->p + slack);
    a->qneg += fmax(0.0, slack - f->p);
    a->f32_pos |= (f->tpos + e) * OVER_MARGIN >= OVER_F32;
    a->f32_neg |= (f->tneg + e) * OVER_MARGIN >= OVER_F32;
    double pe = U32 * fabs(f->p) + 0x1p-149 + e; /* |p_s - p~| <= pe */
    a->q_pos |= (f->p + pe) * OVER_MARGIN >= OVER_BF16;
    a->q_neg |= (pe - f->p) * OVER_MARGIN >= OVER_BF16;
    a->n++;
}

/* The atomic stage's accumulated error |e_n'| (step 3). */
static double acc_atomic(const a4w4_bound_acc *a)
{
    double w = fmax(a->qpos, a->qneg), step = V16 * w + H_UNDER, grow = 1.0, e = 0;
    for (size_t i = 0; i + 1 < a->n; i++) {
        e += grow * step;
        grow *= 1.0 + V16;
    }
    return e;
}

static double acc_bound(const a4w4_bound_acc *a)
{
    return (a->dsum + acc_atomic(a)) * (1.0 + 0x1p-40);
}

double a4w4_bounded_bound_of(const a4w4_split_facts *f, size_t n)
{
    a4w4_bound_acc a;
    memset(&a, 0, sizeof a);
    for (size_t i = 0; i < n; i++)
        a4w4_bound_acc_add(&a, &f[i]);
    return acc_bound(&a);
}

void a4w4_bound_acc_limits(const a4w4_bound_acc *a, double exact, a4w4_bounded_limits *l)
{
    double at = acc_atomic(a);
    int adds = a->n >= 2; /* the first add into +0 is exact: atomic roundings need two splits */
    l->bound = acc_bound(a);
    l->exact = exact;
    l->inf_pos = a->f32_pos || a->q_pos || (adds && (a->qpos + at) * OVER_MARGIN >= OVER_BF16);
    l->inf_neg = a->f32_neg || a->q_neg || (adds && (a->qneg + at) * OVER_MARGIN >= OVER_BF16);
}

int a4w4_dot_bounded_limits(const a4w4_dot_operands *op, unsigned S, a4w4_bounded_limits *l)
{
    a4w4_bound_acc a;
    memset(&a, 0, sizeof a);
    unsigned ns = a4w4_split_count(op->K, S < 1 ? 1 : S);
    for (unsigned j = 0; j < ns; j++) {
        a4w4_split_facts f;
        if (a4w4_dot_split_facts(op, S < 1 ? 1 : S, j, &f)) {
            *l = (a4w4_bounded_limits){NAN, NAN, 0, 0};
            return 1;
        }
        a4w4_bound_acc_add(&a, &f);
    }
    a4w4_bound_acc_limits(&a, a4w4_dot_exact_f64(op), l);
    return 0;
}

double a4w4_dot_bounded_bound(const a4w4_dot_operands *op, unsigned S)
{
    a4w4_bounded_limits l;
    return a4w4_dot_bounded_limits(op, S, &l) ? NAN : l.bound;
}
