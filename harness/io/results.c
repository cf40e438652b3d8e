/* results.c — the results document's Markdown summary and the atomic write of it and
 * results.json (see results.h); its verdict is reports/doc_judge.c's. */
#include "results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "a4w4_reports.h"
#include "fsutil.h"

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
