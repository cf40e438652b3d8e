/* test_backends.c — the plugin and bundle backend types (harness/backends/plugin.c,
 * harness/backends/bundle.c, ABI harness/backends/a4w4_plugin.h).
 *
 * Plugins come from tests/plugins (built into A4W4_BINARY_DIR/plugins): the reference plugin
 * must match the ordered(1) oracle (ref/a4w4_gemm.h) bit for bit on generated cases, the bad
 * one must differ in row 0 and nowhere else, and the old-ABI / no-query / missing / non-ELF
 * files must be refused with their one-line reason. Bundles are written from the oracle's
 * outputs with a4w4_bundle_write_outputs and read back through the backend. Expected values
 * always come from the oracle, never from the code under test. Scratch files go under
 * A4W4_BINARY_DIR/backends-test-tmp. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "a4w4_contract.h"
#include "a4w4_gemm.h"
#include "registry.h"
#include "bundle.h"
#include "bundle_dir.h"
#include "gen.h"
#include "mutants.h"
#include "quantizers.h"
#include "safetensors.h"
#include "stream.h"
#include "test_util.h"

#define PLUGIN_DIR A4W4_BINARY_DIR "/plugins"
#define REF_PLUGIN PLUGIN_DIR "/liba4w4_ref_plugin.so"
#define BAD_PLUGIN PLUGIN_DIR "/liba4w4_bad_plugin.so"
#define TREE_PLUGIN PLUGIN_DIR "/liba4w4_tree_plugin.so"
#define OLDABI_PLUGIN PLUGIN_DIR "/liba4w4_oldabi_plugin.so"
#define NOQUERY_PLUGIN PLUGIN_DIR "/liba4w4_noquery_plugin.so"
#define NOCONTRACT_PLUGIN PLUGIN_DIR "/liba4w4_nocontract_plugin.so"
#define BADCONTRACT_PLUGIN PLUGIN_DIR "/liba4w4_badcontract_plugin.so"
#define TMP_DIR A4W4_BINARY_DIR "/backends-test-tmp"

/* ---------------------------------------------------------------- helpers */

/* One generated case with its full ordered(1) oracle output. */
typedef struct {
    a4w4_case c;
    a4w4_sample s;
    a4w4_case_data d;
    uint16_t *yref; /* [M, N] from a4w4_gemm_ordered(S = 1) */
} fixture;

static void fixture_make(fixture *f, const char *name, size_t M, size_t N, size_t K,
                         a4w4_regime regime, uint64_t seed)
{
    memset(f, 0, sizeof *f);
    snprintf(f->c.name, sizeof f->c.name, "%s", name);
    f->c.M = M;
    f->c.N = N;
    f->c.K = K;
    f->c.regime = regime;
    f->c.mode = A4W4_ROUND_UP;
    f->c.seed = seed;
    cr_assert_eq(a4w4_sample_make(M, N, K, seed, name, 1, &f->s), A4W4_OK);
    cr_assert(f->s.full);
    cr_assert_eq(a4w4_case_generate(&f->c, &f->s, &f->d), 0, "generate %s", name);
    f->yref = malloc(M * N * sizeof *f->yref);
    cr_assert_not_null(f->yref);
    cr_assert_eq(a4w4_gemm_ordered(f->d.a_fp4.data, f->d.a_scale.data, f->d.w_fp4.data,
                                   f->d.w_scale.data, M, N, K, 1, f->yref, NULL),
                 A4W4_OK);
}

static void fixture_free(fixture *f)
{
    a4w4_case_data_free(&f->d);
    a4w4_sample_free(&f->s);
    free(f->yref);
}

static uint16_t *poisoned(size_t n)
{
    uint16_t *y = malloc(n * sizeof *y);
    cr_assert_not_null(y);
    for (size_t i = 0; i < n; i++)
        y[i] = A4W4_POISON_BF16;
    return y;
}

/* Run backend b on f with sample s into y; returns the status, why filled. */
static int run_on(a4w4_backend *b, const fixture *f, const a4w4_sample *s, uint16_t *y,
                  char *why, size_t whylen)
{
    why[0] = '\0';
    a4w4_run_args a = {.c = &f->c, .d = &f->d, .s = s, .y = y, .why = why, .whylen = whylen};
    return b->type->run(b->ctx, &a);
}

static void open_ok(const char *spec, a4w4_backend *b)
{
    char err[512] = "";
    int rc = a4w4_backend_open(spec, b, err, sizeof err);
    cr_assert_eq(rc, 0, "open %s: rc %d: %s", spec, rc, err);
}

/* Opening spec must fail as bad input (exit 2) and an err containing want (and naming path). */
static void open_fails(const char *spec, const char *path, const char *want)
{
    a4w4_backend b;
    char err[512] = "";
    int rc = a4w4_backend_open(spec, &b, err, sizeof err);
    cr_assert_eq(rc, A4W4_ST_BADINPUT, "open %s: rc %d (%s)", spec, rc, err);
    cr_assert(strstr(err, want), "open %s: err '%s' lacks '%s'", spec, err, want);
    cr_assert(strstr(err, path), "open %s: err '%s' does not name '%s'", spec, err, path);
    cr_assert_null(strchr(err, '\n'), "err is one line: '%s'", err);
}

/* Full-output comparison; returns the number of mismatches, reporting the first. */
static size_t compare_full(const uint16_t *got, const uint16_t *want, size_t M, size_t N,
                           const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < M * N; i++)
        if (got[i] != want[i] && !bad++)
            cr_log_info("%s: first mismatch at (%zu, %zu): got 0x%04x expected 0x%04x", what,
                        i / N, i % N, got[i], want[i]);
    return bad;
}

/* ---------------------------------------------------------------- contracts */

Test(contract, valid_strings)
{
    const char *good[] = {"ordered(1)", "ordered(2)", "ordered(16)", "ordered(65536)", "exact",
                          "bounded"};
    const char *bad[] = {"",           "ordered",     "ordered()",    "ordered(0)", "ordered(01)",
                         "ordered(-1)", "ordered(1 )", "ordered( 1)", "ordered(1)x", "ordered(65537)",
                         "Exact",      "exact ",      "bounded\n",    "ordered(99999999999999999999)"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        cr_expect(a4w4_contract_valid(good[i]), "'%s' must be valid", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_expect(!a4w4_contract_valid(bad[i]), "'%s' must be invalid", bad[i]);
}

Test(contract, bundle_file_names)
{
    char buf[64];
    cr_assert_eq(a4w4_bundle_file_name("golden/g1", buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "golden__g1.safetensors");
    cr_assert_eq(a4w4_bundle_file_name("a/b/c", buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "a__b__c.safetensors");
    cr_assert_eq(a4w4_bundle_file_name("m16_n1024_k5120", buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "m16_n1024_k5120.safetensors");
    cr_assert_eq(a4w4_bundle_file_name("", buf, sizeof buf), -1);
    cr_assert_eq(a4w4_bundle_file_name("abc", buf, 10), -1); /* "abc.safetensors" needs 16 */
    cr_assert_eq(a4w4_bundle_file_name("abc", buf, 16), 0);
}

/* ---------------------------------------------------------------- plugin */

Test(plugin, ref_plugin_matches_oracle)
{
    fixture f;
    fixture_make(&f, "t", 5, 64, 256, A4W4_REGIME_WIDE, 7);
    a4w4_backend b;
    open_ok("plugin:" REF_PLUGIN, &b);
    cr_assert_str_eq(b.contract, "ordered(1)");
    cr_assert_eq(b.split, 1);
    cr_assert_eq(b.asm_layout, 0);
    uint16_t *y = poisoned(5 * 64);
    char why[512];
    int rc = run_on(&b, &f, &f.s, y, why, sizeof why);
    cr_assert_eq(rc, A4W4_OK, "run: %d %s", rc, why);
    cr_assert_eq(compare_full(y, f.yref, 5, 64, "ref plugin"), 0, "ref plugin != ordered(1)");
    /* not vacuous: the wide regime makes most of these outputs Inf/NaN (outlier scales
     * overflow), but enough are finite and nonzero (54 of 320 for this seed) */
    size_t finite = 0;
    for (size_t i = 0; i < 5 * 64; i++)
        finite += (f.yref[i] & 0x7FFF) != 0 && (f.yref[i] & 0x7F80) != 0x7F80;
    cr_assert_geq(finite, 32, "only %zu finite nonzero outputs", finite);
    a4w4_backend_close(&b);
    free(y);
    fixture_free(&f);
}

Test(plugin, ref_plugin_every_regime_and_edge_shapes)
{
    static const struct {
        size_t M, N, K;
        a4w4_regime r;
    } cases[] = {
        {1, 16, 32, A4W4_REGIME_EXACT},     {3, 40, 96, A4W4_REGIME_NORMAL},
        {33, 96, 768, A4W4_REGIME_WIDE},    {17, 64, 512, A4W4_REGIME_SPECIAL},
        {9, 32, 2048, A4W4_REGIME_CODE0},   {2, 256, 5120, A4W4_REGIME_NORMAL},
    };
    a4w4_backend b;
    open_ok("plugin:" REF_PLUGIN, &b);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char name[32];
        snprintf(name, sizeof name, "e%zu", i);
        fixture f;
        fixture_make(&f, name, cases[i].M, cases[i].N, cases[i].K, cases[i].r, 1000 + i);
        uint16_t *y = poisoned(cases[i].M * cases[i].N);
        char why[512];
        int rc = run_on(&b, &f, &f.s, y, why, sizeof why);
        cr_assert_eq(rc, A4W4_OK, "%s: run %d %s", name, rc, why);
        cr_expect_eq(compare_full(y, f.yref, cases[i].M, cases[i].N, name), 0,
                     "%s (%zux%zux%zu regime %d): ref plugin != ordered(1)", name, cases[i].M,
                     cases[i].N, cases[i].K, (int)cases[i].r);
        free(y);
        fixture_free(&f);
    }
    a4w4_backend_close(&b);
}

Test(plugin, subset_sample_maps_rows_and_cols)
{
    fixture f;
    fixture_make(&f, "t", 5, 64, 256, A4W4_REGIME_WIDE, 7);
    size_t rows[] = {0, 2, 4}, cols[] = {1, 31, 32, 63};
    a4w4_sample s = {rows, 3, cols, 4, 0};
    a4w4_backend b;
    open_ok("plugin:" REF_PLUGIN, &b);
    uint16_t *y = poisoned(12 + 8); /* 8 extra: must stay poisoned */
    char why[512];
    cr_assert_eq(run_on(&b, &f, &s, y, why, sizeof why), A4W4_OK, "%s", why);
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 4; j++)
            cr_expect_eq(y[i * 4 + j], f.yref[rows[i] * 64 + cols[j]],
                         "(%zu, %zu): got 0x%04x expected 0x%04x", rows[i], cols[j],
                         y[i * 4 + j], f.yref[rows[i] * 64 + cols[j]]);
    for (size_t i = 12; i < 20; i++)
        cr_expect_eq(y[i], A4W4_POISON_BF16, "wrote past the sample at %zu", i);
    a4w4_backend_close(&b);
    free(y);
    fixture_free(&f);
}

Test(plugin, bad_plugin_differs_in_row0_only)
{
    fixture f;
    fixture_make(&f, "t", 5, 64, 256, A4W4_REGIME_WIDE, 7);
    a4w4_backend b;
    open_ok("plugin:" BAD_PLUGIN, &b);
    uint16_t *y = poisoned(5 * 64);
    char why[512];
    cr_assert_eq(run_on(&b, &f, &f.s, y, why, sizeof why), A4W4_OK, "%s", why);
    size_t row0 = 0, other = 0;
    for (size_t m = 0; m < 5; m++)
        for (size_t n = 0; n < 64; n++)
            if (y[m * 64 + n] != f.yref[m * 64 + n])
                *(m == 0 ? &row0 : &other) += 1;
    cr_assert_eq(row0, 64, "every output of row 0 must differ (%zu do)", row0);
    cr_assert_eq(other, 0, "rows 1..4 must match (%zu differ)", other);
    a4w4_backend_close(&b);
    free(y);
    fixture_free(&f);
}

Test(plugin, refused_with_a_reason)
{
    open_fails("plugin:" OLDABI_PLUGIN, OLDABI_PLUGIN, "ABI version 0");
    open_fails("plugin:" NOQUERY_PLUGIN, NOQUERY_PLUGIN, "does not export a4w4_plugin_query");
    open_fails("plugin:" NOCONTRACT_PLUGIN, NOCONTRACT_PLUGIN,
               "declares no contract (its info's contract is NULL)");
    /* the contract parser's reason: the part that is wrong, not only the forms allowed */
    open_fails("plugin:" BADCONTRACT_PLUGIN, BADCONTRACT_PLUGIN,
               "declared contract 'tree(bogus=1)': unknown key 'bogus'");
    open_fails("plugin:" TMP_DIR "/does-not-exist.so", "does-not-exist.so", "file not found");
    const char *dir = tu_scratch_dir(TMP_DIR, "plugin-refused");
    char text[4096];
    TU_SNPRINTF(text, "%s/not-a-library.so", dir);
    tu_write_file(text, "this is not an ELF file\n", 24);
    char spec[4200];
    snprintf(spec, sizeof spec, "plugin:%s", text);
    open_fails(spec, text, "not a loadable shared object");
    snprintf(spec, sizeof spec, "plugin:%s", dir);
    open_fails(spec, dir, "not a regular file");
}

/* Two instances of one library: separate init/fini states, both correct, closable in any order. */
Test(plugin, two_instances)
{
    fixture f;
    fixture_make(&f, "t", 5, 64, 256, A4W4_REGIME_WIDE, 7);
    a4w4_backend b1, b2;
    open_ok("plugin:" REF_PLUGIN, &b1);
    open_ok("plugin:" REF_PLUGIN, &b2);
    a4w4_backend_close(&b1);
    uint16_t *y = poisoned(5 * 64);
    char why[512];
    cr_assert_eq(run_on(&b2, &f, &f.s, y, why, sizeof why), A4W4_OK, "%s", why);
    cr_assert_eq(compare_full(y, f.yref, 5, 64, "second instance"), 0);
    a4w4_backend_close(&b2);
    free(y);
    fixture_free(&f);
}

/* ---------------------------------------------------------------- bundle */

Test(bundle, roundtrip_matches_oracle)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "bundle-roundtrip");
    fixture f;
    fixture_make(&f, "golden/t1", 5, 64, 256, A4W4_REGIME_WIDE, 7);
    char err[512] = "";
    cr_assert_eq(a4w4_bundle_write_outputs(dir, f.c.name, 5, 64, f.yref, err, sizeof err), 0,
                 "%s", err);
    char path[4200];
    snprintf(path, sizeof path, "%s/golden__t1.safetensors", dir);
    cr_assert_eq(access(path, R_OK), 0, "exporter must write %s", path);

    /* what the file holds, read independently of the backend */
    a4w4_st_file st;
    cr_assert_eq(a4w4_st_load(path, &st, err, sizeof err), 0, "%s", err);
    const a4w4_st_tensor *t = a4w4_st_find(&st, "y");
    cr_assert_not_null(t);
    cr_assert_eq(t->dtype, A4W4_DT_BF16);
    cr_assert_eq(t->ndim, 2);
    cr_assert_eq(t->shape[0], 5);
    cr_assert_eq(t->shape[1], 64);
    cr_assert_eq(memcmp(t->data, f.yref, 5 * 64 * 2), 0);
    cr_assert_str_eq(a4w4_st_meta(&st, "case"), "golden/t1");
    cr_assert_str_eq(a4w4_st_meta(&st, "format"), A4W4_BUNDLE_OUTPUTS_FORMAT);
    a4w4_st_free(&st);

    char spec[4200];
    snprintf(spec, sizeof spec, "bundle:%s", dir);
    a4w4_backend b;
    open_ok(spec, &b);
    cr_assert_str_eq(b.contract, "ordered(1)");
    cr_assert_eq(b.asm_layout, 0);
    uint16_t *y = poisoned(5 * 64);
    char why[512];
    int rc = run_on(&b, &f, &f.s, y, why, sizeof why);
    cr_assert_eq(rc, A4W4_OK, "run: %d %s", rc, why);
    cr_assert_eq(compare_full(y, f.yref, 5, 64, "bundle"), 0);

    size_t rows[] = {1, 4}, cols[] = {0, 33, 63};
    a4w4_sample s = {rows, 2, cols, 3, 0};
    uint16_t *ys = poisoned(6);
    cr_assert_eq(run_on(&b, &f, &s, ys, why, sizeof why), A4W4_OK, "%s", why);
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++)
            cr_expect_eq(ys[i * 3 + j], f.yref[rows[i] * 64 + cols[j]]);
    a4w4_backend_close(&b);
    free(ys);
    free(y);
    fixture_free(&f);
}

Test(bundle, missing_case_is_skipped_with_the_file_named)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "bundle-missing");
    fixture f;
    fixture_make(&f, "golden/t2", 5, 64, 256, A4W4_REGIME_WIDE, 7);
    char spec[4200];
    snprintf(spec, sizeof spec, "bundle:%s", dir);
    a4w4_backend b;
    open_ok(spec, &b);
    uint16_t *y = poisoned(5 * 64);
    char why[512];
    cr_assert_eq(run_on(&b, &f, &f.s, y, why, sizeof why), A4W4_RUN_SKIP, "%s", why);
    char want[4200];
    snprintf(want, sizeof want, "no output file %s/golden__t2.safetensors", dir);
    cr_assert_str_eq(why, want);
    a4w4_backend_close(&b);
    free(y);
    fixture_free(&f);
}

/* Run the bundle backend on f from dir; expect a refusal (A4W4_RUN_REFUSED: a file of the
 * directory that breaks the output-bundle format is bad input, the run exits 2, never a
 * kernel mismatch; backends/bundle.h) whose why contains want. */
static void bundle_run_fails(const char *dir, const fixture *f, const char *want)
{
    char spec[4200];
    snprintf(spec, sizeof spec, "bundle:%s", dir);
    a4w4_backend b;
    open_ok(spec, &b);
    uint16_t *y = poisoned(f->c.M * f->c.N);
    char why[512];
    int rc = run_on(&b, f, &f->s, y, why, sizeof why);
    cr_assert_eq(rc, A4W4_RUN_REFUSED, "rc %d (%s) must be a refusal (bad input)", rc, why);
    cr_assert(strstr(why, want), "why '%s' lacks '%s'", why, want);
    cr_assert(strstr(why, dir), "why '%s' does not name the file", why);
    a4w4_backend_close(&b);
    free(y);
}

Test(bundle, malformed_files_are_errors)
{
    fixture f;
    fixture_make(&f, "t", 5, 64, 256, A4W4_REGIME_WIDE, 7);
    char err[512] = "", path[4200];

    /* truncated: the data section is shorter than the header says */
    const char *dir = tu_scratch_dir(TMP_DIR, "bundle-truncated");
    cr_assert_eq(a4w4_bundle_write_outputs(dir, "t", 5, 64, f.yref, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/t.safetensors", dir);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(truncate(path, st.st_size - 100), 0);
    bundle_run_fails(dir, &f, "t.safetensors");

    /* empty: 0 bytes */
    dir = tu_scratch_dir(TMP_DIR, "bundle-empty");
    snprintf(path, sizeof path, "%s/t.safetensors", dir);
    tu_write_file(path, "", 0);
    bundle_run_fails(dir, &f, "t.safetensors");

    /* garbage */
    dir = tu_scratch_dir(TMP_DIR, "bundle-garbage");
    snprintf(path, sizeof path, "%s/t.safetensors", dir);
    tu_write_file(path, "garbage", 7);
    bundle_run_fails(dir, &f, "t.safetensors");

    /* shape mismatch: [5, 63] for a [5, 64] case; and [64, 5] */
    dir = tu_scratch_dir(TMP_DIR, "bundle-shape");
    cr_assert_eq(a4w4_bundle_write_outputs(dir, "t", 5, 63, f.yref, err, sizeof err), 0, "%s", err);
    bundle_run_fails(dir, &f, "the case needs [M, N] = [5, 64]");
    cr_assert_eq(a4w4_bundle_write_outputs(dir, "t", 64, 5, f.yref, err, sizeof err), 0, "%s", err);
    bundle_run_fails(dir, &f, "[64, 5]");

    /* wrong dtype, wrong rank, no y */
    dir = tu_scratch_dir(TMP_DIR, "bundle-dtype");
    snprintf(path, sizeof path, "%s/t.safetensors", dir);
    a4w4_st_tensor_in t32 = {"y", A4W4_DT_F32, 2, {5, 32}, f.yref, 0};
    cr_assert_eq(a4w4_st_write(path, &t32, 1, NULL, NULL, 0, err, sizeof err), 0, "%s", err);
    bundle_run_fails(dir, &f, "BF16");
    a4w4_st_tensor_in t1 = {"y", A4W4_DT_BF16, 1, {5 * 64}, f.yref, 0};
    cr_assert_eq(a4w4_st_write(path, &t1, 1, NULL, NULL, 0, err, sizeof err), 0, "%s", err);
    bundle_run_fails(dir, &f, "1 dims");
    a4w4_st_tensor_in tz = {"z", A4W4_DT_BF16, 2, {5, 64}, f.yref, 0};
    cr_assert_eq(a4w4_st_write(path, &tz, 1, NULL, NULL, 0, err, sizeof err), 0, "%s", err);
    bundle_run_fails(dir, &f, "no tensor 'y'");

    /* metadata contract disagreeing with the directory's (default ordered(1)) */
    dir = tu_scratch_dir(TMP_DIR, "bundle-meta-contract");
    snprintf(path, sizeof path, "%s/t.safetensors", dir);
    a4w4_st_tensor_in ty = {"y", A4W4_DT_BF16, 2, {5, 64}, f.yref, 0};
    const char *k[] = {"contract"}, *v[] = {"exact"};
    cr_assert_eq(a4w4_st_write(path, &ty, 1, k, v, 1, err, sizeof err), 0, "%s", err);
    bundle_run_fails(dir, &f, "metadata contract 'exact'");

    /* ... but plain "bounded" in the metadata is the directory's bounded(1) (contracts §4.1) */
    dir = tu_scratch_dir(TMP_DIR, "bundle-meta-bounded");
    snprintf(path, sizeof path, "%s/contract.txt", dir);
    tu_write_file(path, "bounded(1)\n", 11);
    snprintf(path, sizeof path, "%s/t.safetensors", dir);
    const char *vb[] = {"bounded"};
    cr_assert_eq(a4w4_st_write(path, &ty, 1, k, vb, 1, err, sizeof err), 0, "%s", err);
    char spec[4200], why[512];
    snprintf(spec, sizeof spec, "bundle:%s", dir);
    a4w4_backend b;
    open_ok(spec, &b);
    uint16_t *y = poisoned(f.c.M * f.c.N);
    int rc = run_on(&b, &f, &f.s, y, why, sizeof why);
    cr_expect_eq(rc, A4W4_OK, "metadata 'bounded' against bounded(1): %d %s", rc, why);
    a4w4_backend_close(&b);
    free(y);
    fixture_free(&f);
}

Test(bundle, directory_contract)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "bundle-contract");
    char path[4200], spec[4300];
    snprintf(path, sizeof path, "%s/contract.txt", dir);
    snprintf(spec, sizeof spec, "bundle:%s", dir);
    tu_write_file(path, "ordered(4)\n", 11);
    a4w4_backend b;
    open_ok(spec, &b);
    cr_assert_str_eq(b.contract, "ordered(4)");
    cr_assert_eq(b.split, 4);
    a4w4_backend_close(&b);
    tu_write_file(path, "  bounded  \r\n", 13);
    open_ok(spec, &b);
    /* recorded with its S (contracts §4.1: plain "bounded" is bounded(1)) */
    cr_assert_str_eq(b.contract, "bounded(1)");
    cr_assert_eq(b.split, 1);
    a4w4_backend_close(&b);
    tu_write_file(path, "ordered(0)\n", 11);
    open_fails(spec, "contract.txt", "is not one contract line");
    tu_write_file(path, "exact\nbounded\n", 14);
    open_fails(spec, "contract.txt", "is not one contract line");
    tu_write_file(path, "tree(bogus=1)\n", 14); /* the parser's reason too */
    open_fails(spec, "contract.txt", "contract 'tree(bogus=1)': unknown key 'bogus'");

    open_fails("bundle:" TMP_DIR "/no-such-bundle-dir", "no-such-bundle-dir", "no such directory");
    snprintf(spec, sizeof spec, "bundle:%s", path);
    open_fails(spec, path, "not a directory");
}

/* Write dir/manifest.json (an a4w4-outputs/1 manifest with the given extra JSON members). */
static void write_manifest(const char *dir, const char *members)
{
    char path[4200], text[1024];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    snprintf(text, sizeof text, "{\"format\": \"a4w4-outputs/1\"%s%s}", *members ? ", " : "",
             members);
    tu_write_file(path, text, strlen(text));
}

/* A bundle directory is one run of one kernel: a manifest that contradicts itself, the
 * directory's contract.txt, this tool's version or the files present is refused at open, one
 * line naming the file (reproducer: each manifest below opened as bundle:DIR was accepted). */
Test(bundle, manifest_conflicts_are_refused_at_open)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "bundle-manifest");
    char spec[4200], mpath[4200], cpath[4200];
    snprintf(spec, sizeof spec, "bundle:%s", dir);
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    snprintf(cpath, sizeof cpath, "%s/contract.txt", dir);
    write_manifest(dir, "\"cases\": \"t\"");
    open_fails(spec, mpath, "\"cases\" must be an array of case names");
    write_manifest(dir, "\"failed\": {}");
    open_fails(spec, mpath, "\"cases\" must be an array of case names");
    write_manifest(dir, "\"cases\": [\"t\", \"u\", \"t\"]");
    open_fails(spec, mpath, "\"cases\" names case 't' twice");
    write_manifest(dir, "\"cases\": [\"t\"], \"failed\": {\"t\": \"oops\"}");
    open_fails(spec, mpath, "case 't' is both in \"cases\" (written) and in \"failed\"");
    write_manifest(dir, "\"cases\": [\"t\"], \"failed\": {\"u\": 3}");
    open_fails(spec, mpath, "\"failed\": 'u' must map a case name to a string");
    write_manifest(dir, "\"cases\": [\"a\\nb\\u001b[31m\"], \"failed\": {\"a\\nb\\u001b[31m\": \"x\"}");
    open_fails(spec, mpath, "case 'a?b?[31m' is both"); /* control bytes quoted */
    write_manifest(dir, "\"cases\": [], \"tool_version\": \"0.0.1\"");
    open_fails(spec, mpath, "tool_version '0.0.1', this a4w4check is " A4W4_TOOL_VERSION);
    write_manifest(dir, "\"cases\": [], \"contract\": \"bounded\"");
    tu_write_file(cpath, "exact\n", 6);
    open_fails(spec, dir, "manifest.json names contract 'bounded' and contract.txt 'exact'");
    tu_write_file(cpath, "bounded(1)\n", 11); /* the same contract, spelt another way */
    a4w4_backend b;
    open_ok(spec, &b);
    cr_assert_str_eq(b.contract, "bounded(1)");
    a4w4_backend_close(&b);
    /* a file the manifest does not list as written */
    char fpath[4200];
    snprintf(fpath, sizeof fpath, "%s/t.safetensors", dir);
    tu_write_file(fpath, "x", 1);
    write_manifest(dir, "\"cases\": [], \"failed\": {\"t\": \"boom\"}");
    open_fails(spec, dir, "t.safetensors is not among the cases manifest.json lists as written "
               "(it lists that case as failed)");
}

/* Against the run's items (reproducer: a manifest of another matrix, a case no item names,
 * a foreign file: all judged as if they belonged to the run). */
Test(bundle, check_items_refuses_what_no_item_reads)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "bundle-items");
    char spec[4200], fpath[4200], err[512];
    snprintf(spec, sizeof spec, "bundle:%s", dir);
    const char *items[] = {"golden/g1", "t"};
    a4w4_run_identity id = {"00000000000000aa", A4W4_TOOL_VERSION};
    a4w4_backend b;

    write_manifest(dir, "\"cases\": [\"golden/g1\"], \"matrix_hash\": \"00000000000000aa\"");
    snprintf(fpath, sizeof fpath, "%s/golden__g1.safetensors", dir);
    tu_write_file(fpath, "x", 1);
    open_ok(spec, &b);
    cr_assert_not_null(b.type->check_items);
    cr_assert_eq(b.type->check_items(b.ctx, &id, items, 2, err, sizeof err), 0, "%s", err);
    a4w4_run_identity other = {"00000000000000bb", A4W4_TOOL_VERSION};
    cr_assert_neq(b.type->check_items(b.ctx, &other, items, 2, err, sizeof err), 0);
    cr_assert(strstr(err, "manifest.json: matrix_hash 00000000000000aa, this run's matrix is "
                          "00000000000000bb"), "%s", err);
    cr_assert_neq(b.type->check_items(b.ctx, &id, items + 1, 1, err, sizeof err), 0);
    cr_assert(strstr(err, "case 'golden/g1' is no item of this run"), "%s", err);
    a4w4_backend_close(&b);

    remove(fpath); /* no manifest: every file must be some item's */
    snprintf(fpath, sizeof fpath, "%s/manifest.json", dir);
    remove(fpath);
    snprintf(fpath, sizeof fpath, "%s/old.safetensors", dir);
    tu_write_file(fpath, "x", 1);
    open_ok(spec, &b);
    cr_assert_neq(b.type->check_items(b.ctx, &id, items, 2, err, sizeof err), 0);
    cr_assert(strstr(err, "old.safetensors is the output of no item of this run"), "%s", err);
    cr_assert_null(strchr(err, '\n'));
    a4w4_backend_close(&b);
}

Test(bundle, exporter_rejects_bad_input)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "bundle-export-bad");
    uint16_t y[4] = {0};
    char err[512] = "";
    cr_assert_eq(a4w4_bundle_write_outputs(dir, "", 2, 2, y, err, sizeof err), A4W4_ST_BADINPUT);
    cr_assert(strstr(err, "case name"), "%s", err);
    cr_assert_eq(a4w4_bundle_write_outputs(dir, "t", 0, 2, y, err, sizeof err), A4W4_ST_BADINPUT);
    cr_assert(strstr(err, "non-empty"), "%s", err);
    cr_assert_eq(a4w4_bundle_write_outputs(dir, "t", SIZE_MAX / 2, 4, y, err, sizeof err),
                 A4W4_ST_BADINPUT);
    /* a directory that cannot be created: below a regular file */
    char file[4200], sub[4300], made[4400];
    snprintf(file, sizeof file, "%s/plain", dir);
    tu_write_file(file, "x", 1);
    snprintf(sub, sizeof sub, "%s/sub", file);
    cr_assert_eq(a4w4_bundle_write_outputs(sub, "t", 2, 2, y, err, sizeof err), A4W4_ST_IO);
    cr_assert(strstr(err, "plain"), "%s", err);
    /* nested output directories are created */
    snprintf(sub, sizeof sub, "%s/a/b", dir);
    cr_assert_eq(a4w4_bundle_write_outputs(sub, "x/y", 2, 2, y, err, sizeof err), 0, "%s", err);
    snprintf(made, sizeof made, "%s/x__y.safetensors", sub);
    cr_assert_eq(access(made, R_OK), 0, "%s", made);
}

/* Whether the runner may enter a backend from several threads is the type's own declaration
 * (backend.h thread_safe): every CPU type says yes, every GPU type no. */

static void expect_thread_safety(const a4w4_backend_type *t)
{
    if (t->gpu)
        cr_expect_eq(t->thread_safe, 0, "GPU type %s declares thread_safe", t->name);
    else
        cr_expect_eq(t->thread_safe, 1, "CPU type %s is not declared thread_safe", t->name);
}

Test(registry, every_type_declares_whether_it_may_run_concurrently)
{
    size_t n;
    const a4w4_backend_type *const *t = a4w4_backend_types(&n);
    cr_assert_geq(n, 4);
    for (size_t i = 0; i < n; i++)
        expect_thread_safety(t[i]);
    t = a4w4_mutant_types(&n);
    for (size_t i = 0; i < n; i++)
        expect_thread_safety(t[i]);
    expect_thread_safety(&a4w4_quantizer_ref);
    expect_thread_safety(&a4w4_layout_ref);
}

/* A plugin may declare a tree contract (contracts §4.2): recorded in its canonical text, one
 * rule that applies to every shape; its outputs equal the tree oracle's. */
Test(plugin, a_declared_tree_contract_is_recorded_canonically_and_judged_by_the_tree_oracle)
{
    a4w4_backend b;
    open_ok("plugin:" TREE_PLUGIN, &b);
    cr_expect_str_eq(b.contract, "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,"
                                 "acc=fp32,split=1,combine=chain,final=rne)");
    cr_expect_eq(b.split, 1);
    cr_assert_eq(b.contracts.n, 1);
    cr_expect_eq(b.contracts.rules[0].contract.kind, A4W4_CONTRACT_TREE);
    a4w4_backend_close(&b);
}

/* a4w4_contract_valid is the one parser's verdict: tree texts too, strictly. */
Test(contract, tree_texts_are_valid_contracts_when_the_parser_takes_them)
{
    cr_expect(a4w4_contract_valid("tree()"));
    cr_expect(a4w4_contract_valid("tree(leaf=16,fuse=2,split=0/512)"));
    cr_expect(!a4w4_contract_valid("tree(leaf=3)"));
    cr_expect(!a4w4_contract_valid("tree(leaf=16, fuse=2)"));
    cr_expect(!a4w4_contract_valid("tree(leaf=16)junk"));
}

/* A bundle's contract.txt may hold a tree contract (contracts §4.2): recorded canonically, and
 * an output file's metadata contract spelled with its keys in another order is the same. */
Test(bundle, a_tree_contract_line_is_the_directorys_contract)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "bundle-tree-contract");
    char path[4200], spec[4300];
    snprintf(path, sizeof path, "%s/contract.txt", dir);
    snprintf(spec, sizeof spec, "bundle:%s", dir);
    tu_write_file(path, "tree(reduce=pairwise,leaf=16)\n", 30);
    a4w4_backend b;
    open_ok(spec, &b);
    cr_expect_str_eq(b.contract, "tree(leaf=16,order=asc,fuse=1,reduce=pairwise,prec=0,round=rne,"
                                 "acc=fp32,split=1,combine=chain,final=rne)");
    a4w4_backend_close(&b);
    tu_write_file(path, "tree(leaf=16,leaf=8)\n", 21);
    open_fails(spec, "contract.txt", "is not one contract line");
}

