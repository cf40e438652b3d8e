/* test_results.c — the results document's verdict and counts (harness/io/results.c,
 * contracts §4.1: PASS only over complete data) and the stream's item count
 * (harness/io/stream.c). Documents are built here entry by entry. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results.h"
#include "stream.h"

static cJSON *doc_with(const char *const *backends, size_t nb)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "schema", A4W4_RESULTS_SCHEMA);
    cJSON *b = cJSON_AddArrayToObject(d, "backends");
    for (size_t i = 0; i < nb; i++)
        cJSON_AddItemToArray(b, cJSON_CreateString(backends[i]));
    cJSON_AddArrayToObject(d, "cases");
    return d;
}

static void entry(cJSON *d, const char *name, const char *backend, const char *verdict,
                  double checked)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddStringToObject(e, "backend", backend);
    cJSON_AddStringToObject(e, "verdict", verdict);
    cJSON_AddNumberToObject(e, "checked_outputs", checked);
    cJSON_AddItemToArray(cJSON_GetObjectItem(d, "cases"), e);
}

static const char *str(const cJSON *d, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(d, k);
    return cJSON_IsString(v) ? v->valuestring : "(absent)";
}

static double count(const cJSON *d, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "counts"), k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *const two[] = {"oracle", "cpu-asm"};

Test(judge, complete_and_compared_is_pass_with_its_counts)
{
    cJSON *d = doc_with(two, 2);
    entry(d, "a", "oracle", "n/a", 64); /* the oracle's self-checks are not required */
    entry(d, "a", "cpu-asm", "pass", 64);
    entry(d, "b", "oracle", "pass", 32);
    entry(d, "b", "cpu-asm", "n/a", 0);
    a4w4_completeness c = {2, 2};
    cr_expect_eq(a4w4_results_judge(d, &c), A4W4_DOC_PASS);
    cr_expect_str_eq(str(d, "verdict"), "PASS");
    cr_expect_str_eq(str(d, "verdict_reason"), "every expected item recorded (2 of 2), every "
                                                "backend compared outputs (96 outputs checked), "
                                                "no failure");
    cr_expect_eq(count(d, "entries"), 4);
    cr_expect_eq(count(d, "pass"), 2);
    cr_expect_eq(count(d, "n/a"), 2);
    cr_expect_eq(count(d, "outputs_checked"), 96, "pass and fail entries only");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "counts"),
                                                        "backends_unchecked")),
                 0);
    /* recorded before the entries, so a reader sees it first */
    const cJSON *last = d->child;
    while (last->next)
        last = last->next;
    cr_expect_str_eq(last->string, "cases");
    cJSON_Delete(d);
}

Test(judge, a_backend_with_every_entry_na_or_skip_is_incomplete)
{
    static const char *const three[] = {"oracle", "cpu-fallback", "bundle:empty"};
    cJSON *d = doc_with(three, 3);
    entry(d, "a", "oracle", "pass", 64);
    entry(d, "a", "cpu-fallback", "pass", 64);
    entry(d, "a", "bundle:empty", "n/a", 0);
    entry(d, "b", "bundle:empty", "skip", 0);
    entry(d, "c", "bundle:empty", "pass", 0); /* a pass that checked nothing compared nothing */
    a4w4_completeness c = {3, 3};
    cr_expect_eq(a4w4_results_judge(d, &c), A4W4_DOC_INCOMPLETE);
    cr_expect_str_eq(str(d, "verdict"), "INCOMPLETE");
    cr_expect_str_eq(str(d, "verdict_reason"),
                     "backend bundle:empty made no comparison (every entry n/a or skip); "
                     "1 entry skipped (first: b on bundle:empty: no note)");
    const cJSON *u = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "counts"), "backends_unchecked");
    cr_expect_eq(cJSON_GetArraySize(u), 1);
    cr_expect_str_eq(cJSON_GetArrayItem(u, 0)->valuestring, "bundle:empty");
    cJSON_Delete(d);
}

Test(judge, a_selected_backend_without_any_entry_is_incomplete)
{
    static const char *const three[] = {"oracle", "cpu-asm", "cpu-fallback"};
    cJSON *d = doc_with(three, 3);
    entry(d, "a", "cpu-asm", "pass", 8);
    a4w4_completeness c = {1, 1};
    cr_expect_eq(a4w4_results_judge(d, &c), A4W4_DOC_INCOMPLETE);
    cr_expect_str_eq(str(d, "verdict_reason"),
                     "backend cpu-fallback made no comparison (every entry n/a or skip)");
    cJSON_Delete(d);
}

Test(judge, missing_items_are_incomplete_never_pass)
{
    cJSON *d = doc_with(two, 2);
    entry(d, "a", "cpu-asm", "pass", 64);
    a4w4_completeness c = {7, 3};
    cr_expect_eq(a4w4_results_judge(d, &c), A4W4_DOC_INCOMPLETE);
    cr_expect_str_eq(str(d, "verdict_reason"), "3 of 7 expected items recorded");
    cr_expect_eq(count(d, "expected_items"), 7);
    cr_expect_eq(count(d, "recorded_items"), 3);
    /* more recorded than expected is not complete either */
    a4w4_completeness more = {3, 4};
    cr_expect_eq(a4w4_results_judge(d, &more), A4W4_DOC_INCOMPLETE);
    cr_expect_str_eq(str(d, "verdict_reason"), "4 of 3 expected items recorded");
    cJSON_Delete(d);
}

Test(judge, a_failure_is_fail_and_says_what_else_is_missing)
{
    cJSON *d = doc_with(two, 2);
    entry(d, "a", "cpu-asm", "fail", 64);
    entry(d, "b", "cpu-asm", "fail", 64);
    a4w4_completeness c = {2, 2};
    cr_expect_eq(a4w4_results_judge(d, &c), A4W4_DOC_FAIL);
    cr_expect_str_eq(str(d, "verdict_reason"), "2 failing entries");
    a4w4_completeness short_by_one = {3, 2};
    cr_expect_eq(a4w4_results_judge(d, &short_by_one), A4W4_DOC_FAIL);
    cr_expect_str_eq(str(d, "verdict_reason"),
                     "2 failing entries; also incomplete: 2 of 3 expected items recorded");
    /* judged again: one verdict, one reason, one counts */
    int n = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, d) n += !strcmp(f->string, "verdict") || !strcmp(f->string, "counts");
    cr_expect_eq(n, 2);
    cJSON_Delete(d);
}

/* A scratch directory under the build tree, emptied. */
static void scratch(char *dir, size_t len, const char *name)
{
    snprintf(dir, len, "%s/test-scratch/%s", A4W4_BINARY_DIR, name);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    cr_assert_eq(system(cmd), 0);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

Test(judge, results_write_judges_a_document_without_a_verdict_over_its_own_items)
{
    char dir[4096], err[512], path[4200];
    scratch(dir, sizeof dir, "judge_write");
    cJSON *d = doc_with(two, 2);
    entry(d, "a", "oracle", "pass", 8);
    entry(d, "a", "cpu-asm", "pass", 8);
    entry(d, "b", "cpu-asm", "pass", 8);
    cr_assert_eq(a4w4_results_write(d, dir, err, sizeof err), A4W4_ST_OK, "%s", err);
    cr_expect_str_eq(str(d, "verdict"), "PASS");
    cr_expect_eq(count(d, "expected_items"), 2, "distinct case names");
    snprintf(path, sizeof path, "%s/results.json", dir);
    cr_expect(strstr(slurp(path), "\"verdict\":\t\"PASS\"") != NULL);
    snprintf(path, sizeof path, "%s/summary.md", dir);
    cr_expect(strstr(slurp(path), "**Verdict: PASS**") != NULL);
    cJSON_Delete(d);
}

/* Write text as DIR/results.jsonl (dir: a fresh scratch directory named tag). */
static void stream_file(char *dir, size_t len, const char *tag, const char *text)
{
    char path[4200];
    scratch(dir, len, tag);
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

#define HEADER_2 "{\"a4w4check_header\":{\"schema\":\"a4w4check-results/1\",\"shard_items\":5," \
                 "\"backends\":[\"oracle\",\"cpu-asm\"],\"contracts\":{\"cpu-asm\":\"ordered(1)\"}}}\n"
#define ENTRY(n, b) "{\"name\":\"" n "\",\"backend\":\"" b "\",\"verdict\":\"n/a\"}"

/* Items are counted once each, and only with every entry the header promises: a repeated
 * line in place of a missing item, or a line that lost an entry, is dropped (reproducer: a
 * shard whose results.jsonl has line 3 copied over line 4 merged as "36 of 36 items"). */
Test(stream, load_counts_distinct_complete_items)
{
    char dir[4096], err[512];
    stream_file(dir, sizeof dir, "stream_items", HEADER_2
        "{\"case\":\"a\",\"entries\":[" ENTRY("a", "oracle") "," ENTRY("a", "cpu-asm") "]}\n"
        "{\"case\":\"b\",\"entries\":[]}\n"
        "{\"case\":\"a\",\"entries\":[" ENTRY("a", "oracle") "," ENTRY("a", "cpu-asm") "]}\n"
        "{\"case\":\"d\",\"entries\":[" ENTRY("d", "oracle") "]}\n"
        "{\"case\":\"e\",\"entries\":[" ENTRY("e", "oracle") "," ENTRY("x", "cpu-asm") "]}\n"
        "{\"case\":\"golden/q\",\"entries\":[" ENTRY("golden/q", "oracle") "]}\n"
        "{\"case\":\"c\",\"entr"); /* torn by a kill */
    cJSON *h = NULL;
    a4w4_stream_tally t;
    cJSON *doc = a4w4_stream_load_items(dir, &h, &t, err, sizeof err);
    cr_assert_not_null(doc, "%s", err);
    cr_expect_eq(t.items, 2, "a and golden/q (a quantization bundle: the oracle alone)");
    cr_expect_eq(t.dropped, 4, "b (no entries), a again, d (1 of 2), e (foreign entry)");
    cr_expect(strstr(t.first_dropped, "line 3 (b): no entries") != NULL, "%s", t.first_dropped);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "cases")), 3, "a's two, golden/q's");
    cJSON_Delete(doc);
    cJSON_Delete(h);
}

/* Item lines are written one write each but fsync'd at most once a second and at close: an
 * fsync per item cost 13 ms on a loaded CI disk, more than a small case's checks. Every line
 * is there as written; 40 quick items take at most two fsyncs, the close one more. */
Test(stream, item_lines_fsynced_once_a_second_and_at_close)
{
    char dir[4096], err[512] = "";
    scratch(dir, sizeof dir, "stream_sync");
    cJSON *hdr = cJSON_CreateObject(), *done = NULL;
    cJSON_AddStringToObject(hdr, "schema", A4W4_RESULTS_SCHEMA);
    a4w4_stream st;
    cr_assert_eq(a4w4_stream_open(&st, dir, hdr, 0, &done, NULL, err, sizeof err), A4W4_ST_OK,
                 "%s", err);
    cJSON *entries = cJSON_CreateArray();
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", i);
        cr_assert_eq(a4w4_stream_case(&st, name, entries, err, sizeof err), A4W4_ST_OK, "%s", err);
    }
    cr_expect_leq(st.syncs, 2, "%lu fsyncs for 40 items written at once", st.syncs);
    const unsigned long before = st.syncs;
    a4w4_stream_close(&st);
    cr_expect_eq(st.syncs, before + 1, "the close fsyncs what is left");
    char path[4200], line[256];
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    int n = 0;
    while (fgets(line, sizeof line, f))
        n++;
    fclose(f);
    cr_expect_eq(n, 41, "the header and 40 item lines");
    cJSON_Delete(entries);
    cJSON_Delete(done);
    cJSON_Delete(hdr);
}

/* An entry whose own fields contradict its verdict makes the stream unreadable (reproducer:
 * an entry edited to "pass" with 12 mismatches merged as PASS). */
Test(stream, load_refuses_an_entry_that_contradicts_its_verdict)
{
    char dir[4096], err[512] = "";
    stream_file(dir, sizeof dir, "stream_contra", HEADER_2
        "{\"case\":\"a\",\"entries\":[" ENTRY("a", "oracle") ",{\"name\":\"a\",\"backend\":"
        "\"cpu-asm\",\"verdict\":\"pass\",\"checked_outputs\":64,\"mismatches\":12}]}\n");
    cJSON *h = NULL;
    a4w4_stream_tally t;
    cr_expect_null(a4w4_stream_load_items(dir, &h, &t, err, sizeof err));
    cr_expect(strstr(err, "(case a on cpu-asm) records verdict pass with 12 mismatches") != NULL,
              "%s", err);
}

/* A FIFO in place of results.jsonl is refused at once, never read (reproducer: mkfifo
 * shard/results.jsonl; merge blocked forever). */
Test(stream, load_refuses_a_fifo_without_blocking, .timeout = 10)
{
    char dir[4096], path[4200], err[512] = "";
    scratch(dir, sizeof dir, "stream_fifo");
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    unlink(path);
    cr_assert_eq(mkfifo(path, 0600), 0);
    cJSON *h = NULL;
    a4w4_stream_tally t;
    cr_expect_null(a4w4_stream_load_items(dir, &h, &t, err, sizeof err));
    cr_expect(strstr(err, "not a regular file (a FIFO)") != NULL, "%s", err);
}

/* One skipped entry among comparisons (a bundle with no output file for one case) is an
 * expected comparison not made: INCOMPLETE, and the reason names it. */
Test(judge, one_skipped_entry_among_passes_is_incomplete)
{
    static const char *const two[] = {"oracle", "bundle:x"};
    cJSON *d = doc_with(two, 2);
    entry(d, "a", "oracle", "pass", 64);
    entry(d, "a", "bundle:x", "pass", 64);
    entry(d, "b", "oracle", "pass", 64);
    entry(d, "b", "bundle:x", "skip", 0);
    a4w4_completeness c = {2, 2};
    cr_expect_eq(a4w4_results_judge(d, &c), A4W4_DOC_INCOMPLETE);
    cr_expect_str_eq(str(d, "verdict_reason"), "1 entry skipped (first: b on bundle:x: no note)");
    cJSON_Delete(d);
}

/* One entry with judged counts (bit-exact, in bound, not judged) in a regime. */
static void judged_entry(cJSON *d, const char *backend, const char *regime, double bx,
                         double ib, double nj)
{
    entry(d, regime, backend, nj && !bx && !ib ? "n/a" : "pass", bx + ib);
    cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "cases"),
                                  cJSON_GetArraySize(cJSON_GetObjectItem(d, "cases")) - 1);
    cJSON_AddStringToObject(e, "regime", regime);
    cJSON_AddNumberToObject(e, "judged_bit_exact", bx);
    cJSON_AddNumberToObject(e, "judged_in_bound", ib);
    cJSON_AddNumberToObject(e, "not_judged", nj);
}

static double judged(const cJSON *d, const char *backend, const char *regime, const char *k)
{
    const cJSON *r = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(d, "judged"), backend), regime);
    const cJSON *v = cJSON_GetObjectItem(r, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The document's judged table sums the entries' judged_* per backend and regime (a
 * ":mode" suffix dropped) and over all; the oracle's self-checks and entries without the
 * fields (layouts, quantizers) are left out. */
Test(judge, judged_sums_each_backends_outputs_per_regime_and_over_all)
{
    static const char *const three[] = {"oracle", "k", "b"};
    cJSON *d = doc_with(three, 3);
    judged_entry(d, "k", "exact", 100, 0, 0);
    judged_entry(d, "k", "wide", 3, 0, 97);
    judged_entry(d, "k", "wide", 0, 0, 50);
    judged_entry(d, "k", "normal:ceil", 40, 0, 2);
    judged_entry(d, "b", "wide", 0, 60, 0);
    judged_entry(d, "oracle", "wide", 10, 0, 0);
    entry(d, "lay", "layouts", "pass", 999); /* no judged fields */
    a4w4_completeness c = {7, 7};
    a4w4_results_judge(d, &c);
    cr_expect_eq(judged(d, "k", "all", "outputs"), 292);
    cr_expect_eq(judged(d, "k", "all", "bit_exact"), 143);
    cr_expect_eq(judged(d, "k", "all", "not_judged"), 149);
    cr_expect_eq(judged(d, "k", "wide", "outputs"), 150);
    cr_expect_eq(judged(d, "k", "wide", "not_judged"), 147);
    cr_expect_eq(judged(d, "k", "normal", "bit_exact"), 40);
    cr_expect_eq(judged(d, "k", "normal:ceil", "outputs"), -1);
    cr_expect_eq(judged(d, "b", "all", "in_bound"), 60);
    cr_expect_eq(judged(d, "b", "wide", "bit_exact"), 0);
    cr_expect_null(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "judged"), "oracle"));
    cr_expect_null(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "judged"), "layouts"));
    cJSON_Delete(d);
}

/* A backend n/a on all but one of many entries does not pass (reproducer: a plugin n/a on 29
 * of the edge set's 30 cases gave PASS): under A4W4_MIN_JUDGED_SHARE % of its entries judged,
 * the verdict is INCOMPLETE, the backend is listed unchecked and the reason gives its share;
 * at the share it passes. */
Test(judge, a_backend_judging_too_few_of_its_entries_is_incomplete)
{
    for (int judged = 1; judged <= 2; judged++) {
        cJSON *d = doc_with(two, 2);
        char name[16];
        for (int i = 0; i < 20; i++) {
            snprintf(name, sizeof name, "c%d", i);
            entry(d, name, "oracle", "pass", 8);
            entry(d, name, "cpu-asm", i < judged ? "pass" : "n/a", i < judged ? 8 : 0);
        }
        a4w4_completeness c = {20, 20};
        if (judged == 1) { /* 1 of 20: 5 % */
            cr_expect_eq(a4w4_results_judge(d, &c), A4W4_DOC_INCOMPLETE);
            cr_expect_str_eq(str(d, "verdict_reason"), "backend cpu-asm judged 1 of its 20 "
                             "entries: fewer than 10 % judged, the rest n/a or skip (a backend "
                             "must judge at least that share of its entries)");
            cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(
                             cJSON_GetObjectItem(d, "counts"), "backends_unchecked")), 1);
        } else { /* 2 of 20: 10 % */
            cr_expect_eq(a4w4_results_judge(d, &c), A4W4_DOC_PASS);
        }
        cJSON_Delete(d);
    }
}
