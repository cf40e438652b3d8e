/* test_quant_fast.c — contracts §2: a4w4_quantize_bf16_fast writes the bytes of the plain
 * a4w4_quantize (bf16 input, row-major scales) exhaustively where the input space allows:
 * in every scale mode, every (bf16 value, scale code) pair the mode can produce (each code's
 * largest and smallest amax heading blocks of every value at or below it), every bf16
 * magnitude as a block's amax, NaN/Inf/-0/zero/subnormal blocks, several rows, and its
 * argument errors. The comparison names the first differing byte; a planted one-bit change
 * is caught. */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_quant.h"
#include "test_util.h"



/* Quantize x [M, K] both ways; 0 when every fp4 byte and scale byte agrees, else 1 with the
 * first difference in msg. plant >= 0 flips bit (plant % 8) of fast fp4 byte plant / 8. */
static int compare_paths(const uint16_t *x, size_t M, size_t K, a4w4_scale_mode mode,
                         long plant, char *msg, size_t msglen)
{
    size_t nf = M * K / 2, ns = M * K / 32;
    uint8_t *pf = tu_xmalloc(nf), *ps = tu_xmalloc(ns), *ff = tu_xmalloc(nf), *fs = tu_xmalloc(ns);
    memset(ff, 0xA5, nf);
    memset(fs, 0xA5, ns);
    cr_assert_eq(a4w4_quantize(x, A4W4_IN_BF16, M, K, mode, 0, pf, ps), A4W4_OK);
    cr_assert_eq(a4w4_quantize_bf16_fast(x, M, K, mode, ff, fs), A4W4_OK);
    if (plant >= 0 && (size_t)plant / 8 < nf)
        ff[plant / 8] ^= (uint8_t)(1u << (plant % 8));
    size_t df = tu_first_diff(pf, ff, nf), ds = tu_first_diff(ps, fs, ns);
    int bad = df < nf || ds < ns;
    if (df < nf)
        snprintf(msg, msglen, "%s: fp4 byte %zu (x %04x %04x): plain %02x fast %02x",
                 a4w4_scale_mode_name(mode), df, x[2 * df], x[2 * df + 1], pf[df], ff[df]);
    else if (ds < ns)
        snprintf(msg, msglen, "%s: scale %zu: plain %02x fast %02x", a4w4_scale_mode_name(mode),
                 ds, ps[ds], fs[ds]);
    free(pf);
    free(ps);
    free(ff);
    free(fs);
    return bad;
}

static void expect_equal(const uint16_t *x, size_t M, size_t K, a4w4_scale_mode mode)
{
    char msg[160] = "";
    cr_assert_eq(compare_paths(x, M, K, mode, -1, msg, sizeof msg), 0, "%s", msg);
}

static float bf16f(unsigned h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Blocks headed by amax bits `head` (sign alternating by block), each followed by 31 of the
 * n values v[]; the last block padded with zeros. Returns the element count (a multiple of
 * 32); x must hold 32 * (n / 31 + 1). */
static size_t headed_blocks(uint16_t *x, uint16_t head, const uint16_t *v, size_t n)
{
    size_t e = 0;
    for (size_t i = 0, b = 0; i < n; b++) {
        x[e++] = (uint16_t)(head | ((b & 1) << 15));
        for (int k = 0; k < 31; k++)
            x[e++] = i < n ? v[i++] : 0;
    }
    return e;
}

/* Every (value, scale code) pair of each mode: for each code s the mode yields from a finite
 * bf16 amax, blocks headed by the largest and by the smallest such amax, filled with every
 * bf16 value (both signs, subnormals, ±0) whose magnitude is at most the head's. */
Test(quant_fast, every_value_under_every_scale_code)
{
    uint16_t *v = tu_xmalloc(65536 * sizeof *v), *x = tu_xmalloc(32 * (65536 / 31 + 2) * sizeof *x);
    for (int mode = 0; mode < A4W4_SCALE_MODE_COUNT; mode++) {
        int lo[256], hi[256];
        for (int s = 0; s < 256; s++)
            lo[s] = hi[s] = -1;
        for (unsigned a = 0; a < 0x7F80u; a++) { /* finite magnitudes, ascending */
            uint8_t s = a4w4_scale_code(bf16f(a), (a4w4_scale_mode)mode);
            if (lo[s] < 0)
                lo[s] = (int)a;
            hi[s] = (int)a;
        }
        int codes = 0;
        for (int s = 0; s < 256; s++) {
            for (int which = 0; which < 2 && lo[s] >= 0; which++) {
                unsigned head = (unsigned)(which ? lo[s] : hi[s]);
                size_t n = 0;
                for (unsigned h = 0; h < 65536; h++)
                    if ((h & 0x7FFFu) <= head)
                        v[n++] = (uint16_t)h;
                size_t e = headed_blocks(x, (uint16_t)head, v, n);
                expect_equal(x, 1, e, (a4w4_scale_mode)mode);
            }
            codes += lo[s] >= 0;
        }
        cr_assert_gt(codes, 250, "%s: only %d scale codes reached", a4w4_scale_mode_name(mode),
                     codes);
    }
    free(v);
    free(x);
}

/* Every finite bf16 magnitude as a block's amax (both signs), the other 31 values spread
 * below it; blocks laid as rows of K = 4096 to exercise M > 1. */
Test(quant_fast, every_magnitude_as_amax)
{
    size_t nblk = 0x7F80u, K = 4096, per = K / 32, M = (nblk + per - 1) / per;
    uint16_t *x = calloc(M * K, sizeof *x);
    cr_assert_not_null(x);
    uint64_t r = 0x243F6A8885A308D3ull;
    for (size_t a = 0; a < nblk; a++) {
        uint16_t *blk = x + a * 32;
        blk[a % 32] = (uint16_t)(a | ((a & 2) << 14));
        for (int k = 0; k < 32; k++) {
            if ((size_t)k == a % 32)
                continue;
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            uint16_t m = (uint16_t)((r >> 33) % (a + 1)); /* magnitude <= amax */
            blk[k] = (uint16_t)(m | ((r >> 20) & 0x8000u));
        }
    }
    for (int mode = 0; mode < A4W4_SCALE_MODE_COUNT; mode++)
        expect_equal(x, M, K, (a4w4_scale_mode)mode);
    free(x);
}

/* Blocks with NaN (several payloads, both signs) or ±Inf at each position, beside finite,
 * subnormal and ±0 values; all-zero, all -0 and subnormal-only blocks. */
Test(quant_fast, special_blocks)
{
    static const uint16_t specials[] = {0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0xFFFF, 0x7FFF};
    static const uint16_t fill[] = {0x3F80, 0x0001, 0x8000, 0x0000, 0x7F7F, 0xC0C0, 0x807F};
    size_t ns = sizeof specials / sizeof *specials, nblk = ns * 32 + 4;
    uint16_t *x = calloc(nblk * 32, sizeof *x);
    cr_assert_not_null(x);
    for (size_t i = 0; i < ns; i++)
        for (int p = 0; p < 32; p++) {
            uint16_t *blk = x + (i * 32 + (size_t)p) * 32;
            for (int k = 0; k < 32; k++)
                blk[k] = fill[(size_t)(k + p) % 7];
            blk[p] = specials[i];
        }
    uint16_t *tail = x + ns * 32 * 32;
    for (int k = 0; k < 32; k++) {
        tail[k] = 0x0000;                          /* all +0 */
        tail[32 + k] = 0x8000;                     /* all -0 */
        tail[64 + k] = (uint16_t)(k | (k << 10 & 0x8000)); /* subnormals and ±0 only */
        tail[96 + k] = (uint16_t)(0x8000 | (k * 3)); /* negative subnormals */
    }
    for (int mode = 0; mode < A4W4_SCALE_MODE_COUNT; mode++)
        expect_equal(x, 1, nblk * 32, (a4w4_scale_mode)mode);
    free(x);
}

/* The comparison can fail: one bit flipped in the fast path's output, at several places, is
 * reported (a check that passed whatever the bytes would hold nothing). */
Test(quant_fast, planted_bit_is_caught)
{
    uint16_t x[256];
    for (int k = 0; k < 256; k++)
        x[k] = (uint16_t)(0x3C00 + k * 37);
    char msg[160];
    for (long bit = 0; bit < 128 * 8; bit += 97) {
        msg[0] = 0;
        cr_assert_eq(compare_paths(x, 2, 128, A4W4_ROUND_UP, bit, msg, sizeof msg), 1,
                     "bit %ld flipped and not seen", bit);
        cr_assert_neq(msg[0], 0);
    }
}

Test(quant_fast, argument_errors)
{
    uint16_t x[64] = {0};
    uint8_t f[32], s[2];
    cr_assert_eq(a4w4_quantize_bf16_fast(NULL, 1, 32, A4W4_ROUND_UP, f, s), A4W4_EINVAL);
    cr_assert_eq(a4w4_quantize_bf16_fast(x, 0, 32, A4W4_ROUND_UP, f, s), A4W4_EINVAL);
    cr_assert_eq(a4w4_quantize_bf16_fast(x, 1, 48, A4W4_ROUND_UP, f, s), A4W4_EINVAL);
    cr_assert_eq(a4w4_quantize_bf16_fast(x, 1, 0, A4W4_ROUND_UP, f, s), A4W4_EINVAL);
    cr_assert_eq(a4w4_quantize_bf16_fast(x, 1, 32, (a4w4_scale_mode)4, f, s), A4W4_EINVAL);
    cr_assert_eq(a4w4_quantize_bf16_fast(x, 1, 32, A4W4_EVEN, NULL, s), A4W4_EINVAL);
    cr_assert_eq(a4w4_quantize_bf16_fast(x, 1, 32, A4W4_EVEN, f, NULL), A4W4_EINVAL);
}
