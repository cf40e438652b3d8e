/* a4w4_atomic.c — the atomic(S) contract's plain oracle (a4w4_atomic.h, contracts §4.1). */
#include "a4w4_atomic.h"

#include <string.h>

unsigned a4w4_dot_atomic_splits(const a4w4_dot_operands *op, unsigned S, uint16_t *q)
{
    if (!S || S > A4W4_ATOMIC_SPLIT_MAX)
        return 0;
    const size_t per = a4w4_split_k_per_split(op->K, S);
    unsigned n = 0;
    for (size_t k0 = 0; k0 < op->K; k0 += per) {
        const size_t k1 = k0 + per < op->K ? k0 + per : op->K;
        /* the split alone is ordered(1) over its K range: blocks in ascending K from +0.0 */
        const a4w4_dot_operands part = {op->a_fp4 + k0 / 2, op->a_scale + k0 / 32,
                                        op->w_fp4 + k0 / 2, op->w_scale + k0 / 32, k1 - k0};
        q[n++] = a4w4_f32_to_bf16(a4w4_dot_ordered(&part, 1));
    }
    /* a NaN scale anywhere in the output's row makes the output NaN (contracts §4.1) */
    int nan = 0;
    for (unsigned j = 0; j < n; j++)
        nan |= a4w4_bf16_is_nan(q[j]);
    for (unsigned j = 0; nan && j < n; j++)
        q[j] = 0x7FC0;
    return n;
}

uint16_t a4w4_atomic_add(uint16_t acc, uint16_t q)
{
    return a4w4_f32_to_bf16(a4w4_bf16_to_f32(acc) + a4w4_bf16_to_f32(q));
}

uint16_t a4w4_atomic_fold(const uint16_t *q, const unsigned *perm, unsigned n)
{
    uint16_t acc = 0x0000; /* the zeroed output, +0 */
    for (unsigned i = 0; i < n; i++)
        acc = a4w4_atomic_add(acc, q[perm ? perm[i] : i]);
    return acc;
}

static int same_bits(uint16_t a, uint16_t b)
{
    return a == b || (a4w4_bf16_is_nan(a) && a4w4_bf16_is_nan(b));
}

/* The next permutation of p[0..n) in lexicographic order; 0 after the last one. */
static int next_perm(unsigned *p, unsigned n)
{
    unsigned i = n - 1;
    while (i > 0 && p[i - 1] >= p[i])
        i--;
    if (i == 0)
        return 0;
    unsigned j = n - 1;
    while (p[j] <= p[i - 1])
        j--;
    unsigned t = p[i - 1];
    p[i - 1] = p[j];
    p[j] = t;
    for (unsigned a = i, b = n - 1; a < b; a++, b--) {
        t = p[a];
        p[a] = p[b];
        p[b] = t;
    }
    return 1;
}

unsigned a4w4_atomic_results(const uint16_t *q, unsigned n, uint16_t *out)
{
    unsigned p[A4W4_ATOMIC_SPLIT_MAX], count = 0;
    uint16_t seen[720];
    if (n > A4W4_ATOMIC_SPLIT_MAX)
        return 0;
    for (unsigned i = 0; i < n; i++)
        p[i] = i;
    do {
        const uint16_t r = a4w4_atomic_fold(q, p, n);
        unsigned k = 0;
        while (k < count && !same_bits(seen[k], r))
            k++;
        if (k == count)
            seen[count++] = r;
    } while (n > 1 && next_perm(p, n));
    if (out)
        memcpy(out, seen, count * sizeof *out);
    return count;
}

int a4w4_atomic_member(const uint16_t *q, unsigned n, uint16_t got)
{
    unsigned p[A4W4_ATOMIC_SPLIT_MAX];
    if (n > A4W4_ATOMIC_SPLIT_MAX)
        return 0;
    for (unsigned i = 0; i < n; i++)
        p[i] = i;
    do {
        if (same_bits(a4w4_atomic_fold(q, p, n), got))
            return 1;
    } while (n > 1 && next_perm(p, n));
    return 0;
}

int a4w4_gemm_atomic_splits(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                            const uint8_t *w_scale, size_t M, size_t N, size_t K, unsigned S,
                            uint16_t *q, unsigned *nsplit)
{
    if (!a_fp4 || !a_scale || !w_fp4 || !w_scale || !q || !M || !N || !K || K % 32 || !S ||
        S > A4W4_ATOMIC_SPLIT_MAX)
        return A4W4_EINVAL;
    unsigned n = 0;
    for (size_t m = 0; m < M; m++)
        for (size_t j = 0; j < N; j++) {
            const a4w4_dot_operands op = {a_fp4 + m * (K / 2), a_scale + m * (K / 32),
                                          w_fp4 + j * (K / 2), w_scale + j * (K / 32), K};
            uint16_t *o = q + (m * N + j) * S;
            memset(o, 0, S * sizeof *o);
            n = a4w4_dot_atomic_splits(&op, S, o);
        }
    if (nsplit)
        *nsplit = n;
    return A4W4_OK;
}
