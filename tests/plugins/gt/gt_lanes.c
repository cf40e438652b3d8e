/* gt_lanes.c — ground truth: partial sums kept in several fp32 accumulators. Every block value
 * (the exact dot times its scales, rounded once to fp32 RNE) is added to one of GT_LANES
 * partials, each starting at +0.0f: chunk j of GT_CHUNK consecutive blocks (counted from block
 * 0) goes to partial j mod GT_LANES, as an unrolled loop, SIMD lanes or a round-robin over
 * workgroups deal them. The partials are then added: a chain from +0.0f in partial order, or
 * (GT_PAIRWISE) a pairwise tree over all GT_LANES partials (a horizontal SIMD reduction:
 * (p0 + p1) + (p2 + p3), ...), and the total is rounded to bf16 by RNE.
 * With GT_TILE instead, every tile of GT_TILE blocks (the last one shorter) is summed from
 * +0.0f and the tile totals are chained from +0.0f: per-tile partials whose count grows with K.
 * Contracts (docs/contracts.md §4.2): tree(lanes=2), tree(lanes=8,lanecomb=pairwise),
 * tree(lanes=4,chunk=256), tree(tile=256); GT_BUTTERFLY: the xor-shuffle combine below. */
#include <stdint.h>

#if defined(GT_BUTTERFLY)
/* 8 lanes (block b into lane b mod 8, each chained from +0.0f), then the xor-shuffle
 * reduction of a wavefront: v[l] += v[l ^ 4], then ^ 2, then ^ 1, every lane at once; lane 0's
 * value: lanecomb=xor (contracts §4.2 rule 1a; lanecomb=pairwise pairs neighbours). FPRev's
 * pair probes rebuild it at each K and discover writes it as lanecomb=xor
 * (tests/cli/discover_fprev.sh). */
#define GT_NAME "gt-butterfly"
#define GT_CONTRACT "tree(lanes=8,lanecomb=xor)"
#define GT_LANES 8
#elif defined(GT_TILE)
#define GT_NAME "gt-tiles256"
#define GT_CONTRACT "tree(tile=256)"
#elif GT_LANES == 2
#define GT_NAME "gt-il2"
#define GT_CONTRACT "tree(lanes=2)"
#elif GT_LANES == 8
#define GT_NAME "gt-il8"
#define GT_CONTRACT "tree(lanes=8,lanecomb=pairwise)"
#elif GT_LANES == 4
#define GT_NAME "gt-rr4"
#define GT_CONTRACT "tree(lanes=4,chunk=256)"
#else
#error "build with -DGT_TILE=8, or -DGT_LANES=2|4|8 (GT_CHUNK, GT_PAIRWISE)"
#endif
#ifndef GT_CHUNK
#define GT_CHUNK 1
#endif
#include "gt_kernel.h"

#ifdef GT_TILE
static uint16_t gt_dot(const gt_output *o)
{
    size_t nb = o->K / 32;
    float total = 0.0f;
    for (size_t t0 = 0; t0 < nb; t0 += GT_TILE) {
        float p = 0.0f;
        for (size_t b = t0; b < t0 + GT_TILE && b < nb; b++)
            p += gt_leaf(o, b * 32, 32);
        total += p;
    }
    return gt_bf16_rne(total);
}
#else
static uint16_t gt_dot(const gt_output *o)
{
    size_t nb = o->K / 32;
    float p[GT_LANES];
    for (int l = 0; l < GT_LANES; l++)
        p[l] = 0.0f;
    for (size_t b = 0; b < nb; b++)
        p[(b / GT_CHUNK) % GT_LANES] += gt_leaf(o, b * 32, 32);
#if defined(GT_BUTTERFLY)
    for (int x = GT_LANES / 2; x >= 1; x /= 2) { /* a shuffle: every lane reads the old values */
        float q[GT_LANES];
        for (int l = 0; l < GT_LANES; l++)
            q[l] = p[l] + p[l ^ x];
        memcpy(p, q, sizeof q);
    }
    return gt_bf16_rne(p[0]);
#elif defined(GT_PAIRWISE)
    for (int width = GT_LANES; width > 1; width /= 2) /* GT_LANES a power of two */
        for (int l = 0; l < width / 2; l++)
            p[l] = p[2 * l] + p[2 * l + 1];
    return gt_bf16_rne(p[0]);
#else
    float total = 0.0f;
    for (int l = 0; l < GT_LANES; l++)
        total += p[l];
    return gt_bf16_rne(total);
#endif
}
#endif
