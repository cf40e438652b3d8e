/* stream.c — see stream.h. */
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "a4w4_reports.h"
#include "fsutil.h"
#include "jsontext.h"

unsigned long long a4w4_hash_str(const char *s, unsigned long long h)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return h;
}

unsigned long long a4w4_hash_file(const char *path, unsigned long long h, int *ok)
{
    int not_regular;
    char err[64];
    FILE *f = a4w4_fopen_regular(path, &not_regular, err, sizeof err); /* a FIFO never blocks */
    *ok = f != NULL;
    if (!f)
        return h;
    int c;
    while ((c = getc(f)) != EOF)
        h = (h ^ (unsigned char)c) * 0x100000001B3ull;
    fclose(f);
    return h;
}

/* Open path for writing (flags added to O_WRONLY | O_CLOEXEC) only when it is, or becomes,
 * a regular file: a FIFO or device in its place is refused at once (opened non-blocking, so
 * a FIFO without a reader cannot block). The descriptor, or -1 with err (*bad_input: it is
 * not a regular file). */
static int open_output(const char *path, int flags, int *bad_input, char *err, size_t errlen)
{
    *bad_input = 0;
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | flags, 0666);
    struct stat st;
    if (fd < 0 && errno == ENXIO)
        *bad_input = 1; /* a FIFO nobody reads */
    else if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
        *bad_input = 1;
    }
    if (*bad_input)
        snprintf(err, errlen, "%s: not a regular file; remove it or use another --out", path);
    else if (fd < 0)
        snprintf(err, errlen, "%s: cannot open (%s)", path, strerror(errno));
    return fd;
}

/* ---- what an item's line must hold ------------------------------------------------------ */

static const char *jstr_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The index of backend b in the header's "backends", or -1. */
static int backend_index(const cJSON *header, const char *b)
{
    int i = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(header, "backends")) {
        if (cJSON_IsString(x) && !strcmp(x->valuestring, b))
            return i;
        i++;
    }
    return -1;
}

/* 1 when a golden item's line must hold an entry of backend b: the oracle's for every bundle;
 * for a case bundle also every backend with a GEMM (a contract other than "bytes"). */
static int golden_needs(const cJSON *header, const char *b, int case_bundle)
{
    const char *c = jstr_of(cJSON_GetObjectItemCaseSensitive(header, "contracts"), b);
    return !strcmp(b, "oracle") || (case_bundle && !(c && !strcmp(c, "bytes")));
}

/* 1 when entry name en is the call-sequence entry of item nm ("nm/call-sequence"). */
static int is_sequence(const char *en, const char *nm)
{
    size_t L = strlen(nm);
    return !strncmp(en, nm, L) && !strcmp(en + L, A4W4_SEQ_SUFFIX);
}

/* Each entry of the line of item nm names nm (or is a backend's call-sequence entry of nm,
 * one per backend) and one of the header's backends (a capture's: "capture:<op>", or
 * "capture" for an empty --captures directory), none twice (a capture has one entry per
 * tensor), counted into count[] (call-sequence entries not).
 * *case_bundle: the oracle entry is of a GEMM (N > 0) and did not fail on bad input. 0, or
 * -1 with why. */
static int entries_known(const cJSON *header, const char *nm, const cJSON *entries, int capture,
                         int *count, int *case_bundle, char *why, size_t len)
{
    const cJSON *e;
    int k = 0;
    uint64_t seq_seen = 0; /* backends (below 64) with a call-sequence entry */
    cJSON_ArrayForEach(e, entries) {
        const char *en = jstr_of(e, "name"), *b = jstr_of(e, "backend");
        int i = b ? backend_index(header, b) : -1;
        if (en && b && !capture && i >= 0 && i < 64 && is_sequence(en, nm)) {
            if (seq_seen & (1ull << i)) {
                snprintf(why, len, "backend '%.80s' has two call-sequence entries", b);
                return -1;
            }
            seq_seen |= 1ull << i;
            k++;
            continue;
        }
        if (!en || strcmp(en, nm) || !b) {
            snprintf(why, len, "entry %d names case '%.80s', not the line's", k, en ? en : "?");
            return -1;
        }
        if (capture ? strcmp(b, "capture") && strncmp(b, "capture:", 8) : i < 0) {
            snprintf(why, len, "entry %d is of backend '%.80s', not one of the run's", k, b);
            return -1;
        }
        if (!capture && count[i]++) {
            snprintf(why, len, "backend '%.80s' has two entries", b);
            return -1;
        }
        if (!strcmp(b, "oracle")) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "N");
            const char *v = jstr_of(e, "verdict");
            *case_bundle = cJSON_IsNumber(n) && n->valuedouble > 0 && !(v && !strcmp(v, "fail"));
        }
        k++;
    }
    if (!k)
        snprintf(why, len, "no entries");
    return k ? 0 : -1;
}

/* 0 when the line of item nm holds the entries the run's header promises: a case one per
 * backend of the header ("oracle" included); a golden bundle the oracle's and, for a case
 * bundle, every backend's with a GEMM; a capture at least one. Else -1 with why. */
static int item_problem(const cJSON *header, const char *nm, const cJSON *entries, char *why,
                        size_t len)
{
    int golden = !strncmp(nm, "golden/", 7), capture = !strncmp(nm, "capture/", 8);
    int nb = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(header, "backends"));
    int *count = calloc((size_t)nb + 1, sizeof *count), case_bundle = 0;
    if (!count) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    int rc = -1;
    if (!cJSON_IsArray(entries))
        snprintf(why, len, "no entries array");
    else
        rc = entries_known(header, nm, entries, capture, count, &case_bundle, why, len);
    const cJSON *b;
    int i = 0, have = 0, want = 0;
    const char *missing = NULL;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(header, "backends")) {
        int need = !rc && !capture && cJSON_IsString(b) &&
                   (!golden || golden_needs(header, b->valuestring, case_bundle));
        want += need;
        have += need && count[i];
        if (need && !count[i] && !missing)
            missing = b->valuestring;
        i++;
    }
    free(count);
    if (!rc && missing) {
        snprintf(why, len, "holds %d of the %d entries the run promises (none of backend "
                 "'%.80s')", have, want, missing);
        rc = -1;
    }
    return rc;
}

/* ---- reading the lines ------------------------------------------------------------------ */

/* What the line walker does with each line: the header (first), then the items. */
typedef struct {
    const char *path;
    const cJSON *want;   /* resume: this run's header, the recorded one must match */
    cJSON *header;       /* the recorded header (a copy) */
    cJSON *names;        /* the items taken, in order */
    a4w4_stream_tally *t;
    char *err;
    size_t errlen;
} line_walk;

static int taken(const cJSON *names, const char *nm)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, names) if (!strcmp(x->valuestring, nm)) return 1;
    return 0;
}

/* Item line j (parsed): 1 when it is taken (complete and not seen before), 0 when dropped
 * (counted in w->t with the first one's reason), -1 when it contradicts itself (err set). */
static int take_item(line_walk *w, const cJSON *j, size_t lineno)
{
    const char *nm = jstr_of(j, "case");
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(j, "entries");
    char why[300] = "";
    if (a4w4_entries_contradiction(entries, jstr_of(w->header, "schema"), w->path, w->err,
                                   w->errlen))
        return -1;
    if (!nm)
        snprintf(why, sizeof why, "no case name");
    else if (taken(w->names, nm))
        snprintf(why, sizeof why, "item %.120s recorded again (an earlier line holds it)", nm);
    else
        item_problem(w->header, nm, entries, why, sizeof why);
    if (!why[0]) {
        cJSON_AddItemToArray(w->names, cJSON_CreateString(nm));
        w->t->items++;
        return 1;
    }
    if (!w->t->dropped++)
        snprintf(w->t->first_dropped, sizeof w->t->first_dropped, "%s line %zu (%.120s): %s",
                 w->path, lineno, nm ? nm : "?", why);
    return 0;
}

/* Fields of the header that must agree for a resume or a merge. */
static const char *const identity_fields[] = {"schema",         "tool_version", "matrix_hash",
                                              "backends",       "contracts",    "full",
                                              "budget_seconds", "set",          "e8m0_code0",
                                              "e8m0_code0_declared"};

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

int a4w4_header_files_differ(const cJSON *a, const cJSON *b, char *why, size_t len)
{
    const cJSON *fa = cJSON_GetObjectItemCaseSensitive(a, "backend_files");
    const cJSON *fb = cJSON_GetObjectItemCaseSensitive(b, "backend_files"), *x;
    if ((!fa && !fb) || (fa && fb && cJSON_Compare(fa, fb, 1)))
        return 0;
    for (int pass = 0; pass < 2; pass++) { /* a backend of either side, first a's then b's */
        const cJSON *side = pass ? fb : fa;
        cJSON_ArrayForEach(x, side) {
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(pass ? fa : fb, x->string);
            const cJSON *ra = pass ? y : x, *rb = pass ? x : y;
            if (y && cJSON_Compare(x, y, 1))
                continue;
            snprintf(why, len, "the files of %.200s differ (FNV-1a 64 %s, then %s): another "
                     "build of its library, or other outputs, under the same name", x->string,
                     cJSON_IsString(ra) ? ra->valuestring : "not recorded",
                     cJSON_IsString(rb) ? rb->valuestring : "not recorded");
            return 1;
        }
    }
    snprintf(why, len, "'backend_files' differs");
    return 1;
}

/* The recorded header of a resumed file against this run's: every identity field and the
 * shard must agree. */
static a4w4_hstatus check_resumed_header(const char *path, const cJSON *h,
                                         const cJSON *header, char *err, size_t errlen)
{
    for (size_t i = 0; h && i < sizeof identity_fields / sizeof identity_fields[0]; i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(h, identity_fields[i]);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(header, identity_fields[i]);
        if (!a || !b || !cJSON_Compare(a, b, 1)) {
            snprintf(err, errlen, "%s: --resume refused: the recorded run differs in '%s' "
                     "(another matrix, seed, backend set, contract, E8M0 code-0 reading or "
                     "version); remove it or use a new --out",
                     path, identity_fields[i]);
            return A4W4_ST_BADINPUT;
        }
    }
    char why[400];
    if (h && a4w4_header_files_differ(h, header, why, sizeof why)) {
        snprintf(err, errlen, "%s: --resume refused: %s; remove it or use a new --out", path,
                 why);
        return A4W4_ST_BADINPUT;
    }
    const cJSON *ha = cJSON_GetObjectItemCaseSensitive(h, "shard");
    const cJSON *hb = cJSON_GetObjectItemCaseSensitive(header, "shard");
    if (!h || !ha || !hb || !cJSON_Compare(ha, hb, 1)) {
        snprintf(err, errlen, "%s: --resume refused: recorded shard %s, this run %s",
                 path, cJSON_IsString(ha) ? ha->valuestring : "?",
                 cJSON_IsString(hb) ? hb->valuestring : "?");
        return A4W4_ST_BADINPUT;
    }
    return A4W4_ST_OK;
}


/* Walk buf (results.jsonl's text): its first line must be the header (kept in w->header; for a
 * resume it must match w->want), every later whole line an item through take_item; a torn
 * or unparseable line ends the walk (a kill mid-write). Taken lines are copied to kept (when
 * not NULL: room for strlen(buf) + 1 bytes; *keptlen its length) and their entries appended
 * to cases (when not NULL). A4W4_ST_OK (w->header NULL when buf holds no whole line), or
 * A4W4_ST_BADINPUT with w->err: the first line is no header, the header does not match, an
 * entry contradicts itself. */
static a4w4_hstatus walk_lines(line_walk *w, char *buf, char *kept, size_t *keptlen, cJSON *cases)
{
    size_t lineno = 0;
    char *line = buf, *nl;
    while ((nl = strchr(line, '\n'))) {
        *nl = 0;
        lineno++;
        cJSON *j = cJSON_Parse(line);
        const cJSON *h = j ? cJSON_GetObjectItemCaseSensitive(j, "a4w4check_header") : NULL;
        int take = 1;
        if (!w->header && !h) { /* not ours: never overwrite what we cannot read */
            snprintf(w->err, w->errlen, "%s: the first line is not an a4w4check results header%s",
                     w->path, w->want ? "; --resume refused: remove the file or use a new --out"
                                      : "");
            cJSON_Delete(j);
            return A4W4_ST_BADINPUT;
        }
        if (!j)
            break; /* a torn line: it and everything after it are dropped */
        if (!w->header) {
            w->header = cJSON_Duplicate(h, 1);
            if (w->want && check_resumed_header(w->path, h, w->want, w->err, w->errlen)) {
                cJSON_Delete(j);
                return A4W4_ST_BADINPUT;
            }
        } else if ((take = take_item(w, j, lineno)) < 0) {
            cJSON_Delete(j);
            return A4W4_ST_BADINPUT;
        } else if (take && cases) {
            const cJSON *e;
            cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "entries"))
                cJSON_AddItemToArray(cases, cJSON_Duplicate(e, 1));
        }
        cJSON_Delete(j);
        *nl = '\n';
        if (take && kept) {
            memcpy(kept + *keptlen, line, (size_t)(nl + 1 - line));
            *keptlen += (size_t)(nl + 1 - line);
        }
        line = nl + 1;
    }
    return A4W4_ST_OK;
}

/* Replace the file by the kept lines (atomically: fsutil.h), then open it for appending. */
static a4w4_hstatus rewrite_kept(a4w4_stream *st, const char *kept, size_t keep, char *err,
                                 size_t errlen)
{
    int bad_input;
    char why[1024];
    if (a4w4_write_atomic(st->path, kept, keep, why, sizeof why) != A4W4_ST_OK) {
        snprintf(err, errlen, "%s; cannot rewrite for --resume", why);
        return A4W4_ST_IO;
    }
    st->fd = open_output(st->path, O_APPEND, &bad_input, err, errlen);
    return st->fd < 0 ? A4W4_ST_IO : A4W4_ST_OK;
}

/* Start the file anew with the header line. */
static a4w4_hstatus start_new(a4w4_stream *st, const cJSON *header, char *err, size_t errlen)
{
    int bad_input;
    st->fd = open_output(st->path, O_CREAT | O_TRUNC, &bad_input, err, errlen);
    if (st->fd < 0)
        return bad_input ? A4W4_ST_BADINPUT : A4W4_ST_IO;
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

/* The lines of the old file worth keeping for a resume: the matching header and every
 * complete item, into *kept (malloc'ed; *keep bytes, 0 when there is nothing to keep), their
 * names into done. */
static a4w4_hstatus scan_resumed(a4w4_stream *st, const cJSON *header, cJSON *done,
                                 a4w4_stream_tally *t, char **kept, size_t *keep, char *err,
                                 size_t errlen)
{
    size_t len = 0;
    int missing = 0;
    char *old = a4w4_read_regular(st->path, 0, &len, &missing, err, errlen);
    if (!old)
        return missing ? A4W4_ST_OK : A4W4_ST_BADINPUT;
    line_walk w = {st->path, header, NULL, done, t, err, errlen};
    *kept = malloc(len + 1);
    a4w4_hstatus rc = *kept ? walk_lines(&w, old, *kept, keep, NULL) : A4W4_ST_NOMEM;
    if (rc == A4W4_ST_NOMEM)
        snprintf(err, errlen, "%s: out of memory", st->path);
    if (rc || !w.header) /* no whole line: nothing recorded, start anew */
        *keep = 0;
    cJSON_Delete(w.header);
    free(old);
    return rc;
}

a4w4_hstatus a4w4_stream_open(a4w4_stream *st, const char *dir, const cJSON *header,
                              int resume, cJSON **done, a4w4_stream_tally *t, char *err,
                              size_t errlen)
{
    a4w4_stream_tally scratch;
    t = t ? t : &scratch;
    memset(t, 0, sizeof *t);
    snprintf(st->path, sizeof st->path, "%s/results.jsonl", dir);
    st->fd = -1;
    st->last_sync = a4w4_now(); /* the header's fsync */
    st->dirty = 0;
    st->syncs = 0;
    *done = cJSON_CreateArray();
    char *kept = NULL;
    size_t keep = 0; /* bytes to keep: the header and whole, complete item lines */
    a4w4_hstatus rc = resume ? scan_resumed(st, header, *done, t, &kept, &keep, err, errlen)
                             : A4W4_ST_OK;
    if (!rc && keep)
        rc = rewrite_kept(st, kept, keep, err, errlen);
    free(kept);
    if (!rc && !keep) {
        cJSON_Delete(*done);
        *done = cJSON_CreateArray();
        memset(t, 0, sizeof *t);
        rc = start_new(st, header, err, errlen);
    }
    if (!rc)
        a4w4_fd_keep_from_children(st->fd);
    return rc;
}

a4w4_hstatus a4w4_stream_case(a4w4_stream *st, const char *name, const cJSON *entries,
                              char *err, size_t errlen)
{
    cJSON *w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "case", name);
    cJSON_AddItemToObject(w, "entries", cJSON_Duplicate(entries, 1));
    a4w4_json_text_guard(w); /* as the header (run_plan.c): a backend's raw name matches it */
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
        bad = write_line(st->fd, line, n + 1);
        st->dirty = 1;
        const double now = a4w4_now();
        if (!bad && now - st->last_sync >= A4W4_STREAM_SYNC_S) {
            bad = fsync(st->fd);
            st->last_sync = now;
            st->dirty = 0;
            st->syncs++;
        }
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
    if (st->fd >= 0 && st->dirty && fsync(st->fd) == 0)
        st->syncs++;
    st->dirty = 0;
    if (st->fd >= 0)
        a4w4_fd_close_kept(st->fd);
    st->fd = -1;
}

cJSON *a4w4_stream_load(const char *dir, cJSON **header, char *err, size_t errlen)
{
    a4w4_stream_tally t;
    return a4w4_stream_load_items(dir, header, &t, err, errlen);
}

cJSON *a4w4_stream_load_items(const char *dir, cJSON **header, a4w4_stream_tally *t, char *err,
                              size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    memset(t, 0, sizeof *t);
    *header = NULL;
    size_t len;
    int missing;
    char *buf = a4w4_read_regular(path, 0, &len, &missing, err, errlen);
    if (!buf)
        return NULL;
    cJSON *names = cJSON_CreateArray(), *cases = cJSON_CreateArray(), *doc = NULL;
    line_walk w = {path, NULL, NULL, names, t, err, errlen};
    a4w4_hstatus rc = names && cases ? walk_lines(&w, buf, NULL, NULL, cases) : A4W4_ST_NOMEM;
    free(buf);
    cJSON_Delete(names);
    if (rc == A4W4_ST_OK && !w.header)
        snprintf(err, errlen, "%s: no a4w4check_header on the first line", path);
    else if (rc == A4W4_ST_NOMEM)
        snprintf(err, errlen, "%s: out of memory", path);
    if (rc == A4W4_ST_OK && w.header && (doc = cJSON_Duplicate(w.header, 1))) {
        cJSON_AddItemToObject(doc, "cases", cases);
        *header = w.header;
        return doc;
    }
    cJSON_Delete(cases);
    cJSON_Delete(w.header);
    return NULL;
}
