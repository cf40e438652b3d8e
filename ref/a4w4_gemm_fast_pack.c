/* a4w4_gemm_fast_pack.c — operand scans, X-row decode and Y-panel packing shared by every
 * path of the fast oracles (layouts in a4w4_gemm_fast_kernels.h; contracts §1, §4). */
#include <string.h>

#include "a4w4_gemm_fast_kernels.h"

/* Twice the E2M1 value of each code (contracts §1: codes 8..15 are the negatives, 8 is -0);
 * the same integers as a4w4_e2m1_to_int2x. */
static const int8_t e2m1_2x[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/* 1 when one of the block's 32 elements is nonzero (±0 is code 0 or 8). */
static int block_nonzero(const uint8_t *fp4)
{
    uint64_t u0, u1;
    memcpy(&u0, fp4, 8);
    memcpy(&u1, fp4 + 8, 8);
    return ((u0 | u1) & 0x7777777777777777ull) != 0;
}

unsigned a4w4_fast_scan_row(const uint8_t *fp4, const uint8_t *scale, size_t nb, uint8_t *code,
                            int32_t *lo, int32_t *hi)
{
    unsigned flags = 0;
    int32_t l = 255, h = 0;
    for (size_t b = 0; b < nb; b++) { /* 0xFF marks all-zero and NaN blocks for now */
        uint8_t s = scale[b];
        code[b] = 0xFF;
        if (s == 0xFF) {
            flags |= 2u;
        } else if (block_nonzero(fp4 + b * 16)) {
            flags |= 1u;
            code[b] = s;
            l = s < l ? s : l;
            h = s > h ? s : h;
        }
    }
    if (!(flags & 1u))
        l = h = 0;
    for (size_t b = 0; b < nb; b++)
        if (code[b] == 0xFF)
            code[b] = (uint8_t)l;
    *lo = l;
    *hi = h;
    return flags;
}

unsigned a4w4_fast_load_x_portable(const uint8_t *fp4, const uint8_t *scale, size_t K, uint8_t *out,
                                   uint8_t *code, int32_t *lo, int32_t *hi)
{
    for (size_t i = 0; i < K / 2; i++) {
        out[2 * i] = (uint8_t)(e2m1_2x[fp4[i] & 15] + A4W4_FAST_X_OFFSET);
        out[2 * i + 1] = (uint8_t)(e2m1_2x[fp4[i] >> 4] + A4W4_FAST_X_OFFSET);
    }
    return a4w4_fast_scan_row(fp4, scale, K / 32, code, lo, hi);
}

/* One lane of one block record: 32 decoded elements at y[(ks*16 + lane)*4 + t], returns the
 * offset correction -12 * sum. */
static int32_t pack_lane_block(const uint8_t *fp4, int8_t *y, unsigned lane)
{
    int32_t sum = 0;
    for (unsigned ks = 0; ks < 8; ks++)
        for (unsigned t = 0; t < 4; t += 2) {
            uint8_t byte = fp4[ks * 2 + t / 2];
            int8_t v0 = e2m1_2x[byte & 15], v1 = e2m1_2x[byte >> 4];
            y[(ks * 16 + lane) * 4 + t] = v0;
            y[(ks * 16 + lane) * 4 + t + 1] = v1;
            sum += v0 + v1;
        }
    return -A4W4_FAST_X_OFFSET * sum;
}

uint32_t a4w4_fast_pack_panel(const uint8_t *fp4, const uint8_t *scale, size_t K, size_t nrows,
                              uint8_t *panel, uint8_t *codes, int32_t *lane_lo, int32_t *spread)
{
    size_t nb = K / 32;
    uint32_t mask = 0;
    int32_t plo = 255;
    *spread = 0;
    memset(panel, 0, nb * A4W4_FAST_BLOCK_BYTES);
    for (size_t l = 0; l < nrows; l++) {
        int32_t rlo, rhi;
        unsigned f = a4w4_fast_scan_row(fp4 + l * (K / 2), scale + l * nb, nb, codes, &rlo, &rhi);
        mask |= (f & 1u) << l | (f & 2u) << (15 + l);
        lane_lo[l] = rlo;
        plo = (f & 1u) && rlo < plo ? rlo : plo;
        *spread = (f & 1u) && rhi - rlo > *spread ? rhi - rlo : *spread;
        for (size_t b = 0; b < nb; b++) {
            uint8_t *rec = panel + b * A4W4_FAST_BLOCK_BYTES;
            int32_t nc = pack_lane_block(fp4 + l * (K / 2) + b * 16, (int8_t *)rec, (unsigned)l);
            int32_t ey = codes[b];
            memcpy(rec + A4W4_FAST_NCORR_OFF + l * sizeof nc, &nc, sizeof nc);
            memcpy(rec + A4W4_FAST_EY_OFF + l * sizeof ey, &ey, sizeof ey);
        }
    }
    plo = mask & 0xFFFFu ? plo : 0;
    for (size_t l = 0; l < A4W4_FAST_NR; l++) /* all-zero and missing lanes */
        if (l >= nrows || !(mask & (1u << l))) {
            lane_lo[l] = plo;
            for (size_t b = 0; b < nb; b++)
                memcpy(panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF + l * 4, &plo, 4);
        }
    return mask;
}
