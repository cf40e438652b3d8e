/* cmd_merge.c — `a4w4check merge --out DIR SHARD_DIR...`: combine the results of `run
 * --shard i/n` runs into one results.json + summary.md. Refuses shards of different
 * matrices, seeds (the matrix hash covers the case file, seeds included), backends, tool
 * versions, --full or --budget-seconds, or shard counts, duplicate shards, and (unless --allow-partial, which makes the
 * verdict INCOMPLETE) missing shards and shards that recorded fewer or more items than their
 * header's shard_items (a shard killed mid-way). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "a4w4check.h"
#include "fsutil.h"
#include "ledger.h"
#include "repro.h"
#include "options.h"
#include "results.h"
#include "stream.h"

static const char merge_usage[] =
    "usage: a4w4check merge --out DIR SHARD_DIR [SHARD_DIR...]\n"
    "\n"
    "Reads SHARD_DIR/results.jsonl of each `a4w4check run --shard i/n` and writes the combined\n"
    "DIR/results.json and DIR/summary.md (atomically). Every shard must come from the same\n"
    "matrix (case file and seeds), backends, --full and --budget-seconds, tool version and\n"
    "n; each i exactly once, each with every item its header promises (shard_items)\n"
    "recorded. --allow-partial merges\n"
    "what is there instead: the verdict is then INCOMPLETE, never PASS.\n"
    "\n";

typedef struct {
    const char *out, *known;
    int allow_partial;
} merge_opts;

static const a4w4_option merge_options[] = {
    OPT_STRING("out", merge_opts, out, "DIR", "where results.json and summary.md go"),
    OPT_FLAG("allow-partial", merge_opts, allow_partial,
             "merge shards cut short and missing shards too (verdict INCOMPLETE)"),
    OPT_STRING("known", merge_opts, known, "FILE", A4W4_KNOWN_HELP),
    OPT_END(),
};

static const a4w4_command_spec merge_spec = {
    "merge", merge_usage, merge_options, "SHARD_DIR...",
    "exit: 0 merged and all pass, 1 merged with failures, 2 shards refused, 4 not written,\n"
    "      5 merged with --allow-partial and incomplete (verdict INCOMPLETE)\n"};

/* The header fields every shard must share. */
static const char *const same[] = {"schema",         "tool_version", "matrix_hash",
                                    "backends",       "full",         "budget_seconds",
                                    "set",            "matrix_items", "e8m0_code0",
                                    "e8m0_code0_declared"};

/* The shards read so far: the first header, the merged document, which i were seen, the
 * items they recorded. */
typedef struct {
    cJSON *ref, *merged;
    cJSON *items; /* {item name: the shard directory that recorded it} */
    unsigned n_expected;
    unsigned char *seen;
    size_t recorded;
    int allow_partial;
} merge_state;

static const char *hstr(const cJSON *h, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(h, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* 1 (after one line on stderr) when header h judged a backend under another contract than the
 * first shard's header ref (their "contracts"; both absent: an older document, accepted):
 * the merged verdict would mix two contracts under one header. */
static int contracts_differ(const cJSON *ref, const cJSON *h, const char *path,
                            const char *first)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(ref, "contracts");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(h, "contracts"), *x;
    if ((!a && !b) || (a && b && cJSON_Compare(a, b, 1)))
        return 0;
    cJSON_ArrayForEach(x, a) {
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
        if (!cJSON_IsString(x) || !cJSON_IsString(y) || strcmp(x->valuestring, y->valuestring)) {
            a4w4_errorf("merge: %s judged %s under contract '%.200s', %s under '%.200s' "
                        "(shards must be judged under the same contracts)", path, x->string,
                        cJSON_IsString(y) ? y->valuestring : "none", first,
                        cJSON_IsString(x) ? x->valuestring : "none");
            return 1;
        }
    }
    a4w4_errorf("merge: %s and %s record other contracts (shards must be judged under the "
                "same contracts)", path, first);
    return 1;
}

/* Check one shard's header h against the first (path, first: for messages); the first
 * shard starts the merged document. Returns the exit code (PASS: accepted). */
static int admit_header(merge_state *m, const cJSON *h, const char *path, const char *first)
{
    a4w4_opt_shard sh = {0, 0};
    char why[400];
    if (a4w4_opt_cb_shard(NULL, &sh, hstr(h, "shard"), why, sizeof why)) {
        a4w4_errorf("merge: %s: header has no valid shard i/n", path);
        return A4W4_EXIT_BADINPUT;
    }
    unsigned si = sh.i, sn = sh.n;
    if (!m->ref) {
        m->ref = cJSON_Duplicate(h, 1);
        m->n_expected = sn;
        m->seen = calloc(sn + 1, 1);
        m->merged = cJSON_Duplicate(h, 1);
        cJSON_ReplaceItemInObject(m->merged, "shard", cJSON_CreateString("merged"));
        cJSON_AddArrayToObject(m->merged, "cases");
    } else if (sn != m->n_expected) {
        a4w4_errorf("merge: %s is shard %u/%u but the first shard had n=%u", path, si, sn,
                    m->n_expected);
        return A4W4_EXIT_BADINPUT;
    }
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(m->ref, same[k]);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(h, same[k]);
        if (!a || !b || !cJSON_Compare(a, b, 1)) {
            a4w4_errorf("merge: %s differs from %s in '%s' (different matrix, seeds, backends, "
                        "--full/--budget-seconds, E8M0 code-0 reading or version)",
                        path, first, same[k]);
            return A4W4_EXIT_BADINPUT;
        }
    }
    if (contracts_differ(m->ref, h, path, first))
        return A4W4_EXIT_BADINPUT;
    if (a4w4_header_files_differ(m->ref, h, why, sizeof why)) {
        a4w4_errorf("merge: %s and %s: %s (shards must judge the same build)", first, path,
                    why);
        return A4W4_EXIT_BADINPUT;
    }
    if (m->seen[si]) {
        a4w4_errorf("merge: shard %u/%u given twice (%s)", si, sn, path);
        return A4W4_EXIT_BADINPUT;
    }
    m->seen[si] = 1;
    return A4W4_EXIT_PASS;
}

/* The shard at path recorded t->items complete items (distinct, each with every entry its
 * header promises: stream.h) of the shard_items its header h promises; refused unless they
 * agree or m allows partial shards. Returns the exit code (PASS: accepted). */
static int admit_items(const merge_state *m, const cJSON *h, const char *path,
                       const a4w4_stream_tally *t)
{
    const cJSON *si = cJSON_GetObjectItemCaseSensitive(h, "shard_items");
    size_t items = t->items;
    if (t->dropped && !m->allow_partial) {
        a4w4_errorf("merge: %s: %zu line%s not counted (%s): refused; rerun the shard with "
                    "run --resume, or merge with --allow-partial (verdict INCOMPLETE)", path,
                    t->dropped, t->dropped == 1 ? "" : "s", t->first_dropped);
        return A4W4_EXIT_BADINPUT;
    }
    if (t->dropped)
        fprintf(stderr, "a4w4check merge: %s: %zu line%s not counted (--allow-partial; first: "
                "%s)\n", path, t->dropped, t->dropped == 1 ? "" : "s", t->first_dropped);
    if (cJSON_IsNumber(si) && si->valuedouble == (double)items)
        return A4W4_EXIT_PASS;
    if (m->allow_partial) {
        char of[48] = "an unknown number";
        if (cJSON_IsNumber(si))
            snprintf(of, sizeof of, "%.0f", si->valuedouble);
        fprintf(stderr, "a4w4check merge: %s: merging the %zu items recorded of %s "
                "(--allow-partial)\n", path, items, of);
        return A4W4_EXIT_PASS;
    }
    if (!cJSON_IsNumber(si))
        a4w4_errorf("merge: %s: header records no shard_items, so its completeness is unknown; "
                    "merge with --allow-partial (verdict INCOMPLETE)", path);
    else
        a4w4_errorf("merge: %s: %zu of %.0f items recorded (header shard_items %.0f): the shard "
                    "was cut short; finish it with run --resume, or merge with --allow-partial "
                    "(verdict INCOMPLETE)", path, items, si->valuedouble, si->valuedouble);
    return A4W4_EXIT_BADINPUT;
}

/* Add shard path's entries (doc's "cases") to the merged document, each item once across
 * all shards: an item two shards both recorded is refused (an edited or copied shard).
 * Returns the exit code. */
static int add_entries(merge_state *m, const cJSON *doc, const char *path)
{
    cJSON *e, *cases = cJSON_GetObjectItemCaseSensitive(m->merged, "cases");
    const char *prev = NULL;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        const char *n = cJSON_IsString(nm) ? nm->valuestring : "";
        if (!prev || strcmp(prev, n)) { /* an item's entries are adjacent (one line) */
            const cJSON *by = cJSON_GetObjectItemCaseSensitive(m->items, n);
            if (by) {
                a4w4_errorf("merge: item %s is recorded by %s and by %s: each item belongs to "
                            "one shard", n, by->valuestring, path);
                return A4W4_EXIT_BADINPUT;
            }
            cJSON_AddStringToObject(m->items, n, path);
        }
        prev = n;
        cJSON_AddItemToArray(cases, cJSON_Duplicate(e, 1));
    }
    return A4W4_EXIT_PASS;
}

/* Add the stages of shard dir's results.json (when it has them) into the merged document's:
 * seconds and outputs summed, wall_s the largest (shards run side by side). */
static void add_stages(merge_state *m, const char *dir)
{
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/results.json", dir);
    cJSON *doc = a4w4_results_read(path, err, sizeof err);
    const cJSON *st = doc ? cJSON_GetObjectItemCaseSensitive(doc, "stages") : NULL;
    if (cJSON_IsObject(st)) {
        cJSON *to = cJSON_GetObjectItemCaseSensitive(m->merged, "stages");
        if (!to)
            to = cJSON_AddObjectToObject(m->merged, "stages");
        const cJSON *x;
        cJSON_ArrayForEach(x, st) {
            if (!cJSON_IsNumber(x))
                continue;
            cJSON *have = cJSON_GetObjectItemCaseSensitive(to, x->string);
            if (!have)
                cJSON_AddNumberToObject(to, x->string, x->valuedouble);
            else if (strcmp(x->string, "wall_s"))
                cJSON_SetNumberValue(have, have->valuedouble + x->valuedouble);
            else if (x->valuedouble > have->valuedouble)
                cJSON_SetNumberValue(have, x->valuedouble);
        }
    }
    cJSON_Delete(doc);
}

/* Read every shard into m. Returns the exit code (PASS: all shards, each once, complete;
 * with allow_partial, whatever there is). */
static int read_shards(merge_state *m, const a4w4_args *shards)
{
    char err[1024];
    for (int i = 0; i < shards->n; i++) {
        cJSON *h = NULL;
        a4w4_stream_tally t;
        cJSON *doc = a4w4_stream_load_items(shards->v[i], &h, &t, err, sizeof err);
        if (!doc) {
            a4w4_errorf("merge: %s", err);
            return A4W4_EXIT_BADINPUT;
        }
        int rc = admit_header(m, h, shards->v[i], shards->v[0]);
        if (rc == A4W4_EXIT_PASS)
            rc = admit_items(m, h, shards->v[i], &t);
        if (rc == A4W4_EXIT_PASS)
            rc = add_entries(m, doc, shards->v[i]);
        if (rc == A4W4_EXIT_PASS) {
            m->recorded += t.items;
            add_stages(m, shards->v[i]);
        }
        cJSON_Delete(h);
        cJSON_Delete(doc);
        if (rc != A4W4_EXIT_PASS)
            return rc;
    }
    for (unsigned s = 1; s <= m->n_expected; s++)
        if (!m->seen[s] && !m->allow_partial) {
            a4w4_errorf("merge: shard %u/%u is missing", s, m->n_expected);
            return A4W4_EXIT_BADINPUT;
        } else if (!m->seen[s]) {
            fprintf(stderr, "a4w4check merge: shard %u/%u is missing (--allow-partial)\n", s,
                    m->n_expected);
        }
    return A4W4_EXIT_PASS;
}

/* Judge the merged document (every item of the matrix expected), write out/results.json +
 * summary.md and say so. Returns the exit code. */
static int write_merged(merge_state *m, const char *out, const char *known)
{
    char err[1024];
    const cJSON *mi = cJSON_GetObjectItemCaseSensitive(m->ref, "matrix_items");
    a4w4_completeness c = {cJSON_IsNumber(mi) ? (size_t)mi->valuedouble : 0, m->recorded};
    int krc = a4w4_apply_ledger("merge", known, m->merged);
    if (krc)
        return krc;
    a4w4_doc_verdict v = a4w4_results_judge(m->merged, &c);
    int lock = -1; /* a run writing into out (its shard, say) would overwrite the merge */
    a4w4_hstatus ls = a4w4_mkdir_p(out, err, sizeof err) ? A4W4_ST_IO
                      : a4w4_dir_lock(out, "a4w4check merge", &lock, err, sizeof err);
    if (ls == A4W4_ST_BADINPUT) {
        a4w4_errorf("merge: --out %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    if (ls || a4w4_results_write(m->merged, out, err, sizeof err)) {
        a4w4_dir_unlock(lock);
        a4w4_errorf("merge: %s", err);
        return A4W4_EXIT_IO;
    }
    a4w4_dir_unlock(lock);
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(m->merged, "counts");
    unsigned nseen = 0;
    for (unsigned s = 1; s <= m->n_expected; s++)
        nseen += m->seen[s];
    char shards[48];
    if (nseen < m->n_expected)
        snprintf(shards, sizeof shards, "%u of %u shards", nseen, m->n_expected);
    else
        snprintf(shards, sizeof shards, "%u shards", nseen);
    fprintf(stderr, "a4w4check merge: %s, %d entries, %d failing; %s/results.json written\n",
            shards, cJSON_GetObjectItemCaseSensitive(counts, "entries")->valueint,
            cJSON_GetObjectItemCaseSensitive(counts, "fail")->valueint, out);
    a4w4_print_failures("merge", m->merged, 5);
    a4w4_print_known("merge", m->merged, 5);
    if (v == A4W4_DOC_INCOMPLETE)
        a4w4_errorf("merge: verdict INCOMPLETE: %s",
                    cJSON_GetObjectItemCaseSensitive(m->merged, "verdict_reason")->valuestring);
    return v == A4W4_DOC_FAIL         ? A4W4_EXIT_MISMATCH
           : v == A4W4_DOC_INCOMPLETE ? A4W4_EXIT_INCOMPLETE
                                      : A4W4_EXIT_PASS;
}

int cmd_merge(int argc, char **argv)
{
    merge_opts o = {0};
    a4w4_args shards;
    int rc = a4w4_options_parse(&merge_spec, &o, argc, argv, &shards);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    if (!o.out || shards.n < 1) {
        a4w4_errorf("merge: need --out DIR and at least one SHARD_DIR");
        return A4W4_EXIT_BADINPUT;
    }
    merge_state m = {NULL, NULL, cJSON_CreateObject(), 0, NULL, 0, o.allow_partial};
    rc = read_shards(&m, &shards);
    if (rc == A4W4_EXIT_PASS)
        rc = write_merged(&m, o.out, o.known);
    free(m.seen);
    cJSON_Delete(m.ref);
    cJSON_Delete(m.merged);
    cJSON_Delete(m.items);
    return rc;
}
