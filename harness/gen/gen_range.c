/* gen_range.c — the `range` regime's rows (see gen_range.h for the layout and the values). */
#include "gen_range.h"

#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* Stream ids of this file's draws: apart from gen.c's and gen_special.c's. */
#define STREAM_RANGE_A (((uint64_t)0x73 << 40))
#define STREAM_RANGE_W (((uint64_t)0x74 << 40))

#define SEG A4W4_RANGE_SEGMENT_BLOCKS

/* How a W block of a segment is filled. */
typedef enum {
    W_ZERO,   /* every element 0, a seeded scale in [lo, 254] (its dot is 0 against anything) */
    W_SUM,    /* doubled E2M1 values summing to `value` (from element 0 on), scale sb */
    W_CANCEL, /* pairs (+6, -6): the dot with A's uniform pattern is 0, scale sb */
    W_RANDOM, /* seeded codes, scale sb */
    W_SIXES   /* every element 6.0 with a seeded sign, scale sb */
} w_fill;

typedef struct {
    w_fill fill;
    int value;
    unsigned sb;
} w_block;

/* A's fixed pattern of kind k, block j of its segment: the code of every element and the
 * scale (contracts §1: code 1 is 0.5, code 7 is 6.0). */
static void a_pattern(unsigned k, unsigned j, uint8_t *code, uint8_t *sa)
{
    static const uint8_t codes[A4W4_RANGE_KINDS][SEG] = {
        {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1},
        {7, 7, 7, 7, 1, 1, 1, 1}, {1, 7, 7, 1, 1, 1, 1, 1}};
    static const uint8_t scales[A4W4_RANGE_KINDS][SEG] = {
        {254, 254, 254, 254, 254, 254, 254, 254}, {254, 254, 254, 254, 254, 254, 254, 254},
        {254, 254, 254, 254, 1, 2, 3, 4}, {1, 1, 1, 1, 1, 1, 1, 1}};
    *code = codes[k][j];
    *sa = scales[k][j];
}

/* Kind 0, the bf16 overflow boundary (A 0.5 at 254, so s = 254 + sb). */
static w_block w_kind0(unsigned v, unsigned j)
{
    w_block z = {W_ZERO, 128, 0};
    switch (j) {
    case 0: return (w_block){W_SUM, v == 7 ? 384 : 255, 122};   /* 255 * 2^120; v7 1.5 * 2^128 */
    case 1: return v <= 3 ? (w_block){W_SUM, 1, 121} : z;       /* 2^119 */
    case 2: return v == 1 || v == 2 ? (w_block){W_SUM, v == 1 ? -1 : 1, 106} : z; /* -+2^104 */
    case 3: return v == 3 ? (w_block){W_SUM, -1, 104} : z;      /* -2^102 */
    case 4: return v == 5 ? (w_block){W_SUM, 255, 122}          /* a second 255 * 2^120 */
                   : v == 6 ? (w_block){W_SUM, 2, 129} : z;     /* 2^128: Inf in fp32 */
    case 5: return v == 6 ? (w_block){W_SUM, -2, 129} : z;      /* -2^128 */
    default: return z;
    }
}

/* Kind 1, combined scale past fp32 (A 0.5 at 254). The zero dot products walk s = 384..508:
 * variant v, block j = 2..5 takes step 4v + j - 2 of 32 steps. */
static w_block w_kind1(unsigned v, unsigned j)
{
    switch (j) {
    case 0: return (w_block){W_SUM, 1, 129};  /* s 383: 2^127 */
    case 1: return (w_block){W_SUM, -1, 128}; /* s 382: -2^126 */
    case 6: return (w_block){W_SUM, -3, 128}; /* s 382: -3 * 2^126 */
    case 7: return (w_block){W_SUM, 1, 1 + 18 * v}; /* s 255 + 18 v: 2^(s - 256) */
    default: {
        unsigned step = 4 * v + j - 2; /* 0..31 */
        return (w_block){W_CANCEL, 0, 130 + (124 * step + 15) / 31};
    }
    }
}

/* Kind 2, E8M0 254 beside small scales. */
static w_block w_kind2(unsigned v, unsigned j)
{
    if (j < 4)
        return (w_block){W_RANDOM, 0, 1 + (v + j) % 8};
    return (w_block){W_SIXES, 0, 254};
}

/* Kind 3, the bottom (A scale 1, so s = 1 + sb; A 6.0 in blocks 1 and 2, 0.5 elsewhere). */
static w_block w_kind3(unsigned v, unsigned j)
{
    static const w_block tail[A4W4_RANGE_VARIANTS] = {
        {W_SUM, 1, 103}, {W_SUM, 11, 99}, {W_SUM, 96, 95}, {W_SUM, 384, 93},
        {W_SUM, 1, 104}, {W_ZERO, 1, 0},  {W_SUM, -1, 103}, {W_SUM, 3, 102}};
    w_block z = {W_ZERO, 1, 0};
    switch (j) {
    case 0: return (w_block){W_SUM, 4, 119}; /* s 120: 4 * 2^-136 = 2^-134 */
    case 1: return tail[v];
    case 2: return v == 5 ? (w_block){W_SUM, 1, 1} : z; /* s 2: 12 * 2^-254 */
    default: return z;
    }
}

static w_block w_design(unsigned k, unsigned v, unsigned j)
{
    switch (k) {
    case 0: return w_kind0(v, j);
    case 1: return w_kind1(v, j);
    case 2: return w_kind2(v, j);
    default: return w_kind3(v, j);
    }
}

static void set_code(uint8_t *blk, unsigned e, uint8_t code)
{
    uint8_t *b = &blk[e / 2];
    *b = (e & 1) ? (uint8_t)((*b & 0x0F) | (code << 4)) : (uint8_t)((*b & 0xF0) | code);
}

/* 32 elements whose doubled values sum to t (|t| <= 384): 6.0 (doubled 12) while at least 12 is
 * left, then the rest as one or two of the doubled values {1, 2, 3, 4, 6, 8}, from element 0. */
static void put_sum(uint8_t *blk, int t)
{
    static const uint8_t code_of[13] = {0, 1, 2, 3, 4, 0, 5, 0, 6, 0, 0, 0, 7};
    static const uint8_t split[12][2] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {4, 1},
                                         {6, 0}, {6, 1}, {8, 0}, {8, 1}, {8, 2}, {8, 3}};
    uint8_t sign = t < 0 ? 8 : 0;
    unsigned left = (unsigned)abs(t), e = 0;
    memset(blk, 0, 16);
    for (; left >= 12 && e < 32; left -= 12)
        set_code(blk, e++, (uint8_t)(7 | sign));
    for (int i = 0; i < 2 && left && e < 32; i++)
        if (split[left][i])
            set_code(blk, e++, (uint8_t)(code_of[split[left][i]] | sign));
}

static void fill_w_block(const w_block *w, a4w4_rng *r, uint8_t *blk, uint8_t *sc)
{
    switch (w->fill) {
    case W_ZERO:
        memset(blk, 0, 16);
        *sc = (uint8_t)(w->value + (int)(a4w4_rng_next(r) % (255u - (unsigned)w->value)));
        return;
    case W_SUM:
        put_sum(blk, w->value);
        break;
    case W_CANCEL:
        memset(blk, 0xF7, 16); /* low nibble 6.0 (code 7), high nibble -6.0 (code 15) */
        break;
    case W_RANDOM:
        for (unsigned i = 0; i < 16; i++)
            blk[i] = (uint8_t)a4w4_rng_next(r);
        break;
    case W_SIXES: {
        uint64_t signs = a4w4_rng_next(r);
        for (unsigned e = 0; e < 32; e++)
            set_code(blk, e, (uint8_t)(7 | (((signs >> e) & 1) << 3)));
        break;
    }
    }
    *sc = (uint8_t)w->sb;
}

/* Blocks outside the four segments: seeded codes (W) or zeros (A), seeded scales 1..top. */
static void fill_free_block(int w_side, a4w4_rng *r, uint8_t *blk, uint8_t *sc, unsigned top)
{
    for (unsigned i = 0; i < 16; i++)
        blk[i] = w_side ? (uint8_t)a4w4_rng_next(r) : 0;
    *sc = (uint8_t)(1 + a4w4_rng_next(r) % top);
}

void a4w4_range_row(const a4w4_case *c, int w_side, size_t row, uint8_t *fp4, uint8_t *scale)
{
    size_t nb = c->K / 32;
    a4w4_rng r;
    a4w4_rng_init(&r, c->seed, c->name, (w_side ? STREAM_RANGE_W : STREAM_RANGE_A) | row);
    unsigned kind = (unsigned)(row % A4W4_RANGE_KINDS), neg = (unsigned)(row / 4 % 2);
    unsigned v = (unsigned)(row % A4W4_RANGE_VARIANTS);
    for (size_t b = 0; b < nb; b++) {
        uint8_t *blk = fp4 + b * 16;
        size_t k = b / SEG;
        unsigned j = (unsigned)(b % SEG);
        /* A's zero blocks: every scale, except in kind 3 rows (small: sa + sb stays <= 262,
         * so those outputs meet no combined scale past fp32, only the bottom edge) */
        unsigned top = w_side || kind != 3 ? 254 : 8;
        if (k >= A4W4_RANGE_KINDS || (b / SEG + 1) * SEG > nb) {
            fill_free_block(w_side, &r, blk, &scale[b], top);
        } else if (w_side) {
            w_block w = w_design((unsigned)k, v, j);
            fill_w_block(&w, &r, blk, &scale[b]);
        } else if (k != kind) {
            fill_free_block(0, &r, blk, &scale[b], top);
        } else {
            uint8_t code, sa;
            a_pattern(kind, j, &code, &sa);
            code |= (uint8_t)(neg << 3);
            memset(blk, code | (code << 4), 16);
            scale[b] = sa;
        }
    }
}
