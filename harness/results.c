/* results.c — results document helpers and the Markdown summary (see results.h). */
#include "results.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"

cJSON *a4w4_entry_new(const char *name, size_t M, size_t N, size_t K, const char *regime,
                      unsigned long long seed, const char *backend, const char *contract)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddNumberToObject(e, "M", (double)M);
    cJSON_AddNumberToObject(e, "N", (double)N);
    cJSON_AddNumberToObject(e, "K", (double)K);
    cJSON_AddStringToObject(e, "regime", regime);
    char s[32];
    snprintf(s, sizeof s, "%llu", seed);
    cJSON_AddStringToObject(e, "seed", s);
    cJSON_AddStringToObject(e, "backend", backend);
    cJSON_AddStringToObject(e, "contract", contract);
    return e;
}

static const char *verdict_name(a4w4_check_verdict v)
{
    return v == A4W4_CHECK_PASS ? "pass" : v == A4W4_CHECK_FAIL ? "fail" : "n/a";
}

void a4w4_entry_set_check(cJSON *e, const a4w4_check *c)
{
    cJSON_AddNumberToObject(e, "checked_outputs", (double)c->checked);
    cJSON_AddStringToObject(e, "verdict", verdict_name(c->verdict));
    cJSON_AddNumberToObject(e, "mismatches", (double)c->mismatches);
    cJSON_AddNumberToObject(e, "max_ulp", c->max_ulp == (unsigned)-1 ? -1.0 : (double)c->max_ulp);
    cJSON *fm = cJSON_AddArrayToObject(e, "first_mismatches");
    if (c->verdict == A4W4_CHECK_FAIL && c->mismatches) {
        cJSON *m = cJSON_CreateObject();
        char h[16];
        cJSON_AddStringToObject(m, "tensor", c->subject);
        cJSON_AddNumberToObject(m, "row", (double)c->first_row);
        cJSON_AddNumberToObject(m, "col", (double)c->first_col);
        snprintf(h, sizeof h, "0x%0*x", c->elem_bytes * 2, (unsigned)c->got);
        cJSON_AddStringToObject(m, "got", h);
        snprintf(h, sizeof h, "0x%0*x", c->elem_bytes * 2, (unsigned)c->expected);
        cJSON_AddStringToObject(m, "expected", h);
        cJSON_AddItemToArray(fm, m);
    }
    if (c->note[0])
        cJSON_AddStringToObject(e, "note", c->note);
}

/* growable string */
typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0)
            return;
        if (b->s && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)k;
        char *p = realloc(b->s, cap);
        if (!p)
            return;
        b->s = p;
        b->cap = cap;
    }
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

char *a4w4_summary_markdown(const cJSON *doc)
{
    sbuf b = {0};
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    sb_printf(&b, "# a4w4check run: %s\n\n", str(doc, "set"));
    sb_printf(&b, "Cases file: `%s`. Contracts: SPEC section 4.1 (bit-exact against ordered(1) "
                  "or exact).\n\n", str(doc, "cases_file"));
    /* one verdict line per (backend, contract) */
    sb_printf(&b, "| backend | contract | pass | fail | n/a | skip |\n|---|---|---:|---:|---:|---:|\n");
    const cJSON *e, *f;
    int idx = 0;
    cJSON_ArrayForEach(e, cases) {
        int first = 1, j = 0; /* first entry of its (backend, contract) pair? */
        cJSON_ArrayForEach(f, cases) {
            if (j++ >= idx)
                break;
            if (!strcmp(str(f, "backend"), str(e, "backend")) &&
                !strcmp(str(f, "contract"), str(e, "contract")))
                first = 0;
        }
        idx++;
        if (!first)
            continue;
        int cnt[4] = {0};
        cJSON_ArrayForEach(f, cases) {
            if (strcmp(str(f, "backend"), str(e, "backend")) ||
                strcmp(str(f, "contract"), str(e, "contract")))
                continue;
            const char *v = str(f, "verdict");
            cnt[!strcmp(v, "pass") ? 0 : !strcmp(v, "fail") ? 1 : !strcmp(v, "n/a") ? 2 : 3]++;
        }
        sb_printf(&b, "| %s | %s | %d | %d | %d | %d |\n", str(e, "backend"), str(e, "contract"),
                  cnt[0], cnt[1], cnt[2], cnt[3]);
    }
    int nfail = 0;
    cJSON_ArrayForEach(e, cases) nfail += !strcmp(str(e, "verdict"), "fail");
    sb_printf(&b, "\n**Verdict: %s** (%d failing entries of %d).\n\n", nfail ? "FAIL" : "PASS",
              nfail, cJSON_GetArraySize(cases));
    if (nfail) {
        sb_printf(&b, "## Failures\n\n");
        cJSON_ArrayForEach(e, cases) {
            if (strcmp(str(e, "verdict"), "fail"))
                continue;
            const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "first_mismatches"), 0);
            sb_printf(&b, "- `%s` on %s (%s): %.0f of %.0f outputs differ", str(e, "name"),
                      str(e, "backend"), str(e, "contract"), num(e, "mismatches"),
                      num(e, "checked_outputs"));
            if (m)
                sb_printf(&b, "; first `%s` at (%.0f, %.0f): got %s expected %s", str(m, "tensor"),
                          num(m, "row"), num(m, "col"), str(m, "got"), str(m, "expected"));
            sb_printf(&b, "\n");
        }
        sb_printf(&b, "\n");
    }
    sb_printf(&b, "## Every case\n\n"
                  "| case | M | N | K | regime | backend | contract | checked outputs | sampled | "
                  "verdict | time ms | note |\n|---|---:|---:|---:|---|---|---|---:|---|---|---:|---|\n");
    cJSON_ArrayForEach(e, cases) {
        const cJSON *sm = cJSON_GetObjectItemCaseSensitive(e, "sampled");
        sb_printf(&b, "| %s | %.0f | %.0f | %.0f | %s | %s | %s | %.0f | %s | %s | %.1f | %s |\n",
                  str(e, "name"), num(e, "M"), num(e, "N"), num(e, "K"), str(e, "regime"),
                  str(e, "backend"), str(e, "contract"), num(e, "checked_outputs"),
                  cJSON_IsTrue(sm) ? "sampled" : "full", str(e, "verdict"), num(e, "time_ms"),
                  str(e, "note"));
    }
    return b.s;
}

int a4w4_results_write(const cJSON *doc, const char *dir, char *err, size_t errlen)
{
    char path[4096];
    char *json = cJSON_Print(doc);
    char *md = a4w4_summary_markdown(doc);
    int rc = -1;
    if (!json || !md) {
        snprintf(err, errlen, "%s: out of memory rendering results", dir);
        goto out;
    }
    snprintf(path, sizeof path, "%s/results.json", dir);
    if (a4w4_write_atomic(path, json, strlen(json), err, errlen))
        goto out;
    snprintf(path, sizeof path, "%s/summary.md", dir);
    if (a4w4_write_atomic(path, md, strlen(md), err, errlen))
        goto out;
    rc = 0;
out:
    free(json);
    free(md);
    return rc;
}
