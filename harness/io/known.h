/* known.h — the known-failures ledger (cases/known-failures.csv): one entry per known bug of a
 * system under test, so that a failure the field already knows about is listed and counted
 * as XFAIL instead of turning every nightly red, an entry whose failure is gone shows as XPASS
 * ("fixed upstream? remove the entry"), and an entry that matches nothing for 30 days is
 * flagged stale.
 *
 * The file: CSV (libcsv, through ref/a4w4_csv.h: quoted fields may hold commas), '#' lines
 * are comments, the header names these columns (any order):
 *   id            unique word ([A-Za-z0-9._-])
 *   backend       fnmatch(3) pattern over an entry's backend ("plugin:*aiter_asm*")
 *   case          fnmatch pattern over an entry's case name ("*" any), or "regime=PATTERN"
 *                 over its regime ("regime=wide", "regime=normal:*"); a pattern matching case
 *                 A also matches A's call-sequence entry "A/call-sequence" (io/stream.h),
 *                 whose shape is that of the sequence's first failing call
 *   shape         "" (any) or terms joined by '&': X OP V or X%D OP V, X one of M, N, K, OP
 *                 one of == != < <= > >=, V and D decimal ("K%256!=0 & M>64 & M<=256")
 *   upstream      the bug's public record (a URL), required
 *   since, until  the upstream versions it lives in: since <= V < until by dotted numeric
 *                 comparison with the run's --upstream-version V (results.json
 *                 "upstream_version"); either may be empty (open); a run that states no
 *                 version gets every entry (the bug is assumed present)
 *   symptom       required: text the failing entry's signature must contain
 *                 (engine/signature.h), or "class=C" its signature_class C ("values",
 *                 "nan", ...), so a different failure on the same shape stays red; an entry
 *                 with unwritten outputs shows only "unwritten", an aborted one only
 *                 "crashed" or "timed-out": missing data is never XFAIL unless the entry
 *                 says exactly that. backend "*" with case "*" is refused (every entry)
 *   last_matched  YYYY-MM-DD: the last day a run matched the entry (XFAIL or XPASS); the
 *                 nightly rewrites it (a4w4check known --touch); required, the day an entry is
 *                 added counts as a match
 * The first entry (in file order) whose backend, case, shape and versions match a results
 * entry (the oracle's excepted) applies to it. Stale: the entry's backend pattern matches a
 * backend of the run, nothing of the run matched it, and its last_matched lies more than
 * A4W4_KNOWN_STALE_DAYS days before the run's date. Nothing here prints. */
#ifndef A4W4_KNOWN_H
#define A4W4_KNOWN_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "status.h"

#define A4W4_KNOWN_STALE_DAYS 30
#define A4W4_KNOWN_MAX_TERMS 8
/* A ledger entry matching more than this share of a run's entries (runs of at least
 * A4W4_KNOWN_SHARE_MIN entries, the oracle's left out) is refused: docs/forensics.md says
 * why. */
#define A4W4_KNOWN_MAX_SHARE 0.5
#define A4W4_KNOWN_SHARE_MIN 8

typedef struct {
    int var;            /* 0 M, 1 N, 2 K */
    unsigned long long mod; /* 0: none (X OP V), else X % mod OP V */
    int op;             /* 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >= */
    unsigned long long val;
} a4w4_known_term;

typedef struct {
    char id[64], backend[256], cases[256], shape[160], upstream[256], since[40], until[40];
    char symptom[200], last_matched[16];
    int line;
    a4w4_known_term term[A4W4_KNOWN_MAX_TERMS];
    int nterm;
} a4w4_known_entry;

typedef struct {
    char path[4096];
    a4w4_known_entry *e;
    size_t n;
} a4w4_known_ledger;

/* Read and validate the ledger at path into l (overwritten). A4W4_ST_OK; A4W4_ST_BADINPUT
 * with one line "path:line:col: rule" (a missing column, an empty id, backend, case or
 * upstream, a duplicate id, a malformed shape term, a last_matched that is no YYYY-MM-DD
 * date), A4W4_ST_IO when unreadable, A4W4_ST_NOMEM; l is empty on error. */
a4w4_hstatus a4w4_known_load(const char *path, a4w4_known_ledger *l, char *err, size_t errlen);
void a4w4_known_free(a4w4_known_ledger *l);

/* Parse a shape predicate into e's terms. 0, or -1 with the rule in err. */
int a4w4_known_parse_shape(const char *text, a4w4_known_entry *e, char *err, size_t errlen);

/* 1 when entry e applies to a results entry of backend, case name, regime and shape M, N, K
 * under upstream version ver (NULL or "": unknown). */
int a4w4_known_matches(const a4w4_known_entry *e, const char *backend, const char *name,
                       const char *regime, size_t M, size_t N, size_t K, const char *ver);

/* Days from date a to date b ("YYYY-MM-DD", the first 10 bytes of an ISO date-time count);
 * INT_MIN when either is malformed. */
int a4w4_known_days(const char *a, const char *b);

/* 0 when no entry of l matches more than A4W4_KNOWN_MAX_SHARE of doc's entries (oracle
 * entries left out; checked when there are at least A4W4_KNOWN_SHARE_MIN of them); else -1 with one line in err naming the entry, its line and
 * the counts. */
int a4w4_known_check_share(const cJSON *doc, const a4w4_known_ledger *l, char *err,
                           size_t errlen);

/* Annotate results document doc with ledger l (may be empty): every entry an entry of l
 * applies to gets "known_failure": {"id", "upstream", "status"} with status "xfail" (it fails
 * with the symptom), "symptom-differs" (it fails otherwise, or the entry's text symptom
 * shows in failures of two signature classes in doc: still a failure) or "xpass" (it
 * passes: fixed upstream?); n/a and skip entries get nothing. The doc gets "known_failures":
 * {"ledger": path, "date": the day judged, "entries": [{id, backend, case, shape, upstream,
 * since, until, symptom, last_matched, xfail, xpass, symptom_differs, symptom_too_broad,
 * stale}]} for the entries whose backend pattern matches a backend of the doc. Earlier annotations are
 * replaced. date: the run's day (YYYY-MM-DD...; NULL: the doc's environment date). */
void a4w4_known_apply(cJSON *doc, const a4w4_known_ledger *l, const char *date);

/* Write the ledger file, with last_matched = date on every entry that doc's
 * "known_failures" records as matched (xfail, xpass or symptom-differs), to out (NULL: over
 * the ledger itself); *touched gets their count. Only the last_matched field of those lines
 * changes (comments and quoting kept); an entry spanning several lines is refused. Written
 * atomically (also when nothing changed, so out always holds the current ledger).
 * A4W4_ST_OK, A4W4_ST_BADINPUT (err), A4W4_ST_IO, A4W4_ST_NOMEM. */
a4w4_hstatus a4w4_known_touch(const a4w4_known_ledger *l, const cJSON *doc, const char *date,
                              const char *out, size_t *touched, char *err, size_t errlen);

/* 1 when results entry e is a known failure (its "known_failure" status "xfail"). */
int a4w4_known_is_xfail(const cJSON *e);

#endif
