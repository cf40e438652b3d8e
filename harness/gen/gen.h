/* gen.h — deterministic case data from (seed, case name): operands per input regime, the
 * ASM layouts derived from them, guard zones around every input, and the tile-aware output
 * sample.
 *
 * Every row of A and of W comes from its own splitmix64 stream keyed by (seed, name, tensor,
 * row), so a row's contents never depend on which other rows are generated. Sampled cases
 * generate only the rows their sample reads (A: the sampled rows; W: the sampled columns'
 * rows); other rows hold filler (codes 0, scale 0x7F) and cost no memory for the codes
 * (large buffers are calloc'ed: untouched pages are never committed). */
#ifndef A4W4_GEN_H
#define A4W4_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "casefile.h"
#include "rng.h"

/* Bytes of guard before and after every input buffer, and their default fill: 0xFF is the
 * NaN scale, so a kernel that reads a scale out of bounds produces NaN outputs. */
#define A4W4_GUARD_BYTES 4096
#define A4W4_GUARD_FILL 0xFF

/* A buffer between two guard zones. data = allocation + A4W4_GUARD_BYTES. */
typedef struct {
    uint8_t *data;
    size_t len;
} a4w4_guarded;

typedef struct {
    size_t M, N, K;
    a4w4_guarded a_fp4, a_scale;  /* [M, K/2], [M, K/32] row-major */
    a4w4_guarded w_fp4, w_scale;  /* [N, K/2], [N, K/32] row-major */
    /* ASM layouts (contracts §3); data NULL when the shape does not allow them */
    a4w4_guarded a_scale_shuffled; /* [rows256(M), cols8(K/32)] with the fills below */
    a4w4_guarded w_fp4_shuffled;   /* N % 16 == 0 and K % 64 == 0 */
    a4w4_guarded w_scale_swizzled; /* N % 32 == 0 and (K/32) % 8 == 0 */
    uint8_t row_fill, col_fill;    /* activation-scale pad fills in use (default 0x7F) */
    uint8_t guard_after;           /* fill of the guard zones after each buffer (0xFF default) */
    unsigned long serial;          /* unique per generated case in this process */
    unsigned version;              /* bumped by every a4w4_case_refill (device caches key on it) */
    int code0;                     /* 1 when E8M0 code 0 occurs in the operands */
    int wsh_deferred;              /* w_fp4_shuffled allocated, not yet written
                                      (a4w4_case_generate_dev, a4w4_case_wsh_complete) */
    int w_deferred;                /* W made on the device: only the sample's rows of w_fp4
                                      and w_scale written here, w_scale_swizzled allocated
                                      unwritten (a4w4_case_generate_devw, _w_complete) */
    a4w4_case w_case;              /* with w_deferred: the case W is completed from */
    /* normal regime: the bf16 activations A was quantized from ([M, K], only generated
     * rows filled; NULL in other regimes), for quantizer backends */
    uint16_t *x;
    /* special and range regimes: the NaN blocks (row of A / row of W with scale 0xFF), or
     * SIZE_MAX */
    size_t nan_a_row, nan_w_row;
} a4w4_case_data;

/* Tile-aware output sample: rows[nrows] x cols[ncols] (sorted, distinct). full = 1 when the
 * sample is every output (rows and cols NULL). */
typedef struct {
    size_t *rows, nrows, *cols, ncols;
    int full;
} a4w4_sample;

/* Generate the operands of case c for the outputs of sample s (full sample: every row).
 * Returns 0 or A4W4_ENOMEM. */
int a4w4_case_generate(const a4w4_case *c, const a4w4_sample *s, a4w4_case_data *d);
/* Every row of A and W (for a device judge that checks every output), while the preshuffled
 * weight (the only layout as large as W) holds the rows of sample s only, as for
 * a4w4_case_generate(c, s, d); the other layouts are whole. Rows are generated on all cores;
 * buffers of 8 MB and more ask the kernel for huge pages (Linux transparent huge pages on
 * madvise: fewer page faults committing them). 0 or A4W4_ENOMEM. */
int a4w4_case_generate_all(const a4w4_case *c, const a4w4_sample *s, a4w4_case_data *d);
/* As a4w4_case_generate_all, for a device judge that preshuffles the whole W on the device
 * (contracts §3.1): the preshuffled weight is allocated but left unwritten, uncommitted
 * (d->wsh_deferred), since no device form reads the host's copy; every host reader of
 * w_fp4_shuffled calls a4w4_case_wsh_complete(d, s) with the same s first, which writes the
 * bytes a4w4_case_generate_all would have (the rows of s). 0 or A4W4_ENOMEM. */
int a4w4_case_generate_dev(const a4w4_case *c, const a4w4_sample *s, a4w4_case_data *d);
/* As a4w4_case_generate_dev, for a device judge that also makes W itself (ref/gpu's
 * a4w4j_gen_w, bit for bit these bytes; docs/gpu.md, "W made on the device"): of W only the
 * rows of sample s are generated (the C oracles' re-check reads no others), the swizzled weight
 * scales are allocated unwritten and d->w_deferred is set, when s is not full and the regime is
 * not range (else as a4w4_case_generate_dev). d->nan_w_row and d->code0 are those of every row.
 * Every host reader of W's other rows (a host-run backend, a bundle, the bounded limits of every
 * output) calls a4w4_case_w_complete(d) first. 0 or A4W4_ENOMEM. */
int a4w4_case_generate_devw(const a4w4_case *c, const a4w4_sample *s, a4w4_case_data *d);
/* Generate every row of d's deferred W and the swizzled scales (the bytes a4w4_case_generate_all
 * would have; d->version bumped: device copies are stale); nothing when none is deferred. Left
 * deferred when out of memory. */
void a4w4_case_w_complete(a4w4_case_data *d);
/* Write d's deferred preshuffled weight (the rows of sample s, as a4w4_case_generate_all does;
 * d->version bumped: device copies of d are stale); nothing when none is deferred. */
void a4w4_case_wsh_complete(a4w4_case_data *d, const a4w4_sample *s);
void a4w4_case_data_free(a4w4_case_data *d);

/* Row `row` of a normal-regime case's A by the plain path the generator used before its fast
 * one (Box-Muller into a scratch x, a4w4_quantize, x copied out), kept to hold the generator
 * to the same bytes: fp4 K/2 bytes, scale K/32 E8M0 (contracts §2), xrow K bf16 (or NULL).
 * A4W4_ENOMEM or a4w4_quantize's status on error. */
int a4w4_gen_normal_a_row_plain(const a4w4_case *c, size_t row, uint8_t *fp4, uint8_t *scale,
                                uint16_t *xrow);

/* Case data from given row-major operands (a golden or exported bundle's): a_fp4 [M, K/2],
 * a_scale [M, K/32], w_fp4 [N, K/2], w_scale [N, K/32] copied between guard zones, the ASM
 * layouts derived from them as a4w4_case_generate does (contracts §3), code0 set. Returns 0
 * or A4W4_ENOMEM. */
int a4w4_case_data_load(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                        const uint8_t *w_scale, size_t M, size_t N, size_t K, a4w4_case_data *d);

/* Rebuild a_scale_shuffled with other pad fills (contracts §3.3) and refill the guard zones after
 * every input with `guard` (0xFF default; other values for the pad-dependence variants). */
void a4w4_case_refill(a4w4_case_data *d, uint8_t row_fill, uint8_t col_fill, uint8_t guard);

/* 1 when every guard zone still holds its fill (nothing wrote out of bounds); else 0 and
 * which names the first damaged buffer. */
int a4w4_case_guards_intact(const a4w4_case_data *d, const char **which);

/* Outputs above this many MACs (M*N*K) are sampled unless full is forced. */
#define A4W4_FULL_CHECK_MACS (1ull << 26)

/* Work cap of a sample: rows * cols * (K/32) stays at or below this (about 0.2 s per
 * implementation on one core), thinning the longer axis by halves (first, last and one index
 * per A4W4_SAMPLE_TILE-tile kept). */
#define A4W4_SAMPLE_BLOCK_DOTS (1ull << 23)

/* The largest output tile along either axis (256 x 256, AITER's gfx950 table): a sample holds
 * one index inside every A4W4_SAMPLE_TILE-tile of each axis, so every tile of that grid (and a
 * persistent kernel's every round) has checked outputs. */
#define A4W4_SAMPLE_TILE 256

/* The sample for an M x N output: per axis the first and last index, one seeded index inside
 * every A4W4_SAMPLE_TILE-tile, the indices before and after each 16-, 32- and 256-boundary
 * (all of them when an axis has at most 32 multiples of that tile, else around the first 4,
 * the last 4 and 16 seeded random ones), plus 8 seeded random indices; then thinned to the
 * work cap, never below the first, the last and the per-tile indices (which may exceed the
 * cap on grids of thousands of tiles). All outputs when M*N*K <= A4W4_FULL_CHECK_MACS or
 * force_full. 0 or A4W4_ENOMEM. */
int a4w4_sample_make(size_t M, size_t N, size_t K, uint64_t seed, const char *name,
                     int force_full, a4w4_sample *s);
void a4w4_sample_free(a4w4_sample *s);

#endif
