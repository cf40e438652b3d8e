/* junit.c — a4w4_report_junit: the Ant/Jenkins JUnit XML format, so CI systems (Jenkins,
 * GitLab, GitHub test reporters) show the results natively. One <testsuite> per (backend,
 * contract), one <testcase> per case x backend; fail -> <failure>, n/a and skip -> <skipped>.
 * The document's recorded verdict and completeness are properties of every suite; an
 * INCOMPLETE verdict adds a suite "completeness" whose one testcase is an <error> with the
 * reason, so a dashboard never shows green over missing data.
 * tests/data/report_junit.xsd is the schema the tests validate it against. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "doc_verdict.h"
#include "report_common.h"

static const a4w4_report_opts default_opts = {0, NULL};

/* classname: "a4w4check." + backend with every character outside [A-Za-z0-9_-] as '_'
 * (JUnit viewers split class names at dots). */
static void classname(rbuf *b, const char *backend)
{
    rb_puts(b, "a4w4check.");
    char c[2] = {0, 0};
    for (const char *p = backend; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == '-';
        c[0] = ok ? (char)ch : '_';
        rb_puts(b, c);
    }
}

/* The failure message: counts and the first mismatch, one line. */
static void failure_message(rbuf *b, const cJSON *e)
{
    char msg[1024], counts[160];
    int compared = a4w4_report_differ_text(e, counts, sizeof counts);
    int k = snprintf(msg, sizeof msg, "%s %s %s", counts, compared ? "from" : "under",
                     jstr(e, "contract"));
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "first_mismatches"), 0);
    if (m && k > 0 && (size_t)k < sizeof msg)
        k += snprintf(msg + k, sizeof msg - (size_t)k,
                      "; first at %s(%.0f, %.0f): got %s expected %s",
                      *jstr(m, "tensor") ? jstr(m, "tensor") : "y", jnum(m, "row", 0),
                      jnum(m, "col", 0), jstr(m, "got"), jstr(m, "expected"));
    if (*jstr(e, "note") && k > 0 && (size_t)k < sizeof msg)
        snprintf(msg + k, sizeof msg - (size_t)k, "; %s", jstr(e, "note"));
    rb_xml(b, msg);
}

static void testcase(rbuf *b, const cJSON *e, int timings)
{
    rb_puts(b, "    <testcase name=\"");
    rb_xml(b, jstr(e, "name"));
    rb_puts(b, "\" classname=\"");
    classname(b, jstr(e, "backend"));
    rb_printf(b, "\" time=\"%.6f\"", timings ? jnum(e, "time_ms", 0) / 1e3 : 0.0);
    int v = entry_verdict_index(e);
    if (v == 0) {
        rb_puts(b, "/>\n");
        return;
    }
    rb_puts(b, ">\n");
    if (v == 1) {
        rb_puts(b, "      <failure type=\"");
        rb_puts(b, jnum(e, "mismatches", 0) > 0 ? "mismatch" : "check");
        rb_puts(b, "\" message=\"");
        failure_message(b, e);
        rb_puts(b, "\">case ");
        rb_xml(b, jstr(e, "name"));
        rb_puts(b, " on ");
        rb_xml(b, jstr(e, "backend"));
        rb_puts(b, " (");
        rb_xml(b, jstr(e, "contract"));
        rb_printf(b, "): M=%.0f N=%.0f K=%.0f, regime ", jnum(e, "M", 0), jnum(e, "N", 0),
                  jnum(e, "K", 0));
        rb_xml(b, jstr(e, "regime"));
        rb_puts(b, ", seed ");
        rb_xml(b, jstr(e, "seed"));
        char counts[160];
        if (a4w4_report_differ_text(e, counts, sizeof counts))
            rb_printf(b, ": %s (%.0f never written)", counts, jnum(e, "unwritten", 0));
        else
            rb_printf(b, ": %s", counts);
        const cJSON *m;
        cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(e, "first_mismatches")) {
            long u = bf16_hex_ulp(jstr(m, "got"), jstr(m, "expected"));
            rb_puts(b, "\n  ");
            rb_xml(b, *jstr(m, "tensor") ? jstr(m, "tensor") : "y");
            rb_printf(b, "(%.0f, %.0f): got ", jnum(m, "row", 0), jnum(m, "col", 0));
            rb_xml(b, jstr(m, "got"));
            rb_puts(b, " expected ");
            rb_xml(b, jstr(m, "expected"));
            if (u >= 0)
                rb_printf(b, " (%ld ULP)", u);
        }
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(e, "tolerance"))) {
            rb_puts(b, "\n ");
            tolerance_text(b, e, rb_xml); /* the peers' criteria on the same outputs */
        }
        rb_puts(b, "</failure>\n");
    } else {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "known_failure");
        rb_puts(b, "      <skipped message=\"");
        rb_puts(b, verdict_names[v]);
        if (v == VERDICT_XFAIL) { /* a known failure: listed, not failing */
            rb_puts(b, ": known failure ");
            rb_xml(b, jstr(k, "id"));
            rb_puts(b, " (");
            rb_xml(b, jstr(k, "upstream"));
            rb_puts(b, ")");
        } else if (*jstr(e, "note")) {
            rb_puts(b, ": ");
            rb_xml(b, jstr(e, "note"));
        }
        rb_puts(b, "\"/>\n");
    }
    rb_puts(b, "    </testcase>\n");
}

/* The recorded verdict and completeness as two properties. */
static void verdict_properties(rbuf *b, const doc_verdict *v)
{
    char comp[1200];
    rb_puts(b, "      <property name=\"verdict\" value=\"");
    rb_xml(b, doc_verdict_word(v));
    rb_puts(b, "\"/>\n      <property name=\"completeness\" value=\"");
    rb_xml(b, doc_completeness_text(v, comp, sizeof comp));
    rb_puts(b, "\"/>\n");
}

/* An INCOMPLETE verdict as a suite of its own: one testcase in error with the reason. */
static void completeness_suite(rbuf *b, const doc_verdict *v)
{
    char comp[1200];
    rb_puts(b, "  <testsuite name=\"completeness\" tests=\"1\" failures=\"0\" errors=\"1\" "
               "skipped=\"0\" time=\"0.000000\">\n"
               "    <testcase name=\"verdict\" classname=\"a4w4check.completeness\" "
               "time=\"0.000000\">\n      <error type=\"incomplete\" message=\"INCOMPLETE: ");
    rb_xml(b, v->reason);
    rb_puts(b, "\">");
    rb_xml(b, doc_completeness_text(v, comp, sizeof comp));
    rb_puts(b, "</error>\n    </testcase>\n  </testsuite>\n");
}

char *a4w4_report_junit(const cJSON *doc, const a4w4_report_opts *o)
{
    if (!o)
        o = &default_opts;
    rbuf b = {0};
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    int n[NVERDICTS];
    verdict_counts(cases, n);
    size_t nt = 0;
    tally *t = tally_build(cases, &nt);
    double total_ms = 0;
    for (size_t i = 0; i < nt; i++)
        total_ms += t[i].time_ms;
    doc_verdict v;
    doc_verdict_read(doc, &v);
    int incomplete = doc_verdict_index(&v) == 2;
    rb_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"a4w4check ");
    rb_xml(&b, jstr(doc, "set"));
    rb_printf(&b, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.6f\">\n",
              n[0] + n[1] + n[2] + n[3] + n[VERDICT_AMBIGUOUS] + incomplete, n[1], incomplete,
              n[2] + n[3] + n[VERDICT_AMBIGUOUS],
              o->reproducible ? 0.0 : total_ms / 1e3);
    if (incomplete)
        completeness_suite(&b, &v);
    for (size_t i = 0; i < nt; i++) {
        rb_puts(&b, "  <testsuite name=\"");
        rb_xml(&b, t[i].backend);
        rb_puts(&b, " [");
        rb_xml(&b, t[i].contract);
        rb_printf(&b,
                  "]\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.6f\">\n",
                  t[i].n[0] + t[i].n[1] + t[i].n[2] + t[i].n[3] + t[i].n[VERDICT_AMBIGUOUS],
                  t[i].n[1], t[i].n[2] + t[i].n[3] + t[i].n[VERDICT_AMBIGUOUS],
                  o->reproducible ? 0.0 : t[i].time_ms / 1e3);
        rb_puts(&b, "    <properties>\n      <property name=\"backend\" value=\"");
        rb_xml(&b, t[i].backend);
        rb_puts(&b, "\"/>\n      <property name=\"contract\" value=\"");
        rb_xml(&b, t[i].contract);
        rb_puts(&b, "\"/>\n      <property name=\"schema\" value=\"");
        rb_xml(&b, jstr(doc, "schema"));
        rb_puts(&b, "\"/>\n      <property name=\"set\" value=\"");
        rb_xml(&b, jstr(doc, "set"));
        rb_puts(&b, "\"/>\n");
        verdict_properties(&b, &v);
        const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc, "environment");
        if (!o->reproducible && *jstr(env, "git_commit")) {
            rb_puts(&b, "      <property name=\"git_commit\" value=\"");
            rb_xml(&b, jstr(env, "git_commit"));
            rb_puts(&b, "\"/>\n");
        }
        rb_puts(&b, "    </properties>\n");
        const cJSON *e;
        cJSON_ArrayForEach(e, cases) {
            if (strcmp(jstr(e, "backend"), t[i].backend) ||
                strcmp(jstr(e, "contract"), t[i].contract))
                continue;
            testcase(&b, e, !o->reproducible);
        }
        rb_puts(&b, "  </testsuite>\n");
    }
    free(t);
    rb_puts(&b, "</testsuites>\n");
    return rb_take(&b);
}
