/* results_schema.c — reading and validating results documents against the embedded schema
 * (reports/schema/results.schema.json; CMake turns it into a4w4_results_schema_blob). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "a4w4_jsonschema.h"
#include "a4w4_reports.h"
#include "report_common.h"

extern const char a4w4_results_schema_blob[]; /* generated: reports_schema_blob.c */

const char *a4w4_results_schema_text(void)
{
    return a4w4_results_schema_blob;
}

int a4w4_results_validate(const cJSON *doc, const char *name, char *err, size_t errlen)
{
    const char *nm = name ? name : "results";
    if (!cJSON_IsObject(doc)) {
        snprintf(err, errlen, "%s: a results document is a JSON object (schema %s)", nm,
                 A4W4_REPORT_SCHEMA);
        return -1;
    }
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    if (cJSON_IsString(ver) && strcmp(ver->valuestring, A4W4_REPORT_SCHEMA) &&
        strcmp(ver->valuestring, A4W4_REPORT_SCHEMA_V1)) {
        char shown[84]; /* cut at 80 bytes as before, one line */
        snprintf(err, errlen, "%s: schema '%.80s' is not supported (this a4w4check reads %s and "
                 "%s)", nm, quote_text(ver->valuestring, shown, sizeof shown), A4W4_REPORT_SCHEMA,
                 A4W4_REPORT_SCHEMA_V1);
        return -1;
    }
    cJSON *schema = cJSON_Parse(a4w4_results_schema_blob);
    char why[768];
    int rc = -1;
    if (!schema) {
        snprintf(err, errlen, "%s: the built-in results schema is not valid JSON", nm);
        return -1;
    }
    if (a4w4_jsonschema_check(schema, why, sizeof why)) {
        snprintf(err, errlen, "built-in results schema: %s", why);
        goto out;
    }
    if (cJSON_IsString(ver) && !strcmp(ver->valuestring, A4W4_REPORT_SCHEMA_V1)) {
        /* version 1: the same fields (version 2 widened what a contract may say) */
        cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
        cJSON *sv = cJSON_GetObjectItemCaseSensitive(props, "schema");
        cJSON_ReplaceItemInObjectCaseSensitive(sv, "const",
                                               cJSON_CreateString(A4W4_REPORT_SCHEMA_V1));
    }
    if (a4w4_jsonschema_validate(schema, doc, why, sizeof why)) {
        /* name the entry when the violation is inside cases[i] */
        char where[300] = "";
        int i;
        if (sscanf(why, "/cases/%d", &i) == 1) {
            const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "cases"), i);
            char name[104], backend[104]; /* cut at 100 bytes as before, one line */
            if (*jstr(e, "name"))
                snprintf(where, sizeof where, " [case %.100s on %.100s]",
                         quote_text(jstr(e, "name"), name, sizeof name),
                         quote_text(*jstr(e, "backend") ? jstr(e, "backend") : "?", backend,
                                    sizeof backend));
        }
        /* the violation's path holds the document's keys as they are (e.g. a contracts key) */
        char shown[sizeof why];
        snprintf(err, errlen, "%s: %s%s (schema %s)", nm, quote_text(why, shown, sizeof shown),
                 where, A4W4_REPORT_SCHEMA);
        goto out;
    }
    rc = 0;
out:
    cJSON_Delete(schema);
    return rc;
}

cJSON *a4w4_results_parse(const char *text, size_t len, const char *name, char *err, size_t errlen)
{
    const char *nm = name ? name : "results";
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!doc) {
        size_t off = end && end >= text ? (size_t)(end - text) : 0;
        const char *e = cJSON_GetErrorPtr();
        if (!end && e && e >= text && e <= text + len)
            off = (size_t)(e - text);
        snprintf(err, errlen,
                 "%s: malformed JSON near byte %zu (a results document must be "
                 "one JSON object)",
                 nm, off);
        return NULL;
    }
    for (const char *p = end; p && p < text + len; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t' && *p) {
            snprintf(err, errlen,
                     "%s: malformed JSON: text after the document at byte %zu (a "
                     "results document must be one JSON object)",
                     nm, (size_t)(p - text));
            cJSON_Delete(doc);
            return NULL;
        }
    if (a4w4_results_validate(doc, name, err, errlen) ||
        a4w4_results_contradiction(doc, nm, err, errlen)) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}
