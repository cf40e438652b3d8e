/* cmd_merge.c — `a4w4check merge --out DIR SHARD_DIR...`: combine the results of `run
 * --shard i/n` runs into one results.json + summary.md. Refuses shards of different
 * matrices, seeds (the matrix hash covers the case file, seeds included), backends, tool
 * versions or shard counts, and duplicate or missing shards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "results.h"
#include "stream.h"

static const char merge_usage[] =
    "usage: a4w4check merge --out DIR SHARD_DIR [SHARD_DIR...]\n"
    "\n"
    "Reads SHARD_DIR/results.jsonl of each `a4w4check run --shard i/n` and writes the combined\n"
    "DIR/results.json and DIR/summary.md (atomically). Every shard must come from the same\n"
    "matrix (case file and seeds), backends, tool version and n; each i exactly once.\n"
    "\n"
    "exit: 0 merged and all pass, 1 merged with failures, 2 shards refused, 4 not written\n";

static const char *hstr(const cJSON *h, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(h, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

int cmd_merge(int argc, char **argv)
{
    if (a4w4_wants_help(argc, argv)) {
        fputs(merge_usage, stdout);
        return A4W4_EXIT_PASS;
    }
    const char *out = NULL;
    int first = 1;
    for (; first < argc; first++) {
        if (!strcmp(argv[first], "--out") && first + 1 < argc)
            out = argv[++first];
        else if (argv[first][0] == '-') {
            a4w4_errorf("merge: unknown option '%s' (see a4w4check merge --help)", argv[first]);
            return A4W4_EXIT_BADINPUT;
        } else
            break;
    }
    if (!out || first >= argc) {
        a4w4_errorf("merge: need --out DIR and at least one SHARD_DIR");
        return A4W4_EXIT_BADINPUT;
    }
    static const char *const same[] = {"schema", "tool_version", "matrix_hash", "backends",
                                        "full", "set", "matrix_items"};
    cJSON *merged = NULL, *ref = NULL;
    char err[1024];
    unsigned n_expected = 0;
    unsigned char *seen = NULL;
    int rc = A4W4_EXIT_PASS;
    for (int i = first; i < argc; i++) {
        cJSON *h = NULL;
        cJSON *doc = a4w4_stream_load(argv[i], &h, err, sizeof err);
        if (!doc) {
            a4w4_errorf("merge: %s", err);
            rc = A4W4_EXIT_BADINPUT;
            break;
        }
        unsigned si = 0, sn = 0;
        if (sscanf(hstr(h, "shard"), "%u/%u", &si, &sn) != 2 || !sn || !si || si > sn) {
            a4w4_errorf("merge: %s: header has no valid shard i/n", argv[i]);
            rc = A4W4_EXIT_BADINPUT;
        } else if (!ref) {
            ref = cJSON_Duplicate(h, 1);
            n_expected = sn;
            seen = calloc(sn + 1, 1);
            merged = cJSON_Duplicate(h, 1);
            cJSON_ReplaceItemInObject(merged, "shard", cJSON_CreateString("merged"));
            cJSON_AddArrayToObject(merged, "cases");
        } else if (sn != n_expected) {
            a4w4_errorf("merge: %s is shard %u/%u but the first shard had n=%u", argv[i], si, sn, n_expected);
            rc = A4W4_EXIT_BADINPUT;
        }
        for (size_t k = 0; rc == A4W4_EXIT_PASS && ref && k < sizeof same / sizeof same[0]; k++) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(ref, same[k]);
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(h, same[k]);
            if (!a || !b || !cJSON_Compare(a, b, 1)) {
                a4w4_errorf("merge: %s differs from %s in '%s' (different matrix, seeds, backends or version)",
                            argv[i], argv[first], same[k]);
                rc = A4W4_EXIT_BADINPUT;
            }
        }
        if (rc == A4W4_EXIT_PASS && seen[si]) {
            a4w4_errorf("merge: shard %u/%u given twice (%s)", si, sn, argv[i]);
            rc = A4W4_EXIT_BADINPUT;
        }
        if (rc == A4W4_EXIT_PASS) {
            seen[si] = 1;
            cJSON *e, *cases = cJSON_GetObjectItemCaseSensitive(merged, "cases");
            cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases"))
                cJSON_AddItemToArray(cases, cJSON_Duplicate(e, 1));
        }
        cJSON_Delete(h);
        cJSON_Delete(doc);
        if (rc != A4W4_EXIT_PASS)
            break;
    }
    for (unsigned s = 1; rc == A4W4_EXIT_PASS && s <= n_expected; s++)
        if (!seen[s]) {
            a4w4_errorf("merge: shard %u/%u is missing", s, n_expected);
            rc = A4W4_EXIT_BADINPUT;
        }
    if (rc == A4W4_EXIT_PASS) {
        if (a4w4_mkdir_p(out, err, sizeof err) || a4w4_results_write(merged, out, err, sizeof err)) {
            a4w4_errorf("merge: %s", err);
            rc = A4W4_EXIT_IO;
        } else {
            int fails = 0;
            const cJSON *e;
            cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(merged, "cases")) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "verdict");
                fails += cJSON_IsString(v) && !strcmp(v->valuestring, "fail");
            }
            fprintf(stderr, "a4w4check merge: %u shards, %d entries, %d failing; %s/results.json written\n",
                    n_expected, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(merged, "cases")),
                    fails, out);
            rc = fails ? A4W4_EXIT_MISMATCH : A4W4_EXIT_PASS;
        }
    }
    free(seen);
    cJSON_Delete(ref);
    cJSON_Delete(merged);
    return rc;
}
