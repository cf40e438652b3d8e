/* layer_hip.c — the HIP backend pair of the layer path: gpu/a4w4_gpu.h's quantizer,
 * layout kernels and GEMMs behind a4w4_layer_ops. Built only when A4W4_GPU != off. The ASM
 * path runs the 32x128 tile (AITER's most used tuned tile); `a4w4check run --backend
 * hip-asm:dispatch` covers the dispatch-picked tiles. */
#include <stdio.h>

#include "a4w4_formats.h"
#include "a4w4_gpu.h"
#include "layer_pairs.h"

static int hip_pair_available(char *why, size_t whylen)
{
    char name[128];
    if (a4w4_gpu_available(name, sizeof name) > 0)
        return 0;
    snprintf(why, whylen, "no GPU usable by the %s build", a4w4_gpu_platform());
    return 1;
}

static int st(int gpu_rc)
{
    return gpu_rc == A4W4_GPU_OK ? A4W4_OK
         : gpu_rc == A4W4_GPU_ELAYOUT ? A4W4_EUNSUPPORTED
         : gpu_rc == A4W4_GPU_ENOMEM ? A4W4_ENOMEM : A4W4_EINVAL;
}

static int hip_quantize(void *ctx, const void *x, a4w4_in_dtype dtype, size_t M, size_t K,
                        a4w4_scale_mode mode, int shuffle, uint8_t *x_fp4, uint8_t *x_scale)
{
    (void)ctx;
    return st(a4w4_gpu_quantize(x, (int)dtype, M, K, (int)mode, shuffle, 0x7F, 0x7F, x_fp4,
                                x_scale));
}

static int hip_relayout(void *ctx, const uint8_t *x_scale, size_t M, size_t cols,
                        uint8_t row_fill, uint8_t col_fill, uint8_t *dst)
{
    (void)ctx;
    return st(a4w4_gpu_act_scale_shuffle(x_scale, M, cols, row_fill, col_fill, dst));
}

static int hip_preshuffle(void *ctx, const uint8_t *w, size_t N, size_t K, uint8_t *dst)
{
    (void)ctx;
    return st(a4w4_gpu_preshuffle(w, N, K, dst));
}

static int hip_swizzle(void *ctx, const uint8_t *s, size_t rows, size_t cols, uint8_t *dst)
{
    (void)ctx;
    return st(a4w4_gpu_scale_swizzle(s, rows, cols, dst));
}

static int hip_gemm_asm(void *ctx, const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                        const uint8_t *w_fp4_shuffled, const uint8_t *w_scale_swizzled, size_t M,
                        size_t N, size_t K, uint16_t *y)
{
    (void)ctx;
    return st(a4w4_gpu_gemm_asm(a4w4_gpu_tile_find("32x128"), 1, A4W4_GPU_SPLIT_ORDERED, a_fp4,
                                a_scale_shuffled, w_fp4_shuffled, w_scale_swizzled, M, N, K, y));
}

static int hip_gemm_fallback(void *ctx, const uint8_t *a_fp4, const uint8_t *a_scale,
                             const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N,
                             size_t K, uint16_t *y)
{
    (void)ctx;
    return st(a4w4_gpu_gemm_rowmajor(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y));
}

const a4w4_layer_ops a4w4_layer_ops_hip = {
    .name = "hip",
    .what = "HIP quantizer and layout kernels; hip-asm 32x128 on the ASM path, hip-fallback otherwise",
    .contract = "ordered(1)",
    .available = hip_pair_available,
    .quantize = hip_quantize,
    .act_scale_relayout = hip_relayout,
    .preshuffle_weight = hip_preshuffle,
    .swizzle_weight_scale = hip_swizzle,
    .gemm_asm = hip_gemm_asm,
    .gemm_fallback = hip_gemm_fallback};
