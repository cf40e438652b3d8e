/* results.c — results document helpers and the Markdown summary (see results.h). */
#include "results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "fsutil.h"

/* The Markdown summary is the report renderer's (reports/markdown.c), so `run` and `report
 * --format md` print the same thing. */
char *a4w4_summary_markdown(const cJSON *doc)
{
    return a4w4_report_markdown(doc, NULL);
}

a4w4_hstatus a4w4_results_write(const cJSON *doc, const char *dir, char *err, size_t errlen)
{
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
