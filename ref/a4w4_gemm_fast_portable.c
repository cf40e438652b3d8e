/* a4w4_gemm_fast_portable.c — the portable C path of the fast oracles (kernel contracts in
 * a4w4_gemm_fast_kernels.h; contracts §4.1). Plain loops the compiler may vectorize for the
 * baseline ISA; the reference for the SIMD paths' loop structure. */
#include <string.h>

#include "a4w4_gemm_fast_kernels.h"

#define MR 4
#define NR A4W4_FAST_NR

static void load_i32x16(const uint8_t *p, int32_t v[NR])
{
    memcpy(v, p, NR * sizeof v[0]);
}

/* Exact dots of block b for the tile's MR x NR outputs. */
static void block_dots(const a4w4_fast_tile *t, size_t b, int32_t d[MR][NR])
{
    const uint8_t *rec = t->panel + b * A4W4_FAST_BLOCK_BYTES;
    const int8_t *y = (const int8_t *)rec;
    int32_t nc[NR];
    load_i32x16(rec + A4W4_FAST_NCORR_OFF, nc);
    for (int r = 0; r < MR; r++) {
        const uint8_t *x = t->x + r * t->ldx + b * 32;
        for (int l = 0; l < NR; l++)
            d[r][l] = nc[l];
        for (int ks = 0; ks < 8; ks++)
            for (int l = 0; l < NR; l++) {
                const int8_t *yl = y + (ks * NR + l) * 4;
                const uint8_t *xk = x + ks * 4;
                d[r][l] += xk[0] * yl[0] + xk[1] * yl[1] + xk[2] * yl[2] + xk[3] * yl[3];
            }
    }
}

static void flush_window(int32_t w[MR][NR], int64_t *acc)
{
    for (int r = 0; r < MR; r++)
        for (int l = 0; l < NR; l++) {
            acc[r * NR + l] += w[r][l];
            w[r][l] = 0;
        }
}

static void exact_window(const a4w4_fast_tile *t, const int32_t *xoff, const int32_t *yoff,
                         size_t group, int64_t *acc)
{
    int32_t w[MR][NR], d[MR][NR], ey[NR];
    memset(w, 0, sizeof w);
    memset(acc, 0, MR * NR * sizeof *acc);
    size_t left = group;
    for (size_t b = 0; b < t->nb; b++) {
        block_dots(t, b, d);
        load_i32x16(t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF, ey);
        for (int r = 0; r < MR; r++) {
            int32_t er = t->ex[r * t->lde + b] + xoff[r];
            for (int l = 0; l < NR; l++) { /* shift in [0, 18] where d != 0 */
                int32_t sh = er + ey[l] + yoff[l];
                w[r][l] += d[r][l] * ((int32_t)1 << (sh < 0 ? 0 : sh > 18 ? 18 : sh));
            }
        }
        if (--left == 0) {
            flush_window(w, acc);
            left = group;
        }
    }
    flush_window(w, acc);
}

static void exact_general(const a4w4_fast_tile *t, int64_t *limbs)
{
    int32_t d[MR][NR], ey[NR];
    memset(limbs, 0, MR * A4W4_FAST_LIMBS * NR * sizeof *limbs);
    for (size_t b = 0; b < t->nb; b++) {
        block_dots(t, b, d);
        load_i32x16(t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF, ey);
        for (int r = 0; r < MR; r++) {
            int32_t er = t->ex[r * t->lde + b];
            int64_t *L = limbs + r * A4W4_FAST_LIMBS * NR;
            for (int l = 0; l < NR; l++) {
                int32_t e = er + ey[l];
                if (d[r][l])
                    L[(e >> 5) * NR + l] += (int64_t)d[r][l] * ((int64_t)1 << (e & 31));
            }
        }
    }
}

/* 2^e as a double, -1022 <= e <= 1023. */
static double pow2d(int e)
{
    uint64_t bits = (uint64_t)(e + 1023) << 52;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static void ordered(const a4w4_fast_tile *t, size_t per_blocks, float *total)
{
    int32_t d[MR][NR], ey[NR];
    float part[MR][NR];
    for (int i = 0; i < MR * NR; i++)
        total[i] = 0.0f;
    for (size_t b0 = 0; b0 < t->nb; b0 += per_blocks) {
        size_t b1 = b0 + per_blocks < t->nb ? b0 + per_blocks : t->nb;
        for (int r = 0; r < MR; r++)
            for (int l = 0; l < NR; l++)
                part[r][l] = 0.0f;
        for (size_t b = b0; b < b1; b++) {
            block_dots(t, b, d);
            load_i32x16(t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF, ey);
            for (int r = 0; r < MR; r++) {
                int32_t er = t->ex[r * t->lde + b] - 256;
                for (int l = 0; l < NR; l++) /* the double is exact; one rounding to fp32 */
                    part[r][l] += (float)((double)d[r][l] * pow2d(er + ey[l]));
            }
        }
        for (int r = 0; r < MR; r++)
            for (int l = 0; l < NR; l++)
                total[r * NR + l] += part[r][l];
    }
}

static void blocks(const a4w4_fast_tile *t, size_t b0, size_t b1, float *v)
{
    int32_t d[MR][NR], ey[NR];
    for (size_t b = b0; b < b1; b++) {
        block_dots(t, b, d);
        load_i32x16(t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF, ey);
        float *out = v + (b - b0) * MR * NR;
        for (int r = 0; r < MR; r++) {
            int32_t er = t->ex[r * t->lde + b] - 256;
            for (int l = 0; l < NR; l++) /* the double is exact; one rounding to fp32 */
                out[r * NR + l] = (float)((double)d[r][l] * pow2d(er + ey[l]));
        }
    }
}

static void round_window(const int64_t *acc, const int32_t *xe, const int32_t *ye, uint16_t *bf16,
                         float *f32)
{
    a4w4_fast_round_window_tile(MR, acc, xe, ye, bf16, f32);
}

static void round_general(const int64_t *limbs, uint16_t *bf16, float *f32)
{
    a4w4_fast_round_general_tile(MR, limbs, bf16, f32);
}

static const a4w4_fast_kernels table = {
    .name = "portable",
    .mr = MR,
    .x_zero = A4W4_FAST_X_OFFSET,
    .load_x = a4w4_fast_load_x_portable,
    .exact_window = exact_window,
    .exact_general = exact_general,
    .ordered = ordered,
    .blocks = blocks,
    .round_window = round_window,
    .round_general = round_general,
};

const a4w4_fast_kernels *a4w4_fast_kernels_portable(void)
{
    return &table;
}
