/* quantizers.c — reference quantizer / layout backends, the quantizer lookup and the
 * fingerprint (quantizers.h). */
#include "quantizers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"
#include "mutants.h"

/* ---- reference backends ---------------------------------------------------------------------- */

static int ref_quantize(void *ctx, const uint16_t *x, size_t rows, size_t K, int mode,
                        uint8_t *fp4, uint8_t *scale, char *why, size_t whylen)
{
    (void)ctx;
    int rc = a4w4_quantize(x, A4W4_IN_BF16, rows, K, (a4w4_scale_mode)mode, 0, fp4, scale);
    if (rc != A4W4_OK)
        snprintf(why, whylen, "a4w4_quantize rows %zu K %zu mode %d: %s", rows, K, mode,
                 a4w4_status_str(rc));
    return rc;
}

static int ref_layouts(void *ctx, const a4w4_case_data *d, uint8_t *wsh, uint8_t *wsw,
                       uint8_t *ash, char *why, size_t whylen)
{
    (void)ctx;
    size_t nb = d->K / 32;
    int rc = A4W4_OK;
    const char *what = "";
    if (wsh && (rc = a4w4_preshuffle_view(d->w_fp4.data, d->N, d->K, wsh)) != A4W4_OK)
        what = "preshuffle";
    if (rc == A4W4_OK && wsw && (rc = a4w4_scale_swizzle_view(d->w_scale.data, d->N, nb, wsw)))
        what = "scale swizzle";
    if (rc == A4W4_OK && ash &&
        (rc = a4w4_act_scale_shuffle_view(d->a_scale.data, d->M, nb, d->row_fill, d->col_fill,
                                          ash)))
        what = "activation-scale shuffle";
    if (rc != A4W4_OK)
        snprintf(why, whylen, "%s view M %zu N %zu K %zu: %s", what, d->M, d->N, d->K,
                 a4w4_status_str(rc));
    return rc;
}

const a4w4_backend_type a4w4_quantizer_ref = {
    .name = "ref-quant",
    .what = "ref's a4w4_quantize (bf16 input, the case's scale mode)",
    .contract = "bytes",
    .thread_safe = 1,
    .quantize = ref_quantize};

const a4w4_backend_type a4w4_layout_ref = {
    .name = "ref-layout",
    .what = "ref's view/permute forms of the three layouts (not the closed-form maps)",
    .contract = "bytes",
    .thread_safe = 1,
    .layouts = ref_layouts};

/* ---- lookup ----------------------------------------------------------------------------------- */

const a4w4_backend_type *a4w4_quantizer_find(const char *name, char *names, size_t nameslen)
{
    if (!strcmp(name, "ref") || !strcmp(name, a4w4_quantizer_ref.name))
        return &a4w4_quantizer_ref;
    size_t nm, nb;
    const a4w4_backend_type *const *mt = a4w4_mutant_types(&nm);
    const a4w4_backend_type *const *bt = a4w4_backend_types(&nb);
    for (size_t i = 0; i < nm; i++)
        if (mt[i]->quantize && !strcmp(mt[i]->name, name))
            return mt[i];
    for (size_t i = 0; i < nb; i++)
        if (bt[i]->quantize && !strcmp(bt[i]->name, name))
            return bt[i];
    if (names && nameslen) {
        snprintf(names, nameslen, "ref");
        for (size_t i = 0; i < nb; i++)
            if (bt[i]->quantize)
                snprintf(names + strlen(names), nameslen - strlen(names), ", %s", bt[i]->name);
        for (size_t i = 0; i < nm; i++)
            if (mt[i]->quantize)
                snprintf(names + strlen(names), nameslen - strlen(names), ", %s", mt[i]->name);
    }
    return NULL;
}

/* ---- fingerprint ------------------------------------------------------------------------------- */

static const char *const rule_names[A4W4_E2M1_RULES] = {"RNE", "truncation", "round-half-away"};

const char *a4w4_rounding_name(int rule)
{
    return rule >= 0 && rule < A4W4_E2M1_RULES ? rule_names[rule] : "unknown";
}

/* The E2M1 grid (contracts §1), magnitudes of codes 0..7. */
static const float grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

/* E2M1 code of q under rule (|q| saturates at 6; a negative q keeps the sign bit, also when
 * it rounds to zero, as contracts §2 step 3 says for RNE). Written apart from ref's RNE for the
 * other two rules; RNE itself is ref's a4w4_f32_to_e2m1. */
static uint8_t predict(float q, int rule)
{
    if (rule == A4W4_E2M1_RNE)
        return a4w4_f32_to_e2m1(q);
    uint8_t sign = signbit(q) ? 8 : 0;
    float a = fabsf(q);
    uint8_t c = 0;
    if (rule == A4W4_E2M1_TRUNC) {
        for (uint8_t i = 0; i < 8; i++)
            if (grid[i] <= a)
                c = i;
    } else { /* nearest, ties away from zero */
        for (uint8_t i = 1; i < 8; i++) {
            float mid = (grid[i - 1] + grid[i]) / 2;
            if (a >= mid)
                c = i;
        }
    }
    return (uint8_t)(c | sign);
}

#define SCALE_MANT 6
#define SCALE_EXPS 4
#define ROUND_EXPS 3
#define NBLK (SCALE_MANT * SCALE_EXPS + ROUND_EXPS)

static const float scale_mant[SCALE_MANT] = {1.0f, 1.25f, 1.5f, 1.625f, 1.75f, 1.875f};
static const int scale_exp[SCALE_EXPS] = {-12, 0, 3, 20};
static const int round_exp[ROUND_EXPS] = {-6, 0, 9};
/* Element probes of one rounding block (times 2^e): 4 is the amax; ties of every E2M1
 * interval below 4 with both signs, non-ties (bf16-rounded) and zeros. */
static const float round_vals[32] = {4.0f,  -0.25f, 0.25f, -0.75f, 0.75f, -1.25f, 1.25f, -1.75f,
                                     1.75f, -2.5f,  2.5f,  -3.5f,  3.5f,  0.3f,   -0.3f, 2.9f,
                                     -2.9f, 1.1f,   -1.1f, 0.6f,   -0.6f, 3.25f,  -3.25f, 2.25f,
                                     -2.25f, 0.1f,  -0.1f, 0.0f,   -0.0f, 1.0f,   -4.0f, 0.875f};

/* Fill block `blk` of x. Scale blocks hold their amax (sign alternating with the block) and
 * smaller values; rounding blocks hold round_vals scaled by 2^e. */
static void fill_probe(uint16_t *x, size_t blk)
{
    uint16_t *v = x + blk * 32;
    if (blk < SCALE_MANT * SCALE_EXPS) {
        float amax = ldexpf(4.0f * scale_mant[blk % SCALE_MANT], scale_exp[blk / SCALE_MANT]);
        for (size_t k = 0; k < 32; k++)
            v[k] = a4w4_f32_to_bf16(amax * (float)(k % 9) / 9.0f * ((k & 1) ? -1.0f : 1.0f));
        v[7] = a4w4_f32_to_bf16((blk & 1) ? -amax : amax);
        return;
    }
    int e = round_exp[blk - SCALE_MANT * SCALE_EXPS];
    for (size_t k = 0; k < 32; k++)
        v[k] = a4w4_f32_to_bf16(ldexpf(round_vals[k], e));
}

static float amax_of(const uint16_t *v)
{
    float a = 0.0f;
    for (size_t k = 0; k < 32; k++) {
        float f = fabsf(a4w4_bf16_to_f32(v[k]));
        a = f > a ? f : a;
    }
    return a;
}

static int count_set(const int *v, int n, int *which)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        if (v[i]) {
            c++;
            *which = i;
        }
    return c;
}

/* Which scale modes reproduce every probe block's scale code; fp->mode when exactly one.
 * Returns the number of modes that do. */
static int fingerprint_mode(a4w4_fingerprint *fp, const uint16_t *x, const uint8_t *sc)
{
    for (size_t i = 0; i < SCALE_MANT * SCALE_EXPS; i++) {
        float amax = amax_of(x + i * 32);
        fp->nscale++;
        for (int m = 0; m < A4W4_SCALE_MODE_COUNT; m++)
            fp->scale_match[m] += sc[i] == a4w4_scale_code(amax, (a4w4_scale_mode)m);
    }
    int mok[A4W4_SCALE_MODE_COUNT], nmodes, mode = -1;
    for (int m = 0; m < A4W4_SCALE_MODE_COUNT; m++)
        mok[m] = fp->scale_match[m] == fp->nscale;
    nmodes = count_set(mok, A4W4_SCALE_MODE_COUNT, &mode);
    if (nmodes == 1)
        fp->mode = mode;
    return nmodes;
}

/* The E2M1 rounding rule of the rounding probes, read with the contracts' nibble order and,
 * failing that, swapped; fp->rounding when exactly one rule matches every element. */
static void fingerprint_rounding(a4w4_fingerprint *fp, const uint16_t *x, const uint8_t *fp4,
                                 const uint8_t *sc)
{
    size_t match[2][A4W4_E2M1_RULES];
    memset(match, 0, sizeof match);
    for (size_t i = SCALE_MANT * SCALE_EXPS; i < NBLK; i++) {
        uint8_t s = sc[i];
        float scale = a4w4_e8m0_to_f32(s);
        for (size_t k = 0; k < 32; k++) {
            float q = a4w4_bf16_to_f32(x[i * 32 + k]) / scale;
            for (int sw = 0; sw < 2; sw++) {
                uint8_t got = a4w4_fp4_get(fp4 + i * 16, sw ? k ^ 1 : k);
                for (int r = 0; r < A4W4_E2M1_RULES; r++)
                    match[sw][r] += s != 0xFF && got == predict(q, r);
            }
            fp->nelem += 1;
        }
    }
    int rok[2][A4W4_E2M1_RULES], nr[2], rule[2] = {-1, -1};
    for (int sw = 0; sw < 2; sw++) {
        for (int r = 0; r < A4W4_E2M1_RULES; r++)
            rok[sw][r] = match[sw][r] == fp->nelem;
        nr[sw] = count_set(rok[sw], A4W4_E2M1_RULES, &rule[sw]);
    }
    int sw = nr[0] == 0 && nr[1] == 1;
    fp->nibbles_swapped = sw;
    memcpy(fp->round_match, match[sw], sizeof fp->round_match);
    if (nr[sw] == 1)
        fp->rounding = rule[sw];
}

/* fp->summary: the mode and the rounding, or the match counts when no single one fits. */
static void fingerprint_summary(a4w4_fingerprint *fp, int nmodes)
{
    char ms[192], rs[192];
    if (fp->mode >= 0)
        snprintf(ms, sizeof ms, "%s", a4w4_scale_mode_name((a4w4_scale_mode)fp->mode));
    else
        snprintf(ms, sizeof ms,
                 "no single mode matches%s: scale codes agree with round_up on %zu/%zu probes, "
                 "round_down %zu/%zu, ceil %zu/%zu, even %zu/%zu",
                 nmodes > 1 ? " (several do)" : "", fp->scale_match[0], fp->nscale,
                 fp->scale_match[1], fp->nscale, fp->scale_match[2], fp->nscale,
                 fp->scale_match[3], fp->nscale);
    if (fp->rounding >= 0)
        snprintf(rs, sizeof rs, "%s%s", rule_names[fp->rounding],
                 fp->nibbles_swapped ? ", nibbles swapped (element 2i in the high nibble)" : "");
    else
        snprintf(rs, sizeof rs,
                 "no single rounding matches: RNE %zu/%zu elements, truncation %zu/%zu, "
                 "round-half-away %zu/%zu",
                 fp->round_match[0], fp->nelem, fp->round_match[1], fp->nelem,
                 fp->round_match[2], fp->nelem);
    snprintf(fp->summary, sizeof fp->summary, "%s %s %s", ms, fp->mode >= 0 ? "+" : ";", rs);
}

int a4w4_fingerprint_quantizer(a4w4_backend *b, int asked, a4w4_fingerprint *fp, char *err,
                               size_t errlen)
{
    memset(fp, 0, sizeof *fp);
    fp->asked = asked;
    fp->mode = fp->rounding = -1;
    if (!b->type || !b->type->quantize) {
        snprintf(err, errlen, "%s is not a quantizer backend (no quantize hook)",
                 b->type ? b->name : "(none)");
        return A4W4_EINVAL;
    }
    const size_t K = 32 * NBLK;
    uint16_t x[32 * NBLK];
    uint8_t fp4[16 * NBLK], sc[NBLK];
    for (size_t i = 0; i < NBLK; i++)
        fill_probe(x, i);
    memset(fp4, 0xA5, sizeof fp4);
    memset(sc, 0xA5, sizeof sc);
    char why[512] = "";
    int rc = b->type->quantize(b->ctx, x, 1, K, asked, fp4, sc, why, sizeof why);
    if (rc != A4W4_OK) {
        snprintf(err, errlen, "%s: quantize failed: %s", b->name,
                 why[0] ? why : a4w4_status_str(rc));
        return rc;
    }
    int nmodes = fingerprint_mode(fp, x, sc);
    fingerprint_rounding(fp, x, fp4, sc);
    fingerprint_summary(fp, nmodes);
    return A4W4_OK;
}

int a4w4_fingerprint_conforms(const a4w4_fingerprint *fp)
{
    return fp->mode == fp->asked && fp->rounding == A4W4_E2M1_RNE && !fp->nibbles_swapped;
}
