/* disc_combine_random.c — a kernel whose split-combine order changes at random from call to
 * call (for `discover`'s nondeterminism detection, contracts §4.4): K cut into four splits by
 * the contracts §4.1 rule (k_per_split = round_up(ceil(K/4), 256)), each split's 32-block
 * values (exact dot times scales, rounded once to fp32) added in ascending K into an fp32 total
 * from +0.0, rounded to bf16; the four bf16 totals then added with bf16 rounding (as AITER's
 * bf16 atomics) either in a chain from +0.0 ((s0 + s1) + s2) + s3 or pairwise
 * (s0 + s1) + (s2 + s3), chosen per call from the calling process's id (the harness
 * runs every call of an isolated plugin in a fresh child). Across runs the order changes, and
 * on random data too (bf16 adds in another order round differently): `discover` must answer
 * bounded(4), whose model this is (contracts §4.1). Declares
 * bounded(4). Built from the ground-truth plumbing (gt/gt_kernel.h). */
#include <unistd.h>

#define GT_NAME "disc-combine-random"
#define GT_CONTRACT "bounded(4)"
#include "gt_kernel.h"

static int pairwise_call(void)
{
    uint64_t z = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull;
    z ^= z >> 29;
    return (int)((z * 0xBF58476D1CE4E5B9ull) >> 63);
}

/* f rounded to bf16 by RNE, as a float. */
static float bf16f(float f)
{
    uint32_t u = (uint32_t)gt_bf16_rne(f) << 16;
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

static uint16_t gt_dot(const gt_output *o)
{
    size_t per = ((o->K + 3) / 4 + 255) / 256 * 256;
    float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (size_t k = 0; k < o->K; k += 32)
        part[k / per] += gt_leaf(o, k, 32);
    for (int i = 0; i < 4; i++) /* bf16 partials, added with bf16 rounding (as bf16 atomics) */
        part[i] = bf16f(part[i]);
    float sum = 0.0f;
    if (pairwise_call())
        sum = bf16f(bf16f(part[0] + part[1]) + bf16f(part[2] + part[3]));
    else
        sum = bf16f(bf16f(bf16f(bf16f(sum + part[0]) + part[1]) + part[2]) + part[3]);
    return gt_bf16_rne(sum);
}
