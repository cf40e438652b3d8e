/* discover_plan.c — DIR/discover.json, the probe directory's plan (discover_plan.h). */
#include "discover_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fsutil.h"

#define PLAN_FORMAT "a4w4-discover-probes/1"

int a4w4_discover_plan_write(const char *dir, const a4w4_discover_opts *o,
                             const char *tool_version, char *err, size_t errlen)
{
    char path[4096], s[96];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "format", PLAN_FORMAT);
    cJSON_AddStringToObject(j, "tool_version", tool_version);
    cJSON *sh = cJSON_AddArrayToObject(j, "shapes"), *gr = cJSON_AddArrayToObject(j, "groups");
    cJSON *vo = cJSON_AddArrayToObject(j, "validate_only");
    for (size_t i = 0; i < o->nshapes; i++) {
        snprintf(s, sizeof s, "%zux%zux%zu", o->shapes[i].M, o->shapes[i].N, o->shapes[i].K);
        cJSON_AddItemToArray(sh, cJSON_CreateString(s));
        cJSON_AddItemToArray(gr, cJSON_CreateNumber(o->group ? (double)o->group[i] : (double)i));
        cJSON_AddItemToArray(vo, cJSON_CreateNumber(o->validate_only ? o->validate_only[i] : 0));
    }
    snprintf(s, sizeof s, "%llu", (unsigned long long)o->seed);
    cJSON_AddStringToObject(j, "seed", s);
    cJSON_AddNumberToObject(j, "repeats", o->repeats);
    cJSON_AddNumberToObject(j, "validate_cases", o->validate_cases);
    cJSON_AddNumberToObject(j, "validate_outputs", (double)o->validate_outputs);
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/" A4W4_DISCOVER_PLAN_FILE, dir);
    int rc = !text || a4w4_write_atomic(path, text, strlen(text), err, errlen);
    if (!text)
        snprintf(err, errlen, "out of memory");
    free(text);
    return rc ? -1 : 0;
}

char *a4w4_discover_read_json(const char *path, char *why, size_t whylen)
{
    size_t n;
    int missing;
    return a4w4_read_regular(path, A4W4_DISCOVER_JSON_MAX, &n, &missing, why, whylen);
}

static int num(const cJSON *j, const char *key, double lo, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi ||
        v->valuedouble != (double)(long long)v->valuedouble)
        return -1;
    *out = v->valuedouble;
    return 0;
}

static int read_shapes(const cJSON *j, a4w4_shape *shapes, size_t *groups, unsigned char *vo,
                       size_t n)
{
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(j, "shapes");
    const cJSON *gr = cJSON_GetObjectItemCaseSensitive(j, "groups");
    const cJSON *vl = cJSON_GetObjectItemCaseSensitive(j, "validate_only");
    if (vl && (!cJSON_IsArray(vl) || (size_t)cJSON_GetArraySize(vl) != n))
        return -1;
    for (size_t i = 0; i < n; i++) {
        const cJSON *x = cJSON_GetArrayItem(sh, (int)i), *g = cJSON_GetArrayItem(gr, (int)i);
        const cJSON *v = vl ? cJSON_GetArrayItem(vl, (int)i) : NULL;
        char tail;
        if (v && (!cJSON_IsNumber(v) || (v->valuedouble != 0 && v->valuedouble != 1 &&
                                          v->valuedouble != 2)))
            return -1;
        vo[i] = v ? (unsigned char)v->valuedouble : 0;
        if (!cJSON_IsString(x) || !cJSON_IsNumber(g) || g->valuedouble < 0 ||
            g->valuedouble > (double)i ||
            sscanf(x->valuestring, "%zux%zux%zu%c", &shapes[i].M, &shapes[i].N, &shapes[i].K,
                   &tail) != 3)
            return -1;
        groups[i] = (size_t)g->valuedouble;
    }
    return 0;
}

/* The plan's numbers and arrays from j into *o and the three arrays (malloc'ed); 0 or -1
 * (nothing kept). */
static int read_plan(const cJSON *j, a4w4_discover_opts *o, a4w4_shape **shapes,
                     size_t **groups, unsigned char **vonly)
{
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(j, "shapes");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(j, "format");
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(j, "seed");
    size_t n = cJSON_IsArray(sh) ? (size_t)cJSON_GetArraySize(sh) : 0;
    double rep = 0, vc = 0, vo = 0;
    int bad = !j || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, PLAN_FORMAT) || !n ||
              n > A4W4_DISCOVER_MAX_SHAPES || !cJSON_IsString(seed) ||
              num(j, "repeats", 1, 100, &rep) || num(j, "validate_cases", 1, 100, &vc) ||
              num(j, "validate_outputs", 0, 1e12, &vo);
    *shapes = bad ? NULL : malloc(n * sizeof **shapes);
    *groups = bad ? NULL : malloc(n * sizeof **groups);
    *vonly = bad ? NULL : malloc(n);
    if (!bad)
        bad = !*shapes || !*groups || !*vonly || read_shapes(j, *shapes, *groups, *vonly, n);
    if (bad) {
        free(*shapes);
        free(*groups);
        free(*vonly);
        *shapes = NULL;
        *groups = NULL;
        *vonly = NULL;
        return -1;
    }
    o->shapes = *shapes;
    o->group = *groups;
    o->validate_only = *vonly;
    o->nshapes = n;
    o->seed = strtoull(seed->valuestring, NULL, 10);
    o->repeats = (unsigned)rep;
    o->validate_cases = (unsigned)vc;
    o->validate_outputs = (size_t)vo;
    return 0;
}

int a4w4_discover_plan_read(const char *dir, a4w4_discover_opts *o, a4w4_shape **shapes,
                            size_t **groups, unsigned char **vo, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" A4W4_DISCOVER_PLAN_FILE, dir);
    *shapes = NULL;
    *groups = NULL;
    *vo = NULL;
    char *text = a4w4_discover_read_json(path, err, errlen);
    if (!text)
        return -1;
    cJSON *j = cJSON_Parse(text);
    free(text);
    int rc = read_plan(j, o, shapes, groups, vo);
    cJSON_Delete(j);
    if (rc)
        snprintf(err, errlen, "not a probe directory (%s: %s with shapes, groups, seed, "
                 "repeats, validate_cases, validate_outputs)", path, PLAN_FORMAT);
    return rc;
}
