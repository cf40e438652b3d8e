/* fault_classes.c — see fault_classes.h. Each rule restates, as a condition on the case, where
 * the fault described in mutants.c can change a checked value. */
#include "fault_classes.h"

#include <string.h>

#include "a4w4_gemm.h"
#include "a4w4_layout.h"

#define RULE(name) static int name(const a4w4_case *c, const void *arg)

/* The ASM layouts exist (contracts §3.1, §3.2): the ASM-base mutants and the layout ones. */
static int asm_ok(const a4w4_case *c)
{
    return a4w4_preshuffle_supported(c->N, c->K) &&
           a4w4_scale_swizzle_supported(2, c->N, c->K / 32);
}

static int normal_mode(const a4w4_case *c, a4w4_scale_mode m)
{
    return c->regime == A4W4_REGIME_NORMAL && c->mode == m;
}

RULE(r_preshuffle) { (void)arg; return a4w4_preshuffle_supported(c->N, c->K); }
RULE(r_always) { (void)c; (void)arg; return 1; }
RULE(r_partial_tile) { (void)arg; return asm_ok(c) && c->M % 32 != 0; }
RULE(r_normal) { (void)arg; return c->regime == A4W4_REGIME_NORMAL; }
RULE(r_code0) { (void)arg; return c->regime == A4W4_REGIME_CODE0; }
RULE(r_mode_ru) { (void)arg; return normal_mode(c, A4W4_ROUND_UP); }
RULE(r_mode_rd) { (void)arg; return normal_mode(c, A4W4_ROUND_DOWN); }
RULE(r_mode_ce) { (void)arg; return normal_mode(c, A4W4_CEIL); }
RULE(r_mode_ev) { (void)arg; return normal_mode(c, A4W4_EVEN); }
RULE(r_k_tail) { (void)arg; return c->K % 256 != 0; }
RULE(r_small_n) { (void)arg; return asm_ok(c) && c->N <= 128 && c->M >= 2 && c->M <= 64; }
RULE(r_two_splits) { (void)arg; return a4w4_split_count(c->K, 2) >= 2; }
RULE(r_odd_m) { (void)arg; return c->M % 2 == 1; }
RULE(r_odd_subtile) { (void)arg; return c->N > 16; }
RULE(r_subnormal)
{
    (void)arg;
    return c->regime == A4W4_REGIME_TINY || (c->regime == A4W4_REGIME_RANGE && c->K >= 1024);
}
RULE(r_zero_sign)
{
    (void)arg;
    return (c->regime == A4W4_REGIME_SPECIAL || c->regime == A4W4_REGIME_TINY) && c->M >= 2;
}
RULE(r_stride) { (void)arg; return (c->K / 32) % 8 != 0 && c->M > 32; }
RULE(r_range) { (void)arg; return c->regime == A4W4_REGIME_RANGE; }
RULE(r_bucket128) { (void)arg; return asm_ok(c) && c->M > 64 && c->M <= 128; }
RULE(r_grid256)
{
    (void)arg;
    return asm_ok(c) && ((c->M + 255) / 256) * ((c->N + 255) / 256) > 256;
}

RULE(r_batch_split)
{
    (void)arg;
    return c->M > 64 && c->K > 256 && c->regime != A4W4_REGIME_EXACT;
}

static const a4w4_fault_class classes[] = {
    {"mut-preshuffle-k1n1", "weight preshuffle exists (N % 16 == 0, K % 64 == 0)", r_preshuffle},
    {"mut-swizzle-d1d4", "every case (the activation-scale shuffle always exists)", r_always},
    {"mut-pad-ff", "ASM layouts, M % 32 != 0 (row pad 0xFF variant)", r_partial_tile},
    {"mut-pad-00", "ASM layouts, M % 32 != 0 (row pad 0x00 variant)", r_partial_tile},
    {"mut-nibble-swap", "normal regime (quantizer bytes)", r_normal},
    {"mut-e8m0-code0", "code0 regime", r_code0},
    {"mut-mode-round_up", "normal (round_up)", r_mode_ru},
    {"mut-mode-round_down", "normal:round_down", r_mode_rd},
    {"mut-mode-ceil", "normal:ceil", r_mode_ce},
    {"mut-mode-even", "normal:even", r_mode_ev},
    {"mut-e2m1-trunc", "normal regime (quantizer bytes)", r_normal},
    {"mut-drop-kblock", "K % 256 != 0", r_k_tail},
    {"mut-rows-small-n", "ASM layouts, N <= 128, 2 <= M <= 64", r_small_n},
    {"mut-splitk-bf16", "two splits of ordered(2) (K > 256)", r_two_splits},
    {"mut-tail-unwritten", "ASM layouts, M % 32 != 0", r_partial_tile},
    {"mut-read-past-a", "M odd", r_odd_m},
    {"mut-bounded-drop-block", "N > 16 (an odd 16-column sub-tile)", r_odd_subtile},
    {"mut-flush-subnormal", "tiny, or range with K >= 1024 (kind 3)", r_subnormal},
    {"mut-zero-sign", "special or tiny, M >= 2 (zero-sign rows)", r_zero_sign},
    {"mut-act-scale-stride", "(K/32) % 8 != 0, M > 32", r_stride},
    {"mut-bf16-saturate", "range (kind 0: totals at and past bf16's largest value)", r_range},
    {"mut-scale-f32-first", "range (sa + sb >= 382 and <= 104)", r_range},
    {"mut-bucket-rows64", "ASM layouts, 64 < M <= 128", r_bucket128},
    {"mut-persistent-skip", "ASM layouts, more than 256 tiles of 256x256", r_grid256},
    {"mut-batch-splitk", "M > 64, K > 256, outside the exact regime (or invariance --measure)",
     r_batch_split},
};

const a4w4_fault_class *a4w4_fault_classes(size_t *n)
{
    *n = sizeof classes / sizeof classes[0];
    return classes;
}

const a4w4_fault_class *a4w4_fault_class_find(const char *name)
{
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (!strcmp(classes[i].mutant, name))
            return &classes[i];
    return NULL;
}
