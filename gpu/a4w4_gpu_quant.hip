/* a4w4_gpu_quant.hip — per-1x32 MXFP4 quantizer, per_1x32_f4_quant (contracts §2), with the
 * optional shuffled-scale output of contracts §3.3 (pad rows row_fill, pad columns col_fill).
 *
 * One thread per 32-element block. In shuffle mode the grid covers the whole padded scale
 * tensor, so every pad byte is written too (a pad entry in column c >= K/32 gets col_fill in
 * any row; an entry in a row r >= M and a valid column gets row_fill).
 *
 * Test-only faults (a4w4_gpu_set_fault, passed as the last kernel argument): NIBBLE_SWAP,
 * MODE_* (the next scale mode), E2M1_TRUNC, and SWIZZLE_D1D4 on the shuffled scale output. */
#include "a4w4_gpu.h"
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
                                      long long grid_cols, int fault)
{
    const long long cols = K / 32;
    /* test-only faults (a4w4_gpu.h), uniform over the grid */
    if (fault == A4W4_GPU_FAULT_MODE_ROUND_UP + mode) /* asked for `mode`, uses the next one */
        mode = (mode + 1) & 3;
    const int nibble_swap = fault == A4W4_GPU_FAULT_NIBBLE_SWAP;
    const int trunc = fault == A4W4_GPU_FAULT_E2M1_TRUNC;
    const int d1d4 = fault == A4W4_GPU_FAULT_SWIZZLE_D1D4;
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
            s = a4w4d_quant_block_x(bits, mode, x_fp4 + r * (K / 2) + c * 16, nibble_swap,
                                    trunc);
        } else {
            s = c >= cols ? col_fill : row_fill;
        }
        if (shuffle)
            x_scale[d1d4 ? a4w4d_swizzle_index_d1d4(grid_cols, r, c)
                         : a4w4d_swizzle_index(grid_cols, r, c)] = (unsigned char)s;
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
                       col_fill, x_fp4, x_scale, grid_rows, grid_cols, a4w4g_fault());
    return hipGetLastError();
}
