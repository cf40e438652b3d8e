/* test_quant_parity.c — even against round_up activation quantization side by side
 * (harness/commands/quant_parity.c, contracts §2). Blocks whose amax is 1.6 * 2^k get a scale
 * one higher in round_up than in even (even keeps the exponent below 1.75, round_up bumps
 * amax/6 = 0.267 * 2^k past its power of two); blocks whose amax is 2^k get the same code in
 * both: so exactly the 1.6 blocks differ, and their outputs with them. */
#include <criterion/criterion.h>

#include <string.h>

#include "a4w4_formats.h"
#include "quant_parity.h"

Test(quant_parity, exactly_the_blocks_the_two_rules_round_apart_differ)
{
    enum { M = 2, N = 4, K = 128 };
    uint16_t x[M * K];
    for (size_t r = 0; r < M; r++)
        for (size_t k = 0; k < K; k++) { /* block b: amax 1.6 * 2^r when b is odd, else 2^r */
            size_t b = k / 32;
            float v = k % 32 ? 0.375f : (b % 2 ? 1.6f : 1.0f);
            x[r * K + k] = a4w4_f32_to_bf16(v * (float)(1 << r));
        }
    uint8_t w[N * K / 2], ws[N * K / 32];
    memset(w, 0x22, sizeof w);  /* every weight 1.0 */
    memset(ws, 127, sizeof ws); /* scale 2^0 */
    a4w4_quant_parity p;
    cr_assert_eq(a4w4_quant_parity_of(x, w, ws, M, N, K, &p), A4W4_OK);
    cr_expect_eq(p.blocks, M * K / 32);
    cr_expect_eq(p.blocks_differ, M * K / 32 / 2, "the odd blocks, and only they");
    cr_expect_eq(p.up, p.blocks_differ, "round_up is never below even");
    cr_expect_eq(p.down, 0);
    cr_expect_gt(p.outputs_differ, 0, "1.6 quantized against a coarser scale moves the sum");
    size_t total = 0;
    for (int i = 0; i < A4W4_PARITY_BINS; i++)
        total += p.hist[i];
    cr_expect_eq(total, p.outputs);
    cr_expect_eq(p.hist[0], p.outputs - p.outputs_differ);
    /* the peers' criteria on the difference: every row of the table, and the equality tests
     * (hipBLASLt unit_check, benchdnn) fail where outputs differ */
    size_t nc;
    a4w4_criteria(&nc);
    cr_assert_eq(p.ntol, nc);
    for (size_t i = 0; i < p.ntol; i++)
        if (!strcmp(p.tol[i].c->id, "hipblaslt-unit-check") ||
            !strcmp(p.tol[i].c->id, "onednn-benchdnn-matmul"))
            cr_expect_eq(p.tol[i].verdict, A4W4_CRIT_FAIL, "%s", p.tol[i].text);
    /* the parity columns (layers, compare --outputs): bit-equal and differing outputs counted
     * from the histogram's bin 0, the same largest distance, the same criteria */
    cr_expect_eq(p.parity.n, p.outputs);
    cr_expect_eq(p.parity.equal, p.hist[0]);
    cr_expect_eq(p.parity.n - p.parity.equal, p.outputs_differ);
    cr_expect_eq(p.parity.max_ulp, p.max_ulp);
    cr_expect_eq(p.parity.ntol, nc);
}

Test(quant_parity, bad_shapes_are_refused)
{
    a4w4_quant_parity p;
    uint16_t x[32] = {0};
    uint8_t w[16] = {0}, ws[1] = {127};
    cr_expect_eq(a4w4_quant_parity_of(x, w, ws, 1, 1, 30, &p), A4W4_EINVAL);
    cr_expect_eq(a4w4_quant_parity_of(x, w, ws, 0, 1, 32, &p), A4W4_EINVAL);
}
