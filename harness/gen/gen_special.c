/* gen_special.c — tiny-regime scales (see gen_special.h). */
#include "gen_special.h"

#include <stdint.h>

#include "rng.h"

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
