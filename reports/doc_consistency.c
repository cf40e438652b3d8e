/* doc_consistency.c — a4w4_entries_contradiction and a4w4_results_contradiction (see
 * a4w4_reports.h): a results document whose own fields contradict the verdicts it records is
 * refused where it is loaded, never rendered, compared or merged as if it were true. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "report_common.h"

/* What contradicts a "pass" in entry e's own fields (why, one phrase), or NULL. v1: e is of
 * a4w4check-results/1, where "ambiguous" said only that E8M0 code 0 was present. */
static const char *pass_contradiction(const cJSON *e, int v1, char *why, size_t len)
{
    double mm = jnum(e, "mismatches", 0), unw = jnum(e, "unwritten", 0);
    if (mm > 0)
        snprintf(why, len, "verdict pass with %.0f mismatches", mm);
    else if (unw > 0)
        snprintf(why, len, "verdict pass with %.0f outputs never written", unw);
    else if (*jstr(e, "aborted"))
        snprintf(why, len, "verdict pass although its run was aborted (%.40s)", jstr(e, "aborted"));
    else if (jtrue(e, "refused"))
        snprintf(why, len, "verdict pass although its result was refused");
    else if (!(jnum(e, "checked_outputs", 0) > 0))
        snprintf(why, len, "verdict pass with no output checked (checked_outputs %.0f)",
                 jnum(e, "checked_outputs", 0));
    else if (jtrue(e, "ambiguous") && !v1)
        snprintf(why, len, "verdict pass on an ambiguous result (E8M0 code 0: an ambiguous "
                 "result is never a pass, contracts §1)");
    else
        return NULL;
    return why;
}

int a4w4_entries_contradiction(const cJSON *cases, const char *schema, const char *name,
                               char *err, size_t errlen)
{
    const cJSON *e;
    int i = 0, v1 = schema && !strcmp(schema, A4W4_REPORT_SCHEMA_V1);
    cJSON_ArrayForEach(e, cases) {
        char why[200], nm[80], be[80];
        if (!strcmp(jstr(e, "verdict"), "pass") && pass_contradiction(e, v1, why, sizeof why)) {
            snprintf(err, errlen, "%s: entry %d (case %s on %s) records %s: its own fields "
                     "contradict its verdict (an edited or corrupted document); refused",
                     name ? name : "results", i, quote_text(jstr(e, "name"), nm, sizeof nm),
                     quote_text(jstr(e, "backend"), be, sizeof be), why);
            return -1;
        }
        i++;
    }
    return 0;
}

/* A recorded PASS over what cannot make one: an entry that failed (but a known failure, XFAIL:
 * listed, not failing the verdict), was skipped or is ambiguous, or counts that say so. why
 * gets the phrase; 0 when none. */
static int pass_over(const cJSON *doc, char *why, size_t len)
{
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
        const char *v = jstr(e, "verdict");
        if (strcmp(v, "pass") && strcmp(v, "n/a") && entry_verdict_index(e) != VERDICT_XFAIL) {
            char nm[80], be[80];
            snprintf(why, len, "verdict PASS over entry %d (case %s on %s) with verdict %s", i,
                     quote_text(jstr(e, "name"), nm, sizeof nm),
                     quote_text(jstr(e, "backend"), be, sizeof be), v);
            return 1;
        }
        i++;
    }
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "counts");
    if (!c)
        return 0;
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(c, "backends_unchecked");
    if (jnum(c, "fail", 0) > 0 || jnum(c, "skip", 0) > 0 || jnum(c, "ambiguous", 0) > 0 ||
        jnum(c, "recorded_items", -1) != jnum(c, "expected_items", -1) ||
        cJSON_GetArraySize(u) > 0) {
        snprintf(why, len, "verdict PASS with counts that deny it (%.0f fail, %.0f skip, %.0f "
                 "of %.0f items, %d backends unchecked)", jnum(c, "fail", 0), jnum(c, "skip", 0),
                 jnum(c, "recorded_items", -1), jnum(c, "expected_items", -1),
                 cJSON_GetArraySize(u));
        return 1;
    }
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The entries' distinct case names (call-sequence entries are their case's) and their checked
 * outputs (sum). -1 when out of memory. */
static double entries_tally(const cJSON *cases, double *outputs)
{
    size_t n = (size_t)cJSON_GetArraySize(cases), k = 0;
    const char **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    const cJSON *e;
    *outputs = 0;
    cJSON_ArrayForEach(e, cases) {
        *outputs += jnum(e, "checked_outputs", 0);
        if (!is_call_sequence(jstr(e, "name")))
            v[k++] = jstr(e, "name");
    }
    qsort(v, k, sizeof *v, cmp_name);
    double d = 0;
    for (size_t i = 0; i < k; i++)
        d += !i || strcmp(v[i], v[i - 1]);
    free(v);
    return d;
}

/* A batch-invariance measurement's items (docs/cli/invariance.md, "The results document"):
 * its document has no entries, every measurement is one item, and the outputs of those not
 * n/a were compared. The count of measurements; *outputs their outputs. */
static double measurements_tally(const cJSON *doc, double *outputs)
{
    const cJSON *inv = cJSON_GetObjectItemCaseSensitive(doc, "invariance"), *m;
    const cJSON *meas = cJSON_GetObjectItemCaseSensitive(inv, "measurements");
    *outputs = 0;
    cJSON_ArrayForEach(m, meas) if (strcmp(jstr(m, "verdict"), "n/a"))
        *outputs += jnum(m, "outputs", 0);
    return cJSON_GetArraySize(meas);
}

/* Counts the entries deny (the document's "counts" against its "cases" and "backends"):
 * another number of entries or of items, fewer outputs checked in the entries than counted,
 * a selected backend (not the oracle, not listed unchecked) without an entry. why gets the
 * phrase; 0 when none (or no counts to hold them to). */
/* 1 when an entry of cases is backend b's. */
static int has_entry(const cJSON *cases, const char *b)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cases) if (!strcmp(jstr(e, "backend"), b)) return 1;
    return 0;
}

/* 1 when b is a string listed in list. */
static int listed(const cJSON *list, const cJSON *b)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, list) if (cJSON_IsString(x) && !strcmp(x->valuestring, b->valuestring))
        return 1;
    return 0;
}

static int counts_denied(const cJSON *doc, char *why, size_t len)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "counts"), *b;
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    double outputs, n = cJSON_GetArraySize(cases), items;
    if (!cJSON_IsObject(c) || (items = entries_tally(cases, &outputs)) < 0)
        return 0;
    if (!n && !strcmp(jstr(doc, "set"), "invariance"))
        items = measurements_tally(doc, &outputs);
    if (jnum(c, "entries", n) != n || jnum(c, "recorded_items", items) != items ||
        jnum(c, "outputs_checked", 0) > outputs) {
        snprintf(why, len, "counts of %.0f entries, %.0f items, %.0f outputs checked over %.0f "
                 "entries of %.0f items checking %.0f outputs", jnum(c, "entries", n),
                 jnum(c, "recorded_items", items), jnum(c, "outputs_checked", 0), n, items,
                 outputs);
        return 1;
    }
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(c, "backends_unchecked");
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(doc, "backends")) {
        if (!n || !cJSON_IsString(b) || !strcmp(b->valuestring, "oracle") || listed(u, b))
            continue;
        if (!has_entry(cases, b->valuestring)) {
            char bn[80];
            snprintf(why, len, "backend %s selected, checked, and in no entry",
                     quote_text(b->valuestring, bn, sizeof bn));
            return 1;
        }
    }
    return 0;
}

/* 1 when the string s is listed in list. */
static int named(const cJSON *list, const char *s)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, list) if (cJSON_IsString(x) && !strcmp(x->valuestring, s)) return 1;
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    int c = strcmp(jstr(x, "name"), jstr(y, "name"));
    return c ? c : strcmp(jstr(x, "backend"), jstr(y, "backend"));
}

/* A run's item (a case, not golden/ or capture/ nor a call sequence) whose entries are the
 * run's backends, one each: 1 when name is such an item's. */
static int plain_case(const char *name)
{
    return strncmp(name, "golden/", 7) && strncmp(name, "capture/", 8) &&
           !is_call_sequence(name);
}

/* A run document (run, merge: its header's call_sequence) whose entries break its items: an
 * item with two entries of one backend, an entry of a backend the run did not select, or,
 * under a PASS, a case item without the entry of a backend in "backends" (entries removed;
 * `run` records one per backend of every case: docs/cli/run.md). why gets the phrase; 0 when none. -1 out of memory (not judged). */
static int items_broken(const cJSON *doc, char *why, size_t len)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases"), *e;
    const cJSON *bl = cJSON_GetObjectItemCaseSensitive(doc, "backends");
    size_t n = 0, nb = (size_t)cJSON_GetArraySize(bl), run = 0;
    if (!cJSON_GetObjectItemCaseSensitive(doc, "call_sequence"))
        return 0;
    const cJSON **v = malloc(((size_t)cJSON_GetArraySize(cases) + 1) * sizeof *v);
    if (!v)
        return -1;
    cJSON_ArrayForEach(e, cases) if (!is_call_sequence(jstr(e, "name"))) v[n++] = e;
    qsort(v, n, sizeof *v, cmp_entry);
    int pass = !strcmp(jstr(doc, "verdict"), "PASS"), bad = 0;
    char nm[80], be[80];
    for (size_t i = 0; i < n && !bad; i++) {
        int same = i && !strcmp(jstr(v[i], "name"), jstr(v[i - 1], "name"));
        if (same && !strcmp(jstr(v[i], "backend"), jstr(v[i - 1], "backend"))) {
            snprintf(why, len, "two entries of case %s on %s",
                     quote_text(jstr(v[i], "name"), nm, sizeof nm),
                     quote_text(jstr(v[i], "backend"), be, sizeof be));
            bad = 1;
        }
        if (!bad && strncmp(jstr(v[i], "name"), "capture/", 8) &&
            !named(bl, jstr(v[i], "backend"))) {
            snprintf(why, len, "an entry of case %s on %s, no backend of the run",
                     quote_text(jstr(v[i], "name"), nm, sizeof nm),
                     quote_text(jstr(v[i], "backend"), be, sizeof be));
            bad = 1;
        }
        run = same ? run + 1 : 1;
        int last = i + 1 == n || strcmp(jstr(v[i], "name"), jstr(v[i + 1], "name"));
        if (!bad && pass && last && plain_case(jstr(v[i], "name")) && run != nb) {
            snprintf(why, len, "verdict PASS over case %s with %zu of the %zu entries of its "
                     "backends", quote_text(jstr(v[i], "name"), nm, sizeof nm), run, nb);
            bad = 1;
        }
    }
    free(v);
    return bad;
}

int a4w4_results_contradiction(const cJSON *doc, const char *name, char *err, size_t errlen)
{
    if (a4w4_entries_contradiction(cJSON_GetObjectItemCaseSensitive(doc, "cases"),
                                   jstr(doc, "schema"), name, err, errlen))
        return -1;
    char why[300];
    if ((!strcmp(jstr(doc, "verdict"), "PASS") && pass_over(doc, why, sizeof why)) ||
        counts_denied(doc, why, sizeof why) || items_broken(doc, why, sizeof why) > 0) {
        snprintf(err, errlen, "%s: records %s: the document contradicts itself (an edited or "
                 "corrupted document); refused", name ? name : "results", why);
        return -1;
    }
    return 0;
}
