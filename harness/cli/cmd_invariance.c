/* cmd_invariance.c — `a4w4check invariance`: batch invariance predicted from the tables
 * (commands/invariance.h): for each (N, K) of a tuned table, a case file or a shape list, and
 * every M the dispatch chain distinguishes, whether row i of an M-row batch gets the bits it
 * gets at M = 1, and the cause where it does not (contracts §5 dispatch, §6 layer policy,
 * §4.1 contracts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "a4w4check.h"
#include "casefile.h"
#include "contractfile.h"
#include "fsutil.h"
#include "invariance_measure.h"
#include "invariance_render.h"
#include "mutants.h"
#include "options.h"
#include "registry.h"
#include "shapelist.h"

#define MAX_TUNED 16
#define TUNED_DSV3 "cases/aiter/dsv3_a4w4_blockscale_tuned_gemm.csv"
#define MEASURE_M_DEFAULT "1,2,16,17,32,33,64,65,128,129,256,257"
#define MAX_MEASURE_M 64
#define MEASURE_SEED 1

static const char inv_usage[] =
    "usage: a4w4check invariance [options]\n"
    "\n"
    "Predicts, on the CPU from the tables alone, whether row i of an M-row batch gets the\n"
    "bits it gets computed alone (M = 1), for each (N, K) and every M the dispatch chain\n"
    "distinguishes: a framework switch given as data (--switch), SGLang's layer policy\n"
    "(contracts §6), AITER's route (contracts §5: each padded-M bucket edge and the M past\n"
    "it, each heuristic tile change). A row's bits change with M exactly where the contract\n"
    "of the path that computes it changes: an ASM kernel at one split keeps ordered(1), at\n"
    "more splits it adds bf16 partials with atomics (nondeterministic); CK kernels, Triton\n"
    "layers and switch paths take the contract declared for them, else none (unknown).\n"
    "Pairs: every (N, K) of each --tuned table (default AITER's two tuned CSVs, one map\n"
    "each), or of --cases / --shapes routed with the tuned tables merged.\n"
    "\n"
    "--measure BACKEND measures instead, at each M of --m for each pair of --cases or\n"
    "--shapes: the batch twice (a repeat), rows 0, M/2 and M-1 alone, the batch reversed,\n"
    "every output compared bit for bit; invariant, variant (rows, outputs, max ULP) or\n"
    "nondeterministic, checked against the prediction of the backend's declared contract\n"
    "and, with --follows-dispatch, against the tables' prediction (a disagreement fails).\n"
    "--export-ops DIR writes the operands of every call instead, one operand bundle each\n"
    "with DIR/manifest.json, for a kernel outside the process (python -m\n"
    "a4w4check.external --ops DIR --out OUT); --measure bundle:OUT with the same pairs and\n"
    "--m then reads each call's output by name (a missing one makes that measurement n/a).\n"
    "--out DIR also writes DIR/results.json (the maps and measurements under the results\n"
    "schema; a4w4check report DIR renders them).\n"
    "\n"
    "options:\n";

typedef struct {
    const char *tuned_v[MAX_TUNED];
    a4w4_opt_strings tuned;
    const char *kernels, *cases, *shapes, *kind_name;
    a4w4_inv_setup setup;
    int m_max, format, verbose;
    const char *measure, *mlist, *export_ops, *contract_file, *out;
    const char *title; /* --title: the name of the --cases / --shapes map */
    cJSON *maps, *meas; /* --out: what results.json records */
    int follows_dispatch;
    int m[MAX_MEASURE_M], nm;
    size_t npairs; /* --measure: the pairs measured (each at every M of m) */
} inv_opts;

static int cb_switch(const a4w4_option *opt, void *field, const char *value, char *err,
                     size_t errlen)
{
    (void)opt;
    return a4w4_inv_switch_parse(field, value, err, errlen) ? -1 : 0;
}

static int cb_contract(const a4w4_option *opt, void *field, const char *value, char *err,
                       size_t errlen)
{
    a4w4_inv_contract *c = field;
    char why[256];
    if (a4w4_contract_parse(value, &c->c, why, sizeof why)) {
        snprintf(err, errlen, "--%s: %s", opt->name, why);
        return -1;
    }
    c->declared = 1;
    return 0;
}

static const char *const inv_formats[] = {"text", "json", "markdown", "html", NULL};

static const a4w4_option inv_options[] = {
    OPT_STRINGS("tuned", inv_opts, tuned, "CSV",
                "tuned table, one map each (repeat; default " A4W4_TUNED_TABLE_DEFAULT "\n"
                "and " TUNED_DSV3 ")"),
    OPT_STRING("kernels", inv_opts, kernels, "CSV",
               "ASM kernel table (default " A4W4_KERNEL_TABLE_DEFAULT ")"),
    OPT_STRING("cases", inv_opts, cases, "FILE", "the (N, K) pairs of a case file"),
    OPT_STRING("shapes", inv_opts, shapes, "FILE",
               "the (N, K) pairs of a shape list (a CSV naming M, N, K: a model's layers)"),
    OPT_STRING("title", inv_opts, title, "NAME",
               "the name of the --cases or --shapes map and its summary line (a model's\n"
               "layers: \"Qwen3 27B dense layers\"; default the file name)"),
    OPT_CALLBACKS("switch", inv_opts, setup, "M:NAME[:CONTRACT]", cb_switch,
                 "a framework switch: M' <= M runs NAME (e.g. vLLM's 64:triton-preshuffle),\n"
                 "with CONTRACT when declared; repeat for several"),
    OPT_CALLBACK("ck-contract", inv_opts, setup.ck, "CONTRACT", cb_contract,
                 "the contract of every CK kernel (default: none declared)"),
    OPT_CALLBACK("triton-contract", inv_opts, setup.triton, "CONTRACT", cb_contract,
                 "the contract of a layer the policy keeps on Triton (default: none)"),
    OPT_INT("m-max", inv_opts, m_max, "M", 1, A4W4_INV_M_MAX,
            "the last M predicted (default: the largest tuned M + 1, at least 8193)"),
    OPT_STRING("gfx", inv_opts, setup.setup.hp.gfx, "ARCH", "device arch (default gfx950)"),
    OPT_INT("cu", inv_opts, setup.setup.hp.num_cu, "N", 1, 65536, "compute units (default 256)"),
    OPT_INT("log2-k-split", inv_opts, setup.setup.hp.log2_k_split, "N", -1, 4,
            "what the heuristic gets (default 0, AITER's Python wrapper)"),
    OPT_INT("asm-flag", inv_opts, setup.setup.asm_flag, "0|1", 0, 1,
            "SGLANG_ROCM_USE_AITER_FP4_ASM_GEMM for the policy (default 1)"),
    OPT_CHOICE("format", inv_opts, format, "F", inv_formats,
               "text (default), json (one object per pair, then a summary), markdown or\n"
               "html (the map: (N, K) x M bucket; html one self-contained page)"),
    OPT_FLAG("verbose", inv_opts, verbose, "text: every run of M of every pair"),
    OPT_STRING("measure", inv_opts, measure, "BACKEND",
               "measure this backend (a --backend name, plugin:LIB.so, or a selftest\n"
               "mutant) on the pairs of --cases or --shapes"),
    OPT_STRING("m", inv_opts, mlist, "LIST",
               "the M values measured (default " MEASURE_M_DEFAULT ")"),
    OPT_STRING("contract", inv_opts, contract_file, "FILE",
               "hold the measured backend to this contract file (contracts §4.2's file\n"
               "form, shape rules such as 'when M>32: ordered(2)') instead of its own"),
    OPT_STRING("export-ops", inv_opts, export_ops, "DIR",
               "write the operands of every call --measure would make (pairs of --cases or\n"
               "--shapes, M of --m) as operand bundles into DIR, for bundle: measurement"),
    OPT_STRING("out", inv_opts, out, "DIR",
               "also write DIR/results.json: the maps and measurements under the results\n"
               "schema (a4w4check report DIR renders them)"),
    OPT_FLAG("follows-dispatch", inv_opts, follows_dispatch,
             "the backend runs the kernel the tables route to: the tables' prediction\n"
             "must hold too"),
    OPT_END(),
};

static const a4w4_command_spec inv_spec = {
    "invariance", inv_usage, inv_options, NULL,
    "exit: 0 predicted, or measured as predicted; 1 a measurement disagrees with its\n"
    "prediction, or the backend crashed, timed out or failed on a call; 2 bad input (malformed table or list, bad switch or contract, usage);\n"
    "3 no GPU for a GPU backend; 4 the output could not be written; 5 a measurement was\n"
    "n/a (nothing failed, not everything measured)\n"};

/* Parse argv into o. Returns -1 on success, else an exit code. */
static int parse_args(int argc, char **argv, inv_opts *o)
{
    *o = (inv_opts){.tuned = {o->tuned_v, 0, MAX_TUNED}};
    o->setup.setup = (a4w4_dispatch_setup)A4W4_DISPATCH_SETUP_DEFAULT;
    a4w4_args pos;
    int rc = a4w4_options_parse(&inv_spec, o, argc, argv, &pos);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    const char *why = NULL;
    if (o->cases && o->shapes)
        why = "--cases and --shapes exclude each other";
    else if ((o->measure || o->export_ops) && !o->cases && !o->shapes)
        why = o->measure ? "--measure needs the pairs of --cases or --shapes"
                         : "--export-ops needs the pairs of --cases or --shapes";
    else if (o->measure && o->export_ops)
        why = "--measure and --export-ops exclude each other (export, run the kernel, then "
              "--measure bundle:OUT)";
    else if (o->export_ops && o->out)
        why = "--out records a prediction or a measurement, not --export-ops";
    else if (o->export_ops && (o->follows_dispatch || o->format))
        why = "--follows-dispatch and --format apply to --measure or the prediction, not to "
              "--export-ops";
    else if (o->format == 3 && !o->cases && !o->shapes && o->tuned.n != 1)
        why = "--format html makes one page: give one --tuned table, --cases or --shapes";
    else if (o->contract_file && !o->measure)
        why = "--contract applies to --measure only";
    else if (o->title && ((!o->cases && !o->shapes) || !*o->title))
        why = "--title names the map of --cases or --shapes (a non-empty name)";
    else if ((o->mlist && !o->measure && !o->export_ops) ||
             (o->follows_dispatch && !o->measure))
        why = "--m applies to --measure and --export-ops, --follows-dispatch to --measure only";
    else if ((o->measure || o->export_ops) && a4w4_parse_int_list(o->mlist ? o->mlist : MEASURE_M_DEFAULT, 1,
                                               65536, 1, o->m, MAX_MEASURE_M, &o->nm))
        why = "--m: a comma-separated list of at most 64 M values in 1..65536";
    else if (!*o->setup.setup.hp.gfx)
        why = "--gfx is empty";
    else if (!strcmp(o->setup.setup.hp.gfx, "gfx942"))
        why = "A4W4 GEMM kernel is not supported on gfx942, but got gfx942! (contracts §5.4)";
    if (why) {
        a4w4_errorf("invariance: %s", why);
        return A4W4_EXIT_BADINPUT;
    }
    return -1;
}

/* ---- plan ----------------------------------------------------------------------------- */

/* Load tuned tables paths[0..n) merged into t. Returns -1, else the exit code. */
static int load_tuned(const char *const *paths, size_t n, a4w4_tuned_table *t)
{
    char err[1024];
    for (size_t i = 0; i < n; i++)
        if (a4w4_tuned_load(t, paths[i], err, sizeof err) != A4W4_OK) {
            a4w4_errorf("invariance: tuned table %s", err);
            return A4W4_EXIT_BADINPUT;
        }
    return -1;
}

/* The (N, K) pairs of --cases or --shapes into *nk. Returns -1, else the exit code. */
static int load_pairs(const inv_opts *o, int **nk, size_t *n)
{
    char err[1024];
    int *shapes = NULL;
    size_t ns = 0;
    if (o->shapes && a4w4_shapelist_load(o->shapes, &shapes, &ns, err, sizeof err)) {
        a4w4_errorf("invariance: shapes %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    if (o->cases) {
        a4w4_case *cs = NULL;
        if (a4w4_casefile_read(o->cases, &cs, &ns, err, sizeof err) != A4W4_ST_OK) {
            a4w4_errorf("invariance: %s", err);
            return A4W4_EXIT_BADINPUT;
        }
        shapes = malloc((ns ? ns : 1) * 3 * sizeof *shapes);
        for (size_t i = 0; shapes && i < ns; i++) {
            shapes[3 * i] = (int)cs[i].M;
            shapes[3 * i + 1] = (int)cs[i].N;
            shapes[3 * i + 2] = (int)cs[i].K;
        }
        free(cs);
    }
    int rc = shapes ? a4w4_inv_pairs_of_shapes(shapes, ns, nk, n) : A4W4_ENOMEM;
    free(shapes);
    if (rc != A4W4_OK) {
        a4w4_errorf("invariance: out of memory");
        return A4W4_EXIT_BADINPUT;
    }
    return -1;
}

/* The scan's last M: --m-max, else the largest tuned M + 1 (the M just past the last
 * bucket), at least 8193 (past getPaddedM's gl 1 cap) and past every switch. */
static int m_max_of(const inv_opts *o, const a4w4_tuned_table *t)
{
    if (o->m_max)
        return o->m_max;
    long m = 8193;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].M + 1L > m)
            m = t->rows[i].M + 1L;
    for (size_t i = 0; i < o->setup.nsw; i++)
        if (o->setup.sw[i].m_max + 1L > m)
            m = o->setup.sw[i].m_max + 1L;
    return m > A4W4_INV_M_MAX ? A4W4_INV_M_MAX : (int)m;
}

/* ---- run and render ------------------------------------------------------------------- */

/* Predict pairs nk[0..n) with tuned t and print them under title. Returns -1, else the exit
 * code. */
static int predict_print(inv_opts *o, const a4w4_tuned_table *t, const a4w4_kernel_table *kt,
                         const int *nk, size_t n, const char *title)
{
    char err[1024];
    a4w4_inv_prediction p;
    o->setup.m_max = m_max_of(o, t);
    int rc = a4w4_inv_predict(t, kt, &o->setup, nk, n, &p, err, sizeof err);
    int ex = -1;
    if (rc != A4W4_OK) {
        a4w4_errorf("invariance: %s: %s", title, err);
        ex = A4W4_EXIT_BADINPUT;
    } else {
        a4w4_inv_view v = {.format = o->format, .verbose = o->verbose, .title = title};
        if (a4w4_inv_print(&v, &o->setup, &p, stdout))
            ex = A4W4_EXIT_IO;
        if (o->maps)
            cJSON_AddItemToArray(o->maps, a4w4_inv_map_json(&v, &o->setup, &p));
    }
    a4w4_inv_prediction_free(&p);
    return ex;
}

/* One map per tuned table, each table routed alone. */
static int run_tables(inv_opts *o, const a4w4_kernel_table *kt)
{
    int rc = -1;
    for (size_t i = 0; rc == -1 && i < o->tuned.n; i++) {
        a4w4_tuned_table t = {0};
        int *nk = NULL;
        size_t n = 0;
        rc = load_tuned(&o->tuned.v[i], 1, &t);
        if (rc == -1 && a4w4_inv_pairs_of_table(&t, &nk, &n) != A4W4_OK) {
            a4w4_errorf("invariance: out of memory");
            rc = A4W4_EXIT_BADINPUT;
        }
        if (rc == -1)
            rc = predict_print(o, &t, kt, nk, n, o->tuned.v[i]);
        free(nk);
        a4w4_tuned_free(&t);
    }
    return rc;
}

/* The pairs of --cases or --shapes, routed with the tuned tables merged. */
/* The title of the --cases / --shapes map: --title, else the file name. */
static const char *list_title(const inv_opts *o)
{
    return o->title ? o->title : o->cases ? o->cases : o->shapes;
}

static int run_list(inv_opts *o, const a4w4_kernel_table *kt)
{
    a4w4_tuned_table t = {0};
    int *nk = NULL;
    size_t n = 0;
    int rc = load_tuned(o->tuned.v, o->tuned.n, &t);
    if (rc == -1)
        rc = load_pairs(o, &nk, &n);
    if (rc == -1)
        rc = predict_print(o, &t, kt, nk, n, list_title(o));
    free(nk);
    a4w4_tuned_free(&t);
    return rc;
}

/* ---- measure -------------------------------------------------------------------------- */

/* Open --measure: a registered backend, else a selftest mutant. Returns -1, else the exit
 * code. */
static int open_measured(const char *spec, a4w4_backend *b)
{
    char err[1024];
    a4w4_hstatus st;
    const a4w4_backend_type *mt = a4w4_mutant_find(spec);
    st = mt ? a4w4_backend_open_type(mt, NULL, b, err, sizeof err)
            : a4w4_backend_open(spec, b, err, sizeof err);
    if (st == A4W4_ST_OK && !b->type->run) {
        a4w4_backend_close(b);
        snprintf(err, sizeof err, "backend %s has no GEMM outputs to measure", spec);
        st = A4W4_ST_BADINPUT;
    }
    if (st != A4W4_ST_OK) {
        a4w4_errorf("invariance: --measure: %s", err);
        return st == A4W4_ST_NOGPU ? A4W4_EXIT_NOGPU : A4W4_EXIT_BADINPUT;
    }
    return -1;
}

/* --contract FILE: b held to its rules instead of its own. Returns -1, else the exit code. */
static int override_contract(const char *path, a4w4_backend *b)
{
    char err[1024];
    a4w4_contract_set set;
    memset(&set, 0, sizeof set);
    a4w4_hstatus st = a4w4_contract_file_read(path, &set, err, sizeof err);
    if (st == A4W4_ST_OK)
        st = a4w4_backend_override_contracts(b, &set, path, err, sizeof err);
    a4w4_contract_set_free(&set);
    if (st != A4W4_ST_OK) {
        a4w4_errorf("invariance: --contract: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    return -1;
}

/* The tables' verdict for M of pair q (its run holding M). */
static a4w4_inv_verdict table_verdict(const a4w4_inv_pair *q, int M)
{
    for (size_t r = 0; r < q->nruns; r++)
        if (q->runs[r].lo <= M && M <= q->runs[r].hi)
            return q->runs[r].verdict;
    return A4W4_INV_UNKNOWN;
}

/* The names of every call of the measurement set (each pair of nk[0..n) at each M of --m)
 * into *names (malloc'ed), their hash into hash. Returns the count; 0 out of memory. */
typedef char call_name[A4W4_INV_CALL_NAME_MAX];
static size_t set_names(const inv_opts *o, const int *nk, size_t n, call_name **names,
                        char hash[17])
{
    size_t c = 0;
    *names = malloc((n ? n : 1) * (size_t)o->nm * A4W4_INV_MAX_CALLS * sizeof **names);
    for (size_t i = 0; *names && i < n; i++)
        for (int j = 0; j < o->nm; j++)
            c += a4w4_inv_call_names((size_t)o->m[j], (size_t)nk[2 * i], (size_t)nk[2 * i + 1],
                                     *names + c);
    if (*names)
        a4w4_inv_calls_hash((const call_name *)*names, c, MEASURE_SEED, hash);
    return c;
}

/* A bundle: backend's directory checked against the set's calls (another pair list, --m or
 * tool version: one line, exit 2). Returns -1, else the exit code. */
static int check_calls(a4w4_backend *b, call_name *names, size_t n,
                       const a4w4_run_identity *id)
{
    char err[1024];
    const char **v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        a4w4_errorf("invariance: out of memory");
        return A4W4_EXIT_BADINPUT;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = names[i];
    int rc = b->type->check_items && b->type->check_items(b->ctx, id, v, n, err, sizeof err);
    free(v);
    if (rc) {
        a4w4_errorf("invariance: --measure %s: %s (export the operands with the same --cases or "
                    "--shapes and --m)", b->name, err);
        return A4W4_EXIT_BADINPUT;
    }
    return -1;
}

/* --out: measurement m (NULL: it failed) of pair q at M, its line text; tv the tables'
 * prediction (-1 none). */
static void record(const inv_opts *o, const a4w4_backend *b, const a4w4_inv_pair *q, int M,
                   const a4w4_inv_measured *m, int tv, int ok, const char *text)
{
    if (!o->meas)
        return;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "backend", b->name);
    cJSON_AddNumberToObject(j, "N", q->N);
    cJSON_AddNumberToObject(j, "K", q->K);
    cJSON_AddNumberToObject(j, "M", M);
    cJSON_AddStringToObject(j, "verdict", m ? a4w4_meas_verdict_name(m->verdict) : "failed");
    if (m) {
        cJSON_AddNumberToObject(j, "outputs", (double)m->outputs);
        cJSON_AddNumberToObject(j, "rows", (double)m->rows);
        cJSON_AddNumberToObject(j, "diffs", (double)m->diffs);
        cJSON_AddNumberToObject(j, "repeat_diffs", (double)m->repeat_diffs);
        cJSON_AddNumberToObject(j, "max_ulp", (double)m->max_ulp);
        cJSON_AddStringToObject(j, "prediction", a4w4_inv_verdict_name(m->prediction));
        if (tv >= 0)
            cJSON_AddStringToObject(j, "tables_prediction",
                                    a4w4_inv_verdict_name((a4w4_inv_verdict)tv));
    }
    cJSON_AddBoolToObject(j, "agrees", m && ok);
    cJSON_AddStringToObject(j, "line", text);
    cJSON_AddItemToArray(o->meas, j);
}

/* One pair at every M of --m: a line each. Counts disagreements and n/a. */
static int measure_pair(const inv_opts *o, a4w4_backend *b, const a4w4_run_identity *id,
                        const a4w4_inv_pair *q, size_t *bad, size_t *na)
{
    char err[1024], text[800];
    for (int i = 0; i < o->nm; i++) {
        a4w4_inv_measured m;
        int rc = a4w4_inv_measure_id(b, id, (size_t)o->m[i], (size_t)q->N, (size_t)q->K,
                                     MEASURE_SEED, &m, err, sizeof err);
        /* a failed measurement: the backend crashed, timed out, or failed on a call (left
         * outputs unwritten, wrote out of bounds, a bundle's kernel failed on the call);
         * outputs of other operands (refused) and no memory are errors */
        if (rc != A4W4_OK && rc != A4W4_RUN_REFUSED && rc != A4W4_ENOMEM) {
            snprintf(text, sizeof text, "FAILED: %.700s", err);
            printf("%s N %d K %d M %d: %s\n", b->name, q->N, q->K, o->m[i], text);
            record(o, b, q, o->m[i], NULL, -1, 0, text);
            (*bad)++;
            continue;
        }
        if (rc != A4W4_OK) {
            a4w4_errorf("invariance: --measure %s: %s", b->name, err);
            return A4W4_EXIT_BADINPUT;
        }
        a4w4_inv_measured_text(&m, text, sizeof text);
        printf("%s N %d K %d M %d: %s", b->name, q->N, q->K, o->m[i], text);
        int ok = m.agrees;
        if (o->follows_dispatch) {
            a4w4_inv_verdict tv = table_verdict(q, o->m[i]);
            int tok = a4w4_inv_agrees(tv, m.verdict);
            printf("; tables predict %s%s", a4w4_inv_verdict_name(tv), tok ? "" : ": DISAGREES");
            ok &= tok;
        }
        printf("\n");
        record(o, b, q, o->m[i], &m, o->follows_dispatch ? (int)table_verdict(q, o->m[i]) : -1,
               ok, text);
        *bad += !ok;
        *na += m.verdict == A4W4_MEAS_NA;
    }
    return -1;
}

/* --measure over the pairs of --cases or --shapes. Returns the exit code. */
static int run_measure(inv_opts *o, const a4w4_kernel_table *kt)
{
    a4w4_tuned_table t = {0};
    a4w4_backend b;
    int *nk = NULL;
    size_t n = 0, bad = 0, na = 0;
    a4w4_inv_prediction p = {0};
    char err[1024];
    int rc = load_tuned(o->tuned.v, o->tuned.n, &t);
    if (rc == -1)
        rc = load_pairs(o, &nk, &n);
    o->npairs = n;
    for (int i = 0; i < o->nm; i++)
        o->m_max = o->m[i] > o->m_max ? o->m[i] : o->m_max;
    o->setup.m_max = o->m_max;
    if (rc == -1 && a4w4_inv_predict(&t, kt, &o->setup, nk, n, &p, err, sizeof err)) {
        a4w4_errorf("invariance: %s", err);
        rc = A4W4_EXIT_BADINPUT;
    }
    if (rc == -1 && o->maps) { /* the tables' map of the measured pairs, up to the last M */
        a4w4_inv_view v = {.format = 0, .title = list_title(o)};
        cJSON_AddItemToArray(o->maps, a4w4_inv_map_json(&v, &o->setup, &p));
    }
    if (rc == -1)
        rc = open_measured(o->measure, &b);
    int opened = rc == -1;
    if (opened && o->contract_file)
        rc = override_contract(o->contract_file, &b);
    call_name *names = NULL;
    char hash[17] = "";
    size_t ncalls = opened ? set_names(o, nk, n, &names, hash) : 0;
    a4w4_run_identity id = {hash, A4W4_TOOL_VERSION};
    if (rc == -1 && b.type->check_items)
        rc = check_calls(&b, names, ncalls, &id);
    free(names);
    for (size_t i = 0; rc == -1 && i < n; i++)
        rc = measure_pair(o, &b, b.type->check_items ? &id : NULL, &p.pairs[i], &bad, &na);
    if (rc == -1)
        printf("%s: %zu measurements, %zu disagree with their prediction or failed, %zu n/a\n",
               o->measure, n * (size_t)o->nm, bad, na);
    if (opened)
        a4w4_backend_close(&b);
    a4w4_inv_prediction_free(&p);
    free(nk);
    a4w4_tuned_free(&t);
    if (rc != -1)
        return rc;
    return bad ? A4W4_EXIT_MISMATCH : na ? A4W4_EXIT_INCOMPLETE : A4W4_EXIT_PASS;
}

/* --export-ops: every call's operands into DIR, then DIR/manifest.json. Returns the exit
 * code. */
static int run_export(const inv_opts *o)
{
    int *nk = NULL;
    size_t n = 0;
    call_name *names = NULL;
    char hash[17] = "", err[1024];
    double bytes = 0;
    int rc = load_pairs(o, &nk, &n);
    size_t ncalls = rc == -1 ? set_names(o, nk, n, &names, hash) : 0;
    a4w4_export_opts eo = {hash, A4W4_TOOL_VERSION, 0};
    const char **v = calloc(ncalls ? ncalls : 1, sizeof *v), **why = calloc(ncalls ? ncalls : 1,
                                                                           sizeof *why);
    if (rc == -1 && (!names || !v || !why)) {
        a4w4_errorf("invariance: out of memory");
        rc = A4W4_EXIT_BADINPUT;
    }
    if (rc == -1 && a4w4_mkdir_p(o->export_ops, err, sizeof err) != A4W4_ST_OK)
        rc = A4W4_EXIT_IO;
    for (size_t i = 0; rc == -1 && i < n; i++)
        for (int j = 0; rc == -1 && j < o->nm; j++)
            if (a4w4_inv_export((size_t)o->m[j], (size_t)nk[2 * i], (size_t)nk[2 * i + 1],
                                MEASURE_SEED, &eo, o->export_ops, &bytes, err, sizeof err))
                rc = A4W4_EXIT_IO;
    for (size_t i = 0; rc == -1 && i < ncalls; i++)
        v[i] = names[i];
    if (rc == -1 && a4w4_export_manifest(o->export_ops, "invariance", o->cases ? o->cases
                                         : o->shapes, "1/1", &eo, v, why, ncalls, bytes, err,
                                         sizeof err))
        rc = A4W4_EXIT_IO;
    if (rc == A4W4_EXIT_IO)
        a4w4_errorf("invariance: --export-ops %s", err);
    else if (rc == -1)
        printf("invariance: %zu calls of %zu measurements (%zu pairs x %d M) written to %s "
               "(%.1f MB); run the kernel on them (python -m a4w4check.external --ops %s --out "
               "OUT ...), then --measure bundle:OUT with the same pairs and --m\n", ncalls,
               n * (size_t)o->nm, n, o->nm, o->export_ops, bytes / 1e6, o->export_ops);
    free(v);
    free(why);
    free(names);
    free(nk);
    return rc;
}

/* A measurement document's counts (the results schema's "counts"): every measurement one
 * item (expected: pairs x M, recorded: those in meas); pass the ones as predicted, fail the
 * ones that disagree or failed, n/a the rest; outputs_checked the outputs compared. What a
 * renderer needs to show a PASS (contracts §4.1: never a PASS over missing data). */
static cJSON *measure_counts(const cJSON *meas, size_t expected, const char *backend)
{
    double pass = 0, fail = 0, na = 0, outputs = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, meas) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "verdict");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "outputs");
        int is_na = cJSON_IsString(v) && !strcmp(v->valuestring, "n/a");
        int as_predicted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "agrees"));
        na += is_na;
        pass += !is_na && as_predicted;
        fail += !is_na && !as_predicted;
        outputs += !is_na && cJSON_IsNumber(n) ? n->valuedouble : 0;
    }
    cJSON *c = cJSON_CreateObject(), *un = cJSON_CreateArray();
    cJSON_AddNumberToObject(c, "entries", 0);
    cJSON_AddNumberToObject(c, "pass", pass);
    cJSON_AddNumberToObject(c, "fail", fail);
    cJSON_AddNumberToObject(c, "n/a", na);
    cJSON_AddNumberToObject(c, "skip", 0);
    cJSON_AddNumberToObject(c, "expected_items", (double)expected);
    cJSON_AddNumberToObject(c, "recorded_items", (double)cJSON_GetArraySize(meas));
    cJSON_AddNumberToObject(c, "outputs_checked", outputs);
    if (!outputs)
        cJSON_AddItemToArray(un, cJSON_CreateString(backend));
    cJSON_AddItemToObject(c, "backends_unchecked", un);
    return c;
}

/* --out DIR: DIR/results.json (set "invariance", no entries: the maps and measurements under
 * "invariance"), validated against the results schema before it is written. A measurement's
 * verdict is the command's (exit ex); a prediction records none (nothing was checked).
 * Returns ex, or the exit code of the failure. */
static int write_doc(inv_opts *o, int ex)
{
    char err[1024], path[4200];
    cJSON *doc = cJSON_CreateObject(), *inv = cJSON_CreateObject(), *bk = cJSON_CreateArray();
    cJSON_AddStringToObject(doc, "schema", "a4w4check-results/2");
    cJSON_AddStringToObject(doc, "tool", "a4w4check");
    cJSON_AddStringToObject(doc, "tool_version", A4W4_TOOL_VERSION);
    cJSON_AddStringToObject(doc, "set", "invariance");
    if (o->cases || o->shapes)
        cJSON_AddStringToObject(doc, "cases_file", o->cases ? o->cases : o->shapes);
    cJSON_AddItemToArray(bk, cJSON_CreateString(o->measure ? o->measure : "tables"));
    cJSON_AddItemToObject(doc, "backends", bk);
    if (o->measure) {
        cJSON_AddStringToObject(doc, "verdict", ex == A4W4_EXIT_PASS ? "PASS"
                                : ex == A4W4_EXIT_MISMATCH ? "FAIL" : "INCOMPLETE");
        cJSON_AddStringToObject(doc, "verdict_reason", ex == A4W4_EXIT_PASS
            ? "every measurement as its prediction allows"
            : ex == A4W4_EXIT_MISMATCH ? "a measurement disagrees with its prediction, or failed"
                                       : "a measurement was n/a: not everything was measured");
        cJSON_AddItemToObject(doc, "counts",
                              measure_counts(o->meas, o->npairs * (size_t)o->nm, o->measure));
    }
    cJSON_AddItemToObject(doc, "cases", cJSON_CreateArray());
    cJSON_AddItemToObject(inv, "maps", o->maps);
    cJSON_AddItemToObject(inv, "measurements", o->meas);
    o->maps = o->meas = NULL;
    cJSON_AddItemToObject(doc, "invariance", inv);
    snprintf(path, sizeof path, "%s/results.json", o->out);
    char *text = NULL;
    int rc = ex;
    if (a4w4_results_validate(doc, path, err, sizeof err)) {
        a4w4_errorf("invariance: the document breaks the results schema: %s", err);
        rc = A4W4_EXIT_IO;
    } else if (!(text = cJSON_Print(doc)) || a4w4_mkdir_p(o->out, err, sizeof err) ||
               a4w4_write_atomic(path, text, strlen(text), err, sizeof err)) {
        a4w4_errorf("invariance: --out %s", text ? err : "out of memory");
        rc = A4W4_EXIT_IO;
    }
    free(text);
    cJSON_Delete(doc);
    return rc;
}

int cmd_invariance(int argc, char **argv)
{
    inv_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != -1)
        return rc;
    char err[1024], b1[4096], b2[4096], b3[4096];
    if (!o.tuned.n) {
        o.tuned.v[o.tuned.n++] = a4w4_data_path(A4W4_TUNED_TABLE_DEFAULT, b1, sizeof b1);
        if (!o.cases && !o.shapes)
            o.tuned.v[o.tuned.n++] = a4w4_data_path(TUNED_DSV3, b3, sizeof b3);
    }
    if (o.out) {
        o.maps = cJSON_CreateArray();
        o.meas = cJSON_CreateArray();
    }
    a4w4_kernel_table kt = {0};
    const char *kpath = o.kernels ? o.kernels
                                  : a4w4_data_path(A4W4_KERNEL_TABLE_DEFAULT, b2, sizeof b2);
    if (a4w4_kernels_load(&kt, kpath, NULL, err, sizeof err) != A4W4_OK) {
        a4w4_errorf("invariance: kernel table %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    rc = o.export_ops          ? run_export(&o)
         : o.measure           ? run_measure(&o, &kt)
         : o.cases || o.shapes ? run_list(&o, &kt)
                               : run_tables(&o, &kt);
    a4w4_kernels_free(&kt);
    /* -1: predicted; PASS, MISMATCH, INCOMPLETE: measured (every measurement recorded) */
    if (o.out && (rc == -1 || rc == A4W4_EXIT_PASS || rc == A4W4_EXIT_MISMATCH ||
                  rc == A4W4_EXIT_INCOMPLETE))
        rc = write_doc(&o, rc == -1 ? A4W4_EXIT_PASS : rc);
    cJSON_Delete(o.maps);
    cJSON_Delete(o.meas);
    if (fflush(stdout) != 0) {
        a4w4_errorf("invariance: cannot write the output");
        return A4W4_EXIT_IO;
    }
    return rc == -1 ? A4W4_EXIT_PASS : rc;
}

