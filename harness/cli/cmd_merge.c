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
    const char *out;
    int allow_partial;
} merge_opts;

static const a4w4_option merge_options[] = {
    OPT_STRING("out", merge_opts, out, "DIR", "where results.json and summary.md go"),
    OPT_FLAG("allow-partial", merge_opts, allow_partial,
             "merge shards cut short and missing shards too (verdict INCOMPLETE)"),
    OPT_END(),
};

static const a4w4_command_spec merge_spec = {
    "merge", merge_usage, merge_options, "SHARD_DIR...",
    "exit: 0 merged and all pass, 1 merged with failures, 2 shards refused, 4 not written,\n"
    "      5 merged with --allow-partial and incomplete (verdict INCOMPLETE)\n"};

/* The header fields every shard must share. */
static const char *const same[] = {"schema", "tool_version", "matrix_hash", "backends",
                                    "full", "budget_seconds", "set", "matrix_items"};

/* The shards read so far: the first header, the merged document, which i were seen, the
 * items they recorded. */
typedef struct {
    cJSON *ref, *merged;
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

/* Check one shard's header h against the first (path, first: for messages); the first
 * shard starts the merged document. Returns the exit code (PASS: accepted). */
static int admit_header(merge_state *m, const cJSON *h, const char *path, const char *first)
{
    unsigned si = 0, sn = 0;
    if (sscanf(hstr(h, "shard"), "%u/%u", &si, &sn) != 2 || !sn || !si || si > sn) {
        a4w4_errorf("merge: %s: header has no valid shard i/n", path);
        return A4W4_EXIT_BADINPUT;
    } else if (!m->ref) {
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
                        "--full/--budget-seconds or version)",
                        path, first, same[k]);
            return A4W4_EXIT_BADINPUT;
        }
    }
    if (m->seen[si]) {
        a4w4_errorf("merge: shard %u/%u given twice (%s)", si, sn, path);
        return A4W4_EXIT_BADINPUT;
    }
    m->seen[si] = 1;
    return A4W4_EXIT_PASS;
}

/* The shard at path recorded items of the shard_items its header h promises; refused
 * unless they agree or m allows partial shards. Returns the exit code (PASS: accepted). */
static int admit_items(const merge_state *m, const cJSON *h, const char *path, size_t items)
{
    const cJSON *si = cJSON_GetObjectItemCaseSensitive(h, "shard_items");
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

/* Add the stages of shard dir's results.json (when it has them) into the merged document's:
 * seconds and outputs summed, wall_s the largest (shards run side by side). */
static void add_stages(merge_state *m, const char *dir)
{
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/results.json", dir);
    cJSON *doc = a4w4_results_load(path, err, sizeof err);
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
        size_t items = 0;
        cJSON *doc = a4w4_stream_load_items(shards->v[i], &h, &items, err, sizeof err);
        if (!doc) {
            a4w4_errorf("merge: %s", err);
            return A4W4_EXIT_BADINPUT;
        }
        int rc = admit_header(m, h, shards->v[i], shards->v[0]);
        if (rc == A4W4_EXIT_PASS)
            rc = admit_items(m, h, shards->v[i], items);
        if (rc == A4W4_EXIT_PASS) {
            m->recorded += items;
            add_stages(m, shards->v[i]);
            cJSON *e, *cases = cJSON_GetObjectItemCaseSensitive(m->merged, "cases");
            cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases"))
                cJSON_AddItemToArray(cases, cJSON_Duplicate(e, 1));
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
static int write_merged(merge_state *m, const char *out)
{
    char err[1024];
    const cJSON *mi = cJSON_GetObjectItemCaseSensitive(m->ref, "matrix_items");
    a4w4_completeness c = {cJSON_IsNumber(mi) ? (size_t)mi->valuedouble : 0, m->recorded};
    a4w4_doc_verdict v = a4w4_results_judge(m->merged, &c);
    if (a4w4_mkdir_p(out, err, sizeof err) || a4w4_results_write(m->merged, out, err, sizeof err)) {
        a4w4_errorf("merge: %s", err);
        return A4W4_EXIT_IO;
    }
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
    if (v == A4W4_DOC_INCOMPLETE)
        a4w4_errorf("merge: verdict INCOMPLETE: %s",
                    cJSON_GetObjectItemCaseSensitive(m->merged, "verdict_reason")->valuestring);
    return v == A4W4_DOC_FAIL         ? A4W4_EXIT_MISMATCH
           : v == A4W4_DOC_INCOMPLETE ? A4W4_EXIT_INCOMPLETE
                                      : A4W4_EXIT_PASS;
}

int cmd_merge(int argc, char **argv)
{
    merge_opts o = {NULL, 0};
    a4w4_args shards;
    int rc = a4w4_options_parse(&merge_spec, &o, argc, argv, &shards);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    if (!o.out || shards.n < 1) {
        a4w4_errorf("merge: need --out DIR and at least one SHARD_DIR");
        return A4W4_EXIT_BADINPUT;
    }
    merge_state m = {NULL, NULL, 0, NULL, 0, o.allow_partial};
    rc = read_shards(&m, &shards);
    if (rc == A4W4_EXIT_PASS)
        rc = write_merged(&m, o.out);
    free(m.seen);
    cJSON_Delete(m.ref);
    cJSON_Delete(m.merged);
    return rc;
}
