/* report_common.h — internal helpers shared by the renderers in reports/: a growable string
 * buffer with escaping for Markdown, HTML and XML, typed field access on results entries,
 * verdict tallies per (backend, contract), case groups, and bf16 ULP distance from hex.
 * Not installed; reports/a4w4_reports.h is the public interface. */
#ifndef A4W4_REPORT_COMMON_H
#define A4W4_REPORT_COMMON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "a4w4_reports.h"

/* ---- string buffer -------------------------------------------------------------------- */

typedef struct {
    char *s;
    size_t n, cap;
    int oom; /* an allocation failed: rb_take returns NULL */
} rbuf;

void rb_printf(rbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rb_puts(rbuf *b, const char *s);
/* Escape for HTML text and attribute values (& < > " '). */
void rb_html(rbuf *b, const char *s);
/* Escape for XML attribute values and text; control characters other than tab/newline are
 * dropped (XML 1.0 forbids them). */
void rb_xml(rbuf *b, const char *s);
/* Escape for Markdown text and table cells: | as \|, newlines as spaces, < as an HTML entity
 * (so text never opens a tag; a > inside a line is plain text). Underscores are left alone:
 * case names like m1_n192_k1024 are intraword, which GitHub Markdown does not read as
 * emphasis. */
void rb_md(rbuf *b, const char *s);
/* The string (caller frees), or NULL if any allocation failed (the buffer is freed). */
char *rb_take(rbuf *b);

/* ---- one table, two formats ------------------------------------------------------------ */

/* The pieces a section with a table is written with, in Markdown (rb_markdown) or HTML
 * (rb_htmlmarkup), so that one function renders a table in both: a row is `row`, the case
 * name, `name_end`, then cells each opened by `cell` (text) or `num` (a number, right-aligned),
 * then `row_end`. */
typedef struct {
    int html;                          /* 1: HTML; 0: Markdown */
    void (*esc)(rbuf *, const char *); /* rb_html or rb_md */
    const char *row, *name_end, *cell, *num, *row_end;
    const char *arrow;                 /* " → " between two backends */
    const char *code, *code_end;       /* around a name inside text */
    const char *item, *item_end;       /* one item of a list */
    const char *para, *para_end;       /* around a paragraph */
    const char *table_end;             /* after the last row */
} rb_markup;

extern const rb_markup rb_markdown, rb_htmlmarkup;

/* A section heading: "## title" then a blank line, or <h2 id="id">title</h2>. */
void rb_heading(rbuf *b, const rb_markup *m, const char *id, const char *title);
/* A table's head over ncols columns named cols (written as given, not escaped); bit i of
 * numeric set: column i holds numbers (right-aligned). HTML opens a sortable table. */
void rb_table_head(rbuf *b, const rb_markup *m, const char *const *cols, size_t ncols,
                   unsigned numeric);

/* ---- quoting ------------------------------------------------------------------------- */

/* Copy s into buf[len] byte for byte with every control byte (0x01..0x1F, 0x7F) shown as '?',
 * NUL-terminated; cut to len - 1 bytes ending in "..." when longer (len >= 4). s NULL shows
 * "(null)". Returns buf. Keeps an error message that quotes document text one line; the
 * same rule as ref/a4w4_quote.h's a4w4_quote (reports/ includes only its own headers). */
const char *quote_text(const char *s, char *buf, size_t len);

/* ---- entry fields --------------------------------------------------------------------- */

const char *jstr(const cJSON *o, const char *k);         /* "" when absent or not a string */
double jnum(const cJSON *o, const char *k, double dflt); /* dflt when absent */
/* A number field read as an int: jnum truncated toward zero like an (int) cast, clamped to
 * INT_MIN..INT_MAX (a schema-valid document may hold 1e308 where no maximum applies); dflt
 * when absent. */
int jint(const cJSON *o, const char *k, int dflt);
int jtrue(const cJSON *o, const char *k);
int jhas(const cJSON *o, const char *k);

/* Verdict index: 0 pass, 1 fail, 2 n/a, 3 skip (anything else counts as skip), 5 ambiguous
 * (VERDICT_AMBIGUOUS). */
int verdict_index(const char *v);
/* An entry's verdict index as the counts show it: verdict_index of its verdict, but 4
 * ("xfail") for a failing entry the known-failures ledger expects ("known_failure" status
 * "xfail", recorded by run, merge or compare: never decided here). */
#define VERDICT_XFAIL 4
/* 5: "ambiguous" (contracts §1: the outputs match one reading of E8M0 code 0 only): like a
 * skip, a comparison not judged, never a pass; counted apart so every view names it. */
#define VERDICT_AMBIGUOUS 5
#define NVERDICTS 6
int entry_verdict_index(const cJSON *e);
extern const char *const verdict_names[NVERDICTS]; /* "pass", "fail", "n/a", "skip", "xfail",
                                                      "ambiguous" */
/* Severity for aggregating cells: fail 3 > pass 2 = xfail > n/a 1 > skip 0 = ambiguous. */
int verdict_severity(int idx);

/* 1 when the contract is a bounded one ("bounded..."), never reported as bit-exact. */
int contract_bounded(const char *contract);

/* ---- tallies per (backend, contract), in order of first appearance --------------------- */

typedef struct {
    const char *backend, *contract; /* borrowed from the document */
    int n[NVERDICTS];               /* by entry_verdict_index */
    int max_ulp;                    /* largest max_ulp over its entries (-1 if none) */
    int nan_ulp;                    /* entries with a NaN-against-a-number mismatch (their
                                       max_ulp is -1: no distance exists) */
    double time_ms;                 /* sum of time_ms */
    int timed;                      /* entries with time_ms > 0 */
} tally;

/* The max-ULP cell of a tally or an entry: the distance, "NaN vs number" when nan (a
 * mismatch with no ULP distance; with a nonzero distance too, both), dash when neither. */
void ulp_cell(rbuf *b, int max_ulp, int nan, const char *dash);

/* An entry's max ULP as ulp_cell takes it: *nan set when max_ulp is -1 with mismatches. */
int entry_max_ulp(const cJSON *e, int *nan);

/* Tallies of doc's cases (malloc'ed, *n set); NULL when there are none or out of memory. */
tally *tally_build(const cJSON *cases, size_t *n);
/* Overall counts by verdict_index over every entry. */
void verdict_counts(const cJSON *cases, int n[NVERDICTS]);
/* Number of distinct case names. */
size_t distinct_cases(const cJSON *cases);

/* 1 when name is a call-sequence entry's, "<case>/call-sequence" (docs/backends.md "Call
 * sequences"): recorded in its case's item, no case of its own. */
int is_call_sequence(const char *name);

/* ---- groups --------------------------------------------------------------------------- */

/* The group an entry belongs to: "golden bundles" for regime golden; "layer N=.. K=.." for
 * cases whose first tag is "real"; else "tag: <first tag>"; "untagged" without tags. */
void group_key(const cJSON *e, char *buf, size_t len);

typedef struct {
    char key[96];
    const cJSON **e; /* its entries, in document order */
    size_t n, cap;
    int n_by_verdict[NVERDICTS];
} group;

/* Groups of cases in order of first appearance (malloc'ed); free with groups_free. */
group *groups_build(const cJSON *cases, size_t *ngroups);
void groups_free(group *g, size_t n);

/* ---- numbers -------------------------------------------------------------------------- */

/* bf16 ULP distance between two "0xHHHH" strings; -1 when either is not a 4-digit hex value
 * or is NaN. */
long bf16_hex_ulp(const char *a, const char *b);

/* Environment rows of a header: label/value pairs (up to max), values borrowed or written
 * into scratch. Returns the number of rows. */
size_t environment_rows(const cJSON *doc, const char *labels[], const char *values[], size_t max,
                        char scratch[][160]);

/* A failing entry's "tolerance" object (the peers' tolerance criteria, docs/criteria.md) as
 * one sentence run: " Tolerance criteria on its N outputs: TEXT; TEXT; ... A tolerance test
 * would have shipped this." (the last sentence only where one passes), each text escaped by
 * esc (rb_md, rb_html). Renders what the document says; recomputes nothing. Returns 0 and
 * writes nothing when the entry has none. */
int tolerance_text(rbuf *b, const cJSON *e, void (*esc)(rbuf *, const char *));

#endif
