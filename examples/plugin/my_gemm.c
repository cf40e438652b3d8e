/* my_gemm.c — the smallest complete plugin (harness/backends/a4w4_plugin.h): a plain C A4W4
 * GEMM on the row-major operands that keeps ordered(1) (contracts §4.1): each 32-block's
 * exact dot times its two scales rounded once to fp32, blocks added in ascending K into an
 * fp32 total from +0.0, the total rounded to bf16 (RNE). It reads E8M0 code 0 as 2^-127, and
 * says so (contracts §1). Replace my_output with a call into your kernel.
 *
 *   cc -shared -fPIC -O2 -ffp-contract=off -Iharness/backends examples/plugin/my_gemm.c \
 *      -o libmy_gemm.so -lm
 *   build/a4w4check run --set edge --backend plugin:./libmy_gemm.so --out my-run */
#include <math.h>
#include <string.h>

#include "a4w4_plugin.h"

/* E2M1 code (4 bits) -> twice its value: 0, 1, 2, 3, 4, 6, 8, 12, negated for codes 8..15. */
static int e2m1_x2(unsigned code)
{
    static const int mag[8] = {0, 1, 2, 3, 4, 6, 8, 12};
    return code & 8 ? -mag[code & 7] : mag[code & 7];
}

/* Element k of a row of fp4x2 bytes: element 2i in the low nibble (contracts §1). */
static unsigned fp4_at(const uint8_t *row, size_t k)
{
    return k & 1 ? row[k / 2] >> 4 : row[k / 2] & 15;
}

static uint16_t f32_to_bf16(float f) /* round to nearest even; NaN stays NaN */
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* Output (m, n): ordered(1). */
static uint16_t my_output(const a4w4_plugin_gemm_args *g, size_t m, size_t n)
{
    size_t nb = g->K / 32;
    const uint8_t *a = g->a_fp4 + m * (g->K / 2), *w = g->w_fp4 + n * (g->K / 2);
    const uint8_t *sa = g->a_scale + m * nb, *sw = g->w_scale + n * nb;
    float total = 0.0f;
    for (size_t b = 0; b < nb; b++) {
        long dot4 = 0; /* 4 x the block's exact dot */
        for (size_t k = 32 * b; k < 32 * b + 32; k++)
            dot4 += e2m1_x2(fp4_at(a, k)) * e2m1_x2(fp4_at(w, k));
        double v = sa[b] == 0xFF || sw[b] == 0xFF ? NAN : ldexp((double)dot4, sa[b] + sw[b] - 256);
        total += (float)v; /* exact in double, rounded once to fp32 */
    }
    return f32_to_bf16(total);
}

static int my_gemm(void *state, const a4w4_plugin_gemm_args *g)
{
    (void)state;
    for (size_t i = 0; i < g->nrows; i++) /* the requested outputs only (rows/cols NULL: all) */
        for (size_t j = 0; j < g->ncols; j++)
            g->y[i * g->ncols + j] =
                my_output(g, g->rows ? g->rows[i] : i, g->cols ? g->cols[j] : j);
    return A4W4_PLUGIN_OK;
}

static const a4w4_plugin_info info = {A4W4_PLUGIN_ABI_VERSION, "my-gemm", "ordered(1)", 0,
                                      NULL, my_gemm, NULL};

A4W4_PLUGIN_EXPORT const a4w4_plugin_info *a4w4_plugin_query(void) { return &info; }

A4W4_PLUGIN_EXPORT const char *a4w4_plugin_e8m0_code0(void) { return "2^-127"; }
