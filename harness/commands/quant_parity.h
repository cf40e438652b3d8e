/* quant_parity.h — the two activation quantizers AITER ships, side by side on one layer: the
 * Triton one rounds the E8M0 scale "even", the HIP one (per_1x32_f4_quant_hip, the one
 * SGLang's opt-in ASM path calls) "round_up" (contracts §2). On the same bf16 activations and
 * weights: how many 32-blocks get another scale code, how many fp4 bytes differ, and what
 * that does to the output (y = the exact GEMM oracle of each quantization, contracts §4.1):
 * outputs that differ and their bf16 ULP distances as a histogram. Nothing here prints. */
#ifndef A4W4_QUANT_PARITY_H
#define A4W4_QUANT_PARITY_H

#include <stddef.h>
#include <stdint.h>

#include "casefile.h"
#include "criteria.h"

/* Histogram bins of ULP distances: bin 0 is 0, bin i >= 1 holds [2^(i-1), 2^i - 1]; the last
 * bin holds the outputs where one side is NaN (no distance). */
#define A4W4_PARITY_BINS 18

typedef struct {
    size_t M, N, K;
    size_t blocks, blocks_differ;   /* activation blocks; those whose scale code differs */
    size_t up, down;                /* ... round_up's code above / below even's */
    size_t bytes_differ;            /* fp4x2 bytes that differ */
    size_t outputs, outputs_differ;
    size_t hist[A4W4_PARITY_BINS];
    unsigned max_ulp;               /* the largest distance (NaN pairs excluded) */
    /* the peers' tolerance criteria on the difference: the round_up (HIP) outputs with the
     * even (Triton) outputs as reference (engine/criteria.h a4w4_criteria_on_pair) */
    size_t ntol;
    a4w4_crit_result tol[A4W4_CRITERIA_MAX];
    /* the same outputs as two paths' parity, the columns `layers` and `compare --outputs`
     * give (criteria.h a4w4_parity_diff: bit-equal, differ, max ULP, NaN against a number,
     * the criteria above); ntol 0 in it when out of memory */
    a4w4_parity_diff parity;
} a4w4_quant_parity;

/* Activations x (bf16 [M, K]) quantized in even and in round_up, each through the exact
 * oracle with weights w_fp4 [N, K/2], w_scale [N, K/32] (row-major). A4W4_OK, A4W4_EINVAL
 * (K % 32 != 0, a zero dimension), A4W4_ENOMEM. */
int a4w4_quant_parity_of(const uint16_t *x, const uint8_t *w_fp4, const uint8_t *w_scale,
                         size_t M, size_t N, size_t K, a4w4_quant_parity *p);

/* The same on case c generated in the normal regime (bf16 activations drawn N(0,1), the
 * case's weights; its own name and seed), on its first rows rows of M (all when 0 or more). */
int a4w4_quant_parity_case(const a4w4_case *c, size_t rows, a4w4_quant_parity *p);

#endif
