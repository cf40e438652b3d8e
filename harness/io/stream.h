/* stream.h — crash-safe results: results.jsonl in the output directory.
 *
 * Line 1 is the run's identity {"a4w4check_header": {...}} (schema, tool version, set, cases
 * file, matrix_hash = FNV-1a of the case file bytes and the bundles' names and bytes, shard "i/n",
 * backends, full). Every later line is one finished case {"case": NAME, "entries": [...]},
 * written with one write(), so a kill loses at most the case in flight, and fsync'd at most
 * once a second (a4w4_stream below), so a machine crash loses at most that second's cases (a
 * torn last line is ignored when read back). results.json and summary.md are built from it
 * and written atomically. */
#ifndef A4W4_STREAM_H
#define A4W4_STREAM_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "status.h"

#define A4W4_RESULTS_SCHEMA "a4w4check-results/2"
/* A4W4_TOOL_VERSION ("X.Y.Z") is defined by the build (CMakeLists.txt) from its one source,
 * python/a4w4check/__init__.py's __version__. */
#ifndef A4W4_TOOL_VERSION
#error "A4W4_TOOL_VERSION is defined by CMakeLists.txt (from python/a4w4check/__init__.py)"
#endif

/* The results stream: each item's line is written in one write (a process killed at any
 * point loses at most the item in flight); the file is fsync'd at most once every
 * A4W4_STREAM_SYNC_S seconds of items and at a4w4_stream_close (an fsync per item cost more
 * than a small case's checks; a machine crash loses at most that second's items, which
 * --resume runs again). */
typedef struct {
    int fd;
    char path[4096];
    double last_sync; /* a4w4_now() of the last fsync (0: none yet) */
    int dirty;        /* lines written since it */
    unsigned long syncs; /* fsyncs of item lines so far */
} a4w4_stream;

#define A4W4_STREAM_SYNC_S 1.0

/* What reading results.jsonl found beyond its header. An item counts once, and only when its
 * line holds every entry the header promises (one per backend of "backends" for a case; the
 * oracle's and every GEMM backend's for a golden case bundle; at least one for a capture),
 * each naming the item, none foreign or repeated. A line that breaks this, or names an item
 * an earlier line holds, is dropped: not counted, its item not done (a resume runs it again). */
typedef struct {
    size_t items;            /* distinct items recorded complete */
    size_t dropped;          /* lines dropped */
    char first_dropped[512]; /* "<path> line 5 (case): why" for the first one, "" when none */
} a4w4_stream_tally;

/* Whether results headers a (recorded first) and b judged other builds of a plugin library:
 * their "backend_files" (backend name -> FNV-1a 64 of the library's bytes, run_plan.c) differ.
 * Both without the field (no plugin, or a document older than it): 0. Else 1 with why (len
 * bytes) naming the first backend that differs and both hashes ("not recorded" for a side
 * without it). --resume and merge refuse such headers (docs/cli/run.md, "Results, resume,
 * shards"). */
int a4w4_header_files_differ(const cJSON *a, const cJSON *b, char *why, size_t len);

/* Open DIR/results.jsonl (a regular file only: a FIFO or device in its place is refused at
 * once). resume = 0: start it anew with header. resume = 1: keep the header and the complete
 * items of an existing file whose header matches (same matrix_hash, shard, backends,
 * version, full), returning their names in *done (a cJSON array; caller frees), drop the
 * rest (incomplete or repeated lines: *t says how many, t may be NULL), and append. The
 * descriptor is kept from forked children (fsutil.h a4w4_fd_keep_from_children). Returns
 * A4W4_ST_OK; A4W4_ST_BADINPUT when the existing file is not ours, not a regular file, its
 * header does not match or an entry contradicts its own verdict (err says which: the file is
 * left untouched); A4W4_ST_IO on I/O errors (err set). */
a4w4_hstatus a4w4_stream_open(a4w4_stream *st, const char *dir, const cJSON *header,
                              int resume, cJSON **done, a4w4_stream_tally *t, char *err,
                              size_t errlen);

/* The name of a backend's call-sequence entry (engine/statecheck.h), recorded in the line of
 * the sequence's first case NAME as "NAME" A4W4_SEQ_SUFFIX: one per backend at most, beside
 * that backend's entry for NAME. */
#define A4W4_SEQ_SUFFIX "/call-sequence"

/* Append one finished case and fsync. A4W4_ST_OK, or A4W4_ST_IO / A4W4_ST_NOMEM (err set). */
a4w4_hstatus a4w4_stream_case(a4w4_stream *st, const char *name, const cJSON *entries,
                              char *err, size_t errlen);
void a4w4_stream_close(a4w4_stream *st);

/* Read DIR/results.jsonl (a regular file only) into a results document: the header's fields
 * plus "cases", the entries of every complete item line in file order, each item once (see
 * a4w4_stream_tally). *header gets a copy of the header. NULL with err set when the file is
 * missing, not a regular file, its header unreadable, or an entry contradicts its own
 * verdict (reports/a4w4_reports.h a4w4_entries_contradiction). */
cJSON *a4w4_stream_load(const char *dir, cJSON **header, char *err, size_t errlen);

/* a4w4_stream_load, and *t: the distinct complete items read (a torn last line does not
 * count) and the lines dropped. */
cJSON *a4w4_stream_load_items(const char *dir, cJSON **header, a4w4_stream_tally *t, char *err,
                              size_t errlen);

/* FNV-1a 64 of a file's bytes folded into h (returns h unchanged if unreadable: *ok = 0). */
unsigned long long a4w4_hash_file(const char *path, unsigned long long h, int *ok);
unsigned long long a4w4_hash_str(const char *s, unsigned long long h);

#endif
