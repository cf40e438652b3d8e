/* cpu_sut.c — CPU systems under test: ASM-layout consumer and row-major fallback, both
 * ordered(1) (contracts §4.1). Deliberately not built on ref/a4w4_gemm.c nor on the fast
 * oracles (ref/a4w4_gemm_fast*.c): own decode table, own accumulation loop.
 *
 * Speed without touching the contract's order: both systems decode their operands once
 * (the A rows asked for; W in tiles of SUT_TILE asked-for columns, k-major with the tile's
 * columns innermost) and then run one kernel that computes SUT_TILE outputs side by side.
 * Vector lanes run across outputs (columns), never across the blocks of one output: each
 * output's fp32 total still adds its blocks one at a time in ascending K order from +0.0.
 * Within a 32-block the dot product is an integer sum (exact in any order, contracts §4). The
 * plain per-output loops this replaced are kept in tests/plain/cpu_sut_plain.h, and
 * tests/harness/backends/test_cpu_sut.c holds the two bit-equal. */
#include "cpu_sut.h"

#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_layout.h"

/* Outputs computed side by side: 32 int16 lanes (one AVX-512 register, two AVX2 ones). */
#define SUT_TILE 32
/* Rows decoded at a time (bounds the decoded A: SUT_ROWS * K * 2 bytes, and at most
 * SUT_A_BYTES). */
#define SUT_ROWS 256
#define SUT_A_BYTES ((size_t)64 << 20)

/* Twice the E2M1 value of each code (contracts §1 table), signed. */
static const int16_t e2m1_twice[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static size_t pick(const size_t *list, size_t i)
{
    return list ? list[i] : i;
}

/* Decoded operands of one call. a2 [nrows, K] twice-E2M1 values; sa [nrows, nb] scales;
 * row_nan[i] when row i has a 0xFF scale; acc [nrows, SUT_TILE] the fp32 totals of the
 * current tile. The current 32-block of the W tile: w2 [32, SUT_TILE] (k-major, columns
 * innermost), pw [SUT_TILE] its W scales as 2^(sb-129); col_nan[SUT_TILE]. pair[byte] holds
 * the byte's two twice-values. */
typedef struct {
    size_t K, nb, nrows;
    int16_t *a2, w2[32 * SUT_TILE], pair[256][2];
    uint8_t *sa, *row_nan, col_nan[SUT_TILE];
    double pw[SUT_TILE];
    float *acc;
} sut_ops;

static void ops_free(sut_ops *o)
{
    free(o->a2);
    free(o->sa);
    free(o->row_nan);
    free(o->acc);
}

static int ops_alloc(sut_ops *o, size_t nrows, size_t K)
{
    memset(o, 0, sizeof *o);
    o->K = K;
    o->nb = K / 32;
    o->nrows = nrows;
    o->a2 = malloc(nrows * K * sizeof *o->a2);
    o->sa = malloc(nrows * o->nb);
    o->row_nan = calloc(nrows, 1);
    o->acc = malloc(nrows * SUT_TILE * sizeof *o->acc);
    if (!o->a2 || !o->sa || !o->row_nan || !o->acc) {
        ops_free(o);
        return A4W4_ENOMEM;
    }
    for (unsigned v = 0; v < 256; v++) { /* fp4x2: element 2i low nibble, 2i+1 high (§1) */
        o->pair[v][0] = e2m1_twice[v & 15];
        o->pair[v][1] = e2m1_twice[v >> 4];
    }
    return A4W4_OK;
}

/* Decode 16 fp4x2 bytes of one 32-block into dst[0], dst[stride], ..., dst[31*stride]. */
static void decode_block(const sut_ops *o, const uint8_t *src, int16_t *dst, size_t stride)
{
    for (size_t i = 0; i < 16; i++) {
        dst[(2 * i) * stride] = o->pair[src[i]][0];
        dst[(2 * i + 1) * stride] = o->pair[src[i]][1];
    }
}

/* 2^(e - bias) as a double, exact for the E8M0 codes (e - bias stays inside double's normal
 * range for bias 127 and 129). */
static double pow2_double(unsigned e, unsigned bias)
{
    uint64_t bits = (uint64_t)(e + 1023u - bias) << 52;
    double p;
    memcpy(&p, &bits, 8);
    return p;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define SUT_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define SUT_CLONES
#endif

/* The kernel: block b of every asked-for row against the SUT_TILE columns of the current W
 * block. Per row i: isum[l] = the exact integer dot of 32 twice-values (|isum| <= 32*144, fits
 * int16), then the block value isum * 2^(sa-127) * 2^(sb-129) = isum * 2^(sa+sb-256), every
 * product exact in double, rounded once to fp32 by the conversion (as contracts §4.1
 * ordered(1) asks) and added to the lane's fp32 total acc[i][l]. The caller walks b in
 * ascending order. */
SUT_CLONES static void block_rows(sut_ops *o, size_t b)
{
    for (size_t i = 0; i < o->nrows; i++) {
        const int16_t *a2 = o->a2 + i * o->K + b * 32;
        double pa = pow2_double(o->sa[i * o->nb + b], 127);
        float *acc = o->acc + i * SUT_TILE;
        int16_t isum[SUT_TILE] = {0};
#pragma GCC unroll 8
        for (size_t k = 0; k < 32; k++) {
            int16_t av = a2[k];
            for (size_t l = 0; l < SUT_TILE; l++)
                isum[l] = (int16_t)(isum[l] + av * o->w2[k * SUT_TILE + l]);
        }
        for (size_t l = 0; l < SUT_TILE; l++)
            acc[l] += (float)((double)isum[l] * (pa * o->pw[l]));
    }
}

/* Write the tile's outputs y[i * ncols + j0 + l] (y already offset to the row chunk) as bf16 (NaN 0x7FC0 when the row or the
 * column reads a 0xFF scale). */
static void tile_store(const sut_ops *o, size_t j0, size_t cnt, size_t ncols, uint16_t *y)
{
    for (size_t i = 0; i < o->nrows; i++)
        for (size_t l = 0; l < cnt; l++)
            y[i * ncols + j0 + l] = (o->row_nan[i] || o->col_nan[l])
                                        ? 0x7FC0
                                        : to_bf16(o->acc[i * SUT_TILE + l]);
}

static int check_lists(const size_t *rows, size_t nrows, size_t M, const size_t *cols,
                       size_t ncols, size_t N)
{
    for (size_t i = 0; rows && i < nrows; i++)
        if (rows[i] >= M)
            return A4W4_EINVAL;
    for (size_t j = 0; cols && j < ncols; j++)
        if (cols[j] >= N)
            return A4W4_EINVAL;
    return A4W4_OK;
}

/* Where one system under test reads its operands. asm_layout: W as w_fp4_shuffled (contracts
 * §3.1), its scale swizzled (§3.2), A's scale shuffled (§3.3); else all row-major. */
typedef struct {
    const uint8_t *a_fp4, *a_scale, *w_fp4, *w_scale;
    size_t M, N, K;
    int asm_layout;
} sut_src;

/* Decode the asked-for rows r0 .. r0+o->nrows-1 of A (a_fp4 is row-major in both systems). */
static void load_a(const sut_src *s, sut_ops *o, const size_t *rows, size_t r0)
{
    size_t nb = o->nb;
    memset(o->row_nan, 0, o->nrows);
    for (size_t i = 0; i < o->nrows; i++) {
        size_t m = pick(rows, r0 + i);
        for (size_t b = 0; b < nb; b++) {
            decode_block(o, s->a_fp4 + m * (s->K / 2) + b * 16, o->a2 + i * s->K + b * 32, 1);
            size_t at = s->asm_layout ? a4w4_act_scale_shuffle_index(s->M, nb, m, b) : m * nb + b;
            o->sa[i * nb + b] = s->a_scale[at];
            o->row_nan[i] |= s->a_scale[at] == 0xFF;
        }
    }
}

/* Decode 32-block b of the tile's columns j0 .. j0+cnt-1 into w2 and pw (lanes beyond cnt
 * hold zeros). In the preshuffled layout the 16 bytes of one 32-block of row n are
 * contiguous: k2 = kb % 16 is the innermost index of contracts §3.1, so the map gives the
 * block's first byte. */
static void load_w_block(const sut_src *s, sut_ops *o, const size_t *cols, size_t j0,
                         size_t cnt, size_t b)
{
    size_t nb = o->nb;
    for (size_t l = 0; l < cnt; l++) {
        size_t n = pick(cols, j0 + l);
        size_t wat = s->asm_layout ? a4w4_preshuffle_index(s->N, s->K, n, b * 16)
                                   : n * (s->K / 2) + b * 16;
        decode_block(o, s->w_fp4 + wat, o->w2 + l, SUT_TILE);
        size_t at = s->asm_layout ? a4w4_scale_swizzle_index(s->N, nb, n, b) : n * nb + b;
        o->pw[l] = pow2_double(s->w_scale[at], 129);
        o->col_nan[l] |= s->w_scale[at] == 0xFF;
    }
}

/* Both systems: y [nrows, ncols] for the asked-for rows and columns (contracts §4.1
 * ordered(1)). A4W4_OK, A4W4_EINVAL (an index out of range) or A4W4_ENOMEM. */
static int sut_run(const sut_src *s, const size_t *rows, size_t nrows, const size_t *cols,
                   size_t ncols, uint16_t *y)
{
    if (!rows)
        nrows = s->M;
    if (!cols)
        ncols = s->N;
    if (check_lists(rows, nrows, s->M, cols, ncols, s->N))
        return A4W4_EINVAL;
    if (!nrows || !ncols)
        return A4W4_OK;
    size_t chunk = SUT_A_BYTES / (s->K * sizeof(int16_t));
    chunk = chunk < 1 ? 1 : chunk > SUT_ROWS ? SUT_ROWS : chunk;
    chunk = nrows < chunk ? nrows : chunk;
    sut_ops *a = malloc(sizeof *a); /* the decoded A rows, shared by the threads */
    if (!a || ops_alloc(a, chunk, s->K)) {
        free(a);
        return A4W4_ENOMEM;
    }
    int failed = 0;
    for (size_t r0 = 0; r0 < nrows && !failed; r0 += chunk) {
        a->nrows = nrows - r0 < chunk ? nrows - r0 : chunk;
        load_a(s, a, rows, r0);
        /* column tiles on all cores: each thread its own W tile and totals; every output's
         * blocks still go in ascending K (contracts §4.1). One thread below 2^26 MACs, where
         * starting a team costs more than it saves. */
#pragma omp parallel if ((double)a->nrows * (double)ncols * (double)s->K >= 0x1p26)
        {
            sut_ops *o = malloc(sizeof *o);
            float *acc = o ? malloc(a->nrows * SUT_TILE * sizeof *acc) : NULL;
            if (o && acc) {
                memcpy(o, a, sizeof *o);
                o->acc = acc;
            } else {
#pragma omp atomic write
                failed = 1;
            }
#pragma omp for schedule(dynamic, 4)
            for (size_t j0 = 0; j0 < ncols; j0 += SUT_TILE) {
                if (!acc)
                    continue;
                size_t cnt = ncols - j0 < SUT_TILE ? ncols - j0 : SUT_TILE;
                memset(o->w2, 0, sizeof o->w2);
                for (size_t l = 0; l < SUT_TILE; l++)
                    o->pw[l] = 0.0;
                memset(o->col_nan, 0, sizeof o->col_nan);
                for (size_t x = 0; x < o->nrows * SUT_TILE; x++)
                    o->acc[x] = 0.0f;
                for (size_t b = 0; b < o->nb; b++) { /* ascending K: contracts §4.1's order */
                    load_w_block(s, o, cols, j0, cnt, b);
                    block_rows(o, b);
                }
                tile_store(o, j0, cnt, ncols, y + r0 * ncols);
            }
            free(acc);
            free(o);
        }
    }
    ops_free(a);
    free(a);
    return failed ? A4W4_ENOMEM : A4W4_OK;
}

int a4w4_cpu_asm_gemm(const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                      const uint8_t *w_fp4_shuffled, const uint8_t *w_scale_swizzled, size_t M,
                      size_t N, size_t K, const size_t *rows, size_t nrows, const size_t *cols,
                      size_t ncols, uint16_t *y)
{
    if (!a_fp4 || !a_scale_shuffled || !w_fp4_shuffled || !w_scale_swizzled || !y || !M || !N ||
        !K || K % 32)
        return A4W4_EINVAL;
    if (!a4w4_preshuffle_supported(N, K) || !a4w4_scale_swizzle_supported(2, N, K / 32))
        return A4W4_EUNSUPPORTED;
    sut_src s = {a_fp4, a_scale_shuffled, w_fp4_shuffled, w_scale_swizzled, M, N, K, 1};
    return sut_run(&s, rows, nrows, cols, ncols, y);
}

int a4w4_cpu_fallback_gemm(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                           const uint8_t *w_scale, size_t M, size_t N, size_t K,
                           const size_t *rows, size_t nrows, const size_t *cols, size_t ncols,
                           uint16_t *y)
{
    if (!a_fp4 || !a_scale || !w_fp4 || !w_scale || !y || !M || !N || !K || K % 32)
        return A4W4_EINVAL;
    sut_src s = {a_fp4, a_scale, w_fp4, w_scale, M, N, K, 0};
    return sut_run(&s, rows, nrows, cols, ncols, y);
}
