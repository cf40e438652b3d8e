/* a4w4_judge_wgen.hip — the kernel of a4w4j_gen_w: W of a generated case on the device, one
 * 32-block (16 code bytes, one scale) per thread through a4w4_judge_wgen.h, the per-block
 * arithmetic the CPU stand-in runs too (docs/gpu.md, "W made on the device"). A block's bytes
 * are a function of (case, row, block) alone: the grid's shape never changes a byte. */
#include <string.h>

#include "a4w4_judge_wgen.h"

#define WT 256 /* threads per launch block */

__global__ void j_gen_w(a4w4j_wgen_plan p, uint8_t *w, uint8_t *ws, uint8_t *wsw)
{
    const long long nb = p.K / 32, blocks = p.N * nb;
    for (long long i = (long long)blockIdx.x * WT + threadIdx.x; i < blocks;
         i += (long long)gridDim.x * WT) {
        const long long n = i / nb, b = i % nb;
        uint8_t codes[16], sc;
        a4w4j_wgen_block(&p, n, b, codes, &sc);
        uint4 run;
        memcpy(&run, codes, 16);
        *(uint4 *)(w + i * 16) = run; /* row n's bytes b*16.. : offset n*K/2 + b*16 = i*16 */
        ws[i] = sc;
        if (wsw)
            wsw[a4w4j_swizzle_at(nb, n, b)] = sc;
    }
}

hipError_t a4w4j_launch_gen_w(const a4w4j_wgen_plan *p, uint8_t *w, uint8_t *ws, uint8_t *wsw)
{
    const long long blocks = p->N * (p->K / 32), g = (blocks + WT - 1) / WT;
    const unsigned grid = (unsigned)(g < 1 ? 1 : g > 65535 * 16 ? 65535 * 16 : g);
    hipLaunchKernelGGL(j_gen_w, dim3(grid), dim3(WT), 0, 0, *p, w, ws, wsw);
    return hipGetLastError();
}
