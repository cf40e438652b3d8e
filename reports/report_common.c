/* report_common.c — see report_common.h. */
#include "report_common.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- string buffer -------------------------------------------------------------------- */

static int rb_reserve(rbuf *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (b->n + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + extra + 1)
        cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->s = p;
    b->cap = cap;
    return 0;
}

void rb_printf(rbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0 || rb_reserve(b, (size_t)k))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

void rb_puts(rbuf *b, const char *s)
{
    size_t L = strlen(s);
    if (rb_reserve(b, L))
        return;
    memcpy(b->s + b->n, s, L + 1);
    b->n += L;
}

static void rb_putc(rbuf *b, char c)
{
    if (rb_reserve(b, 1))
        return;
    b->s[b->n++] = c;
    b->s[b->n] = 0;
}

void rb_html(rbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            rb_puts(b, "&amp;");
            break;
        case '<':
            rb_puts(b, "&lt;");
            break;
        case '>':
            rb_puts(b, "&gt;");
            break;
        case '"':
            rb_puts(b, "&quot;");
            break;
        case '\'':
            rb_puts(b, "&#39;");
            break;
        default:
            rb_putc(b, *s);
        }
    }
}

void rb_xml(rbuf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 && c != '\t' && c != '\n')
            continue;
        if (c == '\n') {
            rb_puts(b, "&#10;");
            continue;
        }
        switch (c) {
        case '&':
            rb_puts(b, "&amp;");
            break;
        case '<':
            rb_puts(b, "&lt;");
            break;
        case '>':
            rb_puts(b, "&gt;");
            break;
        case '"':
            rb_puts(b, "&quot;");
            break;
        case '\'':
            rb_puts(b, "&apos;");
            break;
        default:
            rb_putc(b, (char)c);
        }
    }
}

void rb_md(rbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '|':
            rb_puts(b, "\\|");
            break;
        case '\n':
        case '\r':
            rb_putc(b, ' ');
            break;
        case '<':
            rb_puts(b, "&lt;");
            break;
        default:
            rb_putc(b, *s);
        }
    }
}

const rb_markup rb_markdown = {
    .html = 0, .esc = rb_md, .row = "| ", .name_end = " | ", .cell = " | ", .num = " | ",
    .row_end = " |\n", .arrow = " → ", .code = "`", .code_end = "`", .item = "- ",
    .item_end = "\n", .para = "", .para_end = "\n\n", .table_end = "\n"};
const rb_markup rb_htmlmarkup = {
    .html = 1, .esc = rb_html, .row = "<tr><td><code>", .name_end = "</code></td><td>",
    .cell = "</td><td>", .num = "</td><td class=\"n\">", .row_end = "</td></tr>\n",
    .arrow = " &#8594; ", .code = "<code>", .code_end = "</code>", .item = "<li>",
    .item_end = "</li>\n", .para = "<p>", .para_end = "</p>\n",
    .table_end = "</tbody></table>\n"};

void rb_heading(rbuf *b, const rb_markup *m, const char *id, const char *title)
{
    if (m->html)
        rb_printf(b, "<h2 id=\"%s\">%s</h2>\n", id, title);
    else
        rb_printf(b, "## %s\n\n", title);
}

void rb_table_head(rbuf *b, const rb_markup *m, const char *const *cols, size_t ncols,
                   unsigned numeric)
{
    rb_puts(b, m->html ? "<table class=\"sortable\"><thead><tr>" : "|");
    for (size_t i = 0; i < ncols; i++)
        rb_printf(b, m->html ? "<th%s>%s</th>" : " %.0s%s |",
                  numeric >> i & 1 ? " class=\"n\"" : "", cols[i]);
    if (m->html) {
        rb_puts(b, "</tr></thead><tbody>\n");
        return;
    }
    rb_puts(b, "\n|");
    for (size_t i = 0; i < ncols; i++)
        rb_puts(b, numeric >> i & 1 ? "---:|" : "---|");
    rb_puts(b, "\n");
}

char *rb_take(rbuf *b)
{
    if (b->oom || rb_reserve(b, 0)) {
        free(b->s);
        memset(b, 0, sizeof *b);
        return NULL;
    }
    char *s = b->s;
    memset(b, 0, sizeof *b);
    return s;
}

/* ---- quoting ------------------------------------------------------------------------- */

const char *quote_text(const char *s, char *buf, size_t len)
{
    if (!len)
        return buf;
    if (!s)
        s = "(null)";
    size_t i = 0;
    for (; s[i] && i < len - 1; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[i] = (c < 0x20 || c == 0x7F) ? '?' : (char)c;
    }
    if (s[i] && len >= 4)
        memcpy(buf + len - 4, "...", 3);
    buf[i] = '\0';
    return buf;
}

/* ---- entry fields --------------------------------------------------------------------- */

const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

double jnum(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int a4w4_report_differ_text(const cJSON *e, char *buf, size_t len)
{
    double checked = jnum(e, "checked_outputs", 0), mism = jnum(e, "mismatches", 0);
    if (checked > 0 || mism > 0) {
        snprintf(buf, len, "%.0f of %.0f checked outputs differ", mism, checked);
        return 1;
    }
    const char *aborted = jstr(e, "aborted"), *note = jstr(e, "note");
    snprintf(buf, len, "no output compared (%s)",
             *aborted                          ? aborted
             : !strncmp(note, "refused: ", 9) ? "refused: bad input"
                                               : "the backend returned no outputs");
    return 0;
}

int jint(const cJSON *o, const char *k, int dflt)
{
    double v = jnum(o, k, dflt);
    if (v != v)
        return dflt;
    return v >= (double)INT_MAX ? INT_MAX : v <= (double)INT_MIN ? INT_MIN : (int)v;
}

int jtrue(const cJSON *o, const char *k)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k));
}

int jhas(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k) != NULL;
}

const char *const verdict_names[NVERDICTS] = {"pass", "fail", "n/a", "skip", "xfail",
                                              "ambiguous"};

int verdict_index(const char *v)
{
    return !strcmp(v, "pass")        ? 0
           : !strcmp(v, "fail")      ? 1
           : !strcmp(v, "n/a")       ? 2
           : !strcmp(v, "ambiguous") ? VERDICT_AMBIGUOUS
                                     : 3;
}

int entry_verdict_index(const cJSON *e)
{
    int v = verdict_index(jstr(e, "verdict"));
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "known_failure");
    return v == 1 && !strcmp(jstr(k, "status"), "xfail") ? VERDICT_XFAIL : v;
}

int verdict_severity(int idx)
{
    static const int sev[NVERDICTS] = {2, 3, 1, 0, 2, 0};
    return idx >= 0 && idx < NVERDICTS ? sev[idx] : 0;
}

int contract_bounded(const char *contract)
{
    return !strncmp(contract, "bounded", 7);
}

/* ---- tallies -------------------------------------------------------------------------- */

tally *tally_build(const cJSON *cases, size_t *n)
{
    *n = 0;
    size_t cap = 0;
    tally *t = NULL;
    const cJSON *e;
    cJSON_ArrayForEach(e, cases) {
        const char *b = jstr(e, "backend"), *c = jstr(e, "contract");
        size_t i;
        for (i = 0; i < *n; i++)
            if (!strcmp(t[i].backend, b) && !strcmp(t[i].contract, c))
                break;
        if (i == *n) {
            if (*n == cap) {
                cap = cap ? 2 * cap : 8;
                tally *p = realloc(t, cap * sizeof *t);
                if (!p) {
                    free(t);
                    *n = 0;
                    return NULL;
                }
                t = p;
            }
            memset(&t[i], 0, sizeof t[i]);
            t[i].backend = b;
            t[i].contract = c;
            t[i].max_ulp = -1;
            (*n)++;
        }
        t[i].n[entry_verdict_index(e)]++;
        int nan;
        int u = entry_max_ulp(e, &nan);
        t[i].nan_ulp += nan;
        if (u > t[i].max_ulp)
            t[i].max_ulp = u;
        double ms = jnum(e, "time_ms", 0);
        t[i].time_ms += ms;
        t[i].timed += ms > 0;
    }
    return t;
}

int entry_max_ulp(const cJSON *e, int *nan)
{
    int u = jint(e, "max_ulp", -1);
    *nan = u < 0 && jnum(e, "mismatches", 0) > 0;
    return u;
}

void ulp_cell(rbuf *b, int max_ulp, int nan, const char *dash)
{
    if (max_ulp > 0 && nan)
        rb_printf(b, "%d; NaN vs number", max_ulp);
    else if (nan)
        rb_puts(b, "NaN vs number");
    else if (max_ulp >= 0)
        rb_printf(b, "%d", max_ulp);
    else
        rb_puts(b, nan ? "NaN vs number" : dash);
}

void verdict_counts(const cJSON *cases, int n[NVERDICTS])
{
    memset(n, 0, NVERDICTS * sizeof *n);
    const cJSON *e;
    cJSON_ArrayForEach(e, cases)
        n[entry_verdict_index(e)]++;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int is_call_sequence(const char *name)
{
    static const char suffix[] = "/call-sequence";
    size_t L = strlen(name), S = sizeof suffix - 1;
    return L > S && !strcmp(name + L - S, suffix);
}

size_t distinct_cases(const cJSON *cases)
{
    size_t n = 0, m = 0;
    const char **names = malloc(((size_t)cJSON_GetArraySize(cases) + 1) * sizeof *names);
    if (!names)
        return 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cases)
        if (!is_call_sequence(jstr(e, "name"))) /* its case's, no case of its own */
            names[m++] = jstr(e, "name");
    qsort(names, m, sizeof *names, cmp_str);
    for (size_t i = 0; i < m; i++)
        n += i == 0 || strcmp(names[i - 1], names[i]) != 0;
    free((void *)names);
    return n;
}

/* ---- groups --------------------------------------------------------------------------- */

void group_key(const cJSON *e, char *buf, size_t len)
{
    if (!strcmp(jstr(e, "regime"), "golden")) {
        snprintf(buf, len, "golden bundles");
        return;
    }
    const char *tags = jstr(e, "tags");
    size_t L = strcspn(tags, ";");
    if (L == 4 && !strncmp(tags, "real", 4))
        snprintf(buf, len, "layer N=%.0f K=%.0f", jnum(e, "N", 0), jnum(e, "K", 0));
    else if (L)
        snprintf(buf, len, "tag: %.*s", (int)(L > 80 ? 80 : L), tags);
    else
        snprintf(buf, len, "untagged");
}

group *groups_build(const cJSON *cases, size_t *ngroups)
{
    group *g = NULL;
    size_t n = 0, cap = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cases) {
        char key[96];
        group_key(e, key, sizeof key);
        size_t i;
        for (i = 0; i < n; i++)
            if (!strcmp(g[i].key, key))
                break;
        if (i == n) {
            if (n == cap) {
                cap = cap ? 2 * cap : 8;
                group *p = realloc(g, cap * sizeof *g);
                if (!p)
                    goto oom;
                g = p;
            }
            memset(&g[i], 0, sizeof g[i]);
            snprintf(g[i].key, sizeof g[i].key, "%s", key);
            n++;
        }
        if (g[i].n == g[i].cap) {
            size_t c2 = g[i].cap ? 2 * g[i].cap : 16;
            const cJSON **p = realloc(g[i].e, c2 * sizeof *p);
            if (!p)
                goto oom;
            g[i].e = p;
            g[i].cap = c2;
        }
        g[i].e[g[i].n++] = e;
        g[i].n_by_verdict[entry_verdict_index(e)]++;
    }
    *ngroups = n;
    return g;
oom:
    groups_free(g, n);
    *ngroups = 0;
    return NULL;
}

void groups_free(group *g, size_t n)
{
    for (size_t i = 0; g && i < n; i++)
        free((void *)g[i].e);
    free(g);
}

/* ---- numbers -------------------------------------------------------------------------- */

static int hex4(const char *s, unsigned *v)
{
    if (strncmp(s, "0x", 2) || strlen(s) != 6)
        return 0;
    char *end;
    unsigned long x = strtoul(s + 2, &end, 16);
    if (*end)
        return 0;
    *v = (unsigned)x;
    return 1;
}

long bf16_hex_ulp(const char *a, const char *b)
{
    unsigned x, y;
    if (!hex4(a, &x) || !hex4(b, &y))
        return -1;
    if ((x & 0x7FFF) > 0x7F80 || (y & 0x7FFF) > 0x7F80)
        return -1;
    long ox = (x & 0x8000) ? -(long)(x & 0x7FFF) : (long)(x & 0x7FFF);
    long oy = (y & 0x8000) ? -(long)(y & 0x7FFF) : (long)(y & 0x7FFF);
    return ox > oy ? ox - oy : oy - ox;
}

size_t environment_rows(const cJSON *doc, const char *labels[], const char *values[], size_t max,
                        char scratch[][160])
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc, "environment");
    size_t n = 0, s = 0;
    if (!cJSON_IsObject(env))
        return 0;
    static const struct {
        const char *key, *label;
    } plain[] = {{"gpu", "GPU"}, {"driver", "driver"}, {"compiler", "compiler"},
                 {"os", "OS"},   {"host", "host"},     {"date", "date (UTC)"}};
    for (size_t i = 0; i < 2 && n < max; i++)
        if (*jstr(env, plain[i].key)) {
            labels[n] = plain[i].label;
            values[n++] = jstr(env, plain[i].key);
        }
    if (*jstr(env, "git_commit") && n < max) {
        snprintf(scratch[s], 160, "%s%s", jstr(env, "git_commit"),
                 jtrue(env, "git_dirty") ? " (with uncommitted changes)" : "");
        labels[n] = "commit";
        values[n++] = scratch[s++];
    }
    for (size_t i = 2; i < sizeof plain / sizeof plain[0] && n < max; i++)
        if (*jstr(env, plain[i].key)) {
            labels[n] = plain[i].label;
            values[n++] = jstr(env, plain[i].key);
        }
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(env, "tables")) {
        if (n >= max || s >= 8)
            break;
        snprintf(scratch[s], 160, "%s (FNV-1a %s)", jstr(t, "path"),
                 *jstr(t, "fnv1a64") ? jstr(t, "fnv1a64") : "not recorded");
        labels[n] = !strcmp(jstr(t, "role"), "tuned") ? "tuned table" : "kernel table";
        values[n++] = scratch[s++];
    }
    return n;
}

int tolerance_text(rbuf *b, const cJSON *e, void (*esc)(rbuf *, const char *))
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "tolerance");
    if (!cJSON_IsObject(t))
        return 0;
    rb_printf(b, " Tolerance criteria on its %.0f outputs: ", jnum(t, "outputs", 0));
    const cJSON *c;
    int k = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(t, "criteria")) {
        rb_puts(b, k++ ? "; " : "");
        esc(b, jstr(c, "text"));
    }
    rb_puts(b, ".");
    if (jtrue(t, "would_ship"))
        rb_puts(b, " A tolerance test would have shipped this.");
    return 1;
}
