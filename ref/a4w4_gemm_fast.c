/* a4w4_gemm_fast.c — the driver of the fast exact, ordered(S) and tree oracles: path choice,
 * operand packing, tiling and threads, the per-tile window proof, rounding and output
 * (contracts §4, §4.1, §4.2; layouts and kernel contracts in a4w4_gemm_fast_kernels.h; the
 * tree reducer in a4w4_tree_fast.c). */
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "a4w4_gemm.h"
#include "a4w4_gemm_fast.h"
#include "a4w4_gemm_fast_kernels.h"

/* Packed Y panels handled by one sweep over X (kept in L2 while X tiles stream past). */
#define CHUNK_BYTES (1u << 20)
/* X decoded once for all chunks only up to this many bytes (beyond, writing and re-reading it
 * through memory costs more than decoding each tile once a chunk in cache). */
#define X_DECODED_MAX ((size_t)8 << 20)
/* The general path's lazy carries hold for up to 2^18 blocks (a4w4_fast_kernels contract). */
#define MAX_FAST_BLOCKS ((size_t)1 << 18)
/* Largest |dot| of one 32-block in units of its quantum: 32 * 12 * 12 (contracts §4). */
#define MAX_BLOCK_DOT 4608
/* Largest window spread: MAX_BLOCK_DOT << 18 < 2^31 (int32 partial sums). */
#define MAX_WINDOW_SPREAD 18

/* ---- paths ------------------------------------------------------------------------------ */

static const char *const isa_names[A4W4_FAST_ISA_COUNT] = {"auto",    "amx",  "avx512vnni",
                                                           "avxvnni", "avx2", "portable"};

const char *a4w4_fast_isa_name(a4w4_fast_isa isa)
{
    return (unsigned)isa < A4W4_FAST_ISA_COUNT ? isa_names[isa] : NULL;
}

#if defined(__x86_64__) || defined(__i386__)
/* Bit `bit` of register reg (0 eax, 1 ebx, 2 ecx, 3 edx) of CPUID leaf/sub; 0 when the leaf is
 * absent. Used for the features older compilers' __builtin_cpu_supports does not name (AMX,
 * AVX-VNNI; clang 14 refuses those strings). */
static int cpuid_bit(unsigned leaf, unsigned sub, int reg, unsigned bit)
{
    unsigned r[4] = {0, 0, 0, 0};
    if (!__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]))
        return 0;
    return (int)((r[reg] >> bit) & 1u);
}
#endif

/* 1 when the CPU and OS can run the path's instructions. */
static int cpu_has(a4w4_fast_isa isa)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    switch (isa) {
    case A4W4_FAST_AMX:
        /* CPUID.(7,0):EDX bit 24 AMX-TILE, bit 25 AMX-INT8; the OS grant is asked for */
        return cpu_has(A4W4_FAST_AVX512VNNI) && cpuid_bit(7, 0, 3, 24) &&
               cpuid_bit(7, 0, 3, 25) && a4w4_fast_amx_permitted();
    case A4W4_FAST_AVX512VNNI:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512vnni");
    case A4W4_FAST_AVXVNNI:
        /* CPUID.(7,1):EAX bit 4 AVX-VNNI (VEX-encoded vpdpbusd) */
        return __builtin_cpu_supports("avx2") && cpuid_bit(7, 1, 0, 4);
    case A4W4_FAST_AVX2:
        return __builtin_cpu_supports("avx2");
    default:
        return 0;
    }
#else
    (void)isa;
    return 0;
#endif
}

/* The path's table when both the build and the CPU have it, else NULL (AUTO: NULL). */
static const a4w4_fast_kernels *table_if_runnable(a4w4_fast_isa isa)
{
    switch (isa) {
    case A4W4_FAST_PORTABLE:
        return a4w4_fast_kernels_portable();
    case A4W4_FAST_AMX:
        return a4w4_fast_kernels_amx() && cpu_has(isa) ? a4w4_fast_kernels_amx() : NULL;
    case A4W4_FAST_AVX512VNNI:
        return cpu_has(isa) ? a4w4_fast_kernels_avx512vnni() : NULL;
    case A4W4_FAST_AVXVNNI:
        return cpu_has(isa) ? a4w4_fast_kernels_avxvnni() : NULL;
    case A4W4_FAST_AVX2:
        return cpu_has(isa) ? a4w4_fast_kernels_avx2() : NULL;
    default:
        return NULL;
    }
}

a4w4_fast_isa a4w4_fast_isa_resolve(a4w4_fast_isa isa)
{
    if (isa != A4W4_FAST_AUTO)
        return isa;
    for (int i = A4W4_FAST_AUTO + 1; i < A4W4_FAST_PORTABLE; i++)
        if (table_if_runnable((a4w4_fast_isa)i))
            return (a4w4_fast_isa)i;
    return A4W4_FAST_PORTABLE;
}

const a4w4_fast_kernels *a4w4_fast_kernels_for(a4w4_fast_isa isa)
{
    return table_if_runnable(a4w4_fast_isa_resolve(isa));
}

int a4w4_fast_isa_supported(a4w4_fast_isa isa)
{
    return isa == A4W4_FAST_AUTO || a4w4_fast_kernels_for(isa) != NULL;
}

unsigned a4w4_fast_max_threads(void)
{
#ifdef _OPENMP
    int n = omp_get_max_threads();
    return n > 0 ? (unsigned)n : 1u;
#else
    return 1u;
#endif
}

/* ---- one call's state --------------------------------------------------------------------
 * X (the operand with more rows) is broadcast, Y packed; output (i, j) of C = X Y^T lands at
 * y[i * xs + j * ys]. */
typedef struct {
    const a4w4_fast_kernels *k;
    int ordered;
    size_t per_blocks; /* ordered(S): blocks per split */
    const a4w4_fast_tree_plan *tree; /* a tree contract (then ordered is 0), or NULL */
    const uint8_t *x_fp4, *x_scale, *y_fp4, *y_scale;
    size_t nx, ny, K, nb;
    size_t npanels, panel_bytes;
    uint8_t *panels;
    int32_t *lane_lo;  /* [npanels][16]: per lane, the smallest code (pack_panel) */
    int32_t *p_spread; /* per panel: the largest code spread of a lane */
    int32_t *p_elo, *p_ehi; /* per panel: the smallest and largest ey of its records */
    uint32_t *p_mask;  /* per panel: a4w4_fast_pack_panel's lane masks */
    /* X decoded once for every chunk of panels (NULL: each tile decoded per chunk): rows
     * padded to whole tiles, [nx_pad][K] bytes, [nx_pad][nb] codes, per row load_x's flags
     * and code range */
    uint8_t *xd, *xcodes;
    unsigned *xflags;
    int32_t *xrlo, *xrhi;
    uint16_t *y_bf16;
    float *y_f32;
    size_t xs, ys;
} fast_job;

/* Per-thread scratch: the current X tile and the kernels' outputs. */
typedef struct {
    uint8_t *x;  /* [mr][K] */
    uint8_t *ex; /* [mr][nb] sanitized codes (a4w4_fast_scan_row); missing rows 0 */
    const uint8_t *tx, *tex; /* the tile's rows and codes: x and ex, or the job's decoded X */
    unsigned flags[A4W4_FAST_MAX_MR];
    int32_t xlo[A4W4_FAST_MAX_MR]; /* per row: the smallest code (a4w4_fast_scan_row) */
    int32_t spread;                /* the largest hi - lo of the tile's rows */
    int32_t ex_lo, ex_hi;          /* the smallest and largest code of every row (padding: 0) */
    int any;                       /* some row has a nonzero finite block */
    size_t i0, rows;
    size_t p_first; /* the first panel run against this X tile in this chunk */
    int64_t *acc;   /* [mr][16] */
    int64_t *limbs; /* [mr][LIMBS][16] */
    float *total;   /* [mr][16] */
    uint16_t tb[A4W4_FAST_MAX_MR * A4W4_FAST_NR]; /* the tile's rounded outputs */
    float tf[A4W4_FAST_MAX_MR * A4W4_FAST_NR];
    a4w4_fast_tree_scratch *tree;                    /* tree contracts only */
    float tacc[A4W4_FAST_MAX_MR * A4W4_FAST_NR];     /* the tree's accumulator values */
    uint8_t redo[A4W4_FAST_MAX_MR * A4W4_FAST_NR];   /* outputs the plain oracle recomputes */
    a4w4_fast_stats st;
} fast_scratch;

static void scratch_free(fast_scratch *s)
{
    if (!s)
        return;
    free(s->x);
    free(s->ex);
    free(s->acc);
    free(s->limbs);
    free(s->total);
    a4w4_fast_tree_scratch_free(s->tree);
    free(s);
}

static fast_scratch *scratch_new(const fast_job *j)
{
    fast_scratch *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    unsigned mr = j->k->mr;
    s->x = aligned_alloc(64, (mr * j->K + 63) / 64 * 64);
    s->ex = malloc(mr * j->nb + 4); /* kernels may read 4 bytes at the last code */
    s->acc = aligned_alloc(64, mr * A4W4_FAST_NR * sizeof *s->acc);
    s->limbs = aligned_alloc(64, mr * A4W4_FAST_LIMBS * A4W4_FAST_NR * sizeof *s->limbs);
    s->total = aligned_alloc(64, mr * A4W4_FAST_NR * sizeof *s->total);
    if (j->tree)
        s->tree = a4w4_fast_tree_scratch_new(mr);
    if (!s->x || !s->ex || !s->acc || !s->limbs || !s->total || (j->tree && !s->tree)) {
        scratch_free(s);
        return NULL;
    }
    return s;
}

/* ---- X tiles ---------------------------------------------------------------------------- */

/* Decode and scan X row i into x and ex (a row past nx: zeros, code 0); its load_x flags. */
static unsigned decode_x_row(const fast_job *j, size_t i, uint8_t *x, uint8_t *ex, int32_t *lo,
                             int32_t *hi)
{
    if (i >= j->nx) {
        memset(x, j->k->x_zero, j->K);
        memset(ex, 0, j->nb);
        *lo = *hi = 0;
        return 0;
    }
    return j->k->load_x(j->x_fp4 + i * (j->K / 2), j->x_scale + i * j->nb, j->K, x, ex, lo, hi);
}

/* X rows i0 .. i0+mr-1 (missing rows as zeros): from the job's decoded X, or decoded here. */
static void load_x_tile(const fast_job *j, fast_scratch *s, size_t i0)
{
    unsigned mr = j->k->mr;
    s->i0 = i0;
    s->rows = j->nx - i0 < mr ? j->nx - i0 : mr;
    s->any = 0;
    s->spread = 0;
    s->ex_lo = 255;
    s->ex_hi = 0;
    s->tx = j->xd ? j->xd + i0 * j->K : s->x;
    s->tex = j->xd ? j->xcodes + i0 * j->nb : s->ex;
    for (unsigned r = 0; r < mr; r++) {
        int32_t lo, hi;
        if (j->xd) {
            s->flags[r] = j->xflags[i0 + r];
            lo = j->xrlo[i0 + r];
            hi = j->xrhi[i0 + r];
        } else {
            s->flags[r] = decode_x_row(j, i0 + r, s->x + r * j->K, s->ex + r * j->nb, &lo, &hi);
        }
        s->xlo[r] = lo; /* every sanitized code of the row lies in [lo, hi]; padding 0 */
        s->ex_lo = lo < s->ex_lo ? lo : s->ex_lo;
        s->ex_hi = hi > s->ex_hi ? hi : s->ex_hi;
        s->any |= (s->flags[r] & 1u) != 0;
        s->spread = hi - lo > s->spread ? hi - lo : s->spread;
    }
}

/* ---- outputs ------------------------------------------------------------------------------ */

typedef enum { OUT_TRIVIAL, OUT_WINDOW, OUT_GENERAL, OUT_ORDERED, OUT_TREE } out_kind;

/* A tree's accumulator value rounded to bf16 with mode (contracts §4.2 final; NaN 0x7FC0). */
static uint16_t tree_bf16(float v, a4w4_tree_round mode)
{
    if (v != v)
        return 0x7FC0;
    return mode == A4W4_ROUND_RZ ? (uint16_t)(a4w4_f32_bits(v) >> 16) : a4w4_f32_to_bf16(v);
}

/* The tile's rounded outputs [mr][16] into s->tb / s->tf. */
static void round_tile(const fast_job *j, fast_scratch *s, size_t p, out_kind kind)
{
    size_t n = (size_t)j->k->mr * A4W4_FAST_NR;
    switch (kind) {
    case OUT_TRIVIAL: /* every term zero: the exact sum and every ordered total are +0 */
        memset(s->tb, 0, n * sizeof *s->tb);
        memset(s->tf, 0, n * sizeof *s->tf);
        break;
    case OUT_WINDOW: {
        int32_t xe[A4W4_FAST_MAX_MR];
        for (unsigned r = 0; r < j->k->mr; r++)
            xe[r] = s->xlo[r] - 256;
        j->k->round_window(s->acc, xe, j->lane_lo + p * A4W4_FAST_NR, s->tb, s->tf);
        break;
    }
    case OUT_GENERAL:
        j->k->round_general(s->limbs, s->tb, s->tf);
        break;
    case OUT_ORDERED:
        for (size_t i = 0; i < n; i++) {
            s->tf[i] = s->total[i];
            s->tb[i] = a4w4_f32_to_bf16(s->total[i]);
        }
        break;
    case OUT_TREE:
        for (size_t i = 0; i < n; i++) {
            s->tf[i] = s->tacc[i] != s->tacc[i] ? a4w4_f32_from_bits(0x7FC00000u) : s->tacc[i];
            s->tb[i] = tree_bf16(s->tacc[i], j->tree->t->final);
        }
        break;
    }
}

/* NaN over the tile's outputs whose X row or Y lane has a NaN-scale block (bf16 0x7FC0, fp32
 * 0x7FC00000), whatever the kernel computed. */
static void nan_overrides(fast_scratch *s, uint32_t nan_lanes)
{
    const float qnan = a4w4_f32_from_bits(0x7FC00000u);
    unsigned nan_rows = 0;
    for (unsigned r = 0; r < s->rows; r++)
        nan_rows |= s->flags[r] & 2u;
    if (!nan_rows && !nan_lanes)
        return;
    for (unsigned r = 0; r < s->rows; r++)
        for (unsigned l = 0; l < A4W4_FAST_NR; l++)
            if ((s->flags[r] & 2u) || ((nan_lanes >> l) & 1u)) {
                s->tb[r * A4W4_FAST_NR + l] = 0x7FC0;
                s->tf[r * A4W4_FAST_NR + l] = qnan;
            }
}

/* C = y^T with four valid rows: lane l's four outputs are adjacent in y, written by 4x4
 * transposes of four lanes at a time (SSE2). Returns the lanes written (the rest: scalar). */
static unsigned write_columns4(const fast_job *j, const fast_scratch *s, size_t j0, size_t lanes)
{
#ifdef __SSE2__
    unsigned l = 0;
    for (; l + 4 <= lanes; l += 4) {
        uint16_t *yb = j->y_bf16 + (j0 + l) * j->ys + s->i0;
        const uint16_t *tb = s->tb + l;
        __m128i b01 = _mm_unpacklo_epi16(_mm_loadl_epi64((const __m128i *)(const void *)tb),
                                         _mm_loadl_epi64((const __m128i *)(const void *)(tb + 16)));
        __m128i b23 = _mm_unpacklo_epi16(_mm_loadl_epi64((const __m128i *)(const void *)(tb + 32)),
                                         _mm_loadl_epi64((const __m128i *)(const void *)(tb + 48)));
        __m128i c01 = _mm_unpacklo_epi32(b01, b23), c23 = _mm_unpackhi_epi32(b01, b23);
        _mm_storel_epi64((__m128i *)(void *)yb, c01);
        _mm_storel_epi64((__m128i *)(void *)(yb + j->ys), _mm_srli_si128(c01, 8));
        _mm_storel_epi64((__m128i *)(void *)(yb + 2 * j->ys), c23);
        _mm_storel_epi64((__m128i *)(void *)(yb + 3 * j->ys), _mm_srli_si128(c23, 8));
        if (!j->y_f32)
            continue;
        float *yf = j->y_f32 + (j0 + l) * j->ys + s->i0;
        __m128 r0 = _mm_loadu_ps(s->tf + l), r1 = _mm_loadu_ps(s->tf + 16 + l);
        __m128 r2 = _mm_loadu_ps(s->tf + 32 + l), r3 = _mm_loadu_ps(s->tf + 48 + l);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        _mm_storeu_ps(yf, r0);
        _mm_storeu_ps(yf + j->ys, r1);
        _mm_storeu_ps(yf + 2 * j->ys, r2);
        _mm_storeu_ps(yf + 3 * j->ys, r3);
    }
    return l;
#else
    (void)j, (void)s, (void)j0, (void)lanes;
    return 0;
#endif
}

/* Write the tile's valid outputs: rows of 16 lanes when the lanes are output columns (C = y),
 * else columns of the tile, one output row per lane (C = y^T). */
static void write_tile(const fast_job *j, fast_scratch *s, size_t p, out_kind kind)
{
    size_t j0 = p * A4W4_FAST_NR;
    size_t lanes = j->ny - j0 < A4W4_FAST_NR ? j->ny - j0 : A4W4_FAST_NR;
    round_tile(j, s, p, kind);
    nan_overrides(s, j->p_mask[p] >> 16);
    if (j->ys == 1) {
        for (unsigned r = 0; r < s->rows; r++) {
            size_t base = (s->i0 + r) * j->xs + j0;
            memcpy(j->y_bf16 + base, s->tb + r * A4W4_FAST_NR, lanes * sizeof *s->tb);
            if (j->y_f32)
                memcpy(j->y_f32 + base, s->tf + r * A4W4_FAST_NR, lanes * sizeof *s->tf);
        }
    } else {
        unsigned l = s->rows == 4 ? write_columns4(j, s, j0, lanes) : 0;
        for (; l < lanes; l++) {
            uint16_t *yb = j->y_bf16 + (j0 + l) * j->ys + s->i0;
            float *yf = j->y_f32 ? j->y_f32 + (j0 + l) * j->ys + s->i0 : NULL;
            for (unsigned r = 0; r < s->rows; r++)
                yb[r] = s->tb[r * A4W4_FAST_NR + l];
            for (unsigned r = 0; yf && r < s->rows; r++)
                yf[r] = s->tf[r * A4W4_FAST_NR + l];
        }
    }
    size_t n = s->rows * lanes;
    s->st.trivial += kind == OUT_TRIVIAL ? n : 0;
    s->st.window += kind == OUT_WINDOW ? n : 0;
    s->st.general += kind == OUT_GENERAL ? n : 0;
    s->st.ordered += kind == OUT_ORDERED ? n : 0;
    s->st.tree += kind == OUT_TREE ? n : 0;
}

/* A tree tile: the reducer's values, then the plain oracle for the outputs it flagged. */
static void tree_tile(const fast_job *j, fast_scratch *s, size_t p, const a4w4_fast_tile *t)
{
    a4w4_fast_tree_tile(j->k, t, j->tree, s->tree, s->tacc, s->redo);
    size_t j0 = p * A4W4_FAST_NR;
    for (unsigned r = 0; r < s->rows; r++)
        for (unsigned l = 0; l < A4W4_FAST_NR && j0 + l < j->ny; l++) {
            if (!s->redo[r * A4W4_FAST_NR + l])
                continue;
            size_t x = s->i0 + r, y = j0 + l;
            a4w4_dot_operands op = {j->x_fp4 + x * (j->K / 2), j->x_scale + x * j->nb,
                                    j->y_fp4 + y * (j->K / 2), j->y_scale + y * j->nb, j->K};
            if (a4w4_dot_tree(&op, j->tree->t, NULL, &s->tacc[r * A4W4_FAST_NR + l]) != A4W4_OK)
                s->tacc[r * A4W4_FAST_NR + l] = a4w4_f32_from_bits(0x7FC00000u); /* no memory */
            s->st.tree_redone++;
        }
    write_tile(j, s, p, OUT_TREE);
}

/* One tile: the loaded X rows against panel p. exact picks the window when the proof holds:
 * every term of output (r, l) is an integer multiple of its quantum 2^(xlo_r + ylo_l - 256)
 * with shift (ex - xlo_r) + (ey - ylo_l) in [0, D], D = the largest row spread plus the
 * largest lane spread <= 18; so `group` terms sum below 2^31 and all nb of them below
 * nb * 4608 * 2^18 < 2^49 (nb <= 2^18): exact in int64 and in double. */
static void run_tile(const fast_job *j, fast_scratch *s, size_t p)
{
    a4w4_fast_tile t = {s->tx, j->K, s->tex, j->nb, j->panels + p * j->panel_bytes, j->nb, NULL, 0,
                        s->ex_lo + j->p_elo[p], s->ex_hi + j->p_ehi[p]};
    if (p == s->p_first && s->i0 + j->k->mr < j->nx) { /* the next X tile's rows */
        size_t rows = j->nx - s->i0 - j->k->mr;
        t.pf = j->x_fp4 + (s->i0 + j->k->mr) * (j->K / 2);
        t.pf_len = (rows < j->k->mr ? rows : j->k->mr) * (j->K / 2);
    }
    if (!s->any || !(j->p_mask[p] & 0xFFFFu)) {
        write_tile(j, s, p, OUT_TRIVIAL);
        return;
    }
    if (j->tree) {
        tree_tile(j, s, p, &t);
        return;
    }
    if (j->ordered) {
        j->k->ordered(&t, j->per_blocks, s->total);
        write_tile(j, s, p, OUT_ORDERED);
        return;
    }
    int32_t D = s->spread + j->p_spread[p];
    if (D <= MAX_WINDOW_SPREAD) {
        int32_t xoff[A4W4_FAST_MAX_MR], yoff[A4W4_FAST_NR];
        for (unsigned r = 0; r < j->k->mr; r++)
            xoff[r] = -s->xlo[r];
        for (unsigned l = 0; l < A4W4_FAST_NR; l++)
            yoff[l] = -j->lane_lo[p * A4W4_FAST_NR + l];
        size_t group = (size_t)0x7FFFFFFF / ((size_t)MAX_BLOCK_DOT << D);
        j->k->exact_window(&t, xoff, yoff, group, s->acc);
        write_tile(j, s, p, OUT_WINDOW);
    } else {
        j->k->exact_general(&t, s->limbs);
        write_tile(j, s, p, OUT_GENERAL);
    }
}

/* ---- packing and the sweep ------------------------------------------------------------- */

static void job_free(fast_job *j)
{
    free(j->panels);
    free(j->lane_lo);
    free(j->p_spread);
    free(j->p_elo);
    free(j->p_ehi);
    free(j->p_mask);
    free(j->xd);
    free(j->xcodes);
    free(j->xflags);
    free(j->xrlo);
    free(j->xrhi);
}

/* Panels per chunk (a sweep over X each). */
static size_t chunk_panels(const fast_job *j)
{
    return CHUNK_BYTES / j->panel_bytes ? CHUNK_BYTES / j->panel_bytes : 1;
}

/* Room for X decoded once (rows padded to whole tiles); left NULL when it does not fit. */
static void alloc_decoded_x(fast_job *j)
{
    size_t rows = (j->nx + j->k->mr - 1) / j->k->mr * j->k->mr;
    j->xd = aligned_alloc(64, (rows * j->K + 63) / 64 * 64);
    j->xcodes = malloc(rows * j->nb + 4); /* kernels may read 4 bytes at the last code */
    j->xflags = malloc(rows * sizeof *j->xflags);
    j->xrlo = malloc(rows * sizeof *j->xrlo);
    j->xrhi = malloc(rows * sizeof *j->xrhi);
    if (!j->xd || !j->xcodes || !j->xflags || !j->xrlo || !j->xrhi) {
        free(j->xd);
        free(j->xcodes);
        free(j->xflags);
        free(j->xrlo);
        free(j->xrhi);
        j->xd = j->xcodes = NULL;
        j->xflags = NULL;
        j->xrlo = j->xrhi = NULL;
    }
}

/* The smallest and largest ey over panel p's records. */
static void panel_code_range(fast_job *j, size_t p)
{
    const uint8_t *panel = j->panels + p * j->panel_bytes;
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (size_t b = 0; b < j->nb; b++) {
        int32_t ey[A4W4_FAST_NR];
        memcpy(ey, panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF, sizeof ey);
        for (unsigned l = 0; l < A4W4_FAST_NR; l++) {
            lo = ey[l] < lo ? ey[l] : lo;
            hi = ey[l] > hi ? ey[l] : hi;
        }
    }
    j->p_elo[p] = lo;
    j->p_ehi[p] = hi;
}

/* Pack every Y panel (in parallel). A4W4_ENOMEM when the buffers cannot be allocated. */
static int pack_all(fast_job *j, unsigned nt)
{
    j->npanels = (j->ny + A4W4_FAST_NR - 1) / A4W4_FAST_NR;
    j->panel_bytes = j->nb * A4W4_FAST_BLOCK_BYTES; /* a multiple of 64 */
    j->panels = aligned_alloc(64, j->npanels * j->panel_bytes);
    j->lane_lo = malloc(j->npanels * A4W4_FAST_NR * sizeof *j->lane_lo);
    j->p_spread = malloc(j->npanels * sizeof *j->p_spread);
    j->p_mask = malloc(j->npanels * sizeof *j->p_mask);
    j->p_elo = malloc(j->npanels * sizeof *j->p_elo);
    j->p_ehi = malloc(j->npanels * sizeof *j->p_ehi);
    if (!j->panels || !j->lane_lo || !j->p_spread || !j->p_mask || !j->p_elo || !j->p_ehi)
        return A4W4_ENOMEM;
    int failed = 0;
    (void)nt;
#pragma omp parallel num_threads(nt)
    {
        uint8_t *codes = malloc(j->nb);
        if (!codes) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t p = 0; p < j->npanels; p++) {
            size_t j0 = p * A4W4_FAST_NR;
            size_t nrows = j->ny - j0 < A4W4_FAST_NR ? j->ny - j0 : A4W4_FAST_NR;
            if (codes) {
                j->p_mask[p] =
                    a4w4_fast_pack_panel(j->y_fp4 + j0 * (j->K / 2), j->y_scale + j0 * j->nb, j->K,
                                         nrows, j->panels + p * j->panel_bytes, codes,
                                         j->lane_lo + p * A4W4_FAST_NR, &j->p_spread[p]);
                panel_code_range(j, p);
            }
        }
        free(codes);
    }
    return failed ? A4W4_ENOMEM : A4W4_OK;
}

static void stats_add(a4w4_fast_stats *to, const a4w4_fast_stats *from)
{
    to->window += from->window;
    to->general += from->general;
    to->trivial += from->trivial;
    to->ordered += from->ordered;
    to->tree += from->tree;
    to->tree_redone += from->tree_redone;
}

/* Every X tile against every panel: panels in chunks that stay in L2, X tiles shared among the
 * threads within a chunk. A4W4_ENOMEM when a thread's scratch cannot be allocated. */
static int sweep(const fast_job *j, unsigned nt, a4w4_fast_stats *st)
{
    unsigned mr = j->k->mr;
    size_t ntiles = (j->nx + mr - 1) / mr;
    size_t chunk = chunk_panels(j);
    /* X tiles per grab: 4 when there are plenty, so neighbouring output columns (C = y^T)
     * are not written by two threads at once */
    int grab = ntiles >= (size_t)16 * nt ? 4 : 1;
    int failed = 0;
    (void)nt;
    (void)grab;
#pragma omp parallel num_threads(nt)
    {
        fast_scratch *s = scratch_new(j);
        if (!s) {
#pragma omp atomic write
            failed = 1;
        }
        if (j->xd) {
#pragma omp for schedule(static)
            for (size_t i = 0; i < ntiles * mr; i++)
                j->xflags[i] = decode_x_row(j, i, j->xd + i * j->K, j->xcodes + i * j->nb,
                                            &j->xrlo[i], &j->xrhi[i]);
        }
        for (size_t c0 = 0; c0 < j->npanels; c0 += chunk) {
            size_t c1 = c0 + chunk < j->npanels ? c0 + chunk : j->npanels;
#pragma omp for schedule(dynamic, grab)
            for (size_t xt = 0; xt < ntiles; xt++) {
                if (!s)
                    continue;
                load_x_tile(j, s, xt * mr);
                s->p_first = c0;
                for (size_t p = c0; p < c1; p++)
                    run_tile(j, s, p);
            }
        }
        if (s) {
#pragma omp critical(a4w4_fast_stats)
            stats_add(st, &s->st);
        }
        scratch_free(s);
    }
    return failed ? A4W4_ENOMEM : A4W4_OK;
}

/* ---- entry points ------------------------------------------------------------------------ */

static int args_ok(const void *a, const void *as, const void *w, const void *ws, size_t M, size_t N,
                   size_t K, const void *y)
{
    return a && as && w && ws && y && M && N && K && K % 32 == 0;
}

/* A tree over every output by the plain oracle, threaded across rows. */
static int plain_tree(const a4w4_tree *t, const uint8_t *a_fp4, const uint8_t *a_scale,
                      const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N, size_t K,
                      uint16_t *y_bf16, float *y_f32, unsigned nt)
{
    int rc = A4W4_OK;
    (void)nt;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < N; n++) {
            a4w4_dot_operands op = {a_fp4 + m * (K / 2), a_scale + m * (K / 32),
                                    w_fp4 + n * (K / 2), w_scale + n * (K / 32), K};
            if (a4w4_dot_tree(&op, t, &y_bf16[m * N + n], y_f32 ? &y_f32[m * N + n] : NULL)) {
#pragma omp atomic write
                rc = A4W4_ENOMEM;
            }
        }
    return rc;
}

/* K beyond the fast path's limit (or a tree it does not take): the plain oracle. */
static int run_plain(int ordered, unsigned S, const a4w4_tree *tree, const uint8_t *a_fp4,
                     const uint8_t *a_scale, const uint8_t *w_fp4, const uint8_t *w_scale,
                     size_t M, size_t N, size_t K, uint16_t *y_bf16, float *y_f32,
                     a4w4_fast_stats *st)
{
    st->plain = M * N;
    if (tree)
        return plain_tree(tree, a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16, y_f32,
                          st->threads);
    if (ordered)
        return a4w4_gemm_ordered(a_fp4, a_scale, w_fp4, w_scale, M, N, K, S, y_bf16, y_f32);
    return a4w4_gemm_exact(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16, y_f32);
}

/* Pack, sweep and round one call (j's contract fields set by the caller). */
static int run_job(fast_job *j, const uint8_t *a_fp4, const uint8_t *a_scale,
                   const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N, size_t K,
                   uint16_t *y_bf16, float *y_f32, a4w4_fast_stats *st)
{
    int a_is_x = M >= N; /* broadcast the operand with more rows */
    j->x_fp4 = a_is_x ? a_fp4 : w_fp4;
    j->x_scale = a_is_x ? a_scale : w_scale;
    j->y_fp4 = a_is_x ? w_fp4 : a_fp4;
    j->y_scale = a_is_x ? w_scale : a_scale;
    j->nx = a_is_x ? M : N;
    j->ny = a_is_x ? N : M;
    j->K = K;
    j->nb = K / 32;
    j->y_bf16 = y_bf16;
    j->y_f32 = y_f32;
    j->xs = a_is_x ? N : 1;
    j->ys = a_is_x ? 1 : N;
    int rc = pack_all(j, st->threads);
    if (rc == A4W4_OK && j->npanels > chunk_panels(j) && j->nx * j->K <= X_DECODED_MAX)
        alloc_decoded_x(j); /* more than one chunk: decode X once, not once a chunk */
    if (rc == A4W4_OK)
        rc = sweep(j, st->threads, st);
    job_free(j);
    return rc;
}

/* The stats of a call with threads asked for. */
static a4w4_fast_stats stats_start(unsigned threads)
{
    a4w4_fast_stats st;
    memset(&st, 0, sizeof st);
#ifdef _OPENMP
    st.threads = threads ? threads : a4w4_fast_max_threads();
#else
    (void)threads;
    st.threads = 1;
#endif
    return st;
}

int a4w4_gemm_fast_run(const a4w4_fast_kernels *k, int ordered, unsigned S, const uint8_t *a_fp4,
                       const uint8_t *a_scale, const uint8_t *w_fp4, const uint8_t *w_scale,
                       size_t M, size_t N, size_t K, uint16_t *y_bf16, float *y_f32,
                       unsigned threads, a4w4_fast_stats *stats)
{
    if (!args_ok(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16) || (ordered && S < 1))
        return A4W4_EINVAL;
    if (!k)
        return A4W4_EUNSUPPORTED;
    if (k->mr < 1 || k->mr > A4W4_FAST_MAX_MR)
        return A4W4_EINVAL;
    a4w4_fast_stats st = stats_start(threads);
    int rc;
    if (K / 32 > MAX_FAST_BLOCKS) {
        rc = run_plain(ordered, S, NULL, a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16, y_f32,
                       &st);
    } else {
        fast_job j;
        memset(&j, 0, sizeof j);
        j.k = k;
        j.ordered = ordered;
        j.per_blocks = ordered ? a4w4_split_k_per_split(K, S) / 32 : 0;
        rc = run_job(&j, a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16, y_f32, &st);
    }
    if (stats)
        *stats = st;
    return rc;
}

int a4w4_gemm_fast_run_tree(const a4w4_fast_kernels *k, const a4w4_tree *tree,
                            const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                            const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y_bf16,
                            float *y_f32, unsigned threads, a4w4_fast_stats *stats)
{
    if (!args_ok(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16) ||
        a4w4_tree_check(tree, K, NULL, 0))
        return A4W4_EINVAL;
    if (!k)
        return A4W4_EUNSUPPORTED;
    if (k->mr < 1 || k->mr > A4W4_FAST_MAX_MR || !k->blocks)
        return A4W4_EINVAL;
    a4w4_fast_stats st = stats_start(threads);
    int rc;
    if (K / 32 > MAX_FAST_BLOCKS || !a4w4_tree_fast_eligible(tree)) {
        rc = run_plain(0, 1, tree, a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16, y_f32, &st);
    } else {
        size_t n = a4w4_tree_splits(tree, K, NULL, 0);
        size_t *starts = malloc((n + 1) * sizeof *starts);
        a4w4_fast_tree_plan plan = {tree, starts, n};
        fast_job j;
        memset(&j, 0, sizeof j);
        j.k = k;
        j.tree = &plan;
        rc = starts ? A4W4_OK : A4W4_ENOMEM;
        if (rc == A4W4_OK) {
            a4w4_tree_splits(tree, K, starts, n + 1);
            rc = run_job(&j, a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16, y_f32, &st);
        }
        free(starts);
    }
    if (stats)
        *stats = st;
    return rc;
}

int a4w4_gemm_exact_fast_ex(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                            const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y_bf16,
                            float *y_f32, unsigned threads, a4w4_fast_isa isa,
                            a4w4_fast_stats *stats)
{
    int rc = a4w4_gemm_fast_run(a4w4_fast_kernels_for(isa), 0, 1, a_fp4, a_scale, w_fp4, w_scale, M,
                                N, K, y_bf16, y_f32, threads, stats);
    if (stats)
        stats->isa = a4w4_fast_isa_resolve(isa);
    return rc;
}

int a4w4_gemm_ordered_fast_ex(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                              const uint8_t *w_scale, size_t M, size_t N, size_t K, unsigned S,
                              uint16_t *y_bf16, float *y_f32, unsigned threads, a4w4_fast_isa isa,
                              a4w4_fast_stats *stats)
{
    int rc = a4w4_gemm_fast_run(a4w4_fast_kernels_for(isa), 1, S, a_fp4, a_scale, w_fp4, w_scale, M,
                                N, K, y_bf16, y_f32, threads, stats);
    if (stats)
        stats->isa = a4w4_fast_isa_resolve(isa);
    return rc;
}

int a4w4_gemm_exact_fast(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                         const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y_bf16,
                         float *y_f32)
{
    return a4w4_gemm_exact_fast_ex(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16, y_f32, 0,
                                   A4W4_FAST_AUTO, NULL);
}

int a4w4_gemm_ordered_fast(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                           const uint8_t *w_scale, size_t M, size_t N, size_t K, unsigned S,
                           uint16_t *y_bf16, float *y_f32)
{
    return a4w4_gemm_ordered_fast_ex(a_fp4, a_scale, w_fp4, w_scale, M, N, K, S, y_bf16, y_f32, 0,
                                     A4W4_FAST_AUTO, NULL);
}

int a4w4_gemm_tree_fast_ex(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                           const uint8_t *w_scale, size_t M, size_t N, size_t K,
                           const a4w4_tree *t, uint16_t *y_bf16, float *y_f32, unsigned threads,
                           a4w4_fast_isa isa, a4w4_fast_stats *stats)
{
    const a4w4_fast_kernels *k = a4w4_fast_kernels_for(isa);
    int rc = a4w4_gemm_fast_run_tree(k, t, a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16, y_f32,
                                     threads, stats);
    if (stats)
        stats->isa = a4w4_fast_isa_resolve(isa);
    return rc;
}

int a4w4_gemm_tree_fast(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                        const uint8_t *w_scale, size_t M, size_t N, size_t K, const a4w4_tree *t,
                        uint16_t *y_bf16, float *y_f32)
{
    return a4w4_gemm_tree_fast_ex(a_fp4, a_scale, w_fp4, w_scale, M, N, K, t, y_bf16, y_f32, 0,
                                  A4W4_FAST_AUTO, NULL);
}

int a4w4_gemm_contract_fast(const a4w4_contract *c, const uint8_t *a_fp4, const uint8_t *a_scale,
                            const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N,
                            size_t K, uint16_t *y_bf16, float *y_f32, unsigned threads)
{
    if (!c)
        return A4W4_EINVAL;
    switch (c->kind) {
    case A4W4_CONTRACT_EXACT:
        return a4w4_gemm_exact_fast_ex(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16, y_f32,
                                       threads, A4W4_FAST_AUTO, NULL);
    case A4W4_CONTRACT_ORDERED:
        return a4w4_gemm_ordered_fast_ex(a_fp4, a_scale, w_fp4, w_scale, M, N, K, c->split,
                                         y_bf16, y_f32, threads, A4W4_FAST_AUTO, NULL);
    case A4W4_CONTRACT_TREE:
        return a4w4_gemm_tree_fast_ex(a_fp4, a_scale, w_fp4, w_scale, M, N, K, &c->tree, y_bf16,
                                      y_f32, threads, A4W4_FAST_AUTO, NULL);
    default:
        return A4W4_EUNSUPPORTED;
    }
}
