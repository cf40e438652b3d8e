/* a4w4_gemm_fast_amx.c — the AMX-INT8 path of the fast oracles (compiled with the AVX-512 flags
 * of a4w4_gemm_fast_avx512.c and -mamx-tile -mamx-int8; run only where the CPU has them and
 * Linux grants the tile data state). Kernel contracts in a4w4_gemm_fast_kernels.h; contracts
 * §4.1.
 *
 * One tdpbssd computes a whole 32-block for 16 X rows x 16 Y lanes: the X tile is 16 decoded
 * rows of 32 signed bytes (2 * e2m1, stride K), the Y tile the block record's first 512 bytes
 * (8 rows of 16 lanes x 4 bytes: the layout the tile multiply reads), the result a 16 x 16
 * int32 tile of exact block dots. Tiles 0 / 1 hold the dots of even / odd blocks, 2 / 4 their X
 * rows, 3 / 5 their Y rows, so one block's multiply overlaps the other's AVX-512 epilogue
 * (the window shift-add, the limb update or the ordered fp32 sum, as on the AVX512-VNNI
 * path). */
#define _DEFAULT_SOURCE /* syscall() */
#include "a4w4_gemm_fast_kernels.h"

#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && defined(__AVX512F__) &&                      \
    defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512CD__) && defined(__linux__)
#include <sys/syscall.h>
#include <threads.h>
#include <unistd.h>

#include "a4w4_gemm_fast_avx512_impl.h"

#define MR 16

/* ---- tiles ------------------------------------------------------------------------------ */

static int amx_granted;
static once_flag amx_once = ONCE_FLAG_INIT;

static void amx_request(void)
{
    /* ARCH_REQ_XCOMP_PERM (0x1023) for XFEATURE_XTILEDATA (18) */
    amx_granted = syscall(SYS_arch_prctl, 0x1023, 18) == 0;
}

int a4w4_fast_amx_permitted(void)
{
    call_once(&amx_once, amx_request);
    return amx_granted;
}

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

/* Tiles 0..3: 16 x 64 bytes (the dots of four blocks in flight); 4, 6: 16 x 32 bytes (X
 * rows); 5, 7: 8 x 64 bytes (Y). Static storage, so that every byte ldtilecfg reads is
 * initialized. */
static const tile_config tiles = {
    .palette = 1,
    .colsb = {64, 64, 64, 64, 32, 64, 32, 64},
    .rows = {16, 16, 16, 16, 16, 8, 16, 8},
};

static void tiles_on(void)
{
    _tile_loadconfig(&tiles);
}

/* The exact dots of block b into dot tile (b & 3), from operand tiles 4/5 or 6/7
 * (alternating), so that consecutive blocks overlap. Tile numbers are immediates. */
#define DOTS(C, A, B)                                                                              \
    do {                                                                                           \
        _tile_zero(C);                                                                             \
        _tile_loadd(A, x, (long)t->ldx);                                                           \
        _tile_loadd(B, rec, 64);                                                                   \
        _tile_dpbssd(C, A, B);                                                                     \
    } while (0)

static inline void dots_compute(const a4w4_fast_tile *t, size_t b)
{
    const uint8_t *x = t->x + b * 32, *rec = t->panel + b * A4W4_FAST_BLOCK_BYTES;
    switch (b & 3) {
    case 0:
        DOTS(0, 4, 5);
        break;
    case 1:
        DOTS(1, 6, 7);
        break;
    case 2:
        DOTS(2, 4, 5);
        break;
    default:
        DOTS(3, 6, 7);
        break;
    }
}

#undef DOTS

/* Dot tile (b & 3) to c ([16][16] int32). */
static inline void dots_store(size_t b, int32_t *c)
{
    switch (b & 3) {
    case 0:
        _tile_stored(0, c, 64);
        break;
    case 1:
        _tile_stored(1, c, 64);
        break;
    case 2:
        _tile_stored(2, c, 64);
        break;
    default:
        _tile_stored(3, c, 64);
        break;
    }
}

/* The dots of blocks [b0, b1) in a ring of four buffers: block b + 3 is multiplied and block
 * b + 2 stored (a step after its multiply was issued) before the epilogue of block b reads its
 * buffer. Start with ring_start, then call ring_next(b) for b = b0 .. b1-1 in order. */
typedef struct {
    _Alignas(64) int32_t c[4][MR * 16];
} dot_ring;

static inline void ring_start(const a4w4_fast_tile *t, dot_ring *ring, size_t b0, size_t b1)
{
    for (size_t b = b0; b < b0 + 3 && b < b1; b++)
        dots_compute(t, b);
    for (size_t b = b0; b < b0 + 2 && b < b1; b++)
        dots_store(b, ring->c[b & 3]);
}

static inline const int32_t *ring_next(const a4w4_fast_tile *t, dot_ring *ring, size_t b, size_t b1)
{
    if (b + 3 < b1)
        dots_compute(t, b + 3);
    if (b + 2 < b1)
        dots_store(b + 2, ring->c[(b + 2) & 3]);
    prefetch_share(t, b);
    return ring->c[b & 3];
}

/* X rows decoded to signed 2 * e2m1 for tdpbssd. */
static unsigned load_x(const uint8_t *fp4, const uint8_t *scale, size_t K, uint8_t *out,
                       uint8_t *code, int32_t *lo, int32_t *hi)
{
    const __m512i lut = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12));
    return load_x_lut(fp4, scale, K, out, code, lo, hi, lut);
}

/* The rows' codes plus per-row offsets (off: 16 int32) of blocks b .. b+CODES-1 (as far as
 * nb) into e[i][r], int32 that the epilogues broadcast straight from memory. */
#define CODES 64

static inline void row_codes(const a4w4_fast_tile *t, size_t b, __m512i off, int32_t (*e)[MR])
{
    const __m512i rows =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32((int)t->lde));
    for (size_t i = 0; i < CODES && b + i < t->nb; i++) { /* 4-byte reads: ex is padded */
        __m512i at = _mm512_add_epi32(rows, _mm512_set1_epi32((int)(b + i)));
        __m512i codes =
            _mm512_and_si512(_mm512_i32gather_epi32(at, t->ex, 1), _mm512_set1_epi32(0xFF));
        _mm512_store_si512(e[i], _mm512_add_epi32(codes, off));
    }
}

/* ---- exact: window ------------------------------------------------------------------------ */

static inline void window_block(const a4w4_fast_tile *t, size_t b, const int32_t *c,
                                const int32_t *xs, __m512i yo, __m512i w[MR])
{
    __m512i ey = _mm512_add_epi32(
        _mm512_load_si512(t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF), yo);
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        __m512i s = _mm512_add_epi32(ey, _mm512_set1_epi32(xs[r]));
        w[r] = _mm512_add_epi32(w[r], _mm512_sllv_epi32(_mm512_load_si512(c + r * 16), s));
    }
}

static void exact_window(const a4w4_fast_tile *t, const int32_t *xoff, const int32_t *yoff,
                         size_t group, int64_t *acc)
{
    dot_ring ring;
    _Alignas(64) int32_t xs[CODES][MR];
    __m512i w[MR];
    const __m512i yo = _mm512_loadu_si512(yoff), xo = _mm512_loadu_si512(xoff);
    for (int r = 0; r < MR; r++)
        w[r] = _mm512_setzero_si512();
    memset(acc, 0, MR * 16 * sizeof *acc);
    tiles_on();
    ring_start(t, &ring, 0, t->nb);
    size_t left = group;
    for (size_t b = 0; b < t->nb; b++) {
        if (b % CODES == 0)
            row_codes(t, b, xo, xs);
        window_block(t, b, ring_next(t, &ring, b, t->nb), xs[b % CODES], yo, w);
        if (--left == 0) {
            for (int r = 0; r < MR; r++)
                flush_row(&w[r], acc + r * 16);
            left = group;
        }
    }
    for (int r = 0; r < MR; r++)
        flush_row(&w[r], acc + r * 16);
    _tile_release();
}

/* ---- exact: limbs ------------------------------------------------------------------------- */

static void exact_general(const a4w4_fast_tile *t, int64_t *limbs)
{
    dot_ring ring;
    _Alignas(64) int32_t xs[CODES][MR];
    memset(limbs, 0, MR * A4W4_FAST_LIMBS * 16 * sizeof *limbs);
    tiles_on();
    ring_start(t, &ring, 0, t->nb);
    for (size_t b = 0; b < t->nb; b++) {
        const int32_t *c = ring_next(t, &ring, b, t->nb);
        const uint8_t *rec = t->panel + b * A4W4_FAST_BLOCK_BYTES;
        __m512i ey = _mm512_load_si512(rec + A4W4_FAST_EY_OFF);
        int32_t eref = (_mm512_reduce_add_epi32(ey) >> 4) - 16; /* the lanes' mean - 16 */
        if (b % CODES == 0)
            row_codes(t, b, _mm512_setzero_si512(), xs);
        for (int r = 0; r < MR; r++)
            add_general(limbs + r * A4W4_FAST_LIMBS * 16, _mm512_load_si512(c + r * 16), ey, rec,
                        xs[b % CODES][r], eref);
    }
    _tile_release();
}

/* ---- ordered(S) ---------------------------------------------------------------------------- */

/* Block values by vscalefps (one RNE rounding of dot * 2^(e - 256) to fp32) added to part. */
static inline void ordered_block(const a4w4_fast_tile *t, size_t b, const int32_t *c,
                                 const int32_t *xs, __m512 part[MR])
{
    __m512i ey = _mm512_load_si512(t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF);
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        __m512i e = _mm512_add_epi32(ey, _mm512_set1_epi32(xs[r]));
        __m512 v = _mm512_scalef_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c + r * 16)),
                                    _mm512_cvtepi32_ps(e));
        part[r] = _mm512_add_ps(part[r], v);
    }
}

static void ordered(const a4w4_fast_tile *t, size_t per_blocks, float *total)
{
    dot_ring ring;
    _Alignas(64) int32_t xs[CODES][MR]; /* the rows' codes - 256 */
    __m512 part[MR];
    for (int i = 0; i < MR * 16; i++)
        total[i] = 0.0f;
    tiles_on();
    for (size_t b0 = 0; b0 < t->nb; b0 += per_blocks) {
        size_t b1 = b0 + per_blocks < t->nb ? b0 + per_blocks : t->nb;
        for (int r = 0; r < MR; r++)
            part[r] = _mm512_setzero_ps();
        ring_start(t, &ring, b0, b1);
        for (size_t b = b0; b < b1; b++) {
            if (b == b0 || (b - b0) % CODES == 0)
                row_codes(t, b, _mm512_set1_epi32(-256), xs);
            ordered_block(t, b, ring_next(t, &ring, b, b1), xs[(b - b0) % CODES], part);
        }
        for (int r = 0; r < MR; r++) /* total = total + part, split by split */
            _mm512_store_ps(total + r * 16, _mm512_add_ps(_mm512_load_ps(total + r * 16), part[r]));
    }
    _tile_release();
}

/* Block values of [b0, b1) by vscalefps, stored per block (contracts §4.2 leaves). */
static void blocks(const a4w4_fast_tile *t, size_t b0, size_t b1, float *v)
{
    dot_ring ring;
    _Alignas(64) int32_t xs[CODES][MR]; /* the rows' codes - 256 */
    tiles_on();
    ring_start(t, &ring, b0, b1);
    for (size_t b = b0; b < b1; b++) {
        if (b == b0 || (b - b0) % CODES == 0)
            row_codes(t, b, _mm512_set1_epi32(-256), xs);
        const int32_t *c = ring_next(t, &ring, b, b1), *x = xs[(b - b0) % CODES];
        __m512i ey = _mm512_load_si512(t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF);
        float *out = v + (b - b0) * MR * 16;
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            __m512i e = _mm512_add_epi32(ey, _mm512_set1_epi32(x[r]));
            _mm512_storeu_ps(out + r * 16, _mm512_scalef_ps(_mm512_cvtepi32_ps(_mm512_load_si512(
                                                                c + r * 16)),
                                                            _mm512_cvtepi32_ps(e)));
        }
    }
    _tile_release();
}

static void round_window(const int64_t *acc, const int32_t *xe, const int32_t *ye, uint16_t *bf16,
                         float *f32)
{
    round_window_rows(MR, acc, xe, ye, bf16, f32);
}

static void round_general(const int64_t *limbs, uint16_t *bf16, float *f32)
{
    round_general_rows(MR, limbs, bf16, f32);
}

static const a4w4_fast_kernels table = {
    .name = "amx",
    .mr = MR,
    .x_zero = 0,
    .load_x = load_x,
    .exact_window = exact_window,
    .exact_general = exact_general,
    .ordered = ordered,
    .blocks = blocks,
    .round_window = round_window,
    .round_general = round_general,
};

const a4w4_fast_kernels *a4w4_fast_kernels_amx(void)
{
    return &table;
}

#else

int a4w4_fast_amx_permitted(void)
{
    return 0;
}

const a4w4_fast_kernels *a4w4_fast_kernels_amx(void)
{
    return NULL;
}

#endif
