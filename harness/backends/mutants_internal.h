/* mutants_internal.h — what the mutants' files share: the GEMM pieces both bases are built
 * from (contracts §1, §3 maps, ordered(1)'s block values), and the mutants of bytes
 * (layout transforms and quantizers, contracts §2, §3) that mutants_bytes.c defines for
 * mutants.c's table. Header-only helpers (static inline). */
#ifndef A4W4_MUTANTS_INTERNAL_H
#define A4W4_MUTANTS_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "a4w4_formats.h"
#include "a4w4_layout.h"
#include "backend.h"
#include "gen.h"

/* ---- shared GEMM pieces ------------------------------------------------------------------ */

/* Twice the E2M1 value of each code (contracts §1), signed. */
static const int8_t twice[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

#define NAN_BF16 0x7FC0u
#define M_TILE 32 /* rows of one M tile (the smallest tile_M of AITER's gfx950 table) */

static inline size_t nblk(const a4w4_case_data *d) { return d->K / 32; }

static inline int has_asm_layouts(const a4w4_run_args *a)
{
    const a4w4_case_data *d = a->d;
    if (d->w_fp4_shuffled.data && d->w_scale_swizzled.data && d->a_scale_shuffled.data)
        return 1;
    snprintf(a->why, a->whylen,
             "ASM layouts need N %% 16 == 0, K %% 64 == 0 (preshuffle) and N %% 32 == 0, "
             "(K/32) %% 8 == 0 (scale swizzle); N=%zu K=%zu", d->N, d->K);
    return 0;
}

/* Activation / weight scale of (row, block) as each base reads it. Shuffled reads accept
 * pad rows (row < a4w4_act_scale_padded_rows(M)) and pad columns. */
static inline unsigned a_sc(const a4w4_case_data *d, int asm_, size_t r, size_t b)
{
    return asm_ ? d->a_scale_shuffled.data[a4w4_act_scale_shuffle_index(d->M, nblk(d), r, b)]
                : d->a_scale.data[r * nblk(d) + b];
}

static inline unsigned w_sc(const a4w4_case_data *d, int asm_, size_t n, size_t b)
{
    return asm_ ? d->w_scale_swizzled.data[a4w4_scale_swizzle_index(d->N, nblk(d), n, b)]
                : d->w_scale.data[n * nblk(d) + b];
}

/* Exact integer dot of block b (in units of the two scales' quantum, times 4). */
static inline int block_isum(const a4w4_case_data *d, int asm_, size_t am, size_t n, size_t b)
{
    const uint8_t *ar = d->a_fp4.data + am * (d->K / 2);
    int isum = 0;
    for (size_t kb = b * 16; kb < b * 16 + 16; kb++) {
        uint8_t av = ar[kb];
        uint8_t wv = asm_ ? d->w_fp4_shuffled.data[a4w4_preshuffle_index(d->N, d->K, n, kb)]
                          : d->w_fp4.data[n * (d->K / 2) + kb];
        isum += twice[av & 15] * twice[wv & 15] + twice[av >> 4] * twice[wv >> 4];
    }
    return isum;
}

/* One block's fp32 value isum * 2^(ea + eb - 2) with ea = sa - 127, eb = sb - 127 (isum
 * counts quarter units): a single rounding, as ordered(S) fixes it. */
static inline float block_f32(int isum, int ea, int eb)
{
    return ldexpf((float)isum, ea + eb - 2);
}

/* ordered(1) partial over blocks [b0, b1) of output (m, n), activation row am (normally m);
 * *nan set when a block has scale 0xFF on either side. */
static inline float dot_range(const a4w4_case_data *d, int asm_, size_t am, size_t n, size_t b0,
                       size_t b1, int *nan)
{
    float acc = 0.0f;
    for (size_t b = b0; b < b1; b++) {
        unsigned sa = a_sc(d, asm_, am, b), sb = w_sc(d, asm_, n, b);
        if (sa == 0xFF || sb == 0xFF)
            *nan = 1;
        acc += block_f32(block_isum(d, asm_, am, n, b), (int)sa - 127, (int)sb - 127);
    }
    return acc;
}

/* Output value (bf16 bits) of (m, n), or A4W4_POISON_BF16 to leave it unwritten. */
typedef uint16_t (*out_fn)(const a4w4_case_data *d, size_t m, size_t n, const void *aux);

static inline int each_output(const a4w4_run_args *a, out_fn f, const void *aux)
{
    const a4w4_sample *s = a->s;
    for (size_t i = 0; i < s->nrows; i++)
        for (size_t j = 0; j < s->ncols; j++) {
            size_t m = s->full ? i : s->rows[i], n = s->full ? j : s->cols[j];
            uint16_t v = f(a->d, m, n, aux);
            if (v != A4W4_POISON_BF16)
                a->y[i * s->ncols + j] = v;
        }
    return A4W4_OK;
}

static inline uint16_t finish(float acc, int nan) { return nan ? NAN_BF16 : a4w4_f32_to_bf16(acc); }

extern const a4w4_backend_type a4w4_mut_k1n1, a4w4_mut_d1d4, a4w4_mut_nibble, a4w4_mut_mode_ru, a4w4_mut_mode_rd, a4w4_mut_mode_ce, a4w4_mut_mode_ev, a4w4_mut_trunc, a4w4_mut_stride;

#endif
