/* cpu_sut.h — the two CPU systems under test that stand beside the GPU kernels.
 *
 * Both keep the ordered(1) contract of contracts §4.1 and are written apart from the oracles in
 * ref/a4w4_gemm.c and ref/a4w4_gemm_fast*.c (their own decode table and accumulation loop);
 * they share only the layout index maps of ref/a4w4_layout.h, as the ASM kernel shares
 * AITER's layouts. Each computes 32 outputs side by side (lanes across columns; every
 * output's blocks still added in ascending K order) and allocates its decoded operands per
 * call: about min(nrows, 256) * K * 2 bytes (A decoded 256 rows at a time).
 *
 * Output subsets: rows[nrows] and cols[ncols] select the outputs to compute (y is then
 * [nrows, ncols] row-major); rows == NULL means every row 0..M-1 (nrows ignored), likewise
 * cols. Outputs are bf16 bits. */
#ifndef A4W4_CPU_SUT_H
#define A4W4_CPU_SUT_H

#include <stddef.h>
#include <stdint.h>

#include "verify_bundle.h"

/* ASM-layout consumer: reads the weight only as w_fp4_shuffled (contracts §3.1), its scale only
 * as w_scale_swizzled (§3.2) and the activation scale only as a_scale_shuffled (§3.3, padded
 * to a4w4_act_scale_padded_rows(M) x a4w4_act_scale_padded_cols(K/32)); a_fp4 [M, K/2]
 * row-major. Returns A4W4_EUNSUPPORTED when N % 32 != 0, K % 64 != 0 or (K/32) % 8 != 0
 * (the layouts do not exist: "not applicable"), A4W4_EINVAL on other bad shapes or an index
 * out of range in rows/cols (then y is untouched), A4W4_ENOMEM when out of memory. */
int a4w4_cpu_asm_gemm(const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                      const uint8_t *w_fp4_shuffled, const uint8_t *w_scale_swizzled, size_t M,
                      size_t N, size_t K, const size_t *rows, size_t nrows, const size_t *cols,
                      size_t ncols, uint16_t *y);

/* Row-major fallback GEMM (the role Triton's gemm_afp4wfp4 plays): a_fp4 [M, K/2],
 * a_scale [M, K/32], w_fp4 [N, K/2], w_scale [N, K/32]. A4W4_EINVAL on bad shapes or an
 * index out of range (y untouched), A4W4_ENOMEM when out of memory. */
int a4w4_cpu_fallback_gemm(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                           const uint8_t *w_scale, size_t M, size_t N, size_t K,
                           const size_t *rows, size_t nrows, const size_t *cols, size_t ncols,
                           uint16_t *y);

/* The two GEMMs on every output (y [M, N], no sample), in the form the bundle checks and the
 * layer pair take; ctx unused. cpu-asm reads the contracts §3 layouts (a_scale_shuffled,
 * w_fp4_shuffled, w_scale_swizzled), cpu-fallback the row-major operands. A4W4_OK or
 * A4W4_EINVAL or A4W4_ENOMEM (a4w4_cpu_asm_gemm / a4w4_cpu_fallback_gemm). */
int a4w4_cpu_asm_whole(void *ctx, const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                       const uint8_t *w_fp4_shuffled, const uint8_t *w_scale_swizzled, size_t M,
                       size_t N, size_t K, uint16_t *y);
int a4w4_cpu_fallback_whole(void *ctx, const uint8_t *a_fp4, const uint8_t *a_scale,
                            const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N,
                            size_t K, uint16_t *y);

/* The two as the systems under test a case bundle's y_ordered is checked against (contracts
 * §7, engine/verify_bundle.h): cpu-asm (asm_layout 1) then cpu-fallback; *n = 2. Static
 * storage. */
const a4w4_bundle_sut *a4w4_cpu_bundle_suts(size_t *n);

#endif
