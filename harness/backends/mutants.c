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
#include "mutants_internal.h"
#ifdef A4W4_HAVE_GPU
#include "backend_hip.h"
#endif

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

GEMM_MUTANT(m_pad_ff, "mut-pad-ff",
            "NaN test over the whole 32-row scale tile: breaks when the activation-scale pad "
            "is 0xFF (row pad 0xFF variant)", "ordered(1)", 1, run_pad_ff);
GEMM_MUTANT(m_pad_00, "mut-pad-00",
            "zero-block skip on the tile's minimum scale: breaks when the activation-scale "
            "pad is 0x00 (row pad 0x00 variant)", "ordered(1)", 1, run_pad_00);
GEMM_MUTANT(m_e8m0, "mut-e8m0-code0",
            "E8M0 code 0 decoded as 2^-126 (code0 regime)", "ordered(1)", 0, run_e8m0);
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
    &a4w4_mut_k1n1, &a4w4_mut_d1d4, &m_pad_ff, &m_pad_00, &a4w4_mut_nibble, &m_e8m0, &a4w4_mut_mode_ru, &a4w4_mut_mode_rd,
    &a4w4_mut_mode_ce, &a4w4_mut_mode_ev, &a4w4_mut_trunc, &m_drop, &m_rows, &m_splitk, &m_tail, &m_past,
    &m_bdrop, &m_ftz, &m_zsign, &a4w4_mut_stride, &m_sat, &m_scale32, &m_bucket, &m_persist,
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
