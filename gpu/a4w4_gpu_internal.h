/* a4w4_gpu_internal.h — launchers shared by the kernel files and the C ABI (internal).
 * Each launcher enqueues on `stream` and returns the launch status (hipGetLastError). Shapes
 * are validated by the caller (a4w4_gpu_api.hip). */
#ifndef A4W4_GPU_INTERNAL_H
#define A4W4_GPU_INTERNAL_H

#include "a4w4_hip_port.h"

/* Threads per block of every kernel. */
#define A4W4G_THREADS 256

/* Grid size for a grid-stride loop over `total` items. */
static inline unsigned a4w4g_grid(long long total)
{
    long long blocks = (total + A4W4G_THREADS - 1) / A4W4G_THREADS;
    if (blocks < 1)
        blocks = 1;
    if (blocks > (1LL << 20))
        blocks = 1LL << 20;
    return (unsigned)blocks;
}

/* The test-only fault in force (a4w4_gpu_set_fault; a4w4_gpu_api.hip). Every launcher reads
 * it when it enqueues and passes it to its kernel as an argument. */
int a4w4g_fault(void);

/* Quantizer (a4w4_gpu_quant.hip). prow/pcol: padded scale shape when shuffle != 0. */
hipError_t a4w4g_launch_quantize(const void *x, int dtype, long long M, long long K, int mode,
                                 int shuffle, unsigned char row_fill, unsigned char col_fill,
                                 unsigned char *x_fp4, unsigned char *x_scale,
                                 hipStream_t stream);

/* Layouts (a4w4_gpu_layout.hip). */
hipError_t a4w4g_launch_preshuffle(const unsigned char *w, long long N, long long K,
                                   unsigned char *dst, hipStream_t stream);
hipError_t a4w4g_launch_scale_swizzle(const unsigned char *src, long long rows, long long cols,
                                      unsigned char *dst, hipStream_t stream);
hipError_t a4w4g_launch_act_scale_shuffle(const unsigned char *src, long long M,
                                          long long cols, unsigned char row_fill,
                                          unsigned char col_fill, unsigned char *dst,
                                          hipStream_t stream);

/* GEMM (a4w4_gpu_gemm.hip). */
typedef struct {
    const unsigned char *a_fp4; /* [M, K/2] row-major */
    const unsigned char *a_scale;
    const unsigned char *w_fp4;
    const unsigned char *w_scale;
    long long M, N, K;
    int tile_m, tile_n;         /* block output tile (multiples of 32) */
    int a_scale_shuffled;       /* 1: §3.3 layout with a_scale_cols columns; 0: row-major */
    long long a_scale_cols;     /* padded column count of the shuffled activation scale */
    int w_preshuffled;          /* 1: §3.1 layout; 0: row-major */
    int w_scale_swizzled;       /* 1: §3.2 layout; 0: row-major */
    long long k_per_split;      /* multiple of 256 (or >= K when not split) */
    int splits;                 /* non-empty split count = grid z */
    int split0;                 /* the first split of this launch (ACCUM: one per launch) */
    int out_mode;               /* A4W4G_OUT_* */
    unsigned short *y;          /* [M, N] bf16 */
    float *partial;             /* [splits, M, N] fp32 (out_mode PARTIAL) */
    int fault;                  /* a4w4_gpu_fault (set by the launcher; 0 = none) */
    int engine;                 /* A4W4_GPU_ENGINE_*: the portable or the matrix-unit kernel */
} a4w4g_gemm_args;

/* ACCUM (matrix-unit kernel only): one launch per split in split order, partial [M, N] fp32
 * = +0 + split total for split 0, partial + split total after it (ordered(S)'s outer sum in
 * one fp32 buffer instead of S of them). */
enum { A4W4G_OUT_BF16 = 0, A4W4G_OUT_PARTIAL = 1, A4W4G_OUT_ATOMIC = 2, A4W4G_OUT_ACCUM = 3 };

/* Reads the fault in force into a copy of *args (args->fault is ignored). */
hipError_t a4w4g_launch_gemm(const a4w4g_gemm_args *args, hipStream_t stream);
/* The matrix-unit kernel (a4w4_gpu_mma.hip): the same arguments and output modes, no faults;
 * tile_m % 32 == 0 and tile_n % 128 == 0. */
hipError_t a4w4g_launch_gemm_mma(const a4w4g_gemm_args *args, hipStream_t stream);
/* y[m][n] = RNE_bf16(+0 + partial[0][m][n] + partial[1][m][n] + ...), in split order; fault:
 * the test-only fault to apply (SPLITK_BF16) or 0. */
hipError_t a4w4g_launch_split_reduce(const float *partial, int splits, long long M,
                                     long long N, unsigned short *y, int fault,
                                     hipStream_t stream);

#endif
