/* quant_parity.c — even against round_up activation quantization (quant_parity.h). */
#include "quant_parity.h"

#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_gemm_fast.h"
#include "a4w4_quant.h"
#include "check.h"
#include "gen.h"

static int bin_of(unsigned d)
{
    int b = 0;
    while (d && b < A4W4_PARITY_BINS - 2) {
        d >>= 1;
        b++;
    }
    return b;
}

/* Compare the two quantizations (scales s0/s1, codes q0/q1) and outputs y0/y1 into p. */
static void tally(a4w4_quant_parity *p, const uint8_t *s0, const uint8_t *s1, const uint8_t *q0,
                  const uint8_t *q1, const uint16_t *y0, const uint16_t *y1)
{
    size_t M = p->M, N = p->N, K = p->K;
    p->blocks = M * K / 32;
    for (size_t i = 0; i < p->blocks; i++) {
        p->blocks_differ += s0[i] != s1[i];
        p->up += s1[i] > s0[i];
        p->down += s1[i] < s0[i];
    }
    for (size_t i = 0; i < M * K / 2; i++)
        p->bytes_differ += q0[i] != q1[i];
    p->outputs = M * N;
    for (size_t i = 0; i < M * N; i++) {
        unsigned d = a4w4_bf16_ulp_distance(y0[i], y1[i]);
        p->outputs_differ += y0[i] != y1[i];
        if (d == (unsigned)-1) {
            p->hist[A4W4_PARITY_BINS - 1]++;
            continue;
        }
        p->hist[bin_of(d)]++;
        if (d > p->max_ulp)
            p->max_ulp = d;
    }
    if (a4w4_parity_diff_of(y0, y1, M * N, &p->parity) == 0) {
        p->ntol = p->parity.ntol;
        memcpy(p->tol, p->parity.tol, sizeof p->tol);
    }
}

int a4w4_quant_parity_of(const uint16_t *x, const uint8_t *w_fp4, const uint8_t *w_scale,
                         size_t M, size_t N, size_t K, a4w4_quant_parity *p)
{
    memset(p, 0, sizeof *p);
    p->M = M;
    p->N = N;
    p->K = K;
    if (!M || !N || !K || K % 32)
        return A4W4_EINVAL;
    uint8_t *q[2] = {malloc(M * K / 2), malloc(M * K / 2)};
    uint8_t *s[2] = {malloc(M * K / 32), malloc(M * K / 32)};
    uint16_t *y[2] = {malloc(M * N * 2), malloc(M * N * 2)};
    static const a4w4_scale_mode modes[2] = {A4W4_EVEN, A4W4_ROUND_UP};
    int rc = q[0] && q[1] && s[0] && s[1] && y[0] && y[1] ? A4W4_OK : A4W4_ENOMEM;
    for (int i = 0; i < 2 && rc == A4W4_OK; i++) {
        rc = a4w4_quantize(x, A4W4_IN_BF16, M, K, modes[i], 0, q[i], s[i]);
        if (rc == A4W4_OK)
            rc = a4w4_gemm_exact_fast(q[i], s[i], w_fp4, w_scale, M, N, K, y[i], NULL);
    }
    if (rc == A4W4_OK)
        tally(p, s[0], s[1], q[0], q[1], y[0], y[1]);
    for (int i = 0; i < 2; i++) {
        free(q[i]);
        free(s[i]);
        free(y[i]);
    }
    return rc;
}

int a4w4_quant_parity_case(const a4w4_case *c, size_t rows, a4w4_quant_parity *p)
{
    a4w4_case n = *c;
    n.regime = A4W4_REGIME_NORMAL;
    n.mode = A4W4_ROUND_UP;
    if (rows && rows < n.M)
        n.M = rows; /* rows are independent streams: the first rows of the full case */
    a4w4_sample s = {.full = 1};
    a4w4_case_data d;
    memset(p, 0, sizeof *p);
    if (a4w4_case_generate(&n, &s, &d) != A4W4_OK)
        return A4W4_ENOMEM;
    int rc = a4w4_quant_parity_of(d.x, d.w_fp4.data, d.w_scale.data, n.M, n.N, n.K, p);
    a4w4_case_data_free(&d);
    return rc;
}
