/* cmd_quant_parity.c — `a4w4check quant-parity`: per layer, what the choice between AITER's two
 * activation quantizers changes (commands/quant_parity.h): the Triton quantizer rounds the E8M0
 * scale even, the HIP one (per_1x32_f4_quant_hip, SGLang's opt-in ASM path) round_up
 * (contracts §2). The flag-on / flag-off question of the source PR, answered per layer, on
 * generated activations of a model's shapes or on captured ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "a4w4_layout.h"
#include "a4w4check.h"
#include "matrix.h"
#include "options.h"
#include "quant_parity.h"
#include "safetensors.h"
#include "shapelist.h"

static const char qp_usage[] =
    "usage: a4w4check quant-parity (M N K [M N K...] | --cases FILE | --captures DIR)\n"
    "                              [--rows R] [--seed S] [--format F]\n"
    "\n"
    "For each layer: its bf16 activations quantized per 1x32 with the scale rounded even (AITER's\n"
    "Triton quantizer) and round_up (per_1x32_f4_quant_hip, the ASM path's), contracts §2: the\n"
    "share of 32-blocks whose E8M0 code differs, the fp4 bytes that differ, and the output both\n"
    "ways through the exact GEMM oracle (contracts §4.1) with the layer's weights: the outputs\n"
    "that differ and a histogram of their bf16 ULP distances. Shapes (a CSV whose header names\n"
    "M, N, K, or M N K on the command line) get N(0,1) activations and weights generated from\n"
    "their shape and --seed; --captures DIR takes the activations of each captured\n"
    "per_1x32_f4_quant_hip call and the weights of a captured GEMM of the same layer and K.\n"
    "\n";

typedef struct {
    const char *shapes, *captures;
    int rows, seed, json;
} qp_opts;

static const a4w4_option qp_options[] = {
    OPT_STRING("cases", qp_opts, shapes, "FILE", "a CSV whose header names M, N, K (a model's layers)"),
    OPT_STRING("captures", qp_opts, captures, "DIR", "a4w4check.capture's bundles"),
    OPT_INT("rows", qp_opts, rows, "R", 1, 1 << 22,
            "at most R activation rows per layer (default 256)"),
    OPT_INT("seed", qp_opts, seed, "S", 0, 1 << 30, "seed of generated data (default 1)"),
    OPT_CHOICE("format", qp_opts, json, "F", a4w4_format_text_json,
               "text (default) or json: one JSON object per layer"),
    OPT_OLD_FLAG("json", qp_opts, json, "--format json"),
    OPT_OLD_STRING("shapes", qp_opts, shapes, "--cases"),
    OPT_END(),
};

static const a4w4_command_spec qp_spec = {
    "quant-parity", qp_usage, qp_options, "M N K...",
    "exit: 0 reported, 2 bad input (a malformed shape list or capture, usage)\n"};

/* One layer's report: a text line or a JSON object. */
static void report(const qp_opts *o, const char *layer, const a4w4_quant_parity *p)
{
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "layer", layer);
        cJSON_AddNumberToObject(j, "M", (double)p->M);
        cJSON_AddNumberToObject(j, "N", (double)p->N);
        cJSON_AddNumberToObject(j, "K", (double)p->K);
        cJSON_AddNumberToObject(j, "blocks", (double)p->blocks);
        cJSON_AddNumberToObject(j, "blocks_scale_differs", (double)p->blocks_differ);
        cJSON_AddNumberToObject(j, "round_up_above_even", (double)p->up);
        cJSON_AddNumberToObject(j, "round_up_below_even", (double)p->down);
        cJSON_AddNumberToObject(j, "fp4_bytes_differ", (double)p->bytes_differ);
        cJSON_AddNumberToObject(j, "outputs", (double)p->outputs);
        cJSON_AddNumberToObject(j, "outputs_differ", (double)p->outputs_differ);
        cJSON_AddNumberToObject(j, "max_ulp", p->max_ulp);
        double h[A4W4_PARITY_BINS];
        for (int i = 0; i < A4W4_PARITY_BINS; i++)
            h[i] = (double)p->hist[i];
        cJSON_AddItemToObject(j, "ulp_histogram", cJSON_CreateDoubleArray(h, A4W4_PARITY_BINS));
        cJSON *tol = a4w4_criteria_json(p->tol, p->ntol);
        if (tol)
            cJSON_AddItemToObject(j, "tolerance_on_difference", tol);
        cJSON *par = a4w4_parity_diff_json(&p->parity);
        if (par)
            cJSON_AddItemToObject(j, "parity", par);
        char *s = cJSON_PrintUnformatted(j);
        if (s)
            puts(s);
        free(s);
        cJSON_Delete(j);
        return;
    }
    printf("%s M=%zu N=%zu K=%zu: scale code differs in %zu of %zu blocks (%.2f%%; round_up "
           "above even in %zu, below in %zu), %zu fp4 bytes differ; y differs in %zu of %zu "
           "outputs, max %u ULP; ULP histogram", layer, p->M, p->N, p->K, p->blocks_differ,
           p->blocks, p->blocks ? 100.0 * (double)p->blocks_differ / (double)p->blocks : 0.0,
           p->up, p->down, p->bytes_differ, p->outputs_differ, p->outputs, p->max_ulp);
    char par[768];
    a4w4_parity_diff_format(&p->parity, par, sizeof par);
    for (int i = 0; i < A4W4_PARITY_BINS; i++) {
        if (!p->hist[i])
            continue;
        if (i == 0)
            printf(" 0:%zu", p->hist[i]);
        else if (i == A4W4_PARITY_BINS - 1)
            printf(" NaN:%zu", p->hist[i]);
        else if (i == 1)
            printf(" 1:%zu", p->hist[i]);
        else
            printf(" %u-%u:%zu", 1u << (i - 1), (1u << i) - 1, p->hist[i]);
    }
    printf("; parity, round_up against even: %s\n", par);
}

/* Generated layers of shapes[0..n). Returns the exit code. */
static int from_shapes(const qp_opts *o, const int *shapes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        a4w4_case c = {.M = (size_t)shapes[3 * i], .N = (size_t)shapes[3 * i + 1],
                       .K = (size_t)shapes[3 * i + 2], .seed = (uint64_t)o->seed};
        snprintf(c.name, sizeof c.name, "qp_m%zu_n%zu_k%zu", c.M, c.N, c.K);
        a4w4_quant_parity p;
        if (c.K % 32 || a4w4_quant_parity_case(&c, (size_t)o->rows, &p) != A4W4_OK) {
            a4w4_errorf("quant-parity: M=%zu N=%zu K=%zu: %s", c.M, c.N, c.K,
                        c.K % 32 ? "K must be a multiple of 32" : "out of memory");
            return A4W4_EXIT_BADINPUT;
        }
        report(o, c.name, &p);
    }
    return A4W4_EXIT_PASS;
}

/* The row-major weights (w [N, K/2], ws [N, K/32], malloc'ed) of GEMM capture f, through the
 * layouts' inverses when it holds the preshuffled / swizzled forms (contracts §3). 0 or -1. */
static int capture_weights(const a4w4_st_file *f, size_t N, size_t K, uint8_t **w, uint8_t **ws)
{
    const a4w4_st_tensor *t;
    size_t r, c;
    *w = malloc(N * K / 2);
    *ws = malloc(N * K / 32);
    if (!*w || !*ws)
        return -1;
    if ((t = a4w4_st_find(f, "w_fp4")) && !a4w4_st_packed_2d(t, &r, &c) && r == N && c == K / 2)
        memcpy(*w, t->data, N * K / 2);
    else if (!(t = a4w4_st_find(f, "w_fp4_shuffled")) || a4w4_st_packed_2d(t, &r, &c) ||
             r != N || c != K / 2 || a4w4_unpreshuffle(t->data, N, K, *w))
        return -1;
    if ((t = a4w4_st_find(f, "w_scale")) && !a4w4_st_packed_2d(t, &r, &c) && r == N &&
        c == K / 32)
        memcpy(*ws, t->data, N * K / 32);
    else if (!(t = a4w4_st_find(f, "w_scale_swizzled")) || a4w4_st_packed_2d(t, &r, &c) ||
             r != N || c != K / 32 || a4w4_scale_unswizzle(t->data, N, K / 32, *ws))
        return -1;
    return 0;
}

static size_t meta_dim(const a4w4_st_file *f, const char *k)
{
    const char *v = a4w4_st_meta(f, k);
    return v ? (size_t)strtoull(v, NULL, 10) : 0;
}

/* The quantizer capture q (activations x) against the first GEMM capture of the same layer
 * and K among paths. 1 reported, 0 no such GEMM, -1 on a malformed capture. */
static int capture_layer(const qp_opts *o, const a4w4_st_file *q, char *const *paths, size_t n)
{
    const char *layer = a4w4_st_meta(q, "layer");
    const a4w4_st_tensor *x = a4w4_st_find(q, "x");
    size_t M = meta_dim(q, "M"), K = meta_dim(q, "K");
    if (!x || x->dtype != A4W4_DT_BF16 || x->ndim != 2 || x->shape[0] != M || x->shape[1] != K)
        return -1;
    for (size_t i = 0; i < n; i++) {
        a4w4_st_file g;
        if (a4w4_st_load(paths[i], &g, NULL, 0))
            continue;
        const char *op = a4w4_st_meta(&g, "op"), *gl = a4w4_st_meta(&g, "layer");
        size_t N = meta_dim(&g, "N");
        uint8_t *w = NULL, *ws = NULL;
        int hit = op && strstr(op, "gemm") && gl && layer && !strcmp(gl, layer) &&
                  meta_dim(&g, "K") == K && N && !capture_weights(&g, N, K, &w, &ws);
        if (hit) {
            uint16_t *xc = malloc(M * K * 2);
            a4w4_quant_parity p;
            if (xc && (memcpy(xc, x->data, M * K * 2), 1) &&
                a4w4_quant_parity_of(xc, w, ws, M, N, K, &p) == A4W4_OK)
                report(o, layer, &p);
            else
                hit = -1;
            free(xc);
        }
        free(w);
        free(ws);
        a4w4_st_free(&g);
        if (hit)
            return hit;
    }
    return 0;
}

/* Every captured quantizer call with a GEMM of its layer. Returns the exit code. */
static int from_captures(const qp_opts *o)
{
    a4w4_matrix m = {0};
    char err[1024];
    if (a4w4_matrix_add_captures(&m, o->captures, err, sizeof err)) {
        a4w4_errorf("quant-parity: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    int rc = A4W4_EXIT_PASS;
    size_t done = 0;
    for (size_t i = 0; i < m.ncaptures && rc == A4W4_EXIT_PASS; i++) {
        a4w4_st_file q;
        if (a4w4_st_load(m.captures[i], &q, err, sizeof err)) {
            a4w4_errorf("quant-parity: %s", err);
            rc = A4W4_EXIT_BADINPUT;
            break;
        }
        const char *op = a4w4_st_meta(&q, "op");
        if (op && strstr(op, "quant")) {
            int r = capture_layer(o, &q, m.captures, m.ncaptures);
            if (r < 0) {
                a4w4_errorf("quant-parity: %s: x and the layer's weights must be well formed",
                            m.captures[i]);
                rc = A4W4_EXIT_BADINPUT;
            } else if (!r)
                fprintf(stderr, "a4w4check quant-parity: %s: no GEMM capture of layer '%s' "
                        "with K=%s: skipped\n", m.captures[i], a4w4_st_meta(&q, "layer"),
                        a4w4_st_meta(&q, "K"));
            done += r > 0;
        }
        a4w4_st_free(&q);
    }
    a4w4_matrix_free(&m);
    if (rc == A4W4_EXIT_PASS && !done) {
        a4w4_errorf("quant-parity: %s: no quantizer capture with a GEMM of its layer", o->captures);
        rc = A4W4_EXIT_BADINPUT;
    }
    return rc;
}

int cmd_quant_parity(int argc, char **argv)
{
    qp_opts o = {.rows = 256, .seed = 1};
    a4w4_args args;
    int rc = a4w4_options_parse(&qp_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    if ((args.n > 0) + (o.shapes != NULL) + (o.captures != NULL) != 1 || args.n % 3) {
        a4w4_errorf("quant-parity: give M N K triples, --cases FILE or --captures DIR (one)");
        return A4W4_EXIT_BADINPUT;
    }
    if (o.captures)
        return from_captures(&o);
    char err[1024];
    int *shapes = NULL;
    size_t n = (size_t)args.n / 3;
    if (o.shapes && a4w4_shapelist_load(o.shapes, &shapes, &n, err, sizeof err)) {
        a4w4_errorf("quant-parity: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    if (!o.shapes && (shapes = calloc(3 * n, sizeof *shapes)))
        for (int i = 0; i < args.n; i++) {
            char *end;
            long v = strtol(args.v[i], &end, 10);
            if (*end || v < 1 || v > A4W4_CASE_DIM_MAX) {
                a4w4_errorf("quant-parity: '%s' is not a dimension in 1..%u", args.v[i],
                            A4W4_CASE_DIM_MAX);
                free(shapes);
                return A4W4_EXIT_BADINPUT;
            }
            shapes[i] = (int)v;
        }
    rc = shapes ? from_shapes(&o, shapes, n) : A4W4_EXIT_IO;
    free(shapes);
    return rc;
}
