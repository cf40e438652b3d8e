/* casefile.c — case matrix reader (see casefile.h). */
#include "casefile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "a4w4_quote.h"
#include "grow.h"

/* A field quoted in a message: a line holds at most 1022 characters (read_lines), so a field
 * fits whole; control bytes show as '?' (a4w4_quote.h). */
typedef struct {
    char s[1024];
} shown_field;

static shown_field show(const char *field)
{
    shown_field out;
    a4w4_quote(field, out.s, sizeof out.s);
    return out;
}

a4w4_hstatus a4w4_regime_parse(const char *text, a4w4_regime *regime, a4w4_scale_mode *mode)
{
    *mode = A4W4_ROUND_UP;
    if (!strcmp(text, "exact"))
        *regime = A4W4_REGIME_EXACT;
    else if (!strcmp(text, "wide"))
        *regime = A4W4_REGIME_WIDE;
    else if (!strcmp(text, "special"))
        *regime = A4W4_REGIME_SPECIAL;
    else if (!strcmp(text, "code0"))
        *regime = A4W4_REGIME_CODE0;
    else if (!strcmp(text, "tiny"))
        *regime = A4W4_REGIME_TINY;
    else if (!strcmp(text, "range"))
        *regime = A4W4_REGIME_RANGE;
    else if (!strcmp(text, "normal"))
        *regime = A4W4_REGIME_NORMAL;
    else if (!strncmp(text, "normal:", 7)) {
        int m = a4w4_scale_mode_parse(text + 7);
        if (m < 0)
            return A4W4_ST_BADINPUT;
        *regime = A4W4_REGIME_NORMAL;
        *mode = (a4w4_scale_mode)m;
    } else
        return A4W4_ST_BADINPUT;
    return A4W4_ST_OK;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = 0;
    return s;
}

static int parse_u64(const char *s, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

/* Split s at commas into trimmed fields (at most 8 kept); returns the field count. */
static int split_fields(char *s, char *field[8])
{
    int nf = 0;
    for (char *p = s;;) {
        char *comma = strchr(p, ',');
        if (nf < 8)
            field[nf] = trim(p);
        nf++;
        if (!comma)
            break;
        *comma = 0;
        p = comma + 1;
    }
    return nf;
}

static const char *const cols[] = {"name", "M", "N", "K", "regime", "seed", "tags"};

/* Where a line sits, for messages "<path>:<line>: ...". */
typedef struct {
    const char *path;
    size_t lineno;
    char *err;
    size_t errlen;
} where;

static a4w4_hstatus check_header(const where *w, char *const *field, int nf)
{
    if (nf != 7) {
        snprintf(w->err, w->errlen, "%s:%zu: header must be name,M,N,K,regime,seed,tags",
                 w->path, w->lineno);
        return A4W4_ST_BADINPUT;
    }
    a4w4_hstatus rc = A4W4_ST_OK;
    for (int i = 0; i < 7; i++)
        if (strcmp(field[i], cols[i])) {
            snprintf(w->err, w->errlen, "%s:%zu: column %d must be '%s', found '%s'", w->path,
                     w->lineno, i + 1, cols[i], show(field[i]).s);
            rc = A4W4_ST_BADINPUT;
        }
    return rc;
}

/* Column 1: 1..95 file-name-safe characters, not starting with '.'. */
static a4w4_hstatus parse_name(const where *w, const char *name, a4w4_case *c)
{
    if (!*name || strlen(name) >= sizeof c->name) {
        snprintf(w->err, w->errlen, "%s:%zu: column 1 (name) must be 1..%zu characters", w->path,
                 w->lineno, sizeof c->name - 1);
        return A4W4_ST_BADINPUT;
    }
    for (const char *q = name; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
              *q == '_' || *q == '-' || *q == '.') || name[0] == '.') {
            snprintf(w->err, w->errlen, "%s:%zu: column 1 (name) '%s' may hold only letters, "
                     "digits, '_', '-' and '.' (not first): names become file names", w->path,
                     w->lineno, show(name).s);
            return A4W4_ST_BADINPUT;
        }
    snprintf(c->name, sizeof c->name, "%s", name);
    return A4W4_ST_OK;
}

int a4w4_case_shape_rule(size_t M, size_t N, size_t K, char *why, size_t len)
{
    /* a case must be generable here: each dimension <= 2^22 and the operands
     * (M + N) * K / 2 bytes <= 2^36 (they are allocated, if mostly untouched) */
    if (M <= A4W4_CASE_DIM_MAX && N <= A4W4_CASE_DIM_MAX && K <= A4W4_CASE_DIM_MAX &&
        ((double)M + (double)N) * (double)K / 2 <= A4W4_CASE_BYTES_MAX)
        return 0;
    snprintf(why, len, "M=%zu N=%zu K=%zu breaks the shape rule (each of M, N, K <= 4194304 "
             "and (M+N)*K/2 <= 64 GiB of operands)", M, N, K);
    return -1;
}

/* Columns 2..4: M, N, K in 1..2^32, then the shape rule and K % 32 == 0. */
static a4w4_hstatus parse_dims(const where *w, char *const *field, a4w4_case *c)
{
    uint64_t v[3];
    for (int i = 0; i < 3; i++)
        if (parse_u64(field[1 + i], &v[i]) || v[i] == 0 || v[i] > (1ull << 32)) {
            snprintf(w->err, w->errlen, "%s:%zu: column %d (%s) must be an integer in 1..2^32, "
                     "found '%s'", w->path, w->lineno, 2 + i, cols[1 + i], show(field[1 + i]).s);
            return A4W4_ST_BADINPUT;
        }
    c->M = (size_t)v[0];
    c->N = (size_t)v[1];
    c->K = (size_t)v[2];
    char why[200];
    if (a4w4_case_shape_rule(c->M, c->N, c->K, why, sizeof why)) {
        snprintf(w->err, w->errlen, "%s:%zu: case %s: %s", w->path, w->lineno, c->name, why);
        return A4W4_ST_BADINPUT;
    }
    if (c->K % 32) {
        snprintf(w->err, w->errlen, "%s:%zu: K=%zu breaks the rule K %% 32 == 0 (one E8M0 scale "
                 "per 32 elements)", w->path, w->lineno, c->K);
        return A4W4_ST_BADINPUT;
    }
    return A4W4_ST_OK;
}

/* One case line (7 fields) into c; prior[0..nprior) are the cases before it. */
static a4w4_hstatus parse_case(const where *w, char *const *field, const a4w4_case *prior,
                               size_t nprior, a4w4_case *c)
{
    memset(c, 0, sizeof *c);
    a4w4_hstatus rc = parse_name(w, field[0], c);
    if (!rc)
        rc = parse_dims(w, field, c);
    if (rc)
        return rc;
    if (a4w4_regime_parse(field[4], &c->regime, &c->mode)) {
        snprintf(w->err, w->errlen, "%s:%zu: column 5 (regime) '%s' is not exact, normal[:mode], "
                 "wide, special, code0, tiny or range", w->path, w->lineno, show(field[4]).s);
        return A4W4_ST_BADINPUT;
    }
    snprintf(c->regime_text, sizeof c->regime_text, "%s", field[4]);
    if (parse_u64(field[5], &c->seed)) {
        snprintf(w->err, w->errlen, "%s:%zu: column 6 (seed) must be a decimal integer, found "
                 "'%s'", w->path, w->lineno, show(field[5]).s);
        return A4W4_ST_BADINPUT;
    }
    for (const char *t = field[6]; *t; t++)
        if (*t < 0x20 || *t > 0x7E) { /* a byte that is no UTF-8 would break results.json */
            char q[160];
            snprintf(w->err, w->errlen, "%s:%zu: column 7 (tags) '%s' may hold only printable "
                     "ASCII", w->path, w->lineno, a4w4_quote_ascii(field[6], q, sizeof q));
            return A4W4_ST_BADINPUT;
        }
    snprintf(c->tags, sizeof c->tags, "%s", field[6]);
    for (size_t j = 0; j < nprior; j++)
        if (!strcmp(prior[j].name, c->name)) {
            snprintf(w->err, w->errlen, "%s:%zu: case name '%s' already used", w->path,
                     w->lineno, c->name);
            return A4W4_ST_BADINPUT;
        }
    return A4W4_ST_OK;
}

/* Room for one more case in *cases. */
static a4w4_hstatus grow(const where *w, a4w4_case **cases, size_t n, size_t *cap)
{
    if (A4W4_GROW(*cases, n + 1, *cap, 64)) {
        snprintf(w->err, w->errlen, "%s: out of memory", w->path);
        return A4W4_ST_NOMEM;
    }
    return A4W4_ST_OK;
}

/* One line of the file (header or case; comments and blank lines skipped). */
static a4w4_hstatus read_line(const where *w, char *line, int *header, a4w4_case **cases,
                              size_t *n, size_t *cap)
{
    char *s = line;
    if (w->lineno == 1 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
        (unsigned char)s[2] == 0xBF)
        s += 3; /* a UTF-8 byte order mark */
    s = trim(s);
    if (!*s || *s == '#')
        return A4W4_ST_OK;
    char *field[8];
    int nf = split_fields(s, field);
    if (!*header) {
        *header = 1;
        return check_header(w, field, nf);
    }
    if (nf != 7) {
        snprintf(w->err, w->errlen, "%s:%zu: %d columns, the header has 7", w->path, w->lineno,
                 nf);
        return A4W4_ST_BADINPUT;
    }
    a4w4_hstatus rc = grow(w, cases, *n, cap);
    if (!rc)
        rc = parse_case(w, field, *cases, *n, &(*cases)[*n]);
    if (!rc)
        (*n)++;
    return rc;
}

/* fgets that sees NUL bytes: one line (through its newline, at most len - 1 bytes) into
 * line. Returns 0 at the end of the file; *nul = the 1-based column of the line's first NUL
 * byte, 0 when it has none. */
static int get_line(FILE *f, char *line, size_t len, size_t *nul)
{
    size_t k = 0;
    int c = 0;
    *nul = 0;
    while (k + 1 < len && c != '\n' && (c = getc(f)) != EOF) {
        if (!c && !*nul)
            *nul = k + 1;
        line[k++] = (char)c;
    }
    line[k] = 0;
    return k > 0;
}

static a4w4_hstatus read_lines(FILE *f, where *w, a4w4_case **cases, size_t *n)
{
    char line[1024];
    size_t cap = 0, nul;
    int header = 0;
    a4w4_hstatus rc = A4W4_ST_OK;
    while (!rc && get_line(f, line, sizeof line, &nul)) {
        w->lineno++;
        if (nul) {
            snprintf(w->err, w->errlen, "%s:%zu: NUL byte at column %zu (a case file is text)",
                     w->path, w->lineno, nul);
            return A4W4_ST_BADINPUT;
        }
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(w->err, w->errlen, "%s:%zu: line longer than %zu characters", w->path,
                     w->lineno, sizeof line - 2);
            return A4W4_ST_BADINPUT;
        }
        rc = read_line(w, line, &header, cases, n, &cap);
    }
    if (!rc && !header) {
        snprintf(w->err, w->errlen, "%s: no header line (name,M,N,K,regime,seed,tags)", w->path);
        rc = A4W4_ST_BADINPUT;
    } else if (!rc && *n == 0) {
        snprintf(w->err, w->errlen, "%s: no cases after the header", w->path);
        rc = A4W4_ST_BADINPUT;
    }
    return rc;
}

a4w4_hstatus a4w4_casefile_read(const char *path, a4w4_case **cases, size_t *n, char *err,
                                size_t errlen)
{
    int not_regular = 0;
    FILE *f = a4w4_fopen_regular(path, &not_regular, err, errlen); /* a FIFO never blocks */
    *cases = NULL;
    *n = 0;
    if (!f) {
        if (!not_regular)
            snprintf(err, errlen, "%s: cannot open case file (%s)", path, strerror(errno));
        return A4W4_ST_BADINPUT;
    }
    where w = {path, 0, err, errlen};
    a4w4_hstatus rc = read_lines(f, &w, cases, n);
    fclose(f);
    if (rc) {
        free(*cases);
        *cases = NULL;
        *n = 0;
    }
    return rc;
}
