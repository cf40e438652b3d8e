/* a4w4_gpu_layout.hip — the three byte layouts of SPEC §3 on the device (load time).
 *
 *   §3.1 weight preshuffle: src[n0*16+n1][k0*32+k1*16+k2] ->
 *        dst[(((n0*(Kb/32)+k0)*2+k1)*16+n1)*16+k2]. A 16-byte granule g = k0*2+k1 of row n
 *        (one 32-element scale block) moves whole to granule ((n0*(Kb/16)+g)*16+n1).
 *   §3.2 scale swizzle: a4w4d_swizzle_index.
 *   §3.3 activation-scale pad (row_fill / col_fill) + §3.2 over the padded shape. */
#include "a4w4_gpu_device.h"
#include "a4w4_gpu_internal.h"

/* One thread per destination granule (n1 fastest, so both sides stream). Pointers are
 * 16-byte aligned (checked by the caller) and Kb % 32 == 0. */
__global__ void a4w4g_preshuffle_kernel(const uint4 *w, long long N, long long Kb, uint4 *dst)
{
    const long long gpr = Kb / 16; /* granules per row */
    const long long total = N * gpr;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long n1 = idx & 15, rest = idx >> 4;
        const long long g = rest % gpr, n0 = rest / gpr;
        dst[idx] = w[(n0 * 16 + n1) * gpr + g];
    }
}

__global__ void a4w4g_scale_swizzle_kernel(const unsigned char *src, long long rows,
                                           long long cols, unsigned char *dst)
{
    const long long total = rows * cols;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long r = idx / cols, c = idx % cols;
        dst[a4w4d_swizzle_index(cols, r, c)] = src[idx];
    }
}

__global__ void a4w4g_act_scale_shuffle_kernel(const unsigned char *src, long long M,
                                               long long cols, long long prow, long long pcol,
                                               unsigned char row_fill, unsigned char col_fill,
                                               unsigned char *dst)
{
    const long long total = prow * pcol;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long r = idx / pcol, c = idx % pcol;
        unsigned char v = c >= cols ? col_fill : (r >= M ? row_fill : src[r * cols + c]);
        dst[a4w4d_swizzle_index(pcol, r, c)] = v;
    }
}

hipError_t a4w4g_launch_preshuffle(const unsigned char *w, long long N, long long K,
                                   unsigned char *dst, hipStream_t stream)
{
    const long long Kb = K / 2;
    hipLaunchKernelGGL(a4w4g_preshuffle_kernel, dim3(a4w4g_grid(N * (Kb / 16))),
                       dim3(A4W4G_THREADS), 0, stream, (const uint4 *)w, N, Kb, (uint4 *)dst);
    return hipGetLastError();
}

hipError_t a4w4g_launch_scale_swizzle(const unsigned char *src, long long rows, long long cols,
                                      unsigned char *dst, hipStream_t stream)
{
    hipLaunchKernelGGL(a4w4g_scale_swizzle_kernel, dim3(a4w4g_grid(rows * cols)),
                       dim3(A4W4G_THREADS), 0, stream, src, rows, cols, dst);
    return hipGetLastError();
}

hipError_t a4w4g_launch_act_scale_shuffle(const unsigned char *src, long long M,
                                          long long cols, unsigned char row_fill,
                                          unsigned char col_fill, unsigned char *dst,
                                          hipStream_t stream)
{
    const long long prow = (M + 255) / 256 * 256, pcol = (cols + 7) / 8 * 8;
    hipLaunchKernelGGL(a4w4g_act_scale_shuffle_kernel, dim3(a4w4g_grid(prow * pcol)),
                       dim3(A4W4G_THREADS), 0, stream, src, M, cols, prow, pcol, row_fill,
                       col_fill, dst);
    return hipGetLastError();
}
