/* mutants.c — the CPU mutants of `a4w4check selftest` (mutants.h).
 *
 * Each mutant is a plausible implementation with exactly one fault, written the way the fault
 * would arise in a real kernel, quantizer or layout transform. Faults that only show on some
 * data (a pad that must hold a particular value, a K tail, a small-N shape) stay silent
 * elsewhere, as real ones do: the harness has to find the case and the check that expose them.
 * The mutants reuse ref's building blocks (decode tables, index maps, scale codes) apart from
 * the injected fault, so that nothing else can be what kills them.
 *
 * Two GEMM bases, as the two CPU systems under test (cpu_sut.c):
 *   ASM base       reads w_fp4_shuffled (contracts §3.1), w_scale_swizzled (§3.2) and
 *                  a_scale_shuffled (§3.3) through the layout maps; the runner runs its
 *                  pad-dependence variants (asm_layout = 1). n/a where the layouts do not exist.
 *   row-major base reads a_fp4, a_scale, w_fp4, w_scale row-major (Triton's role).
 * Both keep ordered(1) (contracts §4.1) except where the fault is the accumulation. */
#include "mutants.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"
#include "cpu_sut.h"
#include "gen.h"
#ifdef A4W4_HAVE_GPU
#include "backend_hip.h"
#endif

/* ---- shared GEMM pieces ------------------------------------------------------------------ */

/* Twice the E2M1 value of each code (contracts §1), signed. */
static const int8_t twice[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

#define NAN_BF16 0x7FC0u
#define M_TILE 32 /* rows of one M tile (the smallest tile_M of AITER's gfx950 table) */

static size_t nblk(const a4w4_case_data *d) { return d->K / 32; }

static int has_asm_layouts(const a4w4_run_args *a)
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
static unsigned a_sc(const a4w4_case_data *d, int asm_, size_t r, size_t b)
{
    return asm_ ? d->a_scale_shuffled.data[a4w4_act_scale_shuffle_index(d->M, nblk(d), r, b)]
                : d->a_scale.data[r * nblk(d) + b];
}

static unsigned w_sc(const a4w4_case_data *d, int asm_, size_t n, size_t b)
{
    return asm_ ? d->w_scale_swizzled.data[a4w4_scale_swizzle_index(d->N, nblk(d), n, b)]
                : d->w_scale.data[n * nblk(d) + b];
}

/* Exact integer dot of block b (in units of the two scales' quantum, times 4). */
static int block_isum(const a4w4_case_data *d, int asm_, size_t am, size_t n, size_t b)
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
static float block_f32(int isum, int ea, int eb)
{
    return ldexpf((float)isum, ea + eb - 2);
}

/* ordered(1) partial over blocks [b0, b1) of output (m, n), activation row am (normally m);
 * *nan set when a block has scale 0xFF on either side. */
static float dot_range(const a4w4_case_data *d, int asm_, size_t am, size_t n, size_t b0,
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

static int each_output(const a4w4_run_args *a, out_fn f, const void *aux)
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

static uint16_t finish(float acc, int nan) { return nan ? NAN_BF16 : a4w4_f32_to_bf16(acc); }

/* ---- activation-scale pad filled 0xFF ---------------------------------------------------------
 * ASM base. The kernel loads, per K block, the scale vector of its whole 32-row M tile and
 * takes the NaN path for the tile when any byte of the vector is 0xFF (one vector compare
 * instead of a per-row test). The pad rows r >= M of a partial tile are in that vector. With
 * SGLang's 0x7F pad (or Primus-Turbo's 0x00) nothing shows; with a 0xFF pad — AITER's torch
 * shuffle_scale allocates the pad with torch.empty, and a quantizer that fills its own pad
 * with 0xFF does the same — every valid output of the partial tile turns NaN. Caught by the
 * runner's "row pad 0xFF" variant on any case with M % 32 != 0. */
typedef struct {
    unsigned char *flag; /* per M tile (pad_ff) or per (M tile, K block) (pad_00) */
    size_t pcol;
} tile_aux;

static uint16_t out_pad_ff(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    const tile_aux *t = aux;
    int nan = t->flag[m / M_TILE];
    float acc = dot_range(d, 1, m, n, 0, nblk(d), &nan);
    return finish(acc, nan);
}

static int run_pad_ff(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    if (!has_asm_layouts(a))
        return A4W4_EUNSUPPORTED;
    const a4w4_case_data *d = a->d;
    size_t tiles = (d->M + M_TILE - 1) / M_TILE, pcol = a4w4_act_scale_padded_cols(nblk(d));
    tile_aux t = {calloc(tiles, 1), pcol};
    if (!t.flag)
        return A4W4_ENOMEM;
    for (size_t tile = 0; tile < tiles; tile++)
        for (size_t r = tile * M_TILE; r < (tile + 1) * M_TILE; r++) /* pad rows included */
            for (size_t b = 0; b < pcol; b++)
                t.flag[tile] |= a_sc(d, 1, r, b) == 0xFF;
    int rc = each_output(a, out_pad_ff, &t);
    free(t.flag);
    return rc;
}

/* ---- activation-scale pad filled 0x00 ---------------------------------------------------------
 * ASM base. A zero-block fast path: amax = 0 gives scale code 0 (contracts §2), and the kernel
 * skips a K block for its 32-row M tile when the tile's scale vector says the block is empty —
 * but it tests the vector's minimum instead of its maximum (one row with code 0 is taken for
 * "every row is empty"). On real activations code 0 never occurs in valid rows, so it passes
 * with SGLang's 0x7F pad; once the pad is 0x00 (Primus-Turbo pads with 0x00) the pad rows of a
 * partial tile make it drop every K block of the tile's valid rows. Caught by the runner's
 * "row pad 0x00" variant on any case with M % 32 != 0. */
static uint16_t out_pad_00(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    const tile_aux *t = aux;
    const unsigned char *skip = t->flag + (m / M_TILE) * t->pcol;
    float acc = 0.0f;
    int nan = 0;
    for (size_t b = 0; b < nblk(d); b++)
        if (!skip[b])
            acc += dot_range(d, 1, m, n, b, b + 1, &nan);
    return finish(acc, nan);
}

static int run_pad_00(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    if (!has_asm_layouts(a))
        return A4W4_EUNSUPPORTED;
    const a4w4_case_data *d = a->d;
    size_t tiles = (d->M + M_TILE - 1) / M_TILE, pcol = a4w4_act_scale_padded_cols(nblk(d));
    tile_aux t = {calloc(tiles * pcol, 1), pcol};
    if (!t.flag)
        return A4W4_ENOMEM;
    for (size_t tile = 0; tile < tiles; tile++)
        for (size_t b = 0; b < pcol; b++) {
            unsigned mn = 0xFF;
            for (size_t r = tile * M_TILE; r < (tile + 1) * M_TILE; r++) {
                unsigned s = a_sc(d, 1, r, b);
                mn = s < mn ? s : mn;
            }
            t.flag[tile * pcol + b] = mn == 0; /* meant: max == 0 */
        }
    int rc = each_output(a, out_pad_00, &t);
    free(t.flag);
    return rc;
}

/* ---- E8M0 code 0 read as 2^-126 ---------------------------------------------------------------
 * Row-major base. The scale decode builds the fp32 exponent field from the code and never
 * makes a subnormal, so code 0 becomes 2^-126 (one public host driver for the gfx950 code
 * objects documents exactly that, contracts §1); every other code is right. Caught on the code0
 * regime, where code 0 occurs in the operands. */
static uint16_t out_e8m0(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    float acc = 0.0f;
    int nan = 0;
    for (size_t b = 0; b < nblk(d); b++) {
        unsigned sa = a_sc(d, 0, m, b), sb = w_sc(d, 0, n, b);
        nan |= sa == 0xFF || sb == 0xFF;
        int ea = (sa ? (int)sa : 1) - 127, eb = (sb ? (int)sb : 1) - 127; /* the fault */
        acc += block_f32(block_isum(d, 0, m, n, b), ea, eb);
    }
    return finish(acc, nan);
}

static int run_e8m0(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    return each_output(a, out_e8m0, NULL);
}

/* ---- drops the last K block when K % 256 != 0 -------------------------------------------------
 * Row-major base. The K loop is unrolled by 8 blocks (256 elements) with a tail loop whose
 * bound is off by one: `for (b = nb8; b < nb - 1; b++)`. Right whenever K % 256 == 0 (no
 * tail), wrong by the last block otherwise. Caught by the plain comparison on K % 256 != 0. */
static uint16_t out_drop(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    size_t nb = nblk(d), nb8 = nb / 8 * 8;
    int nan = 0;
    float acc = dot_range(d, 0, m, n, 0, nb8, &nan);
    if (nb8 < nb)
        acc += dot_range(d, 0, m, n, nb8, nb - 1, &nan); /* the fault: nb - 1 */
    return finish(acc, nan);
}

static int run_drop(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    return each_output(a, out_drop, NULL);
}

/* ---- right in row 0, wrong in rows 1..M-1 when N <= 128 and 2 <= M <= 64 -----------------------
 * ASM base. The failure SGLang's N <= 128 fence exists for (contracts §6.3): here the small-N
 * configuration takes the activation row stride from a field only the large-N path sets, so
 * it is 0 and every row of the tile reads activation row 0 (codes and scales). Row 0 is right,
 * rows 1..M-1 repeat it. Caught by the plain comparison on a small-N case with 2 <= M <= 64. */
static uint16_t out_rows(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    int small = d->N <= 128 && d->M >= 2 && d->M <= 64;
    size_t am = small ? 0 : m; /* the fault: row stride 0 */
    int nan = 0;
    float acc = dot_range(d, 1, am, n, 0, nblk(d), &nan);
    return finish(acc, nan);
}

static int run_rows(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    if (!has_asm_layouts(a))
        return A4W4_EUNSUPPORTED;
    return each_output(a, out_rows, NULL);
}

/* ---- split-K adding its partials in bf16 while declaring ordered(2) ----------------------------
 * Row-major base, 2-way split-K over ordered(2)'s split ranges (a4w4_split_k_per_split). Each
 * split's fp32 total is rounded to bf16 and added into a bf16 output that starts at zero — what
 * AITER's bf16-atomic split-K does, which is only the bounded contract; this kernel declares
 * ordered(2) (fp32 totals added in split order, one rounding at the end). Caught by the
 * bit-exact ordered(2) comparison wherever a partial is not exact in bf16. */
/* AITER's bf16-atomic split-K on the row-major base: ordered(S)'s split ranges
 * (a4w4_split_k_per_split), each split's blocks below `end` summed in fp32 in ascending K (an
 * empty split adds +0), rounded to bf16 and added into a bf16 output that starts at +0. NaN
 * when a summed block reads a NaN scale. end = K/32: every block (the faithful kernel). */
static uint16_t splitk_bf16(const a4w4_case_data *d, size_t m, size_t n, unsigned splits,
                            size_t end)
{
    size_t nb = nblk(d), per = a4w4_split_k_per_split(d->K, splits) / 32;
    uint16_t y = 0x0000; /* +0.0 */
    int nan = 0;
    for (size_t b0 = 0; b0 < nb; b0 += per) {
        size_t b1 = b0 + per < end ? b0 + per : end;
        float part = b0 < b1 ? dot_range(d, 0, m, n, b0, b1, &nan) : 0.0f;
        y = a4w4_f32_to_bf16(a4w4_bf16_to_f32(y) + a4w4_bf16_to_f32(a4w4_f32_to_bf16(part)));
    }
    return nan ? NAN_BF16 : y;
}

static uint16_t out_splitk(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    return splitk_bf16(d, m, n, 2, nblk(d));
}

static int run_splitk(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    return each_output(a, out_splitk, NULL);
}

/* ---- leaves the last partial tile unwritten ----------------------------------------------------
 * ASM base with 32-row M tiles. The launch grid counts M tiles as M / 32 (floor) instead of
 * ceil(M / 32), so the rows of a partial last tile are never computed and the output keeps
 * whatever it held. Caught by the output poison (every output must be written) whenever
 * M % 32 != 0. */
static uint16_t out_tail(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    if (m >= d->M / M_TILE * M_TILE) /* the fault: floor(M / 32) tiles */
        return A4W4_POISON_BF16;
    int nan = 0;
    float acc = dot_range(d, 1, m, n, 0, nblk(d), &nan);
    return finish(acc, nan);
}

static int run_tail(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    if (!has_asm_layouts(a))
        return A4W4_EUNSUPPORTED;
    return each_output(a, out_tail, NULL);
}

/* ---- reads one row past the activation buffer --------------------------------------------------
 * Row-major base working on 2-row micro-tiles (rows 2i, 2i+1) without clamping the second row
 * to M, with the NaN flag kept per micro-tile. When M is odd the last micro-tile loads row M,
 * one row past the end of a_scale (and a_fp4). On a real GPU that row is whatever follows the
 * buffer; the harness puts a guard zone of 0xFF (the NaN scale) there, so the read turns row
 * M-1 into NaN and the plain comparison catches it. Without the guard the read would change
 * nothing visible. (Only the scales of the extra row are read here, and only within the
 * 4096-byte guard, so the mutant never reads outside the allocation.) */
static uint16_t out_past(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    size_t nb = nblk(d), partner = m ^ 1;
    int nan = 0;
    float acc = dot_range(d, 0, m, n, 0, nb, &nan);
    if (partner < d->M || (partner == d->M && nb <= A4W4_GUARD_BYTES))
        for (size_t b = 0; b < nb; b++) /* the fault: the micro-tile's NaN flag */
            nan |= d->a_scale.data[partner * nb + b] == 0xFF;
    return finish(acc, nan);
}

static int run_past(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    return each_output(a, out_past, NULL);
}

/* ---- fp32 subnormals flushed to zero (FTZ/DAZ) -----------------------------------------------
 * Row-major base. The kernel runs with the fp32 denormal mode off (flush to zero, as a
 * "denormals are zero" compile or mode setting does): every block value below 2^-126 in
 * magnitude becomes a zero of its sign, and so does the running fp32 total after each add.
 * Right wherever block values and outputs stay normal; contracts §4.1 keeps fp32 subnormals.
 * Caught by the tiny regime (block values and outputs in the fp32 subnormal range). */
static float ftz(float x) { return fabsf(x) < FLT_MIN ? copysignf(0.0f, x) : x; }

static uint16_t out_ftz(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    float acc = 0.0f;
    int nan = 0;
    for (size_t b = 0; b < nblk(d); b++) {
        unsigned sa = a_sc(d, 0, m, b), sb = w_sc(d, 0, n, b);
        nan |= sa == 0xFF || sb == 0xFF;
        float v = ftz(block_f32(block_isum(d, 0, m, n, b), (int)sa - 127, (int)sb - 127));
        acc = ftz(acc + v); /* the fault: both flushes */
    }
    return finish(acc, nan);
}

static int run_ftz(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    return each_output(a, out_ftz, NULL);
}

/* ---- the sign of a zero output ------------------------------------------------------------
 * Row-major base. Each block is summed in fp32 from its first product (signed zeros kept, as
 * an FMA chain does), and the output total is seeded with the first block's value instead of
 * +0.0. Every nonzero result is the same as ordered(1) (block sums are exact integers); an
 * output whose every product is -0 comes out -0 where contracts §4.1's +0.0 start gives +0.
 * Caught by the zero-sign rows of the special and tiny regimes (an all -0 row of A facing a
 * row of W without negative values). */
static float signed_e2m1x2(uint8_t code) /* twice the E2M1 value, -0 for code 8 */
{
    return copysignf((float)abs(twice[code & 15]), (code & 8) ? -1.0f : 1.0f);
}

static float block_chain(const a4w4_case_data *d, size_t m, size_t n, size_t b)
{
    const uint8_t *ar = d->a_fp4.data + m * (d->K / 2) + b * 16;
    const uint8_t *wr = d->w_fp4.data + n * (d->K / 2) + b * 16;
    float s = signed_e2m1x2(ar[0] & 15) * signed_e2m1x2(wr[0] & 15);
    for (size_t k = 1; k < 32; k++) {
        uint8_t av = (uint8_t)(ar[k / 2] >> (4 * (k & 1))), wv = (uint8_t)(wr[k / 2] >> (4 * (k & 1)));
        s += signed_e2m1x2(av & 15) * signed_e2m1x2(wv & 15);
    }
    unsigned sa = a_sc(d, 0, m, b), sb = w_sc(d, 0, n, b);
    return ldexpf(s, (int)sa + (int)sb - 256);
}

static uint16_t out_zsign(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    float acc = 0.0f;
    int nan = 0;
    for (size_t b = 0; b < nblk(d); b++) {
        nan |= a_sc(d, 0, m, b) == 0xFF || w_sc(d, 0, n, b) == 0xFF;
        float v = block_chain(d, m, n, b);
        acc = b == 0 ? v : acc + v; /* the fault: seeded with block 0, not +0.0 */
    }
    return finish(acc, nan);
}

static int run_zsign(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    return each_output(a, out_zsign, NULL);
}

/* The four mutants below survive every case outside their fault's reach (that is what they
 * are for), so they would run their plain loops over nearly the whole pre-merge set. Where the
 * fault cannot show they run the correct CPU systems under test instead (cpu_sut.h: the same
 * ordered(1) bits, vectorized), and the faulty loop only where it can. */
static int sut_asm(const a4w4_run_args *a)
{
    const a4w4_case_data *d = a->d;
    return a4w4_cpu_asm_gemm(d->a_fp4.data, d->a_scale_shuffled.data, d->w_fp4_shuffled.data,
                             d->w_scale_swizzled.data, d->M, d->N, d->K, a->s->rows,
                             a->s->nrows, a->s->cols, a->s->ncols, a->y);
}

static int sut_fallback(const a4w4_run_args *a)
{
    const a4w4_case_data *d = a->d;
    return a4w4_cpu_fallback_gemm(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                  d->w_scale.data, d->M, d->N, d->K, a->s->rows, a->s->nrows,
                                  a->s->cols, a->s->ncols, a->y);
}

/* ---- the fp32 -> bf16 conversion saturates ------------------------------------------------------
 * Row-major base (the fallback system's kernel) with a clamping store: the output conversion
 * clamps to bf16's largest finite value, as a converter written "clamp, then round" does:
 * +-Inf and every total that rounds past 0x7F7F come out +-0x7F7F (NaN stays NaN). Right
 * everywhere below the top of the range; contracts §4.3 rounds an overflow to +-Inf. Caught by
 * the range regime's bf16-overflow outputs (kind 0). */
static int run_sat(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    int rc = sut_fallback(a);
    for (size_t k = 0; rc == A4W4_OK && k < a->s->nrows * a->s->ncols; k++)
        if ((a->y[k] & 0x7FFF) == 0x7F80) /* the fault */
            a->y[k] = (uint16_t)((a->y[k] & 0x8000) | 0x7F7F);
    return rc;
}

/* ---- the combined scale formed in fp32 first -------------------------------------------------
 * Row-major base. Each block's value is the fp32 product (dot / 4) * s with s = 2^(sa-127) *
 * 2^(sb-127) rounded to fp32 first: exact while 2^(sa+sb-254) is an fp32 value, +Inf from
 * sa + sb = 382 on (so a block value that is finite, or a zero dot, gives Inf or NaN) and 0 at
 * sa + sb <= 104 (a representable block value is lost). contracts §4.3: the block value is
 * d * 2^(sa+sb-256) rounded once. Caught by the range regime (kinds 0, 1 and 3). */
/* A block's value from its dot and scales. */
typedef float (*block_value_fn)(int isum, unsigned sa, unsigned sb);

/* ordered(1) of output (m, n) with the codes of activation row m, the scales of activation row
 * sm (m itself in a right kernel) and each block's value from value(); *nan set for a block
 * with scale 0xFF. */
static float dot_with(const a4w4_case_data *d, int asm_, size_t m, size_t sm, size_t n,
                      block_value_fn value, int *nan)
{
    float acc = 0.0f;
    for (size_t b = 0; b < nblk(d); b++) {
        unsigned sa = a_sc(d, asm_, sm, b), sb = w_sc(d, asm_, n, b);
        *nan |= sa == 0xFF || sb == 0xFF;
        acc += value(block_isum(d, asm_, m, n, b), sa, sb);
    }
    return acc;
}

static float value_right(int isum, unsigned sa, unsigned sb)
{
    return block_f32(isum, (int)sa - 127, (int)sb - 127);
}

static float value_scale32(int isum, unsigned sa, unsigned sb)
{
    float s = a4w4_e8m0_to_f32((uint8_t)sa) * a4w4_e8m0_to_f32((uint8_t)sb); /* the fault */
    return (float)isum * 0.25f * s;
}

static uint16_t out_scale32(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    int nan = 0;
    float acc = dot_with(d, 0, m, m, n, value_scale32, &nan);
    return finish(acc, nan);
}

/* The smallest and largest scale over the sampled rows of one operand (row-major scales). */
static void scale_span(const uint8_t *sc, size_t nb, const size_t *rows, size_t nrows,
                       unsigned *lo, unsigned *hi)
{
    *lo = 255;
    *hi = 0;
    for (size_t i = 0; i < nrows; i++)
        for (size_t b = 0; b < nb; b++) {
            unsigned v = sc[(rows ? rows[i] : i) * nb + b];
            *lo = v < *lo ? v : *lo;
            *hi = v > *hi ? v : *hi;
        }
}

static int run_scale32(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    const a4w4_case_data *d = a->d;
    unsigned alo, ahi, wlo, whi;
    scale_span(d->a_scale.data, nblk(d), a->s->rows, a->s->nrows, &alo, &ahi);
    scale_span(d->w_scale.data, nblk(d), a->s->cols, a->s->ncols, &wlo, &whi);
    if (alo + wlo >= 105 && ahi + whi <= 381) /* 2^(sa+sb-254) an fp32 value everywhere */
        return sut_fallback(a);
    return each_output(a, out_scale32, NULL);
}

/* ---- one M bucket's tile reads the wrong scale rows --------------------------------------------
 * ASM base. The kernel that serves the padded-M bucket 64 < M <= 128 (contracts §5.1) runs one
 * 128-row tile and loads the activation scales of its second 64-row half with the first half's
 * row offset: rows 64.. read the scales of row m - 64 (their codes are right). Every other M is
 * right. Caught by a case with M in (64, 128] whose rows' scales differ. */
static uint16_t out_bucket(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    int fault = d->M > 64 && d->M <= 128 && m >= 64;
    size_t sm = fault ? m - 64 : m; /* the fault: the scale row */
    int nan = 0;
    float acc = dot_with(d, 1, m, sm, n, value_right, &nan);
    return finish(acc, nan);
}

static int run_bucket(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    if (!has_asm_layouts(a))
        return A4W4_EUNSUPPORTED;
    if (a->d->M <= 64 || a->d->M > 128) /* another bucket's kernel */
        return sut_asm(a);
    return each_output(a, out_bucket, NULL);
}

/* ---- a persistent kernel skips block 0 from its second round of tiles on ----------------------
 * ASM base with 256x256 output tiles walked in row-major tile order by a persistent grid of 256
 * workgroups (one per CU): tile t = (m / 256) * ceil(N / 256) + n / 256 runs in round t / 256.
 * The K loop's start is carried over from the previous tile instead of reset, so from tile 256
 * on (every tile of the second and later rounds) the first 32-block of K is skipped. Right on
 * every output grid of at most 256 tiles. Caught by a case with more than 256 tiles of 256x256
 * whose sample reaches a tile past the 256th (gen.h: every 256-tile index is sampled). */
#define PERSISTENT_TILE 256
#define PERSISTENT_CUS 256

static uint16_t out_persist(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    size_t ntn = (d->N + PERSISTENT_TILE - 1) / PERSISTENT_TILE;
    size_t t = (m / PERSISTENT_TILE) * ntn + n / PERSISTENT_TILE;
    int nan = 0;
    size_t b0 = t >= PERSISTENT_CUS ? 1 : 0; /* the fault: block 0 skipped from tile 256 on */
    float acc = dot_range(d, 1, m, n, b0, nblk(d), &nan);
    return finish(acc, nan);
}

static int run_persist(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    if (!has_asm_layouts(a))
        return A4W4_EUNSUPPORTED;
    const a4w4_case_data *d = a->d;
    size_t tiles = ((d->M + PERSISTENT_TILE - 1) / PERSISTENT_TILE) *
                   ((d->N + PERSISTENT_TILE - 1) / PERSISTENT_TILE);
    if (tiles <= PERSISTENT_CUS) /* one round: nothing carried over */
        return sut_asm(a);
    return each_output(a, out_persist, NULL);
}

/* ---- activation-scale shuffle with the unpadded column stride (the AITER PR #2900 class) -------
 * Layout bytes. The quantizer fills the padded [rows256(M), cols8(K/32)] tensor's pad cells in
 * the right places (contracts §3.3), but writes the valid scales with the row-group stride of
 * the unpadded column count, floor((K/32) / 8) groups of 8 columns instead of ceil: right when
 * (K/32) % 8 == 0, and right for the first 32-row group always (its stride term is 0); every
 * later group lands 256 bytes per group too early, over its neighbour's cells. Caught by the
 * layout bytes on a case with (K/32) % 8 != 0 and M > 32. */
static size_t act_index_unpadded(size_t nb, size_t r, size_t c)
{
    size_t d0 = r / 32, d1 = (r % 32) / 16, d2 = r % 16, d3 = c / 8, d4 = (c % 8) / 4, d5 = c % 4;
    return ((((d0 * (nb / 8) + d3) * 4 + d5) * 16 + d2) * 2 + d4) * 2 + d1; /* nb / 8: the fault */
}

static int layouts_stride(void *ctx, const a4w4_case_data *d, uint8_t *wsh, uint8_t *wsw,
                          uint8_t *ash, char *why, size_t whylen)
{
    (void)ctx;
    (void)why;
    (void)whylen;
    size_t nb = nblk(d), M = d->M;
    int rc = A4W4_OK;
    if (wsh)
        rc = a4w4_preshuffle(d->w_fp4.data, d->N, d->K, wsh);
    if (rc == A4W4_OK && wsw)
        rc = a4w4_scale_swizzle(d->w_scale.data, d->N, nb, wsw);
    if (rc != A4W4_OK || !ash)
        return rc;
    size_t prow = a4w4_act_scale_padded_rows(M), pcol = a4w4_act_scale_padded_cols(nb);
    for (size_t r = 0; r < prow; r++) /* the pad cells, where they belong */
        for (size_t c = 0; c < pcol; c++)
            if (r >= M || c >= nb)
                ash[a4w4_act_scale_shuffle_index(M, nb, r, c)] = c >= nb ? d->col_fill : d->row_fill;
    for (size_t r = 0; r < M; r++)
        for (size_t c = 0; c < nb; c++)
            ash[act_index_unpadded(nb, r, c)] = d->a_scale.data[r * nb + c];
    return A4W4_OK;
}

/* ---- quantizer mutants ------------------------------------------------------------------------ */

typedef struct {
    int mode_for[A4W4_SCALE_MODE_COUNT]; /* scale mode actually used for each asked mode */
    int trunc;                           /* E2M1 by truncation toward zero instead of RNE */
    int nibble_swap;                     /* element 2i in the high nibble */
} quant_fault;

/* E2M1 code of q by truncation toward zero (the largest grid magnitude <= |q|, saturating at
 * 6), sign kept as RNE keeps it (negative -> sign bit, also for zero). */
static uint8_t e2m1_trunc(float q)
{
    static const float grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    uint8_t sign = signbit(q) ? 8 : 0;
    float a = fabsf(q);
    if (a != a)
        return (uint8_t)(7 | sign);
    uint8_t c = 0;
    for (uint8_t i = 0; i < 8; i++)
        if (grid[i] <= a)
            c = i;
    return (uint8_t)(c | sign);
}

/* Quantize bf16 x [rows, K] per 1x32 (contracts §2) with the faults of f; fp4 [rows, K/2] and
 * row-major scale [rows, K/32]. NaN/Inf blocks get scale 0xFF and codes 0. */
static int quant_faulty(const quant_fault *f, const uint16_t *x, size_t rows, size_t K, int mode,
                        uint8_t *fp4, uint8_t *scale, char *why, size_t whylen)
{
    if (mode < 0 || mode >= A4W4_SCALE_MODE_COUNT || K % 32) {
        snprintf(why, whylen, "mode %d or K %zu out of range", mode, K);
        return A4W4_EINVAL;
    }
    size_t nb = K / 32;
    for (size_t r = 0; r < rows; r++)
        for (size_t b = 0; b < nb; b++) {
            float v[32], amax = 0.0f;
            int special = 0;
            for (size_t k = 0; k < 32; k++) {
                v[k] = a4w4_bf16_to_f32(x[r * K + b * 32 + k]);
                if (isnan(v[k]) || isinf(v[k]))
                    special = 1;
                else if (fabsf(v[k]) > amax)
                    amax = fabsf(v[k]);
            }
            uint8_t s = special ? 0xFF : a4w4_scale_code(amax, (a4w4_scale_mode)f->mode_for[mode]);
            scale[r * nb + b] = s;
            uint8_t *out = fp4 + r * (K / 2) + b * 16;
            memset(out, 0, 16);
            if (special)
                continue;
            float sc = a4w4_e8m0_to_f32(s);
            for (size_t k = 0; k < 32; k++) {
                uint8_t c = f->trunc ? e2m1_trunc(v[k] / sc) : a4w4_f32_to_e2m1(v[k] / sc);
                a4w4_fp4_set(out, f->nibble_swap ? k ^ 1 : k, c);
            }
        }
    return A4W4_OK;
}

#define SAME_MODES {0, 1, 2, 3}
#define QUANT_MUTANT(fn, ...)                                                                 \
    static int fn(void *ctx, const uint16_t *x, size_t rows, size_t K, int mode, uint8_t *fp4, \
                  uint8_t *scale, char *why, size_t whylen)                                   \
    {                                                                                         \
        (void)ctx;                                                                            \
        static const quant_fault f = __VA_ARGS__;                                             \
        return quant_faulty(&f, x, rows, K, mode, fp4, scale, why, whylen);                   \
    }

/* Nibble order swapped: the packer puts element 2i in the high nibble (the fp4x2 rule of docs/contracts.md
 * §1 is low nibble first). Codes and scales are otherwise right. */
QUANT_MUTANT(q_nibble, {SAME_MODES, 0, 1})
/* E2M1 by truncation toward zero (a float-to-int style conversion) instead of RNE. */
QUANT_MUTANT(q_trunc, {SAME_MODES, 1, 0})
/* Wrong scale mode, each only when asked for one mode (contracts §2 step 2), the others right:
 *   round_up asked -> ceil       the RoundUp formula with Ceil's divisor (amax/4, not amax/6);
 *   round_down asked -> round_up the mode argument ignored for round_down: AITER's default;
 *   ceil asked -> round_down     Ceil without its bump (exponent field only);
 *   even asked -> round_down     Even without its + 0x00200000 carry (bits masked directly). */
QUANT_MUTANT(q_mode_ru, {{A4W4_CEIL, 1, 2, 3}, 0, 0})
QUANT_MUTANT(q_mode_rd, {{0, A4W4_ROUND_UP, 2, 3}, 0, 0})
QUANT_MUTANT(q_mode_ce, {{0, 1, A4W4_ROUND_DOWN, 3}, 0, 0})
QUANT_MUTANT(q_mode_ev, {{0, 1, 2, A4W4_ROUND_DOWN}, 0, 0})

/* ---- layout mutants --------------------------------------------------------------------------- */

/* Weight preshuffle with k1 and n1 swapped: view (N/16, 16, Kb/32, 2, 16) permuted
 * (0, 2, 1, 3, 4) instead of contracts §3.1's (0, 2, 3, 1, 4): each 16-byte run still holds 16
 * consecutive K bytes of one row, but the two K halves of a 32-byte group are interleaved
 * per row instead of per 16-row block. */
static void preshuffle_k1n1(const uint8_t *w, size_t N, size_t K, uint8_t *dst)
{
    size_t Kb = K / 2;
    for (size_t n = 0; n < N; n++)
        for (size_t kb = 0; kb < Kb; kb++) {
            size_t n0 = n / 16, n1 = n % 16, k0 = kb / 32, k1 = (kb % 32) / 16, k2 = kb % 16;
            dst[(((n0 * (Kb / 32) + k0) * 16 + n1) * 2 + k1) * 16 + k2] = w[n * Kb + kb];
        }
}

/* Scale swizzle with axes d1 and d4 swapped: view (rows/32, 2, 16, cols/8, 2, 4) permuted
 * (0, 3, 5, 2, 1, 4) instead of contracts §3.2's (0, 3, 5, 2, 4, 1). Both axes have extent 2, so
 * the shape and every tile boundary stay right; only the two inner pairs trade places. Used
 * for the weight-scale swizzle and the activation-scale shuffle alike (one shared helper). */
static void swizzle_d1d4(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            size_t d0 = r / 32, d1 = (r % 32) / 16, d2 = r % 16;
            size_t d3 = c / 8, d4 = (c % 8) / 4, d5 = c % 4;
            dst[((((d0 * (cols / 8) + d3) * 4 + d5) * 16 + d2) * 2 + d1) * 2 + d4] =
                src[r * cols + c];
        }
}

static int layouts_k1n1(void *ctx, const a4w4_case_data *d, uint8_t *wsh, uint8_t *wsw,
                        uint8_t *ash, char *why, size_t whylen)
{
    (void)ctx;
    (void)why;
    (void)whylen;
    size_t nb = nblk(d);
    int rc = A4W4_OK;
    if (wsh)
        preshuffle_k1n1(d->w_fp4.data, d->N, d->K, wsh);
    if (wsw)
        rc = a4w4_scale_swizzle(d->w_scale.data, d->N, nb, wsw);
    if (rc == A4W4_OK && ash)
        rc = a4w4_act_scale_shuffle(d->a_scale.data, d->M, nb, d->row_fill, d->col_fill, ash);
    return rc;
}

static int layouts_d1d4(void *ctx, const a4w4_case_data *d, uint8_t *wsh, uint8_t *wsw,
                        uint8_t *ash, char *why, size_t whylen)
{
    (void)ctx;
    size_t nb = nblk(d);
    int rc = A4W4_OK;
    if (wsh)
        rc = a4w4_preshuffle(d->w_fp4.data, d->N, d->K, wsh);
    if (wsw)
        swizzle_d1d4(d->w_scale.data, d->N, nb, wsw);
    if (rc == A4W4_OK && ash) {
        size_t prow = a4w4_act_scale_padded_rows(d->M), pcol = a4w4_act_scale_padded_cols(nb);
        uint8_t *pad = malloc(prow * pcol);
        if (!pad) {
            snprintf(why, whylen, "out of memory for a %zux%zu pad", prow, pcol);
            return A4W4_ENOMEM;
        }
        for (size_t r = 0; r < prow; r++)
            for (size_t c = 0; c < pcol; c++)
                pad[r * pcol + c] = c >= nb ? d->col_fill : r >= d->M ? d->row_fill
                                                                     : d->a_scale.data[r * nb + c];
        swizzle_d1d4(pad, prow, pcol, ash);
        free(pad);
    }
    return rc;
}

/* ---- the table -------------------------------------------------------------------------------- */

/* ---- field bug reproductions on GEMM outputs (a4w4_field_repro_types) -------------------------
 * Three faults of the field that the mutants above show only on layout bytes or not at all,
 * as GEMMs whose outputs the peers' tolerance criteria can be run on (selftest's field table):
 * the preshuffled weight read as if row-major (a non-preshuffle kernel on preshuffled
 * weights), the swizzled weight scale read through the map with d1 and d4 swapped, and a NaN
 * scale (0xFF) read as a zero block. */
static uint16_t out_unshuffled(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    int nan = 0;
    float acc = 0.0f;
    for (size_t b = 0; b < nblk(d); b++) {
        unsigned sa = a_sc(d, 1, m, b), sb = w_sc(d, 1, n, b);
        nan |= sa == 0xFF || sb == 0xFF;
        const uint8_t *ar = d->a_fp4.data + m * (d->K / 2);
        const uint8_t *wr = d->w_fp4_shuffled.data + n * (d->K / 2); /* the fault */
        int isum = 0;
        for (size_t kb = b * 16; kb < b * 16 + 16; kb++)
            isum += twice[ar[kb] & 15] * twice[wr[kb] & 15] +
                    twice[ar[kb] >> 4] * twice[wr[kb] >> 4];
        acc += block_f32(isum, (int)sa - 127, (int)sb - 127);
    }
    return finish(acc, nan);
}

/* The weight scale at (n, b) read from the swizzled buffer with d1 and d4 swapped. */
static unsigned w_sc_d1d4(const a4w4_case_data *d, size_t n, size_t b)
{
    size_t cols = nblk(d), d0 = n / 32, d1 = n / 16 % 2, d2 = n % 16;
    size_t d3 = b / 8, d4 = b / 4 % 2, d5 = b % 4;
    return d->w_scale_swizzled.data[((((d0 * (cols / 8) + d3) * 4 + d5) * 16 + d2) * 2 + d1) * 2 +
                                    d4];
}

static uint16_t out_swz(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    int nan = 0;
    float acc = 0.0f;
    for (size_t b = 0; b < nblk(d); b++) {
        unsigned sa = a_sc(d, 1, m, b), sb = w_sc_d1d4(d, n, b);
        nan |= sa == 0xFF || sb == 0xFF;
        acc += block_f32(block_isum(d, 1, m, n, b), (int)sa - 127, (int)sb - 127);
    }
    return finish(acc, nan);
}

static uint16_t out_nanzero(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    float acc = 0.0f;
    for (size_t b = 0; b < nblk(d); b++) {
        unsigned sa = a_sc(d, 0, m, b), sb = w_sc(d, 0, n, b);
        if (sa == 0xFF || sb == 0xFF)
            continue; /* the fault: the block counts as zero, the output is not NaN */
        acc += block_f32(block_isum(d, 0, m, n, b), (int)sa - 127, (int)sb - 127);
    }
    return finish(acc, 0);
}

static int run_unshuffled(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    return has_asm_layouts(a) ? each_output(a, out_unshuffled, NULL) : A4W4_EUNSUPPORTED;
}

static int run_swz(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    return has_asm_layouts(a) ? each_output(a, out_swz, NULL) : A4W4_EUNSUPPORTED;
}

static int run_nanzero(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    return each_output(a, out_nanzero, NULL);
}

#define GEMM_MUTANT(var, nm, desc, contr, asm_, fn)                                            \
    static const a4w4_backend_type var = {.name = nm, .what = desc, .contract = contr,         \
                                          .asm_layout = asm_, .thread_safe = 1, .run = fn}
#define BYTES_MUTANT(var, nm, desc, field, fn)                                                 \
    static const a4w4_backend_type var = {.name = nm, .what = desc, .contract = "bytes",       \
                                          .thread_safe = 1, .field = fn}

BYTES_MUTANT(m_k1n1, "mut-preshuffle-k1n1",
             "weight preshuffle with k1 and n1 swapped (layout bytes)", layouts, layouts_k1n1);
BYTES_MUTANT(m_d1d4, "mut-swizzle-d1d4",
             "scale swizzle with permutation axes d1 and d4 swapped (layout bytes)", layouts,
             layouts_d1d4);
GEMM_MUTANT(m_pad_ff, "mut-pad-ff",
            "NaN test over the whole 32-row scale tile: breaks when the activation-scale pad "
            "is 0xFF (row pad 0xFF variant)", "ordered(1)", 1, run_pad_ff);
GEMM_MUTANT(m_pad_00, "mut-pad-00",
            "zero-block skip on the tile's minimum scale: breaks when the activation-scale "
            "pad is 0x00 (row pad 0x00 variant)", "ordered(1)", 1, run_pad_00);
BYTES_MUTANT(m_nibble, "mut-nibble-swap",
             "quantizer packs element 2i in the high nibble (quantizer bytes)", quantize,
             q_nibble);
GEMM_MUTANT(m_e8m0, "mut-e8m0-code0",
            "E8M0 code 0 decoded as 2^-126 (code0 regime)", "ordered(1)", 0, run_e8m0);
BYTES_MUTANT(m_mode_ru, "mut-mode-round_up",
             "asked for round_up, quantizes in ceil (quantizer bytes)", quantize, q_mode_ru);
BYTES_MUTANT(m_mode_rd, "mut-mode-round_down",
             "asked for round_down, quantizes in round_up (quantizer bytes)", quantize,
             q_mode_rd);
BYTES_MUTANT(m_mode_ce, "mut-mode-ceil",
             "asked for ceil, quantizes in round_down (quantizer bytes)", quantize, q_mode_ce);
BYTES_MUTANT(m_mode_ev, "mut-mode-even",
             "asked for even, quantizes in round_down (quantizer bytes)", quantize, q_mode_ev);
BYTES_MUTANT(m_trunc, "mut-e2m1-trunc",
             "E2M1 rounding by truncation instead of RNE (quantizer bytes)", quantize,
             q_trunc);
GEMM_MUTANT(m_drop, "mut-drop-kblock",
            "drops the last K block when K % 256 != 0 (plain comparison)", "ordered(1)", 0,
            run_drop);
GEMM_MUTANT(m_rows, "mut-rows-small-n",
            "rows 1..M-1 repeat row 0 when N <= 128 and 2 <= M <= 64 (plain comparison)",
            "ordered(1)", 1, run_rows);
GEMM_MUTANT(m_splitk, "mut-splitk-bf16",
            "2-way split-K adding bf16 partials while declaring ordered(2) (plain comparison)",
            "ordered(2)", 0, run_splitk);
GEMM_MUTANT(m_tail, "mut-tail-unwritten",
            "launches floor(M/32) row tiles: the last partial tile is never written (poison)",
            "ordered(1)", 1, run_tail);
GEMM_MUTANT(m_past, "mut-read-past-a",
            "2-row micro-tiles read activation row M when M is odd (guard zone -> NaN)",
            "ordered(1)", 0, run_past);
GEMM_MUTANT(m_ftz, "mut-flush-subnormal",
            "fp32 subnormal block values and totals flushed to zero (tiny regime)",
            "ordered(1)", 0, run_ftz);
GEMM_MUTANT(m_zsign, "mut-zero-sign",
            "total seeded with block 0, not +0.0: an all -0 output comes out -0 (zero-sign rows)",
            "ordered(1)", 0, run_zsign);
GEMM_MUTANT(m_sat, "mut-bf16-saturate",
            "fp32 -> bf16 conversion clamped: +-Inf and totals past 0x7F7F come out +-0x7F7F "
            "(range regime)", "ordered(1)", 0, run_sat);
GEMM_MUTANT(m_scale32, "mut-scale-f32-first",
            "combined scale 2^(sa+sb-254) formed in fp32 first: Inf at sa+sb >= 382, 0 at "
            "sa+sb <= 104 (range regime)", "ordered(1)", 0, run_scale32);
GEMM_MUTANT(m_bucket, "mut-bucket-rows64",
            "rows 64.. of a 64 < M <= 128 case read the A scales of row m-64 (one padded-M "
            "bucket's tile)", "ordered(1)", 1, run_bucket);
GEMM_MUTANT(m_persist, "mut-persistent-skip",
            "persistent 256x256 grid skips K block 0 from tile 256 on (more than 256 output "
            "tiles)", "ordered(1)", 1, run_persist);
BYTES_MUTANT(m_stride, "mut-act-scale-stride",
             "activation-scale shuffle written with the unpadded column stride (layout bytes, "
             "(K/32) % 8 != 0 and M > 32)", layouts, layouts_stride);

/* ---- bounded(4) split-K that drops one whole K block -------------------------------------------
 * Row-major base, AITER's bf16-atomic split-K done right (contracts §4.1 "bounded", §5.3):
 * ordered(4)'s split ranges, each split summed in fp32 in ascending K, rounded to bf16 and
 * added into a bf16 output that starts at +0. The fault: the last split's K loop counts its
 * blocks per 16-column sub-tile and runs one short on odd sub-tiles, so outputs with
 * (n / 16) odd miss the last 32-block of K. Declared bounded(4). The per-output bound of
 * contracts §4.1 catches it at K = 16384 (512 blocks); the old bound (relative to the whole
 * sum of |terms|) let it pass once K/32 was above a few hundred. */
static uint16_t out_bdrop(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    size_t nb = nblk(d);
    return splitk_bf16(d, m, n, 4, (n / 16) % 2 ? nb - 1 : nb); /* the fault: one block short */
}

static int run_bdrop(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    return each_output(a, out_bdrop, NULL);
}

GEMM_MUTANT(m_bdrop, "mut-bounded-drop-block",
            "bounded(4) bf16-atomic split-K missing the last K block on odd 16-column "
            "sub-tiles (per-output bound)", "bounded(4)", 0, run_bdrop);

/* ---- split-K that changes with the batch size ------------------------------------------------
 * Row-major base. A launcher that sends small batches to a one-split kernel and, past M = 64,
 * to a 2-way split-K one (as a serving engine switches kernel families at a batch size):
 * ordered(1) for M <= 64, ordered(2)'s deterministic split sums (fp32 split totals added in
 * split order) for M > 64, while declaring ordered(1) at every M. Row i of a 65-row batch then
 * differs from the same row computed alone; `invariance --measure` calls it variant at M 65
 * against a prediction of invariant, and the plain comparison fails it on any M > 64 case
 * with K > 256. */
static uint16_t out_batch_splitk(const a4w4_case_data *d, size_t m, size_t n, const void *aux)
{
    (void)aux;
    size_t nb = nblk(d), per = d->M > 64 ? a4w4_split_k_per_split(d->K, 2) / 32 : nb;
    float acc = 0.0f;
    int nan = 0;
    for (size_t b0 = 0; b0 < nb; b0 += per) /* the fault: two splits past M = 64 */
        acc += dot_range(d, 0, m, n, b0, b0 + per < nb ? b0 + per : nb, &nan);
    return finish(acc, nan);
}

static int run_batch_splitk(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    return each_output(a, out_batch_splitk, NULL);
}

GEMM_MUTANT(m_batch, "mut-batch-splitk",
            "2-way split-K for M > 64, one split below, declaring ordered(1) (batch "
            "invariance; plain comparison at M > 64)", "ordered(1)", 0, run_batch_splitk);

GEMM_MUTANT(f_unshuffled, "fb-preshuffle-unapplied",
            "a non-preshuffle GEMM on preshuffled weights: w_fp4_shuffled read row-major",
            "ordered(1)", 1, run_unshuffled);
GEMM_MUTANT(f_swz, "fb-swizzle-d1d4-gemm",
            "GEMM reading the swizzled weight scale with d1 and d4 swapped", "ordered(1)", 1,
            run_swz);
GEMM_MUTANT(f_nanzero, "fb-nan-scale-zero",
            "a block with scale 0xFF (NaN) counted as zero: outputs finite where NaN is due",
            "ordered(1)", 0, run_nanzero);

static const a4w4_backend_type *const field_repros[] = {&f_unshuffled, &f_swz, &f_nanzero};

const a4w4_backend_type *const *a4w4_field_repro_types(size_t *n)
{
    *n = sizeof field_repros / sizeof field_repros[0];
    return field_repros;
}

/* The field's bug classes and what reproduces each on GEMM outputs. */
static const a4w4_field_bug_class field_classes[] = {
    {"small-N heuristic rows", "route --scan, docs/findings.md",
     "mut-rows-small-n"},
    {"K % 256 tails", "ROCm/aiter#4176", "mut-drop-kblock"},
    {"preshuffle unapplied", "sgl-project/sglang#26884", "fb-preshuffle-unapplied"},
    {"scale swizzle swapped", "contracts §3.2", "fb-swizzle-d1d4-gemm"},
    {"E8M0 code 0 read as 2^-126", "contracts §1", "mut-e8m0-code0"},
    {"NaN scale read as zero", "contracts §2 step 4", "fb-nan-scale-zero"},
    {"bf16 saturation", "contracts §4.3", "mut-bf16-saturate"},
    {"-0 output", "contracts §4.1", "mut-zero-sign"},
    {"FTZ of fp32 subnormals", "contracts §4.1", "mut-flush-subnormal"},
};

const a4w4_field_bug_class *a4w4_field_bug_classes(size_t *n)
{
    *n = sizeof field_classes / sizeof field_classes[0];
    return field_classes;
}

/* The table, in the order the mutation self-test reports them. The GPU mutants (mutants_hip.c: faults injected
 * in the device code through a4w4_gpu_set_fault) follow in GPU builds, as types with .gpu = 1
 * and an .available that reports "no GPU"; selftest runs them only with --gpu and exits 3
 * when one cannot be opened. */
static const a4w4_backend_type *const mutants[] = {
    &m_k1n1, &m_d1d4, &m_pad_ff, &m_pad_00, &m_nibble, &m_e8m0, &m_mode_ru, &m_mode_rd,
    &m_mode_ce, &m_mode_ev, &m_trunc, &m_drop, &m_rows, &m_splitk, &m_tail, &m_past,
    &m_bdrop, &m_ftz, &m_zsign, &m_stride, &m_sat, &m_scale32, &m_bucket, &m_persist,
    &m_batch,
#ifdef A4W4_HAVE_GPU
    A4W4_HIP_MUTANTS,
#endif
};

const a4w4_backend_type *const *a4w4_mutant_types(size_t *n)
{
    *n = sizeof mutants / sizeof mutants[0];
    return mutants;
}

const a4w4_backend_type *a4w4_mutant_find(const char *name)
{
    for (size_t i = 0; i < sizeof mutants / sizeof mutants[0]; i++)
        if (!strcmp(mutants[i]->name, name))
            return mutants[i];
    return NULL;
}
