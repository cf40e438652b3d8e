/* bundle_dir.c — an output bundle directory read once and checked for conflicts (see
 * bundle_dir.h). */
#include "bundle_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "a4w4_quote.h"
#include "backend.h"
#include "errmsg.h"
#include "fsutil.h"
#include "grow.h"
#include "stream.h"

#define CONTRACT_FILE "contract.txt"
#define CONTRACT_RULE                                                                        \
    "ordered(S) or bounded(S) with S in 1..65536, exact, bounded, or tree(key=value,...) "   \
    "(contracts §4.2)"
#define MANIFEST_FILE "manifest.json"
#define MANIFEST_MAX (64u << 20)

int a4w4_bundle_file_name(const char *case_name, char *buf, size_t len)
{
    if (!case_name || !*case_name || !len)
        return -1;
    size_t o = 0;
    for (const char *p = case_name; *p; p++) {
        const char *piece = *p == '/' ? "__" : NULL;
        size_t n = piece ? 2 : 1;
        if (o + n >= len)
            return -1;
        if (piece)
            memcpy(buf + o, piece, 2);
        else
            buf[o] = *p;
        o += n;
    }
    static const char ext[] = ".safetensors";
    if (o + sizeof ext > len)
        return -1;
    memcpy(buf + o, ext, sizeof ext);
    return 0;
}

static int refuse(char *err, size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* err = "bundle <path>: <message>"; returns -1. */
static int refuse(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    char where[4200];
    snprintf(where, sizeof where, "bundle %s", path);
    va_list ap;
    va_start(ap, fmt);
    a4w4_verrmsg(err, errlen, -1, where, fmt, ap);
    va_end(ap);
    return -1;
}

/* The whole regular file at path (malloc'ed, NUL-terminated, *n bytes, at most max) or NULL:
 * absent (*err empty), or not readable, not a regular file (a FIFO never blocks), too large
 * (err): a4w4_read_regular. */
static char *read_small_file(const char *path, size_t max, size_t *n, char *err, size_t errlen)
{
    char why[4400];
    int missing;
    char *buf = a4w4_read_regular(path, max, n, &missing, why, sizeof why);
    err[0] = 0;
    if (!buf && !missing)
        snprintf(err, errlen, "bundle %s", why);
    return buf;
}

/* Blank lines and comment lines (first non-blank byte '#': the "# discovered by" line of the
 * file `a4w4check discover --out FILE` writes) at the start of buf[0..*n) dropped, in place. */
static void drop_comment_lines(char *buf, size_t *n)
{
    size_t b = 0;
    for (;;) {
        size_t i = b;
        while (i < *n && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r'))
            i++;
        if (i >= *n || (buf[i] != '#' && buf[i] != '\n'))
            break;
        char *nl = memchr(buf + i, '\n', *n - i);
        b = nl ? (size_t)(nl - buf) + 1 : *n;
    }
    memmove(buf, buf + b, *n - b + 1);
    *n -= b;
}

/* When text[0..n) is rules that the parser refuses, its line into why ("line L: ...": a
 * malformed rule, one that can never match, a predicate no shape reaches; contracts §4.2,
 * the file form), else "". */
static void rules_refusal(const char *text, size_t n, char *why, size_t len)
{
    a4w4_contract_set set;
    why[0] = 0;
    if (strlen(text) == n && a4w4_contract_text_is_rules(text) &&
        a4w4_contract_set_parse(text, &set, why, len) == A4W4_OK) {
        a4w4_contract_set_free(&set);
        why[0] = 0;
    }
}

/* DIR/contract.txt into contract[len] ("" when absent): one contract line, or the rules of
 * the file form (`when PRED,...: CONTRACT`, one per line, contracts §4.2), after any blank or
 * comment lines (contracts §7). 0 or -1 with err. */
static int read_contract(const char *dir, char *contract, size_t len, char *err, size_t errlen)
{
    char path[4200];
    size_t n = 0;
    snprintf(path, sizeof path, "%s/" CONTRACT_FILE, dir);
    contract[0] = 0;
    char *buf = read_small_file(path, A4W4_CONTRACT_MAX + 4096, &n, err, errlen);
    if (!buf)
        return err[0] ? -1 : 0;
    char why[512];
    rules_refusal(buf, n, why, sizeof why); /* line numbers of the file, comments included */
    drop_comment_lines(buf, &n);
    size_t b = 0, e = n;
    while (b < e && strchr(" \t\r\n", buf[b]))
        b++;
    while (e > b && strchr(" \t\r\n", buf[e - 1]))
        e--;
    buf[e] = '\0';
    char *s = buf + b;
    if (strlen(s) != e - b || !a4w4_contract_valid(s) || strlen(s) >= len) {
        char shown[48];
        a4w4_contract c; /* one line: the parser's reason names the part that is wrong */
        if (!why[0] && strlen(s) == e - b && !a4w4_contract_text_is_rules(s) &&
            a4w4_contract_parse(s, &c, why, sizeof why) == A4W4_OK)
            why[0] = 0;
        size_t cut = strcspn(s, "\r\n");
        int lines = s[cut] != '\0';
        s[cut] = '\0';
        refuse(err, errlen, path, "'%s'%s is not one contract line (" CONTRACT_RULE ") nor "
               "rules `when PRED,...: CONTRACT` of at most %zu bytes%s%s", a4w4_quote(s, shown,
               sizeof shown), lines ? " (and more lines)" : "", len - 1, why[0] ? ": " : "",
               why);
        free(buf);
        return -1;
    }
    snprintf(contract, len, "%s", s);
    free(buf);
    return 0;
}

static int cmp_case(const void *a, const void *b)
{
    return strcmp(((const a4w4_bundle_case *)a)->name, ((const a4w4_bundle_case *)b)->name);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A manifest string field into out ("" when absent); -1 when present but not a string
 * shorter than len. */
static int manifest_str(const cJSON *m, const char *key, char *out, size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
    out[0] = 0;
    if (!v)
        return 0;
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= len)
        return -1;
    snprintf(out, len, "%s", v->valuestring);
    return 0;
}

/* The manifest's "cases" (array of names) or "failed" ({name: why}) into a sorted array.
 * 0, or -1 with err (wrong type, empty or unusable name, a name twice, out of memory). */
static int manifest_cases(const cJSON *m, const char *key, a4w4_bundle_case **out, size_t *n,
                          const char *path, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key), *e;
    int failed = !strcmp(key, "failed");
    *n = 0;
    if (!v && failed)
        return 0;
    if (failed ? !cJSON_IsObject(v) : !cJSON_IsArray(v))
        return refuse(err, errlen, path, "\"%s\" must be %s", key,
                      failed ? "an object {case: why}" : "an array of case names");
    size_t cap = (size_t)cJSON_GetArraySize(v);
    if (!(*out = calloc(cap ? cap : 1, sizeof **out)))
        return refuse(err, errlen, path, "out of memory");
    cJSON_ArrayForEach(e, v) {
        const char *name = failed ? e->string : e->valuestring;
        char fname[512], shown[64];
        if (!name || !cJSON_IsString(e) || a4w4_bundle_file_name(name, fname, sizeof fname))
            return refuse(err, errlen, path, "\"%s\": '%s' %s", key,
                          a4w4_quote(name ? name : "", shown, sizeof shown),
                          failed ? "must map a case name to a string"
                                 : "is not a string naming a case");
        a4w4_bundle_case *c = &(*out)[(*n)++];
        c->name = strdup(name);
        c->why = failed ? strdup(e->valuestring) : NULL;
        if (!c->name || (failed && !c->why))
            return refuse(err, errlen, path, "out of memory");
    }
    qsort(*out, *n, sizeof **out, cmp_case);
    for (size_t i = 1; i < *n; i++)
        if (!strcmp((*out)[i].name, (*out)[i - 1].name)) {
            char shown[64];
            return refuse(err, errlen, path, "\"%s\" names case '%s' twice", key,
                          a4w4_quote((*out)[i].name, shown, sizeof shown));
        }
    return 0;
}

static const a4w4_bundle_case *find_case(const a4w4_bundle_case *v, size_t n, const char *name)
{
    a4w4_bundle_case key = {(char *)name, NULL};
    return n ? bsearch(&key, v, n, sizeof *v, cmp_case) : NULL;
}

const a4w4_bundle_case *a4w4_bundle_dir_listed(const a4w4_bundle_dir *d, const char *case_name)
{
    return find_case(d->cases, d->ncases, case_name);
}

const a4w4_bundle_case *a4w4_bundle_dir_failed(const a4w4_bundle_dir *d, const char *case_name)
{
    return find_case(d->failed, d->nfailed, case_name);
}

/* The manifest's optional "e8m0_code0" into *code0 (A4W4_CODE0_*; BOTH when absent). 0, or
 * -1 when present but not "2^-127" or "2^-126". */
static int manifest_code0(const cJSON *m, int *code0)
{
    char r[16];
    *code0 = A4W4_CODE0_BOTH;
    if (manifest_str(m, "e8m0_code0", r, sizeof r))
        return -1;
    if (!cJSON_GetObjectItemCaseSensitive(m, "e8m0_code0"))
        return 0;
    *code0 = !strcmp(r, "2^-127") ? A4W4_CODE0_OCP : !strcmp(r, "2^-126") ? A4W4_CODE0_DRIVER : -1;
    return *code0 < 0 ? -1 : 0;
}

/* The manifest's fields of parsed m into d (contract into contract). 0 or -1 with err. */
static int manifest_fields(const cJSON *m, a4w4_bundle_dir *d, char *contract, size_t clen,
                           const char *path, char *err, size_t errlen)
{
    char fmt[32], shown[64];
    if (!cJSON_IsObject(m))
        return refuse(err, errlen, path, "not a JSON object");
    if (manifest_str(m, "format", fmt, sizeof fmt) || strcmp(fmt, A4W4_BUNDLE_OUTPUTS_FORMAT))
        return refuse(err, errlen, path, "\"format\" must be \"%s\"",
                      A4W4_BUNDLE_OUTPUTS_FORMAT);
    if (manifest_str(m, "contract", contract, clen) ||
        (contract[0] && !a4w4_contract_valid(contract)))
        return refuse(err, errlen, path, "\"contract\" '%s' is not a contract (" CONTRACT_RULE
                      ")", a4w4_quote(contract, shown, sizeof shown));
    if (manifest_str(m, "kernel", d->kernel, sizeof d->kernel) ||
        manifest_str(m, "matrix_hash", d->hash, sizeof d->hash) ||
        manifest_str(m, "tool_version", d->version, sizeof d->version))
        return refuse(err, errlen, path, "\"kernel\", \"matrix_hash\" and \"tool_version\" "
                      "must be strings (of at most 127, 39 and 39 bytes)");
    if (manifest_code0(m, &d->code0))
        return refuse(err, errlen, path, "\"e8m0_code0\" must be \"2^-127\" or \"2^-126\" "
                      "(the reading of E8M0 code 0 the kernel implements, contracts §1)");
    if (d->version[0] && strcmp(d->version, A4W4_TOOL_VERSION))
        return refuse(err, errlen, path, "tool_version '%s', this a4w4check is %s (outputs of "
                      "operands another version exported: export and run the kernel again)",
                      a4w4_quote(d->version, shown, sizeof shown), A4W4_TOOL_VERSION);
    if (manifest_cases(m, "cases", &d->cases, &d->ncases, path, err, errlen) ||
        manifest_cases(m, "failed", &d->failed, &d->nfailed, path, err, errlen))
        return -1;
    for (size_t i = 0; i < d->nfailed; i++)
        if (a4w4_bundle_dir_listed(d, d->failed[i].name))
            return refuse(err, errlen, path, "case '%s' is both in \"cases\" (written) and in "
                          "\"failed\"", a4w4_quote(d->failed[i].name, shown, sizeof shown));
    return 0;
}

/* DIR/manifest.json when present into d, its contract into contract ("" none). */
static int read_manifest(const char *dir, a4w4_bundle_dir *d, char *contract, size_t clen,
                         char *err, size_t errlen)
{
    char path[4200];
    size_t n = 0;
    snprintf(path, sizeof path, "%s/" MANIFEST_FILE, dir);
    contract[0] = 0;
    char *text = read_small_file(path, MANIFEST_MAX, &n, err, errlen);
    if (!text)
        return err[0] ? -1 : 0;
    cJSON *m = cJSON_ParseWithLength(text, n);
    free(text);
    d->has_manifest = 1;
    int rc = m ? manifest_fields(m, d, contract, clen, path, err, errlen)
               : refuse(err, errlen, path, "not valid JSON");
    cJSON_Delete(m);
    return rc;
}

/* DIR's *.safetensors names into d->files, sorted. 0 or -1 with err. */
static int list_files(const char *dir, a4w4_bundle_dir *d, char *err, size_t errlen)
{
    DIR *dp = opendir(dir);
    size_t cap = 0;
    int oom = 0;
    if (!dp)
        return refuse(err, errlen, dir, "cannot list the directory (%s)", strerror(errno));
    for (struct dirent *de; !oom && (de = readdir(dp));) {
        size_t L = strlen(de->d_name);
        if (L < 13 || strcmp(de->d_name + L - 12, ".safetensors"))
            continue;
        oom = A4W4_GROW(d->files, d->nfiles + 1, cap, 32) != 0;
        if (!oom && !(oom = !(d->files[d->nfiles] = strdup(de->d_name))))
            d->nfiles++;
    }
    closedir(dp);
    if (oom)
        return refuse(err, errlen, dir, "out of memory listing the directory");
    if (d->nfiles)
        qsort(d->files, d->nfiles, sizeof *d->files, cmp_str);
    return 0;
}

/* File names of cases v[0..n), sorted (malloc'ed array of malloc'ed strings); NULL when out
 * of memory. */
static char **file_names(const a4w4_bundle_case *v, size_t n)
{
    char **f = calloc(n ? n : 1, sizeof *f);
    for (size_t i = 0; f && i < n; i++) {
        char fname[512];
        a4w4_bundle_file_name(v[i].name, fname, sizeof fname); /* fits: manifest_cases */
        if (!(f[i] = strdup(fname))) {
            for (size_t j = 0; j < i; j++)
                free(f[j]);
            free(f);
            return NULL;
        }
    }
    if (f && n)
        qsort(f, n, sizeof *f, cmp_str);
    return f;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

static int has_name(char *const *v, size_t n, const char *name)
{
    return n && bsearch(&name, v, n, sizeof *v, cmp_str);
}

/* With a manifest, every file must be one it lists as written. 0 or -1 with err. */
static int check_stale(const a4w4_bundle_dir *d, char *err, size_t errlen)
{
    if (!d->has_manifest || !d->nfiles)
        return 0;
    char **listed = file_names(d->cases, d->ncases);
    char **failed = file_names(d->failed, d->nfailed);
    int rc = listed && failed ? 0 : refuse(err, errlen, d->dir, "out of memory");
    for (size_t i = 0; !rc && i < d->nfiles; i++) {
        if (has_name(listed, d->ncases, d->files[i]))
            continue;
        char shown[300], kern[140];
        a4w4_quote(d->files[i], shown, sizeof shown);
        a4w4_quote(d->kernel[0] ? d->kernel : "not named", kern, sizeof kern);
        rc = refuse(err, errlen, d->dir, "%s is not among the cases " MANIFEST_FILE " lists as "
                    "written%s (kernel %s): a stale output of an earlier run? A bundle "
                    "directory holds one run of one kernel: remove it, or use a new directory",
                    shown, has_name(failed, d->nfailed, d->files[i]) ? " (it lists that case as "
                    "failed)" : "", kern);
    }
    free_names(listed, d->ncases);
    free_names(failed, d->nfailed);
    return rc;
}

int a4w4_bundle_dir_read(const char *dir, a4w4_bundle_dir *d, char *err, size_t errlen)
{
    char txt[A4W4_CONTRACT_MAX], mc[A4W4_CONTRACT_MAX], shown[64];
    memset(d, 0, sizeof *d);
    if (!(d->dir = strdup(dir)))
        return refuse(err, errlen, dir, "out of memory");
    if (read_contract(dir, txt, sizeof txt, err, errlen) ||
        read_manifest(dir, d, mc, sizeof mc, err, errlen))
        return -1;
    if (txt[0] && mc[0] && !a4w4_contract_text_same(txt, mc))
        return refuse(err, errlen, dir, MANIFEST_FILE " names contract '%s' and " CONTRACT_FILE
                      " '%s': one directory, one contract (contracts §4.1); make them agree",
                      a4w4_quote(mc, shown, sizeof shown), txt);
    snprintf(d->contract, sizeof d->contract, "%s", mc[0] ? mc : txt[0] ? txt : "ordered(1)");
    if (list_files(dir, d, err, errlen) || check_stale(d, err, errlen))
        return -1;
    return 0;
}

/* Manifest cases v[0..n) all among the run's item names (sorted). 0 or -1 with err. */
static int cases_are_items(const a4w4_bundle_dir *d, const a4w4_bundle_case *v, size_t n,
                           char *const *names, size_t nitems, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (!has_name(names, nitems, v[i].name)) {
            char path[4200], shown[300];
            snprintf(path, sizeof path, "%s/" MANIFEST_FILE, d->dir);
            return refuse(err, errlen, path, "case '%s' is no item of this run (a manifest of "
                          "another matrix)", a4w4_quote(v[i].name, shown, sizeof shown));
        }
    return 0;
}

int a4w4_bundle_dir_check_items(const a4w4_bundle_dir *d, const char *matrix_hash,
                                const char *const *items, size_t n, char *err, size_t errlen)
{
    char path[4200], shown[300];
    snprintf(path, sizeof path, "%s/" MANIFEST_FILE, d->dir);
    if (matrix_hash && d->hash[0] && strcmp(d->hash, matrix_hash))
        return refuse(err, errlen, path, "matrix_hash %s, this run's matrix is %s (outputs of "
                      "other operands)", a4w4_quote(d->hash, shown, sizeof shown), matrix_hash);
    char **names = calloc(n ? n : 1, sizeof *names);
    char **files = calloc(n ? n : 1, sizeof *files);
    int rc = names && files ? 0 : refuse(err, errlen, d->dir, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        char fname[512];
        names[i] = (char *)items[i];
        if (a4w4_bundle_file_name(items[i], fname, sizeof fname))
            fname[0] = 0;
        if (!(files[i] = strdup(fname)))
            rc = refuse(err, errlen, d->dir, "out of memory");
    }
    if (!rc) {
        qsort(names, n, sizeof *names, cmp_str);
        qsort(files, n, sizeof *files, cmp_str);
        rc = cases_are_items(d, d->cases, d->ncases, names, n, err, errlen) ||
                     cases_are_items(d, d->failed, d->nfailed, names, n, err, errlen)
                 ? -1
                 : 0;
    }
    for (size_t i = 0; !rc && i < d->nfiles; i++)
        if (!has_name(files, n, d->files[i]))
            rc = refuse(err, errlen, d->dir, "%s is the output of no item of this run: a stale "
                        "or foreign file (a bundle directory holds the outputs of one run of "
                        "this matrix)", a4w4_quote(d->files[i], shown, sizeof shown));
    free(names);
    free_names(files, files ? n : 0);
    return rc;
}

static void free_cases(a4w4_bundle_case *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].name);
        free(v[i].why);
    }
    free(v);
}

void a4w4_bundle_dir_free(a4w4_bundle_dir *d)
{
    if (!d)
        return;
    free(d->dir);
    free_cases(d->cases, d->ncases);
    free_cases(d->failed, d->nfailed);
    free_names(d->files, d->nfiles);
    memset(d, 0, sizeof *d);
}
