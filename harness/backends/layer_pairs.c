/* layer_pairs.c — the CPU backend pair of the layer path and the table of pairs (see
 * layer_pairs.h). */
#include "layer_pairs.h"

#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"
#include "cpu_sut.h"

static int cpu_quantize(void *ctx, const void *x, a4w4_in_dtype dtype, size_t M, size_t K,
                        a4w4_scale_mode mode, int shuffle, uint8_t *x_fp4, uint8_t *x_scale)
{
    (void)ctx;
    return a4w4_quantize(x, dtype, M, K, mode, shuffle, x_fp4, x_scale);
}

static int cpu_relayout(void *ctx, const uint8_t *x_scale, size_t M, size_t cols,
                        uint8_t row_fill, uint8_t col_fill, uint8_t *dst)
{
    (void)ctx;
    return a4w4_act_scale_shuffle(x_scale, M, cols, row_fill, col_fill, dst);
}

static int cpu_preshuffle(void *ctx, const uint8_t *w, size_t N, size_t K, uint8_t *dst)
{
    (void)ctx;
    return a4w4_preshuffle(w, N, K, dst);
}

static int cpu_swizzle(void *ctx, const uint8_t *s, size_t rows, size_t cols, uint8_t *dst)
{
    (void)ctx;
    return a4w4_scale_swizzle(s, rows, cols, dst);
}

const a4w4_layer_ops a4w4_layer_ops_cpu = {
    "cpu",
    "ref quantizer and layouts; cpu-asm GEMM on the ASM path, cpu-fallback GEMM otherwise",
    "ordered(1)",
    NULL,
    NULL,
    cpu_quantize,
    cpu_relayout,
    cpu_preshuffle,
    cpu_swizzle,
    a4w4_cpu_asm_whole,
    a4w4_cpu_fallback_whole};

#ifdef A4W4_HAVE_GPU
extern const a4w4_layer_ops a4w4_layer_ops_hip; /* layer_hip.c */
static const a4w4_layer_ops *const g_pairs[] = {&a4w4_layer_ops_cpu, &a4w4_layer_ops_hip};
#else
static const a4w4_layer_ops *const g_pairs[] = {&a4w4_layer_ops_cpu};
#endif

const a4w4_layer_ops *const *a4w4_layer_ops_list(size_t *count)
{
    *count = sizeof g_pairs / sizeof g_pairs[0];
    return g_pairs;
}

const a4w4_layer_ops *a4w4_layer_ops_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof g_pairs / sizeof g_pairs[0]; i++)
        if (!strcmp(g_pairs[i]->name, name))
            return g_pairs[i];
    return NULL;
}
