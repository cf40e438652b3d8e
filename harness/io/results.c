/* results.c — the results document's verdict and counts, its Markdown summary, and the
 * atomic write of both (see results.h). */
#include "results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "a4w4_reports.h"
#include "fsutil.h"
#include "jsontext.h"
#include "known.h"

static const char *const verdict_text[3] = {"PASS", "FAIL", "INCOMPLETE"};

/* Number field key of o, 0 when absent or not a number. */
static double jnum_or(const cJSON *o, const char *key)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(n) ? n->valuedouble : 0;
}

/* Entries by verdict (pass, fail, n/a, skip, ambiguous; anything else counts as skip; a
 * known failure of the ledger, io/known.h, in n[5] "xfail" and not in "fail"; n[6] "xpass":
 * passing entries a ledger entry expected to fail) and the outputs checked by pass and fail
 * entries. */
static void tally_entries(const cJSON *cases, double n[7], double *outputs)
{
    static const char *const names[5] = {"pass", "fail", "n/a", "skip", "ambiguous"};
    const cJSON *e;
    cJSON_ArrayForEach(e, cases) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "verdict");
        int k = 0;
        while (k < 5 && !(cJSON_IsString(v) && !strcmp(v->valuestring, names[k])))
            k++;
        const char *ks = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(e, "known_failure"), "status"));
        n[k == 5 ? 3 : k == 1 && a4w4_known_is_xfail(e) ? 5 : k]++;
        n[6] += k == 0 && ks && !strcmp(ks, "xpass");
        const cJSON *co = cJSON_GetObjectItemCaseSensitive(e, "checked_outputs");
        if (k < 2 && cJSON_IsNumber(co))
            *outputs += co->valuedouble;
    }
}

/* 1 when some entry of backend b compared outputs: verdict pass or fail, checked_outputs
 * > 0. */
static size_t backend_compared(const cJSON *cases, const char *b, size_t *entries)
{
    const cJSON *e;
    size_t n = 0;
    *entries = 0;
    cJSON_ArrayForEach(e, cases) {
        const cJSON *be = cJSON_GetObjectItemCaseSensitive(e, "backend");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "verdict");
        const cJSON *co = cJSON_GetObjectItemCaseSensitive(e, "checked_outputs");
        if (!cJSON_IsString(be) || strcmp(be->valuestring, b))
            continue;
        ++*entries;
        n += cJSON_IsString(v) &&
             (!strcmp(v->valuestring, "pass") || !strcmp(v->valuestring, "fail")) &&
             cJSON_IsNumber(co) && co->valuedouble > 0;
    }
    return n;
}

/* The selected backends (doc's "backends" but "oracle") without a comparison, or that judged
 * fewer than A4W4_MIN_JUDGED_SHARE of their entries (the rest n/a or skip), as a new array;
 * the names of the first joined by ", " into list, the second with their shares into few
 * (each truncated to len). */
static cJSON *unchecked_backends(const cJSON *doc, const cJSON *cases, char *list, char *few,
                                 size_t len)
{
    cJSON *u = cJSON_CreateArray();
    size_t k = 0, kf = 0, entries;
    list[0] = few[0] = 0;
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(doc, "backends")) {
        if (!cJSON_IsString(b) || !strcmp(b->valuestring, "oracle"))
            continue;
        size_t judged = backend_compared(cases, b->valuestring, &entries);
        if (judged && judged * 100 >= entries * A4W4_MIN_JUDGED_SHARE)
            continue;
        cJSON_AddItemToArray(u, cJSON_CreateString(b->valuestring));
        if (!judged && k < len)
            k += (size_t)snprintf(list + k, len - k, "%s%s", k ? ", " : "", b->valuestring);
        else if (judged && kf < len)
            kf += (size_t)snprintf(few + kf, len - kf, "%sbackend %s judged %zu of its %zu "
                                   "entries", kf ? "; " : "", b->valuestring, judged, entries);
    }
    return u;
}

/* Append to reason (of len bytes) the known failures (XFAIL) and the XPASS entries. */
static void add_known(const double n[7], char *reason, size_t len)
{
    size_t k = strlen(reason);
    if (n[5] > 0 && k < len)
        k += (size_t)snprintf(reason + k, len - k, "; %.0f known failure%s (XFAIL: listed in "
                              "known_failures, not counted as failing)", n[5],
                              n[5] == 1 ? "" : "s");
    if (n[6] > 0 && k < len)
        snprintf(reason + k, len - k, "; %.0f XPASS (a known failure passes: fixed upstream? "
                 "remove the ledger entry)", n[6]);
}

/* Append to reason (of len bytes) the contracts departing from the reference numerics that
 * judged the document's entries (its "contract_departures", contracts §4.2), so that no
 * verdict hides them: "; PASS under a contract that truncates the final bf16 rounding
 * (plugin:X; its contract discovered by ..., given with --contract F)". */
static void add_departures(const cJSON *doc, const char *verdict, char *reason, size_t len)
{
    const cJSON *dep = cJSON_GetObjectItemCaseSensitive(doc, "contract_departures"), *d;
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(doc, "contract_sources");
    size_t k = strlen(reason);
    cJSON_ArrayForEach(d, dep) {
        if (!cJSON_IsString(d) || k >= len)
            continue;
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(src, d->string);
        k += (size_t)snprintf(reason + k, len - k, "; %s under a contract that %s (%s%s%s)",
                              verdict, d->valuestring, d->string,
                              cJSON_IsString(s) ? ": " : "",
                              cJSON_IsString(s) ? s->valuestring : "");
    }
}

/* A call sequence (docs/backends.md "Call sequences") the run turned off or could not make,
 * said in the verdict line: "; call sequence off (--no-call-sequence): ...". */
static void add_call_sequence(const cJSON *doc, char *reason, size_t len)
{
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(doc, "call_sequence");
    size_t k = strlen(reason);
    if (!cJSON_IsString(cs) || k >= len ||
        (strncmp(cs->valuestring, "off", 3) && strncmp(cs->valuestring, "not run", 7)))
        return;
    snprintf(reason + k, len - k, "; call sequence %s", cs->valuestring);
}

/* The one-line reason for verdict v. */
static void reason_text(char *r, size_t len, a4w4_doc_verdict v, double fails,
                        const a4w4_completeness *c, const char *unchecked, const char *few,
                        double outputs)
{
    char inc[2600] = "";
    size_t k = 0;
    if (c->recorded_items != c->expected_items)
        k += (size_t)snprintf(inc, sizeof inc, "%zu of %zu expected items recorded",
                              c->recorded_items, c->expected_items);
    if (*unchecked && k < sizeof inc)
        k += (size_t)snprintf(inc + k, sizeof inc - k, "%sbackend%s %s made no comparison "
                              "(every entry n/a or skip)", k ? "; " : "",
                              strchr(unchecked, ',') ? "s" : "", unchecked);
    if (*few && k < sizeof inc)
        snprintf(inc + k, sizeof inc - k, "%s%s: fewer than %d %% judged, the rest n/a or skip "
                 "(a backend must judge at least that share of its entries)", k ? "; " : "", few,
                 A4W4_MIN_JUDGED_SHARE);
    if (v == A4W4_DOC_FAIL)
        snprintf(r, len, "%.0f failing entr%s%s%s", fails, fails == 1 ? "y" : "ies",
                 *inc ? "; also incomplete: " : "", inc);
    else if (v == A4W4_DOC_INCOMPLETE)
        snprintf(r, len, "%s", inc);
    else
        snprintf(r, len, "every expected item recorded (%zu of %zu), every backend compared "
                 "outputs (%.0f outputs checked), no failure", c->recorded_items,
                 c->expected_items, outputs);
}

/* Append to reason (of len bytes) how many entries were aborted (an entry's "aborted":
 * the backend's code crashed or hung on it) and the first one's case, backend and note, so
 * the verdict line says it and not only a row. */
static void add_aborted(const cJSON *cases, char *reason, size_t len)
{
    size_t n = 0, k = strlen(reason);
    const cJSON *e, *first = NULL;
    cJSON_ArrayForEach(e, cases) {
        if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "aborted"))) {
            n++;
            first = first ? first : e;
        }
    }
    if (!n || k >= len)
        return;
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(first, "name");
    const cJSON *be = cJSON_GetObjectItemCaseSensitive(first, "backend");
    const cJSON *no = cJSON_GetObjectItemCaseSensitive(first, "note");
    snprintf(reason + k, len - k, "; %zu entr%s crashed or timed out (first: %s on %s: %.300s)",
             n, n == 1 ? "y" : "ies", cJSON_IsString(nm) ? nm->valuestring : "?",
             cJSON_IsString(be) ? be->valuestring : "?",
             cJSON_IsString(no) ? no->valuestring : "no note");
}

/* Append to reason (of len bytes) how many entries have verdict `verdict` (skip, ambiguous:
 * comparisons not made) and the first one's case, backend and note, so the verdict line
 * says it and not only a row. */
static void add_unjudged(const cJSON *cases, const char *verdict, double count, char *reason,
                         size_t len)
{
    size_t k = strlen(reason);
    if (count <= 0 || k >= len)
        return;
    const cJSON *e, *first = NULL;
    cJSON_ArrayForEach(e, cases) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "verdict");
        if (cJSON_IsString(v) && !strcmp(v->valuestring, verdict)) {
            first = e;
            break;
        }
    }
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(first, "name");
    const cJSON *be = cJSON_GetObjectItemCaseSensitive(first, "backend");
    const cJSON *no = cJSON_GetObjectItemCaseSensitive(first, "note");
    snprintf(reason + k, len - k, "%s%.0f entr%s %s (first: %s on %s: %.300s)", k ? "; " : "",
             count, count == 1 ? "y" : "ies", !strcmp(verdict, "skip") ? "skipped" : verdict,
             cJSON_IsString(nm) ? nm->valuestring : "?",
             cJSON_IsString(be) ? be->valuestring : "?",
             cJSON_IsString(no) ? no->valuestring : "no note");
}

/* Add an entry's judged_* counts to the row of its regime (without a ":mode" suffix) and to
 * "all" in the object of its backend, with "matching": the judged outputs (bit for bit or
 * within the bound) that matched, i.e. less the entry's mismatches. NULL when out of memory. */
static cJSON *judged_add(cJSON *per_backend, const cJSON *e)
{
    static const char *const keys[5] = {"outputs", "bit_exact", "in_bound", "not_judged",
                                        "matching"};
    double v[5] = {0, jnum_or(e, "judged_bit_exact"), jnum_or(e, "judged_in_bound"),
                   jnum_or(e, "not_judged"), 0};
    v[0] = v[1] + v[2] + v[3];
    double differ = jnum_or(e, "mismatches"); /* among the judged outputs; at most all */
    v[4] = v[1] + v[2] - (differ < v[1] + v[2] ? differ : v[1] + v[2]);
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "regime");
    char regime[32];
    snprintf(regime, sizeof regime, "%s", cJSON_IsString(r) ? r->valuestring : "?");
    regime[strcspn(regime, ":")] = 0;
    const char *rows[2] = {"all", regime};
    for (int i = 0; i < 2; i++) {
        cJSON *row = cJSON_GetObjectItemCaseSensitive(per_backend, rows[i]);
        if (!row && !(row = cJSON_AddObjectToObject(per_backend, rows[i])))
            return NULL;
        for (int k = 0; k < 5; k++) {
            cJSON *n = cJSON_GetObjectItemCaseSensitive(row, keys[k]);
            if (n)
                cJSON_SetNumberValue(n, n->valuedouble + v[k]);
            else if (!cJSON_AddNumberToObject(row, keys[k], v[k]))
                return NULL;
        }
    }
    return per_backend;
}

/* The document's "judged": per backend (the oracle's self-checks left out), per regime and
 * "all", how many GEMM outputs its entries covered and how many of them were judged bit for
 * bit, within a bound, or not at all (entries with the judged_* fields; entry.h). */
static cJSON *judged_table(const cJSON *cases)
{
    cJSON *t = cJSON_CreateObject();
    const cJSON *e;
    cJSON_ArrayForEach(e, cases) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(e, "backend");
        if (!t || !cJSON_IsString(b) || !strcmp(b->valuestring, "oracle") ||
            !cJSON_GetObjectItemCaseSensitive(e, "not_judged"))
            continue;
        cJSON *pb = cJSON_GetObjectItemCaseSensitive(t, b->valuestring);
        if ((!pb && !(pb = cJSON_AddObjectToObject(t, b->valuestring))) || !judged_add(pb, e)) {
            cJSON_Delete(t);
            t = NULL;
        }
    }
    return t;
}

a4w4_doc_verdict a4w4_results_judge(cJSON *doc, const a4w4_completeness *c)
{
    cJSON *cases = cJSON_DetachItemFromObjectCaseSensitive(doc, "cases");
    double n[7] = {0, 0, 0, 0, 0, 0, 0}, outputs = 0;
    tally_entries(cases, n, &outputs);
    char unchecked[1024], few[1024], reason[3200];
    cJSON *u = unchecked_backends(doc, cases, unchecked, few, sizeof unchecked);
    int nu = cJSON_GetArraySize(u);
    /* a skipped entry (e.g. a bundle with no output file for a case) is an expected
     * comparison not made, and so is an ambiguous one (contracts §1: an ambiguous result is
     * never a pass): the verdict cannot be PASS over either */
    int complete = !nu && !n[3] && !n[4] && c->recorded_items == c->expected_items;
    a4w4_doc_verdict v = n[1] > 0 ? A4W4_DOC_FAIL : complete ? A4W4_DOC_PASS : A4W4_DOC_INCOMPLETE;
    reason_text(reason, sizeof reason, v, n[1], c, unchecked, few, outputs);
    add_unjudged(cases, "skip", n[3], reason, sizeof reason);
    add_unjudged(cases, "ambiguous", n[4], reason, sizeof reason);
    add_aborted(cases, reason, sizeof reason);
    add_known(n, reason, sizeof reason);
    add_departures(doc, verdict_text[v], reason, sizeof reason);
    add_call_sequence(doc, reason, sizeof reason);
    static const char *const keys[3] = {"verdict", "verdict_reason", "counts"};
    for (int i = 0; i < 3; i++)
        cJSON_DeleteItemFromObjectCaseSensitive(doc, keys[i]);
    cJSON_AddStringToObject(doc, "verdict", verdict_text[v]);
    cJSON_AddStringToObject(doc, "verdict_reason", reason);
    cJSON *ct = cJSON_AddObjectToObject(doc, "counts");
    cJSON_AddNumberToObject(ct, "entries", n[0] + n[1] + n[2] + n[3] + n[4] + n[5]);
    static const char *const names[7] = {"pass", "fail",  "n/a",  "skip",
                                         "ambiguous", "xfail", "xpass"};
    for (int i = 0; i < 7; i++)
        if (i < 5 || n[i] > 0)
            cJSON_AddNumberToObject(ct, names[i], n[i]);
    cJSON_AddNumberToObject(ct, "expected_items", (double)c->expected_items);
    cJSON_AddNumberToObject(ct, "recorded_items", (double)c->recorded_items);
    cJSON_AddNumberToObject(ct, "outputs_checked", outputs);
    cJSON_AddItemToObject(ct, "backends_unchecked", u);
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "judged");
    cJSON_AddItemToObject(doc, "judged", judged_table(cases));
    cJSON_AddItemToObject(doc, "cases", cases ? cases : cJSON_CreateArray());
    return v;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Distinct case names among the entries (0 when out of memory). */
static size_t distinct_names(const cJSON *cases)
{
    size_t n = (size_t)cJSON_GetArraySize(cases), k = 0, d = 0;
    const char **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cases) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(nm))
            v[k++] = nm->valuestring;
    }
    qsort(v, k, sizeof *v, cmp_str);
    for (size_t i = 0; i < k; i++)
        d += !i || strcmp(v[i], v[i - 1]);
    free(v);
    return d;
}

/* The Markdown summary is the report renderer's (reports/markdown.c), so `run` and `report
 * --format md` print the same thing. */
char *a4w4_summary_markdown(const cJSON *doc)
{
    return a4w4_report_markdown(doc, NULL);
}

a4w4_hstatus a4w4_results_write(cJSON *doc, const char *dir, char *err, size_t errlen)
{
    a4w4_json_text_guard(doc); /* raw bytes of a path or a name: still JSON, still XML */
    if (!cJSON_GetObjectItemCaseSensitive(doc, "verdict")) {
        size_t items = distinct_names(cJSON_GetObjectItemCaseSensitive(doc, "cases"));
        a4w4_completeness c = {items, items};
        a4w4_results_judge(doc, &c);
    }
    char path[4096];
    char *json = cJSON_Print(doc);
    char *md = a4w4_summary_markdown(doc);
    a4w4_hstatus rc = A4W4_ST_NOMEM;
    if (!json || !md) {
        snprintf(err, errlen, "%s: out of memory rendering results", dir);
        goto out;
    }
    snprintf(path, sizeof path, "%s/results.json", dir);
    rc = a4w4_write_atomic(path, json, strlen(json), err, errlen);
    if (rc)
        goto out;
    snprintf(path, sizeof path, "%s/summary.md", dir);
    rc = a4w4_write_atomic(path, md, strlen(md), err, errlen);
out:
    free(json);
    free(md);
    return rc;
}

cJSON *a4w4_results_read(const char *path, char *err, size_t errlen)
{
    char buf[4200];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(buf, sizeof buf, "%s/results.json", path);
        path = buf;
    }
    size_t n;
    int missing;
    char *text = a4w4_read_regular(path, 0, &n, &missing, err, errlen);
    if (!text)
        return NULL;
    cJSON *doc = a4w4_results_parse(text, n, path, err, errlen);
    free(text);
    return doc;
}
