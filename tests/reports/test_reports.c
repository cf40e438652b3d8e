/* test_reports.c — the parity reports (reports/): the JSON Schema subset validator and the
 * results schema, the Markdown, HTML and JUnit renderers, the comparison of two runs and the
 * environment hook. Documents are built here entry by entry, so every expectation is stated
 * from the input, not read back from the code under test. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_jsonschema.h"
#include "a4w4_reports.h"
#include "compare_parity.h"
#include "environment.h"
#include "report_common.h"
#include "stream.h"

/* ---------------------------------------------------------------- builders */

static cJSON *doc_new(const char *set)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "schema", A4W4_REPORT_SCHEMA);
    cJSON_AddStringToObject(d, "tool", "a4w4check");
    cJSON_AddStringToObject(d, "tool_version", "0.4.0");
    cJSON_AddStringToObject(d, "set", set);
    cJSON_AddStringToObject(d, "shard", "1/1");
    cJSON_AddBoolToObject(d, "full", 0);
    cJSON *b = cJSON_AddArrayToObject(d, "backends");
    cJSON_AddItemToArray(b, cJSON_CreateString("oracle"));
    cJSON_AddItemToArray(b, cJSON_CreateString("cpu-asm"));
    cJSON_AddArrayToObject(d, "cases");
    return d;
}

/* Add an entry; returns it for further fields. */
static cJSON *add(cJSON *doc, const char *name, int M, int N, int K, const char *backend,
                  const char *contract, const char *verdict, double ms)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddNumberToObject(e, "M", M);
    cJSON_AddNumberToObject(e, "N", N);
    cJSON_AddNumberToObject(e, "K", K);
    cJSON_AddStringToObject(e, "regime", "exact");
    cJSON_AddStringToObject(e, "seed", "11");
    cJSON_AddStringToObject(e, "tags", "real");
    cJSON_AddStringToObject(e, "backend", backend);
    cJSON_AddStringToObject(e, "contract", contract);
    cJSON_AddNumberToObject(e, "checked_outputs", M * N);
    cJSON_AddBoolToObject(e, "sampled", 0);
    cJSON_AddStringToObject(e, "verdict", verdict);
    cJSON_AddNumberToObject(e, "mismatches", 0);
    cJSON_AddNumberToObject(e, "unwritten", 0);
    cJSON_AddNumberToObject(e, "max_ulp", 0);
    cJSON_AddArrayToObject(e, "first_mismatches");
    cJSON_AddNumberToObject(e, "time_ms", ms);
    cJSON_AddItemToArray(cJSON_GetObjectItem(doc, "cases"), e);
    return e;
}

static void set_num(cJSON *e, const char *k, double v)
{
    cJSON_ReplaceItemInObject(e, k, cJSON_CreateNumber(v));
}

static void set_str(cJSON *e, const char *k, const char *v)
{
    if (cJSON_GetObjectItem(e, k))
        cJSON_ReplaceItemInObject(e, k, cJSON_CreateString(v));
    else
        cJSON_AddStringToObject(e, k, v);
}

/* The runner's dispatch fields (harness/engine/annotate.h) on e, as stated by the caller:
 * an untuned ASM route with its pick's label and tile, and the layer decision. */
static void dispatch(cJSON *e, const char *label, int tile_m, int tile_n, int fits, int winners,
                     int nofit, const char *decision, const char *reason, const char *hazard)
{
    cJSON *r = cJSON_AddObjectToObject(e, "route");
    cJSON_AddStringToObject(r, "source", "heuristic");
    cJSON_AddStringToObject(r, "path", "asm");
    cJSON_AddStringToObject(r, "kernel", "_ZN5aiter_some_kernelE");
    cJSON_AddStringToObject(r, "label", label);
    int tile[2] = {tile_m, tile_n};
    cJSON_AddItemToObject(r, "tile", cJSON_CreateIntArray(tile, 2));
    cJSON_AddNumberToObject(r, "split", 1);
    cJSON_AddBoolToObject(r, "kernel_fits_N", fits);
    cJSON_AddNumberToObject(r, "possible_winners", winners);
    cJSON_AddNumberToObject(r, "possible_winners_not_fitting_N", nofit);
    cJSON *p = cJSON_AddObjectToObject(e, "policy");
    cJSON_AddStringToObject(p, "decision", decision);
    cJSON_AddStringToObject(p, "reason", reason);
    cJSON_AddStringToObject(e, "hazard", hazard);
}

/* Make e a failure with one recorded mismatch. */
static void fail_at(cJSON *e, int mism, int row, int col, const char *got, const char *exp)
{
    set_str(e, "verdict", "fail");
    set_num(e, "mismatches", mism);
    set_num(e, "max_ulp", 1);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "tensor", "y");
    cJSON_AddNumberToObject(m, "row", row);
    cJSON_AddNumberToObject(m, "col", col);
    cJSON_AddStringToObject(m, "got", got);
    cJSON_AddStringToObject(m, "expected", exp);
    cJSON_AddItemToArray(cJSON_GetObjectItem(e, "first_mismatches"), m);
}

/* The verdict, reason and counts the harness records (harness/io/results.h), as stated by
 * the caller: renderers show them as given and never recompute them. */
static void record_verdict(cJSON *d, const char *verdict, const char *reason, int expected,
                           int recorded, double outputs, const char *unchecked)
{
    cJSON *cases = cJSON_DetachItemFromObject(d, "cases");
    cJSON_AddStringToObject(d, "verdict", verdict);
    cJSON_AddStringToObject(d, "verdict_reason", reason);
    cJSON *c = cJSON_AddObjectToObject(d, "counts");
    static const char *const keys[5] = {"entries", "pass", "fail", "n/a", "skip"};
    for (int i = 0; i < 5; i++)
        cJSON_AddNumberToObject(c, keys[i], 0); /* not read by the renderers */
    cJSON_AddNumberToObject(c, "expected_items", expected);
    cJSON_AddNumberToObject(c, "recorded_items", recorded);
    cJSON_AddNumberToObject(c, "outputs_checked", outputs);
    cJSON *u = cJSON_AddArrayToObject(c, "backends_unchecked");
    if (unchecked)
        cJSON_AddItemToArray(u, cJSON_CreateString(unchecked));
    cJSON_AddItemToObject(d, "cases", cases);
}

static int contains(const char *hay, const char *needle)
{
    return hay && strstr(hay, needle) != NULL;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0, L = strlen(needle);
    for (const char *p = hay; p && (p = strstr(p, needle)); p += L)
        n++;
    return n;
}

static int validate(const cJSON *doc, char *err, size_t len)
{
    return a4w4_results_validate(doc, "doc.json", err, len);
}

/* ---------------------------------------------------------------- schema */

Test(schema, built_in_schema_uses_only_the_implemented_subset)
{
    char err[512] = "";
    cJSON *s = cJSON_Parse(a4w4_results_schema_text());
    cr_assert_not_null(s, "the embedded schema is not JSON");
    cr_assert_eq(a4w4_jsonschema_check(s, err, sizeof err), 0, "%s", err);
    const cJSON *ver = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(s, "properties"), "schema"), "const");
    cr_assert_str_eq(ver->valuestring, A4W4_REPORT_SCHEMA);
    cJSON_Delete(s);
}

Test(schema, report_and_harness_agree_on_the_version)
{
    cr_assert_str_eq(A4W4_REPORT_SCHEMA, A4W4_RESULTS_SCHEMA);
}

Test(schema, a_well_formed_document_validates)
{
    cJSON *d = doc_new("premerge");
    add(d, "m1", 1, 256, 512, "cpu-asm", "ordered(1)", "pass", 0.5);
    cJSON *f = add(d, "m2", 2, 256, 512, "cpu-asm", "ordered(1)", "pass", 0.5);
    fail_at(f, 3, 0, 7, "0x3f81", "0x3f80");
    set_str(f, "y_hash", "0123456789abcdef");
    char err[512] = "";
    cr_assert_eq(validate(d, err, sizeof err), 0, "%s", err);
    cJSON_Delete(d);
}

/* A version 1 document is read against the frozen version 1 schema, and what only version 2
 * defines is refused in it: a results document written now, relabelled /1 and edited from an
 * INCOMPLETE run with ambiguous entries to PASS, was accepted (report "Verdict: PASS",
 * compare exit 0), the /1 path skipping the checks the /2 path makes. */
Test(schema, a_version_1_document_holds_only_what_version_1_defines)
{
    cJSON *d = doc_new("edge");
    set_str(d, "schema", A4W4_REPORT_SCHEMA_V1);
    cJSON *e = add(d, "m1", 1, 256, 512, "cpu-asm", "ordered(1)", "pass", 0.5);
    char err[512] = "";
    cr_assert_eq(validate(d, err, sizeof err), 0, "a plain /1 document: %s", err);
    set_str(e, "verdict", "ambiguous"); /* version 2's verdict */
    cr_assert_neq(validate(d, err, sizeof err), 0, "verdict ambiguous accepted in /1");
    cr_expect(contains(err, "/cases/0/verdict") && contains(err, A4W4_REPORT_SCHEMA_V1), "%s", err);
    set_str(e, "verdict", "pass");
    cJSON_AddNumberToObject(e, "judged_bit_exact", 0); /* fields version 2 added */
    cr_assert_neq(validate(d, err, sizeof err), 0, "judged_bit_exact accepted in /1");
    cr_expect(contains(err, "doc.json: /cases/0/judged_bit_exact: only a4w4check-results/2 "
                            "defines it"), "%s", err);
    cJSON_DeleteItemFromObject(e, "judged_bit_exact");
    cJSON_AddStringToObject(d, "e8m0_code0", "both");
    cr_assert_neq(validate(d, err, sizeof err), 0, "e8m0_code0 accepted in /1");
    cr_expect(contains(err, "/e8m0_code0: only"), "%s", err);
    cJSON_DeleteItemFromObject(d, "e8m0_code0");
    set_str(e, "contract", "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,"
                           "split=1,combine=chain,final=rne)");
    cr_assert_neq(validate(d, err, sizeof err), 0, "a tree contract accepted in /1");
    cr_expect(contains(err, "/cases/0/contract (a tree contract)"), "%s", err);
    set_str(d, "schema", A4W4_REPORT_SCHEMA); /* the same in /2: fine */
    cr_assert_eq(validate(d, err, sizeof err), 0, "%s", err);
    cJSON_Delete(d);
}

Test(schema, dispatch_fields_are_optional_and_checked)
{
    cJSON *d = doc_new("hazard");
    add(d, "old", 1, 256, 512, "cpu-asm", "ordered(1)", "pass", 0.5); /* without: still valid */
    cJSON *e = add(d, "m33", 33, 160, 256, "cpu-asm", "ordered(1)", "pass", 0.5);
    dispatch(e, "96x640", 96, 640, 0, 33, 33, "asm", "asm_quantize", "exposed");
    char err[512] = "";
    cr_assert_eq(validate(d, err, sizeof err), 0, "%s", err);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(e, "route"), "label", cJSON_CreateNull());
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(e, "route"), "tile", cJSON_CreateNull());
    cr_assert_eq(validate(d, err, sizeof err), 0, "CK or unknown tile: %s", err);
    set_str(e, "hazard", "risky");
    cr_assert_neq(validate(d, err, sizeof err), 0);
    cr_expect(contains(err, "/cases/1/hazard: \"risky\" is not one of"), "%s", err);
    set_str(e, "hazard", "ok");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(e, "policy"), "reason");
    cr_assert_neq(validate(d, err, sizeof err), 0);
    cr_expect(contains(err, "required field 'reason' is missing"), "%s", err);
    cJSON_Delete(d);
}

Test(schema, violations_name_the_field_the_rule_and_the_case)
{
    static const struct {
        const char *field, *value, *want;
    } bad[] = {
        {"verdict", "maybe", "/cases/0/verdict: \"maybe\" is not one of"},
        {"seed", "x1", "/cases/0/seed: \"x1\" does not match the pattern"},
        {"y_hash", "0123", "/cases/0/y_hash: \"0123\" does not match"},
        {"regime", "bogus", "/cases/0/regime"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *d = doc_new("x");
        cJSON *e = add(d, "m1", 1, 256, 512, "cpu-asm", "ordered(1)", "pass", 0.5);
        set_str(e, bad[i].field, bad[i].value);
        char err[512] = "";
        cr_assert_neq(validate(d, err, sizeof err), 0, "%s accepted", bad[i].field);
        cr_expect(contains(err, bad[i].want), "'%s' lacks '%s'", err, bad[i].want);
        cr_expect(contains(err, "doc.json: "), "%s", err);
        cr_expect(contains(err, "[case m1 on cpu-asm]"), "%s", err);
        cr_expect(!strchr(err, '\n'), "not one line: %s", err);
        cJSON_Delete(d);
    }
}

Test(schema, wrong_types_missing_fields_and_limits_are_refused)
{
    char err[512];
    cJSON *d = doc_new("x");
    cJSON *e = add(d, "m1", 1, 256, 512, "cpu-asm", "ordered(1)", "pass", 0.5);
    set_num(e, "M", 1.5);
    cr_assert_neq(validate(d, err, sizeof err), 0);
    cr_expect(contains(err, "/cases/0/M: 1.5 is a number, the schema wants integer"), "%s", err);
    set_num(e, "M", -1);
    cr_assert_neq(validate(d, err, sizeof err), 0);
    cr_expect(contains(err, "less than the minimum 0"), "%s", err);
    set_num(e, "M", 1);
    cJSON_DeleteItemFromObject(e, "sampled");
    cr_assert_neq(validate(d, err, sizeof err), 0);
    cr_expect(contains(err, "required field 'sampled' is missing"), "%s", err);
    cJSON_AddBoolToObject(e, "sampled", 0);
    for (int i = 0; i < 6; i++)
        fail_at(e, 6, 0, i, "0x0001", "0x0000");
    cr_assert_neq(validate(d, err, sizeof err), 0);
    cr_expect(contains(err, "array has 6 items, the schema allows at most 5"), "%s", err);
    cJSON_Delete(d);

    d = doc_new("x");
    cJSON_ReplaceItemInObject(d, "schema", cJSON_CreateString("a4w4check-results/3"));
    cr_assert_neq(validate(d, err, sizeof err), 0);
    cr_expect(contains(err, "schema 'a4w4check-results/3' is not supported"), "%s", err);
    cJSON_DeleteItemFromObject(d, "schema");
    cr_assert_neq(validate(d, err, sizeof err), 0);
    cr_expect(contains(err, "required field 'schema' is missing"), "%s", err);
    cJSON_Delete(d);
}

Test(schema, parse_reports_malformed_json_with_the_byte)
{
    char err[512] = "";
    const char *t = "{\"schema\": \"a4w4check-results/1\", \"cases\": [";
    cr_assert_null(a4w4_results_parse(t, strlen(t), "r.json", err, sizeof err));
    cr_expect(contains(err, "r.json: malformed JSON near byte"), "%s", err);
    const char *t2 = "{} trailing";
    cr_assert_null(a4w4_results_parse(t2, strlen(t2), "r.json", err, sizeof err));
    cr_expect(contains(err, "text after the document at byte 3"), "%s", err);
    const char *t3 = "[1, 2]";
    cr_assert_null(a4w4_results_parse(t3, strlen(t3), "r.json", err, sizeof err));
    cr_expect(contains(err, "a results document is a JSON object"), "%s", err);
}

Test(jsonschema, subset_keywords_behave_as_draft_2020_12)
{
    const char *schema_text =
        "{\"$defs\": {\"small\": {\"type\": \"integer\", \"maximum\": 3}},"
        " \"type\": \"object\", \"additionalProperties\": false,"
        " \"properties\": {\"a\": {\"$ref\": \"#/$defs/small\"},"
        "   \"b\": {\"anyOf\": [{\"const\": \"x\"}, {\"type\": \"null\"}]},"
        "   \"c\": {\"oneOf\": [{\"type\": \"number\"}, {\"type\": \"integer\"}]},"
        "   \"d\": {\"not\": {\"enum\": [1, 2]}},"
        "   \"e\": {\"type\": [\"string\", \"boolean\"], \"minLength\": 2, \"maxLength\": 3},"
        "   \"f\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"minItems\": 1}}}";
    cJSON *s = cJSON_Parse(schema_text);
    char err[512] = "";
    cr_assert_eq(a4w4_jsonschema_check(s, err, sizeof err), 0, "%s", err);
    static const struct {
        const char *doc;
        int ok;
        const char *want;
    } cases[] = {
        {"{\"a\": 3, \"b\": null, \"d\": 5, \"e\": \"\\u00e9\\u00e9\", \"f\": [\"z\"]}", 1, ""},
        {"{\"a\": 4}", 0, "/a: 4 is greater than the maximum 3"},
        {"{\"b\": \"y\"}", 0, "/b: \"y\" matches 0 of the anyOf alternatives"},
        {"{\"c\": 2}", 0, "/c: 2 matches 2 of the oneOf alternatives"},
        {"{\"c\": 2.5}", 1, ""},
        {"{\"d\": 2}", 0, "/d: 2 matches a schema it must not match"},
        {"{\"e\": \"abcd\"}", 0, "string of 4 characters, the schema allows at most 3"},
        {"{\"e\": true}", 1, ""},
        {"{\"f\": []}", 0, "array has 0 items, the schema allows at least 1"},
        {"{\"f\": [1]}", 0, "/f/0: 1 is a integer, the schema wants string"},
        {"{\"g\": 1}", 0, "field 'g' is not allowed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *d = cJSON_Parse(cases[i].doc);
        cr_assert_not_null(d, "%s", cases[i].doc);
        err[0] = 0;
        int rc = a4w4_jsonschema_validate(s, d, err, sizeof err);
        cr_expect_eq(rc == 0, cases[i].ok, "%s: rc %d (%s)", cases[i].doc, rc, err);
        if (!cases[i].ok)
            cr_expect(contains(err, cases[i].want), "%s: '%s' lacks '%s'", cases[i].doc, err,
                      cases[i].want);
        cJSON_Delete(d);
    }
    cJSON_Delete(s);
}

Test(jsonschema, unknown_keywords_and_broken_refs_are_refused)
{
    char err[512] = "";
    cJSON *s = cJSON_Parse("{\"properties\": {\"a\": {\"uniqueItems\": true}}}");
    cr_assert_neq(a4w4_jsonschema_check(s, err, sizeof err), 0);
    cr_expect(contains(err, "#/properties/a: keyword 'uniqueItems' is outside the subset"), "%s",
              err);
    cJSON_Delete(s);
    s = cJSON_Parse("{\"$ref\": \"#/$defs/missing\"}");
    cr_assert_neq(a4w4_jsonschema_check(s, err, sizeof err), 0);
    cr_expect(contains(err, "does not resolve"), "%s", err);
    cJSON_Delete(s);
    s = cJSON_Parse("{\"pattern\": \"(\"}");
    cr_assert_neq(a4w4_jsonschema_check(s, err, sizeof err), 0);
    cr_expect(contains(err, "not a POSIX extended regular expression"), "%s", err);
    cJSON_Delete(s);
}

/* ---------------------------------------------------------------- markdown */

static cJSON *small_run(void)
{
    cJSON *d = doc_new("premerge");
    add(d, "m4_n1024_k512", 4, 1024, 512, "oracle", "ordered(1) == exact", "pass", 0);
    add(d, "m4_n1024_k512", 4, 1024, 512, "cpu-asm", "ordered(1)", "pass", 1.25);
    add(d, "m33_n1024_k512", 33, 1024, 512, "oracle", "ordered(1) == exact", "pass", 0);
    cJSON *f = add(d, "m33_n1024_k512", 33, 1024, 512, "cpu-asm", "ordered(1)", "pass", 2.5);
    fail_at(f, 2, 0, 3, "0xc48c", "0xc48b");
    fail_at(f, 2, 0, 9, "0x7f81", "0x3f80");
    set_str(f, "note", "guard | zone <b>changed</b>");
    cJSON *e = add(d, "e_n48", 4, 48, 256, "cpu-asm", "ordered(1)", "n/a", 0);
    set_str(e, "tags", "edge;no-swizzle");
    set_str(e, "note", "ASM layouts need N % 32 == 0");
    record_verdict(d, "FAIL", "1 failing entry", 3, 3, 71680, NULL);
    return d;
}

Test(markdown, verdict_failures_with_hex_and_groups)
{
    cJSON *d = small_run();
    char *md = a4w4_report_markdown(d, NULL);
    cr_assert_not_null(md);
    cr_expect(contains(md, "**Verdict: FAIL** (1 failing entries of 5"), "%s", md);
    cr_expect(contains(md, "Completeness: 3 of 3 expected items recorded, 71680 outputs checked. "
                           "Verdict reason: 1 failing entry.\n"),
              "%s", md);
    cr_expect(contains(md, "| FAIL | cpu-asm | ordered(1) | 1 | 1 | 1 | 0 | 1 |"), "%s", md);
    cr_expect(
        contains(md, "| PASS (bit-exact) | oracle | ordered(1) == exact | 2 | 0 | 0 | 0 | 0 |"));
    cr_expect(contains(md, "## Failures (1)"));
    cr_expect(
        contains(md,
                 "- `m33_n1024_k512` on `cpu-asm` (ordered(1)), M=33 N=1024 K=512, exact: "
                 "2 of 33792 checked outputs differ, max 1 ULP: y(0, 3) got 0xc48c expected "
                 "0xc48b; y(0, 9) got 0x7f81 expected 0x3f80. guard \\| zone &lt;b>changed&lt;/b>"),
        "%s", md);
    cr_expect(contains(
        md, "<details open><summary><b>layer N=1024 K=512</b>: 4 entries, 3 pass, 1 fail"));
    cr_expect(contains(md, "<details><summary><b>tag: edge</b>: 1 entries, 1 n/a</summary>"));
    cr_expect(contains(md, "| m4_n1024_k512 | 4 | 1024 | 512 | exact | cpu-asm | ordered(1) | 4096 "
                           "| full | pass | 1.2 |  |"),
              "%s", md);
    cr_expect(contains(md, "## Environment\n\nNot recorded"));
    free(md);
    cJSON_Delete(d);
}

/* A "tolerance" object as the harness writes it (harness/engine/entry.c): texts and verdicts
 * are stated in the document, and the reports print them as they are (a PASS here that no
 * threshold in reports/ could produce proves nothing is recomputed). */
static void add_tolerance(cJSON *e, int ship)
{
    cJSON *t = cJSON_AddObjectToObject(e, "tolerance");
    cJSON_AddNumberToObject(t, "outputs", 33792);
    cJSON_AddStringToObject(t, "reference", "the dequantized operands' product");
    cJSON_AddBoolToObject(t, "would_ship", ship);
    cJSON *a = cJSON_AddArrayToObject(t, "criteria");
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "id", "aiter-checkallclose");
    cJSON_AddStringToObject(c, "outcome", ship ? "PASS" : "FAIL");
    cJSON_AddNumberToObject(c, "value", 0);
    cJSON_AddStringToObject(c, "text", ship ? "AITER checkAllclose: PASS (max rel 0.4 %, 0 % "
                                              "of elements over)" : "AITER <x>: FAIL");
    cJSON_AddItemToArray(a, c);
}

Test(markdown, a_failing_entry_names_the_criteria_that_would_have_passed_it)
{
    cJSON *d = small_run();
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(d, "cases"))
        if (!strcmp(jstr(e, "verdict"), "fail"))
            add_tolerance((cJSON *)e, 1);
    char err[512];
    cr_assert_eq(validate(d, err, sizeof err), 0, "%s", err);
    char *md = a4w4_report_markdown(d, NULL), *html = a4w4_report_html(d, NULL);
    char *junit = a4w4_report_junit(d, NULL);
    cr_assert(md && html && junit);
    const char *line = " Tolerance criteria on its 33792 outputs: AITER checkAllclose: PASS (max "
                       "rel 0.4 %, 0 % of elements over). A tolerance test would have shipped "
                       "this.";
    cr_expect(contains(md, line), "%s", md);
    cr_expect(contains(html, line), "%s", html);
    cr_expect(contains(junit, line), "%s", junit); /* in the <failure> text */
    free(md);
    free(html);
    free(junit);
    cJSON_Delete(d);
}

Test(markdown, no_shipping_line_where_every_criterion_fails_and_texts_are_escaped)
{
    cJSON *d = small_run();
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(d, "cases"))
        if (!strcmp(jstr(e, "verdict"), "fail"))
            add_tolerance((cJSON *)e, 0);
    char *md = a4w4_report_markdown(d, NULL), *html = a4w4_report_html(d, NULL);
    cr_assert(md && html);
    cr_expect(!contains(md, "would have shipped"), "%s", md);
    cr_expect(contains(html, "AITER &lt;x>: FAIL") || contains(html, "AITER &lt;x&gt;: FAIL"),
              "%s", html);
    free(md);
    free(html);
    cJSON_Delete(d);
}

/* A layers entry's "parity" object is rendered as recorded (no verdict is recomputed). */
Test(markdown, parity_of_two_paths_is_a_table_of_what_the_document_says)
{
    cJSON *d = small_run();
    cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "cases"), 1);
    cJSON *p = cJSON_AddObjectToObject(e, "parity");
    cJSON_AddNumberToObject(p, "outputs", 4096);
    cJSON_AddNumberToObject(p, "bit_equal", 4000);
    cJSON_AddNumberToObject(p, "differ", 96);
    cJSON_AddNumberToObject(p, "max_ulp", 3);
    cJSON *a = cJSON_AddArrayToObject(p, "tolerance_on_difference");
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "id", "aiter-checkallclose");
    cJSON_AddStringToObject(c, "outcome", "PASS");
    cJSON_AddStringToObject(c, "text", "AITER checkAllclose: PASS");
    cJSON_AddItemToArray(a, c);
    char err[512];
    cr_assert_eq(validate(d, err, sizeof err), 0, "%s", err);
    char *md = a4w4_report_markdown(d, NULL);
    cr_assert_not_null(md);
    cr_expect(contains(md, "## Parity of the two paths"), "%s", md);
    cr_expect(contains(md, "| m4_n1024_k512 | cpu-asm | 4000 of 4096 | 96 | 3 | "
                           "aiter-checkallclose PASS |"), "%s", md);
    char *html = a4w4_report_html(d, NULL); /* report.html has the same table */
    cr_assert_not_null(html);
    cr_expect(contains(html, "<h2 id=\"parity\">Parity of the two paths</h2>"));
    cr_expect(contains(html, "<tr><td><code>m4_n1024_k512</code></td><td>cpu-asm</td><td "
                             "class=\"n\">4000 of 4096</td><td class=\"n\">96</td><td "
                             "class=\"n\">3</td><td>aiter-checkallclose PASS</td></tr>"),
              "%s", html);
    free(html);
    free(md);
    cJSON_Delete(d);
}

/* The table pieces every two-format section is written with: a head and a heading, byte for
 * byte in Markdown and in HTML. */
Test(report_common, a_table_head_and_heading_in_both_formats)
{
    static const char *const cols[] = {"case", "n", "why"};
    rbuf b = {0};
    rb_heading(&b, &rb_markdown, "x", "Title");
    rb_table_head(&b, &rb_markdown, cols, 3, 1u << 1);
    char *md = rb_take(&b);
    cr_assert_not_null(md);
    cr_expect_str_eq(md, "## Title\n\n| case | n | why |\n|---|---:|---|\n");
    free(md);
    rb_heading(&b, &rb_htmlmarkup, "x", "Title");
    rb_table_head(&b, &rb_htmlmarkup, cols, 3, 1u << 1);
    char *html = rb_take(&b);
    cr_assert_not_null(html);
    cr_expect_str_eq(html, "<h2 id=\"x\">Title</h2>\n<table class=\"sortable\"><thead><tr>"
                           "<th>case</th><th class=\"n\">n</th><th>why</th></tr></thead><tbody>\n");
    free(html);
}

/* compare's kept-outputs parity, one function for both formats: the whole section byte for
 * byte (a row with NaN against a number, an entry not compared; names escaped per format). */
Test(compare, the_kept_outputs_parity_section_in_both_formats)
{
    cJSON *cmp = cJSON_CreateObject();
    cJSON *op = cJSON_AddObjectToObject(cmp, "output_parity");
    cJSON_AddNumberToObject(op, "compared", 1);
    cJSON_AddNumberToObject(op, "differ", 1);
    cJSON_AddNumberToObject(op, "not_compared", 1);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(op, "rows"), r);
    cJSON_AddStringToObject(r, "name", "c|<1");
    cJSON_AddStringToObject(r, "base_backend", "cpu-asm");
    cJSON_AddStringToObject(r, "cand_backend", "mut");
    cJSON_AddNumberToObject(r, "M", 8);
    cJSON_AddNumberToObject(r, "N", 64);
    cJSON_AddNumberToObject(r, "outputs", 512);
    cJSON_AddNumberToObject(r, "bit_equal", 500);
    cJSON_AddNumberToObject(r, "differ", 12);
    cJSON_AddNumberToObject(r, "max_ulp", 7);
    cJSON_AddNumberToObject(r, "nan_vs_number", 2);
    cJSON_AddStringToObject(r, "peers", "aiter FAIL");
    cJSON *s = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(op, "skipped"), s);
    cJSON_AddStringToObject(s, "name", "big");
    cJSON_AddStringToObject(s, "backend", "cpu-asm");
    cJSON_AddStringToObject(s, "why", "sampled");
    rbuf b = {0};
    compare_parity_md(&b, cmp);
    char *md = rb_take(&b);
    cr_assert_not_null(md);
    cr_expect_str_eq(md,
        "## Parity of the kept outputs\n\n1 entries compared output by output (CAND against "
        "BASE), 1 with outputs that differ, 1 not compared.\n\n| case | backend (BASE → CAND) "
        "| M | N | parity | peers on the difference |\n|---|---|---:|---:|---|---|\n"
        "| c\\|&lt;1 | cpu-asm → mut | 8 | 64 | bit-equal 500 of 512, 12 differ, max 7 ULP (and 2 "
        "NaN against a number) | aiter FAIL |\n\nNot compared:\n\n- `big` on `cpu-asm`: "
        "sampled\n\n");
    free(md);
    compare_parity_html(&b, cmp);
    char *html = rb_take(&b);
    cr_assert_not_null(html);
    cr_expect_str_eq(html,
        "<h2 id=\"output-parity\">Parity of the kept outputs</h2>\n<p>1 entries compared "
        "output by output (CAND against BASE), 1 with outputs that differ, 1 not compared.</p>\n"
        "<table class=\"sortable\"><thead><tr><th>case</th><th>backend (BASE &#8594; CAND)</th>"
        "<th class=\"n\">M</th><th class=\"n\">N</th><th>parity</th><th>peers on the "
        "difference</th></tr></thead><tbody>\n<tr><td><code>c|&lt;1</code></td><td>cpu-asm "
        "&#8594; mut</td><td class=\"n\">8</td><td class=\"n\">64</td><td>bit-equal 500 of "
        "512, 12 differ, max 7 ULP (and 2 NaN against a number)</td><td>aiter FAIL</td></tr>\n"
        "</tbody></table>\n<p>Not compared:</p>\n<ul>\n<li><code>big</code> on <code>cpu-asm"
        "</code>: sampled</li>\n</ul>\n");
    free(html);
    cJSON_Delete(cmp);
}

Test(markdown, reproducible_leaves_out_timings_and_environment)
{
    cJSON *d = small_run();
    a4w4_environment_json(d);
    a4w4_report_opts o = {1, "some/path.json"};
    char *md = a4w4_report_markdown(d, &o);
    cr_expect(!contains(md, "time ms"));
    cr_expect(!contains(md, "## Environment"));
    cr_expect(!contains(md, "some/path.json"));
    cr_expect(contains(md, "| m4_n1024_k512 | 4 | 1024 | 512 | exact | cpu-asm | ordered(1) | 4096 "
                           "| full | pass |  |"));
    free(md);
    a4w4_report_opts o2 = {0, NULL};
    md = a4w4_report_markdown(d, &o2);
    cr_expect(contains(md, "## Environment"));
    cr_expect(contains(md, "| compiler | "), "%s", md);
    cr_expect(contains(md, "| tuned table | cases/aiter/a4w4_blockscale_tuned_gemm.csv (FNV-1a "));
    free(md);
    cJSON_Delete(d);
}

Test(markdown, the_recorded_verdict_is_shown_never_recomputed)
{
    cJSON *d = small_run(); /* one failing entry; the document says otherwise */
    cJSON_ReplaceItemInObject(d, "verdict", cJSON_CreateString("INCOMPLETE"));
    char *md = a4w4_report_markdown(d, NULL);
    cr_expect(contains(md, "**Verdict: INCOMPLETE** (1 failing entries of 5"), "%s", md);
    cr_expect(!contains(md, "Verdict: FAIL"));
    free(md);
    /* an older document without them: said so, and no verdict made up from the entries */
    cJSON_DeleteItemFromObject(d, "verdict");
    cJSON_DeleteItemFromObject(d, "verdict_reason");
    cJSON_DeleteItemFromObject(d, "counts");
    md = a4w4_report_markdown(d, NULL);
    cr_expect(contains(md, "**Verdict not recorded** (an older results document; 1 failing "
                           "entries of 5"),
              "%s", md);
    cr_expect(contains(md, "Completeness: not recorded in this document.\n"), "%s", md);
    cr_expect(!contains(md, "Verdict: FAIL") && !contains(md, "Verdict: PASS"));
    free(md);
    cJSON_Delete(d);
}

/* A recorded PASS that the document's own counts contradict (an edited or truncated header)
 * is never printed as PASS: 18 of 36 items, a counted skip, no counts at all. */
Test(markdown, a_pass_its_own_counts_contradict_is_shown_incomplete)
{
    cJSON *d = doc_new("premerge");
    add(d, "m1", 1, 256, 512, "oracle", "ordered(1) == exact", "pass", 0);
    record_verdict(d, "PASS", "edited", 36, 18, 256, NULL);
    char *md = a4w4_report_markdown(d, NULL);
    cr_expect(contains(md, "**Verdict: INCOMPLETE**"), "%s", md);
    cr_expect(contains(md, "the document records PASS, but its own counts do not bear it out"),
              "%s", md);
    cr_expect(!contains(md, "Verdict: PASS"), "%s", md);
    free(md);
    cJSON_Delete(d);
    d = doc_new("premerge");
    add(d, "m1", 1, 256, 512, "oracle", "ordered(1) == exact", "pass", 0);
    record_verdict(d, "PASS", "edited", 1, 1, 256, NULL);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(d, "counts"), "skip", cJSON_CreateNumber(1));
    md = a4w4_report_markdown(d, NULL);
    cr_expect(contains(md, "**Verdict: INCOMPLETE**") && !contains(md, "Verdict: PASS"), "%s", md);
    free(md);
    cJSON_DeleteItemFromObject(d, "counts");
    md = a4w4_report_markdown(d, NULL);
    cr_expect(contains(md, "the document records PASS without the counts"), "%s", md);
    cr_expect(!contains(md, "Verdict: PASS"), "%s", md);
    free(md);
    cJSON_Delete(d);
}

Test(markdown, an_incomplete_run_names_the_backend_that_compared_nothing)
{
    cJSON *d = doc_new("premerge");
    add(d, "m1", 1, 256, 512, "oracle", "ordered(1) == exact", "pass", 0);
    add(d, "m1", 1, 256, 512, "bundle:empty", "ordered(1)", "n/a", 0);
    record_verdict(d, "INCOMPLETE", "backend bundle:empty made no comparison (every entry n/a "
                   "or skip)", 1, 1, 256, "bundle:empty");
    char *md = a4w4_report_markdown(d, NULL);
    cr_expect(contains(md, "**Verdict: INCOMPLETE** (0 failing entries of 2"), "%s", md);
    cr_expect(contains(md, "Completeness: 1 of 1 expected items recorded, 256 outputs checked, "
                           "no comparison by bundle:empty. Verdict reason: backend bundle:empty "
                           "made no comparison (every entry n/a or skip).\n"),
              "%s", md);
    free(md);
    cJSON_Delete(d);
}

Test(markdown, bounded_backends_are_not_called_bit_exact)
{
    cJSON *d = doc_new("nightly");
    cJSON *e = add(d, "m1", 1, 256, 512, "gpu-splitk", "bounded(4)", "pass", 1);
    set_num(e, "max_ulp", 3);
    char *md = a4w4_report_markdown(d, NULL);
    cr_expect(contains(md, "| PASS (within bound) | gpu-splitk | bounded(4) | 1 | 0 | 0 | 0 | 3 |"),
              "%s", md);
    cr_expect(!contains(md, "PASS (bit-exact)"));
    free(md);
    cJSON_Delete(d);
}

/* A NaN-against-a-number mismatch has no ULP distance (max_ulp -1): the verdict table and the
 * failure line say so instead of the 0 of the backend's passing entries. */
Test(markdown, nan_mismatch_max_ulp_is_not_shown_as_zero)
{
    cJSON *d = doc_new("nightly");
    add(d, "ok", 1, 256, 512, "gpu", "ordered(1)", "pass", 1);
    cJSON *e = add(d, "nan", 1, 256, 512, "gpu", "ordered(1)", "fail", 1);
    set_num(e, "mismatches", 2);
    set_num(e, "max_ulp", -1);
    char *md = a4w4_report_markdown(d, NULL);
    cr_expect(contains(md, "| FAIL | gpu | ordered(1) | 1 | 1 | 0 | 0 | NaN vs number |"), "%s",
              md);
    cr_expect(contains(md, "ULP distance n/a (NaN against a number)"), "%s", md);
    free(md);
    char *h = a4w4_report_html(d, NULL);
    cr_expect(contains(h, "NaN vs number"));
    free(h);
    cJSON_Delete(d);
}

/* Bounded entries carry the bound they were held to; the report lists them as recorded. */
Test(markdown, bounded_entries_show_their_bound_and_its_use)
{
    cJSON *d = doc_new("nightly");
    cJSON *e = add(d, "m1", 1, 256, 16384, "gpu-splitk", "bounded(4)", "fail", 1);
    set_num(e, "mismatches", 3);
    cJSON_AddNumberToObject(e, "bound_use", 19.9);
    cJSON_AddNumberToObject(e, "bound_ulp_median", 1.5);
    cJSON_AddNumberToObject(e, "bound_ulp_max", 42);
    char *md = a4w4_report_markdown(d, NULL);
    cr_expect(contains(md, "## Bounded entries"), "%s", md);
    cr_expect(contains(md, "| m1 | gpu-splitk | bounded(4) | fail | 1.5 | 42 | 19.9 |"), "%s", md);
    cr_expect(contains(md, "largest distance 19.9 times the bound"), "%s", md);
    free(md);
    cJSON_Delete(d);
}

/* ---------------------------------------------------------------- html */

Test(html, self_contained_with_hazard_map_fence_and_picks)
{
    cJSON *d = doc_new("hazard");
    static const int Ms[] = {1, 16}, Ns[] = {64, 128, 192, 256};
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 4; j++) {
            char name[32];
            snprintf(name, sizeof name, "h_m%d_n%d", Ms[i], Ns[j]);
            cJSON *e = add(d, name, Ms[i], Ns[j], 2048, "cpu-asm", "ordered(1)", "pass", 1);
            if (Ms[i] == 16 && Ns[j] == 192)
                fail_at(e, 1, 0, 0, "0x4001", "0x4000");
            /* what route says at K=2048: N <= 128 one 256x256 winner on a Triton layer
             * (fenced); N = 192, 256 33 winners, some not fitting N, on the ASM path */
            if (Ns[j] <= 128)
                dispatch(e, "256x256/splitK", 256, 256, 0, 1, 1, "triton", "small_n", "fenced");
            else
                dispatch(e, "256x128", 256, 128, Ns[j] == 256, 33, Ns[j] == 256 ? 17 : 33, "asm",
                         "asm_quantize", "exposed");
        }
    record_verdict(d, "FAIL", "1 failing entry", 8, 8, 1136, NULL);
    a4w4_report_opts o = {0, "x/results.json"};
    char *h = a4w4_report_html(d, &o);
    cr_assert_not_null(h);
    cr_expect(contains(h, "<title>a4w4check report: hazard - FAIL</title>"));
    cr_expect(contains(h, "<p class=\"banner fail\" id=\"verdict\">&#10008; Verdict: FAIL"));
    cr_expect(contains(h, "Completeness: 8 of 8 expected items recorded, 1136 outputs checked. "
                          "Verdict reason: 1 failing entry.</p>"),
              "%s", h);
    cr_expect(!contains(h, "src=\"http") && !contains(h, "href=\"http") && !contains(h, "@import"));
    /* one map (no oracle entries to leave out), eight cells, one failing */
    cr_expect_eq(count_of(h, "role=\"img\" aria-label=\"hazard map of cpu-asm"), 1);
    cr_expect_eq(count_of(h, "fill=\"url(#pat-fail)\" stroke=\"#fff\""), 1);
    cr_expect_eq(count_of(h, "fill=\"#009E73\" stroke=\"#fff\""), 7);
    /* the fence sits after N=128: x = 64 + 2 cells of 44 px */
    cr_expect(contains(h, "<path d=\"M152.0 42V"), "fence line not after the second column");
    cr_expect(contains(h, "&#9664; Triton (N &#8804; 128)"));
    /* picks in the tooltips; N = 192 is untuned on the ASM path with tiles that do not fit */
    cr_expect(contains(h, "M=16 N=192 on cpu-asm: FAIL (1 entry)"));
    cr_expect(contains(h, "dispatch: heuristic -&gt; ASM"));
    cr_expect(contains(h, "policy triton (small_n); hazard fenced"),
              "N <= 128 must show the fence decision and the class");
    cr_expect(contains(h, "\n  dispatch: heuristic -&gt; ASM 256x128 (tile does not fit N); 33 "
                          "possible winners over every walk order (order-dependent), 33 not "
                          "fitting N; policy asm (asm_quantize); hazard exposed</title>"),
              "the pick is the entry's route and policy fields");
    cr_expect(contains(h, "AITER would route this shape: heuristic -&gt; ASM 256x128"),
              "the failing entry's detail names its route");
    /* a corner on every "exposed" cell (N = 192, 256 at both M), none on "fenced" ones */
    cr_expect_eq(count_of(h, "fill=\"#000\"/></g>"), 4, "corners: exposed cells only");
    cr_expect(contains(h, "the route, policy and hazard fields of the results entries"));
    cr_expect(contains(h, "No bounded backend in this run"));
    cr_expect(contains(h, "x/results.json"));
    free(h);
    cJSON_Delete(d);
}

Test(html, escapes_text_and_handles_no_fields_and_all_n_above_the_fence)
{
    cJSON *d = doc_new("x<y");
    cJSON *e = add(d, "<script>alert(1)</script>", 8, 512, 512, "cpu-asm", "ordered(1)", "pass", 1);
    set_str(e, "note", "a \"quoted\" & <odd> note");
    char *h = a4w4_report_html(d, NULL);
    cr_expect(!contains(h, "<script>alert"));
    cr_expect(contains(h, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    cr_expect(contains(h, "a &quot;quoted&quot; &amp; &lt;odd&gt; note"));
    /* an old document (no route/policy fields): the map without picks, and the page says so */
    cr_expect(contains(h, "Hazard map picks: not shown: no entry of this results document has "
                          "route and policy fields"), "%s", h);
    cr_expect(contains(h, "the N &#8804; 128 fence is not drawn"));
    cr_expect(!contains(h, "dispatch: "));
    free(h);
    dispatch(e, "96x640", 96, 640, 0, 9, 8, "asm", "asm_quantize", "exposed");
    h = a4w4_report_html(d, NULL);
    cr_expect(contains(h, "every N here is &gt; 128"), "every entry's layer is on the ASM path");
    cr_expect(contains(h, "\n  dispatch: heuristic -&gt; ASM 96x640 (tile does not fit N)"));
    free(h);
    cJSON_Delete(d);
}

Test(html, the_banner_is_the_recorded_verdict_or_says_it_is_not_recorded)
{
    cJSON *d = doc_new("edge");
    add(d, "m1", 1, 256, 512, "cpu-asm", "ordered(1)", "pass", 1);
    char *h = a4w4_report_html(d, NULL);
    cr_expect(contains(h, "<title>a4w4check report: edge - verdict not recorded</title>"));
    cr_expect(contains(h, "<p class=\"banner unknown\" id=\"verdict\">? verdict not recorded "
                          "&#8212; 0 failing entries of 1"),
              "%s", h);
    cr_expect(!contains(h, "Verdict: PASS"));
    free(h);
    record_verdict(d, "INCOMPLETE", "1 of 2 expected items recorded", 2, 1, 256, NULL);
    h = a4w4_report_html(d, NULL);
    cr_expect(contains(h, "<title>a4w4check report: edge - INCOMPLETE</title>"));
    cr_expect(contains(h, "<p class=\"banner incomplete\" id=\"verdict\">&#9888; Verdict: "
                          "INCOMPLETE &#8212; 0 failing entries of 1"));
    cr_expect(contains(h, "Verdict reason: 1 of 2 expected items recorded.</p>"));
    free(h);
    cJSON_Delete(d);
}

Test(html, bounded_backends_get_ulp_histograms_and_timing_is_listed)
{
    cJSON *d = doc_new("nightly");
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", i);
        cJSON *e = add(d, name, 2, 256, 512, "gpu-splitk", "bounded(4)", "pass", 1.0 + i);
        set_num(e, "max_ulp", i); /* bins 0, 1, 2-3, 2-3, 4-7 */
        if (i == 0) {
            int hist[3] = {500, 10, 2};
            cJSON_AddItemToObject(e, "ulp_histogram", cJSON_CreateIntArray(hist, 3));
        }
    }
    char *h = a4w4_report_html(d, NULL);
    cr_expect(contains(h, "largest distance 4 ULP"));
    cr_expect(contains(h, "<title>2-3 ULP: 2</title>"), "two entries have max ULP 2 or 3");
    cr_expect(contains(h, "<title>4-7 ULP: 1</title>"));
    cr_expect(contains(h, "Checked outputs per ULP distance"));
    cr_expect(contains(h, "<title>0 ULP: 500</title>"));
    cr_expect(contains(h, "Per-case timing: 5 timed entries"));
    free(h);
    a4w4_report_opts o = {1, NULL};
    h = a4w4_report_html(d, &o);
    cr_expect(!contains(h, "Per-case timing"));
    free(h);
    cJSON_Delete(d);
}

/* ---------------------------------------------------------------- junit */

Test(junit, one_testcase_per_entry_failures_and_skips)
{
    cJSON *d = small_run();
    char *x = a4w4_report_junit(d, NULL);
    cr_assert_not_null(x);
    cr_expect(contains(x, "<testsuites name=\"a4w4check premerge\" tests=\"5\" failures=\"1\" "
                          "errors=\"0\" skipped=\"1\""));
    cr_expect_eq(count_of(x, "<testcase "), 5);
    cr_expect_eq(count_of(x, "<testsuite "), 2);
    cr_expect(contains(x, "<testsuite name=\"cpu-asm [ordered(1)]\" tests=\"3\" failures=\"1\" "
                          "errors=\"0\" skipped=\"1\""));
    cr_expect(
        contains(x, "<failure type=\"mismatch\" message=\"2 of 33792 checked outputs differ from "
                    "ordered(1); first at y(0, 3): got 0xc48c expected 0xc48b; guard | zone "
                    "&lt;b&gt;changed&lt;/b&gt;\">"),
        "%s", x);
    cr_expect(contains(x, "y(0, 3): got 0xc48c expected 0xc48b (1 ULP)"));
    cr_expect(contains(x, "y(0, 9): got 0x7f81 expected 0x3f80</failure>"),
              "NaN has no ULP distance");
    cr_expect(contains(x, "<skipped message=\"n/a: ASM layouts need N % 32 == 0\"/>"));
    cr_expect(contains(x, "classname=\"a4w4check.cpu-asm\" time=\"0.001250\""));
    cr_expect_eq(count_of(x, "<property name=\"verdict\" value=\"FAIL\"/>"), 2);
    cr_expect(contains(x, "<property name=\"completeness\" value=\"3 of 3 expected items "
                          "recorded, 71680 outputs checked\"/>"));
    free(x);
    cJSON_Delete(d);
}

Test(junit, an_incomplete_verdict_is_an_error_a_dashboard_cannot_show_green)
{
    cJSON *d = doc_new("edge");
    add(d, "m1", 1, 256, 512, "oracle", "ordered(1) == exact", "pass", 0);
    add(d, "m1", 1, 256, 512, "bundle:empty", "ordered(1)", "n/a", 0);
    record_verdict(d, "INCOMPLETE", "backend bundle:empty made no comparison", 1, 1, 256,
                   "bundle:empty");
    char *x = a4w4_report_junit(d, NULL);
    cr_expect(contains(x, "<testsuites name=\"a4w4check edge\" tests=\"3\" failures=\"0\" "
                          "errors=\"1\" skipped=\"1\""),
              "%s", x);
    cr_expect(contains(x, "<testsuite name=\"completeness\" tests=\"1\" failures=\"0\" "
                          "errors=\"1\""));
    cr_expect(contains(x, "<error type=\"incomplete\" message=\"INCOMPLETE: backend "
                          "bundle:empty made no comparison\">1 of 1 expected items recorded, "
                          "256 outputs checked, no comparison by bundle:empty</error>"),
              "%s", x);
    cr_expect_eq(count_of(x, "<failure "), 0);
    free(x);
    /* an older document: a property says so; no error suite */
    cJSON_DeleteItemFromObject(d, "verdict");
    x = a4w4_report_junit(d, NULL);
    cr_expect(contains(x, "<property name=\"verdict\" value=\"verdict not recorded\"/>"));
    cr_expect(!contains(x, "<error "));
    free(x);
    cJSON_Delete(d);
}

Test(report_common, bf16_ulp_distance_from_hex)
{
    cr_expect_eq(bf16_hex_ulp("0x3f80", "0x3f81"), 1);
    cr_expect_eq(bf16_hex_ulp("0x8000", "0x0000"), 0);  /* -0 and +0 */
    cr_expect_eq(bf16_hex_ulp("0x8001", "0x0001"), 2);  /* across zero */
    cr_expect_eq(bf16_hex_ulp("0x7f80", "0x7f7f"), 1);  /* inf and max finite */
    cr_expect_eq(bf16_hex_ulp("0x7fc0", "0x3f80"), -1); /* NaN */
    cr_expect_eq(bf16_hex_ulp("0x3f", "0x3f80"), -1);   /* not bf16 */
}

/* ---------------------------------------------------------------- compare */

static cJSON *find_item(const cJSON *cmp, const char *list, const char *name)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(cmp, list))
        if (!strcmp(jstr(it, "name"), name))
            return (cJSON *)it;
    return NULL;
}

static double total(const cJSON *cmp, const char *k)
{
    return jnum(cJSON_GetObjectItem(cmp, "totals"), k, -1);
}

Test(compare, crafted_pair_new_failure_fixed_changed_bits_slower)
{
    cJSON *b = doc_new("nightly"), *c = doc_new("nightly");
    add(b, "new", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 2);
    fail_at(add(c, "new", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 2), 5, 0, 0, "0x4001",
            "0x4000");
    fail_at(add(b, "fixed", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 2), 5, 0, 0, "0x4001",
            "0x4000");
    add(c, "fixed", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 2);
    set_str(add(b, "bits", 4, 256, 512, "gpu", "bounded(2)", "pass", 2), "y_hash",
            "1111111111111111");
    set_str(add(c, "bits", 4, 256, 512, "gpu", "bounded(2)", "pass", 2), "y_hash",
            "2222222222222222");
    add(b, "slow", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 1);
    add(c, "slow", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 8);
    add(b, "quick", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 0.01); /* under min_ms */
    add(c, "quick", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 5);
    add(b, "nohash", 4, 256, 512, "gpu", "bounded(2)", "pass", 2);
    add(c, "nohash", 4, 256, 512, "gpu", "bounded(2)", "pass", 2);
    cJSON *cmp = a4w4_compare(b, c, NULL);
    cr_assert_not_null(cmp);
    cr_expect_eq(a4w4_compare_new_failures(cmp), 1);
    cr_expect_not_null(find_item(cmp, "new_failures", "new"));
    cr_expect_not_null(find_item(cmp, "fixed", "fixed"));
    cJSON *bits = find_item(cmp, "bits_changed", "bits");
    cr_assert_not_null(bits);
    cr_expect_str_eq(jstr(bits, "why"), "y_hash 1111111111111111 -> 2222222222222222");
    cr_expect_not_null(find_item(cmp, "bits_changed", "new"),
                       "a new mismatch record proves changed bits");
    cr_expect_eq(total(cmp, "bits_changed"), 3);
    cr_expect_eq(total(cmp, "bits_same"), 2, "slow and quick pass bit-exact against one oracle");
    cr_expect_eq(total(cmp, "bits_unknown"), 1, "a bounded pass without y_hash is unknown");
    const cJSON *tm = cJSON_GetObjectItem(cmp, "timing");
    /* timed: new, fixed, bits (ratio 1), slow (8), nohash (1): geomean 8^(1/5) */
    cr_expect_eq(jnum(tm, "timed", 0), 5);
    cr_expect_float_eq(jnum(tm, "geomean_ratio", 0), pow(8.0, 0.2), 1e-12);
    const cJSON *slow = cJSON_GetArrayItem(cJSON_GetObjectItem(tm, "slower"), 0);
    cr_expect_str_eq(jstr(slow, "name"), "slow");
    cr_expect_float_eq(jnum(slow, "ratio", 0), 8.0, 1e-12);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(tm, "slower")), 1);
    char *md = a4w4_compare_markdown(cmp, NULL);
    cr_expect(contains(md, "**Verdict: REGRESSION** (1 new failure)."), "%s", md);
    cr_expect(contains(md, "| slow | cpu-asm | 1.000 | 8.000 | 8.00x |"), "%s", md);
    free(md);
    char *h = a4w4_compare_html(cmp, NULL);
    cr_expect(contains(h, "<h2 id=\"new_failures\">New failures (1)</h2>"));
    free(h);
    cJSON_Delete(cmp);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

Test(compare, pairs_match_two_paths_and_absent_cases_are_listed)
{
    cJSON *b = doc_new("x"), *c = doc_new("x");
    add(b, "k1", 4, 256, 512, "cpu-fallback", "ordered(1)", "pass", 1);
    add(b, "gone", 4, 256, 512, "cpu-fallback", "ordered(1)", "pass", 1);
    add(c, "k1", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 1);
    add(c, "extra", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 1);
    fail_at(add(c, "extra_fail", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 1), 1, 0, 0,
            "0x0001", "0x0000");
    const char *pb[] = {"cpu-fallback"}, *pc[] = {"cpu-asm"};
    a4w4_compare_opts co = {pb, pc, 1, 0, 0};
    cJSON *cmp = a4w4_compare(b, c, &co);
    cr_expect_eq(total(cmp, "matched"), 1);
    cr_expect_eq(total(cmp, "bits_same"), 1);
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(cmp, "only_base"), 0), "name"),
                     "gone");
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(cmp, "only_cand"), 0), "name"),
                     "extra");
    cJSON *nf = find_item(cmp, "new_failures", "extra_fail");
    cr_assert_not_null(nf, "a failing case the base lacks is a new failure");
    cr_expect_str_eq(jstr(nf, "base_verdict"), "absent");
    cJSON_Delete(cmp);
    /* without the pair nothing matches */
    cmp = a4w4_compare(b, c, NULL);
    cr_expect_eq(total(cmp, "matched"), 0);
    cJSON_Delete(cmp);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

Test(compare, each_run_shows_its_recorded_verdict_and_completeness)
{
    cJSON *b = doc_new("nightly"), *c = doc_new("nightly");
    add(b, "m1", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 2);
    add(c, "m1", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 2);
    record_verdict(c, "INCOMPLETE", "5 of 9 expected items recorded", 9, 5, 1024, NULL);
    cJSON *cmp = a4w4_compare(b, c, NULL);
    cr_expect_str_eq(jstr(cJSON_GetObjectItem(cmp, "base"), "verdict"), "verdict not recorded");
    cr_expect_str_eq(jstr(cJSON_GetObjectItem(cmp, "cand"), "verdict"), "INCOMPLETE");
    cr_expect_str_eq(jstr(cJSON_GetObjectItem(cmp, "cand"), "completeness"),
                     "5 of 9 expected items recorded, 1024 outputs checked");
    char *md = a4w4_compare_markdown(cmp, NULL);
    cr_expect(contains(md, "**Verdict: NO NEW FAILURE**; **the candidate run is INCOMPLETE** "
                           "(its recorded verdict)."),
              "%s", md);
    cr_expect(contains(md, "1 entries, 0 failing; verdict not recorded)"), "%s", md);
    cr_expect(contains(md, "verdict INCOMPLETE, 5 of 9 expected items recorded, 1024 outputs "
                           "checked: 5 of 9 expected items recorded)"),
              "%s", md);
    free(md);
    char *h = a4w4_compare_html(cmp, NULL);
    cr_expect(contains(h, "<p class=\"banner incomplete\">&#9888; The candidate run is "
                          "INCOMPLETE"));
    free(h);
    cJSON_Delete(cmp);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

Test(compare, different_inputs_are_not_bit_changes)
{
    cJSON *b = doc_new("x"), *c = doc_new("x");
    add(b, "k", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 1);
    set_str(add(c, "k", 4, 256, 512, "cpu-asm", "ordered(1)", "pass", 1), "seed", "12");
    cJSON *cmp = a4w4_compare(b, c, NULL);
    cr_expect_eq(total(cmp, "inputs_differ"), 1);
    cr_expect_eq(total(cmp, "bits_changed"), 0);
    cr_expect_str_eq(jstr(find_item(cmp, "inputs_differ", "k"), "why"), "seed 11 -> 12");
    cJSON_Delete(cmp);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

/* ---------------------------------------------------------------- environment */

Test(environment, fills_the_header_and_validates)
{
    cJSON *d = doc_new("x");
    a4w4_environment_json(d);
    const cJSON *env = cJSON_GetObjectItem(d, "environment");
    cr_assert_not_null(env);
    cr_expect(strlen(jstr(env, "compiler")) > 3);
    const char *c = jstr(env, "git_commit");
    cr_expect(!strcmp(c, "unknown") || strspn(c, "0123456789abcdef") == strlen(c), "%s", c);
    cr_expect_eq(strlen(jstr(env, "date")), 20);
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(env, "tables"), 0);
    cr_expect_str_eq(jstr(t, "role"), "tuned");
    cr_expect_eq(strlen(jstr(t, "fnv1a64")), 16, "the tuned table is in the tree: %s",
                 jstr(t, "fnv1a64"));
    a4w4_environment_json(d); /* replaces, does not duplicate */
    int n = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, d)
        n += !strcmp(x->string, "environment");
    cr_expect_eq(n, 1);
    char err[512] = "";
    cr_expect_eq(validate(d, err, sizeof err), 0, "%s", err);
    cJSON_Delete(d);
}
