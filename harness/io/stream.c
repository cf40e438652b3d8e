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
static const char *const identity_fields[] = {"schema", "tool_version", "matrix_hash",
                                              "backends", "full", "set"};

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

int a4w4_stream_open(a4w4_stream *st, const char *dir, const cJSON *header, int resume,
                     cJSON **done, char *err, size_t errlen)
{
    snprintf(st->path, sizeof st->path, "%s/results.jsonl", dir);
    st->fd = -1;
    *done = cJSON_CreateArray();
    size_t len = 0;
    char *old = resume ? read_all(st->path, &len) : NULL;
    size_t keep = 0; /* bytes of the old file to keep: whole, parseable lines */
    if (old) {
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
                free(old);
                return 2;
            }
            if (!j)
                break; /* a torn line: drop it and everything after */
            if (first) {
                const cJSON *h = hdr;
                for (size_t i = 0; h && i < sizeof identity_fields / sizeof identity_fields[0]; i++) {
                    const cJSON *a = cJSON_GetObjectItemCaseSensitive(h, identity_fields[i]);
                    const cJSON *b = cJSON_GetObjectItemCaseSensitive(header, identity_fields[i]);
                    if (!a || !b || !cJSON_Compare(a, b, 1)) {
                        snprintf(err, errlen, "%s: --resume refused: the recorded run differs in '%s' "
                                 "(another matrix, seed, backend set or version); remove it or use a new --out",
                                 st->path, identity_fields[i]);
                        cJSON_Delete(j);
                        free(old);
                        return 2;
                    }
                }
                const cJSON *ha = cJSON_GetObjectItemCaseSensitive(h, "shard");
                const cJSON *hb = cJSON_GetObjectItemCaseSensitive(header, "shard");
                if (!h || !ha || !hb || !cJSON_Compare(ha, hb, 1)) {
                    snprintf(err, errlen, "%s: --resume refused: recorded shard %s, this run %s",
                             st->path, cJSON_IsString(ha) ? ha->valuestring : "?",
                             cJSON_IsString(hb) ? hb->valuestring : "?");
                    cJSON_Delete(j);
                    free(old);
                    return 2;
                }
                first = 0;
            } else {
                const cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "case");
                if (cJSON_IsString(nm))
                    cJSON_AddItemToArray(*done, cJSON_CreateString(nm->valuestring));
            }
            cJSON_Delete(j);
            *nl = '\n'; /* the kept prefix is written back as it was */
            keep = (size_t)(nl + 1 - old);
            line = nl + 1;
        }
    }
    if (keep) { /* rewrite the kept prefix atomically, then append to it */
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp", st->path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0 || write_line(fd, old, keep) || fsync(fd) || close(fd) || rename(tmp, st->path)) {
            snprintf(err, errlen, "%s: cannot rewrite for --resume (%s)", st->path, strerror(errno));
            free(old);
            return 4;
        }
        free(old);
        st->fd = open(st->path, O_WRONLY | O_APPEND);
    } else {
        free(old);
        cJSON_Delete(*done);
        *done = cJSON_CreateArray();
        st->fd = open(st->path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (st->fd >= 0) {
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
                return 4;
            }
        }
    }
    if (st->fd < 0) {
        snprintf(err, errlen, "%s: cannot open (%s)", st->path, strerror(errno));
        return 4;
    }
    return 0;
}

int a4w4_stream_case(a4w4_stream *st, const char *name, const cJSON *entries, char *err,
                     size_t errlen)
{
    cJSON *w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "case", name);
    cJSON_AddItemToObject(w, "entries", cJSON_Duplicate(entries, 1));
    char *s = cJSON_PrintUnformatted(w);
    cJSON_Delete(w);
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", st->path);
        return 4;
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
        return 4;
    }
    return 0;
}

void a4w4_stream_close(a4w4_stream *st)
{
    if (st->fd >= 0)
        close(st->fd);
    st->fd = -1;
}

cJSON *a4w4_stream_load(const char *dir, cJSON **header, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    size_t len;
    char *buf = read_all(path, &len);
    *header = NULL;
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
        }
        cJSON_Delete(j);
    }
    free(buf);
    if (!doc)
        snprintf(err, errlen, "%s: no a4w4check_header on the first line", path);
    return doc;
}
