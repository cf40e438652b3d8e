/* a4w4_judge_wgen.h — the weight operand W of a generated case, one 32-block at a time, for
 * a4w4j_gen_w (ref/gpu only; docs/gpu.md, "W made on the device").
 *
 * __host__ __device__, so the CPU stand-in of the judge (tests/gpu/a4w4_judge_cpu.hip) runs
 * these very lines, and a4w4_wgen_check holds their bytes equal to the harness's generator
 * (harness/gen/gen.c, gen_special.c: the reference) for every regime the device path takes.
 * Written from that generator's stated streams, not from its code paths:
 *
 *   - a stream (seed, name, id) starts at s0 = mix(seed ^ mix(FNV-1a(name)) ^ mix(id * G + 1))
 *     (G = 0x9E3779B97F4A7C15, mix splitmix64's finalizer) and its i-th draw (i >= 1) is
 *     mix(s0 + i * G): any draw of any stream is computed directly, so a row's bytes never
 *     depend on which thread or launch makes them;
 *   - row n of W is stream (2 << 40) | n: draw i + 1 makes code byte i (i < K/2), draw
 *     K/2 + 1 + b scale b; the tiny regime's shift is draw 1 of stream (0x72 << 40) | n; the
 *     wide and code0 regimes' block centres are draw b + 1 of stream 0xC3E7E3;
 *   - code bytes: magnitudes (v & 0xFF) % (maxcode + 1) and ((v >> 16) & 0xFF) % (maxcode + 1),
 *     signs bits 11 and 27 (maxcode 7: the low three bits of each byte);
 *   - the per-row overrides of the special and tiny regimes (contracts §4.1): W row 0's last
 *     block +-6 pairs (special), then its sign bits cleared; W row N-1 all -0; the special
 *     regime's NaN block at row min(5, N-1), block (K/32 - 1) / 3.
 *
 * The range regime is not here: the device path never takes it (its limits are the C
 * oracles', contracts §4.3), and its W stays the host's. */
#ifndef A4W4_JUDGE_WGEN_H
#define A4W4_JUDGE_WGEN_H

#include <stdint.h>

#include "a4w4_judge_gpu.h"
#include "a4w4_judge_port.h"

#define A4W4J_GOLDEN 0x9E3779B97F4A7C15ull

/* What every block of one case's W needs (a4w4j_wgen_plan_of). */
typedef struct {
    uint64_t key;       /* seed ^ mix(FNV-1a(name)) */
    uint64_t seed;
    long long N, K;
    int regime;         /* A4W4J_WGEN_* */
    unsigned maxcode;   /* code magnitudes 0..maxcode */
    unsigned spread;    /* exact-regime scales 127..127 + spread */
    uint64_t centre;    /* s0 of the block-centre stream (wide, code0) */
    long long nan_row;  /* special: min(5, N - 1); else -1 */
    int fault;          /* test only (a4w4j_set_wgen_fault): 1 row stream off by one */
} a4w4j_wgen_plan;

A4W4J_HD uint64_t a4w4j_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* s0 of stream id under key (a stream's state before its first draw). */
A4W4J_HD uint64_t a4w4j_stream(uint64_t key, uint64_t id)
{
    return a4w4j_mix(key ^ a4w4j_mix(id * A4W4J_GOLDEN + 1));
}

/* Draw i >= 1 of the stream that starts at s0. */
A4W4J_HD uint64_t a4w4j_draw(uint64_t s0, uint64_t i) { return a4w4j_mix(s0 + i * A4W4J_GOLDEN); }

/* The exact regime's code range and scale spread for K (contracts §4.1: K * maxprod * 2^(2s)
 * < 2^24, the largest maxcode, then the largest s <= 3; maxcode 1 and s 0 at the least). */
A4W4J_HD void a4w4j_wgen_exact_params(long long K, unsigned *maxcode, unsigned *spread)
{
    const unsigned long long maxprod[8] = {0, 1, 4, 9, 16, 36, 64, 144}; /* (2v)^2 */
    for (unsigned mc = 7;; mc--) {
        const unsigned long long bound = (unsigned long long)K * maxprod[mc];
        int s = 3;
        while (s >= 0 && (bound << (2 * s)) >= (1ull << 24))
            s--;
        if (s >= 0 || mc == 1) {
            *maxcode = mc;
            *spread = s < 0 ? 0u : (unsigned)s;
            return;
        }
    }
}

/* Code byte i of a row from its draw v (magnitudes modulo maxcode + 1, signs bits 11, 27). */
A4W4J_HD uint8_t a4w4j_wgen_byte(uint64_t v, unsigned maxcode)
{
    const unsigned d = maxcode + 1;
    const unsigned lo = (unsigned)(v & 0xFF) % d | (unsigned)((v >> 8) & 8);
    const unsigned hi = (unsigned)((v >> 16) & 0xFF) % d | (unsigned)((v >> 24) & 8);
    return (uint8_t)(lo | (hi << 4));
}

/* Scale b of row n (row stream s0) before the regime's per-row overrides. */
A4W4J_HD uint8_t a4w4j_wgen_scale(const a4w4j_wgen_plan *p, uint64_t s0, long long n,
                                  long long b)
{
    const uint64_t v = a4w4j_draw(s0, (uint64_t)(p->K / 2 + 1 + b));
    switch (p->regime) {
    case A4W4J_WGEN_NORMAL:
        return (uint8_t)(123 + v % 9);
    case A4W4J_WGEN_WIDE:
    case A4W4J_WGEN_CODE0: {
        if (p->regime == A4W4J_WGEN_CODE0 && (uint64_t)b == p->seed % (uint64_t)(p->K / 32))
            return 254; /* facing A's code 0 (gen.c) */
        const int cb = 1 + (int)(a4w4j_draw(p->centre, (uint64_t)b + 1) % 254);
        int d = (int)(v % 17) - 8;
        if (((v >> 8) & 15) == 0)
            d += (int)((v >> 12) % 101) - 50;
        const int lo = p->regime == A4W4J_WGEN_CODE0 ? 0 : 1;
        const int code = 254 - cb + 1 + d;
        return (uint8_t)(code < lo ? lo : code > 254 ? 254 : code);
    }
    default: { /* exact, special, tiny */
        unsigned sc = 127 + (unsigned)(v % (p->spread + 1));
        if (p->regime == A4W4J_WGEN_TINY) {
            const uint64_t t = a4w4j_stream(p->key, (0x72ull << 40) | (uint64_t)n);
            const unsigned shift = 64 + (unsigned)(a4w4j_draw(t, 1) % 10); /* 64..73 */
            sc = sc > shift ? sc - shift : 1;
        }
        if (p->regime == A4W4J_WGEN_SPECIAL && n == p->nan_row && b == (p->K / 32 - 1) / 3)
            sc = 0xFF;
        return (uint8_t)sc;
    }
    }
}

/* Block b of row n of W: its 16 code bytes into codes[0..16) and its scale into *scale. */
A4W4J_HD void a4w4j_wgen_block(const a4w4j_wgen_plan *p, long long n, long long b,
                               uint8_t *codes, uint8_t *scale)
{
    const uint64_t s0 = a4w4j_stream(p->key, (2ull << 40) | (uint64_t)(n + (p->fault == 1)));
    const long long nb = p->K / 32;
    const int zs = p->regime == A4W4J_WGEN_SPECIAL || p->regime == A4W4J_WGEN_TINY;
    for (int j = 0; j < 16; j++) {
        const uint64_t i = (uint64_t)(b * 16 + j);
        uint8_t c = a4w4j_wgen_byte(a4w4j_draw(s0, i + 1), p->maxcode);
        if (p->regime == A4W4J_WGEN_SPECIAL && n == 0 && b == nb - 1)
            c = (j & 1) ? 0xF7 : 0x7F; /* +-6 pairs */
        if (zs && n == 0 && p->nan_row != 0)
            c &= 0x77; /* every value >= +0 */
        if (zs && p->N >= 2 && n == p->N - 1 && p->nan_row != n)
            c = 0x88; /* every element -0 */
        codes[j] = c;
    }
    *scale = a4w4j_wgen_scale(p, s0, n, b);
}

/* The plan of case (seed, name) with W [N, K/2] in regime (A4W4J_WGEN_*). */
A4W4J_HD void a4w4j_wgen_plan_of(uint64_t seed, const char *name, long long N, long long K,
                                 int regime, a4w4j_wgen_plan *p)
{
    uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a of the name */
    for (const char *c = name; *c; c++)
        h = (h ^ (uint8_t)*c) * 0x100000001B3ull;
    p->key = seed ^ a4w4j_mix(h);
    p->seed = seed;
    p->N = N;
    p->K = K;
    p->regime = regime;
    p->maxcode = 7;
    p->spread = 0;
    if (regime == A4W4J_WGEN_EXACT || regime == A4W4J_WGEN_SPECIAL || regime == A4W4J_WGEN_TINY)
        a4w4j_wgen_exact_params(K, &p->maxcode, &p->spread);
    p->centre = a4w4j_stream(p->key, 0xC3E7E3ull);
    p->nan_row = regime == A4W4J_WGEN_SPECIAL ? (N > 5 ? 5 : N - 1) : -1;
    p->fault = 0;
}

/* Contracts §3.2: scale (r, c) of [rows, cols] -> its offset in the swizzled layout. */
A4W4J_HD long long a4w4j_swizzle_at(long long cols, long long r, long long c)
{
    const long long d0 = r / 32, d1 = (r % 32) / 16, d2 = r % 16;
    const long long d3 = c / 8, d4 = (c % 8) / 4, d5 = c % 4;
    return ((((d0 * (cols / 8) + d3) * 4 + d5) * 16 + d2) * 2 + d4) * 2 + d1;
}

/* a4w4j_gen_w's kernel (a4w4_judge_wgen.hip; device builds): every 32-block of W of plan p
 * into w [N, K/2], ws [N, K/32] and, when wsw != NULL, the §3.2 swizzle of ws; enqueued on the
 * default stream, the launch's status returned. */
hipError_t a4w4j_launch_gen_w(const a4w4j_wgen_plan *p, uint8_t *w, uint8_t *ws, uint8_t *wsw);

#endif
