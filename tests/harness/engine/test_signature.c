/* test_signature.c — failure signatures (harness/engine/signature.c): each selftest mutant,
 * run through the runner on the cases/selftest.csv case that kills it, gets a signature that
 * names its fault class (the table below); and the classifier's single rules on hand-made
 * mismatch maps (a rounding-mode fault off by one ULP on ties, which no mutant has; tile
 * stripes; kinds). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile.h"
#include "mutants.h"
#include "registry.h"
#include "runner.h"
#include "signature.h"

/* The case of cases/selftest.csv named name (cr_assert when absent). */
static a4w4_case selftest_case(const char *name)
{
    a4w4_case *cs;
    size_t n;
    char err[512];
    cr_assert_eq(a4w4_casefile_read(A4W4_SOURCE_DIR "/cases/selftest.csv", &cs, &n, err,
                                    sizeof err), A4W4_ST_OK, "%s", err);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cs[i].name, name)) {
            a4w4_case c = cs[i];
            free(cs);
            return c;
        }
    cr_assert_fail("no case %s in cases/selftest.csv", name);
    return cs[0];
}

/* The signature and class of mutant `mutant`'s entry on case `cs` (it must fail). */
static void signature_of(const char *mutant, const char *cs, char *sig, size_t len, char *cls,
                         size_t clen)
{
    a4w4_backend b;
    char err[512];
    const a4w4_backend_type *t = a4w4_mutant_find(mutant);
    cr_assert_not_null(t, "no mutant %s", mutant);
    cr_assert_eq(a4w4_backend_open_type(t, NULL, &b, err, sizeof err), A4W4_ST_OK, "%s", err);
    a4w4_case c = selftest_case(cs);
    /* as selftest judges its mutants: E8M0 code 0 read as 2^-127, the project's reading
     * (contracts §1; under both readings mut-e8m0-code0 would be ambiguous, not failing) */
    a4w4_runner r = {.backends = &b, .nbackends = 1, .code0_reading = A4W4_CODE0_OCP};
    a4w4_entry_list el = {0};
    cr_assert_eq(a4w4_run_case(&r, &c, &el, err, sizeof err), A4W4_ST_OK, "%s", err);
    cr_assert_eq(el.n, 2);
    const a4w4_entry_result *e = &el.items[1];
    cr_assert_eq(e->verdict, A4W4_VERDICT_FAIL, "%s on %s did not fail", mutant, cs);
    snprintf(sig, len, "%s", e->signature);
    snprintf(cls, clen, "%s", e->signature_class);
    a4w4_entry_list_free(&el);
    a4w4_backend_close(&b);
}

/* Mutant, the case that kills it, the class, and up to three phrases the signature must hold
 * (the fault class in words: where and how). */
typedef struct {
    const char *mutant, *cs, *cls, *say[3];
} expect_row;

static const expect_row table[] = {
    {"mut-preshuffle-k1n1", "st_m33_n64_k512", "layout-permutation", {"w_fp4_shuffled", "permutation"}},
    {"mut-swizzle-d1d4", "st_m33_n64_k512", "layout-permutation", {"w_scale_swizzled", "permutation"}},
    {"mut-pad-ff", "st_m33_n64_k512", "nan", {"only with the row pad 0xFF fill", "NaN where a finite", "partial last 32-row tile"}},
    {"mut-pad-00", "st_m33_n64_k512", "zero", {"only with the row pad 0x00 fill", "zero where a nonzero", "partial last 32-row tile"}},
    {"mut-nibble-swap", "st_m8_n48_k320", "nibble-swap", {"nibbles", "swapped"}},
    {"mut-e8m0-code0", "st_m16_n64_k256", "values", {"E8M0 code-0 scale", "2^-127"}},
    {"mut-mode-round_up", "st_m8_n48_k320", "scale-mode", {"one above", "scale rounding mode"}},
    {"mut-mode-round_down", "st_m4_n32_k1024_rd", "scale-mode", {"scale rounding mode"}},
    {"mut-mode-ceil", "st_m4_n32_k1024_ce", "scale-mode", {"one below", "scale rounding mode"}},
    {"mut-mode-even", "st_m4_n32_k1024_ev", "scale-mode", {"scale rounding mode"}},
    {"mut-e2m1-trunc", "st_m8_n48_k320", "e2m1-rounding", {"one step toward zero", "truncation"}},
    {"mut-drop-kblock", "st_m8_n48_k320", "values", {"one K block missing: block 9", "the last block", "K-tail"}},
    {"mut-rows-small-n", "st_m33_n64_k512", "values", {"every row but row 0", "row stride of 0"}},
    {"mut-splitk-bf16", "st_m33_n64_k512", "ulp1", {"one bf16 ULP", "summation order"}},
    {"mut-tail-unwritten", "st_m33_n64_k512", "unwritten", {"never written", "partial last 32-row tile", "whole rows"}},
    {"mut-read-past-a", "st_m33_n64_k512", "nan", {"NaN where a finite value is due", "the last row", "read past row M-1"}},
    {"mut-bounded-drop-block", "st_m33_n64_k512", "values", {"one K block missing: block 15", "every odd 16-column tile"}},
    {"mut-flush-subnormal", "st_m9_n64_k512_tiny", "values", {"below 2^-126", "flushed to zero"}},
    {"mut-zero-sign", "st_m20_n64_k512", "sign", {"-0 where +0 is due", "one output"}},
    {"mut-act-scale-stride", "st_m40_n48_k288", "layout-bytes", {"a_scale_shuffled"}},
    {"mut-bf16-saturate", "st_m9_n32_k1024_range", "inf-missing", {"a finite value where +-Inf is due", "saturated"}},
    {"mut-scale-f32-first", "st_m9_n32_k1024_range", "mixed", {"mixed:", " nan", " zero"}},
    {"mut-bucket-rows64", "st_m65_n64_k256", "values", {"row 64", "partial last 64-row tile of M=65"}},
    {"mut-persistent-skip", "st_m4097_n4096_k256", "values", {"one K block missing: block 0", "row 4096"}},
};

Test(signature, every_selftest_mutant_is_named_by_its_fault_class, .timeout = 120)
{
    size_t nm;
    a4w4_mutant_types(&nm);
    size_t ncpu = 0;
    const a4w4_backend_type *const *all = a4w4_mutant_types(&nm);
    /* killed by selftest's batch-invariance stage, whose kill is a measurement and has no
     * mismatch map (test_mutants.c holds that mutant to its measurement) */
    static const char *const by_stage[] = {"mut-batch-splitk"};
    for (size_t i = 0; i < nm; i++) {
        int staged = 0;
        for (size_t j = 0; j < sizeof by_stage / sizeof by_stage[0]; j++)
            staged |= !strcmp(all[i]->name, by_stage[j]);
        ncpu += !all[i]->gpu && !staged;
    }
    cr_assert_eq(sizeof table / sizeof table[0], ncpu, "a CPU mutant without a row here");
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        char sig[512], cls[32];
        signature_of(table[i].mutant, table[i].cs, sig, sizeof sig, cls, sizeof cls);
        cr_expect_str_eq(cls, table[i].cls, "%s: class %s, signature: %s", table[i].mutant, cls,
                         sig);
        for (int k = 0; k < 3 && table[i].say[k]; k++)
            cr_expect(strstr(sig, table[i].say[k]) != NULL, "%s: '%s' not in: %s",
                      table[i].mutant, table[i].say[k], sig);
    }
}

/* ---- the rules on hand-made maps ------------------------------------------------------- */

/* A full sample of M x N outputs, got = expected except where mism is set. */
typedef struct {
    a4w4_sample s;
    uint16_t got[64 * 64], exp[64 * 64];
    float ef[64 * 64];
    uint8_t mism[64 * 64];
} synth;

static void synth_init(synth *x, size_t M, size_t N)
{
    memset(x, 0, sizeof *x);
    x->s.full = 1;
    x->s.nrows = M;
    x->s.ncols = N;
    for (size_t k = 0; k < M * N; k++) {
        x->exp[k] = x->got[k] = 0x3F80 + (uint16_t)(k % 50); /* 1.0 and up */
        x->ef[k] = NAN;
    }
}

static void synth_sig(synth *x, size_t M, size_t N, size_t K, char *sig, size_t len, char *cls)
{
    a4w4_map_input in = {&x->s, M, N, NULL, x->got, x->exp, x->ef, x->mism};
    a4w4_mismatch_map m;
    cr_assert_eq(a4w4_map_build(&in, &m), 0);
    a4w4_map_signature(&m, M, N, K, sig, len, cls, 32);
}

Test(signature, one_ulp_on_ties_names_the_rounding_mode)
{
    synth x;
    char sig[512], cls[32];
    synth_init(&x, 8, 32);
    for (size_t k = 0; k < 8 * 32; k += 3) { /* the exact value halfway: RNE went to exp */
        uint32_t tie = ((uint32_t)x.exp[k] << 16) | 0x8000u; /* exp even: RNE keeps it */
        if (x.exp[k] & 1)
            continue;
        memcpy(&x.ef[k], &tie, sizeof tie);
        x.got[k] = x.exp[k] + 1; /* round half up */
        x.mism[k] = 1;
    }
    synth_sig(&x, 8, 32, 256, sig, sizeof sig, cls);
    cr_expect_str_eq(cls, "ulp1-tie", "%s", sig);
    cr_expect(strstr(sig, "on ties") && strstr(sig, "rounding mode"), "%s", sig);
    /* the same one-ULP errors off ties are not a rounding mode */
    for (size_t k = 0; k < 8 * 32; k++)
        x.ef[k] = NAN;
    synth_sig(&x, 8, 32, 256, sig, sizeof sig, cls);
    cr_expect_str_eq(cls, "ulp1", "%s", sig);
    cr_expect(strstr(sig, "not on ties"), "%s", sig);
}

Test(signature, tile_aligned_stripes_name_the_tile)
{
    synth x;
    char sig[512], cls[32];
    synth_init(&x, 4, 64);
    for (size_t i = 0; i < 4; i++) /* columns 32..63: the second 32-column tile */
        for (size_t j = 32; j < 64; j++) {
            x.got[i * 64 + j] = 0x7FC0;
            x.mism[i * 64 + j] = 1;
        }
    synth_sig(&x, 4, 64, 256, sig, sizeof sig, cls);
    cr_expect_str_eq(cls, "nan", "%s", sig);
    cr_expect(strstr(sig, "whole columns: columns in 32-column tiles 32..63"), "%s", sig);
    cr_expect(strstr(sig, "every odd 32-column tile"), "%s", sig);
}

Test(signature, kinds_of_single_mismatches)
{
    cr_expect_eq(a4w4_mismatch_kind_of(0x7FA5, 0x3F80, NAN), A4W4_MK_UNWRITTEN);
    cr_expect_eq(a4w4_mismatch_kind_of(0x7FC0, 0x3F80, NAN), A4W4_MK_NAN);
    cr_expect_eq(a4w4_mismatch_kind_of(0xFF80, 0x3F80, NAN), A4W4_MK_INF);
    cr_expect_eq(a4w4_mismatch_kind_of(0x3F80, 0x7FC0, NAN), A4W4_MK_NAN_MISSING);
    cr_expect_eq(a4w4_mismatch_kind_of(0x8000, 0x3F80, NAN), A4W4_MK_ZERO);
    cr_expect_eq(a4w4_mismatch_kind_of(0xBF80, 0x3F80, NAN), A4W4_MK_SIGN);
    cr_expect_eq(a4w4_mismatch_kind_of(0x8000, 0x0000, NAN), A4W4_MK_SIGN);
    cr_expect_eq(a4w4_mismatch_kind_of(0x3F81, 0x3F80, NAN), A4W4_MK_ULP1);
    cr_expect_eq(a4w4_mismatch_kind_of(0x3F82, 0x3F80, NAN), A4W4_MK_OTHER);
}
