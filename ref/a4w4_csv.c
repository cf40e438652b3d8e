/* a4w4_csv.c — CSV documents with positions (libcsv, fed byte by byte so every field knows its
 * line and column) and the header / width / integer-field checks the dispatch tables share
 * (contracts §5). Prints nothing; errors go into the caller's buffer. */
#include "a4w4_csv.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "a4w4_dispatch_internal.h"
#include "a4w4_quote.h"

typedef struct {
    a4w4_csv_doc *doc;
    a4w4_csv_record cur;
    int line, col;          /* position of the byte being fed */
    int at_field_start, at_record_start;
    int fline, fcol;        /* first non-blank byte of the field being read */
    int after_cr;           /* the byte before was a carriage return */
    int oom;
} csv_state;

void a4w4_csv_record_free(a4w4_csv_record *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->f[i].text);
    free(r->f);
    memset(r, 0, sizeof *r);
}

void a4w4_csv_doc_free(a4w4_csv_doc *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        a4w4_csv_record_free(&d->r[i]);
    free(d->r);
    memset(d, 0, sizeof *d);
}

static void on_field(void *s, size_t len, void *data)
{
    csv_state *st = data;
    st->at_field_start = 1;
    if (st->oom)
        return;
    a4w4_csv_record *r = &st->cur;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        a4w4_csv_field *f = realloc(r->f, cap * sizeof *f);
        if (!f) {
            st->oom = 1;
            return;
        }
        r->f = f;
        r->cap = cap;
    }
    char *t = malloc(len + 1);
    if (!t) {
        st->oom = 1;
        return;
    }
    if (len)
        memcpy(t, s, len);
    t[len] = '\0';
    if (r->n == 0 && r->line == 0)
        r->line = st->fline;
    r->f[r->n].text = t;
    r->f[r->n].line = st->fline;
    r->f[r->n].col = st->fcol;
    r->n++;
}

static void on_record(int c, void *data)
{
    (void)c;
    csv_state *st = data;
    st->at_field_start = 1;
    st->at_record_start = 1;
    if (st->oom) {
        a4w4_csv_record_free(&st->cur);
        return;
    }
    st->cur.end_line = st->line;
    st->cur.end_col = st->col;
    a4w4_csv_doc *d = st->doc;
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        a4w4_csv_record *r = realloc(d->r, cap * sizeof *r);
        if (!r) {
            st->oom = 1;
            a4w4_csv_record_free(&st->cur);
            return;
        }
        d->r = r;
        d->cap = cap;
    }
    d->r[d->n++] = st->cur;
    memset(&st->cur, 0, sizeof st->cur);
}

/* Note where a field (and a record) starts: its first byte that is not blank. */
static void mark_start(csv_state *st, unsigned char b)
{
    if (!st->at_field_start)
        return;
    int blank_line = st->at_record_start && (b == '\n' || b == '\r');
    if (blank_line || b == ' ' || b == '\t')
        return;
    st->fline = st->line;
    st->fcol = st->col;
    st->at_field_start = 0;
    if (st->at_record_start) {
        st->cur.line = st->line;
        st->at_record_start = 0;
    }
}

/* Feed the file to the parser byte by byte. A4W4_OK, or the malformed-quoting error (the
 * caller checks st->oom and ferror). */
static int feed(const char *path, FILE *fp, struct csv_parser *p, csv_state *st, char *err,
                size_t errlen)
{
    int c;
    while ((c = fgetc(fp)) != EOF) {
        unsigned char b = (unsigned char)c;
        mark_start(st, b);
        if (csv_parse(p, &b, 1, on_field, on_record, st) != 1)
            return errf(err, errlen, A4W4_EINVAL,
                        "%s:%d:%d: malformed quoting (a quote inside a quoted field must be "
                        "doubled, and a closing quote followed by a delimiter or line end)",
                        path, st->line, st->col);
        if (st->oom)
            return A4W4_OK;
        /* a line ends at LF, CR LF or a lone CR (where libcsv ends a record too) */
        if (b == '\r' || (b == '\n' && !st->after_cr)) {
            st->line++;
            st->col = 1;
        } else if (b != '\n') {
            st->col++;
        }
        st->after_cr = b == '\r';
    }
    return A4W4_OK;
}

int a4w4_csv_read(const char *path, a4w4_csv_doc *doc, char *err, size_t errlen)
{
    memset(doc, 0, sizeof *doc);
    /* opened non-blocking and checked before reading: a FIFO without a writer never blocks */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errf(err, errlen, A4W4_EINVAL, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    int fl = fcntl(fd, F_GETFL);
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || fl < 0 ||
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        close(fd);
        return errf(err, errlen, A4W4_EINVAL, "%s: not a regular file (a FIFO, a device or a "
                    "directory); give a file", path);
    }
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        close(fd);
        return errf(err, errlen, A4W4_ENOMEM, "%s: cannot open: %s", path, strerror(errno));
    }
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
        fclose(fp);
        return errf(err, errlen, A4W4_ENOMEM, "%s: cannot initialise the CSV parser", path);
    }
    csv_state st;
    memset(&st, 0, sizeof st);
    st.doc = doc;
    st.line = 1;
    st.col = 1;
    st.at_field_start = st.at_record_start = 1;
    int status = feed(path, fp, &p, &st, err, errlen);
    if (status == A4W4_OK && !st.oom && ferror(fp))
        status = errf(err, errlen, A4W4_EINVAL, "%s: read error", path);
    if (status == A4W4_OK && !st.oom) {
        int open_line = st.fline, open_col = st.fcol;
        if (csv_fini(&p, on_field, on_record, &st) != 0)
            status = errf(err, errlen, A4W4_EINVAL,
                          "%s:%d:%d: unterminated quote (the quoted field opened here never "
                          "closes)",
                          path, open_line, open_col);
    }
    if (status == A4W4_OK && st.oom)
        status = errf(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
    csv_free(&p);
    fclose(fp);
    a4w4_csv_record_free(&st.cur);
    if (status != A4W4_OK)
        a4w4_csv_doc_free(doc);
    return status;
}

int a4w4_csv_header_col(const a4w4_csv_record *h, const char *name)
{
    for (size_t i = 0; i < h->n; i++)
        if (!strcmp(h->f[i].text, name))
            return (int)i;
    return -1;
}

/* Every data record must have as many fields as the header. */
static int check_width(const char *path, const a4w4_csv_doc *d, char *err, size_t errlen)
{
    size_t w = d->r[0].n;
    for (size_t i = 1; i < d->n; i++) {
        const a4w4_csv_record *r = &d->r[i];
        if (r->n == w)
            continue;
        if (r->n > w)
            return errf(err, errlen, A4W4_EINVAL,
                        "%s:%d:%d: %zu fields where the header has %zu (first extra field here)",
                        path, r->f[w].line, r->f[w].col, r->n, w);
        return errf(err, errlen, A4W4_EINVAL,
                    "%s:%d:%d: %zu fields where the header has %zu (record ends here)", path,
                    r->end_line, r->end_col, r->n, w);
    }
    return A4W4_OK;
}

int a4w4_csv_required_cols(const char *path, a4w4_csv_doc *d, const char *const *names, int n,
                           const char *needs, int *col, char *err, size_t errlen)
{
    const a4w4_csv_record *h = &d->r[0];
    for (int i = 0; i < n; i++)
        if ((col[i] = a4w4_csv_header_col(h, names[i])) < 0) {
            int line = h->line;
            a4w4_csv_doc_free(d);
            return errf(err, errlen, A4W4_EINVAL, "%s:%d:1: header lacks column '%s' (%s)", path,
                        line, names[i], needs);
        }
    return A4W4_OK;
}

int a4w4_csv_rows_present(const char *path, a4w4_csv_doc *d, const char *header_only,
                          char *err, size_t errlen)
{
    int st;
    if (d->n < 2) {
        a4w4_csv_doc_free(d);
        return errf(err, errlen, A4W4_EINVAL, "%s: %s", path, header_only);
    }
    if ((st = check_width(path, d, err, errlen)))
        a4w4_csv_doc_free(d);
    return st;
}

/* Base-10 integer filling the whole string, in [lo, hi]. 1 on success. */
static int parse_int(const char *s, long lo, long hi, int *out)
{
    if (!s || !*s)
        return 0;
    const char *q = s;
    if (*q == '-' || *q == '+')
        q++;
    if (*q < '0' || *q > '9')
        return 0;
    errno = 0;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0' || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

/* Optional sign, then one or more decimal digits, nothing else. */
static int int_syntax(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int a4w4_csv_field_int(const char *path, const a4w4_csv_record *r, int col, const char *name,
                       long lo, long hi, int *out, char *err, size_t errlen)
{
    const a4w4_csv_field *f = &r->f[col];
    if (parse_int(f->text, lo, hi, out))
        return A4W4_OK;
    if (int_syntax(f->text))
        return errf(err, errlen, A4W4_EINVAL, "%s:%d:%d: %s is %s, outside %ld..%ld", path,
                    f->line, f->col, name, f->text, lo, hi);
    char shown[256]; /* a quoted field may hold line breaks: the message stays one line */
    return errf(err, errlen, A4W4_EINVAL, "%s:%d:%d: %s is '%s', not an integer", path,
                f->line, f->col, name, a4w4_quote(f->text, shown, sizeof shown));
}
