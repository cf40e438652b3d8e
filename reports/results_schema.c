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

extern const char a4w4_results_schema_blob[];    /* generated: a4w4_results_schema_blob.c */
extern const char a4w4_results_schema_v1_blob[]; /* the frozen version 1 schema */

const char *a4w4_results_schema_text(void)
{
    return a4w4_results_schema_blob;
}

/* The first key of obj that props2 (version 2's properties) defines and props1 (version 1's)
 * does not, or NULL. */
static const char *v2_key(const cJSON *obj, const cJSON *props2, const cJSON *props1)
{
    const cJSON *k;
    cJSON_ArrayForEach(k, obj) if (k->string &&
                                   cJSON_GetObjectItemCaseSensitive(props2, k->string) &&
                                   !cJSON_GetObjectItemCaseSensitive(props1, k->string))
        return k->string;
    return NULL;
}

static const cJSON *def_props(const cJSON *schema, const char *def)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(schema, "$defs");
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, def),
                                            "properties");
}

/* 1 with where ("/cases/3/judged_bit_exact") when a version 1 document holds what only
 * version 2 defines: a field of the header, of counts or of an entry that the version 2
 * schema has and the version 1 schema had not, or a contract only version 2 can say (a tree
 * contract, a rule set). A version 1 writer never wrote one: the document was edited. */
static int v2_only(const cJSON *doc, const cJSON *s2, const cJSON *s1, char *where, size_t len)
{
    const char *k = v2_key(doc, cJSON_GetObjectItemCaseSensitive(s2, "properties"),
                           cJSON_GetObjectItemCaseSensitive(s1, "properties"));
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(doc, "counts"), *e;
    if (k)
        return snprintf(where, len, "/%s", k), 1;
    if (cJSON_IsObject(counts) &&
        (k = v2_key(counts, def_props(s2, "counts"), def_props(s1, "counts"))))
        return snprintf(where, len, "/counts/%s", k), 1;
    int i = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
        const char *c = jstr(e, "contract");
        if (cJSON_IsObject(e) && (k = v2_key(e, def_props(s2, "entry"), def_props(s1, "entry"))))
            return snprintf(where, len, "/cases/%d/%s", i, k), 1;
        if (!strncmp(c, "tree(", 5) || strchr(c, '\n'))
            return snprintf(where, len, "/cases/%d/contract (a tree contract)", i), 1;
        i++;
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "contracts"))
        if (cJSON_IsString(e) && (!strncmp(e->valuestring, "tree(", 5) ||
                                  strchr(e->valuestring, '\n')))
            return snprintf(where, len, "/contracts/%s (a tree contract or rule set)",
                            e->string ? e->string : "?"), 1;
    return 0;
}

/* " [case NAME on BACKEND]" into where when the violation why is inside cases[i], else "". */
static void violation_entry(const cJSON *doc, const char *why, char *where, size_t len)
{
    int i;
    where[0] = 0;
    if (sscanf(why, "/cases/%d", &i) != 1)
        return;
    const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "cases"), i);
    char name[104], backend[104]; /* cut at 100 bytes as before, one line */
    if (*jstr(e, "name"))
        snprintf(where, len, " [case %.100s on %.100s]",
                 quote_text(jstr(e, "name"), name, sizeof name),
                 quote_text(*jstr(e, "backend") ? jstr(e, "backend") : "?", backend,
                            sizeof backend));
}

/* The built-in schema blob parsed and checked against the validator's subset, or NULL with
 * err. */
static cJSON *schema_of(const char *blob, const char *nm, char *err, size_t errlen)
{
    char why[768];
    cJSON *schema = cJSON_Parse(blob);
    if (!schema)
        snprintf(err, errlen, "%s: the built-in results schema is not valid JSON", nm);
    else if (a4w4_jsonschema_check(schema, why, sizeof why)) {
        snprintf(err, errlen, "built-in results schema: %s", why);
        cJSON_Delete(schema);
        schema = NULL;
    }
    return schema;
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
    int v1 = cJSON_IsString(ver) && !strcmp(ver->valuestring, A4W4_REPORT_SCHEMA_V1);
    const char *version = v1 ? A4W4_REPORT_SCHEMA_V1 : A4W4_REPORT_SCHEMA;
    cJSON *s2 = schema_of(a4w4_results_schema_blob, nm, err, errlen);
    cJSON *s1 = v1 && s2 ? schema_of(a4w4_results_schema_v1_blob, nm, err, errlen) : NULL;
    char why[768], where[300];
    int rc = -1;
    if (!s2 || (v1 && !s1))
        goto out;
    if (v1 && v2_only(doc, s2, s1, where, sizeof where)) {
        char shown[sizeof where];
        snprintf(err, errlen, "%s: %s: only %s defines it, no %s writer wrote it (an "
                 "edited document); refused", nm, quote_text(where, shown, sizeof shown),
                 A4W4_REPORT_SCHEMA, A4W4_REPORT_SCHEMA_V1);
        goto out;
    }
    if (a4w4_jsonschema_validate(v1 ? s1 : s2, doc, why, sizeof why)) {
        violation_entry(doc, why, where, sizeof where);
        /* the violation's path holds the document's keys as they are (e.g. a contracts key) */
        char shown[sizeof why];
        snprintf(err, errlen, "%s: %s%s (schema %s)", nm, quote_text(why, shown, sizeof shown),
                 where, version);
        goto out;
    }
    rc = 0;
out:
    cJSON_Delete(s1);
    cJSON_Delete(s2);
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
