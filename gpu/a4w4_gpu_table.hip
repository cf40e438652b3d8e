/* a4w4_gpu_table.hip — the pure host parts of the C ABI (no GPU runtime): status strings,
 * the tile table, shape and split helpers. Shared by the GPU library and the CPU stand-in
 * (tests/gpu/a4w4_gpu_cpu.hip) that runs a4w4_gpu_check without a GPU. */
#include <stdio.h>
#include <string.h>

#include "a4w4_gpu.h"
#include "a4w4_gpu_table.h"

extern "C" const char *a4w4_gpu_strerror(int status)
{
    switch (status) {
    case A4W4_GPU_OK: return "ok";
    case A4W4_GPU_ENODEV: return "no usable GPU (no device, no driver, or no GPU backend)";
    case A4W4_GPU_ESHAPE: return "bad shape (M, N, K >= 1 and K % 32 == 0 required; size overflow)";
    case A4W4_GPU_ELAYOUT: return "layout rule fails for this shape or tile (contracts §3)";
    case A4W4_GPU_ELAUNCH: return "kernel launch or execution failed";
    case A4W4_GPU_ENOMEM: return "out of memory";
    case A4W4_GPU_EARG: return "bad argument (NULL or misaligned pointer, mode, dtype, splits, tile)";
    case A4W4_GPU_ERUNTIME: return "GPU runtime failure (copy, event or synchronisation)";
    default: return "unknown status";
    }
}

/* ---- tile table (cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv) ------------------------ */
static const a4w4_gpu_tile g_tiles[] = {
    {"f4gemm_bf16_per1x32Fp4_noBpreShuffle_256x256",
     "_ZN5aiter44f4gemm_bf16_per1x32Fp4_noBpreShuffle_256x256E", 256, 256, 0, 0},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256E", 256, 256, 1, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_128x512",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_128x512E", 128, 512, 1, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_192x256",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_192x256E", 192, 256, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_224x256",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_224x256E", 224, 256, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_128x128",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_128x128E", 128, 128, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_128x256",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_128x256E", 128, 256, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_128x384",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_128x384E", 128, 384, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_160x128",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_160x128E", 160, 128, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_160x256",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_160x256E", 160, 256, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_160x384",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_160x384E", 160, 384, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_192x128",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_192x128E", 192, 128, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_224x128",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_224x128E", 224, 128, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_256x128",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_256x128E", 256, 128, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_32x1024",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_32x1024E", 32, 1024, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128E", 32, 128, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_32x256",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x256E", 32, 256, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_32x384",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x384E", 32, 384, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_32x512",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x512E", 32, 512, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_32x640",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x640E", 32, 640, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_32x768",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x768E", 32, 768, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_32x896",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x896E", 32, 896, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_64x1024",
     "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_64x1024E", 64, 1024, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_64x128",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_64x128E", 64, 128, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_64x256",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_64x256E", 64, 256, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_64x384",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_64x384E", 64, 384, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_64x512",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_64x512E", 64, 512, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_64x640",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_64x640E", 64, 640, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_64x768",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_64x768E", 64, 768, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_64x896",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_64x896E", 64, 896, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_96x128",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_96x128E", 96, 128, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_96x256",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_96x256E", 96, 256, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_96x384",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_96x384E", 96, 384, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_96x512",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_96x512E", 96, 512, 0, 1},
    {"f4gemm_bf16_per1x32Fp4_BpreShuffle_96x640",
     "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_96x640E", 96, 640, 0, 1},
};

#define NTILES ((int)(sizeof g_tiles / sizeof g_tiles[0]))

extern "C" int a4w4_gpu_tile_count(void) { return NTILES; }

extern "C" const a4w4_gpu_tile *a4w4_gpu_tile_get(int index)
{
    return (index >= 0 && index < NTILES) ? &g_tiles[index] : NULL;
}

extern "C" int a4w4_gpu_tile_find(const char *name)
{
    if (!name)
        return -1;
    const size_t len = strlen(name);
    for (int i = 0; i < NTILES; i++) {
        const a4w4_gpu_tile *t = &g_tiles[i];
        if (!strcmp(name, t->name) || !strcmp(name, t->symbol))
            return i;
        const size_t nl = strlen(t->name); /* "<name>.co" */
        if (len == nl + 3 && !strncmp(name, t->name, nl) && !strcmp(name + nl, ".co"))
            return i;
    }
    int m = 0, n = 0;
    char tail = 0;
    if (sscanf(name, "%dx%d%c", &m, &n, &tail) == 2) { /* "MxN": the BpreShuffle variant */
        for (int i = 0; i < NTILES; i++)
            if (g_tiles[i].bpreshuffle && g_tiles[i].tile_m == m && g_tiles[i].tile_n == n)
                return i;
    }
    return -1;
}

/* ---- shape helpers --------------------------------------------------------------------- */
int a4w4g_mul_ok(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > (size_t)A4W4G_MAX_ELEMS / a)
        return 0;
    *out = a * b;
    return *out <= (size_t)A4W4G_MAX_ELEMS;
}

extern "C" size_t a4w4_gpu_act_scale_shuffled_bytes(size_t M, size_t cols)
{
    size_t out;
    if (M == 0 || cols == 0 || M > A4W4G_MAX_ELEMS || cols > A4W4G_MAX_ELEMS)
        return 0;
    return a4w4g_mul_ok((M + 255) / 256 * 256, (cols + 7) / 8 * 8, &out) ? out : 0;
}

extern "C" size_t a4w4_gpu_split_k_per_split(size_t K, unsigned splits)
{
    if (splits == 0)
        splits = 1;
    size_t per = (K + splits - 1) / splits;
    per = (per + 255) / 256 * 256;
    return per < 256 ? 256 : per;
}

extern "C" unsigned a4w4_gpu_split_count(size_t K, unsigned splits)
{
    if (K == 0)
        return 0;
    size_t per = a4w4_gpu_split_k_per_split(K, splits);
    return (unsigned)((K + per - 1) / per);
}

extern "C" size_t a4w4_gpu_gemm_workspace_bytes(size_t M, size_t N, size_t K, unsigned splits,
                                                int split_mode)
{
    size_t mn, out;
    if (split_mode != A4W4_GPU_SPLIT_ORDERED || splits <= 1 || K == 0)
        return 0;
    const unsigned ns = a4w4_gpu_split_count(K, splits);
    if (ns <= 1 || !a4w4g_mul_ok(M, N, &mn) || !a4w4g_mul_ok(mn, (size_t)ns * 4, &out))
        return 0;
    return out;
}

