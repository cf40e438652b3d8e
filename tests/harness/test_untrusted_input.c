/* test_untrusted_input.c — what the fuzz targets of tests/fuzz found, held in the normal build
 * (their inputs are tests/fuzz/corpus/<target>/regress-*, replayed in fuzz builds):
 *   - the ASM heuristic's ratio for tiles up to 65536 and the launch numbers at K = 2^30 are
 *     right (no int overflow; contracts §5.3), and a shape whose tile count leaves AITER's
 *     uint32 is refused by the file-order walk, the any-order set and the route alike;
 *   - a refused tuned table leaves the table as it was (nothing allocated); a lone CR ends a
 *     line of a CSV table as it ends a record;
 *   - every error that quotes input text stays one line (a4w4_quote, the CSV readers, case
 *     files, the results loader);
 *   - the renderers take numbers past INT_MAX without undefined behaviour, and the results
 *     schema bounds the fields they read as ints.
 * Some of these fail only under the sanitizer build (ci/test.sh: build-cov-asan/, the UB
 * itself). Links a4w4_harness. */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "a4w4_quote.h"
#include "a4w4_reports.h"
#include "casefile.h"
#include "test_util.h"

#ifndef A4W4_SOURCE_DIR
#define A4W4_SOURCE_DIR "."
#endif
#ifndef A4W4_BINARY_DIR
#define A4W4_BINARY_DIR "."
#endif

#define SCRATCH A4W4_BINARY_DIR "/test-untrusted-input"
#define KERNELS A4W4_SOURCE_DIR "/cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv"
#define SMALL_RESULTS A4W4_SOURCE_DIR "/tests/data/report_small_results.json"

static char err[1024];

static void assert_one_line(const char *msg)
{
    cr_assert(msg[0] != '\0', "an empty message");
    cr_assert(!strchr(msg, '\n') && !strchr(msg, '\r'), "not one line: %s", msg);
}

/* A kernel table of the given CSV rows (arch gfx950). */
static void load_kernels(a4w4_kernel_table *kt, const char *name, const char *rows)
{
    char text[1024];
    snprintf(text, sizeof text, "tile_M,tile_N,splitK,bpreshuffle,knl_name\n%s", rows);
    const char *path = tu_scratch_file(SCRATCH, name, text);
    cr_assert_eq(a4w4_kernels_load(kt, path, "gfx950", err, sizeof err), A4W4_OK, "%s", err);
}

/* ---- quoting --------------------------------------------------------------------------- */

Test(quote, control_bytes_become_question_marks_one_for_one)
{
    char buf[32];
    cr_assert_str_eq(a4w4_quote("a\nb\rc\td\x7f" "e", buf, sizeof buf), "a?b?c?d?e");
    cr_assert_str_eq(a4w4_quote("plain text, kept", buf, sizeof buf), "plain text, kept");
    cr_assert_str_eq(a4w4_quote("\xc3\xa9", buf, sizeof buf), "\xc3\xa9"); /* UTF-8 kept */
    cr_assert_str_eq(a4w4_quote(NULL, buf, sizeof buf), "(null)");
}

Test(quote, long_text_is_cut_with_an_ellipsis)
{
    char buf[8];
    cr_assert_str_eq(a4w4_quote("1234567", buf, sizeof buf), "1234567"); /* fits exactly */
    cr_assert_str_eq(a4w4_quote("12345678", buf, sizeof buf), "1234...");
    char tiny[2] = "x";
    cr_assert_str_eq(a4w4_quote("ab", tiny, sizeof tiny), "a");
    a4w4_quote("ab", tiny, 0); /* writes nothing */
    cr_assert_str_eq(tiny, "a");
}

Test(quote, ascii_quote_shows_every_byte_outside_printable_ascii_as_an_escape)
{
    char buf[64];
    cr_assert_str_eq(a4w4_quote_ascii("ex\xe2\x80\x8b" "act", buf, sizeof buf),
                     "ex\\xe2\\x80\\x8bact"); /* a zero-width space shown */
    cr_assert_str_eq(a4w4_quote_ascii("\xef\xbb\xbf" "exact", buf, sizeof buf),
                     "\\xef\\xbb\\xbfexact"); /* a UTF-8 byte-order mark shown */
    cr_assert_str_eq(a4w4_quote_ascii("a\nb", buf, sizeof buf), "a\\x0ab");
    cr_assert_str_eq(a4w4_quote_ascii(NULL, buf, sizeof buf), "(null)");
}

Test(quote, ascii_quote_cuts_whole_escapes_only)
{
    char buf[8];
    cr_assert_str_eq(a4w4_quote_ascii("1234567", buf, sizeof buf), "1234567"); /* fits exactly */
    cr_assert_str_eq(a4w4_quote_ascii("12345678", buf, sizeof buf), "1234...");
    cr_assert_str_eq(a4w4_quote_ascii("12\xe2\x80", buf, sizeof buf), "12..."); /* no half \xe2 */
    cr_assert_str_eq(a4w4_quote_ascii("\xe2", buf, sizeof buf), "\\xe2");
    char tiny[2] = "x";
    cr_assert_str_eq(a4w4_quote_ascii("\xe2", tiny, sizeof tiny), "");
}

/* ---- the ASM heuristic and the route at their limits ----------------------------------- */

Test(heuristic, ratio_of_tiles_up_to_65536_is_computed_without_overflow)
{
    a4w4_kernel_table kt;
    load_kernels(&kt, "big_tiles.csv", "46341,65536,0,1,_ZN5aiter_big\n");
    a4w4_heur_params p = {"gfx950", 256, 0, 1};
    a4w4_heur_choice c;
    cr_assert_eq(a4w4_heuristic(&kt, &p, 1, 1, NULL, 0, &c, err, sizeof err), A4W4_OK, "%s",
                 err);
    cr_assert_eq(c.ratio, 27145); /* 46341 * 65536 / (46341 + 65536), integer division */
    a4w4_kernels_free(&kt);
}

/* M x N over 1x1 tiles, one CU: past 2^32 - 1 tiles every entry point refuses with EINVAL
 * naming the limit; at 2^32 - 1 exactly (rounds = UINT_MAX) the walk and the any-order set
 * agree on the kernel. */
Test(heuristic, tile_count_past_uint32_is_refused_by_every_walk)
{
    a4w4_kernel_table kt;
    load_kernels(&kt, "unit_tiles.csv", "1,1,0,1,_ZN5aiter_unit\n");
    a4w4_heur_params p = {"gfx950", 1, 0, 1};
    a4w4_heur_choice c;
    unsigned char any[A4W4_MAX_KERNELS];
    static a4w4_route r;
    cr_assert_eq(a4w4_heuristic(&kt, &p, 65535, 65537, NULL, 0, &c, err, sizeof err), A4W4_OK,
                 "%s", err);
    cr_assert_eq(c.tiles, 4294967295ull);
    cr_assert_eq(a4w4_heuristic_winners_any_order(&kt, &p, 65535, 65537, any, err, sizeof err),
                 A4W4_OK, "%s", err);
    cr_assert(any[0]);
    const int shapes[][2] = {{65536, 65537}, {256, 1 << 30}};
    for (int i = 0; i < 2; i++) {
        int M = shapes[i][0], N = shapes[i][1];
        cr_assert_eq(a4w4_heuristic(&kt, &p, M, N, NULL, 0, &c, err, sizeof err), A4W4_EINVAL);
        cr_assert(strstr(err, "uint32 tile count limit 4294967295"), "%s", err);
        assert_one_line(err);
        cr_assert_eq(a4w4_heuristic_winners_any_order(&kt, &p, M, N, any, err, sizeof err),
                     A4W4_EINVAL);
        cr_assert(strstr(err, "4294967295"), "%s", err);
        cr_assert_eq(a4w4_route_shape(NULL, &kt, &p, M, N, 32, &r, err, sizeof err),
                     A4W4_EINVAL);
    }
    a4w4_kernels_free(&kt);
}

/* `a4w4check route 4096 4096 1073741824`: the split-K-capable 256x256 kernel runs unsplit,
 * k_per_tg = K = 2^30 and grid_z = 1 (K + k_per_tg passed INT_MAX before). */
Test(route, unsplit_split_k_kernel_at_k_2_pow_30)
{
    a4w4_kernel_table kt;
    cr_assert_eq(a4w4_kernels_load(&kt, KERNELS, NULL, err, sizeof err), A4W4_OK, "%s", err);
    a4w4_heur_params p = {"gfx950", 256, 0, 1};
    static a4w4_route r;
    cr_assert_eq(a4w4_route_shape(NULL, &kt, &p, 4096, 4096, 1 << 30, &r, err, sizeof err),
                 A4W4_OK, "%s", err);
    cr_assert_eq(r.split, 1);
    cr_assert_eq(r.k_per_tg, 1 << 30);
    cr_assert_eq(r.grid_z, 1);
    a4w4_kernels_free(&kt);
}

/* ---- tables ---------------------------------------------------------------------------- */

#define TUNED_HEADER "gfx,cu_num,M,N,K,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n"

Test(tuned, refused_load_leaves_the_table_as_it_was)
{
    a4w4_tuned_table t;
    memset(&t, 0, sizeof t);
    const char *bad = tu_scratch_file(SCRATCH, "tuned_bad.csv",
                                      TUNED_HEADER "gfx950,256,16,1024,x,0,0,1,k,1,1,0\n");
    cr_assert_eq(a4w4_tuned_load(&t, bad, err, sizeof err), A4W4_EINVAL);
    cr_assert(!t.rows && !t.n && !t.loaded && !t.files, "a refused first load changed t");
    const char *good = tu_scratch_file(SCRATCH, "tuned_good.csv",
                                       TUNED_HEADER "gfx950,256,16,1024,512,0,0,1,k,1,1,0\n");
    cr_assert_eq(a4w4_tuned_load(&t, good, err, sizeof err), A4W4_OK, "%s", err);
    a4w4_tuned_row *rows = t.rows;
    cr_assert_eq(a4w4_tuned_load(&t, bad, err, sizeof err), A4W4_EINVAL);
    cr_assert(t.rows == rows && t.n == 1 && t.loaded == 1, "a refused merge changed t");
    a4w4_tuned_free(&t);
}

/* A quoted CSV field may hold line breaks; the messages quoting it stay one line. */
Test(tuned, errors_quoting_fields_stay_one_line)
{
    a4w4_tuned_table t;
    memset(&t, 0, sizeof t);
    const char *path = tu_scratch_file(SCRATCH, "tuned_nl.csv",
                                       TUNED_HEADER "gfx950,256,\"1\n6\",1024,512,0,0,1,k,1,1,0\n");
    cr_assert_eq(a4w4_tuned_load(&t, path, err, sizeof err), A4W4_EINVAL);
    assert_one_line(err);
    cr_assert(strstr(err, "M is '1?6', not an integer"), "%s", err);
    path = tu_scratch_file(SCRATCH, "tuned_conflict.csv",
                           TUNED_HEADER "gfx950,256,16,1024,512,0,0,1,\"a\nb\",1,1,0\n"
                                        "gfx950,256,16,1024,512,0,0,1,\"c\rd\",1,1,0\n");
    cr_assert_eq(a4w4_tuned_load(&t, path, err, sizeof err), A4W4_EINVAL);
    assert_one_line(err);
    cr_assert(strstr(err, "conflicting rows"), "%s", err);
    a4w4_tuned_free(&t);
}

/* libcsv ends a record at a lone CR too: the next record is on the next line (a data row is
 * never reported on the header's line); CR LF stays one line end. */
Test(tuned, lone_carriage_return_ends_a_line)
{
    a4w4_tuned_table t;
    memset(&t, 0, sizeof t);
    static const char *const ends[] = {"\r", "\r\n", "\n"};
    for (int i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "gfx,cu_num,M,N,K,kernelId,splitK,us,kernelName,tflops,bw,errRatio%s"
                 "gfx950,256,x,1024,512,0,0,1,k,1,1,0%s",
                 ends[i], ends[i]);
        const char *path = tu_scratch_file(SCRATCH, "tuned_cr.csv", text);
        cr_assert_eq(a4w4_tuned_load(&t, path, err, sizeof err), A4W4_EINVAL);
        cr_assert(strstr(err, "tuned_cr.csv:2:12: M is 'x', not an integer"), "%d: %s", i, err);
    }
}

Test(kernels, duplicate_name_error_stays_one_line)
{
    a4w4_kernel_table kt;
    const char *path = tu_scratch_file(SCRATCH, "kernels_dup.csv",
                                       "tile_M,tile_N,splitK,bpreshuffle,knl_name\n"
                                       "32,128,0,1,\"_ZN\nx\"\n64,128,0,1,\"_ZN\nx\"\n");
    cr_assert_eq(a4w4_kernels_load(&kt, path, "gfx950", err, sizeof err), A4W4_EINVAL);
    assert_one_line(err);
    cr_assert(strstr(err, "kernel _ZN?x is listed again"), "%s", err);
}

/* ---- case files ------------------------------------------------------------------------ */

Test(casefile, carriage_return_inside_a_field_is_shown_as_question_mark)
{
    const char *path = tu_scratch_file(SCRATCH, "cr.csv",
                                       "name,M,N,K,regime,seed,tags\nc1,1,32,3\r2,exact,0,\n");
    a4w4_case *cases = NULL;
    size_t n = 0;
    cr_assert_eq(a4w4_casefile_read(path, &cases, &n, err, sizeof err), A4W4_ST_BADINPUT);
    assert_one_line(err);
    cr_assert(strstr(err, "found '3?2'"), "%s", err);
    path = tu_scratch_file(SCRATCH, "header_ctrl.csv", "name,M,N,K,re\x01gime,seed,tags\n");
    cr_assert_eq(a4w4_casefile_read(path, &cases, &n, err, sizeof err), A4W4_ST_BADINPUT);
    cr_assert(strstr(err, "found 're?gime'"), "%s", err);
}

/* ---- results documents ----------------------------------------------------------------- */

static cJSON *small_results(void)
{
    size_t n;
    uint8_t *text = tu_read_file(SMALL_RESULTS, &n);
    cJSON *doc = cJSON_ParseWithLength((const char *)text, n);
    free(text);
    cr_assert_not_null(doc);
    return doc;
}

/* Set field k of the first entry to v and parse the printed document back. */
static cJSON *reparse_with(cJSON *doc, const char *k, double v)
{
    cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "cases"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(e, k, cJSON_CreateNumber(v));
    char *text = cJSON_PrintUnformatted(doc);
    cJSON *back = a4w4_results_parse(text, strlen(text), "doc.json", err, sizeof err);
    free(text);
    return back;
}

Test(results, schema_string_and_case_names_are_quoted_one_line)
{
    const char *text = "{\"schema\": \"x\\ny\"}";
    cr_assert_null(a4w4_results_parse(text, strlen(text), "doc.json", err, sizeof err));
    assert_one_line(err);
    cr_assert(strstr(err, "schema 'x?y' is not supported"), "%s", err);
    cJSON *doc = small_results();
    cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "cases"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(e, "name", cJSON_CreateString("a\rb"));
    cJSON_ReplaceItemInObjectCaseSensitive(e, "verdict", cJSON_CreateString("maybe"));
    char *printed = cJSON_PrintUnformatted(doc);
    cr_assert_null(a4w4_results_parse(printed, strlen(printed), "doc.json", err, sizeof err));
    assert_one_line(err);
    cr_assert(strstr(err, "[case a?b on "), "%s", err);
    free(printed);
    /* a document key in the violation's path ("contracts" takes any backend name) */
    cJSON_ReplaceItemInObjectCaseSensitive(e, "verdict", cJSON_CreateString("pass"));
    cJSON *contracts = cJSON_GetObjectItemCaseSensitive(doc, "contracts");
    cr_assert_not_null(contracts);
    cJSON_AddItemToObject(contracts, "x\ny", cJSON_CreateString(""));
    printed = cJSON_PrintUnformatted(doc);
    cr_assert_null(a4w4_results_parse(printed, strlen(printed), "doc.json", err, sizeof err));
    assert_one_line(err);
    cr_assert(strstr(err, "/contracts/x?y"), "%s", err);
    free(printed);
    cJSON_Delete(doc);
}

Test(results, int_fields_are_bounded_by_the_schema)
{
    cJSON *doc = small_results();
    static const struct {
        const char *k;
        double ok, bad;
    } f[] = {{"M", 1073741824, 1073741825}, {"N", 1073741824, 1e308},
             {"K", 1073741824, 2147483648.0}, {"max_ulp", 65535, 65536}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        cJSON *back = reparse_with(doc, f[i].k, f[i].ok);
        cr_assert_not_null(back, "%s = %.17g refused: %s", f[i].k, f[i].ok, err);
        cJSON_Delete(back);
        cr_assert_null(reparse_with(doc, f[i].k, f[i].bad), "%s = %.17g accepted", f[i].k,
                       f[i].bad);
        cr_assert(strstr(err, "greater than the maximum"), "%s", err);
        cJSON_Delete(reparse_with(doc, f[i].k, 1)); /* restore a small value */
    }
    cJSON_Delete(doc);
}

/* A document handed to the renderers directly (not through the schema) with numbers past
 * INT_MAX where they read ints: rendered with INT_MAX, no undefined conversion (clang's UBSan
 * in the fuzz build checks the conversion itself). */
Test(results, renderers_clamp_numbers_past_int)
{
    cJSON *doc = small_results(), *e;
    static const char *const keys[] = {"M", "N", "K", "max_ulp"};
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases"))
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            cJSON_ReplaceItemInObjectCaseSensitive(e, keys[i], cJSON_CreateNumber(1e308));
    a4w4_report_opts o = {.reproducible = 1, .source = "doc.json"};
    char *html = a4w4_report_html(doc, &o), *md = a4w4_report_markdown(doc, &o);
    cr_assert_not_null(html);
    cr_assert_not_null(md);
    /* clamped to INT_MAX, the hazard map's cell and the tallies' largest distance */
    cr_assert(strstr(html, "M=2147483647 N=2147483647"), "the hazard map lacks the clamped cell");
    cr_assert(!strstr(html, "-2147483648"), "a wrapped int rendered");
    free(html);
    free(md);
    cJSON_Delete(doc);
}
