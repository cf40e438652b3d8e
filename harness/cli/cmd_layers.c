/* cmd_layers.c — `a4w4check layers`: SGLang's W4A4 MXFP4 linear layer end to end (contracts §6)
 * on every backend pair: the layer matrix of layer.h checked against the policy and
 * GEMM oracles; results stream to results.jsonl and results.json + summary.md are written
 * from it, in the same schema as `run` (plus the layer fields). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "dispatch_chain.h"
#include "field_bugs.h"
#include "backend_list.h"
#include "options.h"
#include "layer.h"
#include "layer_pairs.h"
#include "layer_results.h"
#include "results.h"
#include "stream.h"

static const char layers_usage[] =
    "usage: a4w4check layers [--pairs cpu[,...]] [--out DIR] [--format F] [--qwen-n N] [--quiet]\n"
    "                        [--failures-only]\n"
    "\n"
    "Builds SGLang's Quark W4A4 MXFP4 linear layer (contracts §6) on each backend pair and\n"
    "checks every branch: load-time processing (policy decision and reason, the weight\n"
    "preshuffled and its scale swizzled exactly once on the ASM path, the fallback warning once\n"
    "per process) and apply (2-D and 3-D activations, 2-tuples re-laid, 3- and 5-tuples\n"
    "rejected on ASM layers with the policy's message and the output untouched, bias in bf16).\n"
    "Outputs are compared bit for bit with ref quantize -> ordered(1) GEMM oracle -> bias.\n"
    "\n"
    "Matrix: flag {on, off} x gfx {gfx950, gfx942, gfx1100} x N {128, 144, N_qwen} x\n"
    "K {256, 288} x input {2d, 3d, tuple2, tuple3, tuple5} x bias {absent, present}:\n"
    "360 cases per pair; activations [6, K] (3-D: [2, 3, K]).\n"
    "\n";

typedef struct {
    const char *out_dir;
    a4w4_opt_list backend;
    int json, quiet, failures_only;
    size_t qwen_n;
} layers_opts;

static const a4w4_option layers_options[] = {
    OPT_LIST("pairs", layers_opts, backend, "LIST",
             "comma-separated pairs; default every pair usable here (cpu)"),
    OPT_STRING("out", layers_opts, out_dir, "DIR",
               "results.jsonl, results.json, summary.md (default build/out-layers)"),
    OPT_CHOICE("format", layers_opts, json, "F", a4w4_format_text_json,
               "text (default) or json: one JSON line per case entry on stdout"),
    OPT_SIZE("qwen-n", layers_opts, qwen_n, "N", 145, 1 << 20, 4,
             "must be an integer above 144, a multiple of 4, at most 1048576",
             "the Qwen-size N (default 5120, Qwen3.8-27B's hidden size); a multiple\n"
             "of 32 above 128 keeps one ASM layer per K with K/32 % 8 == 0"),
    OPT_FLAG("quiet", layers_opts, quiet, A4W4_QUIET_HELP),
    OPT_FLAG("failures-only", layers_opts, failures_only,
             "of the case lines, only the failing ones (text format)"),
    OPT_OLD_FLAG("json", layers_opts, json, "--format json"),
    OPT_OLD_LIST("backend", layers_opts, backend, "--pairs"),
    OPT_END(),
};

static const a4w4_command_spec layers_spec = {
    "layers", layers_usage, layers_options, NULL,
    "exit: 0 all pass, 1 any fail, 2 bad usage, 3 a GPU pair asked for without a GPU,\n"
    "      4 results not written\n"};

#define MAX_PAIRS 8
#define MAX_GROUPS 64

static void print_warning(const char *message, void *user)
{
    (void)user;
    fprintf(stderr, "a4w4check layers: warning: %s\n", message);
}

/* The pairs to run: those --pairs names, else every pair usable here. Returns the exit
 * code (PASS: at least one pair in pairs[0..*npairs)). */
static int select_pairs(const layers_opts *o, const a4w4_layer_ops **pairs, size_t *npairs)
{
    size_t nall;
    const a4w4_layer_ops *const *all = a4w4_layer_ops_list(&nall);
    char why[256];
    *npairs = 0;
    if (!o->backend.text) {
        for (size_t i = 0; i < nall && *npairs < MAX_PAIRS; i++) {
            if (all[i]->available && all[i]->available(why, sizeof why)) {
                if (!o->quiet)
                    fprintf(stderr, "a4w4check layers: notice: skipping pair %s: %s\n",
                            all[i]->name, why);
                continue;
            }
            pairs[(*npairs)++] = all[i];
        }
    } else {
        a4w4_backend_list_opts bo = {"layers", MAX_PAIRS, 0, o->quiet};
        if (a4w4_backend_list_check(&bo, &o->backend))
            return A4W4_EXIT_BADINPUT;
        for (size_t i = 0; i < o->backend.n; i++) {
            const char *t = o->backend.item[i];
            const a4w4_layer_ops *p = a4w4_layer_ops_find(t);
            if (!p && !strcmp(t, "hip")) {
                a4w4_errorf("layers: --pairs hip: this a4w4check was built without GPU support "
                            "(configure with -DA4W4_GPU=nvidia or amd)");
                return A4W4_EXIT_NOGPU;
            }
            if (!p) {
                a4w4_errorf("layers: --pairs '%s' is not a backend pair (pairs: cpu, hip)", t);
                return A4W4_EXIT_BADINPUT;
            }
            if (p->available && p->available(why, sizeof why)) {
                a4w4_errorf("layers: --pairs %s: %s", t, why);
                return A4W4_EXIT_NOGPU;
            }
            pairs[(*npairs)++] = p;
        }
    }
    if (!*npairs) {
        a4w4_errorf("layers: no backend pair to run");
        return A4W4_EXIT_BADINPUT;
    }
    return A4W4_EXIT_PASS;
}

/* Print case ci of every pair (a JSON line, or a text line unless failures_only and passing), count
 * it, and stream its entries. Returns the exit code. */
static int record_case(const layers_opts *o, const a4w4_layer_ops *const *pairs, size_t npairs,
                       const a4w4_layer_group *g, a4w4_layer_case_result (*res)[A4W4_LAYER_CASES_PER_GROUP],
                       size_t ci, a4w4_stream *st, a4w4_layer_counts *n)
{
    char err[1024];
    cJSON *entries = cJSON_CreateArray();
    for (size_t p = 0; p < npairs; p++) {
        const a4w4_layer_case_result *r = &res[p][ci];
        cJSON *e = a4w4_layer_entry(r, pairs[p], g);
        if (o->json) {
            char *s = cJSON_PrintUnformatted(e);
            if (s)
                printf("%s\n", s);
            free(s);
        } else if (!o->failures_only || !r->pass) {
            printf("%s %s %s: %s/%s; %s\n", r->pass ? "PASS" : "FAIL", pairs[p]->name,
                   r->name, a4w4_decision_name(r->got.decision),
                   a4w4_policy_reason_name(r->got.reason), r->note);
        }
        if (!o->json && r->has_parity) {
            char line[1024];
            a4w4_parity_diff_format(&r->parity, line, sizeof line);
            printf("  parity %s %s, ASM-layout path against the fallback path: %s\n",
                   pairs[p]->name, r->name, line);
        }
        cJSON_AddItemToArray(entries, e);
        a4w4_layer_count(n, r);
    }
    int rc = A4W4_EXIT_PASS;
    if (a4w4_stream_case(st, res[0][ci].name, entries, err, sizeof err)) {
        a4w4_errorf("layers: %s", err);
        rc = A4W4_EXIT_IO;
    }
    cJSON_Delete(entries);
    return rc;
}

/* Check every group on every pair, streaming into st. Returns the exit code. */
static int run_groups(const layers_opts *o, const a4w4_layer_ops *const *pairs, size_t npairs,
                      const a4w4_layer_group *groups, size_t ngroups, a4w4_stream *st,
                      a4w4_layer_counts *n)
{
    static a4w4_layer_case_result res[MAX_PAIRS][A4W4_LAYER_CASES_PER_GROUP];
    char err[1024];
    int rc = A4W4_EXIT_PASS;
    a4w4_layer_set_warn_handler(print_warning, NULL);
    a4w4_layer_warn_reset();
    for (size_t gi = 0; gi < ngroups && !rc; gi++) {
        for (size_t p = 0; p < npairs && !rc; p++) {
            if (a4w4_layer_check_group(pairs[p], &groups[gi], res[p], NULL, err, sizeof err)) {
                a4w4_errorf("%s", err);
                rc = A4W4_EXIT_IO;
            }
        }
        for (size_t ci = 0; ci < A4W4_LAYER_CASES_PER_GROUP && !rc; ci++)
            rc = record_case(o, pairs, npairs, &groups[gi], res, ci, st, n);
    }
    a4w4_stream_close(st);
    a4w4_layer_set_warn_handler(NULL, NULL);
    return rc;
}

/* results.json + summary.md from the stream, and the summary line. Returns the exit code. */
static int write_results(const layers_opts *o, const a4w4_layer_counts *n, size_t ngroups,
                         size_t npairs, double t0)
{
    char err[1024];
    cJSON *hdr2 = NULL;
    cJSON *doc = a4w4_stream_load(o->out_dir, &hdr2, err, sizeof err);
    cJSON_Delete(hdr2);
    if (!doc || a4w4_results_write(doc, o->out_dir, err, sizeof err)) {
        a4w4_errorf("layers: %s", err);
        cJSON_Delete(doc);
        return A4W4_EXIT_IO;
    }
    cJSON_Delete(doc);
    fflush(stdout);
    fprintf(o->json ? stderr : stdout,
            "layers: %zu passed, %zu failed (%zu computed bit-exact checks, %zu rejected by the "
            "policy, %zu refused; %zu layers x %zu pair%s, %.1f s); %s/results.json and "
            "%s/summary.md written\n",
            n->passed, n->failed, n->computed, n->rejected, n->refused, ngroups, npairs,
            npairs == 1 ? "" : "s", a4w4_now() - t0, o->out_dir, o->out_dir);
    return n->failed ? A4W4_EXIT_MISMATCH : A4W4_EXIT_PASS;
}

/* The field's bug rules over the matrix's gfx950 shapes (M = B*S, N, K), on out. */
static void print_field_bugs(FILE *out, const a4w4_layer_group *groups, size_t ngroups)
{
    char tb[4096], kb[4096], err[512];
    a4w4_tuned_table tuned = {0};
    a4w4_kernel_table kt = {0};
    int(*shapes)[3] = calloc(ngroups + 1, sizeof *shapes);
    size_t n = 0;
    for (size_t g = 0; shapes && g < ngroups; g++) {
        int M = (int)(groups[g].B * groups[g].S), N = (int)groups[g].N, K = (int)groups[g].K;
        int dup = strcmp(groups[g].gfx, "gfx950") != 0;
        for (size_t i = 0; i < n && !dup; i++)
            dup = shapes[i][0] == M && shapes[i][1] == N && shapes[i][2] == K;
        if (!dup) {
            shapes[n][0] = M;
            shapes[n][1] = N;
            shapes[n++][2] = K;
        }
    }
    a4w4_bug_shapes bugs[A4W4_BUG_COUNT] = {{0}};
    static const a4w4_dispatch_setup setup = A4W4_DISPATCH_SETUP_DEFAULT;
    if (shapes &&
        !a4w4_tuned_load(&tuned, a4w4_data_path(A4W4_TUNED_TABLE_DEFAULT, tb, sizeof tb), err,
                         sizeof err) &&
        !a4w4_kernels_load(&kt, a4w4_data_path(A4W4_KERNEL_TABLE_DEFAULT, kb, sizeof kb), NULL,
                           err, sizeof err) &&
        !a4w4_field_bugs_of((const int(*)[3])shapes, n, &tuned, &kt, &setup.hp, bugs))
        a4w4_print_field_bugs(out, bugs, "the layer matrix's gfx950 shapes (M = B*S)", n, 12);
    a4w4_field_bugs_free(bugs);
    a4w4_tuned_free(&tuned);
    a4w4_kernels_free(&kt);
    free(shapes);
}

int cmd_layers(int argc, char **argv)
{
    layers_opts o = {.out_dir = "build/out-layers", .qwen_n = 5120};
    a4w4_args args;
    int rc = a4w4_options_parse(&layers_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    const a4w4_layer_ops *pairs[MAX_PAIRS];
    size_t npairs;
    if ((rc = select_pairs(&o, pairs, &npairs)) != A4W4_EXIT_PASS)
        return rc;
    a4w4_layer_group groups[MAX_GROUPS];
    size_t ngroups = a4w4_layer_matrix(o.qwen_n, groups, MAX_GROUPS);
    char err[1024];
    if (a4w4_mkdir_p(o.out_dir, err, sizeof err)) {
        a4w4_errorf("layers: --out %s", err);
        return A4W4_EXIT_IO;
    }
    cJSON *header = a4w4_layer_header(o.qwen_n, ngroups, pairs, npairs), *done = NULL;
    a4w4_stream st = {.fd = -1};
    rc = a4w4_exit_code(a4w4_stream_open(&st, o.out_dir, header, 0, &done, NULL, err, sizeof err));
    static const char *const rendered[] = {"results.json", "summary.md"}; /* as run's */
    if (!rc) /* an earlier run's, gone until this one writes its own (docs/cli/layers.md) */
        rc = a4w4_exit_code(a4w4_remove_files(o.out_dir, rendered, 2, err, sizeof err));
    if (rc) {
        a4w4_errorf("layers: %s", err);
    } else {
        a4w4_layer_counts n = {0};
        double t0 = a4w4_now();
        rc = run_groups(&o, pairs, npairs, groups, ngroups, &st, &n);
        if (!rc)
            rc = write_results(&o, &n, ngroups, npairs, t0);
        if (rc == A4W4_EXIT_PASS || rc == A4W4_EXIT_MISMATCH)
            print_field_bugs(o.json ? stderr : stdout, groups, ngroups);
    }
    cJSON_Delete(header);
    cJSON_Delete(done);
    return rc;
}
