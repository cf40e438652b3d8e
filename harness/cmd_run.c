/* cmd_run.c — `a4w4check run`: the main job. The case matrix (default cases/premerge.csv)
 * through every backend against the oracles, plus every bundle under cases/golden/. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "a4w4check.h"
#include "backend.h"
#include "casefile.h"
#include "gen.h"
#include "results.h"
#include "verify_bundle.h"

static const char run_usage[] =
    "usage: a4w4check run [--cases FILE] [--golden DIR | --no-golden] [--backend a,b]\n"
    "                     [--out DIR] [--full] [--quiet]\n"
    "\n"
    "The main job. Runs each case of the matrix (default cases/premerge.csv) through the\n"
    "backends (default: all; cpu-asm, cpu-fallback) and compares every checked output bit for\n"
    "bit with the oracle of the backend's contract (ordered(1)); in the exact regime also\n"
    "checks ordered(1) == exact. Then verifies every bundle under DIR (default cases/golden).\n"
    "Large cases are checked on a tile-aware sample (rows/columns on 16/32/256 boundaries,\n"
    "first, last, 8 seeded random); --full checks every output.\n"
    "Writes results.json and summary.md atomically to DIR (default build/out).\n"
    "\n"
    "exit: 0 all pass, 1 any mismatch, 2 bad input, 4 results not written\n";

typedef struct {
    const char *cases_path;
    const char *golden_dir;
    const char *out_dir;
    const a4w4_backend *backends[16];
    size_t nbackends;
    int full, quiet;
} run_opts;

static int parse_backends(run_opts *o, const char *list)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    o->nbackends = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        const a4w4_backend *b = a4w4_backend_find(t);
        if (!b) {
            size_t n;
            const a4w4_backend *all = a4w4_backends(&n);
            char names[256] = "";
            for (size_t i = 0; i < n; i++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", all[i].name);
            a4w4_errorf("run: --backend '%s' is not a registered backend (%s)", t, names);
            return -1;
        }
        if (o->nbackends < 16)
            o->backends[o->nbackends++] = b;
    }
    return 0;
}

/* Oracle values over the sample: ordered(1) bf16 and exact bf16, plus the prover count. */
typedef struct {
    uint16_t *ordered, *exact;
    size_t proven, count;
} oracle_out;

static int compute_oracles(const a4w4_case_data *d, const a4w4_sample *s, oracle_out *o)
{
    size_t nb = d->K / 32;
    o->count = s->nrows * s->ncols;
    o->ordered = malloc(o->count * 2);
    o->exact = malloc(o->count * 2);
    o->proven = 0;
    if (!o->ordered || !o->exact)
        return -1;
    for (size_t i = 0; i < s->nrows; i++) {
        size_t m = s->rows ? s->rows[i] : i;
        for (size_t j = 0; j < s->ncols; j++) {
            size_t n = s->cols ? s->cols[j] : j;
            a4w4_dot_operands op = {d->a_fp4 + m * (d->K / 2), d->a_scale + m * nb,
                                    d->w_fp4 + n * (d->K / 2), d->w_scale + n * nb, d->K};
            o->ordered[i * s->ncols + j] = a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 1));
            a4w4_dot_exact(&op, &o->exact[i * s->ncols + j], NULL);
            o->proven += (size_t)a4w4_exact_regime(&op);
        }
    }
    return 0;
}

static void progress(const run_opts *o, size_t done, size_t total, size_t fails, const char *what)
{
    if (!o->quiet)
        fprintf(stderr, "a4w4check run: [%zu/%zu] %zu failing so far; %s\n", done, total, fails, what);
}

static void add_common(cJSON *e, const a4w4_sample *s, double ms, size_t proven)
{
    cJSON_AddBoolToObject(e, "sampled", !s->full);
    cJSON_AddNumberToObject(e, "time_ms", ms);
    cJSON_AddNumberToObject(e, "exact_regime_outputs", (double)proven);
}

/* Run one generated case through every selected backend. Returns entries failing. */
static int run_case(const run_opts *o, const a4w4_case *c, cJSON *entries, int *bad_input)
{
    a4w4_case_data d;
    a4w4_sample s;
    oracle_out orc = {0};
    int fails = 0;
    if (a4w4_case_generate(c, &d) != A4W4_OK) {
        a4w4_errorf("run: case %s: out of memory generating M=%zu N=%zu K=%zu", c->name, c->M, c->N, c->K);
        *bad_input = 1;
        return 0;
    }
    if (a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, o->full, &s) != A4W4_OK ||
        compute_oracles(&d, &s, &orc) != 0) {
        a4w4_errorf("run: case %s: out of memory", c->name);
        *bad_input = 1;
        goto out;
    }
    /* oracle agreement: in the exact regime every order gives the exact sum (SPEC §4.1) */
    {
        cJSON *e = a4w4_entry_new(c->name, c->M, c->N, c->K, c->regime_text, c->seed, "oracle",
                                  "ordered(1) == exact");
        a4w4_check chk;
        if (orc.proven == orc.count)
            a4w4_check_bf16(&chk, "ordered(1) vs exact", orc.ordered, orc.exact, s.nrows, s.ncols);
        else
            a4w4_check_na(&chk, "ordered(1) vs exact", "outside the exact regime: exact is a reference, not a verdict");
        a4w4_entry_set_check(e, &chk);
        if (chk.verdict == A4W4_CHECK_NA)
            cJSON_ReplaceItemInObject(e, "checked_outputs", cJSON_CreateNumber((double)orc.count));
        add_common(e, &s, 0, orc.proven);
        cJSON_AddItemToArray(entries, e);
        fails += chk.verdict == A4W4_CHECK_FAIL;
    }
    uint16_t *y = malloc(orc.count * 2);
    for (size_t bi = 0; y && bi < o->nbackends; bi++) {
        const a4w4_backend *b = o->backends[bi];
        char why[256] = "";
        double t0 = a4w4_now();
        int rc = b->run(&d, s.rows, s.nrows, s.cols, s.ncols, y, why, sizeof why);
        double ms = (a4w4_now() - t0) * 1e3;
        cJSON *e = a4w4_entry_new(c->name, c->M, c->N, c->K, c->regime_text, c->seed, b->name, b->contract);
        a4w4_check chk;
        if (rc == A4W4_OK) {
            a4w4_check_bf16(&chk, "y vs ordered(1)", y, orc.ordered, s.nrows, s.ncols);
            if (!s.full && chk.mismatches) { /* report the output's real coordinates */
                chk.first_row = s.rows[chk.first_row];
                chk.first_col = s.cols[chk.first_col];
            }
        } else if (rc == A4W4_EUNSUPPORTED) {
            a4w4_check_na(&chk, "y", why[0] ? why : "not applicable to this shape");
        } else {
            a4w4_check_na(&chk, "y", a4w4_status_str(rc));
            chk.verdict = A4W4_CHECK_FAIL; /* a backend error on a valid case is a failure */
        }
        a4w4_entry_set_check(e, &chk);
        add_common(e, &s, ms, orc.proven);
        cJSON_AddItemToArray(entries, e);
        fails += chk.verdict == A4W4_CHECK_FAIL;
    }
    free(y);
out:
    free(orc.ordered);
    free(orc.exact);
    a4w4_sample_free(&s);
    a4w4_case_data_free(&d);
    return fails;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.safetensors under dir, sorted. */
static char **list_bundles(const char *dir, size_t *n)
{
    DIR *dp = opendir(dir);
    char **v = NULL;
    *n = 0;
    if (!dp)
        return NULL;
    struct dirent *de;
    size_t cap = 0;
    while ((de = readdir(dp))) {
        size_t L = strlen(de->d_name);
        if (L < 12 || strcmp(de->d_name + L - 12, ".safetensors"))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **p = realloc(v, cap * sizeof *v);
            if (!p)
                break;
            v = p;
        }
        size_t len = strlen(dir) + L + 2;
        v[*n] = malloc(len);
        snprintf(v[*n], len, "%s/%s", dir, de->d_name);
        (*n)++;
    }
    closedir(dp);
    qsort(v, *n, sizeof *v, name_cmp);
    return v;
}

/* A golden bundle: the CPU systems under test against its y_ordered, and one "oracle" entry
 * holding every other tensor check. */
static int run_bundle(const run_opts *o, const char *path, cJSON *entries, int *bad_input)
{
    a4w4_check_list checks = {0};
    char err[512] = "";
    double t0 = a4w4_now();
    size_t dims[3] = {0, 0, 0};
    int rc = a4w4_verify_bundle(path, &checks, dims, err, sizeof err);
    double ms = (a4w4_now() - t0) * 1e3;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char name[128];
    snprintf(name, sizeof name, "golden/%.*s", (int)(strlen(base) - 12), base);
    int fails = 0;
    if (rc == 2) {
        a4w4_errorf("%s", err);
        *bad_input = 1;
    }
    a4w4_check oracle;
    memset(&oracle, 0, sizeof oracle);
    snprintf(oracle.subject, sizeof oracle.subject, "bundle tensors");
    oracle.verdict = rc == 2 ? A4W4_CHECK_FAIL : A4W4_CHECK_PASS;
    if (rc == 2)
        snprintf(oracle.note, sizeof oracle.note, "bad input: %.140s", err);
    size_t ntensor = 0;
    for (size_t i = 0; i < checks.n; i++) {
        a4w4_check *c = &checks.items[i];
        const char *bk = !strncmp(c->subject, "cpu-asm ", 8) ? "cpu-asm"
                       : !strncmp(c->subject, "cpu-fallback ", 13) ? "cpu-fallback" : NULL;
        int selected = 0;
        for (size_t j = 0; bk && j < o->nbackends; j++)
            selected |= !strcmp(o->backends[j]->name, bk);
        if (bk && selected) {
            cJSON *e = a4w4_entry_new(name, dims[0], dims[1], dims[2], "golden", 0, bk, "ordered(1)");
            a4w4_entry_set_check(e, c);
            cJSON_AddBoolToObject(e, "sampled", 0);
            cJSON_AddNumberToObject(e, "time_ms", ms);
            cJSON_AddItemToArray(entries, e);
            fails += c->verdict == A4W4_CHECK_FAIL;
            continue;
        }
        if (bk)
            continue;
        ntensor++;
        oracle.checked += c->checked;
        if (c->verdict == A4W4_CHECK_FAIL && oracle.verdict != A4W4_CHECK_FAIL) {
            oracle = *c;
            oracle.checked = 0;
        }
    }
    if (oracle.verdict == A4W4_CHECK_FAIL && rc != 2)
        oracle.mismatches = oracle.mismatches ? oracle.mismatches : 1;
    if (!oracle.note[0])
        snprintf(oracle.note, sizeof oracle.note, "%zu tensor checks (a4w4check verify %s)", ntensor, base);
    cJSON *e = a4w4_entry_new(name, dims[0], dims[1], dims[2], "golden", 0, "oracle", "bit-exact tensors");
    a4w4_entry_set_check(e, &oracle);
    cJSON_AddBoolToObject(e, "sampled", 0);
    cJSON_AddNumberToObject(e, "time_ms", ms);
    cJSON_AddItemToArray(entries, e);
    fails += oracle.verdict == A4W4_CHECK_FAIL;
    a4w4_check_list_free(&checks);
    progress(o, 0, 0, (size_t)fails, name);
    return fails;
}

int cmd_run(int argc, char **argv)
{
    if (a4w4_wants_help(argc, argv)) {
        fputs(run_usage, stdout);
        return A4W4_EXIT_PASS;
    }
    char cases_buf[4096], golden_buf[4096];
    run_opts o = {a4w4_data_path("cases/premerge.csv", cases_buf, sizeof cases_buf),
                  a4w4_data_path("cases/golden", golden_buf, sizeof golden_buf),
                  "build/out", {0}, 0, 0, 0};
    size_t nall;
    const a4w4_backend *all = a4w4_backends(&nall);
    for (size_t i = 0; i < nall && i < 16; i++)
        o.backends[o.nbackends++] = &all[i];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "--cases") || !strcmp(a, "--golden") || !strcmp(a, "--out") ||
             !strcmp(a, "--backend")) && i + 1 >= argc) {
            a4w4_errorf("run: option %s needs a value", a);
            return A4W4_EXIT_BADINPUT;
        }
        if (!strcmp(a, "--cases"))
            o.cases_path = argv[++i];
        else if (!strcmp(a, "--golden"))
            o.golden_dir = argv[++i];
        else if (!strcmp(a, "--no-golden"))
            o.golden_dir = NULL;
        else if (!strcmp(a, "--out"))
            o.out_dir = argv[++i];
        else if (!strcmp(a, "--backend")) {
            if (parse_backends(&o, argv[++i]))
                return A4W4_EXIT_BADINPUT;
        } else if (!strcmp(a, "--full"))
            o.full = 1;
        else if (!strcmp(a, "--quiet"))
            o.quiet = 1;
        else {
            a4w4_errorf("run: unknown option '%s' (see a4w4check run --help)", a);
            return A4W4_EXIT_BADINPUT;
        }
    }
    char err[1024];
    a4w4_case *cases;
    size_t ncases;
    if (a4w4_casefile_read(o.cases_path, &cases, &ncases, err, sizeof err)) {
        a4w4_errorf("%s", err);
        return A4W4_EXIT_BADINPUT;
    }
    size_t nbundles = 0;
    char **bundles = NULL;
    if (o.golden_dir) {
        bundles = list_bundles(o.golden_dir, &nbundles);
        if (!bundles && nbundles == 0) {
            a4w4_errorf("run: --golden %s: cannot read the directory", o.golden_dir);
            free(cases);
            return A4W4_EXIT_BADINPUT;
        }
    }
    if (a4w4_mkdir_p(o.out_dir, err, sizeof err)) {
        a4w4_errorf("run: --out %s", err);
        free(cases);
        return A4W4_EXIT_IO;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "a4w4check-results/1");
    cJSON_AddStringToObject(doc, "tool", "a4w4check");
    cJSON_AddStringToObject(doc, "set", "premerge");
    cJSON_AddStringToObject(doc, "cases_file", o.cases_path);
    cJSON *bl = cJSON_AddArrayToObject(doc, "backends");
    cJSON_AddItemToArray(bl, cJSON_CreateString("oracle"));
    for (size_t i = 0; i < o.nbackends; i++)
        cJSON_AddItemToArray(bl, cJSON_CreateString(o.backends[i]->name));
    cJSON *entries = cJSON_AddArrayToObject(doc, "cases");
    int fails = 0, bad_input = 0;
    double t0 = a4w4_now();
    for (size_t i = 0; i < ncases; i++) {
        fails += run_case(&o, &cases[i], entries, &bad_input);
        char what[160];
        snprintf(what, sizeof what, "%s (M=%zu N=%zu K=%zu) %.1fs", cases[i].name, cases[i].M,
                 cases[i].N, cases[i].K, a4w4_now() - t0);
        progress(&o, i + 1, ncases, (size_t)fails, what);
    }
    for (size_t i = 0; i < nbundles; i++) {
        fails += run_bundle(&o, bundles[i], entries, &bad_input);
        free(bundles[i]);
    }
    free(bundles);
    free(cases);
    int rc = bad_input ? A4W4_EXIT_BADINPUT : fails ? A4W4_EXIT_MISMATCH : A4W4_EXIT_PASS;
    if (a4w4_results_write(doc, o.out_dir, err, sizeof err)) {
        a4w4_errorf("run: %s", err);
        rc = A4W4_EXIT_IO;
    } else if (!o.quiet) {
        fprintf(stderr, "a4w4check run: %d failing entries of %d; %s/results.json and %s/summary.md written (%.1fs)\n",
                fails, cJSON_GetArraySize(entries), o.out_dir, o.out_dir, a4w4_now() - t0);
    }
    cJSON_Delete(doc);
    return rc;
}
