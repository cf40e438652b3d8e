/* quantizers.h — quantizer and layout implementations as backends (backend.h's `quantize`
 * and `layouts` kinds), the lookup `fingerprint --backend` uses, and the scale-mode /
 * rounding fingerprint itself.
 *
 * The correct reference implementations live here, outside the default backend table (so
 * `run` does not select them): "ref-quant" wraps ref's a4w4_quantize (contracts §2), "ref-layout"
 * builds the three contracts §3 layouts with ref's view/permute engine — independent of the
 * closed-form index maps the runner's expected bytes come from. The quantizer mutants
 * (mutants.h) and, in GPU builds, hip-quant (hip.c) have the same `quantize` hook, so
 * every one of them can be fingerprinted and run through a4w4_run_case alike. */
#ifndef A4W4_QUANTIZERS_H
#define A4W4_QUANTIZERS_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_quant.h"
#include "backend.h"

/* ref-quant: a4w4_quantize on bf16 input, row-major scales. ref-layout: the view forms
 * (a4w4_preshuffle_view, a4w4_scale_swizzle_view, a4w4_act_scale_shuffle_view with the
 * case's fills). Both contract "bytes". */
extern const a4w4_backend_type a4w4_quantizer_ref, a4w4_layout_ref;

/* The quantizer backend type called `name`: "ref" or "ref-quant", a quantizer mutant
 * ("mut-e2m1-trunc"), or any type of the backend table with a quantize hook ("hip-quant" in
 * GPU builds). NULL when there is none; then names (when non-NULL) receives the accepted
 * names, comma-separated. */
const a4w4_backend_type *a4w4_quantizer_find(const char *name, char *names, size_t nameslen);

/* E2M1 rounding rules the fingerprint tells apart (contracts §2 step 3 demands RNE). */
enum {
    A4W4_E2M1_RNE = 0,       /* round to nearest, ties to the even code */
    A4W4_E2M1_TRUNC = 1,     /* toward zero: the largest grid magnitude <= |q| */
    A4W4_E2M1_HALF_AWAY = 2, /* round to nearest, ties away from zero */
    A4W4_E2M1_RULES = 3
};

/* "RNE", "truncation", "round-half-away". */
const char *a4w4_rounding_name(int rule);

/* What a quantizer implements when asked for one scale mode. */
typedef struct {
    int asked;                                   /* a4w4_scale_mode asked for */
    size_t nscale;                               /* scale probes (blocks) */
    size_t scale_match[A4W4_SCALE_MODE_COUNT];   /* probes whose code equals that mode's */
    int mode;                                    /* the one mode matching every probe, or -1 */
    size_t nelem;                                /* element probes */
    size_t round_match[A4W4_E2M1_RULES];        /* element probes matching each rule */
    int rounding;                                /* the one rule matching every element, or -1 */
    int nibbles_swapped; /* 1: codes only match with element 2i read from the high nibble */
    char summary[400];   /* "round_up + RNE", or "no single mode matches: ..." */
} a4w4_fingerprint;

/* Fingerprint quantizer backend b (opened; a type with a quantize hook) asked for scale mode
 * `asked`. Feeds one bf16 row of crafted 32-element blocks:
 *   scale probes  amax = 4 * m * 2^e for m in {1, 1.25, 1.5, 1.625, 1.75, 1.875} and several
 *                 e: the four modes give code vectors that differ pairwise (contracts §2 step 2;
 *                 e.g. m = 1.5 -> ceil is one above the others, 1.625 splits round_up from
 *                 round_down and even, 1.875 splits even from round_down);
 *   element probes blocks with amax = 4 * 2^e (every mode gives code 127 + e), holding the
 *                 E2M1 ties 0.25, 0.75, 1.25, 1.75, 2.5, 3.5 and non-ties of both signs.
 * Element predictions use the scale the quantizer itself wrote, so the rounding is named
 * whatever mode it uses. Returns A4W4_OK, or the quantize hook's status with err set (one
 * line naming the backend). contracts §2. */
int a4w4_fingerprint_quantizer(a4w4_backend *b, int asked, a4w4_fingerprint *fp, char *err,
                               size_t errlen);

/* 1 when fp names the asked mode, RNE and contracts §1's nibble order. */
int a4w4_fingerprint_conforms(const a4w4_fingerprint *fp);

#endif
