/* a4w4_reports.h — parity reports rendered from a results document (results.json), the one
 * source of truth: a Markdown summary, a self-contained HTML report with the hazard map, JUnit
 * XML, and the comparison of two runs.
 *
 * The results document is versioned (schema "a4w4check-results/2", reports/schema/
 * results.schema.json, embedded in this library at build time; version 1 documents, written
 * before tree contracts, are still read). Every renderer takes a
 * document that a4w4_results_validate accepted and returns a malloc'ed NUL-terminated string
 * (NULL only when out of memory); nothing here prints or writes files: the CLI (harness/
 * cmd_report.c, cmd_compare.c) does. Depends on cJSON only: the hazard map's dispatch picks
 * are the entries' route, policy and hazard fields (written by the runner), never recomputed. */
#ifndef A4W4_REPORTS_H
#define A4W4_REPORTS_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* The schema version this library reads and the harness writes (harness/io/stream.h's
 * A4W4_RESULTS_SCHEMA must equal it; tests/reports/test_reports.c holds them together), and the
 * older one it still reads. Version 2: an entry's and the header's contract may be a tree
 * contract's canonical text (contracts §4.2), and "contract_overrides" records `run --contract`. */
#define A4W4_REPORT_SCHEMA "a4w4check-results/2"
#define A4W4_REPORT_SCHEMA_V1 "a4w4check-results/1"

/* ---- reading and validation ----------------------------------------------------------- */

/* The JSON Schema text of results.json (reports/schema/results.schema.json as built in). */
const char *a4w4_results_schema_text(void);

/* Validate doc against the results schema. name (the file, for messages) may be NULL.
 * Returns 0, or -1 with one line in err: "NAME: /cases/3/verdict (case e_k32 on cpu-asm):
 * 'maybe' is not one of ... (schema a4w4check-results/2)". A document of another schema
 * version than these two is refused naming the version found and the one supported. A
 * version 1 document is validated against the frozen version 1 schema
 * (reports/schema/results.v1.schema.json), and one holding what only version 2 defines (a
 * header, counts or entry field the version 1 schema lacks, a tree contract or rule set) is
 * refused: "NAME: /cases/3/judged_bit_exact: only a4w4check-results/2 defines it, ...". */
int a4w4_results_validate(const cJSON *doc, const char *name, char *err, size_t errlen);

/* Parse text (len bytes, need not be NUL-terminated) as a results document, validate it and
 * check it for contradictions (a4w4_results_contradiction). Returns the document (caller
 * frees with cJSON_Delete), or NULL with one line in err naming name and what is wrong
 * (malformed JSON with the byte offset, the schema rule, or the contradiction). The harness
 * reads a file through harness/io/results.h's a4w4_results_read, which calls this. */
cJSON *a4w4_results_parse(const char *text, size_t len, const char *name, char *err, size_t errlen);

/* The first entry of cases (an array of results entries of schema version schema, NULL: the
 * current one) whose own fields contradict its verdict: "pass" with mismatches > 0,
 * unwritten > 0, an "aborted" reason, "refused", checked_outputs 0 or absent, or "ambiguous"
 * (contracts §1: an ambiguous result is never a pass; not in a4w4check-results/1, where that
 * flag said only that E8M0 code 0 was present). Returns 0, or -1 with one line in err:
 * "NAME: entry 3 (case e_k32 on cpu-asm) records verdict pass with 12 mismatches: its own
 * fields contradict its verdict ...". */
int a4w4_entries_contradiction(const cJSON *cases, const char *schema, const char *name,
                               char *err, size_t errlen);

/* a4w4_entries_contradiction over doc's "cases", and a recorded verdict PASS over an entry
 * that failed, was skipped or is ambiguous, or over counts that deny it (fail, skip or
 * ambiguous > 0, recorded_items != expected_items, a backend unchecked); in a run's
 * document (one with call_sequence: run, merge), an item with two entries of one backend or
 * an entry of a backend not in "backends", and under PASS a case item without one entry per
 * backend of "backends" (docs/cli/report.md). 0, or -1 with one
 * line in err. Documents are checked once where they are loaded (a4w4_results_parse; the
 * results stream's reader in harness/io/stream.c), so merge, compare and report refuse a
 * contradictory document (exit 2) instead of passing it on. */
int a4w4_results_contradiction(const cJSON *doc, const char *name, char *err, size_t errlen);

/* ---- rendering ------------------------------------------------------------------------ */

typedef struct {
    /* 1: leave out everything that changes from run to run on the same results (timings,
     * the environment: date, host, commit, compiler), so identical verdicts render to
     * identical bytes (golden files, diffs). */
    int reproducible;
    /* Shown in the HTML as the report's source (e.g. the results.json path); NULL for none.
     * The Markdown leaves it out, so `run`'s summary.md and `report --format md` agree. */
    const char *source;
} a4w4_report_opts;

/* Markdown summary, for a PR comment or a CI step summary: the overall verdict, one verdict
 * line per (backend, contract), every failure with its coordinates and hex values, the
 * environment, and a table per group (golden bundles; cases tagged "real" by layer shape
 * (N, K); every other case by its first tag), collapsed with <details> unless it fails.
 * o may be NULL (defaults: everything shown). This is also run's summary.md. */
char *a4w4_report_markdown(const cJSON *doc, const a4w4_report_opts *o);

/* Self-contained HTML (no network, inline CSS and SVG, a few lines of optional script for
 * sorting): summary first, then the hazard map (an M x N heatmap per backend, colour and
 * glyph = verdict; from the entries' route/policy/hazard fields: the layer policy's N <= 128
 * fence after the last column with policy reason small_n, the dispatch pick per cell in its
 * tooltip, a corner mark on hazard "exposed" (an untuned shape on the ASM path can get a tile
 * that does not fit N); a document without the fields is drawn without them and says so),
 * the mismatch details, ULP-distance histograms of bounded backends,
 * per-case timing and every case, long tables collapsible. Okabe-Ito colours, each also
 * told by a glyph or pattern and by text. */
char *a4w4_report_html(const cJSON *doc, const a4w4_report_opts *o);

/* JUnit XML (the Ant/Jenkins format, tests/data/report_junit.xsd): one <testsuite> per
 * (backend, contract), one <testcase> per case x backend; fail -> <failure> with the
 * mismatch message, n/a and skip -> <skipped>. */
char *a4w4_report_junit(const cJSON *doc, const a4w4_report_opts *o);

/* The count phrase of results entry e (a failing one): "N of M checked outputs differ" when it
 * compared outputs; when it compared none (its plugin crashed, timed out or was not run, its
 * output was refused as bad input, its backend returned an error: "aborted" and "note" say
 * which), "no output compared (crashed)", "(timed out)", "(not run)", "(refused: bad input)"
 * or "(the backend returned no outputs)": never "0 of 0 checked" (docs/cli/run.md, "When an
 * entry fails"). Written into buf (len bytes, truncated). Returns 1 when it compared outputs,
 * 0 when none. */
int a4w4_report_differ_text(const cJSON *e, char *buf, size_t len);

/* ---- comparison of two runs ----------------------------------------------------------- */

typedef struct {
    /* Pairs of backends to treat as one path (base name, candidate name), e.g. cpu-fallback
     * in BASE against cpu-asm in CAND. Entries of other backends match by the same name. */
    const char *const *pair_base;
    const char *const *pair_cand;
    size_t npairs;
    /* An entry counts as slower when cand/base time >= this (default 1.25 when <= 0) and
     * both times are at least min_ms (default 0.05 ms when <= 0; shorter ones are noise). */
    double slower_ratio;
    double min_ms;
} a4w4_compare_opts;

/* Compare two validated results documents entry by entry, matched by (case name, backend)
 * (through the pairs). Returns a comparison document (caller frees): {"schema":
 * "a4w4check-compare/1", "base": {...}, "cand": {...}, "totals": {... "unpaired": entries of a
 * backend a --pair names only on the other side, left out}, "new_failures",
 * "fixed", "still_failing", "verdict_changes", "bits_changed", "bits_unknown", "slower",
 * "only_base", "only_cand": [item...], "timing": {"geomean_ratio", "timed", per backend}}.
 * Bits: y_hash when both entries have one; otherwise a differing mismatch record (count,
 * max ULP, first mismatches) proves a change and equal ones leave it unknown. Inputs that
 * differ (M, N, K, regime, seed or checked outputs) are reported as such, not as bit
 * changes. NULL only when out of memory. */
cJSON *a4w4_compare(const cJSON *base, const cJSON *cand, const a4w4_compare_opts *co);

/* Number of new failures in a comparison document (exit 1 when > 0). */
int a4w4_compare_new_failures(const cJSON *cmp);

/* Number of BASE's entries the candidate lacks ("only_base": a lost backend, case or every
 * entry, another matrix): a comparison that cannot vouch for them (`compare` exits 5 unless
 * a new failure makes it 1). */
int a4w4_compare_losses(const cJSON *cmp);

/* The comparison as Markdown and as self-contained HTML (o as for the reports; only
 * reproducible and source are read). */
char *a4w4_compare_markdown(const cJSON *cmp, const a4w4_report_opts *o);
char *a4w4_compare_html(const cJSON *cmp, const a4w4_report_opts *o);

#endif
