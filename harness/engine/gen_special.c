/* gen_special.c — tiny-regime scales, NaN blocks and zero-sign rows (see gen_special.h). */
#include "gen_special.h"

#include <stdint.h>
#include <string.h>

/* Stream ids of this file's draws: apart from gen.c's (tensor ids 1..4 in bits 40 and up). */
#define STREAM_TINY_A (((uint64_t)0x71 << 40))
#define STREAM_TINY_W (((uint64_t)0x72 << 40))

void a4w4_tiny_shift(const a4w4_case *c, int w_side, size_t row, uint8_t *scale, size_t nb)
{
    a4w4_rng r;
    a4w4_rng_init(&r, c->seed, c->name, (w_side ? STREAM_TINY_W : STREAM_TINY_A) | row);
    unsigned span = A4W4_TINY_SHIFT_HI - A4W4_TINY_SHIFT_LO + 1;
    unsigned shift = A4W4_TINY_SHIFT_LO + (unsigned)(a4w4_rng_next(&r) % span);
    for (size_t b = 0; b < nb; b++)
        scale[b] = (uint8_t)(scale[b] > shift ? scale[b] - shift : 1);
}

void a4w4_nan_blocks(const a4w4_case *c, a4w4_case_data *d, const uint8_t *need_a,
                     const uint8_t *need_w, size_t a_row, size_t w_row)
{
    size_t nb = c->K / 32;
    d->nan_a_row = c->M > a_row ? a_row : c->M - 1;
    d->nan_w_row = c->N > w_row ? w_row : c->N - 1;
    if (need_a[d->nan_a_row])
        d->a_scale.data[d->nan_a_row * nb + nb / 2] = 0xFF;
    else
        d->nan_a_row = SIZE_MAX;
    if (need_w[d->nan_w_row])
        d->w_scale.data[d->nan_w_row * nb + (nb - 1) / 3] = 0xFF;
    else
        d->nan_w_row = SIZE_MAX;
}

void a4w4_zero_sign_rows(const a4w4_case *c, a4w4_case_data *d, const uint8_t *need_a,
                         const uint8_t *need_w)
{
    size_t K2 = c->K / 2, M = c->M, N = c->N;
    if (M >= 2 && need_a[M - 1] && d->nan_a_row != M - 1)
        memset(d->a_fp4.data + (M - 1) * K2, 0x88, K2); /* every element -0 */
    if (M >= 3 && need_a[M - 2] && d->nan_a_row != M - 2)
        memset(d->a_fp4.data + (M - 2) * K2, 0x80, K2); /* +0, -0 alternating */
    if (need_w[0] && d->nan_w_row != 0)
        for (size_t i = 0; i < K2; i++)
            d->w_fp4.data[i] &= 0x77; /* every value >= +0 */
    if (N >= 2 && need_w[N - 1] && d->nan_w_row != N - 1)
        memset(d->w_fp4.data + (N - 1) * K2, 0x88, K2);
}
