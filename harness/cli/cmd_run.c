/* cmd_run.c — `a4w4check run`: the main job and the nightly runner. A case matrix (a named
 * set under cases/ or any case file) through every selected backend against the oracles,
 * plus every bundle under cases/golden/; results stream to results.jsonl as each case ends,
 * and results.json + summary.md are written atomically from it. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a4w4_reports.h"
#include "environment.h"
#include "a4w4check.h"
#include "registry.h"
#include "casefile.h"
#include "cpu_sut.h"
#include "results.h"
#include "runner.h"
#include "stream.h"

static const char run_usage[] =
    "usage: a4w4check run [--set NAME | --cases FILE] [--golden DIR | --no-golden]\n"
    "                     [--backend a,b,...] [--out DIR] [--shard i/n] [--resume]\n"
    "                     [--full] [--quiet]\n"
    "\n"
    "Runs each case of a matrix through the backends and compares every checked output bit\n"
    "for bit with the oracle of the backend's contract (ordered(S), exact; bounded backends\n"
    "within the derived bound), then verifies every bundle under cases/golden/.\n"
    "\n"
    "  --set NAME      cases/NAME.csv: premerge (default), nightly, hazard, edge\n"
    "  --cases FILE    any case file (name,M,N,K,regime,seed,tags)\n"
    "  --backend LIST  comma-separated; default every backend available here. Types:\n"
    "                  cpu-asm, cpu-fallback, bundle:DIR, plugin:LIB.so (see README)\n"
    "  --out DIR       results.jsonl, results.json, summary.md (default build/out)\n"
    "  --shard i/n     run the deterministic i-th of n parts (item k goes to part k % n + 1)\n"
    "  --resume        keep the cases already in DIR/results.jsonl and run the rest\n"
    "  --full          check every output (default: tile-aware sample above 2^26 MACs)\n"
    "  --quiet         no progress output\n"
    "\n"
    "exit: 0 all pass, 1 any mismatch, 2 bad input, 3 a GPU backend without a GPU,\n"
    "      4 results not written\n";

#define MAX_BACKENDS 64

typedef struct {
    const char *cases_path, *golden_dir, *out_dir, *set;
    const char *backend_list;
    unsigned shard_i, shard_n;
    int full, quiet, resume;
} run_opts;

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.safetensors under dir, sorted; -1 when dir is unreadable. */
static int list_bundles(const char *dir, char ***out, size_t *n)
{
    DIR *dp = opendir(dir);
    *out = NULL;
    *n = 0;
    if (!dp)
        return -1;
    struct dirent *de;
    size_t cap = 0;
    while ((de = readdir(dp))) {
        size_t L = strlen(de->d_name);
        if (L < 13 || strcmp(de->d_name + L - 12, ".safetensors"))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **p = realloc(*out, cap * sizeof *p);
            if (!p)
                break;
            *out = p;
        }
        size_t len = strlen(dir) + L + 2;
        (*out)[*n] = malloc(len);
        snprintf((*out)[*n], len, "%s/%s", dir, de->d_name);
        (*n)++;
    }
    closedir(dp);
    if (*n)
        qsort(*out, *n, sizeof **out, name_cmp);
    return 0;
}

/* Progress: a live line on a TTY, plain lines at most every 5 s otherwise. */
typedef struct {
    int tty, quiet;
    double t0, last;
} progress;

static void progress_show(progress *p, size_t done, size_t total, int fails, const char *what, int final)
{
    if (p->quiet)
        return;
    double now = a4w4_now(), el = now - p->t0;
    double eta = done ? el / (double)done * (double)(total - done) : 0;
    if (p->tty) {
        fprintf(stderr, "\r\033[K[%zu/%zu] %d failing, %.0fs elapsed, ETA %.0fs  %s", done, total,
                fails, el, eta, what);
        if (final)
            fputc('\n', stderr);
    } else if (final || now - p->last >= 5.0 || done == 1) {
        fprintf(stderr, "a4w4check run: [%zu/%zu] %d failing, %.0fs elapsed, ETA %.0fs; %s\n",
                done, total, fails, el, eta, what);
        p->last = now;
    }
    fflush(stderr);
}

static int parse_args(int argc, char **argv, run_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int takes = !strcmp(a, "--cases") || !strcmp(a, "--golden") || !strcmp(a, "--out") ||
                    !strcmp(a, "--backend") || !strcmp(a, "--set") || !strcmp(a, "--shard");
        if (takes && i + 1 >= argc) {
            a4w4_errorf("run: option %s needs a value", a);
            return -1;
        }
        if (!strcmp(a, "--cases"))
            o->cases_path = argv[++i];
        else if (!strcmp(a, "--set"))
            o->set = argv[++i];
        else if (!strcmp(a, "--golden"))
            o->golden_dir = argv[++i];
        else if (!strcmp(a, "--no-golden"))
            o->golden_dir = NULL;
        else if (!strcmp(a, "--out"))
            o->out_dir = argv[++i];
        else if (!strcmp(a, "--backend"))
            o->backend_list = argv[++i];
        else if (!strcmp(a, "--shard")) {
            const char *v = argv[++i];
            char *end1 = NULL, *end2 = NULL;
            unsigned long long si = 0, sn = 0;
            int ok = v[0] >= '1' && v[0] <= '9';
            if (ok) {
                si = strtoull(v, &end1, 10);
                ok = *end1 == '/' && end1[1] >= '1' && end1[1] <= '9';
            }
            if (ok) {
                sn = strtoull(end1 + 1, &end2, 10);
                ok = !*end2 && sn <= 1000000 && si <= sn;
            }
            o->shard_i = (unsigned)si;
            o->shard_n = (unsigned)sn;
            if (!ok) {
                a4w4_errorf("run: --shard '%s' must be i/n with 1 <= i <= n <= 1000000", v);
                return -1;
            }
        } else if (!strcmp(a, "--full"))
            o->full = 1;
        else if (!strcmp(a, "--quiet"))
            o->quiet = 1;
        else if (!strcmp(a, "--resume"))
            o->resume = 1;
        else {
            a4w4_errorf("run: unknown option '%s' (see a4w4check run --help)", a);
            return -1;
        }
    }
    return 0;
}

/* Open the selected backends (or the defaults). Returns count, or -2/-3 (exit 2/3). */
static int open_backends(const run_opts *o, a4w4_backend *bk)
{
    if (!o->backend_list) {
        char skipped[2048];
        size_t n = a4w4_backend_defaults(bk, MAX_BACKENDS, skipped, sizeof skipped);
        if (skipped[0] && !o->quiet) {
            for (char *save = NULL, *l = strtok_r(skipped, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                fprintf(stderr, "a4w4check run: notice: skipping backend %s\n", l);
        }
        return (int)n;
    }
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", o->backend_list);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char err[512];
        if (n == MAX_BACKENDS) {
            a4w4_errorf("run: more than %d backends", MAX_BACKENDS);
            return -2;
        }
        for (int j = 0; j < n; j++)
            if (!strcmp(bk[j].name, t)) {
                a4w4_errorf("run: --backend names '%s' twice", t);
                for (int i = 0; i < n; i++)
                    a4w4_backend_close(&bk[i]);
                return -2;
            }
        int rc = a4w4_backend_open(t, &bk[n], err, sizeof err);
        if (rc) {
            a4w4_errorf("run: %s", err);
            for (int i = 0; i < n; i++)
                a4w4_backend_close(&bk[i]);
            return -a4w4_exit_code(rc);
        }
        n++;
    }
    if (!n) {
        a4w4_errorf("run: --backend '%s' names no backend", o->backend_list);
        return -2;
    }
    return n;
}

int cmd_run(int argc, char **argv)
{
    if (a4w4_wants_help(argc, argv)) {
        fputs(run_usage, stdout);
        return A4W4_EXIT_PASS;
    }
    char golden_buf[4096], cases_buf[4096], err[1024];
    run_opts o = {NULL, a4w4_data_path("cases/golden", golden_buf, sizeof golden_buf),
                  "build/out", NULL, NULL, 1, 1, 0, 0, 0};
    if (parse_args(argc, argv, &o))
        return A4W4_EXIT_BADINPUT;
    if (o.set && o.cases_path) {
        a4w4_errorf("run: give --set or --cases, not both");
        return A4W4_EXIT_BADINPUT;
    }
    if (!o.cases_path) {
        char rel[512];
        if (!o.set)
            o.set = "premerge";
        if (strchr(o.set, '/') || !*o.set) {
            a4w4_errorf("run: --set '%s' must be a set name (cases/NAME.csv)", o.set);
            return A4W4_EXIT_BADINPUT;
        }
        snprintf(rel, sizeof rel, "cases/%s.csv", o.set);
        o.cases_path = a4w4_data_path(rel, cases_buf, sizeof cases_buf);
    } else {
        o.set = "custom";
    }

    a4w4_case *cases;
    size_t ncases;
    if (a4w4_casefile_read(o.cases_path, &cases, &ncases, err, sizeof err)) {
        a4w4_errorf("%s", err);
        return A4W4_EXIT_BADINPUT;
    }
    char **bundles = NULL;
    size_t nbundles = 0;
    if (o.golden_dir && list_bundles(o.golden_dir, &bundles, &nbundles)) {
        a4w4_errorf("run: --golden %s: cannot read the directory", o.golden_dir);
        free(cases);
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_backend bk[MAX_BACKENDS];
    int nb = open_backends(&o, bk);
    int rc = A4W4_EXIT_PASS;
    cJSON *header = NULL, *done = NULL, *doc = NULL;
    a4w4_stream st = {-1, ""};
    if (nb < 0) {
        rc = -nb;
        goto out;
    }
    if (a4w4_mkdir_p(o.out_dir, err, sizeof err)) {
        a4w4_errorf("run: --out %s", err);
        rc = A4W4_EXIT_IO;
        goto out;
    }

    /* the run's identity */
    int ok;
    unsigned long long h = a4w4_hash_file(o.cases_path, 0xCBF29CE484222325ull, &ok);
    for (size_t i = 0; i < nbundles; i++) {
        const char *b = strrchr(bundles[i], '/');
        h = a4w4_hash_str(b ? b + 1 : bundles[i], h);
    }
    char hex[32];
    snprintf(hex, sizeof hex, "%016llx", h);
    header = cJSON_CreateObject();
    cJSON_AddStringToObject(header, "schema", A4W4_RESULTS_SCHEMA);
    cJSON_AddStringToObject(header, "tool", "a4w4check");
    cJSON_AddStringToObject(header, "tool_version", A4W4_TOOL_VERSION);
    cJSON_AddStringToObject(header, "set", o.set);
    cJSON_AddStringToObject(header, "cases_file", o.cases_path);
    cJSON_AddStringToObject(header, "matrix_hash", hex);
    char shard[32];
    snprintf(shard, sizeof shard, "%u/%u", o.shard_i, o.shard_n);
    cJSON_AddStringToObject(header, "shard", shard);
    cJSON_AddBoolToObject(header, "full", o.full);
    cJSON *bl = cJSON_AddArrayToObject(header, "backends");
    cJSON_AddItemToArray(bl, cJSON_CreateString("oracle"));
    cJSON *bc = cJSON_AddObjectToObject(header, "contracts");
    for (int i = 0; i < nb; i++) {
        cJSON_AddItemToArray(bl, cJSON_CreateString(bk[i].name));
        cJSON_AddStringToObject(bc, bk[i].name, bk[i].contract);
    }
    size_t total_items = ncases + nbundles, mine = 0;
    for (size_t k = 0; k < total_items; k++)
        mine += k % o.shard_n + 1 == o.shard_i;
    cJSON_AddNumberToObject(header, "matrix_items", (double)total_items);
    cJSON_AddNumberToObject(header, "shard_items", (double)mine);

    a4w4_environment_json(header); /* compiler, commit, host, date, GPU, tables used */
    int src = a4w4_stream_open(&st, o.out_dir, header, o.resume, &done, err, sizeof err);
    if (src) {
        a4w4_errorf("run: %s", err);
        rc = a4w4_exit_code(src);
        goto out;
    }
    a4w4_runner runner = {bk, (size_t)nb, o.full};
    size_t nsuts;
    const a4w4_bundle_sut *suts = a4w4_cpu_bundle_suts(&nsuts);
    progress pg = {isatty(2), o.quiet, a4w4_now(), 0};
    int fails = 0, bad_input = 0;
    size_t ndone = (size_t)cJSON_GetArraySize(done), count = 0;
    if (ndone && !o.quiet)
        fprintf(stderr, "a4w4check run: resuming: %zu cases already recorded in %s\n", ndone, st.path);
    for (size_t k = 0; k < total_items && rc == A4W4_EXIT_PASS; k++) {
        if (k % o.shard_n + 1 != o.shard_i)
            continue;
        count++;
        char name[160];
        if (k < ncases)
            snprintf(name, sizeof name, "%s", cases[k].name);
        else {
            const char *b = strrchr(bundles[k - ncases], '/');
            b = b ? b + 1 : bundles[k - ncases];
            snprintf(name, sizeof name, "golden/%.*s", (int)(strlen(b) - 12), b);
        }
        int skip = 0;
        const cJSON *dn;
        cJSON_ArrayForEach(dn, done) skip |= !strcmp(dn->valuestring, name);
        if (skip)
            continue;
        a4w4_entry_list el = {0};
        a4w4_hstatus rs = k < ncases ? a4w4_run_case(&runner, &cases[k], &el, err, sizeof err)
                                     : a4w4_run_golden(&runner, suts, nsuts, bundles[k - ncases],
                                                       &el, err, sizeof err);
        int f = (int)a4w4_entry_list_failures(&el);
        cJSON *entries = rs == A4W4_ST_NOMEM ? NULL : a4w4_entry_list_json(&el);
        a4w4_entry_list_free(&el);
        if (!entries && rs != A4W4_ST_NOMEM) {
            rs = A4W4_ST_NOMEM;
            snprintf(err, sizeof err, "case %s: out of memory for the results", name);
        }
        if (rs != A4W4_ST_OK)
            a4w4_errorf("run: %s", err);
        if (rs == A4W4_ST_BADINPUT) {
            bad_input = 1;
            f = 1;
        } else if (rs != A4W4_ST_OK) {
            rc = a4w4_exit_code(rs);
            break;
        }
        fails += f;
        if (a4w4_stream_case(&st, name, entries, err, sizeof err)) {
            a4w4_errorf("run: %s", err);
            rc = A4W4_EXIT_IO;
        }
        cJSON_Delete(entries);
        progress_show(&pg, count, mine, fails, name, 0);
    }
    a4w4_stream_close(&st);
    progress_show(&pg, count, mine, fails, "done", 1);
    if (rc != A4W4_EXIT_PASS)
        goto out;

    /* the final documents, from the stream (cases of earlier runs included) */
    cJSON *hdr2 = NULL;
    doc = a4w4_stream_load(o.out_dir, &hdr2, err, sizeof err);
    cJSON_Delete(hdr2);
    if (!doc) {
        a4w4_errorf("run: %s", err);
        rc = A4W4_EXIT_IO;
        goto out;
    }
    int total_fail = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "verdict");
        total_fail += cJSON_IsString(v) && !strcmp(v->valuestring, "fail");
    }
    if (a4w4_results_write(doc, o.out_dir, err, sizeof err)) {
        a4w4_errorf("run: %s", err);
        rc = A4W4_EXIT_IO;
        goto out;
    }
    if (!o.quiet)
        fprintf(stderr, "a4w4check run: %d failing entries of %d; %s/results.json and %s/summary.md written\n",
                total_fail, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "cases")),
                o.out_dir, o.out_dir);
    rc = bad_input ? A4W4_EXIT_BADINPUT : total_fail ? A4W4_EXIT_MISMATCH : A4W4_EXIT_PASS;
out:
    for (int i = 0; i < nb; i++)
        a4w4_backend_close(&bk[i]);
    for (size_t i = 0; i < nbundles; i++)
        free(bundles[i]);
    free(bundles);
    free(cases);
    cJSON_Delete(header);
    cJSON_Delete(done);
    cJSON_Delete(doc);
    return rc;
}
