/* cpu.c — the two CPU systems under test as backends and as bundle systems under test
 * (cpu_sut.h). */
#include <stdio.h>

#include "a4w4_formats.h"
#include "registry.h"
#include "cpu_sut.h"

static int run_cpu_asm(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    const a4w4_case_data *d = a->d;
    if (!d->w_fp4_shuffled.data || !d->w_scale_swizzled.data) {
        snprintf(a->why, a->whylen,
                 "ASM layouts need N %% 16 == 0, K %% 64 == 0 (preshuffle) and N %% 32 == 0, "
                 "(K/32) %% 8 == 0 (scale swizzle); N=%zu K=%zu", d->N, d->K);
        return A4W4_EUNSUPPORTED;
    }
    return a4w4_cpu_asm_gemm(d->a_fp4.data, d->a_scale_shuffled.data, d->w_fp4_shuffled.data,
                             d->w_scale_swizzled.data, d->M, d->N, d->K, a->s->rows,
                             a->s->nrows, a->s->cols, a->s->ncols, a->y);
}

static int run_cpu_fallback(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    const a4w4_case_data *d = a->d;
    return a4w4_cpu_fallback_gemm(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                  d->w_scale.data, d->M, d->N, d->K, a->s->rows, a->s->nrows,
                                  a->s->cols, a->s->ncols, a->y);
}

const a4w4_backend_type a4w4_backend_cpu_asm = {
    .name = "cpu-asm",
    .what = "C GEMM reading w_fp4_shuffled, w_scale_swizzled, a_scale_shuffled through the layout maps",
    .contract = "ordered(1)",
    .asm_layout = 1,
    .thread_safe = 1,
    .code0_reading = A4W4_CODE0_OCP, /* 2^(code-127) for every code: 2^-127 (contracts §1) */
    .run = run_cpu_asm};

const a4w4_backend_type a4w4_backend_cpu_fallback = {
    .name = "cpu-fallback",
    .what = "C GEMM on row-major operands and scales (Triton gemm_afp4wfp4's role)",
    .contract = "ordered(1)",
    .thread_safe = 1,
    .code0_reading = A4W4_CODE0_OCP, /* 2^(code-127) for every code: 2^-127 (contracts §1) */
    .run = run_cpu_fallback};

/* Whole-output forms (golden bundles, the CPU layer pair; see cpu_sut.h). */
int a4w4_cpu_asm_whole(void *ctx, const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                          const uint8_t *w_fp4_shuffled, const uint8_t *w_scale_swizzled,
                          size_t M, size_t N, size_t K, uint16_t *y)
{
    (void)ctx;
    return a4w4_cpu_asm_gemm(a_fp4, a_scale_shuffled, w_fp4_shuffled, w_scale_swizzled, M, N,
                             K, NULL, 0, NULL, 0, y);
}

int a4w4_cpu_fallback_whole(void *ctx, const uint8_t *a_fp4, const uint8_t *a_scale,
                               const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N,
                               size_t K, uint16_t *y)
{
    (void)ctx;
    return a4w4_cpu_fallback_gemm(a_fp4, a_scale, w_fp4, w_scale, M, N, K, NULL, 0, NULL, 0,
                                  y);
}

const a4w4_bundle_sut *a4w4_cpu_bundle_suts(size_t *n)
{
    static const a4w4_bundle_sut suts[] = {
        {"cpu-asm", 1, a4w4_cpu_asm_whole, NULL},
        {"cpu-fallback", 0, a4w4_cpu_fallback_whole, NULL},
    };
    *n = sizeof suts / sizeof suts[0];
    return suts;
}
