/* a4w4_gpu_quant.hip — per-1x32 MXFP4 quantizer, per_1x32_f4_quant (SPEC §2), with the
 * optional shuffled-scale output of SPEC §3.3 (pad rows row_fill, pad columns col_fill).
 *
 * One thread per 32-element block. In shuffle mode the grid covers the whole padded scale
 * tensor, so every pad byte is written too (a pad entry in column c >= K/32 gets col_fill in
 * any row; an entry in a row r >= M and a valid column gets row_fill). */
#include "a4w4_gpu_device.h"
#include "a4w4_gpu_internal.h"

static __device__ __forceinline__ unsigned a4w4d_load_bits(const void *x, int dtype,
                                                           long long i)
{
    if (dtype == 0)
        return ((const unsigned *)x)[i];
    unsigned h = ((const unsigned short *)x)[i];
    return dtype == 1 ? a4w4d_bf16_bits_to_f32_bits(h) : a4w4d_fp16_bits_to_f32_bits(h);
}

__global__ void a4w4g_quantize_kernel(const void *x, int dtype, long long M, long long K,
                                      int mode, int shuffle, unsigned char row_fill,
                                      unsigned char col_fill, unsigned char *x_fp4,
                                      unsigned char *x_scale, long long grid_rows,
                                      long long grid_cols)
{
    const long long cols = K / 32;
    const long long total = grid_rows * grid_cols;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long r = idx / grid_cols, c = idx % grid_cols;
        unsigned s;
        if (r < M && c < cols) {
            const long long base = r * K + c * 32;
            unsigned bits[32];
            for (int i = 0; i < 32; i++)
                bits[i] = a4w4d_load_bits(x, dtype, base + i);
            s = a4w4d_quant_block(bits, mode, x_fp4 + r * (K / 2) + c * 16);
        } else {
            s = c >= cols ? col_fill : row_fill;
        }
        if (shuffle)
            x_scale[a4w4d_swizzle_index(grid_cols, r, c)] = (unsigned char)s;
        else
            x_scale[r * cols + c] = (unsigned char)s;
    }
}

hipError_t a4w4g_launch_quantize(const void *x, int dtype, long long M, long long K, int mode,
                                 int shuffle, unsigned char row_fill, unsigned char col_fill,
                                 unsigned char *x_fp4, unsigned char *x_scale,
                                 hipStream_t stream)
{
    const long long cols = K / 32;
    const long long grid_rows = shuffle ? (M + 255) / 256 * 256 : M;
    const long long grid_cols = shuffle ? (cols + 7) / 8 * 8 : cols;
    hipLaunchKernelGGL(a4w4g_quantize_kernel, dim3(a4w4g_grid(grid_rows * grid_cols)),
                       dim3(A4W4G_THREADS), 0, stream, x, dtype, M, K, mode, shuffle, row_fill,
                       col_fill, x_fp4, x_scale, grid_rows, grid_cols);
    return hipGetLastError();
}
