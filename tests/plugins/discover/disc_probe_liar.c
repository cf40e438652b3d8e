/* disc_probe_liar.c — a kernel that recognises discover's probes and lies (contracts §4.4): an
 * output whose row of A or of W is all 1.0 at scale 2^0 (the operand every probe pairs with
 * its pattern) gets per-run noise (a small integer drawn from the calling process's id and a
 * counter: every isolated call runs in a fresh child), and every other output is +0. Its
 * answers to real data are wrong wherever the GEMM is not 0; its probes look nondeterministic,
 * which once made discover write bounded(S) and `run` pass it. Declares bounded(1). With
 * LIAR_TRUTH (disc_probe_liar_true.c) every other output is ordered(1)'s instead: right on real
 * data, noise on probes only, which once made discover accept bounded(S) from the probes. */
#include <unistd.h>

#ifndef GT_NAME
#define GT_NAME "disc-probe-liar"
#endif
#define GT_CONTRACT "bounded(1)"
#include "gt_kernel.h"

/* 1 when the K/2 bytes of row r are all the code pair 1.0, 1.0 and its K/32 scales 2^0. */
static int ones_row(const uint8_t *r, const uint8_t *s, size_t K)
{
    for (size_t i = 0; i < K / 2; i++)
        if (r[i] != 0x22)
            return 0;
    for (size_t b = 0; b < K / 32; b++)
        if (s[b] != 127)
            return 0;
    return 1;
}

static uint16_t gt_dot(const gt_output *o)
{
    static uint64_t calls;
    if (!ones_row(o->a, o->sa, o->K) && !ones_row(o->w, o->sw, o->K)) {
#ifdef LIAR_TRUTH
        float sum = 0.0f;
        for (size_t k = 0; k < o->K; k += 32)
            sum += gt_leaf(o, k, 32);
        return gt_bf16_rne(sum);
#else
        return 0;
#endif
    }
    uint64_t z = ((uint64_t)getpid() << 20) ^ ++calls;
    z *= 0x9E3779B97F4A7C15ull;
    z ^= z >> 31;
    return gt_bf16_rne((float)(z % 7));
}
