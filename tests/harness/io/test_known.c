/* test_known.c — the known-failures ledger's rules (harness/io/known.c): shape predicates,
 * backend / case / regime patterns, upstream version bounds, dates, and the statuses a
 * results document gets (xfail with the symptom, symptom-differs without it, xpass). */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "known.h"

static a4w4_known_entry entry(const char *backend, const char *cases, const char *shape,
                              const char *since, const char *until, const char *symptom)
{
    a4w4_known_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.id, sizeof e.id, "bug");
    snprintf(e.backend, sizeof e.backend, "%s", backend);
    snprintf(e.cases, sizeof e.cases, "%s", cases);
    snprintf(e.upstream, sizeof e.upstream, "https://example.org/1");
    snprintf(e.since, sizeof e.since, "%s", since);
    snprintf(e.until, sizeof e.until, "%s", until);
    snprintf(e.symptom, sizeof e.symptom, "%s", symptom);
    snprintf(e.last_matched, sizeof e.last_matched, "2026-01-01");
    char err[256];
    cr_assert_eq(a4w4_known_parse_shape(shape, &e, err, sizeof err), 0, "%s", err);
    return e;
}

Test(known, shape_predicates_hold_on_exactly_their_shapes)
{
    a4w4_known_entry e = entry("*", "*", "K%256!=0 & M>64 & M<=256", "", "", "");
    cr_expect(a4w4_known_matches(&e, "b", "c", "exact", 65, 8, 768 + 32, NULL));
    cr_expect(!a4w4_known_matches(&e, "b", "c", "exact", 64, 8, 800, NULL), "M > 64");
    cr_expect(!a4w4_known_matches(&e, "b", "c", "exact", 256 + 1, 8, 800, NULL), "M <= 256");
    cr_expect(!a4w4_known_matches(&e, "b", "c", "exact", 100, 8, 1024, NULL), "K %% 256 != 0");
    char err[256];
    static const char *const bad[] = {"Q<3", "M<", "M%0==1", "M<3 M>1", "M<<3", "M<3 &"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(a4w4_known_parse_shape(bad[i], &e, err, sizeof err), -1, "'%s'", bad[i]);
}

Test(known, backend_case_regime_and_versions_select_entries)
{
    a4w4_known_entry e = entry("bundle:*aiter*asm*", "m16_*", "", "1.2", "1.10", "");
    cr_expect(a4w4_known_matches(&e, "bundle:out/aiter-asm", "m16_n1", "exact", 1, 1, 32, NULL));
    cr_expect(!a4w4_known_matches(&e, "bundle:out/triton", "m16_n1", "exact", 1, 1, 32, NULL));
    cr_expect(!a4w4_known_matches(&e, "bundle:out/aiter-asm", "m1_n1", "exact", 1, 1, 32, NULL));
    cr_expect(a4w4_known_matches(&e, "bundle:out/aiter-asm", "m16_n1", "x", 1, 1, 32, "1.9"));
    cr_expect(!a4w4_known_matches(&e, "bundle:out/aiter-asm", "m16_n1", "x", 1, 1, 32, "1.10"),
              "until is exclusive, and 1.10 > 1.9 (numeric segments)");
    cr_expect(!a4w4_known_matches(&e, "bundle:out/aiter-asm", "m16_n1", "x", 1, 1, 32, "1.1"));
    a4w4_known_entry r = entry("*", "regime=normal:*", "", "", "", "");
    cr_expect(a4w4_known_matches(&r, "b", "c", "normal:even", 1, 1, 32, NULL));
    cr_expect(!a4w4_known_matches(&r, "b", "c", "wide", 1, 1, 32, NULL));
}

Test(known, days_between_dates)
{
    cr_expect_eq(a4w4_known_days("2026-11-01", "2026-12-01"), 30);
    cr_expect_eq(a4w4_known_days("2024-02-28", "2024-03-01T10:00:00Z"), 2, "a leap year");
    cr_expect_eq(a4w4_known_days("2026-13-01", "2026-12-01"), INT_MIN);
    cr_expect_eq(a4w4_known_days("yesterday", "2026-12-01"), INT_MIN);
}

static cJSON *one_entry_doc(const char *verdict, const char *signature)
{
    cJSON *d = cJSON_CreateObject();
    cJSON *b = cJSON_AddArrayToObject(d, "backends");
    cJSON_AddItemToArray(b, cJSON_CreateString("plugin:x.so"));
    cJSON *cs = cJSON_AddArrayToObject(d, "cases"), *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", "c1");
    cJSON_AddNumberToObject(e, "M", 1);
    cJSON_AddNumberToObject(e, "N", 1);
    cJSON_AddNumberToObject(e, "K", 288);
    cJSON_AddStringToObject(e, "regime", "exact");
    cJSON_AddStringToObject(e, "backend", "plugin:x.so");
    cJSON_AddStringToObject(e, "verdict", verdict);
    cJSON_AddStringToObject(e, "signature", signature);
    cJSON_AddItemToArray(cs, e);
    return d;
}

static const char *status_after(const char *verdict, const char *signature, const char *symptom)
{
    static char buf[32];
    a4w4_known_entry e = entry("plugin:*", "*", "K%256!=0", "", "", symptom);
    a4w4_known_ledger l = {"led.csv", &e, 1};
    cJSON *d = one_entry_doc(verdict, signature);
    a4w4_known_apply(d, &l, "2026-12-01");
    const cJSON *k = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "cases"), 0),
                                         "known_failure");
    snprintf(buf, sizeof buf, "%s", k ? cJSON_GetObjectItem(k, "status")->valuestring : "none");
    cJSON_Delete(d);
    return buf;
}

Test(known, a_failure_is_xfail_only_with_its_symptom)
{
    cr_expect_str_eq(status_after("fail", "NaN where a finite value is due in ...", "NaN where"),
                     "xfail");
    cr_expect_str_eq(status_after("fail", "wrong values in ...", "NaN where"), "symptom-differs");
    cr_expect_str_eq(status_after("fail", "anything", ""), "xfail");
    cr_expect_str_eq(status_after("pass", "", "NaN where"), "xpass");
    cr_expect_str_eq(status_after("n/a", "", ""), "none");
}

/* The status a failing entry with signature class cls, unwritten outputs and aborted ("" none)
 * gets under an entry with symptom sym. */
static const char *status_of_failure(const char *cls, int unwritten, const char *aborted,
                                     const char *sym)
{
    static char buf[32];
    a4w4_known_entry e = entry("plugin:*", "*", "K%256!=0", "", "", sym);
    a4w4_known_ledger l = {"led.csv", &e, 1};
    cJSON *d = one_entry_doc("fail", "some hypothesis");
    cJSON *x = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "cases"), 0);
    cJSON_AddStringToObject(x, "signature_class", cls);
    cJSON_AddNumberToObject(x, "unwritten", unwritten);
    if (*aborted)
        cJSON_AddStringToObject(x, "aborted", aborted);
    a4w4_known_apply(d, &l, "2026-12-01");
    const cJSON *k = cJSON_GetObjectItem(x, "known_failure");
    snprintf(buf, sizeof buf, "%s", k ? cJSON_GetObjectItem(k, "status")->valuestring : "none");
    cJSON_Delete(d);
    return buf;
}

/* Missing data is never XFAIL unless the entry says exactly that (docs/forensics.md): an
 * entry with unwritten outputs only under "unwritten", a crash only under "crashed"; a
 * class= symptom matches the signature_class exactly. */
Test(known, missing_outputs_and_crashes_are_xfail_only_when_the_entry_says_so)
{
    cr_expect_str_eq(status_of_failure("values", 0, "", "class=values"), "xfail");
    cr_expect_str_eq(status_of_failure("nan", 0, "", "class=values"), "symptom-differs");
    cr_expect_str_eq(status_of_failure("values", 3, "", "class=values"), "symptom-differs");
    cr_expect_str_eq(status_of_failure("unwritten", 64, "", "class=values"), "symptom-differs");
    cr_expect_str_eq(status_of_failure("unwritten", 64, "", "hypothesis"), "symptom-differs");
    cr_expect_str_eq(status_of_failure("unwritten", 64, "", "unwritten"), "xfail");
    cr_expect_str_eq(status_of_failure("values", 0, "", "unwritten"), "symptom-differs");
    cr_expect_str_eq(status_of_failure("crashed", 0, "crashed", "class=values"), "symptom-differs");
    cr_expect_str_eq(status_of_failure("crashed", 0, "crashed", "crashed"), "xfail");
    cr_expect_str_eq(status_of_failure("timed-out", 0, "timed out", "crashed"), "symptom-differs");
    cr_expect_str_eq(status_of_failure("timed-out", 0, "timed out", "timed-out"), "xfail");
}

/* A ledger whose text is written to path. */
static a4w4_hstatus load_text(const char *path, const char *text, a4w4_known_ledger *l,
                              char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
    return a4w4_known_load(path, l, err, errlen);
}

Test(known, an_entry_without_a_symptom_or_matching_everything_is_refused)
{
    char err[512];
    a4w4_known_ledger l;
    const char *head = "id,backend,case,shape,upstream,since,until,symptom,last_matched\n";
    char text[512];
    snprintf(text, sizeof text, "%sx,plugin:*,*,K%%256!=0,u,,,,2026-01-01\n", head);
    cr_expect_eq(load_text("known_nosym.csv", text, &l, err, sizeof err), A4W4_ST_BADINPUT);
    cr_expect(strstr(err, "entry x: symptom is required"), "%s", err);
    snprintf(text, sizeof text, "%sall,*,*,,u,,,class=sign,2026-01-01\n", head);
    cr_expect_eq(load_text("known_all.csv", text, &l, err, sizeof err), A4W4_ST_BADINPUT);
    cr_expect(strstr(err, "entry all: backend '*' and case '*' match every entry"), "%s", err);
    snprintf(text, sizeof text, "%sok,plugin:*,*,K%%256!=0,u,,,class=values,2026-01-01\n", head);
    cr_expect_eq(load_text("known_ok.csv", text, &l, err, sizeof err), A4W4_ST_OK, "%s", err);
    a4w4_known_free(&l);
    remove("known_nosym.csv");
    remove("known_all.csv");
    remove("known_ok.csv");
}

/* An entry matching more than half of a run's entries is refused; at half it is not. */
Test(known, an_entry_matching_most_of_a_run_is_refused)
{
    a4w4_known_entry e = entry("plugin:*", "*", "K%256!=0", "", "", "class=values");
    a4w4_known_ledger l = {"led.csv", &e, 1};
    char err[512] = "";
    for (int hits = 4; hits <= 5; hits++) {
        cJSON *d = one_entry_doc("fail", "x");
        cJSON *cs = cJSON_GetObjectItem(d, "cases");
        for (int i = 1; i < 8; i++) { /* 8 entries: the first 'hits' of them have K = 288 */
            cJSON *x = cJSON_Duplicate(cJSON_GetArrayItem(cs, 0), 1);
            cJSON_SetNumberValue(cJSON_GetObjectItem(x, "K"), i < hits ? 288 : 256);
            cJSON_AddItemToArray(cs, x);
        }
        int rc = a4w4_known_check_share(d, &l, err, sizeof err);
        cr_expect_eq(rc, hits == 5 ? -1 : 0, "%d of 8: %s", hits, err);
        cJSON_Delete(d);
    }
    cr_expect(strstr(err, "matches 5 of the run's 8 entries, more than 50%"), "%s", err);
}
