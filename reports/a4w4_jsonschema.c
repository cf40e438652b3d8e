/* a4w4_jsonschema.c — see a4w4_jsonschema.h. */
#include "a4w4_jsonschema.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- keyword table -------------------------------------------------------------------- */

static const char *const annotations[] = {"$schema",     "$id",      "$defs",
                                          "definitions", "$comment", "title",
                                          "description", "default",  "examples"};
static const char *const keywords[] = {
    "type",      "enum",     "const",    "properties", "required", "additionalProperties",
    "items",     "minItems", "maxItems", "minimum",    "maximum",  "minLength",
    "maxLength", "pattern",  "$ref",     "allOf",      "anyOf",    "oneOf",
    "not"};
static const char *const type_names[] = {"object",  "array",   "string", "number",
                                         "integer", "boolean", "null"};

static int in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, list[i]))
            return 1;
    return 0;
}
#define IN(s, list) in_list((s), (list), sizeof(list) / sizeof((list)[0]))

/* ---- $ref ------------------------------------------------------------------------------ */

/* Resolve a local reference "#/a/b" (JSON pointer, ~0 and ~1 escapes) against root. */
static const cJSON *resolve_ref(const cJSON *root, const char *ref)
{
    if (ref[0] != '#')
        return NULL;
    const cJSON *cur = root;
    const char *p = ref + 1;
    while (*p) {
        if (*p != '/')
            return NULL;
        p++;
        char tok[256];
        size_t n = 0;
        while (*p && *p != '/' && n + 1 < sizeof tok) {
            if (p[0] == '~' && p[1] == '0') {
                tok[n++] = '~';
                p += 2;
            } else if (p[0] == '~' && p[1] == '1') {
                tok[n++] = '/';
                p += 2;
            } else
                tok[n++] = *p++;
        }
        tok[n] = 0;
        if (cJSON_IsArray(cur)) {
            char *end;
            long i = strtol(tok, &end, 10);
            cur = (*tok && !*end) ? cJSON_GetArrayItem(cur, (int)i) : NULL;
        } else
            cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
        if (!cur)
            return NULL;
    }
    return cur;
}

/* ---- schema check --------------------------------------------------------------------- */

static int check_node(const cJSON *root, const cJSON *s, char *path, size_t plen, char *err,
                      size_t errlen);

static int check_child(const cJSON *root, const cJSON *s, char *path, size_t plen, const char *seg,
                       char *err, size_t errlen)
{
    size_t L = strlen(path);
    snprintf(path + L, plen - L, "/%s", seg);
    int rc = check_node(root, s, path, plen, err, errlen);
    path[L] = 0;
    return rc;
}

/* type, enum, required: their own shape. */
static int check_shape_kw(const cJSON *root, const char *key, const cJSON *k, char *path,
                         size_t plen, char *err, size_t errlen)
{
    (void)root, (void)plen;
    if (!strcmp(key, "type")) {
        int ok = cJSON_IsString(k) && IN(k->valuestring, type_names);
        if (cJSON_IsArray(k)) {
            const cJSON *t;
            ok = cJSON_GetArraySize(k) > 0;
            cJSON_ArrayForEach(t, k)
                ok &= cJSON_IsString(t) && IN(t->valuestring, type_names);
        }
        if (!ok) {
            snprintf(err, errlen, "schema #%s/type: not a type name or a list of them", path);
            return -1;
        }
    } else if (!strcmp(key, "enum") && !cJSON_IsArray(k)) {
        snprintf(err, errlen, "schema #%s/enum: must be an array", path);
        return -1;
    } else if (!strcmp(key, "required")) {
        const cJSON *r;
        int ok = cJSON_IsArray(k);
        cJSON_ArrayForEach(r, k)
            ok &= cJSON_IsString(r);
        if (!ok) {
            snprintf(err, errlen, "schema #%s/required: must be an array of strings", path);
            return -1;
        }
    }
    return 0;
}

/* Keywords holding subschemas: each checked in turn. */
static int check_sub_kw(const cJSON *root, const char *key, const cJSON *k, char *path,
                       size_t plen, char *err, size_t errlen)
{
    if (!strcmp(key, "properties")) {
        if (!cJSON_IsObject(k)) {
            snprintf(err, errlen, "schema #%s/properties: must be an object", path);
            return -1;
        }
        const cJSON *p;
        char seg[300];
        cJSON_ArrayForEach(p, k) {
            snprintf(seg, sizeof seg, "properties/%s", p->string);
            if (check_child(root, p, path, plen, seg, err, errlen))
                return -1;
        }
    } else if (!strcmp(key, "additionalProperties") || !strcmp(key, "items") ||
               !strcmp(key, "not")) {
        if (check_child(root, k, path, plen, key, err, errlen))
            return -1;
    } else if (!strcmp(key, "allOf") || !strcmp(key, "anyOf") || !strcmp(key, "oneOf")) {
        if (!cJSON_IsArray(k) || !cJSON_GetArraySize(k)) {
            snprintf(err, errlen, "schema #%s/%s: must be a non-empty array", path, key);
            return -1;
        }
        const cJSON *a;
        int i = 0;
        char seg[64];
        cJSON_ArrayForEach(a, k) {
            snprintf(seg, sizeof seg, "%s/%d", key, i++);
            if (check_child(root, a, path, plen, seg, err, errlen))
                return -1;
        }
    }
    return 0;
}

/* Numeric bounds, pattern, $ref. */
static int check_value_kw(const cJSON *root, const char *key, const cJSON *k, char *path,
                         size_t plen, char *err, size_t errlen)
{
    (void)plen;
    if (!strcmp(key, "minItems") || !strcmp(key, "maxItems") ||
               !strcmp(key, "minLength") || !strcmp(key, "maxLength")) {
        if (!cJSON_IsNumber(k) || k->valuedouble < 0 ||
            floor(k->valuedouble) != k->valuedouble) {
            snprintf(err, errlen, "schema #%s/%s: must be a non-negative integer", path, key);
            return -1;
        }
    } else if ((!strcmp(key, "minimum") || !strcmp(key, "maximum")) && !cJSON_IsNumber(k)) {
        snprintf(err, errlen, "schema #%s/%s: must be a number", path, key);
        return -1;
    } else if (!strcmp(key, "pattern")) {
        regex_t re;
        if (!cJSON_IsString(k) || regcomp(&re, k->valuestring, REG_EXTENDED | REG_NOSUB)) {
            snprintf(err, errlen, "schema #%s/pattern: not a POSIX extended regular expression",
                     path);
            return -1;
        }
        regfree(&re);
    } else if (!strcmp(key, "$ref")) {
        if (!cJSON_IsString(k) || !resolve_ref(root, k->valuestring)) {
            snprintf(err, errlen, "schema #%s/$ref: '%s' does not resolve inside this schema",
                     path, cJSON_IsString(k) ? k->valuestring : "?");
            return -1;
        }
    }
    return 0;
}

static int check_node(const cJSON *root, const cJSON *s, char *path, size_t plen, char *err,
                      size_t errlen)
{
    if (cJSON_IsBool(s))
        return 0;
    if (!cJSON_IsObject(s)) {
        snprintf(err, errlen, "schema #%s: a schema must be an object or a boolean", path);
        return -1;
    }
    const cJSON *k;
    cJSON_ArrayForEach(k, s) {
        const char *key = k->string;
        if (IN(key, annotations)) {
            if ((!strcmp(key, "$defs") || !strcmp(key, "definitions"))) {
                if (!cJSON_IsObject(k)) {
                    snprintf(err, errlen, "schema #%s/%s: must be an object of schemas", path, key);
                    return -1;
                }
                const cJSON *d;
                char seg[300];
                cJSON_ArrayForEach(d, k) {
                    snprintf(seg, sizeof seg, "%s/%s", key, d->string);
                    if (check_child(root, d, path, plen, seg, err, errlen))
                        return -1;
                }
            }
            continue;
        }
        if (!IN(key, keywords)) {
            snprintf(err, errlen,
                     "schema #%s: keyword '%s' is outside the subset reports/"
                     "a4w4_jsonschema.c implements",
                     path, key);
            return -1;
        }
        if (check_shape_kw(root, key, k, path, plen, err, errlen) ||
            check_sub_kw(root, key, k, path, plen, err, errlen) ||
            check_value_kw(root, key, k, path, plen, err, errlen))
            return -1;
    }
    return 0;
}

int a4w4_jsonschema_check(const cJSON *schema, char *err, size_t errlen)
{
    char path[1024] = "";
    return check_node(schema, schema, path, sizeof path, err, errlen);
}

/* ---- validation ----------------------------------------------------------------------- */

typedef struct {
    const cJSON *root;
    struct {
        const char *src;
        regex_t re;
    } cache[32];
    size_t ncache;
    int depth;
} vctx;

/* The compiled pattern src from the cache (compiled on first use); NULL when the cache is
 * full or src does not compile. */
static const regex_t *pattern_cached(vctx *c, const char *src)
{
    for (size_t i = 0; i < c->ncache; i++)
        if (c->cache[i].src == src)
            return &c->cache[i].re;
    if (c->ncache == sizeof c->cache / sizeof c->cache[0] ||
        regcomp(&c->cache[c->ncache].re, src, REG_EXTENDED | REG_NOSUB))
        return NULL;
    c->cache[c->ncache].src = src;
    return &c->cache[c->ncache++].re;
}

/* 1 when s matches pattern src (searched unanchored), 0 when not, -1 when it does not compile. */
static int pattern_match(vctx *c, const char *src, const char *s)
{
    const regex_t *re = pattern_cached(c, src);
    if (re)
        return regexec(re, s, 0, NULL, 0) == 0;
    regex_t tmp;
    if (regcomp(&tmp, src, REG_EXTENDED | REG_NOSUB))
        return -1;
    int m = regexec(&tmp, s, 0, NULL, 0) == 0;
    regfree(&tmp);
    return m;
}

static const char *type_of(const cJSON *v)
{
    if (cJSON_IsObject(v))
        return "object";
    if (cJSON_IsArray(v))
        return "array";
    if (cJSON_IsString(v))
        return "string";
    if (cJSON_IsNumber(v))
        return floor(v->valuedouble) == v->valuedouble && isfinite(v->valuedouble) ? "integer"
                                                                                   : "number";
    if (cJSON_IsBool(v))
        return "boolean";
    return "null";
}

static int type_matches(const cJSON *v, const char *t)
{
    const char *mine = type_of(v);
    return !strcmp(mine, t) || (!strcmp(t, "number") && !strcmp(mine, "integer"));
}

static size_t utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* A short rendering of a value for messages. */
static void show(const cJSON *v, char *buf, size_t len)
{
    char *s = cJSON_PrintUnformatted(v);
    if (!s) {
        snprintf(buf, len, "?");
        return;
    }
    if (strlen(s) > 60)
        snprintf(buf, len, "%.57s...", s);
    else
        snprintf(buf, len, "%s", s);
    free(s);
}

/* One validation step: the context, the instance path (grown and restored in place) and the
 * error buffer. */
typedef struct {
    vctx *c;
    char *path;
    size_t plen;
    char *err;
    size_t errlen;
} vnode;

static int validate_node(vnode *n, const cJSON *s, const cJSON *v);

/* Validate v against s with err redirected to a scratch buffer (for anyOf/oneOf/not). */
static int validate_quiet(vnode *n, const cJSON *s, const cJSON *v)
{
    char scratch[8];
    vnode q = {n->c, n->path, n->plen, scratch, sizeof scratch};
    return validate_node(&q, s, v);
}

static int validate_child(vnode *n, const cJSON *s, const cJSON *v, const char *seg, int idx)
{
    size_t L = strlen(n->path);
    if (seg)
        snprintf(n->path + L, n->plen - L, "/%s", seg);
    else
        snprintf(n->path + L, n->plen - L, "/%d", idx);
    int rc = validate_node(n, s, v);
    n->path[L] = 0;
    return rc;
}

/* Record "<path>: <what>" and return -1. */
static int fail(vnode *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(vnode *n, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(n->err, n->errlen, "%s: %s", n->path[0] ? n->path : "/", what);
    return -1;
}

/* One handler per keyword: k is the keyword's value, s the schema object, v the instance. */
typedef int (*kw_fn)(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v);

static int kw_ref(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    const cJSON *t = resolve_ref(n->c->root, k->valuestring);
    if (!t)
        return fail(n, "schema $ref '%s' does not resolve", k->valuestring);
    return validate_node(n, t, v);
}

static int kw_type(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    int ok = 0;
    char names[128] = "", shown[96];
    if (cJSON_IsString(k)) {
        ok = type_matches(v, k->valuestring);
        snprintf(names, sizeof names, "%s", k->valuestring);
    } else {
        const cJSON *t;
        cJSON_ArrayForEach(t, k) {
            ok |= type_matches(v, t->valuestring);
            size_t L = strlen(names);
            snprintf(names + L, sizeof names - L, "%s%s", L ? " or " : "", t->valuestring);
        }
    }
    if (ok)
        return 0;
    show(v, shown, sizeof shown);
    return fail(n, "%s is a %s, the schema wants %s", shown, type_of(v), names);
}

static int kw_enum(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    const cJSON *e;
    int ok = 0;
    char names[256] = "", shown[96];
    cJSON_ArrayForEach(e, k) {
        ok |= cJSON_Compare(e, v, 1);
        char one[64];
        show(e, one, sizeof one);
        size_t L = strlen(names);
        snprintf(names + L, sizeof names - L, "%s%s", L ? ", " : "", one);
    }
    if (ok)
        return 0;
    show(v, shown, sizeof shown);
    return fail(n, "%s is not one of %s", shown, names);
}

static int kw_const(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    char want[96], shown[96];
    if (cJSON_Compare(k, v, 1))
        return 0;
    show(v, shown, sizeof shown);
    show(k, want, sizeof want);
    return fail(n, "%s must be %s", shown, want);
}

static int kw_required(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    const cJSON *r;
    if (!cJSON_IsObject(v))
        return 0;
    cJSON_ArrayForEach(r, k) if (!cJSON_GetObjectItemCaseSensitive(v, r->valuestring))
        return fail(n, "required field '%s' is missing", r->valuestring);
    return 0;
}

static int kw_properties(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    const cJSON *p;
    if (!cJSON_IsObject(v))
        return 0;
    cJSON_ArrayForEach(p, k) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(v, p->string);
        if (x && validate_child(n, p, x, p->string, 0))
            return -1;
    }
    return 0;
}

static int kw_additional(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties"), *x;
    if (!cJSON_IsObject(v))
        return 0;
    cJSON_ArrayForEach(x, v) {
        if (props && cJSON_GetObjectItemCaseSensitive(props, x->string))
            continue;
        if (cJSON_IsFalse(k))
            return fail(n, "field '%s' is not allowed (additionalProperties false)", x->string);
        if (validate_child(n, k, x, x->string, 0))
            return -1;
    }
    return 0;
}

static int kw_items(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    const cJSON *x;
    int i = 0;
    if (!cJSON_IsArray(v))
        return 0;
    cJSON_ArrayForEach(x, v) if (validate_child(n, k, x, NULL, i++)) return -1;
    return 0;
}

/* minItems / maxItems (which: 'i' for min, 'a' for max, key[1]). */
static int kw_items_count(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    if (!cJSON_IsArray(v))
        return 0;
    int cnt = cJSON_GetArraySize(v), lim = (int)k->valuedouble, min = k->string[1] == 'i';
    if (min ? cnt >= lim : cnt <= lim)
        return 0;
    return fail(n, "array has %d items, the schema allows %s %d", cnt, min ? "at least" : "at most",
                lim);
}

static int kw_bound(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    if (!cJSON_IsNumber(v))
        return 0;
    double x = v->valuedouble, lim = k->valuedouble;
    int min = k->string[1] == 'i';
    if (min ? x >= lim : x <= lim)
        return 0;
    return fail(n, "%.17g is %s than the %s %.17g", x, min ? "less" : "greater", k->string, lim);
}

static int kw_length(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    if (!cJSON_IsString(v))
        return 0;
    size_t len = utf8_len(v->valuestring), lim = (size_t)k->valuedouble;
    int min = k->string[1] == 'i';
    if (min ? len >= lim : len <= lim)
        return 0;
    return fail(n, "string of %zu characters, the schema allows %s %zu", len,
                min ? "at least" : "at most", lim);
}

static int kw_pattern(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    char shown[96];
    if (!cJSON_IsString(v) || pattern_match(n->c, k->valuestring, v->valuestring) == 1)
        return 0;
    show(v, shown, sizeof shown);
    return fail(n, "%s does not match the pattern %s", shown, k->valuestring);
}

static int kw_all_of(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    const cJSON *a;
    cJSON_ArrayForEach(a, k) if (validate_node(n, a, v)) return -1;
    return 0;
}

/* anyOf (at least one alternative) and oneOf (exactly one). */
static int kw_any_one_of(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    const cJSON *a;
    int cnt = 0;
    char shown[96];
    cJSON_ArrayForEach(a, k) cnt += validate_quiet(n, a, v) == 0;
    if (cnt != 0 && !(k->string[0] == 'o' && cnt > 1))
        return 0;
    show(v, shown, sizeof shown);
    return fail(n, "%s matches %d of the %s alternatives", shown, cnt, k->string);
}

static int kw_not(vnode *n, const cJSON *k, const cJSON *s, const cJSON *v)
{
    (void)s;
    char shown[96];
    if (validate_quiet(n, k, v) != 0)
        return 0;
    show(v, shown, sizeof shown);
    return fail(n, "%s matches a schema it must not match", shown);
}

static const struct {
    const char *name;
    kw_fn fn;
} keyword_fns[] = {
    {"$ref", kw_ref},           {"type", kw_type},         {"enum", kw_enum},
    {"const", kw_const},        {"required", kw_required}, {"properties", kw_properties},
    {"additionalProperties", kw_additional},               {"items", kw_items},
    {"minItems", kw_items_count}, {"maxItems", kw_items_count},
    {"minimum", kw_bound},      {"maximum", kw_bound},     {"minLength", kw_length},
    {"maxLength", kw_length},   {"pattern", kw_pattern},   {"allOf", kw_all_of},
    {"anyOf", kw_any_one_of},   {"oneOf", kw_any_one_of},  {"not", kw_not},
};

static int validate_node(vnode *n, const cJSON *s, const cJSON *v)
{
    if (cJSON_IsBool(s))
        return cJSON_IsFalse(s) ? fail(n, "not allowed here (schema false)") : 0;
    if (n->c->depth >= 64)
        return fail(n, "schema recursion deeper than 64 levels");
    n->c->depth++;
    int rc = 0;
    const cJSON *k;
    cJSON_ArrayForEach(k, s) {
        for (size_t i = 0; i < sizeof keyword_fns / sizeof keyword_fns[0] && !rc; i++)
            if (!strcmp(k->string, keyword_fns[i].name))
                rc = keyword_fns[i].fn(n, k, s, v);
        if (rc)
            break;
    }
    n->c->depth--;
    return rc;
}

int a4w4_jsonschema_validate(const cJSON *schema, const cJSON *instance, char *err, size_t errlen)
{
    vctx c;
    memset(&c, 0, sizeof c);
    c.root = schema;
    char path[1024] = "";
    vnode n = {&c, path, sizeof path, err, errlen};
    int rc = validate_node(&n, schema, instance);
    for (size_t i = 0; i < c.ncache; i++)
        regfree(&c.cache[i].re);
    return rc;
}
