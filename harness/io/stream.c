/* stream.c — see stream.h. */
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned long long a4w4_hash_str(const char *s, unsigned long long h)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return h;
}

unsigned long long a4w4_hash_file(const char *path, unsigned long long h, int *ok)
{
    FILE *f = fopen(path, "rb");
    *ok = f != NULL;
    if (!f)
        return h;
    int c;
    while ((c = getc(f)) != EOF)
        h = (h ^ (unsigned char)c) * 0x100000001B3ull;
    fclose(f);
    return h;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        char *p = realloc(buf, 2 * cap + 1);
        if (!p) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = p;
        cap *= 2;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        *len = n;
    }
    return buf;
}

/* Fields of the header that must agree for a resume or a merge. */
static const char *const identity_fields[] = {"schema",         "tool_version", "matrix_hash",
                                              "backends",       "contracts",    "full",
                                              "budget_seconds", "set"};

static int write_line(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The recorded header of a resumed file against this run's: every identity field and the
 * shard must agree. */
static a4w4_hstatus check_resumed_header(const a4w4_stream *st, const cJSON *h,
                                         const cJSON *header, char *err, size_t errlen)
{
    for (size_t i = 0; h && i < sizeof identity_fields / sizeof identity_fields[0]; i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(h, identity_fields[i]);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(header, identity_fields[i]);
        if (!a || !b || !cJSON_Compare(a, b, 1)) {
            snprintf(err, errlen, "%s: --resume refused: the recorded run differs in '%s' "
                     "(another matrix, seed, backend set, contract or version); remove it or use a "
                     "new --out",
                     st->path, identity_fields[i]);
            return A4W4_ST_BADINPUT;
        }
    }
    const cJSON *ha = cJSON_GetObjectItemCaseSensitive(h, "shard");
    const cJSON *hb = cJSON_GetObjectItemCaseSensitive(header, "shard");
    if (!h || !ha || !hb || !cJSON_Compare(ha, hb, 1)) {
        snprintf(err, errlen, "%s: --resume refused: recorded shard %s, this run %s",
                 st->path, cJSON_IsString(ha) ? ha->valuestring : "?",
                 cJSON_IsString(hb) ? hb->valuestring : "?");
        return A4W4_ST_BADINPUT;
    }
    return A4W4_ST_OK;
}

/* Walk the old file's lines: the header must be ours and match; every later whole, parseable
 * line is a finished case (its name goes to done). *keep: the bytes to keep. */
static a4w4_hstatus scan_resumed(const a4w4_stream *st, char *old, const cJSON *header,
                                 cJSON *done, size_t *keep, char *err, size_t errlen)
{
    char *line = old, *nl;
    int first = 1;
    while ((nl = strchr(line, '\n'))) {
        *nl = 0;
        cJSON *j = cJSON_Parse(line);
        const cJSON *hdr = j ? cJSON_GetObjectItemCaseSensitive(j, "a4w4check_header") : NULL;
        if (first && !hdr) { /* not ours: never overwrite what we cannot read */
            snprintf(err, errlen, "%s: --resume refused: the first line is not an a4w4check "
                     "results header; remove the file or use a new --out", st->path);
            cJSON_Delete(j);
            return A4W4_ST_BADINPUT;
        }
        if (!j)
            break; /* a torn line: drop it and everything after */
        if (first) {
            a4w4_hstatus rc = check_resumed_header(st, hdr, header, err, errlen);
            if (rc) {
                cJSON_Delete(j);
                return rc;
            }
            first = 0;
        } else {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "case");
            if (cJSON_IsString(nm))
                cJSON_AddItemToArray(done, cJSON_CreateString(nm->valuestring));
        }
        cJSON_Delete(j);
        *nl = '\n'; /* the kept prefix is written back as it was */
        *keep = (size_t)(nl + 1 - old);
        line = nl + 1;
    }
    return A4W4_ST_OK;
}

/* Rewrite the kept prefix atomically, then open it for appending. */
static a4w4_hstatus rewrite_kept(a4w4_stream *st, const char *old, size_t keep, char *err,
                                 size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", st->path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0 || write_line(fd, old, keep) || fsync(fd) || close(fd) || rename(tmp, st->path)) {
        snprintf(err, errlen, "%s: cannot rewrite for --resume (%s)", st->path, strerror(errno));
        return A4W4_ST_IO;
    }
    st->fd = open(st->path, O_WRONLY | O_APPEND);
    return A4W4_ST_OK;
}

/* Start the file anew with the header line. */
static a4w4_hstatus start_new(a4w4_stream *st, const cJSON *header, char *err, size_t errlen)
{
    st->fd = open(st->path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (st->fd < 0)
        return A4W4_ST_OK; /* reported by the caller as "cannot open" */
    cJSON *w = cJSON_CreateObject();
    cJSON_AddItemToObject(w, "a4w4check_header", cJSON_Duplicate(header, 1));
    char *s = cJSON_PrintUnformatted(w);
    cJSON_Delete(w);
    int bad = !s || write_line(st->fd, s, strlen(s)) || write_line(st->fd, "\n", 1) ||
              fsync(st->fd);
    free(s);
    if (bad) {
        snprintf(err, errlen, "%s: cannot write (%s)", st->path, strerror(errno));
        close(st->fd);
        st->fd = -1;
        return A4W4_ST_IO;
    }
    return A4W4_ST_OK;
}

a4w4_hstatus a4w4_stream_open(a4w4_stream *st, const char *dir, const cJSON *header,
                              int resume, cJSON **done, char *err, size_t errlen)
{
    snprintf(st->path, sizeof st->path, "%s/results.jsonl", dir);
    st->fd = -1;
    *done = cJSON_CreateArray();
    size_t len = 0;
    char *old = resume ? read_all(st->path, &len) : NULL;
    size_t keep = 0; /* bytes of the old file to keep: whole, parseable lines */
    a4w4_hstatus rc = old ? scan_resumed(st, old, header, *done, &keep, err, errlen)
                          : A4W4_ST_OK;
    if (!rc && keep)
        rc = rewrite_kept(st, old, keep, err, errlen);
    free(old);
    if (rc)
        return rc;
    if (!keep) {
        cJSON_Delete(*done);
        *done = cJSON_CreateArray();
        rc = start_new(st, header, err, errlen);
        if (rc)
            return rc;
    }
    if (st->fd < 0) {
        snprintf(err, errlen, "%s: cannot open (%s)", st->path, strerror(errno));
        return A4W4_ST_IO;
    }
    return A4W4_ST_OK;
}

a4w4_hstatus a4w4_stream_case(a4w4_stream *st, const char *name, const cJSON *entries,
                              char *err, size_t errlen)
{
    cJSON *w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "case", name);
    cJSON_AddItemToObject(w, "entries", cJSON_Duplicate(entries, 1));
    char *s = cJSON_PrintUnformatted(w);
    cJSON_Delete(w);
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", st->path);
        return A4W4_ST_NOMEM;
    }
    size_t n = strlen(s);
    s[n] = 0;
    char *line = malloc(n + 2);
    int bad = !line;
    if (line) {
        memcpy(line, s, n);
        line[n] = '\n';
        bad = write_line(st->fd, line, n + 1) || fsync(st->fd);
    }
    free(line);
    free(s);
    if (bad) {
        snprintf(err, errlen, "%s: cannot append (%s)", st->path, strerror(errno));
        return A4W4_ST_IO;
    }
    return A4W4_ST_OK;
}

void a4w4_stream_close(a4w4_stream *st)
{
    if (st->fd >= 0)
        close(st->fd);
    st->fd = -1;
}

cJSON *a4w4_stream_load(const char *dir, cJSON **header, char *err, size_t errlen)
{
    size_t items;
    return a4w4_stream_load_items(dir, header, &items, err, errlen);
}

cJSON *a4w4_stream_load_items(const char *dir, cJSON **header, size_t *items, char *err,
                              size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    size_t len;
    char *buf = read_all(path, &len);
    *header = NULL;
    *items = 0;
    if (!buf) {
        snprintf(err, errlen, "%s: cannot read (%s)", path, strerror(errno));
        return NULL;
    }
    cJSON *doc = NULL, *cases = NULL;
    char *line = buf, *nl;
    while ((nl = strchr(line, '\n'))) {
        *nl = 0;
        cJSON *j = cJSON_Parse(line);
        line = nl + 1;
        if (!j)
            break;
        if (!doc) {
            const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "a4w4check_header");
            if (!h) {
                cJSON_Delete(j);
                break;
            }
            doc = cJSON_Duplicate(h, 1);
            *header = cJSON_Duplicate(h, 1);
            cases = cJSON_AddArrayToObject(doc, "cases");
        } else {
            cJSON *ents = cJSON_GetObjectItemCaseSensitive(j, "entries");
            cJSON *e;
            cJSON_ArrayForEach(e, ents) cJSON_AddItemToArray(cases, cJSON_Duplicate(e, 1));
            *items += cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "case"));
        }
        cJSON_Delete(j);
    }
    free(buf);
    if (!doc)
        snprintf(err, errlen, "%s: no a4w4check_header on the first line", path);
    return doc;
}
