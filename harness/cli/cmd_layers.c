/* cmd_layers.c — `a4w4check layers`: SGLang's W4A4 MXFP4 linear layer end to end (contracts §6)
 * on every backend pair: the layer matrix of layer.h checked against the policy and
 * GEMM oracles; results stream to results.jsonl and results.json + summary.md are written
 * from it, in the same schema as `run` (plus the layer fields). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "field_bugs.h"
#include "backend_list.h"
#include "options.h"
#include "layer.h"
#include "layer_pairs.h"
#include "entry.h"
#include "results.h"
#include "stream.h"

static const char layers_usage[] =
    "usage: a4w4check layers [--backend cpu[,...]] [--out DIR] [--json] [--qwen-n N] [--quiet]\n"
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
    int json, quiet;
    size_t qwen_n;
} layers_opts;

static const a4w4_option layers_options[] = {
    OPT_LIST("backend", layers_opts, backend, "LIST",
             "comma-separated pairs; default every pair usable here (cpu)"),
    OPT_STRING("out", layers_opts, out_dir, "DIR",
               "results.jsonl, results.json, summary.md (default build/out-layers)"),
    OPT_FLAG("json", layers_opts, json, "one JSON line per case entry on stdout instead of the text lines"),
    OPT_SIZE("qwen-n", layers_opts, qwen_n, "N", 145, 1 << 20, 4,
             "must be an integer above 144, a multiple of 4, at most 1048576",
             "the Qwen-size N (default 5120, Qwen3.8-27B's hidden size); a multiple\n"
             "of 32 above 128 keeps one ASM layer per K with K/32 % 8 == 0"),
    OPT_FLAG("quiet", layers_opts, quiet, "only failures and the summary line"),
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

static const char *kind_name(a4w4_input_kind k)
{
    switch (k) {
    case A4W4_INPUT_TENSOR_2D: return "2d";
    case A4W4_INPUT_TENSOR_3D: return "3d";
    case A4W4_INPUT_TUPLE2: return "tuple2";
    case A4W4_INPUT_TUPLE3: return "tuple3";
    case A4W4_INPUT_TUPLE5: return "tuple5";
    default: return "tuple";
    }
}

static cJSON *entry_of(const a4w4_layer_case_result *r, const a4w4_layer_ops *p,
                       const a4w4_layer_group *g)
{
    char regime[32];
    snprintf(regime, sizeof regime, "normal:%s",
             r->expected.layer_asm ? "round_up" : "even");
    cJSON *e = a4w4_entry_new(r->name, r->M, r->N, r->K, regime, g->seed, p->name, p->contract);
    cJSON_AddNumberToObject(e, "checked_outputs", (double)r->checked_outputs);
    cJSON_AddBoolToObject(e, "sampled", 0);
    cJSON_AddStringToObject(e, "verdict", r->pass ? "pass" : "fail");
    cJSON_AddNumberToObject(e, "mismatches", (double)r->mismatches);
    cJSON_AddNumberToObject(e, "unwritten", (double)r->unwritten);
    cJSON_AddNumberToObject(e, "max_ulp", r->max_ulp == (unsigned)-1 ? -1.0 : (double)r->max_ulp);
    cJSON *fm = cJSON_AddArrayToObject(e, "first_mismatches");
    if (r->computed && r->mismatches) {
        cJSON *m = cJSON_CreateObject();
        char h[16];
        size_t cols = r->kind == A4W4_INPUT_TUPLE5 ? 1 : r->N;
        cJSON_AddStringToObject(m, "tensor", r->kind == A4W4_INPUT_TUPLE5 ? "c1|c2" : "y");
        cJSON_AddNumberToObject(m, "row", (double)(r->first_index / cols));
        cJSON_AddNumberToObject(m, "col", (double)(r->first_index % cols));
        snprintf(h, sizeof h, "0x%04x", r->first_got);
        cJSON_AddStringToObject(m, "got", h);
        snprintf(h, sizeof h, "0x%04x", r->first_expected);
        cJSON_AddStringToObject(m, "expected", h);
        cJSON_AddItemToArray(fm, m);
    }
    cJSON_AddNumberToObject(e, "time_ms", r->time_ms);
    cJSON_AddNumberToObject(e, "exact_regime_outputs", 0);
    cJSON_AddBoolToObject(e, "pad_dependent", 0);
    cJSON_AddBoolToObject(e, "ambiguous", 0);
    cJSON_AddStringToObject(e, "note", r->note);
    /* the layer fields */
    cJSON_AddStringToObject(e, "decision", a4w4_decision_name(r->got.decision));
    cJSON_AddStringToObject(e, "reason", a4w4_policy_reason_name(r->got.reason));
    cJSON_AddStringToObject(e, "expected_decision", a4w4_decision_name(r->expected.decision));
    cJSON_AddStringToObject(e, "expected_reason", a4w4_policy_reason_name(r->expected.reason));
    cJSON_AddStringToObject(e, "layer_decision", a4w4_decision_name(r->layer_decision));
    cJSON_AddStringToObject(e, "input_kind", kind_name(r->kind));
    cJSON_AddBoolToObject(e, "bias", r->bias);
    cJSON_AddBoolToObject(e, "flag", r->flag_on);
    cJSON_AddStringToObject(e, "gfx", r->gfx);
    cJSON_AddStringToObject(e, "dtype", r->dtype == A4W4_IN_BF16 ? "bf16" : "fp32");
    cJSON_AddBoolToObject(e, "computed", r->computed);
    cJSON_AddNumberToObject(e, "status", r->status);
    cJSON_AddNumberToObject(e, "weight_preshuffles", r->preshuffles);
    cJSON_AddNumberToObject(e, "weight_swizzles", r->swizzles);
    return e;
}

/* The pairs to run: those --backend names, else every pair usable here. Returns the exit
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
                a4w4_errorf("layers: --backend hip: this a4w4check was built without GPU support "
                            "(configure with -DA4W4_GPU=nvidia or amd)");
                return A4W4_EXIT_NOGPU;
            }
            if (!p) {
                a4w4_errorf("layers: --backend '%s' is not a backend pair (pairs: cpu, hip)", t);
                return A4W4_EXIT_BADINPUT;
            }
            if (p->available && p->available(why, sizeof why)) {
                a4w4_errorf("layers: --backend %s: %s", t, why);
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

/* The run's identity, as `run` writes it. */
static cJSON *layers_header(size_t qwen_n, size_t ngroups, const a4w4_layer_ops *const *pairs,
                            size_t npairs)
{
    char desc[128], hex[32], shard[] = "1/1";
    snprintf(desc, sizeof desc, "layers/1 qwen_n=%zu groups=%zu", qwen_n, ngroups);
    snprintf(hex, sizeof hex, "%016llx", a4w4_hash_str(desc, 0xCBF29CE484222325ull));
    cJSON *header = cJSON_CreateObject();
    cJSON_AddStringToObject(header, "schema", A4W4_RESULTS_SCHEMA);
    cJSON_AddStringToObject(header, "tool", "a4w4check");
    cJSON_AddStringToObject(header, "tool_version", A4W4_TOOL_VERSION);
    cJSON_AddStringToObject(header, "set", "layers");
    cJSON_AddStringToObject(header, "cases_file", desc);
    cJSON_AddStringToObject(header, "matrix_hash", hex);
    cJSON_AddStringToObject(header, "shard", shard);
    cJSON_AddBoolToObject(header, "full", 1);
    cJSON_AddNumberToObject(header, "budget_seconds", 0);
    cJSON *bl = cJSON_AddArrayToObject(header, "backends");
    cJSON *bc = cJSON_AddObjectToObject(header, "contracts");
    for (size_t i = 0; i < npairs; i++) {
        cJSON_AddItemToArray(bl, cJSON_CreateString(pairs[i]->name));
        cJSON_AddStringToObject(bc, pairs[i]->name, pairs[i]->contract);
    }
    cJSON_AddNumberToObject(header, "matrix_items",
                            (double)(ngroups * A4W4_LAYER_CASES_PER_GROUP));
    cJSON_AddNumberToObject(header, "shard_items", (double)(ngroups * A4W4_LAYER_CASES_PER_GROUP));
    return header;
}

typedef struct {
    size_t passed, failed, rejected, refused, computed;
} layers_counts;

/* Print case ci of every pair (a JSON line, or a text line unless quiet and passing), count
 * it, and stream its entries. Returns the exit code. */
static int record_case(const layers_opts *o, const a4w4_layer_ops *const *pairs, size_t npairs,
                       const a4w4_layer_group *g, a4w4_layer_case_result (*res)[A4W4_LAYER_CASES_PER_GROUP],
                       size_t ci, a4w4_stream *st, layers_counts *n)
{
    char err[1024];
    cJSON *entries = cJSON_CreateArray();
    for (size_t p = 0; p < npairs; p++) {
        const a4w4_layer_case_result *r = &res[p][ci];
        cJSON *e = entry_of(r, pairs[p], g);
        if (o->json) {
            char *s = cJSON_PrintUnformatted(e);
            if (s)
                printf("%s\n", s);
            free(s);
        } else if (!o->quiet || !r->pass) {
            printf("%s %s %s: %s/%s; %s\n", r->pass ? "PASS" : "FAIL", pairs[p]->name,
                   r->name, a4w4_decision_name(r->got.decision),
                   a4w4_policy_reason_name(r->got.reason), r->note);
        }
        cJSON_AddItemToArray(entries, e);
        n->passed += r->pass;
        n->failed += !r->pass;
        n->computed += r->computed;
        n->rejected += !r->computed && r->expected.decision == A4W4_DECIDE_REJECT;
        n->refused += !r->computed && r->expected.decision != A4W4_DECIDE_REJECT;
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
                      layers_counts *n)
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
static int write_results(const layers_opts *o, const layers_counts *n, size_t ngroups,
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
    static const a4w4_heur_params hp = {"gfx950", 256, 0, 1};
    if (shapes &&
        !a4w4_tuned_load(&tuned, a4w4_data_path("cases/aiter/a4w4_blockscale_tuned_gemm.csv", tb,
                                                sizeof tb), err, sizeof err) &&
        !a4w4_kernels_load(&kt, a4w4_data_path("cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv",
                                               kb, sizeof kb), NULL, err, sizeof err) &&
        !a4w4_field_bugs_of((const int(*)[3])shapes, n, &tuned, &kt, &hp, bugs))
        a4w4_print_field_bugs(out, bugs, "the layer matrix's gfx950 shapes (M = B*S)", n, 12);
    a4w4_field_bugs_free(bugs);
    a4w4_tuned_free(&tuned);
    a4w4_kernels_free(&kt);
    free(shapes);
}

int cmd_layers(int argc, char **argv)
{
    layers_opts o = {"build/out-layers", {0}, 0, 0, 5120};
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
    cJSON *header = layers_header(o.qwen_n, ngroups, pairs, npairs), *done = NULL;
    a4w4_stream st = {-1, ""};
    rc = a4w4_exit_code(a4w4_stream_open(&st, o.out_dir, header, 0, &done, NULL, err, sizeof err));
    if (rc) {
        a4w4_errorf("layers: %s", err);
    } else {
        layers_counts n = {0, 0, 0, 0, 0};
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
