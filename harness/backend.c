/* backend.c — the backend table (see backend.h). */
#include "backend.h"

#include <stdio.h>
#include <string.h>

#include "a4w4_formats.h"
#include "cpu_sut.h"

static int run_cpu_asm(const a4w4_case_data *d, const size_t *rows, size_t nrows,
                       const size_t *cols, size_t ncols, uint16_t *y, char *why, size_t whylen)
{
    if (!d->w_fp4_shuffled || !d->w_scale_swizzled) {
        snprintf(why, whylen, "ASM layouts need N %% 16 == 0, K %% 64 == 0 (preshuffle) and "
                              "N %% 32 == 0, (K/32) %% 8 == 0 (scale swizzle); N=%zu K=%zu",
                 d->N, d->K);
        return A4W4_EUNSUPPORTED;
    }
    return a4w4_cpu_asm_gemm(d->a_fp4, d->a_scale_shuffled, d->w_fp4_shuffled,
                             d->w_scale_swizzled, d->M, d->N, d->K, rows, nrows, cols, ncols, y);
}

static int run_cpu_fallback(const a4w4_case_data *d, const size_t *rows, size_t nrows,
                            const size_t *cols, size_t ncols, uint16_t *y, char *why,
                            size_t whylen)
{
    (void)why;
    (void)whylen;
    return a4w4_cpu_fallback_gemm(d->a_fp4, d->a_scale, d->w_fp4, d->w_scale, d->M, d->N, d->K,
                                  rows, nrows, cols, ncols, y);
}

static const a4w4_backend table[] = {
    {"cpu-asm", "C GEMM reading w_fp4_shuffled, w_scale_swizzled, a_scale_shuffled through the layout maps",
     "ordered(1)", run_cpu_asm},
    {"cpu-fallback", "C GEMM on row-major operands and scales (Triton gemm_afp4wfp4's role)",
     "ordered(1)", run_cpu_fallback},
};

const a4w4_backend *a4w4_backends(size_t *count)
{
    *count = sizeof table / sizeof table[0];
    return table;
}

const a4w4_backend *a4w4_backend_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, name))
            return &table[i];
    return NULL;
}
