/* a4w4_gpu_layout.hip — the three byte layouts of contracts §3 on the device (load time).
 *
 *   §3.1 weight preshuffle: src[n0*16+n1][k0*32+k1*16+k2] ->
 *        dst[(((n0*(Kb/32)+k0)*2+k1)*16+n1)*16+k2]. A 16-byte granule g = k0*2+k1 of row n
 *        (one 32-element scale block) moves whole to granule ((n0*(Kb/16)+g)*16+n1).
 *   §3.2 scale swizzle: a4w4d_swizzle_index.
 *   §3.3 activation-scale pad (row_fill / col_fill) + §3.2 over the padded shape.
 * Test-only faults (a4w4_gpu_set_fault, passed as the last kernel argument): PRESHUFFLE_K1N1
 * (view permuted (0,2,1,3,4): granule (k0, k1) of row n0*16+n1 lands at
 * ((n0*(Kb/32)+k0)*16+n1)*2+k1) and SWIZZLE_D1D4 (a4w4d_swizzle_index_d1d4, both swizzles). */
#include "a4w4_gpu.h"
#include "a4w4_gpu_device.h"
#include "a4w4_gpu_internal.h"

/* One thread per destination granule (n1 fastest, so both sides stream). Pointers are
 * 16-byte aligned (checked by the caller) and Kb % 32 == 0. */
__global__ void a4w4g_preshuffle_kernel(const uint4 *w, long long N, long long Kb, uint4 *dst,
                                        int fault)
{
    const long long gpr = Kb / 16; /* granules per row */
    const long long total = N * gpr;
    const int k1n1 = fault == A4W4_GPU_FAULT_PRESHUFFLE_K1N1;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long n1 = idx & 15, rest = idx >> 4;
        const long long g = rest % gpr, n0 = rest / gpr;
        const long long src = (n0 * 16 + n1) * gpr + g;
        if (k1n1) /* the fault: k1 inside n1 */
            dst[((n0 * (gpr >> 1) + (g >> 1)) * 16 + n1) * 2 + (g & 1)] = w[src];
        else
            dst[idx] = w[src];
    }
}

__global__ void a4w4g_scale_swizzle_kernel(const unsigned char *src, long long rows,
                                           long long cols, unsigned char *dst, int fault)
{
    const long long total = rows * cols;
    const int d1d4 = fault == A4W4_GPU_FAULT_SWIZZLE_D1D4;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long r = idx / cols, c = idx % cols;
        dst[d1d4 ? a4w4d_swizzle_index_d1d4(cols, r, c) : a4w4d_swizzle_index(cols, r, c)] =
            src[idx];
    }
}

__global__ void a4w4g_act_scale_shuffle_kernel(const unsigned char *src, long long M,
                                               long long cols, long long prow, long long pcol,
                                               unsigned char row_fill, unsigned char col_fill,
                                               unsigned char *dst, int fault)
{
    const long long total = prow * pcol;
    const int d1d4 = fault == A4W4_GPU_FAULT_SWIZZLE_D1D4;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long r = idx / pcol, c = idx % pcol;
        unsigned char v = c >= cols ? col_fill : (r >= M ? row_fill : src[r * cols + c]);
        dst[d1d4 ? a4w4d_swizzle_index_d1d4(pcol, r, c) : a4w4d_swizzle_index(pcol, r, c)] = v;
    }
}

hipError_t a4w4g_launch_preshuffle(const unsigned char *w, long long N, long long K,
                                   unsigned char *dst, hipStream_t stream)
{
    const long long Kb = K / 2;
    hipLaunchKernelGGL(a4w4g_preshuffle_kernel, dim3(a4w4g_grid(N * (Kb / 16))),
                       dim3(A4W4G_THREADS), 0, stream, (const uint4 *)w, N, Kb, (uint4 *)dst,
                       a4w4g_fault());
    return hipGetLastError();
}

hipError_t a4w4g_launch_scale_swizzle(const unsigned char *src, long long rows, long long cols,
                                      unsigned char *dst, hipStream_t stream)
{
    hipLaunchKernelGGL(a4w4g_scale_swizzle_kernel, dim3(a4w4g_grid(rows * cols)),
                       dim3(A4W4G_THREADS), 0, stream, src, rows, cols, dst, a4w4g_fault());
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
                       col_fill, dst, a4w4g_fault());
    return hipGetLastError();
}
