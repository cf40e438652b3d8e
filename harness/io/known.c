/* known.c — the known-failures ledger: reading, matching, annotating a results document,
 * and the nightly's last_matched rewrite (known.h). */
#include "known.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_csv.h"
#include "errmsg.h"
#include "fsutil.h"
#include "stream.h"

static const char *const columns[] = {"id", "backend", "case", "shape", "upstream", "since",
                                      "until", "symptom", "last_matched"};
#define NCOL 9

/* ---- shape predicates and versions -------------------------------------------------------- */

static const char *const ops[6] = {"==", "!=", "<=", ">=", "<", ">"};
static const int op_code[6] = {0, 1, 3, 5, 2, 4};

static int parse_number(const char **p, unsigned long long *v)
{
    if (**p < '0' || **p > '9')
        return -1;
    char *end;
    errno = 0;
    *v = strtoull(*p, &end, 10);
    *p = end;
    return errno ? -1 : 0;
}

static void skip_blank(const char **p)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
}

int a4w4_known_parse_shape(const char *text, a4w4_known_entry *e, char *err, size_t errlen)
{
    e->nterm = 0;
    const char *p = text;
    skip_blank(&p);
    while (*p) {
        a4w4_known_term t = {0};
        const char *at = p;
        t.var = *p == 'M' ? 0 : *p == 'N' ? 1 : *p == 'K' ? 2 : -1;
        p += t.var >= 0;
        skip_blank(&p);
        if (t.var >= 0 && *p == '%') {
            p++;
            skip_blank(&p);
            if (parse_number(&p, &t.mod) || !t.mod)
                t.var = -1;
            skip_blank(&p);
        }
        int k = 0;
        while (k < 6 && strncmp(p, ops[k], strlen(ops[k])))
            k++;
        if (t.var < 0 || k == 6 || e->nterm == A4W4_KNOWN_MAX_TERMS) {
            snprintf(err, errlen, "shape term at '%.20s' is not X OP V or X%%D OP V (X one of M, "
                     "N, K; OP ==, !=, <, <=, >, >=; at most %d terms joined by '&')", at,
                     A4W4_KNOWN_MAX_TERMS);
            return -1;
        }
        p += strlen(ops[k]);
        t.op = op_code[k];
        skip_blank(&p);
        if (parse_number(&p, &t.val)) {
            snprintf(err, errlen, "shape term at '%.20s' needs a decimal value", at);
            return -1;
        }
        skip_blank(&p);
        if (*p && *p != '&') {
            snprintf(err, errlen, "shape terms are joined by '&' (at '%.20s')", p);
            return -1;
        }
        int joined = *p == '&';
        p += joined;
        skip_blank(&p);
        if (joined && !*p) {
            snprintf(err, errlen, "shape ends in '&' with no term after it");
            return -1;
        }
        e->term[e->nterm++] = t;
    }
    return 0;
}

static int term_holds(const a4w4_known_term *t, const size_t dims[3])
{
    unsigned long long x = dims[t->var];
    if (t->mod)
        x %= t->mod;
    switch (t->op) {
    case 0: return x == t->val;
    case 1: return x != t->val;
    case 2: return x < t->val;
    case 3: return x <= t->val;
    case 4: return x > t->val;
    default: return x >= t->val;
    }
}

/* Dotted version comparison: numeric segments by value, others by text; -1, 0, 1. */
static int version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        char *ea, *eb;
        unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
        if (ea != a && eb != b && x != y)
            return x < y ? -1 : 1;
        size_t la = strcspn(ea, "."), lb = strcspn(eb, ".");
        int c = strncmp(ea, eb, la < lb ? la : lb);
        if (c || la != lb)
            return c ? (c < 0 ? -1 : 1) : (la < lb ? -1 : 1);
        a = ea + la + (ea[la] == '.');
        b = eb + lb + (eb[lb] == '.');
    }
    return 0;
}

/* 1 when case pattern pat matches entry name, or name is the call-sequence entry of a case
 * it matches ("A" covers "A/call-sequence", io/stream.h). */
static int case_matches(const char *pat, const char *name)
{
    if (!fnmatch(pat, name, 0))
        return 1;
    size_t n = strlen(name), s = strlen(A4W4_SEQ_SUFFIX);
    char a[512];
    if (n <= s || n - s >= sizeof a || strcmp(name + n - s, A4W4_SEQ_SUFFIX))
        return 0;
    memcpy(a, name, n - s);
    a[n - s] = '\0';
    return !fnmatch(pat, a, 0);
}

int a4w4_known_matches(const a4w4_known_entry *e, const char *backend, const char *name,
                       const char *regime, size_t M, size_t N, size_t K, const char *ver)
{
    int by_regime = !strncmp(e->cases, "regime=", 7);
    if (fnmatch(e->backend, backend, 0) ||
        (by_regime ? fnmatch(e->cases + 7, regime, 0) != 0 : !case_matches(e->cases, name)))
        return 0;
    const size_t dims[3] = {M, N, K};
    for (int i = 0; i < e->nterm; i++)
        if (!term_holds(&e->term[i], dims))
            return 0;
    if (ver && *ver && ((e->since[0] && version_cmp(ver, e->since) < 0) ||
                        (e->until[0] && version_cmp(ver, e->until) >= 0)))
        return 0;
    return 1;
}

/* Days since 1970-01-01 of a "YYYY-MM-DD" prefix, or LONG_MIN. */
static long day_number(const char *s)
{
    int y, m, d;
    char tail;
    if (!s || strlen(s) < 10 || sscanf(s, "%4d-%2d-%2d", &y, &m, &d) != 3 || s[4] != '-' ||
        s[7] != '-' || m < 1 || m > 12 || d < 1 || d > 31 || (sscanf(s + 10, "%c", &tail) == 1 &&
                                                              tail != 'T'))
        return LONG_MIN;
    y -= m <= 2; /* days from civil (H. Hinnant) */
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400, doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

int a4w4_known_days(const char *a, const char *b)
{
    long x = day_number(a), y = day_number(b);
    return x == LONG_MIN || y == LONG_MIN ? INT_MIN : (int)(y - x);
}

/* ---- reading ------------------------------------------------------------------------------ */

static int is_word(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '-' || *s == '_'))
            return 0;
    return 1;
}

/* One record into e; 0 or -1 with err. */
static int read_entry(const char *path, const a4w4_csv_record *r, const int *col,
                      a4w4_known_entry *e, char *err, size_t errlen)
{
    char *dst[NCOL] = {e->id, e->backend, e->cases, e->shape, e->upstream, e->since, e->until,
                       e->symptom, e->last_matched};
    const size_t cap[NCOL] = {sizeof e->id, sizeof e->backend, sizeof e->cases, sizeof e->shape,
                              sizeof e->upstream, sizeof e->since, sizeof e->until,
                              sizeof e->symptom, sizeof e->last_matched};
    memset(e, 0, sizeof *e);
    e->line = r->line;
    for (int i = 0; i < NCOL; i++) {
        const a4w4_csv_field *f = &r->f[col[i]];
        if (strlen(f->text) >= cap[i])
            return a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL,
                               "%s:%d:%d: %s is longer than %zu bytes", path, f->line, f->col,
                               columns[i], cap[i] - 1),
                   -1;
        snprintf(dst[i], cap[i], "%s", f->text);
    }
    char why[200];
    const a4w4_csv_field *f = r->f;
    if (!is_word(e->id))
        return a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL,
                           "%s:%d: id '%s' must be a word of [A-Za-z0-9._-]", path, r->line, e->id),
               -1;
    if (!e->backend[0] || !e->cases[0] || !e->upstream[0])
        return a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL,
                           "%s:%d: entry %s: backend, case and upstream must not be "
                           "empty ('*' matches anything)",
                           path, r->line, e->id),
               -1;
    if (!e->symptom[0])
        return a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL,
                           "%s:%d: entry %s: symptom is required: text its failure's signature "
                           "contains, class=CLASS (the signature_class), or unwritten, crashed "
                           "or timed-out stated explicitly (docs/forensics.md)",
                           path, r->line, e->id),
               -1;
    if (!strcmp(e->backend, "*") && !strcmp(e->cases, "*"))
        return a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL,
                           "%s:%d: entry %s: backend '*' and case '*' match every entry of "
                           "every run: a known failure names its backend and its cases",
                           path, r->line, e->id),
               -1;
    if (a4w4_known_parse_shape(e->shape, e, why, sizeof why))
        return a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL, "%s:%d:%d: entry %s: %s", path,
                           f[col[3]].line, f[col[3]].col, e->id, why),
               -1;
    if (strlen(e->last_matched) != 10 || day_number(e->last_matched) == LONG_MIN)
        return a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL,
                           "%s:%d:%d: entry %s: last_matched '%s' must be a date "
                           "YYYY-MM-DD",
                           path, f[col[8]].line, f[col[8]].col, e->id, e->last_matched),
               -1;
    return 0;
}

/* The header: the first record that is no comment ('#'); d->n when none. */
static size_t header_index(const a4w4_csv_doc *d)
{
    size_t first = 0;
    while (first < d->n && d->r[first].n && d->r[first].f[0].text[0] == '#')
        first++;
    return first;
}

a4w4_hstatus a4w4_known_load(const char *path, a4w4_known_ledger *l, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    snprintf(l->path, sizeof l->path, "%s", path);
    a4w4_csv_doc d;
    if (a4w4_csv_read(path, &d, err, errlen))
        return strstr(err, "cannot open") ? A4W4_ST_IO : A4W4_ST_BADINPUT;
    size_t first = header_index(&d);
    int col[NCOL];
    a4w4_hstatus rc = A4W4_ST_OK;
    for (int i = 0; i < NCOL && first < d.n; i++)
        if ((col[i] = a4w4_csv_header_col(&d.r[first], columns[i])) < 0)
            rc = a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL,
                             "%s:%d: the header lacks column '%s' (id, backend, case, "
                             "shape, upstream, since, until, symptom, last_matched)",
                             path, d.r[first].line, columns[i]);
    if (first == d.n)
        rc = a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL, "%s: no header line", path);
    if (!rc && !(l->e = calloc(d.n, sizeof *l->e)))
        rc = A4W4_ST_NOMEM;
    for (size_t i = first + 1; i < d.n && !rc; i++) {
        const a4w4_csv_record *r = &d.r[i];
        if (r->n && r->f[0].text[0] == '#')
            continue;
        if (r->n != d.r[first].n)
            rc = a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL,
                             "%s:%d: %zu fields where the header has %zu", path, r->line, r->n,
                             d.r[first].n);
        else if (read_entry(path, r, col, &l->e[l->n], err, errlen))
            rc = A4W4_ST_BADINPUT;
        for (size_t j = 0; !rc && j < l->n; j++)
            if (!strcmp(l->e[j].id, l->e[l->n].id))
                rc = a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL,
                                 "%s:%d: id %s is used twice (line %d)", path, r->line, l->e[j].id,
                                 l->e[j].line);
        l->n += !rc;
    }
    a4w4_csv_doc_free(&d);
    if (rc)
        a4w4_known_free(l);
    return rc;
}

void a4w4_known_free(a4w4_known_ledger *l)
{
    free(l->e);
    l->e = NULL;
    l->n = 0;
}

/* ---- annotating a results document -------------------------------------------------------- */

static const char *jstr_of(const cJSON *o, const char *k)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
    return s ? s : "";
}

static size_t jdim(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 ? (size_t)v->valuedouble : 0;
}

int a4w4_known_is_xfail(const cJSON *e)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "known_failure");
    return !strcmp(jstr_of(e, "verdict"), "fail") && !strcmp(jstr_of(k, "status"), "xfail");
}

/* 1 when failing entry e shows symptom sym (io/known.h): an aborted entry only "crashed" or
 * "timed-out" as it was; one with unwritten outputs only "unwritten"; else "class=C" its
 * signature_class C, or text its signature contains. */
static int shows_symptom(const cJSON *e, const char *sym)
{
    const char *ab = jstr_of(e, "aborted");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(e, "unwritten");
    int unwritten = cJSON_IsNumber(u) && u->valuedouble > 0;
    if (*ab)
        return !strcmp(sym, !strcmp(ab, "crashed") ? "crashed" : "timed-out");
    if (unwritten || !strcmp(sym, "unwritten"))
        return unwritten && !strcmp(sym, "unwritten");
    if (!strcmp(sym, "crashed") || !strcmp(sym, "timed-out"))
        return 0;
    if (!strncmp(sym, "class=", 6))
        return !strcmp(jstr_of(e, "signature_class"), sym + 6);
    return strstr(jstr_of(e, "signature"), sym) != NULL;
}

/* The status of entry e under ledger entry k, or NULL when it gets none; broad: k's text
 * symptom shows in failures of two signature classes in this run (broad_symptoms). */
static const char *status_of(const cJSON *e, const a4w4_known_entry *k, int broad)
{
    const char *v = jstr_of(e, "verdict");
    if (!strcmp(v, "pass"))
        return "xpass";
    if (strcmp(v, "fail"))
        return NULL;
    return shows_symptom(e, k->symptom) && !broad ? "xfail" : "symptom-differs";
}

/* 1 when sym is text to find in a signature (none of class=C, unwritten, crashed, timed-out). */
static int text_symptom(const char *sym)
{
    return strncmp(sym, "class=", 6) && strcmp(sym, "unwritten") && strcmp(sym, "crashed") &&
           strcmp(sym, "timed-out");
}

/* The entry of l that takes results entry e (the first whose backend, case and shape match
 * under upstream version ver), or l->n: none, or an oracle entry. */
static size_t entry_of(const cJSON *e, const a4w4_known_ledger *l, const char *ver)
{
    const char *b = jstr_of(e, "backend");
    for (size_t i = 0; i < l->n && strcmp(b, "oracle"); i++)
        if (a4w4_known_matches(&l->e[i], b, jstr_of(e, "name"), jstr_of(e, "regime"),
                               jdim(e, "M"), jdim(e, "N"), jdim(e, "K"), ver))
            return i;
    return l->n;
}

/* broad[i] = 1 when entry i of l has a text symptom that the failing entries it takes in doc
 * show under two or more signature classes: a known failure is one bug, and text that fits
 * failures of different kinds (a symptom "o") names none of them, so it makes none XFAIL
 * (docs/forensics.md, "The known-failures ledger"). cls: l->n slots, NULL on entry. */
static void broad_symptoms(const cJSON *doc, const a4w4_known_ledger *l, const char *ver,
                           const char **cls, unsigned char *broad)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
        size_t i = entry_of(e, l, ver);
        if (i == l->n || !text_symptom(l->e[i].symptom) || strcmp(jstr_of(e, "verdict"), "fail") ||
            !shows_symptom(e, l->e[i].symptom))
            continue;
        const char *c = jstr_of(e, "signature_class");
        if (!cls[i])
            cls[i] = c;
        else if (strcmp(cls[i], c))
            broad[i] = 1;
    }
}

int a4w4_known_check_share(const cJSON *doc, const a4w4_known_ledger *l, char *err,
                           size_t errlen)
{
    const char *ver = jstr_of(doc, "upstream_version");
    for (size_t i = 0; i < l->n; i++) {
        size_t hit = 0, of = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
            const char *b = jstr_of(e, "backend");
            if (!strcmp(b, "oracle"))
                continue;
            of++;
            hit += a4w4_known_matches(&l->e[i], b, jstr_of(e, "name"), jstr_of(e, "regime"),
                                      jdim(e, "M"), jdim(e, "N"), jdim(e, "K"), ver);
        }
        if (of >= A4W4_KNOWN_SHARE_MIN && (double)hit > A4W4_KNOWN_MAX_SHARE * (double)of) {
            a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL,
                        "%s:%d: entry %s matches %zu of the run's %zu entries, "
                        "more than %.0f%%: a known failure is one bug on some shapes, not the "
                        "run (docs/forensics.md)", l->path, l->e[i].line, l->e[i].id, hit, of,
                        100 * A4W4_KNOWN_MAX_SHARE);
            return -1;
        }
    }
    return 0;
}

/* 1 when k's backend pattern matches one of doc's backends. */
static int relevant(const cJSON *doc, const a4w4_known_entry *k)
{
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(doc, "backends"))
        if (cJSON_IsString(b) && !fnmatch(k->backend, b->valuestring, 0))
            return 1;
    return 0;
}

static void summary_entry(cJSON *arr, const a4w4_known_entry *k, const size_t cnt[3],
                          int broad, const char *date)
{
    cJSON *o = cJSON_CreateObject();
    const char *keys[] = {"id", "backend", "case", "shape", "upstream", "since", "until",
                          "symptom", "last_matched"};
    const char *vals[] = {k->id, k->backend, k->cases, k->shape, k->upstream, k->since,
                          k->until, k->symptom, k->last_matched};
    for (int i = 0; i < NCOL; i++)
        cJSON_AddStringToObject(o, keys[i], vals[i]);
    cJSON_AddNumberToObject(o, "xfail", (double)cnt[0]);
    cJSON_AddNumberToObject(o, "xpass", (double)cnt[1]);
    cJSON_AddNumberToObject(o, "symptom_differs", (double)cnt[2]);
    cJSON_AddBoolToObject(o, "symptom_too_broad", broad);
    int days = a4w4_known_days(k->last_matched, date);
    cJSON_AddBoolToObject(o, "stale", !cnt[0] && !cnt[1] && !cnt[2] && days != INT_MIN &&
                                          days > A4W4_KNOWN_STALE_DAYS);
    cJSON_AddItemToArray(arr, o);
}

void a4w4_known_apply(cJSON *doc, const a4w4_known_ledger *l, const char *date)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc, "environment");
    char day[16];
    snprintf(day, sizeof day, "%.10s", date ? date : jstr_of(env, "date"));
    const char *ver = jstr_of(doc, "upstream_version");
    size_t (*cnt)[3] = calloc(l->n + 1, sizeof *cnt);
    const char **cls = calloc(l->n + 1, sizeof *cls);
    unsigned char *broad = calloc(l->n + 1, 1);
    if (cls && broad)
        broad_symptoms(doc, l, ver, cls, broad);
    cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
        cJSON_DeleteItemFromObjectCaseSensitive(e, "known_failure");
        size_t i = entry_of(e, l, ver);
        /* without the memory to tell a broad symptom, none is trusted: no XFAIL */
        const char *st = i < l->n ? status_of(e, &l->e[i], broad ? broad[i] : 1) : NULL;
        if (st) {
            cJSON *k = cJSON_AddObjectToObject(e, "known_failure");
            cJSON_AddStringToObject(k, "id", l->e[i].id);
            cJSON_AddStringToObject(k, "upstream", l->e[i].upstream);
            cJSON_AddStringToObject(k, "status", st);
            if (cnt)
                cnt[i][!strcmp(st, "xpass") ? 1 : !strcmp(st, "xfail") ? 0 : 2]++;
        }
    }
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "known_failures");
    cJSON *kf = cJSON_CreateObject();
    cJSON_AddStringToObject(kf, "ledger", l->path);
    cJSON_AddStringToObject(kf, "date", day);
    cJSON *arr = cJSON_AddArrayToObject(kf, "entries");
    for (size_t i = 0; cnt && i < l->n; i++)
        if (relevant(doc, &l->e[i]))
            summary_entry(arr, &l->e[i], cnt[i], broad ? broad[i] : 1, day);
    cJSON_AddItemToObject(doc, "known_failures", kf);
    free(cnt);
    free(cls);
    free(broad);
}

/* ---- the nightly's last_matched rewrite --------------------------------------------------- */

/* 1 when doc's known_failures records entry id as matched. */
static int matched_in(const cJSON *doc, const char *id)
{
    const cJSON *k;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(doc, "known_failures"), "entries")) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(k, "xfail"),
                    *p = cJSON_GetObjectItemCaseSensitive(k, "xpass"),
                    *s = cJSON_GetObjectItemCaseSensitive(k, "symptom_differs");
        if (!strcmp(jstr_of(k, "id"), id) &&
            ((cJSON_IsNumber(x) && x->valuedouble > 0) || (cJSON_IsNumber(p) && p->valuedouble > 0) ||
             (cJSON_IsNumber(s) && s->valuedouble > 0)))
            return 1;
    }
    return 0;
}

/* The byte offset of (line, col) in text, or -1. */
static long offset_of(const char *text, int line, int col)
{
    long off = 0;
    for (int l = 1; l < line; l++) {
        const char *nl = strchr(text + off, '\n');
        if (!nl)
            return -1;
        off = nl - text + 1;
    }
    return off + col - 1;
}

a4w4_hstatus a4w4_known_touch(const a4w4_known_ledger *l, const cJSON *doc, const char *date,
                              const char *out, size_t *touched, char *err, size_t errlen)
{
    size_t len;
    *touched = 0;
    if (day_number(date) == LONG_MIN)
        return a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL, "date '%s' is not YYYY-MM-DD",
                           date);
    int missing;
    char *text = a4w4_read_regular(l->path, 0, &len, &missing, err, errlen);
    a4w4_csv_doc d;
    if (!text)
        return A4W4_ST_IO;
    if (a4w4_csv_read(l->path, &d, err, errlen)) {
        free(text);
        return A4W4_ST_BADINPUT;
    }
    a4w4_hstatus rc = A4W4_ST_OK;
    size_t h = header_index(&d);
    int lm = h < d.n ? a4w4_csv_header_col(&d.r[h], "last_matched") : -1;
    for (size_t i = 0; i < l->n && !rc; i++) {
        if (!matched_in(doc, l->e[i].id))
            continue;
        for (size_t r = 0; r < d.n; r++) {
            const a4w4_csv_record *rec = &d.r[r];
            if (rec->line != l->e[i].line)
                continue;
            int c = lm;
            const a4w4_csv_field *f = c >= 0 && (size_t)c < rec->n ? &rec->f[c] : NULL;
            long off = f ? offset_of(text, f->line, f->col) : -1;
            if (!f || f->line != rec->line || rec->end_line != rec->line || off < 0 ||
                strncmp(text + off, f->text, 10)) {
                rc = a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, NULL,
                                 "%s:%d: entry %s: last_matched is not a plain date on "
                                 "the entry's one line; edit it by hand",
                                 l->path, rec->line, l->e[i].id);
                break;
            }
            memcpy(text + off, date, 10);
            (*touched)++;
        }
    }
    a4w4_csv_doc_free(&d);
    if (!rc)
        rc = a4w4_write_atomic(out ? out : l->path, text, len, err, errlen);
    free(text);
    return rc;
}
