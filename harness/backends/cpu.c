/* cpu.c — the two CPU systems under test as backends (cpu_sut.h). */
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
    .run = run_cpu_asm};

const a4w4_backend_type a4w4_backend_cpu_fallback = {
    .name = "cpu-fallback",
    .what = "C GEMM on row-major operands and scales (Triton gemm_afp4wfp4's role)",
    .contract = "ordered(1)",
    .run = run_cpu_fallback};
